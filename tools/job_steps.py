"""The job layer: per-rank step statistics from ``job/steps.csv`` (the straggler signal).

Every step of a synchronous job ends at a barrier, so step durations are equal across ranks and
the fleet mean hides a slow rank. The culprit shows in what each rank does *before* the barrier:
its compute time (largest for the slow rank) and its lateness. The numpy detectors
(``tools.detectors``) do the statistics; this tool turns their results into signals:
stragglers by GPU, hosts whose ranks are all slow, job-wide slowdowns by where the time went
(compute, communication, gaps between steps), hangs, and replicas that disagree.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from forensic.sandbox import ForensicError
from forensic.tools._incident_text import (
    expected_step_s,
    slow_from_start,
    stated_slowdown_ratio,
    states_change,
)
from forensic.tools.base import (
    Signal,
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    gpu_component,
    register,
    utc_text,
)
from forensic.tools.detectors.core import analyze
from forensic.tools.detectors.models import StepAnalysis
from forensic.tools.detectors.steps import StepTable, load_steps_csv
from forensic.tools.fleet_activity import running_after
from forensic.tools.parsers.step_files import merge_step_files

#: Share of a host's ranks that must straggle together to blame the host, not one GPU.
HOST_SHARE = 0.75
#: A job whose steps stop this long (in step periods, and at least 5 minutes) before the window
#: ends has hung.
HANG_PERIODS = 20
HANG_MIN_S = 300.0
#: Share of the window the steps must span for "no regression" to clear the job (job_steady,
#: steps_clean): fourteen minutes of steady steps say nothing about the hour after them.
CLEAR_WINDOW_SHARE = 0.8
#: A job this much slower than the step time its incident states as expected is slow (from start).
STATED_RATIO = 1.10
#: The time outside compute rose by at least this share of the baseline period, and the median
#: step shows at most ``BURST_MEDIAN_SHARE`` of that rise: a minority of long steps carries it.
BURST_MIN_RISE = 0.10
BURST_MEDIAN_SHARE = 0.40


class JobStepsInput(ToolInput):
    """The job-steps tool reads the whole job; it takes no arguments."""


def load_table(ctx: ToolContext) -> tuple[StepTable, list[str]] | None:
    def build() -> tuple[StepTable, list[str]] | None:
        docs = ctx.source.steps()  # steps.csv, or one steps*.csv per rank: merged here
        if not docs:
            return None
        return load_steps_csv(merge_step_files([(d.source, d.text) for d in docs])), [d.source for d in docs]

    return ctx.memo("steps", build)


def table_or_result(ctx: ToolContext) -> tuple[StepTable, list[str]] | ToolResult:
    """The steps table and its sources, or the result a tool returns when there is none to read."""
    try:
        got = load_table(ctx)
    except ForensicError as exc:
        return ToolResult(status="error", summary=f"job/steps.csv unusable: {exc}")
    if got is None:
        return ToolResult(status="no_data", summary="no job/steps.csv recorded")
    outside = outside_window(got[0], ctx.source.window)
    if outside is not None and outside["stale"]:
        return ToolResult(
            status="no_data",
            source=got[1],
            summary=str(outside["detail"]),
            data={"outside_window": [outside]},
        )
    return got


def _placement(ctx: ToolContext) -> str:
    topology = ctx.source.topology
    if topology is not None and topology.ranks:
        return "topology"
    return "host_order" if topology is not None else "guessed"


def _span(table: StepTable) -> list[float] | None:
    """[first, last] step start in unix seconds; None for relative times or no steps."""
    times = table.start[np.isfinite(table.start)] if table.start.size else table.start
    if times.size == 0 or float(times.min()) < 1e9:
        return None
    return [float(times.min()), float(times.max())]


def outside_window(table: StepTable, window: tuple[float | None, float | None]) -> dict[str, object] | None:
    """When no step of the table started inside the window: what, when, and how it is weighed.

    Steps that end within one window length before it (or start within one after it) are the
    job's latest steps (a job that stopped just before the window has hung): said, and read.
    Further away (a job that stopped long ago, or a stale file left in the job folder) they say
    nothing about the window: ``stale``, not weighed; read as current they looked like a hang.
    Relative times (not unix seconds) cannot be compared with the window and are left alone.
    """
    start, end = window
    times = table.start[np.isfinite(table.start)] if table.start.size else table.start
    if start is None or end is None or times.size == 0:
        return None
    first, last = float(times.min()), float(times.max())
    if first < 1e9 or (last >= start and first <= end):
        return None
    span = max(end - start, 0.0)
    stale = last < start - span or first > end + span
    side = (
        f"its last step started at {utc_text(last)}, before"
        if last < start
        else f"its first step started at {utc_text(first)}, after"
    )
    how = (
        "a stale file or a job that stopped long before, not weighed"
        if stale
        else "read as the job's latest steps"
    )
    return {
        "what": "job/steps.csv",
        "first": first,
        "last": last,
        "stale": stale,
        "detail": f"job/steps.csv has no step in the window: {side} the window ({utc_text(start)} to {utc_text(end)}); {how}",
    }


@register
class JobSteps(Tool):
    name = "job_steps"
    emits = frozenset(
        {
            "host_stragglers",
            "job_hang",
            "job_slowdown",
            "job_steady",
            "replica_divergence",
            "slowdown_in_comm",
            "slowdown_bursty",
            "slowdown_in_compute",
            "slowdown_in_gaps",
            "slowdown_mid_run",
            "slowdown_since_launch",
            "slowdown_unattributed",
            "steps_clean",
            "straggler",
        }
    )
    description = (
        "Per-rank step statistics of the job (job/steps.csv): stragglers by compute share and arrival lateness "
        "with a fleet-size-aware threshold, change points and intermittent spikes, whether lost time is "
        "concentrated or diffuse, job-wide slowdown and where it goes (compute, communication, gaps between "
        "steps), hangs, and data-parallel replicas whose checksums disagree. No arguments."
    )
    Input = JobStepsInput
    cost = 1.0

    def run(self, ctx: ToolContext, args: JobStepsInput) -> ToolResult:
        got = table_or_result(ctx)
        if isinstance(got, ToolResult):
            return got
        table, sources = got
        placement = ctx.source.rank_map()
        rank_host = {r: h for r, (h, _) in placement.items()}
        a = analyze(table, rank_host=rank_host)
        cut = self._cut(ctx, table)
        signals = self._signals(ctx, table, a, placement, hang_possible=cut is None)
        # Without compute_s no rank can be told apart from the others: the tool looked at the job,
        # not at any GPU or host, and the absence of a straggler there is no evidence.
        covered = ["job"]
        if table.compute is not None:
            covered += [gpu_component(h, g) for h, g in placement.values()] + sorted(set(rank_host.values()))
        if cut is not None:
            covered = []  # the steps stop long before the window does: their silence covers none of the rest
        return ToolResult(
            status="ok",
            # The summary is read by people; the signals travel as data in ``signals``.
            summary=a.summary,
            source=sources,
            signals=signals,
            covered=covered,
            partial=[cut] if cut else [],
            data={
                "n_steps": a.n_steps,
                "n_ranks": a.n_ranks,
                "has_compute": a.has_compute,
                # How much of the job and the window the steps cover: complete per-rank telemetry
                # can clear every rank where another file was read only in part (harness.health).
                "ranks_expected": ctx.source.incident.job.ranks,
                "span_unix": _span(table),
                "pattern": a.pattern,
                "stragglers": [s.model_dump() for s in a.stragglers[:20]],
                "n_stragglers": len(a.stragglers),
                # Where a rank's GPU comes from: topology.json's placement (or its host order), or a
                # guess over the hosts that happen to be recorded (no topology), which may be wrong.
                "placement": _placement(ctx),
                "slowdown": a.slowdown.model_dump() if a.slowdown else None,
                "notes": a.notes[:10],
                **({"outside_window": [near]} if (near := outside_window(table, ctx.source.window)) else {}),
            },
        )

    def _signals(
        self,
        ctx: ToolContext,
        table: StepTable,
        a: StepAnalysis,
        placement: dict[int, tuple[str, int]],
        *,
        hang_possible: bool = True,
    ) -> list[Signal]:
        out: list[Signal] = []
        by_host: dict[str, list] = defaultdict(list)
        for s in a.stragglers:
            if s.rank not in placement:
                continue
            host, gpu = placement[s.rank]
            comp = gpu_component(host, gpu)
            by_host[host].append(s)
            pct = 100.0 * s.lateness  # lateness 0.03 = 3% slower than the typical rank
            start = f" from step {s.first_step}" if s.first_step is not None else ""
            out.append(
                Signal(
                    name="straggler",
                    component=comp,
                    kind="gpu",
                    detail=f"rank {s.rank} ({comp}) computes {pct:.1f}% slower than the typical rank{start} "
                    f"({s.kind}, robust z {s.z:.1f})",
                    values={
                        "rank": s.rank,
                        "slowdown_pct": round(pct, 1),
                        "z": round(s.z, 2),
                        "kind": s.kind,
                        "first_step": s.first_step,
                        "detected_by": ",".join(s.detected_by),
                    },
                )
            )
        ranks_of: dict[str, int] = defaultdict(int)
        for h, _ in placement.values():
            ranks_of[h] += 1
        for host, flagged in by_host.items():
            if len(flagged) >= 2 and len(flagged) >= HOST_SHARE * ranks_of[host]:
                out.append(
                    Signal(
                        name="host_stragglers",
                        component=host,
                        kind="host",
                        detail=f"{len(flagged)} of {ranks_of[host]} ranks on {host} straggle together",
                        values={"ranks_flagged": len(flagged), "ranks_on_host": ranks_of[host]},
                    )
                )
        slow = a.slowdown
        if slow is not None and slow.regressed:
            onset = f" from step {slow.onset_step}" if slow.onset_step is not None else ""
            out.append(
                Signal(
                    name="job_slowdown",
                    component="job",
                    kind="job",
                    detail=f"step period up {100 * (slow.ratio - 1):.1f}%{onset} "
                    f"({slow.baseline_period_s:.3f} s -> {slow.late_period_s:.3f} s), mostly in {slow.where}",
                    values={
                        "ratio": round(slow.ratio, 4),
                        "where": slow.where,
                        "onset_step": slow.onset_step,
                    },
                )
            )
            where_signal = {
                "gaps": "slowdown_in_gaps",
                "communication": "slowdown_in_comm",
                "compute": "slowdown_in_compute",
            }
            if slow.where in where_signal and not (a.stragglers and slow.where == "compute"):
                out.append(
                    Signal(
                        name=where_signal[slow.where],
                        component="job",
                        kind="job",
                        detail=f"the job-wide slowdown is in {slow.where}: "
                        + ", ".join(f"{k} {v:+.3f} s" for k, v in slow.deltas_s.items()),
                        values={k: round(v, 4) for k, v in slow.deltas_s.items()},
                    )
                )
            elif slow.where not in where_signal:
                # Without compute_s the time cannot be split: say so, so that the silence about
                # gaps or communication is not read as their absence.
                out.append(
                    Signal(
                        name="slowdown_unattributed",
                        component="job",
                        kind="job",
                        detail=f"the job-wide slowdown ({100 * (slow.ratio - 1):.1f}%) cannot be split into compute, "
                        "communication and gaps from the recorded columns",
                        values={"ratio": round(slow.ratio, 4), "where": slow.where},
                    )
                )
        if slow is not None and slow.regressed:
            out.extend(_slowdown_shape(slow))
        if a.divergence is not None:
            for d in a.divergence.flagged:
                if d.rank in placement:
                    comp = gpu_component(*placement[d.rank])
                    out.append(
                        Signal(
                            name="replica_divergence",
                            component=comp,
                            kind="gpu",
                            detail=f"rank {d.rank} ({comp}) {d.kind} disagrees with its replicas from step {d.first_step} "
                            f"({d.n_steps} steps)",
                            values={
                                "rank": d.rank,
                                "kind": d.kind,
                                "first_step": d.first_step,
                                "steps": d.n_steps,
                            },
                        )
                    )
        hang = self._hang(ctx, table) if hang_possible else None
        if hang is not None:
            out.append(hang)
        from_start = False
        if hang is None and not (slow is not None and slow.regressed):
            stated = self._stated(ctx, table)
            if stated is not None:
                out.extend(stated)
            else:
                # title and report are separate sentences: a question opening the report stays a question
                text = f"{ctx.source.incident.title}\n{ctx.source.incident.reported}"
                from_start = slow_from_start(text)
        # "Steady" needs the step period to be flat, not merely a rise too noisy to be significant:
        # a 5% rise over few steps does not rule out the slowdown someone reported.
        flat = slow is None or slow.ratio < 1.0 + slow.min_ratio
        if not out and not flat:
            pass
        elif (
            not out
            and (share := _window_share(table, ctx.source.window)) is not None
            and share < CLEAR_WINDOW_SHARE
        ):
            pass  # steady over part of the window says nothing about the rest of it
        elif not out and from_start:
            pass  # slow since launch: no onset to find, so "no regression" is not evidence of health
        elif not out and table.compute is not None:
            out.append(
                Signal(
                    name="steps_clean",
                    component="job",
                    kind="job",
                    detail=f"{a.n_ranks} ranks over {a.n_steps} logged steps: no straggler, no slowdown, replicas agree",
                    values={"ranks": a.n_ranks, "steps": a.n_steps},
                )
            )
        elif not out:
            # Without compute_s a slow rank is invisible (the barrier equalizes durations): all that
            # is known is that the job as a whole did not regress.
            out.append(
                Signal(
                    name="job_steady",
                    component="job",
                    kind="job",
                    detail=f"{a.n_ranks} ranks over {a.n_steps} logged steps: no job-level regression "
                    "(no compute_s, so a single slow rank cannot be seen here)",
                    values={"ranks": a.n_ranks, "steps": a.n_steps},
                )
            )
        return out

    @staticmethod
    def _stated(ctx: ToolContext, table: StepTable) -> list[Signal] | None:
        """A job with no onset, slower than the step time the incident states it used to have."""
        import numpy as np

        text = f"{ctx.source.incident.title} {ctx.source.incident.reported}"
        expected = expected_step_s(text)
        if not np.isfinite(table.duration).any():
            return None
        period = float(np.nanmedian(table.duration))
        if expected is None and (ratio := stated_slowdown_ratio(text)) is not None:
            # "3x slower than on the old cluster" with no onset in the steps: the expected step is
            # the one observed divided by the stated factor (the level the person compares with).
            expected = round(period / ratio, 4)
        if expected is None:
            return None
        if period < STATED_RATIO * expected:
            return None
        changed = states_change(text)
        detail = (
            f"step time {period:.3f} s for the whole window vs {expected:.3f} s expected from the incident's words: "
            + (
                "the steps hold only the slower level (the change came before them)"
                if changed
                else "slow from the first logged step (no onset)"
            )
        )
        where = "before_steps" if changed else "from_start"
        slow = Signal(
            name="job_slowdown",
            component="job",
            kind="job",
            detail=detail,
            values={
                "ratio": round(period / expected, 4),
                "where": where,
                "expected_s": expected,
                "observed_s": round(period, 4),
            },
        )
        unattributed = Signal(
            name="slowdown_unattributed",
            component="job",
            kind="job",
            detail="the steps hold only the slower level: there is no before and after to split the time by",
            values={"ratio": round(period / expected, 4), "where": where},
        )
        if changed:
            # "went from 2.06 s to 2.60 s": the person saw the change, so it had an onset the steps
            # do not hold; nothing says it came with the launch.
            return [slow, unattributed]
        return [
            slow,
            Signal(
                name="slowdown_since_launch",
                component="job",
                kind="job",
                detail=f"slow from the first logged step ({period:.3f} s vs {expected:.3f} s expected): the slowdown "
                "came with the launch, so a start-up setting can be its cause",
                values={"ratio": round(period / expected, 4), "where": "from_start"},
            ),
            Signal(
                name="slowdown_unattributed",
                component="job",
                kind="job",
                detail="the job is slow from its start: there is no before and after to split the time by",
                values={"ratio": round(period / expected, 4), "where": "from_start"},
            ),
        ]

    @staticmethod
    def _cut(ctx: ToolContext, table: StepTable) -> str | None:
        """What was lost when the steps end long before the window does (as long as a hang) but
        the job did not stop there: the file was cut mid-row, or the fleet's GPUs and NICs went on
        working after the last logged step. The steps then end where the record ends, not where the
        job did: read in part, not a hang."""
        silent = _silent_tail(ctx, table)
        if silent is None:
            return None
        last = float(np.nanmax(table.start))
        why = "its last line is cut mid-row" if table.cut_short else running_after(ctx, last)
        if why is None:
            return None
        return (
            f"job/steps.csv: the steps end at {utc_text(last)}, {silent:.0f} s before the window does, and {why}: "
            "the steps after it were not recorded"
        )

    @staticmethod
    def _hang(ctx: ToolContext, table: StepTable) -> Signal | None:
        silent = _silent_tail(ctx, table)
        if silent is None:
            return None
        period = _step_period(table)
        return Signal(
            name="job_hang",
            component="job",
            kind="job",
            detail=f"the job logged no step for the last {silent:.0f} s of the window (step period {period:.1f} s)",
            values={"silent_s": round(silent, 1), "period_s": round(period, 3)},
        )


def _step_period(table: StepTable) -> float:
    """The median time between step starts (0.0 when no two steps are ordered)."""
    periods = np.diff(table.start)
    periods = periods[np.isfinite(periods) & (periods > 0)]
    return float(np.median(periods)) if periods.size else 0.0


def _silent_tail(ctx: ToolContext, table: StepTable) -> float | None:
    """Seconds between the last logged step and the window's end when that is as long as a hang."""
    _, end = ctx.source.window
    if end is None or table.start.size < 3:
        return None
    period = _step_period(table)
    if not period:
        return None
    silent = end - (float(np.nanmax(table.start)) + period)
    return silent if silent > max(HANG_MIN_S, HANG_PERIODS * period) else None


