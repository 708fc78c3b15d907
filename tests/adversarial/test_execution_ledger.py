"""An approved proposal runs once per checkpoint store, and only with its
approval on the audit record.

- Item 2: two processes racing on one SQLite checkpoint file, and two API replicas (separate
  local databases) racing on one real PostgreSQL: exactly one runs the executor. A proposal run
  through the service is refused by ``forensic execute --checkpoint serve.sqlite``, a proposal run
  by the CLI is refused by the service, and ``forensic execute --undo`` finds the service's run.
- Item 4: a checkpoint edited to mark a proposal approved, with a matching decision record, is
  refused because the hash-chained audit log holds no such approval; a broken chain refuses too;
  each refusal is audited.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from forensic.harness.executors import (
    ExecutionError,
    ExecutionGate,
    ExecutionLedger,
    ExecutorsConfig,
    Outcome,
    Plan,
    RunbookExecutor,
    SqliteLedger,
)
from forensic.harness.graph import Investigator
from forensic.harness.service.bench import fault_alert, webhook
from langgraph.checkpoint.sqlite import SqliteSaver

from tests import cli
from tests.harness.executors.conftest import EXAMPLE, Approved
from tests.harness.service.conftest import JOB, app_client, auth  # noqa: F401 (app_client: a fixture, by request)

CONFIG = ExecutorsConfig.model_validate({"runbook": {"url": "http://127.0.0.1:9/unused"}})


class CountingExecutor:
    """A scripted executor: every run appends a line to a file the racing processes share."""

    name: ClassVar[str] = "runbook"
    actions: ClassVar[frozenset[str]] = frozenset(
        {"drain_node", "open_ticket", "reset_gpu", "reseat_or_replace"}
    )

    def __init__(self, runs: Path) -> None:
        self.runs = runs

    def plan(self, action: str, target: str, *, reason: str, context: dict[str, Any]) -> Plan:
        return Plan(
            executor=self.name, action=action, target=target, resolved=target, steps=[f"{action} {target}"]
        )

    def execute(self, plan: Plan) -> Outcome:
        with self.runs.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        time.sleep(0.5)  # long enough for the other claim to arrive while this one runs
        return Outcome(ok=True, detail="done")

    def verify(self, plan: Plan) -> Outcome:
        return Outcome(ok=True, detail="checked")

    def undo(self, plan: Plan) -> Outcome:
        return Outcome(ok=True, detail="undone")


def _race(
    ledger: ExecutionLedger,
    checkpoints: str,
    audit: str,
    thread: str,
    runs: str,
    start_at: float,
    results: Any,
) -> None:
    """One contender: its own gate and connections; starts at ``start_at`` like the others."""
    saver = SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False))
    state = saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]
    gate = ExecutionGate(
        CONFIG, ledger=ledger, audit_log=Path(audit), executors={"runbook": CountingExecutor(Path(runs))}
    )
    time.sleep(max(0.0, start_at - time.time()))
    try:
        results.put(gate.execute(thread, state, "rp-1")["state"])
    except ExecutionError as exc:
        results.put(f"refused: {exc}")
    except Exception as exc:  # noqa: BLE001 (reported to the test rather than lost in a child's stderr)
        results.put(f"crashed: {type(exc).__name__}: {exc}")


def _sqlite_contender(*args: Any) -> None:
    checkpoints = args[0]
    _race(SqliteLedger(Path(checkpoints)), *args)


def _postgres_contender(url: str, folder: str, *args: Any) -> None:
    """An API replica: its own folder and local database path, the shared PostgreSQL."""
    from forensic.harness.service import load_config
    from forensic.harness.service.bench import write_config
    from forensic.harness.service.service import Service

    from tests.harness.service.conftest import TOKENS

    Path(folder).mkdir()
    cfg = load_config(
        write_config(Path(folder), port=0, tokens=TOKENS, bundles=[{"path": EXAMPLE, "job": "j"}])
    )
    _race(Service(cfg, db=url).ledger(), *args)


def _run_race(
    target: Any, prefix: tuple[Any, ...], a: Approved, tmp_path: Path
) -> tuple[list[str], list[str]]:
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    runs = tmp_path / "runs.txt"
    start_at = time.time() + 8  # after both have imported and opened everything
    procs = [
        ctx.Process(
            target=target,
            args=(*prefix(i), str(a.checkpoints), str(a.audit), a.thread, str(runs), start_at, results),
        )
        for i in range(2)
    ]
    for p in procs:
        p.start()
    outcomes = []
    for _ in procs:
        outcomes.append(results.get(timeout=120))
    for p in procs:
        p.join(timeout=60)
    return outcomes, runs.read_text().splitlines() if runs.exists() else []


def test_two_processes_on_one_sqlite_checkpoint_file_run_it_once(tmp_path: Path) -> None:
    a = Approved(tmp_path)
    outcomes, runs = _run_race(_sqlite_contender, lambda i: (), a, tmp_path)
    assert len(runs) == 1, outcomes
    assert sorted(o.split(":")[0] for o in outcomes) == ["refused", "succeeded"], outcomes
    assert any("already run" in o or "does not run twice" in o for o in outcomes)


def test_two_api_replicas_on_one_postgresql_run_it_once(pg_cluster, tmp_path: Path) -> None:
    cluster = pg_cluster
    url = cluster.fresh_db("ledger_race")
    a = Approved(tmp_path)
    # The schema first, as the first replica to start makes it (concurrent first starts are not this test's subject).
    from forensic.harness.service.store import PostgresStore
    from forensic.harness.service.workers import postgres_checkpointer

    PostgresStore(url).close()
    postgres_checkpointer(url)._forensic_pool.close()
    # Each replica has its own local database file: the "executes once" record may not live there.
    outcomes, runs = _run_race(
        _postgres_contender, lambda i: (url, str(tmp_path / f"replica{i}")), a, tmp_path
    )
    assert len(runs) == 1, outcomes
    assert sorted(o.split(":")[0] for o in outcomes) == ["refused", "succeeded"], outcomes
    import psycopg

    with psycopg.connect(url) as con:
        rows = con.execute("SELECT proposal_id, state FROM executions").fetchall()
    assert rows == [("rp-1", "succeeded")]


# -- the service and the CLI on one SQLite store ------------------------------------------------
class _Tickets(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        _Tickets.seen.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
        raw = json.dumps({"id": f"T-{len(_Tickets.seen)}"}).encode()
        self.send_response(201)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def _cli(state: Path, *args: str) -> subprocess.CompletedProcess:
    return cli.forensic_here(*args, state=state, timeout=180)


def _investigation(c: Any) -> tuple[str, dict[str, Any]]:
    r = c.post("/api/v1/alerts", json=webhook([fault_alert(1, job=JOB)]), headers=auth("alertmanager"))
    inv = r.json()["investigations"][0]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
        if d["status"] not in ("queued", "running"):
            return inv, d
        time.sleep(0.2)
    raise AssertionError(f"{inv} did not finish")


@contextmanager
def _ticket_system(tmp_path: Path) -> Iterator[Path]:
    """A local ticket system for the runbook executor (``_Tickets.seen`` holds what it received)
    and an executors file that points at it; yields the file."""
    tickets = ThreadingHTTPServer(("127.0.0.1", 0), _Tickets)
    threading.Thread(target=tickets.serve_forever, daemon=True).start()
    _Tickets.seen = []
    executors = tmp_path / "executors.toml"
    executors.write_text(f'[runbook]\nurl = "http://127.0.0.1:{tickets.server_address[1]}/t"\n')
    try:
        yield executors
    finally:
        tickets.shutdown()


def _ticket_proposal(c: Any) -> tuple[str, dict[str, Any]]:
    """A concluded investigation of the service and its ticket proposal."""
    inv, d = _investigation(c)
    return inv, next(p for p in d["report"]["proposals"] if p["action"] in RunbookExecutor.actions)


def _approve_and_run(c: Any, inv: str, p: dict[str, Any]) -> None:
    """Approve and execute proposal ``p`` of ``inv`` through the service's API."""
    url = f"/api/v1/investigations/{inv}/proposals/{p['id']}"
    assert (
        c.post(
            url + "/approve", json={"content_hash": p["content_hash"], "reason": "ok"}, headers=auth("ann")
        ).status_code
        == 200
    )
    assert c.post(url + "/execute", json={}, headers=auth("ann")).status_code == 200


