"""``forensic db``: the PostgreSQL schema (Alembic migrations) of ``serve --db`` and ``worker``."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import _fail, app

db_app = typer.Typer(
    no_args_is_help=True, help="The PostgreSQL schema of serve --db and worker (Alembic migrations)."
)
app.add_typer(db_app, name="db")

_DB = typer.Option(
    "--db", help="postgresql://user@host/dbname (a password belongs in ~/.pgpass or PGPASSWORD)."
)


def _check(db: str) -> None:
    from forensic.harness.service.pgstore import connect_check, is_postgres_url

    if not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL, not {db[:60]!r}")
    connect_check(db)


@db_app.command("upgrade")
def upgrade(db: Annotated[str, _DB]) -> None:
    """Apply the migrations the database lacks (serve and worker also do this at start-up).

    Safe to run while other processes start: the migrations run under an advisory lock, each once.
    A database made by the earlier hand-versioned SQL is adopted (stamped) without touching a row.
    """
    from forensic.harness.service.pgmigrate import current, migrate
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
    from forensic.harness.service.pgmigrate import current, head
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
