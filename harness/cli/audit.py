"""``forensic audit verify``: check the audit log's hash chain (the CLI's file, or the service's table)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, app, default_state_dir

audit_app = typer.Typer(no_args_is_help=True, help="The audit log of approval decisions.")
app.add_typer(audit_app, name="audit")


@audit_app.command("verify")
def verify(
    path: Annotated[
        Path | None, typer.Argument(help="Audit log (default: audit.jsonl in the state dir).")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Check the service's audit table instead: postgresql://user@host/dbname or a SQLite file.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check that no line of the audit log was edited, removed or reordered.

    Exit 0 and print the line count and head hash when the chain holds; exit 2 naming the first
    broken line when it does not. Keep the head hash elsewhere to detect a rewritten tail.
    With ``--db``, the service's audit table is checked the same way, read-only, row by row in id
    order; rows written before the table had a chain (schema revision 0003) are counted apart.
    """
    from forensic.harness.audit import AuditError
    from forensic.harness.audit import verify as check

    if db is not None:
        if path is not None:
            _fail(2, "give an audit log file or --db, not both")
        _verify_db(db, as_json)
        return
    target = path or default_state_dir() / "audit.jsonl"
    try:
        lines, head = check(target)
    except AuditError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps({"path": str(target), "lines": lines, "head": head, "ok": True}) + "\n")
    else:
        sys.stdout.write(f"audit log {target}: {lines} lines, chain intact, head {head}\n")


def _verify_db(db: str, as_json: bool) -> None:
    from forensic.harness.service.schema import is_postgres_url
    from forensic.harness.service.store import verify_audit_db
    from forensic.sandbox import ForensicError

    if "://" in db and not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL or a SQLite file, not {db[:60]!r}")
    # A URL's password (if one was put there) is not echoed back.
    shown = _without_password(db) if is_postgres_url(db) else db
    try:
        rows, head, before = verify_audit_db(db)
    except ForensicError as exc:
        _fail(2, str(exc))
    if as_json:
        out = {"db": shown, "rows": rows, "before_chain": before, "head": head, "ok": True}
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        older = f" ({before} from before the chain, not covered)" if before else ""
        sys.stdout.write(f"audit table in {shown}: {rows} rows{older}, chain intact, head {head}\n")


def _without_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:  # libpq also takes a password as a query parameter
        return make_url(url).difference_update_query(["password"]).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy parses: say only which kind it was
        return "postgresql://…"
