"""``forensic db``: the service database's schema (Alembic migrations), on PostgreSQL or a SQLite file."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import _fail, app

db_app = typer.Typer(
    no_args_is_help=True, help="The service database's schema (Alembic migrations), PostgreSQL or SQLite."
)
app.add_typer(db_app, name="db")

_DB = typer.Option(
    "--db",
    help="postgresql://user@host/dbname (a password belongs in ~/.pgpass or PGPASSWORD), or a SQLite file.",
)


def _check(db: str) -> None:
    from pathlib import Path

    from forensic.harness.service.schema import is_postgres_url
    from forensic.harness.service.store import connect_check

    if is_postgres_url(db):
        connect_check(db)
    elif "://" in db:
        _fail(2, f"--db must be a postgresql:// URL or a SQLite file, not {db[:60]!r}")
    elif not Path(db).is_file():
        _fail(2, f"{db}: no such SQLite file")


@db_app.command("upgrade")
def upgrade(db: Annotated[str, _DB]) -> None:
    """Apply the migrations the database lacks (serve and worker also do this at start-up).

    Safe to run while other processes start: the migrations run under an advisory lock, each once.
    A database made by the earlier hand-versioned SQL is adopted (stamped) without touching a row.
    """
    from forensic.harness.service.schema import current, migrate
    from forensic.sandbox import ForensicError

    try:
        _check(db)
        applied = migrate(db)
        now = current(db)
    except ForensicError as exc:
        _fail(2, str(exc))
    print(
        f"applied {', '.join(applied)}; schema at {now}"
        if applied
        else f"schema already at {now}; nothing to apply"
    )


@db_app.command("current")
def show_current(db: Annotated[str, _DB]) -> None:
    """Print the schema revision the database is at, and this release's head."""
    from forensic.harness.service.schema import current, head
    from forensic.sandbox import ForensicError

    try:
        _check(db)
        now = current(db)
    except ForensicError as exc:
        _fail(2, str(exc))
    latest = head()
    state = (
        "up to date"
        if now == latest
        else ("no schema yet" if now is None else "behind: run forensic db upgrade")
    )
    print(f"schema at {now or 'none'}; this release's head is {latest} ({state})")
