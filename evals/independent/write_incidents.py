#!/usr/bin/env python3
"""Independent hold-out incidents for the forensic investigator.

Authored only from spec/bundle.md, reference/gpu-formats.md and evals/TRUTH.md, without looking at
the investigator, its playbooks, its tests or the other incident generator.

    python evals/independent/write_incidents.py              # (re)writes evals/independent/holdout/
    python evals/independent/write_incidents.py --out DIR    # writes DIR/<case>/ instead
    python evals/independent/write_incidents.py --check      # also runs the self-validation

Deterministic: every case has its own seeded RNG, gzip members carry mtime 0.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import random
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "holdout"

# ----------------------------------------------------------------------------------------------
# time helpers
# ----------------------------------------------------------------------------------------------


def T(s: str) -> float:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


def ctime(t: float) -> str:  # dmesg -T / ctime: "Tue Mar  3 02:18:11 2026"
    d = dt(t)
    return f"{d:%a %b} {d.day:2d} {d:%H:%M:%S %Y}"


# ----------------------------------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------------------------------


class Case:
    def __init__(self, slug: str, label: str, seed: int):
        self.slug = slug
        self.label = label
        self.rng = random.Random(seed)
        self.root = OUT / slug
        self.b = self.root / "bundle"
        self.files = 0

    def write(self, rel: str, text: str, gz: bool = False) -> None:
        p = self.b / rel
        if gz:
            p = p.with_name(p.name + ".gz")
        p.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        if gz:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as g:
                g.write(data)
            data = buf.getvalue()
        p.write_bytes(data)
        self.files += 1

    def json(self, rel: str, obj, gz: bool = False) -> None:
        self.write(rel, json.dumps(obj, indent=1) + "\n", gz=gz)

    def truth(self, root_cause: str, component):
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "truth.json").write_text(
            json.dumps({"root_cause": root_cause, "component": component}) + "\n")


# ----------------------------------------------------------------------------------------------
# fleet model
# ----------------------------------------------------------------------------------------------

GEN_SYSFS = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe",
             5: "32.0 GT/s PCIe"}
GEN_SYSFS_OLD = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s"}
GEN_LSPCI = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}
MBPS = {1: 2000, 2: 4000, 3: 7876, 4: 15753, 5: 31507}  # kernel PCIE_SPEED2MBS_ENC

LAYOUTS = {
    # HGX H100 8-GPU boards, two OEM bus layouts
    "a": dict(gpu=[0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb],
              nic=[0x1a, 0x3c, 0x4d, 0x5e, 0x9c, 0xbc, 0xcc, 0xdc]),
    "b": dict(gpu=[0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb],
              nic=[0x0c, 0x2a, 0x41, 0x63, 0x8c, 0xa6, 0xc1, 0xe3]),
    # HGX H100 4-GPU
    "q": dict(gpu=[0x1b, 0x43, 0x9b, 0xc3], nic=[0x1d, 0x45, 0x9d, 0xc5]),
}

GPU_NAME = "NVIDIA H100 80GB HBM3"


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def mk_uuid(rng):
    return f"GPU-{hexid(rng, 8)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 12)}"


class Gpu:
    def __init__(self, host, index, bus, rng):
        self.host = host
        self.index = index
        self.bus = bus
        self.uuid = mk_uuid(rng)
        self.serial = "1654" + "".join(rng.choice("0123456789") for _ in range(9))
        self.busy = True
        self.temp = rng.randint(54, 67)
        self.mem_temp = self.temp + rng.randint(5, 10)
        self.power = rng.uniform(560, 680)
        self.plimit = 700.0
        self.sm = 1980
        self.mem = 2619
        self.reasons = 0
        self.gen, self.gen_max, self.width, self.width_max = 5, 5, 16, 16
        self.replay = 0
        self.replay_before = 0
        self.sbe_vol = self.dbe_vol = 0
        self.sbe_agg = self.dbe_agg = 0
        self.remap_corr = self.remap_unc = 0
        self.remap_pending = self.remap_fail = False
        self.lost = False
        self.util = rng.randint(97, 100)
        self.aer_cor = {}        # now, name -> count
        self.aer_cor_before = {}
        self.aer_fatal = {}
        self.aer_nonfatal = {}
        self.fb_used = rng.randint(71000, 76500)
        self.pid = None

    @property
    def nvml_bus(self):
        return f"00000000:{self.bus:02X}:00.0"

    @property
    def bdf(self):
        return f"0000:{self.bus:02x}:00.0"

    def idle(self, rng):
        self.busy = False
        self.temp = rng.randint(29, 35)
        self.mem_temp = self.temp + 3
        self.power = rng.uniform(68, 76)
        self.sm = 345
        self.mem = 2619
        self.reasons = 0x1
        self.gen = 1
        self.util = 0
        self.fb_used = 0


class Nic:
    def __init__(self, host, index, bus, ll, naming):
        self.host = host
        self.ibdev = f"mlx5_{index}"
        self.bus = bus
        self.ll = ll
        if naming == "ib":
            self.netdev = f"ibp{bus}s0"
        elif naming == "roce":
            self.netdev = f"enp{bus}s0np0"
        else:
            self.netdev = naming.format(i=index)
        self.port = 1
        self.switch = None
        self.sport = None
        self.gen, self.gen_max, self.width, self.width_max = 5, 5, 16, 16
        self.gen_b, self.width_b = 5, 16
        self.state, self.phys = "4: ACTIVE", "5: LinkUp"
        self.rate = "400 Gb/sec (4X NDR)"
        self.carrier_b = self.carrier = 2
        self.ib_b, self.ib = {}, {}
        self.hw_b, self.hw = {}, {}
        self.eth_b, self.eth = {}, {}
        self.fw = "28.39.2048"

    @property
    def bdf(self):
        return f"0000:{self.bus:02x}:00.0"


class Host:
    def __init__(self, name, rack, rng, layout="a", ngpu=8, ll="InfiniBand", nic_naming=None,
                 boot=None, ip=None):
        self.name = name
        self.rack = rack
        lay = LAYOUTS[layout]
        self.gpus = [Gpu(self, i, b, rng) for i, b in enumerate(lay["gpu"][:ngpu])]
        naming = nic_naming or ("ib" if ll == "InfiniBand" else "roce")
        self.nics = [Nic(self, i, b, ll, naming) for i, b in enumerate(lay["nic"][:ngpu])]
        self.boot = boot
        self.ip = ip
        self.klog = []           # (t, prio, text)
        self.spare = False
        self.load1 = rng.uniform(24, 34)
        self.psi_some = rng.uniform(0.3, 2.5)

    def idle(self, rng):
        self.spare = True
        for g in self.gpus:
            g.idle(rng)
        self.load1 = rng.uniform(0.3, 1.5)
        self.psi_some = 0.0


def topology(hosts, ranks=None, switches=None):
    out = {"hosts": []}
    for h in hosts:
        hd = {"name": h.name, "rack": h.rack,
              "gpus": [{"index": g.index, "pci_bus_id": g.nvml_bus, "uuid": g.uuid} for g in h.gpus],
              "nics": []}
        for n in h.nics:
            nd = {"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.bdf, "port": n.port,
                  "link_layer": n.ll}
            if n.switch:
                nd["switch"] = n.switch
                nd["switch_port"] = n.sport
            hd["nics"].append(nd)
        out["hosts"].append(hd)
    if ranks is not None:
        out["ranks"] = [{"rank": r, "host": h.name, "gpu": g} for r, (h, g) in enumerate(ranks)]
    if switches is not None:
        out["switches"] = switches
    return out


def default_ranks(hosts):
    out = []
    for h in hosts:
        if h.spare:
            continue
        for g in h.gpus:
            out.append((h, g.index))
    return out


# ----------------------------------------------------------------------------------------------
# NIC counters
# ----------------------------------------------------------------------------------------------

IB_COUNTERS = ["VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
               "local_link_integrity_errors", "port_rcv_constraint_errors", "port_rcv_data",
               "port_rcv_errors", "port_rcv_packets", "port_rcv_remote_physical_errors",
               "port_rcv_switch_relay_errors", "port_xmit_constraint_errors", "port_xmit_data",
               "port_xmit_discards", "port_xmit_packets", "port_xmit_wait", "symbol_error"]
HW_COUNTERS = ["duplicate_request", "implied_nak_seq_err", "local_ack_timeout_err", "out_of_buffer",
               "out_of_sequence", "packet_seq_err", "req_cqe_error", "req_transport_retries_exceeded",
               "resp_cqe_error", "rnr_nak_retry_err", "roce_adp_retrans"]
HW_ROCE = ["np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored"]

ETH_ORDER = [
    "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "tx_tso_packets", "rx_csum_unnecessary",
    "rx_out_of_buffer", "tx_queue_stopped", "tx_queue_wake",
    "rx_vport_unicast_packets", "rx_vport_unicast_bytes", "tx_vport_unicast_packets",
    "tx_vport_unicast_bytes", "rx_vport_rdma_unicast_packets", "rx_vport_rdma_unicast_bytes",
    "tx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_bytes",
    "tx_packets_phy", "rx_packets_phy", "rx_crc_errors_phy", "tx_bytes_phy", "rx_bytes_phy",
    "rx_discards_phy", "tx_discards_phy", "tx_errors_phy", "rx_symbol_err_phy",
    "rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "link_down_events_phy", "rx_pcs_symbol_err_phy",
    "rx_corrected_bits_phy", "rx_buffer_passed_thres_phy",
    "rx_pci_signal_integrity", "tx_pci_signal_integrity", "outbound_pci_buffer_overflow",
    "outbound_pci_stalled_rd", "outbound_pci_stalled_wr", "outbound_pci_stalled_rd_events",
    "outbound_pci_stalled_wr_events", "dev_out_of_buffer",
    "rx_prio0_bytes", "rx_prio0_packets", "tx_prio0_bytes", "tx_prio0_packets",
    "rx_prio3_bytes", "rx_prio3_packets", "tx_prio3_bytes", "tx_prio3_packets",
    "rx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause", "tx_prio3_pause_duration",
    "rx_prio3_pause_transition", "rx_prio3_buf_discard", "rx_prio3_cong_discard", "rx_prio3_marked",
    "rx_prio3_discards",
    "tx_pause_storm_warning_events", "tx_pause_storm_error_events",
    "module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted",
]


def fill_nic(rng, nic, uptime, dur, tx_gbps, rx_gbps, base=None, delta=None, roce=None):
    """Counters at 'before' (since boot) and deltas over dur seconds; base/delta override keys
    like 'ib:symbol_error', 'hw:np_cnp_sent', 'eth:tx_prio3_pause'."""
    roce = nic.ll == "Ethernet" if roce is None else roce
    base = dict(base or {})
    delta = dict(delta or {})
    avg = rng.uniform(90, 160)  # long-run average Gb/s since boot
    B = {}
    D = {}
    txb = uptime * avg * 1e9 / 8
    rxb = txb * rng.uniform(0.98, 1.02)
    dtx = dur * tx_gbps * 1e9 / 8 * rng.uniform(0.985, 1.015)
    drx = dur * rx_gbps * 1e9 / 8 * rng.uniform(0.985, 1.015)
    mtu = 4096
    # IB PMA
    for k in IB_COUNTERS:
        B["ib:" + k] = 0
        D["ib:" + k] = 0
    B["ib:port_xmit_data"] = int(txb / 4)
    B["ib:port_rcv_data"] = int(rxb / 4)
    B["ib:port_xmit_packets"] = int(txb / mtu * 1.02)
    B["ib:port_rcv_packets"] = int(rxb / mtu * 1.02)
    B["ib:port_xmit_wait"] = int(uptime * rng.uniform(600, 1400))
    B["ib:excessive_buffer_overrun_errors"] = rng.choice([0, 0, 0, 3, 15])
    B["ib:port_rcv_switch_relay_errors"] = rng.choice([0, 0, 1])
    B["ib:port_rcv_errors"] = rng.choice([0, 0, 0, 2, 14])
    D["ib:port_xmit_data"] = int(dtx / 4)
    D["ib:port_rcv_data"] = int(drx / 4)
    D["ib:port_xmit_packets"] = int(dtx / mtu * 1.02)
    D["ib:port_rcv_packets"] = int(drx / mtu * 1.02)
    D["ib:port_xmit_wait"] = int(dur * (tx_gbps / 400) * rng.uniform(800, 1600))
    for k in HW_COUNTERS:
        B["hw:" + k] = 0
        D["hw:" + k] = 0
    B["hw:out_of_sequence"] = rng.randint(0, 40)
    B["hw:packet_seq_err"] = rng.randint(0, 6)
    B["hw:duplicate_request"] = rng.randint(0, 3)
    B["hw:roce_adp_retrans"] = rng.randint(0, 5)
    if roce:
        for k in HW_ROCE:
            B["hw:" + k] = 0
            D["hw:" + k] = 0
        B["hw:np_cnp_sent"] = int(uptime * rng.uniform(5, 30))
        B["hw:np_ecn_marked_roce_packets"] = int(B["hw:np_cnp_sent"] * 1.3)
        B["hw:rp_cnp_handled"] = int(uptime * rng.uniform(5, 30))
        D["hw:np_cnp_sent"] = int(dur * rng.uniform(5, 40))
        D["hw:np_ecn_marked_roce_packets"] = int(D["hw:np_cnp_sent"] * 1.3)
        D["hw:rp_cnp_handled"] = int(dur * rng.uniform(5, 40))
    # ethtool
    for k in ETH_ORDER:
        B["eth:" + k] = 0
        D["eth:" + k] = 0
    small_tx = uptime * rng.uniform(2e5, 6e5)
    B["eth:tx_bytes"] = int(small_tx)
    B["eth:rx_bytes"] = int(small_tx * 1.4)
    B["eth:tx_packets"] = int(small_tx / 900)
    B["eth:rx_packets"] = int(small_tx * 1.4 / 900)
    B["eth:tx_tso_packets"] = int(small_tx / 40000)
    B["eth:rx_csum_unnecessary"] = int(small_tx * 1.4 / 1000)
    B["eth:tx_queue_stopped"] = B["eth:tx_queue_wake"] = rng.randint(0, 4)
    B["eth:rx_vport_unicast_packets"] = B["eth:rx_packets"]
    B["eth:rx_vport_unicast_bytes"] = B["eth:rx_bytes"]
    B["eth:tx_vport_unicast_packets"] = B["eth:tx_packets"]
    B["eth:tx_vport_unicast_bytes"] = B["eth:tx_bytes"]
    B["eth:tx_vport_rdma_unicast_bytes"] = int(txb)
    B["eth:rx_vport_rdma_unicast_bytes"] = int(rxb)
    B["eth:tx_vport_rdma_unicast_packets"] = int(txb / mtu)
    B["eth:rx_vport_rdma_unicast_packets"] = int(rxb / mtu)
    B["eth:tx_bytes_phy"] = int(txb + small_tx)
    B["eth:rx_bytes_phy"] = int(rxb + small_tx * 1.4)
    B["eth:tx_packets_phy"] = int(txb / mtu + small_tx / 900)
    B["eth:rx_packets_phy"] = int(rxb / mtu + small_tx * 1.4 / 900)
    B["eth:rx_prio3_bytes"] = int(rxb)
    B["eth:tx_prio3_bytes"] = int(txb)
    B["eth:rx_prio3_packets"] = int(rxb / mtu)
    B["eth:tx_prio3_packets"] = int(txb / mtu)
    B["eth:rx_prio0_bytes"] = int(small_tx * 1.4)
    B["eth:tx_prio0_bytes"] = int(small_tx)
    B["eth:rx_prio0_packets"] = int(small_tx * 1.4 / 900)
    B["eth:tx_prio0_packets"] = int(small_tx / 900)
    rxp = int(uptime * rng.uniform(2, 12))
    B["eth:rx_prio3_pause"] = rxp
    B["eth:rx_prio3_pause_duration"] = int(rxp * rng.uniform(2, 6))
    B["eth:rx_prio3_pause_transition"] = int(rxp * 0.5)
    B["eth:tx_prio3_pause"] = rng.randint(0, 900)
    B["eth:tx_prio3_pause_duration"] = int(B["eth:tx_prio3_pause"] * rng.uniform(1, 3))
    B["eth:rx_corrected_bits_phy"] = rng.randint(0, 400)
    B["eth:rx_prio3_marked"] = int(uptime * rng.uniform(5, 30))
    B["eth:outbound_pci_stalled_rd"] = rng.randint(0, 200)
    B["eth:outbound_pci_stalled_wr"] = rng.randint(0, 200)
    B["eth:outbound_pci_stalled_rd_events"] = rng.randint(0, 20)
    B["eth:outbound_pci_stalled_wr_events"] = rng.randint(0, 20)
    B["eth:link_down_events_phy"] = 1
    stx = dur * rng.uniform(2e5, 6e5)
    D["eth:tx_bytes"] = int(stx)
    D["eth:rx_bytes"] = int(stx * 1.4)
    D["eth:tx_packets"] = int(stx / 900)
    D["eth:rx_packets"] = int(stx * 1.4 / 900)
    D["eth:tx_tso_packets"] = int(stx / 40000)
    D["eth:rx_csum_unnecessary"] = int(stx * 1.4 / 1000)
    D["eth:rx_vport_unicast_packets"] = D["eth:rx_packets"]
    D["eth:rx_vport_unicast_bytes"] = D["eth:rx_bytes"]
    D["eth:tx_vport_unicast_packets"] = D["eth:tx_packets"]
    D["eth:tx_vport_unicast_bytes"] = D["eth:tx_bytes"]
    D["eth:tx_vport_rdma_unicast_bytes"] = int(dtx)
    D["eth:rx_vport_rdma_unicast_bytes"] = int(drx)
    D["eth:tx_vport_rdma_unicast_packets"] = int(dtx / mtu)
    D["eth:rx_vport_rdma_unicast_packets"] = int(drx / mtu)
    D["eth:tx_bytes_phy"] = int(dtx + stx)
    D["eth:rx_bytes_phy"] = int(drx + stx * 1.4)
    D["eth:tx_packets_phy"] = int(dtx / mtu + stx / 900)
    D["eth:rx_packets_phy"] = int(drx / mtu + stx * 1.4 / 900)
    D["eth:rx_prio3_bytes"] = int(drx)
    D["eth:tx_prio3_bytes"] = int(dtx)
    D["eth:rx_prio3_packets"] = int(drx / mtu)
    D["eth:tx_prio3_packets"] = int(dtx / mtu)
    D["eth:rx_prio0_bytes"] = int(stx * 1.4)
    D["eth:tx_prio0_bytes"] = int(stx)
    D["eth:rx_prio0_packets"] = int(stx * 1.4 / 900)
    D["eth:tx_prio0_packets"] = int(stx / 900)
    # a busy RoCE port receives a trickle of pauses from its leaf: normal
    rp = int(dur * rng.uniform(0.5, 4)) if roce else 0
    D["eth:rx_prio3_pause"] = rp
    D["eth:rx_prio3_pause_duration"] = int(rp * rng.uniform(2, 6))
    D["eth:rx_prio3_pause_transition"] = int(rp * 0.5)
    D["eth:rx_prio3_marked"] = int(dur * rng.uniform(5, 40)) if roce else 0
    D["eth:rx_corrected_bits_phy"] = rng.randint(0, 3)
    for k, v in base.items():
        B[k] = v
    for k, v in delta.items():
        D[k] = v
    nic.ib_b = {k[3:]: B[k] for k in B if k.startswith("ib:")}
    nic.ib = {k[3:]: B[k] + D[k] for k in B if k.startswith("ib:")}
    nic.hw_b = {k[3:]: B[k] for k in B if k.startswith("hw:")}
    nic.hw = {k[3:]: B[k] + D[k] for k in B if k.startswith("hw:")}
    nic.eth_b = {k[4:]: B[k] for k in B if k.startswith("eth:")}
    nic.eth = {k[4:]: B[k] + D[k] for k in B if k.startswith("eth:")}


# ----------------------------------------------------------------------------------------------
# renderers: sysfs, lspci, nvidia-smi -q, nvml.json, kernel logs, ethtool, ibstat, top
# ----------------------------------------------------------------------------------------------


def aer_cor_text(c):
    names = ["Receiver Error", "Bad TLP", "Bad DLLP", "RELAY_NUM Rollover", "Replay Timer Timeout",
             "Advisory Non-Fatal", "Corrected Internal Error", "Header Log Overflow"]
    lines = [f"{n} {c.get(n, 0)}" for n in names]
    lines.append(f"TOTAL_ERR_COR {sum(c.get(n, 0) for n in names)}")
    return "\n".join(lines) + "\n"


AER_UNCOR = ["Undefined", "Data Link Protocol", "Surprise Down Error", "Poisoned TLP",
             "Flow Control Protocol", "Completion Timeout", "Completer Abort", "Unexpected Completion",
             "Receiver Overflow", "Malformed TLP", "ECRC", "Unsupported Request", "ACS Violation",
             "Uncorrectable Internal Error", "MC Blocked TLP", "AtomicOp Egress Blocked",
             "TLP Prefix Blocked Error"]


def aer_uncor_text(c, total_name):
    lines = [f"{n} {c.get(n, 0)}" for n in AER_UNCOR]
    lines.append(f"{total_name} {sum(c.values())}")
    return "\n".join(lines) + "\n"


def write_pci_link(case, prefix, bdf, gen, gen_max, width, width_max, old_kernel=False, lost=False):
    sp = GEN_SYSFS_OLD if old_kernel else GEN_SYSFS
    d = f"{prefix}sys/bus/pci/devices/{bdf}/"
    if lost:
        case.write(d + "current_link_speed", "Unknown\n")
        case.write(d + "max_link_speed", "Unknown\n")
        case.write(d + "current_link_width", "63\n")
        case.write(d + "max_link_width", "63\n")
        return
    case.write(d + "current_link_speed", sp[gen] + "\n")
    case.write(d + "max_link_speed", sp[gen_max] + "\n")
    case.write(d + "current_link_width", f"{width}\n")
    case.write(d + "max_link_width", f"{width_max}\n")


def lspci_gpu(g, rng, style):
    bus = f"{g.bus:02x}:00.0"
    name = "NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)" if style == "named" else \
        "NVIDIA Corporation Device 2330 (rev a1)"
    if g.lost:
        return (f"{bus} 3D controller: {name.replace(' (rev a1)', '')} (rev ff) (prog-if ff)\n"
                f"\t!!! Unknown header type 7f\n"
                f"\tPhysical Slot: {g.index + 1}\n"
                f"\tKernel driver in use: nvidia\n"
                f"\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n\n")
    sp_ok = "ok" if g.gen == g.gen_max else "downgraded"
    w_ok = "ok" if g.width == g.width_max else "downgraded"
    ce = "RxErr+ BadTLP+" if sum(g.aer_cor.values()) else "RxErr- BadTLP-"
    mem = 0x20000000000 + g.bus * 0x2000000000
    return f"""{bus} 3D controller: {name}
