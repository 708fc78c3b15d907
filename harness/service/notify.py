"""Conclusions out: Slack-compatible incoming webhooks, from an outbox that survives restarts.

A conclusion enqueues one row per receiver in the same database; this sender posts due rows on
its own thread and reschedules failures with exponential backoff, so a receiver that is down
never holds up an investigation, and a restart loses no notification.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import httpx

log = logging.getLogger("forensic.service.notify")


def summary(inv: dict[str, Any], report: dict[str, Any], public_url: str) -> dict[str, Any]:
    """A short Slack-compatible message: verdict, component, confidence, link."""
    from forensic.harness.render import verdict_text

    v = report.get("verdict") or {}
    link = (
        f"{public_url.rstrip('/')}/#/investigations/{inv['id']}"
        if public_url
        else f"/#/investigations/{inv['id']}"
    )
    conf = v.get("confidence")
    text = (
        f"forensic: {inv['id']} ({inv.get('job') or 'no job'}) {verdict_text(report)}"
        + (f", confidence {conf:.2f}" if isinstance(conf, (int, float)) else "")
        + f", {inv.get('alert_count', 0)} alert(s). {link}"
    )
    pending = [p for p in report.get("proposals", []) if p.get("status") == "pending_approval"]
    if pending:
        text += f" {len(pending)} proposal(s) await approval."
    return {
        "text": text,
        "forensic": {"investigation": inv["id"], "status": report.get("status"), "verdict": v, "url": link},
    }


class Notifier:
    """Posts due notifications; failures back off (2 s, 4 s, ... up to 5 min) until max attempts."""

    def __init__(self, store: Any, *, timeout_s: float, max_attempts: int, poll_s: float = 0.25) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="forensic-notify", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        with httpx.Client(timeout=self.timeout_s, follow_redirects=False) as client:
            while not self._stop.is_set():
                for row in self.store.due_notifications(time.time()):
                    if self._stop.is_set():
                        return
                    self._send(client, row)
                self._wake.wait(self.poll_s)
                self._wake.clear()

    def _send(self, client: httpx.Client, row: dict[str, Any]) -> None:
        error = None
        try:
            r = client.post(row["url"], content=row["payload"], headers={"content-type": "application/json"})
            if 200 <= r.status_code < 300:
                self.store.notification_result(row["id"], ok=True, error=None, next_at=None)
                return
            error = f"HTTP {r.status_code}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        attempts = row["attempts"] + 1
        if attempts >= self.max_attempts:
            log.warning(
                "notification %s to %s given up after %d attempts: %s", row["id"], row["url"], attempts, error
            )
            self.store.notification_result(row["id"], ok=False, error=error, next_at=None)
        else:
            delay = min(300.0, 2.0**attempts)
            self.store.notification_result(row["id"], ok=False, error=error, next_at=time.time() + delay)


__all__ = ["Notifier", "summary"]
