"""silent_data_corruption: one rank's replica drifts from its data-parallel peers with no error anywhere."""

from __future__ import annotations

import numpy as np

from ..sim import Scenario
from . import _common as c


def silent_data_corruption(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    r = c.rank(scn, host, gi)
    job = scn.job
    job.sdc_rank = r
    job.sdc_from = scn.tf
    scn.opts["col_checksum"] = True
    blip = variant == "blip" or (variant is None and rng.random() < 0.5)
    if blip:
        job.loss_blip_at = scn.tf
    scn.truth = {"root_cause": "silent_data_corruption", "component": f"{host}/gpu{gi}"}
    c.set_symptom(scn, "sdc", blip=blip)
    scn.opts["culprit_host"] = host
    scn.notes.append(f"rank {r} ({host}/gpu{gi}) replica diverges from tf; blip={blip}")
