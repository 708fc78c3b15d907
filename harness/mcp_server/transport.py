"""Run the MCP server over stdio (a client starts ``forensic mcp`` itself) or streamable HTTP."""

from __future__ import annotations

import hmac
from typing import Any

import anyio
from mcp.server.lowlevel import Server

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

    app: Any = server.streamable_http_app(host=host, max_request_body_size=MAX_HTTP_BODY)
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
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)
