"""Work per GPU per second across a relaunch, as the GPUs themselves measure it.

A job relaunched with more work per step (a larger global batch, longer sequences) takes longer
per step while every GPU stays exactly as busy: the same tensor-pipe activity at the same SM
clock. The trainer's own lines say so best (``job_logs``: ``job_reconfigured``); when the job
logs are missing or silent, the steps and the GPUs' counters can say it too, and only when all
of these hold:

- the steps show a relaunch: the longest pause between logged steps is at least
  ``RELAUNCH_PERIODS`` step periods (and a minute), and the step counter restarted there or the
  job resumed from a checkpoint (steps logged twice, the later rows kept);
- the same ranks log before and after it, and the step is at least ``STEP_GREW`` longer after it;
- the extra time is compute (``compute_s``), shared by every rank alike: no rank and no host
  slowed more than the others (a fault on one part is never "more work");
- the GPUs that ran the job kept their tensor-pipe (or SM) activity and their SM clock: activity
  times clock after the relaunch is at least ``SAME_WORK`` of before. A throttled, starved or
  waiting GPU does less work per second; this one does the same, and each step does more.

Without ``compute_s`` or GPU activity series nothing is claimed: absence of evidence is not health.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from forensic.tools.base import Signal, Tool, ToolContext, ToolInput, ToolResult, register
from forensic.tools.job_steps import table_or_result
from forensic.tools.metrics import read_metric
from forensic.tools.parsers.openmetrics import series_host

#: A pause between logged steps this many step periods long (and RELAUNCH_MIN_S) is a relaunch.
RELAUNCH_PERIODS = 20
RELAUNCH_MIN_S = 60.0
#: The step after the relaunch must be this much longer to need explaining.
STEP_GREW = 1.10
#: Share of the step's growth that must be compute.
COMPUTE_SHARE = 0.7
#: Ranks' compute growth may differ by this much (p90 over p10 of the per-rank ratio).
UNIFORM = 1.05
#: Activity x clock after over before, fleet median: "the same work per second".
SAME_WORK = 0.95
#: Steps needed on each side of the relaunch.
MIN_STEPS = 5
#: GPU activity series, best first (dcgm-exporter names), and the clock.
ACTIVITY = ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_GPU_UTIL")
CLOCK = "DCGM_FI_DEV_SM_CLOCK"
#: A GPU below this activity before the relaunch was not running the job (a spare, an idle GPU).
BUSY = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.05, "DCGM_FI_PROF_SM_ACTIVE": 0.1, "DCGM_FI_DEV_GPU_UTIL": 10.0}


class GpuWorkInput(ToolInput):
    """The tool reads the whole job's steps and GPU series; it takes no arguments."""


@register
class GpuWork(Tool):
    name = "gpu_work"
    emits = frozenset({"gpu_work_held"})
    description = (
        "Across a relaunch seen in job/steps.csv (a long pause, the step counter restarted or resumed from a "
        "checkpoint): whether the longer step is all compute, on every rank alike, while the GPUs kept their "
        "tensor-pipe activity and SM clock (DCGM): the same work per GPU per second, more work per step. No arguments."
    )
    Input = GpuWorkInput
    cost = 1.0

    def run(self, ctx: ToolContext, args: GpuWorkInput) -> ToolResult:
        got = table_or_result(ctx)
        if isinstance(got, ToolResult):
            return got
        table, sources = got
        steps = _relaunch(table)
        if isinstance(steps, str):
            return ToolResult(status="ok", summary=steps, source=sources, covered=["job"])
        before, after, facts = steps
        hw = _activity(ctx, before, after)
        if isinstance(hw, str):  # no activity series to judge the GPUs by: nothing covered
            return ToolResult(
                status="no_data", summary=f"{facts['relaunch']}; {hw}", source=sources, data=facts
            )
        ratio, metric_sources, detail = hw
        facts.update(work_ratio=round(ratio, 4))
        src = sources + [s for s in metric_sources if s not in sources]
        if ratio < SAME_WORK:
            return ToolResult(
                status="ok",
                summary=f"{facts['relaunch']}; {detail}: the GPUs do less work per second after it",
                source=src,
                covered=["job"],
                data=facts,
            )
        sig = Signal(
            name="gpu_work_held",
            component="job",
            kind="job",
            detail=f"{facts['relaunch']}; the step grew {facts['step_ratio']:.2f}x, all of it compute on every rank alike, "
            f"while {detail}: the same work per GPU per second, more work per step",
            values={k: v for k, v in facts.items() if isinstance(v, (int, float))},
        )
        return ToolResult(
            status="ok", summary=sig.detail, signals=[sig], source=src, covered=["job"], data=facts
        )


