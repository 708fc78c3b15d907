"""The naive pandas baseline of ``forensic bench detectors``, on every rank, in its own process.

The straightforward pandas route over the long format (one row per step and rank): the median
over ranks per step (``groupby("step")``), each cell's lateness against it, then per rank the
median and 99th percentile of lateness (``groupby("rank")``) and a robust z across ranks. At
16,384 ranks x 10,000 steps the long format is 164 million rows, about 6 GB with the groupby's
own copies, too much for a shared machine, so it runs in two chunked sweeps that keep every
result exact and cover every rank and step:

1. by steps (``step_chunk`` steps at a time, all ranks): a step's group is complete within its
   chunk, so the per-step medians are the full fleet's;
2. by ranks (``rank_chunk`` ranks at a time, all steps): a rank's group is complete within its
   chunk, so its median and quantile are over all its steps.

Building the long-format frames is timed apart from the pandas work (``build_s``, ``compute_s``).
Run as ``python -m forensic.tools.detectors._naive '{"ranks": ..., "steps": ..., "seed": ...,
"threshold_z": ...}'``: the process regenerates the benchmark's array from the seed and prints
one JSON line with its timings, flags and its own peak resident set.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

STEP_CHUNK = 256
RANK_CHUNK = 512


def naive_pandas(
    compute: np.ndarray, threshold_z: float, *, step_chunk: int = STEP_CHUNK, rank_chunk: int = RANK_CHUNK
) -> dict:
    """Per-step medians, per-rank p50/p99 of lateness and robust z over all of ``compute`` (S, R)."""
    import pandas as pd

    s_n, r_n = compute.shape
    build = work = 0.0
    med = np.empty(s_n)
    for i0 in range(0, s_n, step_chunk):
        block = compute[i0 : i0 + step_chunk]
        t0 = time.perf_counter()
        df = pd.DataFrame(
            {
                "step": np.repeat(np.arange(i0, i0 + block.shape[0]), r_n),
                "compute": block.ravel(),
            }
        )
        t1 = time.perf_counter()
        med[i0 : i0 + block.shape[0]] = df.groupby("step")["compute"].median().to_numpy()
        t2 = time.perf_counter()
        build, work = build + t1 - t0, work + t2 - t1
    p50 = np.empty(r_n)
    p99 = np.empty(r_n)
    med_s = pd.Series(med)
    for j0 in range(0, r_n, rank_chunk):
        block = compute[:, j0 : j0 + rank_chunk]
        w = block.shape[1]
        t0 = time.perf_counter()
        df = pd.DataFrame(
            {
                "step": np.repeat(np.arange(s_n), w),
                "rank": np.tile(np.arange(j0, j0 + w), s_n),
                "compute": np.ascontiguousarray(block).ravel(),
            }
        )
        t1 = time.perf_counter()
        df["late"] = df["compute"] / df["step"].map(med_s) - 1.0
        g = df.groupby("rank")["late"]
        p50[j0 : j0 + w] = g.median().to_numpy()
        p99[j0 : j0 + w] = g.quantile(0.99).to_numpy()
        t2 = time.perf_counter()
        build, work = build + t1 - t0, work + t2 - t1
    t0 = time.perf_counter()
    per = pd.DataFrame({"p50": p50, "p99": p99})
    center = per["p50"].median()
    mad = (per["p50"] - center).abs().median() * 1.4826
    per["z"] = (per["p50"] - center) / mad
    flagged = per.index[per["z"] > threshold_z].tolist()
    work += time.perf_counter() - t0
    return {
        "compute_s": work,
        "build_s": build,
        "ranks": r_n,
        "steps": s_n,
        "step_chunk": step_chunk,
        "rank_chunk": rank_chunk,
        "flagged": [int(r) for r in flagged],
    }


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def main(argv: list[str]) -> int:
    from forensic.tools.detectors.bench import bench_array

    args = json.loads(argv[0])
    t0 = time.perf_counter()
    compute, _ = bench_array(args["ranks"], args["steps"], args["seed"])
    gen_s = time.perf_counter() - t0
    rss_input = _peak_rss_mb()
    out = naive_pandas(
        compute,
        args["threshold_z"],
        step_chunk=args.get("step_chunk", STEP_CHUNK),
        rank_chunk=args.get("rank_chunk", RANK_CHUNK),
    )
    out.update(
        generate_s=gen_s,
        peak_rss_mb=_peak_rss_mb(),
        peak_rss_after_generate_mb=rss_input,
        input_mb=compute.nbytes / 1e6,
    )
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
