"""``forensic bench watch``: a simulated job of many ranks, a week of healthy noise, then faults.

The job is generated step by step (nothing is materialized: one row of every rank at a time) and
fed to one :class:`~forensic.tools.detectors.watch.WatchDetector`, whose ``update`` is timed on
every step. The healthy part has what a real week has: per-GPU speed differences that never
change, a slow per-rank wander, per-step noise, a job-wide factor that moves with the data, a
slow job-wide drift, data-loader hiccups on random ranks, checkpoints and evaluations (some
inside the recorded step, with rank-dependent times), crashes restarted from the last
checkpoint (the step number goes back, the first steps are slow) and one relaunch with a
larger batch. Every finding there is a false alarm.

Then each fault starts from a copy of the state after the week (so each is judged from the same
warmed-up detector) and runs until found or ``fault_steps`` steps: one rank 5% slower, one host
of 8 ranks 10% slower, a slow ramp on one rank, an intermittent stall on one rank, a whole-job
slowdown of 10%, a rank that stops reporting. A finding that names another subject during a
fault is a false alarm too.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from forensic.tools.detectors.watch import Finding, WatchConfig, WatchDetector

FAULTS = (
    "rank_5pct_slower",
    "host_8_ranks_10pct_slower",
    "slow_ramp",
    "intermittent_stall",
    "job_slowdown",
    "rank_stops",
)


@dataclass
class _Hiccup:
    rank: int
    left: int
    factor: float


class _Job:
    """The simulated job: ``row()`` gives the next step's (step, start, durations, computes)."""

    def __init__(self, ranks: int, gpus_per_host: int, step_s: float, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.r = ranks
        self.gph = gpus_per_host
        self.step_s = step_s
        rng = self.rng
        self.offset = np.clip(rng.normal(0.0, 0.008, ranks), -0.03, 0.03).astype(np.float32)
        self.wander = np.zeros(ranks, dtype=np.float32)
        self.batch = 1.0
        self.step = 0
        self.clock = 1.77e9
        self.t = 0
        self.hiccups: list[_Hiccup] = []
        self.slow_after_restart = 0
        self.last_ckpt = 0
        self.pending_gap = 0.0
        self.events = {"checkpoints": 0, "evaluations": 0, "restarts": 0, "relaunches": 0, "hiccups": 0}

    def restart(self, gap_s: float, *, back_to_checkpoint: bool = True, batch: float | None = None) -> None:
        if back_to_checkpoint:
            self.step = self.last_ckpt
        if batch is not None:
            self.batch = batch
        self.pending_gap += gap_s
        self.slow_after_restart = 5

    def row(
        self,
        rank_factor: np.ndarray | None = None,
        job_factor: float = 1.0,
        missing: np.ndarray | None = None,
    ) -> tuple[int, float, np.ndarray, np.ndarray]:
        rng, r = self.rng, self.r
        self.t += 1
        if self.t % 16 == 0:  # slow per-rank wander (an AR(1) of stationary sd 0.3%)
            self.wander *= np.float32(0.98)
            self.wander += rng.normal(0.0, 0.003 * math.sqrt(1 - 0.98**2), r).astype(np.float32)
        drift = 1.0 + 0.015 * math.sin(2 * math.pi * self.t / (3 * 86400 / self.step_s))
        g = self.batch * drift * job_factor * (1.0 + 0.01 * rng.standard_normal())
        comp = rng.standard_normal(r, dtype=np.float32)
        comp *= np.float32(0.012)
        comp += np.float32(1.0)
        comp += self.offset
        comp += self.wander
        if rank_factor is not None:
            comp *= rank_factor
        extra = 0.0
        # data-loader hiccups: about one new one every twenty steps somewhere in the fleet, 1 to 3 steps each
        for _ in range(rng.poisson(0.05)):
            self.hiccups.append(
                _Hiccup(int(rng.integers(r)), int(rng.integers(1, 4)), float(rng.uniform(1.1, 2.0)))
            )
            self.events["hiccups"] += 1
        for h in self.hiccups:
            comp[h.rank] *= h.factor
            h.left -= 1
        self.hiccups = [h for h in self.hiccups if h.left > 0]
        if self.slow_after_restart:  # the first steps after a start: compilation, cold caches
            self.slow_after_restart -= 1
            comp *= (rng.uniform(1.5, 3.0) * (1 + 0.1 * rng.standard_normal(r))).astype(np.float32)
        self.step += 1
        if self.step % 2000 == 0:  # checkpoint: half inside the recorded step, rank-dependent
            self.last_ckpt = self.step
            self.events["checkpoints"] += 1
            extra += rng.uniform(30, 90)
            if rng.random() < 0.5:
                comp *= rng.uniform(1.0, 1.6, r).astype(np.float32)
        elif self.step % 1000 == 0:  # evaluation: the step holds it, each rank its own share
            self.events["evaluations"] += 1
            extra += rng.uniform(60, 180)
            comp *= np.clip(2.0 + 0.3 * rng.standard_normal(r), 1.2, 3.5).astype(np.float32)
        comp *= np.float32(0.8 * self.step_s * g)
        if missing is not None:
            comp[missing] = np.nan
        step_time = (
            float(np.nanmax(comp)) + 0.2 * self.step_s * g * (1 + 0.02 * rng.standard_normal()) + extra
        )
        dur = np.full(r, step_time, dtype=np.float32)
        if missing is not None:
            dur[missing] = np.nan
        start = self.clock + self.pending_gap
        self.pending_gap = 0.0
        self.clock = start + step_time
        return self.step, start, dur, comp

    def host_ranks(self, host: int) -> np.ndarray:
        return np.arange(host * self.gph, (host + 1) * self.gph)


def _timed(det: WatchDetector, row: tuple, times: list[float], cpu: list[float]) -> list[Finding]:
    c0 = time.thread_time()
    t0 = time.perf_counter()
    found = det.update(*row)
    times.append(time.perf_counter() - t0)
    cpu.append(time.thread_time() - c0)
    return found


def run_watch_bench(
    *,
    ranks: int = 16384,
    healthy_days: float = 7.0,
    step_s: float = 10.0,
    gpus_per_host: int = 8,
    fault_steps: int = 200,
    seed: int = 0,
    cfg: WatchConfig | None = None,
) -> dict[str, Any]:
    """The benchmark's result: the keys of ``--json`` and a ``detail`` dict for the text form."""
    wall0 = time.perf_counter()
    job = _Job(ranks, gpus_per_host, step_s, seed)
    hosts = [f"node{j // gpus_per_host:05d}" for j in range(ranks)]
    det = WatchDetector(ranks, cfg, hosts=hosts, gpus=[j % gpus_per_host for j in range(ranks)])
    rng = np.random.default_rng(seed + 1)
    healthy_steps = int(healthy_days * 86400 / step_s)
    # two crashes at random in the week (restarted from the last checkpoint), away from its ends
    lo, hi = healthy_steps // 10, max(healthy_steps - healthy_steps // 10, healthy_steps // 10 + 2)
    crashes = sorted(rng.choice(np.arange(lo, hi), size=2, replace=False).tolist())
    relaunch = healthy_steps * 4 // 7
    times: list[float] = []
    cpu: list[float] = []
    related: list[dict[str, Any]] = []
    false_alarms: list[dict[str, Any]] = []
    for i in range(healthy_steps):
        if i in crashes:
            job.restart(rng.uniform(600, 1800))
            job.events["restarts"] += 1
        elif i == relaunch:  # a planned relaunch with a 1.5x batch: every step takes longer
            job.restart(rng.uniform(900, 2400), batch=1.5)
            job.events["relaunches"] += 1
        for f in _timed(det, job.row(), times, cpu):
            false_alarms.append({"during": "healthy", "kind": f.kind, "subject": f.subject, "step": f.step})
    faults = []
    victim = int(rng.integers(ranks))
    host = int(rng.integers(ranks // gpus_per_host))
    for kind in FAULTS:
        d = copy.deepcopy(det)
        j = copy.deepcopy(job)
        factor = np.ones(ranks, dtype=np.float32)
        missing = np.zeros(ranks, dtype=bool)
        found_at: int | None = None
        for s in range(fault_steps):
            job_factor = 1.0
            factor[:] = 1.0
            if kind == "rank_5pct_slower":
                factor[victim] = 1.05
            elif kind == "host_8_ranks_10pct_slower":
                factor[j.host_ranks(host)] = 1.10
            elif kind == "slow_ramp":
                factor[victim] = 1.0 + min(0.002 * (s + 1), 0.15)
            elif kind == "intermittent_stall":
                if j.rng.random() < 0.2:
                    factor[victim] = 1.0 + float(j.rng.uniform(0.3, 1.0))
            elif kind == "job_slowdown":
                job_factor = 1.10
            elif kind == "rank_stops":
                missing[victim] = True
            row = j.row(factor, job_factor, missing if missing.any() else None)
            for f in _timed(d, row, times, cpu):
                if _matches(kind, f, victim, hosts[host * gpus_per_host], hosts[victim]):
                    found_at = s if found_at is None else found_at
                elif f.kind == "job_slowdown" and kind != "job_slowdown":
                    # the job waits for its slow rank: the same fault, grouped with it at intake
                    related.append({"during": kind, "kind": f.kind, "step": f.step})
                else:
                    false_alarms.append(
                        {"during": kind, "kind": f.kind, "subject": f.subject, "step": f.step}
                    )
            if found_at is not None:
                break
        faults.append({"kind": kind, "detected": found_at is not None, "detect_delay_steps": found_at})
    ms = np.asarray(times) * 1e3
    cpu_ms = np.asarray(cpu) * 1e3
    return {
        "ranks": ranks,
        "per_step_ms": round(float(np.median(ms)), 4),
        "healthy_days": round(healthy_steps * step_s / 86400, 3),
        "false_alarms": len(false_alarms),
        "faults": faults,
        "detail": {
            "steps_timed": int(ms.size),
            "per_step_ms_p99": round(float(np.percentile(ms, 99)), 4),
            "per_step_ms_mean": round(float(ms.mean()), 4),
            "per_step_cpu_ms_median": round(float(np.median(cpu_ms)), 4),
            "per_step_cpu_ms_p99": round(float(np.percentile(cpu_ms, 99)), 4),
            "related_findings": related,
            "healthy_steps": healthy_steps,
            "step_s": step_s,
            "events": job.events,
            "fleet_event_steps_skipped": det.skipped_fleet_events,
            "restarts_seen": det.restarts,
            "false_alarm_list": false_alarms[:20],
            "state_bytes": len(det.to_bytes()),
            "wall_s": round(time.perf_counter() - wall0, 1),
        },
    }


def _matches(kind: str, f: Finding, victim: int, bad_host: str, victim_host: str) -> bool:
    if kind == "job_slowdown":
        return f.kind == "job_slowdown"
    if kind == "host_8_ranks_10pct_slower":
        return f.host == bad_host
    if kind == "rank_stops":
        return f.kind == "rank_stopped" and f.rank == victim
    return f.rank == victim or (f.kind == "host_slowdown" and f.host == victim_host)


def format_watch_bench(r: dict[str, Any]) -> str:
    d = r["detail"]
    lines = [
        f"  ranks                   {r['ranks']:>8}",
        f"  per step (update)       {r['per_step_ms']:>8.3f} ms   median of {d['steps_timed']} timed steps "
        f"(every step, wall); p99 {d['per_step_ms_p99']:.3f} ms, mean {d['per_step_ms_mean']:.3f} ms (target <= 1)",
        f"  per step, CPU time      {d['per_step_cpu_ms_median']:>8.3f} ms   median; p99 {d['per_step_cpu_ms_p99']:.3f} ms "
        "(the thread's own time: the wall p99 counts waits for the CPU on a shared machine)",
        f"  healthy                 {r['healthy_days']:>8} days  {d['healthy_steps']} steps of {d['step_s']:g} s; "
        + ", ".join(f"{k} {v}" for k, v in d["events"].items()),
        f"  false alarms            {r['false_alarms']:>8}        (target 0)",
    ]
    for f in r["faults"]:
        delay = f"{f['detect_delay_steps']} steps" if f["detected"] else "NOT DETECTED"
        lines.append(f"  {f['kind']:<26}{delay:>12}")
    if d["related_findings"]:
        lines.append(
            f"  related (job slower while a rank is): {len(d['related_findings'])}, not counted either way"
        )
    lines.append(f"  state per job           {d['state_bytes'] / 1e6:>8.2f} MB   wall {d['wall_s']} s")
    return "\n".join(lines)
