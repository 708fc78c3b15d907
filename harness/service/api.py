"""The HTTP surface: intake, the investigation API, decisions, audit, health, metrics, the page.

Every error is a JSON ``{"detail": "one line"}`` with the right status, never a 500 for bad
input. Request bodies are capped (``max_body_bytes``); a refused webhook body is kept in the
dead-letter table with why it was refused.
"""

import asyncio
import json
import time
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from forensic.harness.service.auth import AuthError, allowed
from forensic.harness.service.config import User
from forensic.harness.service.decisions import DecisionError, TableApprovals, audit_sink, decide
from forensic.harness.service.intake import IntakeError, IntakeResult, parse_payload
from forensic.harness.service.service import Service
from forensic.harness.service.store import STATUSES
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

_STATIC = resources.files("forensic.harness.service") / "static"
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class Problem(Exception):
    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail


class _HeadersMiddleware:
    def __init__(self, app, wrap) -> None:
        self._asgi = wrap(app)

    async def __call__(self, scope, receive, send) -> None:
        await self._asgi(scope, receive, send)


class ExecuteBody(BaseModel):
    """Carry out an approved proposal, or only plan it."""

    model_config = {"extra": "forbid"}

    dry_run: bool = Field(False, description="Show what would run; change nothing.")


class UndoBody(BaseModel):
    """Reverse an executed proposal, saying why."""

    model_config = {"extra": "forbid"}

    reason: str = Field(min_length=1, max_length=2000, description="Why, recorded in the audit log.")


class ChatBody(BaseModel):
    """One question about an investigation's incident, optionally continuing a conversation."""

    model_config = {"extra": "forbid"}

    investigation: str = Field(min_length=1, max_length=128, description="Investigation id (inv-...).")
    question: str = Field(min_length=1, max_length=2000, description="The question, in words.")
    conversation: str | None = Field(None, max_length=200, description="A conversation id to continue.")


class DecisionBody(BaseModel):
    """A person's decision on one proposal."""

    content_hash: str = Field(
        min_length=64, max_length=64, description="The proposal's content hash, as shown."
    )
    reason: str = Field(min_length=1, max_length=2000, description="Why, recorded in the audit log.")


