"""OpenMetrics text (``metrics/*.om``) into per-series numpy arrays.

A sample line is ``name{labels} value [timestamp] [# exemplar]`` with the timestamp in seconds.
Per the bundle's reading rules a family's ``# TYPE`` is only a hint (dcgm-exporter and
snmp_exporter count without ``_total`` and may say ``gauge``), so series are matched by sample
name and counters are recognised from their values (:func:`is_counter_like`).

Linear time, compact memory (a fleet's metrics file runs to hundreds of MB): each line is split with ``str.find`` and a few anchored
matches. A sample costs 20 bytes (series id, timestamp and value appended to three typed arrays
that grow in chunks); a series costs its label text once (the raw ``name{labels}`` key, interned
per name) and a few ints. After the last line the samples are sorted by (series, time) once with
numpy, and :class:`Series` objects are made only when asked for (:meth:`MetricSet.select`), as
read-only views into the shared arrays: no per-sample Python object is ever built, and a
high-cardinality file (one series per host x GPU x metric, a handful of samples each) peaks at
well under 3x its size (``forensic bench parsers``).
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Iterable, Sequence
from typing import Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from forensic.text import BoundedWarnings, plain_lines

__all__ = [
    "MetricFamily",
    "MetricSet",
    "MetricType",
    "Series",
    "counter_increase",
    "is_counter_like",
    "parse_openmetrics",
    "series_host",
]

MetricType = Literal[
    "counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown"
]
_TYPES = frozenset(get_args(MetricType))

_MAX_LINE = 64 * 1024
_MAX_WARNINGS = 20
# Prometheus' own text format stamps samples in milliseconds; no real seconds stamp is this large
# (1e11 s is the year 5138), so such a stamp is read as milliseconds.
_MS_THRESHOLD = 1e11
# Sample names that belong to a family declared without them (OpenMetrics suffixes).
_SUFFIXES = ("_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info")

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
# One label pair. The value group alternates two single-character forms (a plain char, or a
# backslash and the char it escapes): one way to match each char, so no backtracking blow-up.
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_.]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*')
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "\\": "\\", '"': '"'}


class MetricFamily(BaseModel):
    """What the ``# TYPE`` / ``# HELP`` / ``# UNIT`` lines said about one family."""

    name: str = Field(description="Family name as declared.")
    type: MetricType = Field(
        "unknown", description="Declared type (a hint only); Prometheus `untyped` reads as unknown."
    )
    help: str | None = Field(None, description="HELP text, escapes left as printed.")
    unit: str | None = Field(None, description="UNIT, when declared.")


class Series(BaseModel):
    """One time series: a sample name and its label set, samples sorted by time."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(description="Sample name as printed, e.g. `DCGM_FI_DEV_GPU_TEMP`.")
    labels: dict[str, str] = Field(description="Labels, escapes resolved.")
    timestamps: np.ndarray = Field(
        description="float64 unix seconds, ascending; NaN (sorted last) where none printed."
    )
    values: np.ndarray = Field(description="float64 sample values, aligned with `timestamps`; NaN/±Inf kept.")
    family: str = Field(description="Declared family the name belongs to, or the name itself.")
    type: MetricType = Field("unknown", description="The family's declared type, a hint only.")

    @property
    def host(self) -> str | None:
        """The host this series belongs to, per :func:`series_host`."""
        return series_host(self.labels)

    def __len__(self) -> int:
        return int(self.values.shape[0])


class MetricSet(BaseModel):
    """Everything one OpenMetrics text held.

    Samples live in three shared arrays (series by series, each sorted by time); a :class:`Series`
    is built when asked for, with read-only views into them and its labels parsed from the text
    kept for it. Build it with :func:`parse_openmetrics`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    families: dict[str, MetricFamily] = Field(default_factory=dict, description="Declared families by name.")
    samples: int = Field(0, description="Sample lines read.")
    skipped_lines: int = Field(0, description="Lines that looked like samples but could not be read.")
    warnings: list[str] = Field(default_factory=list, description="What was odd and how it was read.")
    _names: list[str] = PrivateAttr(default_factory=list)
    _series_name: np.ndarray = PrivateAttr(default_factory=lambda: np.zeros(0, dtype=np.int32))
    _series_text: list[str] = PrivateAttr(default_factory=list)
    _offsets: np.ndarray = PrivateAttr(default_factory=lambda: np.zeros(1, dtype=np.int64))
    _timestamps: np.ndarray = PrivateAttr(default_factory=lambda: np.zeros(0, dtype=np.float64))
    _values: np.ndarray = PrivateAttr(default_factory=lambda: np.zeros(0, dtype=np.float64))
    _by_name: dict[str, np.ndarray] = PrivateAttr(default_factory=dict)

    @property
    def series(self) -> list[Series]:
        """Every series, in order of first appearance (built on each call; prefer :meth:`select`)."""
        return [self._make(i) for i in range(len(self._series_text))]

    @property
    def series_count(self) -> int:
        """How many series the text held, without building them."""
        return len(self._series_text)

    def names(self) -> list[str]:
        """Distinct sample names, in order of first appearance."""
        return list(self._by_name)

    def select(self, name: str, **label_matchers: str) -> list[Series]:
        """Series with this exact sample name whose labels equal every matcher given.

        Labels that are not Python identifiers can be passed with ``**{"label": value}``.
        """
        out = []
        for i in self._by_name.get(name, ()):
            labels = _parse_labels(self._series_text[i]) or {}
            if all(labels.get(key) == value for key, value in label_matchers.items()):
                out.append(self._make(int(i), labels))
        return out

    def _make(self, i: int, labels: dict[str, str] | None = None) -> Series:
        name = self._names[self._series_name[i]]
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        family = _family_of(name, self.families)
        return Series(
            name=name,
            labels=labels if labels is not None else (_parse_labels(self._series_text[i]) or {}),
            timestamps=self._timestamps[start:end],
            values=self._values[start:end],
            family=family.name if family else name,
            type=family.type if family else "unknown",
        )


