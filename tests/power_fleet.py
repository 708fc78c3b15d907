"""Fleets where some GPUs run at a power cap, for the question "is this power capping a fault?".

``write_power_fleet`` writes a bundle of ``hosts`` hosts with 8 GPUs each, host names in several
fleet styles, GPU readings as ``nvml.json`` (enforced limit only), ``nvidia-smi -q`` (with the
default limit) or both, optionally with DCGM series (SM clock, power draw, clock-event reasons, power
violation) beside them. Each GPU's power state is one of:

- ``spread``: at the SW power cap of its default limit, drawing it all, a few per cent below its
  peers' clock: a less efficient chip, how busy GPUs run (the decoy);
- ``deep``: the same cap and limit, clocked far below its peers;
- ``lowered``: the SW power cap at a limit someone lowered to half the default;
- ``brake``: the HW power brake asserted, drawing little.

Steps carry ``compute_s`` unless ``compute=False``; ``late`` maps a GPU to how much slower its rank
computes (0.012 = 1.2%, chip spread; 0.4 = a real straggler), ``slow_after`` makes every step
longer from the middle of the window (a job-wide slowdown), ``diverge`` a rank whose parameter
checksum leaves its replicas'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np

START = 1_781_000_000.0
END = START + 3600.0
GPUS = 8
_BUS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
DEFAULT_W = 700.0
PEER_MHZ = 1955.0
MAX_MHZ = 1980.0

State = Literal["spread", "deep", "lowered", "brake"]
Part = tuple[int, int]  # (host index, gpu index)


def host_names(n: int, style: str) -> list[str]:
    if style == "fqdn":
        return [f"gpu{7100 + i}.sjc2.internal" for i in range(n)]
    if style == "ip":
        return [f"10-44-{3 + i}-{20 + i}" for i in range(n)]
    return [f"h200-x{i:03d}" for i in range(n)]


def _state(state: State | None, rng: np.random.Generator) -> dict[str, float | int]:
    """SM clock, power draw, enforced limit and clock-event reasons of one busy GPU."""
    if state == "spread":
        return {"sm": PEER_MHZ * 0.92, "w": DEFAULT_W * 0.99, "limit": DEFAULT_W, "reasons": 0x4}
    if state == "deep":
        return {"sm": PEER_MHZ * 0.78, "w": DEFAULT_W * 0.995, "limit": DEFAULT_W, "reasons": 0x4}
    if state == "lowered":
        return {"sm": PEER_MHZ * 0.58, "w": DEFAULT_W * 0.497, "limit": DEFAULT_W * 0.5, "reasons": 0x4}
    if state == "brake":
        return {"sm": PEER_MHZ * 0.5, "w": DEFAULT_W * 0.48, "limit": DEFAULT_W, "reasons": 0x88}
    return {
        "sm": PEER_MHZ + float(rng.normal(0, 12)),
        "w": DEFAULT_W * float(rng.uniform(0.86, 0.95)),
        "limit": DEFAULT_W,
        "reasons": 0,
    }


def _smi_gpu(g: int, s: dict[str, float | int]) -> str:
    r = int(s["reasons"])

    def a(bit: int) -> str:
        return "Active" if r & bit else "Not Active"

    return f"""GPU 00000000:{_BUS[g].upper()}:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Minor Number                          : {g}
    PCI
        Bus Id                            : 00000000:{_BUS[g].upper()}:00.0
    Clocks Event Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : {a(0x4)}
        HW Slowdown                       : {a(0x8)}
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : {a(0x80)}
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
    Temperature
        GPU Current Temp                  : 61 C
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 87 C
    GPU Power Readings
        Power Draw                        : {float(s["w"]):.2f} W
        Current Power Limit               : {float(s["limit"]):.2f} W
        Requested Power Limit             : {float(s["limit"]):.2f} W
        Default Power Limit               : {DEFAULT_W:.2f} W
        Max Power Limit                   : {DEFAULT_W:.2f} W
    Clocks
        Graphics                          : {int(s["sm"])} MHz
        SM                                : {int(s["sm"])} MHz
        Memory                            : 2619 MHz
    Max Clocks
        Graphics                          : {int(MAX_MHZ)} MHz
        SM                                : {int(MAX_MHZ)} MHz
        Memory                            : 2619 MHz
