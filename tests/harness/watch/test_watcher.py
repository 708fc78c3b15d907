"""The watcher: following what the real step recorder writes, whole steps, restarts without
duplicate openings, and findings entering the service's own intake."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from forensic.harness.watch import (
    ALERTNAME,
    FileStateStore,
    FolderFollower,
    StepAssembler,
    WatchedJob,
    Watcher,
    finding_alert,
)
from forensic.harness.watch.follow import Row

from tests.harness.service.conftest import app_client  # noqa: F401  (the in-process service fixture)

from .recorded import RecordedJob, synthetic_steps

R = 32
HOSTS = [f"gpu-{r // 8:02d}" for r in range(R)]
GPUS = [r % 8 for r in range(R)]


def _job(folder: Path) -> RecordedJob:
    return RecordedJob(folder, HOSTS, GPUS)


# -- the follower ----------------------------------------------------------------------------


def test_the_follower_reads_what_the_recorder_wrote_and_only_once(tmp_path: Path) -> None:
    rec = _job(tmp_path)
    steps = list(synthetic_steps(5, R, seed=1))
    for s in steps[:3]:
        rec.write(*s)
    f = FolderFollower(tmp_path)
    rows = f.poll()
    assert len(rows) == 3 * R and {h for h, _ in rows.placement.values()} == set(HOSTS)
    assert rows.placement[13] == ("gpu-01", 5)
    first = (rows.rank == 0) & (rows.step == steps[0][0])
    assert rows.compute[first][0] == pytest.approx(steps[0][3][0], rel=1e-5)
    assert len(f.poll()) == 0
    for s in steps[3:]:
        rec.write(*s)
    again = FolderFollower(tmp_path, f.offsets)  # resumed from saved offsets: only the new rows
    assert sorted(set(again.poll().step.tolist())) == [steps[3][0], steps[4][0]]


def test_the_follower_waits_for_a_whole_line_and_skips_what_does_not_parse(tmp_path: Path) -> None:
    p = tmp_path / "steps-rank00000.csv"
    head = "step,rank,start_unix,duration_s,compute_s,loss,grad_norm,param_checksum,host,local_gpu\n"
    p.write_text(head + "1,0,1700000000,1.0,0.8,,,,h1,0\n2,0,17000000")
    f = FolderFollower(tmp_path)
    assert f.poll().step.tolist() == [1]
    with open(p, "a") as fh:
        fh.write(
            "01,1.0,0.8,,,,h1,0\n"
            "x,0,1,1,1,,,,h1,0\n"  # not a number
            "3,-4,1,1,1,,,,h1,0\n"  # negative rank
            f"4,{1 << 40},1,1,1,,,,h1,0\n"  # a rank no array should be sized by
            "5,0,1,-1,1,,,,h1,0\n"  # negative duration
            + "6,0,1,1,1,,,,"
            + "h" * 10_000
            + ",0\n"  # a line far too long
            "7,0,1700000010,1.0,0.8,,,,h1,0\n"
        )
    (tmp_path / "steps-rank00001.csv").write_bytes(b"\x00\xff\xfe" * 5000 + b"\n" + os.urandom(3000))
    (tmp_path / "steps-rank00002.csv").symlink_to("/etc/passwd")
    (tmp_path / "steps-rank00003.csv").write_text("no,header,here\n1,2,3\n")
    (tmp_path / "notes.csv").write_text(head + "9,0,1700000000,1.0,0.8,,,,h1,0\n")  # not a step file
    rows = f.poll()
    assert sorted(rows.step.tolist()) == [2, 7] and f.bad_lines >= 6
    # the same lines in a file of the recorder's column order take numpy's path: same refusals
    g = tmp_path / "fast"
    g.mkdir()
    (g / "steps-rank00000.csv").write_text(
        head + "1,0,1700000000,1.0,0.8,,,,h1,0\n" + "1.5,0,1,1,1,,,,h1,0\n" + f"4,{1 << 40},1,1,1,,,,h1,0\n"
        "5,0,1,-1,1,,,,h1,0\n" + "6,0,1,inf,1,,,,h1,0\n" + "7,0,1,1,nan,,,,h1,0\n"
    )
    fast = FolderFollower(g)
    got = fast.poll()
    assert got.step.tolist() == [1, 7] and np.isnan(got.compute[1]) and fast.bad_lines == 4


def test_steps_are_whole_in_order_and_a_stopped_rank_is_missing_not_waited_for() -> None:
    a = StepAssembler(lag=2)
    rows = [
        Row(s, r, 100.0 + s, 1.0, 0.8, f"h{r}", 0)
        for s in range(1, 6)
        for r in range(4)
        if not (r == 3 and s > 2)
    ]
    a.add(rows)
    out = a.ready()
    assert [s for s, *_ in out] == [1, 2]  # 3 waits for rank 3 until the others are lag steps on
    a.add([Row(6, r, 106.0, 1.0, 0.8, f"h{r}", 0) for r in range(3)])
    out = a.ready()
    assert [s for s, *_ in out] == [3] and np.isnan(out[0][3][3]) and not np.isnan(out[0][3][2])
    # a restart from a checkpoint: the step goes back, in a run that started later
    a.add([Row(2, r, 500.0, 1.0, 0.8, f"h{r}", 0) for r in range(3)])
    a.add([Row(3, r, 502.0, 1.0, 0.8, f"h{r}", 0) for r in range(4)] + [Row(2, 3, 500.0, 1.0, 0.8, "h3", 0)])
    assert [s for s, *_ in a.ready()] == [2, 3]
    # a late row for a step already handed out, from the old run, is dropped
    a.add([Row(1, 0, 101.0, 1.0, 0.8, "h0", 0)])
    assert a.late_rows == 1


# -- the watcher: restarts without duplicate openings -----------------------------------------


class Sink:
    def __init__(self) -> None:
        self.alerts: list[dict] = []

    def __call__(self, alerts: list[dict]) -> None:
        self.alerts += alerts


def _straggler_job(folder: Path, n: int = 160, slow_from: int = 80) -> list:
    return list(synthetic_steps(n, R, seed=3, slow={21: 1.08}, slow_from=slow_from))


def test_a_straggler_opens_once_across_watcher_restarts(tmp_path: Path) -> None:
    folder, state = tmp_path / "job", FileStateStore(tmp_path / "state")
    rec = _job(folder)
    steps = _straggler_job(folder)
    sink = Sink()
    job = [WatchedJob("llm-x", folder)]
    for i, s in enumerate(steps):
        rec.write(*s)
        if i % 20 == 19:  # a new watcher process every 20 steps, resuming from the saved state
            Watcher(job, sink, state, poll_s=0).poll_once()
    assert [a["labels"]["rank"] for a in sink.alerts] == ["21"]
    a = sink.alerts[0]
    assert a["labels"]["alertname"] == ALERTNAME and a["labels"]["training_job"] == "llm-x"
    assert a["labels"]["Hostname"] == "gpu-02" and a["labels"]["gpu"] == "5"
    evidence = json.loads(a["annotations"]["watch_evidence"])
    assert evidence["kind"] == "rank_slowdown" and evidence["onset_step"] >= 1000 + 80 - 3
    # the same data read from scratch gives the same alert, fingerprint included
    fresh = Sink()
    Watcher(job, fresh, FileStateStore(tmp_path / "other"), poll_s=0).poll_once()
    assert [x["fingerprint"] for x in fresh.alerts] == [a["fingerprint"]]


def test_killed_after_handing_an_alert_over_the_resend_is_a_duplicate_at_intake(
    app_client,  # noqa: F811
    tmp_path: Path,
) -> None:
    folder = tmp_path / "job"
    rec = _job(folder)
    for s in _straggler_job(folder):
        rec.write(*s)
    _, svc = app_client(extra="")
    handed: list[int] = []

    def sink(alerts: list[dict]) -> None:
        svc._watch_sink(alerts)  # the service's own intake: committed before it returns
        handed.append(len(alerts))

    class KilledBeforeSaving(FileStateStore):
        def save(self, job: str, data: bytes) -> None:
            if len(handed) == 1:
                raise OSError("killed before the state was saved")
            super().save(job, data)

    job = [WatchedJob("llm-x", folder)]
    store = KilledBeforeSaving(tmp_path / "state")
    Watcher(job, sink, store, poll_s=0).poll_once()
    assert handed == [1] and store.load("llm-x") is None
    Watcher(job, sink, store, poll_s=0).poll_once()  # the next process reads it all again
    assert handed == [1, 1]
    invs = svc.store.investigations(status=None, job="llm-x", since=None, until=None, limit=10)
    assert len(invs) == 1 and invs[0]["alert_count"] == 1
    alerts = svc.store.alerts_of(invs[0]["id"])
    assert [x["alertname"] for x in alerts] == [ALERTNAME] and alerts[0]["receipts"] == 2
    Watcher(job, sink, store, poll_s=0).poll_once()  # and once saved, nothing is sent again
    assert handed == [1, 1]


def test_a_state_file_that_does_not_load_starts_over_and_says_so(tmp_path: Path, caplog) -> None:
    folder = tmp_path / "job"
    rec = _job(folder)
    for s in list(synthetic_steps(40, R, seed=4)):
        rec.write(*s)
    store = FileStateStore(tmp_path / "state")
    store.save("llm-x", b"garbage")
    w = Watcher([WatchedJob("llm-x", folder)], Sink(), store, poll_s=0)
    w.poll_once()
    assert "not resumed" in caplog.text and w.status()[0]["steps"] > 30


def test_the_alert_is_a_valid_webhook_alert() -> None:
    from forensic.harness.service.intake import parse_payload
    from forensic.tools.detectors.watch import Finding

    f = Finding("host_slowdown", 900, 1.75e9, 880, 0.1, host="gpu-7", ranks=[56, 57, 58])
    body = {"version": "4", "alerts": [finding_alert("job-a", f)]}
    _, payload = parse_payload(json.dumps(body).encode(), ["training_job"])
    a = payload.alerts[0]
    assert a.job == "job-a" and a.hosts == ["gpu-7"] and a.alertname == ALERTNAME
    assert "gpu-7" in a.annotations["summary"] and a.starts_unix == pytest.approx(1.75e9)


def test_files_of_several_ranks_each_read_as_the_per_rank_files_do(tmp_path: Path) -> None:
    per_rank, per_host = tmp_path / "a", tmp_path / "b"
    rec = _job(per_rank)
    steps = list(synthetic_steps(4, R, seed=6))
    for s in steps:
        rec.write(*s)
    per_host.mkdir()
    head = (per_rank / "steps-rank00000.csv").read_text().splitlines()[0]
    for h in sorted(set(HOSTS)):
        lines = [
            ln
            for r in range(R)
            if HOSTS[r] == h
            for ln in (per_rank / f"steps-rank{r:05d}.csv").read_text().splitlines()[1:]
        ]
        (per_host / f"steps-{h}.csv").write_text("\n".join([head, *lines]) + "\n")
    a, b = FolderFollower(per_rank).poll(), FolderFollower(per_host).poll()
    assert len(a) == len(b) == 4 * R and a.placement == b.placement
    ka, kb = np.lexsort((a.rank, a.step)), np.lexsort((b.rank, b.step))
    np.testing.assert_array_equal(a.compute[ka], b.compute[kb])


def test_steps_pushed_over_http_are_watched_like_a_job_folder(app_client, tmp_path: Path) -> None:  # noqa: F811
    from tests.harness.service.conftest import auth

    c, svc = app_client(extra=f'[watch]\njobs_dir = "{tmp_path / "none"}"\npoll_s = 0.1\n')
    head = "step,rank,start_unix,duration_s,compute_s,host,local_gpu\n"
    steps = list(synthetic_steps(160, R, seed=3, slow={21: 1.08}, slow_from=80))
    for i in range(0, len(steps), 40):  # four pushes of 40 steps each
        body = head + "".join(
            f"{s},{r},{t:.6f},{d[r]:.6f},{cp[r]:.6f},{HOSTS[r]},{GPUS[r]}\n"
            for s, t, d, cp in steps[i : i + 40]
            for r in range(R)
        )
        got = c.post("/api/v1/watch/steps?job=llm-p", content=body, headers=auth("alertmanager"))
        assert got.status_code == 202 and got.json()["accepted_rows"] == 40 * R, got.text
    deadline = time.monotonic() + 30
    invs: list = []
    while time.monotonic() < deadline and not invs:
        invs = svc.store.investigations(status=None, job="llm-p", since=None, until=None, limit=10)
        time.sleep(0.1)
    assert len(invs) == 1
    alerts = svc.store.alerts_of(invs[0]["id"])
    assert [(a["alertname"], a["labels"]["rank"]) for a in alerts][:1] == [(ALERTNAME, "21")]
    # refusals: a viewer may not push, a bad job name or a body without the header is one line
    assert c.post("/api/v1/watch/steps?job=x", content=head, headers=auth("vic")).status_code == 403
    bad = c.post("/api/v1/watch/steps?job=../x", content=head, headers=auth("alertmanager"))
    assert bad.status_code == 422 and "job name" in bad.text
    assert (
        c.post("/api/v1/watch/steps?job=x", content="1,2,3\n", headers=auth("alertmanager")).status_code
        == 422
    )
    hostile = head + "1,0,1,1,1,h,0\n" + "2,-1,1,1,1,h,0\n" + "3,0,1,nan,1,h,0\n" + "\x00\x01,\n"
    assert (
        c.post("/api/v1/watch/steps?job=y", content=hostile, headers=auth("alertmanager")).json()[
            "accepted_rows"
        ]
        == 1
    )


def test_pushed_files_rotate_and_only_the_newest_are_kept(tmp_path: Path, monkeypatch) -> None:
    from forensic.harness.watch import pushed

    monkeypatch.setattr(pushed, "ROTATE_BYTES", 2000)
    head = "step,rank,start_unix,duration_s,compute_s\n"
    f = FolderFollower(tmp_path / "j")
    seen = 0
    for s in range(40):
        assert pushed.append_pushed(tmp_path, "j", (head + f"{s},0,{1e9 + s},1.0,0.5\n" * 40).encode()) == 40
        seen += len(f.poll())  # the watcher reads every file before it is dropped
    files = sorted(p.name for p in (tmp_path / "j").iterdir())
    assert len(files) <= pushed.KEEP_FILES and files[-1] > "steps-pushed-000003.csv"
    assert seen == 40 * 40
