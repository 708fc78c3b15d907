"""Runbook: hand the approved action to people (a ticket system or any webhook), exactly once.

The approved proposal is POSTed as JSON to the configured URL with an ``Idempotency-Key`` derived
from the thread, the proposal and its content hash, so a retried or repeated delivery opens one
ticket, not two. Connection errors, 429 and 5xx are retried with backoff (tenacity, honouring
``Retry-After``); any other answer is final. A target that is not a valid host, device or port
name (:func:`forensic.harness.proposals.valid_target`) is refused before anything is sent: the
ticket system may show it to people, or feed it to their tools.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

import httpx
from forensic.harness.proposals import valid_target
from tenacity import RetryError, retry, retry_if_exception, stop_after_attempt, wait_exponential

from .base import ExecutionError, Outcome, Plan
from .config import RunbookConfig


class _Retryable(Exception):
    pass


class RunbookExecutor:
    name: ClassVar[str] = "runbook"
    # Everything a person carries out by hand; the routing table decides what reaches it.
    actions: ClassVar[frozenset[str]] = frozenset(
        {
            "open_ticket",
            "reseat_or_replace",
            "reset_gpu",
            "reset_link",
            "disable_port",
            "drain_node",
            "cordon_node",
        }
    )

    def __init__(self, config: RunbookConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self._transport = transport

    def plan(self, action: str, target: str, *, reason: str, context: dict[str, Any]) -> Plan:
        if not valid_target(target):
            raise ExecutionError(
                f"runbook: target {target!r} is not a valid host, device or port name; nothing was sent"
            )
        body = {"action": action, "target": target, "reason": reason, **context}
        key = hashlib.sha256(
            f"{body.get('thread')}|{body.get('proposal_id')}|{body.get('content_hash')}".encode()
        ).hexdigest()
        return Plan(
            executor=self.name,
            action=action,
            target=target,
            resolved=target,
            steps=[f"POST {action} {target} to {self.config.url} (Idempotency-Key {key[:16]}...)"],
            details={"body": body, "key": key},
        )

    def _headers(self, key: str) -> dict[str, str]:
        headers = {"Idempotency-Key": key, "content-type": "application/json"}
        if self.config.token_file is not None:
            try:
                headers["Authorization"] = f"Bearer {self.config.token_file.read_text().strip()}"
            except OSError as exc:
                raise ExecutionError(
                    f"runbook token file {self.config.token_file}: {exc.strerror or exc}"
                ) from None
        return headers

    def execute(self, plan: Plan) -> Outcome:
        headers = self._headers(plan.details["key"])

        @retry(
            stop=stop_after_attempt(self.config.attempts),
            wait=wait_exponential(multiplier=0.2, max=5),
            retry=retry_if_exception(lambda e: isinstance(e, (_Retryable, httpx.TransportError))),
            reraise=False,
        )
        def post() -> httpx.Response:
            with httpx.Client(timeout=self.config.timeout_s, transport=self._transport) as http:
                r = http.post(self.config.url, json=plan.details["body"], headers=headers)
            if r.status_code == 429 or r.status_code >= 500:
                raise _Retryable(f"{r.status_code}")
            return r

        try:
            r = post()
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise ExecutionError(
                f"POST {self.config.url}: gave up after {self.config.attempts} attempts ({last})"
            ) from None
        if r.status_code >= 400:
            raise ExecutionError(f"POST {self.config.url}: {r.status_code} {r.text[:200]}")
        try:
            answer = r.json()
        except ValueError:
            answer = {}
        ref = answer.get("id") or answer.get("key") or answer.get("url") if isinstance(answer, dict) else None
        return Outcome(
            ok=True,
            detail=f"handed to the runbook endpoint ({r.status_code})" + (f": {ref}" if ref else ""),
            data={"status": r.status_code, "reference": ref},
        )

    def verify(self, plan: Plan) -> Outcome:
        return Outcome(
            ok=True, detail="delivered; the rest is carried out by people and tracked in the ticket"
        )

    def undo(self, plan: Plan) -> Outcome:
        raise ExecutionError("a delivered ticket is not undone by forensic: close it in the ticket system")
