"""Both benchmarks at a small size: the shape of their results and the accuracy targets."""

from __future__ import annotations

import math

import pytest
from forensic.tools.detectors import detection_benchmark, detector_benchmark, format_benchmark
from forensic.tools.detectors._naive import naive_pandas
from forensic.tools.detectors.bench import bench_array


def test_detector_benchmark_small(scan_route):
    r = detector_benchmark(ranks=512, steps=400, repeats=1, stream_steps=40)
    # the route that ran is reported (the fixture lowers the kernel's size threshold under numba)
    assert r["scan_route"] == scan_route
    if scan_route == "numba":
        assert (
            isinstance(r["compile_s"], float) and r["compile_s"] >= 0 and "compiled" in r["scan_route_note"]
        )
        assert "compile (or cache load)" in format_benchmark(r)
    else:
        assert r["compile_s"] is None and "numba disabled" in r["scan_route_note"]
    for key in (
        "detectors_s",
        "floor_s",
        "naive_s",
        "stream_step_ms",
        "peak_rss_mb",
        "input_mb",
        "detectors_over_floor",
        "naive_over_detectors",
        "detectors_alloc_mb",
        "detectors_over_floor_cpu",
        "detectors_over_floor_best",
    ):
        assert isinstance(r[key], float) and math.isfinite(r[key]) and r[key] > 0, key
    # the pandas baseline ran on every rank, in its own process, and found the same stragglers
    assert r["naive_scaled_from"]["ranks"] == 512 and r["naive_scaled_from"]["scale"] == 1
    assert r["naive"]["ranks"] == 512 and r["naive"]["steps"] == 400 and r["naive"]["peak_rss_mb"] > 0
    assert r["naive"]["process"].startswith("child")
    assert sorted(r["naive"]["flagged"]) == sorted(r["injected"])
    assert r["input_mb"] == 512 * 400 * 4 / 1e6
    assert "arr.sum(axis=0)" in r["floor"]
    assert set(r["meets"]) == set(r["targets"])
    assert sorted(r["flagged"]) == sorted(r["injected"])
    text = format_benchmark(r)
    assert "floor" in text and "naive" in text and "peak RSS" in text and "all 512 ranks" in text


def test_detector_benchmark_can_still_scale_a_slice_of_ranks():
    r = detector_benchmark(ranks=512, steps=200, repeats=1, naive_ranks=64, stream_steps=20)
    assert r["naive_scaled_from"]["ranks"] == 64 and r["naive_scaled_from"]["scale"] == 8
    assert r["naive_s"] == pytest.approx(r["naive_scaled_from"]["measured_s"] * 8)
    assert "x8" in format_benchmark(r)


def test_naive_chunks_do_not_change_its_answer():
    compute, truth = bench_array(300, 240, seed=3)
    whole = naive_pandas(compute, 4.0, step_chunk=240, rank_chunk=300)
    chunked = naive_pandas(compute, 4.0, step_chunk=7, rank_chunk=64)
    assert whole["flagged"] == chunked["flagged"] == sorted(t.rank for t in truth)


def test_detection_benchmark_small_meets_accuracy_targets():
    r = detection_benchmark(seed=0, ranks=1024, steps=500, fleets=3, clean_fleets=3)
    assert r["recall_persistent_ge_3pct"] >= 0.95 and r["n_persistent_ge_3pct"] >= 10
    assert r["precision"] >= 0.95
    assert r["false_positives_per_clean_fleet"] == 0.0
    assert 0 < r["recall"] <= 1 and set(r["recall_by_kind"]) == {"persistent", "from_start", "intermittent"}
    assert r["delay_steps_median"]["persistent"] is not None and r["delay_steps_median"]["persistent"] >= 0
    assert len(r["patterns"]) == 6
    assert "recall" in format_benchmark(r)


def test_a_failed_pandas_child_is_one_clear_error():
    from forensic.tools.detectors.bench import _naive_all_ranks

    with pytest.raises(RuntimeError, match=r"the pandas baseline process failed \(exit 1\): \w+"):
        _naive_all_ranks(0, 10, 0, 4.0)  # no ranks: the child cannot build the array


def test_cli_reports_a_failed_pandas_child_in_one_line(monkeypatch, capsys):
    import forensic.tools.detectors.bench as bench
    from forensic.harness.cli import main

    def boom(**kw):
        raise RuntimeError("the pandas baseline process failed (exit 1): MemoryError")

    monkeypatch.setattr(bench, "detector_benchmark", boom)
    monkeypatch.setattr("sys.argv", ["forensic", "bench", "detectors", "--ranks", "64", "--steps", "100"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "forensic: the pandas baseline process failed (exit 1): MemoryError"
