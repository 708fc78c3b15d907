"""Alertmanager's webhook in, and the refused bodies (dead letters) out to an admin.

The webhook is the hot path: its token is read here rather than through a FastAPI dependency,
and the answer is a ready JSON response rather than a value FastAPI validates and serializes
again; the route has no body parameter, so FastAPI does not read or parse the body either
(:func:`read_capped` reads it, up to the cap). Together these were about half of an API
process's CPU per single-alert webhook (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from forensic.harness.service.config import User
from forensic.harness.service.intake import IntakeError, IntakeResult, parse_payload

from .common import Problem, Svc, need, service, user_of

router = APIRouter(tags=["intake"])


async def read_capped(request: Request, cap: int) -> tuple[bytes, str | None]:
    """The body, or its first ``cap`` bytes and why it was refused."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        return b"", f"body of {declared} bytes is larger than the {cap}-byte cap"
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            return bytes(body[:cap]), f"body is larger than the {cap}-byte cap"
    return bytes(body), None


@router.post(
    "/api/v1/alerts",
    status_code=202,
    response_class=Response,
    responses={
        202: {"model": IntakeResult, "description": "Stored durably."},
        400: {},
        401: {},
        403: {},
        413: {},
        422: {},
        503: {},
    },
    openapi_extra={
        "parameters": [
            {
                "name": "authorization",
                "in": "header",
                "required": True,
                "schema": {"type": "string"},
                "description": "Bearer TOKEN",
            }
        ]
    },
)
async def post_alerts(request: Request) -> Response:
    """Alertmanager's webhook (version 4), exactly as it sends it. 202 after a durable write."""
    svc = service(request)
    user = user_of(svc, request.headers.get("authorization"), "webhook")
    body, too_big = await read_capped(request, svc.cfg.max_body_bytes)
    if too_big:  # keep what was read (up to the cap) with the reason
        await asyncio.to_thread(_dead_letter, svc, user.name, 413, too_big, body)
        svc.metrics.dead_lettered.labels("413").inc()
        raise Problem(413, too_big)
    try:
        text, payload = parse_payload(body, svc.cfg.grouping.job_labels)
    except IntakeError as exc:
        await asyncio.to_thread(_dead_letter, svc, user.name, exc.status, exc.reason, body)
        svc.metrics.dead_lettered.labels(str(exc.status)).inc()
        raise Problem(exc.status, exc.reason) from None
    try:
        res = await asyncio.wrap_future(svc.writer.submit(user.name, text, payload))
    except Exception as exc:  # the database refused the write: nothing was accepted, say so
        raise Problem(503, f"could not store the alerts durably: {type(exc).__name__}; retry") from None
    return Response(
        json.dumps(
            {
                "accepted": res.accepted,
                "duplicates": res.duplicates,
                "grouped": res.grouped,
                "opened": res.opened,
                "investigations": res.investigations,
            }
        ).encode(),
        status_code=202,
        media_type="application/json",
    )


def _dead_letter(svc: Any, user: str, status: int, reason: str, body: bytes) -> None:
    kept = svc.cfg.dead_letters
    svc.store.dead_letter(user, status, reason, body, keep=kept.keep, keep_s=kept.keep_days * 86400)


@router.get("/api/v1/dead-letters")
def dead_letters(
    svc: Svc,
    _: Annotated[User, Depends(need("admin"))],
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
) -> dict[str, Any]:
    """Refused webhook bodies and why (bodies kept in the database, capped: ``[dead_letters]``), newest
    first, ``limit`` a page; pass ``next_cursor`` back as ``cursor`` for the next page (null: no more)."""
    page = svc.store.dead_letters(limit=limit + 1, before=int(cursor) if cursor else None)
    more = len(page) > limit
    page = page[:limit]
    return {
        "dead_letters": page,
        "next_cursor": str(page[-1]["id"]) if more else None,
        "total": svc.store.dead_letter_count(),
    }
