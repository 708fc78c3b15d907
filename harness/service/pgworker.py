"""``forensic worker``: a stateless process that claims investigations from PostgreSQL and runs them.

Each run renews its lease from a heartbeat thread every ``lease_s / 3`` seconds (and after each
graph step, as in the single-process pool), so a slow tool call does not lose the claim. A worker
killed outright stops renewing; once the lease lapses another worker claims the investigation and
resumes it from its last LangGraph checkpoint in the same database.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from forensic.harness.service.config import ServeConfig
from forensic.harness.service.workers import WorkerPool

log = logging.getLogger("forensic.service.worker")


class HeartbeatPool(WorkerPool):
    """:class:`WorkerPool` whose runs renew their lease on a timer as well as after each step."""

    def run(self, inv: dict[str, Any], owner: str) -> None:
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.lease_s / 3):
                try:
                    if not self.store.renew(inv["id"], owner, self.lease_s):
                        return  # the claim is gone; the run notices at its next step
                except Exception as exc:  # the database is briefly away: try at the next beat
                    log.warning("%s: heartbeat failed: %s", inv["id"], exc)

        log.info("%s: claimed by %s (run %d)", inv["id"], owner, inv["runs"])
        t = threading.Thread(target=beat, name=f"heartbeat-{inv['id']}", daemon=True)
        t.start()
        try:
            super().run(inv, owner)
        finally:
            done.set()
            t.join(timeout=5)


def run_worker(cfg: ServeConfig, db: str, *, count: int, stop: threading.Event | None = None) -> None:
    """Claim and run investigations until SIGTERM or SIGINT (or ``stop`` is set)."""
    from forensic.harness.service.live import LiveSources
    from forensic.harness.service.notify import summary
    from forensic.harness.service.store import PostgresStore
    from forensic.harness.service.workers import postgres_checkpointer

    store = PostgresStore(db, max_size=max(4, count + 2))
    saver = postgres_checkpointer(db, max_size=max(4, count + 2))

    def finished(inv: dict[str, Any] | None, report: dict[str, Any] | None, seconds: float) -> None:
        # The outbox: an API process's notifier sends it (each notification by one of them).
        if inv is not None and report is not None and cfg.notify.slack_webhooks:
            store.enqueue_notifications(
                inv["id"], cfg.notify.slack_webhooks, summary(inv, report, cfg.public_url)
            )

    pool = HeartbeatPool(
        store,
        checkpointer=saver,
        limits=cfg.budgets,
        count=count,
        per_job=cfg.workers.per_job,
        lease_s=cfg.workers.lease_s,
        step_pause_s=cfg.workers.step_pause_s,
        poll_s=0.5,
        on_finish=finished,
        where=(live := LiveSources(cfg, store)).where,
        keep=live.keep,
    )
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    pool.start()
    log.info("worker %s: %d thread(s) claiming from PostgreSQL", pool.boot, count)
    try:
        stop.wait()
    finally:
        pool.stop()  # a run in progress stops at its next step; its lease lapses and another worker resumes it
        store.close()
        getattr(saver, "_forensic_pool", None) and saver._forensic_pool.close()