def series_host(labels: dict[str, str]) -> str | None:
    """``Hostname`` or ``hostname`` when present; else ``instance`` without its ``:port``; else None."""
    for key in ("Hostname", "hostname"):
        if labels.get(key):
            return labels[key]
    instance = labels.get("instance")
    if not instance:
        return None
    if instance.startswith("["):  # [v6::addr]:port
        end = instance.find("]")
        return instance[1:end] if end > 1 else instance
    head, sep, port = instance.rpartition(":")
    # Exactly one colon followed by digits is a port; a bare IPv6 address has several colons.
    if sep and port.isdigit() and ":" not in head and head:
        return head
    return instance


def is_counter_like(values: Sequence[float] | np.ndarray) -> bool:
    """Whether a series behaves like a counter: non-negative and non-decreasing but for resets.

    A reset is a drop to below half the previous value (counters restart near zero); at most one
    drop in ten steps may occur. A constant series counts (a counter that did not move). Fewer
    than two finite samples cannot tell, so False. NaN and ±Inf samples are ignored.
    """
    v = _finite(values)
    if v.size < 2 or bool((v < 0).any()):
        return False
    diffs = np.diff(v)
    drops = diffs < 0
    n_drops = int(drops.sum())
    if n_drops == 0:
        return True
    if n_drops > max(1, diffs.size // 10):
        return False
    return bool((v[1:][drops] < 0.5 * v[:-1][drops]).all())


def counter_increase(values: Sequence[float] | np.ndarray) -> float:
    """How much a counter rose over the samples, counting each drop as a reset to zero.

    NaN with fewer than two finite samples (no reading is not zero); NaN and ±Inf samples are ignored.
    """
    v = _finite(values)
    if v.size < 2:
        return math.nan
    diffs = np.diff(v)
    after_reset = v[1:][diffs < 0]
    return float(diffs[diffs > 0].sum() + after_reset.sum())


def parse_openmetrics(text: str | Iterable[str]) -> MetricSet:
    """Parse OpenMetrics (or Prometheus) text; never raises, odd lines are counted and skipped."""
    families: dict[str, MetricFamily] = {}
    # Raw keys: name -> id, then per name id its label texts -> raw series id (the same series
    # repeats with identical text, so one string per series is kept, however many samples).
    names: dict[str, int] = {}
    keys: list[dict[str, int]] = []
    raw_name = array("i")
    raw_text: list[str] = []
    # One entry per sample: raw series id, timestamp, value (4 + 8 + 8 bytes).
    ids, stamps, values = array("i"), array("d"), array("d")
    warnings = BoundedWarnings(_MAX_WARNINGS, count_dropped=True)
    samples = skipped = 0
    seen_eof = after_eof = millis = False

    # Text or an iterable of lines (a stream from the sandbox): never split into a list.
    for line_no, raw in enumerate(plain_lines(text), 1):
        if len(raw) > _MAX_LINE:
            skipped += 1
            warnings.add(f"line {line_no}: longer than {_MAX_LINE} characters; skipped")
            continue
        line = raw.strip()
        if not line:
            continue
        if line[0] == "#":
            if line == "# EOF":
                seen_eof = True
            else:
                _comment(line, families, warnings, line_no)
            continue
        sample = _split_sample(line)
        if sample is None:
            skipped += 1
            warnings.add(f"line {line_no}: not a sample line: {line[:80]!r}")
            continue
        if seen_eof and not after_eof:
            after_eof = True
            warnings.add(f"line {line_no}: samples after '# EOF' (concatenated files?); kept")
        name, label_text, value, stamp = sample
        if stamp > _MS_THRESHOLD:
            stamp /= 1000.0
            millis = True
        name_id = names.get(name)
        if name_id is None:
            name_id = names[name] = len(keys)
            keys.append({})
        by_text = keys[name_id]
        raw_id = by_text.get(label_text)
        if raw_id is None:
            raw_id = by_text[label_text] = len(raw_text)
            raw_text.append(label_text)
            raw_name.append(name_id)
        ids.append(raw_id)
        stamps.append(stamp)
        values.append(value)
        samples += 1

    if millis:
        warnings.add("timestamps in milliseconds (Prometheus text format) were read as such")
    del keys  # the label texts stay in raw_text
    out = MetricSet(families=families, warnings=[])
    bad = _build(out, list(names), raw_name, raw_text, ids, stamps, values, warnings)
    out.samples = samples - bad
    out.skipped_lines = skipped + bad
    out.warnings = list(warnings)
    return out


def _comment(line: str, families: dict[str, MetricFamily], warnings: BoundedWarnings, line_no: int) -> None:
    parts = line.split(None, 3)
    if len(parts) < 3 or parts[1] not in ("TYPE", "HELP", "UNIT"):
        return  # a plain comment
    keyword, name = parts[1], parts[2]
    rest = parts[3].strip() if len(parts) > 3 else ""
    family = families.get(name)
    if family is None:
        family = families[name] = MetricFamily(name=name)
    if keyword == "TYPE":
        kind = "unknown" if rest.lower() == "untyped" else rest.lower()
        if kind in _TYPES:
            family.type = kind  # type: ignore[assignment]
        else:
            warnings.add(f"line {line_no}: unknown TYPE {rest[:40]!r} for {name}; read as unknown")
    elif keyword == "HELP":
        family.help = rest
    else:
        family.unit = rest or None


def _split_sample(line: str) -> tuple[str, str, float, float] | None:
    """``name{labels} value [timestamp] [# exemplar]`` -> (name, raw label text, value, timestamp|NaN)."""
    m = _NAME.match(line)
    if m is None:
        return None
    name, pos = m.group(), m.end()
    label_text = ""
    if pos < len(line) and line[pos] == "{":
        # Fast path: without an exemplar ("#"), the last "}" closes the labels unless a quote
        # follows it; a wrong guess leaves label text that _parse_labels refuses anyway.
        end = line.rfind("}")
        if "#" in line or line.find('"', end + 1) != -1:
            end = _label_end(line, pos + 1)
        if end < 0:
            return None
        label_text = line[pos + 1 : end].strip()
        pos = end + 1
    elif pos < len(line) and not line[pos].isspace():
        return None
    tokens = line[pos:].split(None, 2)
    if not tokens:
        return None
    value = _number(tokens[0])
    if value is None:
        return None
    stamp = math.nan
    if len(tokens) > 1 and tokens[1] != "#":
        given = _number(tokens[1])
        if given is None or not math.isfinite(given):
            return None
        stamp = given
    return name, label_text, value, stamp


def _label_end(line: str, pos: int) -> int:
    """Index of the ``}`` closing a label set that opens before ``pos``; -1 if it never closes.

    Quoted values may hold ``}``, ``,`` and escaped quotes. Every search moves forward and the
    search for ``}`` is repeated only once we pass it, so the scan is linear in the line.
    """
    close = line.find("}", pos)
    while close != -1:
        quote = line.find('"', pos, close)
        if quote == -1:
            return close
        pos = _closing_quote(line, quote + 1)
        if pos < 0:
            return -1
        pos += 1
        if pos > close:
            close = line.find("}", pos)
    return -1


def _closing_quote(line: str, pos: int) -> int:
    """Index of the first unescaped ``"`` at or after ``pos``; -1 if none."""
    start = pos
    while True:
        quote = line.find('"', pos)
        if quote == -1:
            return -1
        backslashes = 0
        i = quote - 1
        while i >= start and line[i] == "\\":
            backslashes += 1
            i -= 1
        if backslashes % 2 == 0:
            return quote
        start = pos = quote + 1


def _number(token: str) -> float | None:
    # float() also takes "1_000"; exporters never print that, and a sample that does is suspect.
    if "_" in token:
        return None
    try:
        return float(token)
    except ValueError:
        return None


def _parse_labels(text: str) -> dict[str, str] | None:
    labels: dict[str, str] = {}
    pos, n = 0, len(text)
    while pos < n:
        m = _LABEL.match(text, pos)
        if m is None:
            return None
        value = m.group(2)
        if "\\" in value:
            value = _ESCAPE.sub(lambda e: _ESCAPES.get(e.group(1), e.group(0)), value)
        labels[m.group(1)] = value
        pos = m.end()
        if pos < n:
            if text[pos] != ",":
                return None
            pos += 1
    return labels


def _family_of(name: str, families: dict[str, MetricFamily]) -> MetricFamily | None:
    family = families.get(name)
    if family is not None:
        return family
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            family = families.get(name[: -len(suffix)])
            if family is not None:
                return family
    return None


def _canonical(labels: dict[str, str]) -> str:
    """One string per label set whatever the order printed (the same set may print in different orders)."""
    return repr(sorted(labels.items()))


def _build(
    out: MetricSet,
    names: list[str],
    raw_name: array,
    raw_text: list[str],
    ids: array,
    stamps: array,
    values: array,
    warnings: BoundedWarnings,
) -> int:
    """Merge raw keys into series, sort every series' samples by time and store them in ``out``.

    Returns how many samples were dropped for unreadable labels.
    """
    n_raw = len(raw_text)
    raw_ids = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, dtype=np.int32)
    per_raw = np.bincount(raw_ids, minlength=n_raw) if n_raw else np.zeros(0, dtype=np.int64)
    series_of_raw = np.empty(n_raw, dtype=np.int32)
    merged: dict[tuple[int, str], int] = {}
    series_name = array("i")
    series_text: list[str] = []
    bad = 0
    for raw in range(n_raw):
        text, name_id = raw_text[raw], raw_name[raw]
        labels = _parse_labels(text)
        if labels is None:
            series_of_raw[raw] = -1
            n = int(per_raw[raw])
            bad += n
            warnings.add(f"{names[name_id]}: unreadable labels {{{text[:80]}}}; {n} samples skipped")
            continue
        key = (name_id, _canonical(labels))
        sid = merged.get(key)
        if sid is None:
            sid = merged[key] = len(series_text)
            series_text.append(text)  # the first printing's labels name the series
            series_name.append(name_id)
        series_of_raw[raw] = sid
    del merged, raw_text[:]

    sample_series = series_of_raw[raw_ids]
    ts = np.frombuffer(stamps, dtype=np.float64) if len(stamps) else np.zeros(0)
    vs = np.frombuffer(values, dtype=np.float64) if len(values) else np.zeros(0)
    if bad:
        keep = sample_series >= 0
        sample_series, raw_ids, ts, vs = sample_series[keep], raw_ids[keep], ts[keep], vs[keep]
    # By series, then time (NaN stamps last), then raw key and file order (lexsort is stable): the
    # order the per-series stable sort of the samples in raw-key order gave.
    order = np.lexsort((raw_ids, ts, sample_series))
    del raw_ids
    out._timestamps = ts[order]
    out._values = vs[order]
    del ts, vs
    out._timestamps.flags.writeable = False
    out._values.flags.writeable = False
    n_series = len(series_text)
    counts = np.bincount(sample_series, minlength=n_series) if n_series else np.zeros(0, dtype=np.int64)
    out._offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    out._names = names
    out._series_name = (
        np.frombuffer(series_name, dtype=np.int32).copy() if n_series else np.zeros(0, dtype=np.int32)
    )
    out._series_text = series_text
    # Series ids per name, names in order of their first series.
    by_name_order = np.argsort(out._series_name, kind="stable")
    sorted_names = out._series_name[by_name_order]
    starts = (
        np.flatnonzero(np.r_[True, sorted_names[1:] != sorted_names[:-1]])
        if n_series
        else np.zeros(0, dtype=np.int64)
    )
    groups = np.split(by_name_order, starts[1:]) if n_series else []
    groups.sort(key=lambda g: int(g[0]))
    out._by_name = {names[int(out._series_name[g[0]])]: g for g in groups}
    return bad


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64).ravel()
    return v[np.isfinite(v)]
