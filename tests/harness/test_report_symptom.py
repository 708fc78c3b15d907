"""A report shows both ends of its chain: the cause on its part, and the job-wide evidence of the
symptom it explains; the step chart says what it shows, including for a job that stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from forensic.harness.graph import Investigator

ROOT = Path(__file__).resolve().parents[2]
HANG = ROOT / "evals" / "examples" / "gpu-fell-off-bus-hang"
PCIE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def test_a_hang_report_cites_the_watchdog_and_the_stopped_steps_beside_the_lost_gpu() -> None:
    report = Investigator(HANG).run()
    assert report["verdict"]["root_cause"] == "gpu_fell_off_bus"
    claims = [f["claim"] for f in report["findings"]]
    assert any("cannot be read by NVML" in c for c in claims)
    assert any("watchdog timeouts" in c for c in claims)
    assert any("logged no step" in c for c in claims)
    assert all(f["evidence"] for f in report["findings"])
    assert not any(n.startswith("finding dropped") for n in report["notes"])


def test_a_healthy_report_gets_no_symptom_findings() -> None:
    report = Investigator(ROOT / "evals" / "examples" / "healthy-control").run()
    assert report["verdict"]["root_cause"] == "healthy"
    assert not any(f.get("subject") == "job" and "slow" in f["claim"] for f in report["findings"])


def _readable(case: Path, tmp_path: Path) -> str:
    env = {**os.environ, "FORENSIC_STATE_DIR": str(tmp_path), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "forensic.harness.cli", "investigate", str(case)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_the_step_chart_of_a_stopped_job_says_the_steps_ended(tmp_path: Path) -> None:
    out = _readable(HANG, tmp_path)
    assert "steps end here: the job logged no step" in out and "+0%" not in out


def test_the_step_chart_of_a_straggler_names_what_the_percentage_measures(tmp_path: Path) -> None:
    out = _readable(PCIE, tmp_path)
    assert "rank 0 +17% against the median over its last quarter of steps" in out
