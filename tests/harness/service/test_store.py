"""The store's conformance suite: every test runs on SQLite and on a real PostgreSQL.

What a store must do whatever its database: intake (open, group, duplicates, resolutions, late
deliveries), the claim (global order, per-job cap, leases), finishing once, the events, the
append-only audit, the dead letters, the notification outbox, and the decision lock. A new
store implementation is added to ``STORES`` and passes these or does not ship.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.schema import current, engine, head
from forensic.harness.service.store import PostgresStore, SqliteStore, SqlStore, Store

STORES = ["sqlite", "postgresql"]


def _db(kind: str, request: pytest.FixtureRequest, tmp_path: Path, name: str) -> str:
    if kind == "sqlite":
        return str(tmp_path / f"{name}.sqlite")
    return request.getfixturevalue("pg_cluster").fresh_db(name)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    db = _db(request.param, request, tmp_path, "conformance")
    s = SqliteStore(db) if request.param == "sqlite" else PostgresStore(db)
    yield s
    s.close()


def _ingest(store: Any, *alerts: dict[str, Any], window_s: float = 600, bundle: str | None = "/b") -> Any:
    text, p = parse_payload(json.dumps(webhook(list(alerts))).encode(), ["training_job"])
    return store.ingest([("t", text, p)], window_s=window_s, resolve_bundle=lambda j, h: bundle)[0]


def _alert(i: int, job: str, host: str, dt: float = 0) -> dict[str, Any]:
    a = fault_alert(i, job=job, t0=time.time() + dt)
    a["labels"]["Hostname"] = host
    return a


def _open(store: Any, job: str, host: str, i: int, dt: float = 0) -> str:
    return _ingest(store, _alert(i, job, host, dt)).investigations[0]


def test_the_schema_is_at_head_after_opening(store: SqlStore) -> None:
    assert current(store.db) == head()
    assert store.counts() == {}


def test_intake_opens_groups_and_counts_duplicates(store: SqlStore) -> None:
    first = _ingest(store, _alert(1, "job-a", "h1"))
    assert first.accepted == 1 and len(first.opened) == 1
    inv = first.opened[0]
    # Same job, another host: grouped; a shared host without a job: grouped; another job elsewhere: new.
    assert _ingest(store, _alert(2, "job-a", "h2")).investigations == [inv]
    no_job = _alert(3, "", "h2")
    del no_job["labels"]["training_job"]
    assert _ingest(store, no_job).investigations == [inv]
    other = _ingest(store, _alert(4, "job-b", "h9"))
    assert other.opened and other.opened[0] != inv
    again = _ingest(store, _alert(1, "job-a", "h1"))
    assert (again.accepted, again.duplicates, again.opened, again.investigations) == (0, 1, [], [inv])
    got = store.investigation(inv)
    assert got["alert_count"] == 3 and got["hosts"] == ["h1", "h2"] and got["job"] == "job-a"
    assert got["status"] == "queued" and got["bundle"] == "/b" and got["thread_id"] == inv
    assert [a["fingerprint"] for a in store.alerts_of(inv)] == sorted(f"{i:016x}" for i in (1, 2, 3)) or len(
        store.alerts_of(inv)
    ) == 3
    assert {a["labels"]["Hostname"] for a in store.alerts_of(inv)} == {"h1", "h2"}
    # Hours later the same job is a new fault: a new investigation.
    assert _ingest(store, _alert(5, "job-a", "h1", dt=7200)).opened


def test_an_alert_without_evidence_opens_an_unmapped_investigation(store: SqlStore) -> None:
    res = _ingest(store, _alert(1, "job-x", "h1"), bundle=None)
    inv = store.investigation(res.opened[0])
    assert inv["status"] == "unmapped" and inv["bundle"] is None
    assert store.claim("w", lease_s=60, per_job=1) is None  # nothing to run


def test_resolutions_count_and_late_deliveries_do_not_apply(store: SqlStore) -> None:
    a = _alert(1, "job-a", "h1")
    inv = _ingest(store, a).opened[0]
    resolved = {**a, "status": "resolved", "endsAt": "2030-01-01T00:00:00Z"}
    _ingest(store, resolved)
    assert store.investigation(inv)["resolved_count"] == 1
    assert [e["kind"] for e in store.events_after(inv, 0)] == ["alert", "alert_resolved"]
    _ingest(store, a)  # the firing copy delivered late: counted as a receipt, not applied
    assert store.investigation(inv)["resolved_count"] == 1
    (row,) = store.alerts_of(inv)
    assert row["status"] == "resolved" and row["receipts"] == 3


def test_a_storm_is_grouped_and_does_not_flood_the_activity_stream(store: SqlStore) -> None:
    batch = []
    for i in range(200):
        text, p = parse_payload(json.dumps(webhook([fault_alert(i, job="job-a")])).encode(), ["training_job"])
        batch.append(("t", text, p))
    results = store.ingest(batch, window_s=600, resolve_bundle=lambda j, h: Path("/b"))
    opened = {i for r in results for i in r.opened}
    assert (
        len(opened) == 1
        and sum(r.accepted for r in results) == 200
        and sum(r.grouped for r in results) == 199
    )
    inv = opened.pop()
    assert store.investigation(inv)["alert_count"] == 200 and len(store.investigation(inv)["hosts"]) == 16
    assert len(store.alert_fingerprints()) == 200
    assert sum(e["kind"] == "alert" for e in store.events_after(inv, 0)) == 20


def test_claim_respects_order_per_job_cap_and_leases(store: SqlStore) -> None:
    a1 = _open(store, "job-a", "h1", 1)
    assert _open(store, "job-a", "h2", 2) == a1  # same job: grouped into a1
    b1 = _open(store, "job-b", "h3", 3)
    c1 = _open(store, "job-c", "h4", 4)
    got = store.claim("w1", lease_s=60, per_job=1)
    assert got["id"] == a1 and got["runs"] == 1
    assert store.claim("w2", lease_s=60, per_job=1)["id"] == b1
    assert store.claim("w3", lease_s=60, per_job=1)["id"] == c1
    assert store.claim("w4", lease_s=60, per_job=1) is None
    # Only the holder may finish, and only once.
    assert not store.finish(a1, "w2", status="concluded", report=None)
    report = {"status": "confirmed", "verdict": {"root_cause": "x", "component": "gpu", "confidence": 0.75}}
    assert store.finish(a1, "w1", status="concluded", report=report, events=[("end", "verdict", {"v": 1})])
    assert not store.finish(a1, "w1", status="concluded", report=None)
    done = store.investigation(a1)
    assert (done["verdict"], done["component"], done["confidence"], done["report_status"]) == (
        "x",
        "gpu",
        0.75,
        "confirmed",
    )
    assert done["report"] == report and done["owner"] is None and done["finished_at"] is not None
    assert store.events_after(a1, 0)[-1]["kind"] == "verdict"
    # A lease that ran out (its worker died) is claimable by another worker; the old holder loses it.
    assert store.renew(b1, "w2", -1.0)
    again = store.claim("w5", lease_s=60, per_job=1)
    assert again["id"] == b1 and again["runs"] == 2
    assert not store.renew(b1, "w2", 60) and not store.finish(b1, "w2", status="concluded", report=None)


def test_per_job_cap_holds_back_a_second_investigation_of_one_job(store: SqlStore) -> None:
    first = _open(store, "job-a", "h1", 1)
    store.claim("w1", lease_s=60, per_job=1)
    second = _ingest(store, _alert(9, "job-a", "h1", dt=7200)).opened[0]
    assert second != first
    assert store.claim("w2", lease_s=60, per_job=1) is None
    assert store.claim("w2", lease_s=60, per_job=2)["id"] == second
    assert store.counts() == {"running": 2}


def test_release_all_is_for_the_only_process_on_a_sqlite_file(store: SqlStore) -> None:
    _open(store, "job-a", "h1", 1)
    store.claim("w1", lease_s=60, per_job=1)
    # SQLite: a restart makes the dead process's runs runnable now; PostgreSQL: other processes may
    # be running them, so only a lapsed lease makes them runnable.
    assert store.release_all() == (0 if store.postgres else 1)


def test_investigations_filter_and_order_newest_first(store: SqlStore) -> None:
    ids = [_open(store, f"job-{i}", f"h{i}", i) for i in range(3)]
    assert [i["id"] for i in store.investigations()] == ids[::-1]
    assert [i["id"] for i in store.investigations(job="job-1")] == [ids[1]]
    assert [i["id"] for i in store.investigations(limit=1)] == [ids[2]]
    assert store.investigations(status="running") == []
    assert store.investigation("inv-none") is None
    store.set_report(ids[0], {"proposals": []}, "awaiting_approval")
    assert store.investigation(ids[0])["report"] == {"proposals": []}
    assert [i["id"] for i in store.investigations(status="awaiting_approval")] == [ids[0]]


def test_events_are_kept_once_per_key_in_order(store: SqlStore) -> None:
    inv = _open(store, "job-a", "h1", 1)
    store.add_event(inv, "k1", "tool", {"n": 1})
    store.add_event(inv, "k1", "tool", {"n": 2})  # a node re-run after a crash: the same key again
    store.add_event(inv, "k2", "finding", {"n": 3})
    events = store.events_after(inv, 0)
    assert [(e["kind"], e["data"]) for e in events[1:]] == [("tool", {"n": 1}), ("finding", {"n": 3})]
    assert store.events_after(inv, events[1]["id"]) == events[2:]


def test_audit_is_append_only(store: SqlStore) -> None:
    store.audit(
        {"actor": "ann", "action": "approve", "outcome": "approved", "reason": "ok", "detail": {"k": 1}}
    )
    store.audit({"actor": "bob", "action": "reject", "investigation": "inv-1", "outcome": "rejected"})
    raw = engine(store.db)
    try:
        refused = ["UPDATE audit SET actor='m'", "DELETE FROM audit", "UPDATE audit SET hash=NULL"]
        for sql in refused + (["TRUNCATE audit"] if store.postgres else []):
            with raw.connect() as con, pytest.raises(sa.exc.DBAPIError, match="append-only"):
                con.exec_driver_sql(sql)
    finally:
        raw.dispose()
    assert [a["actor"] for a in store.audit_log()] == ["bob", "ann"]
    assert store.audit_log()[1]["detail"] == {"k": 1}
    assert [a["actor"] for a in store.audit_log(investigation="inv-1")] == ["bob"]


def _chain(db: str | Path) -> list[tuple[int, str | None, str | None]]:
    raw = engine(db, immediate=False)
    try:
        with raw.connect() as con:
            return [
                tuple(r) for r in con.exec_driver_sql("SELECT id, prev_hash, hash FROM audit ORDER BY id")
            ]
    finally:
        raw.dispose()


def _forge(store: SqlStore, sql: str, *args: Any) -> None:
    """Run ``sql`` on the audit table past its append-only triggers, as someone with the database's
    owner rights could: PostgreSQL disables them for the transaction; SQLite drops and recreates them."""
    raw = engine(store.db)
    try:
        with raw.begin() as con:
            if store.postgres:
                con.exec_driver_sql("ALTER TABLE audit DISABLE TRIGGER ALL")
                con.exec_driver_sql(sql, *args)
                con.exec_driver_sql("ALTER TABLE audit ENABLE TRIGGER ALL")
            else:
                triggers = con.exec_driver_sql(
                    "SELECT name, sql FROM sqlite_master WHERE type='trigger' AND tbl_name='audit'"
                ).all()
                assert {n for n, _ in triggers} == {"audit_no_update", "audit_no_delete"}
                for name, _ in triggers:
                    con.exec_driver_sql(f"DROP TRIGGER {name}")
                con.exec_driver_sql(sql, *args)
                for _, ddl in triggers:
                    con.exec_driver_sql(ddl)
    finally:
        raw.dispose()


def _entry(i: int, actor: str = "ann") -> dict[str, Any]:
    return {
        "actor": actor,
        "action": "approve",
        "investigation": f"inv-{i % 3}",
        "proposal": f"rp-{i}",
        "content_hash": "c" * 64,
        "outcome": "approved" if i % 2 else "refused",
        "reason": f"reason {i} \u00e9\u2713",
        "detail": {"i": i, "nested": {"b": [1, 2.5, None], "a": "x"}},
    }


_APPENDER = """
import sys
from forensic.harness.service.store import open_store
store = open_store(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()  # both start together
for i in range(int(sys.argv[3])):
    store.audit({"actor": sys.argv[2], "action": "approve", "outcome": "approved", "detail": {"i": i}})
store.close()
"""


@pytest.mark.parametrize("kind", STORES)
def test_the_audit_chain_holds_with_two_processes_appending_at_once(
    kind: str, request, tmp_path: Path
) -> None:
    from forensic.harness.audit import GENESIS

    db = _db(kind, request, tmp_path, "audit_race")
    store = SqliteStore(db) if kind == "sqlite" else PostgresStore(db)
    assert store.verify_audit() == (0, GENESIS, 0)
    for i in range(10):
        store.audit(_entry(i))
    per = 40
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, db, name, str(per)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for i in range(10, 30):  # and this process too, with its own threads
        threads = [threading.Thread(target=store.audit, args=(_entry(i, f"t{j}"),)) for j in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err[-2000:]
    rows = _chain(db)
    assert len(rows) == 10 + 40 + 2 * per
    # No fork: every row links to the one before it, the first to the genesis hash.
    assert rows[0][1] == GENESIS
    assert all(rows[i][1] == rows[i - 1][2] for i in range(1, len(rows)))
    assert len({h for _, _, h in rows}) == len(rows)
    actors = [a["actor"] for a in store.audit_log(limit=1000)]
    assert actors.count("a") == actors.count("b") == per
    assert store.verify_audit() == (len(rows), rows[-1][2], 0)
    store.close()


def test_an_edited_removed_or_relinked_audit_row_breaks_the_chain(store: SqlStore) -> None:
    from forensic.harness.audit import AuditError
    from forensic.harness.service.store import audit_hash, verify_audit_db

    for i in range(6):
        store.audit(_entry(i))
    ids = [r[0] for r in _chain(store.db)]
    n, good_head, before = store.verify_audit()
    assert (n, before) == (6, 0) and good_head == _chain(store.db)[-1][2]
    third = ids[2]
    # An edited field: the row's own hash no longer matches it.
    _forge(store, "UPDATE audit SET outcome='approved' WHERE id=%d AND outcome='refused'" % third)
    with pytest.raises(AuditError, match=rf"row {third} \(this row was edited\)"):
        store.verify_audit()
    with pytest.raises(AuditError, match=rf"row {third}\b"):
        verify_audit_db(store.db)  # the read-only form the CLI uses says the same
    _forge(store, "UPDATE audit SET outcome='refused' WHERE id=%d" % third)
    assert store.verify_audit() == (6, good_head, 0)  # undone: intact again
    # Edited with its hash recomputed (the hash has no secret): the next row's link breaks.
    good = {i: h for i, _, h in _chain(store.db)}
    row = next(r for r in store.audit_log() if r["id"] == third)
    forged = audit_hash(row["prev_hash"], {**row, "detail": json.dumps(row["detail"]), "actor": "mallory"})
    _forge(store, "UPDATE audit SET actor='mallory', hash='%s' WHERE id=%d" % (forged, third))
    with pytest.raises(AuditError, match=rf"row {ids[3]} \(a row before it was removed"):
        store.verify_audit()
    _forge(store, "UPDATE audit SET actor='ann', hash='%s' WHERE id=%d" % (good[third], third))
    assert store.verify_audit() == (6, good_head, 0)
    # A row removed from the middle: the row after it names the gap.
    _forge(store, "DELETE FROM audit WHERE id=%d" % ids[3])
    with pytest.raises(AuditError, match=rf"row {ids[4]} \(a row before it was removed"):
        store.verify_audit()
    # The first row's hash and link blanked, to pass as a row from before the chain: the next breaks.
    _forge(store, "DELETE FROM audit WHERE id>%d" % ids[2])
    assert store.verify_audit() == (3, good[ids[2]], 0)
    _forge(store, "UPDATE audit SET prev_hash=NULL, hash=NULL WHERE id=%d" % ids[0])
    with pytest.raises(AuditError, match=rf"row {ids[1]} \("):
        store.verify_audit()


def _verify_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "audit", "verify", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_forensic_audit_verify_db_says_intact_or_names_the_first_broken_row(
    store: SqlStore, tmp_path: Path
) -> None:
    for i in range(4):
        store.audit(_entry(i))
    rows, head_hash, _ = store.verify_audit()
    db = str(store.db)
    r = _verify_cli("--db", db)
    assert r.returncode == 0 and f"4 rows, chain intact, head {head_hash}" in r.stdout, r.stderr
    r = _verify_cli("--db", db, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"db": db, "rows": 4, "before_chain": 0, "head": head_hash, "ok": True}
    second = _chain(db)[1][0]
    _forge(store, "DELETE FROM audit WHERE id=%d" % second)
    r = _verify_cli("--db", db, "--json")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert f"breaks at row {_chain(db)[1][0]} " in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # The file form is unchanged beside it; naming both is refused.
    from forensic.harness import audit

    log = tmp_path / "audit.jsonl"
    audit.append(log, [{"outcome": "refused"}, {"outcome": "approved"}])
    r = _verify_cli(str(log), "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {
        "path": str(log),
        "lines": 2,
        "head": audit.verify(log)[1],
        "ok": True,
    }
    assert _verify_cli(str(log), "--db", db).returncode == 2
    missing = _verify_cli("--db", str(tmp_path / "none.sqlite"))
    assert missing.returncode == 2 and "no such SQLite file" in missing.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_dead_letters_keep_the_newest_and_page(store: SqlStore) -> None:
    for i in range(5):
        store.dead_letter("am", 400, f"bad {i}", b"x" * i, keep=3, keep_s=3600)
    assert store.dead_letter_count() == 3
    page = store.dead_letters(limit=2)
    assert [d["reason"] for d in page] == ["bad 4", "bad 3"] and page[0]["bytes"] == 4
    assert [d["reason"] for d in store.dead_letters(limit=2, before=page[-1]["id"])] == ["bad 2"]
    store.dead_letter(None, 413, "too big", b"", keep=10, keep_s=0)  # older than keep_s: the others go
    assert [d["reason"] for d in store.dead_letters()] == ["too big"]


def test_each_due_notification_goes_to_one_notifier(store: SqlStore) -> None:
    other = SqliteStore(store.db) if not store.postgres else PostgresStore(str(store.db))
    try:
        store.enqueue_notifications("inv-1", ["http://a", "http://b"], {"text": "x"})
        store.enqueue_notifications("inv-1", ["http://a"], {"text": "again"})  # once per (investigation, url)
        now = time.time()
        first = store.due_notifications(now)
        assert sorted(r["url"] for r in first) == ["http://a", "http://b"]
        assert json.loads(first[0]["payload"]) == {"text": "x"}
        assert other.due_notifications(now) == []  # taken by the first notifier
        store.notification_result(first[0]["id"], ok=False, error="503", next_at=now)
        again = other.due_notifications(now + 1)
        assert [r["id"] for r in again] == [first[0]["id"]] and again[0]["attempts"] == 1
        # The second one's taker died: due again once its 60 s lease ran out.
        assert [r["id"] for r in other.due_notifications(now + 60.5)] == [first[1]["id"]]
        store.notification_result(first[1]["id"], ok=True, error=None, next_at=None)
        store.notification_result(first[0]["id"], ok=False, error="gone", next_at=None)
        assert [(n["state"], n["attempts"]) for n in store.notifications()] == [("failed", 2), ("sent", 1)]
    finally:
        other.close()


def test_the_decision_lock_is_exclusive_within_a_process(store: SqlStore) -> None:
    inside: list[str] = []
    seen: list[int] = []

    def decide(name: str) -> None:
        with store.decision_lock("inv-1"):
            inside.append(name)
            seen.append(len(inside))
            time.sleep(0.05)
            inside.remove(name)

    threads = [threading.Thread(target=decide, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [1, 1, 1, 1]  # never two holders at once
    with store.decision_lock("inv-2"), store.decision_lock("inv-2b") if store.postgres else _nothing():
        pass  # PostgreSQL locks per investigation: two held at once by one thread do not wait on each other


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_HOLDER = """
import sys, time
from forensic.harness.service.store import open_store
store = open_store(sys.argv[1])
log = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # both start together
for _ in range(3):
    with store.decision_lock("inv-race"):
        with open(log, "a") as f:
            f.write(sys.argv[3] + "+\\n")
        time.sleep(0.05)
        with open(log, "a") as f:
            f.write(sys.argv[3] + "-\\n")
store.close()
"""


@pytest.mark.parametrize("kind", STORES)
def test_the_decision_lock_serialises_two_processes(kind: str, request, tmp_path: Path) -> None:
    db = _db(kind, request, tmp_path, "decision_race")
    (SqliteStore(db) if kind == "sqlite" else PostgresStore(db)).close()  # the schema, before the race
    log = tmp_path / "log"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _HOLDER, db, str(log), name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
    lines = log.read_text().split()
    assert len(lines) == 12
    # Every hold is entered and left before the next is entered: "x+" is always followed by "x-".
    assert all(lines[i][-1] == "+" and lines[i + 1] == lines[i][:-1] + "-" for i in range(0, 12, 2)), lines


def test_every_store_takes_what_the_protocol_passes() -> None:
    """A store implementation that lags the protocol (a keyword the workers pass) fails here, not
    as a worker thread dying in the middle of a run."""
    import inspect

    for name, proto in inspect.getmembers(Store, inspect.isfunction):
        if name.startswith("_"):
            continue
        wanted = list(inspect.signature(proto).parameters)
        for impl in (SqliteStore, PostgresStore):
            got = inspect.signature(getattr(impl, name)).parameters
            assert [p for p in wanted if p not in got] == [], (impl.__name__, name)
