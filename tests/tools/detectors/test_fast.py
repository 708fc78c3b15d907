"""The compiled scan kernel (numba) against the numpy route, on messy arrays, and its safe fallbacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from forensic.tools.detectors import _fast
from forensic.tools.detectors._scan import ScanConfig, scan

_EXACT = ("center", "sigma", "top", "top_rank", "valid", "lo", "hi", "cut", "n_valid", "exceed")
_DEFAULT_MIN = _fast.MIN_ELEMENTS  # read at import, before the fixture lowers it
_CLOSE = ("wmean", "base_mu", "base_mean_y", "late_mean_y")


def _messy(seed: int, s_n: int, r_n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = (0.1 * (1 + 0.02 * rng.standard_normal((s_n, r_n)))).astype(np.float32)
    y[rng.random((s_n, r_n)) < 0.002] = np.nan  # scattered missing cells
    y[:, 3] = np.nan  # a rank that never logged
    y[s_n // 3 :, 5] = np.nan  # a rank that died
    y[rng.random((s_n, r_n)) < 0.001] *= 4  # spikes
    y[s_n // 2 :, 11] *= 1.06  # a straggler from the middle on
    y[:, 17] *= 1.03  # a slow rank from the start
    return y


_DEFAULT_CFG = ScanConfig()  # frozen, so one instance serves every call


def _both(y: np.ndarray, cfg: ScanConfig = _DEFAULT_CFG):
    assert _fast.available(), "numba must import for this test"
    old = _fast.MIN_ELEMENTS
    try:
        _fast.MIN_ELEMENTS = 0
        runs = _fast._state["runs"]
        fast = scan(y, None, cfg)
        assert _fast._state["runs"] == runs + 1, "the compiled route did not run"
        _fast.set_enabled(False)
        slow = scan(y, None, cfg)
        assert _fast._state["runs"] == runs + 1
    finally:
        _fast.set_enabled(True)
        _fast.MIN_ELEMENTS = old
    return fast, slow


@pytest.fixture(autouse=True)
def _need_numba(scan_route):
    if scan_route == "numpy":
        pytest.skip("compares both routes itself (runs once, under the numba parameter)")


@pytest.mark.parametrize(
    ("seed", "s_n", "r_n", "baseline"),
    [
        (0, 1000, 3001, None),  # 200 baseline steps, the late window starts mid-block
        (1, 517, 64, None),  # a short last block, few ranks (exact sample)
        (2, 1203, 2500, 97),  # the baseline ends mid-chunk
    ],
)
def test_compiled_route_matches_numpy(seed, s_n, r_n, baseline):
    y = _messy(seed, s_n, r_n)
    fast, slow = _both(y, ScanConfig(baseline_steps=baseline))
    for f in _EXACT:
        assert np.array_equal(getattr(fast, f), getattr(slow, f), equal_nan=True), f
    for f in _CLOSE:
        assert np.allclose(getattr(fast, f), getattr(slow, f), rtol=1e-5, atol=1e-7, equal_nan=True), f
    # float32 sums of squares per chunk (numpy) against per block (compiled): the spread agrees to 0.2%
    assert np.allclose(fast.base_sigma, slow.base_sigma, rtol=2e-3, equal_nan=True)
    assert np.allclose(fast.cusum_screen, slow.cusum_screen, rtol=2e-2, atol=5e-2)
    assert fast.sigma_pool == slow.sigma_pool
    assert np.isnan(fast.wmean[3]) and fast.n_valid[3] == 0 and s_n // 3 - 10 < fast.n_valid[5] <= s_n // 3
    # the straggler leads the CUSUM screen on both routes; the slow rank leads the mean
    assert int(np.argmax(fast.cusum_screen)) == int(np.argmax(slow.cusum_screen)) == 11
    assert int(np.nanargmax(fast.wmean)) == int(np.nanargmax(slow.wmean))


def test_compiled_spread_is_closer_to_float64():
    y = _messy(4, 800, 1500)
    fast, slow = _both(y)
    n_b, c = fast.n_baseline, fast.center
    x = (
        np.clip(
            y[:n_b].astype(np.float64),
            (fast.lo * c)[:n_b, None].astype(np.float32),
            (fast.hi * c)[:n_b, None].astype(np.float32),
        )
        / c[:n_b, None]
    )
    x = np.where(np.isnan(x), 1.0, x)
    ref = np.maximum(x.std(axis=0), fast.sigma_pool)
    assert np.abs(fast.base_sigma - ref).max() <= np.abs(slow.base_sigma - ref).max()


def test_small_arrays_take_numpy_and_big_ones_the_kernel(monkeypatch):
    monkeypatch.setattr(_fast, "MIN_ELEMENTS", _DEFAULT_MIN)
    assert _DEFAULT_MIN >= 1_000_000
    small = np.ones((100, 64), dtype=np.float32)
    assert not _fast.use_for(small)
    assert not _fast.use_for(np.ones((100, 64)))  # float64: numpy route
    big = np.lib.stride_tricks.as_strided(np.ones(1, dtype=np.float32), (_fast.MIN_ELEMENTS, 1), (0, 0))
    assert not _fast.use_for(big)  # not contiguous
    assert _fast.use_for(np.ones((_fast.MIN_ELEMENTS // 1000, 1000), dtype=np.float32))


_CHILD = """
import json, sys, warnings
import numpy as np
import numba.core.caching as caching
mode = sys.argv[1]
if mode == "no-locator":  # no folder is writable: numba finds no cache locator at all
    def refuse(self):
        raise PermissionError("read-only")
    caching._CacheLocator.ensure_cache_path = refuse
