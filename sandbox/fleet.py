"""A live fleet as an evidence source: node agents per host, Prometheus for metrics.

The fleet file (``fleet.toml``) says where everything is::

    [prometheus]
    url = "http://prometheus.example:9090"
    token_file = "prom-token"          # optional bearer token
    step_s = 15                        # smallest query step (about the scrape interval)

    [agents]
    url_template = "https://{host}:9401"   # or per host: [agents.urls] gpu-a001 = "http://..."
    token_file = "agent-token"
    hosts = ["gpu-a001", "gpu-a002"]       # when neither topology nor Prometheus lists them
    timeout_s = 10

    [topology]
    file = "topology.json"                 # or: prometheus_label = "Hostname", or scheduler = "slurm"
                                           # or scheduler = "kubernetes" (kubernetes_label = "training-job")

    [job]
    dir = "/shared/jobs/{job}"             # steps.csv and logs/*.log; or: url = "http://jobs/{job}"

Relative paths are read from the fleet file's folder. Every problem is one clear line naming the
file and the key (:class:`FleetFileError`).

A host whose agent is down, slow or answers garbage costs only that host's evidence: the first
failure marks it unreadable, later reads of it fail at once, and :meth:`FleetSource.notes` names it
(so does the report).
"""

from __future__ import annotations

import gzip
import json
import re
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, overload

import httpx
from forensic.sandbox._fs import ConfinedFS
from forensic.sandbox.bundle import SCHEMA, Incident, Topology
from forensic.sandbox.errors import (
    BundleError,
    ForensicError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
    RemoteHostError,
)
from forensic.sandbox.host import Host
from forensic.sandbox.placement import (
    KubernetesPlacement,
    Placement,
    PlacementError,
    PrometheusPlacement,
    SlurmPlacement,
    TopologyFilePlacement,
)
from forensic.sandbox.prometheus import PrometheusMetrics
from forensic.sandbox.sources import (
    Document,
    MetricRead,
    RecordingMetrics,
    Snapshot,
    SourceBase,
    step_file_names,
)
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from forensic.configfile import load_toml
from forensic.names import is_host_name

_JOB = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: Job files read over HTTP: larger answers are refused.
MAX_JOB_FILE_BYTES = 64 * 1024 * 1024
#: Agents probed at once when the source opens.
PROBE_WORKERS = 32


