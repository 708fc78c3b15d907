"""Small statistical helpers shared by the detectors (no scipy: stdlib math and numpy only)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
# Normal consistency factors: MAD and IQR of a normal sample, scaled to its standard deviation.
MAD_TO_SIGMA = 1.4826
IQR_TO_SIGMA = 1.0 / 1.3490


def normal_sf(z: float) -> float:
    """One-sided upper tail P(Z > z) of the standard normal, accurate far into the tail."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_isf(p: float) -> float:
    """The z with P(Z > z) = p; computed from the lower tail so tiny p keep their precision."""
    p = min(max(p, 1e-300), 1.0 - 1e-16)
    return -_NORMAL.inv_cdf(p)


# Wichura's AS241 (1988), the rational approximations behind ``NormalDist.inv_cdf``, highest power
# first (for np.polyval): the central region |q| <= 0.425, then the tail for r <= 5 and beyond.
_AS241 = (
    (
        (
            2.5090809287301226727e3,
            3.3430575583588128105e4,
            6.7265770927008700853e4,
            4.5921953931549871457e4,
            1.3731693765509461125e4,
            1.9715909503065514427e3,
            1.3314166789178437745e2,
            3.3871328727963666080e0,
        ),
        (
            5.2264952788528545610e3,
            2.8729085735721942674e4,
            3.9307895800092710610e4,
            2.1213794301586595867e4,
            5.3941960214247511077e3,
            6.8718700749205790830e2,
            4.2313330701600911252e1,
            1.0,
        ),
    ),
    (
        (
            7.7454501427834140764e-4,
            2.2723844989269184583e-2,
            2.4178072517745061177e-1,
            1.2704582524523683826e0,
            3.6478483247632045605e0,
            5.7694972214606914055e0,
            4.6303378461565452959e0,
            1.4234371107496835773e0,
        ),
        (
            1.0507500716444168432e-9,
            5.4759380849953449460e-4,
            1.5198666563616457197e-2,
            1.4810397642748007459e-1,
            6.8976733498510000455e-1,
            1.6763848301838038494e0,
            2.0531916266377588219e0,
            1.0,
        ),
    ),
    (
        (
            2.0103343992922881327e-7,
            2.7115555687434875782e-5,
            1.2426609473880784386e-3,
            2.6532189526576123093e-2,
            2.9656057182850489123e-1,
            1.7848265399172913358e0,
            5.4637849111641143699e0,
            6.6579046435011037772e0,
        ),
        (
            2.0442631033899397856e-15,
            1.4215117583164458887e-7,
            1.8463183175100546818e-5,
            7.8686913114561325910e-4,
            1.4875361290850614853e-2,
            1.3692988092273580531e-1,
            5.9983220655588793769e-1,
            1.0,
        ),
    ),
)


def normal_ppf(p: np.ndarray) -> np.ndarray:
    """``NormalDist().inv_cdf`` over an array of probabilities strictly inside (0, 1), vectorized
    (the same algorithm, AS241: equal to it within a few units in the last place)."""
    p = np.asarray(p, dtype=np.float64)
    q = p - 0.5
    out = np.empty_like(p)
    mid = np.abs(q) <= 0.425
    r = 0.180625 - q[mid] ** 2
    (num, den), near, far = _AS241
    out[mid] = q[mid] * np.polyval(num, r) / np.polyval(den, r)
    tail = ~mid
    r = np.sqrt(-np.log(np.where(q[tail] <= 0.0, p[tail], 1.0 - p[tail])))
    x = np.where(
        r <= 5.0,
        np.polyval(near[0], r - 1.6) / np.polyval(near[1], r - 1.6),
        np.polyval(far[0], r - 5.0) / np.polyval(far[1], r - 5.0),
    )
    out[tail] = np.where(q[tail] < 0.0, -x, x)
    return out


def stable_top(v: np.ndarray, k: int) -> np.ndarray:
    """``np.argsort(-v, kind="stable")[:k]`` (the k largest, ties and NaN in argsort's order)
    without sorting all of ``v``: a partition finds the k-th largest, then only the values at or
    above it are sorted."""
    v = np.asarray(v)
    k = max(0, min(int(k), v.size))
    if k == 0 or k * 8 >= v.size:
        return np.argsort(-v, kind="stable")[:k]
    neg = -v
    kth = np.partition(neg, k - 1)[k - 1]
    if kth != kth:  # fewer than k values that are not NaN: NaN order needs the full sort
        return np.argsort(neg, kind="stable")[:k]
    cand = np.flatnonzero(neg <= kth)  # in index order, so a stable sort of them keeps argsort's ties
    return cand[np.argsort(neg[cand], kind="stable")[:k]]


def bonferroni_z(alpha: float, n_tests: int) -> float:
    """One-sided normal cut that keeps the family-wise error at ``alpha`` over ``n_tests`` tests.

    At 16,384 ranks and alpha=0.01 this is about 4.9: the 3.5 cut used for a handful of series
    would flag ~4 healthy ranks per look at that scale.
    """
    return normal_isf(alpha / max(1, n_tests))


def benjamini_hochberg(p: np.ndarray, q: float) -> np.ndarray:
    """Boolean mask of the hypotheses rejected by Benjamini-Hochberg at false-discovery rate q."""
    p = np.asarray(p, dtype=np.float64)
    n = p.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    passed = p[order] <= q * np.arange(1, n + 1) / n
    out = np.zeros(n, dtype=bool)
    if passed.any():
        last = int(np.nonzero(passed)[0][-1])
        out[order[: last + 1]] = True
    return out


