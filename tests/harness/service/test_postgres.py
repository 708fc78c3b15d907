"""Several API and worker processes on one real PostgreSQL 15.

Three ``forensic worker`` processes and two ``forensic serve --workers 0`` processes share one
database; ``kill -9`` of a worker mid-investigation and of an API process mid-intake.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from forensic.harness.service.bench import free_port, wait_healthy, webhook, write_config

from .conftest import EXAMPLE, TOKENS, auth

DONE = ("awaiting_approval", "concluded", "failed")


@pytest.fixture
def cluster(pg_cluster):
    return pg_cluster


@pytest.fixture
def db(cluster, request) -> str:
    return cluster.fresh_db(
        "t_" + request.node.name.lower()[:40].replace("[", "_").replace("]", "_").replace("-", "_")
    )


class Procs:
    """The test's processes, killed at the end whatever happens."""

    def __init__(self, folder: Path, db: str, extra: str) -> None:
        self.folder, self.db = folder, db
        self.config = write_config(
            folder, port=0, tokens=TOKENS, extra=extra, bundles=[{"path": EXAMPLE, "hosts": ["f*"]}]
        )
        self.procs: list[subprocess.Popen] = []

    def _spawn(self, args: list[str], log: str) -> subprocess.Popen:
        fh = open(self.folder / log, "ab")
        p = subprocess.Popen(
            [sys.executable, "-m", "forensic.harness.cli", "--log-level", "INFO", *args],
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(p)
        return p

    def api(self, i: int) -> tuple[subprocess.Popen, str]:
        port = free_port()
        p = self._spawn(
            ["serve", "--config", str(self.config), "--db", self.db, "--workers", "0", "--port", str(port)],
            f"api{i}.log",
        )
        wait_healthy(port, p)
        return p, f"http://127.0.0.1:{port}"

    def worker(self, i: int) -> subprocess.Popen:
        return self._spawn(
            ["worker", "--config", str(self.config), "--db", self.db, "--count", "1"], f"worker{i}.log"
        )

    def logs(self) -> str:
        return "\n".join(
            f"== {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(self.folder.glob("*.log"))
        )

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.fixture
def procs(tmp_path: Path, db: str):
    made: list[Procs] = []

    def make(extra: str) -> Procs:
        made.append(Procs(tmp_path, db, extra))
        return made[-1]

    yield make
    for p in made:
        p.close()


def q(db: str, sql: str, *args: Any) -> list[tuple]:
    import psycopg

    with psycopg.connect(db) as con:
        return con.execute(sql, args).fetchall()


def fault_alerts(fault: int, n: int, t0: float) -> list[dict[str, Any]]:
    """``n`` alerts of one simulated fault: one job, ``n`` hosts, distinct fingerprints."""
    out = []
    for j in range(n):
        host = f"f{fault:02d}-h{j:02d}"
        out.append(
            {
                "status": "firing",
                "labels": {
                    "alertname": "StepTimeRegression",
                    "training_job": f"job-{fault:02d}",
                    "Hostname": host,
                    "gpu": str(j % 8),
                },
                "annotations": {"summary": f"step time up on {host}"},
                "startsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + j)),
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus/graph",
                "fingerprint": f"{fault:04d}{j:012d}",
            }
        )
    return out


def wait_done(db: str, n: int, timeout_s: float, procs: Procs) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = q(
            db,
            "SELECT COUNT(*) FROM investigations WHERE status NOT IN ('awaiting_approval','concluded','failed')",
        )[0][0]
        total = q(db, "SELECT COUNT(*) FROM investigations")[0][0]
        if total >= n and left == 0:
            return
        time.sleep(0.5)
    raise AssertionError(
        f"investigations not done after {timeout_s} s: "
        f"{q(db, 'SELECT status, COUNT(*) FROM investigations GROUP BY status')}\n{procs.logs()}"
    )


def test_three_workers_two_apis_500_alerts_50_faults(procs) -> None:
    p = procs("[workers]\ncount = 1\nper_job = 1\nlease_s = 10")
    (_, url_a), (_, url_b) = p.api(0), p.api(1)
    for i in range(3):
        p.worker(i)
    t0 = time.time()
    alerts = [a for f in range(50) for a in fault_alerts(f, 10, t0)]
    # Interleave the faults and split every fault across both API processes, two alerts a webhook.
    order = sorted(range(len(alerts)), key=lambda i: (i % 10, i // 10))
    bodies = [[alerts[i] for i in order[k : k + 2]] for k in range(0, len(order), 2)]
    codes: list[int] = []

    def post(url: str, part: list[list[dict[str, Any]]]) -> None:
        with httpx.Client(base_url=url, headers=auth("alertmanager"), timeout=30) as c:
            for b in part:
                codes.append(c.post("/api/v1/alerts", json=webhook(b)).status_code)

    threads = [
        threading.Thread(target=post, args=(url, bodies[k::4])) for k, url in enumerate([url_a, url_b] * 2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes.count(202) == len(bodies) == 250
    wait_done(p.db, 50, 600, p)

    assert q(p.db, "SELECT COUNT(*) FROM alerts")[0][0] == 500
    rows = q(
        p.db,
        "SELECT job, status, runs, alert_count, verdict, component, owner FROM investigations ORDER BY job",
    )
    assert len(rows) == 50, rows
    assert [r[0] for r in rows] == [f"job-{f:02d}" for f in range(50)]  # one investigation per fault
    assert all(r[3] == 10 for r in rows), [r[3] for r in rows]
    assert all(r[2] == 1 for r in rows), "an investigation ran more than once: " + str(
        [r for r in rows if r[2] != 1]
    )
    assert {r[1] for r in rows} == {"awaiting_approval"} and {r[4] for r in rows} == {"pcie_downtrain"}
    assert {r[6] for r in rows} == {None}
    ends = q(p.db, "SELECT investigation, COUNT(*) FROM events WHERE kind='end' GROUP BY investigation")
    assert len(ends) == 50 and {n for _, n in ends} == {1}
    assert q(p.db, "SELECT COUNT(*) FROM events WHERE kind='resumed'")[0][0] == 0  # no run was taken over
    logs = [(p.folder / f"worker{i}.log").read_text() for i in range(3)]
    assert all("claiming from PostgreSQL" in log for log in logs)
    claims = [log.count("claimed by") for log in logs]
    assert sum(claims) == 50 and all(n >= 1 for n in claims), claims  # the work was shared, each claim once


def test_kill_9_worker_mid_investigation_another_resumes_it(procs) -> None:
    p = procs("[workers]\ncount = 1\nlease_s = 2\nstep_pause_s = 1.0")
    _, url = p.api(0)
    a = p.worker(0)
    t0 = time.time()
    r = httpx.post(
        url + "/api/v1/alerts", headers=auth("alertmanager"), json=webhook(fault_alerts(0, 3, t0)), timeout=30
    )
    inv = r.json()["opened"][0]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        tools = q(p.db, "SELECT COUNT(*) FROM events WHERE investigation=%s AND kind='tool_call'", inv)[0][0]
        if tools >= 2:
            break
        time.sleep(0.05)
    os.killpg(a.pid, signal.SIGKILL)
    a.wait(timeout=10)
    assert q(p.db, "SELECT status, runs FROM investigations WHERE id=%s", inv)[0] == ("running", 1), p.logs()
    b = p.worker(1)  # claims it once the dead worker's lease lapses
    tools_before = q(p.db, "SELECT COUNT(*) FROM events WHERE investigation=%s AND kind='tool_call'", inv)[0][
        0
    ]
    wait_done(p.db, 1, 180, p)
    assert b.poll() is None
    status, runs, verdict, component, report = q(
        p.db, "SELECT status, runs, verdict, component, report FROM investigations WHERE id=%s", inv
    )[0]
    assert (status, runs) == ("awaiting_approval", 2)  # claimed by the killed worker, then by the other
    kinds = [k for (k,) in q(p.db, "SELECT kind FROM events WHERE investigation=%s", inv)]
    assert kinds.count("resumed") == 1 and kinds.count("end") == 1 and kinds.count("verdict") == 1
    evidence = [e["id"] for e in json.loads(report)["evidence"]]
    # Resumed from the checkpoint, not restarted: no tool call made twice.
    assert evidence == [f"ev-{i}" for i in range(1, len(evidence) + 1)] and kinds.count("tool_call") == len(
        evidence
    )
    assert 2 <= tools_before < len(evidence)

    # The same fault, uninterrupted, on the surviving worker: the same conclusion.
    r = httpx.post(
        url + "/api/v1/alerts", headers=auth("alertmanager"), json=webhook(fault_alerts(1, 3, t0)), timeout=30
    )
    inv2 = r.json()["opened"][0]
    wait_done(p.db, 2, 180, p)
    status2, runs2, verdict2, component2, report2 = q(
        p.db, "SELECT status, runs, verdict, component, report FROM investigations WHERE id=%s", inv2
    )[0]
    assert runs2 == 1 and (status2, verdict2, component2) == (status, verdict, component)
    assert [e["id"] for e in json.loads(report2)["evidence"]] == evidence
    assert json.loads(report2)["verdict"] == json.loads(report)["verdict"]


def test_kill_9_api_during_intake_loses_no_accepted_alert(procs) -> None:
    p = procs("")
    (a, url_a), (_, url_b) = p.api(0), p.api(1)
    t0 = time.time()
    acked: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def burst(url: str, start: int) -> None:
        with httpx.Client(base_url=url, headers=auth("alertmanager"), timeout=10) as c:
            for f in range(start, 10_000, 8):
                if stop.is_set():
                    return
                batch = fault_alerts(f, 2, t0)
                try:
                    if c.post("/api/v1/alerts", json=webhook(batch)).status_code == 202:
                        with lock:
                            acked.extend(x["fingerprint"] for x in batch)
                except httpx.HTTPError:
                    if url == url_a:
                        return  # the process died under us

    threads = [
        threading.Thread(target=burst, args=(u, k), daemon=True) for k, u in enumerate([url_a, url_b] * 4)
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(acked) < 200 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(a.pid, signal.SIGKILL)
    a.wait(timeout=10)
    time.sleep(1)  # the other API process keeps accepting
    stop.set()
    for t in threads:
        t.join(timeout=30)
    stored = {f for (f,) in q(p.db, "SELECT fingerprint FROM alerts")}
    assert len(acked) >= 200
    missing = set(acked) - stored
    assert not missing, f"{len(missing)} acknowledged alerts lost"
    assert httpx.get(url_b + "/healthz", timeout=5).status_code == 200


def test_decision_through_an_api_replica_resumes_the_gate_from_postgres(procs) -> None:
    """A run finished by a worker process is approved through an API process: checkpoint, report and audit in PostgreSQL."""
    p = procs("[workers]\ncount = 1")
    (_, url_a), (_, url_b) = p.api(0), p.api(1)
    p.worker(0)
    r = httpx.post(
        url_a + "/api/v1/alerts",
        headers=auth("alertmanager"),
        json=webhook(fault_alerts(0, 2, time.time())),
        timeout=30,
    )
    inv = r.json()["opened"][0]
    wait_done(p.db, 1, 180, p)
    d = httpx.get(url_b + f"/api/v1/investigations/{inv}", headers=auth("vic"), timeout=30).json()
    assert d["status"] == "awaiting_approval" and d["report"]["proposals"]
    prop = d["report"]["proposals"][0]
    url = url_b + f"/api/v1/investigations/{inv}/proposals/{prop['id']}/approve"
    r = httpx.post(url, json={"content_hash": "0" * 64, "reason": "stale"}, headers=auth("ann"), timeout=30)
    assert r.status_code == 409
    r = httpx.post(
        url,
        json={"content_hash": prop["content_hash"], "reason": "drain it"},
        headers=auth("ann"),
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.json()["proposal"]["status"] == "approved" and r.json()["by"] == "ann"
    # The other replica sees the decision: it is in the database, not in one process.
    d = httpx.get(url_a + f"/api/v1/investigations/{inv}", headers=auth("vic"), timeout=30).json()
    assert next(x for x in d["report"]["proposals"] if x["id"] == prop["id"])["status"] == "approved"
    outcomes = q(p.db, "SELECT actor, outcome FROM audit WHERE investigation=%s ORDER BY id", inv)
    assert outcomes[:2] == [("ann", "refused"), ("ann", "approved")]
