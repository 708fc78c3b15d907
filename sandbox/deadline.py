"""One deadline for the work in progress, so that the wall-time budget bounds every step.

The harness sets a deadline (``time.monotonic()`` seconds) around each piece of work it runs for
an investigation: opening the bundle, each tool call. Everything that can take long checks it:
the sandbox between chunks of every read and every decompression, and, as a backstop for pure
Python parsing that has no such checkpoints, a ``SIGALRM`` timer in the main thread that raises
:class:`WallTimeExceeded` wherever the work is. Work that runs out raises; the caller records the
step as failed for lack of time and ends the run with what it has.

The deadline lives in a context variable, so concurrent investigations in one process (threads
of the service) each see their own.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

from forensic.sandbox.errors import WallTimeExceeded

_DEADLINE: ContextVar[float | None] = ContextVar("forensic_deadline", default=None)


def remaining() -> float | None:
    """Seconds left before the current deadline; None when there is none."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


def check(what: str = "") -> None:
    """Raise :class:`WallTimeExceeded` when the current deadline has passed."""
    at = _DEADLINE.get()
    if at is not None and time.monotonic() >= at:
        raise WallTimeExceeded(f"working-time budget exhausted{' while ' + what if what else ''}")


@contextlib.contextmanager
def deadline(seconds: float | None, *, what: str = "", alarm: bool = True) -> Iterator[None]:
    """Run the block with at most ``seconds`` of wall time (None or inf: no limit of its own).

    A deadline already in force and sooner wins. With ``alarm`` and in the main thread, a timer
    interrupts the block when the time is up even inside code that never calls :func:`check`.
    """
    outer = _DEADLINE.get()
    at = None if seconds is None or not math.isfinite(seconds) else time.monotonic() + max(0.0, seconds)
    if outer is not None and (at is None or outer < at):
        at = outer
    token = _DEADLINE.set(at)
    armed = (
        alarm and at is not None and threading.current_thread() is threading.main_thread() and _alarm_free()
    )
    previous = None
    if armed and at is not None:

        def on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
            raise WallTimeExceeded(f"working-time budget exhausted{' while ' + what if what else ''}")

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, at - time.monotonic()))
    try:
        check(what)
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        _DEADLINE.reset(token)


def _alarm_free() -> bool:
    """Only one timer per process: nested or foreign uses of ITIMER_REAL are left alone."""
    if not hasattr(signal, "setitimer"):
        return False
    return signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
