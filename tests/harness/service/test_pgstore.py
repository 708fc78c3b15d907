"""What only PostgreSQL has to show (the conformance suite, test_store.py, runs the rest on both):
the same intake decisions as SQLite on random streams, SKIP LOCKED claims, one-line connection errors, the bench."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.schema import VERSION_TABLE, head, migrate
from forensic.harness.service.store import DatabaseError, PostgresStore, SqliteStore


@pytest.fixture
def cluster(pg_cluster):
    return pg_cluster


def _batches(seed: int) -> list[list[tuple[str, str, object]]]:
    """Random webhooks: 6 jobs, shared hosts, repeats, resolutions, one fault hours later."""
    rng = random.Random(seed)
    t0 = time.time()
    batches = []
    for _ in range(40):
        batch = []
        for _ in range(rng.randint(1, 4)):
            alerts = []
            for _ in range(rng.randint(1, 5)):
                i = rng.randrange(120)
                a = fault_alert(i, job=f"job-{i % 6}" if i % 7 else "", t0=t0 + (7200 if i >= 100 else 0))
                if not a["labels"]["training_job"]:
                    del a["labels"]["training_job"]
                a["labels"]["Hostname"] = f"h{rng.randrange(12)}" if i % 5 == 0 else f"h-{i % 6}"
                a["fingerprint"] = f"fp{i}"
                if rng.random() < 0.15:
                    a["status"] = "resolved"
                    a["endsAt"] = "2030-01-01T00:00:00Z"
                alerts.append(a)
            text, p = parse_payload(json.dumps(webhook(alerts)).encode(), ["training_job"])
            batch.append(("am", text, p))
        batches.append(batch)
    return batches


def _shape(store, results) -> dict:
    """What intake decided, independent of generated ids."""
    invs = {i["id"]: i for i in store.investigations(limit=10_000)}
    by_alert = {}
    for inv_id in invs:
        for a in store.alerts_of(inv_id):
            by_alert[a["fingerprint"]] = inv_id
    groups = sorted(sorted(fp for fp, i in by_alert.items() if i == inv_id) for inv_id in invs)
    per = {
        min(fp for fp, i in by_alert.items() if i == inv_id): (
            inv["job"],
            inv["hosts"],
            inv["gpus"],
            inv["alert_count"],
            inv["resolved_count"],
            inv["status"],
            sorted(e["kind"] for e in store.events_after(inv_id, 0)),
        )
        for inv_id, inv in invs.items()
    }
    counts = [
        [(r.accepted, r.duplicates, r.grouped, len(r.opened), len(r.investigations)) for r in batch]
        for batch in results
    ]
    return {"groups": groups, "per": per, "counts": counts}


@pytest.mark.parametrize("seed", [1, 2])
def test_intake_decides_exactly_as_sqlite(cluster, tmp_path: Path, seed: int) -> None:
    pg = PostgresStore(cluster.fresh_db(f"same_{seed}"))
    lite = SqliteStore(tmp_path / "s.sqlite")
    resolve = lambda job, hosts: Path("/bundle") if job != "job-5" else None  # noqa: E731 - some unmapped
    out = {}
    for name, store in (("pg", pg), ("sqlite", lite)):
        results = [store.ingest(b, window_s=600, resolve_bundle=resolve) for b in _batches(seed)]
        out[name] = _shape(store, results)
    assert out["pg"]["counts"] == out["sqlite"]["counts"]
    assert out["pg"]["groups"] == out["sqlite"]["groups"] and len(out["pg"]["groups"]) >= 3
    assert out["pg"]["per"] == out["sqlite"]["per"]
    pg.close()


def test_claim_skip_locked_per_job_cap_lease_and_audit(cluster) -> None:
    url = cluster.fresh_db("claim")
    s = PostgresStore(url)
    assert migrate(url) == []  # already applied, by the store
    with psycopg.connect(url) as con:
        assert [v for (v,) in con.execute(f"SELECT version_num FROM {VERSION_TABLE}")] == [head()]

    def open_(job: str, host: str, i: int, dt: float = 0) -> str:
        a = fault_alert(i, job=job, t0=time.time() + dt)
        a["labels"]["Hostname"] = host
        text, p = parse_payload(json.dumps(webhook([a])).encode(), ["training_job"])
        return s.ingest([("t", text, p)], window_s=600, resolve_bundle=lambda j, h: Path("/b"))[
            0
        ].investigations[0]

    a1 = open_("job-a", "h1", 1)
    assert open_("job-a", "h2", 2) == a1
    a2 = open_("job-a", "h9", 3, dt=7200)  # same job hours later: a second investigation
    b1 = open_("job-b", "h3", 4)
    # A transaction holding a1's row (another worker mid-claim): SKIP LOCKED passes it over.
    with psycopg.connect(url) as other:
        other.execute("SELECT id FROM investigations WHERE id=%s FOR UPDATE", (a1,))
        got = s.claim("w1", lease_s=60, per_job=1)
        assert got["id"] != a1
        other.rollback()
    assert got["id"] == a2  # a1 was locked; a2 is next in order
    assert s.claim("w2", lease_s=60, per_job=1)["id"] == b1
    assert s.claim("w3", lease_s=60, per_job=1) is None  # a1 is held back: job-a is at its cap
    assert s.claim("w3", lease_s=60, per_job=2)["id"] == a1
    assert s.finish(
        a1, "w3", status="concluded", report={"status": "confirmed", "verdict": {"root_cause": "x"}}
    )
    assert not s.finish(a1, "w3", status="concluded", report=None)
    assert s.renew(b1, "w2", -1.0)  # lease lapsed: its worker died
    again = s.claim("w4", lease_s=60, per_job=1)
    assert again["id"] == b1 and again["runs"] == 2
    assert not s.renew(b1, "w2", 60) and not s.finish(b1, "w2", status="concluded", report=None)
    assert s.counts() == {"concluded": 1, "running": 2}
    s.audit({"actor": "ann", "action": "approve", "outcome": "refused", "reason": "r", "detail": {"k": 1}})
    assert s.audit_log()[0]["detail"] == {"k": 1}
    with psycopg.connect(url) as con, pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        con.execute("UPDATE audit SET reason='changed'")
    with psycopg.connect(url) as con, pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        con.execute("DELETE FROM audit")
    s.close()


def test_unreachable_database_is_one_line(cluster) -> None:
    with pytest.raises(DatabaseError, match="cannot connect to PostgreSQL") as e:
        PostgresStore(f"postgresql://forensic@127.0.0.1:{cluster.port}/no_such_db")
    assert "\n" not in str(e.value)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args], capture_output=True, text=True, timeout=120
    )


def _one_line_exit_2(r, why: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("forensic: ") and why in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_cli_bad_db_is_exit_2_with_one_line(cluster, tmp_path: Path) -> None:
    from forensic.harness.service.bench import write_config

    from .conftest import EXAMPLE, TOKENS

    cfg = write_config(tmp_path, port=0, tokens=TOKENS, bundles=[{"path": EXAMPLE, "job": "j"}])
    dead = f"postgresql://forensic@127.0.0.1:{cluster.port}/no_such_db"
    _one_line_exit_2(
        _cli("worker", "--config", str(cfg), "--db", "serve.sqlite"), "must be a postgresql:// URL"
    )
    _one_line_exit_2(_cli("worker", "--config", str(cfg), "--db", dead), "cannot connect to PostgreSQL")
    _one_line_exit_2(
        _cli("worker", "--config", str(tmp_path / "nope.toml"), "--db", dead), "no such config file"
    )
    _one_line_exit_2(_cli("serve", "--config", str(cfg), "--db", "mysql://x"), "must be a postgresql:// URL")
    _one_line_exit_2(
        _cli("serve", "--config", str(cfg), "--db", dead, "--workers", "0"), "cannot connect to PostgreSQL"
    )
    _one_line_exit_2(_cli("bench", "intake", "--db", dead, "--processes", "1,x"), "--processes")
    _one_line_exit_2(_cli("bench", "intake", "--db", dead, "--alerts", "10"), "cannot connect to PostgreSQL")


def test_bench_intake_db_counts_every_round(cluster) -> None:
    url = cluster.fresh_db("bench")
    r = _cli(
        "bench",
        "intake",
        "--db",
        url,
        "--alerts",
        "120",
        "--faults",
        "3",
        "--processes",
        "1,2",
        "--concurrency",
        "4",
        "--repeat",
        "2",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [(x["pass"], x["processes"]) for x in out["rounds"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert out["rounds"][2]["scaling"] == 1.0  # each pass against its own first round
    med = {x["processes"]: x for x in out["summary"]}
    for n in (1, 2):
        got = sorted(x["alerts_per_s"] for x in out["rounds"] if x["processes"] == n)
        assert med[n]["alerts_per_s"] == round((got[0] + got[1]) / 2, 1)  # the median of two
        assert med[n]["ceiling_alerts_per_s"] > 0 and med[n]["ms_per_alert_own"] > 0
    assert med[1]["scaling"] == 1.0 and med[2]["scaling"] == round(
        med[2]["alerts_per_s"] / med[1]["alerts_per_s"], 2
    )
    for x in out["rounds"]:
        assert (x["accepted"], x["stored"], x["lost"], x["investigations"]) == (120, 120, 0, 3)
        assert x["alerts_per_s"] > 0 and x["p99_ms"] >= x["p50_ms"]
        # Where the CPU went: the API processes and the local PostgreSQL both worked for these alerts.
        ms, pc = x["cpu"]["ms_per_alert"], x["cpu"]["percent_of_machine"]
        assert ms["api"] > 0 and ms["postgres"] > 0 and ms["client"] >= 0 and ms["other"] >= 0
        assert 90 <= sum(pc.values()) <= 110, pc  # the parts add up to the machine's CPU (to 10 ms ticks)
    assert out["postgres_local"] is True
    assert out["rounds"][0]["scaling"] == 1.0
    with psycopg.connect(url) as con:
        assert con.execute("SELECT COUNT(*) FROM alerts").fetchone()[0] == 480


def test_bench_intake_text_shows_the_cpu_split(cluster) -> None:
    r = _cli(
        "bench",
        "intake",
        "--db",
        cluster.fresh_db("bench_text"),
        "--alerts",
        "40",
        "--processes",
        "1",
        "--concurrency",
        "2",
    )
    assert r.returncode == 0, r.stderr
    assert (
        "scaling" in r.stdout
        and "CPU while posting" in r.stdout
        and "PostgreSQL" in r.stdout
        and "ceiling" in r.stdout
    )
    assert "not measured" not in r.stdout  # the test's PostgreSQL runs on this machine