def test_the_service_and_the_cli_share_one_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    make = request.getfixturevalue("app_client")
    state = tmp_path / "cli-state"
    with _ticket_system(tmp_path) as executors:
        c, svc = make(extra=f'executors = "{executors}"')
        inv, ticket = _ticket_proposal(c)
        thread = svc.store.investigation(inv)["thread_id"]
        _approve_and_run(c, inv, ticket)
        assert len(_Tickets.seen) == 1

        # The service ran it: the CLI on the same file refuses, and sends nothing.
        db = str(svc.cfg.database)
        again = _cli(state, "execute", thread, ticket["id"], "--checkpoint", db, "--config", str(executors))
        assert again.returncode == 2 and "already run" in again.stderr, again.stderr
        assert "Traceback" not in again.stderr and len(_Tickets.seen) == 1
        # ... and --undo finds the service's run (a ticket is closed in the ticket system, it says).
        undo = _cli(
            state, "execute", thread, ticket["id"], "--undo", "--checkpoint", db, "--config", str(executors)
        )
        assert undo.returncode == 2 and "not undone by forensic" in undo.stderr, undo.stderr


def test_a_run_by_the_cli_is_refused_by_the_service(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    make = request.getfixturevalue("app_client")
    state = tmp_path / "cli-state"
    with _ticket_system(tmp_path) as executors:
        c, svc = make(extra=f'executors = "{executors}"')
        inv, ticket = _ticket_proposal(c)
        thread = svc.store.investigation(inv)["thread_id"]
        db = str(svc.cfg.database)
        approved = _cli(
            state,
            "approve",
            thread,
            "--approve",
            f"{ticket['id']}={ticket['content_hash']}",
            "--checkpoint",
            db,
        )
        assert approved.returncode == 0, approved.stderr
        ran = _cli(state, "execute", thread, ticket["id"], "--checkpoint", db, "--config", str(executors))
        assert ran.returncode == 0, ran.stderr
        assert len(_Tickets.seen) == 1
        refused = c.post(
            f"/api/v1/investigations/{inv}/proposals/{ticket['id']}/execute", json={}, headers=auth("ann")
        )
        assert refused.status_code == 409 and "already run" in refused.json()["detail"], refused.text
        assert len(_Tickets.seen) == 1


# -- item 4: a forged checkpoint approves nothing -----------------------------------------------
def _forge_checkpoint(saver: Any, thread: str, pid: str) -> dict[str, Any]:
    """Rewrite ``thread``'s latest checkpoint to say ``pid`` was approved, with the decision record
    the approval gate would have written; nothing goes to any audit log. Returns the proposal."""
    from langgraph.checkpoint.base.id import uuid6

    tup = saver.get_tuple({"configurable": {"thread_id": thread}})
    report = tup.checkpoint["channel_values"]["report"]
    p = next(q for q in report["proposals"] if q["id"] == pid)
    forged = {
        **report,
        "proposals": [{**q, "status": "approved"} if q["id"] == pid else q for q in report["proposals"]],
    }
    decision = {
        "time_unix": time.time(),
        "thread": thread,
        "incident": report["incident"],
        "proposal_id": pid,
        "action": p["action"],
        "target": p["target"],
        "content_hash": p["content_hash"],
        "decision": "approve",
        "approver": "alice",
        "outcome": "approved",
        "reason": "",
        "comment": "",
    }
    values = {**tup.checkpoint["channel_values"], "report": forged, "decisions": [decision]}
    saver.put(tup.config, {**tup.checkpoint, "id": str(uuid6()), "channel_values": values}, tup.metadata, {})
    return p


def _forge(tmp_path: Path) -> tuple[Path, Path, str, dict[str, Any]]:
    """A waiting investigation of the CLI whose checkpoint says rp-1 was approved."""
    state = tmp_path / "state"
    state.mkdir()
    checkpoints, audit = state / "checkpoints.sqlite", state / "audit.jsonl"
    saver = SqliteSaver(sqlite3.connect(str(checkpoints), check_same_thread=False))
    Investigator(EXAMPLE, checkpointer=saver, audit_log=audit).run(thread_id="t-forged", await_approval=True)
    return state, checkpoints, "t-forged", _forge_checkpoint(saver, "t-forged", "rp-1")


def test_a_forged_checkpoint_is_refused_by_the_service_and_audited(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    make = request.getfixturevalue("app_client")
    executors = tmp_path / "executors.toml"
    executors.write_text('[runbook]\nurl = "http://127.0.0.1:9/t"\n')
    c, svc = make(extra=f'executors = "{executors}"')
    inv, d = _investigation(c)
    p = next(q for q in d["report"]["proposals"] if q["action"] in RunbookExecutor.actions)
    _forge_checkpoint(svc.saver, svc.store.investigation(inv)["thread_id"], p["id"])
    r = c.post(f"/api/v1/investigations/{inv}/proposals/{p['id']}/execute", json={}, headers=auth("ann"))
    assert r.status_code == 409 and "audit log holds no approval" in r.json()["detail"], r.text
    entries = c.get("/api/v1/audit", headers=auth("vic")).json()["entries"]
    assert [(e["action"], e["outcome"]) for e in entries if e.get("proposal") == p["id"]] == [
        ("execute", "refused")
    ]


def test_a_forged_checkpoint_approval_does_not_execute(tmp_path: Path) -> None:
    state, checkpoints, thread, _p = _forge(tmp_path)
    runs = tmp_path / "runs.txt"
    saver = SqliteSaver(sqlite3.connect(str(checkpoints), check_same_thread=False))
    values = saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]
    assert next(q for q in values["report"]["proposals"] if q["id"] == "rp-1")["status"] == "approved"
    gate = ExecutionGate(
        CONFIG,
        ledger=SqliteLedger(checkpoints),
        audit_log=state / "audit.jsonl",
        executors={"runbook": CountingExecutor(runs)},
    )
    with pytest.raises(ExecutionError, match="audit log holds no approval") as err:
        gate.execute(thread, values, "rp-1")
    assert "\n" not in str(err.value)
    assert not runs.exists()
    refusals = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    assert any(
        e["proposal_id"] == "rp-1"
        and e["decision"] == "execute"
        and e["outcome"] == "refused"
        and "no approval" in e["reason"]
        for e in refusals
    )


def test_a_forged_checkpoint_is_refused_by_the_cli_in_one_line(tmp_path: Path) -> None:
    state, _checkpoints, thread, _ = _forge(tmp_path)
    cfg = tmp_path / "executors.toml"
    cfg.write_text('[runbook]\nurl = "http://127.0.0.1:9/t"\n')
    out = _cli(state, "execute", thread, "rp-1", "--config", str(cfg))
    assert out.returncode == 2 and "audit log holds no approval" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def _gate(a: Approved, runs: Path) -> ExecutionGate:
    """The gate over ``a``'s checkpoints and audit log; its runbook executor counts runs in ``runs``."""
    return ExecutionGate(
        CONFIG,
        ledger=SqliteLedger(a.checkpoints),
        audit_log=a.audit,
        executors={"runbook": CountingExecutor(runs)},
    )


def test_an_approval_in_a_broken_chain_does_not_count(tmp_path: Path) -> None:
    from forensic.harness import audit as chain

    a = Approved(tmp_path)
    approval = next(e for e in chain.entries(a.audit) if e["outcome"] == "approved")
    approval.pop("prev")
    a.audit.unlink()
    chain.append(a.audit, [{**approval, "proposal_id": "rp-9", "outcome": "refused"}, approval])
    # An edit of a line before the approval breaks the chain at the line after it.
    lines = a.audit.read_text().splitlines()
    lines[0] = lines[0].replace('"refused"', '"rejected"')
    a.audit.write_text("\n".join(lines) + "\n")
    gate = _gate(a, tmp_path / "runs.txt")
    with pytest.raises(ExecutionError, match="chain breaks"):
        gate.execute(a.thread, a.state(), "rp-1")
    assert not (tmp_path / "runs.txt").exists()


def test_an_approval_of_other_content_or_thread_does_not_count(tmp_path: Path) -> None:
    """The audit entry must name this thread, this proposal and this content hash, in an intact chain."""
    from forensic.harness import audit as chain

    a = Approved(tmp_path)
    approval = next(e for e in chain.entries(a.audit) if e["outcome"] == "approved")
    approval.pop("prev")
    a.audit.unlink()
    chain.append(
        a.audit,
        [
            {**approval, "thread": "t-someone-else"},
            {**approval, "content_hash": "0" * 64},
            {**approval, "proposal_id": "rp-2"},
            {**approval, "outcome": "refused"},
        ],
    )
    gate = _gate(a, tmp_path / "runs.txt")
    with pytest.raises(ExecutionError, match="audit log holds no approval"):
        gate.execute(a.thread, a.state(), "rp-1")
    assert not (tmp_path / "runs.txt").exists()


def test_a_real_approval_still_executes(tmp_path: Path) -> None:
    a = Approved(tmp_path)
    gate = _gate(a, tmp_path / "runs.txt")
    assert gate.execute(a.thread, a.state(), "rp-1")["state"] == "succeeded"


def test_what_ran_before_the_upgrade_still_does_not_run_again(tmp_path: Path) -> None:
    """Rows of the separate executions file of earlier releases are copied into the ledger."""
    a = Approved(tmp_path)
    p = a.proposal("rp-1")
    old = sqlite3.connect(str(a.state_dir / "executions.sqlite"))
    old.execute("""CREATE TABLE executions (
        thread TEXT NOT NULL, proposal_id TEXT NOT NULL, content_hash TEXT NOT NULL, action TEXT, target TEXT,
        executor TEXT, state TEXT NOT NULL, plan TEXT, detail TEXT, by TEXT, started REAL, finished REAL,
        PRIMARY KEY (thread, proposal_id))""")
    old.execute(
        "INSERT INTO executions VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            a.thread,
            "rp-1",
            p["content_hash"],
            p["action"],
            p["target"],
            "runbook",
            "succeeded",
            "{}",
            "T-1",
            "alice",
            time.time(),
            time.time(),
        ),
    )
    old.commit()
    old.close()
    runs = tmp_path / "runs.txt"
    gate = _gate(a, runs)
    with pytest.raises(ExecutionError, match="already run"):
        gate.execute(a.thread, a.state(), "rp-1")
    assert not runs.exists()


