"""Read ``job/steps.csv`` into a dense, step-major table (the straggler signal).

The reading rules of ``spec/bundle.md`` apply: rows come in any order, step numbers need not be
contiguous, a resumed job may log a step again (the later row by ``start_unix`` is the rerun and
wins), ranks may be missing from some steps, and steps are ordered by when they started (the median
``start_unix`` over ranks), never by step number. Unusable rows are skipped and counted; input that
is not a steps table at all raises :class:`~sandbox.errors.ParseError`.

The parser avoids per-field Python work where it can: lines are split in blocks with one
``str.split`` and whole columns are converted by numpy. It reads ~1M rows in about two seconds.
"""

from __future__ import annotations

import csv
import gc
import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from forensic.sandbox.errors import ParseError

__all__ = ["StepTable", "load_steps_csv", "REQUIRED_COLUMNS", "OPTIONAL_COLUMNS"]

REQUIRED_COLUMNS = ("step", "rank", "start_unix", "duration_s")
OPTIONAL_COLUMNS = ("compute_s", "loss", "grad_norm", "param_checksum")
_NUMERIC_OPTIONAL = ("compute_s", "loss", "grad_norm")

_BLOCK_LINES = 100_000
# A table far emptier than this is not a fleet's step log but noise or an attack: one row per
# (step, rank) pair means S*R cells for N rows, and N rows cannot need much more than N cells.
_MAX_SPARSITY = 8
_MIN_CELL_ALLOWANCE = 1 << 20
_MAX_CELLS = 1 << 31
_MAX_WARNINGS = 20


class StepTable(BaseModel):
    """Per-rank, per-step timings, dense and step-major: row s is the s-th step in time order."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    steps: np.ndarray = Field(repr=False)
    """(S,) int64 step numbers, ordered by start time (not by number)."""
    ranks: np.ndarray = Field(repr=False)
    """(R,) int64 rank ids in increasing order; column r of every (S, R) array is ``ranks[r]``."""
    start: np.ndarray = Field(repr=False)
    """(S,) float64 unix start of each step: the median ``start_unix`` over the ranks that logged it."""
    duration: np.ndarray = Field(repr=False)
    """(S, R) float32 ``duration_s``; NaN where a rank did not log the step."""
    compute: np.ndarray | None = Field(default=None, repr=False)
    """(S, R) float32 ``compute_s`` (own work before the barrier), or None when not recorded."""
    loss: np.ndarray | None = Field(default=None, repr=False)
    """(S, R) float32 ``loss``, or None when not recorded."""
    grad_norm: np.ndarray | None = Field(default=None, repr=False)
    """(S, R) float32 ``grad_norm``, or None when not recorded."""
    checksum: np.ndarray | None = Field(default=None, repr=False)
    """(S, R) object array of ``param_checksum`` strings (None where missing), or None."""
    rows_read: int = 0
    """Data rows used (after skipping bad rows and replacing reruns)."""
    rows_skipped: int = 0
    """Data rows that could not be used (wrong field count, non-numeric, out of range)."""
    rows_rerun: int = 0
    """Rows replaced by a later rerun of the same (step, rank)."""
    warnings: list[str] = Field(default_factory=list)
    """What was skipped or repaired while reading, in words (at most ~20 messages)."""

    @model_validator(mode="after")
    def _shapes_agree(self) -> "StepTable":
        shape = (self.steps.shape[0], self.ranks.shape[0])
        if self.start.shape != shape[:1]:
            raise ValueError(f"start has shape {self.start.shape}, expected ({shape[0]},)")
        for name in ("duration", "compute", "loss", "grad_norm", "checksum"):
            a = getattr(self, name)
            if a is not None and a.shape != shape:
                raise ValueError(f"{name} has shape {a.shape}, expected {shape} (steps, ranks)")
        return self

    @property
    def n_steps(self) -> int:
        """Number of distinct steps (S)."""
        return int(self.steps.shape[0])

    @property
    def n_ranks(self) -> int:
        """Number of distinct ranks (R)."""
        return int(self.ranks.shape[0])

    @classmethod
    def from_arrays(
        cls,
        duration: np.ndarray,
        compute: np.ndarray | None = None,
        *,
        start: np.ndarray | None = None,
        steps: np.ndarray | None = None,
        ranks: np.ndarray | None = None,
        loss: np.ndarray | None = None,
        grad_norm: np.ndarray | None = None,
        checksum: np.ndarray | None = None,
    ) -> "StepTable":
        """Build a table from (S, R) arrays already in time order (synthetic fleets, tests)."""
        s, r = np.shape(duration)
        if start is None:
            start = np.concatenate(([0.0], np.cumsum(np.nanmax(duration, axis=1)[:-1], dtype=np.float64)))
        return cls(
            steps=np.arange(s, dtype=np.int64) if steps is None else np.asarray(steps, np.int64),
            ranks=np.arange(r, dtype=np.int64) if ranks is None else np.asarray(ranks, np.int64),
            start=np.asarray(start, dtype=np.float64),
            duration=_as_f32(duration),
            compute=None if compute is None else _as_f32(compute),
            loss=None if loss is None else _as_f32(loss),
            grad_norm=None if grad_norm is None else _as_f32(grad_norm),
            checksum=checksum,
            rows_read=int(s * r),
        )


def _as_f32(a: np.ndarray) -> np.ndarray:
    return a if isinstance(a, np.ndarray) and a.dtype == np.float32 else np.asarray(a, dtype=np.float32)


class _Warnings:
    """Collects messages, keeping the first few and a count of the rest."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.dropped = 0

    def add(self, msg: str) -> None:
        if len(self.messages) < _MAX_WARNINGS:
            self.messages.append(msg)
        else:
            self.dropped += 1

    def done(self) -> list[str]:
        out = list(self.messages)
        if self.dropped:
            out.append(f"... and {self.dropped} more warnings")
        return out


