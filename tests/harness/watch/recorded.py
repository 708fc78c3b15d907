"""A job written by the real step recorder (``forensic.record.StepRecorder``), one per rank, on a
scripted clock: what ``forensic watch`` follows on a cluster, without a GPU."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np

from forensic.record import StepRecorder


class RecordedJob:
    """Per-rank recorders writing ``steps-rank<NNNNN>.csv`` into ``folder``."""

    def __init__(self, folder: Path, hosts: list[str], gpus: list[int]) -> None:
        self.folder = folder
        self.now = 0.0
        clock = lambda: self.now  # noqa: E731  (the recorders read the scripted time)
        self.recs = [
            StepRecorder(folder, rank=r, host=h, local_gpu=g, cuda=False, clock=clock, perf=clock)
            for r, (h, g) in enumerate(zip(hosts, gpus, strict=True))
        ]

    def write(self, step: int, start: float, duration: np.ndarray, compute: np.ndarray, skip=()) -> None:
        for r, rec in enumerate(self.recs):
            if r in skip:
                continue
            self.now = start
            s = rec.step(step)
            s.__enter__()
            self.now = start + float(compute[r])
            s.compute_done()
            self.now = start + float(duration[r])
            s.__exit__(None, None, None)
            rec._fh.flush()

    def close(self) -> None:
        for rec in self.recs:
            rec.close()


def synthetic_steps(
    n: int, ranks: int, *, seed: int, slow: dict[int, float] | None = None, slow_from: int = 0
):
    """(step, start, duration, compute) rows of a healthy job, ranks in ``slow`` slower from ``slow_from``."""
    rng = np.random.default_rng(seed)
    speed = np.exp(rng.normal(0, 0.008, ranks))
    t = 1.75e9
    for i in range(n):
        comp = 3.0 * speed * np.exp(rng.normal(0, 0.012, ranks)) * np.exp(rng.normal(0, 0.01))
        if i >= slow_from:
            for r, f in (slow or {}).items():
                comp[r] *= f
        step_time = float(comp.max()) + 1.0
        yield 1000 + i, t, np.full(ranks, step_time), comp
        t += step_time


def example_steps(bundle: Path) -> tuple[list[tuple[int, float, np.ndarray, np.ndarray]], list[str]]:
    """The recorded steps of a bundle (job/steps.csv[.gz]) as rows of all ranks, and each rank's host
    (ranks fill the topology's hosts in order, ``gpus_per_node`` each, as ``incident.json`` says)."""
    import csv

    path = bundle / "job" / "steps.csv.gz"
    text = (
        gzip.decompress(path.read_bytes()).decode()
        if path.exists()
        else (bundle / "job" / "steps.csv").read_text()
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    ranks = 1 + max(int(r["rank"]) for r in rows)
    by_step: dict[int, dict[int, dict]] = {}
    for r in rows:
        by_step.setdefault(int(r["step"]), {})[int(r["rank"])] = r
    out = []
    for step in sorted(by_step):
        cells = by_step[step]
        dur = np.array([float(cells[k]["duration_s"]) for k in range(ranks)])
        comp = np.array([float(cells[k]["compute_s"]) for k in range(ranks)])
        start = min(float(c["start_unix"]) for c in cells.values())
        out.append((step, start, dur, comp))
    incident = json.loads((bundle / "incident.json").read_text())
    per = int(incident["job"]["gpus_per_node"])
    hosts = [h["name"] for h in json.loads((bundle / "topology.json").read_text())["hosts"]]
    return out, [hosts[r // per] for r in range(ranks)]
