"""Incident bundles (``forensic.bundle/v1``): the two small JSON files and the folder layout.

A bundle is a recorded node tree. :class:`Bundle` opens one, validates what must be valid
(``incident.json``, every gzip stream) and hands out replay hosts; it never interprets evidence.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import weakref
from pathlib import Path
from typing import Any, Literal

from forensic.sandbox import deadline
from forensic.sandbox._fs import ConfinedFS
from forensic.sandbox.archive import bundle_root, extract_archive, is_archive
from forensic.sandbox.errors import (
    CorruptInputError,
    NotABundleError,
    NotFoundError,
    SandboxError,
    WallTimeExceeded,
)
from forensic.sandbox.host import ReplayHost, ReplaySwitch
from forensic.sandbox.sources import SourceBase
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from forensic.times import parse_time

SCHEMA = "forensic.bundle/v1"
#: The most GPUs per host a bundle may claim (real hosts hold 4 to 16).
MAX_GPUS_PER_NODE = 1024
#: Bytes of topology.json (decompressed) read at all. A 16,384-host topology with rank placement is
#: about 40 MB; a larger file is not used (placement comes from nodes/), and parsing it would cost
#: about 12x its size in memory.
MAX_TOPOLOGY_BYTES = 64 * 1024 * 1024


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Window(_Loose):
    """The incident's time bounds."""

    start: float | None = Field(None, description="Window start, unix seconds.")
    end: float | None = Field(None, description="Window end, unix seconds.")


class JobInfo(_Loose):
    """The training job the incident concerns."""

    name: str | None = Field(None, description="Job name as the scheduler knows it.")
    ranks: int | None = Field(None, description="Number of ranks (processes, one per GPU).")
    gpus_per_node: int = Field(8, description="GPUs per host used by the job.")


class Incident(_Loose):
    """``incident.json``: what happened, when, which job."""

    schema_: str = Field(SCHEMA, alias="schema", description="Always forensic.bundle/v1.")
    id: str = Field(description="Incident id.")
    title: str = Field("", description="One-line description of the symptom.")
    window: Window = Field(default_factory=Window, description="Time bounds of the incident.")
    job: JobInfo = Field(default_factory=JobInfo, description="The job concerned.")
    reported: str = Field("", description="Free text from whoever opened the incident.")
    alerts: list[dict[str, Any]] = Field(
        default_factory=list, description="Alertmanager alerts that opened it."
    )


class GpuInfo(_Loose):
    """A GPU in topology.json."""

    index: int = Field(description="NVML index on its host.")
    pci_bus_id: str | None = Field(None, description="PCI address in any of its spellings.")
    uuid: str | None = Field(None, description="GPU UUID.")


class NicInfo(_Loose):
    """A NIC port in topology.json."""

    ibdev: str = Field(description="RDMA device name, e.g. mlx5_3.")
    netdev: str | None = Field(None, description="Network interface name.")
    pci_bus_id: str | None = Field(None, description="PCI address.")
    port: int = Field(1, description="Port number on the device.")
    link_layer: Literal["InfiniBand", "Ethernet"] | str | None = Field(
        None, description="InfiniBand or Ethernet (RoCE)."
    )
    switch: str | None = Field(None, description="Switch the port is cabled to.")
    switch_port: str | None = Field(None, description="Switch port it is cabled to.")


class HostInfo(_Loose):
    """A host in topology.json."""

    name: str = Field(description="Host name as the fleet uses it.")
    rack: str | None = Field(None, description="Rack name.")
    gpus: list[GpuInfo] = Field(default_factory=list, description="GPUs of the host.")
    nics: list[NicInfo] = Field(default_factory=list, description="NIC ports of the host.")


class RankPlacement(_Loose):
    """Where one rank runs."""

    rank: int = Field(description="Global rank.")
    host: str = Field(description="Host name.")
    gpu: int = Field(description="GPU index on that host.")


