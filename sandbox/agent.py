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

import hmac
import json
import os
import shutil
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
    """The request handling, independent of the HTTP framework's app object (the HTTP server is a
    surface: :mod:`forensic.harness.node_agent`)."""

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
