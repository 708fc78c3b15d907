"""Steps pushed to the service over HTTP, kept as step files the watcher follows.

``POST /api/v1/watch/steps?job=NAME`` takes rows in the step recorder's CSV (a header line, then
rows; at least ``step,rank,start_unix,duration_s,compute_s``; ``host,local_gpu`` when known). Every
row is parsed and checked as the follower checks a file's (:func:`~.follow._parse`,
:meth:`~.follow.Batch.valid`), written again in the recorder's own columns (never the client's
bytes), appended to ``<state_dir>/pushed/<job>/steps-pushed-<NNNNNN>.csv`` and fsynced before the
202. The watcher follows ``<state_dir>/pushed`` as a jobs folder, so a pushed job resumes, restarts
and deduplicates exactly as a job folder does. A file is closed at ``ROTATE_BYTES`` and a new one
begun; only the newest ``KEEP_FILES`` files of a job are kept (the watcher reads a file within a
poll of its writing; a watcher stopped for longer than it takes to push that much loses the rest).
"""

from __future__ import annotations

import math
import os
import re
import threading
from pathlib import Path

from forensic.harness.watch.follow import _NEEDED, MAX_LINE, Batch, _header, _parse

from forensic.record import HEADER

__all__ = ["KEEP_FILES", "MAX_ROWS", "PushError", "ROTATE_BYTES", "append_pushed"]

ROTATE_BYTES = 64 << 20
KEEP_FILES = 4
MAX_ROWS = 1_000_000
_FILE = re.compile(r"^steps-pushed-(\d{6})\.csv$")
_lock = threading.Lock()


class PushError(ValueError):
    """A push that cannot be accepted (one line saying why)."""


def append_pushed(root: Path, job: str, body: bytes) -> int:
    """Append the valid rows of ``body`` to ``job``'s pushed step file under ``root``; the count."""
    from forensic.sandbox.fleet import valid_job_name

    if not valid_job_name(job):
        raise PushError(f"job {job[:80]!r} is not a valid job name (letters, digits, '.', '_', '-')")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise PushError("body is not UTF-8 text") from None
    lines = text.split("\n")
    cols = _header(lines[0].encode()) if lines and len(lines[0]) <= MAX_LINE else None
    if cols is None:
        raise PushError(f"the first line must be a header naming at least {','.join(_NEEDED)}")
    if len(lines) > MAX_ROWS + 2:
        raise PushError(f"more than {MAX_ROWS} rows in one push")
    rows = [
        r for ln in lines[1:] if ln and len(ln) <= MAX_LINE and (r := _parse(ln.encode(), cols)) is not None
    ]
    if not rows:
        return 0
    b = Batch.of(rows)
    rows = [r for r, ok in zip(rows, b.valid().tolist(), strict=True) if ok]
    out = "".join(
        ",".join(
            (
                str(r.step),
                str(r.rank),
                "" if math.isnan(r.start) else f"{r.start:.6f}",
                f"{r.duration:.6f}",
                "" if math.isnan(r.compute) else f"{r.compute:.6f}",
                "",
                "",
                "",
                r.host if r.host and "," not in r.host else "",
                "" if r.gpu is None else str(r.gpu),
            )
        )
        + "\n"
        for r in rows
    ).encode()
    folder = Path(root) / job
    with _lock:
        folder.mkdir(parents=True, exist_ok=True)
        path = _current(folder)
        new = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if new:
                os.write(fd, (",".join(HEADER) + "\n").encode())
            os.write(fd, out)
            os.fsync(fd)
        finally:
            os.close(fd)
    return len(rows)


def _current(folder: Path) -> Path:
    """The file to append to: the newest, or a new one once it is ``ROTATE_BYTES`` long."""
    nums = sorted(int(m.group(1)) for p in folder.iterdir() if (m := _FILE.match(p.name)))
    n = nums[-1] if nums else 0
    path = folder / f"steps-pushed-{n:06d}.csv"
    if path.exists() and path.stat().st_size >= ROTATE_BYTES:
        n += 1
        path = folder / f"steps-pushed-{n:06d}.csv"
        for old in nums[: max(0, len(nums) + 1 - KEEP_FILES)]:
            (folder / f"steps-pushed-{old:06d}.csv").unlink(missing_ok=True)
    return path
