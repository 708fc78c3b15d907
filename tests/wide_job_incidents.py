"""A large job slowed by one job-wide cause, with hundreds of ranks a little late from the start.

Chips differ: in a job of 256-512 GPUs a third or more of them compute 1.5-2.5 % slower than the
rest, every step, which per-rank statistics flag as persistently late. Then the job's input runs
dry from an onset: every rank waits alike for its batch, inside the step (the trainer times the
wait before its collective, so the steps' split calls it communication), and the step period
grows by half or more. Only two hosts could be sampled (node data for 2 of 32-64); they say why
in their kernels (NFS or Lustre timeouts inside the window) and their I/O pressure, or the
trainer's own log says it waited for data.

Written from the bundle spec and the format reference (dmesg ``-T`` wall-clock lines,
``/proc/pressure/io``, NVML readings as ``nvml.json``), never from what the investigator reads.
Presentations: three naming styles, 32 or 64 hosts, NFS or Lustre wording, kernel and pressure
evidence or the trainer's ``data_time``. ``truth`` is returned, never written into the bundle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from tests.fabric_incidents import END, START, _iso, _nvml, _w

NAMES = {
    "fqdn": lambda i: f"gpu{3001 + i}.dc3.internal",
    "ip": lambda i: f"10-44-{i // 200}-{10 + i % 200}",
    "short": lambda i: f"nid{3100 + i:06d}",
}
GPUS = 8
LOG_EVERY = 20


@dataclass
class WideCase:
    """One incident: ``evidence`` is ``kernel`` (the sampled hosts' kernel lines and I/O pressure)
    or ``trainer`` (the trainer's data_time lines)."""

    name: str
    style: str = "fqdn"
    hosts: int = 32
    fs: str = "nfs"  # "nfs" | "lustre"
    evidence: str = "kernel"
    late_share: float = 0.4
    seed: int = 0


def _dmesg_t(t: float, text: str) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("[%a %b %d %H:%M:%S %Y] ") + text


def write_wide(root: Path, case: WideCase) -> dict:
    """Write the incident; returns its truth."""
    rng = np.random.default_rng(case.seed)
    hosts = [NAMES[case.style](i) for i in range(case.hosts)]
    ranks = case.hosts * GPUS
    onset = START + 0.35 * (END - START)
    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": root.name,
                "title": f"{ranks}-GPU job: step time up since 02:10",
                "window": {"start": _iso(START), "end": _iso(END)},
                "job": {"name": "pretrain-wide", "ranks": ranks, "gpus_per_node": GPUS},
                "reported": "Only two nodes could be sampled before the allocation ended.",
            }
        ),
    )
    _w(
        root,
        "topology.json",
        json.dumps(
            {
                "hosts": [{"name": h, "gpus": [{"index": g} for g in range(GPUS)]} for h in hosts],
                "ranks": [{"rank": r, "host": hosts[r // GPUS], "gpu": r % GPUS} for r in range(ranks)],
            }
        ),
    )
    # per-rank chip speed: a share of the GPUs a little slower, every step
    speed = np.where(rng.random(ranks) < case.late_share, rng.uniform(1.015, 1.025, ranks), 1.0)
    base, comm = 4.0, 0.6
    wait = float(rng.uniform(2.4, 3.2))  # the input wait per step after the onset
    rows = ["step,rank,start_unix,duration_s,compute_s"]
    t, s = START + 30, 0
    waits: list[tuple[float, float]] = []
    while True:
        comp = base * speed * (1 + rng.normal(0, 0.001, ranks))
        w = wait * (1 + 0.1 * rng.standard_normal()) if t >= onset else 0.0
        dur = float(comp.max()) + comm + max(w, 0.0)
        if t + dur * LOG_EVERY > END:
            break
        for r in range(ranks):
            rows.append(f"{s},{r},{t:.3f},{dur + rng.normal(0, 0.0005):.4f},{comp[r]:.4f}")
        waits.append((t, max(w, 0.0)))
        t += dur * LOG_EVERY
        s += LOG_EVERY
    _w(root, "job/steps.csv", "\n".join(rows) + "\n")
    log = [
        f"{hosts[0]}:4100:4100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.9.0.1<0>"
    ]
    if case.evidence == "trainer":
        log += [
            f"{_iso(tt)} [INFO] train: iteration {k * LOG_EVERY} | step_time {base + comm + ww:.3f}s | "
            f"data_time {max(ww, 0.011):.3f}s | loss 2.4{k % 10}"
            for k, (tt, ww) in enumerate(waits)
        ]
    _w(root, "job/logs/rank0.log", "\n".join(log) + "\n")
    # node data for two hosts only
    for h in hosts[:2]:
        boot = START - 86400 * float(rng.uniform(10, 30))
        _w(root, f"nodes/{h}/collected.json", json.dumps({"before": START, "now": END, "boot": boot}))
        _nvml(root, h, GPUS)
        lines = [_dmesg_t(boot + 40, "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-080)")]
        io = (1.2, 0.9)
        if case.evidence == "kernel":
            for k in range(4):
                at = onset + 300 + 700 * k + float(rng.uniform(0, 60))
                if case.fs == "nfs":
                    lines.append(_dmesg_t(at, "nfs: server datafs01 not responding, still trying"))
                else:
                    lines.append(
                        _dmesg_t(
                            at,
                            "Lustre: 11402:0:(client.c:2310:ptlrpc_expire_one_request()) @@@ Request sent has "
                            "timed out for slow reply: req@00000000a1b2c3d4 o4->scratch-OST0012-osc",
                        )
                    )
            io = (float(rng.uniform(45, 65)), float(rng.uniform(40, 55)))
        _w(root, f"nodes/{h}/cmd/dmesg.txt", "\n".join(lines) + "\n")
        _w(
            root,
            f"nodes/{h}/cmd/pressure-io.txt",
            f"some avg10={io[0]:.2f} avg60={io[1]:.2f} avg300={io[1] * 0.7:.2f} total=912345678\n"
            f"full avg10={io[0] * 0.6:.2f} avg60={io[1] * 0.6:.2f} avg300={io[1] * 0.4:.2f} total=512345678\n",
        )
    return {"root_cause": "input_pipeline_stall", "component": "job"}


CASES = [
    WideCase("fqdn-32-nfs-kernel", seed=1),
    WideCase("ip-64-lustre-kernel", style="ip", hosts=64, fs="lustre", seed=2),
    WideCase("short-32-trainer-data-time", style="short", evidence="trainer", late_share=0.5, seed=3),
]
