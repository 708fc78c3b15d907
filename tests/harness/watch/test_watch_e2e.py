"""End to end: a replayed job whose straggler crosses no alert rule is found by the watcher inside
``forensic serve`` (its own process), investigated, notified and approved, with no Alertmanager.

The example incident's recorded steps (64 ranks; rank 0 on gpu-e126 becomes 17% slower at its
35th step while the job's step time rises 13%, which no rule here watches) are written step by
step by the real step recorder, one recorder per rank, into the job folder the service follows.
No alert is ever posted to ``/api/v1/alerts``: the only way in is the watcher.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from forensic.harness.watch import ALERTNAME

from tests.harness.service.conftest import EXAMPLE, JOB, server  # noqa: F401  (the real server fixture)
from tests.harness.service.test_alert_path import _Receiver, _serve

from .recorded import RecordedJob, example_steps


@pytest.mark.slow
def test_a_straggler_no_rule_catches_is_found_by_watch_investigated_and_notified(
    server,  # noqa: F811
    tmp_path: Path,
) -> None:
    truth = json.loads((EXAMPLE / "truth.json").read_text())
    steps, hosts = example_steps(EXAMPLE / "bundle")
    folder = tmp_path / "jobs" / JOB
    rec = RecordedJob(folder, hosts, [r % 8 for r in range(len(hosts))])
    _Receiver.got = []
    receiver, port = _serve(_Receiver)
    srv = server(
        extra=(
            f'[notify]\nslack_webhooks = ["http://127.0.0.1:{port}/slack"]\n'
            f'[watch]\njobs_dir = "{tmp_path / "jobs"}"\npoll_s = 0.2\n'
        ),
    )
    done = threading.Event()

    def replay() -> None:  # the job runs: a step of every rank every 50 ms
        for s in steps:
            rec.write(*s)
            time.sleep(0.05)
        done.set()

    try:
        rec.write(*steps[0])  # the folder holds step files before the service looks
        srv.start()
        writer = threading.Thread(target=replay, daemon=True)
        writer.start()
        deadline = time.monotonic() + 120
        invs: list[dict] = []
        while time.monotonic() < deadline and not invs:
            invs = srv.get("/api/v1/investigations").json()["investigations"]
            time.sleep(0.3)
        assert invs, "the watcher opened nothing; log:\n" + srv.log()[-3000:]
        inv = invs[0]["id"]
        d = srv.wait_status(inv, timeout_s=240)
        assert d["status"] == "awaiting_approval", (d.get("error"), srv.log()[-2000:])
        assert (d["verdict"], d["component"]) == (truth["root_cause"], truth["component"])
        assert done.wait(60)
        time.sleep(1.0)  # the watcher's last polls: whatever else it found is grouped, not opened
        invs = srv.get("/api/v1/investigations").json()["investigations"]
        assert [i["id"] for i in invs] == [inv]
        alerts = srv.get(f"/api/v1/investigations/{inv}").json()["alerts"]
        assert alerts and {a["alertname"] for a in alerts} == {ALERTNAME}  # the watcher's, only
        ranks = [a for a in alerts if a["labels"].get("watch_kind") == "rank_slowdown"]
        assert [(a["labels"]["rank"], a["labels"]["Hostname"]) for a in ranks] == [("0", "gpu-e126")]
        found = json.loads(ranks[0]["annotations"]["watch_evidence"])
        onset = steps[34][0]  # where the recorded straggler begins
        assert found["step"] - onset <= 60 * 20 and found["onset_step"] >= steps[30][0]
        watch_state = list((tmp_path / "watch").glob("*.npz"))
        assert watch_state, "the watcher keeps its position beside the database"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _Receiver.got:
            time.sleep(0.2)
        assert _Receiver.got and inv in _Receiver.got[0]["text"]
        assert truth["root_cause"] in _Receiver.got[0]["text"]
        # an approver approves its proposal, as for any alert
        p = d["report"]["proposals"][0]
        ok = srv.post(
            f"/api/v1/investigations/{inv}/proposals/{p['id']}/approve",
            "ann",
            json={"content_hash": p["content_hash"], "reason": "watch found it; drain"},
        )
        assert ok.status_code == 200, ok.text
        hooks = srv.get("/api/v1/audit").json()["entries"]
        assert ("ann", "approve", "approved") in [(a["actor"], a["action"], a["outcome"]) for a in hooks]
    finally:
        receiver.shutdown()
        rec.close()


@pytest.mark.slow
def test_serve_killed_and_restarted_resumes_watching_without_a_second_opening(
    server,  # noqa: F811
    tmp_path: Path,
) -> None:
    from .recorded import synthetic_steps

    ranks = 16
    folder = tmp_path / "jobs" / "llm-y"
    rec = RecordedJob(folder, [f"gpu-{r // 8}" for r in range(ranks)], [r % 8 for r in range(ranks)])
    steps = list(synthetic_steps(200, ranks, seed=5, slow={3: 1.09}, slow_from=60))
    for s in steps[:120]:
        rec.write(*s)
    srv = server(extra=f'[watch]\njobs_dir = "{tmp_path / "jobs"}"\npoll_s = 0.2\n')
    srv.start()
    deadline = time.monotonic() + 60
    invs: list[dict] = []
    while time.monotonic() < deadline and not invs:
        invs = srv.get("/api/v1/investigations").json()["investigations"]
        time.sleep(0.3)
    assert len(invs) == 1, srv.log()[-2000:]
    first = srv.get(f"/api/v1/investigations/{invs[0]['id']}").json()["alerts"]
    srv.kill9()  # no clean shutdown: the watcher's state is whatever it last saved
    for s in steps[120:]:
        rec.write(*s)
    srv.start()
    state = tmp_path / "watch"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the restarted watcher has read the last step
        if b'"emitted": %d' % steps[-1][0] in b"".join(p.read_bytes() for p in state.glob("*.npz")):
            break
        time.sleep(0.3)
    else:
        raise AssertionError("the restarted watcher did not catch up; " + srv.log()[-2000:])
    invs = srv.get("/api/v1/investigations").json()["investigations"]
    assert len(invs) == 1
    after = srv.get(f"/api/v1/investigations/{invs[0]['id']}").json()["alerts"]
    assert [a["fingerprint"] for a in after] == [a["fingerprint"] for a in first]
    rec.close()