def load_steps_csv(text: str | bytes) -> StepTable:
    """Parse the text of ``job/steps.csv`` (already decompressed) into a :class:`StepTable`.

    Columns are found by header name in any order (``step,rank,start_unix,duration_s`` required;
    ``compute_s``, ``loss``, ``grad_norm``, ``param_checksum`` optional; unknown columns ignored).
    Raises ParseError for empty, headerless or binary input, or a table too sparse to be real.
    """
    text = _as_text(text)
    warn = _Warnings()
    lines = text.splitlines()
    head_at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if head_at is None:
        raise ParseError("steps.csv is empty")
    names = [h.strip().strip('"').strip().lower() for h in lines[head_at].split(",")]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ParseError(
            f"steps.csv has no usable header: missing {', '.join(missing)} "
            f"(first line starts {lines[head_at][:80]!r})"
        )
    where = {c: names.index(c) for c in REQUIRED_COLUMNS + OPTIONAL_COLUMNS if c in names}
    body = lines[head_at + 1 :]
    del lines
    quoted = '"' in text
    del text

    was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived strings: the cyclic collector would rescan them all
    try:
        cols, n_bad, n_total = _read_columns(body, len(names), where, quoted, warn)
    finally:
        if was_enabled:
            gc.enable()
    if n_total == 0:
        raise ParseError("steps.csv has a header but no data rows")
    if cols["step"].size == 0:
        raise ParseError(f"steps.csv has no usable rows ({n_bad} of {n_total} rows unreadable)")
    return _assemble(cols, n_bad, warn)


def _as_text(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if raw[:2] == b"\x1f\x8b":
            raise ParseError("steps.csv is gzip-compressed: decompress it before parsing")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"steps.csv is not UTF-8 text (binary data at byte {exc.start})") from None
    if not isinstance(text, str):
        raise ParseError(f"steps.csv must be text, got {type(text).__name__}")
    if "\x00" in text:
        raise ParseError("steps.csv contains NUL bytes: binary data, not CSV text")
    return text.removeprefix("\ufeff")