def binomial_sf_table(n: int, p: float) -> np.ndarray:
    """P(K >= k) for k = 0..n under Binomial(n, p), computed in log space (vectorized lgamma)."""
    n = int(max(n, 0))
    p = float(min(max(p, 1e-300), 1.0 - 1e-12))
    k = np.arange(n + 1, dtype=np.float64)
    logfact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))
    logpmf = logfact[n] - logfact - logfact[::-1] + k * math.log(p) + (n - k) * math.log1p(-p)
    pmf = np.exp(logpmf - logpmf.max()) * math.exp(logpmf.max())
    sf = np.cumsum(pmf[::-1])[::-1]
    return np.minimum(sf, 1.0)


def binomial_critical_count(n: int, p: float, alpha: float) -> int:
    """Smallest count k with P(K >= k) <= alpha under Binomial(n, p); n + 1 when none is."""
    sf = binomial_sf_table(n, p)
    hits = np.nonzero(sf <= alpha)[0]
    return int(hits[0]) if hits.size else int(n) + 1


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(K >= k) under Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return float(binomial_sf_table(n, p)[k])


def cusum_threshold(arl0: float, k: float) -> float:
    """Decision interval h of a one-sided CUSUM with reference k on unit-variance normal increments.

    Siegmund's approximation of the in-control average run length,
    ARL0 ~ (exp(2k(h+1.166)) - 2k(h+1.166) - 1) / (2k^2), solved for h by bisection. The caller
    picks ARL0 = steps * ranks / alpha so that, over the whole fleet and the whole run, a false
    alarm has probability about alpha.
    """

    def arl(h: float) -> float:
        b = 2.0 * k * (h + 1.166)
        if b > 700:
            return math.inf
        return (math.exp(b) - b - 1.0) / (2.0 * k * k)

    lo, hi = 0.0, 1.0
    while arl(hi) < arl0:
        hi *= 2.0
        if hi > 1e6:
            break
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if arl(mid) < arl0:
            lo = mid
        else:
            hi = mid
    return hi


def robust_center_scale(v: np.ndarray) -> tuple[float, float]:
    """Median and MAD-based sigma of the finite values of ``v`` (nan, nan when there are none)."""
    v = np.asarray(v, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    c = float(np.median(v))
    return c, float(np.median(np.abs(v - c))) * MAD_TO_SIGMA


def trimmed_mean(v: np.ndarray, sl: slice, trim: float = 0.2) -> float:
    """Mean of the middle 60%: as robust as a median to restarts and spikes, but stable when step
    times are bimodal (steps with and without a hiccup somewhere in the fleet), where the median
    jumps between the modes."""
    w = np.sort(v[sl][np.isfinite(v[sl])])
    k = int(trim * w.size)
    w = w[k : w.size - k]
    return float(w.mean()) if w.size else math.nan


def mann_whitney_z(base: np.ndarray, late: np.ndarray) -> float:
    """z of the Mann-Whitney U statistic (late > base), normal approximation, ties averaged.

    Distribution-free under "the windows are exchangeable", whatever the shape of step times.
    """
    a, b = base[np.isfinite(base)], late[np.isfinite(late)]
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        return 0.0
    allv = np.concatenate([a, b])
    _, inv, cnt = np.unique(allv, return_inverse=True, return_counts=True)
    # average rank of each distinct value (ties share it)
    upper = np.cumsum(cnt)
    avg = upper - (cnt - 1) / 2.0
    ranks = avg[inv]
    u = ranks[n1:].sum() - n2 * (n2 + 1) / 2.0
    tie = float((cnt**3 - cnt).sum()) / ((n1 + n2) * (n1 + n2 - 1)) if n1 + n2 > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n1 + n2 + 1) - tie)
    return float((u - n1 * n2 / 2.0) / math.sqrt(var)) if var > 0 else 0.0


def series_cusum(v: np.ndarray, n_b: int, alpha: float, k: float = 0.5):
    """(alarm, onset) of a one-sided CUSUM on one job-level series against its first n_b values.

    Job-level series are rarely normal: a fleet's step time is bimodal (steps with and without
    a hiccup somewhere in the fleet). The CUSUM therefore runs on normal scores against the
    baseline's empirical distribution, u = Phi^-1(F_base(v)), which are close to N(0, 1) under
    "nothing changed" whatever the shape; k grows by the baseline CDF's own sampling error.
    """
    v = np.asarray(v, dtype=np.float64)
    ok = np.isfinite(v)
    base = np.sort(v[:n_b][ok[:n_b]])
    m = base.size
    if m < 4 or v.size <= n_b:
        return None, None
    # F_base(v) with ties split, kept off 0 and 1 so the scores stay finite
    lo = np.searchsorted(base, v[n_b:], side="left")
    hi = np.searchsorted(base, v[n_b:], side="right")
    levels = (np.arange(2 * m + 1) / 2.0 + 0.5) / (m + 1)
    scores = normal_ppf(levels)  # levels lie well inside (0, 1): no clamping
    u = scores[lo + hi]
    u = np.where(ok[n_b:], u, 0.0) - (k + normal_isf(alpha) / math.sqrt(m))
    h = cusum_threshold((v.size - n_b) / alpha, k)
    s = np.cumsum(u)
    runmin = np.minimum(np.minimum.accumulate(s), 0.0)
    c = s - runmin
    over = np.flatnonzero(c > h)
    if over.size == 0:
        return None, None
    alarm = int(over[0])
    zeros = np.flatnonzero(s[: alarm + 1] == runmin[: alarm + 1])
    onset = int(zeros[-1]) + 1 if zeros.size else 0
    return n_b + alarm, n_b + onset
