"""The detectors one step at a time: O(R) work per step, no rescans of history.

Each update takes one step of all ranks and advances the same statistics the batch scan
accumulates (``tools.detectors._scan``): the step's reference from the same rank sample, the
winsorized running sums, exceedance counters, baseline moments, and the per-rank CUSUM, here exact
at every step (the batch screens on blocks of steps and re-runs candidates exactly). Decisions
(thresholds, multiple-testing control, concentrated vs diffuse) are the batch's own functions, so
the two agree on who is flagged. Only scalars per step are kept (median, max, step time, start)
for the job-level views.
"""

from __future__ import annotations

import math

import numpy as np
from forensic.tools.detectors._labels import Labels as _Labels
from forensic.tools.detectors._labels import finite as _finite
from forensic.tools.detectors._scan import (
    _DUR_SAMPLE,
    _REF_SAMPLE,
    CUSUM_CLIP,
    ScanConfig,
    _ref_cols,
    _row_max,
    _row_quartiles,
    _sample,
    cusum_params,
    step_bands,
)
from forensic.tools.detectors._stats import binomial_sf, normal_sf
from forensic.tools.detectors.core import (
    _attribution_core,
    _peer_flags,
    _peer_stats,
    _spike_decision,
    _tax_core,
)
from forensic.tools.detectors.models import (
    ChangeFlag,
    ChangePoints,
    Method,
    PeerFlag,
    PeerOutliers,
    SpikeFlag,
    Spikes,
    Straggler,
    StreamSnapshot,
)
from forensic.tools.detectors.slowdown import _slowdown_core

__all__ = ["StreamingDetectors"]

_TOP = 5


