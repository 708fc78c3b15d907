"""``forensic watch`` and ``forensic bench watch`` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests import cli
from tests.harness.service.conftest import server  # noqa: F401  (the real server fixture)

from .recorded import RecordedJob, synthetic_steps


def _cli(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    return cli.forensic_here(*args, state=tmp / "cli-state", env={"COLUMNS": "200"}, cwd=tmp)


def test_watch_once_prints_the_alert_it_would_post_and_then_nothing_more(tmp_path: Path) -> None:
    ranks = 16
    rec = RecordedJob(tmp_path / "job", [f"n{r // 8}" for r in range(ranks)], [r % 8 for r in range(ranks)])
    for s in synthetic_steps(150, ranks, seed=9, slow={11: 1.1}, slow_from=70):
        rec.write(*s)
    args = ("watch", "--job", f"llm-z={tmp_path / 'job'}", "--state", str(tmp_path / "st"), "--once")
    done = _cli(*args, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    alerts = [json.loads(line) for line in done.stdout.splitlines()]
    ranks_found = [
        (a["labels"]["training_job"], a["labels"]["rank"]) for a in alerts if "rank" in a["labels"]
    ]
    assert ranks_found == [("llm-z", "11")]
    # the job waits for its slow rank at every step: a whole-job finding may come with it
    assert {a["labels"]["watch_kind"] for a in alerts if "rank" not in a["labels"]} <= {"job_slowdown"}
    again = _cli(*args, tmp=tmp_path)  # resumed: nothing new to say
    assert again.returncode == 0 and again.stdout == ""


def test_watch_refuses_a_job_without_a_folder_in_one_line(tmp_path: Path) -> None:
    done = _cli("watch", "--job", "nofolder", tmp=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "NAME=FOLDER" in done.stderr
    done = _cli("watch", "--job", f"x={tmp_path / 'missing'}", tmp=tmp_path)
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_bench_watch_json_has_exactly_the_promised_keys(tmp_path: Path) -> None:
    done = _cli("bench", "watch", "--ranks", "64", "--days", "0.2", "--json", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert list(r) == ["ranks", "per_step_ms", "healthy_days", "false_alarms", "faults"]
    assert r["ranks"] == 64 and r["healthy_days"] > 0.19 and r["per_step_ms"] > 0
    assert [set(f) for f in r["faults"]] == [{"kind", "detected", "detect_delay_steps"}] * 6


def test_watch_posts_to_a_running_service_and_a_second_run_opens_nothing_more(server, tmp_path: Path) -> None:  # noqa: F811
    ranks = 16
    rec = RecordedJob(tmp_path / "job", [f"n{r // 8}" for r in range(ranks)], [r % 8 for r in range(ranks)])
    for s in synthetic_steps(150, ranks, seed=9, slow={11: 1.1}, slow_from=70):
        rec.write(*s)
    srv = server().start()
    token = srv.folder / "alertmanager.token"  # a webhook-role user of that service
    args = ("watch", "--job", f"llm-z={tmp_path / 'job'}", "--state", str(tmp_path / "st"), "--once")
    args += ("--service", srv.url, "--token-file", str(token))
    for _ in range(2):
        done = _cli(*args, tmp=tmp_path)
        assert done.returncode == 0 and done.stdout == "", done.stderr
    (st,) = [tmp_path / "st" / p for p in os.listdir(tmp_path / "st") if p.endswith(".npz")]
    st.unlink()  # state lost: everything is read and sent again, and intake knows every fingerprint
    assert _cli(*args, tmp=tmp_path).returncode == 0
    invs = srv.get("/api/v1/investigations?job=llm-z").json()["investigations"]
    assert len(invs) == 1
    alerts = srv.get(f"/api/v1/investigations/{invs[0]['id']}").json()["alerts"]
    assert "11" in [a["labels"].get("rank") for a in alerts] and all(a["receipts"] == 2 for a in alerts)
