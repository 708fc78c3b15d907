"""Physics of a synchronous data-parallel job, step by step, and its steps.csv.

Each rank computes for ``base * (1 + noise) * (1 + rack jitter) * slowdown`` seconds, then waits at
the step's collective; the collective finishes when the last rank arrives plus the communication
time. So every rank's ``duration_s`` is nearly the same, the slow rank has the largest ``compute_s``
and the smallest wait, and time lost between steps (data loading) shows only as a gap between one
step's end and the next step's ``start_unix``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from .fleet import GPUS_PER_NODE
from .sim import JobSim, Scenario


@dataclass
class StepRecord:
    step: int
    t: float  # leader start
    end: float  # collective end (max over ranks)
    logged: bool


@dataclass
class StepsResult:
    columns: list[str]
    rows: list[tuple]
    records: list[StepRecord] = field(default_factory=list)
    hang_step: int | None = None
    hang_t: float | None = None
    crash_step: int | None = None
    resume_step: int | None = None
    resume_t: float | None = None
    last_t: float = 0.0
    loss: dict = field(default_factory=dict)

    def mean_step(self, a: float, b: float) -> float | None:
        """Mean wall time per step (including the gap) for steps starting in [a, b)."""
        recs = [r for r in self.records if a <= r.t < b]
        if len(recs) < 3:
            return None
        return (recs[-1].t - recs[0].t) / (len(recs) - 1)


def _mult(items, t: float) -> float:
    return JobSim._mult(items, t)


def simulate(scn: Scenario) -> StepsResult:
    job, rng, fleet = scn.job, scn.rng, scn.fleet
    R = fleet.n_ranks
    rack_names = [fleet.rack_of(fleet.place(r)[0]) for r in range(R)]
    racks = sorted(set(rack_names))
    rack_idx = np.array([racks.index(x) for x in rack_names])
    slow = [(np.array(sorted(set(s.ranks)), dtype=int), s) for s in job.slow]
    o = scn.opts
    cols = ["step", "rank", "start_unix", "duration_s"]
    if o.get("col_compute", True):
        cols.append("compute_s")
    if o.get("col_loss", True):
        cols.append("loss")
    if o.get("col_grad", True):
        cols.append("grad_norm")
    if o.get("col_checksum", True):
        cols.append("param_checksum")
    extra = list(o.get("extra_cols", []))
    cols += extra

    res = StepsResult(columns=cols, rows=[])
    t = job.t_start
    s = job.first_step
    crashed = False
    loss_scale = float(rng.uniform(1.6, 2.2))
    rank_loss_noise = o.get("loss_mode", "local") == "local"
    tokens_per_rank = int(o.get("tokens_per_rank", 16384))
    lr = float(o.get("lr", 1.5e-4))
    miss_p = o.get("missing_p", 0.0)
    while True:
        if job.hang_at is not None and t >= job.hang_at:
            res.hang_step, res.hang_t = s, t
            break
        if job.crash_at is not None and not crashed and t >= job.crash_at:
            crashed = True
            res.crash_step = s
            t = job.crash_at + job.restart_after
            s = (s // job.checkpoint_every) * job.checkpoint_every + 1
            res.resume_step, res.resume_t = s, t
            continue
        if t >= job.t_end:
            break
        c = job.base_compute * (1.0 + job.noise * rng.standard_normal(R))
        c *= 1.0 + job.rack_jitter * rng.standard_normal(len(racks))[rack_idx]
        for idx, sl in slow:
            if sl.t_from <= t < sl.t_to:
                f = sl.factor(t) if callable(sl.factor) else sl.factor
                c[idx] *= f
        comm = job.base_comm * _mult(job.comm_mult, t) * (1.0 + 0.01 * rng.standard_normal())
        for ts, extra_s in job.comm_spikes:
            if t <= ts < t + job.base_compute * 1.5:
                comm += extra_s
        skew = rng.uniform(0.0, 0.003, R)
        wait = np.zeros(R)
        if job.input_wait_in_step:
            # Every rank waits alike for its batch before computing: the step grows, compute does not.
            wait_s = job.base_gap * max(0.0, _mult(job.gap_mult, t) - 1.0)
            wait = wait_s * (1.0 + 0.02 * np.abs(rng.standard_normal(R)))
        arrival = skew + wait + c
        barrier = float(arrival.max())
        tail = rng.uniform(0.0, 0.0008, R)
        end_rel = barrier + comm + tail
        dur = end_rel - skew
        gap = (
            job.base_gap
            * (1.0 if job.input_wait_in_step else _mult(job.gap_mult, t))
            * (1.0 + abs(0.15 * rng.standard_normal()))
        )
        logged = (s % job.log_every) == 0
        rec = StepRecord(step=s, t=t, end=t + float(end_rel.max()), logged=logged)
        res.records.append(rec)
        if logged:
            gl = loss_scale + 2.4 * (s / 1e4) ** -0.28 + 0.012 * rng.standard_normal()
            if (
                job.loss_blip_at is not None
                and abs(t - job.loss_blip_at) < job.base_compute * job.log_every * 1.5
            ):
                gl *= 1.18
            res.loss[s] = float(gl)
            gn = float(abs(0.32 + 0.05 * rng.standard_normal()))
            if (
                job.loss_blip_at is not None
                and abs(t - job.loss_blip_at) < job.base_compute * job.log_every * 1.5
            ):
                gn *= 3.0
            losses = gl + (0.035 * rng.standard_normal(R) if rank_loss_noise else np.zeros(R))
            keep = np.ones(R, dtype=bool)
            if miss_p and rng.random() < miss_p:
                keep[rng.choice(R, size=int(rng.integers(1, max(2, R // 16))), replace=False)] = False
            for r in range(R):
                if not keep[r]:
                    continue
                row: list[float | str] = [s, r, round(t + float(skew[r]), 3), round(float(dur[r]), 4)]
                if "compute_s" in cols:
                    row.append(round(float(c[r]), 4))
                if "loss" in cols:
                    row.append(round(float(losses[r]), 4))
                if "grad_norm" in cols:
                    row.append(round(gn, 4))
                if "param_checksum" in cols:
                    group = r % job.tp
                    key = f"{scn.seed}:{s}:{group}"
                    if job.sdc_rank == r and job.sdc_from is not None and t >= job.sdc_from:
                        key += ":flip"
                    row.append(f"{zlib.crc32(key.encode()):08x}")
                for e in extra:
                    if e == "lr":
                        row.append(f"{lr:.3e}")
                    elif e == "tokens_per_s":
                        row.append(int(tokens_per_rank / float(dur[r])))
                    elif e == "mem_gb":
                        row.append(round(61.0 + (r % GPUS_PER_NODE) * 0.13, 2))
                    elif e == "micro_batches":
                        row.append(8)
                    else:
                        row.append("")
                res.rows.append(tuple(row))
        t = rec.end + gap
        s += 1
    res.last_t = t
    return res


def render_csv(res: StepsResult, order: str, rng: np.random.Generator) -> str:
    rows = res.rows
    if order == "rank":
        rows = sorted(rows, key=lambda x: (x[1], x[2]))
    elif order == "chunks":
        # each rank's logger flushes in chunks: rows interleave by rank within blocks of steps
        by_block: dict[int, list] = {}
        for row in rows:
            by_block.setdefault(int(row[0]) // 50, []).append(row)
        rows = []
        for k in by_block:
            blk = sorted(by_block[k], key=lambda x: (x[1], x[2]))
            rows.extend(blk)
    out = [",".join(res.columns)]
    out.extend(",".join(str(v) for v in row) for row in rows)
    return "\n".join(out) + "\n"
