"""Benchmarks of the detectors: speed and memory at fleet scale, and accuracy on synthetic fleets.

``detector_benchmark``: one (steps x ranks) float32 compute array, generated in place (655 MB at
the default 16,384 x 10,000), timed against one numpy reduction over the same array (the floor:
``arr.sum(axis=0)``, one read of every value, measured in the same process, interleaved with the
detector runs), a pandas groupby baseline on every rank (in its own process, chunked: see
``_naive``), and the streaming update. ``detection_benchmark``: recall, precision,
false positives on clean fleets and detection delay, on fleets with injected stragglers.
No pandas at import time: only the naive baseline uses it.
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import numpy as np
from forensic.tools.detectors import _fast
from forensic.tools.detectors._stats import bonferroni_z
from forensic.tools.detectors.core import analyze
from forensic.tools.detectors.steps import StepTable
from forensic.tools.detectors.stream import StreamingDetectors
from forensic.tools.detectors.synth import Injected, fill_compute, make_fleet, random_stragglers

__all__ = ["detector_benchmark", "detection_benchmark", "format_benchmark"]

_MB = 1e6
_TARGETS = {
    "detectors_over_floor": 3.0,
    "naive_over_detectors": 15.0,
    "peak_over_input": 2.0,
    "stream_step_ms": 1.0,
}


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux: the process's high-water resident set, input array included.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / _MB


def _naive_pandas(block: np.ndarray, threshold_z: float) -> float:
    """Seconds for the pandas route over a (steps, ranks) block, in this process (a slice of ranks)."""
    from forensic.tools.detectors._naive import naive_pandas

    return naive_pandas(block, threshold_z)["compute_s"]


def _naive_all_ranks(ranks: int, steps: int, seed: int, threshold_z: float) -> dict:
    """The pandas route on every rank, in a child process that regenerates the array from the seed.

    Its own process so that its memory (the long-format frames, chunked) is measured on its own
    and never stacked on this process's input array.
    """
    arg = json.dumps({"ranks": ranks, "steps": steps, "seed": seed, "threshold_z": threshold_z})
    proc = subprocess.run(
        [sys.executable, "-m", "forensic.tools.detectors._naive", arg],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the pandas baseline process failed (exit {proc.returncode}): {tail}")
    return json.loads(lines[-1])


def bench_array(ranks: int, steps: int, seed: int) -> tuple[np.ndarray, list[Injected]]:
    """The benchmark's (steps, ranks) float32 compute array and its two injected stragglers."""
    rng = np.random.default_rng(seed)
    truth = [
        Injected(rank=int(ranks * 0.3), kind="persistent", slowdown=0.05, onset=int(steps * 0.5)),
        Injected(rank=int(ranks * 0.7), kind="from_start", slowdown=0.03, onset=0),
    ]
    return fill_compute(np.empty((steps, ranks), dtype=np.float32), rng, truth), truth


def _cpu_s() -> float:
    return time.process_time()


