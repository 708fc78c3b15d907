"""The service database's schema: Alembic revisions, applied the same way to SQLite and PostgreSQL.

The revisions live in ``forensic/harness/service/migrations/versions`` (shipped in the wheel) and
are recorded in the table :data:`VERSION_TABLE`. :func:`migrate` is what ``forensic db upgrade``
runs and what every store, worker and execution ledger runs when it opens a database:

- one transaction on one connection that first takes the schema's lock (PostgreSQL:
  ``pg_advisory_xact_lock``; SQLite: ``BEGIN IMMEDIATE``, the file's write lock), so processes
  that start together apply each revision once, one after the other; the later ones find the
  schema at head and do nothing;
- a database made before the schema had revisions is adopted: stamped at the revision that
  equals its schema, with no statement re-run and no row touched, then upgraded like any other
  (PostgreSQL: forensic 0.2's hand-versioned SQL, recorded in ``forensic_schema``; SQLite: the
  tables the store used to create itself, recognised by ``investigations`` without a version table);
- the transaction commits only when every revision applied (both databases' DDL is
  transactional): a failed upgrade leaves the schema as it was.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from forensic.sandbox import ForensicError

#: Alembic's version table for this schema (not ``alembic_version``: the database may be shared).
VERSION_TABLE = "forensic_alembic_version"
#: Serializes schema changes and the LangGraph checkpointer's own set-up (the key spells "forensic").
MIGRATION_LOCK = 0x666F72656E736963
#: ``forensic_schema`` versions of forensic 0.2 -> the Alembic revision with the same schema.
LEGACY_VERSIONS = {1: "0001"}


class MigrationError(ForensicError):
    """The schema could not be brought up to date (one line saying why)."""


def is_postgres_url(db: str | Path | None) -> bool:
    return bool(db) and str(db).startswith(("postgresql://", "postgres://"))


def script_location() -> str:
    return str(resources.files("forensic.harness.service") / "migrations")


def _config(connection: Any = None) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", script_location())
    cfg.attributes["connection"] = connection
    return cfg


def engine(db: str | Path, *, pool_size: int | None = None, immediate: bool = True) -> Any:
    """A SQLAlchemy engine on ``db``: a libpq ``postgresql://`` URL, or the path of a SQLite file.

    PostgreSQL connections are psycopg's, made from the URL as libpq reads it (``~/.pgpass``,
    ``PG*`` variables). A SQLite file is opened in WAL with ``synchronous=FULL`` (a commit is on
    disk before any 2xx); its transactions begin with ``BEGIN IMMEDIATE`` when ``immediate``
    (they take the write lock at once, so two writers never both read and then fail to upgrade),
    and a plain deferred ``BEGIN`` otherwise (readers).
    """
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import NullPool, QueuePool

    if is_postgres_url(db):
        import psycopg

        conninfo = str(db)
        kw: dict[str, Any] = (
            {"pool_size": pool_size, "max_overflow": 0, "pool_pre_ping": True}
            if pool_size
            else {"poolclass": NullPool}
        )
        return create_engine(
            "postgresql+psycopg://",
            creator=lambda: psycopg.connect(conninfo, connect_timeout=10),
            **kw,
        )
    path = Path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    eng = create_engine(
        "sqlite://",
        creator=lambda: _sqlite_connect(path),
        **(
            # Readers come from every API thread; a connection to a file is cheap, so none waits for one.
            {"poolclass": QueuePool, "pool_size": pool_size, "max_overflow": 4 * pool_size}
            if pool_size
            else {"poolclass": NullPool}
        ),
    )
    begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    # The sqlite3 module's own transaction handling is off (isolation_level None in the creator);
    # the engine says BEGIN itself, so a transaction starts where SQLAlchemy's does.
    @event.listens_for(eng, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)

    return eng


def _sqlite_connect(path: Path) -> Any:
    import sqlite3

    con = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("PRAGMA busy_timeout=30000")
    return con


def head() -> str:
    from alembic.script import ScriptDirectory

    current = ScriptDirectory.from_config(_config()).get_current_head()
    if current is None:  # only a broken install ships no revisions
        raise MigrationError("the schema has no migration revisions installed")
    return current


def _legacy_revision(conn: Any) -> str | None:
    """The revision an unversioned database's schema equals (None: it has no forensic tables)."""
    from sqlalchemy import inspect, text

    if conn.dialect.name == "sqlite":
        return "0001" if inspect(conn).has_table("investigations") else None
    if conn.execute(text("SELECT to_regclass('forensic_schema')")).scalar() is None:
        return None
    legacy = conn.execute(text("SELECT max(version) FROM forensic_schema")).scalar()
    if legacy not in LEGACY_VERSIONS:
        raise MigrationError(f"forensic_schema is at version {legacy}, which this release does not know")
    return LEGACY_VERSIONS[legacy]


def current(db: str | Path) -> str | None:
    """The revision the database is at (None: no forensic schema, or an unversioned one not yet adopted)."""
    from alembic.runtime.migration import MigrationContext

    eng = engine(db, immediate=False)
    try:
        with eng.connect() as conn:
            return MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE}
            ).get_current_revision()
    except Exception as exc:
        raise MigrationError(_one_line("cannot read the schema revision", exc)) from None
    finally:
        eng.dispose()


def migrate(db: str | Path) -> list[str]:
    """Bring the schema to head; the revisions applied now (adopting an unversioned database applies none)."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import text

    eng = engine(db)
    try:
        with eng.begin() as conn:  # one transaction: the lock, the stamp, every revision, then commit
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
            cfg = _config(conn)
            before = MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE}
            ).get_current_revision()
            if before is None:
                before = _legacy_revision(conn)
                if before is not None:
                    command.stamp(cfg, before)
            script = ScriptDirectory.from_config(cfg)
            if before is not None and before not in {r.revision for r in script.walk_revisions()}:
                raise MigrationError(
                    f"the database is at schema revision {before!r}, newer than this release "
                    f"knows (head {script.get_current_head()!r}); upgrade forensic"
                )
            todo = [r.revision for r in script.iterate_revisions("head", before or "base")]
            command.upgrade(cfg, "head")
    except MigrationError:
        raise
    except Exception as exc:
        raise MigrationError(_one_line("cannot migrate the database schema", exc)) from None
    finally:
        eng.dispose()
    return list(reversed(todo))


def _one_line(what: str, exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    return f"{what}: {' '.join(str(inner).split())[:300] or type(inner).__name__}"
