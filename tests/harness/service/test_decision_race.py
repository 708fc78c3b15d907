"""Two processes decide on one proposal at once: the decisions are serialised through the database.

An investigation is run to ``awaiting_approval`` by the real service (SQLite, or PostgreSQL as the
API replicas share it); then two processes, each with its own store and checkpointer on that
database, approve and reject the same proposal at the same moment. Exactly one decision counts,
the other is refused with 409 because it reads the first one's result, and the audit log, the
report and the checkpoint agree on which.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from forensic.harness.service import load_config
from forensic.harness.service.api import create_app
from forensic.harness.service.bench import fault_alert, webhook, write_config
from forensic.harness.service.service import Service
from forensic.harness.service.store import open_store

from .conftest import EXAMPLE, JOB, TOKENS, auth

_DECIDER = """
import json, sys
from forensic.harness.service.decisions import DecisionError, decide
from forensic.harness.service.schema import is_postgres_url
from forensic.harness.service.store import open_store
from forensic.harness.service.workers import postgres_checkpointer, sqlite_checkpointer

db, inv, pid, chash, verdict, user = sys.argv[1:7]
store = open_store(db)
saver = postgres_checkpointer(db) if is_postgres_url(db) else sqlite_checkpointer(db)
print("ready", flush=True)
sys.stdin.readline()
try:
    p = decide(store, saver, inv, pid, verdict, content_hash=chash, reason="race", user=user)
    print(json.dumps({"ok": p["status"]}))
except DecisionError as exc:
    print(json.dumps({"refused": exc.status, "reason": exc.reason}))
"""


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_processes_deciding_one_proposal_are_serialised(kind: str, request, tmp_path: Path) -> None:
    url = request.getfixturevalue("pg_cluster").fresh_db("decide_race") if kind == "postgresql" else None
    cfg = load_config(write_config(tmp_path, port=0, tokens=TOKENS, bundles=[{"path": EXAMPLE, "job": JOB}]))
    db = url or str(cfg.database)
    with TestClient(create_app(Service(cfg, db=url)), raise_server_exceptions=False) as c:
        r = c.post("/api/v1/alerts", json=webhook([fault_alert(1, job=JOB)]), headers=auth("alertmanager"))
        inv = r.json()["investigations"][0]
        deadline = time.monotonic() + 120
        while (d := c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json())["status"] in (
            "queued",
            "running",
        ):
            assert time.monotonic() < deadline, d
            time.sleep(0.2)
    assert d["status"] == "awaiting_approval", d.get("error")
    p = d["report"]["proposals"][0]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _DECIDER, db, inv, p["id"], p["content_hash"], verdict, user],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for verdict, user in (("approve", "ann"), ("reject", "root"))
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()[-2000:]
    for proc in procs:  # both go at once
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    won = [o for o in outs if "ok" in o]
    lost = [o for o in outs if "refused" in o]
    assert len(won) == 1 and len(lost) == 1, outs
    assert lost[0]["refused"] == 409 and "already" in lost[0]["reason"], outs
    store = open_store(db)
    try:
        final = store.investigation(inv)
        (shown,) = [q for q in final["report"]["proposals"] if q["id"] == p["id"]]
        assert shown["status"] == won[0]["ok"]
        counted = [
            e
            for e in store.audit_log(investigation=inv)
            if e["proposal"] == p["id"] and e["outcome"] != "refused"
        ]
        assert [e["outcome"] for e in counted] == [won[0]["ok"]], counted
    finally:
        store.close()
