"""Following a job folder as the step recorder writes it, and assembling whole steps.

:class:`FolderFollower` reads the new complete lines of ``steps-rank<NNNNN>.csv`` (one file per
rank, :mod:`forensic.record`), of a merged ``steps.csv`` or of ``steps-<name>.csv`` files holding
several ranks each, from byte offsets it keeps, so a
resumed watcher reads on where it stopped. It never writes, never follows a symbolic link, reads at
most ``max_bytes`` per file per poll and skips lines longer than ``MAX_LINE`` and rows that do not
parse (a truncated last line waits for its newline).

:class:`StepAssembler` turns rows of many ranks into whole steps, in order: a step is complete when
every rank has reported it, or when half the ranks have moved ``lag`` steps past it (a rank that
stopped then counts as missing). A step number that goes back to one already passed, from a run
that started later, is a restart: the assembler follows it (the detector sees the step go back).
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

__all__ = ["Batch", "FolderFollower", "Row", "StepAssembler", "StepSource", "MAX_RANKS", "MAX_LINE"]

#: Rank ids at or above this are refused (a corrupt or hostile file must not size an array).
MAX_RANKS = 1 << 20
MAX_LINE = 4096
_RANK_FILE = re.compile(r"^steps-rank(\d{1,7})\.csv$")
#: Any other step file: ``steps.csv``, or ``steps-<name>.csv`` holding the rows of several ranks
#: (one file per host costs a poll 8 times fewer files than one per rank).
_STEP_FILE = re.compile(r"^steps(-[A-Za-z0-9._-]{1,128})?\.csv$")
_NEEDED = ("step", "rank", "start_unix", "duration_s", "compute_s")


@dataclass(frozen=True, slots=True)
class Row:
    """One row of one rank (tests and small feeds; the follower hands out :class:`Batch`)."""

    step: int
    rank: int
    start: float
    duration: float
    compute: float
    host: str | None = None
    gpu: int | None = None


_COLS = ("step", "rank", "start", "duration", "compute")


@dataclass
class Batch:
    """Rows as columns (one numpy array each), and the placement read with them."""

    step: np.ndarray
    rank: np.ndarray
    start: np.ndarray
    duration: np.ndarray
    compute: np.ndarray
    placement: dict[int, tuple[str, int | None]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.step.size)

    @classmethod
    def empty(cls) -> Batch:
        z = np.zeros(0)
        return cls(z.astype(np.int64), z.astype(np.int64), z, z, z)

    @classmethod
    def of(cls, rows: list[Row]) -> Batch:
        b = cls(
            np.array([r.step for r in rows], dtype=np.int64),
            np.array([r.rank for r in rows], dtype=np.int64),
            np.array([r.start for r in rows], dtype=np.float64),
            np.array([r.duration for r in rows], dtype=np.float64),
            np.array([r.compute for r in rows], dtype=np.float64),
        )
        b.placement = {r.rank: (r.host, r.gpu) for r in rows if r.host is not None}
        return b

    @classmethod
    def concat(cls, parts: list[Batch]) -> Batch:
        parts = [p for p in parts if len(p)] or [cls.empty()]
        step, rank, start, duration, compute = (np.concatenate([getattr(p, k) for p in parts]) for k in _COLS)
        out = cls(step, rank, start, duration, compute)
        for p in parts:
            out.placement.update(p.placement)
        return out

    def valid(self) -> np.ndarray:
        """Rows a hostile or broken file must not get through: sizes, signs, NaN where none may be."""
        with np.errstate(invalid="ignore"):
            return (
                (self.rank >= 0)
                & (self.rank < MAX_RANKS)
                & (self.step >= 0)
                & (self.step < 1 << 53)
                & np.isfinite(self.duration)
                & (self.duration >= 0)
                & ~(self.compute < 0)
                & ~np.isinf(self.compute)
                & (np.isnan(self.start) | ((self.start >= 0) & (self.start < 1e11)))
            )

    def take(self, mask: np.ndarray) -> Batch:
        out = Batch(*(getattr(self, k)[mask] for k in _COLS))
        out.placement = dict(self.placement)
        return out


class StepSource(Protocol):
    """Where a job's rows come from: a folder of step files, or a Prometheus query (:mod:`.prom`).

    ``poll`` returns the rows new since the last call (with hosts and GPUs while
    ``want_placement`` is set); ``position`` is what a restarted watcher hands back to resume
    there (JSON); ``unread`` says why the last poll could not read the source (None when it did).
    """

    want_placement: bool
    bad_lines: int
    unread: str | None

    def poll(self) -> Batch: ...
    def position(self) -> dict[str, Any]: ...


@dataclass
class _File:
    offset: int = 0
    columns: dict[str, int] | None = None


class FolderFollower:
    """New rows of a job folder's step files since the last poll (offsets in :attr:`offsets`).

    Cost: one ``stat`` per file per poll; files that grew are read from their offset, and all
    their new lines are parsed at once by numpy (``np.loadtxt`` over the five numeric columns),
    falling back to a line-by-line parse where they do not parse that way. Hosts and GPUs are read
    only while :attr:`want_placement` is set (at the start, and after a restart).
    """

    def __init__(
        self, folder: Path, offsets: dict[str, int] | None = None, *, max_bytes: int = 8 << 20
    ) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self._files: dict[str, _File] = {k: _File(int(v)) for k, v in (offsets or {}).items()}
        self.bad_lines = 0
        self.want_placement = True
        self.unread: str | None = None  # a folder that lists nothing is a job not started yet

    @property
    def offsets(self) -> dict[str, int]:
        return {k: f.offset for k, f in self._files.items()}

    def position(self) -> dict[str, int]:
        return self.offsets

    def _entries(self) -> list[tuple[str, int]]:
        out = []
        try:
            with os.scandir(self.folder) as it:
                for e in it:
                    if _STEP_FILE.match(e.name) and e.is_file(follow_symlinks=False):
                        try:
                            out.append((e.name, e.stat(follow_symlinks=False).st_size))
                        except OSError:
                            continue
        except OSError:
            return []
        return sorted(out)

    def _names(self) -> list[str]:
        return [n for n, _ in self._entries()]

    def poll(self) -> Batch:
        fast: list[bytes] = []
        parts: list[Batch] = []
        placement: dict[int, tuple[str, int | None]] = {}
        entries = self._entries()
        if len(entries) < len(self._files):  # files removed (rotated away): forget their offsets
            present = {n for n, _ in entries}
            self._files = {k: v for k, v in self._files.items() if k in present}
        for name, size in entries:
            f = self._files.setdefault(name, _File())
            if size == f.offset:
                continue
            chunk = self._read(name, f)
            cols = f.columns
            if not chunk or cols is None:
                continue
            n = chunk.count(b"\n")
            if all(cols.get(k) == i for i, k in enumerate(_NEEDED)) and len(chunk) <= MAX_LINE * n:
                fast.append(chunk)
            else:
                parts.append(self._slow(chunk, cols))
            if self.want_placement and "host" in cols:
                lines = chunk.split(b"\n")[:-1]
                for line in lines[-1:] if _RANK_FILE.match(name) else lines:
                    row = _parse(line, cols) if len(line) <= MAX_LINE else None
                    if row is not None and row.host is not None:
                        placement[row.rank] = (row.host, row.gpu)
        if fast:
            parts += self._fast(fast)
        batch = Batch.concat(parts)
        ok = batch.valid()
        if not ok.all():
            self.bad_lines += int((~ok).sum())
            batch = batch.take(ok)
        batch.placement = placement
        if placement:
            self.want_placement = False
        return batch

    def _fast(self, chunks: list[bytes]) -> list[Batch]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = np.loadtxt(
                    io.BytesIO(b"".join(chunks)), delimiter=",", usecols=range(5), dtype=np.float64, ndmin=2
                )
        except (ValueError, IndexError):  # a line numpy cannot read: each file line by line
            cols = {k: i for i, k in enumerate(_NEEDED)}
            return [self._slow(c, cols) for c in chunks]
        with np.errstate(invalid="ignore"):
            whole = (
                np.isfinite(a[:, 0])
                & np.isfinite(a[:, 1])
                & (a[:, 0] == np.round(a[:, 0]))
                & (a[:, 1] == np.round(a[:, 1]))
                & (np.abs(a[:, 0]) < 2.0**53)
                & (np.abs(a[:, 1]) < 2.0**53)
            )
        if not whole.all():
            self.bad_lines += int((~whole).sum())
            a = a[whole]
        return [Batch(a[:, 0].astype(np.int64), a[:, 1].astype(np.int64), a[:, 2], a[:, 3], a[:, 4])]

    def _read(self, name: str, f: _File) -> bytes:
        """The new complete lines of one file (its header consumed into ``f.columns``)."""
        try:
            fd = os.open(self.folder / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return b""
        try:
            size = os.fstat(fd).st_size
            if size < f.offset:  # the file was replaced or truncated: read it again from the start
                f.offset, f.columns = 0, None
            if f.columns is None and f.offset > 0:  # resumed: the header is the first line
                head = os.pread(fd, MAX_LINE, 0)
                nl = head.find(b"\n")
                f.columns = _header(head[:nl]) if nl >= 0 else None
            data = os.pread(fd, min(self.max_bytes, max(size - f.offset, 0)), f.offset)
        except OSError:
            return b""
        finally:
            os.close(fd)
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) >= self.max_bytes:  # one enormous line: skip it whole
                f.offset += len(data)
                self.bad_lines += 1
            return b""
        first = f.offset == 0
        f.offset += end + 1
        data = data[: end + 1]
        if f.columns is None and first:  # the header line of a new file
            nl = data.find(b"\n")
            f.columns = _header(data[:nl])
            if f.columns is None:
                self.bad_lines += 1
            data = data[nl + 1 :]
        return data

    def _slow(self, chunk: bytes, cols: dict[str, int]) -> Batch:
        rows = []
        for line in chunk.split(b"\n")[:-1]:
            row = _parse(line, cols) if len(line) <= MAX_LINE else None
            if row is None:
                self.bad_lines += 1
            else:
                rows.append(row)
        b = Batch.of(rows)
        b.placement = {}
        return b


def _header(line: bytes) -> dict[str, int] | None:
    try:
        cols = [c.strip() for c in line.decode("utf-8").strip().split(",")]
    except UnicodeDecodeError:
        return None
    idx = {c: i for i, c in enumerate(cols) if c}
    return idx if all(k in idx for k in _NEEDED) else None


def _parse(line: bytes, cols: dict[str, int]) -> Row | None:
    try:
        cells = line.decode("utf-8").rstrip("\r").split(",")
        step = int(cells[cols["step"]])
        rank = int(cells[cols["rank"]])
        start = float(cells[cols["start_unix"]] or "nan")
        duration = float(cells[cols["duration_s"]] or "nan")
        compute = float(cells[cols["compute_s"]] or "nan")
    except (UnicodeDecodeError, ValueError, IndexError):
        return None
    if not (0 <= rank < MAX_RANKS) or step < 0 or step > 1 << 53:
        return None
    if not (math.isfinite(duration) and duration >= 0) or not (math.isfinite(compute) or math.isnan(compute)):
        return None
    if compute < 0 or (math.isfinite(start) and not 0 <= start < 1e11):
        return None
    host = gpu = None
    if "host" in cols and cols["host"] < len(cells):
        h = cells[cols["host"]].strip()
        host = h[:253] if h and h.isprintable() else None
    if "local_gpu" in cols and cols["local_gpu"] < len(cells):
        g = cells[cols["local_gpu"]].strip()
        gpu = int(g) if g.isdigit() and len(g) < 5 else None
    return Row(step, rank, start, duration, compute, host, gpu)


@dataclass
class _Pending:
    duration: np.ndarray
    compute: np.ndarray
    start: float = math.inf
    count: int = 0


@dataclass
class StepAssembler:
    """Whole steps from rows of many ranks, in step order (``ready``)."""

    lag: int = 2
    max_pending: int = 256
    n_ranks: int = 0
    hosts: dict[int, str] = field(default_factory=dict)
    gpus: dict[int, int] = field(default_factory=dict)
    emitted: int = -1  # last step handed out
    emitted_start: float = -math.inf
    last_seen: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pending: dict[int, _Pending] = field(default_factory=dict)
    late_rows: int = 0
    placement_changed: bool = False
    restarted: bool = False

    def _grow(self, n: int) -> None:
        if n <= self.n_ranks:
            return
        self.last_seen = np.concatenate([self.last_seen, np.full(n - self.n_ranks, -1, dtype=np.int64)])
        for p in self.pending.values():
            p.duration = np.concatenate([p.duration, np.full(n - self.n_ranks, np.nan, np.float32)])
            p.compute = np.concatenate([p.compute, np.full(n - self.n_ranks, np.nan, np.float32)])
        self.n_ranks = n

    def add(self, rows: Batch | list[Row]) -> None:
        """Rows of any ranks and steps, in any order (vectorized: constant Python work per step)."""
        b = rows if isinstance(rows, Batch) else Batch.of(rows)
        for r, (h, g) in b.placement.items():
            if self.hosts.get(r, h) != h:
                self.placement_changed = True
            self.hosts[r] = h
            if g is not None:
                self.gpus[r] = g
        if not len(b):
            return
        old = b.step <= self.emitted
        if old.any():
            newer = old & np.isfinite(b.start) & (b.start > self.emitted_start)
            if newer.any():  # a run that started after the last step handed out: a restart
                first = int(b.step[newer].min())
                self.emitted = first - 1
                self.pending = {s: p for s, p in self.pending.items() if s < first}
                self.last_seen[:] = -1
                self.restarted = True
                old = b.step <= self.emitted
            if old.any():  # late rows of steps already handed out, from the run before
                self.late_rows += int(old.sum())
                b = b.take(~old)
                if not len(b):
                    return
        self._grow(int(b.rank.max()) + 1)
        steps, inverse = np.unique(b.step, return_inverse=True)
        for i, s in enumerate(steps.tolist()):
            sel = inverse == i
            ranks = b.rank[sel]
            p = self.pending.get(s)
            if p is None:
                p = self.pending[s] = _Pending(
                    np.full(self.n_ranks, np.nan, np.float32), np.full(self.n_ranks, np.nan, np.float32)
                )
            p.duration[ranks] = b.duration[sel]
            p.compute[ranks] = b.compute[sel]
            p.count = int((~np.isnan(p.duration)).sum())
            starts = b.start[sel]
            if np.isfinite(starts).any():
                p.start = min(p.start, float(np.nanmin(starts)))
        np.maximum.at(self.last_seen, b.rank, b.step)

    def ready(self) -> list[tuple[int, float, np.ndarray, np.ndarray]]:
        """Complete steps in order: (step, start, durations, computes), each of ``n_ranks``."""
        out = []
        while self.pending:
            s = min(self.pending)
            p = self.pending[s]
            moved_on = int((self.last_seen > s + self.lag).sum())
            if (
                p.count < self.n_ranks
                and moved_on * 2 < self.n_ranks
                and len(self.pending) <= self.max_pending
            ):
                break
            del self.pending[s]
            self.emitted = s
            if math.isfinite(p.start):
                self.emitted_start = p.start
            out.append((s, p.start if math.isfinite(p.start) else math.nan, p.duration, p.compute))
        return out

    def placement(self) -> tuple[list[str] | None, list[int] | None]:
        if not self.n_ranks or len(self.hosts) < self.n_ranks:
            return None, None
        hosts = [self.hosts[r] for r in range(self.n_ranks)]
        gpus = [self.gpus.get(r, -1) for r in range(self.n_ranks)]
        return hosts, gpus

    # -- persistence: the pending steps travel with the detector's state -------------------
    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        steps = sorted(self.pending)
        meta = {
            "lag": self.lag,
            "n_ranks": self.n_ranks,
            "hosts": {str(k): v for k, v in self.hosts.items()},
            "gpus": {str(k): v for k, v in self.gpus.items()},
            "emitted": self.emitted,
            "emitted_start": self.emitted_start if math.isfinite(self.emitted_start) else None,
            "steps": steps,
            "starts": [
                self.pending[s].start if math.isfinite(self.pending[s].start) else None for s in steps
            ],
            "counts": [self.pending[s].count for s in steps],
        }
        shape = (len(steps), self.n_ranks)
        arrays = {
            "asm_last_seen": self.last_seen,
            "asm_duration": np.array([self.pending[s].duration for s in steps], np.float32).reshape(shape),
            "asm_compute": np.array([self.pending[s].compute for s in steps], np.float32).reshape(shape),
        }
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> StepAssembler:
        a = cls(lag=int(meta["lag"]))
        a.n_ranks = int(meta["n_ranks"])
        if not 0 <= a.n_ranks <= MAX_RANKS:
            raise ValueError("watch state: rank count out of range")
        a.hosts = {int(k): str(v) for k, v in meta["hosts"].items()}
        a.gpus = {int(k): int(v) for k, v in meta["gpus"].items()}
        a.emitted = int(meta["emitted"])
        a.emitted_start = float(meta["emitted_start"]) if meta["emitted_start"] is not None else -math.inf
        a.last_seen = np.asarray(arrays["asm_last_seen"], dtype=np.int64)
        dur, comp = arrays["asm_duration"], arrays["asm_compute"]
        if (
            a.last_seen.shape != (a.n_ranks,)
            or dur.shape != (len(meta["steps"]), a.n_ranks)
            or comp.shape != dur.shape
        ):
            raise ValueError("watch state: pending steps do not match the rank count")
        for i, s in enumerate(meta["steps"]):
            st = meta["starts"][i]
            a.pending[int(s)] = _Pending(
                dur[i].copy(),
                comp[i].copy(),
                float(st) if st is not None else math.inf,
                int(meta["counts"][i]),
            )
        return a
