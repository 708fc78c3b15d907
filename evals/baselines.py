"""Two baselines scored in the same run as the investigator, so its value is a measured number.

- ``fleet_average``: the dashboard view. It sees fleet-wide averages only (mean step time, mean
  GPU temperature, mean SM clock) and alerts when one crosses a threshold; it cannot localize,
  so it blames the job, with the class the crossing panel stands for.
- ``signatures``: a node health checker as good as gpud or DCGM health watches (rules and their
  sources in ``_signatures`` and docs/baselines.md): in-window critical XIDs, lost GPUs, memory
  errors, thermal or power-brake reasons held with hysteresis, link width below its maximum. No
  alarm on history, on application XIDs or on the normal SW power cap. No job placement, no
  peers: that is what such checkers know.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from forensic.sandbox import Bundle, ForensicError
from forensic.tools._inventory import inventory
from forensic.tools.base import ToolContext
from forensic.tools.kernel_log import read_kernel_log
from forensic.tools.parsers.kernel_log import xid_info
from forensic.tools.parsers.openmetrics import parse_openmetrics, series_host
from forensic.tools.parsers.sysfs import parse_link_width

BASELINES = ("fleet_average", "signatures")

_XID_CLASS = {
    "fell_off_bus": "gpu_fell_off_bus",
    "memory": "hbm_degradation",
    "nvlink": "nvlink_fault",
}  # critical XIDs only


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


#: Rules of the ``signatures`` baseline, each with the checker behaviour it copies (see
#: docs/baselines.md). Windows and thresholds are the checkers' own defaults where they publish them.
SIG_SLACK_S = 3600  # gpud keeps a lookback of recent kernel events; older lines are history
SIG_ENTER = 3  # DCGM-style hysteresis: a reason bit must hold 3 consecutive samples to alarm ...
SIG_EXIT = 3  # ... and clear 3 consecutive samples to stop alarming
SIG_HOT_C = 87.0  # single-snapshot thermal alarm: bit set *and* at the slowdown temperature
_THERMAL_BITS = 0x20 | 0x40
_POWER_BRAKE = 0x80  # HW power brake: an external signal (PSU, BMC); the SW power cap (0x4) is normal


def _hysteresis(bits: np.ndarray) -> bool:
    """True when the condition entered (SIG_ENTER consecutive samples set) at any point."""
    run = 0
    alarm = False
    clear = 0
    for b in bits:
        if b:
            run, clear = run + 1, 0
            if run >= SIG_ENTER:
                alarm = True
        else:
            clear += 1
            if clear >= SIG_EXIT:
                run = 0
    return alarm


def _in_window(t: float | None, start: float | None, end: float | None) -> bool:
    if t is None:  # no wall time: the checker cannot tell it from last week's line, and does not alarm
        return False
    return (start is None or t >= start - SIG_SLACK_S) and (end is None or t <= end + SIG_SLACK_S)


def _signatures(b: Bundle) -> tuple[str, str | None]:
    """A node health checker in the style of gpud / DCGM health watches: first alarm wins.

    1. A critical XID in the kernel log inside the window (79 -> fell off the bus; 48/63/64/92/94/95
       -> memory; 74 -> NVLink); application XIDs (13, 31, 43, 45) do not alarm, history does not.
    2. A GPU NVML cannot read -> fell off the bus.
    3. Uncorrectable volatile ECC, a pending row remap or a remap failure -> HBM.
    4. Thermal slowdown reason bits held SIG_ENTER consecutive DCGM samples (hysteresis), or in a
       single NVML snapshot with the GPU at SIG_HOT_C -> thermal throttle. The HW power brake held
       the same way -> power throttle. The SW power cap alone never alarms.
    5. A link *width* below its maximum on a device NVML or sysfs reads (the current PCIe generation
       drops on idle devices to save power, so speed alone does not alarm) -> PCIe downtrain.
    No job placement and no peers: that is what such checkers know.
    """
    ctx = ToolContext(b)
    hosts = b.host_names()
    start, end = b.window
    for host in hosts:
        try:
            got = read_kernel_log(ctx, host)
        except ForensicError:
            continue
        if got is None:
            continue
        inv = inventory(ctx, host)
        for ev in got[0].events:
            if ev.kind == "fell_off_bus":
                category = "fell_off_bus"
            elif ev.xid is not None:
                category = xid_info(ev.xid).category
            else:
                continue
            if category not in _XID_CLASS or not _in_window(ev.time_unix, start, end):
                continue
            dev = inv.by_pci(ev.pci) if ev.pci else None
            return _XID_CLASS[category], dev.component(host) if dev else host
    for host in hosts:
        inv = inventory(ctx, host)
        for d in inv.nvml.devices if inv.nvml else []:
            if d.index is not None and d.lost:
                return "gpu_fell_off_bus", f"{host}/gpu{d.index}"
    for host in hosts:
        inv = inventory(ctx, host)
        for d in inv.nvml.devices if inv.nvml else []:
            if d.index is not None and (
                (d.ecc_uncorrected_volatile or 0) > 0 or d.remapped_rows_pending or d.remapped_rows_failure
            ):
                return "hbm_degradation", f"{host}/gpu{d.index}"
    reasons = _dcgm_reasons(b)
    if reasons:
        for (host, gpu), bits in sorted(reasons.items()):
            if _hysteresis((bits & _THERMAL_BITS) != 0):
                return "thermal_throttle", f"{host}/gpu{gpu}"
        for (host, gpu), bits in sorted(reasons.items()):
            if _hysteresis((bits & _POWER_BRAKE) != 0):
                return "power_throttle", f"{host}/gpu{gpu}"
    else:
        for host in hosts:
            inv = inventory(ctx, host)
            for d in inv.nvml.devices if inv.nvml else []:
                r = d.clocks_event_reasons or 0
                if d.index is not None and r & _THERMAL_BITS and (d.temperature_c or 0) >= SIG_HOT_C:
                    return "thermal_throttle", f"{host}/gpu{d.index}"
                if d.index is not None and r & _POWER_BRAKE:
                    return "power_throttle", f"{host}/gpu{d.index}"
    for host in hosts:
        inv = inventory(ctx, host)
        node = b.host(host)
        for dev in inv.devices():
            if dev.pci is None:
                continue
            base = f"/sys/bus/pci/devices/{dev.pci.sysfs_form()}"
            try:
                cw, mw = (
                    parse_link_width(node.read(f"{base}/{f}"))
                    for f in ("current_link_width", "max_link_width")
                )
            except ForensicError:
                continue
            if cw and mw and cw < mw and cw not in (63, 255):
                return "pcie_downtrain", dev.component(host)
    return "healthy", None


def _dcgm_reasons(b: Bundle) -> dict[tuple[str, int], np.ndarray]:
    """Clock-event reason samples per (host, gpu) inside the window, from DCGM series."""
    start, end = b.window
    out: dict[tuple[str, int], np.ndarray] = {}
    for rel in b.files("metrics", (".om",)):
        try:
            ms = parse_openmetrics(b.fs.read_text(rel))
        except ForensicError:
            continue
        for name in ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"):
            for s in ms.select(name):
                host = series_host(s.labels)
                try:
                    gpu = int(s.labels.get("gpu", ""))
                except ValueError:
                    continue
                mask = np.isfinite(s.values) & np.isfinite(s.timestamps)
                if start is not None:
                    mask &= s.timestamps >= start
                if end is not None:
                    mask &= s.timestamps <= end
                if host and mask.any():
                    out[(host, gpu)] = s.values[mask].astype(np.int64)
    return out


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
        "id": case.name,
        "split": split,
        "expected": expected,
        "got": {"root_cause": rc, "component": comp, "status": "baseline"},
        "root_cause_ok": rc == expected["root_cause"],
        "component_ok": comp == expected["component"],
        "top3_ok": rc == expected["root_cause"] and comp == expected["component"],
        "tool_calls": 0,
        "wall_s": 0.0,
        "findings": 0,
        "findings_verified": 0,
    }
    if error:
        out["error"] = error
    return out
