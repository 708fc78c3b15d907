"""``forensic execute``: carry out an approved proposal (or plan it, or undo it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import _fail, _thread_values, app, default_state_dir
from ._terminal import console


@app.command("execute")
def execute(
    thread: Annotated[str, typer.Argument(help="Thread id of the investigation.")],
    proposal: Annotated[str, typer.Argument(help="Proposal id (rp-N), approved with `forensic approve`.")],
    config: Annotated[
        Path | None, typer.Option(help="executors.toml: Slurm, Kubernetes, runbook, node names.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would run; change nothing.")] = False,
    undo: Annotated[bool, typer.Option("--undo", help="Reverse an executed proposal.")] = False,
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="postgresql:// URL of a `forensic serve --db` store: THREAD is "
            "the investigation id; approvals and steps are its audit table's.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Carry out a proposal a person approved: exactly that content, once, within the approval's lifetime.

    Every step (planned, started, result, verification, undo) goes to the audit log with the
    operating-system user who ran it. What ran is kept in the checkpoint store (the SQLite file,
    or with --db the service's PostgreSQL database), shared with a `forensic serve` on that store.
    A refusal exits 2 with the reason on stderr.
    """
    from forensic.harness.executors import ExecutionError, ExecutionGate, SqliteLedger, load_config

    if dry_run and undo:
        _fail(2, "--dry-run and --undo exclude each other")
    if db is not None:
        if checkpoint is not None:
            _fail(2, "give --checkpoint or --db, not both")
        gate, state, thread = _service_gate(db, thread, config)
    else:
        state, _, cp_path = _thread_values(thread, checkpoint)
        try:
            # The ledger lives in the checkpoint file itself: a `forensic serve` on that file shares it.
            gate = ExecutionGate(
                load_config(config),
                ledger=SqliteLedger(cp_path),
                audit_log=default_state_dir() / "audit.jsonl",
            )
        except ExecutionError as exc:
            _fail(2, str(exc))
    try:
        out = (
            gate.undo(thread, state, proposal)
            if undo
            else gate.execute(thread, state, proposal, dry_run=dry_run)
        )
    except ExecutionError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    from rich.markup import escape

    con = console(highlight=False)
    plan = out.get("plan") or {}
    said = [f"{'would run' if dry_run else 'ran'}: {line}" for line in plan.get("steps", [])]
    for line in said:
        con.print(escape(line))
    # An executor's result often repeats the step it ran ("ran: scontrol update ..."): each line once.
    if out.get("result") and out["result"]["detail"] not in said:
        con.print(escape(out["result"]["detail"]))
    if out.get("verification"):
        v = out["verification"]
        con.print(("[green]verified[/]: " if v["ok"] else "[red]not verified[/]: ") + escape(v["detail"]))
    con.print(f"{escape(proposal)}: [bold]{escape(out['state'])}[/]")
    if out["state"] == "unverified":
        raise typer.Exit(1)


def _service_gate(db: str, inv_id: str, config: Path | None) -> tuple[Any, dict[str, Any], str]:
    """(gate, checkpointed values, thread) of investigation ``inv_id`` in a PostgreSQL service store,
    the gate built as the API builds it: that database's ledger and audit table."""
    from forensic.harness.executors import ExecutionError, ExecutionGate, PostgresLedger, load_config
    from forensic.harness.service.decisions import TableApprovals, audit_sink
    from forensic.harness.service.schema import is_postgres_url
    from forensic.harness.service.store import PostgresStore
    from forensic.harness.service.workers import postgres_checkpointer
    from forensic.sandbox import ForensicError

    if not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL, not {db[:60]!r}")
    try:
        store = PostgresStore(db)
        inv = store.investigation(inv_id)
        if inv is None:
            _fail(2, f"no investigation {inv_id!r} in that database")
        tup = postgres_checkpointer(db, max_size=2).get_tuple(
            {"configurable": {"thread_id": inv["thread_id"]}}
        )
        if tup is None:
            _fail(2, f"investigation {inv_id} has no checkpoint to execute from")
        gate = ExecutionGate(
            load_config(config),
            ledger=PostgresLedger(db),
            audit_sink=audit_sink(store, inv_id),
            approval_records=TableApprovals(store, inv_id),
        )
    except (ExecutionError, ForensicError) as exc:
        _fail(2, str(exc))
    return gate, tup.checkpoint["channel_values"], inv["thread_id"]
