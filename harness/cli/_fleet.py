"""Opening a live fleet from the command line (``investigate --fleet``, ``bench fleet``)."""

from __future__ import annotations

from pathlib import Path

from ._common import _fail


def open_live(fleet: Path, job: str | None, since: str, until: str | None, title: str, ranks: int | None):
    """The live evidence source of ``job``; a one-line failure (exit 2) on bad arguments."""
    from forensic.sandbox import parse_time
    from forensic.sandbox.fleet import open_fleet

    if not job:
        _fail(2, "--fleet needs --job NAME")
    end = None
    if until is not None:
        end = parse_time(until)
        if end is None:
            _fail(2, f"--until: {until!r} is neither ISO 8601 nor unix seconds")
    return open_fleet(fleet, job=job, since=since, until=end, title=title, ranks=ranks)
