"""Service state behind one small interface, with SQLite as the default implementation.

Every write that precedes a 2xx is committed with ``synchronous=FULL`` (WAL) before the
response is sent. The audit table is append-only: triggers refuse UPDATE and DELETE. The
LangGraph checkpoints live in the same file (their own tables, their own connection).

A second implementation (Postgres, several worker processes) implements :class:`Store`; the
worker claim is :meth:`Store.claim`, the one place that decides who runs what.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from forensic.harness.service.intake import Alert, IntakeResult, Payload, group_key_matches, supersedes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
  fingerprint TEXT PRIMARY KEY, status TEXT NOT NULL, alertname TEXT, labels TEXT NOT NULL,
  annotations TEXT NOT NULL, starts_at REAL, ends_at REAL, generator_url TEXT,
  investigation_id TEXT, received_at REAL NOT NULL, updated_at REAL NOT NULL, receipts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS alerts_inv ON alerts(investigation_id);
CREATE TABLE IF NOT EXISTS dead_letters (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT, status INTEGER NOT NULL,
  reason TEXT NOT NULL, body BLOB);
CREATE TABLE IF NOT EXISTS investigations (
  id TEXT PRIMARY KEY, job TEXT, hosts TEXT NOT NULL, gpus TEXT NOT NULL, first_at REAL, last_at REAL,
  status TEXT NOT NULL, bundle TEXT, thread_id TEXT NOT NULL, created_at REAL NOT NULL,
  updated_at REAL NOT NULL, started_at REAL, finished_at REAL, report TEXT, verdict TEXT,
  component TEXT, confidence REAL, report_status TEXT, alert_count INTEGER NOT NULL DEFAULT 0,
  resolved_count INTEGER NOT NULL DEFAULT 0, owner TEXT, lease_until REAL, runs INTEGER NOT NULL DEFAULT 0,
  error TEXT);
CREATE INDEX IF NOT EXISTS inv_status ON investigations(status);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, key TEXT NOT NULL, time REAL NOT NULL,
  kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE(investigation, key));
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY, time REAL NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  investigation TEXT, proposal TEXT, content_hash TEXT, outcome TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TABLE IF NOT EXISTS notifications (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, last_error TEXT,
  UNIQUE(investigation, url));
"""

#: Investigation statuses. ``unmapped``: no evidence source matches its alerts.
STATUSES = ("queued", "running", "awaiting_approval", "concluded", "failed", "unmapped")
ACTIVE = ("queued", "running", "awaiting_approval")


class Store(Protocol):
    """What the service needs from its storage."""

    def ingest(
        self, batch: list[tuple[str, str, Payload]], *, window_s: float, resolve_bundle: Any
    ) -> list[IntakeResult]: ...
    def dead_letter(
        self, user: str | None, status: int, reason: str, body: bytes, *, keep: int, keep_s: float
    ) -> None: ...
    def dead_letters(self, limit: int = 100, before: int | None = None) -> list[dict[str, Any]]: ...
    def dead_letter_count(self) -> int: ...
    def claim(self, owner: str, *, lease_s: float, per_job: int) -> dict[str, Any] | None: ...
    def renew(self, inv_id: str, owner: str, lease_s: float) -> bool: ...
    def release_all(self) -> int: ...
    def finish(
        self,
        inv_id: str,
        owner: str,
        *,
        status: str,
        report: dict[str, Any] | None,
        error: str | None = None,
        events: Sequence[tuple[str, str, dict[str, Any]]] = (),
    ) -> bool: ...
    def set_report(self, inv_id: str, report: dict[str, Any], status: str) -> None: ...
    def add_event(self, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None: ...
    def events_after(self, inv_id: str, after: int) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...
    def investigation(self, inv_id: str) -> dict[str, Any] | None: ...
    def investigations(
        self, *, status: str | None, job: str | None, since: float | None, until: float | None, limit: int
    ) -> list[dict[str, Any]]: ...
    def alerts_of(self, inv_id: str) -> list[dict[str, Any]]: ...
    def audit(self, entry: dict[str, Any]) -> None: ...
    def audit_log(self, *, investigation: str | None, limit: int) -> list[dict[str, Any]]: ...
    def enqueue_notifications(self, inv_id: str, urls: list[str], payload: dict[str, Any]) -> None: ...
    def due_notifications(self, now: float) -> list[dict[str, Any]]: ...
    def notification_result(
        self, nid: int, *, ok: bool, error: str | None, next_at: float | None
    ) -> None: ...
    def counts(self) -> dict[str, int]: ...


def _now() -> float:
    return time.time()


def _row(cur: sqlite3.Cursor, row: tuple) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cur.description, row, strict=True)}


