"""``forensic approve``: a person decides on remediation proposals."""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from forensic.sandbox import ForensicError
from rich.text import Text

from ._common import _checkpointer, _fail, app, default_state_dir
from ._terminal import console

log = logging.getLogger(__name__)


@app.command()
def approve(
    thread: Annotated[str, typer.Argument(help="Thread id of an investigation waiting for approval.")],
    approve_: Annotated[
        list[str] | None, typer.Option("--approve", help="PROPOSAL_ID=CONTENT_HASH to approve (repeatable).")
    ] = None,
    reject: Annotated[
        list[str] | None, typer.Option("--reject", help="PROPOSAL_ID=CONTENT_HASH to reject (repeatable).")
    ] = None,
    comment: Annotated[str, typer.Option(help="Why, recorded in the audit log.")] = "",
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the updated report JSON.")] = False,
) -> None:
    """Approve or reject remediation proposals of a checkpointed investigation, as yourself.

    Each decision names the proposal and the hash of its content, so what is approved is exactly
    what was shown. The approver is the operating-system user running this command; every
    decision, counted or refused, is appended to the audit log in the state dir.
    """
    from forensic.harness.approvals import Decision, append_audit, refusal
    from forensic.harness.graph import Investigator
    from forensic.harness.identity import OsIdentity
    from pydantic import ValidationError

    # The operating system says who runs this command; USER and LOGNAME are not asked.
    who = OsIdentity().current()
    decisions = []
    for verdict, items in (("approve", approve_), ("reject", reject)):
        for item in items or []:
            pid, sep, digest = item.partition("=")
            if not sep or not pid or not digest:
                _fail(2, f"--{verdict} {item!r}: expected PROPOSAL_ID=CONTENT_HASH")
            try:
                decisions.append(
                    Decision(
                        proposal_id=pid,
                        content_hash=digest,
                        decision=verdict,
                        approver=who.name,
                        authenticated=True,
                        comment=comment,
                    )
                )
            except ValidationError as exc:
                first = exc.errors()[0]
                _fail(2, f"--{verdict} {item[:80]!r}: {'.'.join(map(str, first['loc']))}: {first['msg']}")
    if not decisions:
        _fail(2, "nothing to decide: pass --approve or --reject")
    audit_path = default_state_dir() / "audit.jsonl"

    def refuse(reason: str, incident: str = "") -> NoReturn:
        # Every refusal is on the record, whatever refused it, before the one-line exit.
        try:
            append_audit(
                audit_path,
                [refusal(thread=thread, incident=incident, decision=d, reason=reason) for d in decisions],
            )
        except ForensicError as exc:
            _fail(2, f"{reason}; and the refusal could not be audited: {exc}")
        _fail(2, reason)

    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    if not cp_path.is_file():
        refuse(f"no checkpoint file at {cp_path}")
    from ._common import unreadable_checkpoint

    problem = unreadable_checkpoint(cp_path)
    if problem:
        refuse(problem)
    try:
        saver = _checkpointer(cp_path)
        tup = saver.get_tuple({"configurable": {"thread_id": thread}})
    except (sqlite3.Error, OSError) as exc:
        refuse(f"cannot read the checkpoint file {cp_path}: {exc}")
    if tup is None:
        refuse(f"no checkpoint for thread {thread!r}")
    values = tup.checkpoint["channel_values"]
    bundle = values.get("bundle_path")
    incident = str(values.get("incident_id") or "")
    if not bundle:
        refuse(f"thread {thread!r} has no saved bundle to decide on")
    # decided under the playbooks the thread was investigated with
    from forensic.harness.threads import thread_playbooks
    from forensic.sandbox import PlaybookError

    graph = None
    try:
        graph = thread_playbooks(thread, values)
    except PlaybookError as exc:
        refuse(str(exc), incident)
    try:
        inv = Investigator(bundle, checkpointer=saver, audit_log=audit_path, graph=graph)
        report, audit = inv.decide(thread, decisions)
    except ForensicError as exc:
        refuse(str(exc), incident)
    except sqlite3.Error as exc:
        refuse(f"the checkpoint file {cp_path} cannot be written ({exc}); nothing was decided", incident)
    for a in audit:
        log.info(
            "decision",
            extra={
                "thread": thread,
                "proposal": a["proposal_id"],
                "decision": a["decision"],
                "approver": a["approver"],
                "outcome": a["outcome"],
            },
        )
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        con = console()
        for p in report["proposals"]:
            con.print(
                Text.assemble(f"{p['id']} {p['action']} {p['target']}: ", (p["status"], "bold")),
                highlight=False,
            )
    # A refused decision is the caller's mistake (a stale hash, an unknown id): say so where
    # scripts look, and exit 2; the decisions that did count stay counted and audited.
    refused = [a for a in audit if a["outcome"] == "refused"]
    for a in refused:
        sys.stderr.write(f"forensic: refused {a['decision']} {a['proposal_id']}: {a['reason']}\n")
    if refused:
        raise typer.Exit(2)
