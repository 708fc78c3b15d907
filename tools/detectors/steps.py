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
import itertools
import math
from collections import Counter

import numpy as np
from forensic.sandbox.errors import ParseError
from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    cut_short: bool = False
    """The file's last line was cut mid-row (a writer that died, a copy taken mid-write): the
    steps after it, if any, were not recorded, so the file's end is not the job's."""

    @model_validator(mode="after")
    def _shapes_agree(self) -> StepTable:
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
    ) -> StepTable:
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
        self.cut_short = False

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
    # The text is read in blocks of lines, never split whole: a 250 MB steps.csv as one list of
    # lines would cost twice the text again.
    blocks = _line_blocks(text)
    header = None
    first: list[tuple[list[str], int, int]] = []
    for block, c0, c1 in blocks:
        head_at = next((i for i, ln in enumerate(block) if ln.strip()), None)
        if head_at is not None:
            header = block[head_at]
            first = [(block[head_at + 1 :], c0, c1)]  # the rest of the header's block is body
            break
    if header is None:
        raise ParseError("steps.csv is empty")
    names = [h.strip().strip('"').strip().lower() for h in header.split(",")]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ParseError(
            f"steps.csv has no usable header: missing {', '.join(missing)} "
            f"(first line starts {header[:80]!r})"
        )
    where = {c: names.index(c) for c in REQUIRED_COLUMNS + OPTIONAL_COLUMNS if c in names}
    quoted = '"' in text
    ncol = _row_width(first[0][0] if first else [], len(names), quoted)
    if ncol != len(names):
        # A writer whose header and rows disagree on the trailing columns (a name repeated or left
        # over, a value with no name): the named columns are read by position when every row has
        # the same other width; a named column past the rows' end is left out.
        lost = [c for c, j in where.items() if j >= ncol]
        if any(c in REQUIRED_COLUMNS for c in lost):
            ncol = len(names)
        else:
            warn.add(
                f"the header names {len(names)} columns but the rows hold {ncol} fields: columns read by "
                f"the header's positions"
                + (f"; {', '.join(lost)} left out (past the rows' end)" if lost else "")
            )
            where = {c: j for c, j in where.items() if j < ncol}
    last_end, last_line = _last_nonblank(text)

    was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived strings: the cyclic collector would rescan them all
    try:
        cols, n_bad, n_total = _read_columns(
            itertools.chain(first, blocks),
            ncol,
            where,
            quoted,
            warn,
            last_end,
            last_line,
            max_rows=text.count("\n") + 1,
        )
    finally:
        if was_enabled:
            gc.enable()
    if n_total == 0:
        raise ParseError("steps.csv has a header but no data rows")
    if cols["step"].size == 0:
        raise ParseError(f"steps.csv has no usable rows ({n_bad} of {n_total} rows unreadable)")
    return _assemble(cols, n_bad, warn)


def _row_width(lines: list[str], n_names: int, quoted: bool, sample: int = 200) -> int:
    """The field count of the first rows when (nearly) all of them agree on one other than the
    header's (``n_names`` otherwise): at least 20 rows, 95% of them the same width."""
    rows = [ln for ln in lines[: sample * 2] if ln.strip()][:sample]
    if len(rows) < 20:
        return n_names
    widths = [len(f) for f in csv.reader(rows)] if quoted else [ln.count(",") + 1 for ln in rows]
    width, n = Counter(widths).most_common(1)[0]
    return width if width != n_names and n >= 0.95 * len(rows) else n_names


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


def _line_blocks(text: str):
    """``text.splitlines()`` in blocks of about ``_BLOCK_LINES`` lines, each with its span
    ``(start, end)`` in ``text``; blocks end after a ``\\n``, so no line is cut in two."""
    pos, n = 0, len(text)
    while pos < n:
        end = pos
        for _ in range(_BLOCK_LINES):
            nl = text.find("\n", end)
            if nl < 0:
                end = n
                break
            end = nl + 1
        yield text[pos:end].splitlines(), pos, end
        pos = end


def _last_nonblank(text: str) -> tuple[int, str]:
    """(end offset, text) of the last line with something on it; (0, "") when there is none."""
    end = len(text)
    while end > 0:
        tail = text[max(0, end - 65536) : end]
        stripped = tail.rstrip()
        if stripped:
            end = end - len(tail) + len(stripped)
            start = max(0, end - (1 << 20))
            return end, (text[start:end].splitlines() or [""])[-1]
        end -= len(tail)
    return 0, ""


_COLUMN_DTYPES = {"param_checksum": object, "step": np.int64, "rank": np.int64, "duration_s": np.float32}


