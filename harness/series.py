"""Per-rank time series for people: the suspect rank against the fleet median, and a sparkline.

The detectors decide; this module only shows what they decided on. It reads ``job/steps.csv``
through the bundle's confined file system (the same parser the ``job_steps`` tool uses) and
picks the rank the verdict blames, so the readable report and the plots draw the same numbers.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from forensic.sandbox import Bundle, EvidenceSource, ForensicError, open_source
from forensic.tools.detectors.steps import StepTable, load_steps_csv
from forensic.tools.parsers.step_files import merge_step_files
from pydantic import BaseModel, ConfigDict, Field

#: Eight levels, lowest first; a sparkline maps each bucket's value to one of them.
_BARS = "▁▂▃▄▅▆▇█"


class RankSeries(BaseModel):
    """One rank's per-step time next to the median over all ranks."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    rank: int = Field(description="Rank id.")
    component: str = Field(description="host/gpuN of the rank.")
    metric: str = Field(description="compute_s when recorded, else duration_s.")
    steps: np.ndarray = Field(repr=False, description="(S,) step numbers in time order.")
    start: np.ndarray = Field(repr=False, description="(S,) unix start of each step.")
    values: np.ndarray = Field(
        repr=False, description="(S,) the rank's seconds per step (NaN where not logged)."
    )
    median: np.ndarray = Field(repr=False, description="(S,) median seconds per step over all ranks.")
    onset_step: int | None = Field(None, description="First step the detectors flagged, when they did.")


def load_table(bundle: Bundle | EvidenceSource) -> StepTable | None:
    """The job's step table (``steps.csv``, or one file per rank merged), None when there is none usable."""
    try:
        docs = open_source(bundle).steps()
        if not docs:
            return None
        return load_steps_csv(merge_step_files([(d.source, d.text) for d in docs]))
    except ForensicError:
        return None


def per_step_seconds(table: StepTable) -> tuple[np.ndarray, str]:
    """(S, R) seconds each rank spent on its own work: compute_s when recorded, else duration_s."""
    if table.compute is not None:
        return table.compute, "compute_s"
    return table.duration, "duration_s"


def suspect(report: dict[str, Any], bundle: Bundle | EvidenceSource) -> tuple[int, str, int | None] | None:
    """(rank, component, onset step) of the rank the verdict (or the job_steps tool) blames."""
    stragglers: list[dict[str, Any]] = []
    for rec in report.get("evidence") or []:
        if rec.get("tool") == "job_steps" and rec.get("status") == "ok":
            stragglers = list((rec.get("data") or {}).get("stragglers") or [])
    placement = bundle.rank_map()
    comp_of = {r: f"{h}/gpu{g}" for r, (h, g) in placement.items()}
    blamed = ((report.get("verdict") or {}).get("component")) or ""
    for s in stragglers:
        if s.get("rank") in comp_of and comp_of[s["rank"]] == blamed:
            return s["rank"], blamed, s.get("first_step")
    for rank, comp in comp_of.items():
        if comp == blamed:
            return rank, comp, None
    if stragglers:
        s = stragglers[0]
        return s["rank"], comp_of.get(s["rank"], f"rank {s['rank']}"), s.get("first_step")
    return None


def rank_series(
    report: dict[str, Any], bundle: Bundle | EvidenceSource, table: StepTable | None = None
) -> RankSeries | None:
    """The blamed rank's series against the median, or None when there is no rank to show."""
    table = table if table is not None else load_table(bundle)
    who = suspect(report, bundle)
    if table is None or who is None:
        return None
    rank, component, onset = who
    cols = np.flatnonzero(table.ranks == rank)
    if not cols.size:
        return None
    secs, metric = per_step_seconds(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        median = (
            np.nanmedian(np.where(np.isfinite(secs), secs, np.nan), axis=1) if secs.size else np.array([])
        )
    return RankSeries(
        rank=rank,
        component=component,
        metric=metric,
        steps=table.steps,
        start=table.start,
        values=secs[:, cols[0]].astype(float),
        median=median.astype(float),
        onset_step=onset,
    )


def _buckets(values: np.ndarray, width: int) -> np.ndarray:
    if values.size <= width:
        return values
    edges = np.linspace(0, values.size, width + 1).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN bucket is a gap, drawn as a blank
        return np.array(
            [np.nanmean(values[a:b]) if b > a else np.nan for a, b in zip(edges[:-1], edges[1:], strict=True)]
        )


def sparkline(values: np.ndarray, lo: float, hi: float, width: int) -> str:
    """``values`` resampled to at most ``width`` characters on the common scale [lo, hi]."""
    v = _buckets(np.asarray(values, dtype=float), width)
    span = hi - lo if hi > lo else 1.0
    out = []
    for x in v:
        if not np.isfinite(x):
            out.append(" ")
            continue
        out.append(_BARS[int(round((min(max(x, lo), hi) - lo) / span * (len(_BARS) - 1)))])
    return "".join(out)


def sparkline_pair(s: RankSeries, width: int) -> tuple[str, str, float]:
    """Sparklines of the rank and the median on one scale, and the rank's excess over the median
    in its last quarter of steps (0.23 = 23% slower)."""
    both = np.concatenate([s.values, s.median])
    finite = both[np.isfinite(both)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    tail = max(1, s.values.size // 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        excess = float(np.nanmean(s.values[-tail:]) / np.nanmean(s.median[-tail:]) - 1.0)
    return (
        sparkline(s.values, lo, hi, width),
        sparkline(s.median, lo, hi, width),
        excess if np.isfinite(excess) else 0.0,
    )


def _stopped(report: dict[str, Any]) -> str | None:
    """What the evidence says about a job that stopped logging steps, if it did."""
    for rec in report.get("evidence") or []:
        for sig in rec.get("signals") or []:
            if sig.get("name") == "job_hang" and rec.get("status") == "ok":
                return str(sig.get("detail") or "the job stopped logging steps")
    return None


def spark_for(
    report: dict[str, Any], bundle: Bundle | EvidenceSource, width: int
) -> tuple[str, str, str, str] | None:
    """(label, rank sparkline, median sparkline, caption) for the readable report, or None when
    the verdict names no rank (healthy, a host, a link) or the bundle has no step table.

    The caption says what the chart shows: the rank's excess over the median in its last quarter
    of steps, or, for a job that stopped, that the chart ends where the steps ended (a hang leaves
    no slow step behind, so "+0%" would read as "nothing wrong")."""
    if report.get("status") not in ("confirmed", "probable"):
        return None
    s = rank_series(report, bundle)
    if s is None:
        return None
    rank_line, median_line, excess = sparkline_pair(s, width)
    stopped = _stopped(report)
    caption = (
        f"steps end here: {stopped}"
        if stopped
        else f"rank {s.rank} {100 * excess:+.0f}% against the median over its last quarter of steps"
    )
    return f"rank {s.rank}", rank_line, median_line, caption
