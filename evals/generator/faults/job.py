"""Job-wide causes: a stalling input pipeline and a misconfigured NCCL."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..sim import Scenario
from . import _common as c


def input_pipeline_stall(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    tf = scn.tf
    job = scn.job
    stall = float(rng.uniform(0.08, 0.6)) * (job.base_compute + job.base_comm)
    grow = variant == "growing" or (variant is None and rng.random() < 0.5)
    span = max(1.0, scn.t1 - tf)
    f: float | Callable[[float], float]
    if grow:
        f = lambda t: 1.0 + (stall / job.base_gap) * min(1.0, 0.2 + 0.8 * (t - tf) / span)  # noqa: E731
    else:
        f = 1.0 + stall / job.base_gap
    job.gap_mult.append((tf, float("inf"), f))
    job.input_wait_in_step = variant == "nfs-in-step"
    busy = (job.base_compute + job.base_comm) / (job.base_compute + job.base_comm + stall)
    for gs in c.job_gpus(scn):
        gs.util.set(tf, 99.0 * busy)
        gs.power.set(tf, gs.power.base * (0.35 + 0.65 * busy))
        gs.tensor.set(tf, gs.tensor.base * busy)
        gs.sm_active.set(tf, gs.sm_active.base * busy)
    for h in scn.fleet.job_hosts:
        scn.hosts[h].io_pressure_rate.set(tf, float(rng.uniform(2, 12)))
    c.traffic_scale(scn, tf, busy)
    if variant in ("nfs", "nfs-in-step"):
        # The trainer says nothing; the hosts' kernels report the NFS server the job reads from
        # not responding (and recovering), a few hosts at a time.
        server = f"filer{int(rng.integers(1, 9)):02d}.storage"
        for i, h in enumerate(scn.fleet.job_hosts):
            if i % 3 == 0:
                t = tf + float(rng.uniform(30, 600))
                scn.kernel(h, t, f"nfs: server {server} not responding, still trying", 4)
                scn.kernel(h, t + float(rng.uniform(20, 200)), f"nfs: server {server} OK", 5)
    elif rng.random() < 0.5:
        scn.opts["progress_data_time"] = True
    scn.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"input stall +{stall:.2f}s/step from tf (growing={grow})")


def nccl_misconfiguration(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    """The job was resubmitted at tf with a bad NCCL environment."""
    tf = scn.tf
    job = scn.job
    variant = variant or str(rng.choice(["socket", "socket", "hca", "gdr"]))
    job.crash_at = tf
    job.restart_after = float(rng.uniform(240, 720))
    job.crash_message = ""
    job.crash_rank = None
    env = list(job.nccl_env)
    if variant == "socket":
        env = [e for e in env if not e.startswith("NCCL_IB_HCA")]
        env.insert(0, "NCCL_IB_DISABLE set by environment to 1.")
        job.restart_nccl = {"transport": "Socket", "env": env}
        sev = c.comm_mult(scn, rng, 1.5, 3.0)
        c.traffic_scale(scn, tf + job.restart_after, 0.01)
    elif variant == "hca":
        hca = scn.fleet.host(scn.fleet.job_hosts[0]).nics[0].ibdev
        env = [e for e in env if not e.startswith("NCCL_IB_HCA")] + [
            f"NCCL_IB_HCA set by environment to {hca}"
        ]
        job.restart_nccl = {"env": env, "hca_limit": [hca]}
        sev = c.comm_mult(scn, rng, 1.4, 2.5)
        others = [n.ibdev for n in scn.fleet.host(scn.fleet.job_hosts[0]).nics if n.ibdev != hca]
        c.traffic_scale(scn, tf + job.restart_after, 0.01, ibdevs=others, switches=False)
        c.traffic_scale(scn, tf + job.restart_after, 2.0, ibdevs=[hca], switches=False)
    elif variant == "p2p":
        # Peer-to-peer copies turned off: intra-node traffic bounces through host memory.
        env = env + ["NCCL_P2P_DISABLE set by environment to 1"]
        job.restart_nccl = {"env": env}
        sev = c.comm_mult(scn, rng, 1.2, 1.8)
    else:
        env = env + ["NCCL_NET_GDR_LEVEL set by environment to LOC"]
        job.restart_nccl = {"env": env, "gdr": False}
        sev = c.comm_mult(scn, rng, 1.08, 1.2)
    c.comm_slow(scn, tf, sev)
    scn.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    c.set_symptom(scn, "restart_slow")
    scn.notes.append(f"NCCL misconfig {variant} after restart, comm x{sev:.2f}")
