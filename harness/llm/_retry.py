"""The one retry layer around model calls: what is worth retrying, how long to wait, when to stop.

The openai client's own retries are off (``max_retries=0``) so that this is the only place a
request is repeated: two stacked layers would multiply attempts and ignore each other's budgets.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Any

import openai
from tenacity import RetryCallState, wait_random_exponential

#: HTTP statuses that say "try again later": request timeout, conflict, rate limit, server errors.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def is_format_refusal(exc: BaseException) -> bool:
    """The server does not take the structured-output mode we asked for.

    A 400 or 422 says so plainly; llama-cpp-python's server answers 500 to a ``response_format``
    it does not know, which would otherwise look transient and be retried in vain.
    """
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code in (400, 422):
        return True
    return exc.status_code == 500 and "response_format" in _message(exc)


def is_transient(exc: BaseException) -> bool:
    """Worth another attempt: rate limits, server errors, timeouts and connection failures."""
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is one too
        return True
    if isinstance(exc, openai.APIStatusError) and not is_format_refusal(exc):
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500
    return False


def _message(exc: openai.APIStatusError) -> str:
    body: Any = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or exc.message or "").replace("\n", " ")


def retry_after_s(exc: BaseException | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), if it did."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


class Backoff:
    """tenacity ``wait``: the server's retry-after when it gives one, else jittered exponential."""

    def __init__(self, multiplier: float = 0.5, max_s: float = 8.0) -> None:
        self._fallback = wait_random_exponential(multiplier=multiplier, max=max_s)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc)
        return asked if asked is not None else self._fallback(state)


class StopWhen:
    """tenacity ``stop``: bounded attempts, bounded total time, a deadline, and affordability.

    A retry-after longer than we are willing to wait stops the retries instead of being cut
    short: honouring the server means not coming back early.
    """

    def __init__(
        self,
        *,
        max_attempts: int,
        max_total_s: float,
        max_wait_s: float,
        started: float,
        clock: Callable[[], float],
        deadline: float | None,
        min_attempt_s: float,
        affordable: Callable[[], bool],
    ) -> None:
        self.max_attempts = max_attempts
        self.max_total_s = max_total_s
        self.max_wait_s = max_wait_s
        self.started = started
        self.clock = clock
        self.deadline = deadline
        self.min_attempt_s = min_attempt_s
        self.affordable = affordable
        self.why: str | None = None

    def __call__(self, state: RetryCallState) -> bool:
        sleep = state.upcoming_sleep or 0.0
        now = self.clock()
        if state.attempt_number >= self.max_attempts:
            self.why = f"gave up after {state.attempt_number} attempts"
        elif sleep > self.max_wait_s:
            self.why = f"the server asked to wait {sleep:.0f} s, more than {self.max_wait_s:.0f} s"
        elif now - self.started + sleep > self.max_total_s:
            self.why = f"retrying would pass {self.max_total_s:.0f} s in all"
        elif self.deadline is not None and now + sleep + self.min_attempt_s > self.deadline:
            self.why = "retrying would pass the working-time budget"
        elif not self.affordable():
            self.why = "the token or cost budget cannot pay for another attempt"
        else:
            return False
        return True


def describe(exc: BaseException) -> str:
    """One line saying what went wrong with a request."""
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return f"cannot connect to the endpoint ({type(cause).__name__ if cause else 'connection error'})"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {_message(exc)[:200]}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"
