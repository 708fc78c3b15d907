"""The :class:`~forensic.harness.service.store.Store` on PostgreSQL, for several API and worker processes.

Same tables and semantics as :class:`SqliteStore`; what changes is who may run at once:

- Schema: Alembic revisions (:mod:`~forensic.harness.service.pgmigrate`), applied under an
  advisory lock; every process applies what is missing at start-up, so API replicas and workers
  may start in any order, and ``forensic db upgrade`` applies them explicitly.
- Intake: every API process writes. A batch takes transaction-scoped advisory locks on the keys
  its alerts could group by (job, each host) and on their fingerprints, in one sorted order, so
  two processes never both open an investigation for one fault nor insert one alert twice.
- Claim: ``SELECT ... FOR UPDATE SKIP LOCKED`` on runnable investigations (queued, or running
  with a lapsed lease), with a per-job advisory lock around the per-job cap. A worker killed
  with ``kill -9`` stops renewing its lease; when the lease runs out another worker claims the
  investigation and resumes it from its LangGraph checkpoint (:func:`postgres_checkpointer`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

from forensic.harness.service.intake import IntakeResult, Payload, group_key_matches, supersedes
from forensic.harness.service.pgmigrate import MIGRATION_LOCK
from forensic.sandbox import ForensicError

_MIGRATION_LOCK = MIGRATION_LOCK  # schema changes and the checkpointer's set-up wait on each other


class DatabaseError(ForensicError):
    """The PostgreSQL database cannot be reached or used (one line saying why)."""


def is_postgres_url(db: str | None) -> bool:
    return bool(db) and str(db).startswith(("postgresql://", "postgres://"))


def _now() -> float:
    return time.time()


def _key(text: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``text``."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def migrate(conninfo: str) -> list[str]:
    """Bring the schema to head with Alembic (:mod:`~forensic.harness.service.pgmigrate`); the revisions applied now."""
    from forensic.harness.service.pgmigrate import migrate as alembic_migrate

    return alembic_migrate(conninfo)


def _pool(conninfo: str, *, max_size: int, name: str) -> Any:
    import psycopg
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=max_size,
        open=False,
        name=name,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
    )
    try:
        pool.open(wait=True, timeout=15)
    except psycopg.Error as exc:
        pool.close()
        raise DatabaseError(
            f"cannot connect to PostgreSQL: {str(exc).splitlines()[0] if str(exc) else exc}"
        ) from None
    except Exception as exc:  # psycopg_pool.PoolTimeout
        pool.close()
        raise DatabaseError(f"cannot connect to PostgreSQL within 15 s ({type(exc).__name__})") from None
    return pool


def connect_check(conninfo: str) -> None:
    """Raise :class:`DatabaseError` with one line if ``conninfo`` is unusable."""
    import psycopg

    try:
        psycopg.connect(conninfo, connect_timeout=10).close()
    except psycopg.Error as exc:
        raise DatabaseError(f"cannot connect to PostgreSQL: {' '.join(str(exc).split())[:300]}") from None


def postgres_checkpointer(conninfo: str, *, max_size: int = 8) -> Any:
    """LangGraph's official Postgres checkpointer on the same database (its own tables)."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    pool = _pool(conninfo, max_size=max_size, name="forensic-checkpoints")
    saver = PostgresSaver(pool)
    with psycopg.connect(conninfo, autocommit=True) as con:  # concurrent first starts: one sets up
        con.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
        try:
            saver.setup()
        finally:
            con.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    saver._forensic_pool = pool  # type: ignore[attr-defined]  # the pool lives as long as the saver
    return saver


