"""``forensic investigate --fleet`` bad input, and ``forensic bench fleet`` on a small fleet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.evals.fleet_rig import prometheus_binaries


def _cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "FORENSIC_STATE_DIR": str(Path(cwd or ".").resolve() / "state")}
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give an incident bundle, or --fleet"),
        (["--fleet", "fleet.toml"], "--fleet needs --job"),
        (["--fleet", "missing.toml", "--job", "j"], "no such fleet file"),
        (["--fleet", "fleet.toml", "--job", "j", "--since", "two hours"], "--since"),
        (["--fleet", "fleet.toml", "--job", "j", "--until", "yesterday"], "--until"),
        (["--fleet", "fleet.toml", "--job", "j;rm -rf /"], "not a valid job name"),
        (["--fleet", "bad.toml", "--job", "j"], "bad.toml: agents: Field required"),
    ],
)
def test_bad_fleet_arguments_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "token"\nhosts = ["h1"]\n'
    )
    (tmp_path / "bad.toml").write_text('[prometheus]\nurl = "http://p:9090"\n')
    done = _cli("investigate", *args, "--no-checkpoint", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_fleet_whose_agents_are_all_down_still_concludes(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://127.0.0.1:9/{host}"\ntoken_file = "token"\nhosts = ["h1", "h2"]\ntimeout_s = 2\n'
    )
    done = _cli(
        "investigate",
        "--fleet",
        "fleet.toml",
        "--job",
        "train",
        "--since",
        "1h",
        "--json",
        "--no-checkpoint",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] in ("inconclusive", "healthy")
    notes = " ".join(report["notes"])
    assert "h1" in notes and "h2" in notes and "could not be read" in notes


@pytest.mark.slow
def test_bench_fleet_json(tmp_path: Path) -> None:
    args = ["bench", "fleet", "--hosts", "4", "--json"] + (
        [] if prometheus_binaries() else ["--no-prometheus"]
    )
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert {"replay_s", "live_s", "live_over_replay", "same_verdict"} <= set(r)
    assert r["hosts"] == 4 and r["replay_s"] > 0 and r["live_s"] > 0
    assert r["same_verdict"] is True and r["unreadable_hosts"] == []


@pytest.mark.slow
def test_bench_triage_json(tmp_path: Path) -> None:
    import shutil

    if not (prometheus_binaries() and shutil.which("prometheus-alertmanager")):
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus, promtool and prometheus-alertmanager are installed by .ci/run")
        pytest.skip("prometheus or alertmanager not installed")
    done = _cli("bench", "triage", "--hosts", "8", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (s,) = json.loads(done.stdout)["sizes"]
    assert {
        "hosts",
        "alert_to_verdict_s",
        "alert_to_notification_s",
        "verdict_matches_replay",
        "bundles_used",
        "notified",
    } <= set(s)
    assert (
        s["hosts"] == 8
        and s["verdict_matches_replay"] is True
        and s["bundles_used"] == 0
        and s["notified"] is True
    )
    assert 0 < s["alert_to_verdict_s"] < 60 and 0 < s["alert_to_notification_s"] < 60


@pytest.mark.parametrize("hosts", ["", "1", "x", "64,999"])
def test_bench_triage_bad_sizes_are_one_line(tmp_path: Path, hosts: str) -> None:
    done = _cli("bench", "triage", "--hosts", hosts, "--json", cwd=tmp_path)
    assert done.returncode == 2 and "--hosts" in done.stderr and "Traceback" not in done.stderr
