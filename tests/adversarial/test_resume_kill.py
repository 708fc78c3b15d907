"""A run killed with SIGKILL at any checkpoint write resumes to a verdict;
--resume with another bundle is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import build_bundle

ROOT = Path(__file__).resolve().parents[2]

# (n-th write, which write, before or after it): the start, the middle and the end of a run,
# on both sides of a step's pending writes and of its checkpoint.
# Those that crashed before the fix among them (2/put/after, 3/put_writes/after, 5/put_writes/
# before, 8/put/before and after).
KILL_POINTS = [
    (1, "put", "after"),
    (1, "put_writes", "after"),
    (2, "put", "after"),
    (2, "put_writes", "before"),
    (3, "put_writes", "after"),
    (5, "put_writes", "before"),
    (8, "put", "before"),
    (8, "put", "after"),
]


def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("kill"), "pcie_downtrain")


@pytest.mark.parametrize("n,which,when", KILL_POINTS)
def test_resume_after_kill_at_any_point(bundle: Path, tmp_path: Path, n: int, which: str, when: str) -> None:
    cp = tmp_path / "cp.sqlite"
    env = {**os.environ, "FORENSIC_STATE_DIR": str(tmp_path / "state")}
    killed = subprocess.run(
        [sys.executable, "-m", "tests.adversarial._killer", str(bundle), str(cp), "t1", str(n), which, when],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert killed.returncode in (-9, 0), killed.stderr
    out = _cli("investigate", str(bundle), "--checkpoint", str(cp), "--resume", "t1", "--json", env=env)
    if out.returncode == 2 and "nothing was saved" in out.stderr:
        assert "Traceback" not in out.stderr
        return
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["verdict"]["root_cause"] and report["status"] in ("confirmed", "probable", "inconclusive")


def test_resume_with_another_bundle_is_refused(bundle: Path, tmp_path: Path) -> None:
    env = {**os.environ, "FORENSIC_STATE_DIR": str(tmp_path / "state")}
    first = _cli("investigate", str(bundle), "--thread", "one", "--json", env=env)
    assert first.returncode == 0, first.stderr
    other = build_bundle(tmp_path / "other", None)
    out = _cli("investigate", str(other), "--resume", "one", env=env)
    assert out.returncode == 2 and "refusing to mix" in out.stderr and "Traceback" not in out.stderr
