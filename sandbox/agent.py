"""The node agent: one machine's ``Host`` seam served read-only over HTTP.

``forensic agent`` runs this on each GPU node (over :class:`forensic.sandbox.LiveHost`) or, for
tests and demos, over one host of a recorded bundle (:class:`forensic.sandbox.ReplayHost`).
:class:`forensic.sandbox.remote.RemoteHost` is the client; tools cannot tell it from a local host.

The API (JSON in, JSON out; every route but ``/v1/health`` needs ``Authorization: Bearer <token>``)::

    GET  /v1/health                          {"ok": true}                      (no token: for probes)
    GET  /v1/info                            {"name", "mode": "live"|"replay", "api": 1}
    POST /v1/read         {"path", "snapshot"?}  {"text", "truncated"}
    POST /v1/list         {"path", "snapshot"?}  {"entries": [...]}
    POST /v1/exists       {"path", "snapshot"?}  {"exists": bool}
    POST /v1/run          {"argv", "snapshot"?}  {"text", "truncated"}
    POST /v1/has_command  {"argv", "snapshot"?}  {"has": bool}
    POST /v1/nvml         {"snapshot"?}          {"nvml": {...} | null}

``snapshot`` is ``now`` (default) or ``before`` (the window-start snapshot, which only a replayed
host has). A refusal is ``{"error": {"type": <error class>, "message": ...}}`` with the status
below; the client raises the same typed error a local host would have raised:

    401 no or wrong token         403 PathEscapeError, NotAllowedError   404 NotFoundError
    408 request body too slow     413 request body too large             422 malformed request
    424 ToolError, CorruptInputError (the host could not answer)         429 rate limit (Retry-After)
    431 request line and headers too large (400 from the HTTP parser while they still arrive)

Malformed includes a body nested deeper than :data:`MAX_JSON_DEPTH` or holding an integer of more
than :data:`MAX_INT_DIGITS` digits, both refused before the body is parsed. The rate limit is keyed
on the TCP peer; proxy headers (``X-Forwarded-For``) are ignored.

Why the limits: the agent runs on every GPU node with read access to sysfs; a token holder can
ask nothing off the host's allowlist, a stranger can ask nothing at all, and no client can make it
spend unbounded memory (request and response caps), unbounded time (body deadline, command
timeout in the host) or the node's CPU (per-client token bucket).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from forensic.sandbox.errors import (
    BundleError,
    CorruptInputError,
    ForensicError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
    ToolArgumentError,
    ToolError,
)
from forensic.sandbox.host import HOST_COMMANDS, Host, command_file

API_VERSION = 1
#: Bytes a request body may hold: a path or an argv, never more.
MAX_REQUEST_BYTES = 16 * 1024
#: Bytes the request line and headers together may hold (h11 answers 400 beyond it).
MAX_HEAD_BYTES = 16 * 1024
#: Deepest JSON nesting and longest integer a request body may hold: the API has neither.
MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 32
#: Bytes of text one answer may carry; longer outputs are cut (and say so), like LiveHost's cap.
MAX_RESPONSE_TEXT = 4 * 1024 * 1024
#: Seconds a client may take to send its request body (slow clients are cut off).
BODY_TIMEOUT_S = 5.0
#: Per-client token bucket: sustained requests per second, and the burst allowed.
RATE_PER_S = 50.0
RATE_BURST = 200
#: Longest path and argv the agent will look at (real sysfs paths are far shorter).
MAX_PATH_CHARS = 1024
MAX_ARGV_ITEMS = 8
MAX_ARG_CHARS = 256
#: Shortest bearer token accepted from a token file.
MIN_TOKEN_CHARS = 16

#: error class -> HTTP status. The client maps the class name back to the same error.
ERROR_STATUS: dict[type[ForensicError], int] = {
    PathEscapeError: 403,
    NotAllowedError: 403,
    NotFoundError: 404,
    ToolArgumentError: 422,
    ToolError: 424,
    CorruptInputError: 424,
}


class AgentConfigError(BundleError):
    """The agent cannot start: unreadable, weak or readable-by-others token file, bad listen address,
    missing or unloadable TLS files, an address it cannot bind."""


@dataclass(frozen=True)
class AgentLimits:
    """The caps one agent enforces."""

    max_request_bytes: int = MAX_REQUEST_BYTES
    max_response_text: int = MAX_RESPONSE_TEXT
    body_timeout_s: float = BODY_TIMEOUT_S
    rate_per_s: float = RATE_PER_S
    rate_burst: int = RATE_BURST


def read_token_file(path: Path | str, *, private: bool = False) -> str:
    """The bearer token in ``path`` (surrounding whitespace removed); AgentConfigError when unusable.

    ``private``: the file must not be readable or writable by its group or others (a server's own
    secret, like ssh's private keys); the refusal says the ``chmod`` that fixes it.
    """
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
        mode = os.stat(path).st_mode & 0o777
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentConfigError(
            f"token file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    if private and mode & 0o077:
        raise AgentConfigError(
            f"token file {path}: permissions {mode:04o} are too open (other users can read "
            f"or replace the token); run chmod 600 {path}"
        )
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise AgentConfigError(
            f"token file {path}: the token must be one word of at least {MIN_TOKEN_CHARS} characters"
        )
    return token


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) -> (host, port); AgentConfigError otherwise."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AgentConfigError(f"--listen {text!r}: expected HOST:PORT, e.g. 0.0.0.0:9401")
    return host, int(port)


class _Buckets:
    """Per-client token buckets (client = peer address)."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when the request may go ahead, else seconds until it may."""
        now = self.clock()
        with self._lock:
            if len(self._state) > 10_000:  # forget idle clients rather than grow without bound
                self._state = {k: v for k, v in self._state.items() if now - v[1] < 60}
            tokens, last = self._state.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._state[client] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._state[client] = (tokens - 1.0, now)
            return 0.0


class _Refused(Exception):
    def __init__(self, status: int, type_: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.headers = status, type_, message, headers or {}


class _LongInt(Exception):
    pass


def _small_int(text: str) -> int:
    # Checked before int(): converting thousands of digits is quadratic, and past 4,300 a ValueError.
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInt
    return int(text)


def _json_depth(raw: bytes) -> int:
    """The deepest bracket nesting in ``raw``, outside strings: checked before parsing, so that a
    hostile body is refused by its shape rather than by the parser's recursion limit."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _has_command(host: Host, argv: Sequence[str]) -> bool:
    command_file(argv, HOST_COMMANDS)  # off the allowlist: NotAllowedError, never False
    probe = getattr(host, "has_command", None)  # a replay host knows what it recorded
    if callable(probe):
        return bool(probe(argv))
    return shutil.which(argv[0], path="/usr/sbin:/usr/bin:/sbin:/bin") is not None


class Agent:
    """The request handling, independent of the HTTP framework's app object (see :func:`make_app`)."""

    def __init__(
        self,
        hosts: dict[str, Host | None],
        *,
        token: str,
        mode: Literal["live", "replay"],
        limits: AgentLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if len(token) < MIN_TOKEN_CHARS:
            raise AgentConfigError(f"the token must have at least {MIN_TOKEN_CHARS} characters")
        self.hosts = hosts  # snapshot -> host; a live agent has no "before"
        now = hosts.get("now")
        self.name = now.name if now is not None else "?"
        self.mode = mode
        self.limits = limits or AgentLimits()
        self._token = token.encode()
        self._buckets = _Buckets(self.limits.rate_per_s, self.limits.rate_burst, clock)

    # -- checks, in the order they run -------------------------------------------------------
    def check_auth(self, header: str | None) -> None:
        scheme, _, given = (header or "").partition(" ")
        # compare_digest on bytes of any length: the time taken says nothing about the token.
        ok = scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), self._token
        )
        if not ok:
            raise _Refused(
                401, "Unauthorized", "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
            )

    def check_rate(self, client: str) -> None:
        wait = self._buckets.take(client)
        if wait > 0:
            raise _Refused(
                429,
                "RateLimited",
                f"too many requests; retry in {wait:.2f} s",
                {"Retry-After": str(max(1, int(wait + 0.999)))},
            )

    def parse_body(self, raw: bytes) -> dict[str, Any]:
        if not raw:
            return {}
        depth = _json_depth(raw)
        if depth > MAX_JSON_DEPTH:
            raise _Refused(
                422, "ToolArgumentError", f"request body nests deeper than {MAX_JSON_DEPTH} levels"
            )
        try:
            body = json.loads(raw, parse_int=_small_int)
        except _LongInt:
            raise _Refused(
                422, "ToolArgumentError", f"request body has an integer of more than {MAX_INT_DIGITS} digits"
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Refused(422, "ToolArgumentError", "request body is not JSON") from None
        if not isinstance(body, dict):
            raise _Refused(422, "ToolArgumentError", "request body must be a JSON object")
        return body

    def _host(self, body: dict[str, Any]) -> Host:
        snap = body.get("snapshot", "now")
        if snap not in ("now", "before"):
            raise ToolArgumentError(f"snapshot must be 'now' or 'before', not {str(snap)[:20]!r}")
        host = self.hosts.get(snap)
        if host is None:
            raise NotFoundError(f"{self.name}: a {self.mode} host has no {snap!r} snapshot")
        return host

    @staticmethod
    def _path(body: dict[str, Any]) -> str:
        path = body.get("path")
        if not isinstance(path, str) or not path:
            raise ToolArgumentError("'path' must be a non-empty string")
        if len(path) > MAX_PATH_CHARS:
            raise ToolArgumentError(f"'path' is longer than {MAX_PATH_CHARS} characters")
        return path

    @staticmethod
    def _argv(body: dict[str, Any]) -> list[str]:
        argv = body.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ToolArgumentError("'argv' must be a non-empty list of strings")
        if len(argv) > MAX_ARGV_ITEMS or any(len(a) > MAX_ARG_CHARS or "\x00" in a for a in argv):
            raise NotAllowedError(
                f"argv of {len(argv)} items is not on the allowlist (too long, or a NUL byte)"
            )
        return argv

    def _text(self, text: str) -> dict[str, Any]:
        cap = self.limits.max_response_text
        data = text.encode("utf-8")
        if len(data) <= cap:
            return {"text": text, "truncated": False}
        return {"text": data[:cap].decode("utf-8", errors="ignore"), "truncated": True}

    # -- the operations --------------------------------------------------------------------
    def handle(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """Run one operation; ForensicError subclasses are the typed refusals."""
        if op == "info":
            return {"name": self.name, "mode": self.mode, "api": API_VERSION}
        host = self._host(body)
        if op == "read":
            return self._text(host.read(self._path(body)))
        if op == "list":
            return {"entries": list(host.list(self._path(body)))}
        if op == "exists":
            return {"exists": bool(host.exists(self._path(body)))}
        if op == "run":
            return self._text(host.run(self._argv(body)))
        if op == "has_command":
            return {"has": _has_command(host, self._argv(body))}
        if op == "nvml":
            return {"nvml": host.nvml()}
        raise NotFoundError(f"no operation {op!r}")


def refusal(exc: ForensicError) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for a typed refusal."""
    for cls in type(exc).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls], {"error": {"type": type(exc).__name__, "message": str(exc)[:2000]}}
    return 424, {"error": {"type": "ToolError", "message": str(exc)[:2000]}}


def make_app(agent: Agent) -> Any:
    """The Starlette app serving ``agent``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    limits = agent.limits

    def refused(r: _Refused) -> JSONResponse:
        return JSONResponse(
            {"error": {"type": r.type, "message": r.message}}, status_code=r.status, headers=r.headers
        )

    async def read_body(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limits.max_request_bytes):
            raise _Refused(413, "RequestTooLarge", f"request body over {limits.max_request_bytes} bytes")
        buf = bytearray()

        async def collect() -> None:
            async for chunk in request.stream():
                buf.extend(chunk)
                if len(buf) > limits.max_request_bytes:
                    raise _Refused(
                        413, "RequestTooLarge", f"request body over {limits.max_request_bytes} bytes"
                    )

        try:
            await asyncio.wait_for(collect(), timeout=limits.body_timeout_s)
        except TimeoutError:
            raise _Refused(
                408, "RequestTimeout", f"request body not received within {limits.body_timeout_s:g} s"
            ) from None
        except ClientDisconnect:
            raise _Refused(400, "ClientDisconnect", "client went away") from None
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
        except _Refused as r:
            return refused(r)
        return JSONResponse(result)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    async def unknown(request: Request) -> JSONResponse:
        try:
            agent.check_auth(request.headers.get("authorization"))
        except _Refused as r:
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


def live_agent(token: str, *, name: str | None = None, limits: AgentLimits | None = None) -> Agent:
    """An agent over this machine (``sandbox.LiveHost``); it has no ``before`` snapshot."""
    from forensic.sandbox.live import LiveHost

    return Agent({"now": LiveHost(name)}, token=token, mode="live", limits=limits)


def replay_agent(bundle: Any, host: str, token: str, *, limits: AgentLimits | None = None) -> Agent:
    """An agent over one host of a recorded bundle (a ``Bundle`` or a path to one)."""
    from forensic.sandbox.bundle import Bundle

    b = bundle if isinstance(bundle, Bundle) else Bundle(bundle)
    now = b.host(host)
    before = b.host(host, "before")
    return Agent({"now": now, "before": before}, token=token, mode="replay", limits=limits)


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