class FleetFileError(BundleError):
    """The fleet file is missing, not TOML, or does not validate."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PrometheusConfig(_Strict):
    """Where the metrics are."""

    url: str = Field(description="Base URL of the Prometheus HTTP API, e.g. http://prometheus:9090.")
    token_file: Path | None = Field(None, description="File holding a bearer token for Prometheus.")
    timeout_s: float = Field(10.0, gt=0, le=300, description="Seconds one query may take.")
    attempts: int = Field(3, ge=1, le=10, description="Attempts per query on connection errors, 429 and 5xx.")
    step_s: float = Field(15.0, gt=0, le=3600, description="Smallest query step, about the scrape interval.")

    @field_validator("url")
    @classmethod
    def _http(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v


class AgentsConfig(_Strict):
    """Where the node agents are."""

    url_template: str | None = Field(None, description="Agent URL with {host}, e.g. https://{host}:9401.")
    urls: dict[str, str] = Field(
        default_factory=dict, description="Agent URL per host; overrides the template."
    )
    hosts: list[str] = Field(
        default_factory=list, description="Hosts to read when topology does not list them."
    )
    token_file: Path = Field(description="File holding the agents' bearer token.")
    timeout_s: float = Field(10.0, gt=0, le=300, description="Seconds one agent call may take.")
    ca_file: Path | None = Field(None, description="CA bundle to verify the agents' TLS certificates.")

    @field_validator("url_template")
    @classmethod
    def _template(cls, v: str | None) -> str | None:
        if v is not None and ("{host}" not in v or not v.startswith(("http://", "https://"))):
            raise ValueError("must be an http(s) URL containing {host}")
        return v

    @model_validator(mode="after")
    def _some_url(self) -> AgentsConfig:
        if self.url_template is None and not self.urls:
            raise ValueError("give url_template or [agents.urls]")
        for name in [*self.hosts, *self.urls]:
            if not is_host_name(name):
                raise ValueError(f"{name!r} is not a host name")
        return self


class TopologyConfig(_Strict):
    """Where the hosts, GPUs, NICs and rank placement come from (one of these; sandbox.placement)."""

    file: Path | None = Field(None, description="topology.json in the bundle format.")
    prometheus_label: str | None = Field(
        None, description="Label of DCGM series that names the host, e.g. Hostname."
    )
    job_label: str | None = Field(
        None, description="Label of DCGM series that names the job (keeps the job's hosts)."
    )
    metric: str = Field("DCGM_FI_DEV_GPU_TEMP", description="DCGM series read to list hosts and GPUs.")
    scheduler: Literal["slurm", "kubernetes"] | None = Field(
        None, description="Ask the scheduler which nodes run the job."
    )
    slurm_conf: Path | None = Field(None, description="slurm.conf for squeue/scontrol (default: theirs).")
    kubernetes_label: str = Field("training-job", description="Pods labelled LABEL=<job> run the job.")
    kubernetes_namespace: str | None = Field(None, description="Namespace of the job's pods (default: all).")
    kubeconfig: Path | None = Field(
        None, description="kubeconfig file (default: the in-cluster service account)."
    )

    @model_validator(mode="after")
    def _one(self) -> TopologyConfig:
        if sum(x is not None for x in (self.file, self.prometheus_label, self.scheduler)) > 1:
            raise ValueError("give one of file, prometheus_label or scheduler, not both")
        return self


class JobConfig(_Strict):
    """Where the job's steps.csv and logs/*.log are."""

    dir: str | None = Field(None, description="Shared folder, {job} replaced by the job name.")
    url: str | None = Field(None, description="HTTP folder, {job} replaced; logs listed from {url}/logs/.")
    token_file: Path | None = Field(None, description="Bearer token for the HTTP folder.")

    @model_validator(mode="after")
    def _one(self) -> JobConfig:
        if self.dir is not None and self.url is not None:
            raise ValueError("give dir or url, not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return self


class FleetConfig(_Strict):
    """``fleet.toml``: how to read a live fleet."""

    prometheus: PrometheusConfig | None = Field(
        None, description="Metrics; without it the metrics tool has no data."
    )
    agents: AgentsConfig = Field(description="The node agents.")
    topology: TopologyConfig = Field(default_factory=TopologyConfig, description="Hosts and placement.")
    job: JobConfig = Field(default_factory=JobConfig, description="Job steps and logs.")
    gpus_per_node: int = Field(8, ge=1, le=64, description="GPUs per host used by jobs.")
    #: The folder relative paths are read from (set by :func:`load_fleet`).
    base: Path = Field(Path("."), exclude=True, description="Folder of the fleet file.")

    @overload
    def path(self, p: Path) -> Path: ...
    @overload
    def path(self, p: Path | None) -> Path | None: ...
    def path(self, p: Path | None) -> Path | None:
        return None if p is None else (p if p.is_absolute() else self.base / p)

    def agent_url(self, host: str) -> str:
        if host in self.agents.urls:
            return self.agents.urls[host]
        assert self.agents.url_template is not None  # validated: a template or urls
        return self.agents.url_template.replace("{host}", host)


def load_fleet(path: Path | str) -> FleetConfig:
    """Parse and validate a fleet file; :class:`FleetFileError` with file and key on any problem."""
    path = Path(path)
    cfg = load_toml(path, FleetConfig, error=FleetFileError, what="fleet file")
    return cfg.model_copy(update={"base": path.resolve().parent})


def read_secret(path: Path, what: str) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise FleetFileError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None
    if not token:
        raise FleetFileError(f"{what} {path}: empty")
    return token


# -- hosts -------------------------------------------------------------------------------------
HostFactory = Callable[[str, str, str, float, Snapshot], Host]


def tls_context(ca_file: str | None = None) -> ssl.SSLContext:
    """One verifying TLS context for every agent (building one per host costs tens of ms each)."""
    if ca_file:
        return ssl.create_default_context(cafile=ca_file)
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - httpx depends on certifi
        return ssl.create_default_context()


def remote_host(
    name: str,
    url: str,
    token: str,
    timeout_s: float,
    snapshot: Snapshot,
    verify: bool | str | ssl.SSLContext = True,
) -> Host:
    """The default host factory: a node agent over HTTP."""
    import socket

    from forensic.sandbox.remote import RemoteHost

    if not isinstance(verify, ssl.SSLContext):
        verify = tls_context(verify) if isinstance(verify, str) else (tls_context() if verify else False)
    # A request goes out as headers then body: without TCP_NODELAY, Nagle holds the body until the
    # agent's delayed ACK (40 ms on Linux), for every call.
    transport = httpx.HTTPTransport(
        verify=verify, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    )
    return RemoteHost(
        url, token, name=name, snapshot=snapshot, timeout_s=timeout_s, verify=verify, transport=transport
    )


#: Errors that are the host's answer to a request (the file is not there, not allowed): the host
#: is fine. Any other failure means the host cannot be read.
_ANSWERS = (NotFoundError, NotAllowedError, PathEscapeError)


class _Health:
    """Which hosts could not be read, and why (shared by every view of a host)."""

    def __init__(self) -> None:
        self.down: dict[str, str] = {}
        self._lock = threading.Lock()

    def mark(self, host: str, reason: str) -> None:
        with self._lock:
            self.down.setdefault(host, reason)


class FleetHost:
    """One host of the fleet as tools see it: the agent's ``Host`` plus citations; failures of the
    agent mark the host unreadable instead of failing the investigation."""

    def __init__(self, name: str, inner: Host, health: _Health, snapshot: Snapshot = "now") -> None:
        self.name = name
        self.snapshot = snapshot
        self._inner = inner
        self._health = health
        self._has: dict[tuple[str, ...], bool] = {}
        self._outputs: dict[tuple[str, ...], str] = {}

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if (reason := self._health.down.get(self.name)) is not None:
            raise RemoteHostError(f"{self.name} could not be read: {reason}")
        try:
            return fn(*args)
        except RemoteHostError as exc:
            self._health.mark(self.name, str(exc))
            raise RemoteHostError(f"{self.name} could not be read: {exc}") from None
        except ForensicError:
            raise  # the host answered: not there, not allowed, corrupt
        except (httpx.HTTPError, OSError) as exc:
            self._health.mark(self.name, f"{type(exc).__name__}: {exc}")
            raise RemoteHostError(f"{self.name} could not be read: {exc}") from None

    def read(self, path: str) -> str:
        return self._call(self._inner.read, path)

    def list(self, path: str) -> list[str]:
        return self._call(self._inner.list, path)

    def exists(self, path: str) -> bool:
        return self._call(self._inner.exists, path)

    def run(self, argv: Sequence[str]) -> str:
        key = tuple(argv)
        if key in self._outputs:
            return self._outputs.pop(key)  # fetched by has_command just before
        return self._call(self._inner.run, list(argv))

    def nvml(self) -> dict[str, Any] | None:
        return self._call(self._inner.nvml)

    def has_command(self, argv: Sequence[str]) -> bool:
        """Run it: tools ask this right before ``run``, so the output is kept for that call (one
        round trip, not two), and only the ``Host`` seam is needed of the agent."""
        key = tuple(argv)
        if key not in self._has:
            try:
                self._outputs[key] = self._call(self._inner.run, list(argv))
                self._has[key] = True
            except _ANSWERS:
                self._has[key] = False
        return self._has[key]

    def _cite(self) -> str:
        return self.name + ("@before" if self.snapshot == "before" else "")

    def source(self, path: str) -> str:
        return f"{self._cite()}:{path}"

    def command_source(self, argv: Sequence[str]) -> str:
        return f"{self._cite()}$ {' '.join(argv)}"

    def nvml_source(self) -> str:
        return f"{self._cite()}:nvml"


class _NoSwitch:
    """Switch CLIs are not read on a live fleet (no switch agent yet): every command is absent."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, argv: Sequence[str]) -> str:
        raise NotFoundError(f"{self.name}: switch commands are not read on a live fleet")

    def command_source(self, argv: Sequence[str]) -> str:
        return f"{self.name}$ {' '.join(argv)}"


# -- job files ---------------------------------------------------------------------------------
class _JobFiles:
    """steps.csv and logs/*.log of one job, from a shared folder or an HTTP folder."""

    def __init__(self, cfg: FleetConfig, job: str) -> None:
        self._fs: ConfinedFS | None = None
        self._url: str | None = None
        self._client: httpx.Client | None = None
        self.error: str | None = None
        if cfg.job.dir is not None:
            folder = cfg.path(Path(cfg.job.dir.replace("{job}", job)))
            if folder is None or not folder.is_dir():
                self.error = f"job folder {folder} does not exist"
            else:
                self._fs = ConfinedFS(folder)
        elif cfg.job.url is not None:
            self._url = cfg.job.url.replace("{job}", job).rstrip("/")
            headers = {}
            if (tf := cfg.path(cfg.job.token_file)) is not None:
                headers["Authorization"] = f"Bearer {read_secret(tf, 'job token file')}"
            self._client = httpx.Client(headers=headers, timeout=30.0, follow_redirects=False)

    def _get(self, rel: str) -> str | None:
        assert self._client is not None and self._url is not None
        url = f"{self._url}/{rel}"
        try:
            with self._client.stream("GET", url) as r:
                if r.status_code == 404:
                    return None
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > MAX_JOB_FILE_BYTES:
                        raise NotAllowedError(f"{url}: larger than {MAX_JOB_FILE_BYTES} bytes")
                if r.status_code != 200:
                    raise RemoteHostError(f"{url}: HTTP {r.status_code}")
        except httpx.HTTPError as exc:
            raise RemoteHostError(f"{url}: {type(exc).__name__}: {exc}") from None
        data = bytes(body)
        if rel.endswith(".gz"):
            import zlib

            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise RemoteHostError(f"{url}: corrupt gzip ({exc})") from None
        return data.decode("utf-8", errors="replace")

    def document(self, rel: str) -> Document | None:
        if self._fs is not None:
            if not self._fs.exists(rel):
                return None
            return Document(self._fs.read_text(rel), f"job:{self._fs.source_of(rel)}")
        if self._client is not None:
            for name in (rel, rel + ".gz"):
                if (text := self._get(name)) is not None:
                    return Document(text, f"{self._url}/{name}")
        return None

    def step_names(self) -> list[str]:
        """steps.csv, or the per-rank steps*.csv files a shared folder holds."""
        return step_file_names(self._fs.list("")) if self._fs is not None else ["steps.csv"]

    def log_names(self) -> list[str]:
        if self._fs is not None:
            return [n for n in self._fs.list("logs") if n.endswith(".log")]
        if self._client is not None:
            try:
                index = self._get("logs/") or ""
            except ForensicError as exc:
                self.error = f"job logs not listed: {exc}"
                return []
            names = {
                m.removesuffix(".gz")
                for m in re.findall(r'href="([A-Za-z0-9][A-Za-z0-9._-]*\.log(?:\.gz)?)"', index)
            }
            return sorted(names)
        return []


# -- the source --------------------------------------------------------------------------------
_DURATION_PART = re.compile(r"(\d{1,9}(?:\.\d{1,6})?)([dhms])")
_UNIT_S = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_since(text: str) -> float:
    """A duration -> seconds: bare seconds (``90``), or parts with a unit, largest first, each
    with or without decimals (``45s``, ``90m``, ``2h``, ``1.5d``, ``1h30m``). The one grammar
    of ``--since`` everywhere; ValueError otherwise."""
    t = (text or "").strip()
    if re.fullmatch(r"\d{1,9}(?:\.\d{1,6})?", t):
        total = float(t)
    else:
        parts = _DURATION_PART.findall(t)
        units = [u for _, u in parts]
        if (
            not parts
            or "".join(n + u for n, u in parts) != t
            or units != sorted(set(units), key="dhms".index)
        ):
            raise ValueError(f"{text!r} is not a duration like 90, 30m, 2h, 1.5d or 1h30m")
        total = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if total <= 0:
        raise ValueError(f"{text!r} is not a positive duration")
    return total


class FleetSource(SourceBase):
    """Evidence read live: every host through its agent, metrics through Prometheus."""

    def __init__(
        self,
        cfg: FleetConfig,
        *,
        job: str,
        start: float,
        end: float,
        title: str = "",
        ranks: int | None = None,
        reported: str = "",
        host_factory: HostFactory | None = None,
        metrics: Any = None,
        locator: str = "fleet",
        probe: bool = False,
    ) -> None:
        if not _JOB.fullmatch(job):
            raise FleetFileError(f"job name {job!r} is not a valid job name")
        if not end > start:
            raise FleetFileError("the window must end after it starts")
        self.cfg = cfg
        self.locator = locator
        self.origin = "live"
        self._notes: list[str] = []
        #: Host names met (Prometheus labels) that cannot be a host's: named in the report, never read.
        self._refused: dict[str, str] = {}
        self._health = _Health()
        self._token = read_secret(cfg.path(cfg.agents.token_file), "agent token file")
        verify = tls_context(str(cfg.path(cfg.agents.ca_file)) if cfg.agents.ca_file else None)
        self._factory: HostFactory = host_factory or (
            lambda n, u, t, s, snap: remote_host(n, u, t, s, snap, verify=verify)
        )
        if metrics is None and cfg.prometheus is not None:
            prom = cfg.prometheus
            token = (
                read_secret(cfg.path(prom.token_file), "Prometheus token file") if prom.token_file else None
            )
            metrics = PrometheusMetrics(
                prom.url,
                token=token,
                timeout_s=prom.timeout_s,
                attempts=prom.attempts,
                min_step_s=prom.step_s,
            )
        # Recorded: what the tools read is what a kept archive of this run holds.
        self.metrics = RecordingMetrics(metrics if metrics is not None else _NoMetrics())
        self.incident = Incident.model_validate(
            {
                "schema": SCHEMA,
                "id": f"live-{job}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(end))}",
                "title": title or f"Investigate job {job}",
                "reported": reported,
                "window": {"start": start, "end": end},
                "job": {"name": job, "ranks": ranks, "gpus_per_node": cfg.gpus_per_node},
            }
        )
        self.topology = self._load_topology(job)
        self._job = _JobFiles(cfg, job)
        if self._job.error:
            self._notes.append(self._job.error)
        self._hosts: dict[tuple[str, Snapshot], FleetHost] = {}
        self._rank_map = None
        self._opened_at = time.time()
        if probe:
            self._probe()

    # -- opening -------------------------------------------------------------------------------
    def _load_topology(self, job: str) -> Topology | None:
        place = self._placement()
        if place is None:
            return None
        start, end = self.window
        try:
            return place.topology(job, (float(start or 0.0), float(end or 0.0)))
        except PlacementError as exc:
            if isinstance(place, TopologyFilePlacement):
                raise FleetFileError(str(exc)) from None  # the fleet file names a file that is not usable
            self._notes.append(str(exc))  # the agents' own host list stands in
            return None
        finally:
            self._refused.update(getattr(place, "refused", {}))

    def _placement(self) -> Placement | None:
        t = self.cfg.topology
        if t.file is not None:
            return TopologyFilePlacement(self.cfg.path(t.file))
        if t.prometheus_label is not None:
            return PrometheusPlacement(
                self.metrics, host_label=t.prometheus_label, job_label=t.job_label, metric=t.metric
            )
        if t.scheduler == "slurm":
            return SlurmPlacement(slurm_conf=self.cfg.path(t.slurm_conf))
        if t.scheduler == "kubernetes":
            return KubernetesPlacement(
                label=t.kubernetes_label,
                namespace=t.kubernetes_namespace,
                kubeconfig=self.cfg.path(t.kubeconfig),
            )
        return None

    def _probe(self) -> None:
        """Ask every agent once, in parallel, so that hosts that cannot be read are known (and
        reported) before the first tool runs. Off by default: a host nobody reads costs nothing,
        and a host that fails when read is marked then, reported all the same."""
        names = self.host_names()

        def probe(name: str) -> None:
            try:
                self.host(name).exists("/sys")
            except ForensicError:
                pass

        if names:
            with ThreadPoolExecutor(max_workers=min(PROBE_WORKERS, len(names))) as pool:
                list(pool.map(probe, names))

    # -- the protocol ----------------------------------------------------------------------------
    def notes(self) -> list[str]:
        out = list(self._notes)
        if self._health.down:
            out.append(
                "hosts that could not be read: "
                + "; ".join(f"{h} ({reason})" for h, reason in sorted(self._health.down.items()))
            )
        return out

    def unreadable_hosts(self) -> dict[str, str]:
        return {**super().unreadable_hosts(), **self._refused, **self._health.down}

    def metrics_read(self) -> list[Any]:
        """Every metric series the tools (and placement) read so far."""
        return self.metrics.read_series()

    def host_names(self) -> list[str]:
        names = [h.name for h in self.topology.hosts] if self.topology else []
        for extra in [*self.cfg.agents.hosts, *self.cfg.agents.urls]:
            if extra not in names:
                names.append(extra)
        return names

    def host(self, name: str, snapshot: Snapshot = "now") -> FleetHost:
        key = (name, snapshot)
        if key not in self._hosts:
            if not is_host_name(name) or name not in self.host_names():
                raise NotFoundError(f"no host {name!r} in the fleet")
            inner = self._factory(
                name, self.cfg.agent_url(name), self._token, self.cfg.agents.timeout_s, snapshot
            )
            self._hosts[key] = FleetHost(name, inner, self._health, snapshot)
        return self._hosts[key]

    def collected(self, host: str) -> dict[str, float]:
        """When the host was read. A recorded host (a replay agent) says so in collected.json; a
        live one is read now, its boot time from /proc/uptime when the agent serves it."""
        node = self.host(host)
        for path in ("/collected.json",):
            try:
                raw = json.loads(node.read(path))
            except (ForensicError, ValueError):
                continue
            if isinstance(raw, dict):
                from forensic.sandbox.bundle import parse_time

                return {k: t for k in ("before", "now", "boot") if (t := parse_time(raw.get(k))) is not None}
        out = {"now": self._opened_at}
        try:
            out["boot"] = self._opened_at - float(node.read("/proc/uptime").split()[0])
        except (ForensicError, ValueError, IndexError):
            pass
        return out

    def switch_names(self) -> list[str]:
        return [s.name for s in self.topology.switches] if self.topology else []

    def switch(self, name: str) -> _NoSwitch:
        return _NoSwitch(name)

    def steps(self) -> list[Document]:
        return [doc for name in self._job.step_names() if (doc := self._job.document(name))]

    def log_names(self) -> list[str]:
        return self._job.log_names()

    def log(self, name: str) -> Document:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.log", name):
            raise NotFoundError(f"no job log named {name!r}")
        doc = self._job.document(f"logs/{name}")
        if doc is None:
            raise NotFoundError(f"no job log named {name!r}")
        return doc


def valid_job_name(job: str) -> bool:
    """Whether ``job`` can name a job here (it becomes part of paths and URLs)."""
    return bool(_JOB.match(job))


def fleet_locator(
    fleet_file: Path | str,
    *,
    job: str,
    since: float,
    until: float,
    title: str = "",
    ranks: int | None = None,
    reported: str = "",
) -> str:
    """The string a run records to reopen the same source (:func:`reopen_fleet`)."""
    args: dict[str, Any] = {
        "file": str(Path(fleet_file).resolve()),
        "job": job,
        "since": since,
        "until": until,
        "title": title,
        "ranks": ranks,
    }
    if reported:  # absent when empty: locators recorded before it existed stay equal
        args["reported"] = reported
    return "fleet:" + json.dumps(args, sort_keys=True)


def open_fleet(
    fleet_file: Path | str,
    *,
    job: str,
    since: str | float,
    until: float | None = None,
    title: str = "",
    ranks: int | None = None,
    host_factory: HostFactory | None = None,
    probe: bool = True,
    reported: str = "",
) -> FleetSource:
    """The live source of ``job`` over ``[until - since, until]`` (``until`` defaults to now); every
    agent is probed once at open so that the report names the hosts that could not be read."""
    cfg = load_fleet(fleet_file)
    try:
        span = since if isinstance(since, (int, float)) else parse_since(since)
    except ValueError as exc:
        raise FleetFileError(f"--since: {exc}") from None
    end = time.time() if until is None else float(until)
    locator = fleet_locator(
        fleet_file, job=job, since=span, until=end, title=title, ranks=ranks, reported=reported
    )
    return FleetSource(
        cfg,
        job=job,
        start=end - span,
        end=end,
        title=title,
        ranks=ranks,
        reported=reported,
        host_factory=host_factory,
        locator=locator,
        probe=probe,
    )


def reopen_fleet(locator: str) -> FleetSource:
    """A fleet source again from its :attr:`FleetSource.locator` (a resumed, checkpointed run)."""
    try:
        args = json.loads(locator.removeprefix("fleet:"))
        return open_fleet(
            args["file"],
            job=args["job"],
            since=float(args["since"]),
            until=float(args["until"]),
            title=args.get("title") or "",
            ranks=args.get("ranks"),
            reported=args.get("reported") or "",
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise FleetFileError(f"not a fleet locator: {locator[:80]!r} ({exc})") from None


class _NoMetrics:
    def series(
        self, name: str, labels: Any = None, start: float | None = None, end: float | None = None
    ) -> MetricRead:
        return MetricRead(unavailable="no Prometheus in the fleet file")


__all__ = [
    "AgentsConfig",
    "FleetConfig",
    "FleetFileError",
    "FleetHost",
    "FleetSource",
    "JobConfig",
    "PrometheusConfig",
    "TopologyConfig",
    "fleet_locator",
    "load_fleet",
    "open_fleet",
    "parse_since",
    "reopen_fleet",
    "remote_host",
    "valid_job_name",
]
