"""Per-rank step files: ``job/steps.csv`` or one ``job/steps*.csv`` per rank, merged on read.

A recorder in the training job (:mod:`forensic.record`) writes one file per rank
(``steps-rank00003.csv``), because ranks must never share a file. Every file has the spec's header,
possibly with columns in another order or with extra columns; the merged table keeps the columns
every file has, so one file without ``compute_s`` drops that column for all (a rank without
compute time cannot be compared with ranks that have it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from forensic.sandbox.errors import ParseError
from forensic.sandbox.sources import step_file_names
from forensic.tools.detectors.steps import OPTIONAL_COLUMNS, REQUIRED_COLUMNS

__all__ = ["merge_step_files", "step_file_names"]

#: Extra columns a recorder writes and the merge keeps when every file has them.
_EXTRA_COLUMNS = ("host", "local_gpu")


def merge_step_files(texts: Sequence[tuple[str, str]]) -> str:
    """One steps.csv text from ``(name, text)`` pairs; ParseError names the file that is unusable."""
    if len(texts) == 1:
        return texts[0][1]
    headers: list[list[str]] = []
    for name, text in texts:
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        cols = [c.strip().strip('"').strip().lower() for c in first.removeprefix("\ufeff").split(",")]
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            raise ParseError(f"{name}: no usable header (missing {', '.join(missing)})")
        headers.append(cols)
    keep = [c for c in REQUIRED_COLUMNS + OPTIONAL_COLUMNS + _EXTRA_COLUMNS if all(c in h for h in headers)]
    out = io.StringIO()
    out.write(",".join(keep) + "\n")
    for (_, text), cols in zip(texts, headers, strict=True):
        where = [cols.index(c) for c in keep]
        reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))
        next(reader, None)
        for row in reader:
            if len(row) != len(cols):
                continue  # a torn last line from a rank that died mid-write: the reader skips it too
            out.write(",".join(row[i] for i in where) + "\n")
    return out.getvalue()
