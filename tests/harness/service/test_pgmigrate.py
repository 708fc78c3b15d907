"""Alembic migrations of the PostgreSQL schema, against a real PostgreSQL: fresh, adopted, concurrent."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.schema import VERSION_TABLE, MigrationError, current, head, migrate
from forensic.harness.service.store import PostgresStore

LEGACY_SQL = (Path(__file__).parent / "legacy_schema_v1.sql").read_text()
TABLES = {"webhooks", "alerts", "dead_letters", "investigations", "events", "audit", "notifications"}


@pytest.fixture
def cluster(pg_cluster):
    return pg_cluster


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as con:
        return {r[0] for r in con.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args], capture_output=True, text=True, timeout=180
    )


def test_fresh_database_gets_every_revision_once(cluster) -> None:
    url = cluster.fresh_db("mig_fresh")
    assert current(url) is None
    assert migrate(url) == ["0001", "0002", "0003"] and head() == "0003"
    assert TABLES | {VERSION_TABLE, "executions"} <= _tables(url) and "forensic_schema" not in _tables(url)
    assert current(url) == "0003"
    assert migrate(url) == []  # idempotent
    r = _cli("db", "current", "--db", url)
    assert r.returncode == 0 and "schema at 0003" in r.stdout and "up to date" in r.stdout, r.stderr
    r = _cli("db", "upgrade", "--db", url)
    assert r.returncode == 0 and "nothing to apply" in r.stdout, r.stderr


def test_database_of_the_hand_versioned_sql_is_adopted_without_losing_rows(cluster) -> None:
    url = cluster.fresh_db("mig_legacy")
    with psycopg.connect(url, autocommit=True) as con:  # what the earlier release's pgstore.migrate() left
        con.execute(
            "CREATE TABLE forensic_schema (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
        )
        con.execute(LEGACY_SQL)
        con.execute("INSERT INTO forensic_schema VALUES (1, 0)")
        now = time.time()
        con.execute(
            "INSERT INTO investigations(id, job, hosts, gpus, first_at, last_at, status, bundle, thread_id,"
            " created_at, updated_at, alert_count) VALUES ('inv-old', 'job-x', '[\"h1\"]', '[]', %s, %s,"
            " 'concluded', '/b', 'inv-old', %s, %s, 1)",
            (now, now, now, now),
        )
        con.execute(
            "INSERT INTO alerts(fingerprint, status, alertname, labels, annotations, investigation_id,"
            " received_at, updated_at, receipts) VALUES ('fp-old', 'firing', 'A', '{}', '{}', 'inv-old', 1, 1, 1)"
        )
        con.execute(
            "INSERT INTO audit(time, actor, action, outcome, reason, detail) VALUES (1, 'ann', 'approve',"
            " 'ok', 'r', '{}')"
        )
    r = _cli("db", "current", "--db", url)
    assert r.returncode == 0 and "no schema yet" in r.stdout
    assert migrate(url) == [
        "0002",
        "0003",
    ]  # stamped at the revision equal to its schema, then only what it lacks
    assert current(url) == "0003"
    with psycopg.connect(url) as con:
        assert con.execute("SELECT version_num FROM " + VERSION_TABLE).fetchall() == [("0003",)]
        assert con.execute("SELECT id, status FROM investigations").fetchall() == [("inv-old", "concluded")]
        assert con.execute("SELECT fingerprint, investigation_id FROM alerts").fetchall() == [
            ("fp-old", "inv-old")
        ]
        assert con.execute("SELECT actor FROM audit").fetchall() == [("ann",)]
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):  # the trigger came along
            con.execute("DELETE FROM audit")
    s = PostgresStore(
        url
    )  # and the store runs on it: a new alert of the same job joins the old investigation
    a = fault_alert(1, job="job-x", t0=time.time())
    text, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job"])
    res = s.ingest([("am", text, p)], window_s=600, resolve_bundle=lambda j, h: Path("/b"))[0]
    assert res.investigations == ["inv-old"] and res.grouped == 1
    assert s.investigation("inv-old")["alert_count"] == 2
    # The old audit row stays as it was, outside the chain; the chain starts after it.
    from forensic.harness.audit import GENESIS

    assert s.verify_audit() == (1, GENESIS, 1)
    s.audit({"actor": "bob", "action": "approve", "outcome": "approved"})
    s.audit({"actor": "cy", "action": "reject", "outcome": "rejected"})
    rows, head_hash, before = s.verify_audit()
    assert (rows, before) == (3, 1) and head_hash == s.audit_log()[0]["hash"]
    assert [(e["actor"], e["hash"] is None) for e in s.audit_log()] == [
        ("cy", False),
        ("bob", False),
        ("ann", True),
    ]
    s.close()
    with psycopg.connect(url) as con:  # the trigger of 0001 still refuses after 0003, and TRUNCATE too
        for sql in ("DELETE FROM audit", "UPDATE audit SET hash = NULL", "TRUNCATE audit"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                con.execute(sql)
            con.rollback()


def test_processes_starting_together_apply_each_revision_once(cluster) -> None:
    url = cluster.fresh_db("mig_race")
    code = (
        "import json, sys; from forensic.harness.service.schema import migrate;"
        " print(json.dumps(migrate(sys.argv[1])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [e[-2000:] for _, e in outs]
    applied = sorted(json.loads(o) for o, _ in outs)
    assert applied == [
        [],
        [],
        [],
        ["0001", "0002", "0003"],
    ]  # one applied it under the lock; the others found it done
    assert current(url) == "0003" and TABLES <= _tables(url)


def test_a_newer_schema_than_this_release_is_one_line_exit_2(cluster) -> None:
    url = cluster.fresh_db("mig_newer")
    migrate(url)
    with psycopg.connect(url) as con:
        con.execute(f"UPDATE {VERSION_TABLE} SET version_num='9999'")
    with pytest.raises(MigrationError, match="newer than this release"):
        migrate(url)
    for args in (("db", "upgrade", "--db", url), ("db", "upgrade", "--db", "mysql://x")):
        r = _cli(*args)
        assert (
            r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        ), r.stderr
    assert current(url) == "9999"  # the refused upgrade changed nothing
