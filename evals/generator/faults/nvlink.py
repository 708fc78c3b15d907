"""nvlink_fault: NVLink errors on one GPU: CRC/replay counters climb; fatal errors stop the job."""

from __future__ import annotations

import numpy as np

from ..fleet import GPUS_PER_NODE
from ..sim import Scenario
from . import _common as c
from .bus import hung_job_gpus


def nvlink_fault(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    gs = scn.gpu(host, gi)
    tf = scn.tf
    variant = variant or str(rng.choice(["replay", "replay", "fatal"]))
    link = int(rng.integers(0, 18))
    gs.counters["nvlink_crc"].set_rate(tf, float(rng.uniform(5, 200)))
    gs.counters["nvlink_replay"].set_rate(tf, float(rng.uniform(1, 60)))
    gs.counters["nvlink_recovery"].set_rate(tf, float(rng.uniform(0.001, 0.02)))
    r = c.rank(scn, host, gi)
    if variant == "replay":
        if rng.random() < 0.6:
            # a marginal lane (bits 21/22: channel signal integrity) logged as it began
            reg = int(rng.choice([0x200000, 0x400000]))
            c.xid(
                scn,
                host,
                gi,
                tf + float(rng.uniform(1, 30)),
                74,
                f"NVLink: fatal error detected on link {link}(0x0, 0x0, 0x{reg:x}, 0x0, 0x0, 0x0, 0x0)",
            )
        sev = c.severity(scn, rng, (1.05, 1.3))
        # tensor-parallel peers on the host wait inside their own NVLink collectives, but less
        c.straggler(scn, [r], tf, sev)
        peers = [c.rank(scn, host, k) for k in range(GPUS_PER_NODE) if k != gi]
        c.straggler(scn, peers, tf, 1.0 + (sev - 1.0) * float(rng.uniform(0.2, 0.45)))
        c.set_symptom(scn, "slow")
    else:
        reg = int(rng.choice([0x10000, 0x1000, 0x100]))
        c.xid(
            scn,
            host,
            gi,
            tf,
            74,
            f"NVLink: fatal error detected on link {link}(0x0, 0x0, 0x{reg:x}, 0x0, 0x0, 0x0, 0x0)",
        )
        gs.counters["nvlink_crc"].bump(tf, int(rng.integers(1000, 90000)))
        job = scn.job
        job.hang_at = tf
        hung_job_gpus(scn, tf)
        c.traffic_scale(scn, tf, 0.002)
        t_kill = tf + job.timeout_ms / 1000.0 + float(rng.uniform(1, 5))
        c.xid(
            scn,
            host,
            gi,
            t_kill,
            45,
            f"Ch 0000000{int(rng.integers(1, 9))} caused by previous Xid 74",
            pid=c.train_pid(scn, host, gi),
        )
        c.set_symptom(scn, "hang")
    scn.truth = {"root_cause": "nvlink_fault", "component": f"{host}/gpu{gi}"}
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host}/gpu{gi} NVLink {variant} link {link}")