class PostgresStore:
    """:class:`Store` on PostgreSQL: many processes, one database."""

    def __init__(self, conninfo: str, *, max_size: int = 8) -> None:
        connect_check(conninfo)
        migrate(conninfo)
        self.conninfo = conninfo
        self._pool = _pool(conninfo, max_size=max_size, name="forensic-store")

    def close(self) -> None:
        self._pool.close()

    def _tx(self):
        from contextlib import contextmanager

        @contextmanager
        def tx():
            with self._pool.connection() as con, con.transaction():
                yield con

        return tx()

    def _q(self, sql: str, args: tuple | list = ()) -> list[dict[str, Any]]:
        with self._pool.connection() as con:
            return con.execute(sql, args).fetchall()

    # -- intake ----------------------------------------------------------------------------
    def ingest(
        self, batch: list[tuple[str, str, Payload]], *, window_s: float, resolve_bundle: Any
    ) -> list[IntakeResult]:
        """Store a batch of accepted webhooks in one transaction, serialized per group key.

        Two round trips in all, in psycopg's pipeline mode: the webhook rows, the advisory locks
        and both reads go out together; then every write and the commit. The locks are held for
        those two trips and the commit, so batches of other API processes that share a key wait
        as little as possible.
        """
        keys: set[int] = set()
        alerts = [a for _, _, p in batch for a in p.alerts]
        jobs: set[str] = set()
        hosts: set[str] = set()
        for a in alerts:
            keys.add(_key("fp:" + a.fingerprint_))
            job = a.job
            if job:
                jobs.add(job)
                keys.add(_key("job:" + job))
            hosts.update(a.hosts)
        keys.update(_key("host:" + h) for h in hosts)
        now = _now()
        with self._pool.connection() as con, con.pipeline(), con.transaction():
            con.execute(
                'INSERT INTO webhooks(received_at, "user", body) SELECT %s, u, b FROM unnest(%s::text[], %s::text[]) AS w(u, b)',
                (now, [user for user, _, _ in batch], [body for _, body, _ in batch]),
            )
            if keys:  # one order for everyone: no deadlocks between API processes
                con.execute(
                    "SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k ORDER BY k",
                    (sorted(keys),),
                )
            return self._ingest_batch(
                con, batch, alerts, now, window_s, resolve_bundle, sorted(jobs), sorted(hosts)
            )

    def _ingest_batch(
        self,
        con: Any,
        batch: list[tuple[str, str, Payload]],
        alerts: list[Any],
        now: float,
        window_s: float,
        resolve_bundle: Any,
        jobs: list[str],
        hosts: list[str],
    ) -> list[IntakeResult]:
        """The SQLite store's per-alert logic, decided in memory from two reads, written in one batch of writes.

        Each webhook's alerts are taken in order exactly as :meth:`SqliteStore.ingest` does; what
        differs is only that the reads happen once per batch (the advisory locks keep them valid)
        and the writes go out together, so the locks are held for a few round trips, not many.
        The candidate investigations are only those that share a job or a host with the batch:
        an investigation sharing neither can take none of its alerts (nor grow to share one).
        """
        times = [a.starts_unix if a.starts_unix is not None else now for a in alerts]
        known_cur = con.execute(
            "SELECT fingerprint, investigation_id, status, starts_at, ends_at FROM alerts"
            " WHERE fingerprint = ANY(%s)",
            ([a.fingerprint_ for a in alerts],),
        )
        cand_cur = con.execute(
            "SELECT id, job, hosts, gpus, first_at, last_at, alert_count FROM investigations"
            " WHERE last_at >= %s AND first_at <= %s"
            " AND status IN ('queued','running','awaiting_approval','concluded','unmapped')"
            " AND (job = ANY(%s) OR hosts::jsonb ?| %s::text[])"
            " ORDER BY created_at, seq",
            (min(times, default=now) - window_s, max(times, default=now) + window_s, jobs, hosts),
        )
        known = {
            r["fingerprint"]: r for r in known_cur.fetchall()
        }  # one sync: the webhooks, locks and both reads
        cands: list[dict[str, Any]] = []
        for r in cand_cur.fetchall():
            cands.append(
                {
                    **r,
                    "hosts": json.loads(r["hosts"]),
                    "gpus": json.loads(r["gpus"]),
                    "new": False,
                    "added": 0,
                    "job0": r["job"],
                }
            )
        alert_rows: list[tuple] = []
        alert_updates: list[tuple] = []
        stale: list[tuple] = []
        resolved: dict[str, int] = {}  # investigation -> change in alerts resolved now
        events: list[tuple] = []

        def event(inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
            events.append((inv_id, key, now, kind, json.dumps(data)))

        results: list[IntakeResult] = []
        for _, _, payload in batch:
            res = IntakeResult()
            for a in payload.alerts:
                fp = a.fingerprint_
                old = known.get(fp)
                if old is not None:
                    inv_id = old["investigation_id"]
                    res.duplicates += 1
                    if not supersedes(
                        a, old["status"], old["starts_at"], old["ends_at"]
                    ):  # late: counted, not applied
                        stale.append((now, fp))
                    else:
                        alert_updates.append(
                            (
                                a.status,
                                a.starts_unix,
                                a.ends_unix,
                                json.dumps(a.labels),
                                json.dumps(a.annotations),
                                now,
                                fp,
                            )
                        )
                        delta = (a.status == "resolved") - (old["status"] == "resolved")
                        if delta and inv_id:
                            resolved[inv_id] = resolved.get(inv_id, 0) + delta
                        if delta > 0 and inv_id:
                            event(
                                inv_id,
                                f"resolved:{fp}",
                                "alert_resolved",
                                {"fingerprint": fp, "alertname": a.alertname, "ends_at": a.ends_unix},
                            )
                        old.update(status=a.status, starts_at=a.starts_unix, ends_at=a.ends_unix)
                    if inv_id and inv_id not in res.investigations:
                        res.investigations.append(inv_id)
                    continue
                t = a.starts_unix if a.starts_unix is not None else now
                job, a_hosts = a.job, a.hosts  # pydantic private attributes: read once, not per candidate
                inv = next(
                    (
                        c
                        for c in cands
                        if c["last_at"] >= t - window_s
                        and c["first_at"] <= t + window_s
                        and group_key_matches(job, a_hosts, c["job"], c["hosts"])
                    ),
                    None,
                )
                if inv is not None:
                    inv["hosts"] = sorted({*inv["hosts"], *a_hosts})
                    inv["gpus"] = sorted({*inv["gpus"], *a.gpus})
                    inv["job"] = inv["job"] if inv["job"] is not None else job
                    inv["first_at"], inv["last_at"] = min(inv["first_at"], t), max(inv["last_at"], t)
                    if inv["alert_count"] < 20:
                        event(
                            inv["id"], f"alert:{fp}", "alert", {"alertname": a.alertname, "fingerprint": fp}
                        )
                    inv["alert_count"] += 1
                    inv["added"] += 1
                    res.grouped += 1
                else:
                    bundle = resolve_bundle(job, a_hosts)
                    inv = {
                        "id": f"inv-{uuid.uuid4().hex[:12]}",
                        "job": job,
                        "hosts": sorted(set(a_hosts)),
                        "gpus": sorted(set(a.gpus)),
                        "first_at": t,
                        "last_at": t,
                        "alert_count": 1,
                        "new": True,
                        "added": 0,
                        "status": "queued" if bundle else "unmapped",
                        "bundle": str(bundle) if bundle else None,
                    }
                    cands.append(inv)
                    event(inv["id"], f"alert:{fp}", "alert", {"alertname": a.alertname, "fingerprint": fp})
                    res.opened.append(inv["id"])
                alert_rows.append(
                    (
                        fp,
                        a.status,
                        a.alertname,
                        json.dumps(a.labels),
                        json.dumps(a.annotations),
                        a.starts_unix,
                        a.ends_unix,
                        a.generatorURL,
                        inv["id"],
                        now,
                        now,
                    )
                )
                known[fp] = {
                    "investigation_id": inv["id"],
                    "status": a.status,
                    "starts_at": a.starts_unix,
                    "ends_at": a.ends_unix,
                }
                if a.status == "resolved":  # first seen already resolved: one alert resolved
                    resolved[inv["id"]] = resolved.get(inv["id"], 0) + 1
                res.accepted += 1
                if inv["id"] not in res.investigations:
                    res.investigations.append(inv["id"])
            results.append(res)

        cur = con.cursor()
        new_invs = [
            (
                c["id"],
                c["job"],
                json.dumps(c["hosts"]),
                json.dumps(c["gpus"]),
                c["first_at"],
                c["last_at"],
                c["status"],
                c["bundle"],
                c["id"],
                now,
                now,
                c["alert_count"],
            )
            for c in cands
            if c["new"]
        ]
        if new_invs:
            cur.executemany(
                "INSERT INTO investigations(id, job, hosts, gpus, first_at, last_at, status, bundle, thread_id,"
                " created_at, updated_at, alert_count) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                new_invs,
            )
        grown = [
            (
                json.dumps(c["hosts"]),
                json.dumps(c["gpus"]),
                c["job"],
                c["first_at"],
                c["last_at"],
                c["added"],
                now,
                c["id"],
            )
            for c in cands
            if not c["new"] and c["added"]
        ]
        if grown:
            cur.executemany(
                "UPDATE investigations SET hosts=%s, gpus=%s, job=COALESCE(job, %s), first_at=LEAST(first_at, %s),"
                " last_at=GREATEST(last_at, %s), alert_count=alert_count+%s, updated_at=%s WHERE id=%s",
                grown,
            )
        if any(resolved.values()):
            cur.executemany(
                "UPDATE investigations SET resolved_count=resolved_count+%s, updated_at=%s WHERE id=%s",
                [(n, now, inv_id) for inv_id, n in resolved.items() if n],
            )
        if alert_rows:
            # One statement for every new alert of the batch (rows as arrays), not one per alert.
            cols = list(zip(*alert_rows, strict=True))
            cur.execute(
                "INSERT INTO alerts(fingerprint, status, alertname, labels, annotations, starts_at, ends_at,"
                " generator_url, investigation_id, received_at, updated_at, receipts)"
                " SELECT *, 1 FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
                " %s::float8[], %s::float8[], %s::text[], %s::text[], %s::float8[], %s::float8[])",
                [list(c) for c in cols],
            )
        if alert_updates:
            cur.executemany(
                "UPDATE alerts SET status=%s, starts_at=%s, ends_at=%s, labels=%s, annotations=%s, updated_at=%s,"
                " receipts=receipts+1 WHERE fingerprint=%s",
                alert_updates,
            )
        if stale:
            cur.executemany(
                "UPDATE alerts SET updated_at=%s, receipts=receipts+1 WHERE fingerprint=%s", stale
            )
        if events:
            cur.execute(
                "INSERT INTO events(investigation, key, time, kind, data) SELECT * FROM"
                " unnest(%s::text[], %s::text[], %s::float8[], %s::text[], %s::text[])"
                " ON CONFLICT (investigation, key) DO NOTHING",
                [list(c) for c in zip(*events, strict=True)],
            )
        return results

    def dead_letter(
        self, user: str | None, status: int, reason: str, body: bytes, *, keep: int, keep_s: float
    ) -> None:
        """Keep a refused body; in the same transaction, delete all but the newest ``keep`` and any older than ``keep_s``."""
        now = _now()
        with self._tx() as con:
            con.execute(
                'INSERT INTO dead_letters(received_at, "user", status, reason, body) VALUES (%s,%s,%s,%s,%s)',
                (now, user, status, reason[:2000], body),
            )
            con.execute(
                "DELETE FROM dead_letters WHERE received_at < %s"
                " OR id <= (SELECT id FROM dead_letters ORDER BY id DESC LIMIT 1 OFFSET %s)",
                (now - keep_s, keep),
            )

    def dead_letters(self, limit: int = 100, before: int | None = None) -> list[dict[str, Any]]:
        """Newest first; ``before``: only those with a smaller id (the cursor of the next page)."""
        return self._q(
            'SELECT id, received_at, "user", status, reason, length(body) AS bytes FROM dead_letters'
            " WHERE id < %s ORDER BY id DESC LIMIT %s",
            (before if before is not None else 1 << 62, limit),
        )

    def dead_letter_count(self) -> int:
        return self._q("SELECT COUNT(*) AS n FROM dead_letters")[0]["n"]

    # -- workers ---------------------------------------------------------------------------
    def claim(self, owner: str, *, lease_s: float, per_job: int) -> dict[str, Any] | None:
        """Take the oldest runnable investigation whose job is under its cap (``FOR UPDATE SKIP LOCKED``)."""
        now = _now()
        with self._tx() as con:
            rows = con.execute(
                "SELECT * FROM investigations WHERE status='queued' OR (status='running' AND lease_until < %s)"
                " ORDER BY created_at, seq LIMIT 16 FOR UPDATE SKIP LOCKED",
                (now,),
            ).fetchall()
            for row in rows:
                if row["job"] is not None:
                    # Two workers claiming two investigations of one job at once: the second waits, then counts.
                    con.execute("SELECT pg_advisory_xact_lock(%s)", (_key("claim-job:" + row["job"]),))
                    n = con.execute(
                        "SELECT COUNT(*) AS n FROM investigations WHERE job=%s AND status='running'"
                        " AND lease_until >= %s AND id <> %s",
                        (row["job"], now, row["id"]),
                    ).fetchone()["n"]
                    if n >= per_job:
                        continue
                con.execute(
                    "UPDATE investigations SET status='running', owner=%s, lease_until=%s, runs=runs+1,"
                    " started_at=COALESCE(started_at, %s), updated_at=%s WHERE id=%s",
                    (owner, now + lease_s, now, now, row["id"]),
                )
                row["runs"] += 1
                row.pop("seq", None)
                return row
        return None

    def renew(self, inv_id: str, owner: str, lease_s: float) -> bool:
        with self._pool.connection() as con:
            cur = con.execute(
                "UPDATE investigations SET lease_until=%s WHERE id=%s AND owner=%s AND status='running'",
                (_now() + lease_s, inv_id, owner),
            )
            return cur.rowcount == 1

    def release_all(self) -> int:
        """Nothing to do: other processes may be running investigations; lapsed leases are runnable."""
        return 0

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
        with self._pool.connection() as con:  # one transaction: committed when the block ends
            cur = con.execute(
                "UPDATE investigations SET status=%s, report=COALESCE(%s, report), verdict=COALESCE(%s, verdict),"
                " component=COALESCE(%s, component), confidence=COALESCE(%s, confidence),"
                " report_status=COALESCE(%s, report_status), finished_at=%s, updated_at=%s, owner=NULL,"
                " lease_until=NULL, error=%s WHERE id=%s AND owner=%s AND status='running'",
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
        with self._pool.connection() as con:
            con.execute(
                "UPDATE investigations SET report=%s, status=%s, updated_at=%s WHERE id=%s",
                (json.dumps(report), status, _now(), inv_id),
            )

    # -- events ----------------------------------------------------------------------------
    @staticmethod
    def _event(con: Any, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        con.execute(
            "INSERT INTO events(investigation, key, time, kind, data) VALUES (%s,%s,%s,%s,%s)"
            " ON CONFLICT (investigation, key) DO NOTHING",
            (inv_id, key, _now(), kind, json.dumps(data)),
        )

    def add_event(self, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        with self._pool.connection() as con:
            self._event(con, inv_id, key, kind, data)

    def events_after(self, inv_id: str, after: int) -> list[dict[str, Any]]:
        rows = self._q(
            "SELECT id, time, kind, data FROM events WHERE investigation=%s AND id>%s ORDER BY id",
            (inv_id, after),
        )
        for r in rows:
            r["data"] = json.loads(r["data"])
        return rows

    # -- reading ---------------------------------------------------------------------------
    @staticmethod
    def _decode(r: dict[str, Any]) -> dict[str, Any]:
        r.pop("seq", None)  # insertion order, for ties in created_at (SQLite's rowid); not part of the record
        r["hosts"] = json.loads(r["hosts"])
        r["gpus"] = json.loads(r["gpus"])
        r["report"] = json.loads(r["report"]) if r.get("report") else None
        return r

    def investigation(self, inv_id: str) -> dict[str, Any] | None:
        rows = self._q("SELECT * FROM investigations WHERE id=%s", (inv_id,))
        return self._decode(rows[0]) if rows else None

    def investigations(
        self,
        *,
        status: str | None = None,
        job: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        q, args = "SELECT * FROM investigations WHERE true", []
        for clause, value in (
            ("status=%s", status),
            ("job=%s", job),
            ("last_at>=%s", since),
            ("first_at<=%s", until),
        ):
            if value is not None:
                q += f" AND {clause}"
                args.append(value)
        return [
            self._decode(r)
            for r in self._q(q + " ORDER BY created_at DESC, seq DESC LIMIT %s", (*args, limit))
        ]

    def alerts_of(self, inv_id: str) -> list[dict[str, Any]]:
        rows = self._q(
            "SELECT * FROM alerts WHERE investigation_id=%s ORDER BY starts_at, fingerprint LIMIT 1000",
            (inv_id,),
        )
        for r in rows:
            r["labels"] = json.loads(r["labels"])
            r["annotations"] = json.loads(r["annotations"])
        return rows

    def alert_fingerprints(self) -> set[str]:
        return {r["fingerprint"] for r in self._q("SELECT fingerprint FROM alerts")}

    # -- audit -----------------------------------------------------------------------------
    def audit(self, entry: dict[str, Any]) -> None:
        with self._pool.connection() as con:
            con.execute(
                "INSERT INTO audit(time, actor, action, investigation, proposal, content_hash, outcome, reason,"
                " detail) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
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
            q, args = q + " WHERE investigation=%s", [investigation]
        rows = self._q(q + " ORDER BY id DESC LIMIT %s", (*args, limit))
        for r in rows:
            r["detail"] = json.loads(r["detail"])
        return rows

    # -- notifications ---------------------------------------------------------------------
    def enqueue_notifications(self, inv_id: str, urls: list[str], payload: dict[str, Any]) -> None:
        with self._tx() as con:
            for url in urls:
                con.execute(
                    "INSERT INTO notifications(investigation, url, payload, state, next_at) VALUES (%s,%s,%s,%s,%s)"
                    " ON CONFLICT (investigation, url) DO NOTHING",
                    (inv_id, url, json.dumps(payload), "pending", _now()),
                )

    def due_notifications(self, now: float, *, lease_s: float = 60.0) -> list[dict[str, Any]]:
        """Due notifications, each taken by one API process: its ``next_at`` moves ``lease_s`` on.

        Several processes run a notifier; ``FOR UPDATE SKIP LOCKED`` and the moved ``next_at``
        give each attempt to one of them (:meth:`notification_result` then sets the real next time).
        A process that dies mid-send leaves the notification due again after ``lease_s``.
        """
        return self._q(
            "UPDATE notifications SET next_at=%s WHERE id IN (SELECT id FROM notifications WHERE"
            " state='pending' AND next_at<=%s ORDER BY next_at LIMIT 50 FOR UPDATE SKIP LOCKED)"
            " RETURNING *",
            (now + lease_s, now),
        )

    def notification_result(self, nid: int, *, ok: bool, error: str | None, next_at: float | None) -> None:
        state = "sent" if ok else ("pending" if next_at is not None else "failed")
        with self._pool.connection() as con:
            con.execute(
                "UPDATE notifications SET state=%s, attempts=attempts+1, next_at=COALESCE(%s, next_at),"
                " last_error=%s WHERE id=%s",
                (state, next_at, error, nid),
            )

    def notifications(self) -> list[dict[str, Any]]:
        return self._q(
            "SELECT id, investigation, url, state, attempts, last_error FROM notifications ORDER BY id"
        )

    # -- metrics ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        return {
            r["status"]: r["n"]
            for r in self._q("SELECT status, COUNT(*) AS n FROM investigations GROUP BY status")
        }
