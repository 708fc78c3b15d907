"""``forensic evidence THREAD ev-N``: one evidence record whole, from the checkpoint.

A report's records are bounded (long lists cut, with ``omitted`` counts); the checkpointed ledger
keeps every record as the tool returned it, and this prints it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, _thread_values, app


@app.command("evidence")
def evidence(
    thread: Annotated[str, typer.Argument(help="Thread id (see forensic list).")],
    record: Annotated[str, typer.Argument(help="Evidence id, e.g. ev-3.")],
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
) -> None:
    """Print one evidence record in full (every row the report left out), as JSON."""

    values, _, _ = _thread_values(thread, checkpoint)
    records = values.get("records") or []
    found = next((r for r in records if r.get("id") == record), None)
    if found is None:
        ids = ", ".join(r.get("id", "?") for r in records) or "none"
        _fail(2, f"thread {thread!r} has no evidence record {record!r} (it has: {ids})")
    sys.stdout.write(json.dumps(found, indent=2, default=str) + "\n")
