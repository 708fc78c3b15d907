"""Shared fixtures: a tiny hand-written bundle builder for unit tests of tools and the harness.

It writes the real formats (sysfs strings, NVML keys, dmesg lines) for a 2-host x 4-GPU fleet,
with one optional fault. It is deliberately simpler than ``evals.generator``: unit tests must
not depend on the example generator, and the investigator must not be tuned to either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

START = 1_776_390_000.0  # 2026-04-17T01:40:00Z
END = START + 5400
BUS = ["18", "2a", "3a", "5d"]
HOSTS = ["node-a.example", "node-b.example"]


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def build_bundle(
    root: Path,
    fault: str | None = None,
    *,
    culprit: tuple[int, int] = (1, 2),
    steps: bool = True,
    compute: bool = True,
    spare_idle_low_gen: bool = True,
    n_steps: int = 120,
) -> Path:
    """Write a bundle under ``root``; ``culprit`` is (host index, gpu index)."""
    ch, cg = culprit
    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": f"unit-{fault or 'healthy'}",
                "title": "MFU dropped since 02:10",
                "window": {"start": "2026-04-17T01:40:00Z", "end": "2026-04-17T03:10:00Z"},
                "job": {"name": "unit", "ranks": 8, "gpus_per_node": 4},
            }
        ),
    )
    hosts = HOSTS + (["spare-c.example"] if spare_idle_low_gen else [])
    topo = {
        "hosts": [
            {
                "name": h,
                "rack": "r1",
                "gpus": [{"index": i, "pci_bus_id": f"00000000:{b.upper()}:00.0"} for i, b in enumerate(BUS)],
                "nics": [
                    {
                        "ibdev": "mlx5_0",
                        "netdev": "ibp1s0",
                        "pci_bus_id": "0000:1a:00.0",
                        "port": 1,
                        "link_layer": "InfiniBand",
                        "switch": "leaf-1",
                        "switch_port": f"Ethernet{4 * k}",
                    }
                ],
            }
            for k, h in enumerate(hosts)
        ],
        "ranks": [{"rank": r, "host": HOSTS[r // 4], "gpu": r % 4} for r in range(8)],
    }
    _w(root, "topology.json", json.dumps(topo))
    for hi, host in enumerate(hosts):
        devices = []
        spare = host.startswith("spare")
        for gi, b in enumerate(BUS):
            is_culprit = (hi, gi) == culprit
            d: dict[str, Any] = {
                "index": gi,
                "uuid": f"GPU-{hi}{gi}",
                "pci_bus_id": f"00000000:{b.upper()}:00.0",
                "name": "NVIDIA H100 80GB HBM3",
                "nvmlDeviceGetCurrPcieLinkGeneration": 1 if spare else 5,
                "nvmlDeviceGetMaxPcieLinkGeneration": 5,
                "nvmlDeviceGetCurrPcieLinkWidth": 16,
                "nvmlDeviceGetMaxPcieLinkWidth": 16,
                "nvmlDeviceGetTemperature": 83 if (hi, gi) == (0, 1) else 62,
                "nvmlDeviceGetPowerUsage": 650000,
                "nvmlDeviceGetEnforcedPowerLimit": 700000,
                "nvmlDeviceGetClockInfo": {"sm": 345 if spare else 1980, "mem": 2619},
                "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
                "nvmlDeviceGetCurrentClocksEventReasons": 1 if spare else 0,
                "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
                "nvmlDeviceGetRemappedRows": {
                    "corrected": 0,
                    "uncorrected": 0,
                    "pending": False,
                    "failure": False,
                },
            }
            cur_w = 16
            if is_culprit and fault == "pcie_downtrain":
                d["nvmlDeviceGetCurrPcieLinkWidth"] = cur_w = 8
            if is_culprit and fault == "thermal_throttle":
                d.update(
                    {
                        "nvmlDeviceGetTemperature": 91,
                        "nvmlDeviceGetCurrentClocksEventReasons": 0x40,
                        "nvmlDeviceGetClockInfo": {"sm": 1410, "mem": 2619},
                    }
                )
            if is_culprit and fault == "power_throttle":
                d.update(
                    {
                        "nvmlDeviceGetPowerUsage": 699000,
                        "nvmlDeviceGetCurrentClocksEventReasons": 0x80,
                        "nvmlDeviceGetClockInfo": {"sm": 1290, "mem": 2619},
                    }
                )
            if is_culprit and fault == "hbm_degradation":
                d["nvmlDeviceGetTotalEccErrors"] = {"corrected_volatile": 12, "uncorrected_volatile": 2}
                d["nvmlDeviceGetRemappedRows"] = {
                    "corrected": 0,
                    "uncorrected": 1,
                    "pending": True,
                    "failure": False,
                }
            if is_culprit and fault == "gpu_fell_off_bus":
                d = {"index": gi, "pci_bus_id": d["pci_bus_id"], "error": "GPU is lost"}
            devices.append(d)
            sysdir = f"nodes/{host}/sys/bus/pci/devices/0000:{b}:00.0"
            lost = is_culprit and fault == "gpu_fell_off_bus"
            _w(
                root,
                f"{sysdir}/current_link_speed",
                "Unknown\n" if lost else ("2.5 GT/s PCIe\n" if spare else "32.0 GT/s PCIe\n"),
            )
            _w(root, f"{sysdir}/max_link_speed", "32.0 GT/s PCIe\n")
            _w(root, f"{sysdir}/current_link_width", "63\n" if lost else f"{cur_w}\n")
            _w(root, f"{sysdir}/max_link_width", "16\n")
        _w(root, f"nodes/{host}/nvml.json", json.dumps({"driver_version": "550.90.07", "devices": devices}))
        _w(root, f"nodes/{host}/collected.json", json.dumps({"now": END, "boot": START - 86400 * 3}))
        lines = ["[   12.000001] pci 0000:18:00.0: enabling device"]
        if host == HOSTS[0]:
            # benign history: an application XID from two days before the window
            lines.append(
                f"[{86400 * 1.0:.6f}] NVRM: Xid (PCI:0000:3a:00): 13, pid=4242, name=python3, Graphics Exception"
            )
        if hi == ch and fault == "gpu_fell_off_bus":
            up = 86400 * 3 + 1800
            lines.append(
                f"[{up:.6f}] NVRM: Xid (PCI:0000:{BUS[cg]}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
            )
        if hi == ch and fault == "hbm_degradation":
            up = 86400 * 3 + 1800
            lines.append(
                f"[{up:.6f}] NVRM: Xid (PCI:0000:{BUS[cg]}:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1."
            )
        _w(root, f"nodes/{host}/cmd/dmesg.txt", "\n".join(lines) + "\n")
    if steps:
        rng = np.random.default_rng(7)
        slow = {
            "pcie_downtrain": 1.25,
            "thermal_throttle": 1.2,
            "power_throttle": 1.2,
            "hbm_degradation": 1.0,
        }.get(fault or "", 1.0)
        culprit_rank = ch * 4 + cg
        rows = ["step,rank,start_unix,duration_s" + (",compute_s" if compute else "")]
        t = START
        last = n_steps if fault != "gpu_fell_off_bus" else n_steps // 2
        for s in range(last):
            comp = 1.0 + rng.normal(0, 0.01, 8)
            if s >= n_steps // 3:
                comp[culprit_rank] *= slow
            dur = comp.max() + 0.2
            for r in range(8):
                rows.append(
                    f"{s},{r},{t:.3f},{dur + rng.normal(0, 0.001):.4f}"
                    + (f",{comp[r]:.4f}" if compute else "")
                )
            t += 45.0  # the job logs every Nth step: logged steps cover the window
        _w(root, "job/steps.csv", "\n".join(rows) + "\n")
    return root


@pytest.fixture
def make_bundle(tmp_path: Path):
    def make(fault: str | None = None, **kw: Any) -> Path:
        return build_bundle(tmp_path / (fault or "healthy"), fault, **kw)

    return make


def _ethtool(tx: int, rx: int, extra: dict[str, int] | None = None) -> str:
    stats = {
        "rx_packets_phy": 10_000_000,
        "tx_packets_phy": 10_000_000,
        "rx_prio3_pause": rx,
        "tx_prio3_pause": tx,
        "rx_prio3_pause_duration": rx * 3,
        "tx_prio3_pause_duration": tx * 3,
        "tx_pause_storm_warning_events": 0,
        "tx_pause_storm_error_events": 0,
        "rx_discards_phy": 0,
        "rx_out_of_buffer": 0,
        "link_down_events_phy": 0,
        "rx_symbol_err_phy": 0,
        "rx_crc_errors_phy": 0,
        **(extra or {}),
    }
    return "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in stats.items())


def build_fabric_bundle(root: Path, fault: str | None = None) -> Path:
    """A RoCE fleet (the 2-host base plus NIC counters, switch outputs and job logs) with one fabric fault."""
    build_bundle(root, None, spare_idle_low_gen=False)
    hosts = HOSTS
    for hi, host in enumerate(hosts):
        origin = hi == 1
        before, now = _ethtool(100, 100), _ethtool(120, 130)
        if fault in ("pfc_pause_storm", "pcie_downtrain_nic"):
            now = _ethtool(
                5_000_100 if origin else 150,
                130 if origin else 900_000,
                {"tx_pause_storm_warning_events": 3, "rx_out_of_buffer": 40_000} if origin else None,
            )
        if fault == "link_degradation" and origin:
            now = _ethtool(120, 130, {"rx_symbol_err_phy": 5_000, "link_down_events_phy": 4})
        _w(root, f"nodes/{host}/before/cmd/ethtool-S-ibp1s0.txt", before)
        _w(root, f"nodes/{host}/cmd/ethtool-S-ibp1s0.txt", now)
        _w(
            root,
            f"nodes/{host}/collected.json",
            json.dumps({"before": START, "now": END, "boot": START - 86400 * 3}),
        )
        nic = f"nodes/{host}/sys/bus/pci/devices/0000:1a:00.0"
        narrow = fault == "pcie_downtrain_nic" and origin
        _w(root, f"{nic}/current_link_speed", "32.0 GT/s PCIe\n")
        _w(root, f"{nic}/max_link_speed", "32.0 GT/s PCIe\n")
        _w(root, f"{nic}/current_link_width", "8\n" if narrow else "16\n")
        _w(root, f"{nic}/max_link_width", "16\n")
    # more NICs so that "the fleet" has a median: two more hosts of NIC-only evidence
    for extra in ("node-c.example", "node-d.example"):
        _w(root, f"nodes/{extra}/before/cmd/ethtool-S-ibp1s0.txt", _ethtool(100, 100))
        _w(
            root,
            f"nodes/{extra}/cmd/ethtool-S-ibp1s0.txt",
            _ethtool(110, 800_000 if fault == "pfc_pause_storm" else 120),
        )
        _w(root, f"nodes/{extra}/collected.json", json.dumps({"before": START, "now": END}))
    topo = json.loads((root / "topology.json").read_text())
    for extra in ("node-c.example", "node-d.example"):
        topo["hosts"].append(
            {
                "name": extra,
                "gpus": [],
                "nics": [
                    {
                        "ibdev": "mlx5_0",
                        "netdev": "ibp1s0",
                        "pci_bus_id": "0000:1a:00.0",
                        "link_layer": "Ethernet",
                        "switch": "leaf-1",
                        "switch_port": f"Ethernet{8 + 4 * len(topo['hosts'])}",
                    }
                ],
            }
        )
    for h in topo["hosts"]:
        for n in h["nics"]:
            n["link_layer"] = "Ethernet"
    topo["switches"] = [
        {
            "name": "leaf-1",
            "tier": "leaf",
            "links": [
                {"port": f"Ethernet{64 + 4 * i}", "peer": f"spine-{i}", "peer_port": "Ethernet0"}
                for i in range(4)
            ],
        },
        *({"name": f"spine-{i}", "tier": "spine", "links": []} for i in range(4)),
    ]
    (root / "topology.json").write_text(json.dumps(topo))
    if fault == "pfc_pause_storm":
        _w(
            root,
            "switches/leaf-1/cmd/show-pfcwd-stats.txt",
            "      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP\n"
            "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------\n"
            "Ethernet4:3   stormed                        1/0    0/41507426           0/0         0/41507426                0/0\n"
            "Ethernet0:3  operational                     0/0      1000/0         1000/0             1000/0             1000/0\n",
        )
    om = ["# TYPE ifHCOutOctets counter"]
    for i in range(4):
        rate = (40e9 if i < 1 else 2e9) if fault == "ecmp_hash_polarization" else 10e9
        for k in range(10):
            t = START + k * 600
            om.append(
                f'ifHCOutOctets{{instance="leaf-1",ifName="Ethernet{64 + 4 * i}"}} {rate / 8 * k * 600:.0f} {t:.0f}'
            )
    om.append("# EOF")
    _w(root, "metrics/switch.om", "\n".join(om) + "\n")
    transport = (
        "NET/Socket : Using [0]eth0:10.0.0.1<0>"
        if fault == "nccl_misconfiguration"
        else "NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"
    )
    log = [f"node-a.example:1001:1101 [0] NCCL INFO {transport}", "NCCL version 2.21.5+cuda12.4"]
    if fault == "nccl_misconfiguration":
        log.insert(0, "node-a.example:1001:1101 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.")
    _w(root, "job/logs/rank0.log", "\n".join(log) + "\n")
    if fault == "host_contention":
        for hi, host in enumerate(hosts):
            load = 96.0 if hi == 1 else 9.5
            _w(
                root,
                f"nodes/{host}/cmd/top.txt",
                f"top - 02:30:01 up 3 days,  1:01,  0 users,  load average: {load}, {load}, {load}\n"
                "Tasks: 900 total,   3 running, 897 sleeping,   0 stopped,   0 zombie\n"
                "%Cpu(s): 90.0 us,  5.0 sy,  0.0 ni,  5.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n\n"
                "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
                + (
                    "  77001 backup    20   0  1.2g   200m   10m R  6400.0  0.1  99:00.00 gzip\n"
                    if hi == 1
                    else ""
                )
                + "   1001 train     20   0   80g    10g   1g R  800.0  5.0 999:00.00 python3\n",
            )
        for extra in ("node-c.example", "node-d.example"):
            _w(
                root,
                f"nodes/{extra}/cmd/top.txt",
                "top - 02:30:01 up 3 days,  1:01,  0 users,  load average: 9.0, 9.0, 9.0\n",
            )
    return root


@pytest.fixture
def make_fabric_bundle(tmp_path: Path):
    def make(fault: str | None = None) -> Path:
        return build_fabric_bundle(tmp_path / (fault or "fabric-healthy"), fault)

    return make


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL for the whole test session (tests take databases of their own from it)."""
    from tests.harness.service.pgcluster import Cluster

    c = Cluster().start()
    yield c
    c.stop()
