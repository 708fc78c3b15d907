"""Investigations: the list, one investigation, its views, its archive, and its live event stream."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import FileResponse
from forensic.harness.service.config import User
from forensic.harness.service.store import STATUSES
from sse_starlette import EventSourceResponse

from .common import Problem, Svc, investigation, need, service

router = APIRouter(tags=["investigations"])
Viewer = Annotated[User, Depends(need("viewer"))]

_SUMMARY = (
    "id",
    "job",
    "hosts",
    "status",
    "report_status",
    "verdict",
    "component",
    "confidence",
    "alert_count",
    "resolved_count",
    "first_at",
    "last_at",
    "created_at",
    "started_at",
    "finished_at",
    "error",
)


def summary(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r.get(k) for k in _SUMMARY}


@router.get("/api/v1/investigations")
def list_investigations(
    svc: Svc,
    _: Viewer,
    status: Literal[STATUSES] | None = None,  # type: ignore[valid-type]
    job: Annotated[str | None, Query(max_length=256)] = None,
    since: float | None = None,
    until: float | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """Investigations, newest first; filter by status, job and time (unix seconds)."""
    rows = svc.store.investigations(status=status, job=job, since=since, until=until, limit=limit)
    return {"investigations": [summary(r) for r in rows]}


@router.get("/api/v1/investigations/{inv_id}")
def get_investigation(inv_id: str, svc: Svc, _: Viewer) -> dict[str, Any]:
    """Status, the forensic.report/v1 report (once concluded) and the alerts it grouped: the first
    ``alerts_shown`` (up to 1,000, by start time) of ``alerts_total``."""
    inv = investigation(svc, inv_id)
    alerts = svc.store.alerts_of(inv_id)  # the first 1,000 by start time
    return {
        **summary(inv),
        "gpus": inv["gpus"],
        "report": _with_executions(svc, inv, svc.live.with_archive(inv, inv["report"])),
        "alerts": alerts,
        "alerts_total": inv["alert_count"],
        "alerts_shown": len(alerts),
        "events": svc.store.events_after(inv_id, 0),
    }


def _evidence(svc: Any, inv: dict[str, Any]) -> str | None:
    """What a view reads: a live run's evidence as it was read (its archive), else the bundle."""
    kept = svc.live.archive_of(inv)
    return str(kept) if kept else inv.get("bundle")


@router.get("/api/v1/investigations/{inv_id}/heatmap")
def get_heatmap(inv_id: str, svc: Svc, _: Viewer) -> dict[str, Any]:
    """Per-rank step compute time, ranks x time bins."""
    from forensic.harness.service.views import heatmap

    inv = investigation(svc, inv_id)
    src = _evidence(svc, inv) if inv.get("bundle") else None
    return heatmap(src) if src else {"available": False, "reason": "no evidence source"}


@router.get("/api/v1/investigations/{inv_id}/timeline")
def get_timeline(inv_id: str, svc: Svc, _: Viewer) -> dict[str, Any]:
    """Per-host key signals over time (worst GPU per sample)."""
    from forensic.harness.service.views import timeline

    inv = investigation(svc, inv_id)
    src = _evidence(svc, inv) if inv.get("bundle") else None
    return timeline(src) if src else {"available": False}


@router.get("/api/v1/investigations/{inv_id}/archive", response_class=FileResponse)
def get_archive(inv_id: str, svc: Svc, _: Viewer) -> FileResponse:
    """What a live investigation read, as the bundle archive ``forensic collect`` writes."""
    kept = svc.live.archive_of(investigation(svc, inv_id))
    if kept is None:
        raise Problem(404, f"{inv_id} kept no archive (only live investigations do, once concluded)")
    return FileResponse(kept, media_type="application/gzip", filename=f"{inv_id}.tar.gz")


def event_id(header: str | None) -> int:
    """``Last-Event-ID`` as an event id (a 64-bit row id this stream sent); 400 for anything else."""
    if not header:
        return 0
    if not (header.isascii() and header.isdigit() and len(header) <= 19 and int(header) < 1 << 63):
        raise Problem(
            400,
            f"Last-Event-ID must be an event id this stream sent (digits), not {header[:20]!r}"
            f"{'...' if len(header) > 20 else ''}",
        )
    return int(header)


#: Without a wake-up, a stream still looks every this many seconds (a missed signal costs no more).
RECHECK_S = 5.0
#: Once its run has stopped, a stream waits this long for late events (a decision) before closing.
LINGER_S = 0.5


@router.get("/api/v1/investigations/{inv_id}/events", response_class=EventSourceResponse)
async def stream_events(
    inv_id: str,
    request: Request,
    _: Viewer,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    """Server-sent events: hypotheses, tool calls, findings, verdict, decisions; ends when the run stops.

    The stream reads the database when the store says the investigation changed (in this
    process, or through PostgreSQL's LISTEN/NOTIFY from another), not on a timer per client.
    """
    svc = service(request)
    after = event_id(last_event_id)
    await asyncio.to_thread(investigation, svc, inv_id)

    async def events():
        nonlocal after
        with svc.signals.subscribe(inv_id) as changed:
            while True:
                changed.clear()
                rows = await asyncio.to_thread(svc.store.events_after, inv_id, after)
                for r in rows:
                    after = r["id"]
                    yield {"id": str(r["id"]), "event": r["kind"], "data": json.dumps(r["data"])}
                inv = await asyncio.to_thread(svc.store.investigation, inv_id)
                stopped = inv is None or inv["status"] not in ("queued", "running")
                if stopped and not rows:
                    try:  # one more look if something arrives (a decision's event), else close
                        await asyncio.wait_for(changed.wait(), LINGER_S)
                        continue
                    except TimeoutError:
                        status = inv["status"] if inv else "gone"
                        yield {"event": "close", "data": json.dumps({"status": status})}
                        return
                if not rows:
                    try:
                        await asyncio.wait_for(changed.wait(), RECHECK_S)
                    except TimeoutError:
                        pass

    return EventSourceResponse(events(), ping=15, sep="\n", headers={"Cache-Control": "no-store"})


def _with_executions(svc: Any, inv: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report with each proposal's execution (state, result, undo steps) from the shared ledger,
    whichever surface ran it; the report itself is as the investigation concluded."""
    from forensic.harness.executors import ExecutionError, annotate

    if not report or not report.get("proposals") or not inv.get("thread_id"):
        return report
    try:
        return annotate(report, svc.ledger().for_thread(inv["thread_id"]))
    except ExecutionError as exc:
        raise Problem(503, str(exc)) from None
