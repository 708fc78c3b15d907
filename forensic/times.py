"""The one time grammar: what forensic accepts as a point in time, wherever it reads one.

:func:`parse_time` reads bundle windows and uptime stamps, NVML snapshots, ``--until``, alert
annotations and Alertmanager's ``startsAt``/``endsAt``:

- unix seconds as a number (``1714564800``, ``1714564800.25``) or, where ``numbers`` allows,
  as numeric text (``"1714564800"``);
- ISO 8601 / RFC 3339 text: ``2024-05-01T12:00:00Z``, ``2024-05-01T14:00:00+02:00``,
  ``2024-05-01 12:00:00.123456789Z`` (digits past microseconds are dropped), a lower-case ``t`` or
  ``z``, a date alone (midnight);
- a time without a zone is UTC, as the bundle spec says; where ``naive_utc`` is False (an
  Alertmanager payload, which always names its zone) it is refused.

Anything else is ``None``: text longer than :data:`MAX_TIME_TEXT`, NaN or infinite numbers,
booleans, week dates and other ISO forms that are not a calendar date, garbage. Standard library
only; nothing here raises on any input.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

__all__ = ["MAX_TIME_TEXT", "parse_time"]

#: The longest time text read at all: RFC 3339 with nanoseconds and an offset is 35 characters.
MAX_TIME_TEXT = 64

_NUMBER = re.compile(r"[+-]?\d{1,15}(?:\.\d{1,9})?")
#: A calendar date first (``YYYY-MM-DD``): ``fromisoformat`` also takes week dates and compact forms.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_time(value: Any, *, numbers: bool = True, naive_utc: bool = True) -> float | None:
    """Unix seconds from a number or ISO 8601 text, or None when ``value`` is not a time."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            t = float(value)
        except OverflowError:
            return None
        return t if math.isfinite(t) else None
    if not isinstance(value, str) or len(value) > MAX_TIME_TEXT:
        return None
    text = value.strip()
    if numbers and _NUMBER.fullmatch(text):
        return float(text)
    if not _DATE.match(text):
        return None
    text = text.upper()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        if not naive_utc:
            return None
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.timestamp()
    except (OverflowError, ValueError):
        return None