class StreamingDetectors:
    """Incremental straggler detectors over a fleet of ``n_ranks`` ranks.

    ``baseline_steps``: the first steps, which calibrate each rank's own CUSUM (its mean and
    spread) and the fleet's per-step spread. ``horizon_steps``: how many steps the run is expected
    to last; the CUSUM threshold keeps the chance of any false alarm over the fleet and that many
    steps at ``alpha``. Rank ids and hosts only label the results.
    """

    def __init__(
        self,
        n_ranks: int,
        baseline_steps: int = 200,
        *,
        alpha: float = 0.01,
        min_effect: float = 0.01,
        horizon_steps: int = 100_000,
        method: Method = "bonferroni",
        ranks: np.ndarray | None = None,
        rank_host: dict[int, str] | None = None,
    ) -> None:
        if n_ranks < 1 or baseline_steps < 1:
            raise ValueError("n_ranks and baseline_steps must be positive")
        if method not in ("bonferroni", "bh"):
            raise ValueError("method must be 'bonferroni' or 'bh'")
        self.cfg = ScanConfig(
            relative=True, alpha=alpha, min_effect=min_effect, baseline_steps=baseline_steps
        )
        self.n_ranks = int(n_ranks)
        self.n_b = int(baseline_steps)
        self.method = method
        self.labels_ranks = ranks
        self.rank_host = rank_host
        self.k_eff, self.h = cusum_params(self.cfg, self.n_ranks, self.n_b, max(1, horizon_steps - self.n_b))
        self.cusum_enabled = self.n_b >= self.cfg.min_baseline_steps
        r = self.n_ranks
        self.t = 0
        self.n_miss = np.zeros(r, dtype=np.int64)
        self.wsum = np.zeros(r)
        self.bsum = np.zeros(r)
        self.bsq = np.zeros(r)
        self.exceed = np.zeros(r, dtype=np.int64)
        self.exc_sum = np.zeros(r)
        self.first_exc = np.full(r, -1, dtype=np.int64)
        self.mu = np.ones(r)
        self.sig = np.ones(r)
        self.c = np.zeros(r)
        self.cmax = np.zeros(r)
        self.last_zero = np.full(r, self.n_b - 1, dtype=np.int64)
        self.alarm = np.full(r, -1, dtype=np.int64)
        self.onset = np.full(r, -1, dtype=np.int64)
        self.c_alarm = np.zeros(r)
        # fleet-referenced CUSUM (reference min_effect / 2): where a persistent lateness began
        self.cp = np.zeros(r)
        self.cp_zero = np.full(r, -1, dtype=np.int64)
        self.last_count = np.zeros(r, dtype=np.int64)
        self.lost = np.zeros(r)
        self.center: list[float] = []
        self.top: list[float] = []
        self.sigma: list[float] = []
        self.step_time: list[float] = []
        self.start: list[float] = []
        self._dcols = _ref_cols(r, _DUR_SAMPLE)

    # ------------------------------------------------------------------------------------------

    def update(self, duration_row: np.ndarray, compute_row: np.ndarray, start: float | None = None) -> None:
        """Advance every detector by one step of all ranks (rows of length ``n_ranks``; NaN = missing)."""
        c = np.asarray(compute_row, dtype=np.float32).reshape(1, -1)
        if c.shape[1] != self.n_ranks:
            raise ValueError(f"expected {self.n_ranks} ranks, got {c.shape[1]}")
        cfg, tau, s = self.cfg, 1.0, self.t
        q1, med, q3 = _row_quartiles(_sample(c, _REF_SAMPLE))
        top, top_rank, _ = _row_max(c)
        valid, sigma, lo, hi, cut, _ = step_bands(med, q1, q3, cfg)
        d = np.asarray(duration_row, dtype=np.float32).reshape(1, -1)
        st = float(_row_quartiles(np.array(d[:, self._dcols]))[1][0])
        self.center.append(float(med[0]) if valid[0] else math.nan)
        self.top.append(float(top[0]))
        self.sigma.append(float(sigma[0]))
        self.step_time.append(st)
        self.start.append(math.nan if start is None else float(start))

        if valid[0]:
            x = c[0] / np.float32(med[0])
            miss = np.isnan(x)
            t = np.clip(x, np.float32(lo[0]), np.float32(hi[0]))
            over = x > np.float32(cut[0])
            if top_rank[0] >= 0:
                tax = max(float(top[0] - med[0]), 0.0)
                self.last_count[top_rank[0]] += 1
                self.lost[top_rank[0]] += tax
        else:
            miss = np.ones(self.n_ranks, dtype=bool)
            t = np.full(self.n_ranks, np.float32(tau))
            x = t
            over = np.zeros(self.n_ranks, dtype=bool)
        if miss.any():
            t[miss] = tau
            self.n_miss += miss
        self.wsum += t
        self.exceed += over
        self.exc_sum += np.where(over, x - tau, 0.0)
        self.first_exc[over & (self.first_exc < 0)] = s
        np.maximum(self.cp + (t - tau) - 0.5 * cfg.min_effect, 0.0, out=self.cp)
        self.cp_zero[self.cp == 0] = s

        if s < self.n_b:
            self.bsum += t
            self.bsq += np.square(t, dtype=np.float64)
            if s == self.n_b - 1:
                self._close_baseline()
        elif self.cusum_enabled:
            u = np.clip((t - self.mu) / self.sig, -CUSUM_CLIP, CUSUM_CLIP) - self.k_eff
            np.maximum(self.c + u, 0.0, out=self.c)
            np.maximum(self.cmax, self.c, out=self.cmax)
            self.last_zero[self.c == 0] = s
            new = (self.c > self.h) & (self.alarm < 0)
            if new.any():
                self.alarm[new] = s
                self.onset[new] = self.last_zero[new] + 1
                self.c_alarm[new] = self.c[new]
        self.t += 1

    def _close_baseline(self) -> None:
        n = self.n_b
        self.mu = self.bsum / n
        var = np.maximum(self.bsq / n - self.mu * self.mu, 0.0)
        sig = np.asarray(self.sigma[:n])
        sig = sig[np.isfinite(sig)]
        pool = float(np.median(sig)) if sig.size else 1e-4
        self.sig = np.maximum(np.sqrt(var), pool)

    # ------------------------------------------------------------------------------------------

    def _decisions(self):
        n_valid = self.t - self.n_miss
        with np.errstate(invalid="ignore", divide="ignore"):
            wmean = (self.wsum - self.n_miss) / np.maximum(n_valid, 1)
        wmean = np.where(n_valid > 0, wmean, np.nan)
        sig = np.asarray(self.sigma)
        ps = _peer_stats(wmean, n_valid, float(np.nanmedian(sig)) if np.isfinite(sig).any() else 0.0)
        peer_flag, thr = _peer_flags(
            ps, self.cfg.alpha, self.method, self.cfg.min_effect, int((n_valid > 0).sum())
        )
        run = np.maximum(self.alarm - self.onset + 1, 1)
        shift = self.sig * (self.k_eff + self.c_alarm / run)
        cp_flag = (self.alarm >= 0) & (shift >= self.cfg.min_effect)
        dec = _spike_decision(n_valid, self.exceed, self.cfg.spike_z, self.cfg.alpha)
        return n_valid, ps, peer_flag, thr, cp_flag, shift, dec

    def flagged(self) -> np.ndarray:
        """Boolean (R,) mask of the ranks flagged now by any detector (cheap: no models built)."""
        _, _, peer_flag, _, cp_flag, _, dec = self._decisions()
        return peer_flag | cp_flag | dec.flag

    def snapshot(self) -> StreamSnapshot:
        """The detectors' results after the steps seen so far."""
        cfg = self.cfg
        lab = _Labels(None, self.labels_ranks, self.rank_host)
        n_valid, ps, peer_flag, thr, cp_flag, shift, dec = self._decisions()
        peer_first = np.where(self.cp_zero >= 0, self.cp_zero + 1, 0)

        def peer_entry(j: int) -> PeerFlag:
            return PeerFlag(
                rank=lab.rank(j),
                host=lab.host(j),
                z=_finite(min(ps.z[j], 1e9), -1e9),
                p_value=normal_sf(_finite(ps.z[j], -1e9)),
                effect=_finite(ps.effect[j]),
                flagged=bool(peer_flag[j]),
                first_index=int(min(peer_first[j], max(self.t - 1, 0))),
            )

        order = np.argsort(-ps.z, kind="stable")
        flagged = np.flatnonzero(peer_flag)
        flagged = flagged[np.argsort(-ps.z[flagged], kind="stable")]
        peers = PeerOutliers(
            units="relative",
            n_ranks=int((n_valid > 0).sum()),
            n_steps=self.t,
            center=_finite(ps.center),
            scale=_finite(ps.scale),
            method=self.method,
            alpha=cfg.alpha,
            threshold_z=_finite(thr, 1e9),
            min_effect=cfg.min_effect,
            flagged=[peer_entry(int(j)) for j in flagged],
            top=[peer_entry(int(j)) for j in order[:_TOP] if np.isfinite(ps.z[j])],
        )
        cp_idx = np.flatnonzero(cp_flag)
        cp_idx = cp_idx[np.lexsort((cp_idx, self.onset[cp_idx]))]
        changes = ChangePoints(
            enabled=self.cusum_enabled and self.t > self.n_b,
            note=None if self.t > self.n_b else f"baseline window: {self.t} of {self.n_b} steps seen",
            n_baseline=self.n_b,
            k=cfg.cusum_k,
            k_eff=self.k_eff,
            h=self.h,
            alpha=cfg.alpha,
            min_effect=cfg.min_effect,
            flagged=[
                ChangeFlag(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    statistic=float(self.cmax[j]),
                    onset_index=int(self.onset[j]),
                    alarm_index=int(self.alarm[j]),
                    shift=float(shift[j]),
                    baseline=float(self.mu[j] - 1.0),
                )
                for j in cp_idx
            ],
        )
        sp_idx = np.flatnonzero(dec.flag)
        sp_idx = sp_idx[np.argsort(-self.exceed[sp_idx], kind="stable")]
        exc_mean = self.exc_sum / np.maximum(self.exceed, 1)
        spikes = Spikes(
            cut_z=cfg.spike_z,
            min_effect=cfg.min_effect,
            p0=dec.p0,
            p0_source=dec.source,
            critical_count=dec.crit,
            alpha=cfg.alpha,
            flagged=[
                SpikeFlag(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    count=int(self.exceed[j]),
                    n_steps=int(n_valid[j]),
                    rate=float(self.exceed[j] / max(n_valid[j], 1)),
                    expected=float(n_valid[j] * dec.p0),
                    p_value=binomial_sf(int(self.exceed[j]), int(n_valid[j]), dec.p0),
                    effect=float(exc_mean[j]),
                    first_index=int(self.first_exc[j]),
                )
                for j in sp_idx
            ],
        )
        center = np.asarray(self.center)
        top = np.asarray(self.top)
        st = np.asarray(self.step_time)
        valid = np.isfinite(center)
        n_b = min(self.n_b, self.t)
        tax = _tax_core(center, top, st, valid, n_b, cfg.alpha, lab)
        n_valid_steps = int((valid & np.isfinite(top)).sum())
        total_time = float(np.nansum(np.where(valid & np.isfinite(top), st, np.nan)))
        attribution = _attribution_core(
            self.last_count,
            self.lost,
            n_valid_steps,
            max(int((n_valid > 0).sum()), 1),
            lab,
            cfg.alpha,
            total_time,
            cfg.min_effect,
        )
        slowdown = None
        if self.t >= 2 * self.n_b:
            starts = np.asarray(self.start)
            slowdown = _slowdown_core(
                st,
                starts if np.isfinite(starts).all() else None,
                center,
                top,
                None,
                lab,
                self.n_b / self.t,
                0.03,
                0.001,
            )
        stragglers = []
        for j in np.flatnonzero(peer_flag | cp_flag | dec.flag):
            by = [n for n, f in (("peer", peer_flag), ("change_point", cp_flag), ("spike", dec.flag)) if f[j]]
            if cp_flag[j] and (not peer_flag[j] or self.onset[j] > self.n_b):
                kind, first, late = "onset", int(self.onset[j]), float(shift[j])
            elif peer_flag[j]:
                kind, first, late = (
                    "persistent",
                    int(min(peer_first[j], max(self.t - 1, 0))),
                    float(ps.effect[j]),
                )
            else:
                kind, first, late = "intermittent", int(self.first_exc[j]), float(exc_mean[j])
            stragglers.append(
                Straggler(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    kind=kind,
                    detected_by=by,
                    lateness=_finite(late),
                    z=_finite(min(ps.z[j], 1e9), -1e9),
                    first_index=first,
                )
            )
        stragglers.sort(key=lambda s: (-s.lateness, s.rank))
        return StreamSnapshot(
            n_steps=self.t,
            n_ranks=self.n_ranks,
            baseline_complete=self.t >= self.n_b,
            stragglers=stragglers,
            pattern=attribution.pattern,
            peers=peers,
            change_points=changes,
            spikes=spikes,
            tax=tax,
            attribution=attribution,
            slowdown=slowdown,
        )
