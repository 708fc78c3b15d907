"""The HTTP surface: one FastAPI app with a router per area (``routes/``).

Every error is a JSON ``{"detail": "one line"}`` with the right status, never a 500 for bad
input. Request bodies are capped (``max_body_bytes``); a refused webhook body is kept in the
dead-letter table with why it was refused. Every response carries the security headers; the
page loads nothing from elsewhere.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from forensic.harness.service.routes import approvals, auth, chat, health, intake, investigations, page
from forensic.harness.service.routes.common import Problem
from forensic.harness.service.service import Service
from starlette.exceptions import HTTPException as StarletteHTTPException

_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", _CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]

__all__ = ["Problem", "create_app"]


class SecurityHeaders:
    """The security headers on every HTTP response, as plain ASGI (BaseHTTPMiddleware costs a task per request)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with)


def _problem(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Problem)
    return JSONResponse(
        {"detail": exc.detail},
        status_code=exc.status,
        headers={"WWW-Authenticate": "Bearer"} if exc.status == 401 else None,
    )


def _invalid(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    e = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(p) for p in e.get("loc", ()))
    return JSONResponse({"detail": f"{where}: {e.get('msg')}"[:300]}, status_code=422)


def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return JSONResponse({"detail": str(exc.detail)}, status_code=exc.status_code)


def create_app(svc: Service, *, manage_lifecycle: bool = True) -> FastAPI:
    """The app serving ``svc``; with ``manage_lifecycle`` it starts and stops the service with itself."""

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
    app.state.svc = svc
    app.add_exception_handler(Problem, _problem)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_middleware(SecurityHeaders)
    for area in (intake, investigations, approvals, chat, auth, health, page):
        app.include_router(area.router)
    describe = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = intake.add_webhook_to_openapi(describe())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