def create_app(svc: Service, *, manage_lifecycle: bool = True) -> FastAPI:
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if manage_lifecycle:
            svc.start()
        try:
            yield
        finally:
            if manage_lifecycle:
                svc.stop()

    # No /docs or /redoc: their pages load Swagger UI and ReDoc from a CDN, which the service's own
    # CSP refuses (and it serves no external asset). The OpenAPI document is at /openapi.json.
    app = FastAPI(
        title="forensic",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Auto-triage: Alertmanager webhooks in; investigations, approvals and a page out.",
    )
    cap = svc.cfg.max_body_bytes

    # -- errors: one line, right status ---------------------------------------------------
    def _problem_response(exc: Problem) -> JSONResponse:
        return JSONResponse(
            {"detail": exc.detail},
            status_code=exc.status,
            headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None,
        )

    @app.exception_handler(Problem)
    async def _problem(_: Request, exc: Problem) -> JSONResponse:
        return _problem_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        e = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in e.get("loc", ()))
        return JSONResponse({"detail": f"{where}: {e.get('msg')}"[:300]}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": str(exc.detail)}, status_code=exc.status_code)

    # Security headers on every response, as plain ASGI (BaseHTTPMiddleware costs a task per request).
    extra_headers = [
        (b"content-security-policy", _CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]

    def _with_headers(inner):
        async def asgi(scope, receive, send):
            if scope["type"] != "http":
                return await inner(scope, receive, send)

            async def send_with(message):
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", []), *extra_headers]
                await send(message)

            if scope["method"] == "POST" and scope["path"] == "/api/v1/alerts":
                # Webhooks straight to their handler: FastAPI's router and request machinery cost
                # more CPU per single-alert webhook than the handler itself (docs/scaling.md).
                try:
                    response = await accept_alerts(Request(scope, receive))
                except Problem as exc:
                    response = _problem_response(exc)
                return await response(scope, receive, send_with)
            return await inner(scope, receive, send_with)

        return asgi

    app.add_middleware(_HeadersMiddleware, wrap=_with_headers)

    # -- auth ------------------------------------------------------------------------------
    def need(role: str):
        async def dep(authorization: Annotated[str | None, Header()] = None) -> User:  # async: no thread hop
            return _user(authorization, role)

        return dep

    async def read_capped(request: Request) -> tuple[bytes, str | None]:
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

    # -- intake ----------------------------------------------------------------------------
    def _user(authorization: str | None, role: str) -> User:
        try:
            user = svc.tokens.user(authorization)
        except AuthError as exc:
            raise Problem(exc.status, exc.reason) from None
        if not allowed(user, role):
            raise Problem(403, f"user {user.name!r} (role {user.role}) may not do this; needs {role}")
        return user

    def _dead_letter(user: str, status: int, reason: str, body: bytes) -> None:
        kept = svc.cfg.dead_letters
        svc.store.dead_letter(user, status, reason, body, keep=kept.keep, keep_s=kept.keep_days * 86400)

    # -- intake ----------------------------------------------------------------------------
    # The hot path. The security-headers wrapper hands POST /api/v1/alerts to accept_alerts
    # directly (the route below documents it, and answers it when the app is mounted under a
    # prefix); the token is read here rather than through a FastAPI dependency, and the answer is
    # a ready JSON response rather than a value FastAPI validates and serializes again. Together
    # these were about half of an API process's CPU per single-alert webhook.
    async def accept_alerts(request: Request) -> Response:
        user = _user(request.headers.get("authorization"), "webhook")
        body, too_big = await read_capped(request)
        if too_big:  # keep what was read (up to the cap) with the reason
            await asyncio.to_thread(_dead_letter, user.name, 413, too_big, body)
            svc.metrics.dead_lettered.labels("413").inc()
            raise Problem(413, too_big)
        try:
            text, payload = parse_payload(body, svc.cfg.grouping.job_labels)
        except IntakeError as exc:
            await asyncio.to_thread(_dead_letter, user.name, exc.status, exc.reason, body)
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

    @app.post(
        "/api/v1/alerts",
        status_code=202,
        tags=["intake"],
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
        return await accept_alerts(request)

    @app.post("/api/v1/watch/steps", status_code=202, tags=["intake"])
    async def push_steps(request: Request, job: Annotated[str, Query(max_length=200)]) -> dict[str, Any]:
        """Per-rank step rows (the step recorder's CSV, header first) for the watcher (docs/watch.md)."""
        user = _user(request.headers.get("authorization"), "webhook")
        if svc.watcher is None:
            raise Problem(404, "this service has no [watch]: it does not follow jobs")
        body, too_big = await read_capped(request)
        if too_big:
            raise Problem(413, too_big)
        from forensic.harness.watch.pushed import PushError

        try:
            n = await asyncio.to_thread(svc.push_steps, job, body)
        except PushError as exc:
            raise Problem(422, str(exc)) from None
        return {"accepted_rows": n, "job": job, "user": user.name}

    @app.get("/api/v1/watch", tags=["intake"])
    def watch_status(_: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        """Each followed job: where it is read, steps, findings, and whether its source is read."""
        if svc.watcher is None:
            raise Problem(404, "this service has no [watch]: it does not follow jobs")
        return {"jobs": svc.watcher.status()}

    # -- investigations --------------------------------------------------------------------
    def _summary(r: dict[str, Any]) -> dict[str, Any]:
        return {
            k: r.get(k)
            for k in (
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
        }

    @app.get("/api/v1/investigations", tags=["investigations"])
    def list_investigations(
        _: Annotated[User, Depends(need("viewer"))],
        status: Literal[STATUSES] | None = None,  # type: ignore[valid-type]
        job: Annotated[str | None, Query(max_length=256)] = None,
        since: float | None = None,
        until: float | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> dict[str, Any]:
        """Investigations, newest first; filter by status, job and time (unix seconds)."""
        return {
            "investigations": [
                _summary(r)
                for r in svc.store.investigations(
                    status=status, job=job, since=since, until=until, limit=limit
                )
            ]
        }

    def _get(inv_id: str) -> dict[str, Any]:
        inv = svc.store.investigation(inv_id)
        if inv is None:
            raise Problem(404, f"no investigation {inv_id!r}")
        return inv

    @app.get("/api/v1/investigations/{inv_id}", tags=["investigations"])
    def get_investigation(inv_id: str, _: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        """Status, the forensic.report/v1 report (once concluded) and the alerts it grouped: the first
        ``alerts_shown`` (up to 1,000, by start time) of ``alerts_total``."""
        inv = _get(inv_id)
        alerts = svc.store.alerts_of(inv_id)  # the first 1,000 by start time
        return {
            **_summary(inv),
            "gpus": inv["gpus"],
            "report": _with_executions(inv, svc.live.with_archive(inv, inv["report"])),
            "alerts": alerts,
            "alerts_total": inv["alert_count"],
            "alerts_shown": len(alerts),
            "events": svc.store.events_after(inv_id, 0),
        }

    @app.get("/api/v1/investigations/{inv_id}/heatmap", tags=["investigations"])
    def get_heatmap(inv_id: str, _: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        """Per-rank step compute time, ranks x time bins."""
        from forensic.harness.service.views import heatmap

        inv = _get(inv_id)
        kept = svc.live.archive_of(inv)  # a live run's evidence, as read
        return (
            heatmap(str(kept) if kept else inv["bundle"])
            if inv.get("bundle")
            else {"available": False, "reason": "no evidence source"}
        )

    @app.get("/api/v1/investigations/{inv_id}/timeline", tags=["investigations"])
    def get_timeline(inv_id: str, _: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        """Per-host key signals over time (worst GPU per sample)."""
        from forensic.harness.service.views import timeline

        inv = _get(inv_id)
        kept = svc.live.archive_of(inv)
        return timeline(str(kept) if kept else inv["bundle"]) if inv.get("bundle") else {"available": False}

    @app.get("/api/v1/investigations/{inv_id}/archive", tags=["investigations"], response_class=FileResponse)
    def get_archive(inv_id: str, _: Annotated[User, Depends(need("viewer"))]) -> FileResponse:
        """What a live investigation read, as the bundle archive ``forensic collect`` writes."""
        kept = svc.live.archive_of(_get(inv_id))
        if kept is None:
            raise Problem(404, f"{inv_id} kept no archive (only live investigations do, once concluded)")
        return FileResponse(kept, media_type="application/gzip", filename=f"{inv_id}.tar.gz")

    @app.get(
        "/api/v1/investigations/{inv_id}/events", tags=["investigations"], response_class=StreamingResponse
    )
    async def stream_events(
        inv_id: str,
        _: Annotated[User, Depends(need("viewer"))],
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> StreamingResponse:
        """Server-sent events: hypotheses, tool calls, findings, verdict, decisions; ends when the run stops."""
        after = _event_id(last_event_id)
        await asyncio.to_thread(_get, inv_id)

        async def gen():
            nonlocal after
            idle = 0
            while True:
                rows = await asyncio.to_thread(svc.store.events_after, inv_id, after)
                for r in rows:
                    after = r["id"]
                    yield f"id: {r['id']}\nevent: {r['kind']}\ndata: {json.dumps(r['data'])}\n\n"
                inv = await asyncio.to_thread(svc.store.investigation, inv_id)
                if not rows and inv and inv["status"] not in ("queued", "running"):
                    idle += 1
                    if idle > 2:
                        yield f"event: close\ndata: {json.dumps({'status': inv['status']})}\n\n"
                        return
                else:
                    idle = 0
                yield ": keepalive\n\n" if not rows else ""
                await asyncio.sleep(0.25)

        return StreamingResponse(gen(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    def _event_id(header: str | None) -> int:
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

    # -- decisions -------------------------------------------------------------------------
    def _decide(inv_id: str, rp: str, verdict: str, body: DecisionBody, user: User) -> dict[str, Any]:
        try:
            p = decide(
                svc.store,
                svc.saver,
                inv_id,
                rp,
                verdict,
                content_hash=body.content_hash,
                reason=body.reason,
                where=svc.live.where,
                user=user.name,
            )
        except DecisionError as exc:
            raise Problem(exc.status, exc.reason) from None
        return {"proposal": p, "by": user.name}

    @app.post("/api/v1/investigations/{inv_id}/proposals/{rp}/approve", tags=["decisions"])
    def approve(
        inv_id: str, rp: str, body: DecisionBody, user: Annotated[User, Depends(need("approver"))]
    ) -> dict[str, Any]:
        """Approve exactly the proposal with this content hash, as the token's user."""
        return _decide(inv_id, rp, "approve", body, user)

    @app.post("/api/v1/investigations/{inv_id}/proposals/{rp}/reject", tags=["decisions"])
    def reject(
        inv_id: str, rp: str, body: DecisionBody, user: Annotated[User, Depends(need("approver"))]
    ) -> dict[str, Any]:
        """Reject the proposal with this content hash, as the token's user."""
        return _decide(inv_id, rp, "reject", body, user)

    @app.post("/api/v1/investigations/{inv_id}/proposals/{rp}/execute", tags=["decisions"])
    def execute(
        inv_id: str, rp: str, body: ExecuteBody, user: Annotated[User, Depends(need("approver"))]
    ) -> dict[str, Any]:
        """Carry out an approved proposal (or plan it with ``dry_run``), once, as the token's user.

        Needs ``executors`` in serve.toml. The execution gate checks that the approval gate approved
        exactly this content, recently, and that it has not run; every step goes to the audit log.
        """
        from forensic.harness.executors import ExecutionError

        inv = _get(inv_id)
        gate, state = _gate(inv, user)
        try:
            return gate.execute(inv["thread_id"], state, rp, dry_run=body.dry_run)
        except ExecutionError as exc:
            raise Problem(409, str(exc)) from None

    @app.post("/api/v1/investigations/{inv_id}/proposals/{rp}/undo", tags=["decisions"])
    def undo(
        inv_id: str, rp: str, body: UndoBody, user: Annotated[User, Depends(need("approver"))]
    ) -> dict[str, Any]:
        """Reverse an executed proposal (a drained Slurm node resumes, a cordoned node is uncordoned),
        as the token's user, where its executor can; the same gate, ledger and audit as
        ``forensic execute --undo``, which reverses what this ran and the other way round."""
        from forensic.harness.executors import ExecutionError

        inv = _get(inv_id)
        gate, state = _gate(inv, user, reason_given=body.reason)
        try:
            return gate.undo(inv["thread_id"], state, rp)
        except ExecutionError as exc:
            raise Problem(409, str(exc)) from None

    def _gate(inv: dict[str, Any], user: User, reason_given: str | None = None) -> tuple[Any, dict[str, Any]]:
        """The execution gate the CLI builds, on this store: its ledger, its audit table's approvals."""
        from forensic.harness.executors import ExecutionError, ExecutionGate, load_config

        if svc.cfg.executors is None:
            raise Problem(
                409,
                "this service carries nothing out: name an executors.toml in serve.toml (executors = ...)",
            )
        tup = svc.saver.get_tuple({"configurable": {"thread_id": inv["thread_id"]}})
        if tup is None:
            raise Problem(409, f"investigation {inv['id']} has no checkpoint to execute from")
        try:
            gate = ExecutionGate(
                load_config(svc.cfg.executors),
                audit_sink=audit_sink(svc.store, inv["id"], reason_given),
                actor=user.name,
                approval_records=TableApprovals(svc.store, inv["id"]),
                ledger=svc.ledger(),
            )
        except ExecutionError as exc:
            raise Problem(409, str(exc)) from None
        return gate, tup.checkpoint["channel_values"]

    def _with_executions(inv: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any] | None:
        """The report with each proposal's execution (state, result, undo steps) from the shared ledger,
        whichever surface ran it; the report itself is as the investigation concluded."""
        from forensic.harness.executors import ExecutionError, annotate

        if not report or not report.get("proposals") or not inv.get("thread_id"):
            return report
        try:
            return annotate(report, svc.ledger().for_thread(inv["thread_id"]))
        except ExecutionError as exc:
            raise Problem(503, str(exc)) from None

    # -- chat ------------------------------------------------------------------------------
    @app.post("/api/v1/chat", tags=["chat"])
    def chat(body: ChatBody, user: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        """Ask about an investigation's incident and follow up; every answer cites its evidence.

        A conversation is one checkpointed thread in the service's database (pass its id back to
        continue it). Messages never decide anything: approvals go through the approve endpoint,
        as the token's user.
        """
        import uuid

        from forensic.harness.conversation import Conversation
        from forensic.sandbox import ForensicError

        inv = _get(body.investigation)
        if not inv.get("bundle"):
            raise Problem(
                409, f"investigation {body.investigation} has no evidence to talk about ({inv['status']})"
            )
        thread = body.conversation or f"chat-{body.investigation}-{uuid.uuid4().hex[:8]}"
        if not thread.startswith(f"chat-{body.investigation}-"):
            raise Problem(409, f"conversation {thread!r} is not about {body.investigation}")
        try:

            def on_page(p: dict[str, Any]) -> str:
                return (
                    f"Approve on {body.investigation}'s page, or POST /api/v1/investigations/{body.investigation}"
                    f"/proposals/{p['id']}/approve with content_hash {p['content_hash']} as an approver "
                    "(a message never approves)"
                )

            # A live run is talked about from what it read (its archive), else from its fleet window.
            kept = svc.live.archive_of(inv)
            conv = Conversation(
                str(kept) if kept else svc.live.where(inv),
                checkpointer=svc.saver,
                limits=svc.cfg.budgets,
                thread_id=thread,
                approve_hint=on_page,
            )
            if body.conversation and not conv.state():
                raise Problem(404, f"no conversation {thread!r}")
            answer = conv.ask(body.question)
        except ForensicError as exc:
            raise Problem(409, f"cannot talk about {body.investigation}: {exc}") from None
        # The conversation's own ledger: its ids are not the investigation report's, so the cited
        # records travel with the answer.
        cited = {e for c in answer.claims for e in c.evidence} | set(answer.new_evidence)
        records = {r["id"]: r for r in conv.records if r["id"] in cited}
        return {
            "conversation": thread,
            "by": user.name,
            "answer": answer.render(),
            "records": records,
            **answer.model_dump(mode="json"),
        }

    # -- audit, health, metrics, who am I --------------------------------------------------
    @app.get("/api/v1/audit", tags=["audit"])
    def audit(
        _: Annotated[User, Depends(need("viewer"))],
        investigation: str | None = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    ) -> dict[str, Any]:
        """The append-only audit log, newest first: who, when, what, why, and the outcome."""
        return {"entries": svc.store.audit_log(investigation=investigation, limit=limit)}

    @app.get("/api/v1/me", tags=["audit"])
    def me(user: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
        # The page offers Dry run and Execute only where they can work: an approver, and executors configured.
        return {
            "name": user.name,
            "role": user.role,
            "can_approve": allowed(user, "approver"),
            "can_execute": allowed(user, "approver") and svc.cfg.executors is not None,
        }

    @app.get("/api/v1/dead-letters", tags=["intake"])
    def dead_letters(
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

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, Any]:
        svc.store.counts()  # the database answers
        return {"ok": True, "time": time.time()}

    @app.get("/metrics", tags=["health"])
    def metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(svc.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # -- the page --------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        with resources.as_file(_STATIC / "index.html") as p:
            return FileResponse(p, media_type="text/html", headers={"Cache-Control": "no-store"})

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        allowed_files = {"app.js": "text/javascript", "app.css": "text/css", "favicon.svg": "image/svg+xml"}
        if name not in allowed_files:
            raise Problem(404, "no such file")
        with resources.as_file(_STATIC / name) as p:
            return FileResponse(p, media_type=allowed_files[name])

    return app
