"""Make a bundle (``forensic.bundle/v1``) from live machines, for later replay, sharing and evaluation.

The collector reads every host through the ``Host`` seam only (``LiveHost`` for this machine,
``RemoteHost`` for a node agent), so it can read nothing a tool could not, and it records what the
tools read: the PCI link and AER files of GPUs and NICs, InfiniBand port state and counters,
netdev state, the allowlisted commands and NVML. A host that cannot be read costs its own folder,
never the bundle; ``collected.json`` and the returned :class:`CollectResult` say what was missed.

Window-start ``before/`` snapshots come from a second set of hosts when the caller has them (a
replay agent's ``before`` snapshot); live agents have no history, and the caller may add metrics
from Prometheus instead (``metrics`` writes ``metrics/*.om`` texts it is given).

The only writes are into the new bundle, which is built in a private temporary folder and moved to
``out`` (a folder, or one ``.tar.gz``) only when complete; an existing ``out`` is never replaced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from forensic.sandbox import SCHEMA, ForensicError, Host, command_file, is_host_name, is_netdev_name
from forensic.sandbox.errors import BundleError, RemoteHostError
from forensic.sandbox.host import HOST_COMMANDS

#: PCI functions recorded: display controllers (GPUs), 3D controllers, network, processing accelerators.
PCI_CLASSES = ("0x03", "0x02", "0x12")
PCI_FILES = (
    "class",
    "current_link_speed",
    "max_link_speed",
    "current_link_width",
    "max_link_width",
    "aer_dev_correctable",
    "aer_dev_nonfatal",
    "aer_dev_fatal",
)
IB_PORT_FILES = ("state", "phys_state", "rate", "link_layer")
NET_FILES = ("operstate", "carrier_changes")
#: Commands recorded on every host, in this order; the first of a group that answers wins.
COMMANDS: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("nvidia-smi", "-q"),),
    (("lspci", "-vv"),),
    (("dmesg", "-T"), ("journalctl", "-k"), ("dmesg",)),
    (("ibstat",),),
    (("top", "-b", "-n", "1"),),
    (("cat", "/proc/pressure/cpu"),),
)
#: Files one host may contribute; a runaway sysfs tree is cut here and the cut is recorded.
MAX_FILES_PER_HOST = 50_000
#: Bytes one host may contribute (as written). A real host's snapshot is a few MB (dmesg and
#: lspci are the largest); a hostile or runaway agent is cut here, and the cut is recorded.
MAX_HOST_BYTES = 64 * 1024 * 1024
#: Bytes all hosts of one collection may contribute together: within the archive cap, so the
#: bundle can always be read back (:data:`forensic.sandbox.archive.MAX_TOTAL_BYTES`).
MAX_COLLECTION_BYTES = 4 * 1024 * 1024 * 1024
_ENTRY = re.compile(r"[A-Za-z0-9._:+@-]{1,128}")


class CollectCaps(TypedDict, total=False):
    """Byte caps of a collection: collect_bundle's keyword arguments of the same names."""

    max_host_bytes: int
    max_collection_bytes: int


class CollectError(BundleError):
    """The collection cannot start or cannot be written (bad arguments, ``out`` exists)."""


def parse_since(text: str) -> float:
    """``--since`` in the one duration grammar (:func:`forensic.sandbox.fleet.parse_since`)."""
    from forensic.sandbox.fleet import parse_since as duration

    try:
        return duration(text)
    except ValueError:
        raise CollectError(f"--since {text!r}: expected a duration like 30m, 2h, 1d or 1h30m") from None


@dataclass
class HostOutcome:
    """What was recorded from one host."""

    files: int = 0
    #: Bytes written for this host.
    bytes: int = 0
    commands: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    nvml: str = "none"
    error: str | None = None
    #: Why recording this host stopped early (a cap), and what was left out; None when it was not cut.
    truncated: str | None = None


@dataclass
class CollectResult:
    """The written bundle and, per host, what it holds."""

    out: Path
    hosts: dict[str, HostOutcome]
    #: Bytes written for all hosts together.
    bytes: int = 0


