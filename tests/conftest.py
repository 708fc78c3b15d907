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


def build_bundle(root: Path, fault: str | None = None, *, culprit: tuple[int, int] = (1, 2), steps: bool = True,
                 compute: bool = True, spare_idle_low_gen: bool = True, n_steps: int = 120) -> Path:
    """Write a bundle under ``root``; ``culprit`` is (host index, gpu index)."""
    ch, cg = culprit
    _w(root, "incident.json", json.dumps({
        "schema": "forensic.bundle/v1", "id": f"unit-{fault or 'healthy'}", "title": "MFU dropped since 02:10",
        "window": {"start": "2026-04-17T01:40:00Z", "end": "2026-04-17T03:10:00Z"},
        "job": {"name": "unit", "ranks": 8, "gpus_per_node": 4},
    }))
    hosts = HOSTS + (["spare-c.example"] if spare_idle_low_gen else [])
    topo = {"hosts": [{"name": h, "rack": "r1", "gpus": [{"index": i, "pci_bus_id": f"00000000:{b.upper()}:00.0"} for i, b in enumerate(BUS)],
                       "nics": [{"ibdev": "mlx5_0", "netdev": "ibp1s0", "pci_bus_id": "0000:1a:00.0", "port": 1,
                                 "link_layer": "InfiniBand", "switch": "leaf-1", "switch_port": f"Ethernet{4 * k}"}]}
                      for k, h in enumerate(hosts)],
            "ranks": [{"rank": r, "host": HOSTS[r // 4], "gpu": r % 4} for r in range(8)]}
    _w(root, "topology.json", json.dumps(topo))
    for hi, host in enumerate(hosts):
        devices = []
        spare = host.startswith("spare")
        for gi, b in enumerate(BUS):
            is_culprit = (hi, gi) == culprit
            d: dict[str, Any] = {
                "index": gi, "uuid": f"GPU-{hi}{gi}", "pci_bus_id": f"00000000:{b.upper()}:00.0", "name": "NVIDIA H100 80GB HBM3",
                "nvmlDeviceGetCurrPcieLinkGeneration": 1 if spare else 5, "nvmlDeviceGetMaxPcieLinkGeneration": 5,
                "nvmlDeviceGetCurrPcieLinkWidth": 16, "nvmlDeviceGetMaxPcieLinkWidth": 16,
                "nvmlDeviceGetTemperature": 83 if (hi, gi) == (0, 1) else 62, "nvmlDeviceGetPowerUsage": 650000,
                "nvmlDeviceGetEnforcedPowerLimit": 700000,
                "nvmlDeviceGetClockInfo": {"sm": 345 if spare else 1980, "mem": 2619}, "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
                "nvmlDeviceGetCurrentClocksEventReasons": 1 if spare else 0,
                "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
                "nvmlDeviceGetRemappedRows": {"corrected": 0, "uncorrected": 0, "pending": False, "failure": False},
            }
            cur_w = 16
            if is_culprit and fault == "pcie_downtrain":
                d["nvmlDeviceGetCurrPcieLinkWidth"] = cur_w = 8
            if is_culprit and fault == "thermal_throttle":
                d.update({"nvmlDeviceGetTemperature": 91, "nvmlDeviceGetCurrentClocksEventReasons": 0x40,
                          "nvmlDeviceGetClockInfo": {"sm": 1410, "mem": 2619}})
            if is_culprit and fault == "power_throttle":
                d.update({"nvmlDeviceGetPowerUsage": 699000, "nvmlDeviceGetCurrentClocksEventReasons": 0x80,
                          "nvmlDeviceGetClockInfo": {"sm": 1290, "mem": 2619}})
            if is_culprit and fault == "hbm_degradation":
                d["nvmlDeviceGetTotalEccErrors"] = {"corrected_volatile": 12, "uncorrected_volatile": 2}
                d["nvmlDeviceGetRemappedRows"] = {"corrected": 0, "uncorrected": 1, "pending": True, "failure": False}
            if is_culprit and fault == "gpu_fell_off_bus":
                d = {"index": gi, "pci_bus_id": d["pci_bus_id"], "error": "GPU is lost"}
            devices.append(d)
            sysdir = f"nodes/{host}/sys/bus/pci/devices/0000:{b}:00.0"
            lost = is_culprit and fault == "gpu_fell_off_bus"
            _w(root, f"{sysdir}/current_link_speed", "Unknown\n" if lost else ("2.5 GT/s PCIe\n" if spare else "32.0 GT/s PCIe\n"))
            _w(root, f"{sysdir}/max_link_speed", "32.0 GT/s PCIe\n")
            _w(root, f"{sysdir}/current_link_width", "63\n" if lost else f"{cur_w}\n")
            _w(root, f"{sysdir}/max_link_width", "16\n")
        _w(root, f"nodes/{host}/nvml.json", json.dumps({"driver_version": "550.90.07", "devices": devices}))
        _w(root, f"nodes/{host}/collected.json", json.dumps({"now": END, "boot": START - 86400 * 3}))
        lines = ["[   12.000001] pci 0000:18:00.0: enabling device"]
        if host == HOSTS[0]:
            # benign history: an application XID from two days before the window
            lines.append(f"[{86400 * 1.0:.6f}] NVRM: Xid (PCI:0000:3a:00): 13, pid=4242, name=python3, Graphics Exception")
        if hi == ch and fault == "gpu_fell_off_bus":
            up = 86400 * 3 + 1800
            lines.append(f"[{up:.6f}] NVRM: Xid (PCI:0000:{BUS[cg]}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
        if hi == ch and fault == "hbm_degradation":
            up = 86400 * 3 + 1800
            lines.append(f"[{up:.6f}] NVRM: Xid (PCI:0000:{BUS[cg]}:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.")
        _w(root, f"nodes/{host}/cmd/dmesg.txt", "\n".join(lines) + "\n")
    if steps:
        rng = np.random.default_rng(7)
        slow = {"pcie_downtrain": 1.25, "thermal_throttle": 1.2, "power_throttle": 1.2, "hbm_degradation": 1.0}.get(fault or "", 1.0)
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
                rows.append(f"{s},{r},{t:.3f},{dur + rng.normal(0, 0.001):.4f}" + (f",{comp[r]:.4f}" if compute else ""))
            t += 45.0  # the job logs every Nth step: logged steps cover the window
        _w(root, "job/steps.csv", "\n".join(rows) + "\n")
    return root


@pytest.fixture
def make_bundle(tmp_path: Path):
    def make(fault: str | None = None, **kw: Any) -> Path:
        return build_bundle(tmp_path / (fault or "healthy"), fault, **kw)

    return make
