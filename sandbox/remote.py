"""The client side of the node agent: a :class:`Host` that reads another machine over HTTP.

:class:`RemoteHost` answers ``read``, ``list``, ``exists``, ``run``, ``nvml`` (and
``has_command``) by asking a ``forensic agent`` (:mod:`forensic.sandbox.agent`). A refusal comes
back as the same typed error a local host raises (``PathEscapeError``, ``NotAllowedError``,
``NotFoundError``, ...), so tools cannot tell a remote host from a local one. Everything that is
the agent's fault, not the request's (down, past the per-call timeout, a wrong token, an answer
that is too large or not the agent's JSON), is a :class:`RemoteHostError`: it costs that host's
evidence, never the investigation.

Retries (tenacity, the project's one retry layer) cover connection errors, 5xx and 429 (honouring
``Retry-After``, capped); a timeout is not retried, because a slow agent would only be slow again.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable, Sequence
from typing import Any, Literal

import httpx
from forensic.sandbox.errors import (
    CorruptInputError,
    ForensicError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
    RemoteHostError,
    ToolArgumentError,
    ToolError,
)
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity import sleep as tenacity_sleep

#: Seconds one call may take, all phases together.
CALL_TIMEOUT_S = 15.0
#: Attempts per call (the first included) on connection errors, 5xx and 429.
ATTEMPTS = 3
#: Bytes of one answer; a larger one is garbage from a broken or hostile agent.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Longest wait a Retry-After may ask for.
MAX_RETRY_AFTER_S = 5.0

#: error type names the agent may send -> the error raised here (anything else: RemoteHostError).
_TYPED: dict[str, type[ForensicError]] = {
    c.__name__: c
    for c in (
        PathEscapeError,
        NotAllowedError,
        NotFoundError,
        ToolArgumentError,
        ToolError,
        CorruptInputError,
    )
}


class _Retryable(Exception):
    """A 5xx or 429 answer, or a connection error: worth another attempt."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RemoteHost:
    """A machine served by ``forensic agent`` at ``url``, as a :class:`forensic.sandbox.Host`."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        name: str | None = None,
        snapshot: Literal["now", "before"] = "now",
        timeout_s: float = CALL_TIMEOUT_S,
        attempts: int = ATTEMPTS,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        verify: bool | str | ssl.SSLContext = True,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.snapshot = snapshot
        self.timeout_s = timeout_s
        self.attempts = max(1, attempts)
        self.max_response_bytes = max_response_bytes
        if isinstance(verify, str):  # a CA bundle file: trust exactly it
            verify = ssl.create_default_context(cafile=verify)
        self._client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout_s),
            verify=verify,
            transport=transport,
            follow_redirects=False,
        )
        self._sleep = sleep
        self.name = name if name is not None else str(self._call("GET", "info").get("name") or "")
        if not self.name:
            raise RemoteHostError(f"agent {self.url}: did not say its host name")

    def info(self) -> dict[str, Any]:
        """What the agent says about itself: ``name``, ``mode`` (live or replay), ``api``."""
        return self._call("GET", "info")

    # -- the Host seam ---------------------------------------------------------------------
    def read(self, path: str) -> str:
        return self._text(self._call("POST", "read", {"path": path}))

    def list(self, path: str) -> list[str]:
        entries = self._call("POST", "list", {"path": path}).get("entries")
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise self._garbage("'entries' is not a list of names")
        return entries

    def exists(self, path: str) -> bool:
        got = self._call("POST", "exists", {"path": path}).get("exists")
        if not isinstance(got, bool):
            raise self._garbage("'exists' is not a boolean")
        return got

    def run(self, argv: Sequence[str]) -> str:
        return self._text(self._call("POST", "run", {"argv": list(argv)}))

    def has_command(self, argv: Sequence[str]) -> bool:
        got = self._call("POST", "has_command", {"argv": list(argv)}).get("has")
        if not isinstance(got, bool):
            raise self._garbage("'has' is not a boolean")
        return got

    def nvml(self) -> dict[str, Any] | None:
        got = self._call("POST", "nvml", {}).get("nvml", ...)
        if got is not None and not isinstance(got, dict):
            raise self._garbage("'nvml' is neither an object nor null")
        return got

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RemoteHost:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteHost({self.url!r}, name={getattr(self, 'name', None)!r}, snapshot={self.snapshot!r})"

    # -- transport -------------------------------------------------------------------------
    def _garbage(self, what: str) -> RemoteHostError:
        return RemoteHostError(f"agent {self.url}: answered garbage ({what})")

    def _text(self, body: dict[str, Any]) -> str:
        text = body.get("text")
        if not isinstance(text, str):
            raise self._garbage("'text' is not a string")
        return text

    def _call(self, method: str, op: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        if payload is not None:
            payload = {**payload, "snapshot": self.snapshot}

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            after = getattr(exc, "retry_after", None)
            if after is not None:
                return min(MAX_RETRY_AFTER_S, after)
            return min(2.0, 0.1 * 2 ** (state.attempt_number - 1))

        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait,
            reraise=True,
            retry=retry_if_exception(lambda e: isinstance(e, _Retryable)),
            sleep=self._sleep or tenacity_sleep,
        )
        try:
            return retrying(self._once, method, op, payload)
        except _Retryable as exc:
            raise RemoteHostError(f"agent {self.url}: {exc} (after {self.attempts} attempts)") from None

    def _once(self, method: str, op: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        try:
            with self._client.stream(method, f"/v1/{op}", json=payload if method == "POST" else None) as resp:
                raw = bytearray()
                for chunk in resp.iter_bytes():
                    raw += chunk
                    if len(raw) > self.max_response_bytes:
                        raise RemoteHostError(
                            f"agent {self.url}: answer larger than {self.max_response_bytes} bytes"
                        )
                status, headers = resp.status_code, resp.headers
        except httpx.TimeoutException:
            raise RemoteHostError(f"agent {self.url}: no answer within {self.timeout_s:g} s") from None
        except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise _Retryable(f"unreachable ({type(exc).__name__}: {exc})") from None
        except httpx.HTTPError as exc:
            raise RemoteHostError(f"agent {self.url}: {type(exc).__name__}: {exc}") from None
        if status == 429 or status >= 500:
            after = headers.get("retry-after")
            raise _Retryable(f"HTTP {status}", float(after) if after and after.isdigit() else None)
        if status == 401:
            raise RemoteHostError(f"agent {self.url}: refused our token (HTTP 401)")
        try:
            body = json.loads(bytes(raw))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._garbage(f"HTTP {status}, not JSON") from None
        if not isinstance(body, dict):
            raise self._garbage(f"HTTP {status}, not a JSON object")
        if status == 200:
            return body
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            cls = _TYPED.get(str(err.get("type")))
            if cls is not None:
                raise cls(err["message"])
            raise RemoteHostError(f"agent {self.url}: HTTP {status}: {err['message'][:300]}")
        raise self._garbage(f"HTTP {status} without an error object")
