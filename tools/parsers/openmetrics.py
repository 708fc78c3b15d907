"""OpenMetrics text (``metrics/*.om``) into per-series numpy arrays.

A sample line is ``name{labels} value [timestamp] [# exemplar]`` with the timestamp in seconds.
Per the bundle's reading rules a family's ``# TYPE`` is only a hint (dcgm-exporter and
snmp_exporter count without ``_total`` and may say ``gauge``), so series are matched by sample
name and counters are recognised from their values (:func:`is_counter_like`).

Linear time: each line is split with ``str.find`` and a few anchored matches, samples are grouped
per raw ``(name, label text)`` key into Python lists, and label text is parsed once per key.
Arrays are built once at the end.
"""

from __future__ import annotations

from array import array

import math
import re
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from forensic.tools.parsers._text import BoundedWarnings, plain_lines

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

MetricType = Literal["counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown"]
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
    """Everything one OpenMetrics text held."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    families: dict[str, MetricFamily] = Field(default_factory=dict, description="Declared families by name.")
    series: list[Series] = Field(default_factory=list, description="Every series, in order of first appearance.")
    samples: int = Field(0, description="Sample lines read.")
    skipped_lines: int = Field(0, description="Lines that looked like samples but could not be read.")
    warnings: list[str] = Field(default_factory=list, description="What was odd and how it was read.")
    _by_name: dict[str, list[Series]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: object) -> None:
        for series in self.series:
            self._by_name.setdefault(series.name, []).append(series)

    def names(self) -> list[str]:
        """Distinct sample names, in order of first appearance."""
        return list(self._by_name)

    def select(self, name: str, **label_matchers: str) -> list[Series]:
        """Series with this exact sample name whose labels equal every matcher given.

        Labels that are not Python identifiers can be passed with ``**{"label": value}``.
        """
        return [
            series
            for series in self._by_name.get(name, ())
            if all(series.labels.get(key) == value for key, value in label_matchers.items())
        ]


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


def parse_openmetrics(text: str) -> MetricSet:
    """Parse OpenMetrics (or Prometheus) text; never raises, odd lines are counted and skipped."""
    families: dict[str, MetricFamily] = {}
    # (name, raw label text) -> (timestamps, values): the same series repeats with identical text.
    buckets: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
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
        bucket = buckets.get((name, label_text))
        if bucket is None:
            bucket = buckets[(name, label_text)] = (array("d"), array("d"))  # 8 bytes a sample
        bucket[0].append(stamp)
        bucket[1].append(value)
        samples += 1

    if millis:
        warnings.add("timestamps in milliseconds (Prometheus text format) were read as such")
    series, bad = _build_series(buckets, families, warnings)
    return MetricSet(
        families=families,
        series=series,
        samples=samples - bad,
        skipped_lines=skipped + bad,
        warnings=list(warnings),
    )


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
        stamp = _number(tokens[1])
        if stamp is None or not math.isfinite(stamp):
            return None
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


def _build_series(
    buckets: dict[tuple[str, str], tuple[list[float], list[float]]],
    families: dict[str, MetricFamily],
    warnings: BoundedWarnings,
) -> tuple[list[Series], int]:
    label_cache: dict[str, dict[str, str] | None] = {}
    # The same label set may print in different orders: merge on the sorted pairs.
    merged: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[dict[str, str], list[list[float]], list[list[float]]]]
    merged = {}
    bad = 0
    # Buckets and merged entries are popped as they are turned into series, so the raw samples
    # and the arrays built from them are never all in memory at once.
    for name, label_text in list(buckets):
        stamps, values = buckets.pop((name, label_text))
        if label_text not in label_cache:
            label_cache[label_text] = _parse_labels(label_text)
        labels = label_cache[label_text]
        if labels is None:
            bad += len(values)
            warnings.add(f"{name}: unreadable labels {{{label_text[:80]}}}; {len(values)} samples skipped")
            continue
        key = (name, tuple(sorted(labels.items())))
        entry = merged.get(key)
        if entry is None:
            entry = merged[key] = (labels, [], [])
        entry[1].append(stamps)
        entry[2].append(values)

    series = []
    for key in list(merged):
        name = key[0]
        labels, stamp_lists, value_lists = merged.pop(key)
        stamps = np.concatenate([np.asarray(chunk, dtype=np.float64) for chunk in stamp_lists])
        values = np.concatenate([np.asarray(chunk, dtype=np.float64) for chunk in value_lists])
        order = np.argsort(stamps, kind="stable")  # NaN stamps sort last, in file order
        family = _family_of(name, families)
        series.append(
            Series(
                name=name,
                labels=labels,  # pydantic copies it
                timestamps=stamps[order],
                values=values[order],
                family=family.name if family else name,
                type=family.type if family else "unknown",
            )
        )
    return series, bad


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64).ravel()
    return v[np.isfinite(v)]
