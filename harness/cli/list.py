"""``forensic list``: the checkpointed investigations, newest first."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ._common import _checkpointer, app, default_state_dir
from ._terminal import console


@app.command("list")
def list_investigations(
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per investigation, as a list.")
    ] = False,
) -> None:
    """Investigations with their title, state, verdict, time since their last update and pending approvals."""
    from forensic.harness.threads import age, list_threads

    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    threads = list_threads(_checkpointer(cp_path)) if cp_path.is_file() else []
    if as_json:
        sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in threads], indent=2) + "\n")
        return
    con = console()
    if not threads:
        con.print(Text(f"no investigations in {cp_path}"))
        return
    table = Table(box=None, pad_edge=False)
    # "updated": the time since the thread's last checkpoint (a waiting thread's is its verdict).
    for col in ("thread", "title", "state", "verdict", "updated", "pending"):
        table.add_column(col, overflow="fold", no_wrap=col in ("state", "updated", "pending"))
    for t in threads:
        # A person's words: 'healthy: no fault found', never 'healthy healthy'.
        verdict = (
            "healthy: no fault found"
            if t.status == "healthy"
            else f"{t.status}: {t.verdict}"
            if t.status
            else "-"
        )
        # Text, not str: a cell given as str is read as rich markup, and thread ids and verdicts are data.
        table.add_row(
            *(
                Text(c)
                for c in (
                    t.thread,
                    t.title[:60],
                    t.state,
                    verdict,
                    age(t.updated),
                    str(t.pending) if t.pending else "",
                )
            )
        )
    con.print(table)
    if any(t.state == "waiting" for t in threads):
        con.print("[dim]forensic show THREAD prints a report with its approve commands[/]")
