"""Intake: grouping one fault into one investigation, dedup by fingerprint, resolved alerts, mapping."""

from __future__ import annotations

import json
import time

from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload

from .conftest import JOB, auth


def _alert(
    i: int,
    *,
    job: str | None = JOB,
    host: str = "gpu-e126",
    start: float | None = None,
    status: str = "firing",
    fp: str | None = None,
) -> dict:
    a = fault_alert(i, job=job or "x", t0=start or time.time())
    if job is None:
        del a["labels"]["training_job"]
    a["labels"]["Hostname"] = host
    a["status"] = status
    if fp:
        a["fingerprint"] = fp
    return a


def test_parse_maps_job_hosts_and_gpus() -> None:
    a = _alert(3, host="gpu-e127")
    a["labels"]["gpu"] = "5"
    _, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job", "job"])
    assert (
        p.alerts[0].job == JOB and p.alerts[0].hosts == ["gpu-e127"] and p.alerts[0].gpus == ["gpu-e127/gpu5"]
    )
    b = _alert(4, job=None)
    del b["labels"]["Hostname"]
    b["labels"]["instance"] = "gpu-e130:9400"
    _, p = parse_payload(json.dumps(webhook([b])).encode(), ["training_job"])
    assert p.alerts[0].job is None and p.alerts[0].hosts == ["gpu-e130"]


def test_one_fault_one_investigation_other_fault_another(app_client) -> None:
    c, svc = app_client(extra="[workers]\ncount = 1\nstep_pause_s = 0.5")
    now = time.time()
    r1 = c.post(
        "/api/v1/alerts", json=webhook([_alert(i, start=now) for i in range(5)]), headers=auth("alertmanager")
    )
    assert r1.status_code == 202, r1.text
    assert r1.json()["accepted"] == 5 and len(r1.json()["opened"]) == 1
    inv = r1.json()["opened"][0]
    # Same host, no job label: the same fault.
    r2 = c.post(
        "/api/v1/alerts",
        json=webhook([_alert(10, job=None, host="gpu-e126", start=now + 60)]),
        headers=auth("alertmanager"),
    )
    assert r2.json()["investigations"] == [inv] and r2.json()["opened"] == []
    # Another job on other hosts: another investigation, unmapped (no bundle for it).
    r3 = c.post(
        "/api/v1/alerts",
        json=webhook([_alert(20, job="other-job", host="gpu-z001", start=now)]),
        headers=auth("alertmanager"),
    )
    other = r3.json()["opened"][0]
    assert other != inv
    assert c.get(f"/api/v1/investigations/{other}", headers=auth("vic")).json()["status"] == "unmapped"
    # The same job hours later is a new fault.
    r4 = c.post(
        "/api/v1/alerts", json=webhook([_alert(30, start=now + 3 * 3600)]), headers=auth("alertmanager")
    )
    assert r4.json()["opened"] and r4.json()["opened"][0] != inv
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert d["alert_count"] == 6 and len(d["alerts"]) == 6


def test_duplicates_update_and_resolved_is_recorded(app_client) -> None:
    c, svc = app_client()
    now = time.time()
    a = _alert(1, start=now, fp="feedface00000001")
    r = c.post("/api/v1/alerts", json=webhook([a]), headers=auth("alertmanager"))
    inv = r.json()["opened"][0]
    r = c.post("/api/v1/alerts", json=webhook([a]), headers=auth("alertmanager"))
    assert r.json() == {"accepted": 0, "duplicates": 1, "grouped": 0, "opened": [], "investigations": [inv]}
    resolved = dict(a, status="resolved", endsAt="2030-01-01T00:00:00Z")
    c.post("/api/v1/alerts", json=webhook([resolved]), headers=auth("alertmanager"))
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert d["alert_count"] == 1 and d["resolved_count"] == 1
    assert d["alerts"][0]["status"] == "resolved"
    assert any(e["kind"] == "alert_resolved" for e in d["events"])


def test_filters(app_client) -> None:
    c, svc = app_client()
    now = time.time()
    c.post(
        "/api/v1/alerts",
        json=webhook([_alert(1, job="other-job", host="gpu-z1", start=now)]),
        headers=auth("alertmanager"),
    )
    got = c.get("/api/v1/investigations", params={"status": "unmapped"}, headers=auth("vic")).json()[
        "investigations"
    ]
    assert [i["job"] for i in got] == ["other-job"]
    assert (
        c.get("/api/v1/investigations", params={"job": "nope"}, headers=auth("vic")).json()["investigations"]
        == []
    )
    assert (
        c.get("/api/v1/investigations", params={"since": now + 10_000}, headers=auth("vic")).json()[
            "investigations"
        ]
        == []
    )
    assert c.get("/api/v1/investigations", params={"status": "bogus"}, headers=auth("vic")).status_code == 422
