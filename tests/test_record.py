"""forensic.record: the step recorder a training loop calls, and a real synchronous job it records."""

from __future__ import annotations

import csv
import json
import multiprocessing as mp
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from forensic.harness.collect import collect_bundle
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools.detectors.steps import load_steps_csv

from forensic.record import HEADER, StepRecorder, hf_callback, lightning_callback, param_checksum
from tests.cli import investigate


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_rows_follow_the_spec_with_compute_loss_and_checksums(tmp_path: Path) -> None:
    wall, perf = FakeClock(), FakeClock()
    params = [np.arange(10, dtype=np.float32)]
    rec = StepRecorder(
        tmp_path,
        rank=3,
        host="gpu-a017",
        local_gpu=1,
        model=params,
        checksum_every=2,
        clock=wall,
        perf=perf,
        cuda=False,
    )
    for i in range(4):
        wall.t = 5000.0 + i
        with rec.step(i) as s:
            perf.t += 0.25
            s.compute_done()
            perf.t += 0.05
            s.loss = 2.5 - i
    with rec.step(4):  # no compute mark: compute_s stays empty, never invented
        perf.t += 0.1
    rec.close()
    rows = list(csv.DictReader(open(tmp_path / "steps-rank00003.csv")))
    assert list(rows[0]) == list(HEADER)
    assert [r["step"] for r in rows] == ["0", "1", "2", "3", "4"] and {r["rank"] for r in rows} == {"3"}
    assert float(rows[1]["start_unix"]) == 5001.0
    assert float(rows[0]["duration_s"]) == pytest.approx(0.3) and float(
        rows[0]["compute_s"]
    ) == pytest.approx(0.25)
    assert rows[4]["compute_s"] == "" and rows[0]["loss"] == "2.5"
    assert (
        rows[0]["param_checksum"] == param_checksum(params)
        and rows[1]["param_checksum"] == ""
        and rows[2]["param_checksum"]
    )
    assert rows[0]["host"] == "gpu-a017" and rows[0]["local_gpu"] == "1"
    table = load_steps_csv((tmp_path / "steps-rank00003.csv").read_text())
    assert table.compute is not None and table.n_ranks == 1


def test_a_resumed_rank_appends_without_a_second_header(tmp_path: Path) -> None:
    for _ in range(2):
        with StepRecorder(tmp_path, rank=0, host="h", cuda=False) as rec:
            with rec.step(7) as s:
                s.compute_done()
    lines = (tmp_path / "steps-rank00000.csv").read_text().splitlines()
    assert lines[0] == ",".join(HEADER) and len(lines) == 3 and lines.count(lines[0]) == 1


def test_a_step_that_raises_is_not_recorded(tmp_path: Path) -> None:
    rec = StepRecorder(tmp_path, rank=0, host="h", cuda=False)
    with pytest.raises(RuntimeError):
        with rec.step(0):
            raise RuntimeError("oom")
    rec.close()
    assert len((tmp_path / "steps-rank00000.csv").read_text().splitlines()) == 1


def test_prometheus_textfile_has_gauges_and_a_histogram(tmp_path: Path) -> None:
    perf = FakeClock()
    rec = StepRecorder(
        None,
        rank=2,
        host="h1",
        local_gpu=2,
        textfile_dir=tmp_path,
        job='j"1',
        perf=perf,
        cuda=False,
        textfile_interval_s=10.0,
    )
    for i, d in enumerate((0.02, 0.2, 3.0)):
        with rec.step(i) as s:
            perf.t += d
            s.compute_done()
    early = (tmp_path / "forensic_steps_rank00002.prom").read_text()
    assert 'le="+Inf"} 1' in early  # written at the first step, then not again within the interval
    rec.close()
    text = (tmp_path / "forensic_steps_rank00002.prom").read_text()
    assert 'forensic_step_duration_seconds{job="j\\"1",rank="2",host="h1",gpu="2"} 3.000000' in text
    assert 'le="0.025"} 1' in text and 'le="0.25"} 2' in text and 'le="+Inf"} 3' in text
    assert "forensic_step_number{" in text and "_count{" in text
    assert not list(tmp_path.glob("*.tmp"))


