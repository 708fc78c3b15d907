"""A job-wide slowdown in a short step log (a few dozen logged steps).

Windows of a fifth of the log hold 6 steps in a 32-step log, and 6 against 6 can never reach the
job-level test's bar however clean the jump; the windows are floored at the size the test needs.
The floor must not turn noise into regressions: flat short logs stay flat.
"""

from __future__ import annotations

import numpy as np
import pytest
from forensic.tools.detectors import uniform_slowdown

RANKS = 8


def _log(n: int, *, rise: float, onset: float, every: int, noise: float, seed: int, compute: bool):
    """(steps, start, duration, compute) for ``n`` logged steps, every ``every`` steps, whose
    collective takes ``rise`` longer from ``onset`` (a share of the log) on."""
    rng = np.random.default_rng(seed)
    t, s = 1.79e9, 5000
    steps, start, dur, comp = [], [], [], []
    for i in range(n):
        c = 1.2 * (1 + 0.005 * rng.standard_normal(RANKS))
        comm = 0.8 * (1 + noise * rng.standard_normal())
        if i >= onset * n:
            comm += rise * 2.0
        d = c.max() + comm
        steps.append(s)
        start.append(t)
        dur.append(np.full(RANKS, d))
        comp.append(c)
        t += d * every
        s += every
    return np.array(steps), np.array(start), np.array(dur), (np.array(comp) if compute else None)


@pytest.mark.parametrize("n", [16, 20, 28, 32])
@pytest.mark.parametrize(
    ("rise", "onset", "every", "compute"), [(0.26, 0.5, 50, False), (0.12, 0.45, 1, True)]
)
def test_a_clean_jump_in_a_short_log_is_a_regression(n, rise, onset, every, compute) -> None:
    steps, start, dur, comp = _log(
        n, rise=rise, onset=onset, every=every, noise=0.01, seed=n, compute=compute
    )
    r = uniform_slowdown(dur, start, comp, steps=steps)
    assert r.regressed, (n, r.z, r.ratio)
    assert r.ratio > 1.05
    assert r.n_baseline >= 8 or r.n_baseline == n // 2
    if compute:
        assert r.where == "communication"


@pytest.mark.parametrize("n", [8, 12, 20, 32])
def test_short_flat_logs_stay_flat(n) -> None:
    # Noise of 5% per step with no change: at alpha 0.001 hardly any log may regress.
    hits = 0
    for seed in range(60):
        steps, start, dur, _ = _log(
            n, rise=0.0, onset=1.0, every=10, noise=0.05, seed=1000 + seed, compute=False
        )
        hits += uniform_slowdown(dur, start, steps=steps).regressed
    assert hits <= 1


def test_a_log_too_short_to_split_is_never_a_regression() -> None:
    steps, start, dur, _ = _log(7, rise=0.5, onset=0.5, every=1, noise=0.0, seed=1, compute=False)
    assert not uniform_slowdown(dur, start, steps=steps).regressed
