"""Alertmanager's webhook in, and the refused bodies (dead letters) out to an admin.

The webhook is the hot path, so its route is a plain Starlette route (the router's only route
for it; nothing in front of the router answers it): FastAPI's per-request machinery (dependency
solving, validation, serialization) costs more CPU per single-alert webhook than the handler
(docs/scaling.md). The token is read here, the body by :func:`read_capped` (up to the cap), and
the answer is a ready JSON response. Its OpenAPI entry is :data:`WEBHOOK_OPENAPI`, which
``create_app`` adds to the document.
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
    if svc.writer is None:  # started without intake (a test's app, or stopping): nothing is accepted
        raise Problem(503, "this service is not accepting alerts now; retry")
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


router.add_route("/api/v1/alerts", post_alerts, methods=["POST"])

#: The webhook's entry in the OpenAPI document (a Starlette route is not described by FastAPI).
WEBHOOK_OPENAPI: dict[str, Any] = {
    "post": {
        "tags": ["intake"],
        "summary": "Post Alerts",
        "description": "Alertmanager's webhook (version 4), exactly as it sends it. 202 after a durable write.",
        "operationId": "post_alerts_api_v1_alerts_post",
        "parameters": [
            {
                "name": "authorization",
                "in": "header",
                "required": True,
                "schema": {"type": "string"},
                "description": "Bearer TOKEN",
            }
        ],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object", "description": "Alertmanager webhook v4"}}
            },
        },
        "responses": {
            "202": {
                "description": "Stored durably.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IntakeResult"}}},
            },
            **{
                str(code): {"description": why}
                for code, why in (
                    (400, "Not JSON, or JSON too deep or with too long an integer (kept as a dead letter)."),
                    (401, "No valid token."),
                    (403, "The token's role may not post webhooks."),
                    (413, "Larger than max_body_bytes (kept as a dead letter)."),
                    (422, "Not an Alertmanager version-4 webhook (kept as a dead letter)."),
                    (503, "The database refused the write; nothing was accepted."),
                )
            },
        },
    }
}


def add_webhook_to_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("paths", {})["/api/v1/alerts"] = WEBHOOK_OPENAPI
    schema.setdefault("components", {}).setdefault("schemas", {})["IntakeResult"] = (
        IntakeResult.model_json_schema(ref_template="#/components/schemas/{model}")
    )
    return schema


@router.post("/api/v1/watch/steps", status_code=202)
async def push_steps(
    request: Request, svc: Svc, job: Annotated[str, Query(max_length=200)]
) -> dict[str, Any]:
    """Per-rank step rows (the step recorder's CSV, header first) for the watcher (docs/watch.md)."""
    user = user_of(svc, request.headers.get("authorization"), "webhook")
    if svc.watcher is None:
        raise Problem(404, "this service has no [watch]: it does not follow jobs")
    body, too_big = await read_capped(request, svc.cfg.max_body_bytes)
    if too_big:
        raise Problem(413, too_big)
    from forensic.harness.watch.pushed import PushError

    try:
        n = await asyncio.to_thread(svc.push_steps, job, body)
    except PushError as exc:
        raise Problem(422, str(exc)) from None
    return {"accepted_rows": n, "job": job, "user": user.name}


@router.get("/api/v1/watch")
def watch_status(svc: Svc, _: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
    """Each followed job: where it is read, steps, findings, and whether its source is read."""
    if svc.watcher is None:
        raise Problem(404, "this service has no [watch]: it does not follow jobs")
    return {"jobs": svc.watcher.status()}


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