@dataclass
class _Caps:
    """The byte caps of one collection and what it has written so far (shared by its writers)."""

    host: int
    total: int
    written: int = 0


Progress = Callable[[str, int, int | None], None]


class _Writer:
    def __init__(self, root: Path, host: str, outcome: HostOutcome, caps: _Caps) -> None:
        self.base = root / "nodes" / host
        self.outcome = outcome
        self.caps = caps

    def put(self, rel: str, text: str) -> None:
        if self.outcome.files >= MAX_FILES_PER_HOST:
            raise _Full(f"stopped after {MAX_FILES_PER_HOST} files (the per-host file cap)")
        parts = rel.strip("/").split("/")
        if any(part in ("", ".", "..") or "\x00" in part for part in parts):
            raise CollectError(f"refusing to write {rel!r}: it would leave the host's folder")
        data = text.encode("utf-8")
        o, caps = self.outcome, self.caps
        # A file that would pass a cap is not written at all (a cut file would read as complete).
        if o.bytes + len(data) > caps.host:
            raise _Full(
                f"stopped at the per-host byte cap ({caps.host} bytes): {rel} ({len(data)} bytes) and what "
                f"followed not recorded; {o.bytes} bytes in {o.files} files kept"
            )
        if caps.written + len(data) > caps.total:
            raise _Full(
                f"stopped at the collection's byte cap ({caps.total} bytes, all hosts): {rel} ({len(data)} bytes) "
                f"and what followed not recorded; {o.bytes} bytes in {o.files} files kept"
            )
        p = self.base.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        o.files += 1
        o.bytes += len(data)
        caps.written += len(data)


class _Full(Exception):
    """A cap stopped recording one host; the message says which and what was left out."""


def _try_read(host: Host, path: str) -> str | None:
    try:
        return host.read(path)
    except RemoteHostError:
        raise  # the host is gone: stop asking it, record why
    except ForensicError:
        return None


def _try_list(host: Host, path: str) -> list[str]:
    """Entry names, keeping only plain names: a remote host's answer is data, not a path to follow."""
    try:
        names = host.list(path)
    except RemoteHostError:
        raise
    except ForensicError:
        return []
    return [n for n in names if isinstance(n, str) and _ENTRY.fullmatch(n) and n not in (".", "..")]


