"""gpu_fell_off_bus: XID 79, the device disappears from PCIe and NVML, the job hangs at a collective."""

from __future__ import annotations

import numpy as np

from ..sim import Scenario
from . import _common as c


def gpu_fell_off_bus(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    g = scn.fleet.host(host).gpus[gi]
    gs = scn.gpu(host, gi)
    tf = scn.tf
    variant = variant or str(rng.choice(["xid79", "xid79", "multiline"]))
    if variant == "multiline":
        scn.kernel(
            host,
            tf,
            f"NVRM: The NVIDIA GPU {g.pci.sysfs}\nNVRM: (PCI ID: 10de:2330) installed in this system has\n"
            "NVRM: fallen off the bus and is not responding to commands.",
            3,
        )
        from ..sim import Xid

        gs.xids.append(Xid(t=tf, code=79, message="GPU has fallen off the bus."))
    else:
        c.xid(scn, host, gi, tf, 79, "GPU has fallen off the bus.")
        scn.kernel(host, tf + 4e-6, f"NVRM: GPU {g.pci.sysfs}: GPU has fallen off the bus.", 3)
        scn.kernel(host, tf + 7e-6, f"NVRM: GPU {g.pci.sysfs}: GPU serial number is {g.serial}.", 3)
        if rng.random() < 0.6:
            for k, sw in enumerate(
                ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0"][: int(rng.integers(1, 4))]
            ):
                scn.kernel(
                    host,
                    tf + 11.8 + k * 0.004,
                    f"nvidia-nvswitch{k}: SXid (PCI:{sw}): 20034, Fatal, Link {int(rng.integers(0, 64))} LTSSM Fault Up",
                    3,
                )
    gs.lost_at = tf
    gs.aer_fatal_total = 1
    # the whole job stops at the next collective: every rank's watchdog fires with the same SeqNum
    job = scn.job
    job.hang_at = tf
    job.lost_rank = c.rank(scn, host, gi)
    scn.opts["lost_rank_logs"] = bool(rng.random() < 0.6)
    hung_job_gpus(scn, tf)
    c.traffic_scale(scn, tf, 0.002)
    scn.truth = {"root_cause": "gpu_fell_off_bus", "component": f"{host}/gpu{gi}"}
    c.set_symptom(scn, "hang")
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host}/gpu{gi} fell off the bus ({variant})")


def hung_job_gpus(scn: Scenario, t: float) -> None:
    """NCCL kernels spin at a stuck collective: utilization pegged, power and tensor activity collapse."""
    for gs in c.job_gpus(scn):
        if gs.lost_at is not None:
            continue
        gs.util.set(t, 100.0)
        gs.power.set(t, 140.0 + gs.index * 3)
        gs.tensor.set(t, 0.0)
        gs.sm_active.set(t, 0.06)
        gs.temp.set(t, gs.temp.base - 14)
        gs.counters["energy_mj"].set_rate(t, 145000.0)
        # once the watchdog takes the processes down the GPUs go idle
        t_dead = t + scn.job.timeout_ms / 1000.0 + 20.0
        gs.util.set(t_dead, 0.0)
        gs.power.set(t_dead, 72.0 + gs.index)
        gs.tensor.set(t_dead, 0.0)
        gs.sm_active.set(t_dead, 0.0)
        gs.sm_clock.set(t_dead, 345)
        gs.reasons.set(t_dead, 0x1)
        gs.fb_used.set(t_dead, 0.0)
    for h in scn.fleet.job_hosts:
        scn.hosts[h].load1.set(t + 60, 9.0)