def _read_columns(body, ncol, where, quoted, warn):
    """Split rows into the known columns, skipping rows with the wrong field count or bad numbers."""
    parts: dict[str, list[np.ndarray]] = {c: [] for c in where}
    n_bad = n_total = 0
    last_nonblank = next((i for i in range(len(body) - 1, -1, -1) if body[i].strip()), -1)
    for b0 in range(0, len(body), _BLOCK_LINES):
        block = body[b0 : b0 + _BLOCK_LINES]
        rows = [ln for ln in block if ln and (ln[0] > " " or ln.strip())]
        n_total += len(rows)
        if quoted:
            fields = [f for f in csv.reader(rows)]
            good = [f for f in fields if len(f) == ncol]
            n_wrong = len(fields) - len(good)
            flat = [v for f in good for v in f]
        else:
            good = [ln for ln in rows if ln.count(",") == ncol - 1]
            n_wrong = len(rows) - len(good)
            flat = ",".join(good).split(",") if good else []
        if n_wrong:
            truncated = last_nonblank >= b0 and last_nonblank < b0 + _BLOCK_LINES and (
                body[last_nonblank].count(",") < ncol - 1
            )
            if truncated:
                warn.add("last line is truncated (fewer fields than the header); skipped")
                n_wrong -= 1
                n_bad += 1
            if n_wrong:
                warn.add(f"{n_wrong} rows with a field count other than the header's {ncol}; skipped")
                n_bad += n_wrong
        n = len(good)
        if n == 0:
            continue
        ok = np.ones(n, dtype=bool)
        block_cols: dict[str, np.ndarray] = {}
        for name, j in where.items():
            raw = flat[j::ncol]
            if name == "param_checksum":
                arr = np.array(raw, dtype=object)
                arr[arr == ""] = None
            elif name in ("step", "rank") and (ints := _to_int(raw)) is not None:
                arr = ints
            else:
                arr, bad = _to_float(raw, optional=name in _NUMERIC_OPTIONAL)
                ok &= ~bad
            block_cols[name] = arr
        ok &= _valid_required(block_cols)
        if not ok.all():
            k = int((~ok).sum())
            warn.add(f"{k} rows with non-numeric or out-of-range values; skipped")
            n_bad += k
        for name, arr in block_cols.items():
            parts[name].append(arr[ok])
    cols = {
        name: (np.concatenate(p) if p else np.zeros(0, dtype=object if name == "param_checksum" else np.float64))
        for name, p in parts.items()
    }
    return cols, n_bad, n_total


def _to_int(raw: list[str]) -> np.ndarray | None:
    """Integer fast path for step and rank (int() beats float() per field); None to fall back."""
    try:
        return np.fromiter(map(int, raw), dtype=np.int64, count=len(raw)).astype(np.float64)
    except (ValueError, OverflowError):
        return None


def _to_float(raw: list[str], optional: bool) -> tuple[np.ndarray, np.ndarray]:
    """Convert a column; returns values and a mask of rows whose field is unusable."""
    try:
        return np.fromiter(map(float, raw), dtype=np.float64, count=len(raw)), np.zeros(len(raw), dtype=bool)
    except ValueError:
        pass
    out = np.empty(len(raw), dtype=np.float64)
    bad = np.zeros(len(raw), dtype=bool)
    for i, v in enumerate(raw):
        try:
            out[i] = float(v)
        except ValueError:
            out[i] = math.nan
            # an empty optional field is "not recorded for this row", not a broken row
            bad[i] = not (optional and not v.strip())
    return out, bad


def _valid_required(c: dict[str, np.ndarray]) -> np.ndarray:
    step, rank, start, dur = c["step"], c["rank"], c["start_unix"], c["duration_s"]
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(step) & (step == np.round(step)) & (np.abs(step) < 2**53)
        ok &= np.isfinite(rank) & (rank == np.round(rank)) & (rank >= 0) & (rank < 2**53)
        ok &= np.isfinite(start) & np.isfinite(dur) & (dur >= 0)
    return ok


