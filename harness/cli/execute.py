"""``forensic execute``: carry out an approved proposal (or plan it, or undo it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from ._common import _fail, _thread_values, app, default_state_dir


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
    operating-system user who ran it. What ran is kept in the checkpoint file, shared with a
    `forensic serve` on the same file. A refusal exits 2 with the reason on stderr.
    """
    from forensic.harness.executors import ExecutionError, ExecutionGate, SqliteLedger, load_config

    if dry_run and undo:
        _fail(2, "--dry-run and --undo exclude each other")
    state, _, cp_path = _thread_values(thread, checkpoint)
    try:
        # The ledger lives in the checkpoint file itself: a `forensic serve` on that file shares it.
        gate = ExecutionGate(load_config(config), ledger=SqliteLedger(cp_path),
                             audit_log=default_state_dir() / "audit.jsonl")
        out = gate.undo(thread, state, proposal) if undo else gate.execute(thread, state, proposal, dry_run=dry_run)
    except ExecutionError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    con = Console(highlight=False)
    plan = out.get("plan") or {}
    for line in plan.get("steps", []):
        con.print(f"{'would run' if dry_run else 'ran'}: {line}")
    if out.get("result"):
        con.print(out["result"]["detail"])
    if out.get("verification"):
        v = out["verification"]
        con.print(("[green]verified[/]: " if v["ok"] else "[red]not verified[/]: ") + v["detail"])
    con.print(f"{proposal}: [bold]{out['state']}[/]")
    if out["state"] == "unverified":
        raise typer.Exit(1)
