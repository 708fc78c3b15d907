"""What the job's hosts could do, so that an NCCL setting can be judged against it.

A setting forces a slow path only where the hardware offers a faster one: ``NCCL_P2P_DISABLE`` on
NVLink-connected GPUs, ``NCCL_NET_GDR_LEVEL=LOC`` beside GPUDirect-capable RDMA NICs, an
``NCCL_IB_HCA`` narrower than the RDMA NICs a host has. The facts come from whatever the bundle
holds, first source that answers:

- RDMA NICs per host: ``topology.json`` NICs; else the hosts' ``/sys/class/infiniband`` devices;
  else ``ibstat`` channel adapters whose port is up (``State: Active``).
- NVLink between a host's GPUs: NCCL's own ``N nvls channels`` (NVSwitch) with N > 0; the GPUs'
  product names (SXM/HBM parts are NVLink-connected, ``PCIe``/L40/L4/A10/T4 boards are not); a
  recorded ``nvidia-smi nvlink -e``. Unknown when nothing says.
- GPUs per host: the rank map (where the ranks ran), else the incident's ``job.gpus_per_node``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forensic.sandbox import ForensicError
from forensic.tools._inventory import inventory
from forensic.tools.base import ToolContext
from forensic.tools.parsers.infiniband import parse_ibstat

#: Hosts asked for their NICs when topology lists none (the job's hosts share one build).
_MAX_HOSTS = 4
#: GPU product names whose boards are NVLink-connected (SXM / HBM modules, NVSwitch baseboards).
_NVLINK_NAME = re.compile(r"SXM|HBM[0-9e]|\b[HB]200\b|\bGB[0-9]{3}\b|\b[HA]800\b|\bH20\b", re.I)
#: GPU product names of PCIe boards without an NVLink switch.
_PCIE_NAME = re.compile(r"PCIe|\bL40S?\b|\bL4\b|\bA10G?\b|\bA30\b|\bT4\b|\bRTX\b", re.I)


@dataclass
class HostFacts:
    """The job's hosts as NCCL sees them."""

    ibdevs: list[str] = field(default_factory=list)
    """RDMA devices of the widest host (``mlx5_0``, ...)."""
    netdevs: set[str] = field(default_factory=set)
    """Their network interfaces (``ibp26s0``, ...)."""
    nvlink: bool | None = None
    """Whether a host's GPUs are NVLink-connected; None when nothing says."""
    gpus_per_host: int | None = None
    """GPUs of the job per host."""


def host_facts(ctx: ToolContext, *, nvls_channels: int = 0) -> HostFacts:
    """The facts above; ``nvls_channels``: the most NVLS channels an NCCL init line reported."""
    facts = HostFacts()
    topo = ctx.source.topology
    if topo and any(h.nics for h in topo.hosts):
        widest = max(topo.hosts, key=lambda h: len(h.nics))
        facts.ibdevs = sorted({n.ibdev for n in widest.nics if n.ibdev})
        facts.netdevs = {n.netdev for h in topo.hosts for n in h.nics if n.netdev}
    hosts = sorted(ctx.source.job_hosts()) or ctx.source.host_names()
    hosts = hosts[:_MAX_HOSTS]
    if not facts.ibdevs:
        facts.ibdevs, facts.netdevs = _nics_from_hosts(ctx, hosts)
    facts.gpus_per_host = _gpus_per_host(ctx)
    facts.nvlink = True if nvls_channels > 0 else _nvlink_from_hosts(ctx, hosts)
    return facts


def _nics_from_hosts(ctx: ToolContext, hosts: list[str]) -> tuple[list[str], set[str]]:
    best: list[str] = []
    netdevs: set[str] = set()
    for host in hosts:
        nics = {name: dev.netdev for name, dev in inventory(ctx, host).nics.items()}
        if not nics:
            nics = {ca: None for ca in _active_cas(ctx, host)}
        if len(nics) > len(best):
            best = sorted(nics)
        netdevs |= {n for n in nics.values() if n}
    return best, netdevs


def _active_cas(ctx: ToolContext, host: str) -> list[str]:
    try:
        node = ctx.source.host(host)
        if not node.has_command(["ibstat"]):
            return []
        cas = parse_ibstat(node.run(["ibstat"]))
    except ForensicError:
        return []
    return [ca.name for ca in cas if any((p.state or "").lower() == "active" for p in ca.ports)]


def _gpus_per_host(ctx: ToolContext) -> int | None:
    per = ctx.source.incident.job.gpus_per_node
    placement = ctx.source.rank_map()
    if placement:
        counts: dict[str, int] = {}
        for host, _ in placement.values():
            counts[host] = counts.get(host, 0) + 1
        return max(counts.values())
    return per or None


def _nvlink_from_hosts(ctx: ToolContext, hosts: list[str]) -> bool | None:
    for host in hosts:
        try:
            node = ctx.source.host(host)
            if node.has_command(["nvidia-smi", "nvlink", "-e"]) and "Link" in node.run(
                ["nvidia-smi", "nvlink", "-e"]
            ):
                return True
        except ForensicError:
            pass
        inv = inventory(ctx, host)
        names = [d.name for d in (inv.nvml.devices if inv.nvml else []) if d.name]
        if any(_NVLINK_NAME.search(n) for n in names):
            return True
        if names and all(_PCIE_NAME.search(n) for n in names):
            return False
    return None
