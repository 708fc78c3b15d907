"""hbm_degradation: HBM errors on one GPU (DBE, contained/uncontained errors, row remapping)."""

from __future__ import annotations

import numpy as np

from ..sim import Scenario
from . import _common as c


def hbm_degradation(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    gs = scn.gpu(host, gi)
    tf = scn.tf
    variant = variant or str(rng.choice(["dbe", "contained", "uncontained", "sbe"]))
    pid = c.train_pid(scn, host, gi)
    addr = int(rng.integers(0x100000000, 0x7FFFFFFFF))
    r = c.rank(scn, host, gi)
    gs.counters["sbe"].set_rate(tf - float(rng.uniform(600, 3000)), float(rng.uniform(0.002, 0.02)))
    if variant == "sbe":
        # a weakening row: correctable errors climb, rows get remapped, the rank slows a little
        gs.counters["sbe"].set_rate(tf, float(rng.uniform(0.5, 4)))
        n = int(rng.integers(2, 5))
        for k in range(n):
            t = tf + k * float(rng.uniform(200, 900))
            c.xid(
                scn,
                host,
                gi,
                t,
                63,
                "Row Remapper: New row marked for remapping, reset gpu to activate.",
                pid,
            )
            gs.counters["remap_corr"].bump(t, 1)
        gs.remap_pending_at = tf
        c.straggler(scn, [r], tf, c.severity(scn, rng, (1.03, 1.09)))
        c.set_symptom(scn, "slow")
    else:
        gs.counters["dbe"].bump(tf, 1)
        gs.counters["remap_unc"].bump(tf + 0.01, 1)
        gs.remap_pending_at = tf
        if variant == "dbe":
            c.xid(
                scn,
                host,
                gi,
                tf,
                48,
                f"An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x{addr:x} partition {int(rng.integers(0, 12))}, subpartition {int(rng.integers(0, 2))}.",
                pid,
            )
            c.xid(
                scn,
                host,
                gi,
                tf + 0.0001,
                63,
                "Row Remapper: New row marked for remapping, reset gpu to activate.",
                pid,
            )
            msg = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
        elif variant == "contained":
            c.xid(
                scn,
                host,
                gi,
                tf,
                94,
                f"Contained: FB DED (0x{int(rng.integers(1, 16)):x}, 0x{int(rng.integers(0, 4)):x}). physAddr: 0x{addr:08x} RST: No, D-RST: No",
                pid,
            )
            c.xid(
                scn,
                host,
                gi,
                tf + 0.0001,
                63,
                "Row Remapper: New row marked for remapping, reset gpu to activate.",
                pid,
            )
            msg = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
        else:  # uncontained, and the remapper is out of spare rows
            c.xid(
                scn,
                host,
                gi,
                tf,
                95,
                f"Uncontained: FB DED (0x{int(rng.integers(1, 16)):x}, 0x{int(rng.integers(0, 4)):x}). physAddr: 0x{addr:08x} RST: Yes, D-RST: No",
                pid,
            )
            c.xid(
                scn,
                host,
                gi,
                tf + 0.0001,
                64,
                f"Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x{addr >> 12:016x}).",
                pid,
            )
            gs.remap_failure_at = tf
            msg = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
        job = scn.job
        job.crash_at = tf + float(rng.uniform(0.5, 3))
        job.restart_after = float(rng.uniform(360, 900))
        job.crash_rank = r
        job.crash_message = msg
        c.set_symptom(scn, "crash")
    scn.truth = {"root_cause": "hbm_degradation", "component": f"{host}/gpu{gi}"}
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host}/gpu{gi} HBM {variant}")
