"""Fault families: one module each; ``CAUSES`` maps a root cause to the function that injects it.

Each function takes ``(scenario, rng, variant)``, changes the fleet state from the fault time on,
and sets ``scenario.truth`` to the component that evals/TRUTH.md names for that cause.
"""

from __future__ import annotations

from .bus import gpu_fell_off_bus
from .fabric import ecmp_hash_polarization, link_degradation, pfc_pause_storm
from .host import host_contention
from .job import input_pipeline_stall, nccl_misconfiguration
from .memory import hbm_degradation
from .nvlink import nvlink_fault
from .pcie import apply as pcie_downtrain
from .sdc import silent_data_corruption
from .throttle import power_throttle, thermal_throttle


def healthy(scn, rng, variant):
    scn.truth = {"root_cause": "healthy", "component": None}
    scn.opts["symptom"] = {"kind": "none"}
    scn.notes.append("no fault")


CAUSES = {
    "pcie_downtrain": pcie_downtrain,
    "pfc_pause_storm": pfc_pause_storm,
    "ecmp_hash_polarization": ecmp_hash_polarization,
    "link_degradation": link_degradation,
    "thermal_throttle": thermal_throttle,
    "power_throttle": power_throttle,
    "hbm_degradation": hbm_degradation,
    "gpu_fell_off_bus": gpu_fell_off_bus,
    "nvlink_fault": nvlink_fault,
    "silent_data_corruption": silent_data_corruption,
    "host_contention": host_contention,
    "input_pipeline_stall": input_pipeline_stall,
    "nccl_misconfiguration": nccl_misconfiguration,
    "healthy": healthy,
}

# causes that need a RoCE fabric to exist at all
NEEDS_ETHERNET = {"pfc_pause_storm", "ecmp_hash_polarization"}

__all__ = ["CAUSES", "NEEDS_ETHERNET"]