def test_the_openmetrics_reader_accepts_the_textfile(tmp_path: Path) -> None:
    from forensic.tools.parsers.openmetrics import parse_openmetrics

    rec = StepRecorder(None, rank=0, host="h", textfile_dir=tmp_path, cuda=False)
    with rec.step(0) as s:
        s.compute_done()
    parsed = parse_openmetrics((tmp_path / "forensic_steps_rank00000.prom").read_text() + "# EOF\n")
    by_name = {x.name: x for x in parsed.series}
    assert by_name["forensic_step_duration_seconds"].labels == {
        "job": "",
        "rank": "0",
        "host": "h",
        "gpu": "0",
    }
    assert by_name["forensic_step_number"].values[0] == 0 and "forensic_step_compute_seconds" in by_name


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"rank": -1}, "rank"),
        ({"host": "bad host"}, "host"),
        ({"checksum_every": 5}, "model"),
        ({"flush_every": 0}, "flush_every"),
        ({"out_dir": None}, "out_dir"),
        ({"cuda": True}, "cuda=True"),
    ],
)
def test_bad_arguments_are_clear_errors(tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    args = {"out_dir": tmp_path, "rank": 0, "host": "h", **kw}
    with pytest.raises(ValueError, match=message):
        StepRecorder(args.pop("out_dir"), **args)


def test_rank_and_gpu_come_from_the_launcher_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RANK", "12")
    monkeypatch.setenv("LOCAL_RANK", "4")
    rec = StepRecorder(tmp_path, host="h", cuda=False)
    assert (rec.rank, rec.local_gpu) == (12, 4) and rec.path.name == "steps-rank00012.csv"


def test_checksums_agree_for_equal_replicas_and_differ_for_one_flipped_bit() -> None:
    a = [np.ones((64, 64), dtype=np.float32), np.zeros(3, dtype=np.float32)]
    b = [x.copy() for x in a]
    assert param_checksum(a) == param_checksum(b)
    b[0].view(np.uint32)[5, 5] ^= 1
    assert param_checksum(a) != param_checksum(b)


def test_adapters_import_without_their_frameworks() -> None:
    for make, lib in ((lightning_callback, "lightning"), (hf_callback, "transformers")):
        try:
            __import__(lib)
        except ImportError:
            with pytest.raises(ImportError, match=lib):
                make("/tmp/x")


# -- a real synchronous job ---------------------------------------------------------------------------
RANKS, STEPS, SLOW_RANK = 4, 60, 2


def _rank_main(rank: int, barrier: Any, out: str) -> None:
    model = [np.full(256, 0.5, dtype=np.float32)]
    rec = StepRecorder(
        out,
        rank=rank,
        host=f"node-{rank // 2}",
        local_gpu=rank % 2,
        model=model,
        checksum_every=10,
        cuda=False,
    )
    for i in range(STEPS):
        with rec.step(i) as s:
            time.sleep(0.02 * (1.6 if rank == SLOW_RANK else 1.0))  # this rank's own work
            s.compute_done()
            barrier.wait(timeout=60)  # the collective: everyone leaves when the last arrives
            model[0] *= 1.0  # the optimizer step keeps replicas equal
            s.loss = 1.0 / (i + 1)
    rec.close()


def test_a_real_4_process_job_with_a_slow_rank_is_recorded_and_the_rank_named(tmp_path: Path) -> None:
    job = tmp_path / "job-out"
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(RANKS)
    procs = [ctx.Process(target=_rank_main, args=(r, barrier, str(job))) for r in range(RANKS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * RANKS
    files = sorted(p.name for p in job.iterdir())
    assert files == [f"steps-rank{r:05d}.csv" for r in range(RANKS)]

    starts = [float(r["start_unix"]) for f in job.iterdir() for r in csv.DictReader(open(f))]
    bundle = tmp_path / "incident"
    collect_bundle(
        [],
        bundle,
        job_dir=job,
        incident={
            "id": "recorded-job",
            "title": "step time up on the recorded job",
            "window": {"start": min(starts) - 1, "end": max(starts) + 2},
            "job": {"name": "mp-job", "gpus_per_node": 2},
        },
    )
    b = Bundle(bundle)
    assert b.rank_map() == {0: ("node-0", 0), 1: ("node-0", 1), 2: ("node-1", 0), 3: ("node-1", 1)}

    res = get_tool("job_steps")(ToolContext(b), {})
    stragglers = [s.component for s in res.signals if s.name == "straggler"]
    assert stragglers == ["node-1/gpu0"], res.summary
    assert res.data["n_ranks"] == RANKS and res.data["n_steps"] == STEPS

    report = investigate(str(bundle), state=tmp_path)
    named = [s for ev in report["evidence"] for s in ev.get("signals", []) if s["name"] == "straggler"]
    assert {s["component"] for s in named} == {"node-1/gpu0"}
    assert report["verdict"]["component"] in ("node-1/gpu0", None), report["verdict"]


def test_bench_recorder_reports_the_overhead_per_setup(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "bench",
            "recorder",
            "--json",
            "--steps",
            "200",
            "--params",
            "1000",
            "--checksum-every",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert set(r["per_step_us"]) == {"csv", "csv+textfile", "csv+checksum"} and all(
        v > 0 for v in r["per_step_us"].values()
    )
    assert r["overhead_pct"] == pytest.approx(
        max(r["per_step_us"].values()) / 1e6 / 0.1 * 100, rel=1e-3, abs=1e-3
    )
    assert r["target_pct"] == 1.0 and isinstance(r["ok"], bool)
