"""The running service: storage, intake writer, worker pool and notifier, started and stopped together."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path
from typing import Any

from forensic.harness.service.auth import Tokens
from forensic.harness.service.config import ServeConfig, load_tokens
from forensic.harness.service.intake import IntakeResult, IntakeWriter, Payload
from forensic.harness.service.live import (
    UNMAPPED_EVENT,
    LiveSources,
    map_evidence,
    unmapped_reason,
    unmapped_summary,
)
from forensic.harness.service.metrics import Metrics
from forensic.harness.service.notify import Notifier, summary
from forensic.harness.service.signals import PgListener, Signals
from forensic.harness.service.store import SqliteStore, Store
from forensic.harness.service.workers import WorkerPool, sqlite_checkpointer
from forensic.sandbox import ForensicError

log = logging.getLogger("forensic.service")


class DatabaseLocked(ForensicError):
    """Another process serves this SQLite file (one line naming it)."""


_held: dict[str, tuple[int, int]] = {}  # lock path -> (fd, services of this process holding it)
_held_guard = threading.Lock()


def lock_database(db: Path) -> str:
    """Hold ``<db>.lock`` exclusively for this process; :class:`DatabaseLocked` if another holds it.

    SQLite mode assumes one process per file: at start-up it makes the runs of a dead process
    runnable again, which would reset the live runs of a second one. ``flock`` is released by the
    kernel when the process dies, so a crash never leaves the file locked. Services of one process
    share the lock (tests build several on one file). Returns the key for :func:`unlock_database`.
    """
    path = Path(db).resolve()
    key = str(path.with_name(path.name + ".lock"))
    with _held_guard:
        if key in _held:
            fd, n = _held[key]
            _held[key] = (fd, n + 1)
            return key
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise DatabaseLocked(f"{key}: cannot create the database's lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise DatabaseLocked(
                f"{path}: another forensic serve{who} is using this database; stop it first, or give "
                "this one its own database (several processes share PostgreSQL: docs/scaling.md)"
            ) from None
        except OSError as exc:  # a file system without flock: refuse rather than risk two writers
            os.close(fd)
            raise DatabaseLocked(f"{key}: cannot lock the database ({exc.strerror})") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        _held[key] = (fd, 1)
        return key


def unlock_database(key: str) -> None:
    with _held_guard:
        fd, n = _held.pop(key, (-1, 0))
        if n > 1:
            _held[key] = (fd, n - 1)
        elif fd >= 0:
            os.close(fd)  # closing the only descriptor releases the flock


class Service:
    def __init__(self, cfg: ServeConfig, *, db: str | None = None) -> None:
        """``db``: a ``postgresql://`` URL (several processes, docs/scaling.md); else ``cfg.database`` (SQLite)."""
        self.cfg = cfg
        self.tokens = Tokens(load_tokens(cfg), cfg.users)
        self._lock: str | None = None
        self.store: Store
        if db:
            from forensic.harness.service.store import PostgresStore
            from forensic.harness.service.workers import postgres_checkpointer

            self.store = PostgresStore(db)
            self.saver = postgres_checkpointer(db)
        else:
            self._lock = lock_database(cfg.database)  # before anything reads or writes the file
            self.store = SqliteStore(cfg.database)
            self.saver = sqlite_checkpointer(cfg.database)
        # The live event streams wake when the store says an investigation changed (docs/service.md).
        self.signals = Signals()
        self.store.on_change.append(self.signals.changed)
        self._listener = PgListener(db, self.signals) if db else None
        self.metrics = Metrics(self.store)
        self.live = LiveSources(cfg, self.store)
        self.notifier = Notifier(
            self.store, timeout_s=cfg.notify.timeout_s, max_attempts=cfg.notify.max_attempts
        )
        self.pool = WorkerPool(
            self.store,
            checkpointer=self.saver,
            limits=cfg.budgets,
            count=cfg.workers.count,
            per_job=cfg.workers.per_job,
            lease_s=cfg.workers.lease_s,
            step_pause_s=cfg.workers.step_pause_s,
            on_finish=self._finished,
            on_tool=lambda tool, status: self.metrics.tool_calls.labels(tool, status).inc(),
            where=self.live.where,
            keep=self.live.keep,
        )
        self.writer: IntakeWriter | None = None
        self.watcher: Any = None
        if cfg.watch is not None:
            self.watcher = self._make_watcher(cfg)
        self._db = db
        self._ledger: Any = None

    def ledger(self) -> Any:
        """The execution ledger of this store, in the same database as the checkpoints (made on first use).

        Shared with every other process on that database (API replicas) and with
        ``forensic execute --checkpoint`` on the same SQLite file: a proposal runs once per store.
        """
        if self._ledger is None:
            from forensic.harness.executors import PostgresLedger, SqliteLedger

            self._ledger = PostgresLedger(self._db) if self._db else SqliteLedger(self.cfg.database)
        return self._ledger

    # -- evidence mapping ------------------------------------------------------------------
    def resolve_bundle(self, job: str | None, hosts: list[str]) -> Path | str | None:
        """A matching recorded bundle, else the live fleet when the alert names a job (live.map_evidence)."""
        return map_evidence(self.cfg, job, hosts)

    def _ingest(self, batch: list[tuple[str, str, Payload]]) -> list[IntakeResult]:
        results = self.store.ingest(
            batch, window_s=self.cfg.grouping.window_s, resolve_bundle=self.resolve_bundle
        )
        for r in results:
            self.metrics.alerts_received.inc(r.accepted + r.duplicates)
            self.metrics.alerts_grouped.inc(r.grouped)
            self.metrics.alerts_duplicate.inc(r.duplicates)
            self.metrics.investigations_opened.inc(len(r.opened))
        if any(r.opened for r in results):
            self.pool.wake()
            self._say_unmapped([i for r in results for i in r.opened])
        return results

    def _say_unmapped(self, opened: list[str]) -> None:
        """An investigation that will not run says why, on its page and to the receivers."""
        for inv_id in opened:
            inv = self.store.investigation(inv_id)
            if inv is None or inv["status"] != "unmapped":
                continue
            reason = unmapped_reason(self.cfg, inv.get("job"), inv.get("hosts") or [])
            self.store.add_event(inv_id, "unmapped", UNMAPPED_EVENT, {"reason": reason})
            log.warning("%s not investigated: %s", inv_id, reason)
            if self.cfg.notify.slack_webhooks:
                self.store.enqueue_notifications(
                    inv_id, self.cfg.notify.slack_webhooks, unmapped_summary(inv, reason, self.cfg.public_url)
                )
                self.notifier.wake()

    def _finished(self, inv: dict[str, Any] | None, report: dict[str, Any] | None, seconds: float) -> None:
        self.metrics.duration.observe(seconds)
        if inv is None or report is None or not self.cfg.notify.slack_webhooks:
            return
        self.store.enqueue_notifications(
            inv["id"], self.cfg.notify.slack_webhooks, summary(inv, report, self.cfg.public_url)
        )
        self.notifier.wake()

    # -- watch -----------------------------------------------------------------------------
    def _make_watcher(self, cfg: ServeConfig) -> Any:
        from forensic.harness.watch import FileStateStore, WatchedJob, Watcher, jobs_in

        w = cfg.watch
        assert w is not None and w.state_dir is not None
        fixed = [WatchedJob(j.name, j.dir) for j in w.jobs]
        if w.prometheus is not None:
            named = {j.name for j in fixed}
            fixed += [
                WatchedJob(name, prometheus=q)
                for name, q in zip(w.prometheus.jobs, w.prometheus.queries(), strict=True)
                if name not in named
            ]

        def jobs() -> list[WatchedJob]:
            named = {j.name for j in fixed}
            found = [j for j in jobs_in(w.jobs_dir) if j.name not in named] if w.jobs_dir else []
            named |= {j.name for j in found}
            return fixed + found + [j for j in jobs_in(self.pushed_dir()) if j.name not in named]

        return Watcher(
            jobs,
            self._watch_sink,
            FileStateStore(w.state_dir),
            w.detector_config(),
            job_label=cfg.grouping.job_labels[0],
            poll_s=w.poll_s,
        )

    def pushed_dir(self) -> Path:
        """Where steps pushed over HTTP are kept as step files (harness/watch/pushed.py)."""
        assert self.cfg.watch is not None and self.cfg.watch.state_dir is not None
        return self.cfg.watch.state_dir / "pushed"

    def push_steps(self, job: str, body: bytes) -> int:
        from forensic.harness.watch.pushed import append_pushed

        return append_pushed(self.pushed_dir(), job, body)

    def _watch_sink(self, alerts: list[dict[str, Any]]) -> None:
        """Watch findings enter through the alerts' own intake: grouped, deduplicated, committed."""
        import json

        body = {
            "version": "4",
            "status": "firing",
            "receiver": "forensic-watch",
            "groupKey": "watch",
            "alerts": alerts,
        }
        payload = Payload.model_validate(body)
        for a in payload.alerts:
            a.map_labels(self.cfg.grouping.job_labels)
        if self.writer is None:
            raise RuntimeError("the service is not started")
        self.writer.submit("watch", json.dumps(body), payload).result(timeout=60)

    # -- life ------------------------------------------------------------------------------
    def start(self) -> None:
        # SQLite serves one process: what that process was running when it died is runnable again.
        released = self.store.release_all()
        if released:
            log.info("resuming %d investigation(s) from their checkpoints", released)
        self.writer = IntakeWriter(self._ingest)
        if self._listener:
            self._listener.start()
        self.notifier.start()
        self.pool.start()
        if self.watcher is not None:
            self.watcher.start()

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self.writer:
            self.writer.close()
        self.pool.stop()
        self.notifier.stop()
        if self._listener:
            self._listener.stop()
        self.store.close()
        if self._lock:
            unlock_database(self._lock)
            self._lock = None
