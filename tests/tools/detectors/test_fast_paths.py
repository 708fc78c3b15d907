"""Faster code paths of the suite give the same numbers as the straightforward ones they replace."""

from __future__ import annotations

import numpy as np
from forensic.tools.detectors._stats import _NORMAL, normal_isf, series_cusum
from forensic.tools.detectors.core import _host_codes, _Labels


def test_host_codes_equal_numpy_unique():
    rng = np.random.default_rng(0)
    cases = [
        {r: f"gpu-{r // 8:05d}" for r in range(4096)},
        {r: str(rng.choice(["b", "a", "", "\u00e4", "Z", "a1", "a-1"])) for r in range(500)},
        {str(r): f"h{r % 7}" for r in range(100)},  # string keys
        {r: f"h{r}" for r in range(0, 60, 2)},  # ranks without a host get ""
    ]
    for hosts in cases:
        n = 60 if len(hosts) == 30 else len(hosts)
        codes, names = _host_codes(_Labels(None, None, hosts), n)
        get = hosts.get
        plain = [get(r) or get(str(r)) or "" for r in range(n)]
        uniq, expect = np.unique(np.array(plain, dtype=str), return_inverse=True)
        assert names == [str(u) for u in uniq]
        assert np.array_equal(codes, expect)
        assert [names[c] for c in codes] == plain


def test_series_cusum_scores_equal_normal_isf():
    # the normal scores of the baseline's levels, bit for bit, and the alarm they give
    for m in (4, 7, 100, 2000):
        levels = (np.arange(2 * m + 1) / 2.0 + 0.5) / (m + 1)
        a = np.array([-normal_isf(q) for q in levels])
        assert np.array_equal(a, np.array([_NORMAL.inv_cdf(q) for q in levels.tolist()]))
    rng = np.random.default_rng(1)
    v = np.concatenate([rng.standard_normal(300), rng.standard_normal(300) + 1.0])
    alarm, onset = series_cusum(v, 300, 0.01)
    assert alarm is not None and 300 <= onset <= alarm
