"""nodes/<host>/nvml.json: NVML readings keyed by the pynvml function that returns them."""

from __future__ import annotations

import numpy as np

from ..fleet import Host
from ..sim import Scenario
from ._time import iso


def build(scn: Scenario, host: Host, t: float, rng: np.random.Generator) -> dict:
    devices = []
    events = []
    extended = scn.opts.get("nvml_extended", False)
    for g in host.gpus:
        gs = scn.gpu(host.name, g.index)
        if gs.lost(t):
            devices.append({"index": g.index, "pci_bus_id": g.pci.nvml, "error": "GPU is lost"})
        else:
            sbe = gs.counters["sbe"].int_at(t)
            dbe = gs.counters["dbe"].int_at(t)
            d = {
                "index": g.index,
                "uuid": g.uuid,
                "pci_bus_id": g.pci.nvml,
                "name": "NVIDIA H100 80GB HBM3",
                "nvmlDeviceGetCurrPcieLinkGeneration": int(gs.pcie_cur_gen.mean(t)),
                "nvmlDeviceGetMaxPcieLinkGeneration": gs.pcie_max_gen,
                "nvmlDeviceGetCurrPcieLinkWidth": int(gs.pcie_cur_width.mean(t)),
                "nvmlDeviceGetMaxPcieLinkWidth": gs.pcie_max_width,
                "nvmlDeviceGetPcieReplayCounter": gs.counters["pcie_replay"].int_at(t),
                "nvmlDeviceGetTemperature": int(round(gs.temp.sample(t, rng))),
                "nvmlDeviceGetPowerUsage": int(round(gs.power.sample(t, rng) * 1000)),
                "nvmlDeviceGetEnforcedPowerLimit": int(gs.power_limit.mean(t) * 1000),
                "nvmlDeviceGetClockInfo": {
                    "sm": _clk(gs.sm_clock.sample(t, rng)),
                    "mem": int(gs.mem_clock.mean(t)),
                },
                "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
                "nvmlDeviceGetCurrentClocksEventReasons": int(gs.reasons.mean(t)),
                "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": sbe, "uncorrected_volatile": dbe},
                "nvmlDeviceGetRemappedRows": {
                    "corrected": gs.counters["remap_corr"].int_at(t),
                    "uncorrected": gs.counters["remap_unc"].int_at(t),
                    "pending": gs.remap_pending_at is not None and t >= gs.remap_pending_at,
                    "failure": gs.remap_failure_at is not None and t >= gs.remap_failure_at,
                },
            }
            if extended:
                d["nvmlDeviceGetUtilizationRates"] = {
                    "gpu": int(round(gs.util.sample(t, rng))),
                    "memory": int(round(gs.util.sample(t, rng) * 0.4)),
                }
                d["nvmlDeviceGetPerformanceState"] = 0
                d["nvmlDeviceGetTemperatureThreshold"] = {"slowdown": 90, "shutdown": 92, "gpu_max": 87}
            devices.append(d)
        for x in gs.xids:
            if scn.t0 - 3600 <= x.t <= t:
                events.append(
                    {"device": g.index, "type": "XidCriticalError", "data": x.code, "time": iso(x.t)}
                )
    events.sort(key=lambda e: (e["time"], e["device"]))
    return {"driver_version": scn.opts["driver"], "devices": devices, "events": events}


def _clk(v: float) -> int:
    return int(round(v / 15.0) * 15) if v > 400 else int(round(v))
