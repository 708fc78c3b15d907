"""The continuous detector on small fleets: what opens, what never does, and its saved state.

The jobs here come from their own generator (log-normal step noise, per-GPU speeds, checkpoints
inside the step, restarts from a checkpoint, a relaunch with a larger batch), not from the
benchmark's, so the detector is not judged on the data it was tried on.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from forensic.tools.detectors.watch import Finding, WatchConfig, WatchDetector

R = 64
GPH = 8
HOSTS = [f"gpu-{j // GPH:03d}" for j in range(R)]


class Job:
    def __init__(self, seed: int, ranks: int = R, step_s: float = 6.0) -> None:
        self.rng = np.random.default_rng(seed)
        self.r = ranks
        self.speed = np.exp(self.rng.normal(0, 0.01, ranks))  # some GPUs are a little slower for life
        self.step = 0
        self.t = 1.7e9
        self.step_s = step_s
        self.batch = 1.0

    def restart(self, back: int, gap_s: float, batch: float | None = None) -> None:
        self.step = max(self.step - back, 0)
        self.t += gap_s
        if batch:
            self.batch = batch

    def row(self, factor=None, job_factor: float = 1.0, missing=None, stall=False):
        rng = self.rng
        self.step += 1
        comp = self.step_s * 0.7 * self.batch * job_factor * self.speed * np.exp(rng.normal(0, 0.015, self.r))
        comp *= np.exp(rng.normal(0, 0.02))  # the data moves every rank alike
        if factor is not None:
            comp = comp * factor
        if self.step % 500 == 0 and stall:  # a checkpoint inside the step, each rank its own write
            comp = comp * rng.uniform(1.0, 2.5, self.r)
        if rng.random() < 0.01:  # a data-loader hiccup on one rank
            comp[rng.integers(self.r)] *= rng.uniform(1.3, 3.0)
        comp = comp.astype(np.float32)
        if missing is not None:
            comp[missing] = np.nan
        step_time = float(np.nanmax(comp)) + self.step_s * 0.3 * job_factor * self.batch
        if self.step % 500 == 0:
            step_time += 60.0
        dur = np.full(self.r, step_time, np.float32)
        if missing is not None:
            dur[missing] = np.nan
        start = self.t
        self.t += step_time
        return self.step, start, dur, comp


def detector(cfg: WatchConfig | None = None) -> WatchDetector:
    return WatchDetector(R, cfg, hosts=HOSTS, gpus=[j % GPH for j in range(R)])


def run(det: WatchDetector, job: Job, n: int, **kw) -> list[tuple[int, Finding]]:
    out = []
    for i in range(n):
        for f in det.update(*job.row(**kw)):
            out.append((i, f))
    return out


def warm(seed: int = 1, steps: int = 600) -> tuple[WatchDetector, Job]:
    det, job = detector(), Job(seed)
    assert run(det, job, steps, stall=True) == []
    return det, job


def test_a_healthy_job_with_checkpoints_restarts_and_a_relaunch_opens_nothing() -> None:
    det, job = detector(), Job(7)
    found = run(det, job, 2000, stall=True)
    job.restart(back=120, gap_s=900)  # a crash, restarted from the last checkpoint
    found += run(det, job, 1500, stall=True)
    job.restart(back=0, gap_s=1800, batch=2.0)  # relaunched with twice the batch: every step doubles
    found += run(det, job, 2000, stall=True)
    assert found == []
    assert det.restarts == 2 and det.skipped_fleet_events > 0


@pytest.mark.parametrize("seed", [2, 3])
def test_one_rank_six_percent_slower_is_found_within_sixty_steps(seed: int) -> None:
    det, job = warm(seed)
    factor = np.ones(R)
    factor[13] = 1.06
    found = run(det, job, 200, factor=factor)
    first_i, f = found[0]
    assert (f.kind, f.rank, f.host, f.gpu) == ("rank_slowdown", 13, "gpu-001", 5)
    assert first_i < 60
    assert 0.03 < f.effect < 0.09
    assert [x.rank for _, x in found] == [13]  # once: hysteresis, and no other rank


def test_a_host_of_eight_ranks_ten_percent_slower_is_one_host_finding() -> None:
    det, job = warm(4)
    factor = np.ones(R)
    factor[24:32] = 1.10
    found = [f for _, f in run(det, job, 120, factor=factor)]
    hosts = [f for f in found if f.kind == "host_slowdown"]
    assert len(hosts) == 1 and hosts[0].host == "gpu-003" and set(hosts[0].ranks) <= set(range(24, 32))
    # its ranks, and the job (its step waits for them), are the same fault: grouped at intake
    assert all(f.host == "gpu-003" or f.kind == "job_slowdown" for f in found)
    assert len([f for f in found if f.kind == "rank_slowdown"]) < 8  # folded once the host is found


def test_an_intermittent_stall_is_found_and_a_rare_hiccup_is_not() -> None:
    det, job = warm(5)
    rng = np.random.default_rng(0)
    found = []
    for i in range(150):
        factor = np.ones(R)
        if rng.random() < 0.25:
            factor[40] = 1.6
        found += [(i, f) for f in det.update(*job.row(factor=factor))]
    assert found and found[0][1].kind in ("rank_stalls", "rank_slowdown") and found[0][1].rank == 40
    assert found[0][0] < 60
    # three stalled steps in a row on another rank, once: a hiccup, nothing opens
    det2, job2 = warm(6)
    factor = np.ones(R)
    factor[3] = 2.0
    assert run(det2, job2, 3, factor=factor) == [] and run(det2, job2, 300) == []


def test_a_rank_that_stops_reporting_is_found() -> None:
    det, job = warm(8)
    missing = np.zeros(R, dtype=bool)
    missing[50] = True
    found = run(det, job, 40, missing=missing)
    assert [(f.kind, f.rank) for _, f in found] == [("rank_stopped", 50)]
    assert found[0][0] == det.cfg.stop_steps - 1


def test_a_whole_job_slowdown_is_found_and_a_planned_relaunch_is_not() -> None:
    det, job = warm(9)
    found = run(det, job, 100, job_factor=1.12)
    assert [f.kind for _, f in found] == ["job_slowdown"] and found[0][0] < 60
    assert found[0][1].effect > 0.05
    det, job = warm(10)
    job.restart(back=0, gap_s=1200, batch=1.5)
    assert run(det, job, 400) == []


def test_a_rank_slow_from_the_start_is_found_at_the_end_of_the_warmup() -> None:
    det, job = detector(), Job(11)
    factor = np.ones(R)
    factor[5] = 1.15
    found = run(det, job, 100, factor=factor)
    assert [(f.kind, f.rank) for _, f in found] == [("rank_slow_from_start", 5)]


def test_below_the_minimum_effect_nothing_opens_and_the_effect_is_configurable() -> None:
    factor = np.ones(R)
    factor[20] = 1.012
    det, job = warm(12)
    assert run(det, job, 600, factor=factor) == []
    cfg = WatchConfig(min_effect=0.005, spike_effect=0.2)
    det, job = detector(cfg), Job(12)
    run(det, job, 600)
    found = [f for _, f in run(det, job, 600, factor=factor)]
    assert found and found[0].rank == 20


def test_a_rank_opens_again_only_after_it_was_healthy_for_rearm_steps() -> None:
    cfg = WatchConfig(rearm_steps=200)
    det, job = detector(cfg), Job(13)
    run(det, job, 300)
    slow = np.ones(R)
    slow[9] = 1.08
    assert len(run(det, job, 300, factor=slow)) == 1
    assert run(det, job, 100) == []  # healthy, but not for long enough
    assert len(run(det, job, 100, factor=slow)) == 0
    assert run(det, job, 400) == []  # healthy long enough: armed again
    again = run(det, job, 100, factor=slow)
    assert [(f.kind, f.rank) for _, f in again] == [("rank_slowdown", 9)]


def test_a_host_opens_again_after_its_ranks_were_healthy_for_rearm_steps() -> None:
    det, job = detector(WatchConfig(rearm_steps=150)), Job(17)
    run(det, job, 200)
    slow = np.ones(R)
    slow[8:16] = 1.12
    kinds = lambda found: [f.kind for _, f in found if f.kind != "job_slowdown"]  # noqa: E731
    assert "host_slowdown" in kinds(run(det, job, 150, factor=slow))
    assert kinds(run(det, job, 400)) == []
    assert "host_slowdown" in kinds(run(det, job, 150, factor=slow))


def test_the_state_round_trips_and_the_resumed_detector_finds_the_same() -> None:
    det, job = warm(14, steps=300)
    data = det.to_bytes()
    twin = WatchDetector.from_bytes(data)
    assert twin.n_ranks == R and twin.hosts == HOSTS and twin.t == det.t
    factor = np.ones(R)
    factor[33] = 1.07
    for _ in range(80):
        row = job.row(factor=factor)
        a, b = det.update(*row), twin.update(*row)
        assert [(f.kind, f.rank, f.step) for f in a] == [(f.kind, f.rank, f.step) for f in b]
    assert det.opened[33] and twin.opened[33]
    # mid warm-up too
    d2, j2 = detector(), Job(15)
    run(d2, j2, 10)
    t2 = WatchDetector.from_bytes(d2.to_bytes())
    for _ in range(60):
        row = j2.row()
        assert d2.update(*row) == t2.update(*row) == []
    np.testing.assert_allclose(d2.mu, t2.mu)


@pytest.mark.parametrize("blob", [b"", b"not a zip", b"PK\x03\x04" + b"\x00" * 64, bytes(range(256)) * 50])
def test_a_state_that_is_not_one_is_refused(blob: bytes) -> None:
    with pytest.raises(ValueError):
        WatchDetector.from_bytes(blob)


def test_rows_of_the_wrong_width_and_bad_knobs_are_refused() -> None:
    det = detector()
    with pytest.raises(ValueError):
        det.update(1, 0.0, np.ones(R), np.ones(R - 1))
    with pytest.raises(ValueError):
        WatchConfig(min_effect=0.3, spike_effect=0.2)
    with pytest.raises(ValueError):
        WatchDetector(0)


def test_missing_steps_and_all_nan_rows_do_not_raise_or_open() -> None:
    det, job = warm(16, steps=100)
    nan = np.full(R, np.nan, np.float32)
    for _ in range(20):
        assert det.update(job.step + 1, math.nan, nan, nan) == []
        job.step += 1
    assert run(det, job, 100) == []