class SqliteStore:
    """The default :class:`Store`: one SQLite file, one writer connection, a reader per thread."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._w = self._connect()
        self._w.executescript(_SCHEMA)
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")  # a commit is on disk before any 2xx
        con.execute("PRAGMA busy_timeout=30000")
        con.row_factory = _row
        return con

    def _r(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._connect()
        return con

    def _tx(self):
        store = self

        class _Tx:
            def __enter__(self_inner) -> sqlite3.Connection:
                store._lock.acquire()
                store._w.execute("BEGIN IMMEDIATE")
                return store._w

            def __exit__(self_inner, et, ev, tb) -> None:
                try:
                    store._w.execute("COMMIT" if et is None else "ROLLBACK")
                finally:
                    store._lock.release()

        return _Tx()

    def close(self) -> None:
        with self._lock:
            self._w.close()

    # -- intake ----------------------------------------------------------------------------
    def ingest(
        self, batch: list[tuple[str, str, Payload]], *, window_s: float, resolve_bundle: Any
    ) -> list[IntakeResult]:
        """Store a batch of accepted webhooks in one transaction (one fsync for the batch)."""
        results: list[IntakeResult] = []
        now = _now()
        with self._tx() as con:
            for user, body, payload in batch:
                con.execute("INSERT INTO webhooks(received_at, user, body) VALUES (?,?,?)", (now, user, body))
                res = IntakeResult()
                for alert in payload.alerts:
                    self._ingest_alert(con, alert, now, window_s, resolve_bundle, res)
                results.append(res)
        return results

    def _ingest_alert(
        self,
        con: sqlite3.Connection,
        a: Alert,
        now: float,
        window_s: float,
        resolve_bundle: Any,
        res: IntakeResult,
    ) -> None:
        old = con.execute(
            "SELECT investigation_id, status, starts_at, ends_at FROM alerts WHERE fingerprint=?",
            (a.fingerprint_,),
        ).fetchone()
        if old is not None:
            inv_id = old["investigation_id"]
            res.duplicates += 1
            if not supersedes(
                a, old["status"], old["starts_at"], old["ends_at"]
            ):  # a late delivery: counted, not applied
                con.execute(
                    "UPDATE alerts SET updated_at=?, receipts=receipts+1 WHERE fingerprint=?",
                    (now, a.fingerprint_),
                )
            else:
                con.execute(
                    "UPDATE alerts SET status=?, starts_at=?, ends_at=?, labels=?, annotations=?, updated_at=?,"
                    " receipts=receipts+1 WHERE fingerprint=?",
                    (
                        a.status,
                        a.starts_unix,
                        a.ends_unix,
                        json.dumps(a.labels),
                        json.dumps(a.annotations),
                        now,
                        a.fingerprint_,
                    ),
                )
                # resolved_count: alerts of the investigation resolved now (a re-fire takes one back).
                delta = (a.status == "resolved") - (old["status"] == "resolved")
                if delta and inv_id:
                    con.execute(
                        "UPDATE investigations SET resolved_count=resolved_count+?, updated_at=? WHERE id=?",
                        (delta, now, inv_id),
                    )
                if delta > 0 and inv_id:
                    self._event(
                        con,
                        inv_id,
                        f"resolved:{a.fingerprint_}",
                        "alert_resolved",
                        {"fingerprint": a.fingerprint_, "alertname": a.alertname, "ends_at": a.ends_unix},
                    )
            if inv_id and inv_id not in res.investigations:
                res.investigations.append(inv_id)
            return
        inv_id = self._group(con, a, now, window_s, resolve_bundle, res)
        con.execute(
            "INSERT INTO alerts(fingerprint, status, alertname, labels, annotations, starts_at, ends_at, generator_url,"
            " investigation_id, received_at, updated_at, receipts) VALUES (?,?,?,?,?,?,?,?,?,?,?,1)",
            (
                a.fingerprint_,
                a.status,
                a.alertname,
                json.dumps(a.labels),
                json.dumps(a.annotations),
                a.starts_unix,
                a.ends_unix,
                a.generatorURL,
                inv_id,
                now,
                now,
            ),
        )
        if a.status == "resolved":  # first seen already resolved: one alert resolved
            con.execute("UPDATE investigations SET resolved_count=resolved_count+1 WHERE id=?", (inv_id,))
        res.accepted += 1
        if inv_id not in res.investigations:
            res.investigations.append(inv_id)

    def _group(
        self,
        con: sqlite3.Connection,
        a: Alert,
        now: float,
        window_s: float,
        resolve_bundle: Any,
        res: IntakeResult,
    ) -> str:
        t = a.starts_unix if a.starts_unix is not None else now
        rows = con.execute(
            "SELECT id, job, hosts, gpus, first_at, last_at, alert_count FROM investigations"
            " WHERE last_at >= ? AND first_at <= ?"
            " AND status IN ('queued','running','awaiting_approval','concluded','unmapped')"
            " ORDER BY created_at",
            (t - window_s, t + window_s),
        ).fetchall()
        for r in rows:
            hosts = json.loads(r["hosts"])
            if group_key_matches(a.job, a.hosts, r["job"], hosts):
                new_hosts = set(a.hosts) - set(hosts)
                gpus = json.loads(r["gpus"])
                new_gpus = set(a.gpus) - set(gpus)
                con.execute(
                    "UPDATE investigations SET hosts=?, gpus=?, job=COALESCE(job, ?), first_at=MIN(first_at, ?),"
                    " last_at=MAX(last_at, ?), alert_count=alert_count+1, updated_at=? WHERE id=?",
                    (
                        json.dumps(sorted({*hosts, *new_hosts})) if new_hosts else r["hosts"],
                        json.dumps(sorted({*gpus, *new_gpus})) if new_gpus else r["gpus"],
                        a.job,
                        t,
                        t,
                        now,
                        r["id"],
                    ),
                )
                res.grouped += 1
                # The first alerts show in the activity stream; a storm does not flood it (all are in alerts).
                if r["alert_count"] < 20:
                    self._event(
                        con,
                        r["id"],
                        f"alert:{a.fingerprint_}",
                        "alert",
                        {"alertname": a.alertname, "fingerprint": a.fingerprint_},
                    )
                return r["id"]
        inv_id = f"inv-{uuid.uuid4().hex[:12]}"
        bundle = resolve_bundle(a.job, a.hosts)
        status = "queued" if bundle else "unmapped"
        con.execute(
            "INSERT INTO investigations(id, job, hosts, gpus, first_at, last_at, status, bundle, thread_id, created_at,"
            " updated_at, alert_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,1)",
            (
                inv_id,
                a.job,
                json.dumps(sorted(set(a.hosts))),
                json.dumps(sorted(set(a.gpus))),
                t,
                t,
                status,
                str(bundle) if bundle else None,
                inv_id,
                now,
                now,
            ),
        )
        self._event(
            con,
            inv_id,
            f"alert:{a.fingerprint_}",
            "alert",
            {"alertname": a.alertname, "fingerprint": a.fingerprint_},
        )
        res.opened.append(inv_id)
        return inv_id

    def dead_letter(
        self, user: str | None, status: int, reason: str, body: bytes, *, keep: int, keep_s: float
    ) -> None:
        """Keep a refused body; in the same transaction, delete all but the newest ``keep`` and any older than ``keep_s``."""
        now = _now()
        with self._tx() as con:
            con.execute(
                "INSERT INTO dead_letters(received_at, user, status, reason, body) VALUES (?,?,?,?,?)",
                (now, user, status, reason[:2000], body),
            )
            con.execute(
                "DELETE FROM dead_letters WHERE received_at < ?"
                " OR id <= (SELECT id FROM dead_letters ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (now - keep_s, keep),
            )

    def dead_letters(self, limit: int = 100, before: int | None = None) -> list[dict[str, Any]]:
        """Newest first; ``before``: only those with a smaller id (the cursor of the next page)."""
        return (
            self._r()
            .execute(
                "SELECT id, received_at, user, status, reason, length(body) AS bytes FROM dead_letters"
                " WHERE id < ? ORDER BY id DESC LIMIT ?",
                (before if before is not None else 1 << 62, limit),
            )
            .fetchall()
        )

    def dead_letter_count(self) -> int:
        return self._r().execute("SELECT COUNT(*) AS n FROM dead_letters").fetchone()["n"]

    # -- workers ---------------------------------------------------------------------------
    def claim(self, owner: str, *, lease_s: float, per_job: int) -> dict[str, Any] | None:
        """Take the oldest runnable investigation whose job is under its cap; None if there is none.

        Runnable: queued, or running under a lease that has run out (its worker died). The
        claim and the lease are one transaction, so no two workers ever hold one investigation.
        """
        now = _now()
        with self._tx() as con:
            row = con.execute(
                "SELECT * FROM investigations i WHERE (i.status='queued' OR (i.status='running' AND i.lease_until < ?))"
                " AND (i.job IS NULL OR (SELECT COUNT(*) FROM investigations j WHERE j.job=i.job AND j.status='running'"
                "  AND j.lease_until >= ? AND j.id != i.id) < ?) ORDER BY i.created_at LIMIT 1",
                (now, now, per_job),
            ).fetchone()
            if row is None:
                return None
            con.execute(
                "UPDATE investigations SET status='running', owner=?, lease_until=?, runs=runs+1,"
                " started_at=COALESCE(started_at, ?), updated_at=? WHERE id=?",
                (owner, now + lease_s, now, now, row["id"]),
            )
            row["runs"] += 1
            return row

    def renew(self, inv_id: str, owner: str, lease_s: float) -> bool:
        with self._tx() as con:
            cur = con.execute(
                "UPDATE investigations SET lease_until=? WHERE id=? AND owner=? AND status='running'",
                (_now() + lease_s, inv_id, owner),
            )
            return cur.rowcount == 1

    def release_all(self) -> int:
        """At start-up of the only process on this file: runs of a killed process are runnable again."""
        with self._tx() as con:
            return con.execute(
                "UPDATE investigations SET status='queued', owner=NULL, lease_until=NULL WHERE status='running'"
            ).rowcount

    def finish(
        self,
        inv_id: str,
        owner: str,
        *,
        status: str,
        report: dict[str, Any] | None,
        error: str | None = None,
        events: Sequence[tuple[str, str, dict[str, Any]]] = (),
    ) -> bool:
        """Record the end of a run, with its last events in the same transaction (a reader never
        sees the status without them); only the worker holding the claim may, and only once."""
        now = _now()
        v = (report or {}).get("verdict") or {}
        with self._tx() as con:
            cur = con.execute(
                "UPDATE investigations SET status=?, report=COALESCE(?, report), verdict=COALESCE(?, verdict),"
                " component=COALESCE(?, component), confidence=COALESCE(?, confidence), report_status=COALESCE(?, report_status),"
                " finished_at=?, updated_at=?, owner=NULL, lease_until=NULL, error=? WHERE id=? AND owner=? AND status='running'",
                (
                    status,
                    json.dumps(report) if report else None,
                    v.get("root_cause"),
                    v.get("component"),
                    v.get("confidence"),
                    (report or {}).get("status"),
                    now,
                    now,
                    error,
                    inv_id,
                    owner,
                ),
            )
            if cur.rowcount != 1:
                return False
            for key, kind, data in events:
                self._event(con, inv_id, key, kind, data)
            return True

    def set_report(self, inv_id: str, report: dict[str, Any], status: str) -> None:
        with self._tx() as con:
            con.execute(
                "UPDATE investigations SET report=?, status=?, updated_at=? WHERE id=?",
                (json.dumps(report), status, _now(), inv_id),
            )

    # -- events ----------------------------------------------------------------------------
    @staticmethod
    def _event(con: sqlite3.Connection, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        # A node re-run after a crash emits the same key again: kept once.
        con.execute(
            "INSERT OR IGNORE INTO events(investigation, key, time, kind, data) VALUES (?,?,?,?,?)",
            (inv_id, key, _now(), kind, json.dumps(data)),
        )

    def add_event(self, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        with self._tx() as con:
            self._event(con, inv_id, key, kind, data)

    def events_after(self, inv_id: str, after: int) -> list[dict[str, Any]]:
        rows = (
            self._r()
            .execute(
                "SELECT id, time, kind, data FROM events WHERE investigation=? AND id>? ORDER BY id",
                (inv_id, after),
            )
            .fetchall()
        )
        for r in rows:
            r["data"] = json.loads(r["data"])
        return rows

    # -- reading ---------------------------------------------------------------------------
    @staticmethod
    def _decode(r: dict[str, Any]) -> dict[str, Any]:
        r["hosts"] = json.loads(r["hosts"])
        r["gpus"] = json.loads(r["gpus"])
        r["report"] = json.loads(r["report"]) if r.get("report") else None
        return r

    def investigation(self, inv_id: str) -> dict[str, Any] | None:
        r = self._r().execute("SELECT * FROM investigations WHERE id=?", (inv_id,)).fetchone()
        return self._decode(r) if r else None

    def investigations(
        self,
        *,
        status: str | None = None,
        job: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        q, args = "SELECT * FROM investigations WHERE 1=1", []
        for clause, value in (
            ("status=?", status),
            ("job=?", job),
            ("last_at>=?", since),
            ("first_at<=?", until),
        ):
            if value is not None:
                q += f" AND {clause}"
                args.append(value)
        rows = self._r().execute(q + " ORDER BY created_at DESC LIMIT ?", (*args, limit)).fetchall()
        return [self._decode(r) for r in rows]

    def alerts_of(self, inv_id: str) -> list[dict[str, Any]]:
        rows = (
            self._r()
            .execute(
                "SELECT * FROM alerts WHERE investigation_id=? ORDER BY starts_at, fingerprint LIMIT 1000",
                (inv_id,),
            )
            .fetchall()
        )
        for r in rows:
            r["labels"] = json.loads(r["labels"])
            r["annotations"] = json.loads(r["annotations"])
        return rows

    def alert_fingerprints(self) -> set[str]:
        return {r["fingerprint"] for r in self._r().execute("SELECT fingerprint FROM alerts").fetchall()}

    # -- audit -----------------------------------------------------------------------------
    def audit(self, entry: dict[str, Any]) -> None:
        with self._tx() as con:
            con.execute(
                "INSERT INTO audit(time, actor, action, investigation, proposal, content_hash, outcome, reason, detail)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    entry.get("time", _now()),
                    entry["actor"],
                    entry["action"],
                    entry.get("investigation"),
                    entry.get("proposal"),
                    entry.get("content_hash"),
                    entry["outcome"],
                    entry.get("reason", ""),
                    json.dumps(entry.get("detail") or {}),
                ),
            )

    def audit_log(self, *, investigation: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        q, args = "SELECT * FROM audit", []
        if investigation:
            q, args = q + " WHERE investigation=?", [investigation]
        rows = self._r().execute(q + " ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()
        for r in rows:
            r["detail"] = json.loads(r["detail"])
        return rows

    # -- notifications (an outbox: enqueued with the conclusion, sent by the notifier) -----
    def enqueue_notifications(self, inv_id: str, urls: list[str], payload: dict[str, Any]) -> None:
        with self._tx() as con:
            for url in urls:
                con.execute(
                    "INSERT OR IGNORE INTO notifications(investigation, url, payload, state, next_at) VALUES (?,?,?,?,?)",
                    (inv_id, url, json.dumps(payload), "pending", _now()),
                )

    def due_notifications(self, now: float) -> list[dict[str, Any]]:
        return (
            self._r()
            .execute(
                "SELECT * FROM notifications WHERE state='pending' AND next_at<=? ORDER BY next_at LIMIT 50",
                (now,),
            )
            .fetchall()
        )

    def notification_result(self, nid: int, *, ok: bool, error: str | None, next_at: float | None) -> None:
        state = "sent" if ok else ("pending" if next_at is not None else "failed")
        with self._tx() as con:
            con.execute(
                "UPDATE notifications SET state=?, attempts=attempts+1, next_at=COALESCE(?, next_at), last_error=?"
                " WHERE id=?",
                (state, next_at, error, nid),
            )

    def notifications(self) -> list[dict[str, Any]]:
        return (
            self._r()
            .execute(
                "SELECT id, investigation, url, state, attempts, last_error FROM notifications ORDER BY id"
            )
            .fetchall()
        )

    # -- metrics ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        rows = (
            self._r().execute("SELECT status, COUNT(*) AS n FROM investigations GROUP BY status").fetchall()
        )
        return {r["status"]: r["n"] for r in rows}
