"""``forensic plot``: pictures of a checkpointed investigation (PNG)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, _thread_values, app, require_extra


@app.command()
def plot(
    thread: Annotated[str, typer.Argument(help="Thread id (see forensic list).")],
    kind: Annotated[
        str,
        typer.Argument(help="rank-heatmap (ranks x time, onset marked) or timeline (one host over time)."),
    ],
    out: Annotated[
        Path | None, typer.Option(help="PNG file to write (default: THREAD-KIND.png here).")
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="timeline: the host to draw (default: the verdict's).")
    ] = None,
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
) -> None:
    """Draw a picture of an investigation: a per-rank heat map or a host's timeline."""
    require_extra("plot", "forensic plot", "matplotlib")
    from forensic.harness.plots import KINDS
    from forensic.harness.plots import plot as draw
    from forensic.sandbox import Bundle, ForensicError

    if kind not in KINDS:
        _fail(2, f"unknown picture {kind!r}: choose one of {', '.join(KINDS)}")
    values, _, _ = _thread_values(thread, checkpoint)
    target = out or Path(f"{thread}-{kind}.png")
    if target.suffix.lower() != ".png":
        _fail(2, f"{target}: --out must name a .png file")
    if not target.parent.is_dir():
        _fail(2, f"{target.parent}: no such folder")
    try:
        draw(kind, values.get("report") or {}, Bundle(values["bundle_path"]), target, host=host)
    except ForensicError as exc:
        _fail(2, str(exc))
    sys.stdout.write(f"{target}\n")
