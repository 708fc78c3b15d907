"""Service state: one store on SQLAlchemy Core, for a SQLite file or a PostgreSQL database.

The schema is the Alembic revisions' (:mod:`~forensic.harness.service.schema`), applied when a
store opens its database; the tables below only name the columns the queries use. What differs
between the two databases is who may run at once, and that is all that differs here:

- SQLite serves one process (``forensic serve`` holds ``<db>.lock``). Every write transaction
  begins with ``BEGIN IMMEDIATE``, so writers take the file's lock before they read; WAL with
  ``synchronous=FULL`` puts every write that precedes a 2xx on disk before the response is sent.
- PostgreSQL serves several API and worker processes. An intake batch takes transaction-scoped
  advisory locks on the keys its alerts could group by (job, each host) and on their
  fingerprints, in one sorted order, so two processes never both open an investigation for one
  fault nor insert one alert twice. A claim is ``SELECT ... FOR UPDATE SKIP LOCKED`` on runnable
  investigations, with a per-job advisory lock around the per-job cap; a worker killed with
  ``kill -9`` stops renewing its lease and another resumes the investigation from its checkpoint.

The audit table is append-only on both (triggers refuse UPDATE and DELETE) and a hash chain
(:meth:`SqlStore.audit`, :meth:`SqlStore.verify_audit`). The LangGraph
checkpoints live in the same database, in their own tables.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa
from forensic.harness.audit import GENESIS, AuditError
from forensic.harness.service.intake import IntakeResult, Payload, group_key_matches, supersedes
from forensic.harness.service.schema import engine, is_postgres_url, migrate
from forensic.harness.service.signals import CHANNEL
from forensic.sandbox import ForensicError

#: Investigation statuses. ``unmapped``: no evidence source matches its alerts.
STATUSES = ("queued", "running", "awaiting_approval", "concluded", "failed", "unmapped")
ACTIVE = ("queued", "running", "awaiting_approval")
_GROUPABLE = ("queued", "running", "awaiting_approval", "concluded", "unmapped")


class DatabaseError(ForensicError):
    """The database cannot be reached or used (one line saying why)."""


class Store(Protocol):
    """What the service needs from its storage."""

    def ingest(
        self, batch: list[tuple[str, str, Payload]], *, window_s: float, resolve_bundle: Any
    ) -> list[IntakeResult]: ...
    def dead_letter(
        self, user: str | None, status: int, reason: str, body: bytes, *, keep: int, keep_s: float
    ) -> None: ...
    def dead_letters(self, limit: int = 100, before: int | None = None) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...
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
    def decision_lock(self, inv_id: str) -> Any: ...


# -- the columns the queries name (the schema itself is the migrations') -----------------------
_md = sa.MetaData()
_webhooks = sa.Table(
    "webhooks",
    _md,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("received_at", sa.Float),
    sa.Column("user", sa.Text),
    sa.Column("body", sa.Text),
)
_alerts = sa.Table(
    "alerts",
    _md,
    sa.Column("fingerprint", sa.Text, primary_key=True),
    *(sa.Column(c, sa.Text) for c in ("status", "alertname", "labels", "annotations")),
    sa.Column("starts_at", sa.Float),
    sa.Column("ends_at", sa.Float),
    sa.Column("generator_url", sa.Text),
    sa.Column("investigation_id", sa.Text),
    sa.Column("received_at", sa.Float),
    sa.Column("updated_at", sa.Float),
    sa.Column("receipts", sa.Integer),
)
_dead = sa.Table(
    "dead_letters",
    _md,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("received_at", sa.Float),
    sa.Column("user", sa.Text),
    sa.Column("status", sa.Integer),
    sa.Column("reason", sa.Text),
    sa.Column("body", sa.LargeBinary),
)
_inv = sa.Table(
    "investigations",
    _md,
    sa.Column("id", sa.Text, primary_key=True),
    *(sa.Column(c, sa.Text) for c in ("job", "hosts", "gpus")),
    sa.Column("first_at", sa.Float),
    sa.Column("last_at", sa.Float),
    *(sa.Column(c, sa.Text) for c in ("status", "bundle", "thread_id")),
    *(sa.Column(c, sa.Float) for c in ("created_at", "updated_at", "started_at", "finished_at")),
    *(sa.Column(c, sa.Text) for c in ("report", "verdict", "component")),
    sa.Column("confidence", sa.Float),
    sa.Column("report_status", sa.Text),
    sa.Column("alert_count", sa.Integer),
    sa.Column("resolved_count", sa.Integer),
    sa.Column("owner", sa.Text),
    sa.Column("lease_until", sa.Float),
    sa.Column("runs", sa.Integer),
    sa.Column("error", sa.Text),
)
_events = sa.Table(
    "events",
    _md,
    sa.Column("id", sa.BigInteger, primary_key=True),
    *(sa.Column(c, sa.Text) for c in ("investigation", "key")),
    sa.Column("time", sa.Float),
    *(sa.Column(c, sa.Text) for c in ("kind", "data")),
)
_audit = sa.Table(
    "audit",
    _md,
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("time", sa.Float),
    *(
        sa.Column(c, sa.Text)
        for c in (
            "actor",
            "action",
            "investigation",
            "proposal",
            "content_hash",
            "outcome",
            "reason",
            "detail",
            "prev_hash",
            "hash",
        )
    ),
)
_notes = sa.Table(
    "notifications",
    _md,
    sa.Column("id", sa.BigInteger, primary_key=True),
    *(sa.Column(c, sa.Text) for c in ("investigation", "url", "payload", "state")),
    sa.Column("attempts", sa.Integer),
    sa.Column("next_at", sa.Float),
    sa.Column("last_error", sa.Text),
)


def _now() -> float:
    return time.time()


def _key(text: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``text``."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def _one_line(what: str, exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    return f"{what}: {' '.join(str(inner).split())[:300] or type(inner).__name__}"


def connect_check(conninfo: str) -> None:
    """Raise :class:`DatabaseError` with one line if the PostgreSQL ``conninfo`` is unusable."""
    import psycopg

    try:
        psycopg.connect(conninfo, connect_timeout=10).close()
    except psycopg.Error as exc:
        raise DatabaseError(f"cannot connect to PostgreSQL: {' '.join(str(exc).split())[:300]}") from None


class SqlStore:
    """:class:`Store` on a SQLite file or a PostgreSQL database (``postgresql://`` URL)."""

    def __init__(self, db: str | Path, *, max_size: int = 8) -> None:
        from forensic.harness.service.schema import MigrationError

        self.postgres = is_postgres_url(db)
        self.db = str(db) if self.postgres else Path(db)
        if self.postgres:
            connect_check(str(db))
        try:
            migrate(self.db)
        except MigrationError as exc:
            raise DatabaseError(str(exc)) from None
        self._w = engine(self.db, pool_size=max_size)
        # SQLite readers begin deferred (WAL: they never wait for the writer); PostgreSQL's are the same pool.
        self._r = self._w if self.postgres else engine(self.db, pool_size=max_size, immediate=False)
        # SQLite has one writer at a time anyway: queue this process's writers here rather than in
        # SQLite's busy-wait.
        self._wlock: Any = nullcontext() if self.postgres else threading.Lock()
        self._insert: Any
        if self.postgres:
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            self._insert = pg_insert
        else:
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            self._insert = sqlite_insert
        #: Called with the ids of investigations whose events or status a committed transaction changed.
        self.on_change: list[Any] = []
        # Ties in created_at in insertion order: PostgreSQL's seq column, SQLite's rowid.
        self._seq: sa.ColumnClause[Any] = sa.literal_column(
            "investigations.seq" if self.postgres else "investigations.rowid"
        )
        self._sql = self._intake_statements()
        self._locks: Any = None

    def _intake_statements(self) -> dict[str, Any]:
        """The intake's statements, built once: the hot path only binds values (and hits
        SQLAlchemy's compiled cache) instead of building expressions per webhook."""
        b = sa.bindparam
        c = _inv.c
        cands = sa.select(c.id, c.job, c.hosts, c.gpus, c.first_at, c.last_at, c.alert_count).where(
            c.last_at >= b("lo"), c.first_at <= b("hi"), c.status.in_(_GROUPABLE)
        )
        if self.postgres:  # the sharing test in SQL, on the jsonb of the hosts
            from sqlalchemy.dialects.postgresql import ARRAY, JSONB

            cands = cands.where(
                sa.or_(
                    c.job == sa.func.any(b("jobs", type_=ARRAY(sa.Text))),
                    sa.cast(c.hosts, JSONB).has_any(b("hosts", type_=ARRAY(sa.Text))),
                )
            )
        by_fp = _alerts.c.fingerprint == b("_fp")
        return {
            "webhook": sa.insert(_webhooks),
            "known": sa.select(
                _alerts.c.fingerprint,
                _alerts.c.investigation_id,
                _alerts.c.status,
                _alerts.c.starts_at,
                _alerts.c.ends_at,
            ).where(_alerts.c.fingerprint.in_(b("fps", expanding=True))),
            "cands": cands.order_by(c.created_at, self._seq),
            "new_inv": sa.insert(_inv),
            "grown": sa.update(_inv)
            .where(c.id == b("_id"))
            .values(
                hosts=b("_hosts"),
                gpus=b("_gpus"),
                job=b("_job"),
                first_at=b("_first"),
                last_at=b("_last"),
                alert_count=c.alert_count + b("_added"),
                updated_at=b("_now"),
            ),
            "resolved": sa.update(_inv)
            .where(c.id == b("_id"))
            .values(resolved_count=c.resolved_count + b("_n"), updated_at=b("_now")),
            "new_alert": sa.insert(_alerts),
            "alert": sa.update(_alerts)
            .where(by_fp)
            .values(
                status=b("_status"),
                starts_at=b("_starts"),
                ends_at=b("_ends"),
                labels=b("_labels"),
                annotations=b("_annotations"),
                receipts=_alerts.c.receipts + 1,
                updated_at=b("_now"),
            ),
            "stale": sa.update(_alerts)
            .where(by_fp)
            .values(receipts=_alerts.c.receipts + 1, updated_at=b("_now")),
            "events": self._insert(_events).on_conflict_do_nothing(index_elements=["investigation", "key"]),
        }

    def close(self) -> None:
        self._w.dispose()
        if self._r is not self._w:
            self._r.dispose()
        if self._locks is not None:
            self._locks.dispose()

    @contextmanager
    def _tx(self) -> Iterator[sa.Connection]:
        with self._wlock, self._w.begin() as con:
            yield con

    def _q(self, stmt: Any, *args: Any) -> list[dict[str, Any]]:
        with self._r.connect() as con:
            return [dict(r) for r in con.execute(stmt, *args).mappings()]

    def _changing(self, con: sa.Connection, inv_ids: Sequence[str]) -> None:
        """Inside the transaction: on PostgreSQL, NOTIFY the other processes' streams at commit."""
        if self.postgres and inv_ids:
            con.execute(
                sa.text("SELECT pg_notify(:ch, i) FROM unnest(CAST(:ids AS text[])) AS i"),
                {"ch": CHANNEL, "ids": sorted(set(inv_ids))},
            )

    def _changed(self, inv_ids: Sequence[str]) -> None:
        """After the commit: wake this process's streams."""
        for hook in self.on_change:
            hook(inv_ids)

    def _advisory(self, con: sa.Connection, keys: Sequence[int]) -> None:
        """PostgreSQL: transaction-scoped advisory locks, in one order for everyone (no deadlocks).
        SQLite: nothing; the transaction already holds the file's write lock."""
        if self.postgres and keys:
            con.execute(
                sa.text(
                    "SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k ORDER BY k"
                ),
                {"keys": sorted(keys)},
            )

    # -- intake ----------------------------------------------------------------------------
    def ingest(
        self, batch: list[tuple[str, str, Payload]], *, window_s: float, resolve_bundle: Any
    ) -> list[IntakeResult]:
        """Store a batch of accepted webhooks in one transaction (one fsync for the batch).

        Two reads (the known alerts, the candidate investigations) and one batch of writes; the
        locks (advisory on PostgreSQL, the write lock on SQLite) keep the reads valid until commit.
        """
        keys: set[int] = set()
        alerts = [a for _, _, p in batch for a in p.alerts]
        jobs: set[str] = set()
        hosts: set[str] = set()
        for a in alerts:
            keys.add(_key("fp:" + a.fingerprint_))
            if a.job:
                jobs.add(a.job)
                keys.add(_key("job:" + a.job))
            hosts.update(a.hosts)
        keys.update(_key("host:" + h) for h in hosts)
        now = _now()
        with self._tx() as con:
            con.execute(
                self._sql["webhook"], [{"received_at": now, "user": u, "body": b} for u, b, _ in batch]
            )
            self._advisory(con, list(keys))
            results, changed = self._ingest_batch(
                con, batch, alerts, now, window_s, resolve_bundle, jobs, hosts
            )
            self._changing(con, changed)
        self._changed(changed)
        return results

    def _ingest_batch(
        self,
        con: sa.Connection,
        batch: list[tuple[str, str, Payload]],
        alerts: list[Any],
        now: float,
        window_s: float,
        resolve_bundle: Any,
        jobs: set[str],
        hosts: set[str],
    ) -> tuple[list[IntakeResult], list[str]]:
        """Each webhook's alerts, in order, decided in memory from the two reads; and the
        investigations that got events.

        The candidate investigations are only those that share a job or a host with the batch:
        an investigation sharing neither can take none of its alerts (nor grow to share one).
        """
        times = [a.starts_unix if a.starts_unix is not None else now for a in alerts]
        sql = self._sql
        known = {
            r["fingerprint"]: dict(r)
            for r in con.execute(sql["known"], {"fps": [a.fingerprint_ for a in alerts]}).mappings()
        }
        bounds = {"lo": min(times, default=now) - window_s, "hi": max(times, default=now) + window_s}
        if self.postgres:
            bounds.update(jobs=sorted(jobs), hosts=sorted(hosts))
        cands: list[dict[str, Any]] = []
        for r in con.execute(sql["cands"], bounds).mappings():
            c = {
                **r,
                "hosts": json.loads(r["hosts"]),
                "gpus": json.loads(r["gpus"]),
                "new": False,
                "added": 0,
            }
            if (c["job"] is not None and c["job"] in jobs) or hosts.intersection(c["hosts"]):
                cands.append(c)
        alert_rows: list[dict[str, Any]] = []
        alert_updates: list[dict[str, Any]] = []
        stale: list[dict[str, Any]] = []
        resolved: dict[str, int] = {}  # investigation -> change in alerts resolved now
        events: list[dict[str, Any]] = []

        def event(inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
            events.append(
                {"investigation": inv_id, "key": key, "time": now, "kind": kind, "data": json.dumps(data)}
            )

        results: list[IntakeResult] = []
        for _, _, payload in batch:
            res = IntakeResult()
            for a in payload.alerts:
                fp = a.fingerprint_
                old = known.get(fp)
                if old is not None:
                    inv_id = old["investigation_id"]
                    res.duplicates += 1
                    if not supersedes(a, old["status"], old["starts_at"], old["ends_at"]):
                        stale.append({"_fp": fp})  # a late delivery: counted, not applied
                    else:
                        alert_updates.append(
                            {
                                "_fp": fp,
                                "_status": a.status,
                                "_starts": a.starts_unix,
                                "_ends": a.ends_unix,
                                "_labels": json.dumps(a.labels),
                                "_annotations": json.dumps(a.annotations),
                            }
                        )
                        # resolved_count: alerts of the investigation resolved now (a re-fire takes one back).
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
                    # The first alerts show in the activity stream; a storm does not flood it (all are in alerts).
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
                    {
                        "fingerprint": fp,
                        "status": a.status,
                        "alertname": a.alertname,
                        "labels": json.dumps(a.labels),
                        "annotations": json.dumps(a.annotations),
                        "starts_at": a.starts_unix,
                        "ends_at": a.ends_unix,
                        "generator_url": a.generatorURL,
                        "investigation_id": inv["id"],
                        "received_at": now,
                        "updated_at": now,
                        "receipts": 1,
                    }
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
        self._write_batch(con, now, cands, resolved, alert_rows, alert_updates, stale, events)
        return results, sorted({e["investigation"] for e in events})

    def _write_batch(
        self,
        con: sa.Connection,
        now: float,
        cands: list[dict[str, Any]],
        resolved: dict[str, int],
        alert_rows: list[dict[str, Any]],
        alert_updates: list[dict[str, Any]],
        stale: list[dict[str, Any]],
        events: list[dict[str, Any]],
    ) -> None:
        new_invs = [
            {
                "id": c["id"],
                "job": c["job"],
                "hosts": json.dumps(c["hosts"]),
                "gpus": json.dumps(c["gpus"]),
                "first_at": c["first_at"],
                "last_at": c["last_at"],
                "status": c["status"],
                "bundle": c["bundle"],
                "thread_id": c["id"],
                "created_at": now,
                "updated_at": now,
                "alert_count": c["alert_count"],
                "resolved_count": 0,
                "runs": 0,
            }
            for c in cands
            if c["new"]
        ]
        sql = self._sql
        if new_invs:
            con.execute(sql["new_inv"], new_invs)
        grown = [
            {
                "_id": c["id"],
                "_hosts": json.dumps(c["hosts"]),
                "_gpus": json.dumps(c["gpus"]),
                "_job": c["job"],
                "_first": c["first_at"],
                "_last": c["last_at"],
                "_added": c["added"],
                "_now": now,
            }
            for c in cands
            if not c["new"] and c["added"]
        ]
        if grown:
            con.execute(sql["grown"], grown)
        if any(resolved.values()):
            con.execute(sql["resolved"], [{"_id": i, "_n": n, "_now": now} for i, n in resolved.items() if n])
        if alert_rows:
            con.execute(sql["new_alert"], alert_rows)
        if alert_updates:
            con.execute(sql["alert"], [{**u, "_now": now} for u in alert_updates])
        if stale:
            con.execute(sql["stale"], [{**u, "_now": now} for u in stale])
        if events:
            # A node re-run after a crash emits the same key again: kept once.
            con.execute(sql["events"], events)

    def dead_letter(
        self, user: str | None, status: int, reason: str, body: bytes, *, keep: int, keep_s: float
    ) -> None:
        """Keep a refused body; in the same transaction, delete all but the newest ``keep`` and any older than ``keep_s``."""
        now = _now()
        with self._tx() as con:
            con.execute(
                sa.insert(_dead).values(
                    received_at=now, user=user, status=status, reason=reason[:2000], body=body
                )
            )
            newest = sa.select(_dead.c.id).order_by(_dead.c.id.desc()).limit(1).offset(keep).scalar_subquery()
            con.execute(
                sa.delete(_dead).where(sa.or_(_dead.c.received_at < now - keep_s, _dead.c.id <= newest))
            )

    def dead_letters(self, limit: int = 100, before: int | None = None) -> list[dict[str, Any]]:
        """Newest first; ``before``: only those with a smaller id (the cursor of the next page)."""
        return self._q(
            sa.select(
                _dead.c.id,
                _dead.c.received_at,
                _dead.c.user,
                _dead.c.status,
                _dead.c.reason,
                sa.func.length(_dead.c.body).label("bytes"),
            )
            .where(_dead.c.id < (before if before is not None else 1 << 62))
            .order_by(_dead.c.id.desc())
            .limit(limit)
        )

    def dead_letter_count(self) -> int:
        return self._q(sa.select(sa.func.count().label("n")).select_from(_dead))[0]["n"]

    # -- workers ---------------------------------------------------------------------------
    def claim(self, owner: str, *, lease_s: float, per_job: int) -> dict[str, Any] | None:
        """Take the oldest runnable investigation whose job is under its cap; None if there is none.

        Runnable: queued, or running under a lease that has run out (its worker died). The
        claim and the lease are one transaction, so no two workers ever hold one investigation.
        """
        now = _now()
        j = _inv.alias("j")
        busy = (
            sa.select(sa.func.count())
            .where(
                j.c.job == _inv.c.job, j.c.status == "running", j.c.lease_until >= now, j.c.id != _inv.c.id
            )
            .scalar_subquery()
        )
        q = (
            sa.select(_inv)
            .where(
                sa.or_(
                    _inv.c.status == "queued", sa.and_(_inv.c.status == "running", _inv.c.lease_until < now)
                ),
                sa.or_(_inv.c.job.is_(None), busy < per_job),
            )
            .order_by(_inv.c.created_at, self._seq)
            .limit(16)
            .with_for_update(skip_locked=True, of=_inv)
        )
        with self._tx() as con:
            for row in con.execute(q).mappings().all():
                if row["job"] is not None and self.postgres:
                    # Two workers claiming two investigations of one job at once: the second waits, then counts.
                    self._advisory(con, [_key("claim-job:" + row["job"])])
                    n = con.execute(_count_busy(row, now)).scalar() or 0
                    if n >= per_job:
                        continue
                con.execute(
                    sa.update(_inv)
                    .where(_inv.c.id == row["id"])
                    .values(
                        status="running",
                        owner=owner,
                        lease_until=now + lease_s,
                        runs=_inv.c.runs + 1,
                        started_at=sa.func.coalesce(_inv.c.started_at, now),
                        updated_at=now,
                    )
                )
                out = dict(row)
                out["runs"] += 1
                return out
        return None

    def renew(self, inv_id: str, owner: str, lease_s: float) -> bool:
        with self._tx() as con:
            return (
                con.execute(
                    sa.update(_inv)
                    .where(_inv.c.id == inv_id, _inv.c.owner == owner, _inv.c.status == "running")
                    .values(lease_until=_now() + lease_s)
                ).rowcount
                == 1
            )

    def release_all(self) -> int:
        """At start-up of the only process on a SQLite file: runs of a killed process are runnable again.

        On PostgreSQL other processes may be running investigations: nothing to do (lapsed leases
        are runnable anyway)."""
        if self.postgres:
            return 0
        with self._tx() as con:
            return con.execute(
                sa.update(_inv)
                .where(_inv.c.status == "running")
                .values(status="queued", owner=None, lease_until=None)
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
        c = _inv.c
        with self._tx() as con:
            cur = con.execute(
                sa.update(_inv)
                .where(c.id == inv_id, c.owner == owner, c.status == "running")
                .values(
                    status=status,
                    report=sa.func.coalesce(json.dumps(report) if report else None, c.report),
                    verdict=sa.func.coalesce(v.get("root_cause"), c.verdict),
                    component=sa.func.coalesce(v.get("component"), c.component),
                    confidence=sa.func.coalesce(sa.cast(v.get("confidence"), sa.Float), c.confidence),
                    report_status=sa.func.coalesce((report or {}).get("status"), c.report_status),
                    finished_at=now,
                    updated_at=now,
                    owner=None,
                    lease_until=None,
                    error=error,
                )
            )
            if cur.rowcount != 1:
                return False
            for key, kind, data in events:
                self._event(con, inv_id, key, kind, data)
            self._changing(con, [inv_id])
        self._changed([inv_id])
        return True

    def set_report(self, inv_id: str, report: dict[str, Any], status: str) -> None:
        with self._tx() as con:
            con.execute(
                sa.update(_inv)
                .where(_inv.c.id == inv_id)
                .values(report=json.dumps(report), status=status, updated_at=_now())
            )
            self._changing(con, [inv_id])
        self._changed([inv_id])

    # -- decisions -------------------------------------------------------------------------
    @contextmanager
    def decision_lock(self, inv_id: str) -> Iterator[None]:
        """Hold the right to decide on ``inv_id`` across every process on this database.

        PostgreSQL: a transaction-scoped advisory lock on a connection of its own, held until the
        block ends (the decision's writes go through other connections, so a row lock on the
        investigation would wait on itself). SQLite: an exclusive ``flock`` on ``<db>-decisions.lock``;
        the file's own write lock cannot be held across a decision, whose checkpoint writes go
        through the checkpointer's connection to the same file. Both are released by the database
        or the kernel when the holding process dies.
        """
        if self.postgres:
            with self._lock_engine().connect() as con:
                con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _key("decide:" + inv_id)})
                try:
                    yield
                finally:
                    con.rollback()
            return
        assert isinstance(self.db, Path)
        fd = os.open(self.db.with_name(self.db.name + "-decisions.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a descriptor of its own: threads of one process wait too
            yield
        finally:
            os.close(fd)

    def _lock_engine(self) -> Any:
        if self._locks is None:
            self._locks = engine(self.db)  # unpooled: a held lock never starves the store's pool
        return self._locks

    # -- events ----------------------------------------------------------------------------
    def _event(self, con: sa.Connection, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        # A node re-run after a crash emits the same key again: kept once.
        con.execute(
            self._insert(_events)
            .values(investigation=inv_id, key=key, time=_now(), kind=kind, data=json.dumps(data))
            .on_conflict_do_nothing(index_elements=["investigation", "key"])
        )

    def add_event(self, inv_id: str, key: str, kind: str, data: dict[str, Any]) -> None:
        with self._tx() as con:
            self._event(con, inv_id, key, kind, data)
            self._changing(con, [inv_id])
        self._changed([inv_id])

    def events_after(self, inv_id: str, after: int) -> list[dict[str, Any]]:
        rows = self._q(
            sa.select(_events.c.id, _events.c.time, _events.c.kind, _events.c.data)
            .where(_events.c.investigation == inv_id, _events.c.id > after)
            .order_by(_events.c.id)
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
        rows = self._q(sa.select(_inv).where(_inv.c.id == inv_id))
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
        q = sa.select(_inv)
        if status is not None:
            q = q.where(_inv.c.status == status)
        if job is not None:
            q = q.where(_inv.c.job == job)
        if since is not None:
            q = q.where(_inv.c.last_at >= since)
        if until is not None:
            q = q.where(_inv.c.first_at <= until)
        q = q.order_by(_inv.c.created_at.desc(), self._seq.desc()).limit(limit)
        return [self._decode(r) for r in self._q(q)]

    def alerts_of(self, inv_id: str) -> list[dict[str, Any]]:
        rows = self._q(
            sa.select(_alerts)
            .where(_alerts.c.investigation_id == inv_id)
            .order_by(_alerts.c.starts_at, _alerts.c.fingerprint)
            .limit(1000)
        )
        for r in rows:
            r["labels"] = json.loads(r["labels"])
            r["annotations"] = json.loads(r["annotations"])
        return rows

    def alert_fingerprints(self) -> set[str]:
        return {r["fingerprint"] for r in self._q(sa.select(_alerts.c.fingerprint))}

    # -- audit -----------------------------------------------------------------------------
    def audit(self, entry: dict[str, Any]) -> None:
        """Append one row to the audit chain: its ``prev_hash`` is the last row's ``hash``.

        Reading the last hash and inserting happen in one transaction that no other writer of the
        chain can interleave with: on PostgreSQL a transaction-scoped advisory lock on a fixed key
        (read committed: the SELECT after the lock sees the previous holder's commit); on SQLite
        the transaction began with ``BEGIN IMMEDIATE`` and holds the file's write lock already.
        The unique index on ``prev_hash`` (0003) refuses a fork should either ever fail.
        """
        row = _audit_row(entry)
        with self._tx() as con:
            self._advisory(con, [_AUDIT_CHAIN_KEY])
            last = con.execute(sa.select(_audit.c.hash).order_by(_audit.c.id.desc()).limit(1)).scalar()
            prev = last or GENESIS  # an empty table, or only rows from before the chain
            con.execute(sa.insert(_audit).values(**row, prev_hash=prev, hash=audit_hash(prev, row)))

    def audit_log(self, *, investigation: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        q = sa.select(_audit)
        if investigation:
            q = q.where(_audit.c.investigation == investigation)
        rows = self._q(q.order_by(_audit.c.id.desc()).limit(limit))
        for r in rows:
            r["detail"] = json.loads(r["detail"])
        return rows

    def verify_audit(self) -> tuple[int, str, int]:
        """(rows, head hash, rows before the chain) of an intact audit chain; :class:`AuditError`
        naming the first broken row's id otherwise."""
        with self._r.connect() as con:
            return _verify_chain(con)

    # -- notifications (an outbox: enqueued with the conclusion, sent by the notifier) -----
    def enqueue_notifications(self, inv_id: str, urls: list[str], payload: dict[str, Any]) -> None:
        if not urls:
            return
        now = _now()
        with self._tx() as con:
            con.execute(
                self._insert(_notes).on_conflict_do_nothing(index_elements=["investigation", "url"]),
                [
                    {
                        "investigation": inv_id,
                        "url": url,
                        "payload": json.dumps(payload),
                        "state": "pending",
                        "attempts": 0,
                        "next_at": now,
                    }
                    for url in urls
                ],
            )

    def due_notifications(self, now: float, *, lease_s: float = 60.0) -> list[dict[str, Any]]:
        """Due notifications, each taken by one notifier: its ``next_at`` moves ``lease_s`` on.

        Several API processes on PostgreSQL run a notifier; ``FOR UPDATE SKIP LOCKED`` and the
        moved ``next_at`` give each attempt to one of them (:meth:`notification_result` then sets
        the real next time). A process that dies mid-send leaves it due again after ``lease_s``.
        """
        with self._tx() as con:
            ids = [
                r[0]
                for r in con.execute(
                    sa.select(_notes.c.id)
                    .where(_notes.c.state == "pending", _notes.c.next_at <= now)
                    .order_by(_notes.c.next_at)
                    .limit(50)
                    .with_for_update(skip_locked=True)
                )
            ]
            if not ids:
                return []
            con.execute(sa.update(_notes).where(_notes.c.id.in_(ids)).values(next_at=now + lease_s))
            return [
                dict(r)
                for r in con.execute(
                    sa.select(_notes).where(_notes.c.id.in_(ids)).order_by(_notes.c.id)
                ).mappings()
            ]

    def notification_result(self, nid: int, *, ok: bool, error: str | None, next_at: float | None) -> None:
        state = "sent" if ok else ("pending" if next_at is not None else "failed")
        with self._tx() as con:
            con.execute(
                sa.update(_notes)
                .where(_notes.c.id == nid)
                .values(
                    state=state,
                    attempts=_notes.c.attempts + 1,
                    next_at=sa.func.coalesce(sa.cast(next_at, sa.Float), _notes.c.next_at),
                    last_error=error,
                )
            )

    def notifications(self) -> list[dict[str, Any]]:
        n = _notes.c
        return self._q(
            sa.select(n.id, n.investigation, n.url, n.state, n.attempts, n.last_error).order_by(n.id)
        )

    # -- metrics ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        rows = self._q(sa.select(_inv.c.status, sa.func.count().label("n")).group_by(_inv.c.status))
        return {r["status"]: r["n"] for r in rows}


def _count_busy(row: Any, now: float) -> Any:
    """Running investigations of ``row``'s job under a live lease, other than ``row`` itself."""
    return (
        sa.select(sa.func.count())
        .select_from(_inv)
        .where(
            _inv.c.job == row["job"],
            _inv.c.status == "running",
            _inv.c.lease_until >= now,
            _inv.c.id != row["id"],
        )
    )


class SqliteStore(SqlStore):
    """The default store: one SQLite file, served by one process."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(Path(path))
        self.path = Path(path)


class PostgresStore(SqlStore):
    """The store on PostgreSQL: many API and worker processes, one database."""

    def __init__(self, conninfo: str, *, max_size: int = 8) -> None:
        if not is_postgres_url(conninfo):
            raise DatabaseError(f"not a postgresql:// URL: {conninfo[:60]!r}")
        super().__init__(conninfo, max_size=max_size)
        self.conninfo = conninfo


def open_store(db: str | Path, *, max_size: int = 8) -> SqlStore:
    """The store on ``db``: a ``postgresql://`` URL, or the path of a SQLite file."""
    return PostgresStore(str(db), max_size=max_size) if is_postgres_url(db) else SqliteStore(db)


# -- the audit chain (module level: ``forensic audit verify --db`` reads it without opening a store) --
#: The advisory-lock key that serialises appends to the audit chain on PostgreSQL.
_AUDIT_CHAIN_KEY = _key("audit-chain")
#: The columns a row's hash covers, in its canonical JSON (not ``id``: the database assigns it at
#: the insert; the links fix the order).
AUDIT_FIELDS = (
    "time",
    "actor",
    "action",
    "investigation",
    "proposal",
    "content_hash",
    "outcome",
    "reason",
    "detail",
)


def _audit_row(entry: dict[str, Any]) -> dict[str, Any]:
    """The row as the database will hand it back, so that the hash computed now is the one
    recomputed from what is read later (a TEXT column returns an int as text, REAL an int as float)."""

    def text(v: Any) -> str | None:
        return None if v is None else str(v)

    return {
        "time": float(entry.get("time", _now())),
        "actor": str(entry["actor"]),
        "action": str(entry["action"]),
        "investigation": text(entry.get("investigation")),
        "proposal": text(entry.get("proposal")),
        "content_hash": text(entry.get("content_hash")),
        "outcome": str(entry["outcome"]),
        "reason": str(entry.get("reason", "")),
        "detail": json.dumps(entry.get("detail") or {}),
    }


def audit_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """SHA-256 of ``prev_hash`` followed by the canonical JSON (sorted keys, no NaN) of the row's
    :data:`AUDIT_FIELDS`, as :mod:`forensic.harness.audit` writes the file log's lines."""
    body = json.dumps({k: row[k] for k in AUDIT_FIELDS}, sort_keys=True, allow_nan=False)
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def _verify_chain(con: sa.Connection) -> tuple[int, str, int]:
    """Walk the audit table in id order, checking each row's hash and its link to the row before."""
    if "hash" not in {c["name"] for c in sa.inspect(con).get_columns("audit")}:
        # A schema before 0003: nothing is chained yet.
        n = con.execute(sa.select(sa.func.count()).select_from(_audit)).scalar() or 0
        return n, GENESIS, n
    rows = before = 0
    prev = GENESIS
    result = con.execution_options(yield_per=1000).execute(sa.select(_audit).order_by(_audit.c.id))
    for r in result.mappings():
        rows += 1
        if r["hash"] is None and r["prev_hash"] is None and rows - 1 == before:
            before += 1  # written before the chain began (revision 0003); nothing vouches for it
            continue
        if r["prev_hash"] != prev:
            raise AuditError(
                f"audit table: the chain breaks at row {r['id']} "
                f"(a row before it was removed, reordered or edited, or this row's link was forged)"
            )
        try:
            ok = r["hash"] == audit_hash(prev, dict(r))
        except ValueError:  # a NaN or infinite time: never written by audit()
            ok = False
        if not ok:
            raise AuditError(f"audit table: the chain breaks at row {r['id']} (this row was edited)")
        prev = r["hash"]
    return rows, prev, before


def verify_audit_db(db: str | Path) -> tuple[int, str, int]:
    """:meth:`SqlStore.verify_audit` on ``db`` read-only: no migration, no file created."""
    if not is_postgres_url(db) and not Path(db).is_file():
        raise AuditError(f"{db}: no such SQLite file")
    eng = engine(db, immediate=False)
    try:
        with eng.connect() as con:
            if not sa.inspect(con).has_table("audit"):
                raise AuditError(f"{'the database' if is_postgres_url(db) else db}: has no audit table")
            return _verify_chain(con)
    except AuditError:
        raise
    except Exception as exc:
        raise AuditError(_one_line("cannot read the audit table", exc)) from None
    finally:
        eng.dispose()
