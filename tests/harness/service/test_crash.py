"""kill -9 of ``forensic serve`` mid-investigation and mid-burst, then a restart: nothing lost."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import httpx
from forensic.harness.service.bench import fault_alert, webhook

from .conftest import JOB, auth


def test_kill_9_mid_investigation_and_mid_burst(server) -> None:
    srv = server(extra="[workers]\ncount = 1\nstep_pause_s = 1.0").start()
    r = srv.post("/api/v1/alerts", "alertmanager", json=webhook([fault_alert(0, job=JOB)]))
    inv = r.json()["opened"][0]
    # Something in the audit log before the crash: a refused decision on a proposal not made yet.
    assert (
        srv.post(
            f"/api/v1/investigations/{inv}/proposals/rp-1/approve",
            "ann",
            json={"content_hash": "0" * 64, "reason": "too early"},
        ).status_code
        == 404
    )
    audit_before = srv.get("/api/v1/audit").json()["entries"]
    assert len(audit_before) == 1

    acked: list[str] = []
    stop = threading.Event()

    def burst() -> None:
        with httpx.Client(base_url=srv.url, headers=auth("alertmanager"), timeout=10) as c:
            for i in range(1, 100_000):
                if stop.is_set():
                    return
                a = fault_alert(i, job="burst-job")  # another job: grouped apart, unmapped
                try:
                    if c.post("/api/v1/alerts", json=webhook([a])).status_code == 202:
                        acked.append(a["fingerprint"])
                except httpx.HTTPError:
                    return  # the server died under us

    t = threading.Thread(target=burst, daemon=True)
    t.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ev = srv.get(f"/api/v1/investigations/{inv}").json()["events"]
        if sum(e["kind"] == "tool_call" for e in ev) >= 1 and len(acked) >= 20:
            break
        time.sleep(0.05)
    d = srv.get(f"/api/v1/investigations/{inv}").json()
    assert d["status"] == "running", "the investigation must be mid-run when the server is killed"
    srv.kill9()
    stop.set()
    t.join(timeout=20)
    tools_before = sum(e["kind"] == "tool_call" for e in d["events"])

    srv.start()  # same config, same database
    done = srv.wait_status(inv)
    assert done["status"] == "awaiting_approval"
    assert (done["verdict"], done["component"]) == ("pcie_downtrain", "gpu-e126/gpu0")

    con = sqlite3.connect(srv.folder / "serve.sqlite")
    stored = {r[0] for r in con.execute("SELECT fingerprint FROM alerts")}
    assert set(acked) <= stored, f"{len(set(acked) - stored)} acknowledged alerts lost"
    row = con.execute("SELECT runs, status FROM investigations WHERE id=?", (inv,)).fetchone()
    assert row == (2, "awaiting_approval")  # claimed once before the crash, once after
    kinds = [k for (k,) in con.execute("SELECT kind FROM events WHERE investigation=?", (inv,))]
    assert kinds.count("verdict") == 1 and kinds.count("end") == 1 and kinds.count("resumed") == 1
    # Resumed, not restarted: the tool calls made before the crash were not made again.
    evidence = [e["id"] for e in done["report"]["evidence"]]
    assert evidence == [f"ev-{i}" for i in range(1, len(evidence) + 1)]
    assert kinds.count("tool_call") == len(evidence) and tools_before >= 1
    # The audit log kept what it had, unchanged.
    audit_after = srv.get("/api/v1/audit").json()["entries"]
    assert audit_after[-1] == audit_before[-1]
    # Only one conclusion was recorded, and only one investigation was opened for the fault.
    assert con.execute("SELECT COUNT(*) FROM investigations WHERE job=?", (JOB,)).fetchone()[0] == 1
    assert (
        json.loads(con.execute("SELECT report FROM investigations WHERE id=?", (inv,)).fetchone()[0])[
            "status"
        ]
        == "confirmed"
    )