def _read_columns(blocks, ncol, where, quoted, warn, last_end, last_line, max_rows):
    """Split rows into the known columns, skipping rows with the wrong field count or bad numbers.

    ``blocks`` yields (lines, start, end) spans of the body; ``last_line`` (ending at
    ``last_end``) is the file's last non-blank line, which a writer that died may have cut short.
    Each column is one array of ``max_rows`` (the text's line count: pages never written cost
    nothing), filled block by block: no list of block arrays to join, and no heap left
    fragmented by them (a 250 MB steps.csv stays under 3x its size).
    """
    bufs = {c: np.empty(max_rows, dtype=_COLUMN_DTYPES.get(c, np.float64)) for c in where}
    filled = 0
    n_bad = n_total = 0
    for block, c0, c1 in blocks:
        rows = [ln for ln in block if ln and (ln[0] > " " or ln.strip())]
        n_total += len(rows)
        if quoted:
            fields = [f for f in csv.reader(rows)]
            good = [f for f in fields if len(f) == ncol]
            n_wrong = len(fields) - len(good)
            n = len(good)
            flat = [v for f in good for v in f]
        else:
            good_lines = [ln for ln in rows if ln.count(",") == ncol - 1]
            n_wrong = len(rows) - len(good_lines)
            n = len(good_lines)
            flat = ",".join(good_lines).split(",") if good_lines else []
        if n_wrong:
            truncated = c0 < last_end <= c1 and last_line.count(",") < ncol - 1
            if truncated:
                warn.add("last line is truncated (fewer fields than the header); skipped")
                warn.cut_short = True
                n_wrong -= 1
                n_bad += 1
            if n_wrong:
                warn.add(f"{n_wrong} rows with a field count other than the header's {ncol}; skipped")
                n_bad += n_wrong
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
        kept = int(ok.sum())
        for name, arr in block_cols.items():
            # step and rank are validated integral and under 2**53; duration finite and >= 0, and the
            # table holds it as float32 anyway: the casts lose nothing.
            bufs[name][filled : filled + kept] = arr[ok]
        filled += kept
    return {name: buf[:filled] for name, buf in bufs.items()}, n_bad, n_total


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
    # Memory (steps.csv of a large job is hundreds of MB): each long column is dropped as soon as it is no longer needed, indices
    # are int32, and step/rank ids come from the sorted columns instead of two more sorts.
    step = cols.pop("step")
    rank = cols.pop("rank")
    start = cols.pop("start_unix")

    # A rerun of (step, rank) replaces the earlier row: keep the last row by start time.
    order = np.lexsort((start, rank, step))
    step = step[order]
    rank = rank[order]
    last = np.ones(order.size, dtype=bool)
    last[:-1] = (step[1:] != step[:-1]) | (rank[1:] != rank[:-1])
    n_rows = int(last.sum())
    n_rerun = int(order.size - n_rows)
    if n_rerun:
        warn.add(f"{n_rerun} rows were reruns of an already-logged (step, rank): the later row kept")
        keep = order[last]
        step, rank = step[last], rank[last]
    else:
        keep = order
    del order, last
    start = start[keep]

    # step is sorted: its distinct values and each row's index into them, without another sort.
    new = np.empty(step.size, dtype=bool)
    new[:1] = True
    np.not_equal(step[1:], step[:-1], out=new[1:])
    steps_u = step[new]
    s_idx = np.cumsum(new, dtype=np.int32 if step.size < 2**31 else np.int64)
    np.subtract(s_idx, 1, out=s_idx)  # in place: one int32 array, no int64 temporaries
    del new, step
    rank_max = int(rank.max()) if rank.size else 0
    if rank_max < 4 * rank.size + 1024:  # ranks are small integers: a lookup table, no sort
        present = np.zeros(rank_max + 1, dtype=bool)
        present[rank] = True
        ranks_u = np.flatnonzero(present).astype(np.int64)
        r_idx = (np.cumsum(present, dtype=np.int64) - 1).astype(np.int32)[rank]
        del present
    else:
        ranks_u, r_idx = np.unique(rank, return_inverse=True)
    del rank
    n_s, n_r = steps_u.size, ranks_u.size
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
    del o, start
    med_start = 0.5 * (ss[first + (counts - 1) // 2] + ss[first + counts // 2])
    del ss
    # Time order decides; ties (a step logged at the same instant) fall back to the step number.
    t_order = np.lexsort((steps_u, med_start))
    pos = np.empty(n_s, dtype=np.int32)
    pos[t_order] = np.arange(n_s, dtype=np.int32)
    row = pos[s_idx]
    del s_idx
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
        cut_short=warn.cut_short,
        **optional,
    )