def snapshot_host(
    host: Host,
    w: _Writer,
    prefix: str = "",
    tick: Callable[[], None] = lambda: None,
    netdevs: Sequence[str] = (),
) -> dict[str, Any]:
    """Record ``host``'s sysfs files, commands and NVML below ``w`` (``prefix`` = "before/" for the
    window-start snapshot); ``netdevs`` are interfaces known from a topology file, read besides
    those the host lists. Returns the facts topology.json needs (gpus, nics)."""
    facts: dict[str, Any] = {"gpus": [], "nics": []}
    for bdf in _try_list(host, "/sys/bus/pci/devices"):
        base = f"/sys/bus/pci/devices/{bdf}"
        cls = _try_read(host, f"{base}/class")
        if cls is not None and not cls.strip().lower().startswith(PCI_CLASSES):  # no class file: keep it
            continue
        for name in PCI_FILES:
            if (text := _try_read(host, f"{base}/{name}")) is not None:
                w.put(f"{prefix}sys{base[4:]}/{name}", text)
        tick()
    netdevs = [n for n in netdevs if is_netdev_name(n)]
    for ibdev in _try_list(host, "/sys/class/infiniband"):
        base = f"/sys/class/infiniband/{ibdev}"
        nets = _try_list(host, f"{base}/device/net")
        for port in _try_list(host, f"{base}/ports"):
            pbase = f"{base}/ports/{port}"
            values: dict[str, str] = {}
            for name in IB_PORT_FILES:
                if (text := _try_read(host, f"{pbase}/{name}")) is not None:
                    w.put(f"{prefix}sys{pbase[4:]}/{name}", text)
                    values[name] = text.strip()
            for sub in ("counters", "hw_counters"):
                for name in _try_list(host, f"{pbase}/{sub}"):
                    if (text := _try_read(host, f"{pbase}/{sub}/{name}")) is not None:
                        w.put(f"{prefix}sys{pbase[4:]}/{sub}/{name}", text)
            layer = values.get("link_layer")
            facts["nics"].append(
                {
                    "ibdev": ibdev,
                    "netdev": nets[0] if nets else None,
                    "port": int(port) if port.isdigit() else 1,
                    "link_layer": layer if layer in ("InfiniBand", "Ethernet") else None,
                }
            )
            tick()
    for netdev in _try_list(host, "/sys/class/net"):
        if netdev == "lo" or not is_netdev_name(netdev):
            continue
        if netdev not in netdevs:
            netdevs.append(netdev)
        for name in NET_FILES:
            if (text := _try_read(host, f"/sys/class/net/{netdev}/{name}")) is not None:
                w.put(f"{prefix}sys/class/net/{netdev}/{name}", text)
    groups = list(COMMANDS) + [(("ethtool", "-S", n),) for n in netdevs]
    for group in groups:
        for argv in group:
            try:
                out = host.run(list(argv))
            except RemoteHostError:
                raise
            except ForensicError:
                continue
            w.put(f"{prefix}cmd/{command_file(argv, HOST_COMMANDS)}", out)
            w.outcome.commands.append(" ".join(argv))
            break
        else:
            w.outcome.missed.append(" | ".join(" ".join(a) for a in group))
        tick()
    try:
        nvml = host.nvml()
    except RemoteHostError:
        raise
    except ForensicError as exc:
        nvml, why = None, f"NVML could not be read on {host.name}: {exc}"
    else:
        why = f"no NVIDIA driver or NVML library on {host.name}: nothing to read"
    if nvml is None:
        # A valid, empty reading that says why, so that "no GPU evidence" is never silent.
        nvml = {"driver_version": None, "devices": [], "unavailable": why}
        w.outcome.nvml = "unavailable"
    else:
        w.outcome.nvml = f"{len(nvml.get('devices') or [])} devices"
        facts["gpus"] = [
            {k: d.get(k) for k in ("index", "pci_bus_id", "uuid") if d.get(k) is not None}
            for d in nvml.get("devices") or []
            if isinstance(d, dict) and "index" in d
        ]
    w.put(f"{prefix}nvml.json", json.dumps(nvml, indent=1))
    tick()
    return facts


def copy_job_dir(job_dir: Path, root: Path) -> dict[str, Any]:
    """Copy a job's step files (``steps*.csv[.gz]``) and logs (``*.log``, ``logs/*.log``) into ``job/``.

    Returns what the steps say about placement: ranks with the recorder's ``host`` and
    ``local_gpu`` columns, so topology.json can place them.
    """
    import csv
    import gzip

    dest = root / "job"
    placement: dict[int, tuple[str, int]] = {}
    if not job_dir.is_dir():
        raise CollectError(f"--job-dir {job_dir}: not a folder")
    for p in sorted(job_dir.iterdir()):
        if p.is_symlink() or not p.is_file():
            continue
        if p.name.startswith("steps") and p.name.endswith((".csv", ".csv.gz")):
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest / p.name)
            opener = gzip.open if p.name.endswith(".gz") else open
            try:
                with opener(p, "rt", encoding="utf-8", errors="replace") as fh:
                    for row in csv.DictReader(fh):
                        if (
                            row.get("host")
                            and (row.get("local_gpu") or "").isdigit()
                            and (row.get("rank") or "").isdigit()
                        ):
                            placement[int(row["rank"])] = (row["host"], int(row["local_gpu"]))
            except (OSError, EOFError, csv.Error):
                pass
        elif p.name.endswith(".log"):
            (dest / "logs").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest / "logs" / p.name)
    logs = job_dir / "logs"
    if logs.is_dir():
        for p in sorted(logs.glob("*.log")):
            if p.is_file() and not p.is_symlink():
                (dest / "logs").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dest / "logs" / p.name)
    return {"placement": placement}


