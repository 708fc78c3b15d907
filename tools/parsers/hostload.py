"""Host-load evidence: ``top -b -n 1`` and ``/proc/pressure/cpu``.

A rank whose host CPUs are saturated (data loaders, a stray process, an IRQ storm) launches its
kernels late and becomes the straggler. ``top`` shows who is eating the CPUs; PSI shows whether
runnable tasks actually waited for one (``some``: at least one task waited; ``full``: all did).

Caveat from procps: the first frame of ``top`` computes ``%Cpu(s)`` since boot, not over an
interval, so a recorded ``-n 1`` frame understates a recent spike. With several frames in one file
the last one is kept.
"""

from __future__ import annotations

import re

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import BoundedWarnings, as_text, numbered_lines
from pydantic import BaseModel, ConfigDict

__all__ = [
    "CpuTimes",
    "Pressure",
    "PressureLine",
    "TaskCounts",
    "TopProcess",
    "TopSnapshot",
    "parse_pressure",
    "parse_top",
]

_MAX_LINE = 64 * 1024
_MAX_WARNINGS = 20
_CPU_FIELD = re.compile(r"(?<![0-9.,])([0-9]{1,3}(?:[.,][0-9]{1,4})?) ?%?(us|sy|ni|id|wa|hi|si|st)\b")
_COUNT_WORD = re.compile(r"\b([0-9]{1,9}) ([a-z]{3,10})")
_DAYS = re.compile(r"\b([0-9]{1,6}) days?")
_HOURS_MINUTES = re.compile(r"\b([0-9]{1,2}):([0-9]{2})\b")
_MINUTES = re.compile(r"\b([0-9]{1,4}) min")
_USERS = re.compile(r"\b([0-9]{1,6}) users?")


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class CpuTimes(_Model):
    """The ``%Cpu(s)`` line: share of CPU time, percent; None where the line lacked the field."""

    us: float | None = None
    """User space (un-niced)."""
    sy: float | None = None
    """Kernel."""
    ni: float | None = None
    """Niced user space."""
    id: float | None = None
    """Idle."""
    wa: float | None = None
    """Waiting for I/O."""
    hi: float | None = None
    """Hardware interrupts."""
    si: float | None = None
    """Software interrupts (network receive processing shows here)."""
    st: float | None = None
    """Stolen by the hypervisor."""


class TaskCounts(_Model):
    """The ``Tasks:`` (or ``Threads:``) line."""

    total: int | None = None
    """All tasks."""
    running: int | None = None
    """Runnable tasks."""
    sleeping: int | None = None
    """Sleeping tasks."""
    stopped: int | None = None
    """Stopped tasks."""
    zombie: int | None = None
    """Zombie tasks."""


class TopProcess(_Model):
    """One row of the process table."""

    pid: int
    """Process id."""
    user: str | None = None
    """Owner (top truncates long names with ``+``)."""
    state: str | None = None
    """``S`` column: R running, S sleeping, D uninterruptible, Z zombie, ..."""
    cpu_pct: float | None = None
    """%CPU: 100 is one full core, so a busy process can show several hundred."""
    mem_pct: float | None = None
    """%MEM of physical memory."""
    time: str | None = None
    """``TIME+`` as printed (``12345:01``, ``1:23.45``)."""
    command: str
    """``COMMAND`` (the full command line under ``top -c``)."""


class TopSnapshot(_Model):
    """One ``top -b`` frame."""

    time: str | None = None
    """Time of day from the first line, host local time, as printed."""
    uptime: str | None = None
    """Uptime as printed (``12 days,  3:04``)."""
    uptime_s: int | None = None
    """Uptime in seconds, to minute precision."""
    users: int | None = None
    """Logged-in users."""
    load1: float | None = None
    """1-minute load average (compare with the host's CPU count)."""
    load5: float | None = None
    """5-minute load average."""
    load15: float | None = None
    """15-minute load average."""
    tasks: TaskCounts | None = None
    """Task counts."""
    cpu: CpuTimes | None = None
    """CPU time split, all CPUs together."""
    processes: list[TopProcess]
    """Process rows in printed order (top sorts by %CPU), at most ``max_processes``."""
    process_count: int = 0
    """Process rows in the frame, including those beyond ``max_processes``."""
    warnings: list[str]
    """What the parser skipped, and why."""


class PressureLine(_Model):
    """One line of a PSI file."""

    avg10: float | None = None
    """Share of the last 10 s that tasks were stalled, percent."""
    avg60: float | None = None
    """Share of the last 60 s, percent."""
    avg300: float | None = None
    """Share of the last 300 s, percent."""
    total_us: int | None = None
    """Total stall time since boot, microseconds (a counter: diff two readings)."""


class Pressure(_Model):
    """``/proc/pressure/cpu``."""

    some: PressureLine | None = None
    """At least one runnable task waited for a CPU."""
    full: PressureLine | None = None
    """All non-idle tasks waited at once (printed for cpu since Linux 5.13)."""
    warnings: list[str]
    """What the parser skipped, and why."""


def _number(text: str) -> float | None:
    # Some locales print a decimal comma ("0,52").
    text = text.strip().replace(",", ".")
    if not text or len(text) > 24 or not text.isascii() or not text.replace(".", "", 1).isdigit():
        return None
    return float(text)


