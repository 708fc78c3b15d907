"""Which devices a host has, by whatever the bundle records: topology.json, NVML, nvidia-smi.

Tools need to name a GPU by its NVML index (``host/gpu3``) when the evidence names it by PCI
address (XID lines, AER, sysfs). The inventory joins every source on the address as integers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools.base import ToolContext
from forensic.tools.parsers.nvml import NvmlSnapshot, parse_nvml_readings
from forensic.tools.parsers.pci import PciAddress, parse_pci_address


@dataclass
class Device:
    """One GPU or NIC of a host."""

    kind: str  # "gpu" or "nic"
    name: str  # gpu<i> or the ibdev
    pci: PciAddress | None
    in_job: bool = False
    netdev: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def component(self, host: str) -> str:
        return f"{host}/{self.name}"


@dataclass
class HostInventory:
    host: str
    gpus: dict[int, Device] = field(default_factory=dict)
    nics: dict[str, Device] = field(default_factory=dict)
    nvml: NvmlSnapshot | None = None
    nvml_source: str | None = None
    nvml_error: str | None = None

    def by_pci(self, addr: PciAddress | None) -> Device | None:
        if addr is None:
            return None
        for dev in [*self.gpus.values(), *self.nics.values()]:
            if dev.pci is not None and dev.pci.matches(addr):
                return dev
        return None

    def devices(self) -> list[Device]:
        return [*sorted(self.gpus.values(), key=lambda d: int(d.name[3:])), *self.nics.values()]


def _addr(text: Any) -> PciAddress | None:
    if not text:
        return None
    try:
        return parse_pci_address(str(text))
    except ForensicError:
        return None


def inventory(ctx: ToolContext, host: str) -> HostInventory:
    """The memoised inventory of ``host``."""
    return ctx.memo(f"inventory:{host}", lambda: _build(ctx, host))


def _build(ctx: ToolContext, host: str) -> HostInventory:
    source = ctx.source
    inv = HostInventory(host=host)
    job_gpus = source.job_gpus()
    info = source.host_info(host)
    if info:
        for g in info.gpus:
            inv.gpus[g.index] = Device("gpu", f"gpu{g.index}", _addr(g.pci_bus_id), info={"uuid": g.uuid})
        for n in info.nics:
            inv.nics[n.ibdev] = Device(
                "nic",
                n.ibdev,
                _addr(n.pci_bus_id),
                netdev=n.netdev,
                info={
                    "link_layer": n.link_layer,
                    "switch": n.switch,
                    "switch_port": n.switch_port,
                    "port": n.port,
                },
            )
    try:
        node = source.host(host)
        raw = node.nvml()
        if raw is not None:
            inv.nvml = parse_nvml_readings(raw)
            inv.nvml_source = node.nvml_source()
    except NotFoundError:
        pass  # no node data recorded for this host: absence, not something unread
    except ForensicError as exc:
        inv.nvml_error = str(exc)
    if inv.nvml:
        for d in inv.nvml.devices:
            if d.index is None:
                continue
            dev = inv.gpus.get(d.index)
            if dev is None:
                inv.gpus[d.index] = Device("gpu", f"gpu{d.index}", d.pci, info={"uuid": d.uuid})
            elif dev.pci is None:
                dev.pci = d.pci
    if not inv.gpus:
        _gpus_from_commands(ctx, host, inv)
    if not inv.nics:
        try:
            node = source.host(host)
            for ibdev in node.list("/sys/class/infiniband"):
                inv.nics[ibdev] = Device("nic", ibdev, None, netdev=_netdev_of(node, ibdev))
        except ForensicError:
            pass
    job_hosts = source.job_hosts()
    for idx, dev in inv.gpus.items():
        dev.in_job = (host, idx) in job_gpus
    for dev in inv.nics.values():
        dev.in_job = host in job_hosts
    return inv


def _gpus_from_commands(ctx: ToolContext, host: str, inv: HostInventory) -> None:
    """Without topology or NVML, number GPUs as NVML does: by PCI address, over every GPU that
    nvidia-smi (now or at the window's start) or lspci lists. A GPU that fell off the bus leaves
    nvidia-smi's list (its line says only that its handle is lost, or nothing at all), so one
    source alone would renumber the others; lspci and the earlier snapshot still list it."""
    from forensic.tools.parsers.lspci import parse_lspci_vv
    from forensic.tools.parsers.nvidia_smi import parse_nvidia_smi_q

    addrs: list[PciAddress] = []
    smi, lspci = ["nvidia-smi", "-q"], ["lspci", "-vv"]
    for snapshot in ("now", "before"):
        try:
            node = ctx.source.host(host) if snapshot == "now" else ctx.source.host(host, "before")
            if node.has_command(smi):
                addrs += [g.pci for g in parse_nvidia_smi_q(node.run(smi)) if g.pci is not None]
            if node.has_command(lspci):
                addrs += [
                    d.address
                    for d in parse_lspci_vv(node.run(lspci))
                    if "NVIDIA" in d.description and (d.class_name or "").startswith(("3D controller", "VGA"))
                ]
        except (ForensicError, TypeError):  # TypeError: a source with no window-start snapshot
            continue
    key = lambda a: (a.domain, a.bus, a.device, a.function or 0)  # noqa: E731
    seen: dict[tuple, PciAddress] = {}
    for addr in addrs:
        seen.setdefault(key(addr), addr)
    for i, k in enumerate(sorted(seen)):
        inv.gpus[i] = Device("gpu", f"gpu{i}", seen[k])


def _netdev_of(node, ibdev: str) -> str | None:
    """The network interface of an RDMA device, from sysfs as a live host shows it:
    ``infiniband/<ibdev>/device/net/<netdev>`` or ``net/<netdev>/device/infiniband/<ibdev>``."""
    names = node.list(f"/sys/class/infiniband/{ibdev}/device/net")
    if len(names) == 1:
        return names[0]
    for netdev in node.list("/sys/class/net"):
        if ibdev in node.list(f"/sys/class/net/{netdev}/device/infiniband"):
            return netdev
    return None
