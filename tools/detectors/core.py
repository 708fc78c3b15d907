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
* :func:`uniform_slowdown`: the whole job slower, and whether in compute, the barrier, the
  collective or the gaps between steps.
* :func:`replica_divergence`: replicas whose parameter checksum (or loss) disagrees.
* :func:`analyze`: all of them over a :class:`~tools.detectors.steps.StepTable`.

Every per-rank detector controls its false alarms across ranks (alpha over the fleet, not per
rank) and requires a minimum effect, so clean fleets of 8 to 16,384 ranks raise no flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tools.detectors._scan import Scan, ScanConfig, columns, exact_cusum, normalize, scan, screen_margin, step_times
from tools.detectors._stats import (
    MAD_TO_SIGMA,
    benjamini_hochberg,
    binomial_critical_count,
    binomial_sf,
    bonferroni_z,
    cusum_threshold,
    normal_isf,
    normal_sf,
    robust_center_scale,
)
from tools.detectors.models import (
    BarrierTax,
    ChangeFlag,
    ChangePoints,
    DivergentRank,
    HostShare,
    PeerFlag,
    PeerOutliers,
    RankShare,
    ReplicaDivergence,
    SpikeFlag,
    Spikes,
    StepAnalysis,
    Straggler,
    TaxAttribution,
    UniformSlowdown,
)
from tools.detectors.steps import StepTable

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
_SHARED_FRACTION = 0.9


# --------------------------------------------------------------------------------------------
# labels


@dataclass
class _Labels:
    """Maps column and row positions to rank ids, hosts and step numbers."""

    steps: np.ndarray | None = None
    ranks: np.ndarray | None = None
    rank_host: dict[int, str] | None = None

    def step(self, i: int | None) -> int | None:
        if i is None or i < 0 or self.steps is None or i >= len(self.steps):
            return None
        return int(self.steps[i])

    def rank(self, j: int) -> int:
        return int(self.ranks[j]) if self.ranks is not None else int(j)

    def host(self, j: int) -> str | None:
        if not self.rank_host:
            return None
        h = self.rank_host.get(self.rank(j))
        return None if h is None else str(h)


def _cfg(relative=True, alpha=0.01, min_effect=0.01, **kw) -> ScanConfig:
    return ScanConfig(relative=relative, alpha=alpha, min_effect=min_effect, **kw)


def _finite(v: float, default: float = 0.0) -> float:
    return float(v) if v is not None and math.isfinite(v) else default


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


def _peers(sc: Scan, y: np.ndarray, lab: _Labels, method: str = "bonferroni") -> tuple[PeerOutliers, _PeerStats, np.ndarray]:
    cfg = sc.cfg
    ps = _peer_stats(sc.wmean, sc.n_valid, _sigma_median(sc.sigma))
    n_tested = int((sc.n_valid > 0).sum())
    flag, thr = _peer_flags(ps, cfg.alpha, method, cfg.min_effect, n_tested)
    flagged = np.flatnonzero(flag)
    flagged = flagged[np.argsort(-ps.z[flagged], kind="stable")][:_MAX_FOLLOW_UP]
    top = np.argsort(-ps.z, kind="stable")[:_TOP]
    idx = np.unique(np.concatenate([flagged, top]))
    p50, p99, onset = _peer_follow_up(y, sc, idx, ps.effect[idx])
    at = {int(j): i for i, j in enumerate(idx)}

    def entry(j: int) -> PeerFlag:
        i = at[j]
        return PeerFlag(
            rank=lab.rank(j), host=lab.host(j), z=_finite(min(ps.z[j], 1e9), -1e9),
            p_value=normal_sf(_finite(ps.z[j], -1e9)), effect=_finite(ps.effect[j]),
            p50=_finite(p50[i]), p99=_finite(p99[i]), flagged=bool(flag[j]),
            first_index=int(onset[i]), first_step=lab.step(int(onset[i])),
        )

    model = PeerOutliers(
        units="relative" if cfg.relative else "additive", n_ranks=n_tested, n_steps=sc.n_steps,
        center=_finite(ps.center), scale=_finite(ps.scale), method=method, alpha=cfg.alpha,
        threshold_z=_finite(thr, 1e9), min_effect=cfg.min_effect,
        flagged=[entry(int(j)) for j in flagged], top=[entry(int(j)) for j in top if np.isfinite(ps.z[j])],
    )
    return model, ps, flag


