"""`ethtool -S <netdev>` (mlx5e) and `ibstat`."""

from __future__ import annotations

from ..fleet import Host
from ..sim import NicSim, Scenario
from .sysfs import _at

# print order close to the mlx5e driver's: software/vport counters, then phy, then per-priority, then pci
_ORDER = [
    "rx_packets_phy",
    "tx_packets_phy",
    "rx_bytes_phy",
    "tx_bytes_phy",
    "rx_crc_errors_phy",
    "rx_symbol_err_phy",
    "rx_corrected_bits_phy",
    "rx_pcs_symbol_err_phy",
    "rx_discards_phy",
    "tx_discards_phy",
    "link_down_events_phy",
    "rx_out_of_buffer",
    "rx_buffer_passed_thres_phy",
    "rx_pause_ctrl_phy",
    "tx_pause_ctrl_phy",
    "rx_prio3_bytes",
    "rx_prio3_packets",
    "tx_prio3_bytes",
    "tx_prio3_packets",
    "rx_prio3_pause",
    "rx_prio3_pause_duration",
    "tx_prio3_pause",
    "tx_prio3_pause_duration",
    "rx_prio3_pause_transition",
    "rx_prio3_discards",
    "tx_pause_storm_warning_events",
    "tx_pause_storm_error_events",
    "outbound_pci_buffer_overflow",
    "outbound_pci_stalled_rd",
    "outbound_pci_stalled_wr",
    "outbound_pci_stalled_rd_events",
    "outbound_pci_stalled_wr_events",
    "dev_out_of_buffer",
]


def render_ethtool(ns: NicSim, t: float) -> str:
    vals = {k: c.int_at(t) for k, c in ns.ethtool.items()}
    lines = ["NIC statistics:"]
    # software counters first, as the driver prints them
    lines.append(f"     rx_packets: {vals.get('rx_packets_phy', 0) - 1873}")
    lines.append(f"     rx_bytes: {vals.get('rx_bytes_phy', 0) - 2213441}")
    lines.append(f"     tx_packets: {vals.get('tx_packets_phy', 0) - 911}")
    lines.append(f"     tx_bytes: {vals.get('tx_bytes_phy', 0) - 1093227}")
    lines.append("     tx_queue_stopped: 0")
    lines.append(f"     rx_vport_rdma_unicast_packets: {vals.get('rx_packets_phy', 0) - 4211}")
    lines.append(f"     tx_vport_rdma_unicast_packets: {vals.get('tx_packets_phy', 0) - 3317}")
    for k in _ORDER:
        if k in vals:
            lines.append(f"     {k}: {vals[k]}")
    for k in sorted(vals):
        if k not in _ORDER:
            lines.append(f"     {k}: {vals[k]}")
    return "\n".join(lines) + "\n"


def render_ibstat(scn: Scenario, host: Host, t: float) -> str:
    out = []
    for n in host.nics:
        ns = scn.nic(host.name, n.ibdev)
        state = _at(ns.state, t)
        phys = _at(ns.phys_state, t)
        rate = _at(ns.rate, t).split()[0]
        out += [
            f"CA '{n.ibdev}'",
            "\tCA type: MT4129",
            "\tNumber of ports: 1",
            "\tFirmware version: 28.41.1000",
            "\tHardware version: 0",
            f"\tNode GUID: 0x{n.guid.replace(':', '')}",
            f"\tSystem image GUID: 0x{n.guid.replace(':', '')}",
            "\tPort 1:",
            f"\t\tState: {state.split(': ')[1].capitalize()}",
            f"\t\tPhysical state: {phys.split(': ')[1]}",
            f"\t\tRate: {rate}",
            "\t\tBase lid: " + (str(100 + n.index) if n.link_layer == "InfiniBand" else "0"),
            "\t\tLMC: 0",
            "\t\tSM lid: " + ("1" if n.link_layer == "InfiniBand" else "0"),
            "\t\tCapability mask: 0xa751e848"
            if n.link_layer == "InfiniBand"
            else "\t\tCapability mask: 0x00010000",
            f"\t\tPort GUID: 0x{n.guid.replace(':', '')}",
            f"\t\tLink layer: {n.link_layer}",
            "",
        ]
    return "\n".join(out)
