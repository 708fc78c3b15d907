"""What every command shares: the typer apps, the one-line failure, state dir and checkpointer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.console import Console

app = typer.Typer(add_completion=False, no_args_is_help=True, help="An autonomous investigator for GPU training fleets.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: speed and accuracy of the detectors.")
app.add_typer(bench_app, name="bench")

err = Console(stderr=True)


def _fail(code: int, message: str) -> None:
    # Plain write, not rich: one line, never wrapped, whatever the terminal width.
    from ._terminal import clean_text

    sys.stderr.write(f"forensic: {' '.join(clean_text(message).split())}\n")
    raise typer.Exit(code)


def default_state_dir() -> Path:
    base = os.environ.get("FORENSIC_STATE_DIR") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "forensic"
    )
    return Path(base)


def _checkpointer(path: Path | None):
    """A SQLite checkpointer at ``path`` (None: an in-memory one)."""
    if path is None:
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))


def _planner_kwargs(planner: str, base_url: str | None, model: str | None, api_key: str | None) -> dict:
    """Model settings for model-driven planners; flags win over the FORENSIC_LLM_* environment."""
    if planner == "graph":
        return {}
    return {k: v for k, v in {"base_url": base_url, "model": model, "api_key": api_key}.items() if v is not None}