\tSubsystem: NVIDIA Corporation Device 16c1
\tPhysical Slot: {g.index + 1}
\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+
\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-
\tLatency: 0
\tInterrupt: pin A routed to IRQ {rng.randint(16, 18)}
\tNUMA node: {0 if g.bus < 0x80 else 1}
\tIOMMU group: {40 + g.index * 3}
\tRegion 0: Memory at {0xa0000000 + g.index * 0x4000000:x} (32-bit, non-prefetchable) [size=16M]
\tRegion 1: Memory at {mem:x} (64-bit, prefetchable) [size=128G]
\tRegion 3: Memory at {mem + 0x2000000000:x} (64-bit, prefetchable) [size=32M]
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
\t\tDevCap:\tMaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us
\t\t\tExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 0W
\t\tDevCtl:\tCorrErr- NonFatalErr+ FatalErr+ UnsupReq-
\t\t\tRlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-
\t\t\tMaxPayload 256 bytes, MaxReadReq 4096 bytes
\t\tDevSta:\tCorrErr{'+' if sum(g.aer_cor.values()) else '-'} NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-
\t\tLnkCap:\tPort #0, Speed {GEN_LSPCI[g.gen_max]}, Width x{g.width_max}, ASPM L1, Exit Latency L1 <4us
\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+
\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-
\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-
\t\tLnkSta:\tSpeed {GEN_LSPCI[g.gen]} ({sp_ok}), Width x{g.width} ({w_ok})
\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+ 2Retimers+ DRS-
\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-
\tCapabilities: [1b8 v2] Advanced Error Reporting
\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tUEMsk:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tCESta:\t{ce} BadDLLP- Rollover- Timeout- AdvNonFatalErr-
\t\tCEMsk:\tRxErr+ BadTLP+ BadDLLP+ Rollover+ Timeout+ AdvNonFatalErr+
\tKernel driver in use: nvidia
\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia

"""


def lspci_nic(n, rng):
    bus = f"{n.bus:02x}:00.0"
    cls = "Infiniband controller" if n.ll == "InfiniBand" else "Ethernet controller"
    sp_ok = "ok" if n.gen == n.gen_max else "downgraded"
    w_ok = "ok" if n.width == n.width_max else "downgraded"
    return f"""{bus} {cls}: Mellanox Technologies MT2910 Family [ConnectX-7]
\tSubsystem: Mellanox Technologies Device 0041
\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+
\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-
\tLatency: 0, Cache Line Size: 32 bytes
\tInterrupt: pin A routed to IRQ {rng.randint(16, 18)}
\tNUMA node: {0 if n.bus < 0x80 else 1}
\tRegion 0: Memory at {0x23ffe000000 + n.bus * 0x10000000:x} (64-bit, prefetchable) [size=32M]
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
\t\tDevCap:\tMaxPayload 512 bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited
\t\t\tExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 0W
\t\tDevCtl:\tCorrErr- NonFatalErr+ FatalErr+ UnsupReq-
\t\t\tRlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-
\t\t\tMaxPayload 256 bytes, MaxReadReq 4096 bytes
\t\tDevSta:\tCorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-
\t\tLnkCap:\tPort #0, Speed {GEN_LSPCI[n.gen_max]}, Width x{n.width_max}, ASPM not supported
\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+
\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+
\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-
\t\tLnkSta:\tSpeed {GEN_LSPCI[n.gen]} ({sp_ok}), Width x{n.width} ({w_ok})
\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer- 2Retimers- DRS-
\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-
\tCapabilities: [100 v1] Advanced Error Reporting
\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-
\tKernel driver in use: mlx5_core
\tKernel modules: mlx5_core

"""


def lspci_text(h, rng, style="named", include_nics=True):
    blocks = []
    for g in h.gpus:
        blocks.append((g.bus, lspci_gpu(g, rng, style)))
    if include_nics:
        for n in h.nics:
            blocks.append((n.bus, lspci_nic(n, rng)))
    blocks.sort()
    return "".join(b for _, b in blocks)


def reasons_block(g, old):
    r = g.reasons
    a = lambda bit: "Active" if r & bit else "Not Active"  # noqa: E731
    title = "Clocks Throttle Reasons" if old else "Clocks Event Reasons"
    return f"""    {title}
        Idle                              : {a(0x1)}
        Applications Clocks Setting       : {a(0x2)}
        SW Power Cap                      : {a(0x4)}
        HW Slowdown                       : {a(0x8)}
            HW Thermal Slowdown           : {a(0x40)}
            HW Power Brake Slowdown       : {a(0x80)}
        Sync Boost                        : {a(0x10)}
        SW Thermal Slowdown               : {a(0x20)}
        Display Clock Setting             : {a(0x100)}
"""


def smi_gpu(g, driver, old, rng):
    if g.lost:
        return f"Unable to determine the device handle for GPU{g.nvml_bus}: Unknown Error\n"
    hostmax = "5"
    power_block = (f"""    Power Readings
        Power Management                  : Supported
        Power Draw                        : {g.power:.2f} W
        Power Limit                       : {g.plimit:.2f} W
        Default Power Limit               : 700.00 W
        Enforced Power Limit              : {g.plimit:.2f} W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
""" if old else f"""    GPU Power Readings
        Power Draw                        : {g.power:.2f} W
        Current Power Limit               : {g.plimit:.2f} W
        Requested Power Limit             : {g.plimit:.2f} W
        Default Power Limit               : 700.00 W
        Min Power Limit                   : 200.00 W
        Max Power Limit                   : 700.00 W
    Module Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
        Requested Power Limit             : N/A
        Default Power Limit               : N/A
        Min Power Limit                   : N/A
        Max Power Limit                   : N/A
""")
    procs = "        None\n" if not g.busy else f"""        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : {g.pid or rng.randint(2000, 90000)}
            Type                          : C
            Name                          : /usr/bin/python3
            Used GPU Memory               : {g.fb_used - 420} MiB
"""
    yn = lambda b: "Yes" if b else "No"  # noqa: E731
    gsp = "" if old else f"    GSP Firmware Version                  : {driver}\n"
    return f"""GPU {g.nvml_bus}
    Product Name                          : {GPU_NAME}
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Display Mode                          : Disabled
    Display Active                        : Disabled
    Persistence Mode                      : Enabled
    Addressing Mode                       : None
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Accounting Mode                       : Disabled
    Accounting Mode Buffer Size           : 4000
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : {g.serial}
    GPU UUID                              : {g.uuid}
    Minor Number                          : {g.index}
    VBIOS Version                         : 96.00.89.00.01
    MultiGPU Board                        : No
    Board ID                              : 0x{g.bus:x}00
    Board Part Number                     : 692-2G520-0200-000
    GPU Part Number                       : 2330-885-A1
    FRU Part Number                       : N/A
    Module ID                             : {(g.index * 5) % 8 + 1}
    Inforom Version
        Image Version                     : G520.0200.00.05
        OEM Object                        : 2.1
        ECC Object                        : 7.16
        Power Management Object           : N/A
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
{gsp}    GPU Virtualization Mode
        Virtualization Mode               : None
        Host VGPU Mode                    : N/A
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    IBMNPU
        Relaxed Ordering Mode             : N/A
    PCI
        Bus                               : 0x{g.bus:02X}
        Device                            : 0x00
        Domain                            : 0x0000
        Device Id                         : 0x233010DE
        Bus Id                            : {g.nvml_bus}
        Sub System Id                     : 0x16C110DE
        GPU Link Info
            PCIe Generation
                Max                       : {g.gen_max}
                Current                   : {g.gen}
                Device Current            : {g.gen}
                Device Max                : 5
                Host Max                  : {hostmax}
            Link Width
                Max                       : {g.width_max}x
                Current                   : {g.width}x
        Bridge Chip
            Type                          : N/A
            Firmware                      : N/A
        Replays Since Reset               : {g.replay}
        Replay Number Rollovers           : 0
        Tx Throughput                     : {rng.randint(200, 9000) if g.busy else 0} KB/s
        Rx Throughput                     : {rng.randint(200, 40000) if g.busy else 0} KB/s
        Atomic Caps Inbound               : N/A
        Atomic Caps Outbound              : N/A
    Fan Speed                             : N/A
    Performance State                     : P0
{reasons_block(g, old)}    Sparse Operation Mode                 : N/A
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 328 MiB
        Used                              : {g.fb_used} MiB
        Free                              : {81559 - 328 - g.fb_used} MiB
    BAR1 Memory Usage
        Total                             : 131072 MiB
        Used                              : {3 if g.busy else 1} MiB
        Free                              : {131069 if g.busy else 131071} MiB
    Conf Compute Protected Memory Usage
        Total                             : 0 MiB
        Used                              : 0 MiB
        Free                              : 0 MiB
    Compute Mode                          : Default
    Utilization
        Gpu                               : {g.util} %
        Memory                            : {int(g.util * 0.42)} %
        Encoder                           : 0 %
        Decoder                           : 0 %
        JPEG                              : 0 %
        OFA                               : 0 %
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {g.sbe_vol}
            DRAM Uncorrectable            : {g.dbe_vol}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {g.sbe_agg}
            DRAM Uncorrectable            : {g.dbe_agg}
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : {g.remap_corr}
        Uncorrectable Error               : {g.remap_unc}
        Pending                           : {yn(g.remap_pending)}
        Remapping Failure Occurred        : {yn(g.remap_fail)}
        Bank Remap Availability Histogram
            Max                           : {2560 - g.remap_corr - g.remap_unc} bank(s)
            High                          : {g.remap_corr + g.remap_unc} bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : {g.temp} C
        GPU T.Limit Temp                  : N/A
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 87 C
        GPU Target Temperature            : N/A
        Memory Current Temp               : {g.mem_temp} C
        Memory Max Operating Temp         : 95 C
{power_block}    Clocks
        Graphics                          : {g.sm} MHz
        SM                                : {g.sm} MHz
        Memory                            : {g.mem} MHz
        Video                             : {1545 if g.busy else 765} MHz
    Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Default Applications Clocks
        Graphics                          : 1980 MHz
        Memory                            : 2619 MHz
    Deferred Clocks
        Memory                            : N/A
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1545 MHz
    Max Customer Boost Clocks
        Graphics                          : 1980 MHz
    Clock Policy
        Auto Boost                        : N/A
        Auto Boost Default                : N/A
    Voltage
        Graphics                          : {1000.0 if g.busy else 675.0:.3f} mV
    Fabric
        State                             : Completed
        Status                            : Success
    Processes
{procs}
"""


def smi_text(h, t_now, driver, old, rng):
    d = dt(t_now)
    out = ["", "==============NVSMI LOG==============", "",
           f"Timestamp                                 : {d:%a %b %d %H:%M:%S %Y}",
           f"Driver Version                            : {driver}",
           f"CUDA Version                              : {'12.2' if old else '12.4'}", "",
           f"Attached GPUs                             : {len(h.gpus)}"]
    return "\n".join(out) + "\n" + "".join(smi_gpu(g, driver, old, rng) for g in h.gpus)


def nvml_json(h, driver, events=()):
    devs = []
    for g in h.gpus:
        if g.lost:
            devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bus, "error": "GPU is lost"})
            continue
        devs.append({
            "index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bus, "name": GPU_NAME,
            "nvmlDeviceGetCurrPcieLinkGeneration": g.gen, "nvmlDeviceGetMaxPcieLinkGeneration": g.gen_max,
            "nvmlDeviceGetCurrPcieLinkWidth": g.width, "nvmlDeviceGetMaxPcieLinkWidth": g.width_max,
            "nvmlDeviceGetPcieReplayCounter": g.replay,
            "nvmlDeviceGetTemperature": g.temp, "nvmlDeviceGetPowerUsage": int(g.power * 1000),
            "nvmlDeviceGetEnforcedPowerLimit": int(g.plimit * 1000),
            "nvmlDeviceGetClockInfo": {"sm": g.sm, "mem": g.mem},
            "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
            "nvmlDeviceGetCurrentClocksEventReasons": g.reasons,
            "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g.sbe_vol, "uncorrected_volatile": g.dbe_vol},
            "nvmlDeviceGetRemappedRows": {"corrected": g.remap_corr, "uncorrected": g.remap_unc,
                                          "pending": g.remap_pending, "failure": g.remap_fail},
        })
    return {"driver_version": driver, "devices": devs, "events": list(events)}


def render_klog(h, style, seq0=1200):
    out = []
    lines = sorted(h.klog, key=lambda x: x[0])
    for i, (t, prio, text) in enumerate(lines):
        up = t - h.boot
        if style == "plain":
            out.append("[%5d.%06d] %s" % (int(up), int(round((up % 1) * 1e6)) % 1000000, text))
        elif style == "T":
            out.append(f"[{ctime(t)}] {text}")
        elif style == "journal":
            out.append(f"{dt(t):%b %d %H:%M:%S} {h.name} kernel: {text}")
        elif style == "kmsg":
            out.append(f"{prio},{seq0 + i},{int(up * 1e6)},-;{text}")
        else:
            raise ValueError(style)
    return "\n".join(out) + "\n"


def boot_klog(h, rng, driver="550.90.07", mlx=True, gpu_links=True):
    b = h.boot
    h.klog += [
        (b + 0.0, 5, "Linux version 5.15.0-1063-nvidia (buildd@lcy02-amd64-051) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #64-Ubuntu SMP Fri Aug  9 17:13:45 UTC 2024 (Ubuntu 5.15.0-1063.64-nvidia 5.15.158)"),
        (b + 0.000001, 6, "Command line: BOOT_IMAGE=/vmlinuz-5.15.0-1063-nvidia root=UUID=8c1e4d2b-55f1-4a4f-9a1a-2c3f0b8e7d10 ro iommu=pt pci=realloc=off"),
        (b + 21.8, 4, f"nvidia: loading out-of-tree module taints kernel."),
        (b + 22.4, 6, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {driver}  Fri May 31 09:35:42 UTC 2024"),
    ]
    if mlx:
        for n in h.nics:
            t = b + 9.2 + n.bus / 1000.0
            h.klog.append((t, 6, f"mlx5_core {n.bdf}: firmware version: {n.fw}"))
            if n.width_b == n.width_max and n.gen_b == n.gen_max:
                h.klog.append((t + 0.004, 6, f"mlx5_core {n.bdf}: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)"))
            else:
                avail = MBPS[n.gen_b] * n.width_b
                h.klog.append((t + 0.004, 6, f"mlx5_core {n.bdf}: {avail // 1000}.{avail % 1000:03d} Gb/s available PCIe bandwidth, limited by {GEN_SYSFS[n.gen_b]} x{n.width_b} link at 0000:{n.bus - 1:02x}:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)"))
    h.klog.append((b + 24.1, 6, "nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x68000"))


def ethtool_text(d):
    return "NIC statistics:\n" + "".join(f"     {k}: {d[k]}\n" for k in ETH_ORDER if k in d)


def ibstat_text(h, rng):
    out = []
    for n in h.nics:
        guid = "0x" + hashlib.sha1(f"{h.name}{n.ibdev}".encode()).hexdigest()[:16]
        ib = n.ll == "InfiniBand"
        rate = n.rate.split()[0]
        st = {"4: ACTIVE": "Active", "1: DOWN": "Down", "2: INIT": "Initializing"}[n.state]
        ph = n.phys.split(": ")[1]
        out.append(f"""CA '{n.ibdev}'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: {n.fw}
