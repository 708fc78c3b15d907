"""host_contention: something else on one host eats its CPUs; its eight ranks launch kernels late."""

from __future__ import annotations

import numpy as np

from ..fleet import GPUS_PER_NODE
from ..sim import Proc, Scenario
from . import _common as c

ROGUES = [
    ("jdoe", "python3 /home/jdoe/tokenize_shards.py --workers 160"),
    ("backup", "pigz -p 128 -9"),
    ("root", "rsync -a --delete /scratch/ckpt/ /mnt/archive/ckpt/"),
    ("mlops", "python3 -m eval_harness --tasks all --device cpu"),
    ("root", "find / -xdev -type f -newer /var/lib/apt/periodic/update-success-stamp"),
]


def host_contention(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host = c.pick_job_host(scn, rng)
    hs = scn.hosts[host]
    tf = scn.tf
    user, cmd = ROGUES[int(rng.integers(0, len(ROGUES)))]
    threads = float(rng.uniform(60, 170))
    hs.procs.append(
        Proc(
            int(rng.integers(1_000_000, 3_000_000)),
            user,
            threads * 100.0 / 1.0,
            float(rng.uniform(0.5, 6)),
            f"{int((scn.now - tf) * threads / 60)}:{int(rng.integers(10, 59)):02d}.{int(rng.integers(10, 99))}",
            cmd.split()[0] if variant != "full" else cmd,
            int(rng.uniform(2e6, 5e7)),
            "R",
        )
    )
    hs.load1.set(tf, hs.load1.base + threads * float(rng.uniform(1.1, 1.6)))
    hs.cpu_pressure_rate.set(tf, float(rng.uniform(15, 80)))
    hs.cpu_some_avg10.set(tf, float(rng.uniform(25, 75)))
    for p in hs.procs:
        if p.command == "python3" and p.user == "train":
            p.cpu *= float(rng.uniform(0.6, 0.85))
    sev = c.severity(scn, rng, (1.05, 1.3))
    ranks = [c.rank(scn, host, g) for g in range(GPUS_PER_NODE)]
    for r in ranks:
        c.straggler(scn, [r], tf, 1.0 + (sev - 1.0) * float(rng.uniform(0.85, 1.15)))
    for g in range(GPUS_PER_NODE):
        gs = scn.gpu(host, g)
        gs.util.set(tf, 99.0 / sev)
        gs.power.set(tf, gs.power.base / (1 + (sev - 1) * 0.8))
        gs.tensor.set(tf, gs.tensor.base / sev)
    scn.truth = {"root_cause": "host_contention", "component": host}
    c.set_symptom(scn, "slow")
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host} rogue '{cmd}' from tf, ranks x{sev:.2f}")
