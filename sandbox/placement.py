"""Which hosts run a job: one protocol, one implementation per place the answer lives.

- :class:`TopologyFilePlacement`: ``topology.json`` in the bundle format (hosts, GPUs, NICs, ranks).
- :class:`PrometheusPlacement`: the hosts and GPUs whose DCGM series carry the job's label.
- :class:`SlurmPlacement`: the job's node list from slurmctld (``squeue`` by name, then
  ``scontrol show job -o ID``), its compressed form (``gpu-[001-004,007]``) expanded here.
- :class:`KubernetesPlacement`: the nodes of the pods labelled with the job (the official client,
  as the Kubernetes executor uses it).

Each answers :meth:`Placement.topology` with a :class:`Topology` (only hosts, where that is all the
place knows) or raises :class:`PlacementError` with one line saying what failed. Read-only: the
scheduler commands run with a fixed argv, no shell, a timeout and an output cap.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from forensic.sandbox.bundle import GpuInfo, HostInfo, Topology
from forensic.sandbox.errors import BundleError

from forensic.names import is_host_name

#: Hosts one node list may expand to (a hostile or broken list must not exhaust memory).
MAX_HOSTS = 100_000
#: Bytes of scheduler output read.
MAX_OUTPUT = 16 * 1024 * 1024


class PlacementError(BundleError):
    """The job's placement could not be read: the scheduler is unreachable, or the job unknown."""


@runtime_checkable
class Placement(Protocol):
    """Where a job runs."""

    #: What is asked, for notes and docs: ``topology file``, ``prometheus``, ``slurm``, ``kubernetes``.
    kind: str

    def topology(self, job: str, window: tuple[float, float]) -> Topology:
        """The job's hosts (and what else is known of them); :class:`PlacementError` on failure."""
        ...


def _hosts_only(names: list[str]) -> Topology:
    return Topology(hosts=[HostInfo(name=n) for n in names])


class TopologyFilePlacement:
    kind = "topology file"

    def __init__(self, path: Path) -> None:
        self.path = path

    def topology(self, job: str, window: tuple[float, float]) -> Topology:
        try:
            raw = self.path.read_bytes()
            text = (gzip.decompress(raw) if self.path.suffix == ".gz" else raw).decode("utf-8")
            return Topology.model_validate(json.loads(text))
        except (OSError, EOFError, ValueError) as exc:
            raise PlacementError(
                f"topology file {self.path}: unusable ({str(exc).splitlines()[0][:200]})"
            ) from None


class PrometheusPlacement:
    kind = "prometheus"

    def __init__(self, metrics: Any, *, host_label: str, job_label: str | None, metric: str) -> None:
        self.metrics = metrics
        self.host_label = host_label
        self.job_label = job_label
        self.metric = metric
        #: Label values that are not host names, with why: nothing of theirs is read, and the
        #: investigation says so rather than take them for healthy.
        self.refused: dict[str, str] = {}

    def topology(self, job: str, window: tuple[float, float]) -> Topology:
        labels = {self.job_label: job} if self.job_label else None
        got = self.metrics.series(self.metric, labels, window[0], window[1])
        if got.unavailable:
            raise PlacementError(f"hosts not listed from Prometheus: {got.unavailable}")
        hosts: dict[str, dict[int, GpuInfo]] = {}
        for s in got.series:
            name = s.labels.get(self.host_label)
            if not is_host_name(name):
                if name:
                    self.refused[name[:300]] = (
                        f"not a valid host name (label {self.host_label} of {self.metric})"
                    )
                continue
            gpus = hosts.setdefault(name, {})
            try:
                idx = int(s.labels.get("gpu", ""))
            except ValueError:
                continue
            gpus[idx] = GpuInfo(index=idx, pci_bus_id=s.labels.get("pci_bus_id"), uuid=s.labels.get("UUID"))
        return Topology(
            hosts=[
                HostInfo(name=h, gpus=[g for _, g in sorted(gs.items())]) for h, gs in sorted(hosts.items())
            ]
        )


# -- Slurm -------------------------------------------------------------------------------------
def expand_hostlist(text: str) -> list[str]:
    """Slurm's compressed host list (``gpu-[001-003,007],login1``) as names, in order.

    Zero padding is kept (``[08-10]`` gives 08, 09, 10); several bracket groups in one name
    multiply. :class:`PlacementError` on a malformed list or one longer than :data:`MAX_HOSTS`.
    """
    out: list[str] = []
    for item in _split_top(text.strip()):
        names, pos = [""], 0
        for m in re.finditer(r"\[([^\[\]]*)\]", item):
            lit = item[pos : m.start()]
            names = [n + lit + x for n in names for x in _expand_group(m.group(1), text)]
            pos = m.end()
            if len(names) + len(out) > MAX_HOSTS:
                raise PlacementError(f"node list {text[:80]!r} expands past {MAX_HOSTS} hosts")
        for n in (n + item[pos:] for n in names):
            if not is_host_name(n):
                raise PlacementError(f"node list {text[:80]!r}: {n[:60]!r} is not a host name")
            out.append(n)
    return out


def _split_top(text: str) -> list[str]:
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise PlacementError(f"node list {text[:80]!r}: unbalanced ']'")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise PlacementError(f"node list {text[:80]!r}: unbalanced '['")
    items.append(cur)
    return [i for i in items if i]


