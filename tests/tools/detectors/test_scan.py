"""The one-sweep scan (pass A and B per chunk) against the two passes run one after the other."""

from __future__ import annotations

import numpy as np
import pytest
from forensic.tools.detectors import _scan
from forensic.tools.detectors._scan import ScanConfig, scan
from forensic.tools.detectors.synth import Injected, make_fleet

_FIELDS = (
    "center",
    "sigma",
    "top",
    "top_rank",
    "valid",
    "step_time",
    "lo",
    "hi",
    "cut",
    "n_valid",
    "wmean",
    "exceed",
    "base_mu",
    "base_sigma",
    "cusum_screen",
    "base_mean_y",
    "late_mean_y",
)


def _two_pass(monkeypatch, y, d, cfg):
    with monkeypatch.context() as m:
        calls = []
        m.setattr(_scan, "_one_sweep", lambda *a: calls.append(1))  # forces the two-pass path
        sc = scan(y, d, cfg)
    return sc, calls


@pytest.fixture(scope="module")
def fleet():
    truth = [
        Injected(rank=37, kind="persistent", slowdown=0.05, onset=300),
        Injected(rank=90, kind="intermittent", slowdown=0.08, onset=0, fraction=0.2),
    ]
    return make_fleet(160, 620, seed=5, truth=truth)


def test_one_sweep_equals_two_passes(monkeypatch, fleet, scan_route):
    cfg = ScanConfig()
    # the compiled kernel sums squares per block of 8 steps (numpy: per chunk, in float32), so the
    # baseline spread and the CUSUM screen built on it agree to a tolerance (see test_fast.py)
    loose = {"base_sigma": (2e-3, 1e-9), "cusum_screen": (2e-2, 5e-2)} if scan_route == "numba" else {}
    # small chunks, so the sweep crosses many chunk and baseline boundaries (620 steps, baseline 124)
    monkeypatch.setattr(_scan, "_CHUNK_BYTES", 4 * 160 * 24)
    one = scan(fleet.compute, fleet.duration, cfg)
    two, calls = _two_pass(monkeypatch, fleet.compute, fleet.duration, cfg)
    assert calls == [1]
    for f in _FIELDS:
        a, b = getattr(one, f), getattr(two, f)
        rtol, atol = loose.get(f, (1e-5 if scan_route == "numba" else 1e-6, 1e-9))
        assert np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True), f
    assert one.sigma_pool == pytest.approx(two.sigma_pool) and one.cusum_enabled and two.cusum_enabled
    # the straggler stands out in both
    assert int(np.nanargmax(one.wmean)) == 37 and int(np.argmax(one.cusum_screen)) == 37


def test_a_step_without_a_median_falls_back_to_two_passes(monkeypatch, fleet):
    y = fleet.compute.copy()
    y[400] = np.nan  # nobody logged step 400: its cells borrow the neighbours' median
    seen = []
    real = _scan._one_sweep

    def spy(*a):
        out = real(*a)
        seen.append(out is None)
        return out

    monkeypatch.setattr(_scan, "_one_sweep", spy)
    sc = scan(y, fleet.duration, ScanConfig())
    assert seen == [True]
    assert not sc.valid[400] and sc.valid.sum() == 619 and sc.top_rank[400] == -1
    assert sc.n_valid.min() == 619 and int(np.nanargmax(sc.wmean)) == 37


def test_additive_mode_takes_the_two_passes(monkeypatch, fleet):
    seen = []
    monkeypatch.setattr(_scan, "_one_sweep", lambda *a: seen.append(1))
    sc = scan(fleet.compute, None, ScanConfig(relative=False))
    assert seen == [] and sc.step_time is None and int(np.nanargmax(sc.wmean)) == 37
