"""Continuous straggler detection for a live job: O(ranks) state, constant work per step.

The batch suite and :class:`~forensic.tools.detectors.stream.StreamingDetectors` answer "who was
slow in this window"; a watcher runs for weeks and must answer "who became slow just now", at a
false-alarm rate a person tolerates. This module keeps the batch scan's per-step reference (the
quartiles of the same evenly spread rank sample, ``_scan._sample``) and its CUSUM calibration
(Siegmund's ARL0, ``_stats``), and adds what running forever needs:

* **Each rank against its own baseline.** Values are ``compute_s / step median`` (a relaunch with
  another batch size scales every rank alike and cancels). Each rank's level and spread are
  estimated in a short warm-up, then follow slowly (an exponential average with a half-life of
  ``baseline_halflife_steps``) only while the rank is not under suspicion, so healthy GPUs that
  are 1 to 2% slower than the median from birth never alarm, and a degradation is not absorbed.
* **Sustained slowdowns:** a one-sided CUSUM per rank with reference ``min_effect / 2`` and a
  decision interval that holds fleet-wide false alarms at ``alpha`` per ``horizon_steps`` steps
  (ARL0 = ranks x horizon / alpha). Increments are clipped at ``CLIP`` of the rank's sigma:
  one data-loader hiccup cannot open an investigation.
* **Intermittent stalls:** a Bernoulli CUSUM on stall *episodes* (a step more than
  ``spike_effect`` above the rank's baseline after one that was not), against the fleet's own
  episode rate (estimated online), so three-step hiccups count once and a noisy storage day
  raises the bar for everyone.
* **Stopped ranks:** no value for ``stop_steps`` steps running while nearly all peers report.
* **Slow from the start:** at the end of each warm-up, ranks whose level is above the fleet by
  ``min_effect`` and by a Bonferroni z over ranks.
* **Whole-job slowdowns:** the 20th percentile of the step times of the last ``job_window`` steps
  against the job's own baseline (checkpoint, evaluation and stalled steps only add time to some
  steps: a burst of hiccups may cover three quarters of the window),
  ``job_min_effect`` or more for ``job_confirm`` steps in a row.
* **What is never judged:** steps where many ranks leave their band together (checkpoints,
  evaluations: the fleet moved, not a rank) and the first ``settle_steps + warmup_steps`` steps
  after a restart (the step number goes back, or the gap between steps exceeds ``gap_s``), after
  which every baseline is estimated again: a relaunch with another batch size or placement starts
  from scratch.
* **Hysteresis:** a subject (rank, host, job) that raised a finding is quiet until it has been
  healthy for ``rearm_steps`` steps.
"""

from __future__ import annotations

import io
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Literal

import numpy as np
from forensic.tools.detectors._scan import _DUR_SAMPLE, _REF_SAMPLE, _ref_cols, _row_quartiles, _sample
from forensic.tools.detectors._stats import bonferroni_z

__all__ = ["Finding", "WatchConfig", "WatchDetector"]

FindingKind = Literal[
    "rank_slowdown", "rank_stalls", "rank_stopped", "rank_slow_from_start", "host_slowdown", "job_slowdown"
]
_KIND_CODE = {"rank_slowdown": 1, "rank_stalls": 2, "rank_stopped": 3, "rank_slow_from_start": 4}
_STATE_VERSION = 1
#: CUSUM increments are clipped at this many of the rank's sigmas. Tighter than the batch scan's
#: (4): over a week a rank sees hundreds of moderate hiccups, and a clipped increment of 2.5
#: sigma against a reference of about 1 sigma needs six such steps running to open; a 5%
#: slowdown still gains about a sigma per step.
CLIP = 2.5
#: A slowdown finding needs at least this many steps of evidence at the full clipped increment.
MIN_RUN = 4


