"""Alertmanager webhooks in: the payload contract, what an alert says, and how alerts group.

The payload is Alertmanager's webhook (version 4) exactly as it sends it. Each alert maps to an
incident key: the job (the first of the configured job labels present), hosts (``Hostname``,
``hostname``, or ``instance`` without its port) and GPUs (``gpu``, as ``host/gpuN``). Two alerts
belong to one fault when they name the same job or share a host, and start within the grouping
window of each other.

Writes go through :class:`IntakeWriter`: requests hand their parsed payload to one writer thread
that commits whatever has queued up in one transaction (one fsync for many requests), then
answers each request. So a 202 always follows a durable commit, and grouping decisions are made
by one writer, in order: a burst of one fault opens exactly one investigation.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Literal

from forensic.tools.parsers.openmetrics import series_host
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from forensic.times import parse_time

_MAX_LABEL = 4096
#: Limits on a webhook body beyond its size (``max_body_bytes``). Alertmanager's payload is four
#: levels deep and its only integer is ``truncatedAlerts``; these leave room for extra fields.
MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 64


class Alert(BaseModel):
    """One alert of the webhook, as Alertmanager sends it."""

    model_config = ConfigDict(extra="allow")

    status: Literal["firing", "resolved"] = Field(description="firing or resolved.")
    labels: dict[str, str] = Field(description="Identifying labels.")
    annotations: dict[str, str] = Field(default_factory=dict, description="Descriptive annotations.")
    startsAt: str = Field(description="RFC 3339 start time.")
    endsAt: str = Field("", description="RFC 3339 end time (0001-01-01 while firing without one).")
    generatorURL: str = Field("", max_length=_MAX_LABEL, description="Link to the rule's expression.")
    fingerprint: str = Field("", max_length=128, description="Alertmanager's fingerprint of the label set.")

    _job: str | None = PrivateAttr(None)
    _hosts: list[str] = PrivateAttr(default_factory=list)
    _gpus: list[str] = PrivateAttr(default_factory=list)

    @field_validator("labels", "annotations")
    @classmethod
    def _bounded(cls, v: dict[str, str]) -> dict[str, str]:
        if len(v) > 128:
            raise ValueError("more than 128 entries")
        for k, val in v.items():
            if len(k) > 256 or len(val) > _MAX_LABEL:
                raise ValueError(f"label or annotation {k[:40]!r} longer than allowed")
        return v

    @field_validator("startsAt")
    @classmethod
    def _time(cls, v: str) -> str:
        if _unix(v) is None:
            raise ValueError(f"not an RFC 3339 time: {v[:40]!r}")
        return v

    @property
    def fingerprint_(self) -> str:
        if self.fingerprint:
            return self.fingerprint
        # Alertmanager always sends one; a hand-made payload gets one from its label set.
        return hashlib.sha256(json.dumps(self.labels, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def alertname(self) -> str:
        return self.labels.get("alertname", "")

    @property
    def starts_unix(self) -> float | None:
        return _unix(self.startsAt)

    @property
    def ends_unix(self) -> float | None:
        t = _unix(self.endsAt)
        return t if t is not None and t > 0 else None

    @property
    def job(self) -> str | None:
        return self._job

    @property
    def hosts(self) -> list[str]:
        return self._hosts

    @property
    def gpus(self) -> list[str]:
        return self._gpus

    def map_labels(self, job_labels: list[str]) -> None:
        self._job = next((self.labels[k] for k in job_labels if self.labels.get(k)), None)
        host = series_host(self.labels)
        self._hosts = [host] if host else []
        gpu = self.labels.get("gpu")
        self._gpus = [f"{host}/gpu{gpu}"] if host and gpu and gpu.isdigit() else []


class Payload(BaseModel):
    """Alertmanager's webhook body, version 4."""

    model_config = ConfigDict(extra="allow")

    version: Literal["4"] = Field(description="Webhook payload version; only 4 exists.")
    groupKey: str = Field("", max_length=_MAX_LABEL)
    status: Literal["firing", "resolved"] = "firing"
    receiver: str = ""
    truncatedAlerts: int = 0
    alerts: list[Alert] = Field(max_length=10_000, description="The alerts of this notification.")


def _unix(value: str) -> float | None:
    """An RFC 3339 time as Alertmanager writes it (always with its zone; never unix seconds)."""
    t = parse_time(value, numbers=False, naive_utc=False)
    if t is not None and t < 0:  # Alertmanager's "no end" is 0001-01-01T00:00:00Z
        return 0.0
    return t


