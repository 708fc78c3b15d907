"""Each detector on small synthetic fleets with a known answer, and on clean ones (no flags)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from forensic.tools.detectors import (
    StepTable,
    analyze,
    barrier_tax,
    change_points,
    peer_outliers,
    replica_divergence,
    spikes,
    tax_attribution,
    uniform_slowdown,
)
from forensic.tools.detectors._stats import bonferroni_z
from forensic.tools.detectors.synth import Injected, Noise, make_fleet


def _fleet(ranks=512, steps=400, seed=0, truth=(), **noise):
    return make_fleet(ranks, steps, seed=seed, truth=list(truth), noise=Noise(**noise))


# --- barrier tax ------------------------------------------------------------------------------


def test_barrier_tax_known_answer():
    s_n, r_n = 200, 16
    compute = np.ones((s_n, r_n), dtype=np.float32)
    compute[100:, 3] = 1.1  # rank 3 is 10% slow from step 100: each of those steps waits 0.1 s
    duration = np.full((s_n, r_n), 1.2, dtype=np.float32)
    r = barrier_tax(duration, compute, steps=np.arange(s_n) * 10)
    assert r.total_lost_s == pytest.approx(100 * 0.1, rel=1e-3)
    assert r.total_step_time_s == pytest.approx(200 * 1.2, rel=1e-4)
    assert r.lost_fraction == pytest.approx(10 / 240, rel=1e-3)
    assert r.baseline_tax_fraction == pytest.approx(0.0, abs=1e-6)
    assert r.late_tax_fraction == pytest.approx(0.1 / 1.2, rel=1e-3)
    assert r.rising and r.onset_index == 100 and r.onset_step == 1000


def test_barrier_tax_flat_on_a_clean_fleet():
    f = _fleet(seed=1)
    r = barrier_tax(f.duration, f.compute)
    assert not r.rising and r.lost_fraction > 0


# --- attribution ------------------------------------------------------------------------------


def test_attribution_concentrated_on_one_rank():
    # few hiccups: in the default synthetic fleet a 20% hiccup somewhere is the last arrival at
    # most steps, and the tax really is diffuse
    f = _fleet(ranks=1024, seed=2, truth=[Injected(77, "from_start", 0.15, 0)], tail_prob=1e-5)
    r = tax_attribution(f.duration, f.compute, rank_host=f.rank_host)
    assert r.pattern == "concentrated" and r.concentrated_on == "ranks"
    assert r.significant_ranks == [77] and r.top_k == 1 and r.top_k_share > 0.5
    assert r.top_ranks[0].rank == 77 and r.top_ranks[0].host == "gpu-0009"
    assert r.top_hosts[0].host == "gpu-0009"


def test_attribution_diffuse_on_a_clean_fleet():
    for ranks in (8, 1024):
        f = _fleet(ranks=ranks, seed=3)
        r = tax_attribution(f.duration, f.compute)
        # a rank with a slightly faster GPU may be significantly often last among 8; not "a few
        # ranks holding most of the tax"
        assert r.pattern == "diffuse" and r.top_k_share < max(0.5, 2 * r.null_share)


def test_attribution_concentrated_on_a_host():
    # a host of 16 ranks, all of them slow: too many ranks to call "a few", one host to evict
    truth = [Injected(r, "from_start", 0.15, 0) for r in range(32, 48)]
    f = _fleet(ranks=1024, seed=4, truth=truth, tail_prob=1e-5)
    hosts = {r: f"node-{r // 16}" for r in range(1024)}
    r = tax_attribution(f.duration, f.compute, rank_host=hosts)
    assert r.pattern == "concentrated" and r.concentrated_on == "hosts"
    assert r.significant_hosts == ["node-2"] and r.top_k_share > 0.9


def test_attribution_without_tax_is_none():
    c = np.ones((10, 4), dtype=np.float32)
    assert tax_attribution(c, c).pattern == "none"


# --- peer outliers ----------------------------------------------------------------------------


def test_peer_outliers_finds_a_persistent_straggler():
    f = _fleet(ranks=2048, seed=5, truth=[Injected(1500, "from_start", 0.04, 0)])
    r = peer_outliers(f.compute, rank_host=f.rank_host)
    assert [p.rank for p in r.flagged] == [1500]
    p = r.flagged[0]
    assert p.z > r.threshold_z and p.p50 == pytest.approx(0.04, abs=0.005) and p.p99 > p.p50
    assert p.first_index == 0 and p.host == "gpu-0187"
    assert r.threshold_z == pytest.approx(bonferroni_z(0.01, 2048)) and 4.3 < r.threshold_z < 4.5
    assert r.top[0].rank == 1500 and len(r.top) == 5 and not all(t.flagged for t in r.top)


def test_peer_outliers_benjamini_hochberg():
    truth = [Injected(r, "from_start", 0.03, 0) for r in (10, 200, 300)]
    f = _fleet(ranks=1024, seed=6, truth=truth)
    r = peer_outliers(f.compute, method="bh")
    assert sorted(p.rank for p in r.flagged) == [10, 200, 300] and r.method == "bh"
    with pytest.raises(ValueError):
        peer_outliers(f.compute, method="holm")


def test_peer_outliers_small_fleet_and_labels():
    f = _fleet(ranks=8, steps=300, seed=7, truth=[Injected(5, "from_start", 0.05, 0)])
    r = peer_outliers(f.compute, ranks=np.arange(100, 108), steps=np.arange(300) * 2)
    assert [p.rank for p in r.flagged] == [105]


def test_peer_outliers_additive_units():
    rng = np.random.default_rng(8)
    x = rng.normal(0.0, 1.0, (300, 256)).astype(np.float32)
    x[:, 9] += 3.0
    r = peer_outliers(x, relative=False, min_effect=0.5)
    assert r.units == "additive" and [p.rank for p in r.flagged] == [9]
    assert r.flagged[0].p50 == pytest.approx(3.0, abs=0.3)


def test_peer_outliers_ignore_a_significant_but_tiny_effect():
    # 0.5% slower on every step: statistically clear over 2000 steps, not worth evicting
    f = _fleet(ranks=256, steps=2000, seed=9, truth=[Injected(3, "from_start", 0.005, 0)], static=0.0)
    r = peer_outliers(f.compute)
    assert r.flagged == [] and r.top[0].rank == 3 and r.top[0].z > r.threshold_z


# --- change points ----------------------------------------------------------------------------


def test_change_point_onset():
    truth = [Injected(40, "persistent", 0.04, 350), Injected(41, "persistent", 0.02, 500)]
    f = _fleet(ranks=512, steps=700, seed=10, truth=truth)
    r = change_points(f.compute, steps=np.arange(700) + 1000)
    got = {c.rank: c for c in r.flagged}
    assert set(got) == {40, 41}
    assert abs(got[40].onset_index - 350) <= 3 and got[40].onset_step == got[40].onset_index + 1000
    assert abs(got[41].onset_index - 500) <= 10
    assert got[40].alarm_index >= got[40].onset_index
    assert got[40].shift == pytest.approx(0.04, abs=0.015)
    assert r.n_baseline == 140 and r.h > 0 and r.k_eff > r.k


def test_change_points_ignore_a_rank_slow_from_the_start():
    f = _fleet(ranks=256, steps=500, seed=11, truth=[Injected(9, "from_start", 0.08, 0)])
    assert change_points(f.compute).flagged == []


def test_change_points_disabled_on_short_series():
    f = _fleet(ranks=32, steps=20, seed=12)
    r = change_points(f.compute)
    assert not r.enabled and "baseline" in r.note


def test_change_points_custom_baseline():
    f = _fleet(ranks=128, steps=400, seed=13, truth=[Injected(7, "persistent", 0.05, 100)])
    r = change_points(f.compute, baseline_steps=50)
    assert r.n_baseline == 50 and [c.rank for c in r.flagged] == [7]


# --- spikes -----------------------------------------------------------------------------------


def test_spikes_find_an_intermittent_straggler():
    f = _fleet(ranks=1024, steps=600, seed=14, truth=[Injected(600, "intermittent", 0.08, 0, 0.2)])
    r = spikes(f.compute)
    assert [s.rank for s in r.flagged] == [600]
    s = r.flagged[0]
    assert s.rate == pytest.approx(0.2, abs=0.06) and s.count >= r.critical_count
    assert s.effect == pytest.approx(0.08, abs=0.02) and s.p_value < 0.01 / 1024
    assert r.p0_source == "pooled"  # the synthetic fleet's hiccups make the tail heavier than normal


def test_spikes_quiet_on_heavy_tailed_clean_fleet():
    f = _fleet(ranks=1024, steps=600, seed=15, tail_prob=5e-3)
    r = spikes(f.compute)
    assert r.flagged == [] and r.p0 > 1e-3


# --- uniform slowdown -------------------------------------------------------------------------


def _slowdown_fleet(kind: str, seed=16):
    f = _fleet(ranks=256, steps=500, seed=seed)
    compute, duration, start = f.compute.copy(), f.duration.copy(), f.start.copy()
    period = np.diff(start)
    if kind == "compute":
        compute[300:] *= 1.1
        duration[300:] += 0.1 * np.median(compute[300:], axis=1, keepdims=True).astype(np.float32) / 1.1
        period[299:] += 0.1
    elif kind == "gaps":
        period[299:] += 0.2
    elif kind == "communication":
        duration[300:] += 0.2
        period[299:] += 0.2
    elif kind == "straggler":
        compute[300:, 17] *= 1.25
        duration[300:] += 0.2
        period[299:] += 0.2
    start = np.concatenate(([start[0]], start[0] + np.cumsum(period)))
    return compute, duration, start


@pytest.mark.parametrize("kind", ["compute", "gaps", "communication"])
def test_uniform_slowdown_says_where(kind):
    compute, duration, start = _slowdown_fleet(kind)
    r = uniform_slowdown(duration, start, compute)
    assert r.regressed and r.where == kind and r.ratio > 1.05
    assert abs(r.onset_index - 300) <= 3
    if kind == "compute":
        assert r.shared_by_all is True and r.frac_ranks_slower > 0.9
    else:
        assert r.shared_by_all is None


def test_uniform_slowdown_from_one_straggler_is_the_barrier_tax():
    compute, duration, start = _slowdown_fleet("straggler")
    r = uniform_slowdown(duration, start, compute)
    assert r.regressed and r.where == "barrier_tax" and r.shared_by_all is None


def test_uniform_slowdown_without_compute():
    compute, duration, start = _slowdown_fleet("gaps")
    assert uniform_slowdown(duration, start).where == "gaps"
    compute, duration, start = _slowdown_fleet("communication")
    r = uniform_slowdown(duration, None)
    assert r.regressed and r.where == "unknown"


def test_uniform_slowdown_clean():
    for seed in range(5):
        f = _fleet(ranks=256, steps=400, seed=100 + seed)
        r = uniform_slowdown(f.duration, f.start, f.compute)
        assert not r.regressed and r.where == "none" and r.onset_index is None


# --- replica divergence -----------------------------------------------------------------------


def _checksums(s_n, r_n, groups=1):
    c = np.empty((s_n, r_n), dtype=object)
    for s in range(s_n):
        for r in range(r_n):
            c[s, r] = f"s{s}g{r % groups}"
    return c


def test_checksum_divergence_first_step():
    c = _checksums(100, 16)
    for s in range(60, 100):
        c[s, 5] = f"bad{s}"
    c[10, 2] = None  # not logged: no evidence
    r = replica_divergence(c, steps=np.arange(100) * 5, rank_host={5: "gpu-x"})
    assert [(d.rank, d.kind, d.first_index, d.first_step, d.n_steps, d.host) for d in r.flagged] == [
        (5, "checksum", 60, 300, 40, "gpu-x")
    ]
    assert r.groups_per_step == 1.0 and r.checksum_checked and not r.loss_checked


def test_checksum_divergence_with_several_replica_groups():
    c = _checksums(50, 32, groups=4)  # tensor parallel x4: four groups, each must agree inside
    c[20:, 9] = "corrupt"
    r = replica_divergence(c)
    assert [d.rank for d in r.flagged] == [9] and r.groups_per_step == 4.0


def test_checksum_all_unique_is_no_evidence():
    c = np.array([[f"{s}-{r}" for r in range(8)] for s in range(10)], dtype=object)
    assert replica_divergence(c).flagged == []


def test_loss_divergence():
    rng = np.random.default_rng(17)
    loss = (2.5 + 0.02 * rng.standard_normal((200, 64))).astype(np.float32)
    loss[120:, 33] = np.inf  # NaN would read as "not logged"
    loss[150:, 34] = 9.0
    r = replica_divergence(loss=loss)
    got = {(d.rank, d.kind): d for d in r.flagged}
    assert set(got) == {(33, "loss"), (34, "loss")}
    assert got[(33, "loss")].first_index == 120 and got[(34, "loss")].first_index == 150


# --- analyze ----------------------------------------------------------------------------------


def test_analyze_the_three_kinds():
    truth = [
        Injected(100, "from_start", 0.05, 0),
        Injected(200, "persistent", 0.06, 500),
        Injected(300, "intermittent", 0.09, 0, 0.25),
    ]
    f = _fleet(ranks=1024, steps=800, seed=18, truth=truth)
    table = StepTable.from_arrays(f.duration, f.compute, start=f.start, steps=np.arange(800) * 10)
    a = analyze(table, f.rank_host)
    kinds = {s.rank: s for s in a.stragglers}
    assert set(kinds) == {100, 200, 300}
    assert kinds[100].kind == "persistent" and kinds[100].first_index == 0
    assert kinds[200].kind == "onset" and abs(kinds[200].first_index - 500) <= 3
    assert kinds[200].first_step == kinds[200].first_index * 10
    assert kinds[300].kind == "intermittent" and kinds[300].detected_by == ["spike"]
    assert kinds[100].lateness == pytest.approx(0.05, abs=0.006)
    assert kinds[200].lateness == pytest.approx(0.06, abs=0.006)
    assert kinds[100].host == "gpu-0012"
    assert "3 straggler(s)" in a.summary and a.has_compute
    json.loads(a.model_dump_json())  # an evidence record must serialize


def test_analyze_with_missing_cells():
    f = _fleet(ranks=512, steps=400, seed=19, truth=[Injected(50, "from_start", 0.05, 0)])
    rng = np.random.default_rng(19)
    holes = rng.random(f.compute.shape) < 0.1
    compute = np.where(holes, np.nan, f.compute).astype(np.float32)
    duration = np.where(holes, np.nan, f.duration).astype(np.float32)
    compute[:, 400] = np.nan  # a rank that never logged compute
    compute[37] = np.nan  # a step without any compute
    a = analyze(StepTable.from_arrays(duration, compute, start=f.start))
    assert [s.rank for s in a.stragglers] == [50]


def test_analyze_without_compute():
    f = _fleet(ranks=64, steps=100, seed=20)
    a = analyze(StepTable.from_arrays(f.duration, None, start=f.start))
    assert not a.has_compute and a.stragglers == [] and a.pattern == "none"
    assert a.slowdown is not None and any("compute_s" in n for n in a.notes)


def test_analyze_clean_and_uniform_fleets():
    f = _fleet(ranks=256, steps=300, seed=21)
    a = analyze(StepTable.from_arrays(f.duration, f.compute, start=f.start))
    assert a.stragglers == [] and a.pattern == "diffuse" and "No straggler" in a.summary
    flat = np.ones((100, 16), dtype=np.float32)
    a = analyze(StepTable.from_arrays(flat * 1.2, flat))
    assert a.stragglers == [] and a.pattern == "none"


def test_analyze_divergence_and_tiny_tables():
    c = _checksums(30, 4)
    c[12:, 1] = "x"
    flat = np.ones((30, 4), dtype=np.float32)
    a = analyze(StepTable.from_arrays(flat * 1.2, flat, checksum=c))
    assert [d.rank for d in a.divergence.flagged] == [1] and "divergent" in a.summary
    one = np.ones((1, 1), dtype=np.float32)
    a = analyze(StepTable.from_arrays(one, one))
    assert a.n_steps == 1 and a.stragglers == []


def test_rank_host_map_with_string_keys():
    f = _fleet(ranks=64, steps=300, seed=22, truth=[Injected(9, "from_start", 0.06, 0)])
    a = analyze(StepTable.from_arrays(f.duration, f.compute, start=f.start), {"9": "gpu-a017"})
    assert [(s.rank, s.host) for s in a.stragglers] == [(9, "gpu-a017")]
    with pytest.raises(ValueError):
        analyze(StepTable.from_arrays(f.duration, f.compute), method="fdr")