def _summary_line(line: str, snap: dict) -> None:
    body = line.strip()[len("top - ") :]
    snap["time"] = body.split(" ", 1)[0] or None
    head, sep, loads = body.partition("load average")
    if sep:
        values = [_number(v) for v in loads.lstrip("s").lstrip(":").strip().split(", ")]
        if len(values) == 3:
            snap["load1"], snap["load5"], snap["load15"] = values
    up_at = head.find(" up ")
    if up_at >= 0:
        uptime = head[up_at + 4 :]
        users = _USERS.search(uptime)
        if users is not None:
            snap["users"] = int(users.group(1))
            uptime = uptime[: users.start()]
        uptime = uptime.strip().rstrip(",").strip()
        snap["uptime"] = uptime or None
        snap["uptime_s"] = _uptime_seconds(uptime)


def _uptime_seconds(uptime: str) -> int | None:
    days = _DAYS.search(uptime)
    clock = _HOURS_MINUTES.search(uptime)
    minutes = _MINUTES.search(uptime)
    if days is None and clock is None and minutes is None:
        return None
    seconds = int(days.group(1)) * 86400 if days else 0
    if clock is not None:
        seconds += int(clock.group(1)) * 3600 + int(clock.group(2)) * 60
    elif minutes is not None:
        seconds += int(minutes.group(1)) * 60
    return seconds


def _cpu_line(line: str) -> CpuTimes:
    values: dict[str, float | None] = {}
    for match in _CPU_FIELD.finditer(line.partition(":")[2]):
        values.setdefault(match.group(2), _number(match.group(1)))
    return CpuTimes(**values)


def _tasks_line(line: str) -> TaskCounts:
    values: dict[str, int] = {}
    for match in _COUNT_WORD.finditer(line.partition(":")[2]):
        if match.group(2) in TaskCounts.model_fields:
            values.setdefault(match.group(2), int(match.group(1)))
    return TaskCounts(**values)


def _process_row(header: list[str], line: str) -> dict[str, str] | None:
    cells = line.split(None, len(header) - 1)
    if len(cells) != len(header):
        return None
    row = dict(zip(header, cells, strict=True))
    pid = row.get("PID", "")
    if not pid.isascii() or not pid.isdigit() or len(pid) > 10:
        return None
    return row


def _process(row: dict[str, str]) -> TopProcess:
    pid = row["PID"]
    return TopProcess(
        pid=int(pid),
        user=row.get("USER"),
        state=row.get("S"),
        cpu_pct=_number(row.get("%CPU", "")),
        mem_pct=_number(row.get("%MEM", "")),
        time=row.get("TIME+") or row.get("TIME"),
        command=row.get("COMMAND", ""),
    )


def parse_top(text: str, max_processes: int = 100) -> TopSnapshot:
    """The last frame of ``top -b`` output: summary lines and the first ``max_processes`` rows.

    Empty text gives an empty snapshot with a warning; text with no top summary line, CPU line or
    process table raises :class:`ParseError`.
    """
    text = as_text(text)
    warnings = BoundedWarnings(_MAX_WARNINGS)
    snap: dict = {}
    processes: list[TopProcess] = []
    header: list[str] | None = None
    frames = count = 0
    recognised = False
    for number, line in numbered_lines(text, _MAX_LINE, warnings):
        if line is None:
            continue
        stripped = line.strip()
        if stripped.startswith("top - "):
            frames += 1
            snap, processes, header, count = {}, [], None, 0
            _summary_line(line, snap)
            recognised = True
        elif stripped.startswith(("%Cpu(s)", "Cpu(s)")):
            snap["cpu"] = _cpu_line(stripped)
            recognised = True
        elif stripped.startswith(("Tasks:", "Threads:")):
            snap["tasks"] = _tasks_line(stripped)
        elif header is None and "PID" in stripped.split() and stripped.split()[-1] == "COMMAND":
            header = stripped.split()
            recognised = True
        elif header is not None and stripped:
            row = _process_row(header, stripped)
            if row is None:
                warnings.add(f"line {number}: not a process row")
                continue
            count += 1
            if len(processes) < max_processes:
                processes.append(_process(row))
    if not text.strip():
        warnings.add("empty input")
    elif not recognised:
        raise ParseError("no top summary line, CPU line or process table")
    if frames > 1:
        warnings.add(f"{frames} frames; kept the last")
    return TopSnapshot(processes=processes, process_count=count, warnings=list(warnings), **snap)


def _pressure_line(rest: str) -> PressureLine:
    values: dict[str, float | int | None] = {}
    for token in rest.split():
        key, sep, value = token.partition("=")
        if not sep:
            continue
        if key in ("avg10", "avg60", "avg300"):
            values[key] = _number(value)
        elif key == "total" and value.isascii() and value.isdigit() and len(value) <= 20:
            values["total_us"] = int(value)
    return PressureLine(**values)


def parse_pressure(text: str) -> Pressure:
    """``/proc/pressure/cpu`` (also the memory and io files): the ``some`` and ``full`` lines.

    Empty text gives no lines and a warning; text with neither line raises :class:`ParseError`.
    """
    text = as_text(text)
    warnings = BoundedWarnings(_MAX_WARNINGS)
    found: dict[str, PressureLine] = {}
    for _, line in numbered_lines(text, _MAX_LINE, warnings):
        if line is None:
            continue
        kind, _, rest = line.strip().partition(" ")
        if kind in ("some", "full"):
            found[kind] = _pressure_line(rest)
    if not text.strip():
        warnings.add("empty input")
    elif not found:
        raise ParseError("no 'some' or 'full' line in PSI output")
    return Pressure(warnings=list(warnings), **found)
