"""Data for the page's two pictures, read from the investigation's evidence through the sandbox.

- :func:`heatmap`: per-rank step compute time (ranks x time bins) from ``job/steps.csv``.
- :func:`timeline`: per-host key signals (worst GPU per sample) from ``metrics/*.om``.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from typing import Any

import numpy as np
from forensic.sandbox import Bundle, ForensicError
from forensic.tools.parsers.openmetrics import parse_openmetrics

#: Signals on the timeline and how a host's GPUs reduce to one line: the worst one.
KEY_SIGNALS: dict[str, tuple[str, str]] = {
    "DCGM_FI_DEV_SM_CLOCK": ("SM clock (MHz)", "min"),
    "DCGM_FI_DEV_GPU_TEMP": ("GPU temperature (C)", "max"),
    "DCGM_FI_DEV_POWER_USAGE": ("power (W)", "min"),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("tensor active", "min"),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("PCIe replays", "max"),
}


def _steps_file(b: Bundle) -> str | None:
    # The sandbox reads ``.gz`` transparently: ``job/steps.csv`` names either.
    return "job/steps.csv" if b.fs.exists("job/steps.csv") else None


@lru_cache(maxsize=16)
def heatmap(bundle_path: str, bins: int = 96) -> dict[str, Any]:
    try:
        b = Bundle(bundle_path, verify_gzip=False)
    except ForensicError as exc:
        return {"available": False, "reason": str(exc)}
    rel = _steps_file(b)
    if rel is None:
        return {"available": False, "reason": "no job/steps.csv in the evidence"}
    try:
        rows = list(csv.DictReader(io.StringIO(b.fs.read_text(rel))))
        rank = np.array([int(r["rank"]) for r in rows])
        t = np.array([float(r["start_unix"]) for r in rows])
        comp = np.array([float(r.get("compute_s") or r["duration_s"]) for r in rows])
    except (KeyError, ValueError, ForensicError) as exc:
        return {"available": False, "reason": f"{rel}: unreadable ({exc})"}
    if rank.size == 0:
        return {"available": False, "reason": f"{rel}: no steps"}
    ranks = np.unique(rank)
    # Columns are recorded steps (grouped when there are more than ``bins``), not wall-clock
    # bins: a job log samples every Nth step, and time bins would leave empty stripes.
    step_ids = np.array([int(r["step"]) for r in rows])
    steps = np.unique(step_ids)
    group = max(1, int(np.ceil(steps.size / bins)))
    col = np.searchsorted(steps, step_ids) // group
    ncols = int(col.max()) + 1
    row = np.searchsorted(ranks, rank)
    total = np.zeros((ranks.size, ncols))
    count = np.zeros((ranks.size, ncols))
    np.add.at(total, (row, col), comp)
    np.add.at(count, (row, col), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    col_t = np.full(ncols, np.nan)
    np.fmin.at(col_t, col, t)
    edges = np.array([t.min(), t.max()])
    placement = b.rank_map()
    values = [[None if np.isnan(v) else round(float(v), 4) for v in r] for r in mean]
    return {
        "available": True,
        "source": rel,
        "metric": "compute_s",
        "ranks": [int(r) for r in ranks],
        "where": [
            f"{placement[int(r)][0]}/gpu{placement[int(r)][1]}" if int(r) in placement else "" for r in ranks
        ],
        "t0": float(edges[0]),
        "t1": float(edges[-1]),
        "values": values,
        "columns": [float(x) for x in col_t],
        "steps_per_column": group,
        "median": float(np.nanmedian(mean)),
        "min": float(np.nanmin(mean)),
        "max": float(np.nanmax(mean)),
    }


@lru_cache(maxsize=16)
def timeline(bundle_path: str, max_points: int = 200) -> dict[str, Any]:
    try:
        b = Bundle(bundle_path, verify_gzip=False)
    except ForensicError as exc:
        return {"available": False, "reason": str(exc)}
    files = b.files("metrics", (".om", ".prom", ".txt")) if b.fs.is_dir("metrics") else []
    per: dict[str, dict[str, dict[str, Any]]] = {}
    for rel in files:
        try:
            ms = parse_openmetrics(b.fs.read_text(rel))
        except ForensicError:
            continue
        for name, (label, how) in KEY_SIGNALS.items():
            by_host: dict[str, list[Any]] = {}
            for s in ms.select(name):
                if s.host:
                    by_host.setdefault(s.host, []).append(s)
            for host, series in by_host.items():
                ts = np.unique(np.concatenate([s.timestamps for s in series]))
                ts = ts[~np.isnan(ts)]
                if ts.size == 0:
                    continue
                stack = np.full((len(series), ts.size), np.nan)
                for i, s in enumerate(series):
                    idx = np.searchsorted(ts, s.timestamps[~np.isnan(s.timestamps)])
                    stack[i, idx] = s.values[~np.isnan(s.timestamps)]
                with np.errstate(all="ignore"):
                    worst = np.nanmin(stack, axis=0) if how == "min" else np.nanmax(stack, axis=0)
                step = max(1, ts.size // max_points)
                per.setdefault(host, {})[name] = {
                    "label": label,
                    "reduce": how,
                    "t": [float(x) for x in ts[::step]],
                    "v": [None if np.isnan(x) else float(x) for x in worst[::step]],
                }
    return {
        "available": bool(per),
        "hosts": dict(sorted(per.items())),
        "signals": {k: v[0] for k, v in KEY_SIGNALS.items()},
    }