else:  # the folder is found but writing the cache fails
    def fail(self, *a, **k):
        raise PermissionError("read-only")
    caching.IndexDataCacheFile.save = fail
from forensic.tools.detectors import _fast
from forensic.tools.detectors._scan import scan
_fast.MIN_ELEMENTS = 0
rng = np.random.default_rng(0)
y = (1 + 0.02 * rng.standard_normal((300, 200))).astype(np.float32)
with warnings.catch_warnings():
    warnings.simplefilter("error")  # nothing leaks out as a warning either
    a = scan(y)
_fast.set_enabled(False)
b = scan(y)
print(json.dumps({"runs": _fast._state["runs"], "error": _fast._state["error"],
                  "same": bool(np.array_equal(a.exceed, b.exceed) and np.allclose(a.wmean, b.wmean, rtol=1e-5))}))
"""


@pytest.mark.parametrize("mode", ["no-locator", "save-fails"])
def test_unwritable_cache_compiles_in_memory(mode, tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"runs": 1, "error": None, "same": True}


def test_numba_is_not_imported_by_small_scans():
    code = (
        "import sys, numpy as np\n"
        "from forensic.tools.detectors._scan import scan\n"
        "scan(np.random.default_rng(0).random((200, 100)).astype(np.float32) + 1)\n"
        "print('numba' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "False"


def test_row_maximum_and_its_rank_on_clean_blocks():
    """Blocks without missing cells take the compiled row maximum (per-tile integer maxima of the
    float bits, then a search in one tile): ties across tiles and within one, a maximum in the
    last (partial) tile, +inf cells; the first rank of the maximum, as numpy's argmax gives it."""
    rng = np.random.default_rng(7)
    s_n, r_n = 400, 2 * _fast._TILE + 37  # three tiles, the last one partial
    y = (1 + 0.02 * rng.standard_normal((s_n, r_n))).astype(np.float32)
    y[10, [300, 700]] = 9.0  # the same maximum in two tiles: the first one wins
    y[11, [600, 601]] = 9.0  # twice in one tile
    y[12, r_n - 1] = 9.0  # in the partial last tile
    y[13, 5] = np.inf
    y[14, 0] = 9.0  # the very first rank
    fast, slow = _both(y)
    for f in _EXACT:
        assert np.array_equal(getattr(fast, f), getattr(slow, f), equal_nan=True), f
    for f in _CLOSE:  # the window means count clean blocks' steps once per block (n_clean)
        assert np.allclose(getattr(fast, f), getattr(slow, f), rtol=1e-5, atol=1e-7), f
    assert fast.top_rank[10:15].tolist() == [300, 600, r_n - 1, 5, 0]
    assert fast.top[13] == np.inf
    assert np.array_equal(fast.top_rank, y.argmax(axis=1))


def test_block_tops_matches_argmax_on_any_sign():
    """The compiled helper on its own: rows whose maximum is negative or a signed zero are searched
    again as floats (their bits do not order like the values)."""
    assert _fast.available()
    _fast.kernel()
    rng = np.random.default_rng(3)
    n_r = _fast._TILE + 100
    y = rng.standard_normal((8, n_r)).astype(np.float32)
    y[1] = -np.abs(y[1]) - 1  # every value negative
    y[2] = -np.abs(y[2])
    y[2, [40, 600]] = [-0.0, 0.0]  # the maximum is zero; -0.0 comes first
    y[3] = -np.inf
    y[4, [3, 550]] = y[4].max() + 1  # a tie across tiles
    top = np.zeros(8)
    rank = np.zeros(8, dtype=np.int64)
    tmax = np.empty((8, -(-n_r // _fast._TILE)), dtype=np.int32)
    _fast._block_tops(y, y.view(np.int32), 0, tmax, top, rank)
    assert rank.tolist() == y.argmax(axis=1).tolist()
    assert rank[2] == 40 and rank[4] == 3
    assert np.array_equal(top, y.max(axis=1).astype(np.float64))