def peer_outliers(
    x: np.ndarray,
    *,
    relative: bool = True,
    alpha: float = 0.01,
    method: str = "bonferroni",
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
    base = dict(n_baseline=sc.n_baseline, k=cfg.cusum_k, k_eff=sc.k_eff, h=sc.h, alpha=cfg.alpha,
                min_effect=cfg.min_effect)
    if not sc.cusum_enabled:
        note = (f"baseline window of {sc.n_baseline} steps is shorter than {cfg.min_baseline_steps}"
                if sc.n_baseline < cfg.min_baseline_steps else "no steps after the baseline window")
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
                hits[int(j)] = {"stat": float(r["stat"][i]), "alarm": int(r["alarm"][i]),
                                "onset": int(r["onset"][i]), "shift": float(shift[i])}
    flagged = [
        ChangeFlag(
            rank=lab.rank(j), host=lab.host(j), statistic=v["stat"], onset_index=v["onset"],
            onset_step=lab.step(v["onset"]), alarm_index=v["alarm"], alarm_step=lab.step(v["alarm"]),
            shift=v["shift"], baseline=float(sc.base_mu[j] - cfg.typical),
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
    cfg = _cfg(relative, alpha, min_effect, cusum_k=k, baseline_fraction=baseline_fraction,
               baseline_steps=baseline_steps)
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


def _spike_decision(n: np.ndarray, k: np.ndarray, spike_z: float, alpha: float) -> _SpikeDecision:
    """Which exceedance counts are too many for Binomial(n, p0), at alpha over the ranks."""
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
    return _SpikeDecision(p0=p0, source="pooled" if pooled2 > p_norm else "normal", crit=int(crit),
                          flag=(k >= crit) & (n > 0))


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
            flagged.append(SpikeFlag(
                rank=lab.rank(j), host=lab.host(j), count=int(k[j]), n_steps=int(n[j]),
                rate=float(k[j] / max(n[j], 1)), expected=float(n[j] * p0),
                p_value=binomial_sf(int(k[j]), int(n[j]), p0), effect=_finite(eff[i]),
                first_index=int(first[i]), first_step=lab.step(int(first[i])),
            ))
    model = Spikes(
        cut_z=cfg.spike_z, min_effect=cfg.min_effect, p0=p0, p0_source=dec.source,
        critical_count=int(crit), alpha=cfg.alpha, flagged=flagged,
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


def _series_cusum(v: np.ndarray, n_b: int, alpha: float, k: float = 0.5, clip: float = 4.0):
    """(alarm, onset) of a one-sided CUSUM on one job-level series against its first n_b values."""
    v = np.asarray(v, dtype=np.float64)
    ok = np.isfinite(v)
    if n_b < 4 or ok[:n_b].sum() < 4 or v.size <= n_b:
        return None, None
    med, sig = robust_center_scale(v[:n_b])
    sig = max(_finite(sig), 1e-3 * abs(med), 1e-12)
    k_eff = k + normal_isf(alpha) / math.sqrt(n_b)
    h = cusum_threshold((v.size - n_b) / alpha, k)
    u = np.clip((np.where(ok, v, med)[n_b:] - med) / sig, -clip, clip) - k_eff
    s = np.cumsum(u)
    runmin = np.minimum(np.minimum.accumulate(s), 0.0)
    c = s - runmin
    over = np.flatnonzero(c > h)
    if over.size == 0:
        return None, None
    alarm = int(over[0])
    zeros = np.flatnonzero((s[: alarm + 1] == runmin[: alarm + 1]))
    onset = int(zeros[-1]) + 1 if zeros.size else 0
    return n_b + alarm, n_b + onset


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
    alarm, onset = _series_cusum(frac, n_b, alpha)
    worst = int(np.argmax(np.where(ok, tax, -np.inf))) if ok.any() else 0
    base = frac[:n_b][np.isfinite(frac[:n_b])]
    late = frac[-n_b:][np.isfinite(frac[-n_b:])] if n_b else frac[:0]
    return BarrierTax(
        n_steps=int(ok.sum()), total_step_time_s=total_st, total_lost_s=total_lost,
        lost_fraction=total_lost / total_st if total_st > 0 else 0.0,
        median_tax_fraction=float(np.median(fr)) if fr.size else 0.0,
        p99_tax_fraction=float(np.quantile(fr, 0.99)) if fr.size else 0.0,
        worst_index=worst, worst_step=lab.step(worst),
        baseline_tax_fraction=float(np.median(base)) if base.size else 0.0,
        late_tax_fraction=float(np.median(late)) if late.size else 0.0,
        rising=alarm is not None, onset_index=onset, onset_step=lab.step(onset),
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
    names = [lab.host(j) or "" for j in range(r_n)]
    uniq, codes = np.unique(np.array(names, dtype=object), return_inverse=True)
    return codes, [str(u) for u in uniq]


def _attribution(sc: Scan, lab: _Labels) -> TaxAttribution:
    r_n = sc.n_ranks
    ok = sc.valid & (sc.top_rank >= 0) & np.isfinite(sc.top)
    who = sc.top_rank[ok]
    tax = np.maximum(sc.top[ok] - sc.center[ok], 0.0)
    counts = np.bincount(who, minlength=r_n)
    lost = np.bincount(who, weights=tax, minlength=r_n)
    return _attribution_core(counts, lost, int(ok.sum()), max(int((sc.n_valid > 0).sum()), 1), lab, sc.cfg.alpha)


def _attribution_core(counts: np.ndarray, lost: np.ndarray, n: int, active: int, lab: _Labels,
                      alpha: float) -> TaxAttribution:
    """Concentrated or diffuse, from per-rank last-arrival counts and the tax charged to each."""
    r_n = counts.size
    total = float(lost.sum())
    if n == 0 or total <= 0 or r_n == 0:
        return TaxAttribution(pattern="none", top_k=0, top_k_share=0.0, null_share=0.0, critical_count=0)
    share = lost / total
    a = alpha
    # Under exchangeable ranks, each is last with probability 1/R at every step.
    crit = max(_MIN_COUNT, binomial_critical_count(n, 1.0 / active, a / active))
    sig_ranks = np.flatnonzero(counts >= crit)
    order = np.argsort(-share, kind="stable")
    pattern, on, top_k = "diffuse", None, min(3, r_n)
    if 1 <= sig_ranks.size <= _CONCENTRATED_RANKS:
        s = float(share[sig_ranks].sum())
        if s >= 0.5 and s >= 2.0 * sig_ranks.size / active:
            pattern, on, top_k = "concentrated", "ranks", int(sig_ranks.size)
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
        crit_by_size = {int(sz): max(_MIN_COUNT, binomial_critical_count(n, sz / r_n, a / n_h))
                        for sz in np.unique(h_ranks)}
        h_sig = np.array([h_counts[i] >= crit_by_size[int(h_ranks[i])] for i in range(n_h)], dtype=bool)
        sig_idx = np.flatnonzero(h_sig)
        sig_hosts = [names[i] for i in sig_idx if names[i]]
        if pattern != "concentrated" and 1 <= sig_idx.size <= _CONCENTRATED_HOSTS:
            s = float(h_share[sig_idx].sum())
            if s >= 0.5 and s >= 2.0 * h_ranks[sig_idx].sum() / r_n:
                pattern, on, top_k, top_k_share = "concentrated", "hosts", int(sig_idx.size), s
                null_share = float(h_ranks[sig_idx].sum() / r_n)
        for i in np.argsort(-h_share, kind="stable")[:_TOP]:
            if h_counts[i] == 0:
                break
            top_hosts.append(HostShare(host=names[i], ranks=int(h_ranks[i]), last_count=int(h_counts[i]),
                                       share=float(h_share[i]), lost_s=float(h_lost[i])))
    top_ranks = [
        RankShare(rank=lab.rank(j), host=lab.host(j), last_count=int(counts[j]), share=float(share[j]),
                  lost_s=float(lost[j]))
        for j in order[:10] if counts[j] > 0
    ]
    return TaxAttribution(
        pattern=pattern, concentrated_on=on, top_k=top_k, top_k_share=top_k_share, null_share=null_share,
        critical_count=int(crit), significant_ranks=[lab.rank(int(j)) for j in sig_ranks[:100]],
        significant_hosts=sig_hosts[:100], top_ranks=top_ranks, top_hosts=top_hosts,
    )


def tax_attribution(
    duration: np.ndarray,
    compute: np.ndarray,
    *,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
    alpha: float = 0.01,
) -> TaxAttribution:
    """Share of the barrier tax attributable to each rank (and host): who arrives last, how often.

    Each step's tax (max compute - median compute) is charged to its last arrival. A rank (host)
    is significant when it is last far more often than chance (Binomial(S, 1/R), alpha / R; hosts
    at their rank count). ``concentrated``: at most 8 significant ranks (or 2 hosts) hold at least
    half of the tax and twice their null share: evict them. ``diffuse``: the tax is tail noise
    spread over everyone (evicting any one rank will not help).
    """
    sc = scan(compute, duration, _cfg(alpha=alpha))
    return _attribution(sc, _Labels(ranks=ranks, rank_host=rank_host))


# --------------------------------------------------------------------------------------------
# uniform slowdown


def _window_median(v: np.ndarray, sl: slice) -> float:
    w = v[sl]
    w = w[np.isfinite(w)]
    return float(np.median(w)) if w.size else math.nan


def _slowdown(step_time: np.ndarray, start: np.ndarray | None, sc: Scan | None, lab: _Labels,
              baseline_fraction: float, min_ratio: float, alpha: float) -> UniformSlowdown:
    if sc is None:
        return _slowdown_core(step_time, start, None, None, None, lab, baseline_fraction, min_ratio, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        own = sc.late_mean_y / sc.base_mean_y - 1.0
    return _slowdown_core(step_time, start, sc.center, sc.top, own, lab, baseline_fraction, min_ratio, alpha)


def _slowdown_core(step_time: np.ndarray, start: np.ndarray | None, center: np.ndarray | None,
                   top: np.ndarray | None, own_rise: np.ndarray | None, lab: _Labels,
                   baseline_fraction: float, min_ratio: float, alpha: float) -> UniformSlowdown:
    """Job-level regression from per-step series; ``own_rise``: each rank's own compute, late / base - 1."""
    s_n = step_time.size
    n_w = int(min(max(1, round(baseline_fraction * s_n)), max(1, s_n // 2)))
    period = None
    if start is not None and s_n >= 2:
        period = np.diff(np.asarray(start, dtype=np.float64))
    series = period if period is not None and period.size >= 2 else step_time
    base, late = slice(0, n_w), slice(series.size - n_w, series.size)
    b_med, l_med = _window_median(series, base), _window_median(series, late)
    st_ratio = _window_median(step_time, slice(0, n_w))
    st_ratio = _window_median(step_time, slice(s_n - n_w, s_n)) / st_ratio if st_ratio else math.nan
    ratio = l_med / b_med if b_med and math.isfinite(b_med) and b_med > 0 else math.nan
    _, sb = robust_center_scale(series[base])
    _, sl_ = robust_center_scale(series[late])
    # standard error of a median: sqrt(pi/2) sigma / sqrt(n)
    se = 1.2533 * math.sqrt((_finite(sb) ** 2 + _finite(sl_) ** 2) / n_w)
    se = max(se, 1e-6 * abs(_finite(b_med)), 1e-12)
    z = (l_med - b_med) / se if math.isfinite(l_med - b_med) else 0.0
    regressed = bool(s_n >= 4 and math.isfinite(ratio) and ratio - 1.0 >= min_ratio and z >= normal_isf(alpha))
    onset = _series_cusum(series, n_w, alpha)[1] if regressed else None

    deltas: dict[str, float] = {}
    if period is not None:
        gap = period - step_time[:-1]
        deltas["gaps"] = _window_median(gap, slice(gap.size - n_w, gap.size)) - _window_median(gap, slice(0, n_w))
    shared = frac = None
    if center is not None and top is not None:
        comps = {
            "compute": center,
            "barrier_tax": top - center,
            "communication": step_time - top,
        }
        for name, v in comps.items():
            deltas[name] = _window_median(v, slice(s_n - n_w, s_n)) - _window_median(v, slice(0, n_w))
        c_base = _window_median(center, slice(0, n_w))
        rise = deltas["compute"] / c_base if c_base else 0.0
        if own_rise is not None and math.isfinite(rise) and rise >= 0.5 * min_ratio:
            own = own_rise[np.isfinite(own_rise)]
            frac = float((own >= 0.5 * rise).mean()) if own.size else 0.0
            shared = frac >= _SHARED_FRACTION
    else:
        deltas["step_time"] = _window_median(step_time, slice(s_n - n_w, s_n)) - _window_median(step_time, slice(0, n_w))
    deltas = {k: _finite(v) for k, v in deltas.items()}

    where = "none"
    if regressed:
        pos = {k: max(v, 0.0) for k, v in deltas.items()}
        total = sum(pos.values())
        best = max(pos, key=pos.get) if pos else None
        if not total or best is None:
            where = "unknown"
        elif best == "step_time":
            where = "unknown"  # the steps got longer, and without compute_s we cannot say why
        else:
            where = best if pos[best] >= 0.5 * total else "mixed"
    return UniformSlowdown(
        regressed=regressed, ratio=_finite(ratio, 1.0), step_time_ratio=_finite(st_ratio, 1.0),
        baseline_period_s=_finite(b_med), late_period_s=_finite(l_med), z=_finite(z),
        onset_index=onset, onset_step=lab.step(onset), where=where, deltas_s=deltas,
        shared_by_all=shared, frac_ranks_slower=frac, min_ratio=min_ratio, n_baseline=n_w,
    )


def uniform_slowdown(
    duration: np.ndarray,
    start: np.ndarray | None,
    compute: np.ndarray | None = None,
    *,
    steps: np.ndarray | None = None,
    baseline_fraction: float = 0.2,
    min_ratio: float = 0.03,
    alpha: float = 0.01,
) -> UniformSlowdown:
    """Job-level regression: late window vs baseline window, all ranks together.

    The step period (start to next start, which includes the gap between steps; the step time
    when ``start`` is None) is compared between the first and last ``baseline_fraction`` of steps
    (median ratio, and its z from the medians' robust standard errors); the onset comes from a
    CUSUM on the job's own series. With ``compute``, the rise is split into compute (everyone's
    own work; ``shared_by_all`` when >= 90% of ranks rose with it), barrier_tax (waiting for the
    last arrival), communication (step time after the last arrival) and gaps (between steps: the
    input pipeline).
    """
    if compute is not None:
        sc = scan(compute, duration, _cfg(baseline_fraction=baseline_fraction, alpha=alpha))
        st = sc.step_time
    else:
        sc, st = None, step_times(np.asarray(duration))
    return _slowdown(st, start, sc, _Labels(steps=steps), baseline_fraction, min_ratio, alpha)


# --------------------------------------------------------------------------------------------
# replica divergence


def _checksum_divergence(checksum: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Per rank: steps in the minority of their step's checksums, and the first such step."""
    s_n, r_n = checksum.shape
    flat = checksum.ravel()
    have = np.array([v is not None and v == v and str(v) != "" for v in flat], dtype=bool)
    n_bad = np.zeros(r_n, dtype=np.int64)
    first = np.full(r_n, -1, dtype=np.int64)
    if not have.any():
        return n_bad, first, math.nan
    cell = np.flatnonzero(have)
    _, code = np.unique(np.array([str(v) for v in flat[cell]], dtype=object), return_inverse=True)
    step = cell // r_n
    key = step * (int(code.max()) + 1) + code
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    cell_count = cnt[inv]
    modal = np.zeros(s_n, dtype=np.int64)
    np.maximum.at(modal, step, cell_count)
    # Replicas of one data-parallel group agree; with tensor/pipeline parallelism several groups
    # coexist, each large. A rank sharing its checksum with less than half the modal group is the
    # odd one out; when every checksum is unique there is nothing to compare against.
    odd = (modal[step] >= 2) & (cell_count * 2 < modal[step])
    rank = cell % r_n
    n_bad = np.bincount(rank[odd], minlength=r_n)
    first_bad = np.full(r_n, np.iinfo(np.int64).max)
    np.minimum.at(first_bad, rank[odd], step[odd])
    first = np.where(n_bad > 0, first_bad, -1)
    big = cell_count >= 2
    groups = np.zeros(s_n)
    if big.any():
        _, g_first = np.unique(key[big], return_index=True)
        groups = np.bincount(step[big][g_first], minlength=s_n).astype(np.float64)
    with_data = np.bincount(step, minlength=s_n) > 0
    return n_bad, first, float(np.median(groups[with_data])) if with_data.any() else math.nan


def _loss_divergence(loss: np.ndarray, alpha: float, cut_z: float = 6.0) -> tuple[np.ndarray, np.ndarray, int]:
    """Per rank: steps whose loss is far from its step's (or not finite while the others are)."""
    loss = np.asarray(loss, dtype=np.float64)
    s_n, r_n = loss.shape
    fin = np.isfinite(loss)
    with np.errstate(all="ignore"):
        med = np.nanmedian(np.where(fin, loss, np.nan), axis=1, keepdims=True)
        mad = np.nanmedian(np.abs(np.where(fin, loss, np.nan) - med), axis=1, keepdims=True) * MAD_TO_SIGMA
        scale = np.maximum(mad, 1e-6 * np.abs(med) + 1e-12)
        z = np.abs(loss - med) / scale
        logged = ~np.isnan(loss)
        odd = logged & np.isfinite(med) & ((~fin) | (z > cut_z))
    n = logged.sum(axis=0)
    k = odd.sum(axis=0)
    # A loss that is merely noisy should not count: the null rate is the fleet's own, pooled.
    p0 = max(2 * normal_sf(cut_z), float(k.sum()) / max(float(n.sum()), 1.0))
    crit = max(_MIN_COUNT, binomial_critical_count(int(n.max()) if n.size else 0, p0, alpha / max(r_n, 1)))
    first = np.where(odd.any(axis=0), odd.argmax(axis=0), -1)
    return np.where(k >= crit, k, 0), first, crit


def _divergence(checksum, loss, lab: _Labels, alpha: float) -> ReplicaDivergence:
    flagged: list[DivergentRank] = []
    groups = None
    if checksum is not None:
        n_bad, first, groups = _checksum_divergence(np.asarray(checksum, dtype=object))
        for j in np.flatnonzero(n_bad):
            flagged.append(DivergentRank(rank=lab.rank(j), host=lab.host(j), kind="checksum",
                                         first_index=int(first[j]), first_step=lab.step(int(first[j])),
                                         n_steps=int(n_bad[j])))
    if loss is not None:
        k, first, _ = _loss_divergence(loss, alpha)
        for j in np.flatnonzero(k):
            flagged.append(DivergentRank(rank=lab.rank(j), host=lab.host(j), kind="loss",
                                         first_index=int(first[j]), first_step=lab.step(int(first[j])),
                                         n_steps=int(k[j])))
    flagged.sort(key=lambda f: (f.first_index, f.rank, f.kind))
    return ReplicaDivergence(checksum_checked=checksum is not None, loss_checked=loss is not None,
                             flagged=flagged, groups_per_step=None if groups is None or not math.isfinite(groups) else groups)


def replica_divergence(
    checksum: np.ndarray | None = None,
    loss: np.ndarray | None = None,
    *,
    steps: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
    alpha: float = 0.01,
) -> ReplicaDivergence:
    """Ranks whose replica disagrees with its peers, and the first step it did.

    ``checksum`` (S, R) object array of ``param_checksum`` strings (None = not logged): a rank
    whose checksum is shared by fewer than half as many ranks as the step's largest group is
    flagged (any such step: replicas must agree exactly). ``loss`` (S, R): a rank whose loss is
    more than 6 robust sigmas from its step's median (or not finite while the others are) on more
    steps than the pooled binomial null allows.
    """
    return _divergence(checksum, loss, _Labels(steps, ranks, rank_host), alpha)


# --------------------------------------------------------------------------------------------
# the suite


def _merge(sc: Scan, y: np.ndarray, ps: _PeerStats, peer_flag: np.ndarray, cp_hits: dict[int, dict],
           spike_flag: np.ndarray, peers: PeerOutliers, spk: Spikes, lab: _Labels) -> list[Straggler]:
    peer_first = {f.rank: f.first_index for f in peers.flagged}
    spike_of = {f.rank: f for f in spk.flagged}
    who = sorted(set(np.flatnonzero(peer_flag).tolist()) | set(cp_hits) | set(np.flatnonzero(spike_flag).tolist()))
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
    for (j, rid, kind, by, first), lat in zip(rows, late):
        if kind == "intermittent" and rid in spike_of and spike_of[rid].effect is not None:
            lat = spike_of[rid].effect
        out.append(Straggler(rank=rid, host=lab.host(j), kind=kind, detected_by=by, lateness=_finite(lat),
                             z=_finite(min(ps.z[j], 1e9), -1e9), first_index=first, first_step=lab.step(first)))
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
            since = "from the start" if s.first_index == 0 else f"since step {s.first_step if s.first_step is not None else s.first_index}"
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
        s = a.slowdown
        if s.regressed:
            since = f" since step {s.onset_step if s.onset_step is not None else s.onset_index}" if s.onset_index is not None else ""
            shared = "" if s.shared_by_all is None else (" shared by all ranks" if s.shared_by_all else " not shared by all ranks")
            parts.append(f"Job step period {s.ratio:.3f}x baseline{since}, in {s.where}{shared}.")
        else:
            parts.append(f"No job-level regression (period {s.ratio:.3f}x baseline).")
    if a.divergence is not None and a.divergence.flagged:
        d = a.divergence.flagged[0]
        parts.append(f"{len(a.divergence.flagged)} divergent replica(s), first rank {d.rank} ({d.kind}) at step "
                     f"{d.first_step if d.first_step is not None else d.first_index}.")
    return " ".join(parts)


def analyze(
    table: StepTable,
    rank_host: dict[int, str] | None = None,
    *,
    alpha: float = 0.01,
    min_effect: float = 0.01,
    method: str = "bonferroni",
    baseline_fraction: float = 0.2,
    min_ratio: float = 0.03,
) -> StepAnalysis:
    """Run the whole suite over a steps table; ``rank_host`` maps rank id to host name.

    Stragglers are the union of peer outliers (persistent), change points (onset) and spikes
    (intermittent), each controlled at ``alpha`` over the fleet and required to reach
    ``min_effect`` (0.01 = 1% slower than the typical rank).
    """
    lab = _Labels(table.steps, table.ranks, rank_host)
    notes = list(table.warnings)
    s_n, r_n = table.n_steps, table.n_ranks
    if table.compute is None:
        notes.append("no compute_s: only job-level views (step-time regression, gaps between steps)")
        slow = _slowdown(step_times(table.duration), table.start, None, lab, baseline_fraction, min_ratio, alpha)
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
        slow = _slowdown(sc.step_time, table.start, sc, lab, baseline_fraction, min_ratio, alpha)
        stragglers = _merge(sc, table.compute, ps, peer_flag, cp_hits, spike_flag, peers, spk, lab)
        if r_n < 3:
            notes.append(f"only {r_n} rank(s): peer comparison is weak")
        if not cps.enabled and cps.note:
            notes.append(f"change points disabled: {cps.note}")
    div = None
    if table.checksum is not None or table.loss is not None:
        div = _divergence(table.checksum, table.loss, lab, alpha)
    result = StepAnalysis(
        n_steps=s_n, n_ranks=r_n, has_compute=table.compute is not None, stragglers=stragglers,
        pattern=attr.pattern if attr is not None else "none", slowdown=slow, tax=tax, attribution=attr,
        peers=peers, change_points=cps, spikes=spk, divergence=div, notes=notes, summary="",
    )
    return result.model_copy(update={"summary": _summary(result)})
