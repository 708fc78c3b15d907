"""``forensic execute``: carry out an approved proposal (or plan it, or undo it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._common import _checkpointer, _fail, app, default_state_dir
from ._terminal import console


@app.command("execute")
def execute(
    thread: Annotated[str, typer.Argument(help="Thread id of the investigation.")],
    proposal: Annotated[str, typer.Argument(help="Proposal id (rp-N), approved with `forensic approve`.")],
    config: Annotated[Optional[Path], typer.Option(help="executors.toml: Slurm, Kubernetes, runbook, node names.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would run; change nothing.")] = False,
    undo: Annotated[bool, typer.Option("--undo", help="Reverse an executed proposal.")] = False,
    checkpoint: Annotated[Optional[Path], typer.Option(help="SQLite checkpoint file (default: state dir).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Carry out a proposal a person approved: exactly that content, once, within the approval's lifetime.

    Every step (planned, started, result, verification, undo) goes to the audit log with the
    operating-system user who ran it. A refusal exits 2 with the reason on stderr.
    """
    from forensic.harness.executors import ExecutionError, ExecutionGate, ExecutionStore, load_config

    if dry_run and undo:
        _fail(2, "--dry-run and --undo exclude each other")
    state_dir = default_state_dir()
    cp_path = checkpoint or state_dir / "checkpoints.sqlite"
    if not cp_path.is_file():
        _fail(2, f"no checkpoint file at {cp_path}")
    tup = _checkpointer(cp_path).get_tuple({"configurable": {"thread_id": thread}})
    if tup is None:
        _fail(2, f"no checkpoint for thread {thread!r}")
    state = tup.checkpoint["channel_values"]
    try:
        gate = ExecutionGate(load_config(config), store=ExecutionStore(cp_path.with_name("executions.sqlite")),
                             audit_log=state_dir / "audit.jsonl")
        out = gate.undo(thread, state, proposal) if undo else gate.execute(thread, state, proposal, dry_run=dry_run)
    except ExecutionError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    from rich.markup import escape

    con = console(highlight=False)
    plan = out.get("plan") or {}
    for line in plan.get("steps", []):
        con.print(f"{'would run' if dry_run else 'ran'}: {escape(line)}")
    if out.get("result"):
        con.print(escape(out["result"]["detail"]))
    if out.get("verification"):
        v = out["verification"]
        con.print(("[green]verified[/]: " if v["ok"] else "[red]not verified[/]: ") + escape(v["detail"]))
    con.print(f"{escape(proposal)}: [bold]{escape(out['state'])}[/]")
    if out["state"] == "unverified":
        raise typer.Exit(1)
