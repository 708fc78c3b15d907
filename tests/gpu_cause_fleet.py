"""A generator of GPU-fault incidents with a decoy on another host, for tests of which cause and
which part an investigation names.

The fleet: several hosts (names from a few naming schemes), eight or four GPUs each, one rank per
GPU. The job's steps slow from the middle of the window because one GPU (the culprit) computes
late from then on; a second GPU elsewhere computes about 1% late from the start and reads, in its
NVML snapshot and DCGM series, as power-capped (at its limit under the SW power cap, a little below
its peers' clock): a real but minor anomaly that cannot explain the slowdown. The culprit's fault
is written in one of several presentations (``FAULTS``), each in the formats of spec/bundle.md:
DCGM series in OpenMetrics, the NVML snapshot, the kernel log.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WINDOW_START = 1_780_000_200  # 2026-05-28T20:30:00Z
WINDOW_END = WINDOW_START + 3600
ONSET = WINDOW_START + 900
SAMPLE_EVERY = 300
BUS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]

FLEETS = {
    "short": [f"gpu-c{n:02d}" for n in range(11, 15)],
    "dashed-ip": [f"10-61-7-{n}" for n in range(21, 26)],
    "fqdn": [f"hgx-{n}.rack-9.dc-west.example.internal" for n in range(3)],
}

#: Presentations of the culprit's fault: the root cause they show.
FAULTS: dict[str, str | None] = {
    # Throttled on and off: the DCGM series show the heat, the violation time and the low clock
    # through the window, while the snapshot at collection caught it between episodes.
    "thermal_series_only": "thermal_throttle",
    # Throttled still at collection: the snapshot shows it too.
    "thermal_snapshot": "thermal_throttle",
    # Rows pending remap, an ECC error storm in the series and Xid 63 in the kernel log.
    "hbm_ecc": "hbm_degradation",
    # NVLink CRC and replay errors rising in the DCGM series, with the Xid in the series.
    "nvlink_dcgm": "nvlink_fault",
    # The culprit computes late and nothing recorded says why.
    "no_evidence": None,
    # Only the lightweight snapshot ran: NVML and nvidia-smi nvlink -e at the window's start and at
    # collection, no steps, no DCGM. The culprit's link counters grew by orders of magnitude.
    "nvlink_counters_only": "nvlink_fault",
}


@dataclass(frozen=True)
class Layout:
    hosts: list[str]
    gpus: int
    model: str
    culprit: tuple[int, int]
    decoy: tuple[int, int]

    def rank(self, host: int, gpu: int) -> int:
        return host * self.gpus + gpu


def layout(fleet: str, gpus: int = 8) -> Layout:
    hosts = FLEETS[fleet]
    model = "NVIDIA H100 80GB HBM3" if gpus == 8 else "NVIDIA A100-SXM4-80GB"
    # The culprit on a later host than the decoy, so host order does not find it.
    return Layout(hosts, gpus, model, culprit=(len(hosts) - 1, gpus - 2), decoy=(0, 1))


def _w(root: Path, rel: str, text: str, gz: bool = False) -> None:
    p = root / (rel + (".gz" if gz else ""))
    p.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)


def _iso(t: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _steps(lay: Layout, late: float, rng: np.random.Generator) -> str:
    """Every 25th step logged; from ONSET the culprit computes ``late`` x slower; the decoy
    computes 1.2% slower throughout."""
    n = len(lay.hosts) * lay.gpus
    rows = ["step,rank,start_unix,duration_s,compute_s"]
    t, step = float(WINDOW_START), 1000
    culprit, decoy = lay.rank(*lay.culprit), lay.rank(*lay.decoy)
    while t < WINDOW_END:
        comp = 2.4 * (1.0 + rng.normal(0, 0.002, n))
        comp[decoy] *= 1.012
        if t >= ONSET:
            comp[culprit] *= late
        dur = float(comp.max()) + 0.6
        for r in range(n):
            rows.append(f"{step},{r},{t:.3f},{dur + rng.normal(0, 0.0005):.4f},{comp[r]:.4f}")
        t += 25 * dur
        step += 25
    return "\n".join(rows) + "\n"


def _device(lay: Layout, h: int, g: int, fault: str | None, decoy: bool, rng: np.random.Generator) -> dict:
    h100 = lay.gpus == 8
    max_sm, limit = (1980, 700000) if h100 else (1410, 400000)
    d = {
        "index": g,
        "name": lay.model,
        "uuid": f"GPU-{h:02x}{g:02x}0000-1111-2222-3333-444455556666",
        "pci_bus_id": f"00000000:{BUS[g].upper()}:00.0",
        "nvmlDeviceGetClockInfo": {"sm": int(max_sm * (0.985 + rng.normal(0, 0.004))), "mem": 2619},
        "nvmlDeviceGetMaxClockInfo": {"sm": max_sm, "mem": 2619},
        "nvmlDeviceGetCurrentClocksEventReasons": 0,
        "nvmlDeviceGetPowerUsage": int(limit * 0.9),
        "nvmlDeviceGetEnforcedPowerLimit": limit,
        "nvmlDeviceGetTemperature": 58 + int(rng.integers(0, 6)),
        "nvmlDeviceGetCurrPcieLinkGeneration": 5 if h100 else 4,
        "nvmlDeviceGetMaxPcieLinkGeneration": 5 if h100 else 4,
        "nvmlDeviceGetCurrPcieLinkWidth": 16,
        "nvmlDeviceGetMaxPcieLinkWidth": 16,
        "nvmlDeviceGetPcieReplayCounter": 0,
        "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
        "nvmlDeviceGetRemappedRows": {"corrected": 0, "uncorrected": 0, "pending": False, "failure": False},
    }
    if decoy:
        d.update(
            {
                "nvmlDeviceGetPowerUsage": limit - 800,
                "nvmlDeviceGetCurrentClocksEventReasons": 0x4,
                "nvmlDeviceGetClockInfo": {"sm": int(max_sm * 0.905), "mem": 2619},
            }
        )
    if fault == "thermal_snapshot":
        d.update(
            {
                "nvmlDeviceGetTemperature": 90,
                "nvmlDeviceGetCurrentClocksEventReasons": 0x48,  # HW slowdown + HW thermal slowdown
                "nvmlDeviceGetClockInfo": {"sm": int(max_sm * 0.64), "mem": 2619},
                "nvmlDeviceGetPowerUsage": int(limit * 0.66),
            }
        )
    elif fault == "thermal_series_only":
        d["nvmlDeviceGetTemperature"] = 72  # cooled below slowdown at the moment of collection
    elif fault == "hbm_ecc":
        d["nvmlDeviceGetTotalEccErrors"] = {"corrected_volatile": 41230, "uncorrected_volatile": 0}
        d["nvmlDeviceGetRemappedRows"] = {"corrected": 1, "uncorrected": 0, "pending": True, "failure": False}
    return d


def _dcgm(lay: Layout, fault: str, rng: np.random.Generator) -> str:
    """DCGM exporter series over the window, one sample every SAMPLE_EVERY s."""
    h100 = lay.gpus == 8
    max_sm, limit_w = (1980, 700.0) if h100 else (1410, 400.0)
    times = list(range(WINDOW_START, WINDOW_END + 1, SAMPLE_EVERY))
    fields = [
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        "DCGM_FI_DEV_POWER_VIOLATION",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_DEV_GPU_UTIL",
    ]
    out: dict[str, list[str]] = {f: [] for f in fields}
    for h, host in enumerate(lay.hosts):
        for g in range(lay.gpus):
            labels = (
                f'gpu="{g}",UUID="GPU-{h:02x}{g:02x}0000-1111-2222-3333-444455556666",'
                f'pci_bus_id="00000000:{BUS[g].upper()}:00.0",device="nvidia{g}",'
                f'modelName="{lay.model}",hostname="{host}"'
            )
            is_culprit, is_decoy = (h, g) == lay.culprit, (h, g) == lay.decoy
            thermal_ns = power_ns = sbe = crc = replay = 0
            for i, t in enumerate(times):
                after = t >= ONSET
                sm = max_sm * (0.985 + rng.normal(0, 0.004))
                temp = 60 + rng.normal(0, 1.5)
                power = limit_w * (0.9 + rng.normal(0, 0.01))
                reasons, xid = 0, 0
                if is_decoy:
                    sm, power, reasons = max_sm * 0.905, limit_w - 0.8, 0x4
                    power_ns += SAMPLE_EVERY * 10**9 * 0.6 if i else 0
                if is_culprit and after:
                    if fault.startswith("thermal"):
                        # on and off: throttled in most samples, not all
                        on = fault == "thermal_snapshot" or i % 5 != 0
                        if on:
                            sm, temp, power, reasons = max_sm * 0.64, 90.0, limit_w * 0.66, 0x48
                            thermal_ns += SAMPLE_EVERY * 10**9 * 0.7
                    elif fault == "hbm_ecc":
                        sbe += int(rng.integers(2000, 4000))
                        xid = 63 if t == ONSET + (-ONSET % SAMPLE_EVERY) else 0
                    elif fault == "nvlink_dcgm":
                        crc += int(rng.integers(8000, 12000))
                        replay += int(rng.integers(2000, 3000))
                        xid = 74 if t == ONSET + (-ONSET % SAMPLE_EVERY) else 0
                vals = [
                    round(sm),
                    round(temp),
                    round(power, 3),
                    reasons,
                    thermal_ns,
                    int(power_ns),
                    sbe,
                    0,
                    crc,
                    replay,
                    xid,
                    99,
                ]
                for f, v in zip(fields, vals, strict=True):
                    out[f].append(f"{f}{{{labels}}} {v} {t}")
    lines: list[str] = []
    for f in fields:
        kind = (
            "gauge"
            if f in ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")
            else "counter"
        )
        lines += [f"# TYPE {f} {kind}", *out[f]]
    return "\n".join(lines) + "\n# EOF\n"


def _nvlink_e(lay: Layout, h: int, grown: bool) -> str:
    """nvidia-smi nvlink -e for one host; the culprit's link 3 has errors (many more if ``grown``)."""
    out = []
    for g in range(lay.gpus):
        out.append(f"GPU {g}: {lay.model} (UUID: GPU-{h:02x}{g:02x}0000-1111-2222-3333-444455556666)")
        for link in range(18 if lay.gpus == 8 else 12):
            replay = recovery = crc = 0
            if (h, g) == lay.culprit and link == 3:
                replay, recovery, crc = (38410, 27, 120500) if grown else (35, 1, 800)
            out += [
                f"\t Link {link}: Replay Errors: {replay}",
                f"\t Link {link}: Recovery Errors: {recovery}",
                f"\t Link {link}: CRC Errors: {crc}",
            ]
    return "\n".join(out) + "\n"


