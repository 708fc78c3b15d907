"""The statistical helpers: cuts across many ranks, binomial tails, CUSUM thresholds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from forensic.tools.detectors._stats import (
    benjamini_hochberg,
    binomial_critical_count,
    binomial_sf,
    bonferroni_z,
    cusum_threshold,
    normal_isf,
    normal_sf,
)


def test_bonferroni_cut_grows_with_the_fleet():
    assert bonferroni_z(0.01, 16384) == pytest.approx(4.9, abs=0.05)
    assert bonferroni_z(0.01, 1) == pytest.approx(2.326, abs=0.01)
    assert bonferroni_z(0.01, 8) < bonferroni_z(0.01, 1024) < bonferroni_z(0.01, 16384)


def test_normal_tail_round_trip_far_out():
    for z in (1.0, 4.9, 8.0, 12.0):
        assert normal_isf(normal_sf(z)) == pytest.approx(z, rel=1e-6)


def test_binomial_tail_matches_direct_sum():
    n, p = 50, 0.1
    direct = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(7, n + 1))
    assert binomial_sf(7, n, p) == pytest.approx(direct, rel=1e-9)
    k = binomial_critical_count(n, p, 0.01)
    assert binomial_sf(k, n, p) <= 0.01 < binomial_sf(k - 1, n, p)


def test_benjamini_hochberg():
    p = np.array([0.001, 0.2, 0.004, 0.9, 0.03])
    # sorted: 0.001 <= .01, 0.004 <= .02, 0.03 <= .03 (rejected), 0.2 > .04
    assert benjamini_hochberg(p, 0.05).tolist() == [True, False, True, False, True]
    assert benjamini_hochberg(p, 0.02).tolist() == [True, False, True, False, False]
    assert benjamini_hochberg(np.array([]), 0.05).size == 0


def test_cusum_threshold_grows_with_the_run_length_it_must_survive():
    h1 = cusum_threshold(1e4, 0.5)
    h2 = cusum_threshold(1e8, 0.5)
    assert 0 < h1 < h2
    # Siegmund: ARL0 ~ (e^{2k(h+1.166)} - 2k(h+1.166) - 1) / (2k^2)
    b = 2 * 0.5 * (h1 + 1.166)
    assert (math.exp(b) - b - 1) / 0.5 == pytest.approx(1e4, rel=1e-6)


def test_cusum_threshold_false_alarm_rate_by_simulation():
    rng = np.random.default_rng(0)
    n, ranks, alpha = 400, 2000, 0.05
    h = cusum_threshold(n * ranks / alpha, 0.5)
    u = rng.standard_normal((ranks, n)) - 0.5
    s = np.cumsum(u, axis=1)
    c = s - np.minimum(np.minimum.accumulate(s, axis=1), 0)
    assert (c.max(axis=1) > h).sum() <= 2  # expected about alpha = 0.05 alarms in the whole fleet
