"""Self-checks on a written incident: the physics a reader relies on (used by tests and the CLI)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np


def read_text(path: Path) -> str:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


def find(bundle: Path, rel: str) -> Path | None:
    for cand in (bundle / rel, bundle / (rel + ".gz")):
        if cand.exists():
            return cand
    return None


def need(bundle: Path, rel: str) -> Path:
    """``find``, for a file every bundle has: its absence is an error."""
    path = find(bundle, rel)
    if path is None:
        raise FileNotFoundError(f"{bundle}: no {rel} (nor {rel}.gz)")
    return path


def load_steps(bundle: Path) -> tuple[list[str], np.ndarray, list[list[str]]]:
    p = need(bundle, "job/steps.csv")
    rows = list(csv.reader(io.StringIO(read_text(p))))
    return rows[0], np.array([[float(x) for x in r[:4]] for r in rows[1:]]), rows[1:]


def rank_placement(bundle: Path) -> dict[int, tuple[str, int]]:
    topo = json.loads(read_text(need(bundle, "topology.json")))
    if "ranks" in topo:
        return {r["rank"]: (r["host"], r["gpu"]) for r in topo["ranks"]}
    inc = json.loads(read_text(bundle / "incident.json"))
    n = inc["job"]["ranks"]
    hosts = [h["name"] for h in topo["hosts"]]
    return {r: (hosts[r // 8], r % 8) for r in range(n)}


def straggler_stats(bundle: Path, truth: dict, t_from: float | None = None) -> dict:
    """For steps starting after ``t_from``: how often the culprit rank has the max compute / min wait."""
    header, num, raw = load_steps(bundle)
    if "compute_s" not in header:
        return {"has_compute": False}
    ci = header.index("compute_s")
    comp = np.array([float(r[ci]) for r in raw])
    place = rank_placement(bundle)
    comp_host, _, comp_gpu = truth["component"].partition("/gpu")
    culprit = [r for r, (h, g) in place.items() if h == comp_host and str(g) == comp_gpu]
    by_step: dict[int, list[int]] = {}
    steps, ranks, starts, durs = num[:, 0].astype(int), num[:, 1].astype(int), num[:, 2], num[:, 3]
    for i in range(len(num)):
        by_step.setdefault(int(steps[i]), []).append(i)
    max_hits = min_wait_hits = n = 0
    spread = []
    for rows_of_step in by_step.values():
        idx = np.array(rows_of_step)
        # a rerun step appears twice; keep the later rows
        st = starts[idx]
        if st.max() - st.min() > 60:
            idx = idx[st > st.max() - 60]
        spread.append(float(durs[idx].max() - durs[idx].min()) / float(np.median(durs[idx])))
        if t_from is not None and starts[idx].min() < t_from:
            continue
        if not culprit or culprit[0] not in ranks[idx]:
            continue
        n += 1
        wait = durs[idx] - comp[idx]
        max_hits += int(ranks[idx][np.argmax(comp[idx])] == culprit[0])
        min_wait_hits += int(ranks[idx][np.argmin(wait)] == culprit[0])
    return {
        "has_compute": True,
        "steps": n,
        "max_compute_frac": max_hits / n if n else None,
        "min_wait_frac": min_wait_hits / n if n else None,
        "max_duration_spread": max(spread),
    }