def _assemble(cols: dict[str, np.ndarray], n_bad: int, warn: _Warnings) -> StepTable:
    step = cols["step"].astype(np.int64)
    rank = cols["rank"].astype(np.int64)
    start = cols["start_unix"]

    # A rerun of (step, rank) replaces the earlier row: keep the last row by start time.
    order = np.lexsort((start, rank, step))
    step, rank = step[order], rank[order]
    last = np.ones(order.size, dtype=bool)
    last[:-1] = (step[1:] != step[:-1]) | (rank[1:] != rank[:-1])
    keep = order[last]
    n_rerun = int(order.size - keep.size)
    if n_rerun:
        warn.add(f"{n_rerun} rows were reruns of an already-logged (step, rank): the later row kept")
    step, rank, start = step[last], rank[last], start[keep]

    steps_u, s_idx = np.unique(step, return_inverse=True)
    ranks_u, r_idx = np.unique(rank, return_inverse=True)
    n_s, n_r, n_rows = steps_u.size, ranks_u.size, keep.size
    cells = n_s * n_r
    if cells > max(_MAX_SPARSITY * n_rows, _MIN_CELL_ALLOWANCE) or cells > _MAX_CELLS:
        raise ParseError(
            f"steps.csv is too sparse to be a step log: {n_rows} rows span {n_s} steps x {n_r} ranks"
        )

    # Median start over the ranks of each step, from the long format: sort by (step, start).
    o = np.lexsort((start, s_idx))
    counts = np.bincount(s_idx, minlength=n_s)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    ss = start[o]
    med_start = 0.5 * (ss[first + (counts - 1) // 2] + ss[first + counts // 2])
    # Time order decides; ties (a step logged at the same instant) fall back to the step number.
    t_order = np.lexsort((steps_u, med_start))
    pos = np.empty(n_s, dtype=np.int64)
    pos[t_order] = np.arange(n_s)
    row = pos[s_idx]
    if np.any(np.diff(steps_u[t_order]) < 0):
        warn.add("step numbers are not monotone in start time (restart or rerun): ordered by start_unix")

    missing = cells - n_rows
    if missing:
        warn.add(f"{missing} (step, rank) cells not logged ({missing / cells:.1%}); left as NaN")

    def dense(v: np.ndarray) -> np.ndarray:
        out = np.full((n_s, n_r), np.nan, dtype=np.float32)
        out[row, r_idx] = v
        return out

    optional: dict[str, np.ndarray | None] = {}
    for name, key in (("compute_s", "compute"), ("loss", "loss"), ("grad_norm", "grad_norm")):
        optional[key] = None
        if name in cols:
            v = cols[name][keep]
            if name == "compute_s":
                with np.errstate(invalid="ignore"):
                    bad = ~np.isfinite(v) | (v < 0)
                if bad.any():
                    warn.add(f"{int(bad.sum())} compute_s values negative or not finite; left as NaN")
                    v = np.where(bad, np.nan, v)
            if np.isnan(v).all():
                warn.add(f"column {name} is present but empty; ignored")
            else:
                optional[key] = dense(v)
    checksum = None
    if "param_checksum" in cols:
        v = cols["param_checksum"][keep]
        if any(x is not None for x in v):
            checksum = np.full((n_s, n_r), None, dtype=object)
            checksum[row, r_idx] = v

    return StepTable(
        steps=steps_u[t_order].astype(np.int64),
        ranks=ranks_u.astype(np.int64),
        start=med_start[t_order].astype(np.float64),
        duration=dense(cols["duration_s"][keep]),
        checksum=checksum,
        rows_read=int(n_rows),
        rows_skipped=int(n_bad),
        rows_rerun=n_rerun,
        warnings=warn.done(),
        **optional,
    )