def collect_bundle(
    hosts: Sequence[tuple[str, Host]],
    out: Path,
    *,
    incident: Mapping[str, Any],
    before: Mapping[str, Host] | None = None,
    job_dir: Path | None = None,
    job_files: Mapping[str, str] | None = None,
    metrics: Mapping[str, str] | None = None,
    topology: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
    max_host_bytes: int = MAX_HOST_BYTES,
    max_collection_bytes: int = MAX_COLLECTION_BYTES,
) -> CollectResult:
    """Read every host and write one bundle to ``out`` (a folder, or a ``.tar.gz``/``.tgz`` file).

    ``incident`` is incident.json's content (``schema`` is filled in); ``job_files`` maps names below
    ``job/`` (``steps.csv``, ``logs/train.log``) to texts read from a source; ``before`` maps host names to
    hosts that serve the window-start snapshot; ``topology`` (topology.json's content, when the
    fleet has one) is written as given and names the NICs to read; ``metrics`` maps file names (``dcgm.om``) to
    OpenMetrics texts; ``progress(host, done, total)`` is called as each host advances.
    ``max_host_bytes`` and ``max_collection_bytes`` cap what the hosts' files may take, per host and
    for all hosts together: a host past a cap is cut there (its ``truncated`` and its
    ``collected.json`` say where and how much was kept); job files and metrics are not counted.
    """
    out = Path(out)
    if out.name.lower().endswith((".zip", ".tar")):
        raise CollectError(f"{out}: write a .tar.gz (or a folder); other archive kinds are read, not written")
    if out.exists():
        raise CollectError(f"{out}: already exists; choose a new name (nothing is overwritten)")
    if not out.parent.is_dir():
        raise CollectError(f"{out.parent}: no such folder")
    for name, _ in hosts:
        if not is_host_name(name):
            raise CollectError(f"host name {name!r} is not a valid host name")
    if max_host_bytes <= 0 or max_collection_bytes <= 0:
        raise CollectError("the byte caps must be positive")
    caps = _Caps(host=max_host_bytes, total=max_collection_bytes)
    report = progress or (lambda *_: None)
    work = Path(tempfile.mkdtemp(prefix=".forensic-collect-", dir=out.parent))
    try:
        root = work / "bundle"
        root.mkdir()
        outcomes: dict[str, HostOutcome] = {}
        topo_hosts: list[dict[str, Any]] = []
        for name, host in hosts:
            outcome = outcomes[name] = HostOutcome()
            steps = [0]

            def tick(name: str = name, steps: list[int] = steps) -> None:
                steps[0] += 1
                report(name, steps[0], None)  # a host's number of steps is not known ahead

            facts: dict[str, Any] = {"gpus": [], "nics": []}
            known = [
                n["netdev"]
                for h in (topology or {}).get("hosts", [])
                if isinstance(h, dict) and h.get("name") == name
                for n in h.get("nics", [])
                if isinstance(n, dict) and isinstance(n.get("netdev"), str)
            ]
            t_now = clock()
            try:
                facts = snapshot_host(host, _Writer(root, name, outcome, caps), tick=tick, netdevs=known)
                if before is not None and name in before:
                    # The summary says what the host holds now; the window-start snapshot only adds
                    # its files (counted against the caps), so what it lacks is not reported as missing.
                    now = (outcome.nvml, list(outcome.missed), list(outcome.commands))
                    try:
                        snapshot_host(
                            before[name],
                            _Writer(root, name, outcome, caps),
                            prefix="before/",
                            tick=tick,
                            netdevs=known,
                        )
                    finally:
                        outcome.nvml, outcome.missed, outcome.commands = now
            except _Full as cut:
                outcome.truncated = str(cut)
            except ForensicError as exc:  # an unreachable agent: this host's evidence only
                outcome.error = str(exc)
            collected: dict[str, Any] = {"now": t_now}
            if outcome.error:
                collected["error"] = outcome.error
            if outcome.truncated:
                collected["truncated"] = outcome.truncated
            (root / "nodes" / name).mkdir(parents=True, exist_ok=True)
            (root / "nodes" / name / "collected.json").write_text(json.dumps(collected))
            topo_hosts.append({"name": name, **facts})
            report(name, steps[0], steps[0])
        placement: dict[int, tuple[str, int]] = {}
        if job_dir is not None:
            placement = copy_job_dir(Path(job_dir), root)["placement"]
        for rel, text in (job_files or {}).items():
            parts = rel.split("/")
            if not all(_ENTRY.fullmatch(p) and p not in (".", "..") for p in parts) or len(parts) > 2:
                raise CollectError(f"job file name {rel!r} is not a plain name below job/")
            (root / "job").joinpath(*parts).parent.mkdir(parents=True, exist_ok=True)
            (root / "job").joinpath(*parts).write_text(text, encoding="utf-8")
        for fname, text in (metrics or {}).items():
            if not re.fullmatch(r"[A-Za-z0-9._-]+\.om", fname):
                raise CollectError(f"metrics file name {fname!r} is not a plain .om name")
            (root / "metrics").mkdir(exist_ok=True)
            (root / "metrics" / fname).write_text(
                text if text.rstrip().endswith("# EOF") else text.rstrip("\n") + "\n# EOF\n"
            )
        inc = {"schema": SCHEMA, **dict(incident)}
        if placement and not (inc.get("job") or {}).get("ranks"):
            inc["job"] = {**(inc.get("job") or {}), "ranks": len(placement)}
        (root / "incident.json").write_text(json.dumps(inc, indent=2))
        named = {th["name"] for th in topo_hosts}
        for h in sorted({h for h, _ in placement.values()} - named):
            topo_hosts.append({"name": h, "gpus": [], "nics": []})
        for th in topo_hosts:  # ranks on GPUs NVML did not show (no driver here) still need a GPU entry
            have = {g["index"] for g in th["gpus"]}
            th["gpus"] += [
                {"index": g}
                for hh, g in sorted(set(placement.values()))
                if hh == th["name"] and g not in have
            ]
            th["gpus"].sort(key=lambda g: g["index"])
        topo: dict[str, Any] = dict(topology) if topology else {"hosts": topo_hosts}
        if placement and not topo.get("ranks"):
            topo["ranks"] = [{"rank": r, "host": h, "gpu": g} for r, (h, g) in sorted(placement.items())]
        (root / "topology.json").write_text(json.dumps(topo, indent=1))
        _publish(root, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return CollectResult(out=out, hosts=outcomes, bytes=caps.written)


def collect_source(
    src: Any,
    out: Path,
    *,
    hosts: Sequence[str] | None = None,
    series: Sequence[Any] | None = None,
    progress: Progress | None = None,
    caps: CollectCaps | None = None,
) -> tuple[CollectResult, list[str]]:
    """A live evidence source (a fleet) written as a bundle: ``hosts`` (default: all of the
    source's), their window-start snapshots where the agents keep one, the job's steps and logs,
    and metrics: ``series`` when given (what a run read), else the Prometheus series of the
    window. Returns the result and what could not be read."""
    from forensic.sandbox import NotFoundError
    from forensic.tools.parsers.step_files import merge_step_files

    names = list(src.host_names()) if hosts is None else [h for h in src.host_names() if h in set(hosts)]
    chosen = [(n, src.host(n)) for n in names]
    before = {}
    for name, _ in chosen:
        view = src.host(name, "before")
        try:
            view.list("/sys")  # a replay agent has a window-start snapshot; a live one says it has none
        except (NotFoundError, ForensicError):
            continue
        before[name] = view
    start, end = src.window
    if series is not None:
        metrics = openmetrics_texts(series)
        problems: list[str] = []
    else:
        metrics, problems = metrics_from_source(src.metrics, float(start), float(end))
    docs = src.steps()
    try:  # per-rank files become one steps.csv, read as the investigator reads them
        job_files = {"steps.csv": merge_step_files([(d.source, d.text) for d in docs])} if docs else {}
    except ForensicError:
        job_files = {f"steps-{i:05d}.csv": d.text for i, d in enumerate(docs)}
    for name in src.log_names():
        try:
            job_files[f"logs/{name}"] = src.log(name).text
        except ForensicError:
            pass
    incident = src.incident.model_dump(by_alias=True, exclude_none=True)
    topology = src.topology.model_dump(exclude_none=True) if src.topology else None
    result = collect_bundle(
        chosen,
        out,
        incident=incident,
        before=before,
        job_files=job_files,
        metrics=metrics,
        topology=topology,
        progress=progress,
        **(caps or {}),
    )
    return result, problems


def _publish(root: Path, out: Path) -> None:
    name = out.name.lower()
    if name.endswith((".tar.gz", ".tgz")):
        tmp = out.with_name(f".{out.name}.partial")
        with tarfile.open(tmp, "w:gz") as tf:
            for p in sorted(root.rglob("*")):
                tf.add(p, arcname=p.relative_to(root).as_posix(), recursive=False)
        os.replace(tmp, out)  # appears complete or not at all
    else:
        os.replace(root, out)


#: The metric families of the bundle spec (``metrics/*.om``), by the file they are written to.
SPEC_METRICS: dict[str, tuple[str, ...]] = {
    "dcgm.om": (
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        "DCGM_FI_DEV_POWER_VIOLATION",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    ),
    "node.om": (
        "node_infiniband_port_data_received_bytes_total",
        "node_infiniband_port_data_transmitted_bytes_total",
        "node_infiniband_port_errors_received_total",
        "node_infiniband_link_downed_total",
        "node_infiniband_port_transmit_wait_total",
        "node_cpu_seconds_total",
        "node_pressure_cpu_waiting_seconds_total",
        "node_load1",
    ),
    "switch.om": ("ifHCInOctets", "ifHCOutOctets", "ifOutDiscards"),
}


def metrics_from_source(
    source: Any, start: float, end: float, *, history_s: float = 3600.0
) -> tuple[dict[str, str], list[str]]:
    """OpenMetrics texts (file name -> text) of the spec's families from a metric source (Prometheus)
    over ``[start - history_s, end]``: the hour before the window holds the window-start values
    that agents, which keep no history, cannot give. Returns the texts and what could not be read."""
    files: dict[str, str] = {}
    problems: list[str] = []
    for fname, names in SPEC_METRICS.items():
        lines: list[str] = []
        for name in names:
            got = source.series(name, None, start - history_s, end)
            if got.unavailable:
                problems.append(f"{name}: {got.unavailable}")
                if "no Prometheus" in got.unavailable:
                    return {}, problems
                continue
            problems.extend(got.errors)
            if not got.series:
                continue
            lines.append(f"# TYPE {name} unknown")
            for series in got.series:
                labels = ",".join(
                    f'{k}="{_om_escape(v)}"' for k, v in sorted(series.labels.items()) if k != "__name__"
                )
                for t, v in zip(series.timestamps, series.values, strict=True):
                    if t == t:  # NaN timestamps: a sample without a time is no history
                        lines.append(f"{name}{{{labels}}} {_om_value(float(v))} {float(t):.3f}")
        if lines:
            files[fname] = "\n".join(lines) + "\n# EOF\n"
    return files, problems


def openmetrics_texts(series: Sequence[Any]) -> dict[str, str]:
    """Parsed series as OpenMetrics texts, in the spec's files by family (others in read.om)."""
    home = {name: fname for fname, names in SPEC_METRICS.items() for name in names}
    by_file: dict[str, dict[str, list[str]]] = {}
    for s in series:
        lines = by_file.setdefault(home.get(s.name, "read.om"), {}).setdefault(s.name, [])
        labels = ",".join(f'{k}="{_om_escape(v)}"' for k, v in sorted(s.labels.items()) if k != "__name__")
        for t, v in zip(s.timestamps, s.values, strict=True):
            if t == t:
                lines.append(f"{s.name}{{{labels}}} {_om_value(float(v))} {float(t):.3f}")
    return {
        f: "".join(f"# TYPE {name} unknown\n" + "\n".join(lines) + "\n" for name, lines in fams.items())
        + "# EOF\n"
        for f, fams in by_file.items()
    }


def _om_escape(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _om_value(v: float) -> str:
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)