"""


def _nvml_gpu(g: int, s: dict[str, float | int]) -> dict:
    return {
        "index": g,
        "name": "NVIDIA H100 80GB HBM3",
        "pci_bus_id": f"00000000:{_BUS[g].upper()}:00.0",
        "nvmlDeviceGetClockInfo": {"sm": int(s["sm"]), "mem": 2619},
        "nvmlDeviceGetMaxClockInfo": {"sm": int(MAX_MHZ), "mem": 2619},
        "nvmlDeviceGetCurrentClocksEventReasons": int(s["reasons"]),
        "nvmlDeviceGetEnforcedPowerLimit": int(float(s["limit"]) * 1000),
        "nvmlDeviceGetPowerUsage": int(float(s["w"]) * 1000),
        "nvmlDeviceGetTemperature": 61,
        "nvmlDeviceGetCurrPcieLinkGeneration": 5,
        "nvmlDeviceGetMaxPcieLinkGeneration": 5,
        "nvmlDeviceGetCurrPcieLinkWidth": 16,
        "nvmlDeviceGetMaxPcieLinkWidth": 16,
        "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
        "nvmlDeviceGetRemappedRows": {"corrected": 0, "uncorrected": 0, "pending": False, "failure": False},
    }


def _dcgm(names: list[str], states: dict[Part, dict[str, float | int]]) -> str:
    times = np.arange(START - 600, END + 1, 60.0)
    lines: list[str] = []
    span = times[1] - times[0]
    for metric, kind in (
        ("DCGM_FI_DEV_SM_CLOCK", "gauge"),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge"),
        ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge"),
        ("DCGM_FI_DEV_POWER_VIOLATION", "counter"),
    ):
        lines.append(f"# TYPE {metric} {kind}")
        for (hi, g), s in sorted(states.items()):
            labels = f'gpu="{g}",UUID="GPU-{hi:04x}{g:04x}",modelName="NVIDIA H100 80GB HBM3",Hostname="{names[hi]}"'
            capped = int(s["reasons"]) & 0x84
            for i, t in enumerate(times):
                v = {
                    "DCGM_FI_DEV_SM_CLOCK": float(s["sm"]),
                    "DCGM_FI_DEV_POWER_USAGE": float(s["w"]),
                    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": float(s["reasons"]),
                    # ns of power violation: a third of the time while capped
                    "DCGM_FI_DEV_POWER_VIOLATION": i * span * 1e9 / 3 if capped else 0.0,
                }[metric]
                lines.append(f"{metric}{{{labels}}} {v:.0f} {t:.0f}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _steps(
    ranks: int,
    rank_of: dict[Part, int],
    late: dict[Part, float],
    *,
    compute: bool,
    slow_after: float,
    diverge: Part | None,
    rng: np.random.Generator,
) -> str:
    header = "step,rank,start_unix,duration_s" + (",compute_s" if compute else "") + ",param_checksum"
    rows = [header]
    t, n = START + 30, 70
    for s in range(n):
        comp = 1.0 + rng.normal(0, 0.004, ranks)
        for part, pct in late.items():
            comp[rank_of[part]] *= 1.0 + pct
        comm = 0.25 * (slow_after if s >= n // 2 else 1.0)
        dur = float(comp.max()) + comm
        for r in range(ranks):
            odd = diverge is not None and r == rank_of[diverge] and s >= n // 2
            rows.append(
                f"{1000 + s * 20},{r},{t:.2f},{dur + rng.normal(0, 0.001):.4f}"
                + (f",{comp[r]:.4f}" if compute else "")
                + f",{'b' if odd else 'a'}{s:05d}"
            )
        t += 50.0
    return "\n".join(rows) + "\n"


def write_power_fleet(
    root: Path,
    *,
    title: str,
    states: dict[Part, State],
    hosts: int = 4,
    style: str = "short",
    readings: Literal["nvml", "smi", "both"] = "nvml",
    dcgm: bool = False,
    compute: bool = True,
    late: dict[Part, float] | None = None,
    slow_after: float = 1.0,
    diverge: Part | None = None,
    seed: int = 5,
) -> list[str]:
    """Write the bundle under ``root``; returns the host names (part (h, g) is ``names[h]/gpu{g}``)."""
    rng = np.random.default_rng(seed)
    names = host_names(hosts, style)

    def w(rel: str, text: str) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    w(
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": f"pw-{style}-{readings}",
                "title": title,
                "window": {"start": START, "end": END},
                "job": {"name": "pw", "ranks": hosts * GPUS, "gpus_per_node": GPUS},
            }
        ),
    )
    rank_of = {(h, g): h * GPUS + g for h in range(hosts) for g in range(GPUS)}
    topo = {
        "hosts": [
            {
                "name": n,
                "rack": f"r{i // 2}",
                "gpus": [
                    {"index": g, "pci_bus_id": f"00000000:{b.upper()}:00.0"} for g, b in enumerate(_BUS)
                ],
                "nics": [],
            }
            for i, n in enumerate(names)
        ],
        "ranks": [{"rank": r, "host": names[h], "gpu": g} for (h, g), r in rank_of.items()],
    }
    w("topology.json", json.dumps(topo))
    all_states = {part: _state(states.get(part), rng) for part in rank_of}
    for h, name in enumerate(names):
        mine = [all_states[(h, g)] for g in range(GPUS)]
        if readings in ("nvml", "both"):
            w(
                f"nodes/{name}/nvml.json",
                json.dumps(
                    {"driver_version": "550.90.07", "devices": [_nvml_gpu(g, s) for g, s in enumerate(mine)]}
                ),
            )
        if readings in ("smi", "both"):
            head = "\n==============NVSMI LOG==============\n\nDriver Version : 550.90.07\n\n"
            w(
                f"nodes/{name}/cmd/nvidia-smi-q.txt",
                head + "".join(_smi_gpu(g, s) for g, s in enumerate(mine)),
            )
        w(f"nodes/{name}/collected.json", json.dumps({"now": END, "boot": START - 86400 * 5}))
        w(f"nodes/{name}/cmd/dmesg.txt", "[   10.000000] pci 0000:18:00.0: enabling device\n")
    if dcgm:
        w("metrics/dcgm.om", _dcgm(names, all_states))
    w(
        "job/steps.csv",
        _steps(
            hosts * GPUS,
            rank_of,
            late or {},
            compute=compute,
            slow_after=slow_after,
            diverge=diverge,
            rng=rng,
        ),
    )
    return names
