"""A report's evidence records are bounded; the checkpoint keeps them whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from forensic.harness.bounded import MAX_LIST, bound_record
from forensic.sandbox import Bundle
from forensic.tools.base import ToolContext


def _record(n_hosts: int) -> dict:
    hosts = [f"h{i:04d}" for i in range(n_hosts)]
    return {
        "id": "ev-1",
        "tool": "gpu_health",
        "args": {},
        "status": "ok",
        "summary": "s",
        "source": "nodes/h0000/nvml.json",
        "sources": [f"nodes/{h}/nvml.json" for h in hosts],
        "signals": [
            {
                "name": "ecc_uncorrectable",
                "component": "h0777/gpu3",
                "kind": "gpu",
                "detail": "",
                "values": {},
            }
        ],
        "covered": [f"{h}/gpu{g}" for h in hosts for g in range(8)],
        "data": {
            "gpus": {f"{h}/gpu{g}": {"temp": 40} for h in hosts for g in range(8)},
            "n": n_hosts,
            "rows": [{"host": h, "x": 1} for h in hosts],
        },
    }


def test_long_lists_are_cut_keeping_what_matters_and_counting_the_rest() -> None:
    rec = _record(1000)
    out = bound_record(rec, ["h0500/gpu1"])
    assert len(out["covered"]) == MAX_LIST and out["omitted"]["covered"] == 8000 - MAX_LIST
    # the verdict's component, its host's other GPUs and the signal's component are kept
    assert {"h0500/gpu1", "h0500/gpu7", "h0777/gpu3"} <= set(out["covered"])
    assert "nodes/h0500/nvml.json" in out["sources"] and out["omitted"]["sources"] == 1000 - MAX_LIST
    assert "h0777/gpu3" in out["data"]["gpus"] and out["omitted"]["data.gpus"] == 8000 - MAX_LIST
    assert out["data"]["n"] == 1000 and {"host": "h0500", "x": 1} in out["data"]["rows"]
    assert out["omitted"]["data.rows"] == 1000 - MAX_LIST
    assert len(rec["covered"]) == 8000  # the input is not changed
    assert len(json.dumps(out)) < len(json.dumps(rec)) / 20


def test_the_named_components_signals_come_before_other_signals() -> None:
    rec = _record(10)
    rec["signals"] = [
        {"name": "link_errors", "component": f"n{i:03d}/mlx5_0", "kind": "nic", "detail": "", "values": {}}
        for i in range(200)
    ]
    out = bound_record(rec, ["n150/mlx5_0"], limit=8)
    assert [s["component"] for s in out["signals"]][:8].count("n150/mlx5_0") == 1
    assert len(out["signals"]) == 8 and out["omitted"]["signals"] == 192


def test_small_records_are_unchanged() -> None:
    rec = _record(4)
    assert bound_record(rec, ["h0001/gpu1"]) == rec


def test_report_is_bounded_and_forensic_evidence_prints_the_whole_record(tmp_path: Path, make_bundle) -> None:
    from forensic.harness.cli._common import _checkpointer
    from forensic.harness.graph import Investigator

    bundle = make_bundle("pcie_downtrain")
    cp = tmp_path / "cp.sqlite"
    # a tiny limit so the small test fleet is cut like a large one
    import forensic.harness.bounded as bounded

    old = bounded.MAX_LIST
    bounded.bound_record.__defaults__ = (2,)
    try:
        report = Investigator(bundle, checkpointer=_checkpointer(cp)).run(thread_id="t1")
    finally:
        bounded.bound_record.__defaults__ = (old,)
    steps = next(e for e in report["evidence"] if e["tool"] == "job_steps")
    assert steps["omitted"].get("covered", 0) > 0 and len(steps["covered"]) == 2
    assert report["verdict"]["root_cause"] == "pcie_downtrain"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "evidence",
            "t1",
            steps["id"],
            "--checkpoint",
            str(cp),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    full = json.loads(out.stdout)
    assert len(full["covered"]) == len(steps["covered"]) + steps["omitted"]["covered"]
    bad = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "evidence", "t1", "ev-99", "--checkpoint", str(cp)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "ev-99" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_peers_sample_the_other_hosts_evenly_and_keep_the_scope(make_bundle) -> None:
    ctx = ToolContext(Bundle(make_bundle(None)))
    names = ctx.source.host_names()
    assert ctx.peers(names[:1]) == names  # a small fleet is read whole
    one = ctx.peers(names[-1:], k=1)
    assert names[-1] in one and len(one) == 2
