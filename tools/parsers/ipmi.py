"""``ipmitool sel elist``: the BMC's system event log.

Each line is ``id | date | time | sensor | event | direction``::

       1 | 04/17/2026 | 02:11:09 | Power Supply #0x51 | Power Supply AC lost | Asserted
      2a | 04/17/2026 | 02:11:40 | Fan #0x30 | Lower Critical going low  | Asserted
       3 | Pre-Init   | 00000012 | System Event #0x01 | Timestamp Clock Sync | Asserted

Dates are ``MM/DD/YYYY`` and times ``HH:MM:SS`` as the BMC keeps them (UTC in a bundle, per the
spec); ``Pre-Init`` entries have no wall time. Sensor names carry the sensor type first
(``Power Supply``, ``Fan``, ``Temperature``, ``Processor``, ``Memory``, ``Watchdog 2`` ...).
Lines that do not split into at least five fields are skipped.
"""

from __future__ import annotations

import calendar
import re
from typing import Literal

from pydantic import BaseModel, Field

_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_TIME = re.compile(r"(\d{1,2}):(\d{2}):(\d{2})(?:\s?([AP]M))?", re.I)


class SelEntry(BaseModel):
    """One SEL record."""

    line_no: int = Field(description="1-based line in the output.")
    time_unix: float | None = Field(
        None, description="Wall time (UTC), None for Pre-Init or unreadable stamps."
    )
    sensor: str = Field(description="Sensor name as printed, e.g. 'Power Supply #0x51'.")
    sensor_type: Literal["power", "cooling", "temperature", "memory", "processor", "other"] = Field(
        description="What the sensor watches, from its name."
    )
    event: str = Field(description="Event text, e.g. 'Power Supply AC lost'.")
    asserted: bool = Field(description="True for Asserted (or no direction printed), False for Deasserted.")


def _type(sensor: str) -> str:
    s = sensor.lower()
    if s.startswith(("power supply", "ps", "psu", "power unit", "pwr")):
        return "power"
    if s.startswith("fan"):
        return "cooling"
    if s.startswith(("temp", "inlet", "exhaust", "cpu temp")):
        return "temperature"
    if s.startswith(("memory", "dimm")):
        return "memory"
    if s.startswith(("processor", "cpu")):
        return "processor"
    return "other"


def _when(date: str, time: str) -> float | None:
    d, t = _DATE.fullmatch(date.strip()), _TIME.fullmatch(time.strip())
    if not d or not t:
        return None
    month, day, year = (int(x) for x in d.groups())
    hour, minute, sec = int(t.group(1)), int(t.group(2)), int(t.group(3))
    if t.group(4):
        hour = hour % 12 + (12 if t.group(4).upper() == "PM" else 0)
    try:
        return float(calendar.timegm((year, month, day, hour, minute, sec, 0, 0, 0)))
    except (ValueError, OverflowError):
        return None


def parse_sel_elist(text: str) -> list[SelEntry]:
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        parts = [p.strip() for p in line[:2048].split("|")]
        if len(parts) < 5:
            continue
        sensor, event = parts[3], parts[4]
        direction = parts[5].lower() if len(parts) > 5 else "asserted"
        out.append(
            SelEntry(
                line_no=no,
                time_unix=_when(parts[1], parts[2]),
                sensor=sensor,
                sensor_type=_type(sensor),
                event=event,
                asserted=not direction.startswith("deasserted"),
            )
        )
    return out


__all__ = ["SelEntry", "parse_sel_elist"]
