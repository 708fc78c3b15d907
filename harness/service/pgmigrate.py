"""PostgreSQL schema migrations with Alembic (SQLAlchemy is only its engine; the stores use psycopg).

The revisions live in ``forensic/harness/service/migrations/versions`` (shipped in the wheel) and
are recorded in the table :data:`VERSION_TABLE`. :func:`migrate` is what ``forensic db upgrade``
runs and what every ``forensic serve --db`` and ``forensic worker`` runs at start-up:

- one transaction on one connection: it first takes the schema's advisory lock
  (``pg_advisory_xact_lock``), so processes that start together apply each revision once, one
  after the other; the later ones find the schema at head and do nothing;
- a database made by forensic 0.2 (its hand-versioned SQL, recorded in ``forensic_schema``) is
  adopted: stamped at the revision that equals its schema, with no statement re-run and no row
  touched, then upgraded like any other;
- the transaction commits only when every revision applied (PostgreSQL's DDL is transactional):
  a failed upgrade leaves the schema as it was.
"""

from __future__ import annotations

from importlib import resources
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


def script_location() -> str:
    return str(resources.files("forensic.harness.service") / "migrations")


def _config(connection: Any = None) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", script_location())
    cfg.attributes["connection"] = connection
    return cfg


def _engine(conninfo: str) -> Any:
    """A SQLAlchemy engine (``postgresql+psycopg``) whose connections are psycopg's, from the libpq ``conninfo``."""
    import psycopg
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    return create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(conninfo, connect_timeout=10),
        poolclass=NullPool,
    )


def head() -> str:
    from alembic.script import ScriptDirectory

    current = ScriptDirectory.from_config(_config()).get_current_head()
    if current is None:  # only a migrations folder without revisions has none
        raise RuntimeError("the schema migrations have no head revision")
    return current


def _legacy_version(conn: Any) -> int | None:
    from sqlalchemy import text

    if conn.execute(text("SELECT to_regclass('forensic_schema')")).scalar() is None:
        return None
    return conn.execute(text("SELECT max(version) FROM forensic_schema")).scalar()


def current(conninfo: str) -> str | None:
    """The revision the database is at (None: no forensic schema, or a 0.2 one not yet adopted)."""
    from alembic.runtime.migration import MigrationContext

    engine = _engine(conninfo)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE}
            ).get_current_revision()
    except Exception as exc:
        raise MigrationError(_one_line("cannot read the schema revision", exc)) from None
    finally:
        engine.dispose()


def migrate(conninfo: str) -> list[str]:
    """Bring the schema to head; the revisions applied now (adopting a 0.2 database applies none)."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import text

    engine = _engine(conninfo)
    try:
        with engine.begin() as conn:  # one transaction: the lock, the stamp, every revision, then commit
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
            cfg = _config(conn)
            before = MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE}
            ).get_current_revision()
            if before is None:
                legacy = _legacy_version(conn)
                if legacy is not None:
                    if legacy not in LEGACY_VERSIONS:
                        raise MigrationError(
                            f"forensic_schema is at version {legacy}, which this release does not know"
                        )
                    command.stamp(cfg, LEGACY_VERSIONS[legacy])
                    before = LEGACY_VERSIONS[legacy]
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
        raise MigrationError(_one_line("cannot migrate the PostgreSQL schema", exc)) from None
    finally:
        engine.dispose()
    return list(reversed(todo))


def _one_line(what: str, exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    return f"{what}: {' '.join(str(inner).split())[:300] or type(inner).__name__}"