def build(root: Path, fleet: str, fault: str, *, gpus: int = 8, gz: bool = False, seed: int = 7) -> Layout:
    """Write one incident under ``root``; returns its layout (``culprit`` is the truth's part)."""
    rng = np.random.default_rng(seed)
    lay = layout(fleet, gpus)
    snapshot_only = fault == "nvlink_counters_only"
    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": f"gpucause-{fleet}-{fault}",
                "title": f"Step time up about 30% since {_iso(ONSET)[11:16]}",
                "window": {"start": _iso(WINDOW_START), "end": _iso(WINDOW_END)},
                "job": {"name": "pretrain", "ranks": len(lay.hosts) * lay.gpus, "gpus_per_node": lay.gpus},
                "reported": "",
            }
        ),
    )
    topo = {
        "hosts": [
            {
                "name": host,
                "gpus": [
                    {"index": g, "pci_bus_id": f"00000000:{BUS[g].upper()}:00.0"} for g in range(lay.gpus)
                ],
            }
            for host in lay.hosts
        ],
        "ranks": [
            {"rank": lay.rank(h, g), "host": host, "gpu": g}
            for h, host in enumerate(lay.hosts)
            for g in range(lay.gpus)
        ],
    }
    _w(root, "topology.json", json.dumps(topo))
    if not snapshot_only:
        _w(root, "job/steps.csv", _steps(lay, 1.3, rng), gz)
        _w(root, "metrics/dcgm.om", _dcgm(lay, fault, rng), gz)
    for h, host in enumerate(lay.hosts):
        devices = [
            _device(
                lay,
                h,
                g,
                fault if (h, g) == lay.culprit else None,
                # With only snapshots, every host has a GPU at its power cap, as a busy fleet does.
                (h, g) == lay.decoy
                or (snapshot_only and g == (h * 3 + 1) % lay.gpus and (h, g) != lay.culprit),
                rng,
            )
            for g in range(lay.gpus)
        ]
        events = []
        dmesg = [f"[    5.120000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07 on {host}"]
        if h == lay.culprit[0] and fault == "hbm_ecc":
            bus = BUS[lay.culprit[1]]
            events.append(
                {"type": "XidCriticalError", "data": 63, "device": lay.culprit[1], "time": _iso(ONSET + 60)}
            )
            boot = WINDOW_START - 86400
            dmesg.append(
                f"[{ONSET + 60 - boot:>12.6f}] NVRM: Xid (PCI:0000:{bus}:00): 63, pid=4242, name=python3, "
                "Row Remapper: New row marked for remapping, reset gpu to activate."
            )
        _w(
            root,
            f"nodes/{host}/nvml.json",
            json.dumps({"driver_version": "550.90.07", "devices": devices, "events": events}),
        )
        if snapshot_only:
            _w(root, f"nodes/{host}/cmd/nvidia-smi-nvlink-e.txt", _nvlink_e(lay, h, True), gz)
            _w(root, f"nodes/{host}/before/cmd/nvidia-smi-nvlink-e.txt", _nvlink_e(lay, h, False), gz)
        else:
            _w(root, f"nodes/{host}/cmd/dmesg.txt", "\n".join(dmesg) + "\n")
        _w(
            root,
            f"nodes/{host}/collected.json",
            json.dumps({"before": WINDOW_START, "now": WINDOW_END, "boot": WINDOW_START - 86400}),
        )
    return lay
