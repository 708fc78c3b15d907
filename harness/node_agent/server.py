"""The node agent's HTTP server: a Starlette app over a :class:`~forensic.sandbox.agent.Agent`, run
by uvicorn (``forensic agent``, tests, ``bench fleet``).

The agent's API, its limits and its refusals are :mod:`forensic.sandbox.agent` (what a token holder
may ask of a host); this module only carries them over HTTP: it reads a capped body within a
deadline, bounds the request head, and maps errors to statuses with
:func:`~forensic.sandbox.agent.refusal`. Starlette and uvicorn are core dependencies: a GPU node
needs neither FastAPI nor matplotlib.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forensic.sandbox.agent import (
    MAX_HEAD_BYTES,
    Agent,
    AgentConfigError,
    parse_listen,
    refusal,
)
from forensic.sandbox.agent import _Refused as Refused
from forensic.sandbox.errors import ForensicError


def make_app(agent: Agent) -> Any:
    """The Starlette app serving ``agent``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    limits = agent.limits

    def refused(r: Refused) -> JSONResponse:
        return JSONResponse(
            {"error": {"type": r.type, "message": r.message}}, status_code=r.status, headers=r.headers
        )

    async def read_body(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limits.max_request_bytes):
            raise Refused(413, "RequestTooLarge", f"request body over {limits.max_request_bytes} bytes")
        buf = bytearray()

        async def collect() -> None:
            async for chunk in request.stream():
                buf.extend(chunk)
                if len(buf) > limits.max_request_bytes:
                    raise Refused(
                        413, "RequestTooLarge", f"request body over {limits.max_request_bytes} bytes"
                    )

        try:
            await asyncio.wait_for(collect(), timeout=limits.body_timeout_s)
        except TimeoutError:
            raise Refused(
                408, "RequestTimeout", f"request body not received within {limits.body_timeout_s:g} s"
            ) from None
        except ClientDisconnect:
            raise Refused(400, "ClientDisconnect", "client went away") from None
        return bytes(buf)

    async def endpoint(request: Request) -> JSONResponse:
        op = request.path_params.get("op", "info")
        try:
            # Rate first: a client guessing tokens is slowed down like any other.
            agent.check_rate(request.client.host if request.client else "?")
            agent.check_auth(request.headers.get("authorization"))
            body = agent.parse_body(await read_body(request)) if request.method == "POST" else {}
            try:
                result = await run_in_threadpool(agent.handle, op, body)
            except ForensicError as exc:
                status, payload = refusal(exc)
                return JSONResponse(payload, status_code=status)
        except Refused as r:
            return refused(r)
        return JSONResponse(result)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    async def unknown(request: Request) -> JSONResponse:
        try:
            agent.check_auth(request.headers.get("authorization"))
        except Refused as r:
            return refused(r)
        return JSONResponse({"error": {"type": "NotFoundError", "message": "no such route"}}, status_code=404)

    routes = [Route("/v1/health", health, methods=["GET"]), Route("/v1/info", endpoint, methods=["GET"])]
    routes += [Route("/v1/{op:str}", endpoint, methods=["POST"])]
    app = Starlette(routes=routes, middleware=[Middleware(_HeadLimit, limit=MAX_HEAD_BYTES)])

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return await unknown(request)

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)
    return app


class _HeadLimit:
    """ASGI middleware: 431 for a request whose line and headers exceed ``limit`` bytes.

    h11's own cap only applies while a head is still arriving; one that arrives whole in a single
    read is parsed whatever its size, so the total is checked here too, before any route runs.
    """

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or [])
            if size > self.limit:
                from starlette.responses import JSONResponse

                body = {
                    "error": {
                        "type": "RequestHeaderTooLarge",
                        "message": f"request line and headers over {self.limit} bytes",
                    }
                }
                await JSONResponse(body, status_code=431)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _uvicorn_config(
    agent: Agent, *, limit_concurrency: int, ssl_certfile: str | None = None, ssl_keyfile: str | None = None
) -> Any:
    """The uvicorn settings every agent runs with, loaded (TLS files read) so that they fail here."""
    import ssl

    import uvicorn

    config = uvicorn.Config(
        make_app(agent),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=5,
        limit_concurrency=limit_concurrency,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        # h11, not httptools: h11 bounds the request line and headers (httptools took 100 KB of them).
        http="h11",
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        # No proxy headers: X-Forwarded-For from loopback would otherwise choose the rate-limit bucket.
        proxy_headers=False,
        server_header=False,
    )
    try:
        config.load()
    except (ssl.SSLError, OSError) as exc:
        raise AgentConfigError(
            f"--tls-cert {ssl_certfile} / --tls-key {ssl_keyfile}: cannot load them "
            f"({getattr(exc, 'strerror', None) or exc})"
        ) from None
    return config


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); AgentConfigError (the address and why) when it cannot be had."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise AgentConfigError(f"cannot listen on {_address(host, port)}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except (OSError, OverflowError) as exc:
        sock.close()
        raise AgentConfigError(
            f"cannot listen on {_address(host, port)}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    return sock


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class AgentServer:
    """A uvicorn server for ``agent`` on a background thread (tests, ``bench fleet``, demos).

    ``with AgentServer(agent) as srv: srv.url`` binds 127.0.0.1 on a free port and stops on exit.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_certfile: str | None = None,
        ssl_keyfile: str | None = None,
    ) -> None:
        import uvicorn

        self.agent = agent
        config = _uvicorn_config(
            agent, limit_concurrency=64, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile
        )
        self._sock = _bind(host, port)
        self.port = self._sock.getsockname()[1]
        scheme = "https" if ssl_certfile else "http"
        self.url = f"{scheme}://{_address(host, self.port)}"
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name=f"forensic-agent-{self.port}",
            daemon=True,
        )

    def start(self) -> AgentServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise AgentConfigError(f"agent on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> AgentServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def check_tls(ssl_certfile: str | None, ssl_keyfile: str | None) -> None:
    """AgentConfigError unless both TLS files are given and exist, or neither is."""
    for label, f in (("--tls-cert", ssl_certfile), ("--tls-key", ssl_keyfile)):
        if f is not None and not Path(f).is_file():
            raise AgentConfigError(f"{label} {f}: no such file")
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise AgentConfigError("--tls-cert and --tls-key go together")


def serve(
    agent: Agent,
    listen: str,
    *,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``agent`` in the foreground until SIGINT or SIGTERM (``forensic agent``).

    Everything that can refuse a start (the address, the TLS files, the bind) runs first and raises
    AgentConfigError; ``on_ready`` then gets the URL with the port really bound (``:0`` picks one).
    """
    import uvicorn

    host, port = parse_listen(listen)
    check_tls(ssl_certfile, ssl_keyfile)
    config = _uvicorn_config(agent, limit_concurrency=256, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile)
    sock = _bind(host, port)
    try:
        url = f"{'https' if ssl_certfile else 'http'}://{_address(host, sock.getsockname()[1])}"
        if on_ready is not None:
            on_ready(url)
        server = uvicorn.Server(config)
        server.run(sockets=[sock])
        if not server.started:
            raise AgentConfigError(f"the agent on {url} did not start")
    finally:
        sock.close()
