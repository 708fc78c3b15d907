"""Streaming detectors: one step at a time, and the same answer as the batch."""

from __future__ import annotations

import json

import numpy as np
import pytest
from forensic.tools.detectors import StepTable, StreamingDetectors, analyze
from forensic.tools.detectors.synth import Injected, make_fleet, random_stragglers


def _replay(fleet, baseline_steps, **kw):
    s_n, r_n = fleet.compute.shape
    sd = StreamingDetectors(r_n, baseline_steps=baseline_steps, horizon_steps=s_n, **kw)
    for s in range(s_n):
        sd.update(fleet.duration[s], fleet.compute[s], float(fleet.start[s]))
    return sd


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streaming_and_batch_flag_the_same_ranks(seed):
    rng = np.random.default_rng(seed)
    ranks, steps = 1024, 600
    truth = random_stragglers(rng, ranks, steps, n_persistent=4, n_from_start=2, n_intermittent=2)
    f = make_fleet(ranks, steps, seed=seed, truth=truth)
    batch = analyze(StepTable.from_arrays(f.duration, f.compute, start=f.start), f.rank_host)
    sd = _replay(f, baseline_steps=round(0.2 * steps), rank_host=f.rank_host)
    snap = sd.snapshot()
    assert {s.rank for s in snap.stragglers} == {s.rank for s in batch.stragglers}
    assert {s.rank: s.kind for s in snap.stragglers} == {s.rank: s.kind for s in batch.stragglers}
    assert set(np.flatnonzero(sd.flagged())) == {s.rank for s in batch.stragglers}
    # onsets of change points agree to the step: the batch re-runs candidates exactly
    b_cp = {c.rank: c.onset_index for c in batch.change_points.flagged}
    s_cp = {c.rank: c.onset_index for c in snap.change_points.flagged}
    assert b_cp == s_cp
    assert snap.pattern == batch.pattern
    assert snap.tax.total_lost_s == pytest.approx(batch.tax.total_lost_s, rel=1e-3)
    json.loads(snap.model_dump_json())


def test_streaming_clean_fleet_and_early_snapshots():
    f = make_fleet(512, 300, seed=5)
    sd = StreamingDetectors(512, baseline_steps=60, horizon_steps=300)
    for s in range(30):
        sd.update(f.duration[s], f.compute[s])
    early = sd.snapshot()
    assert not early.baseline_complete and not early.change_points.enabled and early.slowdown is None
    for s in range(30, 300):
        sd.update(f.duration[s], f.compute[s], float(f.start[s]))
    snap = sd.snapshot()
    assert snap.stragglers == [] and snap.n_steps == 300 and snap.baseline_complete
    assert snap.slowdown is not None and not snap.slowdown.regressed


def test_streaming_detects_an_onset_soon_after_it_starts():
    f = make_fleet(256, 500, seed=6, truth=[Injected(99, "persistent", 0.05, 300)])
    sd = StreamingDetectors(256, baseline_steps=100, horizon_steps=500)
    first = None
    for s in range(500):
        sd.update(f.duration[s], f.compute[s])
        if first is None and sd.flagged()[99]:
            first = s
    assert first is not None and 300 <= first <= 330
    cp = sd.snapshot().change_points.flagged
    assert [c.rank for c in cp] == [99] and abs(cp[0].onset_index - 300) <= 3


def test_streaming_handles_missing_values_and_checks_shape():
    f = make_fleet(64, 120, seed=7, truth=[Injected(3, "from_start", 0.08, 0)])
    sd = StreamingDetectors(64, baseline_steps=30, horizon_steps=120)
    for s in range(120):
        c = f.compute[s].copy()
        c[s % 64] = np.nan
        if s == 50:
            c[:] = np.nan  # a step nobody logged
        sd.update(f.duration[s], c)
    assert [s.rank for s in sd.snapshot().stragglers] == [3]
    with pytest.raises(ValueError):
        sd.update(np.ones(10), np.ones(10))
    with pytest.raises(ValueError):
        StreamingDetectors(0)


def test_snapshot_before_any_step():
    snap = StreamingDetectors(16, baseline_steps=4).snapshot()
    assert snap.n_steps == 0 and snap.stragglers == [] and snap.pattern == "none"
