"""Straggler, slowdown and divergence detectors over step-major (S, R) arrays.

A synchronous data-parallel step ends at a collective barrier, so every rank's ``duration_s`` is
nearly the step time (the maximum over ranks) and the fleet mean hides one slow rank. The culprit
shows in what each rank does before the barrier: its own ``compute_s``. The per-rank detectors
work on "lateness": a rank's compute at a step relative to the step's median over ranks, so the
job's own step-to-step variation cancels.

* :func:`barrier_tax` and :func:`tax_attribution`: how much the barrier costs and who it waits for.
* :func:`peer_outliers`: ranks slow against the fleet (robust z, Bonferroni or BH across ranks).
* :func:`change_points`: ranks slow against their own past (one-sided CUSUM per rank).
* :func:`spikes`: ranks intermittently slow (exceedance counts vs the binomial null).
* :func:`uniform_slowdown` (``slowdown.py``, re-exported): the whole job slower, and whether in
  compute, the barrier, the collective or the gaps between steps.
* :func:`replica_divergence` (``divergence.py``, re-exported): replicas whose parameter checksum
  (or loss) disagrees.
* :func:`analyze`: all of them over a :class:`~tools.detectors.steps.StepTable`.

Every per-rank detector controls its false alarms across ranks (alpha over the fleet, not per
rank) and requires a minimum effect, so clean fleets of 8 to 16,384 ranks raise no flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from forensic.tools.detectors._labels import Labels as _Labels
from forensic.tools.detectors._labels import finite as _finite
from forensic.tools.detectors._scan import (
    Scan,
    ScanConfig,
    columns,
    exact_cusum,
    normalize,
    scan,
    screen_margin,
    step_times,
)
from forensic.tools.detectors._stats import (
    benjamini_hochberg,
    binomial_critical_count,
    binomial_sf,
    bonferroni_z,
    normal_sf,
    robust_center_scale,
    series_cusum,
    stable_top,
)
from forensic.tools.detectors.divergence import _divergence, replica_divergence
from forensic.tools.detectors.models import (
    BarrierTax,
    ChangeFlag,
    ChangePoints,
    HostShare,
    Method,
    PeerFlag,
    PeerOutliers,
    RankShare,
    SpikeFlag,
    Spikes,
    StepAnalysis,
    Straggler,
    TaxAttribution,
)
from forensic.tools.detectors.slowdown import _slowdown, uniform_slowdown
from forensic.tools.detectors.steps import StepTable

__all__ = [
    "analyze",
    "barrier_tax",
    "change_points",
    "peer_outliers",
    "replica_divergence",
    "spikes",
    "tax_attribution",
    "uniform_slowdown",
]

_TOP = 5
_MAX_FOLLOW_UP = 2048
_FOLLOW_UP_BATCH = 256
_MIN_COUNT = 3
_CONCENTRATED_RANKS = 8  # one host's worth of ranks: "a few" you can evict
_CONCENTRATED_HOSTS = 2


def _cfg(relative=True, alpha=0.01, min_effect=0.01, **kw) -> ScanConfig:
    return ScanConfig(relative=relative, alpha=alpha, min_effect=min_effect, **kw)


# --------------------------------------------------------------------------------------------
# peer outliers


@dataclass
class _PeerStats:
    z: np.ndarray
    effect: np.ndarray
    center: float
    scale: float


def _peer_stats(wmean: np.ndarray, n_valid: np.ndarray, sigma_median: float) -> _PeerStats:
    """Robust z of each rank's winsorized mean against the fleet's median and MAD."""
    w = wmean
    center, mad_sigma = robust_center_scale(w)
    if not math.isfinite(center):
        return _PeerStats(np.full(w.size, -np.inf), np.zeros(w.size), math.nan, math.nan)
    # The spread of per-rank means cannot be below what per-step noise alone gives a mean of n
    # steps: this floor keeps small fleets (a MAD of 8 values is itself noisy) honest.
    n_eff = float(np.median(n_valid[n_valid > 0])) if (n_valid > 0).any() else 1.0
    scale = max(_finite(mad_sigma), _finite(sigma_median) / math.sqrt(max(n_eff, 1.0)), 1e-12)
    effect = w - center
    z = np.where(np.isfinite(w), effect / scale, -np.inf)
    return _PeerStats(z=z, effect=np.where(np.isfinite(effect), effect, 0.0), center=center, scale=scale)


def _sigma_median(sigma: np.ndarray) -> float:
    return float(np.nanmedian(sigma)) if np.isfinite(sigma).any() else 0.0


def _peer_flags(ps: _PeerStats, alpha: float, method: str, min_effect: float, n_tested: int):
    if method == "bh":
        zz = ps.z
        p = np.ones_like(zz)
        cand = np.flatnonzero(zz > 2.0)  # p above ~0.02 can never be rejected at useful q
        p[cand] = [normal_sf(float(v)) for v in zz[cand]]
        rejected = benjamini_hochberg(p, alpha)
        thr = float(zz[rejected].min()) if rejected.any() else bonferroni_z(alpha, 1)
    else:
        thr = bonferroni_z(alpha, n_tested)
        rejected = ps.z > thr
    return rejected & (ps.effect >= min_effect), thr


def _peer_follow_up(y: np.ndarray, sc: Scan, idx: np.ndarray, effect: np.ndarray):
    """Exact p50/p99 and onset for a few ranks, from their own columns."""
    if idx.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64)
    x = normalize(columns(y, idx), sc, clip=False) - sc.cfg.typical
    with np.errstate(all="ignore"):
        q = np.nanquantile(x, [0.5, 0.99], axis=1) if x.shape[1] else np.zeros((2, idx.size))
    # Onset: the start t maximizing sum_{i>=t} (x_i - effect/2), the least-squares change point
    # of a shift of size `effect` against a zero baseline.
    tau = sc.cfg.typical
    d = np.nan_to_num(np.clip(x, sc.lo[None, :] - tau, sc.hi[None, :] - tau) - 0.5 * effect[:, None])
    suffix = np.cumsum(d[:, ::-1], axis=1)[:, ::-1]
    onset = suffix.argmax(axis=1) if x.shape[1] else np.zeros(idx.size, dtype=np.int64)
    return q[0], q[1], onset


def _peers(
    sc: Scan, y: np.ndarray, lab: _Labels, method: Method = "bonferroni"
) -> tuple[PeerOutliers, _PeerStats, np.ndarray]:
    cfg = sc.cfg
    ps = _peer_stats(sc.wmean, sc.n_valid, _sigma_median(sc.sigma))
    n_tested = int((sc.n_valid > 0).sum())
    flag, thr = _peer_flags(ps, cfg.alpha, method, cfg.min_effect, n_tested)
    flagged = np.flatnonzero(flag)
    flagged = flagged[np.argsort(-ps.z[flagged], kind="stable")][:_MAX_FOLLOW_UP]
    top = stable_top(ps.z, _TOP)
    idx = np.unique(np.concatenate([flagged, top]))
    p50, p99, onset = _peer_follow_up(y, sc, idx, ps.effect[idx])
    at = {int(j): i for i, j in enumerate(idx)}

    def entry(j: int) -> PeerFlag:
        i = at[j]
        return PeerFlag(
            rank=lab.rank(j),
            host=lab.host(j),
            z=_finite(min(ps.z[j], 1e9), -1e9),
            p_value=normal_sf(_finite(ps.z[j], -1e9)),
            effect=_finite(ps.effect[j]),
            p50=_finite(p50[i]),
            p99=_finite(p99[i]),
            flagged=bool(flag[j]),
            first_index=int(onset[i]),
            first_step=lab.step(int(onset[i])),
        )

    model = PeerOutliers(
        units="relative" if cfg.relative else "additive",
        n_ranks=n_tested,
        n_steps=sc.n_steps,
        center=_finite(ps.center),
        scale=_finite(ps.scale),
        method=method,
        alpha=cfg.alpha,
        threshold_z=_finite(thr, 1e9),
        min_effect=cfg.min_effect,
        flagged=[entry(int(j)) for j in flagged],
        top=[entry(int(j)) for j in top if np.isfinite(ps.z[j])],
    )
    return model, ps, flag


def peer_outliers(
    x: np.ndarray,
    *,
    relative: bool = True,
    alpha: float = 0.01,
    method: Method = "bonferroni",
    min_effect: float = 0.01,
    steps: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
) -> PeerOutliers:
    """Ranks whose typical value stands out from the fleet's.

    ``x`` is (S, R), higher is worse (``compute_s``, or a compute share). Each step is normalized by
    its median over ranks (``relative``: divided, so 0.03 means 3% slower than the typical rank;
    else subtracted). The per-rank statistic is the winsorized mean of the normalized value over
    steps; its robust z against the fleet (median, MAD) must pass a cut that accounts for the
    number of ranks tested (``method``: "bonferroni", one-sided alpha / R, ~4.9 at 16,384 ranks, or
    "bh", Benjamini-Hochberg at false-discovery rate alpha), and its effect must reach
    ``min_effect``. Exact p50/p99 are reported for flagged and top ranks.
    """
    if method not in ("bonferroni", "bh"):
        raise ValueError("method must be 'bonferroni' or 'bh'")
    sc = scan(x, None, _cfg(relative, alpha, min_effect))
    return _peers(sc, x, _Labels(steps, ranks, rank_host), method)[0]


# --------------------------------------------------------------------------------------------
# change points


def _changes(sc: Scan, y: np.ndarray, lab: _Labels) -> tuple[ChangePoints, dict[int, dict]]:
    cfg = sc.cfg
    base = dict(
        n_baseline=sc.n_baseline,
        k=cfg.cusum_k,
        k_eff=sc.k_eff,
        h=sc.h,
        alpha=cfg.alpha,
        min_effect=cfg.min_effect,
    )
    if not sc.cusum_enabled:
        note = (
            f"baseline window of {sc.n_baseline} steps is shorter than {cfg.min_baseline_steps}"
            if sc.n_baseline < cfg.min_baseline_steps
            else "no steps after the baseline window"
        )
        return ChangePoints(enabled=False, note=note, **base), {}
    cand = np.flatnonzero(sc.cusum_screen > sc.h - screen_margin(sc.k_eff))
    if cand.size > _MAX_FOLLOW_UP:
        cand = cand[np.argsort(-sc.cusum_screen[cand], kind="stable")[:_MAX_FOLLOW_UP]]
    hits: dict[int, dict] = {}
    for b0 in range(0, cand.size, _FOLLOW_UP_BATCH):
        idx = cand[b0 : b0 + _FOLLOW_UP_BATCH]
        r = exact_cusum(columns(y, idx), sc, idx)
        run = np.maximum(r["alarm"] - r["onset"] + 1, 1)
        # mean shift of the (winsorized) series over the run that raised the alarm
        shift = sc.base_sigma[idx] * (sc.k_eff + r["c_alarm"] / run)
        for i, j in enumerate(idx):
            if r["alarm"][i] >= 0 and shift[i] >= cfg.min_effect:
                hits[int(j)] = {
                    "stat": float(r["stat"][i]),
                    "alarm": int(r["alarm"][i]),
                    "onset": int(r["onset"][i]),
                    "shift": float(shift[i]),
                }
    flagged = [
        ChangeFlag(
            rank=lab.rank(j),
            host=lab.host(j),
            statistic=v["stat"],
            onset_index=v["onset"],
            onset_step=lab.step(v["onset"]),
            alarm_index=v["alarm"],
            alarm_step=lab.step(v["alarm"]),
            shift=v["shift"],
            baseline=float(sc.base_mu[j] - cfg.typical),
        )
        for j, v in sorted(hits.items(), key=lambda kv: (kv[1]["onset"], kv[0]))
    ]
    return ChangePoints(enabled=True, flagged=flagged, **base), hits


def change_points(
    x: np.ndarray,
    *,
    relative: bool = True,
    baseline_fraction: float = 0.2,
    baseline_steps: int | None = None,
    k: float = 0.5,
    alpha: float = 0.01,
    min_effect: float = 0.01,
    steps: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
) -> ChangePoints:
    """Ranks that became slower than their own baseline, and the step where it started.

    Per rank, a one-sided CUSUM runs on the rank's own normalized series (winsorized like the
    other detectors), standardized by its baseline window (the first ``baseline_fraction`` of
    steps, or ``baseline_steps``): mean, and standard deviation floored at the fleet's per-step
    spread. The reference value is k plus the worst baseline-mean error expected over the fleet,
    and the threshold h comes from Siegmund's ARL approximation at ARL0 = steps * ranks / alpha,
    so a clean rank rarely crosses. The onset is where the CUSUM last left zero before the alarm.
    """
    cfg = _cfg(
        relative,
        alpha,
        min_effect,
        cusum_k=k,
        baseline_fraction=baseline_fraction,
        baseline_steps=baseline_steps,
    )
    sc = scan(x, None, cfg)
    return _changes(sc, x, _Labels(steps, ranks, rank_host))[0]


# --------------------------------------------------------------------------------------------
# spikes


@dataclass
class _SpikeDecision:
    p0: float
    source: str
    crit: int
    flag: np.ndarray


def _spike_decision(
    n: np.ndarray, k: np.ndarray, spike_z: float, alpha: float, min_rate: float = 0.02
) -> _SpikeDecision:
    """Which exceedance counts are too many for Binomial(n, p0), at alpha over the ranks.

    Also at least ``min_rate`` of the rank's steps: a binomial tail this far out is sensitive to
    the estimate of p0 (and to bad luck: some healthy rank among thousands catches a handful of
    the fleet's hiccups), and a rank that spikes on fewer than 2% of its steps costs the job little.
    """
    r_n = int((n > 0).sum())
    a = alpha / max(r_n, 1)
    n_max = int(n.max()) if n.size else 0
    p_norm = normal_sf(spike_z)
    pooled = float(k.sum()) / max(float(n.sum()), 1.0)
    crit1 = max(_MIN_COUNT, binomial_critical_count(n_max, max(p_norm, pooled), a))
    # The null rate comes from ranks that are not themselves significant: a few stragglers
    # spiking every step must not raise the bar for everyone else.
    keep = k < crit1
    pooled2 = float(k[keep].sum()) / max(float(n[keep].sum()), 1.0)
    p0 = max(p_norm, pooled2)
    crit = max(_MIN_COUNT, binomial_critical_count(n_max, p0, a))
    return _SpikeDecision(
        p0=p0,
        source="pooled" if pooled2 > p_norm else "normal",
        crit=int(crit),
        flag=(k >= crit) & (n > 0) & (k >= min_rate * n),
    )


def _spikes(sc: Scan, y: np.ndarray, lab: _Labels) -> tuple[Spikes, np.ndarray]:
    cfg = sc.cfg
    n, k = sc.n_valid, sc.exceed
    dec = _spike_decision(n, k, cfg.spike_z, cfg.alpha)
    p0, crit, flag = dec.p0, dec.crit, dec.flag
    idx = np.flatnonzero(flag)
    idx = idx[np.argsort(-k[idx], kind="stable")][:_MAX_FOLLOW_UP]
    flagged: list[SpikeFlag] = []
    if idx.size:
        yc = columns(y, idx)
        cut_y = sc.cut * sc.center if cfg.relative else sc.cut + sc.center
        with np.errstate(invalid="ignore"):
            over = yc > np.where(sc.valid, cut_y, np.inf)[None, :]
        first = over.argmax(axis=1)
        x = normalize(yc, sc, clip=False) - cfg.typical
        with np.errstate(invalid="ignore"):
            eff = np.where(over, x, 0.0).sum(axis=1) / np.maximum(over.sum(axis=1), 1)
        for i, j in enumerate(idx):
            flagged.append(
                SpikeFlag(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    count=int(k[j]),
                    n_steps=int(n[j]),
                    rate=float(k[j] / max(n[j], 1)),
                    expected=float(n[j] * p0),
                    p_value=binomial_sf(int(k[j]), int(n[j]), p0),
                    effect=_finite(eff[i]),
                    first_index=int(first[i]),
                    first_step=lab.step(int(first[i])),
                )
            )
    model = Spikes(
        cut_z=cfg.spike_z,
        min_effect=cfg.min_effect,
        p0=p0,
        p0_source=dec.source,
        critical_count=int(crit),
        alpha=cfg.alpha,
        flagged=flagged,
    )
    return model, flag


def spikes(
    x: np.ndarray,
    *,
    relative: bool = True,
    cut_z: float = 4.0,
    alpha: float = 0.01,
    min_effect: float = 0.01,
    steps: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
) -> Spikes:
    """Ranks that are intermittently slow: too many steps above a high per-step cut.

    The cut is the step's median plus max(cut_z robust sigmas, ``min_effect``); a rank's count of
    steps above it is tested against Binomial(n, p0), p0 being the larger of the normal tail and
    the fleet's pooled rate (heavy-tailed noise spread over everyone raises p0, not the flags),
    at alpha / R.
    """
    sc = scan(x, None, _cfg(relative, alpha, min_effect, spike_z=cut_z))
    return _spikes(sc, x, _Labels(steps, ranks, rank_host))[0]


# --------------------------------------------------------------------------------------------
# barrier tax


def _tax(sc: Scan, lab: _Labels) -> BarrierTax:
    st = sc.step_time if sc.step_time is not None else sc.top
    return _tax_core(sc.center, sc.top, st, sc.valid, sc.n_baseline, sc.cfg.alpha, lab)


def _tax_core(center, top, st, valid, n_b: int, alpha: float, lab: _Labels) -> BarrierTax:
    with np.errstate(invalid="ignore"):
        ok = valid & np.isfinite(top) & np.isfinite(st) & (st > 0)
    tax = np.where(ok, top - center, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(ok, tax / np.where(ok, st, 1.0), np.nan)
    total_st = float(np.where(ok, st, 0.0).sum())
    total_lost = float(tax.sum())
    fr = frac[np.isfinite(frac)]
    alarm, onset = series_cusum(frac, n_b, alpha)
    worst = int(np.argmax(np.where(ok, tax, -np.inf))) if ok.any() else 0
    base = frac[:n_b][np.isfinite(frac[:n_b])]
    late = frac[-n_b:][np.isfinite(frac[-n_b:])] if n_b else frac[:0]
    return BarrierTax(
        n_steps=int(ok.sum()),
        total_step_time_s=total_st,
        total_lost_s=total_lost,
        lost_fraction=total_lost / total_st if total_st > 0 else 0.0,
        median_tax_fraction=float(np.median(fr)) if fr.size else 0.0,
        p99_tax_fraction=float(np.quantile(fr, 0.99)) if fr.size else 0.0,
        worst_index=worst,
        worst_step=lab.step(worst),
        baseline_tax_fraction=float(np.median(base)) if base.size else 0.0,
        late_tax_fraction=float(np.median(late)) if late.size else 0.0,
        rising=alarm is not None,
        onset_index=onset,
        onset_step=lab.step(onset),
    )


def barrier_tax(
    duration: np.ndarray,
    compute: np.ndarray,
    *,
    steps: np.ndarray | None = None,
    baseline_fraction: float = 0.2,
) -> BarrierTax:
    """Per step, how much slower the step is than the typical rank: max compute - median compute.

    Also as a fraction of the step time (median ``duration`` over ranks), summed into the seconds
    the fleet lost waiting for its slowest rank, and whether (and since when) it is rising.
    """
    sc = scan(compute, duration, _cfg(baseline_fraction=baseline_fraction))
    return _tax(sc, _Labels(steps=steps))


def _host_codes(lab: _Labels, r_n: int) -> tuple[np.ndarray, list[str]] | None:
    if not lab.rank_host:
        return None
    get = lab.rank_host.get
    ids = lab.ranks.tolist() if lab.ranks is not None else range(r_n)
    names = [get(r) or get(str(r)) or "" for r in ids]
    # np.unique's sorted names and codes, from a dict (sorting 16,384 numpy strings took ~3 ms)
    index: dict[str, int] = {}
    first = [index.setdefault(n, len(index)) for n in names]
    uniq = sorted(index)
    order = np.empty(len(uniq), dtype=np.int64)
    order[[index[u] for u in uniq]] = np.arange(len(uniq))
    return order[np.asarray(first, dtype=np.int64)], uniq


def _attribution(sc: Scan, lab: _Labels) -> TaxAttribution:
    r_n = sc.n_ranks
    ok = sc.valid & (sc.top_rank >= 0) & np.isfinite(sc.top)
    who = sc.top_rank[ok]
    tax = np.maximum(sc.top[ok] - sc.center[ok], 0.0)
    counts = np.bincount(who, minlength=r_n)
    lost = np.bincount(who, weights=tax, minlength=r_n)
    st = sc.step_time if sc.step_time is not None else sc.top
    total_time = float(np.nansum(np.where(ok, st, np.nan)))
    return _attribution_core(
        counts,
        lost,
        int(ok.sum()),
        max(int((sc.n_valid > 0).sum()), 1),
        lab,
        sc.cfg.alpha,
        total_time,
        sc.cfg.min_effect,
    )


def _attribution_core(
    counts: np.ndarray,
    lost: np.ndarray,
    n: int,
    active: int,
    lab: _Labels,
    alpha: float,
    total_time: float,
    min_effect: float,
) -> TaxAttribution:
    """Concentrated or diffuse, from per-rank last-arrival counts and the tax charged to each.

    Concentrated needs a material group too: what it costs must reach ``min_effect`` of the
    total step time (in a fleet of 8, a rank 0.5% slower than the rest is last half the time).
    """
    r_n = counts.size
    total = float(lost.sum())
    if n == 0 or total <= 0 or r_n == 0:
        return TaxAttribution(pattern="none", top_k=0, top_k_share=0.0, null_share=0.0, critical_count=0)
    share = lost / total
    a = alpha
    # Under exchangeable ranks, each is last with probability 1/R at every step.
    crit = max(_MIN_COUNT, binomial_critical_count(n, 1.0 / active, a / active))
    sig_ranks = np.flatnonzero(counts >= crit)
    pattern, on, top_k = "diffuse", None, min(3, r_n)
    material = min_effect * total_time
    if 1 <= sig_ranks.size <= _CONCENTRATED_RANKS:
        s = float(share[sig_ranks].sum())
        if s >= 0.5 and s >= 2.0 * sig_ranks.size / active and float(lost[sig_ranks].sum()) >= material:
            pattern, on, top_k = "concentrated", "ranks", int(sig_ranks.size)
    order = stable_top(share, max(top_k, 10))
    top_k_share = float(share[order[:top_k]].sum())
    null_share = top_k / active

    top_hosts: list[HostShare] = []
    sig_hosts: list[str] = []
    hc = _host_codes(lab, r_n)
    if hc is not None:
        codes, names = hc
        n_h = len(names)
        h_ranks = np.bincount(codes, minlength=n_h)
        h_counts = np.bincount(codes, weights=counts, minlength=n_h).astype(np.int64)
        h_lost = np.bincount(codes, weights=lost, minlength=n_h)
        h_share = h_lost / total
        sizes, size_of = np.unique(h_ranks, return_inverse=True)  # a critical count per host size
        crit_by_size = np.array(
            [max(_MIN_COUNT, binomial_critical_count(n, int(sz) / r_n, a / n_h)) for sz in sizes]
        )
        h_sig = h_counts >= crit_by_size[size_of]
        sig_idx = np.flatnonzero(h_sig)
        sig_hosts = [names[i] for i in sig_idx if names[i]]
        if pattern != "concentrated" and 1 <= sig_idx.size <= _CONCENTRATED_HOSTS:
            s = float(h_share[sig_idx].sum())
            if (
                s >= 0.5
                and s >= 2.0 * h_ranks[sig_idx].sum() / r_n
                and float(h_lost[sig_idx].sum()) >= material
            ):
                pattern, on, top_k, top_k_share = "concentrated", "hosts", int(sig_idx.size), s
                null_share = float(h_ranks[sig_idx].sum() / r_n)
        for i in stable_top(h_share, _TOP):
            if h_counts[i] == 0:
                break
            top_hosts.append(
                HostShare(
                    host=names[i],
                    ranks=int(h_ranks[i]),
                    last_count=int(h_counts[i]),
                    share=float(h_share[i]),
                    lost_s=float(h_lost[i]),
                )
            )
    top_ranks = [
        RankShare(
            rank=lab.rank(j),
            host=lab.host(j),
            last_count=int(counts[j]),
            share=float(share[j]),
            lost_s=float(lost[j]),
        )
        for j in order[:10]
        if counts[j] > 0
    ]
    return TaxAttribution(
        pattern=pattern,
        concentrated_on=on,
        top_k=top_k,
        top_k_share=top_k_share,
        null_share=null_share,
        critical_count=int(crit),
        significant_ranks=[lab.rank(int(j)) for j in sig_ranks[:100]],
        significant_hosts=sig_hosts[:100],
        top_ranks=top_ranks,
        top_hosts=top_hosts,
    )


def tax_attribution(
    duration: np.ndarray,
    compute: np.ndarray,
    *,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
    alpha: float = 0.01,
    min_effect: float = 0.01,
) -> TaxAttribution:
    """Share of the barrier tax attributable to each rank (and host): who arrives last, how often.

    Each step's tax (max compute - median compute) is charged to its last arrival. A rank (host)
    is significant when it is last far more often than chance (Binomial(S, 1/R), alpha / R; hosts
    at their rank count). ``concentrated``: at most 8 significant ranks (or 2 hosts) hold at least
    half of the tax, twice their null share, and at least ``min_effect`` of the total step time:
    evict them. ``diffuse``: the tax is tail noise spread over everyone (evicting any one rank
    will not help).
    """
    sc = scan(compute, duration, _cfg(alpha=alpha, min_effect=min_effect))
    return _attribution(sc, _Labels(ranks=ranks, rank_host=rank_host))


# --------------------------------------------------------------------------------------------
# the suite


def _merge(
    sc: Scan,
    y: np.ndarray,
    ps: _PeerStats,
    peer_flag: np.ndarray,
    cp_hits: dict[int, dict],
    spike_flag: np.ndarray,
    peers: PeerOutliers,
    spk: Spikes,
    lab: _Labels,
) -> list[Straggler]:
    peer_first = {f.rank: f.first_index for f in peers.flagged}
    spike_of = {f.rank: f for f in spk.flagged}
    who = sorted(
        set(np.flatnonzero(peer_flag).tolist()) | set(cp_hits) | set(np.flatnonzero(spike_flag).tolist())
    )
    rows = []
    for j in who:
        by = []
        if peer_flag[j]:
            by.append("peer")
        if j in cp_hits:
            by.append("change_point")
        if spike_flag[j]:
            by.append("spike")
        rid = lab.rank(j)
        if j in cp_hits and (not peer_flag[j] or cp_hits[j]["onset"] > sc.n_baseline):
            kind, first = "onset", cp_hits[j]["onset"]
        elif peer_flag[j]:
            kind, first = "persistent", peer_first.get(rid, 0)
        else:
            kind = "intermittent"
            first = spike_of[rid].first_index if rid in spike_of else cp_hits.get(j, {}).get("onset", 0)
        rows.append((j, rid, kind, by, int(first)))
    # How late it is, exactly, from its own column: the median since it began (for an
    # intermittent rank, the mean over its spikes: its median is the typical rank's).
    late = np.zeros(len(rows))
    for b0 in range(0, len(rows), _FOLLOW_UP_BATCH):
        part = rows[b0 : b0 + _FOLLOW_UP_BATCH]
        x = normalize(columns(y, np.array([r[0] for r in part])), sc, clip=False) - sc.cfg.typical
        since = np.arange(x.shape[1])[None, :] >= np.array([r[4] for r in part])[:, None]
        with np.errstate(all="ignore"):
            med = np.nanmedian(np.where(since, x, np.nan), axis=1)
        late[b0 : b0 + len(part)] = med
    out = []
    for (j, rid, kind, by, first), late_j in zip(rows, late, strict=True):
        lat = float(late_j)
        effect = spike_of[rid].effect if kind == "intermittent" and rid in spike_of else None
        if effect is not None:
            lat = effect
        out.append(
            Straggler(
                rank=rid,
                host=lab.host(j),
                kind=kind,
                detected_by=by,
                lateness=_finite(lat),
                z=_finite(min(ps.z[j], 1e9), -1e9),
                first_index=first,
                first_step=lab.step(first),
            )
        )
    out.sort(key=lambda s: (-s.lateness, s.rank))
    return out


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _summary(a: StepAnalysis) -> str:
    parts = [f"{a.n_ranks} ranks x {a.n_steps} steps."]
    if not a.has_compute:
        parts.append("No compute_s: rank-level straggler detection is not possible from step times alone.")
    elif a.stragglers:
        shown = []
        for s in a.stragglers[:5]:
            where = f" on {s.host}" if s.host else ""
            step = s.first_step if s.first_step is not None else s.first_index
            since = "from the start" if s.first_index == 0 else f"since step {step}"
            shown.append(f"rank {s.rank}{where} ({s.kind}, {_pct(s.lateness)} late, {since})")
        more = f" and {len(a.stragglers) - 5} more" if len(a.stragglers) > 5 else ""
        parts.append(f"{len(a.stragglers)} straggler(s): " + "; ".join(shown) + more + ".")
    else:
        parts.append("No straggler ranks.")
    if a.tax is not None and a.attribution is not None:
        t = a.attribution
        who = ""
        if t.pattern == "concentrated":
            who = f" on {t.top_k} {t.concentrated_on} holding {_pct(t.top_k_share)} of it"
        parts.append(f"Barrier tax {_pct(a.tax.lost_fraction)} of step time, {t.pattern}{who}.")
    if a.slowdown is not None:
        sd = a.slowdown
        if sd.regressed:
            onset = sd.onset_step if sd.onset_step is not None else sd.onset_index
            since = f" since step {onset}" if sd.onset_index is not None else ""
            shared = {None: "", True: " shared by all ranks", False: " not shared by all ranks"}[
                sd.shared_by_all
            ]
            parts.append(f"Job step period {sd.ratio:.3f}x baseline{since}, in {sd.where}{shared}.")
        else:
            parts.append(f"No job-level regression (period {sd.ratio:.3f}x baseline).")
    if a.divergence is not None and a.divergence.flagged:
        d = a.divergence.flagged[0]
        parts.append(
            f"{len(a.divergence.flagged)} divergent replica(s), first rank {d.rank} ({d.kind}) at step "
            f"{d.first_step if d.first_step is not None else d.first_index}."
        )
    return " ".join(parts)


def analyze(
    table: StepTable,
    rank_host: dict[int, str] | None = None,
    *,
    alpha: float = 0.01,
    min_effect: float = 0.01,
    method: Method = "bonferroni",
    baseline_fraction: float = 0.2,
    min_ratio: float = 0.03,
    slowdown_alpha: float = 0.001,
) -> StepAnalysis:
    """Run the whole suite over a steps table; ``rank_host`` maps rank id to host name.

    Stragglers are the union of peer outliers (persistent), change points (onset) and spikes
    (intermittent), each controlled at ``alpha`` over the fleet and required to reach
    ``min_effect`` (0.01 = 1% slower than the typical rank). The job-level regression is one test
    per job, at ``slowdown_alpha``, and must reach ``min_ratio``.
    """
    if method not in ("bonferroni", "bh"):
        raise ValueError("method must be 'bonferroni' or 'bh'")
    lab = _Labels(table.steps, table.ranks, rank_host)
    notes = list(table.warnings)
    s_n, r_n = table.n_steps, table.n_ranks
    if table.compute is None:
        notes.append("no compute_s: only job-level views (step-time regression, gaps between steps)")
        slow = _slowdown(
            step_times(table.duration), table.start, None, lab, baseline_fraction, min_ratio, slowdown_alpha
        )
        tax = attr = peers = cps = spk = None
        stragglers: list[Straggler] = []
    else:
        cfg = _cfg(True, alpha, min_effect, baseline_fraction=baseline_fraction)
        sc = scan(table.compute, table.duration, cfg)
        tax = _tax(sc, lab)
        attr = _attribution(sc, lab)
        peers, ps, peer_flag = _peers(sc, table.compute, lab, method)
        cps, cp_hits = _changes(sc, table.compute, lab)
        spk, spike_flag = _spikes(sc, table.compute, lab)
        assert sc.step_time is not None  # scan sets it whenever it is given durations
        slow = _slowdown(sc.step_time, table.start, sc, lab, baseline_fraction, min_ratio, slowdown_alpha)
        stragglers = _merge(sc, table.compute, ps, peer_flag, cp_hits, spike_flag, peers, spk, lab)
        if r_n < 3:
            notes.append(f"only {r_n} rank(s): peer comparison is weak")
        if not cps.enabled and cps.note:
            notes.append(f"change points disabled: {cps.note}")
    div = None
    if table.checksum is not None or table.loss is not None:
        div = _divergence(table.checksum, table.loss, lab, alpha)
    result = StepAnalysis(
        n_steps=s_n,
        n_ranks=r_n,
        has_compute=table.compute is not None,
        stragglers=stragglers,
        pattern=attr.pattern if attr is not None else "none",
        slowdown=slow,
        tax=tax,
        attribution=attr,
        peers=peers,
        change_points=cps,
        spikes=spk,
        divergence=div,
        notes=notes,
        summary="",
    )
    return result.model_copy(update={"summary": _summary(result)})