\tHardware version: 0
\tNode GUID: {guid}
\tSystem image GUID: {guid}
\tPort 1:
\t\tState: {st}
\t\tPhysical state: {ph}
\t\tRate: {rate}
\t\tBase lid: {(int(guid[-4:], 16) % 3000) + 1 if ib else 0}
\t\tLMC: 0
\t\tSM lid: {1 if ib else 0}
\t\tCapability mask: {'0xa751e848' if ib else '0x00010000'}
\t\tPort GUID: {guid}
\t\tLink layer: {n.ll}
""")
    return "".join(out)


def write_nic_sys(case, pre, h, before=True, hw=True, ib=True, pci=True, net=True, old_kernel=False,
                  ib_keys=None, hw_keys=None):
    for n in h.nics:
        base = f"{pre}sys/class/infiniband/{n.ibdev}/ports/{n.port}/"
        bbase = f"{pre}before/sys/class/infiniband/{n.ibdev}/ports/{n.port}/"
        case.write(base + "state", n.state + "\n")
        case.write(base + "phys_state", n.phys + "\n")
        case.write(base + "rate", n.rate + "\n")
        case.write(base + "link_layer", n.ll + "\n")
        if ib:
            for k in (ib_keys or n.ib):
                case.write(base + "counters/" + k, f"{n.ib[k]}\n")
                if before:
                    case.write(bbase + "counters/" + k, f"{n.ib_b[k]}\n")
        if hw:
            for k in (hw_keys or n.hw):
                case.write(base + "hw_counters/" + k, f"{n.hw[k]}\n")
                if before:
                    case.write(bbase + "hw_counters/" + k, f"{n.hw_b[k]}\n")
        if net:
            case.write(f"{pre}sys/class/net/{n.netdev}/operstate", "up\n" if n.state == "4: ACTIVE" else "down\n")
            case.write(f"{pre}sys/class/net/{n.netdev}/carrier_changes", f"{n.carrier}\n")
            if before:
                case.write(f"{pre}before/sys/class/net/{n.netdev}/carrier_changes", f"{n.carrier_b}\n")
        if pci:
            write_pci_link(case, pre, n.bdf, n.gen, n.gen_max, n.width, n.width_max, old_kernel)


def write_gpu_sys(case, pre, h, aer=True, before=True, old_kernel=False, uncor=False):
    for g in h.gpus:
        write_pci_link(case, pre, g.bdf, g.gen, g.gen_max, g.width, g.width_max, old_kernel, lost=g.lost)
        if aer:
            d = f"{pre}sys/bus/pci/devices/{g.bdf}/"
            case.write(d + "aer_dev_correctable", aer_cor_text(g.aer_cor))
            if uncor:
                case.write(d + "aer_dev_fatal", aer_uncor_text(g.aer_fatal, "TOTAL_ERR_FATAL"))
                case.write(d + "aer_dev_nonfatal", aer_uncor_text(g.aer_nonfatal, "TOTAL_ERR_NONFATAL"))
            if before:
                case.write(f"{pre}before/sys/bus/pci/devices/{g.bdf}/aer_dev_correctable",
                           aer_cor_text(g.aer_cor_before or g.aer_cor))


def top_text(h, t, rng, rogue=None, ncpu=224):
    d = dt(t)
    up_days = int((t - h.boot) // 86400)
    up_hm = int(((t - h.boot) % 86400) // 60)
    load = h.load1
    l5, l15 = load * rng.uniform(0.9, 1.0), load * rng.uniform(0.7, 0.95)
    procs = []
    for g in h.gpus:
        if not g.busy:
            continue
        procs.append((g.pid, "svc-train", 20, 0, "118.2g", "9.1g", "1.3g", "R", rng.uniform(98, 132),
                      0.4, f"{rng.randint(2800, 3400)}:{rng.randint(10, 59)}.{rng.randint(10, 99)}", "python3"))
        for _ in range(2):
            procs.append((g.pid + rng.randint(40, 900), "svc-train", 20, 0, "41.3g", "3.2g", "512.4m", "S",
                          rng.uniform(6, 24), 0.2, f"{rng.randint(200, 900)}:{rng.randint(10, 59)}.{rng.randint(10, 99)}",
                          "pt_data_worker"))
    if rogue:
        procs.extend(rogue)
    procs.append((rng.randint(3000, 4000), "root", 20, 0, "4.8g", "412.2m", "38.1m", "S", rng.uniform(1, 4), 0.0,
                  "1102:41.22", "nv-hostengine"))
    procs.append((rng.randint(4000, 5000), "root", 20, 0, "2.1g", "120.4m", "31.9m", "S", rng.uniform(0.5, 2), 0.0,
                  "301:11.09", "node_exporter"))
    procs.append((rng.randint(900, 1200), "root", 20, 0, "0", "0", "0", "S", rng.uniform(0.3, 1.2), 0.0,
                  "88:02.51", "kworker/u898:3-mlx5_health0000:1a:00.0"))
    procs.sort(key=lambda p: -p[8])
    busy = sum(p[8] for p in procs) / ncpu
    us = min(95.0, busy * 0.86)
    sy = min(20.0, busy * 0.12)
    idle = max(0.0, 100 - us - sy - 0.4)
    running = sum(1 for p in procs if p[7] == "R")
    head = f"""top - {d:%H:%M:%S} up {up_days} days, {up_hm // 60:2d}:{up_hm % 60:02d},  0 users,  load average: {load:.2f}, {l5:.2f}, {l15:.2f}
Tasks: {1700 + len(procs)} total, {running:3d} running, {1699 + len(procs) - running} sleeping,   0 stopped,   0 zombie
%Cpu(s): {us:4.1f} us, {sy:4.1f} sy,  0.0 ni, {idle:4.1f} id,  0.2 wa,  0.0 hi,  0.2 si,  0.0 st
MiB Mem : 2063727.1 total, 1190321.4 free, 402134.2 used, 471271.5 buff/cache
MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1661592.9 avail Mem

    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
"""
    body = "".join(f"{p[0]:7d} {p[1]:<9.9} {p[2]:3d} {p[3]:3d} {p[4]:>7} {p[5]:>6} {p[6]:>6} {p[7]} {p[8]:5.1f} {p[9]:5.1f} {p[10]:>9} {p[11]}\n"
                   for p in procs)
    return head + body


def psi_text(some10, some60, some300, total_us, full=None):
    full = full or (some10 * 0.0, some60 * 0.0, some300 * 0.0, 0)
    return (f"some avg10={some10:.2f} avg60={some60:.2f} avg300={some300:.2f} total={int(total_us)}\n"
            f"full avg10={full[0]:.2f} avg60={full[1]:.2f} avg300={full[2]:.2f} total={int(full[3])}\n")


# ----------------------------------------------------------------------------------------------
# OpenMetrics
# ----------------------------------------------------------------------------------------------


class OM:
    def __init__(self, ts_fmt="int"):
        self.fams = []  # (name, type, help, [lines])
        self.ts_fmt = ts_fmt

    def family(self, name, typ, help_):
        f = (name, typ, help_, [])
        self.fams.append(f)
        return f[3]

    def ts(self, t):
        return str(int(t)) if self.ts_fmt == "int" else f"{t:.3f}"

    def text(self):
        out = []
        for name, typ, help_, lines in self.fams:
            if not lines:
                continue
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {typ}")
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"


def fmt_labels(d):
    return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}"


def dcgm_labels(h, g, host_label="Hostname", driver=None):
    d = {"gpu": str(g.index), "UUID": g.uuid, "pci_bus_id": g.nvml_bus, "device": f"nvidia{g.index}",
         "modelName": GPU_NAME, host_label: h.name}
    if driver:
        d["DCGM_FI_DRIVER_VERSION"] = driver
    return fmt_labels(d)


DCGM_HELP = {
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
    "DCGM_FI_DEV_MEM_CLOCK": ("gauge", "Memory clock frequency (in MHz)."),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C)."),
    "DCGM_FI_DEV_MEMORY_TEMP": ("gauge", "Memory temperature (in C)."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %)."),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    "DCGM_FI_PROF_SM_ACTIVE": ("gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("gauge", "Current clock throttle reasons."),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("gauge", "Current clock event reasons."),
    "DCGM_FI_DEV_THERMAL_VIOLATION": ("counter", "Throttling duration due to thermal constraints (in ns)."),
    "DCGM_FI_DEV_POWER_VIOLATION": ("counter", "Throttling duration due to power constraints (in ns)."),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": ("counter", "Total number of single-bit volatile ECC errors."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for correctable errors"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for uncorrectable errors"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink flow-control CRC errors."),
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink retries."),
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink recovery errors."),
    "DCGM_FI_DEV_FB_USED": ("gauge", "Framebuffer memory used (in MiB)."),
}


def dcgm_om(hosts, fields, t0, t1, step, fn, host_label="Hostname", driver=None, ts_fmt="int",
            counter_type=None):
    """fn(h, g, field, t) -> value (None = no sample)."""
    om = OM(ts_fmt)
    times = []
    t = t0
    while t <= t1:
        times.append(t)
        t += step
    for f in fields:
        typ, help_ = DCGM_HELP[f]
        if typ == "counter" and counter_type:
            typ = counter_type
        lines = om.family(f, typ, help_)
        for h in hosts:
            for g in h.gpus:
                lab = dcgm_labels(h, g, host_label, driver)
                for tt in times:
                    v = fn(h, g, f, tt)
                    if v is None:
                        continue
                    vs = f"{v:.3f}" if isinstance(v, float) else str(v)
                    lines.append(f"{f}{lab} {vs} {om.ts(tt)}")
    return om.text()


def smooth(t, t_on, ramp):
    """0 before t_on, ramps to 1 over `ramp` seconds."""
    if t <= t_on:
        return 0.0
    return min(1.0, (t - t_on) / ramp) if ramp > 0 else 1.0


# ----------------------------------------------------------------------------------------------
# steps.csv (synchronous data-parallel physics)
# ----------------------------------------------------------------------------------------------


def make_steps(rng, nranks, t0, t1, every, step0, comp, comm, slow=None, comm_f=None, gap=None,
               cols=("compute_s",), restarts=(), stop_at=None, checksum=None, loss0=2.3,
               drop=0.0, missing=None, spike=None):
    """One row per rank per logged step.

    slow(t, r) -> compute multiplier; comm_f(t) -> exposed-comm multiplier; gap(t) -> idle seconds
    between two consecutive steps (every rank waits, e.g. for input data or a checkpoint).
    restarts: [(t_crash, t_resume, resume_step)]. missing(t, r) -> True to drop the row.
    """
    rows = []
    t = t0
    step = step0
    rs = sorted(restarts)
    ri = 0
    period = None
    while t < t1:
        if stop_at is not None and t >= stop_at:
            break
        if ri < len(rs) and t >= rs[ri][0]:
            t = rs[ri][1]
            step = rs[ri][2]
            ri += 1
            continue
        cf = comm_f(t) if comm_f else 1.0
        cs = []
        for r in range(nranks):
            c = comp * (1 + rng.gauss(0, 0.004))
            if slow:
                c *= slow(t, r)
            cs.append(c)
        mx = max(cs)
        cm = comm * cf * (1 + abs(rng.gauss(0, 0.012)))
        end = t + mx + cm
        lossbase = loss0 - 0.08 * math.log1p(max(0, step - step0) / 500.0)
        if spike:
            lossbase += spike(step)
        gn = 0.28 + 0.04 * math.sin(step / 97.0) + abs(rng.gauss(0, 0.01))
        if spike:
            gn += 6 * spike(step)
        for r in range(nranks):
            if missing and missing(t, r):
                continue
            if drop and rng.random() < drop:
                continue
            s = t + abs(rng.gauss(0, 0.0015))
            d = end + rng.uniform(0.0002, 0.0025) - s
            row = {"step": step, "rank": r, "start_unix": f"{s:.3f}", "duration_s": f"{d:.4f}"}
            if "compute_s" in cols:
                row["compute_s"] = f"{cs[r]:.4f}"
            if "loss" in cols:
                row["loss"] = f"{lossbase + rng.gauss(0, 0.035):.4f}"
            if "grad_norm" in cols:
                row["grad_norm"] = f"{gn:.4f}"
            if "param_checksum" in cols:
                row["param_checksum"] = checksum(step, r)
            rows.append(row)
        g = 0.035 + (gap(t) if gap else 0.0)
        period = (end - t) + g
        t = t + every * period * (1 + rng.gauss(0, 0.002))
        step += every
    return rows


def steps_csv(rows, cols, order="step", rng=None):
    header = ["step", "rank", "start_unix", "duration_s"] + [c for c in cols]
    if order == "rank":
        rows = sorted(rows, key=lambda r: (r["rank"], float(r["start_unix"])))
    elif order == "shuffle":
        rows = list(rows)
        rng.shuffle(rows)
    out = [",".join(header)]
    for r in rows:
        out.append(",".join(str(r.get(c, "")) for c in header))
    return "\n".join(out) + "\n"


def alert(name, labels, summary, starts, desc=""):
    lab = {"alertname": name, "severity": "warning"}
    lab.update(labels)
    fp = hashlib.sha1(json.dumps(lab, sort_keys=True).encode()).hexdigest()[:16]
    return {"status": "firing", "labels": lab,
            "annotations": {"summary": summary, "description": desc or summary},
            "startsAt": iso(starts), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": f"http://prometheus.mon.internal:9090/graph?g0.expr=job%3Atrain_step_seconds%3Aavg5m&g0.tab=1",
            "fingerprint": fp}


def incident(case, cid, title, w0, w1, job, ranks, gpn, reported="", alerts=None):
    d = {"schema": "forensic.bundle/v1", "id": cid, "title": title,
         "window": {"start": iso(w0), "end": iso(w1)},
         "job": {"name": job, "ranks": ranks, "gpus_per_node": gpn},
         "reported": reported}
    if alerts:
        d["alerts"] = alerts
    case.json("incident.json", d)


def nccl_init_lines(hosts, ranks, t, version="2.21.5+cuda12.4", hca=None, ll="IB", oob="bond0",
                    gdr=True, extra=(), every_host=True):
    """A compact NCCL_DEBUG=INFO init excerpt (local rank 0 of each host)."""
    out = []
    d = dt(t)
    out.append(f"NCCL version {version}")
    nr = len(ranks)
    for hi, h in enumerate(hosts):
        if h.spare:
            continue
        pid = 2000 + (hi * 7919) % 60000
        ip = h.ip or f"10.{20 + hi // 200}.{(hi // 50) % 4}.{10 + hi % 200}"
        pre = f"{h.name}:{pid}:{pid + 41} [0]"
        out.append(f"{h.name}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using {oob}:{ip}<0>")
        for e in extra:
            out.append(f"{pre} NCCL INFO {e}")
        if hca is None:
            devs = " ".join(f"[{i}]{n.ibdev}:1/{ll}" for i, n in enumerate(h.nics))
        else:
            devs = " ".join(f"[{i}]{n}:1/{ll}" for i, n in enumerate(hca))
        if devs:
            out.append(f"{pre} NCCL INFO NET/IB : Using {devs} [RO]; OOB {oob}:{ip}<0>")
        out.append(f"{pre} NCCL INFO Using network IB")
        rk = [i for i, (hh, g) in enumerate(ranks) if hh is h and g == 0]
        if rk:
            r = rk[0]
            out.append(f"{pre} NCCL INFO comm 0x{0x55e0a1000000 + hi * 0x1f3a0:x} rank {r} nranks {nr} cudaDev 0 nvmlDev 0 busId {h.gpus[0].bus:x}000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE")
        if not every_host:
            break
    return out


# ----------------------------------------------------------------------------------------------
# job-log helpers
# ----------------------------------------------------------------------------------------------


def megatron_log(rows, rank=0, every=1, total=500000, gbs=512, lr=1.5e-4, prefix=""):
    mine = sorted((r for r in rows if r["rank"] == rank), key=lambda r: float(r["start_unix"]))
    out = []
    for i, r in enumerate(mine):
        if i % every:
            continue
        t = float(r["start_unix"]) + float(r["duration_s"])
        loss = float(r.get("loss") or 2.0)
        gn = float(r.get("grad_norm") or 0.3)
        out.append(f"{prefix} [{dt(t):%Y-%m-%d %H:%M:%S}] iteration {r['step']:>8}/{total:>8} | consumed samples: "
                   f"{r['step'] * gbs:>12} | elapsed time per iteration (ms): {float(r['duration_s']) * 1000 + 35:.1f} | "
                   f"learning rate: {lr:.3E} | global batch size: {gbs:>5} | lm loss: {loss:.6E} | loss scale: 1.0 | "
                   f"grad norm: {gn:.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
    return out


def glog_ts(t):
    d = dt(t)
    return f"{d:%m%d %H:%M:%S}.{int((t % 1) * 1e9):09d}"


def watchdog_lines(ranks_idx, t_fire, seq, timeout_ms=600000, op="ALLREDUCE", numel=262144000, line=632):
    out = []
    for r in ranks_idx:
        tt = t_fire + 0.003 * (r % 17)
        out.append(f"[rank{r}]:[E{glog_ts(tt)} ProcessGroupNCCL.cpp:{line}] [Rank {r}] Watchdog caught collective "
                   f"operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, "
                   f"Timeout(ms)={timeout_ms}) ran for {timeout_ms + 20 + r % 9} milliseconds before timing out.")
    return out


def tabulate_simple(headers, rows):
    """tabulate(tablefmt="simple") as sonic-utilities prints it: 2-space gaps, right-aligned cells."""
    cells = [[str(x) for x in r] for r in rows]
    w = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w[i]) for i, h in enumerate(headers)).rstrip(),
           "  ".join("-" * w[i] for i in range(len(headers)))]
    for r in cells:
        out.append("  ".join(c.rjust(w[i]) for i, c in enumerate(r)))
    return "\n".join(out) + "\n"


def sonic_pfc_counters(rx, tx):
    """rx/tx: {port: [pfc0..pfc7]} -> `show pfc counters` (pfcstat)."""
    def table(kind, d):
        return tabulate_simple([f"Port {kind}"] + [f"PFC{i}" for i in range(8)],
                               [[p] + [f"{v:,}" for v in vals] for p, vals in d.items()])
    return table("Rx", rx) + "\n" + table("Tx", tx)


def sonic_pfcwd_stats(rows):
    """rows: [(queue, status, det, res, txok, txdrop, rxok, rxdrop, ltxok, ltxdrop, lrxok, lrxdrop)]"""
    hdr = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
           "RX LAST OK/DROP"]
    return tabulate_simple(hdr, [[q, st, f"{det}/{res}", f"{a}/{b}", f"{c}/{d}", f"{e}/{f}", f"{g}/{h}"]
                                 for q, st, det, res, a, b, c, d, e, f, g, h in rows])


def human_bps(bps):
    for unit, div in (("GB/s", 1e9), ("MB/s", 1e6), ("KB/s", 1e3)):
        if bps >= div:
            return f"{bps / div:.2f} {unit}"
    return f"{bps:.2f} B/s"


def sonic_intf_counters(rows):
    """rows: [(iface, state, rx_ok, rx_bps, rx_util, rx_err, rx_drp, tx_ok, tx_bps, tx_util, tx_err, tx_drp)]"""
    hdr = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_BPS",
           "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]
    return tabulate_simple(hdr, [[i, st, f"{rok:,}", human_bps(rbps), f"{ru:.2f}%", f"{rerr:,}", f"{rdrp:,}", "0",
                                  f"{tok:,}", human_bps(tbps), f"{tu:.2f}%", f"{terr:,}", f"{tdrp:,}", "0"]
                                 for (i, st, rok, rbps, ru, rerr, rdrp, tok, tbps, tu, terr, tdrp) in rows])


CASES = []


def register(fn):
    CASES.append(fn)
    return fn


def std_collected(case, h, before, now, boot=True):
    d = {"before": before, "now": now}
    if boot and h.boot is not None:
        d["boot"] = int(h.boot)
    case.json(f"nodes/{h.name}/collected.json", d)


class Sub:
    """Write into nodes/<host>/ of a case."""

    def __init__(self, case, host):
        self.case = case
        self.pre = f"nodes/{host.name}/"

    def write(self, rel, text, gz=False):
        self.case.write(self.pre + rel, text, gz=gz)

    def json(self, rel, obj, gz=False):
        self.case.json(self.pre + rel, obj, gz=gz)


# ================================================================================================
# 1. pcie_downtrain on a GPU (x8 while busy); spare node idles at 2.5 GT/s x16
# ================================================================================================


@register
def case_gpu_downtrain():
    c = Case("ih-07c3", "pcie_downtrain/gpu", 1101)
    rng = c.rng
    names = [f"sjc2-gpu-r07-n{i}.prod" for i in range(1, 7)] + [f"sjc2-gpu-r08-n{i}.prod" for i in range(1, 7)]
    w0, w1 = T("2026-03-03T01:20:00Z"), T("2026-03-03T02:50:00Z")
    hosts = [Host(n, "r07" if "-r07-" in n else "r08", rng, layout="a",
                  boot=w0 - rng.uniform(18, 40) * 86400) for n in names]
    spare = hosts[11]
    spare.idle(rng)
    bad = hosts[3]
    bad.boot = T("2026-03-03T00:58:12Z")
    bg = bad.gpus[3]
    bg.width = 8
    bg.replay, bg.replay_before = 1843, 402
    bg.aer_cor = {"Receiver Error": 1190, "Bad DLLP": 37, "Replay Timer Timeout": 4}
    bg.aer_cor_before = {"Receiver Error": 288, "Bad DLLP": 9, "Replay Timer Timeout": 1}
    # decoys
    hosts[7].gpus[6].aer_cor = {"Receiver Error": 3}          # old, static
    hosts[7].gpus[6].aer_cor_before = {"Receiver Error": 3}
    hosts[7].gpus[6].replay = hosts[7].gpus[6].replay_before = 3
    hosts[1].gpus[7].temp, hosts[1].gpus[7].mem_temp = 79, 86   # warm, no throttle
    for h in hosts:
        for g in h.gpus:
            g.pid = rng.randint(100000, 400000) if g.busy else None

    # explicit placement, not in file order (r08 first), spare holds no rank
    order = hosts[6:11] + hosts[0:6]
    ranks = [(h, g.index) for h in order for g in h.gpus]
    bad_rank = next(i for i, (h, g) in enumerate(ranks) if h is bad and g == 3)
    switches = [{"name": f"sjc2-ib-l{i:02d}", "tier": "leaf",
                 "links": [{"port": f"1/{33 + k}", "peer": f"sjc2-ib-s{k + 1:02d}", "peer_port": f"1/{i}"} for k in range(4)]}
                for i in range(1, 9)]
    for h in hosts:
        for n in h.nics:
            n.switch = f"sjc2-ib-l{int(n.ibdev[-1]) + 1:02d}"
            n.sport = f"1/{hosts.index(h) + 1}"
    c.json("topology.json", topology(hosts, ranks, switches))

    t_stop, t_resume = T("2026-03-03T00:46:10Z"), w0 + 95
    slow = lambda t, r: (1.057 if (t > w0 and r == bad_rank) else 1.0)  # noqa: E731
    commf = lambda t: 1.10 if t > w0 else 1.0  # noqa: E731
    rows = make_steps(rng, len(ranks), T("2026-03-03T00:08:00Z"), w1 - 240, 20, 231400, 3.05, 0.36,
                      slow=slow, comm_f=commf, cols=("compute_s", "loss", "grad_norm"),
                      restarts=[(t_stop, t_resume, 232000)], loss0=1.92)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss", "grad_norm")), gz=True)
    log = [f"[{dt(t_resume - 60):%Y-%m-%d %H:%M:%S}] resuming from checkpoint /ckpt/llm-34b-v3/iter_0232000 (global step 232000)"]
    log += nccl_init_lines(order, ranks, t_resume - 30, extra=["NCCL_IB_TIMEOUT set by environment to 20.",
                                                               "NCCL_IB_QPS_PER_CONNECTION set by environment to 2."])
    log += megatron_log(rows, 0, every=3)
    c.write("job/logs/rank0.log", "\n".join(log) + "\n")

    incident(c, "sjc2-inc-24117", "Step time up ~6% since the 01:20 requeue (3.44 s -> 3.66 s), MFU 45% -> 42%",
             w0, w1, "llm-34b-v3", len(ranks), 8,
             reported="Job was requeued at 01:20 after the 00:45 maintenance window (hardware work on one node in "
                      "r07). Throughput never came back. No hardware alerts firing.",
             alerts=[alert("TrainStepTimeRegression", {"job_name": "llm-34b-v3", "cluster": "sjc2"},
                           "llm-34b-v3 step time 6% above 24h median", w0 + 1500)])

    driver = "550.90.07"

    def val(h, g, f, t):
        if h is bad and t < bad.boot + 150:
            return None
        running = t > t_resume + 30
        if f == "DCGM_FI_DEV_GPU_UTIL":
            return 0 if (h.spare or not running) else rng.randint(96, 100)
        if f == "DCGM_FI_DEV_SM_CLOCK":
            return 345 if (h.spare or not running) else 1980
        if f == "DCGM_FI_DEV_POWER_USAGE":
            if h.spare or not running:
                return round(rng.uniform(68, 76), 3)
            return round(g.power + rng.uniform(-25, 25) - (40 if g is bg else 0), 3)
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return (g.temp - (20 if not running and not h.spare else 0)) + rng.randint(-1, 1)
        if f == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
            if g is bg:
                return int(bg.replay_before + (bg.replay - bg.replay_before) * max(0.0, min(1.0, (t - w0) / (w1 - 300 - w0))))
            return g.replay
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_POWER_USAGE",
                                             "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"],
                                      w0 - 600, w1, 120, val, driver=driver), gz=True)

    before, now = w0 + 120, w1 - 300
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is bad:
            h.klog.append((bad.boot + 3.118, 6, f"pci {bg.bdf}: 252.056 Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x8 link at 0000:5c:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)"))
            for k in range(5):
                t = w0 + 300 + k * 911.3
                h.klog += [(t, 4, f"pcieport 0000:5c:00.0: AER: Corrected error received: {bg.bdf}"),
                           (t + 0.0001, 4, f"nvidia {bg.bdf}: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
                           (t + 0.0002, 4, f"nvidia {bg.bdf}:   device [10de:2330] error status/mask=00000001/0000e000"),
                           (t + 0.0003, 4, f"nvidia {bg.bdf}:    [ 0] RxErr                  (First)")]
        if h is hosts[5]:
            tx = w0 - 9 * 86400 - 4100
            h.klog += [(tx, 4, "NVRM: Xid (PCI:0000:3a:00): 13, pid=1553412, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address"),
                       (tx + 0.00004, 4, "NVRM: Xid (PCI:0000:3a:00): 13, pid=1553412, name=python3, Graphics Exception: ESR 0x50e648=0x10000e 0x50e650=0x4 0x50e644=0xd3eff2 0x50e64c=0x17f")]
        s.write("cmd/dmesg.txt", render_klog(h, "plain"))
        s.json("nvml.json", nvml_json(h, driver))
        s.write("cmd/lspci-vv.txt", lspci_text(h, rng, "named"), gz=True)
        for g in h.gpus:
            write_pci_link(c, s.pre, g.bdf, g.gen, g.gen_max, g.width, g.width_max)
            d = f"{s.pre}sys/bus/pci/devices/{g.bdf}/"
            c.write(d + "aer_dev_correctable", aer_cor_text(g.aer_cor))
            c.write(f"{s.pre}before/sys/bus/pci/devices/{g.bdf}/aer_dev_correctable", aer_cor_text(g.aer_cor_before or g.aer_cor))
    c.truth("pcie_downtrain", f"{bad.name}/gpu3")
    return c


# ================================================================================================
# 2. pcie_downtrain on a NIC: retrained x4 after an AER event, cannot drain, transmits PFC
# ================================================================================================


@register
def case_nic_downtrain():
    c = Case("ih-19ad", "pcie_downtrain/nic", 1202)
    rng = c.rng
    names = [f"h100-ord1-{i:03d}" for i in range(17, 33)]
    w0, w1 = T("2026-04-21T14:05:00Z"), T("2026-04-21T15:35:00Z")
    hosts = [Host(n, f"ord1-c{(i // 4) + 3:02d}", rng, layout="a", ll="Ethernet",
                  boot=w0 - rng.uniform(9, 33) * 86400) for i, n in enumerate(names)]
    for j, h in enumerate(hosts):
        for n in h.nics:
            n.switch = f"ord1-rail{n.ibdev[-1]}-lf01"
            n.sport = f"Ethernet{8 * j}"
    switches = [{"name": f"ord1-rail{i}-lf01", "tier": "leaf",
                 "links": [{"port": f"Ethernet{256 + 8 * k}", "peer": f"ord1-sp{k + 1:02d}", "peer_port": f"Ethernet{8 * i}"}
                           for k in range(4)]} for i in range(8)]
    c.json("topology.json", topology(hosts, None, switches))
    bad = hosts[6]
    bn = bad.nics[5]
    t_ev = T("2026-04-21T14:19:42Z")
    bn.width = 4
    ranks = default_ranks(hosts)
    before, now = w0 + 60, w1 - 180
    dur = now - before
    frac = (now - t_ev) / dur
    for h in hosts:
        for n in h.nics:
            if n is bn:
                fill_nic(rng, n, before - h.boot, dur, tx_gbps=128, rx_gbps=120, delta={
                    "eth:tx_prio3_pause": int(2.9e7 * frac), "eth:tx_prio3_pause_duration": int(dur * frac * 1e6 * 0.36),
                    "eth:rx_discards_phy": 18211, "eth:rx_buffer_passed_thres_phy": 221934,
                    "eth:outbound_pci_stalled_wr": 6133204118, "eth:outbound_pci_stalled_wr_events": 881502,
                    "eth:outbound_pci_stalled_rd": 1187301, "eth:outbound_pci_stalled_rd_events": 20344,
                    "eth:rx_prio3_discards": 18211, "eth:rx_prio3_buf_discard": 18211})
            elif n.ibdev == "mlx5_5":  # same rail: the leaf pauses these senders
                fill_nic(rng, n, before - h.boot, dur, tx_gbps=rng.uniform(150, 175), rx_gbps=rng.uniform(150, 175), delta={
                    "eth:rx_prio3_pause": int(rng.uniform(1.1e6, 3.4e6)),
                    "eth:rx_prio3_pause_duration": int(dur * 1e6 * rng.uniform(0.08, 0.19)),
                    "eth:rx_prio3_pause_transition": int(rng.uniform(4e5, 9e5))})
            else:
                fill_nic(rng, n, before - h.boot, dur, tx_gbps=rng.uniform(175, 205), rx_gbps=rng.uniform(175, 205))
    # an unrelated NIC on another rail also sees a pile of pauses (its leaf has a hot spot)
    d = hosts[12].nics[1]
    d.eth["rx_prio3_pause"] += 412331
    d.eth["rx_prio3_pause_duration"] += 9_812_004

    slow = None
    commf = lambda t: 1.0 + 0.62 * smooth(t, t_ev, 30)  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1800, w1 - 120, 25, 118000, 2.62, 0.51, comm_f=commf,
                      cols=("compute_s",), loss0=1.71)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",), order="rank"), gz=True)
    log = nccl_init_lines(hosts, ranks, w0 - 4000, version="2.23.4+cuda12.6", ll="RoCE",
                          extra=["NCCL_IB_GID_INDEX set by environment to 3.", "NCCL_IB_TC set by environment to 106."])
    c.write("job/logs/nccl-init.log", "\n".join(log) + "\n")
    incident(c, "ord1-20260421-07", "all-reduce time roughly doubled on llama-ft-405b since ~14:20; loss curve fine",
             w0, w1, "llama-ft-405b", len(ranks), 8,
             reported="nccl-tests on a spare pod look normal. Nobody touched the fabric today.")

    driver = "550.54.15"
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is bad:
            up = "0000:bb:00.0"
            h.klog += [
                (t_ev, 3, f"pcieport {up}: AER: Uncorrected (Non-Fatal) error received: {bn.bdf}"),
                (t_ev + 0.00002, 3, f"mlx5_core {bn.bdf}: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)"),
                (t_ev + 0.00003, 3, f"mlx5_core {bn.bdf}:   device [15b3:1021] error status/mask=00004000/00000000"),
                (t_ev + 0.00004, 3, f"mlx5_core {bn.bdf}:    [14] CmpltTO                (First)"),
                (t_ev + 0.9, 6, f"mlx5_core {bn.bdf}: mlx5_pci_err_detected Device state = 1 health sensors: 1 pci_status: 1. Enter, pci channel state = 2"),
                (t_ev + 2.4, 6, f"pcieport {up}: AER: Root Port link has been reset (0)"),
                (t_ev + 3.1, 6, f"mlx5_core {bn.bdf}: {MBPS[5] * 4 // 1000}.{MBPS[5] * 4 % 1000:03d} Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x4 link at {up} (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)"),
                (t_ev + 4.0, 6, f"mlx5_core {bn.bdf}: mlx5_pci_resume Device state = 1 health sensors: 1 pci_status: 1. Enter"),
                (t_ev + 4.2, 6, f"pcieport {up}: AER: device recovery successful"),
            ]
        s.write("cmd/dmesg.txt", render_klog(h, "journal"))
        s.json("nvml.json", nvml_json(h, driver))
        s.write("cmd/lspci-vv.txt", lspci_text(h, rng, "plain"), gz=True)
        for n in h.nics:
            s.write(f"cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth), gz=True)
            s.write(f"before/cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth_b), gz=True)
            base = f"sys/class/infiniband/{n.ibdev}/ports/1/"
            for k in ("state", "phys_state", "rate", "link_layer"):
                s.write(base + k, {"state": n.state, "phys_state": n.phys, "rate": n.rate, "link_layer": n.ll}[k] + "\n")
            for k in ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"):
                s.write(base + "hw_counters/" + k, f"{n.hw[k]}\n")
                s.write("before/" + base + "hw_counters/" + k, f"{n.hw_b[k]}\n")
            write_pci_link(c, s.pre, n.bdf, n.gen, n.gen_max, n.width, n.width_max)
            write_pci_link(c, s.pre + "before/", n.bdf, n.gen_b, n.gen_max, n.width_b, n.width_max)
        s.write("cmd/ibstat.txt", ibstat_text(h, rng))
    # switch view of rail 5 and a healthy rail for comparison
    for rail in (5, 2):
        rx, tx = {}, {}
        for j, h in enumerate(hosts):
            p = f"Ethernet{8 * j}"
            n = h.nics[rail]
            rxv = (n.eth["tx_prio3_pause"]) if n is bn else n.eth["tx_prio3_pause"]
            rx[p] = [0, 0, 0, rxv, 0, 0, 0, 0]
            tx[p] = [0, 0, 0, n.eth["rx_prio3_pause"], 0, 0, 0, 0]
        for k in range(4):
            rx[f"Ethernet{256 + 8 * k}"] = [0, 0, 0, rng.randint(1000, 9000), 0, 0, 0, 0]
            tx[f"Ethernet{256 + 8 * k}"] = [0, 0, 0, rng.randint(2e5, 9e5) if rail == 5 else rng.randint(1000, 9000), 0, 0, 0, 0]
        c.write(f"switches/ord1-rail{rail}-lf01/cmd/show-pfc-counters.txt", sonic_pfc_counters(rx, tx))
        wd = [(f"Ethernet{8 * j}:3", "operational", 0, 0, rng.randint(10 ** 9, 4 * 10 ** 9), 0, rng.randint(10 ** 9, 4 * 10 ** 9), 0, 0, 0, 0, 0)
              for j in range(len(hosts))]
        c.write(f"switches/ord1-rail{rail}-lf01/cmd/show-pfcwd-stats.txt", sonic_pfcwd_stats(wd))
    # node_exporter RDMA counters
    om = OM("int")
    fam_rx = om.family("node_infiniband_port_data_received_bytes", "counter",
                       "Number of data octets received on all links")
    fam_tx = om.family("node_infiniband_port_data_transmitted_bytes", "counter",
                       "Number of data octets transmitted on all links")
    fam_w = om.family("node_infiniband_port_transmit_wait_total", "unknown",
                      "Number of ticks during which the port had data to transmit but no data was sent")
    for h in hosts:
        for n in h.nics:
            lab = fmt_labels({"device": n.ibdev, "instance": f"{h.name}:9100", "job": "node", "port": "1"})
            rxb = n.ib_b["port_rcv_data"] * 4
            txb = n.ib_b["port_xmit_data"] * 4
            wt = n.ib_b["port_xmit_wait"]
            t = w0 - 1200
            while t <= w1:
                after = t > t_ev
                if n is bn:
                    gr, gt = (118, 126) if after else (196, 196)
                    ww = 90000 if after else 1200
                elif n.ibdev == "mlx5_5":
                    gr = gt = 160 if after else 196
                    ww = 9000 if after else 1200
                else:
                    gr = gt = 168 if after else 196
                    ww = 1400
                rxb += int(180 * gr * 1e9 / 8 * rng.uniform(0.97, 1.03))
                txb += int(180 * gt * 1e9 / 8 * rng.uniform(0.97, 1.03))
                wt += int(180 * ww * rng.uniform(0.8, 1.2))
                fam_rx.append(f"node_infiniband_port_data_received_bytes_total{lab} {rxb} {int(t)}")
                fam_tx.append(f"node_infiniband_port_data_transmitted_bytes_total{lab} {txb} {int(t)}")
                fam_w.append(f"node_infiniband_port_transmit_wait_total{lab} {wt} {int(t)}")
                t += 180
    c.write("metrics/node-rdma.om", om.text(), gz=True)
    c.truth("pcie_downtrain", f"{bad.name}/{bn.ibdev}")
    return c


# ================================================================================================
# 3. pfc_pause_storm: one RoCE NIC transmits pauses continuously; PCIe is fine
# ================================================================================================


@register
def case_pfc_storm():
    c = Case("ih-2d58", "pfc_pause_storm", 1303)
    rng = c.rng
    names = [f"ip-10-44-{r}-{n}" for r in (3, 4, 5, 6) for n in range(11, 16)]
    w0, w1 = T("2026-06-09T07:40:00Z"), T("2026-06-09T08:45:00Z")
    hosts = [Host(n, f"rk{n.split('-')[3]}", rng, layout="b", ll="Ethernet",
                  boot=w0 - rng.uniform(5, 60) * 86400, ip=n[3:].replace("-", ".")) for n in names]
    for h in hosts:
        rk = h.name.split("-")[3]
        k = int(h.name.split("-")[4]) - 11
        for n in h.nics:
            n.switch = f"tor-44-{rk}"
            n.sport = f"Ethernet{8 * (k * 8 + int(n.ibdev[-1]))}"
    switches = [{"name": f"tor-44-{rk}", "tier": "leaf",
                 "links": [{"port": f"Ethernet{320 + 8 * k}", "peer": f"agg-44-{k + 1}", "peer_port": f"Ethernet{8 * (rk - 3)}"}
                           for k in range(8)]} for rk in (3, 4, 5, 6)]
    c.json("topology.json", topology(hosts, None, switches))
    bad = hosts[12]            # ip-10-44-5-13
    bn = bad.nics[2]
    t_on = T("2026-06-09T07:52:37Z")
    ranks = default_ranks(hosts)
    before, now = w0 + 30, w1 - 240
    dur = now - before
    son = now - t_on
    for h in hosts:
        same_leaf = h.rack == bad.rack
        for n in h.nics:
            if n is bn:
                fill_nic(rng, n, before - h.boot, dur, 9, 61, delta={
                    "eth:tx_prio3_pause": int(son * 262000), "eth:tx_prio3_pause_duration": int(son * 1e6 * 0.87),
                    "eth:tx_pause_storm_warning_events": 41, "eth:tx_pause_storm_error_events": 3,
                    "eth:rx_discards_phy": 1204117, "eth:rx_prio3_discards": 1204117,
                    "eth:rx_buffer_passed_thres_phy": 5_821_330})
            elif same_leaf:
                fill_nic(rng, n, before - h.boot, dur, 58, 60, delta={
                    "eth:rx_prio3_pause": int(son * rng.uniform(700, 3100)),
                    "eth:rx_prio3_pause_duration": int(son * 1e6 * rng.uniform(0.35, 0.62)),
                    "eth:rx_prio3_pause_transition": int(son * rng.uniform(300, 1300))})
            else:
                fill_nic(rng, n, before - h.boot, dur, 62, 62, delta={
                    "eth:rx_prio3_pause": int(son * rng.uniform(40, 240)),
                    "eth:rx_prio3_pause_duration": int(son * 1e6 * rng.uniform(0.03, 0.12)),
                    "eth:rx_prio3_pause_transition": int(son * rng.uniform(20, 110))})
    commf = lambda t: 1.0 + 3.4 * smooth(t, t_on, 90)  # noqa: E731
    t_crash, t_res = T("2026-06-09T08:21:40Z"), T("2026-06-09T08:31:05Z")
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 200, 20, 40210, 1.84, 0.41, comm_f=commf,
                      cols=("loss",), restarts=[(t_crash, t_res, 41000)], loss0=2.05, drop=0.004)
    c.write("job/steps.csv", steps_csv(rows, ("loss",), order="shuffle", rng=rng), gz=True)
    # job log: completion errors at peers + watchdog
    lines = nccl_init_lines(hosts, ranks, w0 - 7200, version="2.23.4+cuda12.6", ll="RoCE", oob="eth0",
                            extra=["NCCL_IB_GID_INDEX set by environment to 3."], every_host=False)
    tw = t_crash - 601
    for k, (h, ni) in enumerate([(hosts[2], 2), (hosts[7], 2), (hosts[17], 2)]):
        n = h.nics[ni]
        pid = 30000 + 17 * k
        lines.append("")
        lines.append(f"{h.name}:{pid}:{pid + 388} [{ni}] transport/net_ib.cc:1695 NCCL WARN NET/IB: Got completion from peer "
                     f"{bad.ip}<{51200 + 37 * k}> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
                     f"::ffff:{h.ip} remoteGids::ffff:{bad.ip} hca {n.ibdev}")
        lines.append(f"{h.name}:{pid}:{pid + 388} [{ni}] NCCL INFO transport/net.cc:1298 -> 6")
        lines.append(f"{h.name}:{pid}:{pid + 388} [{ni}] NCCL INFO proxy.cc:694 -> 6")
    lines += watchdog_lines([0, 1, 17, 42, 101, 155], t_crash - 2, 88231)
    lines.append(f"[rank0]:[E{glog_ts(t_crash)} ProcessGroupNCCL.cpp:698] [Rank 0] To avoid data inconsistency, we are taking the entire process down.")
    c.write("job/logs/job-8831.log", "\n".join(lines) + "\n")
    incident(c, "INC-55120", "Step time 2-4x since ~07:53, one NCCL crash at 08:21, resumed but still slow",
             w0, w1, "mm-encoder-pt", len(ranks), 8, reported="")
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        for n in h.nics:
            s.write(f"cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth), gz=True)
            s.write(f"before/cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth_b), gz=True)
            write_pci_link(c, s.pre, n.bdf, n.gen, n.gen_max, n.width, n.width_max)
            s.write(f"sys/class/net/{n.netdev}/operstate", "up\n")
            s.write(f"sys/class/net/{n.netdev}/carrier_changes", f"{n.carrier}\n")
    for rk in (3, 4, 5, 6):
        leaf_hosts = [h for h in hosts if h.rack == f"rk{rk}"]
        rx, tx, wd = {}, {}, []
        for h in leaf_hosts:
            for n in h.nics:
                rx[n.sport] = [0, 0, 0, n.eth["tx_prio3_pause"], 0, 0, 0, 0]
                tx[n.sport] = [0, 0, 0, n.eth["rx_prio3_pause"], 0, 0, 0, 0]
                if n is bn:
                    wd.append((f"{n.sport}:3", "stormed", 4, 3, 0, 81299125, 0, 0, 0, 20211457, 0, 0))
                else:
                    wd.append((f"{n.sport}:3", "operational", 0, 0, rng.randint(10 ** 8, 10 ** 9), 0,
                               rng.randint(10 ** 8, 10 ** 9), 0, 0, 0, 0, 0))
        for k in range(8):
            rx[f"Ethernet{320 + 8 * k}"] = [0, 0, 0, rng.randint(10, 900) + (int(son * 90) if rk != 5 else 0), 0, 0, 0, 0]
            tx[f"Ethernet{320 + 8 * k}"] = [0, 0, 0, int(son * rng.uniform(60, 120)) if rk == 5 else rng.randint(10, 900), 0, 0, 0, 0]
        c.write(f"switches/tor-44-{rk}/cmd/show-pfc-counters.txt", sonic_pfc_counters(rx, tx))
        c.write(f"switches/tor-44-{rk}/cmd/show-pfcwd-stats.txt", sonic_pfcwd_stats(wd))
    c.truth("pfc_pause_storm", f"{bad.name}/{bn.ibdev}")
    return c


# ================================================================================================
# 4. ecmp_hash_polarization: one leaf's uplinks very unequal
# ================================================================================================


@register
def case_ecmp():
    c = Case("ih-3f0e", "ecmp_hash_polarization", 1404)
    rng = c.rng
    names = [f"gpu{2041 + i}.dc7.internal" for i in range(24)]
    w0, w1 = T("2026-05-05T10:00:00Z"), T("2026-05-05T11:10:00Z")
    hosts = [Host(n, f"c{101 + i // 4}", rng, layout="a", ll="Ethernet",
                  boot=w0 - rng.uniform(3, 70) * 86400) for i, n in enumerate(names)]
    leaves = [f"dc7-lf-{101 + k}" for k in range(6)]
    spines = [f"dc7-sp-{k + 1:02d}" for k in range(4)]
    for i, h in enumerate(hosts):
        for n in h.nics:
            n.switch = leaves[i // 4]
            n.sport = f"Ethernet{8 * ((i % 4) * 8 + int(n.ibdev[-1]))}"
    uplinks = [f"Ethernet{256 + 8 * k}" for k in range(8)]
    switches = [{"name": lf, "tier": "leaf",
                 "links": [{"port": uplinks[k], "peer": spines[k // 2], "peer_port": f"Ethernet{8 * (2 * li + k % 2)}"}
                           for k in range(8)]} for li, lf in enumerate(leaves)]
    switches += [{"name": sp, "tier": "spine", "links": []} for sp in spines]
    c.json("topology.json", topology(hosts, None, switches))
    bad_leaf = leaves[3]
    t_on = T("2026-05-05T10:12:20Z")
    before, now = w0 + 45, w1 - 200
    dur = now - before
    ranks = default_ranks(hosts)
    # uplink tx Gb/s after onset
    hot = {bad_leaf: [389.0, 384.0, 21.0, 16.0, 42.0, 9.0, 31.0, 14.0]}
    mild = {leaves[1]: [171.0, 118.0, 142.0, 160.0, 126.0, 151.0, 139.0, 133.0]}

    def up_rate(lf, k, t):
        base = 148.0 + 6 * math.sin(k + leaves.index(lf))
        if lf in hot and t > t_on:
            return hot[lf][k]
        if lf in mild:
            return mild[lf][k]
        return base * (0.8 if t > t_on else 1.0)
    for i, h in enumerate(hosts):
        lf = leaves[i // 4]
        for n in h.nics:
            if lf == bad_leaf:
                fill_nic(rng, n, before - h.boot, dur, 95, 150, delta={
                    "eth:rx_prio3_pause": int(dur * rng.uniform(900, 2300)),
                    "eth:rx_prio3_pause_duration": int(dur * 1e6 * rng.uniform(0.18, 0.33)),
                    "eth:rx_prio3_pause_transition": int(dur * rng.uniform(300, 900))})
            else:
                fill_nic(rng, n, before - h.boot, dur, 150, 140, delta={
                    "eth:rx_prio3_pause": int(dur * rng.uniform(1, 30))})
            # drops at the hot uplinks show up as go-back-N retransmissions everywhere
            n.hw["packet_seq_err"] += rng.randint(200, 1900)
            n.hw["out_of_sequence"] += rng.randint(2000, 19000)
    commf = lambda t: 1.0 + 0.47 * smooth(t, t_on, 20)  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1200, w1 - 150, 20, 9020, 3.3, 0.62, comm_f=commf,
                      cols=("compute_s",), loss0=2.6)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",)), gz=True)
    incident(c, "dc7-0505-a", "Cross-rack all-reduce slow: nccl-tests busbw ~210 GB/s vs ~370 baseline, step time +25%",
             w0, w1, "rec-dlrm-xl", len(ranks), 8,
             reported="Started after 10:10. Fabric team says no changes were made today; a spine line card "
                      "was replaced yesterday evening.",
             alerts=[alert("TrainStepTimeRegression", {"job_name": "rec-dlrm-xl", "cluster": "dc7"},
                           "rec-dlrm-xl step time 25% above baseline", t_on + 600)])
    # snmp exporter
    om = OM("int")
    f_out = om.family("ifHCOutOctets", "counter", "The total number of octets transmitted out of the interface, including framing characters. - 1.3.6.1.2.1.31.1.1.1.10")
    f_in = om.family("ifHCInOctets", "counter", "The total number of octets received on the interface, including framing characters. - 1.3.6.1.2.1.31.1.1.1.6")
    f_dis = om.family("ifOutDiscards", "counter", "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted - 1.3.6.1.2.1.2.2.1.19")
    state = {}
    for li, lf in enumerate(leaves):
        for k, p in enumerate(uplinks):
            state[(lf, p)] = [rng.randint(10 ** 15, 9 * 10 ** 15), rng.randint(10 ** 15, 9 * 10 ** 15), rng.randint(0, 4000)]
        for j in range(32):
            state[(lf, f"Ethernet{8 * j}")] = [rng.randint(10 ** 15, 9 * 10 ** 15), rng.randint(10 ** 15, 9 * 10 ** 15), 0]
    t = w0 - 1200
    sdt = 120
    while t <= w1:
        for li, lf in enumerate(leaves):
            for k, p in enumerate(uplinks):
                st = state[(lf, p)]
                r_out = up_rate(lf, k, t)
                st[0] += int(sdt * r_out * 1e9 / 8 * rng.uniform(0.98, 1.02))
                st[1] += int(sdt * 140e9 / 8 * (0.8 if t > t_on else 1.0) * rng.uniform(0.97, 1.03))
                if r_out > 370:
                    st[2] += int(sdt * rng.uniform(2500, 5200))
                lab = fmt_labels({"ifAlias": f"{spines[k // 2]}:Ethernet{8 * (2 * li + k % 2)}", "ifDescr": p, "ifIndex": str(1000 + 8 * k + 256),
                                  "ifName": p, "instance": lf, "job": "snmp-sonic"})
                f_out.append(f"ifHCOutOctets{lab} {st[0]} {int(t)}")
                f_in.append(f"ifHCInOctets{lab} {st[1]} {int(t)}")
                f_dis.append(f"ifOutDiscards{lab} {st[2]} {int(t)}")
            for j in range(32):
                p = f"Ethernet{8 * j}"
                st = state[(lf, p)]
                r = (95 if lf == bad_leaf else 150) if t > t_on else 190
                st[0] += int(sdt * r * 1e9 / 8 * rng.uniform(0.97, 1.03))
                st[1] += int(sdt * r * 1e9 / 8 * rng.uniform(0.97, 1.03))
                lab = fmt_labels({"ifAlias": "", "ifDescr": p, "ifIndex": str(1000 + 8 * j), "ifName": p,
                                  "instance": lf, "job": "snmp-sonic"})
                f_out.append(f"ifHCOutOctets{lab} {st[0]} {int(t)}")
                f_in.append(f"ifHCInOctets{lab} {st[1]} {int(t)}")
        t += sdt
    # sort each family by series (OpenMetrics wants one family contiguous; series order free)
    c.write("metrics/snmp-leaf.om", om.text(), gz=True)
    for li, lf in enumerate(leaves):
        rows_i = []
        for j in range(32):
            p = f"Ethernet{8 * j}"
            r = 95e9 if lf == bad_leaf else 150e9
            rows_i.append((p, "U", state[(lf, p)][1] // 4200, r / 8, r / 4e9, 0, 0, state[(lf, p)][0] // 4200, r / 8, r / 4e9, 0, 0))
        for k, p in enumerate(uplinks):
            ro = up_rate(lf, k, now) * 1e9
            rows_i.append((p, "U", state[(lf, p)][1] // 4200, 112e9 / 8, 28.0, 0, 0, state[(lf, p)][0] // 4200, ro / 8, ro / 4e9,
                           0, state[(lf, p)][2]))
        c.write(f"switches/{lf}/cmd/show-interfaces-counters.txt", sonic_intf_counters(rows_i))
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        for n in h.nics:
            s.write(f"cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth), gz=True)
            s.write(f"before/cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth_b), gz=True)
    c.truth("ecmp_hash_polarization", bad_leaf)
    return c


IB_SMALL = ["symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors", "port_xmit_discards",
            "port_xmit_wait", "port_rcv_data", "port_xmit_data", "local_link_integrity_errors",
            "excessive_buffer_overrun_errors"]


# ================================================================================================
# 5. link_degradation: an IB port takes symbol errors, flaps three times, comes back at 2X
# ================================================================================================


@register
def case_link_degradation():
    c = Case("ih-4a92", "link_degradation", 1505)
    rng = c.rng
    names = [f"node{412 + i:04d}.cl3.lab" for i in range(16)]
    w0, w1 = T("2026-07-28T09:00:00Z"), T("2026-07-28T10:30:00Z")
    hosts = [Host(n, f"cl3-r{2 + i // 8}", rng, layout="b", boot=w0 - rng.uniform(6, 50) * 86400,
                  ip=f"10.12.0.{12 + i}") for i, n in enumerate(names)]
    for i, h in enumerate(hosts):
        for n in h.nics:
            n.switch = f"ib-l1-{7 + int(n.ibdev[-1]) // 4:02d}"
            n.sport = f"1/{(int(n.ibdev[-1]) % 4) * 16 + i + 1}"
    switches = [{"name": f"ib-l1-{k:02d}", "tier": "leaf",
                 "links": [{"port": f"1/{65 + j}", "peer": f"ib-l2-{j + 1:02d}", "peer_port": f"1/{k}"} for j in range(4)]}
                for k in (7, 8)]
    c.json("topology.json", topology(hosts, None, switches))
    bad = hosts[7]               # node0419
    bn = bad.nics[6]
    flaps = [T("2026-07-28T09:14:03Z"), T("2026-07-28T09:41:37Z"), T("2026-07-28T10:05:12Z")]
    before, now = w0 + 50, w1 - 220
    dur = now - before
    for h in hosts:
        for n in h.nics:
            if n is bn:
                fill_nic(rng, n, before - h.boot, dur, 88, 84, base={"ib:symbol_error": 0}, delta={
                    "ib:symbol_error": 48213, "ib:link_error_recovery": 9, "ib:link_downed": 3,
                    "ib:port_rcv_errors": 1822, "ib:local_link_integrity_errors": 55,
                    "ib:port_xmit_discards": 3311})
                n.rate = "200 Gb/sec (2X NDR)"
                n.carrier = n.carrier_b + 6
            else:
                fill_nic(rng, n, before - h.boot, dur, 150, 150)
    # decoys: a historic symbol-error count that does not move, an old link_downed
    d1 = hosts[11].nics[1]
    d1.ib_b["symbol_error"] = d1.ib["symbol_error"] = 3
    d2 = hosts[1].nics[4]
    d2.ib_b["link_downed"] = d2.ib["link_downed"] = 1
    ranks = default_ranks(hosts)
    t_crash, t_res = flaps[1] + 600 + 31, T("2026-07-28T10:01:10Z")

    def commf(t):
        if t < flaps[0]:
            return 1.0
        if t < t_res:
            return 1.18
        if abs(t - flaps[2]) < 40:
            return 3.0
        return 1.36
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 150, 20, 77310, 2.2, 0.40, comm_f=commf,
                      cols=("compute_s", "loss"), restarts=[(flaps[1] + 25, t_res, 78400)], loss0=2.2)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss")), gz=True)
    peer = hosts[3]             # node0415 reports the error on its own mlx5_6
    lines = nccl_init_lines(hosts, ranks, w0 - 5000, version="2.23.4+cuda12.6", oob="ibp26s0",
                            extra=["NCCL_IB_TIMEOUT set by environment to 20.", "NCCL_IB_RETRY_CNT set by environment to 7."],
                            every_host=False)
    te = flaps[1] + 24
    lines += [f"{peer.name}:48211:48302 [6] transport/net_ib.cc:1695 NCCL WARN NET/IB: Got completion from peer "
              f"{bad.ip}<43915> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::a088:c203:3:{0x7c1e:x} "
              f"remoteGidsfe80::a088:c203:3:{0x5e22:x} hca {peer.nics[6].ibdev}",
              f"{peer.name}:48211:48302 [6] NCCL INFO transport/net.cc:1298 -> 6",
              f"{peer.name}:48211:48302 [6] NCCL INFO proxy.cc:694 -> 6",
              f"{peer.name}:48211:48302 [6] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]"]
    lines += watchdog_lines([0, 3, 30, 31, 62, 126], t_crash, 310442, op="_REDUCE_SCATTER_BASE", numel=125829120)
    lines.append(f"[rank30]:[E{glog_ts(t_crash + 0.1)} ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 30] Received a dump signal due to a collective timeout from  rank 62 and we will try our best to dump the debug info. Last enqueued NCCL work: 310442, last completed NCCL work: 310441.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ")
    lines.append(f"[{dt(t_res - 40):%Y-%m-%d %H:%M:%S}] resuming from checkpoint step 78400")
    c.write("job/logs/train.log", "\n".join(lines) + "\n")
    incident(c, "cl3-ops-3391", "Training crashed once at 09:52 with NCCL timeouts, resumed slower (+30% step time)",
             w0, w1, "vlm-pretrain-20b", len(ranks), 8,
             reported="The crash log points at node0415 (NET/IB completion error). Please check it before we drain it.")
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, "535.183.06")
        if h is bad:
            for i, tf in enumerate(flaps):
                h.klog += [(tf, 6, f"mlx5_core {bn.bdf} {bn.ibdev}: Port: 1 Link DOWN"),
                           (tf + 7.8 + i, 6, f"mlx5_core {bn.bdf} {bn.ibdev}: Port: 1 Link INIT"),
                           (tf + 8.9 + i, 6, f"mlx5_core {bn.bdf} {bn.ibdev}: Port: 1 Link ACTIVE"),
                           (tf + 9.0 + i, 6, f"IPv6: ADDRCONF(NETDEV_CHANGE): {bn.netdev}: link becomes ready")]
        s.write("cmd/dmesg.txt", render_klog(h, "journal"))
        s.write("cmd/ibstat.txt", ibstat_text(h, rng))
        write_nic_sys(c, s.pre, h, before=True, hw=False, ib=True, pci=False, net=True, ib_keys=IB_SMALL)
    om = OM("int")
    f_ld = om.family("node_infiniband_link_downed", "counter", "Number of times the link failed to recover from an error state and went down")
    f_er = om.family("node_infiniband_port_errors_received", "counter", "Number of packets containing an error that were received on this port")
    f_tx = om.family("node_infiniband_port_data_transmitted_bytes", "counter", "Number of data octets transmitted on all links")
    for h in hosts:
        for n in h.nics:
            lab = fmt_labels({"device": n.ibdev, "instance": f"{h.name}:9100", "job": "node-exporter", "port": "1"})
            ld, er, tx = n.ib_b["link_downed"], n.ib_b["port_rcv_errors"], n.ib_b["port_xmit_data"] * 4
            t = w0 - 1200
            while t <= w1:
                if n is bn:
                    ld = n.ib_b["link_downed"] + sum(1 for f in flaps if f <= t)
                    if t > flaps[0]:
                        er += rng.randint(20, 60)
                    gb = 0 if t_crash - 600 < t < t_res else (90 if t > flaps[0] else 150)
                else:
                    gb = 0 if t_crash - 600 < t < t_res else 150
                tx += int(120 * gb * 1e9 / 8 * rng.uniform(0.97, 1.03))
                f_ld.append(f"node_infiniband_link_downed_total{lab} {ld} {int(t)}")
                f_er.append(f"node_infiniband_port_errors_received_total{lab} {er} {int(t)}")
                f_tx.append(f"node_infiniband_port_data_transmitted_bytes_total{lab} {tx} {int(t)}")
                t += 120
    c.write("metrics/node-ib.om", om.text(), gz=True)
    c.truth("link_degradation", f"{bad.name}/{bn.ibdev}")
    return c


# ================================================================================================
# 6. thermal_throttle: one GPU heats to 90 C, HW+SW thermal slowdown; older driver, no nvml.json
# ================================================================================================


@register
def case_thermal():
    c = Case("ih-5c61", "thermal_throttle", 1606)
    rng = c.rng
    names = [f"dgxh100-{412 + i:04d}" for i in range(8)]
    w0, w1 = T("2026-07-14T13:10:00Z"), T("2026-07-14T14:40:00Z")
    hosts = [Host(n, "row-c", rng, layout="a", boot=w0 - rng.uniform(10, 90) * 86400) for n in names]
    bad = hosts[5]
    bg = bad.gpus[2]
    t_on = T("2026-07-14T13:24:00Z")
    ramp = 1900.0
    bg.temp, bg.mem_temp, bg.sm, bg.reasons, bg.power = 90, 93, 1275, 0x68, 498.2
    warm = hosts[3].gpus[7]
    warm.temp, warm.mem_temp = 80, 88
    hosts[1].gpus[0].temp = 77
    ranks = default_ranks(hosts)
    bad_rank = ranks.index((bad, 2))
    slow = lambda t, r: 1.0 + 0.088 * smooth(t, t_on + 300, ramp) if r == bad_rank else 1.0  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1800, w1 - 150, 10, 20450, 2.95, 0.33, slow=slow,
                      cols=("compute_s", "loss", "grad_norm"), loss0=2.41)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss", "grad_norm")), gz=True)
    c.write("job/logs/rank0.log", "\n".join(megatron_log(rows, 0, every=8, total=120000, gbs=1024)) + "\n")
    incident(c, "row-c-2026-07-14", "code-llm-13b ~8% slower since ~13:30, no alerts", w0, w1,
             "code-llm-13b", len(ranks), 8, reported="Same code and data as last week; nothing changed in the job config.")
    driver = "525.147.05"

    def val(h, g, f, t):
        k = smooth(t, t_on, ramp) if g is bg else 0.0
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return int(round(66 + (90 - 66) * k)) + rng.randint(-1, 0) if g is bg else g.temp + rng.randint(-1, 1)
        if f == "DCGM_FI_DEV_SM_CLOCK":
            if g is bg and k > 0.75:
                return rng.choice([1275, 1290, 1305, 1260])
            if g is bg and k > 0.5:
                return rng.choice([1755, 1620, 1980])
            return 1980
        if f == "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS":
            if g is bg and k > 0.75:
                return 0x68
            if g is bg and k > 0.5:
                return 0x20
            return 0
        if f == "DCGM_FI_DEV_THERMAL_VIOLATION":
            if g is bg:
                tt = max(0.0, t - (t_on + ramp * 0.5))
                return int(tt * 0.8 * 1e9)
            return 0
        if f == "DCGM_FI_DEV_POWER_USAGE":
            return round((g.power + rng.uniform(-20, 20)) * (1 - 0.25 * k), 3)
    c.write("metrics/dcgm-exporter.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK",
                                                      "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_THERMAL_VIOLATION",
                                                      "DCGM_FI_DEV_POWER_USAGE"],
                                             w0 - 1200, w1, 110, val, driver=driver, ts_fmt="ms", counter_type="unknown"), gz=True)
    before, now = w0 + 40, w1 - 260
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is hosts[2]:
            tx = w0 - 3 * 86400 - 7200
            h.klog.append((tx, 4, "NVRM: Xid (PCI:0000:ab:00): 31, pid=880121, name=python, channel 0x00000009, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC3 GPCCLIENT_T1_5 faulted @ 0x7f1c_2a400000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"))
        s.write("cmd/dmesg.txt", render_klog(h, "T"))
        s.write("cmd/nvidia-smi-q.txt", smi_text(h, now, driver, True, rng), gz=True)
        write_gpu_sys(c, s.pre, h, aer=False, before=False)
    c.truth("thermal_throttle", f"{bad.name}/gpu2")
    return c


# ================================================================================================
# 7. power_throttle: one GPU's enforced limit drops to 450 W (SW power cap)
# ================================================================================================


@register
def case_power():
    c = Case("ih-6e07", "power_throttle", 1707)
    rng = c.rng
    names = [f"cw-h100-p4-s{i:02d}" for i in range(1, 11)]
    w0, w1 = T("2026-08-02T19:00:00Z"), T("2026-08-02T20:30:00Z")
    hosts = [Host(n, "p4", rng, layout="b", boot=w0 - rng.uniform(4, 30) * 86400) for n in names]
    bad = hosts[6]
    bg = bad.gpus[6]
    t_on = T("2026-08-02T19:14:30Z")
    bg.plimit, bg.power, bg.reasons, bg.sm = 450.0, 447.6, 0x4, 1410
    flick = hosts[2].gpus[1]
    flick.power, flick.reasons, flick.sm = 698.7, 0x4, 1935   # momentary cap at 700 W: normal for H100 under load
    hosts[4].gpus[4].temp = 78
    ranks = default_ranks(hosts)
    bad_rank = ranks.index((bad, 6))
    slow = lambda t, r: 1.068 if (r == bad_rank and t > t_on) else 1.0  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1200, w1 - 120, 10, 51200, 2.75, 0.29, slow=slow, cols=("compute_s",))
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",), order="shuffle", rng=rng), gz=True)
    incident(c, "cw-p4-0802-1", "Throughput down ~6% on diffusion-xl-ft since about 19:15", w0, w1,
             "diffusion-xl-ft", len(ranks), 8, reported="",
             alerts=[alert("JobThroughputLow", {"job_name": "diffusion-xl-ft", "pool": "p4"},
                           "samples/s below 95% of 7-day p50 for 15m", t_on + 1100)])
    driver = "550.127.05"

    def val(h, g, f, t):
        on = t > t_on
        if f == "DCGM_FI_DEV_POWER_USAGE":
            if g is bg and on:
                return round(rng.uniform(444, 449.5), 3)
            if g is flick:
                return round(rng.uniform(660, 699.9), 3)
            return round(g.power + rng.uniform(-30, 25), 3)
        if f == "DCGM_FI_DEV_SM_CLOCK":
            if g is bg and on:
                return rng.choice([1395, 1410, 1425, 1440])
            if g is flick and rng.random() < 0.12:
                return 1935
            return 1980
        if f == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS":
            if g is bg and on:
                return 4
            if g is flick and rng.random() < 0.12:
                return 4
            return 0
        if f == "DCGM_FI_DEV_POWER_VIOLATION":
            if g is bg:
                return int(max(0.0, t - t_on) * 0.97 * 1e9)
            if g is flick:
                return int((t - (w0 - 1200)) * 0.004 * 1e9)
            return 0
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return (58 if (g is bg and on) else g.temp) + rng.randint(-1, 1)
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
                                             "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_POWER_VIOLATION",
                                             "DCGM_FI_DEV_GPU_TEMP"],
                                      w0 - 1200, w1, 120, val, host_label="hostname", driver=driver,
                                      counter_type="gauge"), gz=True)
    before, now = w0 + 20, w1 - 300
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        s.json("nvml.json", nvml_json(h, driver))
    c.truth("power_throttle", f"{bad.name}/gpu6")
    return c


# ================================================================================================
# 8. hbm_degradation: SBE storm then DBEs, row remap pending, two crashes
# ================================================================================================


@register
def case_hbm():
    c = Case("ih-7b3d", "hbm_degradation", 1808)
    rng = c.rng
    names = [f"lon3-ml-{71 + i:04d}" for i in range(14)]
    w0, w1 = T("2026-09-18T02:00:00Z"), T("2026-09-18T04:30:00Z")
    hosts = [Host(n, f"lon3-h{1 + i // 7}", rng, layout="a", boot=w0 - rng.uniform(25, 60) * 86400) for i, n in enumerate(names)]
    bad = hosts[7]            # lon3-ml-0078
    bg = bad.gpus[4]
    e1, e2 = T("2026-09-18T02:37:14Z"), T("2026-09-18T03:58:02Z")
    res1 = T("2026-09-18T02:56:40Z")
    bg.sbe_vol, bg.dbe_vol, bg.sbe_agg, bg.dbe_agg = 1870, 2, 2214, 2
    bg.remap_unc, bg.remap_pending = 2, True
    hist = hosts[9].gpus[2]
    hist.remap_corr = 1
    hist.sbe_agg = 14
    xid13 = hosts[2].gpus[1]
    for h in hosts:
        for g in h.gpus:
            g.pid = rng.randint(200000, 900000)
    ranks = default_ranks(hosts)
    bad_rank = ranks.index((bad, 4))
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 100, 20, 150020, 3.4, 0.44,
                      cols=("compute_s", "loss"), restarts=[(e1, res1, 150600)], stop_at=e2, loss0=1.66)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss")), gz=True)
    lines = []
    for i, e in enumerate((e1, e2)):
        lines += [f"[rank{bad_rank}]: Traceback (most recent call last):",
                  f"[rank{bad_rank}]:   File \"/workspace/train.py\", line 412, in train_step",
                  f"[rank{bad_rank}]:     loss.backward()",
                  f"[rank{bad_rank}]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
                  f"[rank{bad_rank}]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."]
        lines += watchdog_lines([0, 9, 23, 60, 97], e + 600.2, 201334 + i * 9112)
        if i == 0:
            lines.append(f"[{dt(res1 - 30):%Y-%m-%d %H:%M:%S}] [launcher] restarting job (attempt 2/3) from /ckpt/step_150600")
        else:
            lines.append(f"[{dt(e + 640):%Y-%m-%d %H:%M:%S}] [launcher] job failed: exit code 1 on 112/112 ranks; not retrying (attempt 3 needs manual approval)")
    c.write("job/logs/launcher.log", "\n".join(lines) + "\n")
    incident(c, "LON3-INC-1182", "Pretraining job crashed twice overnight (02:37, 03:58) with NCCL watchdog timeouts",
             w0, w1, "foundation-7b-multi", len(ranks), 8, reported="On-call restarted it once automatically.")
    driver = "550.90.07"

    def val(h, g, f, t):
        if f == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
            if g is bg:
                return int(1870 * max(0.0, min(1.0, (t - (w0 - 1800)) / (e2 - w0 + 1800))) ** 1.6)
            return 0
        if f == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
            return (1 if t > e1 else 0) + (1 if t > e2 else 0) if g is bg else 0
        if f == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS":
            return (1 if t > e1 else 0) + (1 if t > e2 else 0) if g is bg else 0
        if f == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":
            return 1 if g is hist else 0
        if f == "DCGM_FI_DEV_XID_ERRORS":
            if g is bg:
                return 63 if t > e2 else (94 if t > e1 else 0)
            if g is xid13:
                return 13
            return 0
        if f == "DCGM_FI_DEV_GPU_UTIL":
            running = not (e1 < t < res1 + 60 or t > e2)
            return rng.randint(96, 100) if running else 0
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                                             "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                                             "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL"],
                                      w0 - 1800, w1, 150, val, driver=driver), gz=True)
    before, now = w0 + 30, w1 - 400
    events = []
    for e, codes in ((e1, (48, 94)), (e2, (48, 63, 94))):
        for k in codes:
            events.append({"device": 4, "type": "XidCriticalError", "data": k, "time": iso(e)})
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is bad:
            pid = bg.pid
            for i, e in enumerate((e1, e2)):
                pa = 0x3fa7c2c40 + 0x1000 * i
                h.klog.append((e, 4, f"NVRM: Xid (PCI:0000:9a:00): 48, pid={pid}, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x{pa:x} partition 3, subpartition 0."))
                if i == 1:
                    h.klog.append((e + 0.0004, 4, f"NVRM: Xid (PCI:0000:9a:00): 63, pid={pid}, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."))
                h.klog.append((e + 0.0009, 4, f"NVRM: Xid (PCI:0000:9a:00): 94, pid={pid}, name=python3, Contained: FB DED (0x3, 0x0). physAddr: 0x{pa:08x} RST: No, D-RST: No"))
        if h is hosts[2]:
            tx = w0 - 6 * 86400 - 1234
            h.klog.append((tx, 4, "NVRM: Xid (PCI:0000:2a:00): 13, pid=3318812, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 1): Illegal Instruction Parameter"))
        if h is hosts[9]:
            h.klog.append((w0 - 20 * 86400, 4, "NVRM: Xid (PCI:0000:3a:00): 63, pid=1121904, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."))
        s.write("cmd/dmesg.txt", render_klog(h, "journal"))
        s.json("nvml.json", nvml_json(h, driver, events if h is bad else ()))
    c.truth("hbm_degradation", f"{bad.name}/gpu4")
    return c


# ================================================================================================
# 9. gpu_fell_off_bus: XID 79 (raw /dev/kmsg), NVML lost, sysfs all-ones, DCGM series stop
# ================================================================================================


@register
def case_fell_off_bus():
    c = Case("ih-8d14", "gpu_fell_off_bus", 1909)
    rng = c.rng
    names = [f"phx5-gpu-0a{17 + i}" for i in range(9)]
    w0, w1 = T("2026-10-06T03:00:00Z"), T("2026-10-06T04:00:00Z")
    hosts = [Host(n, "phx5-r12", rng, layout="a", boot=w0 - rng.uniform(20, 80) * 86400) for n in names]
    spare = hosts[8]
    spare.idle(rng)
    bad = hosts[4]             # phx5-gpu-0a21
    bg = bad.gpus[5]
    tx = T("2026-10-06T03:12:09Z")
    bg.lost = True
    replay = hosts[2].gpus[2]
    replay.replay = replay.replay_before = 12
    c.json("topology.json", topology(hosts))
    ranks = default_ranks(hosts)
    bad_rank = ranks.index((bad, 5))
    miss = lambda t, r: False  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1800, w1, 10, 60210, 2.5, 0.31, cols=("compute_s",), stop_at=tx - 3)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",)), gz=True)
    lines = watchdog_lines(sorted(set(range(0, 64, 9)) - {bad_rank}), tx + 600.1, 77120, op="ALLREDUCE", numel=1)
    lines += [f"[rank0]:[E{glog_ts(tx + 600.2)} ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 0]  failure detected by watchdog at work sequence id: 77120 PG status: last enqueued work: 77120, last completed work: 77119",
              f"[rank0]:[E{glog_ts(tx + 600.3)} ProcessGroupNCCL.cpp:684] [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
              f"[rank0]:[E{glog_ts(tx + 600.3)} ProcessGroupNCCL.cpp:698] [Rank 0] To avoid data inconsistency, we are taking the entire process down.",
              "terminate called after throwing an instance of 'c10::DistBackendError'"]
    c.write("job/logs/torchrun.log", "\n".join(lines) + "\n")
    incident(c, "phx5-20261006-0312", "Job died ~03:22 with NCCL watchdog timeouts on all ranks", w0, w1,
             "asr-conformer-xxl", len(ranks), 8, reported="Auto-restart failed: node allocation check timed out.")
    driver = "550.90.07"

    def val(h, g, f, t):
        if g is bg and t > tx + 30:
            return None
        running = t < tx
        if f == "DCGM_FI_DEV_GPU_UTIL":
            return 0 if (h.spare or not running) else rng.randint(96, 100)
        if f == "DCGM_FI_DEV_XID_ERRORS":
            return 79 if (g is bg and t > tx) else 0
        if f == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
            return g.replay
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return g.temp + rng.randint(-1, 1) - (0 if running or h.spare else 15)
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS",
                                             "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_TEMP"],
                                      w0 - 1800, w1, 120, val, driver=driver), gz=True)
    before, now = w0 + 30, w1 - 200
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is bad:
            h.klog += [
                (tx - 0.012, 3, "pcieport 0000:aa:00.0: AER: Uncorrected (Fatal) error received: 0000:aa:00.0"),
                (tx - 0.011, 3, "pcieport 0000:aa:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)"),
                (tx - 0.0109, 3, "pcieport 0000:aa:00.0:   device [1000:c030] error status/mask=00000020/00400000"),
                (tx - 0.0108, 3, "pcieport 0000:aa:00.0:    [ 5] SDES                   (First)"),
                (tx, 4, f"NVRM: GPU at PCI:0000:ab:00: {bg.uuid}"),
                (tx + 0.000008, 4, f"NVRM: GPU Board Serial Number: {bg.serial}"),
                (tx + 0.000011, 4, "NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
                (tx + 0.000015, 4, "NVRM: GPU 0000:ab:00.0: GPU has fallen off the bus."),
                (tx + 0.000018, 4, f"NVRM: GPU 0000:ab:00.0: GPU serial number is {bg.serial}."),
                (tx + 11.85, 3, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up"),
                (tx + 11.86, 3, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine instance 48 Sub-engine instance 00"),
            ]
        if h is hosts[1]:
            t13 = w0 - 5 * 86400 - 3000
            h.klog.append((t13, 4, "NVRM: Xid (PCI:0000:2a:00): 13, pid=2212001, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 4, SM 1): Out Of Range Address"))
        s.write("cmd/dmesg.txt", render_klog(h, "kmsg", seq0=rng.randint(2000, 9000)))
        s.json("nvml.json", nvml_json(h, driver, [{"device": 5, "type": "XidCriticalError", "data": 79, "time": iso(tx)}] if h is bad else ()))
        s.write("cmd/lspci-vv.txt", lspci_text(h, rng, "named", include_nics=False))
        write_gpu_sys(c, s.pre, h, aer=True, before=True, uncor=(h is bad))
    c.truth("gpu_fell_off_bus", f"{bad.name}/gpu5")
    return c


# ================================================================================================
# 10. nvlink_fault: NVLink CRC/replay storm on one GPU, XID 74, crash, resumes slow
# ================================================================================================


@register
def case_nvlink():
    c = Case("ih-9a40", "nvlink_fault", 2010)
    rng = c.rng
    names = [f"iad2-hgx-{108 + i}" for i in range(12)]
    w0, w1 = T("2026-11-11T16:00:00Z"), T("2026-11-11T17:45:00Z")
    hosts = [Host(n, "iad2-b4", rng, layout="a", boot=w0 - rng.uniform(8, 40) * 86400) for n in names]
    bad = hosts[6]            # iad2-hgx-114
    bg = bad.gpus[6]
    t_on, t_x, t_res = T("2026-11-11T16:10:00Z"), T("2026-11-11T16:52:31Z"), T("2026-11-11T17:04:10Z")
    ranks = default_ranks(hosts)
    bad_rank = ranks.index((bad, 6))

    def commf(t):
        if t < t_on:
            return 1.0
        if t < t_x:
            return 1.0 + 0.30 * smooth(t, t_on, t_x - t_on)
        return 1.38
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 120, 10, 33000, 2.1, 0.52, comm_f=commf, cols=("loss",),
                      restarts=[(t_x, t_res, 34100)], loss0=2.8)
    c.write("job/steps.csv", steps_csv(rows, ("loss",)), gz=True)
    lines = [f"[rank{bad_rank}]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
             f"[rank{bad_rank}]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             f"[rank{bad_rank}]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
    lines += watchdog_lines([r for r in range(0, 96, 11) if r != bad_rank], t_x + 600, 402211, op="ALLGATHER", numel=50331648)
    lines.append(f"[{dt(t_res - 25):%Y-%m-%d %H:%M:%S}] elastic agent: restarting worker group (restart 1/5)")
    c.write("job/logs/elastic.log", "\n".join(lines) + "\n")
    incident(c, "IAD2-7731", "Step time creeping up since ~16:10, crash at 16:52, still slow after restart", w0, w1,
             "moe-8x22b-sft", len(ranks), 8, reported="")
    driver = "550.90.07"
    flit_old = hosts[2].gpus[2]

    def val(h, g, f, t):
        if f == "DCGM_FI_DEV_GPU_UTIL":
            return 0 if t_x < t < t_res + 30 else rng.randint(95, 100)
        if f == "DCGM_FI_DEV_XID_ERRORS":
            return 74 if (g is bg and t > t_x) else 0
        if g is bg:
            k = max(0.0, t - t_on)
            if f == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
                return int(k * 38.5 + (k ** 1.3) * 0.2)
            if f == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":
                return int(k * 21.0)
            if f == "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL":
                return int(k / 700) + (1 if t > t_x else 0)
        if g is flit_old and f == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
            return 3
        return 0
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS",
                                             "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                                             "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                                             "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"],
                                      w0 - 1200, w1, 150, val, driver=driver), gz=True)
    before, now = w0 + 60, w1 - 300
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is bad:
            h.klog += [(t_x, 4, f"NVRM: GPU at PCI:0000:ba:00: {bg.uuid}"),
                       (t_x + 0.00001, 4, f"NVRM: GPU Board Serial Number: {bg.serial}"),
                       (t_x + 0.00002, 4, "NVRM: Xid (PCI:0000:ba:00): 74, pid=3328101, name=python3, NVLink: fatal error detected on link 7(0x0, 0x0, 0x200000, 0x0, 0x0, 0x0, 0x0)"),
                       (t_x + 0.3, 4, "NVRM: Xid (PCI:0000:ba:00): 45, pid=3328101, name=python3, Ch 00000009")]
        if h is hosts[8]:
            h.klog += [(h.boot + 38.17, 4, "nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt"),
                       (h.boot + 38.18, 4, "nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 22013, Severity 0 Engine instance 44 Sub-engine instance 00")]
        s.write("cmd/dmesg.txt", render_klog(h, "plain"))
        s.json("nvml.json", nvml_json(h, driver, [{"device": 6, "type": "XidCriticalError", "data": 74, "time": iso(t_x)}] if h is bad else ()))
        out = []
        for g in h.gpus:
            out.append(f"GPU {g.index}: {GPU_NAME} (UUID: {g.uuid})")
            for ln in range(18):
                rep = crc = rec = 0
                if g is bg and ln == 7:
                    k = now - t_on
                    rep, crc, rec = int(k * 21.0), int(k * 38.5 + (k ** 1.3) * 0.2), int(k / 700) + 1
                if g is flit_old and ln == 3:
                    crc = 3
                out += [f"\t Link {ln}: Replay Errors: {rep}", f"\t Link {ln}: Recovery Errors: {rec}",
                        f"\t Link {ln}: CRC Errors: {crc}"]
        s.write("cmd/nvidia-smi-nvlink-e.txt", "\n".join(out) + "\n")
    c.truth("nvlink_fault", f"{bad.name}/gpu6")
    return c


# ================================================================================================
# 11. silent_data_corruption: one replica's checksum drifts; nothing else anywhere (TP=2 groups)
# ================================================================================================


@register
def case_sdc():
    c = Case("ih-a2f9", "silent_data_corruption", 2111)
    rng = c.rng
    names = [f"kestrel-gpu-{101 + i}" for i in range(16)]
    w0, w1 = T("2026-12-01T05:00:00Z"), T("2026-12-01T06:30:00Z")
    hosts = [Host(n, f"k{1 + i // 8}", rng, layout="b", boot=w0 - rng.uniform(12, 45) * 86400) for i, n in enumerate(names)]
    bad = hosts[8]             # kestrel-gpu-109
    order = list(hosts)
    rng.shuffle(order)
    ranks = [(h, g.index) for h in order for g in h.gpus]
    bad_rank = ranks.index((bad, 1))
    c.json("topology.json", topology(hosts, ranks))
    s_bad = 88050
    tp = 2

    def checksum(step, r):
        shard = r % tp
        v = (-1523.904418945 if shard == 0 else 2210.118041992) + 0.0173 * math.sin(step / 311.0) + 1.9e-6 * step
        if r == bad_rank and step >= s_bad:
            v += 0.000731 * (1 + (step - s_bad) / 150.0)
        return f"{v:.9f}"
    rows = make_steps(rng, len(ranks), w0 - 1800, w1 - 150, 50, 87200, 2.8, 0.35,
                      cols=("compute_s", "loss", "grad_norm", "param_checksum"), checksum=checksum, loss0=1.58)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss", "grad_norm", "param_checksum")), gz=True)
    log = megatron_log(rows, 0, every=4, total=200000, gbs=2048)
    log.append(f"[{dt(w1 - 1500):%Y-%m-%d %H:%M:%S}] [ckpt-validate] step 88200: replica checksum mismatch within data-parallel group (tensor_model_parallel_size=2, data_parallel_size=64); refusing to promote checkpoint")
    c.write("job/logs/trainer.log", "\n".join(log) + "\n")
    incident(c, "KES-2026-1201-A", "Checkpoint validation at step 88,200 failed (replicas disagree); loss and throughput look normal",
             w0, w1, "kestrel-lm-52b", len(ranks), 8, reported="No hardware alerts. We rolled back to step 88,000 for now.")
    driver = "550.90.07"
    sbe = hosts[11].gpus[3]
    sbe.sbe_vol = sbe.sbe_agg = 2
    hosts[5].gpus[0].temp = 79

    def val(h, g, f, t):
        if f == "DCGM_FI_DEV_GPU_UTIL":
            return rng.randint(96, 100)
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return g.temp + rng.randint(-1, 1)
        if f == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
            return g.sbe_vol
        if f == "DCGM_FI_DEV_XID_ERRORS":
            return 0
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP",
                                             "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_XID_ERRORS"],
                                      w0 - 900, w1, 180, val, host_label="hostname", driver=driver), gz=True)
    before, now = w0 + 60, w1 - 200
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is hosts[3]:
            t31 = w0 - 9 * 86400 - 777
            h.klog.append((t31, 4, "NVRM: Xid (PCI:0000:4c:00): 31, pid=1190021, name=jupyter-kernel, channel 0x00000011, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_2 faulted @ 0x7f3a_10000000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_WRITE"))
        s.write("cmd/dmesg.txt", render_klog(h, "T"))
        s.json("nvml.json", nvml_json(h, driver))
    c.truth("silent_data_corruption", f"{bad.name}/gpu1")
    return c


# ================================================================================================
# 12. host_contention: a backup pigz eats the CPUs of one host (IP-named hosts)
# ================================================================================================


@register
def case_host_contention():
    c = Case("ih-b6c8", "host_contention", 2212)
    rng = c.rng
    names = [f"10.31.8.{11 + i}" for i in range(10)]
    w0, w1 = T("2026-02-17T10:00:00Z"), T("2026-02-17T11:20:00Z")
    hosts = [Host(n, "b8", rng, layout="b", boot=w0 - rng.uniform(30, 50) * 86400, ip=n) for n in names]
    bad = hosts[6]             # 10.31.8.17
    busy = hosts[1]            # 10.31.8.12: a bit more load, harmless
    t_on = T("2026-02-17T10:12:00Z")
    bad.load1, bad.psi_some = 131.4, 71.4
    busy.load1, busy.psi_some = 41.2, 3.1
    c.json("topology.json", topology(hosts))
    for h in hosts:
        for g in h.gpus:
            g.pid = rng.randint(100000, 300000)
    ranks = default_ranks(hosts)
    on_bad = {i for i, (h, g) in enumerate(ranks) if h is bad}
    slow = lambda t, r: (1.0 + rng.uniform(0.025, 0.11)) if (r in on_bad and t > t_on) else 1.0  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 120, 10, 70300, 2.35, 0.27, slow=slow, cols=("compute_s",))
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",)), gz=True)
    incident(c, "b8-ticket-4471", "ViT-G run jittery and ~7% slower since ~10:10", w0, w1, "vitg-14-pt", len(ranks), 8,
             reported="Per-step time varies a lot more than yesterday. Same code, same data.")
    # node_exporter
    om = OM("int")
    f_load = om.family("node_load1", "gauge", "1m load average.")
    f_psi = om.family("node_pressure_cpu_waiting_seconds", "counter", "Total time in seconds that processes have waited for CPU time")
    psi_tot = {h.name: rng.uniform(2e4, 9e4) for h in hosts}
    t = w0 - 1500
    while t <= w1:
        for h in hosts:
            lab = fmt_labels({"instance": f"{h.ip}:9100", "job": "node"})
            if h is bad and t > t_on:
                ld, ps = rng.uniform(118, 140), rng.uniform(0.62, 0.78)
            elif h is busy:
                ld, ps = rng.uniform(38, 44), rng.uniform(0.025, 0.04)
            else:
                ld, ps = rng.uniform(26, 33), rng.uniform(0.003, 0.02)
            psi_tot[h.name] += ps * 60
            f_load.append(f"node_load1{lab} {ld:.2f} {int(t)}")
            f_psi.append(f"node_pressure_cpu_waiting_seconds_total{lab} {psi_tot[h.name]:.3f} {int(t)}")
        t += 60
    c.write("metrics/node.om", om.text(), gz=True)
    driver = "535.161.08"

    def val(h, g, f, t):
        if h is bad and t > t_on:
            return rng.randint(86, 95)
        return rng.randint(96, 100)
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL"], w0 - 900, w1, 120, val, driver=driver), gz=True)
    before, now = w0 + 30, w1 - 200
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        rogue = None
        if h is bad:
            rogue = [(rng.randint(500000, 600000), "backup", 20, 0, "6.9g", "1.1g", "2.3m", "R", 9184.2, 0.1, "40211:07.11",
                      "pigz -p 96 -c /scratch/ckpt/vitg-14-pt/iter_0069000/*.pt"),
                     (rng.randint(500000, 600000), "backup", 20, 0, "14.1m", "3.2m", "2.8m", "S", 61.3, 0.0, "311:07.31",
                      "tar -cf - /scratch/ckpt/vitg-14-pt")]
        elif h is busy:
            rogue = [(rng.randint(300000, 400000), "svc-train", 20, 0, "22.1g", "2.1g", "88.1m", "S", 412.0, 0.1, "2210:41.02",
                      "python3 -m tools.prefetch_shards --workers 8")]
        s.write("cmd/top.txt", top_text(h, now, rng, rogue))
        ps = h.psi_some
        s.write("cmd/pressure-cpu.txt", psi_text(ps, ps * 0.97, ps * 0.71 if h is bad else ps * 0.9, psi_tot[h.name] * 1e6))
        s.write("before/cmd/pressure-cpu.txt", psi_text(rng.uniform(0.2, 2), rng.uniform(0.2, 2), rng.uniform(0.2, 2),
                                                         (psi_tot[h.name] - (3900 if h is bad else 60)) * 1e6))
        s.json("nvml.json", nvml_json(h, driver))
    c.truth("host_contention", bad.name)
    return c


# ================================================================================================
# 13. input_pipeline_stall: 40 x 4-GPU hosts, every rank idles between steps (shared storage)
# ================================================================================================


@register
def case_input_stall():
    c = Case("ih-c7e5", "input_pipeline_stall", 2313)
    rng = c.rng
    names = [f"euw4-gpu-{101 + i:04d}" for i in range(40)]
    w0, w1 = T("2026-05-27T21:00:00Z"), T("2026-05-27T22:30:00Z")
    hosts = [Host(n, f"euw4-p{1 + i // 10}", rng, layout="q", ngpu=4, ll="Ethernet",
                  boot=w0 - rng.uniform(3, 40) * 86400) for i, n in enumerate(names)]
    c.json("topology.json", topology(hosts))
    t_on = T("2026-05-27T21:08:00Z")
    ranks = default_ranks(hosts)
    gap = lambda t: rng.uniform(0.8, 2.7) if t > t_on else 0.0  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1200, w1 - 100, 25, 41000, 1.92, 0.22, gap=gap, cols=("compute_s",))
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",)), gz=True)
    log = []
    r0 = sorted((r for r in rows if r["rank"] == 0), key=lambda r: float(r["start_unix"]))
    for r in r0[::2]:
        t = float(r["start_unix"])
        log.append(f"[rank0]:[titan] {dt(t):%Y-%m-%d %H:%M:%S},{int((t % 1) * 1000):03d} - root - INFO - step: {r['step']}  "
                   f"loss:  {2.05 - 0.00001 * (r['step'] - 41000):.4f}  memory: 61.02GiB(77.12%)  "
                   f"tps: {int(3410 / (1 + (1.1 if t > t_on else 0)))}  mfu: {41.3 / (1 + (1.1 if t > t_on else 0)):.2f}%")
        if t > t_on:
            log.append(f"[rank0]:[titan] {dt(t):%Y-%m-%d %H:%M:%S},{int((t % 1) * 1000):03d} - root - WARNING - "
                       f"dataloader: waited {rng.uniform(0.8, 2.7):.2f}s for next batch (prefetch queue empty, 0/8 ready)")
    c.write("job/logs/rank0.log", "\n".join(log) + "\n")
    incident(c, "euw4-inc-0527-2", "Tokens/s halved on sd-video-3b since ~21:08; GPU utilisation ~55% everywhere",
             w0, w1, "sd-video-3b", len(ranks), 4, reported="No deploys tonight.")
    driver = "550.54.15"

    def val(h, g, f, t):
        if f == "DCGM_FI_DEV_GPU_UTIL":
            return rng.randint(48, 63) if t > t_on else rng.randint(95, 100)
        if f == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
            return round(rng.uniform(0.19, 0.26) if t > t_on else rng.uniform(0.42, 0.47), 6)
    hosts[16].gpus[2].temp = 81
    c.write("metrics/dcgm.om", dcgm_om(hosts, ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"],
                                      w0 - 900, w1, 180, val, host_label="hostname", driver=driver), gz=True)
    before, now = w0 + 30, w1 - 200
    nfs = [h for h in hosts if rng.random() < 0.6]
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now, boot=False)
        boot_klog(h, rng, driver, mlx=False)
        if h in nfs:
            ts_ = t_on + rng.uniform(-30, 60)
            h.klog += [(ts_, 4, "nfs: server fsx-euw4-03.storage.internal not responding, still trying"),
                       (ts_ + rng.uniform(200, 900), 4, "nfs: server fsx-euw4-03.storage.internal OK"),
                       (ts_ + rng.uniform(1200, 2000), 4, "nfs: server fsx-euw4-03.storage.internal not responding, still trying"),
                       (ts_ + rng.uniform(2100, 3000), 4, "nfs: server fsx-euw4-03.storage.internal OK")]
        s.write("cmd/dmesg.txt", render_klog(h, "plain"))
        s.json("nvml.json", nvml_json(h, driver))
    c.truth("input_pipeline_stall", "job")
    return c


# ================================================================================================
# 14. nccl_misconfiguration: NCCL_IB_HCA baked into a new image lists only 4 of 8 rails
# ================================================================================================


@register
def case_nccl_hca():
    c = Case("ih-d1b2", "nccl_misconfiguration", 2414)
    rng = c.rng
    names = [f"aus1-h100-{201 + i}" for i in range(12)]
    w0, w1 = T("2026-04-08T09:00:00Z"), T("2026-04-08T10:30:00Z")
    hosts = [Host(n, f"aus1-r{1 + i // 6}", rng, layout="a", boot=w0 - rng.uniform(10, 40) * 86400,
                  ip=f"172.20.{1 + i // 6}.{30 + i}") for i, n in enumerate(names)]
    for i, h in enumerate(hosts):
        for n in h.nics:
            n.switch = f"aus1-ib-leaf{int(n.ibdev[-1]) + 1}"
            n.sport = f"1/{i + 1}"
    c.json("topology.json", topology(hosts))
    ranks = default_ranks(hosts)
    t_prev_end, t_start = T("2026-04-07T22:10:00Z"), T("2026-04-08T08:52:00Z")
    commf = lambda t: 2.05 if t > t_start else 1.0  # noqa: E731
    rows = make_steps(rng, len(ranks), T("2026-04-07T21:20:00Z"), w1 - 120, 20, 12000, 2.9, 0.46, comm_f=commf,
                      cols=("compute_s",), restarts=[(t_prev_end, t_start, 12800)])
    c.write("job/steps.csv", steps_csv(rows, ("compute_s",)), gz=True)
    prev = nccl_init_lines(hosts, ranks, T("2026-04-07T09:31:00Z"), version="2.21.5+cuda12.4",
                           extra=["NCCL_IB_TIMEOUT set by environment to 22."], every_host=False)
    cur = nccl_init_lines(hosts, ranks, t_start, version="2.23.4+cuda12.6", hca=["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
                          extra=["NCCL_IB_TIMEOUT set by environment to 22.",
                                 "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1,mlx5_2,mlx5_3"])
    cur += [f"{hosts[0].name}:{2005}:{2311} [5] NCCL INFO Channel 05/0 : 5[5] -> 13[5] [send] via NET/IB/2/GDRDMA",
            f"{hosts[0].name}:{2006}:{2318} [6] NCCL INFO Channel 06/0 : 6[6] -> 14[6] [send] via NET/IB/3/GDRDMA",
            f"{hosts[0].name}:{2007}:{2325} [7] NCCL INFO Channel 07/0 : 7[7] -> 15[7] [send] via NET/IB/3/GDRDMA"]
    c.write("job/logs/nccl-2026-04-07.log", "\n".join(prev) + "\n")
    c.write("job/logs/nccl-2026-04-08.log", "\n".join(cur) + "\n")
    incident(c, "aus1-0408-perf", "Step time up ~15% since this morning's restart on the new container image",
             w0, w1, "llm-13b-cpt", len(ranks), 8, reported="Image bump: pytorch 2.4 -> 2.5, NCCL 2.21 -> 2.23. "
             "Same nodes as yesterday.")
    before, now = w0 + 30, w1 - 180
    dur = now - before
    for h in hosts:
        for n in h.nics:
            i = int(n.ibdev[-1])
            if i < 4:
                fill_nic(rng, n, before - h.boot, dur, rng.uniform(300, 330), rng.uniform(300, 330),
                         delta={"ib:port_xmit_wait": int(dur * rng.uniform(9e4, 2.2e5))})
            else:
                fill_nic(rng, n, before - h.boot, dur, 0.0, 0.0)
                n.ib["port_xmit_data"] = n.ib_b["port_xmit_data"] + rng.randint(2000, 9000)
                n.ib["port_rcv_data"] = n.ib_b["port_rcv_data"] + rng.randint(2000, 9000)
    d = hosts[5].nics[5]
    d.ib_b["symbol_error"] = d.ib["symbol_error"] = 2
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        s.write("cmd/ibstat.txt", ibstat_text(h, rng))
        write_nic_sys(c, s.pre, h, before=True, hw=False, ib=True, pci=False, net=False, ib_keys=IB_SMALL)
    om = OM("int")
    f_tx = om.family("node_infiniband_port_data_transmitted_bytes", "counter", "Number of data octets transmitted on all links")
    for h in hosts:
        for n in h.nics:
            lab = fmt_labels({"device": n.ibdev, "instance": f"{h.ip}:9100", "job": "node", "port": "1"})
            v = n.ib_b["port_xmit_data"] * 4 - int(3600 * 150e9 / 8)
            t = w0 - 3600
            while t <= w1:
                g = (315 if int(n.ibdev[-1]) < 4 else 0.00001) if t > t_start else 150
                v += int(120 * g * 1e9 / 8 * rng.uniform(0.98, 1.02))
                f_tx.append(f"node_infiniband_port_data_transmitted_bytes_total{lab} {v} {int(t)}")
                t += 120
    c.write("metrics/node-ib.om", om.text(), gz=True)
    c.truth("nccl_misconfiguration", "job")
    return c


# ================================================================================================
# 15. healthy (A): loss spike report; every decoy present, nothing wrong
# ================================================================================================


@register
def case_healthy_a():
    c = Case("ih-e4d7", "healthy/A", 2515)
    rng = c.rng
    names = [f"hgx-fra2-{i:02d}" for i in range(1, 12)]
    w0, w1 = T("2026-06-30T03:00:00Z"), T("2026-06-30T04:00:00Z")
    hosts = [Host(n, "fra2-a", rng, layout="b", boot=w0 - rng.uniform(10, 60) * 86400) for n in names]
    hosts[10].idle(rng)        # spare
    for i, h in enumerate(hosts):
        for n in h.nics:
            n.switch = f"fra2-ib-leaf{int(n.ibdev[-1]) + 1}"
            n.sport = f"1/{i + 1}"
    c.json("topology.json", topology(hosts))
    ranks = default_ranks(hosts)
    spike = lambda s: (1.9 * math.exp(-((s - 61420) / 18.0) ** 2)) if 61300 < s < 61600 else 0.0  # noqa: E731
    rows = make_steps(rng, len(ranks), w0 - 1500, w1 - 100, 10, 60800, 2.45, 0.30,
                      cols=("compute_s", "loss", "grad_norm"), spike=spike, loss0=1.98)
    c.write("job/steps.csv", steps_csv(rows, ("compute_s", "loss", "grad_norm")), gz=True)
    c.write("job/logs/rank0.log", "\n".join(megatron_log(rows, 0, every=6, total=400000, gbs=1024)) + "\n")
    incident(c, "fra2-0630-loss", "Loss spike at step ~61,420 around 03:20; please rule out bad hardware before we resume",
             w0, w1, "llm-20b-de", len(ranks), 8, reported="Spike recovered by itself after ~100 steps.")
    warm = hosts[3].gpus[3]
    warm.temp, warm.mem_temp = 80, 88
    driver = "550.90.07"
    before, now = w0 + 20, w1 - 120
    dur = now - before
    for h in hosts:
        for n in h.nics:
            fill_nic(rng, n, before - h.boot, dur, 0.001 if h.spare else 160, 0.001 if h.spare else 160)
    d = hosts[1].nics[3]
    d.ib_b["symbol_error"] = d.ib["symbol_error"] = 2
    hosts[4].load1, hosts[4].psi_some = 45.3, 4.2
    for h in hosts:
        for g in h.gpus:
            g.pid = rng.randint(100000, 300000) if g.busy else None
    for h in hosts:
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        if h is hosts[6]:
            t13 = w0 - 14 * 86400 - 5000
            h.klog += [(t13, 4, "NVRM: Xid (PCI:0000:cb:00): 13, pid=1212121, name=python3, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"),
                       (t13 + 0.00005, 4, "NVRM: Xid (PCI:0000:cb:00): 13, pid=1212121, name=python3, Graphics SM Global Exception on (GPC 7, TPC 7, SM 0): Multiple Warp Errors")]
        s.write("cmd/dmesg.txt", render_klog(h, "T"))
        s.json("nvml.json", nvml_json(h, driver))
        s.write("cmd/lspci-vv.txt", lspci_text(h, rng, "plain"), gz=True)
        write_gpu_sys(c, s.pre, h, aer=False, before=False)
        write_nic_sys(c, s.pre, h, before=True, hw=False, ib=True, pci=False, net=False, ib_keys=IB_SMALL)
        s.write("cmd/top.txt", top_text(h, now, rng, [(rng.randint(300000, 400000), "svc-train", 20, 0, "12.1g", "1.4g", "30.1m", "S", 380.0, 0.1, "611:10.02",
                                                       "python3 eval_harness.py --shard 3")] if h is hosts[4] else None))
        s.write("cmd/pressure-cpu.txt", psi_text(h.psi_some, h.psi_some * 0.9, h.psi_some * 0.8, rng.uniform(1e10, 9e10)))
    c.truth("healthy", None)
    return c


# ================================================================================================
# 16. healthy (B): minimal bundle; throughput alert flaps at checkpoint saves
# ================================================================================================


@register
def case_healthy_b():
    c = Case("ih-f803", "healthy/B", 2616)
    rng = c.rng
    names = [f"g4-nyc-{41 + i:03d}" for i in range(6)]
    w0, w1 = T("2026-01-22T00:00:00Z"), T("2026-01-22T06:00:00Z")
    hosts = [Host(n, "nyc-7", rng, layout="a", ll="Ethernet", boot=w0 - rng.uniform(5, 30) * 86400) for n in names]
    ranks = default_ranks(hosts)
    base_t = w0 - 1800

    def gap(t):
        # a checkpoint save every 1000 steps (~41 min); the period between two logged rows (50 steps)
        # absorbs it: spread its 24 s over the 50 steps of the row that contains it
        k = (t - base_t) % (1000 * 2.45)
        return 24.0 / 50 if k < 50 * 2.45 else 0.0
    rows = make_steps(rng, len(ranks), base_t, w1 - 60, 50, 300000, 2.1, 0.31, gap=gap, cols=("loss",), loss0=0.412)
    c.write("job/steps.csv", steps_csv(rows, ("loss",)), gz=True)
    log = []
    tt = base_t
    step = 300000
    while tt < w1:
        tt += 1000 * 2.45 + 24
        step += 1000
        log.append(f"{dt(tt):%Y-%m-%d %H:%M:%S} INFO  trainer: saved checkpoint step={step} path=s3://rec-ckpt/ranker-v7/{step} took={rng.uniform(21, 27):.1f}s")
    c.write("job/logs/trainer.log", "\n".join(log) + "\n")
    incident(c, "NYC-ALRT-9921", "Throughput alert for rec-ranker-v7 flapped 6 times overnight", w0, w1, "rec-ranker-v7",
             len(ranks), 8, reported="Auto-filed from Alertmanager.",
             alerts=[alert("JobThroughputLow", {"job_name": "rec-ranker-v7", "cluster": "nyc-7"},
                           "samples/s below 90% of 1h p50", w0 + 3 * 3600 + 600)])
    flick = hosts[2].gpus[5]
    flick.reasons, flick.power, flick.sm = 0x4, 699.2, 1935
    hosts[4].gpus[1].temp = 78
    driver = "550.90.07"
    before, now = w0 + 10, w1 - 120
    dur = now - before
    for h in hosts:
        for n in h.nics:
            fill_nic(rng, n, before - h.boot, dur, 140, 140, delta={
                "eth:rx_prio3_pause": int(dur * rng.uniform(5, 60)),
                "eth:rx_prio3_pause_duration": int(dur * rng.uniform(40, 400))})
    for h in hosts:
        for g in h.gpus:
            g.pid = rng.randint(10000, 90000)
        s = Sub(c, h)
        std_collected(c, h, before, now)
        boot_klog(h, rng, driver)
        s.write("cmd/dmesg.txt", render_klog(h, "journal"))
        s.write("cmd/nvidia-smi-q.txt", smi_text(h, now, driver, False, rng), gz=True)
        for n in h.nics:
            s.write(f"cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth))
            s.write(f"before/cmd/ethtool-S-{n.netdev}.txt", ethtool_text(n.eth_b))
    c.truth("healthy", None)
    return c


# ================================================================================================


def main(argv):
    global OUT
    if "--out" in argv:
        OUT = Path(argv[argv.index("--out") + 1]).resolve()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    made = []
    for fn in CASES:
        c = fn()
        t = json.loads((c.root / "truth.json").read_text())
        made.append((c.slug, c.label, t["root_cause"], t["component"], c.files))
    width = max(len(m[1]) for m in made)
    for slug, label, rc, comp, nf in made:
        print(f"{slug}  {label:<{width}}  {rc:<24} {comp}  ({nf} files)")
    if "--check" in argv:
        import subprocess
        return subprocess.call([sys.executable, str(HERE / "validate.py"), str(OUT)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
