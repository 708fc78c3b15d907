"""Job-level slowdown: did the whole job get slower, since when, and where did the time go.

All ranks together: the step period (start to next start) in a late window against a baseline
window, split into compute (everyone's own work), barrier tax (waiting for the last arrival),
communication (after the last arrival) and gaps between steps (the input pipeline).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from forensic.tools.detectors._labels import Labels as _Labels
from forensic.tools.detectors._labels import finite as _finite
from forensic.tools.detectors._scan import Scan, ScanConfig, scan, step_times
from forensic.tools.detectors._stats import mann_whitney_z, normal_isf, series_cusum, trimmed_mean
from forensic.tools.detectors.models import UniformSlowdown

__all__ = ["uniform_slowdown"]

_SHARED_FRACTION = 0.9


#: A start-to-start interval this many times the typical one is a restart, not a slow step.
_RESTART_FACTOR = 5.0
#: A step this many times the typical one is a stall: the job stopped for it, it did not slow down.
_STALL_FACTOR = 3.0
#: Stalls must cost at least this share of the period before them (plain means) to be a
#: regression: a rare long step (a checkpoint) is the job's own work, not a slowdown.
_STALL_MIN_RISE = 0.10
#: Fewest stalls after the split: below this, a rate has no meaning.
_STALL_MIN_COUNT = 3
#: What the search over split points costs, in independent tests: neighbouring splits share
#: almost all their steps, so a scan over one change point is worth about a dozen tests, not one
#: per step (the bar is Bonferroni over this many).
_STALL_SPLITS = 12
#: More intervals than this that look like restarts, with the step number advancing as usual, are
#: stalls: a job is not relaunched every minute or two without its step counter noticing.
_MAX_RESTARTS = 3


class _Stalled(NamedTuple):
    ratio: float
    z: float
    split: int
    onset: int


def _stalls(series: np.ndarray, n_w: int, alpha: float) -> _Stalled | None:
    """Stalls that began at some point and carry a regression the typical step does not show.

    The trimmed means and the rank test look at the typical step, so a job that stops for 30 s every
    minute or two and runs at full speed between the stops looks unchanged to them, while it loses
    a third of its throughput. What it loses is the plain mean, so that is what is compared: before
    and after each split point between the two baseline-sized ends (Welch's t, which counts how
    long the stops are as well as how often they come), the best split against a bar raised for
    the search (``_STALL_SPLITS`` tests' worth, at the same one-sided ``alpha``). The steps after
    it must hold stalls (steps at least ``_STALL_FACTOR`` times the typical one) at a higher rate
    than before it: a stall rate the job had from the start (a checkpoint every N steps) is its own.
    """
    v = np.asarray(series, dtype=np.float64)
    ok = np.isfinite(v)
    n = v.size
    if ok.sum() < 2 * n_w or n < 2 * n_w or n_w < 4:
        return None
    typical = float(np.median(v[ok]))
    if not typical > 0:
        return None
    x = np.where(ok, v, 0.0)
    long = ok & (v >= _STALL_FACTOR * typical)
    c_n, c_s, c_q, c_l = (np.cumsum(a) for a in (ok.astype(float), x, x * x, long.astype(float)))
    k = np.arange(n_w, n - n_w + 1)
    nb, sb, qb, lb = c_n[k - 1], c_s[k - 1], c_q[k - 1], c_l[k - 1]
    nl, sl, ql, ll = c_n[-1] - nb, c_s[-1] - sb, c_q[-1] - qb, c_l[-1] - lb
    with np.errstate(invalid="ignore", divide="ignore"):
        mb, ml = sb / nb, sl / nl
        vb = np.maximum(qb / nb - mb * mb, 0.0) * nb / np.maximum(nb - 1, 1)
        vl = np.maximum(ql / nl - ml * ml, 0.0) * nl / np.maximum(nl - 1, 1)
        t = (ml - mb) / np.sqrt(vb / nb + vl / nl)
    rising = (
        (ll >= _STALL_MIN_COUNT) & (ll / np.maximum(nl, 1) > lb / np.maximum(nb, 1)) & (nb >= 8) & (nl >= 8)
    )
    t = np.where(rising & np.isfinite(t), t, -np.inf)
    i = int(np.argmax(t))
    if not t[i] >= normal_isf(alpha / _STALL_SPLITS):
        return None
    split = int(k[i])
    b_mean, l_mean = float(mb[i]), float(ml[i])
    if not (b_mean > 0 and l_mean - b_mean >= _STALL_MIN_RISE * b_mean):
        return None
    # Onset: the first stall at or after the split (the first of all when none came before it).
    before = bool(long[:split].any())
    after = np.flatnonzero(long[split:] if before else long)
    onset = (split if before else 0) + int(after[0]) if after.size else split
    return _Stalled(ratio=l_mean / b_mean, z=float(t[i]), split=split, onset=onset)


def _min_window(alpha: float) -> int:
    """The fewest steps per window with which the rank test can reach ``alpha`` at all.

    With n steps in each window the Mann-Whitney z is at most n * sqrt(3 / (2n + 1)) (every late
    step slower than every baseline step): 2.88 for 6 against 6, below the 3.09 that alpha 0.001
    needs. A window of a fifth of a short log (up to 32 logged steps) could never show a
    regression, however clean the jump. The floor is the smallest n that clears the bar even with
    one pair out of order (a tie or one noisy step), so a clean jump is not lost to one outlier.
    """
    bar = normal_isf(alpha)
    for n in range(2, 64):
        var = n * n * (2 * n + 1) / 12.0
        if (n * n / 2.0 - 1.0) / math.sqrt(var) >= bar:
            return n
    return 64


def _window_delta(v: np.ndarray, base: slice, late: slice, trim: float = 0.2) -> float:
    return trimmed_mean(v, late, trim) - trimmed_mean(v, base, trim)


def _per_step_period(
    start: np.ndarray, steps: np.ndarray | None, step_time: np.ndarray | None = None
) -> tuple[np.ndarray, int | None]:
    """Start-to-start time per step, and the index of the last restart (None without one).

    Jobs may log every Nth step: the interval between two logged steps then spans N steps, and
    must be divided by N before it is compared with a step's duration. A restart (an interval far
    longer than the rest, or a step number that does not advance) is excluded from the series and
    returned as a boundary: "since the restart" is the comparison that matters then. With the
    steps' own durations, the interval a logged step itself fills does not count toward a restart:
    a step that waited 10 s for its batch is a slow step, not a resubmit.
    """
    period = np.diff(np.asarray(start, dtype=np.float64))
    inc = np.ones_like(period)
    if steps is not None and len(steps) == len(start):
        inc = np.diff(np.asarray(steps, dtype=np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            period = np.where(inc > 0, period / np.where(inc > 0, inc, 1.0), np.nan)
    finite = period[np.isfinite(period) & (period > 0)]
    if not finite.size:
        return period, None
    typical = float(np.median(finite))
    idle = period
    if step_time is not None and len(step_time) == len(start):
        own = np.nan_to_num(np.asarray(step_time, dtype=np.float64)[:-1], nan=0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            idle = period - np.maximum(own - typical, 0.0) / np.where(inc > 0, inc, 1.0)
    long = np.isfinite(period) & (idle > _RESTART_FACTOR * typical)
    if int(long.sum()) > _MAX_RESTARTS:
        long[:] = False  # recurring waits with the step counter running on: stalls, kept in the series
    restart = ~np.isfinite(period) | long
    period = np.where(restart, np.nan, period)
    idx = np.flatnonzero(restart)
    return period, (int(idx[-1]) if idx.size else None)


def _slowdown(
    step_time: np.ndarray,
    start: np.ndarray | None,
    sc: Scan | None,
    lab: _Labels,
    baseline_fraction: float,
    min_ratio: float,
    alpha: float,
) -> UniformSlowdown:
    if sc is None:
        return _slowdown_core(step_time, start, None, None, None, lab, baseline_fraction, min_ratio, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        own = sc.late_mean_y / sc.base_mean_y - 1.0
    return _slowdown_core(step_time, start, sc.center, sc.top, own, lab, baseline_fraction, min_ratio, alpha)


def _slowdown_core(
    step_time: np.ndarray,
    start: np.ndarray | None,
    center: np.ndarray | None,
    top: np.ndarray | None,
    own_rise: np.ndarray | None,
    lab: _Labels,
    baseline_fraction: float,
    min_ratio: float,
    alpha: float,
) -> UniformSlowdown:
    """Job-level regression from per-step series; ``own_rise``: each rank's own compute, late / base - 1."""
    s_n = step_time.size
    n_w = int(min(max(_min_window(alpha), round(baseline_fraction * s_n)), max(1, s_n // 2)))
    period = restart = None
    if start is not None and s_n >= 2:
        period, restart = _per_step_period(start, lab.steps, step_time)
    series = period if period is not None and period.size >= 2 else step_time
    base, late = slice(0, n_w), slice(series.size - n_w, series.size)
    st_base, st_late = slice(0, n_w), slice(s_n - n_w, s_n)
    if restart is not None and restart >= 4 and series.size - restart - 1 >= 4:
        # A resubmit splits the job in two runs: compare the run after it with the run before.
        base, late = slice(0, restart), slice(restart + 1, series.size)
        st_base, st_late = slice(0, restart + 1), slice(restart + 1, s_n)
    b_mean, l_mean = trimmed_mean(series, base), trimmed_mean(series, late)
    st_b = trimmed_mean(step_time, st_base)
    st_ratio = trimmed_mean(step_time, st_late) / st_b if st_b else math.nan
    ratio = l_mean / b_mean if b_mean and math.isfinite(b_mean) and b_mean > 0 else math.nan
    z = mann_whitney_z(series[base], series[late])
    regressed = bool(
        s_n >= 8 and math.isfinite(ratio) and ratio - 1.0 >= min_ratio and z >= normal_isf(alpha)
    )
    stalled = None
    if not regressed and s_n >= 8 and restart is None:
        stalled = _stalls(series, n_w, alpha)
    if stalled is not None:
        # The typical step held but stalls took the time: the job is slower by what they cost, and
        # the time went where the stalls are (plain means over the runs before and after them).
        regressed, ratio, z = True, stalled.ratio, stalled.z
        base, late = slice(0, stalled.split), slice(stalled.split, series.size)
        st_base, st_late = slice(0, stalled.split), slice(stalled.split, s_n)
        b_mean, l_mean = float(np.nanmean(series[base])), float(np.nanmean(series[late]))
        st_b = float(np.nanmean(step_time[st_base]))
        st_ratio = float(np.nanmean(step_time[st_late])) / st_b if st_b else math.nan
    trim = 0.0 if stalled is not None else 0.2
    onset = (
        (restart + 1 if restart is not None and base.stop == restart else series_cusum(series, n_w, alpha)[1])
        if regressed
        else None
    )
    if stalled is not None:
        onset = stalled.onset

    deltas: dict[str, float] = {}
    if period is not None:
        gap = period - step_time[:-1]
        deltas["gaps"] = _window_delta(gap, base, late, trim)
    shared = frac = None
    if center is not None and top is not None:
        comps = {
            "compute": center,
            "barrier_tax": top - center,
            "communication": step_time - top,
        }
        for name, v in comps.items():
            deltas[name] = _window_delta(v, st_base, st_late, trim)
        c_base = trimmed_mean(center, st_base)
        rise = deltas["compute"] / c_base if c_base else 0.0
        if own_rise is not None and math.isfinite(rise) and rise >= 0.5 * min_ratio:
            own = own_rise[np.isfinite(own_rise)]
            frac = float((own >= 0.5 * rise).mean()) if own.size else 0.0
            shared = frac >= _SHARED_FRACTION
    else:
        deltas["step_time"] = _window_delta(step_time, st_base, st_late, trim)
    deltas = {k: _finite(v) for k, v in deltas.items()}
    outside = step_time - center if center is not None else step_time
    out_rise, med_share = _outside_rise(outside, st_base, st_late)

    where = "none"
    if regressed:
        pos = {k: max(v, 0.0) for k, v in deltas.items()}
        total = sum(pos.values())
        best = max(pos, key=lambda k: pos[k]) if pos else None
        if not total or best is None:
            where = "unknown"
        elif best == "step_time":
            where = "unknown"  # the steps got longer, and without compute_s we cannot say why
        else:
            where = best if pos[best] >= 0.5 * total else "mixed"
    return UniformSlowdown(
        regressed=regressed,
        ratio=_finite(ratio, 1.0),
        step_time_ratio=_finite(st_ratio, 1.0),
        baseline_period_s=_finite(b_mean),
        late_period_s=_finite(l_mean),
        z=_finite(z),
        onset_index=onset,
        onset_step=lab.step(onset),
        where=where,
        deltas_s=deltas,
        shared_by_all=shared,
        frac_ranks_slower=frac,
        min_ratio=min_ratio,
        n_baseline=n_w,
        restarted=restart is not None,
        onset_at_restart=bool(regressed and restart is not None and base.stop == restart),
        outside_rise_s=out_rise,
        outside_median_share=med_share,
    )


def _outside_rise(outside: np.ndarray, base: slice, late: slice) -> tuple[float | None, float | None]:
    """Mean rise of the time outside compute, and the share of it the median step shows.

    Plain means and medians, not trimmed: the question is whether the rise sits in every step
    (a slower path for every collective: the median moves with the mean) or in a minority of long
    ones (waits for input when the prefetch queue runs dry: the mean moves, the median barely).
    """
    b, lt = outside[base], outside[late]
    b, lt = b[np.isfinite(b)], lt[np.isfinite(lt)]
    if b.size < 4 or lt.size < 4:
        return None, None
    rise = float(lt.mean() - b.mean())
    if not math.isfinite(rise) or rise <= 0:
        return _finite(rise), None
    return rise, _finite(float(np.median(lt) - np.median(b)) / rise)


def uniform_slowdown(
    duration: np.ndarray,
    start: np.ndarray | None,
    compute: np.ndarray | None = None,
    *,
    steps: np.ndarray | None = None,
    baseline_fraction: float = 0.2,
    min_ratio: float = 0.03,
    alpha: float = 0.001,
) -> UniformSlowdown:
    """Job-level regression: late window vs baseline window, all ranks together.

    The step period (start to next start, which includes the gap between steps; the step time
    when ``start`` is None) is compared between the first and last ``baseline_fraction`` of steps
    (median ratio, and its z from the medians' robust standard errors); the onset comes from a
    CUSUM on the job's own series. With ``compute``, the rise is split into compute (everyone's
    own work; ``shared_by_all`` when >= 90% of ranks rose with it), barrier_tax (waiting for the
    last arrival), communication (step time after the last arrival) and gaps (between steps: the
    input pipeline). It is one test per job, hence the small default ``alpha``.
    """
    if compute is not None:
        sc = scan(compute, duration, ScanConfig(baseline_fraction=baseline_fraction, alpha=alpha))
        st = sc.step_time
        assert st is not None  # scan sets it whenever it is given durations
    else:
        sc, st = None, step_times(np.asarray(duration))
    return _slowdown(st, start, sc, _Labels(steps=steps), baseline_fraction, min_ratio, alpha)
