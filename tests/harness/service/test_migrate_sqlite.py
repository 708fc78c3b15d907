"""The Alembic migrations on SQLite: a database file of the earlier release is upgraded in place."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.schema import VERSION_TABLE, current, head, migrate
from forensic.harness.service.store import SqliteStore
from forensic.harness.service.workers import sqlite_checkpointer

# What forensic 0.2's SqliteStore and SqliteLedger created in a served database, byte for byte.
LEGACY_SQL = (Path(__file__).parent / "legacy_sqlite_schema.sql").read_text()


def _legacy_database(db: Path) -> None:
    con = sqlite3.connect(db)
    con.executescript(LEGACY_SQL)
    now = time.time()
    con.execute(
        "INSERT INTO investigations(id, job, hosts, gpus, first_at, last_at, status, bundle, thread_id,"
        " created_at, updated_at, alert_count) VALUES ('inv-old', 'job-x', '[\"h1\"]', '[]', ?, ?,"
        " 'concluded', '/b', 'inv-old', ?, ?, 1)",
        (now, now, now, now),
    )
    con.execute(
        "INSERT INTO alerts(fingerprint, status, alertname, labels, annotations, investigation_id,"
        " received_at, updated_at, receipts) VALUES ('fp-old', 'firing', 'A', '{}', '{}', 'inv-old', 1, 1, 1)"
    )
    con.execute(
        "INSERT INTO audit(time, actor, action, outcome, reason, detail) VALUES (1, 'ann', 'approve', 'ok', 'r', '{}')"
    )
    con.execute(
        "INSERT INTO executions(thread, proposal_id, content_hash, state, started) VALUES"
        " ('inv-old', 'rp-1', 'abc', 'succeeded', 1)"
    )
    con.commit()
    con.close()
    sqlite_checkpointer(db).conn.close()  # the LangGraph tables share the file


def test_a_database_of_the_earlier_release_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "serve.sqlite"
    _legacy_database(db)
    assert current(db) is None
    from forensic.harness.audit import GENESIS
    from forensic.harness.service.store import verify_audit_db

    # Verifying reads only: the old schema has no chain yet, its row counts as before it, and
    # nothing is migrated.
    assert verify_audit_db(db) == (1, GENESIS, 1) and current(db) is None
    s = SqliteStore(db)  # adopts (stamps 0001, its schema) and applies what it lacks
    assert current(db) == head() == "0003"
    con = sqlite3.connect(db)
    assert con.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall() == [("0003",)]
    assert "inv_window" in {r[1] for r in con.execute("PRAGMA index_list('investigations')")}
    assert con.execute("SELECT id, status FROM investigations").fetchall() == [("inv-old", "concluded")]
    assert con.execute("SELECT proposal_id, state FROM executions").fetchall() == [("rp-1", "succeeded")]
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):  # the triggers came along
        con.execute("DELETE FROM audit")
    assert con.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == (0,)
    con.close()
    # The store runs on it: a new alert of the same job joins the old investigation.
    a = fault_alert(1, job="job-x", t0=time.time())
    text, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job"])
    res = s.ingest([("am", text, p)], window_s=600, resolve_bundle=lambda j, h: Path("/b"))[0]
    assert res.investigations == ["inv-old"] and s.investigation("inv-old")["alert_count"] == 2
    assert [e["actor"] for e in s.audit_log()] == ["ann"]
    # The old row stays as it was, outside the chain; the chain starts after it.
    assert s.verify_audit() == (1, GENESIS, 1)
    s.audit({"actor": "bob", "action": "approve", "outcome": "approved"})
    s.audit({"actor": "cy", "action": "reject", "outcome": "rejected"})
    rows, head_hash, before = s.verify_audit()
    assert (rows, before) == (3, 1) and head_hash == s.audit_log()[0]["hash"]
    old = s.audit_log()[-1]
    assert (old["actor"], old["prev_hash"], old["hash"]) == ("ann", None, None)
    assert s.audit_log()[1]["prev_hash"] == GENESIS
    con = sqlite3.connect(db)
    for sql in ("DELETE FROM audit", "UPDATE audit SET hash = NULL"):  # the triggers still hold after 0003
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    con.close()
    s.close()
    # What ran before the upgrade still counts in the ledger.
    from forensic.harness.executors import SqliteLedger

    assert SqliteLedger(db).get("inv-old", "rp-1")["state"] == "succeeded"
    assert migrate(db) == []


def test_a_fresh_file_gets_every_revision_once_and_processes_starting_together_too(tmp_path: Path) -> None:
    db = tmp_path / "race.sqlite"
    code = "import json, sys; from forensic.harness.service.schema import migrate; print(json.dumps(migrate(sys.argv[1])))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 3, [e[-2000:] for _, e in outs]
    assert sorted(json.loads(o) for o, _ in outs) == [[], [], ["0001", "0002", "0003"]]
    r = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "db", "current", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "schema at 0003" in r.stdout and "up to date" in r.stdout, r.stderr


def test_a_corrupt_file_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "bad.sqlite"
    db.write_bytes(b"not a database" * 100)
    from forensic.harness.service.store import DatabaseError

    with pytest.raises(DatabaseError) as e:
        SqliteStore(db)
    assert "\n" not in str(e.value) and "cannot migrate" in str(e.value)
    r = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "db", "upgrade", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
