"""A cheap fleet-wide pass over recorded counters: how each series of a few metrics moved in a window.

Picking the hosts worth a close look on a large fleet needs, per series of a handful of metrics (the
InfiniBand error counters, the DCGM XID gauge, the ECC and row-remap counters), only its value
before the window, its last and highest value inside it, and when it was last seen. Parsing whole
OpenMetrics files into time series for that costs seconds per million lines; this pass streams each
metric file once, lets one compiled pattern pick the wanted samples in C, and keeps only those
summaries (bounded memory), so it may pass through a file larger than the per-file read cap
(:data:`~forensic.sandbox._fs.MAX_STREAM_BYTES`, with the deadline still checked per chunk).

Sources without files behind them (a live fleet, Prometheus, an in-memory source) give the same
summaries from their ordinary ``metrics.series`` reads. A file that cannot be read is named in
``errors``; its series are missing, never reported as quiet.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from forensic.sandbox.errors import ForensicError, TruncatedStreamError

#: Metric file suffixes of a bundle (as :class:`~forensic.sandbox.sources.OpenMetricsFiles`).
_SUFFIXES = (".om", ".prom", ".txt")
#: A metric file whose text is at most this large is kept after the scan, so that a later full
#: parse (the ``metrics`` tool) reads it from memory instead of opening the file again.
KEEP_BYTES = 64 * 1024 * 1024
#: Prometheus text stamps samples in milliseconds; no seconds stamp is this large (year 5138).
_MS_THRESHOLD = 1e11
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class SeriesSpan:
    """How one series moved around a window."""

    name: str
    labels: dict[str, str]
    #: Last value before the window opened (None: no sample before it).
    before: float | None = None
    #: First, last and highest value inside the window (None: no sample inside it).
    first: float | None = None
    last: float | None = None
    peak: float | None = None
    #: Time of the last sample seen at all (None when the samples carry no time).
    last_seen: float | None = None

    def increase(self) -> float:
        """How much a counter rose in the window (from the sample before it when there is one); a
        drop is a reset and counts from zero."""
        if self.last is None:
            return 0.0
        base = self.before if self.before is not None else self.first
        if base is None or self.last < base:
            return max(self.last, 0.0) if base is not None else 0.0
        return self.last - base


@dataclass
class ScanResult:
    """The series that moved in the window or ended before the others (a series whose every
    sample holds one value is counted in ``series`` but not listed: its increase is 0)."""

    spans: list[SeriesSpan] = field(default_factory=list)
    #: Series found per metric name, listed or not.
    series: dict[str, int] = field(default_factory=dict)
    #: Metric names with at least one series found.
    found: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Files read only in part (a compressed stream cut short), with what was lost.
    partial: list[str] = field(default_factory=list)


def _floats(raw: Any) -> np.ndarray:
    try:
        return np.asarray(raw, dtype=bytes).astype(float)
    except ValueError:  # one odd value: convert one by one, the odd ones as NaN
        out = np.full(len(raw), np.nan)
        for i, x in enumerate(raw):
            try:
                out[i] = float(x)
            except ValueError:
                pass
        return out


def _split_key(key: bytes) -> tuple[bytes, bytes]:
    """``name{labels}`` -> (name, labels)."""
    name, _, rest = key.partition(b"{")
    return name.strip(), rest[:-1] if rest.endswith(b"}") else rest


class _Acc:
    """Samples of the wanted series of one file as arrays (series id, value, time), summarised at
    the end with numpy: only the series that moved or ended early become :class:`SeriesSpan`."""

    def __init__(self, start: float | None, end: float | None) -> None:
        self.start, self.end = start, end
        self.keys: dict[tuple[bytes, bytes], int] = {}
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        #: Series forgotten at a cut: neither judged nor counted.
        self.dropped: set[int] = set()

    def add(self, block: bytes, heads: tuple[bytes, ...]) -> None:
        """The samples of the wanted metrics among the complete lines of ``block``, in numpy: a
        line is ``name{labels} value [timestamp]`` (label values may hold spaces; value and stamp
        never do)."""
        lines = np.array(block.split(b"\n"), dtype=bytes)
        want = np.zeros(lines.shape, dtype=bool)
        for h in heads:
            want |= np.strings.startswith(lines, h + b"{") | np.strings.startswith(lines, h + b" ")
        lines = np.strings.strip(lines[want])
        if not lines.size:
            return
        head, _, tail = np.strings.rpartition(lines, b" ")
        key, _, value = np.strings.rpartition(head, b" ")
        # No timestamp: the last field is the value, and the key is everything before it.
        stamped = np.strings.endswith(key, b"}") | (np.strings.find(key, b"{") < 0) & (
            np.strings.str_len(key) > 0
        )
        key = np.where(stamped, key, head)
        value = np.where(stamped, value, tail)
        stamp = np.where(stamped, tail, b"nan")
        uniq, inverse = np.unique(key, return_inverse=True)
        keys = self.keys
        gid = np.array([keys.setdefault(_split_key(k), len(keys)) for k in uniq.tolist()], dtype=np.int64)
        t = _floats(stamp)
        t = np.where(t > _MS_THRESHOLD, t / 1000.0, t)
        self.parts.append((gid[inverse.reshape(-1)], _floats(value), t))

    def drop_last(self) -> None:
        """Forget the series of the last sample added: at a cut, it ends where the reading ended,
        not where its device stopped (read as a stop, it would be a fault that is not there)."""
        if not self.parts:
            return
        last = self.parts[-1][0][-1]
        self.dropped.add(int(last))
        self.parts = [(g[keep], v[keep], t[keep]) for g, v, t in self.parts if (keep := g != last).any()]

    def result(self) -> tuple[list[SeriesSpan], dict[str, int]]:
        counts: dict[str, int] = {}
        names = [n.decode() for gid, (n, _) in enumerate(self.keys) if gid not in self.dropped]
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        if not self.parts:
            return [], counts
        ids = np.concatenate([p[0] for p in self.parts])
        v = np.concatenate([p[1] for p in self.parts])
        t = np.concatenate([p[2] for p in self.parts])
        order = np.argsort(ids, kind="stable")  # each series' samples in file order
        ids, v, t = ids[order], v[order], t[order]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        with np.errstate(invalid="ignore"):
            seen = np.fmax.reduceat(t, starts)
            lo, hi = np.fmin.reduceat(v, starts), np.fmax.reduceat(v, starts)
        latest = np.nanmax(seen) if np.isfinite(seen).any() else np.nan
        moved = np.isfinite(hi) & (hi != lo)
        early = np.isfinite(seen) & (seen < latest)
        keys = list(self.keys)
        spans = []
        bounds = np.r_[starts, ids.size]
        for g in np.flatnonzero(moved | early):
            a, b = bounds[g], bounds[g + 1]
            name, raw = keys[ids[a]]
            span = SeriesSpan(
                name.decode(),
                dict(_LABEL.findall(raw.decode("utf-8", errors="replace"))),
                last_seen=float(seen[g]) if np.isfinite(seen[g]) else None,
            )
            for val, when in zip(v[a:b].tolist(), t[a:b].tolist(), strict=True):
                if math.isnan(val):
                    continue
                if self.start is not None and not math.isnan(when) and when < self.start:
                    span.before = val
                elif self.end is None or math.isnan(when) or when <= self.end:
                    span.first = val if span.first is None else span.first
                    span.last = val
                    span.peak = val if span.peak is None else max(span.peak, val)
            spans.append(span)
        return spans, counts


def _scan_bundle(bundle: Any, names: tuple[str, ...], start: float | None, end: float | None) -> ScanResult:
    from forensic.sandbox._fs import MAX_STREAM_BYTES

    out = ScanResult()
    # A family's samples are contiguous (OpenMetrics), so most chunks hold none of the wanted
    # names: a substring search in C rules them out before any line is looked at.
    heads = tuple(n.encode() for n in names)
    needles = tuple(b"\n" + h for h in heads)
    fs = bundle.fs
    for rel in bundle.files("metrics", _SUFFIXES):
        acc = _Acc(start, end)
        kept: list[bytes] | None = []
        size = 0
        try:
            with fs.open_binary(rel, cap=MAX_STREAM_BYTES) as fh:
                pending = b""
                while chunk := fh.read_chunk():
                    size += len(chunk)
                    if kept is not None and size <= KEEP_BYTES:
                        kept.append(chunk)
                    else:
                        kept = None
                    buf = pending + chunk
                    cut = buf.rfind(b"\n")
                    if cut < 0:
                        pending = buf
                        continue
                    at = [p + 1 for nd in needles if (p := buf.find(nd, 0, cut)) >= 0]
                    if buf.startswith(heads):
                        at.append(0)
                    if at:
                        acc.add(buf[min(at) : cut], heads)
                    pending = buf[cut + 1 :]
                if pending:
                    acc.add(pending, heads)
        except TruncatedStreamError as exc:
            # A stream cut short: its complete lines before the damage are kept (the line the cut
            # went through is still pending, never added). Nothing before it: unread.
            if not size:
                out.errors.append(f"{rel}: {exc}")
                continue
            out.partial.append(f"{rel}: {exc}: the samples before the damage were read, the rest is lost")
            acc.drop_last()
            kept = None  # a later full parse must meet the cut itself, not take the prefix as whole
        except ForensicError as exc:
            out.errors.append(f"{rel}: {exc}")
            continue
        if kept is not None:
            bundle.__dict__.setdefault("_metric_text", {})[rel] = b"".join(kept)
        spans, counts = acc.result()
        if counts:
            out.sources.append(fs.source_of(rel))
            out.spans.extend(spans)
            for name, n in counts.items():
                out.series[name] = out.series.get(name, 0) + n
    out.found = set(out.series)
    return out


def _scan_series(source: Any, names: tuple[str, ...], start: float | None, end: float | None) -> ScanResult:
    out = ScanResult()
    for name in names:
        try:
            got = source.metrics.series(name, None, None if start is None else start - 3600.0, end)
        except ForensicError as exc:
            out.errors.append(f"{name}: {exc}")
            continue
        out.errors.extend(e for e in got.errors if e not in out.errors)
        out.partial.extend(e for e in getattr(got, "partial", ()) if e not in out.partial)
        out.sources.extend(s for s in got.sources if s not in out.sources)
        for s in got.series:
            span = SeriesSpan(name, dict(s.labels))
            ts, vs = np.asarray(s.timestamps, dtype=float), np.asarray(s.values, dtype=float)
            if np.isfinite(ts).any():
                span.last_seen = float(np.nanmax(ts))
            ok = np.isfinite(vs)
            pre = ok & (ts < start) if start is not None else np.zeros_like(ok)
            inside = ok & ~pre
            if pre.any():
                span.before = float(vs[pre][-1])
            if inside.any():
                vals = vs[inside]
                span.first, span.last, span.peak = float(vals[0]), float(vals[-1]), float(vals.max())
            out.spans.append(span)
            out.series[name] = out.series.get(name, 0) + 1
    out.found = set(out.series)
    return out


def scan_counters(source: Any, names: Iterable[str], start: float | None, end: float | None) -> ScanResult:
    """How every series of ``names`` moved around ``[start, end]``, read once per source and names.

    Memoised on the source object (one investigation's evidence source), so every tool that wants
    the same pass shares one read of the metric files."""
    key = (tuple(sorted(set(names))), start, end)
    cache = source.__dict__.setdefault("_counter_scans", {}) if hasattr(source, "__dict__") else {}
    if key not in cache:
        from forensic.sandbox.sources import BundleSource, _LazyMetrics

        if isinstance(source, BundleSource) and not (
            isinstance(source.metrics, _LazyMetrics) and source.metrics.loaded
        ):
            cache[key] = _scan_bundle(source.bundle, key[0], start, end)
        else:
            cache[key] = _scan_series(source, key[0], start, end)
    return cache[key]


__all__ = ["ScanResult", "SeriesSpan", "scan_counters"]
