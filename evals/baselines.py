"""Two baselines scored in the same run as the investigator, so its value is a measured number.

- ``fleet_average``: the dashboard view. It sees fleet-wide averages only (mean step time, mean
  GPU temperature, mean SM clock) and alerts when one crosses a threshold; it cannot localize,
  so it blames the job, with the class the crossing panel stands for.
- ``signatures``: a node health checker in the style of gpud or NHC. First match wins: an XID in
  the kernel log blames that GPU (by XID class), a thermal or power clock-event bit blames
  thermal throttling, a link whose current speed or width is below its maximum blames PCIe.
  No time window, no job placement, no peers: exactly what such checkers do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from forensic.sandbox import Bundle, ForensicError
from forensic.tools._inventory import inventory
from forensic.tools.base import ToolContext
from forensic.tools.parsers.kernel_log import parse_kernel_log, xid_info
from forensic.tools.parsers.openmetrics import parse_openmetrics
from forensic.tools.parsers.sysfs import parse_link_speed, parse_link_width

BASELINES = ("fleet_average", "signatures")

_XID_CLASS = {"fell_off_bus": "gpu_fell_off_bus", "memory": "hbm_degradation", "nvlink": "nvlink_fault"}


def _fleet_average(b: Bundle) -> tuple[str, str | None]:
    ratio = None
    if b.fs.exists("job/steps.csv"):
        rows = []
        for line in b.fs.read_text("job/steps.csv").splitlines()[1:]:
            parts = line.split(",")
            try:
                rows.append((float(parts[2]), float(parts[3])))
            except (IndexError, ValueError):
                continue
        if len(rows) > 20:
            arr = np.array(sorted(rows))
            half = len(arr) // 2
            ratio = arr[half:, 1].mean() / max(arr[:half, 1].mean(), 1e-9)
    temps, clocks, maxclock = [], [], []
    for rel in b.files("metrics", (".om",)):
        ms = parse_openmetrics(b.fs.read_text(rel))
        temps += [float(np.nanmean(s.values)) for s in ms.select("DCGM_FI_DEV_GPU_TEMP") if s.values.size]
        clocks += [float(np.nanmean(s.values)) for s in ms.select("DCGM_FI_DEV_SM_CLOCK") if s.values.size]
        maxclock += [float(np.nanmax(s.values)) for s in ms.select("DCGM_FI_DEV_SM_CLOCK") if s.values.size]
    if temps and np.mean(temps) > 83:
        return "thermal_throttle", "job"
    if clocks and maxclock and np.mean(clocks) < 0.9 * np.max(maxclock):
        return "power_throttle", "job"
    if ratio is not None and ratio > 1.10:
        return "input_pipeline_stall", "job"
    return "healthy", None


def _signatures(b: Bundle) -> tuple[str, str | None]:
    ctx = ToolContext(b)
    hosts = b.host_names()
    for host in hosts:
        node = b.host(host)
        if not node.has_command(["dmesg"]):
            continue
        inv = inventory(ctx, host)
        for ev in parse_kernel_log(node.run(["dmesg"])).events:
            if ev.xid is None:
                continue
            dev = inv.by_pci(ev.pci)
            comp = dev.component(host) if dev else host
            return _XID_CLASS.get(xid_info(ev.xid).category, "gpu_fell_off_bus"), comp
    for host in hosts:
        inv = inventory(ctx, host)
        for d in inv.nvml.devices if inv.nvml else []:
            if d.clocks_event_reasons and d.clocks_event_reasons & (0x4 | 0x8 | 0x20 | 0x40 | 0x80):
                return "thermal_throttle", f"{host}/gpu{d.index}"
    for host in hosts:
        inv = inventory(ctx, host)
        node = b.host(host)
        for dev in inv.devices():
            if dev.pci is None:
                continue
            base = f"/sys/bus/pci/devices/{dev.pci.sysfs_form()}"
            try:
                cs, ms = (parse_link_speed(node.read(f"{base}/{f}")) for f in ("current_link_speed", "max_link_speed"))
                cw, mw = (parse_link_width(node.read(f"{base}/{f}")) for f in ("current_link_width", "max_link_width"))
            except ForensicError:
                continue
            if (cs and ms and cs < ms) or (cw and mw and cw < mw):
                return "pcie_downtrain", dev.component(host)
    return "healthy", None


def score_baseline(name: str, case: Path, split: str) -> dict[str, Any]:
    expected = json.loads((case / "truth.json").read_text())
    expected = {"root_cause": expected.get("root_cause"), "component": expected.get("component")}
    try:
        b = Bundle(case / "bundle")
        rc, comp = _fleet_average(b) if name == "fleet_average" else _signatures(b)
        error = None
    except Exception as exc:  # a baseline that cannot read a case scores it wrong
        rc, comp, error = None, None, f"{type(exc).__name__}: {exc}"
    out = {
        "id": case.name, "split": split, "expected": expected,
        "got": {"root_cause": rc, "component": comp, "status": "baseline"},
        "root_cause_ok": rc == expected["root_cause"], "component_ok": comp == expected["component"],
        "top3_ok": rc == expected["root_cause"] and comp == expected["component"],
        "tool_calls": 0, "wall_s": 0.0, "findings": 0, "findings_verified": 0,
    }
    if error:
        out["error"] = error
    return out
