"""The store: the claim (global order, per-job cap, leases), finishing once, the append-only audit."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.store import SqliteStore


def _open(store: SqliteStore, job: str, host: str, i: int) -> str:
    a = fault_alert(i, job=job)
    a["labels"]["Hostname"] = host
    text, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job"])
    return store.ingest([("t", text, p)], window_s=600, resolve_bundle=lambda j, h: Path("/bundle"))[
        0
    ].investigations[0]


def test_claim_respects_order_per_job_cap_and_leases(tmp_path: Path) -> None:
    s = SqliteStore(tmp_path / "s.sqlite")
    a1 = _open(s, "job-a", "h1", 1)
    a2 = _open(s, "job-a", "h2", 2)  # same job: grouped into a1
    assert a2 == a1
    b1 = _open(s, "job-b", "h3", 3)
    time.sleep(0.01)
    c1 = _open(s, "job-c", "h4", 4)
    got = s.claim("w1", lease_s=60, per_job=1)
    assert got["id"] == a1 and got["runs"] == 1
    assert s.claim("w2", lease_s=60, per_job=1)["id"] == b1
    assert s.claim("w3", lease_s=60, per_job=1)["id"] == c1
    assert s.claim("w4", lease_s=60, per_job=1) is None
    # Only the holder may finish, and only once.
    assert not s.finish(a1, "w2", status="concluded", report=None)
    assert s.finish(
        a1, "w1", status="concluded", report={"status": "confirmed", "verdict": {"root_cause": "x"}}
    )
    assert not s.finish(a1, "w1", status="concluded", report=None)
    assert s.investigation(a1)["verdict"] == "x"
    # A lease that ran out (its worker died) is claimable by another worker; the old holder loses it.
    assert s.renew(b1, "w2", -1.0)
    again = s.claim("w5", lease_s=60, per_job=1)
    assert again["id"] == b1 and again["runs"] == 2
    assert not s.renew(b1, "w2", 60) and not s.finish(b1, "w2", status="concluded", report=None)


def test_per_job_cap_holds_back_a_second_investigation_of_one_job(tmp_path: Path) -> None:
    s = SqliteStore(tmp_path / "s.sqlite")
    first = _open(s, "job-a", "h1", 1)
    s.claim("w1", lease_s=60, per_job=1)
    # The same job hours later: a new fault, a second investigation, held back by the cap.
    a = fault_alert(9, job="job-a", t0=time.time() + 7200)
    text, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job"])
    second = s.ingest([("t", text, p)], window_s=600, resolve_bundle=lambda j, h: Path("/b"))[0].opened[0]
    assert second != first
    assert s.claim("w2", lease_s=60, per_job=1) is None
    assert s.claim("w2", lease_s=60, per_job=2)["id"] == second
    assert s.release_all() == 2 and s.counts() == {"queued": 2}


def test_audit_is_append_only(tmp_path: Path) -> None:
    s = SqliteStore(tmp_path / "s.sqlite")
    s.audit({"actor": "ann", "action": "approve", "outcome": "approved", "reason": "ok"})
    con = sqlite3.connect(tmp_path / "s.sqlite")
    for sql in ("UPDATE audit SET actor='m'", "DELETE FROM audit"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    assert [a["actor"] for a in s.audit_log()] == ["ann"]


def test_a_storm_is_grouped_and_does_not_flood_the_activity_stream(tmp_path: Path) -> None:
    s = SqliteStore(tmp_path / "s.sqlite")
    batch = []
    for i in range(200):
        text, p = parse_payload(json.dumps(webhook([fault_alert(i, job="job-a")])).encode(), ["training_job"])
        batch.append(("t", text, p))
    results = s.ingest(batch, window_s=600, resolve_bundle=lambda j, h: Path("/b"))
    opened = {i for r in results for i in r.opened}
    assert (
        len(opened) == 1
        and sum(r.accepted for r in results) == 200
        and sum(r.grouped for r in results) == 199
    )
    inv = opened.pop()
    assert s.investigation(inv)["alert_count"] == 200 and len(s.investigation(inv)["hosts"]) == 16
    assert len(s.alert_fingerprints()) == 200
    assert sum(e["kind"] == "alert" for e in s.events_after(inv, 0)) == 20


def test_every_store_takes_what_the_protocol_passes() -> None:
    """A store implementation that lags the protocol (a keyword the workers pass) fails here, not
    as a worker thread dying in the middle of a run."""
    import inspect

    from forensic.harness.service.pgstore import PostgresStore
    from forensic.harness.service.store import SqliteStore, Store

    for name, proto in inspect.getmembers(Store, inspect.isfunction):
        if name.startswith("_"):
            continue
        wanted = list(inspect.signature(proto).parameters)
        for impl in (SqliteStore, PostgresStore):
            got = inspect.signature(getattr(impl, name)).parameters
            assert [p for p in wanted if p not in got] == [], (impl.__name__, name)
