"""The forensic command line: exit codes, one clear line for bad input, JSON on stdout."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.harness.models import Report


def forensic(*args: str, env_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"FORENSIC_STATE_DIR": str(env_dir), "PATH": "/usr/bin:/bin", "HOME": str(env_dir)},
    )


def test_investigate_json(make_bundle, tmp_path: Path) -> None:
    out = forensic("investigate", str(make_bundle("pcie_downtrain")), "--json", env_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    report = Report.model_validate(json.loads(out.stdout))
    assert report.verdict.root_cause == "pcie_downtrain"
    assert (tmp_path / "checkpoints.sqlite").is_file()


def test_investigate_readable(make_bundle, tmp_path: Path) -> None:
    out = forensic("investigate", str(make_bundle("thermal_throttle")), "--no-checkpoint", env_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "thermal_throttle" in out.stdout and "node-b.example/gpu2" in out.stdout and "ev-" in out.stdout


def test_budget_flag(make_bundle, tmp_path: Path) -> None:
    out = forensic(
        "investigate",
        str(make_bundle("thermal_throttle")),
        "--json",
        "--budget-tool-calls",
        "1",
        env_dir=tmp_path,
    )
    assert out.returncode == 0
    assert json.loads(out.stdout)["status"] == "inconclusive"


def _one_line_exit_2(out: subprocess.CompletedProcess, needle: str) -> None:
    assert out.returncode == 2, out
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in out.stderr
    assert out.stdout == ""


def test_not_a_bundle(tmp_path: Path) -> None:
    _one_line_exit_2(forensic("investigate", str(tmp_path), env_dir=tmp_path), "not an incident bundle")


def test_corrupt_incident(make_bundle, tmp_path: Path) -> None:
    b = make_bundle(None)
    (b / "incident.json").write_text("{oops")
    _one_line_exit_2(forensic("investigate", str(b), "--json", env_dir=tmp_path), "incident.json")


def test_truncated_gzip(make_bundle, tmp_path: Path) -> None:
    b = make_bundle(None)
    dm = b / "nodes" / "node-a.example" / "cmd" / "dmesg.txt"
    data = gzip.compress(dm.read_bytes() * 50)
    dm.unlink()
    (dm.parent / "dmesg.txt.gz").write_bytes(data[: len(data) // 2])
    # Checked lazily: the corrupt file costs the read that wants it, not the investigation.
    out = forensic("investigate", str(b), "--json", "--no-checkpoint", env_dir=tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    report = json.loads(out.stdout)
    # Its readable part is read, and the file is named as read only in part, with what was lost.
    met = [
        rec
        for rec in report["evidence"]
        if any("node-a.example/cmd/dmesg.txt.gz" in s for s in rec["sources"])
    ]
    assert met
    for rec in met:
        assert rec["status"] == "ok" and any("dmesg.txt.gz" in p and "lost" in p for p in rec["partial"]), rec
    assert any("partly read" in u and "dmesg.txt.gz" in u for u in report["unread"])


@pytest.mark.parametrize("missing", ["job/steps.csv", "topology.json", "nodes/node-b.example/nvml.json"])
def test_missing_optional_files_still_investigate(make_bundle, tmp_path: Path, missing: str) -> None:
    b = make_bundle("pcie_downtrain")
    (b / missing).unlink()
    out = forensic("investigate", str(b), "--json", "--no-checkpoint", env_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] in ("confirmed", "probable", "healthy", "inconclusive")


def test_resume_flag(make_bundle, tmp_path: Path) -> None:
    b = make_bundle("hbm_degradation")
    first = forensic("investigate", str(b), "--json", "--thread", "t1", env_dir=tmp_path)
    again = forensic("investigate", str(b), "--json", "--resume", "t1", env_dir=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["verdict"] == json.loads(first.stdout)["verdict"]


def test_tools_lists_schemas(tmp_path: Path) -> None:
    out = forensic("tools", "--json", env_dir=tmp_path)
    names = {t["name"] for t in json.loads(out.stdout)}
    assert {"pcie_link", "gpu_health", "kernel_log", "metrics"} <= names


def test_approve_a_proposal_from_the_command_line(make_bundle, tmp_path: Path) -> None:
    out = forensic(
        "investigate", str(make_bundle("pcie_downtrain")), "--json", "--thread", "t-ap", env_dir=tmp_path
    )
    proposal = json.loads(out.stdout)["proposals"][0]
    wrong = forensic("approve", "t-ap", "--approve", f"{proposal['id']}=abc", env_dir=tmp_path)
    assert wrong.returncode == 2 and "refused" in wrong.stderr and "pending_approval" in wrong.stdout
    right = forensic(
        "approve",
        "t-ap",
        "--approve",
        f"{proposal['id']}={proposal['content_hash']}",
        "--json",
        env_dir=tmp_path,
    )
    assert right.returncode == 0, right.stderr
    assert json.loads(right.stdout)["proposals"][0]["status"] == "approved"
    audit = [json.loads(ln) for ln in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [a["outcome"] for a in audit] == ["refused", "approved"]


def test_approve_needs_a_waiting_thread(tmp_path: Path) -> None:
    out = forensic("approve", "nope", "--approve", "rp-1=abc", env_dir=tmp_path)
    assert out.returncode == 2 and "checkpoint" in out.stderr