@dataclass(frozen=True)
class WatchConfig:
    """The watcher's knobs; the defaults and why are in docs/watch.md."""

    #: Smallest sustained slowdown of a rank, against its own baseline, worth an investigation
    #: (0.03 = 3% of the job's throughput when that rank is the slowest).
    min_effect: float = 0.03
    #: A step this much above a rank's baseline is a stall (intermittent-stall detector).
    spike_effect: float = 0.20
    #: Smallest sustained slowdown of the whole job's step time worth an investigation.
    job_min_effect: float = 0.05
    #: Expected false openings over the fleet per ``horizon_steps`` steps.
    alpha: float = 0.01
    horizon_steps: int = 1_000_000
    #: Steps skipped after a (re)start, then steps that estimate every baseline.
    settle_steps: int = 3
    warmup_steps: int = 24
    #: Half-life of the slow baseline update (steps).
    baseline_halflife_steps: int = 250
    #: A rank with no value this many steps running, while the others report, has stopped.
    stop_steps: int = 10
    #: A rank above the stall cut this many steps running is slow (a hiccup lasts fewer).
    sustain_steps: int = 8
    #: Steps of the job's rolling median step time, and steps in a row above the effect to open.
    job_window: int = 31
    job_confirm: int = 5
    #: The job's step time is this quantile of the window's step times.
    job_quantile: float = 0.2
    #: A step where more than this share of the rank sample is out of band moved as a fleet
    #: (checkpoint, evaluation): no rank is judged on it.
    fleet_event_fraction: float = 0.02
    #: A subject that opened is quiet until it has been healthy this many steps.
    rearm_steps: int = 1000
    #: A gap between step starts longer than max(gap_min_s, gap_factor x step time) is a restart.
    gap_min_s: float = 300.0
    gap_factor: float = 30.0
    #: At most this many rank findings per step; more at once is one fleet-wide finding.
    max_findings_per_step: int = 16

    def __post_init__(self) -> None:
        if not 0 < self.min_effect < 1 or not 0 < self.job_min_effect < 1:
            raise ValueError("min_effect and job_min_effect must be between 0 and 1")
        if self.spike_effect <= self.min_effect:
            raise ValueError("spike_effect must exceed min_effect")
        if not 0 < self.alpha < 1 or self.horizon_steps < 1:
            raise ValueError("alpha must be in (0, 1) and horizon_steps positive")
        if self.warmup_steps < 4 or self.settle_steps < 0 or self.job_window < 3 or self.job_confirm < 1:
            raise ValueError("warmup_steps >= 4, settle_steps >= 0, job_window >= 3, job_confirm >= 1")
        if self.stop_steps < 2 or self.rearm_steps < 1 or self.baseline_halflife_steps < 1:
            raise ValueError("stop_steps >= 2, rearm_steps and baseline_halflife_steps positive")


@dataclass
class Finding:
    """One degradation the watcher would open an investigation for."""

    kind: FindingKind
    step: int  # the job's step number when it was found
    start_unix: float  # that step's start time (NaN when the source has none)
    onset_step: int  # the step where the evidence began
    effect: float  # slowdown as a fraction (0.05 = 5% slower); stalls: the stall rate
    rank: int | None = None
    host: str | None = None
    gpu: int | None = None
    ranks: list[int] = field(default_factory=list)  # a host's or the fleet's affected ranks
    evidence: dict[str, float | int | str] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        if self.kind == "job_slowdown":
            return "job"
        if self.kind == "host_slowdown":
            return f"host:{self.host}"
        return f"rank:{self.rank}"


