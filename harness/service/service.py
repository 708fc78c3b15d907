"""The running service: storage, intake writer, worker pool and notifier, started and stopped together."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from forensic.harness.service.config import ServeConfig, load_tokens
from forensic.harness.service.auth import Tokens
from forensic.harness.service.intake import IntakeResult, IntakeWriter, Payload
from forensic.harness.service.live import UNMAPPED_EVENT, LiveSources, map_evidence, unmapped_reason, unmapped_summary
from forensic.harness.service.metrics import Metrics
from forensic.harness.service.notify import Notifier, summary
from forensic.harness.service.store import SqliteStore
from forensic.harness.service.workers import WorkerPool, sqlite_checkpointer

log = logging.getLogger("forensic.service")


class Service:
    def __init__(self, cfg: ServeConfig, *, db: str | None = None) -> None:
        """``db``: a ``postgresql://`` URL (several processes, docs/scaling.md); else ``cfg.database`` (SQLite)."""
        self.cfg = cfg
        self.tokens = Tokens(load_tokens(cfg))
        if db:
            from forensic.harness.service.pgstore import PostgresStore, postgres_checkpointer

            self.store = PostgresStore(db)
            self.saver = postgres_checkpointer(db)
        else:
            self.store = SqliteStore(cfg.database)
            self.saver = sqlite_checkpointer(cfg.database)
        self.metrics = Metrics(self.store)
        self.live = LiveSources(cfg, self.store)
        self.notifier = Notifier(self.store, timeout_s=cfg.notify.timeout_s, max_attempts=cfg.notify.max_attempts)
        self.pool = WorkerPool(self.store, checkpointer=self.saver, limits=cfg.budgets, count=cfg.workers.count,
                               per_job=cfg.workers.per_job, lease_s=cfg.workers.lease_s,
                               step_pause_s=cfg.workers.step_pause_s, on_finish=self._finished,
                               on_tool=lambda tool, status: self.metrics.tool_calls.labels(tool, status).inc(),
                               where=self.live.where, keep=self.live.keep)
        self.writer: IntakeWriter | None = None

    # -- evidence mapping ------------------------------------------------------------------
    def resolve_bundle(self, job: str | None, hosts: list[str]) -> Path | str | None:
        """A matching recorded bundle, else the live fleet when the alert names a job (live.map_evidence)."""
        return map_evidence(self.cfg, job, hosts)

    def _ingest(self, batch: list[tuple[str, str, Payload]]) -> list[IntakeResult]:
        results = self.store.ingest(batch, window_s=self.cfg.grouping.window_s, resolve_bundle=self.resolve_bundle)
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
                self.store.enqueue_notifications(inv_id, self.cfg.notify.slack_webhooks,
                                                 unmapped_summary(inv, reason, self.cfg.public_url))
                self.notifier.wake()

    def _finished(self, inv: dict[str, Any] | None, report: dict[str, Any] | None, seconds: float) -> None:
        self.metrics.duration.observe(seconds)
        if inv is None or report is None or not self.cfg.notify.slack_webhooks:
            return
        self.store.enqueue_notifications(inv["id"], self.cfg.notify.slack_webhooks, summary(inv, report, self.cfg.public_url))
        self.notifier.wake()

    # -- life ------------------------------------------------------------------------------
    def start(self) -> None:
        # SQLite serves one process: what that process was running when it died is runnable again.
        released = self.store.release_all()
        if released:
            log.info("resuming %d investigation(s) from their checkpoints", released)
        self.writer = IntakeWriter(self._ingest)
        self.notifier.start()
        self.pool.start()

    def stop(self) -> None:
        if self.writer:
            self.writer.close()
        self.pool.stop()
        self.notifier.stop()
        self.store.close()
