"""A bounded pool of threads that run investigations, each as a checkpointed LangGraph thread.

Claiming is :meth:`Store.claim` (one transaction: global order, per-job cap, leases). A run is
taken on by :meth:`Driver.advance <forensic.harness.driver.Driver.advance>`: it resumes from its
checkpoint when one exists, so a process killed mid-investigation continues
where the checkpoint left off after a restart; a run whose claim was lost does not record a
conclusion (``Store.finish`` only accepts the claim holder), so no investigation concludes twice.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forensic.harness.budget import Limits
from forensic.sandbox import ForensicError

log = logging.getLogger("forensic.service.workers")


def sqlite_checkpointer(path: Path) -> Any:
    """LangGraph's SQLite checkpointer on the service database (its own tables and connection)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    con = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    con.execute("PRAGMA busy_timeout=30000")
    saver = SqliteSaver(con)
    saver.setup()
    return saver


def postgres_checkpointer(conninfo: str, *, max_size: int = 8) -> Any:
    """LangGraph's official Postgres checkpointer on the service database (its own tables)."""
    import psycopg
    from forensic.harness.service.schema import MIGRATION_LOCK
    from forensic.harness.service.store import DatabaseError
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    # Any: psycopg_pool types a pool by its connection class and cannot see the dict rows that
    # kwargs' row_factory gives, which is what PostgresSaver asks for.
    pool: Any = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=max_size,
        open=False,
        name="forensic-checkpoints",
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
    )
    try:
        pool.open(wait=True, timeout=15)
    except Exception as exc:  # psycopg.Error, psycopg_pool.PoolTimeout
        pool.close()
        raise DatabaseError(f"cannot connect to PostgreSQL for checkpoints ({type(exc).__name__})") from None
    saver = PostgresSaver(pool)
    with psycopg.connect(conninfo, autocommit=True) as con:  # concurrent first starts: one sets up
        _take_lock_polling(con, MIGRATION_LOCK)
        try:
            saver.setup()
        finally:
            con.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    saver._forensic_pool = pool  # type: ignore[attr-defined]  # the pool lives as long as the saver
    return saver


def _take_lock_polling(con: Any, key: int, *, wait_s: float = 300.0) -> None:
    """Take a session advisory lock by polling ``pg_try_advisory_lock``, never by waiting in a query.

    The checkpointer's setup builds its indexes with ``CREATE INDEX CONCURRENTLY``, which waits for
    every transaction in the database that holds an older snapshot. A second process blocked in
    ``pg_advisory_lock`` holds one for as long as it waits, while the lock it waits for is held by
    the first process's other connection: each waits for the other and PostgreSQL cannot see the
    cycle (it closes through the client). Between tries this connection holds no snapshot.
    """
    from forensic.harness.service.store import DatabaseError

    deadline = time.monotonic() + wait_s
    while not con.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
        if time.monotonic() > deadline:
            raise DatabaseError(f"another process held the set-up lock for over {wait_s:.0f} s")
        time.sleep(0.2)


