"""sysfs files at their real paths: PCIe link state and AER counters, RDMA ports and counters, netdevs."""

from __future__ import annotations

from typing import TypeVar

from .._io import BundleWriter
from ..fleet import Host
from ..sim import Scenario

_NEW = {
    2.5: "2.5 GT/s PCIe",
    5.0: "5.0 GT/s PCIe",
    8.0: "8.0 GT/s PCIe",
    16.0: "16.0 GT/s PCIe",
    32.0: "32.0 GT/s PCIe",
}
_OLD = {2.5: "2.5 GT/s", 5.0: "5 GT/s", 8.0: "8 GT/s", 16.0: "16 GT/s", 32.0: "32 GT/s"}
_V = TypeVar("_V")

GEN_SPEED = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0}


def speed_str(gts: float, old: bool) -> str:
    return (_OLD if old else _NEW)[gts]


# the counters a fleet recorder collects (a node has ~40 of them; these are the ones worth their file)
SYSFS_COUNTERS = [
    "port_xmit_data",
    "port_rcv_data",
    "port_xmit_wait",
    "symbol_error",
    "port_rcv_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "port_xmit_discards",
]
SYSFS_HW_COUNTERS = [
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
    "out_of_buffer",
    "np_cnp_sent",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
]


def _aer(counts: dict[str, int], total_name: str) -> str:
    lines = [f"{k} {v}" for k, v in counts.items()]
    lines.append(f"{total_name} {sum(counts.values())}")
    return "\n".join(lines) + "\n"


NONFATAL_NAMES = [
    "Undefined",
    "Data Link Protocol",
    "Surprise Down Error",
    "Poisoned TLP",
    "Flow Control Protocol",
    "Completion Timeout",
    "Completer Abort",
    "Unexpected Completion",
    "Receiver Overflow",
    "Malformed TLP",
    "ECRC",
    "Unsupported Request",
    "ACS Violation",
    "Uncorrectable Internal Error",
    "MC Blocked TLP",
    "AtomicOp Egress Blocked",
    "TLP Prefix Blocked Error",
]


def write(w: BundleWriter, base: str, scn: Scenario, host: Host, t: float) -> None:
    """Write the sysfs tree of ``host`` as it read at time ``t`` under ``base`` (…/sys)."""
    o = scn.opts
    old = o["sysfs_old"]
    for g in host.gpus:
        gs = scn.gpu(host.name, g.index)
        d = f"{base}/bus/pci/devices/{g.pci.sysfs}"
        if gs.lost(t):
            w.text(f"{d}/current_link_speed", "Unknown\n")
            w.text(f"{d}/max_link_speed", "Unknown\n")
            w.text(f"{d}/current_link_width", "63\n")
            w.text(f"{d}/max_link_width", "63\n")
        else:
            w.text(f"{d}/current_link_speed", speed_str(GEN_SPEED[int(gs.pcie_cur_gen.mean(t))], old) + "\n")
            w.text(f"{d}/max_link_speed", speed_str(GEN_SPEED[gs.pcie_max_gen], old) + "\n")
            w.text(f"{d}/current_link_width", f"{int(gs.pcie_cur_width.mean(t))}\n")
            w.text(f"{d}/max_link_width", f"{gs.pcie_max_width}\n")
        if o.get("aer"):
            w.text(
                f"{d}/aer_dev_correctable",
                _aer({k: c.int_at(t) for k, c in gs.aer_cor.items()}, "TOTAL_ERR_COR"),
            )
            nf = {k: 0 for k in NONFATAL_NAMES}
            if gs.aer_nonfatal_total and (gs.lost_at is None or t >= gs.lost_at):
                nf["Completion Timeout"] = gs.aer_nonfatal_total
            w.text(f"{d}/aer_dev_nonfatal", _aer(nf, "TOTAL_ERR_NONFATAL"))
            ft = {k: 0 for k in NONFATAL_NAMES}
            if gs.aer_fatal_total and gs.lost_at is not None and t >= gs.lost_at:
                ft["Surprise Down Error"] = gs.aer_fatal_total
            w.text(f"{d}/aer_dev_fatal", _aer(ft, "TOTAL_ERR_FATAL"))
    for n in host.nics:
        ns = scn.nic(host.name, n.ibdev)
        d = f"{base}/bus/pci/devices/{n.pci.sysfs}"
        w.text(f"{d}/current_link_speed", speed_str(_at(ns.pcie_cur_speed, t), old) + "\n")
        w.text(f"{d}/max_link_speed", speed_str(ns.pcie_max_speed, old) + "\n")
        w.text(f"{d}/current_link_width", f"{_at(ns.pcie_cur_width, t)}\n")
        w.text(f"{d}/max_link_width", f"{ns.pcie_max_width}\n")
        if o.get("ib_sysfs"):
            p = f"{base}/class/infiniband/{n.ibdev}/ports/{n.port}"
            w.text(f"{p}/state", _at(ns.state, t) + "\n")
            w.text(f"{p}/phys_state", _at(ns.phys_state, t) + "\n")
            w.text(f"{p}/rate", _at(ns.rate, t) + "\n")
            w.text(f"{p}/link_layer", n.link_layer + "\n")
            for name in SYSFS_COUNTERS:
                w.text(f"{p}/counters/{name}", f"{ns.counters[name].int_at(t)}\n")
            for name in SYSFS_HW_COUNTERS:
                if name in ns.hw_counters:
                    w.text(f"{p}/hw_counters/{name}", f"{ns.hw_counters[name].int_at(t)}\n")
        if o.get("net_sysfs"):
            q = f"{base}/class/net/{n.netdev}"
            w.text(f"{q}/operstate", ("up" if "ACTIVE" in _at(ns.state, t) else "down") + "\n")
            w.text(f"{q}/carrier_changes", f"{ns.carrier_changes.int_at(t)}\n")


def _at(v: _V | list[tuple[float, _V]], t: float) -> _V:
    """NIC string attributes may be a plain value or a list of (t_from, value) changes."""
    if isinstance(v, list):
        cur = v[0][1]
        for ts, val in v:
            if ts <= t:
                cur = val
        return cur
    return v
