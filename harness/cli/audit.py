"""``forensic audit verify``: check the audit log's hash chain."""

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
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check that no line of the audit log was edited, removed or reordered.

    Exit 0 and print the line count and head hash when the chain holds; exit 2 naming the first
    broken line when it does not. Keep the head hash elsewhere to detect a rewritten tail.
    """
    from forensic.harness.audit import AuditError
    from forensic.harness.audit import verify as check

    target = path or default_state_dir() / "audit.jsonl"
    try:
        lines, head = check(target)
    except AuditError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps({"path": str(target), "lines": lines, "head": head, "ok": True}) + "\n")
    else:
        sys.stdout.write(f"audit log {target}: {lines} lines, chain intact, head {head}\n")