def _events(node: str, update: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(key, kind, data) for the page's live stream from one graph step's update."""
    if not isinstance(update, dict):
        return []
    out: list[tuple[str, str, dict[str, Any]]] = []
    if node == "hypothesize":
        out.append(("hypothesize", "hypotheses", {"top": (update.get("hypotheses") or [])[:5]}))
    elif node == "run_tool" and update.get("records"):
        r = update["records"][-1]
        out.append(
            (
                f"tool:{r['id']}",
                "tool_call",
                {k: r.get(k) for k in ("id", "tool", "args", "status", "summary")},
            )
        )
        for s in r.get("signals") or []:
            out.append(
                (
                    f"finding:{r['id']}:{s.get('name')}:{s.get('component')}",
                    "finding",
                    {
                        "evidence": r["id"],
                        "signal": s.get("name"),
                        "component": s.get("component"),
                        "detail": s.get("detail", ""),
                    },
                )
            )
    elif node == "assess" and update.get("trace"):
        t = update["trace"][-1]
        out.append(
            (f"assess:{t.get('evidence')}", "hypotheses", {"after": t.get("evidence"), "top": t.get("top")})
        )
    elif node == "conclude" and update.get("report"):
        rep = update["report"]
        out.append(("conclude", "verdict", {"status": rep.get("status"), "verdict": rep.get("verdict")}))
    elif node == "propose" and update.get("report"):
        out.append(
            (
                "propose",
                "proposals",
                {
                    "proposals": [
                        {k: p.get(k) for k in ("id", "action", "target", "status")}
                        for p in update["report"].get("proposals", [])
                    ]
                },
            )
        )
    return out


class WorkerPool:
    """``count`` threads claiming and running investigations until stopped."""

    def __init__(
        self,
        store: Any,
        *,
        checkpointer: Any,
        limits: Limits,
        count: int,
        per_job: int,
        lease_s: float,
        step_pause_s: float = 0.0,
        on_finish: Callable[[dict[str, Any], dict[str, Any] | None, float], None] | None = None,
        on_tool: Callable[[str, str], None] | None = None,
        poll_s: float = 0.2,
        where: Callable[[dict[str, Any]], Any] | None = None,
        keep: Callable[[dict[str, Any], Any], None] | None = None,
    ) -> None:
        self.store = store
        self.saver = checkpointer
        self.limits = limits
        self.count = count
        self.per_job = per_job
        self.lease_s = lease_s
        self.step_pause_s = step_pause_s
        self.on_finish = on_finish
        self.on_tool = on_tool
        self.poll_s = poll_s
        #: What to open for an investigation (its bundle, or a live fleet's locator).
        self.where = where or (lambda inv: inv["bundle"])
        #: After a run is recorded: keep what it read (a live run's archive).
        self.keep = keep
        self.boot = uuid.uuid4().hex[:8]
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for i in range(self.count):
            t = threading.Thread(
                target=self._loop, args=(f"{self.boot}-w{i}",), name=f"forensic-worker-{i}", daemon=True
            )
            t.start()
            self._threads.append(t)

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=30)

    def _loop(self, owner: str) -> None:
        while not self._stop.is_set():
            try:
                job = self.store.claim(owner, lease_s=self.lease_s, per_job=self.per_job)
            except Exception as exc:  # a busy, failing or unreachable database: try again shortly
                log.warning("claim failed: %s", exc)
                job = None
            if job is None:
                self._wake.wait(self.poll_s)
                self._wake.clear()
                continue
            self.run(job, owner)

    def run(self, inv: dict[str, Any], owner: str) -> None:
        from forensic.harness.graph import Investigator

        t0 = time.monotonic()
        inv_id = inv["id"]
        try:
            investigator = Investigator(self.where(inv), limits=self.limits, checkpointer=self.saver)
            driver, thread = investigator.driver, inv["thread_id"]
            if driver.position(thread) in ("unfinished", "waiting"):
                self.store.add_event(inv_id, f"resume:{inv['runs']}", "resumed", {"run": inv["runs"]})
            for node, phase, update in driver.advance(thread, await_approval=True):
                if phase != "end":
                    continue
                if self._stop.is_set():
                    return  # the claim lapses; the next start resumes from this checkpoint
                for key, kind, data in _events(node, update):
                    self.store.add_event(inv_id, key, kind, data)
                    if kind == "tool_call" and self.on_tool:
                        self.on_tool(data.get("tool") or "?", data.get("status") or "?")
                if not self.store.renew(inv_id, owner, self.lease_s):
                    log.warning("%s: claim lost, stopping this run", inv_id)
                    return
                if self.step_pause_s:
                    self._stop.wait(self.step_pause_s)
            status, report = driver.outcome(thread)
            last: list[tuple[str, str, dict[str, Any]]] = (
                [("gate", "awaiting_approval", {})] if status == "awaiting_approval" else []
            )
            if self.store.finish(
                inv_id,
                owner,
                status=status,
                report=report,
                events=[*last, ("end", "end", {"status": status})],
            ):
                if self.on_finish:
                    self.on_finish(self.store.investigation(inv_id), report, time.monotonic() - t0)
                if self.keep:  # after the verdict and its notification: nobody waits for it
                    self.keep(inv, investigator)
        except ForensicError as exc:
            self._fail(inv_id, owner, str(exc))
        except Exception as exc:  # a bug must fail this investigation, not the worker
            log.exception("%s crashed", inv_id)
            self._fail(inv_id, owner, f"{type(exc).__name__}: {exc}")

    def _fail(self, inv_id: str, owner: str, reason: str) -> None:
        self.store.finish(
            inv_id,
            owner,
            status="failed",
            report=None,
            error=reason[:500],
            events=[("end", "end", {"status": "failed", "error": reason[:500]})],
        )