class WatchDetector:
    """The watcher's state for one job of ``n_ranks`` ranks; :meth:`update` once per step.

    ``hosts``/``gpus``: each rank's host name and local GPU index (labels, and the host grouping).
    """

    def __init__(
        self,
        n_ranks: int,
        cfg: WatchConfig | None = None,
        *,
        hosts: list[str] | None = None,
        gpus: list[int] | None = None,
    ) -> None:
        if n_ranks < 1:
            raise ValueError("n_ranks must be positive")
        self.cfg = cfg or WatchConfig()
        r = self.n_ranks = int(n_ranks)
        self.hosts = list(hosts) if hosts is not None else None
        if self.hosts is not None and len(self.hosts) != r:
            raise ValueError("hosts must name every rank")
        self.gpus = np.asarray(gpus if gpus is not None else [-1] * r, dtype=np.int32)
        codes: dict[str, int] = {}
        self._host_code = np.asarray(
            [codes.setdefault(h, len(codes)) for h in self.hosts] if self.hosts else [-1] * r, dtype=np.int32
        )
        self._host_names = list(codes)
        self._host_members: dict[int, np.ndarray] = {}
        if codes:
            order = np.argsort(self._host_code, kind="stable")
            bounds = np.searchsorted(self._host_code[order], np.arange(len(codes) + 1))
            self._host_members = {c: order[bounds[c] : bounds[c + 1]] for c in range(len(codes))}
        self._cols = _ref_cols(r, _DUR_SAMPLE)
        cfg = self.cfg
        self.arl0 = r * cfg.horizon_steps / cfg.alpha
        self.h_stall = math.log(self.arl0)
        self.k = cfg.min_effect / 2.0
        self.a = 1.0 - 0.5 ** (1.0 / cfg.baseline_halflife_steps)
        # per rank
        self.mu = np.ones(r)  # each rank's level (1.0 = the step median)
        self.var = np.zeros(r)
        self.nb = np.zeros(r, dtype=np.int32)
        self.h = np.full(r, np.inf)
        self.h2 = np.full(r, np.inf)
        self._warm_buf: np.ndarray | None = None  # (warmup_steps, ranks) while warming up
        self._warm_i = 0
        self.c = np.zeros(r)
        self.c_sum = np.zeros(r)
        self.c_zero = np.zeros(r, dtype=np.int64)  # last step the CUSUM was at 0 (onset - 1)
        self.b = np.zeros(r)
        self.prev_exc = np.zeros(r, dtype=bool)
        self.exc_run = np.zeros(r, dtype=np.int32)
        self.n_exc = np.zeros(r, dtype=np.int32)  # stall episodes since b was last 0
        self.b_zero = np.zeros(r, dtype=np.int64)
        self.miss_run = np.zeros(r, dtype=np.int32)
        self.opened = np.zeros(r, dtype=bool)
        self.quiet = np.zeros(r, dtype=np.int32)
        # per host / job
        self.host_opened = np.zeros(len(self._host_names), dtype=bool)
        self.ring = np.full(cfg.job_window, np.nan)
        self.job_base = math.nan
        self.job_run = 0
        self.job_opened = False
        self.job_quiet = 0
        self.job_onset = -1
        # scalars
        self.t = 0  # steps seen
        self.seg_t = 0  # steps since the last (re)start
        self.segments = 0
        self.last_step = -1
        self.last_start = math.nan
        self.p0 = 1e-4  # stall episodes per rank-step, followed online
        self.sigma_pool = math.nan
        self.skipped_fleet_events = 0
        self.restarts = 0

    # -- the step ------------------------------------------------------------------------------
    def update(
        self,
        step: int,
        start_unix: float | None,
        duration_row: np.ndarray,
        compute_row: np.ndarray,
    ) -> list[Finding]:
        """Advance by one step of every rank (NaN = no value); the findings it raises, if any."""
        cfg = self.cfg
        start = math.nan if start_unix is None else float(start_unix)
        if self._restarted(step, start):
            self._new_segment()
        self.last_step, self.last_start = int(step), start
        self.t += 1
        seg = self.seg_t
        self.seg_t += 1
        c_row = np.asarray(compute_row, dtype=np.float32).reshape(1, -1)
        if c_row.shape[1] != self.n_ranks:
            raise ValueError(f"expected {self.n_ranks} ranks, got {c_row.shape[1]}")
        d_row = np.asarray(duration_row, dtype=np.float32).reshape(1, -1)
        st = float(_row_quartiles(np.array(d_row[:, self._cols]))[1][0])
        findings: list[Finding] = []
        self._job_step(st, step, start, seg, findings)

        sample = _sample(c_row, _REF_SAMPLE)
        _, med, _ = _row_quartiles(sample.copy())
        m = float(med[0])
        if not (math.isfinite(m) and m > 0) or seg < cfg.settle_steps:
            return findings
        x = c_row[0] / np.float32(m)
        valid = ~np.isnan(x)
        n_valid = int(valid.sum())
        if n_valid < 0.5 * self.n_ranks:  # most ranks missing: the job, not a rank
            return findings
        out = np.abs(sample[0] / np.float32(m) - 1.0) > cfg.spike_effect
        if out.sum() > cfg.fleet_event_fraction * sample.shape[1]:
            self.skipped_fleet_events += 1
            return findings
        w0 = cfg.settle_steps
        if seg < w0 + cfg.warmup_steps:
            self._warm(x, valid)
            if seg == w0 + cfg.warmup_steps - 1:
                findings += self._close_warmup(step, start)
            return findings
        if not np.isfinite(self.h).any():  # a warm-up cut short by fleet events: close it now
            findings += self._close_warmup(step, start)
        findings += self._monitor(x, valid, n_valid, step, start)
        return findings

    def _restarted(self, step: int, start: float) -> bool:
        if self.t == 0:
            return False
        if step <= self.last_step:
            return True
        st = (
            self.job_base
            if math.isfinite(self.job_base)
            else float(np.nanmedian(self.ring))
            if np.isfinite(self.ring).any()
            else math.nan
        )
        gap = max(self.cfg.gap_min_s, self.cfg.gap_factor * st) if math.isfinite(st) else self.cfg.gap_min_s
        return math.isfinite(start) and math.isfinite(self.last_start) and start - self.last_start > gap

    def _new_segment(self) -> None:
        """A restart or relaunch: every baseline is estimated again (findings already open stay open)."""
        self.restarts += 1
        self.segments += 1
        self.seg_t = 0
        self._warm_buf, self._warm_i = None, 0
        self.h[:] = np.inf
        self.h2[:] = np.inf
        self.c[:] = 0.0
        self.c_sum[:] = 0.0
        self.b[:] = 0.0
        self.n_exc[:] = 0
        self.exc_run[:] = 0
        self.prev_exc[:] = False
        self.miss_run[:] = 0
        self.ring[:] = np.nan
        self.job_base = math.nan
        self.job_run = 0

    def _warm(self, x: np.ndarray, valid: np.ndarray) -> None:
        if self._warm_buf is None:
            self._warm_buf = np.full((self.cfg.warmup_steps, self.n_ranks), np.nan, dtype=np.float32)
        if self._warm_i < self._warm_buf.shape[0]:
            self._warm_buf[self._warm_i] = x
            self._warm_i += 1

    def _close_warmup(self, step: int, start: float) -> list[Finding]:
        """Each rank's level and spread from the warm-up's median and MAD (a hiccup or two in
        the warm-up moves neither), then the slow-from-the-start check."""
        cfg = self.cfg
        buf = self._warm_buf if self._warm_buf is not None else np.full((1, self.n_ranks), np.nan, np.float32)
        buf = buf[: max(self._warm_i, 1)]
        self._warm_buf, self._warm_i = None, 0
        nb = (~np.isnan(buf)).sum(axis=0)
        ok = nb >= max(2, cfg.warmup_steps // 2)
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mu = np.nanmedian(buf, axis=0).astype(np.float64)
                sd = 1.4826 * np.nanmedian(np.abs(buf - mu.astype(np.float32)), axis=0).astype(np.float64)
        ok &= np.isfinite(mu) & np.isfinite(sd)
        self.sigma_pool = max(float(np.median(sd[ok])), 1e-4) if ok.any() else 1e-3
        self.mu = np.where(ok, mu, 1.0)
        # a rank is at least as noisy as the typical rank: a quiet warm-up proves little
        self.var = np.maximum(np.where(ok, sd, 0.0), self.sigma_pool) ** 2
        self.nb = np.where(ok, nb, 0).astype(np.int32)
        self._thresholds()
        self.c[:] = 0.0
        self.c_sum[:] = 0.0
        self.c_zero[:] = step
        self.b[:] = 0.0
        self.b_zero[:] = step
        # slow from the start: above the fleet by the effect and by a Bonferroni z over ranks
        center = float(np.median(self.mu[ok])) if ok.any() else 1.0
        mad = float(np.median(np.abs(self.mu[ok] - center))) * 1.4826 if ok.any() else 0.0
        spread = max(mad, self.sigma_pool / math.sqrt(max(cfg.warmup_steps, 1)), 1e-4)
        z = (self.mu - center) / spread
        slow = (
            ok
            & ~self.opened
            & (z > bonferroni_z(cfg.alpha, self.n_ranks))
            & (self.mu - center >= cfg.min_effect)
        )
        idx = np.flatnonzero(slow)
        found = [
            self._rank_finding(
                "rank_slow_from_start",
                int(j),
                step,
                start,
                step - cfg.warmup_steps,
                float(self.mu[j] / center - 1.0),
                {"z": round(float(z[j]), 2), "baseline_steps": int(self.nb[j])},
            )
            for j in idx[: cfg.max_findings_per_step]
        ]
        self.opened[idx] = True
        self.quiet[idx] = 0
        return found + self._hosts_of(idx, step, start)

    def _thresholds(self) -> None:
        """Per-rank decision interval: Siegmund's ARL0 = ranks x horizon / alpha for k = min_effect/2."""
        sig = np.sqrt(self.var)
        kz = np.maximum(self.k / sig, 0.25)
        hz = np.log(self.arl0 * 2.0 * kz * kz) / (2.0 * kz) - 1.166
        # ... and needs MIN_RUN such steps at least: one step, however late, is a hiccup
        self.h = np.maximum(np.maximum(hz, 3.0) * sig, MIN_RUN * self.k)
        self.h2 = 2.0 * self.h

    def _monitor(
        self, x: np.ndarray, valid: np.ndarray, n_valid: int, step: int, start: float
    ) -> list[Finding]:
        cfg = self.cfg
        t = self.t
        r = np.where(valid, x - self.mu, 0.0)
        sig = np.sqrt(self.var)
        lim = np.maximum(CLIP * sig, 2.0 * self.k)  # a very steady rank still gains k per slow step
        rc = np.clip(r, -lim, lim)
        # A stall step is the stall detector's evidence, neutral here: a data-loader hiccup of a
        # few steps neither raises nor lowers suspicion of a sustained slowdown.
        exc = valid & (r > cfg.spike_effect)
        rc[exc] = self.k
        c = self.c
        c += rc
        c -= self.k
        np.maximum(c, 0.0, out=c)
        # capped at twice the interval: a rank that recovers is back at 0 in about 2h/k steps,
        # and may re-arm (the cap is above the interval, so it never hides a finding)
        np.minimum(c, self.h2, out=c)
        zero = c == 0.0
        self.c_zero[zero] = step
        # the mean lateness since the CUSUM last left 0: the effect a finding reports
        self.c_sum += np.minimum(r, cfg.spike_effect)
        self.c_sum[zero] = 0.0
        # ... and a rank above the stall cut for sustain_steps steps running is slow, not stalling
        self.exc_run += exc
        self.exc_run[~exc] = 0
        # stall episodes against the fleet's own episode rate
        onset = exc & ~self.prev_exc
        self.prev_exc = exc
        n_on = int(onset.sum())
        calm = self.b == 0.0
        rate = int((onset & calm).sum()) / max(n_valid, 1)
        self.p0 = min(max(self.p0 + 2e-4 * (rate - self.p0), 1e-6), 0.01)
        p1 = max(0.1, 10 * self.p0)
        up, dn = math.log(p1 / self.p0), math.log((1 - p1) / (1 - self.p0))
        b = self.b
        b += dn
        if n_on:
            b[onset] += up - dn
            self.n_exc[onset] += 1
        np.maximum(b, 0.0, out=b)
        bz = b == 0.0
        self.b_zero[bz] = step
        self.n_exc[bz] = 0
        # missing ranks while the others report
        miss = ~valid
        self.miss_run += miss
        self.miss_run[valid] = 0
        # the baseline follows slowly where nothing is suspected
        follow = (c < 0.5 * self.h) & bz & valid & ~exc
        a = self.a
        self.mu += np.where(follow, a * rc, 0.0)
        self.var += np.where(follow, a * (rc * rc - self.var), 0.0)
        np.maximum(self.var, self.sigma_pool**2, out=self.var)
        if t % 256 == 0:
            self._thresholds()
        # hysteresis: an opened rank re-arms after rearm_steps healthy steps
        if self.opened.any():
            healthy = (c < 0.5 * self.h) & (b < 0.5 * self.h_stall) & valid
            self.quiet = np.where(healthy, self.quiet + 1, 0).astype(np.int32)
            rearm = self.opened & (self.quiet >= cfg.rearm_steps)
            if rearm.any():
                self.opened[rearm] = False
                if self._host_members:  # a host re-arms with the last of its ranks
                    known = self._host_code >= 0
                    still = np.bincount(self._host_code[self.opened & known], minlength=len(self._host_names))
                    self.host_opened &= still > 0
        shift = (c > self.h) | (self.exc_run >= cfg.sustain_steps)
        stall = b > self.h_stall
        stopped = self.miss_run >= cfg.stop_steps
        new = (shift | stall | stopped) & ~self.opened
        if not new.any():
            return []
        idx = np.flatnonzero(new)
        if self._host_members:  # the ranks of a host already found are part of that finding
            folded = self.host_opened[np.maximum(self._host_code[idx], 0)] & (self._host_code[idx] >= 0)
            self.opened[idx[folded]] = True
            self.quiet[idx[folded]] = 0
            idx = idx[~folded]
            if idx.size == 0:
                return []
        if idx.size > cfg.max_findings_per_step:  # many ranks at once: one fleet-wide finding
            self.opened[idx] = True
            self.quiet[idx] = 0
            kind: FindingKind = "rank_stopped" if stopped[idx].mean() > 0.5 else "rank_slowdown"
            f = Finding(
                kind=kind,
                step=step,
                start_unix=start,
                onset_step=int(self.c_zero[idx].min()) + 1,
                effect=float(np.median(self.c_sum[idx] / np.maximum(step - self.c_zero[idx], 1))),
                ranks=[int(j) for j in idx[:256]],
                evidence={"ranks_affected": int(idx.size)},
            )
            return [f]
        out: list[Finding] = []
        for j in map(int, idx):
            if stopped[j]:
                out.append(
                    self._rank_finding(
                        "rank_stopped",
                        j,
                        step,
                        start,
                        step - int(self.miss_run[j]) + 1,
                        1.0,
                        {"steps_missing": int(self.miss_run[j]), "peers_reporting": n_valid},
                    )
                )
            elif shift[j] and self.exc_run[j] >= cfg.sustain_steps:
                out.append(
                    self._rank_finding(
                        "rank_slowdown",
                        j,
                        step,
                        start,
                        step - int(self.exc_run[j]) + 1,
                        float(r[j] / self.mu[j]),
                        {"steps_above_stall_cut": int(self.exc_run[j]), "stall_cut": cfg.spike_effect},
                    )
                )
            elif shift[j]:
                run = max(step - int(self.c_zero[j]), 1)
                out.append(
                    self._rank_finding(
                        "rank_slowdown",
                        j,
                        step,
                        start,
                        int(self.c_zero[j]) + 1,
                        float(self.c_sum[j] / run) / float(self.mu[j]),
                        {
                            "cusum": round(float(c[j]), 4),
                            "threshold": round(float(self.h[j]), 4),
                            "baseline_vs_median": round(float(self.mu[j]), 4),
                            "sigma": round(float(sig[j]), 5),
                        },
                    )
                )
            else:
                run = max(step - int(self.b_zero[j]), 1)
                out.append(
                    self._rank_finding(
                        "rank_stalls",
                        j,
                        step,
                        start,
                        int(self.b_zero[j]) + 1,
                        float(self.n_exc[j]) / run,
                        {
                            "stall_episodes": int(self.n_exc[j]),
                            "over_steps": run,
                            "fleet_episode_rate": float(f"{self.p0:.3g}"),
                            "stall_cut": cfg.spike_effect,
                        },
                    )
                )
        self.opened[idx] = True
        self.quiet[idx] = 0
        return out + self._hosts_of(idx, step, start)

    def _rank_finding(self, kind, j, step, start, onset, effect, ev) -> Finding:
        return Finding(
            kind=kind,
            step=int(step),
            start_unix=start,
            onset_step=int(onset),
            effect=round(float(effect), 4),
            rank=j,
            host=self.hosts[j] if self.hosts else None,
            gpu=int(self.gpus[j]) if self.gpus[j] >= 0 else None,
            evidence=ev,
        )

    def _hosts_of(self, idx: np.ndarray, step: int, start: float) -> list[Finding]:
        """A host whose ranks are at least half suspect (and two or more) is one host finding."""
        if not self._host_members or idx.size == 0:
            return []
        out = []
        for code in np.unique(self._host_code[idx]):
            code = int(code)
            if code < 0 or self.host_opened[code]:
                continue
            members = self._host_members[code]
            suspect = self.opened[members] | (self.c[members] > 0.5 * self.h[members])
            if members.size >= 2 and suspect.sum() >= max(2, math.ceil(members.size / 2)):
                self.host_opened[code] = True
                bad = members[suspect]
                out.append(
                    Finding(
                        kind="host_slowdown",
                        step=int(step),
                        start_unix=start,
                        onset_step=int(self.c_zero[bad].min()) + 1,
                        effect=round(
                            float(
                                np.median(
                                    self.c_sum[bad] / np.maximum(step - self.c_zero[bad], 1) / self.mu[bad]
                                )
                            ),
                            4,
                        ),
                        host=self._host_names[code],
                        ranks=[int(j) for j in bad],
                        evidence={"ranks_suspect": int(bad.size), "ranks_on_host": int(members.size)},
                    )
                )
        return out

    # -- the job -------------------------------------------------------------------------------
    def _job_step(self, st: float, step: int, start: float, seg: int, out: list[Finding]) -> None:
        cfg = self.cfg
        w = cfg.job_window
        self.ring[seg % w] = st
        if seg < cfg.settle_steps + w:
            return
        # A low quantile: stalls, checkpoints and evaluations only add time to some steps, a
        # slower job moves every step, the fastest ones too.
        rm = float(np.nanquantile(self.ring, cfg.job_quantile)) if np.isfinite(self.ring).any() else math.nan
        if not math.isfinite(rm) or rm <= 0:
            return
        if not math.isfinite(self.job_base):
            self.job_base = rm
            return
        ratio = rm / self.job_base - 1.0
        if ratio >= cfg.job_min_effect:
            if self.job_run == 0:
                self.job_onset = step
            self.job_run += 1
        else:
            self.job_run = 0
        if ratio < cfg.job_min_effect / 2:
            self.job_base += self.a * (rm - self.job_base)
            self.job_quiet += 1
            if self.job_opened and self.job_quiet >= cfg.rearm_steps:
                self.job_opened = False
        else:
            self.job_quiet = 0
        if self.job_run >= cfg.job_confirm and not self.job_opened:
            self.job_opened = True
            out.append(
                Finding(
                    kind="job_slowdown",
                    step=int(step),
                    start_unix=start,
                    onset_step=max(int(self.job_onset) - w // 2, 0),
                    effect=round(ratio, 4),
                    evidence={
                        "step_time_s": round(rm, 4),
                        "baseline_step_time_s": round(self.job_base, 4),
                        "window_steps": w,
                    },
                )
            )

    # -- persistence ---------------------------------------------------------------------------
    _ARRAYS = (
        "mu", "var", "nb", "h", "c", "c_sum", "c_zero", "b", "prev_exc", "exc_run", "n_exc", "b_zero", "miss_run",
        "opened", "quiet", "host_opened", "ring", "gpus", "_host_code",
    )  # fmt: skip
    _SCALARS = (
        "job_base", "job_run", "job_opened", "job_quiet", "job_onset", "t", "seg_t", "segments",
        "last_step", "last_start", "p0", "sigma_pool", "skipped_fleet_events", "restarts",
    )  # fmt: skip

    def to_bytes(self) -> bytes:
        """The whole state, as an ``.npz`` (no pickles): what :meth:`from_bytes` resumes from."""
        import json

        meta = {
            "version": _STATE_VERSION,
            "n_ranks": self.n_ranks,
            "cfg": asdict(self.cfg),
            "hosts": self._host_names,
            "scalars": {k: getattr(self, k) for k in self._SCALARS},
        }
        meta["warm_i"] = self._warm_i
        warm = self._warm_buf if self._warm_buf is not None else np.zeros((0, self.n_ranks), np.float32)
        buf = io.BytesIO()
        np.savez(
            buf,
            meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            warm_buf=warm,
            **{k: getattr(self, k) for k in self._ARRAYS},
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, cfg: WatchConfig | None = None) -> WatchDetector:
        """A detector resumed from :meth:`to_bytes`; ``cfg`` (when given) replaces the saved knobs.

        Raises ValueError for anything that is not a state this version wrote.
        """
        import json
        import zipfile

        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                meta = json.loads(bytes(z["meta"]).decode())
                arrays = {k: z[k] for k in (*cls._ARRAYS, "warm_buf")}
        except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise ValueError(f"not a watch state: {exc}") from None
        try:
            return cls._restore(meta, arrays, cfg)
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise ValueError(f"not a watch state: {type(exc).__name__} {exc}") from None

    @classmethod
    def _restore(cls, meta: dict, arrays: dict[str, np.ndarray], cfg: WatchConfig | None) -> WatchDetector:
        if not isinstance(meta, dict) or meta.get("version") != _STATE_VERSION:
            raise ValueError("not a watch state of this version")
        r = int(meta["n_ranks"])
        known = {f.name for f in fields(WatchConfig)}
        saved = WatchConfig(**{k: v for k, v in meta["cfg"].items() if k in known})
        names = list(meta["hosts"])
        codes = arrays["_host_code"]
        hosts = [names[c] for c in codes] if names and (codes >= 0).all() else None
        det = cls(r, cfg or saved, hosts=hosts, gpus=arrays["gpus"].tolist())
        for k in cls._ARRAYS:
            cur = getattr(det, k)
            a = arrays[k]
            if np.shape(cur) != a.shape:
                raise ValueError(f"watch state: {k} has shape {a.shape}, expected {np.shape(cur)}")
            setattr(det, k, a.astype(np.asarray(cur).dtype, copy=True))
        for k, v in meta["scalars"].items():
            if k in cls._SCALARS:
                setattr(det, k, type(getattr(det, k))(v) if v is not None else v)
        det.h2 = 2.0 * det.h
        warm = arrays["warm_buf"]
        if warm.shape[0]:
            if warm.shape != (det.cfg.warmup_steps, r):
                raise ValueError("watch state: the warm-up buffer does not match")
            det._warm_buf = warm.astype(np.float32, copy=True)
            det._warm_i = min(int(meta.get("warm_i", 0)), warm.shape[0])
        if cfg is not None and np.isfinite(det.h).any():
            det._thresholds()  # new knobs, new decision intervals
        return det