class SwitchLink(_Loose):
    """A switch port and what it connects to."""

    port: str = Field(description="Local port name.")
    peer: str | None = Field(None, description="Peer switch or host.")
    peer_port: str | None = Field(None, description="Peer's port.")


class SwitchInfo(_Loose):
    """A switch in topology.json."""

    name: str = Field(description="Switch name.")
    tier: str | None = Field(None, description="leaf, spine, ...")
    links: list[SwitchLink] = Field(default_factory=list, description="Inter-switch links.")


class Topology(_Loose):
    """``topology.json``: hosts, GPUs, NICs, switch links and rank placement."""

    hosts: list[HostInfo] = Field(default_factory=list, description="Hosts in file order.")
    ranks: list[RankPlacement] = Field(default_factory=list, description="Explicit rank placement.")
    switches: list[SwitchInfo] = Field(default_factory=list, description="Switches.")


_TOPOLOGY_LISTS: dict[str, TypeAdapter[list[Any]]] = {
    "hosts": TypeAdapter(list[HostInfo]),
    "ranks": TypeAdapter(list[RankPlacement]),
    "switches": TypeAdapter(list[SwitchInfo]),
}


def _validate_topology(raw: Any, batch: int = 1024) -> Topology:
    """``Topology.model_validate(raw)``, its long lists validated a batch at a time with the
    working-time deadline checked between batches (one validation of a 40 MB file takes seconds)."""
    deadline.check("parsing topology.json")
    if not isinstance(raw, dict):
        return Topology.model_validate(raw)  # raises the usual ValidationError
    lists = {k: raw[k] for k in _TOPOLOGY_LISTS if isinstance(raw.get(k), list)}
    topo = Topology.model_validate({k: v for k, v in raw.items() if k not in lists})
    for key, items in lists.items():
        done: list[Any] = []
        for i in range(0, len(items), batch):
            deadline.check(f"parsing topology.json ({key} {i} of {len(items)})")
            done.extend(_TOPOLOGY_LISTS[key].validate_python(items[i : i + batch]))
        setattr(topo, key, done)
    return topo


def gpus_per_node(incident: Incident) -> int:
    """GPUs per host of the job, clamped: no host holds more than this, and placement loops over it."""
    return min(MAX_GPUS_PER_NODE, max(1, int(incident.job.gpus_per_node or 8)))