def detector_benchmark(
    ranks: int = 16384,
    steps: int = 10000,
    seed: int = 0,
    *,
    repeats: int = 5,
    naive_ranks: int | None = None,
    stream_steps: int = 300,
) -> dict:
    """Speed and memory of the full suite (``analyze``) on one (steps, ranks) float32 array.

    Returns seconds for the suite (``detectors_s``) and for the floor (``floor_s``: ``arr.sum(axis=0)``,
    one numpy pass reading every value of the same array), each the median of ``repeats`` runs
    taken in turns (floor, suite, floor, suite, ...) so that load on the machine hits both alike;
    also the best runs and process CPU times, whose ratios are steadier on a busy machine. The
    pandas baseline (``naive_s``) runs on every rank in a child process (``naive``: its chunking,
    build time and peak RSS); ``naive_ranks`` instead measures a slice of ranks in this process
    and scales it linearly (``naive_scaled_from``). Also the median streaming update
    (``stream_step_ms``), the peak resident set (``peak_rss_mb``, getrusage: the whole process,
    input included) and the detectors' own peak allocation (``detectors_alloc_mb``, tracemalloc on
    one extra, untimed run). Ratios and targets are included.
    """
    rss_start = _peak_rss_mb()
    t0 = time.perf_counter()
    compute, truth = bench_array(ranks, steps, seed)
    gen_s = time.perf_counter() - t0
    step_time = (compute.max(axis=1) + 0.25).astype(np.float32)
    # every rank's duration is the step time: a zero-copy broadcast, so the input is one array
    duration = np.broadcast_to(step_time[:, None], compute.shape)
    start = 1.7e9 + np.concatenate(([0.0], np.cumsum(step_time.astype(np.float64) + 0.02)[:-1]))
    table = StepTable.from_arrays(duration, compute, start=start)
    hosts = {r: f"gpu-{r // 8:05d}" for r in range(ranks)}
    input_mb = compute.nbytes / _MB

    floor: list[float] = []
    det: list[float] = []
    floor_cpu: list[float] = []
    det_cpu: list[float] = []
    runs0 = _fast.info()["runs"]
    w0 = time.perf_counter()
    # warm-up, not timed: imports, first touch of buffers, and the compiled kernel's compilation
    # (or its load from numba's cache), whose own time is reported as compile_s
    analysis = analyze(table, hosts)
    warmup_s = time.perf_counter() - w0
    fast = _fast.info()
    route = "numba" if fast["runs"] > runs0 else "numpy"
    for _ in range(max(repeats, 1)):
        for fn, wall, cpu in (
            (lambda: compute.sum(axis=0), floor, floor_cpu),
            (lambda: analyze(table, hosts), det, det_cpu),
        ):
            c0, w0 = _cpu_s(), time.perf_counter()
            fn()
            wall.append(time.perf_counter() - w0)
            cpu.append(_cpu_s() - c0)
    peak_after_detectors = _peak_rss_mb()

    tracemalloc.start()
    analyze(table, hosts)
    alloc_peak = tracemalloc.get_traced_memory()[1] / _MB
    tracemalloc.stop()

    sd = StreamingDetectors(ranks, baseline_steps=min(200, max(1, stream_steps // 2)), horizon_steps=steps)
    per_step = []
    row_c = row_d = None
    for s in range(min(stream_steps, steps)):
        row_c, row_d = compute[s], duration[s]
        t1 = time.perf_counter()
        sd.update(row_d, row_c, float(start[s]))
        per_step.append(time.perf_counter() - t1)

    threshold_z = bonferroni_z(0.01, ranks)
    if naive_ranks is not None and naive_ranks < ranks:
        block = np.array(compute[:, :naive_ranks])
        # drop every view of the big array before pandas runs, so its peak is not stacked on the input
        del table, duration, compute, row_c, row_d
        naive_block_s = _naive_pandas(block, threshold_z)
        naive_s = naive_block_s * ranks / naive_ranks
        naive: dict[str, Any] = {
            "process": "this one",
            "ranks": naive_ranks,
            "steps": steps,
            "compute_s": naive_block_s,
        }
        scaled = {
            "ranks": naive_ranks,
            "steps": steps,
            "measured_s": naive_block_s,
            "scale": ranks / naive_ranks,
            "method": "pandas groupby median/quantile/z on a slice of ranks, linear in ranks",
        }
    else:
        # the child regenerates the array from the seed: free ours first so the two never coexist
        del table, duration, compute, row_c, row_d
        naive = _naive_all_ranks(ranks, steps, seed, threshold_z)
        naive["process"] = "child (python -m forensic.tools.detectors._naive)"
        naive_s = naive["compute_s"]
        scaled = {
            "ranks": ranks,
            "steps": steps,
            "measured_s": naive_s,
            "scale": 1.0,
            "method": (
                f"pandas groupby median/quantile/z on all {ranks} ranks, not scaled: per-step medians "
                f"by chunks of {naive['step_chunk']} steps, per-rank quantiles by chunks of "
                f"{naive['rank_chunk']} ranks (exact: every group lies in one chunk)"
            ),
        }

    floor_s = float(np.median(floor))
    detectors_s = float(np.median(det))
    stream_ms = float(np.median(per_step) * 1e3)
    peak = _peak_rss_mb()

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.inf

    out: dict[str, Any] = {
        "kind": "detectors",
        "ranks": ranks,
        "steps": steps,
        "seed": seed,
        "input_mb": input_mb,
        "generate_s": gen_s,
        "floor": "arr.sum(axis=0): one numpy pass reading every value of the same array, same process, "
        "timed in turns with the suite",
        "floor_s": floor_s,
        "floor_runs_s": [float(v) for v in floor],
        "detectors_s": detectors_s,
        "detectors_runs_s": [float(v) for v in det],
        "floor_cpu_s": float(np.median(floor_cpu)),
        "detectors_cpu_s": float(np.median(det_cpu)),
        "naive_s": naive_s,
        "naive_scaled_from": scaled,
        "naive": naive,
        "stream_step_ms": stream_ms,
        "stream_steps_timed": len(per_step),
        "peak_rss_mb": peak,
        "peak_rss_after_detectors_mb": peak_after_detectors,
        "rss_at_start_mb": rss_start,
        "peak_rss_source": "resource.getrusage(RUSAGE_SELF).ru_maxrss: whole-process high-water mark, input included",
        "detectors_alloc_mb": alloc_peak,
        "detectors_alloc_source": "tracemalloc peak during one extra analyze() run (numpy buffers are traced)",
        "scan_route": route,
        "scan_route_note": (
            "compiled kernel (numba, single-threaded) for pass B, the row maxima and the rank sample; numpy for the rest"
            if route == "numba"
            else "numpy only"
            + (
                f" (numba: {fast['numba_error']})"
                if fast["numba_error"]
                else " (numba disabled)"
                if not fast["enabled"]
                else f" (array below {fast['min_elements']} values)"
            )
        ),
        "compile_s": fast["compile_s"] if route == "numba" else None,
        "warmup_s": warmup_s,
        "detectors_over_floor": ratio(detectors_s, floor_s),
        "detectors_over_floor_best": ratio(min(det), min(floor)),
        "detectors_over_floor_cpu": ratio(float(np.median(det_cpu)), float(np.median(floor_cpu))),
        "naive_over_detectors": ratio(naive_s, detectors_s),
        "peak_over_input": ratio(peak, input_mb),
        "injected": [t.rank for t in truth],
        "flagged": [s.rank for s in analysis.stragglers],
        "targets": dict(_TARGETS),
    }
    out["meets"] = {
        "detectors_over_floor": out["detectors_over_floor"] <= _TARGETS["detectors_over_floor"],
        "naive_over_detectors": out["naive_over_detectors"] >= _TARGETS["naive_over_detectors"],
        "peak_over_input": out["peak_over_input"] <= _TARGETS["peak_over_input"],
        "stream_step_ms": stream_ms <= _TARGETS["stream_step_ms"],
    }
    return out


def _fleet_scores(flagged: set[int], truth: list[Injected]) -> tuple[int, int]:
    t = {i.rank for i in truth}
    return len(flagged & t), len(flagged - t)


def detection_benchmark(
    seed: int = 0,
    ranks: int = 4096,
    steps: int = 1000,
    *,
    fleets: int = 4,
    clean_fleets: int = 4,
    n_persistent: int = 6,
    n_from_start: int = 3,
    n_intermittent: int = 3,
    stream: bool = True,
) -> dict:
    """Accuracy on synthetic fleets: recall, precision, false positives, detection delay.

    ``fleets`` fleets carry injected stragglers (1-10% slowdown: persistent from a random step in
    the middle of the run, from step 0, and intermittent on 10-30% of steps) on top of
    rack-correlated noise; ``clean_fleets`` carry none. Delay is measured by replaying each fleet
    through the streaming detectors: first step flagged minus true onset.
    """
    rng = np.random.default_rng(seed)
    tp = fp = n_truth = 0
    by_kind: dict[str, list[int]] = {"persistent": [0, 0], "from_start": [0, 0], "intermittent": [0, 0]}
    big = [0, 0]  # persistent or from the start, >= 3%
    delays: dict[str, list[int]] = {"persistent": [], "from_start": [], "intermittent": []}
    onset_err: list[int] = []
    clean_fp: list[int] = []
    patterns: list[str] = []
    t0 = time.perf_counter()
    for f_i in range(fleets + clean_fleets):
        clean = f_i >= fleets
        fseed = int(rng.integers(2**31))
        truth = (
            []
            if clean
            else random_stragglers(
                np.random.default_rng(fseed + 1), ranks, steps, n_persistent, n_from_start, n_intermittent
            )
        )
        fleet = make_fleet(ranks, steps, seed=fseed, truth=truth)
        table = StepTable.from_arrays(fleet.duration, fleet.compute, start=fleet.start)
        a = analyze(table, fleet.rank_host)
        patterns.append(a.pattern)
        flagged = {s.rank for s in a.stragglers}
        t_, f_ = _fleet_scores(flagged, truth)
        tp, fp, n_truth = tp + t_, fp + f_, n_truth + len(truth)
        if clean:
            clean_fp.append(f_)
        found = {s.rank: s for s in a.stragglers}
        for inj in truth:
            by_kind[inj.kind][1] += 1
            by_kind[inj.kind][0] += inj.rank in found
            if inj.kind != "intermittent" and inj.slowdown >= 0.03:
                big[1] += 1
                big[0] += inj.rank in found
            if inj.kind == "persistent" and inj.rank in found:
                onset_err.append(abs(found[inj.rank].first_index - inj.onset))
        if stream and truth:
            sd = StreamingDetectors(ranks, baseline_steps=max(8, round(0.2 * steps)), horizon_steps=steps)
            first = np.full(ranks, -1)
            for s in range(steps):
                sd.update(fleet.duration[s], fleet.compute[s], float(fleet.start[s]))
                m = sd.flagged()
                first[m & (first < 0)] = s
            for inj in truth:
                if first[inj.rank] >= 0 and inj.rank in found:
                    delays[inj.kind].append(int(first[inj.rank] - inj.onset))
    flagged_total = tp + fp

    def q(v: list[int], p: float) -> float | None:
        return round(float(np.quantile(v, p)), 1) if v else None

    return {
        "kind": "detection",
        "seed": seed,
        "ranks": ranks,
        "steps": steps,
        "fleets": fleets,
        "clean_fleets": clean_fleets,
        "injected": n_truth,
        "recall": tp / n_truth if n_truth else None,
        "recall_by_kind": {k: (v[0] / v[1] if v[1] else None) for k, v in by_kind.items()},
        "recall_persistent_ge_3pct": big[0] / big[1] if big[1] else None,
        "n_persistent_ge_3pct": big[1],
        "precision": tp / flagged_total if flagged_total else 1.0,
        "false_positives": fp,
        "false_positives_per_clean_fleet": float(np.mean(clean_fp)) if clean_fp else None,
        "delay_steps_median": {k: q(v, 0.5) for k, v in delays.items()},
        "delay_steps_p90": {k: q(v, 0.9) for k, v in delays.items()},
        "onset_error_steps_median": q(onset_err, 0.5),
        "patterns": patterns,
        "elapsed_s": time.perf_counter() - t0,
        "targets": {
            "recall_persistent_ge_3pct": 0.95,
            "precision": 0.95,
            "false_positives_per_clean_fleet": 0.0,
        },
    }


def format_benchmark(result: dict) -> str:
    """Human-readable lines for either benchmark's result."""
    if result.get("kind") == "detectors":
        r = result
        ok = r["meets"]
        mark = lambda k: "ok" if ok[k] else "MISSED"  # noqa: E731
        ns, nv = r["naive_scaled_from"], r.get("naive", {})
        if ns["scale"] == 1:
            naive_how = (
                f"all {ns['ranks']} ranks in a child process, chunked by {nv.get('step_chunk')} steps / "
                f"{nv.get('rank_chunk')} ranks; child peak RSS {nv.get('peak_rss_mb', 0):.0f} MB"
            )
        else:
            naive_how = f"measured {ns['measured_s']:.2f} s on {ns['ranks']} ranks, x{ns['scale']:.0f}"
        return "\n".join(
            [
                f"detector benchmark: {r['ranks']} ranks x {r['steps']} steps, "
                f"input {r['input_mb']:.0f} MB float32 (seed {r['seed']})",
                f"  floor (arr.sum(axis=0))   {r['floor_s'] * 1e3:9.1f} ms   one numpy pass over the same array, same process",
                f"  scan route                {r.get('scan_route', 'numpy'):>9}      {r.get('scan_route_note', '')}"
                + (
                    f"; compile (or cache load) {r['compile_s']:.2f} s in the untimed warm-up"
                    if r.get("compile_s") is not None
                    else ""
                ),
                f"  detectors (full suite)    {r['detectors_s'] * 1e3:9.1f} ms   {r['detectors_over_floor']:.1f}x floor "
                f"(target <= {r['targets']['detectors_over_floor']:.0f}: {mark('detectors_over_floor')}); "
                f"best runs {r['detectors_over_floor_best']:.1f}x, CPU time {r['detectors_over_floor_cpu']:.1f}x",
                f"  naive pandas              {r['naive_s']:9.1f} s    {r['naive_over_detectors']:.0f}x detectors "
                f"(target >= {r['targets']['naive_over_detectors']:.0f}: {mark('naive_over_detectors')}); {naive_how}",
                f"  streaming update          {r['stream_step_ms']:9.3f} ms/step (median of {r['stream_steps_timed']}; "
                f"target <= {r['targets']['stream_step_ms']:.0f}: {mark('stream_step_ms')})",
                f"  peak RSS                  {r['peak_rss_mb']:9.0f} MB   {r['peak_over_input']:.2f}x input "
                f"(target < {r['targets']['peak_over_input']:.0f}: {mark('peak_over_input')}; getrusage, whole process)",
                f"  detectors' own allocations {r['detectors_alloc_mb']:8.1f} MB (tracemalloc peak)",
                f"  injected {r['injected']} -> flagged {r['flagged']}",
            ]
        )
    if result.get("kind") == "detection":
        r = result
        fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        kinds = ", ".join(f"{k} {fmt(v)}" for k, v in r["recall_by_kind"].items())
        med, p90 = r["delay_steps_median"], r["delay_steps_p90"]
        delays = ", ".join(f"{k} {med[k]}/{p90[k]}" for k in med)
        return "\n".join(
            [
                f"detection benchmark: {r['fleets']} fleets with stragglers + {r['clean_fleets']} clean, "
                f"{r['ranks']} ranks x {r['steps']} steps (seed {r['seed']})",
                f"  recall {fmt(r['recall'])} ({kinds}); persistent >= 3%: {fmt(r['recall_persistent_ge_3pct'])} "
                f"of {r['n_persistent_ge_3pct']} (target 0.95)",
                f"  precision {fmt(r['precision'])} (target 0.95); false positives {r['false_positives']}, "
                f"per clean fleet {r['false_positives_per_clean_fleet']} (target 0)",
                f"  detection delay, steps (median/p90): {delays}; onset error median {r['onset_error_steps_median']}",
                f"  tax pattern per fleet: {', '.join(r['patterns'])}; {r['elapsed_s']:.1f} s",
            ]
        )
    raise ValueError("not a benchmark result")
