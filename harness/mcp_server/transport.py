"""Run the MCP server over stdio (a client starts ``forensic mcp`` itself) or streamable HTTP.

Over HTTP only the protocol revisions with sessions (an ``initialize`` handshake, then an
``Mcp-Session-Id`` on every request) are served: budgets, evidence ledgers and reports belong to a
session, and the sessionless 2026-07-28 revision would put every such client into one. A request
at a sessionless revision gets the JSON-RPC error ``-32022`` naming the revisions served; the SDK's
client (and any client that speaks both) then falls back to the handshake.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp_types.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from .server import MAX_SESSIONS, SESSION_IDLE_S

#: Largest HTTP request body accepted (a tool call is a few hundred bytes).
MAX_HTTP_BODY = 64 * 1024


def serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def serve_http(server: Server, host: str, port: int, token: str | None = None) -> None:
    """Streamable HTTP at ``http://HOST:PORT/mcp``; with ``token``, every request needs it as a bearer."""
    import uvicorn

    app: Any = server.streamable_http_app(
        host=host,
        max_request_body_size=MAX_HTTP_BODY,
        max_sessions=MAX_SESSIONS,
        session_idle_timeout=SESSION_IDLE_S,
    )
    app = _SessionsOnly(app)
    if token is not None:
        app = _BearerGate(app, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")


class _BearerGate:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` matches (constant-time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self._expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)


class _SessionsOnly:
    """ASGI middleware: a request at a protocol revision without sessions is told which are served."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            requested = dict(scope.get("headers") or []).get(b"mcp-protocol-version")
            if requested is not None and requested.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                version = requested.decode("latin-1")[:40]
                error = {
                    "code": UNSUPPORTED_PROTOCOL_VERSION,
                    "message": f"protocol version {version!r} has no sessions; this server serves "
                    f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)} (initialize first)",
                    "data": {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version},
                }
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