def _relaunch(table) -> tuple[tuple[float, float], tuple[float, float], dict] | str:
    """((before start, end), (after start, end), facts) of a relaunch the steps show, or why not."""
    s = table.start
    if s.size < 2 * MIN_STEPS or table.compute is None:
        return "no relaunch to judge (too few steps, or no compute_s to say where the time went)"
    gaps = np.diff(s)
    period = float(np.median(gaps))
    i = int(np.argmax(gaps))
    if not (gaps[i] >= max(RELAUNCH_PERIODS * period, RELAUNCH_MIN_S)):
        return "the steps show no relaunch (no pause of many step periods)"
    if not (table.steps[i + 1] <= table.steps[i] or table.rows_rerun > 0):
        return "a pause in the steps, but the step counter neither restarted nor resumed from a checkpoint"
    if i + 1 < MIN_STEPS or s.size - i - 1 < MIN_STEPS:
        return "too few steps on one side of the relaunch"
    dur, comp = table.duration, table.compute
    logged_b, logged_a = np.isfinite(dur[: i + 1]).any(axis=0), np.isfinite(dur[i + 1 :]).any(axis=0)
    if not np.array_equal(logged_b, logged_a):
        return f"the relaunch changed which ranks log ({int(logged_b.sum())} before, {int(logged_a.sum())} after)"
    step_b = float(np.nanmedian(np.nanmedian(dur[: i + 1], axis=1)))
    step_a = float(np.nanmedian(np.nanmedian(dur[i + 1 :], axis=1)))
    ratio = step_a / max(step_b, 1e-9)
    if ratio < STEP_GREW:
        return f"relaunched; the step did not grow ({ratio:.2f}x)"
    with np.errstate(all="ignore"):
        rank_b, rank_a = np.nanmedian(comp[: i + 1], axis=0), np.nanmedian(comp[i + 1 :], axis=0)
    ok = np.isfinite(rank_b) & np.isfinite(rank_a) & (rank_b > 0)
    if ok.sum() < 2:
        return "relaunched; too few ranks with compute_s on both sides"
    grew = rank_a[ok] / rank_b[ok]
    spread = float(np.percentile(grew, 90) / max(np.percentile(grew, 10), 1e-9))
    compute_delta = float(np.median(rank_a[ok] - rank_b[ok]))
    how = (
        "the step counter restarted" if table.steps[i + 1] <= table.steps[i] else "resumed from a checkpoint"
    )
    facts: dict[str, Any] = {
        "relaunch": f"relaunched after a {gaps[i] / 60:.0f}-minute pause in the steps ({how}; steps resume at {int(table.steps[i + 1])})",
        "step_ratio": round(ratio, 4),
        "compute_share": round(compute_delta / max(step_a - step_b, 1e-9), 4),
        "rank_spread": round(spread, 4),
        "pause_s": round(float(gaps[i]), 1),
    }
    if compute_delta < COMPUTE_SHARE * (step_a - step_b):
        facts["relaunch"] += f"; the longer step is not compute ({facts['compute_share']:.0%} of it)"
        return facts["relaunch"]
    if spread > UNIFORM:
        return (
            facts["relaunch"]
            + f"; ranks slowed unevenly (spread {spread:.2f}): a part, not the work, changed"
        )
    end = float(s[-1] + np.nanmedian(dur[-1]))
    return (float(s[0]), float(s[i] + np.nanmedian(dur[i]))), (float(s[i + 1]), end), facts


def _activity(
    ctx: ToolContext, before: tuple[float, float], after: tuple[float, float]
) -> tuple[float, list[str], str] | str:
    """(fleet median of activity x clock after over before, sources, detail), or why it cannot say."""
    for name in ACTIVITY:
        act = read_metric(ctx, name)
        if act.series:
            break
    else:
        return "no GPU activity series recorded"
    clk = read_metric(ctx, CLOCK)
    clock = {(series_host(c.labels), c.labels.get("gpu")): c for c in clk.series}
    ratios, acts, clocks = [], [], []
    for ser in act.series:
        a_b, a_a = _median(ser, before), _median(ser, after)
        if a_b is None or a_a is None or a_b < BUSY[name]:
            continue  # not running the job before the relaunch
        c = clock.get((series_host(ser.labels), ser.labels.get("gpu")))
        c_b, c_a = (_median(c, before), _median(c, after)) if c is not None else (None, None)
        cr = c_a / c_b if c_b and c_a else 1.0
        ratios.append(a_a / a_b * cr)
        acts.append((a_b, a_a))
        if c_b and c_a:
            clocks.append((c_b, c_a))
    if len(ratios) < 2:
        return "no GPU activity series covering both sides of the relaunch"
    short = name.replace("DCGM_FI_PROF_", "").replace("DCGM_FI_DEV_", "").lower()
    detail = (
        f"the {len(ratios)} busy GPUs' {short} went {np.median([a for a, _ in acts]):.2f} -> {np.median([b for _, b in acts]):.2f}"
        + (
            f" and their SM clock {np.median([a for a, _ in clocks]):.0f} -> {np.median([b for _, b in clocks]):.0f} MHz"
            if clocks
            else " (no SM clock series: activity alone)"
        )
    )
    sources = [*act.sources, *clk.sources]
    return float(np.median(ratios)), sources, detail


def _median(ser, span: tuple[float, float]) -> float | None:
    t, v = ser.timestamps, ser.values
    m = np.isfinite(t) & np.isfinite(v) & (t >= span[0]) & (t <= span[1])
    return float(np.median(v[m])) if m.sum() >= 2 else None
