"""Job-wide incidents seen mostly in the fleet's own series, written for these tests: every GPU's
activity and every host's NIC traffic fall together at one scrape, while the job's steps stop being
recorded (a file cut mid-row, a collector that stopped copying it) or are missing.

Kinds:
- ``input_stall``: activity and bytes halve at the onset; the NICs' transmit waits, errors, SM
  clocks and throttle reasons stay as they were (the job gave the GPUs less to do).
- ``fabric``: the same drop, but the NICs' transmit waits climb with it (senders wait on a slower
  fabric): not an input stall, whatever else it is.
- ``hang``: the steps stop (the file ends cleanly); the GPUs' kernels keep spinning at full
  activity while the NICs fall silent: a hung collective, not a record that stopped.
- ``steady``: nothing changes and the steps cover the window.

Presentations vary the fleet names, the activity metric (SM_ACTIVE as a ratio, GPU_UTIL in per
cent), how the steps end (cut mid-row, ending cleanly while the job runs on, or no steps file)
and a decoy (a GPU the job does not use, idle all window). The hosts come from ``tests.conftest.build_bundle``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from tests import job_incidents as ji
from tests.conftest import END, START, build_bundle

SCRAPE = 60.0
ONSET = START + 1800.0  # half an hour into the 90-minute window
GPUS = 4
#: The activity metric and its full level.
ACTIVITY = {"sm_active": ("DCGM_FI_PROF_SM_ACTIVE", 0.92), "gpu_util": ("DCGM_FI_DEV_GPU_UTIL", 100.0)}
#: How the job's steps end: cut mid-row, a file that simply stops (its writer was copied early), none.
STEPS_END = ("cut", "stops", "none")


def _times() -> np.ndarray:
    return np.arange(START - 600.0, END + 1.0, SCRAPE)


def _levels(kind: str, t: float, rng: np.random.Generator) -> tuple[float, float, float]:
    """(activity share of full, NIC bytes/s per device, transmit-wait ticks/s per device) at ``t``."""
    after = t >= ONSET
    noise = 1 + 0.02 * rng.standard_normal()
    if kind == "steady" or not after:
        return 1.0 * min(noise, 1.0), 6e9 * noise, 50.0 * noise
    if kind == "hang":
        return 1.0, 1e3, 50.0 * noise
    act, nic = 0.46 * noise, 2.9e9 * noise
    wait = 50.0 * noise if kind == "input_stall" else 2500.0 * noise
    return act, nic, wait


def _metrics(root: Path, names: list[str], kind: str, activity: str, seed: int, decoy: bool) -> None:
    rng = np.random.default_rng(seed)
    metric, full = ACTIVITY[activity]
    t_all = _times()
    dcgm = [
        f"# TYPE {metric} gauge",
        "# TYPE DCGM_FI_DEV_SM_CLOCK gauge",
        "# TYPE DCGM_FI_DEV_CLOCKS_EVENT_REASONS gauge",
    ]
    node = [
        "# TYPE node_infiniband_port_data_transmitted_bytes_total counter",
        "# TYPE node_infiniband_port_data_received_bytes_total counter",
        "# TYPE node_infiniband_port_transmit_wait_total counter",
        "# TYPE node_infiniband_port_errors_received_total counter",
    ]
    for h in names:
        for g in range(GPUS):
            lab = f'gpu="{g}",UUID="GPU-{abs(hash((h, g))) % 10**8:08d}",device="nvidia{g}",Hostname="{h}"'
            # The decoy: a GPU the job does not use, idle the whole window (at its idle clock).
            idle = decoy and h == names[0] and g == GPUS - 1
            for t in t_all:
                act, _, _ = _levels(kind, t, rng)
                v = 0.0 if idle else full * act
                dcgm.append(f"{metric}{{{lab}}} {v:.4g} {t:.0f}")
                dcgm.append(f"DCGM_FI_DEV_SM_CLOCK{{{lab}}} {210 if idle else 1410} {t:.0f}")
                dcgm.append(f"DCGM_FI_DEV_CLOCKS_EVENT_REASONS{{{lab}}} 0 {t:.0f}")
        for d in range(2):
            lab = f'device="mlx5_{d}",instance="{h}:9100",port="1"'
            tx = rx = wait = 0.0
            for i, t in enumerate(t_all):
                _, rate, w = _levels(kind, t, rng)
                if i:
                    tx += rate * SCRAPE
                    rx += rate * SCRAPE * 0.98
                    wait += w * SCRAPE
                node.append(f"node_infiniband_port_data_transmitted_bytes_total{{{lab}}} {tx:.0f} {t:.0f}")
                node.append(f"node_infiniband_port_data_received_bytes_total{{{lab}}} {rx:.0f} {t:.0f}")
                node.append(f"node_infiniband_port_transmit_wait_total{{{lab}}} {wait:.0f} {t:.0f}")
                node.append(f"node_infiniband_port_errors_received_total{{{lab}}} 0 {t:.0f}")
    (root / "metrics").mkdir(parents=True, exist_ok=True)
    (root / "metrics" / "dcgm.om.gz").write_bytes(gzip.compress(("\n".join(dcgm) + "\n# EOF\n").encode()))
    (root / "metrics" / "node.om").write_text("\n".join(node) + "\n# EOF\n")


def _steps(root: Path, *, until: float, ending: str, seed: int) -> None:
    """Steady steps from the window's start to ``until``; ``cut`` leaves a last row cut mid-row."""
    if ending == "none":
        return
    rng = np.random.default_rng(seed)
    rows = ["step,rank,start_unix,duration_s"]
    t, s = START + 30.0, 100
    while t < until:
        d = 2.0 + 0.01 * rng.standard_normal()
        for r in range(2 * GPUS):
            rows.append(f"{s},{r},{t:.3f},{d + 0.001 * rng.standard_normal():.4f}")
        t += d * ji.LOG_EVERY
        s += ji.LOG_EVERY
    text = "\n".join(rows) + "\n"
    if ending == "cut":
        text += f"{s},0,{t:.3f}"[:9]  # the writer died mid-row
    (root / "job").mkdir(parents=True, exist_ok=True)
    (root / "job" / "steps.csv").write_text(text)


#: What the person says; the incident never names the cause.
TITLES = {
    "input_stall": ("Utilization down on every node at once", "GPU util fell from ~95% to ~45% everywhere."),
    "fabric": ("Utilization down on every node at once", "GPU util roughly halved across the job."),
    "hang": ("Job stuck?", "The loss curve stopped updating."),
    "steady": ("Routine check after the exporter upgrade", "Is the job fine?"),
}


def fleet_incident(
    root: Path, *, kind: str, fleet: str, activity: str, ending: str, decoy: bool = False, seed: int = 7
) -> Path:
    """Write one incident of ``kind`` (see the module docstring) under ``root``."""
    names = ji.FLEETS[fleet]
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    ji._rename(root, names)
    ji._incident(root, *TITLES[kind])
    # The steps stop being recorded well before the onset (the collector copied the file early),
    # or, for a steady job, run to the window's end.
    until = END - 60.0 if kind == "steady" else START + 900.0
    if kind == "hang":
        until = ONSET
    _steps(root, until=until, ending="stops" if kind == "hang" else ending, seed=seed)
    _metrics(root, names, kind, activity, seed, decoy)
    return root
