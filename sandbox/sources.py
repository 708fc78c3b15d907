"""Where evidence comes from: the evidence-source and metric-source protocols.

Tools never open a bundle, a socket or a file themselves. They ask an :class:`EvidenceSource`
for the incident, the topology, the hosts (each a :class:`EvidenceHost`: the ``Host`` seam plus
the citation of what was read), the switches, the job's steps and logs, and ask its
:class:`MetricSource` for time series. Implementations:

- :class:`BundleSource` / :class:`OpenMetricsFiles`: a recorded bundle (``forensic.bundle/v1``).
- :class:`forensic.sandbox.memory.MemorySource`: a bundle loaded into dicts (tests, doubles).
- :class:`forensic.sandbox.fleet.FleetSource` / :class:`forensic.sandbox.prometheus.PrometheusMetrics`:
  a live fleet (node agents over HTTP, Prometheus).

Derived facts (rank placement, job GPUs) are computed once from the incident and topology by
:class:`SourceBase`, so every implementation places ranks the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
from forensic.sandbox.errors import ForensicError, NotFoundError, TruncatedStreamError

from forensic.names import is_host_name

if TYPE_CHECKING:
    from forensic.sandbox.bundle import Bundle, HostInfo, Incident, Topology

    from forensic.openmetrics import MetricSet, Series

Snapshot = Literal["now", "before"]


class Document:
    """A text the source read, with the citation of where it came from.

    A bundle's large files (job logs) are streamed: built with ``opener`` (a function returning an
    iterator of lines), :meth:`lines` reads them a line at a time with bounded memory, and only
    ``text`` materialises the whole file.
    """

    __slots__ = ("_lines", "_opener", "_reader", "_text", "source")

    #: A streamed document whose first full read stays under this many characters keeps its lines,
    #: so parsers that each read it (NCCL, watchdog, trainer facts) read the file once.
    KEEP_CHARS = 8 * 1024 * 1024

    def __init__(
        self,
        text: str | None,
        source: str,
        opener: Callable[[], Iterable[str]] | None = None,
        reader: Callable[[], str] | None = None,
    ) -> None:
        if text is None and opener is None:
            raise ValueError("a Document needs its text or an opener")
        self._text, self.source, self._opener, self._reader = text, source, opener, reader
        self._lines: list[str] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            # The reader gives the exact text (trailing newline included); without one, the lines.
            if self._reader is not None:
                self._text = self._reader()
            else:
                assert self._opener is not None  # __init__ requires the text or an opener
                self._text = "\n".join(self._lines if self._lines is not None else self._opener())
        return self._text

    def lines(self) -> Iterator[str]:
        """The document a line at a time (streamed from the file when it was opened lazily)."""
        if self._lines is not None:
            return iter(self._lines)
        if self._text is None and self._opener is not None:
            return self._read_keeping()
        return iter(self.text.splitlines())

    def _read_keeping(self) -> Iterator[str]:
        kept: list[str] | None = []
        size = 0
        for line in self._opener():  # type: ignore[misc]
            if kept is not None:
                size += len(line) + 1
                if size > self.KEEP_CHARS:
                    kept = None  # too large to keep: later reads stream the file again
                else:
                    kept.append(line)
            yield line
        if kept is not None:
            self._lines = kept

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Document) and (self.text, self.source) == (other.text, other.source)

    def __repr__(self) -> str:
        return f"Document(source={self.source!r})"


@dataclass
class MetricRead:
    """What a metric query returned: series in the parsed form, what was read, what failed."""

    series: list[Series] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Why nothing could be read at all (the source is down, slow, or has no metrics), else None.
    unavailable: str | None = None
    #: Files read only in part (a compressed stream cut short): the lines before the damage were
    #: parsed and count; what was lost is named, one "what: why" each.
    partial: list[str] = field(default_factory=list)


@runtime_checkable
class MetricSource(Protocol):
    """Time series by metric name and label set over a time range."""

    def series(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> MetricRead:
        """Series whose sample name is ``name`` and whose labels equal every item of ``labels``,
        with samples in ``[start, end]`` (an open bound when None). Never raises for an
        unreachable backend: the reason goes into ``unavailable``."""
        ...


class RecordingMetrics:
    """A metric source that keeps every series it returned (what the tools read), so that a live
    run's evidence can be written down as it was read (:meth:`read_series`)."""

    def __init__(self, inner: MetricSource) -> None:
        self.inner = inner
        self._seen: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
        self._lock = threading.Lock()

    def series(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> MetricRead:
        got = self.inner.series(name, labels, start, end)
        with self._lock:
            for s in got.series:
                key = (s.name, tuple(sorted(s.labels.items())))
                old = self._seen.get(key)
                if old is None or len(s.timestamps) > len(old.timestamps):  # the widest read of it
                    self._seen[key] = s
        return got

    def read_series(self) -> list[Any]:
        """Every series returned so far, one per name and label set."""
        with self._lock:
            return list(self._seen.values())


@runtime_checkable
class EvidenceHost(Protocol):
    """A host as tools see it: the read-only ``Host`` seam plus citations of what was read."""

    name: str

    def read(self, path: str) -> str: ...
    def list(self, path: str) -> list[str]: ...
    def exists(self, path: str) -> bool: ...
    def run(self, argv: Sequence[str]) -> str: ...
    def nvml(self) -> dict[str, Any] | None: ...

    def has_command(self, argv: Sequence[str]) -> bool:
        """Whether ``run(argv)`` has output to give (allowlisted and available)."""
        ...

    def source(self, path: str) -> str:
        """Citation for a file read with ``read``."""
        ...

    def command_source(self, argv: Sequence[str]) -> str:
        """Citation for the output of ``run(argv)``."""
        ...

    def nvml_source(self) -> str:
        """Citation for the NVML readings."""
        ...


@runtime_checkable
class SwitchSource(Protocol):
    """A switch: allowlisted show commands and their citations."""

    name: str

    def run(self, argv: Sequence[str]) -> str: ...
    def command_source(self, argv: Sequence[str]) -> str: ...


@runtime_checkable
class EvidenceSource(Protocol):
    """Everything an investigation may read, wherever it lives."""

    #: Where the evidence comes from, for people and checkpoints (a bundle path, a fleet file).
    locator: str
    #: ``bundle``, ``archive`` or ``live``.
    origin: str
    incident: Incident
    topology: Topology | None

    # Read-only in the protocol, so that a source may hold a narrower kind (RecordingMetrics).
    @property
    def metrics(self) -> MetricSource: ...
    @property
    def window(self) -> tuple[float | None, float | None]: ...
    @property
    def gpus_per_node(self) -> int: ...

    def notes(self) -> list[str]:
        """Problems met while opening the source (an unreadable topology, unreachable hosts)."""
        ...

    def unreadable_hosts(self) -> dict[str, str]:
        """Hosts the source names but cannot read, with why (a refused name, an agent that is down)."""
        ...

    def metrics_read(self) -> list[Any]:
        """The metric series read so far, where the source keeps them (a live fleet), else []."""
        ...

    def host_names(self) -> list[str]: ...
    def host_info(self, name: str) -> HostInfo | None: ...
    def rank_map(self) -> dict[int, tuple[str, int]]: ...
    def job_gpus(self) -> AbstractSet[tuple[str, int]]: ...
    def job_hosts(self) -> AbstractSet[str]: ...
    def host(self, name: str, snapshot: Snapshot = "now") -> EvidenceHost: ...
    def collected(self, host: str) -> dict[str, float]: ...
    def switch_names(self) -> list[str]: ...
    def switch(self, name: str) -> SwitchSource: ...

    def steps(self) -> list[Document]:
        """The job's per-rank step telemetry (``steps.csv`` texts), [] when none."""
        ...

    def log_names(self) -> list[str]:
        """Names of the job's log files, sorted."""
        ...

    def log(self, name: str) -> Document:
        """One job log by name."""
        ...


class SourceBase:
    """Rank placement derived from incident + topology + hosts, shared by every implementation."""

    incident: Incident
    topology: Topology | None
    _rank_map: dict[int, tuple[str, int]] | None = None
    #: Where the evidence comes from: ``bundle``, ``archive`` (a bundle shipped as one file) or ``live``.
    origin: str = "bundle"

    def host_names(self) -> list[str]:  # pragma: no cover - implemented by subclasses
        raise NotImplementedError

    def unreadable_hosts(self) -> dict[str, str]:
        """Hosts named (topology, nodes/) whose names cannot be a path component: nothing of theirs
        is read, and an investigation must say so rather than take them for healthy."""
        return {name: "not a valid host name" for name in self.host_names() if not is_host_name(name)}

    def metrics_read(self) -> list[Any]:
        """Recorded evidence keeps no account of the series read."""
        return []

    @property
    def window(self) -> tuple[float | None, float | None]:
        return self.incident.window.start, self.incident.window.end

    @property
    def gpus_per_node(self) -> int:
        from forensic.sandbox.bundle import gpus_per_node

        return gpus_per_node(self.incident)

    def host_info(self, name: str) -> HostInfo | None:
        # Indexed once: a sweep asks for every host, and a scan per call made it quadratic.
        cached = self.__dict__.get("_host_index")
        if cached is None or cached[0] is not self.topology:
            index: dict[str, HostInfo] = {}
            for h in self.topology.hosts if self.topology else []:
                index.setdefault(h.name, h)
            cached = self.__dict__["_host_index"] = (self.topology, index)
        return cached[1].get(name)

    def rank_map(self) -> dict[int, tuple[str, int]]:
        """rank -> (host, gpu index), from topology ``ranks`` or the default placement."""
        if self._rank_map is None:
            from forensic.sandbox.bundle import place_ranks

            self._rank_map = place_ranks(self.incident, self.topology, self.host_names())
        return self._rank_map

    def job_gpus(self) -> frozenset[tuple[str, int]]:
        """(host, gpu) pairs that hold a rank of the job (built once; read-only)."""
        return self._job_sets()[0]

    def job_hosts(self) -> frozenset[str]:
        return self._job_sets()[1]

    def _job_sets(self) -> tuple[frozenset[tuple[str, int]], frozenset[str]]:
        # Built once per rank map: tools ask per host, and rebuilding from 16,384 ranks each time
        # made a fleet-wide sweep quadratic.
        ranks = self.rank_map()
        cached = self.__dict__.get("_job_cache")
        if cached is None or cached[0] is not ranks:
            gpus = frozenset(ranks.values())
            cached = (ranks, gpus, frozenset(h for h, _ in gpus))
            self.__dict__["_job_cache"] = cached
        return cached[1], cached[2]


def clip(series: Series, start: float | None, end: float | None) -> Series:
    """The samples of ``series`` in ``[start, end]`` (a copy; timestamps without a time are dropped
    only when a bound is given)."""
    if start is None and end is None:
        return series
    mask = np.isfinite(series.timestamps)
    if start is not None:
        mask &= series.timestamps >= start
    if end is not None:
        mask &= series.timestamps <= end
    return series.model_copy(update={"timestamps": series.timestamps[mask], "values": series.values[mask]})


class MetricSets:
    """A metric source over already-parsed OpenMetrics texts (one per file)."""

    def __init__(
        self, sets: Sequence[tuple[MetricSet, str]], errors: Sequence[str] = (), partial: Sequence[str] = ()
    ) -> None:
        self._sets = list(sets)
        self._errors = list(errors)
        self._partial = list(partial)

    def series(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> MetricRead:
        out = MetricRead(errors=list(self._errors), partial=list(self._partial))
        if not self._sets:
            out.unavailable = (
                ("no metrics files readable: " + self._errors[0]) if self._errors else "no metrics files"
            )
        for ms, src in self._sets:
            found = ms.select(name, **dict(labels or {}))
            if found:
                out.sources.append(src)
                out.series.extend(clip(s, start, end) for s in found)
        return out


class OpenMetricsFiles(MetricSets):
    """The metric source of a bundle: every ``metrics/*.om|.prom|.txt`` file, parsed once."""

    SUFFIXES = (".om", ".prom", ".txt")

    def __init__(self, bundle: Bundle) -> None:
        from forensic.openmetrics import parse_openmetrics

        sets, errors, partial = [], [], []
        # Text the counter scan already read (small files only) is parsed from memory: no file is
        # opened twice in one investigation.
        kept: dict[str, bytes] = bundle.__dict__.pop("_metric_text", {})
        for rel in bundle.files("metrics", self.SUFFIXES):
            try:
                if rel in kept:
                    text = kept.pop(rel).decode("utf-8", errors="replace")
                    sets.append((parse_openmetrics(text), bundle.fs.source_of(rel)))
                    continue
                cut: list[str] = []
                ms = parse_openmetrics(_until_cut(bundle.fs.iter_lines(rel), cut))  # streamed
                if cut and not ms.samples:
                    errors.append(f"{rel}: {cut[0]}")  # nothing before the damage: unread, not partial
                    continue
                if cut:
                    partial.append(
                        f"{rel}: {cut[0]}: the samples before the damage were read, the rest is lost"
                    )
                sets.append((ms, bundle.fs.source_of(rel)))
            except ForensicError as exc:
                errors.append(f"{rel}: {exc}")
        super().__init__(sets, errors, partial)


def _until_cut(lines: Iterator[str], cut: list[str]) -> Iterator[str]:
    """``lines`` until a compressed stream ends short (the reason goes into ``cut``). The complete
    lines before the damage are a metric file's first samples, as good as they were written; a
    line the cut went through is never handed on (the line reader yields only whole lines).

    The series the cut went through ends where the reading ended, not where its GPU stopped: its
    lines are held back until a line of another series shows it complete, and dropped at a cut, so
    no reader takes a truncated series for one that stopped."""
    held: list[str] = []
    key = None
    try:
        for line in lines:
            k = None if line.startswith("#") else line.rstrip().rsplit(" ", 2)[0].split("}", 1)[0]
            if held and k != key:
                yield from held
                held = []
            if k is None:
                yield line
            else:
                held.append(line)
            key = k
        yield from held
    except TruncatedStreamError as exc:
        cut.append(str(exc))


class _LazyMetrics:
    """Parse the metric files on first use: many investigations never ask for metrics."""

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self._inner: MetricSource | None = None

    def series(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> MetricRead:
        if self._inner is None:
            self._inner = self._factory()
        return self._inner.series(name, labels, start, end)

    @property
    def loaded(self) -> bool:
        """Whether the files are parsed already (a later pass reads the parsed series, not the files)."""
        return self._inner is not None


class BundleSource(SourceBase):
    """The evidence source of a recorded bundle (folder)."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.locator = str(bundle.root)
        if bundle.archive is not None:
            self.origin = "archive"
        self.incident = bundle.incident
        self.topology = bundle.topology
        self.metrics: MetricSource = _LazyMetrics(lambda: OpenMetricsFiles(bundle))
        self._rank_map = None

    def notes(self) -> list[str]:
        return [n for n in (self.bundle.topology_error, self.bundle.gzip_unverified) if n]

    def host_names(self) -> list[str]:
        return self.bundle.host_names()

    def host(self, name: str, snapshot: Snapshot = "now") -> EvidenceHost:
        return self.bundle.host(name, snapshot)

    def collected(self, host: str) -> dict[str, float]:
        return self.bundle.collected(host)

    def switch_names(self) -> list[str]:
        return self.bundle.switch_names()

    def switch(self, name: str) -> SwitchSource:
        return self.bundle.switch(name)

    def steps(self) -> list[Document]:
        fs = self.bundle.fs
        return [
            Document(fs.read_text(f"job/{n}"), fs.source_of(f"job/{n}"))
            for n in step_file_names(fs.list("job"))
        ]

    def log_names(self) -> list[str]:
        return [rel.rsplit("/", 1)[1] for rel in self.bundle.files("job/logs", (".log",))]

    def log(self, name: str) -> Document:
        if "/" in name or name.startswith("."):
            raise NotFoundError(f"no job log named {name!r}")
        rel = f"job/logs/{name}"
        fs = self.bundle.fs
        source = fs.source_of(rel)
        return Document(None, source, opener=lambda: fs.iter_lines(rel), reader=lambda: fs.read_text(rel))


def open_source(where: Any) -> EvidenceSource:
    """An evidence source from a source, a :class:`Bundle`, a bundle path, or a fleet locator."""
    from forensic.sandbox.bundle import Bundle

    if isinstance(where, EvidenceSource):
        return where
    if isinstance(where, Bundle):
        return BundleSource(where)
    if isinstance(where, str) and where.startswith("fleet:"):
        from forensic.sandbox.fleet import reopen_fleet

        return reopen_fleet(where)
    return BundleSource(Bundle(where))


__all__ = [
    "BundleSource",
    "Document",
    "EvidenceHost",
    "EvidenceSource",
    "MetricRead",
    "MetricSets",
    "MetricSource",
    "OpenMetricsFiles",
    "Snapshot",
    "SourceBase",
    "SwitchSource",
    "clip",
    "open_source",
]


def step_file_names(names: Sequence[str]) -> list[str]:
    """The step files among the entry names of a job folder (``.gz`` already removed), in read order:
    ``steps.csv`` alone when present (it is the whole table), otherwise every ``steps*.csv`` (one
    per rank, as ``forensic.record`` writes them)."""
    if "steps.csv" in names:
        return ["steps.csv"]
    return sorted(n for n in names if n.startswith("steps") and n.endswith(".csv"))