def test_the_service_and_the_cli_share_one_ledger_on_postgresql(pg_cluster, tmp_path: Path) -> None:
    """A run through the PostgreSQL service is refused by ``forensic execute --db`` and found by its --undo."""
    from fastapi.testclient import TestClient
    from forensic.harness.service import load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.bench import write_config
    from forensic.harness.service.service import Service

    from tests.harness.service.conftest import TOKENS

    cluster = pg_cluster
    with _ticket_system(tmp_path) as executors:
        url = cluster.fresh_db("ledger_cli")
        cfg = load_config(
            write_config(
                tmp_path,
                port=0,
                tokens=TOKENS,
                extra=f'executors = "{executors}"',
                bundles=[{"path": EXAMPLE, "job": JOB}],
            )
        )
        with TestClient(create_app(Service(cfg, db=url)), raise_server_exceptions=False) as c:
            inv, p = _ticket_proposal(c)
            _approve_and_run(c, inv, p)
        assert len(_Tickets.seen) == 1
        state = tmp_path / "cli-state"
        again = _cli(state, "execute", inv, p["id"], "--db", url, "--config", str(executors))
        assert again.returncode == 2 and "already run" in again.stderr, again.stderr
        assert len(again.stderr.strip().splitlines()) == 1 and len(_Tickets.seen) == 1
        undo = _cli(state, "execute", inv, p["id"], "--undo", "--db", url, "--config", str(executors))
        assert undo.returncode == 2 and "not undone by forensic" in undo.stderr, undo.stderr
        import psycopg

        with psycopg.connect(url) as con:
            steps = con.execute(
                "SELECT action, outcome FROM audit WHERE proposal = %s ORDER BY id", (p["id"],)
            ).fetchall()
        assert ("execute", "refused") in steps and (
            "undo",
            "failed",
        ) in steps  # the CLI's steps in the service's table
