"""Clean fleets of 8 to 16,384 ranks raise no straggler flags (alpha over the fleet, min effect)."""

from __future__ import annotations

import numpy as np
import pytest
from forensic.tools.detectors import StepTable, analyze
from forensic.tools.detectors.synth import Noise, make_fleet


def _flags(ranks, steps, seed, **noise):
    f = make_fleet(ranks, steps, seed=seed, noise=Noise(**noise))
    a = analyze(StepTable.from_arrays(f.duration, f.compute, start=f.start), f.rank_host)
    return a


@pytest.mark.parametrize(
    "ranks, steps, seeds",
    [(8, 200, range(40)), (64, 300, range(20)), (512, 200, range(10)), (2048, 500, range(3))],
)
def test_clean_fleets_raise_no_flags(ranks, steps, seeds):
    for seed in seeds:
        a = _flags(ranks, steps, 1000 + seed)
        assert a.stragglers == [], (ranks, steps, seed, a.stragglers)
        assert not a.slowdown.regressed
        assert a.pattern == "diffuse"


def test_clean_fleet_of_16384_ranks():
    a = _flags(16384, 200, 7)
    assert a.stragglers == []
    assert a.peers.threshold_z == pytest.approx(4.9, abs=0.05)
    # the closest healthy rank is well inside the cut that 3.5 would have crossed
    assert a.peers.top[0].z < a.peers.threshold_z


@pytest.mark.parametrize(
    "noise",
    [
        {"tail_prob": 1e-2},  # a fleet full of hiccups
        {"rack": 0.02, "host": 0.01},  # strongly rack-correlated jitter
        {"drift": 0.05},  # the job's own step time swinging by 5%
        {"static": 0.004},  # more hardware spread between ranks
        {"rank": 0.03},  # noisy compute
    ],
)
def test_clean_fleets_under_harder_noise(noise):
    a = _flags(1024, 400, 11, **noise)
    assert a.stragglers == [], a.stragglers


def test_perfectly_uniform_fleet():
    c = np.full((300, 256), 0.8, dtype=np.float32)
    a = analyze(StepTable.from_arrays(c + 0.2, c))
    assert a.stragglers == [] and not a.slowdown.regressed