def place_ranks(
    incident: Incident, topology: Topology | None, hosts: list[str]
) -> dict[int, tuple[str, int]]:
    """rank -> (host, gpu index): topology ``ranks`` when given, else the spec's default placement.

    Only ranks that land on a known host are placed: a ``job.ranks`` of 10**12 costs no more than
    the hosts can hold. Every evidence source places ranks through this one function.
    """
    if topology and topology.ranks:
        return {r.rank: (r.host, r.gpu) for r in topology.ranks}
    per = gpus_per_node(incident)
    n_ranks = incident.job.ranks or len(hosts) * per
    return {r: (hosts[r // per], r % per) for r in range(max(0, min(n_ranks, len(hosts) * per)))}


class Bundle(SourceBase):
    """An opened incident bundle. Everything below ``root`` is reachable, nothing above it."""

    #: Why topology.json could not be used, when it could not.
    topology_error: str | None = None
    #: Why the gzip files were not all checked at open (the budget ran out), when they were not.
    gzip_unverified: str | None = None
    #: The archive this bundle was unpacked from, when it came as one file.
    archive: Path | None = None

    def __init__(
        self,
        root: Path | str,
        *,
        verify_gzip: bool | Literal["lazy"] = True,
        verify_budget_s: float | None = None,
        budget_s: float | None = None,
    ) -> None:
        """``verify_gzip``: True checks every gzip stream now and refuses the bundle on a corrupt one;
        ``"lazy"`` checks each stream when it is read (every read is checked and capped), so a corrupt
        file costs the read that wanted it and opening costs nothing per file; False never checks.
        ``budget_s``: working time for the parts of opening that can take long, together: unpacking
        an archive (past it, WallTimeExceeded: nothing is left to open) and parsing topology.json
        (past it, the topology is left out and :attr:`topology_error` says so)."""
        root = Path(root)
        self._open_by = (
            None if budget_s is None or not math.isfinite(budget_s) else time.monotonic() + budget_s
        )
        unpacked: Path | None = None
        if root.is_file() and is_archive(root):
            self.archive = root.resolve()
            with deadline.deadline(self._open_left(), what=f"unpacking {root.name}"):
                unpacked = extract_archive(root)  # checked and unpacked under the same confinement rules
            root = bundle_root(unpacked)
        try:
            self._open(root, verify_gzip, verify_budget_s)
        except BaseException:
            if unpacked is not None:
                shutil.rmtree(unpacked, ignore_errors=True)
            raise
        if unpacked is not None:
            # The copy lives as long as anything reads it: the file view is shared by every
            # replay host handed out, so tie the folder to it, not to this object alone.
            self._unpacked = weakref.finalize(self.fs, shutil.rmtree, unpacked, True)

    def _open(self, root: Path, verify_gzip: bool | str, verify_budget_s: float | None) -> None:
        if not root.is_dir():
            raise NotABundleError(
                f"{root}: not a folder" + ("" if root.exists() else " (no such file or folder)")
            )
        if (root / "bundle").is_dir() and not _has_incident(root):
            root = root / "bundle"  # an evaluation case: investigate its bundle/, never truth.json
        if not _has_incident(root):
            raise NotABundleError(f"{root}: not an incident bundle (no incident.json)")
        self.root = root.resolve()
        self.fs = ConfinedFS(self.root)
        if verify_gzip is True:
            try:
                with deadline.deadline(verify_budget_s, what="checking the bundle's gzip files", alarm=False):
                    self._verify_gzip()
            except WallTimeExceeded as exc:
                # Not fatal: each stream is checked again (capped, under the deadline) when read.
                self.gzip_unverified = f"gzip files not all checked at open: {exc}"
        self.incident = self._load_incident()
        self.topology = self._load_topology()
        self._rank_map: dict[int, tuple[str, int]] | None = None

    # -- loading ---------------------------------------------------------------------------
    def _open_left(self) -> float | None:
        """Seconds left of ``budget_s`` (None: no limit of its own)."""
        return None if self._open_by is None else self._open_by - time.monotonic()

    def _verify_gzip(self) -> None:
        # Every stream is opened through the sandbox (a .gz symlink that leads out is never
        # opened) and read under the per-file cap and the working-time deadline.
        for folder, dirs, files in os.walk(self.root, followlinks=False):
            deadline.check("checking the bundle's gzip files")
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".gz"):
                    continue
                rel = Path(folder, name).relative_to(self.root).as_posix()
                try:
                    reason = self.fs.check_gzip(rel)
                except SandboxError:
                    continue  # not a regular file inside the bundle: nothing any tool can read
                if reason:
                    raise CorruptInputError(f"{rel}: truncated or corrupt gzip ({reason})")

    def _load_json(self, rel: str, *, cap: int | None = None) -> Any:
        text = self.fs.read_text(rel, cap=cap)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptInputError(f"{rel}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except RecursionError:
            raise CorruptInputError(f"{rel}: JSON nested too deeply") from None
        except ValueError as exc:  # an integer literal past Python's digit limit
            raise CorruptInputError(f"{rel}: unusable JSON ({exc})") from None

    def _load_incident(self) -> Incident:
        raw = self._load_json("incident.json")
        if not isinstance(raw, dict):
            raise CorruptInputError("incident.json: expected a JSON object")
        schema = raw.get("schema", SCHEMA)
        if not str(schema).startswith("forensic.bundle/v1"):
            raise CorruptInputError(f"incident.json: unsupported schema {schema!r} (expected {SCHEMA})")
        raw = dict(raw)
        win = raw["window"] if isinstance(raw.get("window"), dict) else {}
        raw["window"] = {"start": parse_time(win.get("start")), "end": parse_time(win.get("end"))}
        raw.setdefault("id", raw.get("title") or self.root.name)
        try:
            return Incident.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CorruptInputError(f"incident.json: {where}: {first['msg']}") from None

    def _load_topology(self) -> Topology | None:
        if not self.fs.exists("topology.json"):
            return None
        try:
            # Capped before parsing: json and pydantic hold about 12x the text (a 208 MB file took
            # 2.4 GB and a minute). A parse that outlasts the working-time budget stops here too.
            with deadline.deadline(self._open_left(), what="parsing topology.json"):
                raw = self._load_json("topology.json", cap=MAX_TOPOLOGY_BYTES)
                return _validate_topology(raw)
        except (CorruptInputError, SandboxError) as exc:
            # topology.json is optional evidence: an unusable one is treated as absent and the
            # hosts are found from nodes/ instead; the report's evidence says so, and why.
            self.topology_error = f"topology.json not used ({exc}); placement inferred from nodes/"
        except WallTimeExceeded as exc:
            # The alarm may name only the outer step ("opening ..."): say which file it stopped.
            self.topology_error = (
                f"topology.json not used: the working-time budget ran out while it was read and parsed "
                f"({exc}); placement inferred from nodes/"
            )
        except (ValidationError, RecursionError):
            self.topology_error = "topology.json is unreadable; placement inferred from nodes/"
        return None

    # -- what is in the bundle (window, placement and host info come from SourceBase) -------
    def host_names(self) -> list[str]:
        """Hosts named by topology.json (file order) then any other node folder."""
        # Listed once: a recorded bundle does not change, and tools ask on every call.
        cached = self.__dict__.get("_host_names")
        if cached is None:
            names: list[str] = []
            if self.topology:
                names = [h.name for h in self.topology.hosts]
            seen = set(names)
            for name in self.fs.list("nodes"):
                if name not in seen and self.fs.is_dir(f"nodes/{name}"):
                    names.append(name)
                    seen.add(name)
            cached = self.__dict__["_host_names"] = tuple(names)
        return list(cached)

    def host(self, name: str, snapshot: Literal["now", "before"] = "now") -> ReplayHost:
        if not self.fs.is_dir(f"nodes/{name}"):
            raise NotFoundError(f"no node data for host {name!r}")
        return ReplayHost(self.fs, name, snapshot=snapshot)

    def switch_names(self) -> list[str]:
        names = [s.name for s in self.topology.switches] if self.topology else []
        for name in self.fs.list("switches"):
            if name not in names:
                names.append(name)
        return names

    def switch(self, name: str) -> ReplaySwitch:
        return ReplaySwitch(self.fs, name)

    def files(self, folder: str, suffixes: tuple[str, ...]) -> list[str]:
        """Bundle-relative paths of the files in ``folder`` ending with one of ``suffixes``."""
        return [f"{folder}/{n}" for n in self.fs.list(folder) if n.endswith(suffixes)]

    def collected(self, host: str) -> dict[str, float]:
        """``collected.json`` of a host as unix seconds; {} when absent or unreadable. Parsed once."""
        cache = self.__dict__.setdefault("_collected", {})
        if host not in cache:
            cache[host] = self._read_collected(host)
        return dict(cache[host])

    def _read_collected(self, host: str) -> dict[str, float]:
        rel = f"nodes/{host}/collected.json"
        if not self.fs.exists(rel):
            return {}
        try:
            raw = json.loads(self.fs.read_text(rel))
        except (json.JSONDecodeError, CorruptInputError):
            return {}
        if not isinstance(raw, dict):
            return {}
        return {k: t for k in ("before", "now", "boot") if (t := parse_time(raw.get(k))) is not None}


def _has_incident(root: Path) -> bool:
    return (root / "incident.json").is_file() or (root / "incident.json.gz").is_file()
