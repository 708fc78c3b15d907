"""Large fleets whose only evidence of a fault is an error counter growing on one part.

``write_fleet`` writes a bundle of 256+ hosts (8 GPUs and 8 NICs each) in one of several
presentations: counters as DCGM metric series (OpenMetrics or Prometheus text, ``Hostname``,
``hostname`` or ``instance`` labels) or as window-start and ``now`` snapshots (``nvidia-smi nvlink
-e``, ``nvml.json`` or ``nvidia-smi -q``, ``ethtool -I --show-fec``); host names in several fleet
styles; with no steps, steps without ``compute_s``, or steps with it. Every fleet carries decoys:
parts with large counts that do not move in the window, and a little growth here and there on
healthy parts. The fault, when there is one, is one part's counter growing inside the window.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Literal

import numpy as np

START = 1_780_282_800.0  # 2026-06-01T03:00:00Z
END = START + 3600.0
GPUS = 8
NICS = 8
_BUS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
_NIC_BUS = ["1a", "2c", "3c", "5f", "9c", "ad", "bc", "dd"]

Fault = Literal["nvlink", "ecc", "rows", "fec", "fec_corrected"]


def host_names(n: int, style: str) -> list[str]:
    if style == "fqdn":
        return [f"gpu{1000 + i}.dc{i % 4 + 1}.internal" for i in range(n)]
    if style == "ip":
        return [f"10-{20 + i // 250}-{i % 250}-{7 + i % 3}" for i in range(n)]
    return [f"hgx-b{i:04d}" for i in range(n)]


def _w(root: Path, rel: str, text: str, gz: bool = False) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        p.with_name(p.name + ".gz").write_bytes(gzip.compress(text.encode(), mtime=0, compresslevel=1))
    else:
        p.write_text(text)


def _nvlink_e(values: dict[int, int]) -> str:
    """``nvidia-smi nvlink -e`` for 8 GPUs with 18 links; ``values[gpu]`` spread over its links."""
    out = []
    for g in range(GPUS):
        out.append(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{g:08x}-0000-0000-0000-000000000000)")
        total = values.get(g, 0)
        for link in range(18):
            crc = total if link == 3 else 0  # one bad link carries them
            out += [
                f"\t Link {link}: Replay Errors: {crc // 10}",
                f"\t Link {link}: Recovery Errors: {crc // 100}",
                f"\t Link {link}: CRC Errors: {crc - crc // 10 - crc // 100}",
            ]
    return "\n".join(out) + "\n"


def _smi_q(ecc: dict[int, int], rows: dict[int, int], unc: dict[int, int]) -> str:
    out = [
        "",
        "==============NVSMI LOG==============",
        "",
        "Driver Version                            : 550.90.07",
        "",
    ]
    for g in range(GPUS):
        out += [
            f"GPU 00000000:{_BUS[g].upper()}:00.0",
            "    Product Name                          : NVIDIA H100 80GB HBM3",
            "    ECC Errors",
            "        Volatile",
            "            SRAM Correctable              : 0",
            "            SRAM Uncorrectable            : 0",
            f"            DRAM Correctable              : {ecc.get(g, 0)}",
            "            DRAM Uncorrectable            : 0",
            "    Retired Pages",
            "        Single Bit ECC                    : N/A",
            "        Double Bit ECC                    : N/A",
            "        Pending Page Blacklist            : N/A",
            "    Remapped Rows",
            f"        Correctable Error                 : {rows.get(g, 0)}",
            f"        Uncorrectable Error               : {unc.get(g, 0)}",
            "        Pending                           : No",
            "        Remapping Failure Occurred        : No",
            "    Temperature",
            "        GPU Current Temp                  : 61 C",
            "    Clocks",
            "        SM                                : 1980 MHz",
            "    Max Clocks",
            "        SM                                : 1980 MHz",
            "",
        ]
    return "\n".join(out)


def _nvml(ecc: dict[int, int], rows: dict[int, int], unc: dict[int, int]) -> str:
    devs = []
    for g in range(GPUS):
        devs.append(
            {
                "index": g,
                "uuid": f"GPU-{g:08x}",
                "pci_bus_id": f"00000000:{_BUS[g].upper()}:00.0",
                "name": "NVIDIA H100 80GB HBM3",
                "nvmlDeviceGetTemperature": 61,
                "nvmlDeviceGetPowerUsage": 640000,
                "nvmlDeviceGetEnforcedPowerLimit": 700000,
                "nvmlDeviceGetClockInfo": {"sm": 1980, "mem": 2619},
                "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
                "nvmlDeviceGetCurrentClocksEventReasons": 0,
                "nvmlDeviceGetTotalEccErrors": {
                    "corrected_volatile": ecc.get(g, 0),
                    "uncorrected_volatile": 0,
                },
                "nvmlDeviceGetRemappedRows": {
                    "corrected": rows.get(g, 0),
                    "uncorrected": unc.get(g, 0),
                    "pending": False,
                    "failure": False,
                },
            }
        )
    return json.dumps({"driver_version": "550.90.07", "devices": devs})


def _fec(corrected: int, uncorrectable: int, netdev: str) -> str:
    return (
        f"FEC parameters for {netdev}:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS\n"
        f"Statistics:\n  corrected_blocks: {corrected}\n  uncorrectable_blocks: {uncorrectable}\n"
    )


def write_fleet(
    root: Path,
    *,
    fault: Fault | None,
    hosts: int = 256,
    naming: str = "dash",
    presentation: Literal["series", "snapshots"] = "series",
    metric_format: Literal["openmetrics", "prometheus"] = "openmetrics",
    host_label: Literal["Hostname", "hostname", "instance"] = "Hostname",
    gpu_readings: Literal["nvml", "smi"] = "nvml",
    steps: Literal["none", "duration", "compute"] = "none",
    culprit: tuple[int, int] = (137, 5),
    decoys: int = 60,
    seed: int = 11,
) -> str | None:
    """Write the bundle; return the faulty part's component name (None for a healthy fleet)."""
    rng = np.random.default_rng(seed)
    names = host_names(hosts, naming)
    ch, cp = culprit
    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": f"counters-{fault or 'healthy'}-{presentation}",
                "title": "Step time up about 12% since 03:10; no alerts firing"
                if fault
                else "Weekly check: confirm the job is healthy",
                "window": {"start": "2026-06-01T03:00:00Z", "end": "2026-06-01T04:00:00Z"},
                "job": {"name": "pretrain", "ranks": hosts * GPUS, "gpus_per_node": GPUS},
            }
        ),
    )
    topo = {
        "hosts": [
            {
                "name": h,
                "gpus": [{"index": g, "pci_bus_id": f"00000000:{_BUS[g].upper()}:00.0"} for g in range(GPUS)],
                "nics": [
                    {
                        "ibdev": f"mlx5_{k}",
                        "netdev": f"ibp{k}s0",
                        "pci_bus_id": f"0000:{_NIC_BUS[k]}:00.0",
                        "port": 1,
                        "link_layer": "InfiniBand",
                    }
                    for k in range(NICS)
                ],
            }
            for h in names
        ]
    }
    _w(root, "topology.json", json.dumps(topo))
    # Old, static counts on many parts (the decoys), and a little growth on a few healthy ones.
    n_parts = hosts * GPUS
    decoy = rng.choice(n_parts, size=decoys, replace=False)
    base = {
        fam: np.zeros(n_parts, dtype=np.int64) for fam in ("nvlink", "ecc", "rows", "unc", "fec_c", "fec_u")
    }
    base["nvlink"][decoy] = rng.integers(10_000, 2_000_000, decoys)
    base["ecc"][decoy] = rng.integers(5_000, 90_000, decoys)
    base["rows"][decoy[: decoys // 3]] = rng.integers(2, 9, decoys // 3)
    base["unc"][decoy[-decoys // 4 :]] = rng.integers(
        1, 4, decoys // 4
    )  # rows remapped for old uncorrectable errors
    base["fec_c"][:] = rng.integers(10_000_000, 90_000_000, n_parts)
    base["fec_u"][decoy] = rng.integers(500, 50_000, decoys)
    grow = {fam: np.zeros(n_parts, dtype=np.int64) for fam in base}
    noisy = rng.choice(n_parts, size=n_parts // 20, replace=False)
    grow["nvlink"][noisy] = rng.integers(0, 6, noisy.size)
    grow["ecc"][noisy] = rng.integers(0, 3, noisy.size)
    grow["fec_c"][:] = rng.integers(20_000, 60_000, n_parts)  # healthy links correct all the time
    culprit_part = ch * GPUS + cp
    if fault == "nvlink":
        grow["nvlink"][culprit_part] = 6_000
    elif fault == "ecc":
        grow["ecc"][culprit_part] = 900
    elif fault == "rows":
        grow["rows"][culprit_part] = 3
    elif fault == "fec":
        grow["fec_c"][culprit_part] = 4_000_000
        grow["fec_u"][culprit_part] = 400
    elif fault == "fec_corrected":  # corrected only: a link near its limit that has lost nothing yet
        grow["fec_c"][culprit_part] = 9_000_000

    if presentation == "series":
        _series(root, names, base, grow, metric_format, host_label)
    else:
        for hi, h in enumerate(names):
            sl = slice(hi * GPUS, (hi + 1) * GPUS)
            _w(
                root,
                f"nodes/{h}/collected.json",
                json.dumps({"before": START, "now": END, "boot": START - 9 * 86400}),
            )
            for snap, k in (("before/", 0), ("", 1)):
                nv = {g: int(v) for g, v in enumerate(base["nvlink"][sl] + k * grow["nvlink"][sl])}
                ecc = {g: int(v) for g, v in enumerate(base["ecc"][sl] + k * grow["ecc"][sl])}
                rows = {g: int(v) for g, v in enumerate(base["rows"][sl] + k * grow["rows"][sl])}
                unc = {g: int(v) for g, v in enumerate(base["unc"][sl])}
                _w(root, f"nodes/{h}/{snap}cmd/nvidia-smi-nvlink-e.txt", _nvlink_e(nv))
                if gpu_readings == "nvml":
                    _w(root, f"nodes/{h}/{snap}nvml.json", _nvml(ecc, rows, unc))
                else:
                    _w(root, f"nodes/{h}/{snap}cmd/nvidia-smi-q.txt", _smi_q(ecc, rows, unc))
                for n in range(NICS):
                    part = hi * NICS + n
                    _w(
                        root,
                        f"nodes/{h}/{snap}cmd/ethtool-I-show-fec-ibp{n}s0.txt",
                        _fec(
                            int(base["fec_c"][part] + k * grow["fec_c"][part]),
                            int(base["fec_u"][part] + k * grow["fec_u"][part]),
                            f"ibp{n}s0",
                        ),
                    )
    if steps != "none":
        _steps(root, hosts, culprit_part if fault else None, with_compute=steps == "compute", rng=rng)
    if fault is None:
        return None
    if fault in ("fec", "fec_corrected"):
        return f"{names[ch]}/mlx5_{cp}"
    return f"{names[ch]}/gpu{cp}"


def _series(
    root: Path,
    names: list[str],
    base: dict[str, np.ndarray],
    grow: dict[str, np.ndarray],
    metric_format: str,
    host_label: str,
) -> None:
    times = np.arange(START - 1800, END + 1, 600.0)
    # The fault's counter starts growing ten minutes into the window.
    share = np.clip((times - (START + 600)) / (END - START - 600), 0, 1)
    families = {
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "nvlink",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "ecc",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "rows",
    }
    prom = metric_format == "prometheus"
    lines: list[str] = []
    for metric, fam in [*families.items(), ("DCGM_FI_DEV_SM_CLOCK", None), ("DCGM_FI_DEV_XID_ERRORS", None)]:
        if not prom:
            lines.append(f"# TYPE {metric} {'counter' if fam else 'gauge'}")
        for hi, h in enumerate(names):
            for g in range(GPUS):
                part = hi * GPUS + g
                who = f'instance="{h}:9400"' if host_label == "instance" else f'{host_label}="{h}"'
                labels = f'gpu="{g}",UUID="GPU-{part:08x}",pci_bus_id="00000000:{_BUS[g].upper()}:00.0",device="nvidia{g}",modelName="NVIDIA H100 80GB HBM3",{who}'
                if fam is None:
                    vals = np.full(times.size, 1980.0 if metric.endswith("CLOCK") else 0.0)
                else:
                    vals = base[fam][part] + np.floor(grow[fam][part] * share)
                for t, v in zip(times, vals, strict=True):
                    stamp = f"{int(t * 1000)}" if prom else f"{t:.0f}"
                    lines.append(f"{metric}{{{labels}}} {v:.0f} {stamp}")
    if not prom:
        lines.append("# EOF")
    _w(root, "metrics/dcgm.om" if not prom else "metrics/dcgm.prom", "\n".join(lines) + "\n", gz=True)


def _steps(
    root: Path, hosts: int, culprit: int | None, *, with_compute: bool, rng: np.random.Generator
) -> None:
    ranks = hosts * GPUS
    header = "step,rank,start_unix,duration_s" + (",compute_s" if with_compute else "")
    rows = [header]
    t = START - 1200
    for s in range(0, 40):
        comp = 1.0 + rng.normal(0, 0.005, ranks)
        if culprit is not None and t > START + 600:
            comp[culprit] *= 1.12
        dur = float(comp.max()) + 0.25
        for r in range(ranks):
            rows.append(f"{s * 50},{r},{t:.2f},{dur:.4f}" + (f",{comp[r]:.4f}" if with_compute else ""))
        t += 120.0
    _w(root, "job/steps.csv", "\n".join(rows) + "\n", gz=True)
