"""Result models of the detectors: plain JSON-able pydantic models, one per detector.

Units: a "normalized" value is a rank's value at a step divided by the step's median over ranks
(``relative``: 1.0 = the typical rank) or minus it (``additive``). "Lateness" and "effect" are the
normalized value minus the typical one: 0.03 means 3% slower than the typical rank. Step positions
are given twice: ``*_index`` (0-based position in time order) and ``*_step`` (the step number, when
the caller passed step labels).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Units = Literal["relative", "additive"]
Detector = Literal["peer", "change_point", "spike"]
TaxPattern = Literal["concentrated", "diffuse", "none"]
SlowdownWhere = Literal["none", "compute", "barrier_tax", "communication", "gaps", "mixed", "unknown"]
StragglerKind = Literal["persistent", "onset", "intermittent"]
Method = Literal["bonferroni", "bh"]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RankRef(_Result):
    """Who a finding is about."""

    rank: int
    """Rank id (from the table's rank labels; the column position when none were given)."""
    host: str | None = None
    """Host of the rank, when a rank-to-host map was given."""


class PeerFlag(RankRef):
    """A rank whose typical lateness stands out from the fleet's."""

    z: float
    """Robust z of the rank's winsorized mean lateness against the fleet (median / MAD)."""
    p_value: float
    """One-sided normal tail of ``z`` (before multiple-testing correction)."""
    effect: float
    """Winsorized mean lateness minus the fleet's center (0.03 = 3% slower than the typical rank)."""
    p50: float | None = None
    """Exact median lateness of the rank over all its steps (None from the streaming detectors)."""
    p99: float | None = None
    """Exact 99th-percentile lateness of the rank over its steps (None from the streaming detectors)."""
    flagged: bool = True
    """False for ranks listed only as the closest to the threshold."""
    first_index: int
    """Where its lateness most likely began (max suffix-sum estimate; 0 = from the first step)."""
    first_step: int | None = None
    """Step number of ``first_index``."""


class PeerOutliers(_Result):
    """Per-rank robust z-scores against the fleet, with a cut that accounts for how many ranks are tested."""

    statistic: Literal["winsorized_mean"] = "winsorized_mean"
    """Per-rank location: the mean of the normalized value winsorized at the per-step band."""
    units: Units
    """How values were normalized per step."""
    n_ranks: int
    """Ranks tested."""
    n_steps: int
    """Steps seen."""
    center: float
    """Fleet median of the per-rank statistic."""
    scale: float
    """Fleet spread of the per-rank statistic (MAD sigma, floored at the per-step spread / sqrt(steps))."""
    method: Method
    """Multiple-testing control: Bonferroni (family-wise) or Benjamini-Hochberg (false discovery rate)."""
    alpha: float
    """Family-wise error (Bonferroni) or false-discovery rate (BH)."""
    threshold_z: float
    """The z a rank must exceed (Bonferroni: one-sided normal cut at alpha / n_ranks)."""
    min_effect: float
    """Smallest effect worth flagging (a significant 0.2% is not actionable)."""
    flagged: list[PeerFlag] = Field(default_factory=list)
    """Ranks over both cuts, worst first."""
    top: list[PeerFlag] = Field(default_factory=list)
    """The highest-z ranks, flagged or not (what nearly crossed)."""


class ChangeFlag(RankRef):
    """A rank whose own series shifted up after its baseline."""

    statistic: float
    """Largest CUSUM value reached (standardized units)."""
    onset_index: int
    """First step of the shift: one after the CUSUM last sat at zero before the alarm."""
    onset_step: int | None = None
    """Step number of ``onset_index``."""
    alarm_index: int
    """Step at which the CUSUM crossed the threshold (onset + detection delay)."""
    alarm_step: int | None = None
    """Step number of ``alarm_index``."""
    shift: float
    """Estimated size of the shift in normalized units: sigma * (k_eff + C_alarm / run length)."""
    baseline: float
    """The rank's own baseline level (winsorized mean lateness over the baseline window)."""


class ChangePoints(_Result):
    """Self-baseline change points: a one-sided CUSUM per rank on its own standardized series."""

    enabled: bool
    """False when the baseline window is too short to calibrate on."""
    note: str | None = None
    """Why it is disabled, when it is."""
    n_baseline: int
    """Steps in the baseline window (the first ones, in time order)."""
    k: float
    """Reference value (standardized): shifts of about 2k sigma are detected fastest."""
    k_eff: float
    """Reference used: k plus the worst baseline-mean error over the fleet (z_alpha/R / sqrt(n_baseline))."""
    h: float
    """Decision threshold, from Siegmund's ARL approximation at ARL0 = steps * ranks / alpha."""
    alpha: float
    """Probability of any false alarm over the fleet and the run, by construction."""
    min_effect: float
    """Smallest shift worth flagging (normalized units)."""
    flagged: list[ChangeFlag] = Field(default_factory=list)
    """Ranks whose CUSUM crossed h with a shift of at least ``min_effect``, earliest first."""


class SpikeFlag(RankRef):
    """A rank that exceeds the high per-step cut far more often than chance allows."""

    count: int
    """Steps above the cut."""
    n_steps: int
    """Steps the rank logged."""
    rate: float
    """count / n_steps."""
    expected: float
    """Expected count under the null (n_steps * p0)."""
    p_value: float
    """Binomial upper tail P(K >= count) under p0, before correction."""
    effect: float | None = None
    """Mean lateness over the exceeding steps (None from the streaming detectors)."""
    first_index: int
    """First step above the cut."""
    first_step: int | None = None
    """Step number of ``first_index``."""


class Spikes(_Result):
    """Intermittent stragglers: exceedance counts of a high per-step robust cut vs the binomial null."""

    cut_z: float
    """Per-step cut: typical + max(cut_z * per-step robust sigma, min_effect)."""
    min_effect: float
    """Floor of the cut in normalized units."""
    p0: float
    """Null exceedance probability per step: max(normal tail of cut_z, pooled fleet rate)."""
    p0_source: Literal["normal", "pooled"]
    """Which of the two set p0 (pooled: the fleet's tail is heavier than normal)."""
    critical_count: int
    """Smallest count flagged: binomial tail <= alpha / n_ranks (and at least 3); the count must
    also be at least 2% of the rank's steps."""
    alpha: float
    """Family-wise error over the ranks (Bonferroni)."""
    flagged: list[SpikeFlag] = Field(default_factory=list)
    """Ranks at or over the critical count, most exceedances first."""


class BarrierTax(_Result):
    """What the barrier costs: per step, the last arrival's compute minus the typical rank's."""

    n_steps: int
    """Steps with data."""
    total_step_time_s: float
    """Sum of step times (median duration over ranks per step)."""
    total_lost_s: float
    """Sum over steps of max compute - median compute: time the fleet waited for its slowest rank."""
    lost_fraction: float
    """total_lost_s / total_step_time_s."""
    median_tax_fraction: float
    """Median over steps of tax / step time."""
    p99_tax_fraction: float
    """99th percentile over steps of tax / step time."""
    worst_index: int
    """Step with the largest tax."""
    worst_step: int | None = None
    """Step number of ``worst_index``."""
    baseline_tax_fraction: float
    """Median tax fraction over the baseline window (first 20% of steps)."""
    late_tax_fraction: float
    """Median tax fraction over the late window (last 20% of steps)."""
    rising: bool
    """Whether a CUSUM on the job's tax fraction (against its baseline) crossed its threshold."""
    onset_index: int | None = None
    """Where the rise began, when ``rising``."""
    onset_step: int | None = None
    """Step number of ``onset_index``."""


class RankShare(RankRef):
    """One rank's part of the barrier tax."""

    last_count: int
    """Steps at which it arrived last."""
    share: float
    """Fraction of the total tax lost while waiting for it."""
    lost_s: float
    """Seconds of tax attributed to it."""


class HostShare(_Result):
    """One host's part of the barrier tax."""

    host: str
    """Host name."""
    ranks: int
    """Ranks on the host."""
    last_count: int
    """Steps at which one of its ranks arrived last."""
    share: float
    """Fraction of the total tax attributed to its ranks."""
    lost_s: float
    """Seconds of tax attributed to its ranks."""


class TaxAttribution(_Result):
    """Who the barrier waits for: concentrated on a few ranks or hosts, or diffuse tail noise."""

    pattern: TaxPattern
    """concentrated: evict the few; diffuse: tail noise spread over everyone; none: no tax data."""
    concentrated_on: Literal["ranks", "hosts"] | None = None
    """Level at which the tax is concentrated, when it is."""
    top_k: int
    """Size of the group whose share is reported (the significant ranks/hosts, or 3)."""
    top_k_share: float
    """Share of the tax held by the top-k ranks (or hosts, when concentrated on hosts)."""
    null_share: float
    """Share the same top-k would hold if every rank were equally likely to be last."""
    critical_count: int
    """Last-arrival count a rank must reach to be significant (binomial, alpha / n_ranks)."""
    significant_ranks: list[int] = Field(default_factory=list)
    """Ranks last far more often than 1/R of the steps."""
    significant_hosts: list[str] = Field(default_factory=list)
    """Hosts last far more often than their rank count allows."""
    top_ranks: list[RankShare] = Field(default_factory=list)
    """Largest shares, up to 10."""
    top_hosts: list[HostShare] = Field(default_factory=list)
    """Largest host shares, up to 5 (when a rank-to-host map was given)."""


class UniformSlowdown(_Result):
    """Job-level view: did the whole job slow down, since when, and where did the time go."""

    regressed: bool
    """Late-window step period at least ``min_ratio`` above the baseline, and significant."""
    ratio: float
    """Typical step period (start to next start; step time when unknown), late / baseline. Typical:
    the 20%-trimmed mean, robust to restarts and stable when step times are bimodal."""
    step_time_ratio: float
    """Typical step time (median duration over ranks), late / baseline."""
    baseline_period_s: float
    """Typical step period in the baseline window."""
    late_period_s: float
    """Typical step period in the late window."""
    z: float
    """Mann-Whitney z of late vs baseline periods (distribution-free; one-sided cut at alpha)."""
    onset_index: int | None = None
    """Where the regression began (CUSUM on the job's own period series)."""
    onset_step: int | None = None
    """Step number of ``onset_index``."""
    where: SlowdownWhere
    """Component that grew most: compute (everyone's own work), barrier_tax (waiting for the last
    arrival), communication (after the last arrival), gaps (between steps: input pipeline)."""
    deltas_s: dict[str, float] = Field(default_factory=dict)
    """Late minus baseline typical value per component, in seconds per step."""
    shared_by_all: bool | None = None
    """When compute rose: whether at least 90% of ranks' own compute rose with it."""
    frac_ranks_slower: float | None = None
    """Fraction of ranks whose own compute rose by at least half the fleet's median rise."""
    min_ratio: float
    """Smallest slowdown reported as a regression."""
    n_baseline: int
    """Steps in each window."""
    restarted: bool = False
    """The series holds a restart (a start-to-start interval far longer than the rest, or a step
    number that does not advance): the job's processes, and their settings, may differ across it."""
    onset_at_restart: bool = False
    """The regression is the run after the last restart against the run before it: it began when
    the job was relaunched."""
    outside_rise_s: float | None = None
    """Time outside compute (step time after the typical rank's compute; the whole step time
    without compute_s), late minus baseline, plain mean over steps, seconds."""
    outside_median_share: float | None = None
    """The rise of the median step's time outside compute as a share of ``outside_rise_s``: near 1
    when every step got slower, near 0 when a minority of long steps carries the rise."""


class DivergentRank(RankRef):
    """A replica that disagrees with its peers."""

    kind: Literal["checksum", "loss"]
    """checksum: its param_checksum differs from its step's majority; loss: its loss is far off."""
    first_index: int
    """First step of disagreement."""
    first_step: int | None = None
    """Step number of ``first_index``."""
    n_steps: int
    """Steps at which it disagreed."""


class ReplicaDivergence(_Result):
    """Data-parallel replicas must agree: lone disagreeing ranks are the signature of silent corruption."""

    checksum_checked: bool
    """Whether param_checksum was available."""
    loss_checked: bool
    """Whether loss was available."""
    flagged: list[DivergentRank] = Field(default_factory=list)
    """Disagreeing ranks, earliest first."""
    groups_per_step: float | None = None
    """Median number of checksum groups of size >= 2 per step (1 for pure data parallelism)."""


class Straggler(RankRef):
    """A slow rank, as the suite sees it."""

    kind: StragglerKind
    """persistent: slow over most steps; onset: slowed down at some step; intermittent: spikes."""
    detected_by: list[Detector]
    """Detectors that flagged it."""
    lateness: float
    """How late it is: its median lateness since ``first_index`` (intermittent: mean over its spike
    steps), normalized units (0.03 = 3% slower than the typical rank)."""
    z: float
    """Its robust z against the fleet."""
    first_index: int
    """Where it started being slow."""
    first_step: int | None = None
    """Step number of ``first_index``."""


class StepAnalysis(_Result):
    """The whole suite over one steps table."""

    n_steps: int
    """Steps (S)."""
    n_ranks: int
    """Ranks (R)."""
    has_compute: bool
    """Whether compute_s was recorded (without it only job-level views are possible)."""
    stragglers: list[Straggler] = Field(default_factory=list)
    """Slow ranks, worst first."""
    pattern: TaxPattern
    """Whether the barrier tax is concentrated (evict) or diffuse (tail noise)."""
    slowdown: UniformSlowdown | None = None
    """Job-level regression, and where it is."""
    tax: BarrierTax | None = None
    """Barrier tax totals."""
    attribution: TaxAttribution | None = None
    """Who the barrier waits for."""
    peers: PeerOutliers | None = None
    """Per-rank z-scores against the fleet."""
    change_points: ChangePoints | None = None
    """Per-rank self-baseline change points."""
    spikes: Spikes | None = None
    """Intermittent exceedances."""
    divergence: ReplicaDivergence | None = None
    """Replica disagreement (checksum, loss)."""
    notes: list[str] = Field(default_factory=list)
    """What could not be done and why, plus the table's reading warnings."""
    summary: str
    """One paragraph for a person."""


class StreamSnapshot(_Result):
    """What the streaming detectors know after the steps seen so far (same decisions as the batch)."""

    n_steps: int
    """Steps seen."""
    n_ranks: int
    """Ranks tracked."""
    baseline_complete: bool
    """Whether the baseline window is full (change points run only after it)."""
    stragglers: list[Straggler] = Field(default_factory=list)
    """Slow ranks so far, worst first (lateness from running, winsorized estimates)."""
    pattern: TaxPattern
    """Whether the barrier tax so far is concentrated or diffuse."""
    peers: PeerOutliers
    """Per-rank z-scores against the fleet (p50/p99 not tracked: None)."""
    change_points: ChangePoints
    """Per-rank CUSUM alarms."""
    spikes: Spikes
    """Exceedance counts."""
    tax: BarrierTax
    """Barrier tax so far."""
    attribution: TaxAttribution
    """Who the barrier waits for, so far."""
    slowdown: UniformSlowdown | None = None
    """Job-level regression of the step period so far (None before two baseline windows)."""