def _expand_group(group: str, whole: str) -> list[str]:
    out: list[str] = []
    for part in group.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise PlacementError(f"node list {whole[:80]!r}: {part[:20]!r} is not a number or range")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo) or int(hi) - int(lo) >= MAX_HOSTS:
            raise PlacementError(f"node list {whole[:80]!r}: bad range {part[:20]!r}")
        out.extend(str(i).zfill(len(lo)) for i in range(int(lo), int(hi) + 1))
    return out


Runner = Callable[[list[str]], str]


class SlurmPlacement:
    kind = "slurm"

    def __init__(
        self, *, slurm_conf: Path | None = None, timeout_s: float = 15.0, runner: Runner | None = None
    ) -> None:
        self.slurm_conf = slurm_conf
        self.timeout_s = timeout_s
        self._run = runner or self._subprocess

    def _subprocess(self, argv: list[str]) -> str:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SLURM_CONF")}
        if self.slurm_conf is not None:
            env["SLURM_CONF"] = str(self.slurm_conf)
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=self.timeout_s,
                env=env,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise PlacementError(
                f"{argv[0]} is not installed (Debian: apt-get install slurm-client)"
            ) from None
        except subprocess.TimeoutExpired:
            raise PlacementError(
                f"{argv[0]} did not answer in {self.timeout_s:g} s (is slurmctld up?)"
            ) from None
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PlacementError(
                f"{' '.join(argv[:3])} failed: {(why[-1] if why else f'exit {done.returncode}')[:200]}"
            )
        return done.stdout[:MAX_OUTPUT].decode("utf-8", "replace")

    def topology(self, job: str, window: tuple[float, float]) -> Topology:
        if job.isdigit():
            ids = [job]
        else:
            out = self._run(["squeue", "-h", "--name", job, "-t", "RUNNING,COMPLETING,SUSPENDED", "-o", "%i"])
            ids = [line.strip() for line in out.splitlines() if line.strip().isdigit()]
            if not ids:
                raise PlacementError(f"slurm: no running job named {job!r}")
        hosts: list[str] = []
        for jid in ids[:16]:
            for name in self._nodes(jid):
                if name not in hosts:
                    hosts.append(name)
        return _hosts_only(hosts)

    def _nodes(self, jid: str) -> list[str]:
        line = self._run(["scontrol", "show", "job", "-o", jid]).strip()
        m = re.search(r"(?:^|\s)NodeList=(\S+)", line)
        if not m or m.group(1) in ("(null)", ""):
            raise PlacementError(f"slurm: job {jid} has no nodes (not started?)")
        return expand_hostlist(m.group(1))


# -- Kubernetes --------------------------------------------------------------------------------
def kubernetes_core_api(kubeconfig: Path | None, context: str | None) -> Any:
    """A CoreV1Api from ``kubeconfig`` (and ``context``), else from the in-cluster service account.

    The one place the client is configured, for placement and the executor alike. Raises
    ModuleNotFoundError without the client, and :class:`PlacementError` (one line) for a
    configuration the client cannot use."""
    from kubernetes import client, config

    try:
        if kubeconfig is not None:
            config.load_kube_config(config_file=str(kubeconfig.expanduser()), context=context)
        else:
            config.load_incluster_config()
    except Exception as exc:  # the client raises several unrelated types for a bad config
        raise PlacementError(
            f"kubernetes configuration: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}"
        ) from None
    return client.CoreV1Api()


class KubernetesPlacement:
    kind = "kubernetes"

    def __init__(
        self,
        *,
        label: str,
        namespace: str | None = None,
        kubeconfig: Path | None = None,
        context: str | None = None,
        api: Any = None,
    ) -> None:
        self.label = label
        self.namespace = namespace
        self.kubeconfig = kubeconfig
        self.context = context
        self._api = api  # a CoreV1Api; built when first needed, so the client is only needed when used

    def _core(self) -> Any:
        if self._api is None:
            try:
                self._api = kubernetes_core_api(self.kubeconfig, self.context)
            except ModuleNotFoundError:
                raise PlacementError(
                    "kubernetes placement needs the client: pip install kubernetes"
                ) from None
        return self._api

    def topology(self, job: str, window: tuple[float, float]) -> Topology:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        core = self._core()
        selector = f"{self.label}={job}"
        try:
            if self.namespace:
                pods = core.list_namespaced_pod(self.namespace, label_selector=selector, _request_timeout=15)
            else:
                pods = core.list_pod_for_all_namespaces(label_selector=selector, _request_timeout=15)
        except ApiException as exc:
            raise PlacementError(
                f"kubernetes: listing pods {selector}: the API server answered {exc.status} {exc.reason}"
            ) from None
        except HTTPError as exc:
            raise PlacementError(f"kubernetes: cannot reach the API server ({type(exc).__name__})") from None
        nodes = sorted(
            {
                p.spec.node_name
                for p in pods.items
                if p.spec
                and p.spec.node_name
                and (p.status is None or p.status.phase not in ("Succeeded", "Failed"))
            }
        )
        if not nodes:
            raise PlacementError(f"kubernetes: no scheduled pod labelled {selector}")
        bad = [n for n in nodes if not is_host_name(n)]
        if bad:
            raise PlacementError(f"kubernetes: node name {bad[0][:60]!r} is not a host name")
        return _hosts_only(nodes)


__all__ = [
    "KubernetesPlacement",
    "Placement",
    "PlacementError",
    "PrometheusPlacement",
    "SlurmPlacement",
    "TopologyFilePlacement",
    "expand_hostlist",
]