def _window_share(table: StepTable, window: tuple[float | None, float | None]) -> float | None:
    """Share of the window the logged steps span; None for relative times or no window."""
    start, end = window
    span = _span(table)
    if start is None or end is None or end <= start or span is None:
        return None
    inside = max(0.0, min(end, span[1] + _step_period(table)) - max(start, span[0]))
    return inside / (end - start)


def _slowdown_shape(slow) -> list[Signal]:
    """What the shape of a regression says about its cause, beyond where the time went.

    - ``slowdown_mid_run``: the job got slower inside one run (no restart in the recorded steps).
      Settings read at start-up (NCCL reads its environment when a communicator is created) cannot
      begin to slow a process that was fast before them.
    - ``slowdown_bursty``: the time outside compute rose in a minority of long steps while the
      median step barely moved: waits that come and go (a prefetch queue running dry), not a slower
      path that every collective pays.
    """
    out: list[Signal] = []
    onset = f" from step {slow.onset_step}" if slow.onset_step is not None else ""
    if slow.onset_at_restart:
        out.append(
            Signal(
                name="slowdown_since_launch",
                component="job",
                kind="job",
                detail=f"the slowdown began with a relaunch{onset}: the run after the restart is slower than the run "
                "before it, so what the relaunch changed (its settings, image, nodes) can be its cause",
                values={"onset_step": slow.onset_step, "ratio": round(slow.ratio, 4)},
            )
        )
    if not slow.restarted:
        out.append(
            Signal(
                name="slowdown_mid_run",
                component="job",
                kind="job",
                detail=f"the slowdown began inside one run{onset}: no restart in the recorded steps, so the "
                "job's start-up settings were the same before it",
                values={"onset_step": slow.onset_step, "ratio": round(slow.ratio, 4)},
            )
        )
    rise, share = slow.outside_rise_s, slow.outside_median_share
    if (
        rise is not None
        and share is not None
        and slow.baseline_period_s > 0
        and rise >= BURST_MIN_RISE * slow.baseline_period_s
        and share <= BURST_MEDIAN_SHARE
    ):
        out.append(
            Signal(
                name="slowdown_bursty",
                component="job",
                kind="job",
                detail=f"the time outside compute rose {rise:.3f} s per step on average but the median step only "
                f"{share * rise:.3f} s: a minority of long steps carries the slowdown",
                values={"mean_rise_s": round(rise, 4), "median_share": round(share, 3)},
            )
        )
    return out