class IntakeError(Exception):
    """A webhook that cannot be accepted: HTTP status and one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_payload(body: bytes, job_labels: list[str]) -> tuple[str, Payload]:
    """The body as text and its parsed payload; :class:`IntakeError` (400/422) if it is not one."""
    try:
        text = body.decode("utf-8")
        data = json.loads(text, parse_int=_bounded_int)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IntakeError(400, f"body is not JSON: {str(exc)[:200]}") from None
    except RecursionError:
        raise IntakeError(
            400, f"body is JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)"
        ) from None
    except ValueError as exc:  # from _bounded_int
        raise IntakeError(400, f"body is not usable JSON: {str(exc)[:200]}") from None
    if _too_deep(data, MAX_JSON_DEPTH):
        raise IntakeError(400, f"body is JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)")
    if not isinstance(data, dict):
        raise IntakeError(422, "body is not an Alertmanager webhook object")
    if data.get("version") != "4":
        raise IntakeError(
            422, f'unsupported Alertmanager webhook version {str(data.get("version"))[:20]!r}; expected "4"'
        )
    try:
        payload = Payload.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        raise IntakeError(422, f"invalid webhook at {where}: {e['msg']}"[:300]) from None
    for a in payload.alerts:
        a.map_labels(job_labels)
    return text, payload


def _bounded_int(literal: str) -> int:
    # Checked before int() converts it: a long literal costs quadratic time, and past Python's
    # digit limit int() raises a ValueError that says nothing about the request.
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer has {len(literal.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(literal)


def _too_deep(data: object, limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels (iterative: no recursion to exhaust)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def supersedes(a: Alert, status: str, starts_at: float | None, ends_at: float | None) -> bool:
    """Whether delivery ``a`` is newer than the stored state of its alert (same fingerprint).

    Alertmanager retries and several of its replicas send independently, so deliveries arrive out
    of order. Each episode of an alert is named by its ``startsAt``: a delivery of an older episode
    is stale; a ``firing`` delivery after a resolution is a re-fire only if it started after the
    resolution ended (else it is the late notice of the episode already resolved); a ``resolved``
    delivery ends the current episode, or moves a resolution's end later.
    """
    start = a.starts_unix or 0.0
    if starts_at is not None and start < starts_at:
        return False
    if a.status == "firing":
        if status != "resolved":
            return True
        return start > (ends_at if ends_at is not None else (starts_at or 0.0))
    if status != "resolved":
        return True
    return (a.ends_unix or 0.0) >= (ends_at or 0.0)


def group_key_matches(job: str | None, hosts: list[str], inv_job: str | None, inv_hosts: list[str]) -> bool:
    """Same job, or a shared host: one fault."""
    if job and inv_job and job == inv_job:
        return True
    return bool(set(hosts) & set(inv_hosts))


class IntakeResult(BaseModel):
    """What one webhook did."""

    accepted: int = Field(0, description="New alerts stored.")
    duplicates: int = Field(0, description="Alerts already known by fingerprint (updated).")
    grouped: int = Field(0, description="New alerts added to an existing investigation.")
    opened: list[str] = Field(default_factory=list, description="Investigations this webhook opened.")
    investigations: list[str] = Field(
        default_factory=list, description="Investigations its alerts belong to."
    )


class IntakeWriter:
    """One writer thread that commits queued webhooks in batches (group commit)."""

    def __init__(
        self, ingest: Callable[[list[tuple[str, str, Payload]]], list[IntakeResult]], *, max_batch: int = 256
    ) -> None:
        self._ingest = ingest
        self._max = max_batch
        self._q: queue.Queue[tuple[str, str, Payload, Future] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="forensic-intake", daemon=True)
        self._thread.start()

    def submit(self, user: str, text: str, payload: Payload) -> Future:
        fut: Future = Future()
        self._q.put((user, text, payload, fut))
        return fut

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            batch = [item]
            stop = False
            while len(batch) < self._max:
                try:
                    nxt = self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            try:
                results = self._ingest([(u, t, p) for u, t, p, _ in batch])
            except Exception as exc:  # the disk is full or gone: every request in the batch gets 503
                for *_, fut in batch:
                    fut.set_exception(exc)
            else:
                for (*_, fut), res in zip(batch, results, strict=True):
                    fut.set_result(res)
            if stop:
                return
