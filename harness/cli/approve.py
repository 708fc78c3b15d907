"""``forensic approve``: a person decides on remediation proposals."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from forensic.sandbox import ForensicError
from rich.console import Console

from ._common import _checkpointer, _fail, app, default_state_dir


@app.command()
def approve(
    thread: Annotated[str, typer.Argument(help="Thread id of an investigation waiting for approval.")],
    approve_: Annotated[list[str], typer.Option("--approve", help="PROPOSAL_ID=CONTENT_HASH to approve (repeatable).")] = [],
    reject: Annotated[list[str], typer.Option("--reject", help="PROPOSAL_ID=CONTENT_HASH to reject (repeatable).")] = [],
    comment: Annotated[str, typer.Option(help="Why, recorded in the audit log.")] = "",
    checkpoint: Annotated[Optional[Path], typer.Option(help="SQLite checkpoint file (default: state dir).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the updated report JSON.")] = False,
) -> None:
    """Approve or reject remediation proposals of a checkpointed investigation, as yourself.

    Each decision names the proposal and the hash of its content, so what is approved is exactly
    what was shown. The approver is the operating-system user running this command; every
    decision, counted or refused, is appended to the audit log in the state dir.
    """
    import getpass

    from forensic.harness.approvals import Decision
    from forensic.harness.graph import Investigator

    decisions = []
    for verdict, items in (("approve", approve_), ("reject", reject)):
        for item in items:
            pid, sep, digest = item.partition("=")
            if not sep or not pid or not digest:
                _fail(2, f"--{verdict} {item!r}: expected PROPOSAL_ID=CONTENT_HASH")
            decisions.append(Decision(proposal_id=pid, content_hash=digest, decision=verdict,  # type: ignore[arg-type]
                                      approver=getpass.getuser(), authenticated=True, comment=comment))
    if not decisions:
        _fail(2, "nothing to decide: pass --approve or --reject")
    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    if not cp_path.is_file():
        _fail(2, f"no checkpoint file at {cp_path}")
    saver = _checkpointer(cp_path)
    tup = saver.get_tuple({"configurable": {"thread_id": thread}})
    if tup is None:
        _fail(2, f"no checkpoint for thread {thread!r}")
    bundle = tup.checkpoint["channel_values"].get("bundle_path")
    try:
        inv = Investigator(bundle, checkpointer=saver, audit_log=default_state_dir() / "audit.jsonl")
        report, audit = inv.decide(thread, decisions)
    except ForensicError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        con = Console()
        for p in report["proposals"]:
            con.print(f"{p['id']} {p['action']} {p['target']}: [bold]{p['status']}[/]", highlight=False)
    # A refused decision is the caller's mistake (a stale hash, an unknown id): say so where
    # scripts look, and exit 2; the decisions that did count stay counted and audited.
    refused = [a for a in audit if a["outcome"] == "refused"]
    for a in refused:
        sys.stderr.write(f"forensic: refused {a['decision']} {a['proposal_id']}: {a['reason']}\n")
    if refused:
        raise typer.Exit(2)
