"""What every command shares: the typer apps, the one-line failure, state dir and checkpointer."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from ._errors import OneLineErrorGroup
from ._terminal import console

# OneLineErrorGroup: an option typer cannot parse is one line and exit 2, like every other refusal.
app = typer.Typer(
    cls=OneLineErrorGroup,
    add_completion=False,
    no_args_is_help=True,
    help="An autonomous investigator for GPU training fleets.",
)
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: speed and accuracy of the detectors.")
app.add_typer(bench_app, name="bench")

err = console(stderr=True)


def _fail(code: int, message: str) -> NoReturn:
    # Plain write, not rich: one line, never wrapped, whatever the terminal width.
    from ._terminal import clean_text

    sys.stderr.write(f"forensic: {' '.join(clean_text(message).split())}\n")
    raise typer.Exit(code)


def require_extra(extra: str, command: str, *modules: str) -> None:
    """Exit 2 with one line naming the pyproject extra when ``command`` needs a package that is not
    installed: a node agent's install leaves out the service (``serve``) and the pictures (``plot``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            _fail(
                2, f"{command} needs {name}, which is not installed: pip install 'forensic-harness[{extra}]'"
            )


@app.callback()
def _options(
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="DEBUG, INFO, WARNING or ERROR (env FORENSIC_LOG_LEVEL; default WARNING). Logs go to stderr.",
        ),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option("--log-format", help="text, or json for one object per line (env FORENSIC_LOG_FORMAT)."),
    ] = None,
) -> None:
    """An autonomous investigator for GPU training fleets."""
    from forensic.sandbox import SettingsError

    from forensic.logs import configure
    from forensic.settings import get_settings

    try:
        env = get_settings()
    except SettingsError as exc:
        _fail(2, str(exc))
    level = (log_level or env.log_level).upper()
    fmt = (log_format or env.log_format).lower()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        _fail(2, f"--log-level {log_level!r}: expected DEBUG, INFO, WARNING or ERROR")
    if fmt not in ("text", "json"):
        _fail(2, f"--log-format {log_format!r}: expected text or json")
    configure(level, fmt)


def default_state_dir() -> Path:
    """FORENSIC_STATE_DIR, else the XDG state home (see forensic.settings)."""
    from forensic.settings import get_settings

    return get_settings().state_path()


def _checkpointer(path: Path | None):
    """A SQLite checkpointer at ``path`` (None: an in-memory one)."""
    if path is None:
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    problem = unreadable_checkpoint(path)
    if problem:
        _fail(2, problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))


def unreadable_checkpoint(path: Path) -> str | None:
    """Why the SQLite checkpoint file at ``path`` cannot be used (not SQLite, truncated, damaged), or None.

    Checked once, read-only, before any command reads or writes it: a damaged file is one line and
    exit 2 wherever it is met, and nothing is written over it. ``quick_check`` reads every page, so
    a file cut short is found here rather than half-way through a command.
    """
    import sqlite3
    from urllib.parse import quote

    if not path.is_file() or path.stat().st_size == 0:
        return None  # a new file: SQLite makes it
    why = f"the checkpoint file {path} cannot be read"
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=30)
        try:
            rows = con.execute("PRAGMA quick_check(1)").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        return f"{why}: {exc} (truncated, overwritten or not a checkpoint file); nothing was changed"
    if rows != [("ok",)]:
        first = " ".join(str(rows[0][0]).split()) if rows else "no answer"
        return f"{why}: it is damaged ({first[:200]}); nothing was changed"
    return None


def _playbooks(folder: Path | None):
    """The failure graph from another playbook folder (None: the shipped one); a bad folder is exit 2."""
    if folder is None:
        return None
    from forensic.harness.failure_graph import load_failure_graph
    from forensic.sandbox import PlaybookError

    try:
        return load_failure_graph(folder)
    except PlaybookError as exc:
        _fail(2, str(exc))


def _planner_kwargs(planner: str, base_url: str | None, model: str | None, api_key: str | None) -> dict:
    """Model settings for model-driven planners; flags win over the FORENSIC_LLM_* environment."""
    if planner == "graph":
        return {}
    return {
        k: v for k, v in {"base_url": base_url, "model": model, "api_key": api_key}.items() if v is not None
    }


def _thread_values(thread: str, checkpoint: Path | None) -> tuple[dict[str, Any], Any, Path]:
    """(state values, checkpoint time, checkpoint file) of a saved thread; one-line exit 2 if none."""
    from forensic.harness.threads import latest_values

    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    if not cp_path.is_file():
        _fail(2, f"no checkpoint file at {cp_path}")
    got = latest_values(_checkpointer(cp_path), thread)
    if got is None:
        _fail(2, f"no checkpoint for thread {thread!r} (forensic list shows the threads)")
    values, when = got
    return values, when, cp_path
