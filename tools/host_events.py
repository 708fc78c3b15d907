"""Host-level evidence of a shared cause: the BMC event log and memory pressure.

- ``ipmitool sel elist``: a power supply that lost AC or failed, or a fan or temperature sensor
  past its critical threshold, *inside the window*, is a cause every GPU of the host shares (the
  spec names the host for it). Older entries are history; ``Pre-Init`` entries have no time and
  are never counted.
- ``/proc/pressure/memory``: a host whose tasks stall on memory (``full`` avg60) well above its
  peers' is contended, like one whose CPUs are saturated.
"""

from __future__ import annotations

import re
import statistics
from datetime import UTC, datetime

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, by_signal, count, register
from forensic.tools.parsers.hostload import parse_pressure
from forensic.tools.parsers.ipmi import parse_sel_elist

#: SEL entries this long before the window opens still count (a PSU that failed just before).
SEL_BEFORE_S = 3600
_POWER_BAD = re.compile(
    r"fail|lost|fault|predictive|redundancy (?:lost|degraded)|out of range|critical|throttl|config(?:uration)? error",
    re.I,
)
_FAN_BAD = re.compile(r"critical|non-recoverable|fail|going low|lower", re.I)
_TEMP_BAD = re.compile(r"upper (?:critical|non-recoverable)|going high|overheat|thermal trip", re.I)
#: Memory pressure ("full" avg60, % of time every task stalled on memory) high on its own ...
MEM_FULL_PCT = 5.0
#: ... and this many times the fleet median.
PEER_FACTOR = 3.0

_SEL = ["ipmitool", "sel", "elist"]
_MEM = ["cat", "/proc/pressure/memory"]


@register
class HostEvents(Tool):
    name = "host_events"
    emits = frozenset(
        {
            "bmc_cooling_event",
            "bmc_power_event",
            "host_memory_pressure",
        }
    )
    description = (
        "Host-wide causes: BMC system event log (ipmitool sel elist: power supply, fan and temperature events "
        "inside the window) and memory pressure (/proc/pressure/memory) against the fleet. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        start, end = ctx.source.window
        signals: list[Signal] = []
        sources: list[str] = []
        covered: list[str] = []
        errors: list[str] = []
        mem: dict[str, float] = {}
        scope = set(ctx.hosts(args.host))
        # Memory pressure is judged against the other hosts (a sample of them on a large fleet).
        for host in ctx.source.host_names() if args.host is None else ctx.peers(sorted(scope)):
            try:
                node = ctx.source.host(host)
                if node.has_command(_MEM):
                    pr = parse_pressure(node.run(_MEM))
                    line = pr.full or pr.some
                    avg = None if line is None else line.avg60 if line.avg60 is not None else line.avg10
                    if avg is not None:
                        mem[host] = avg
                        if host in scope:
                            sources.append(node.command_source(_MEM))
                            covered.append(host)
                if host in scope and node.has_command(_SEL):
                    entries = parse_sel_elist(node.run(_SEL))
                    sources.append(node.command_source(_SEL))
                    covered.append(host)
                    signals.extend(_sel_signals(host, entries, start, end))
            except NotFoundError:  # not recorded: absence, not something unread
                pass
            except ForensicError as exc:
                errors.append(f"{host}: {exc}")
        med = statistics.median(mem.values()) if len(mem) >= 3 else None
        for host in sorted(scope & mem.keys()):
            v = mem[host]
            if v >= MEM_FULL_PCT and (med is None or v > PEER_FACTOR * max(med, 0.5)):
                signals.append(
                    Signal(
                        name="host_memory_pressure",
                        component=host,
                        kind="host",
                        detail=f"{host} tasks stalled on memory {v:g}% of the last minute"
                        + (f" (fleet median {med:g}%)" if med is not None else ""),
                        values={"memory_full_avg60": v, "fleet_median": med},
                    )
                )
        if not covered:
            return ToolResult(
                status="error" if errors else "no_data",
                summary="no BMC event log or memory pressure recorded" + (f": {errors[0]}" if errors else ""),
                data={"errors": errors},
                unread=errors,
            )
        summary = f"host events of {count(len(set(covered)), 'host')} read; " + (
            f"findings: {by_signal(signals)}"
            if signals
            else "no power, cooling or memory event in the window"
        )
        return ToolResult(
            status="ok",
            summary=summary,
            source=sorted(set(sources)),
            signals=signals,
            covered=sorted(set(covered)),
            data={"memory_full_avg60": mem, "errors": errors},
            unread=errors,
        )


def _sel_signals(host: str, entries, start: float | None, end: float | None) -> list[Signal]:
    out: dict[str, Signal] = {}
    for e in entries:
        if not e.asserted or e.time_unix is None:
            continue
        if (start is not None and e.time_unix < start - SEL_BEFORE_S) or (
            end is not None and e.time_unix > end
        ):
            continue
        if e.sensor_type == "power" and _POWER_BAD.search(e.event):
            name = "bmc_power_event"
        elif (e.sensor_type == "cooling" and _FAN_BAD.search(e.event)) or (
            e.sensor_type == "temperature" and _TEMP_BAD.search(e.event)
        ):
            name = "bmc_cooling_event"
        else:
            continue
        stamp = datetime.fromtimestamp(e.time_unix, UTC).strftime("%Y-%m-%d %H:%M:%S")
        out.setdefault(
            name,
            Signal(
                name=name,
                component=host,
                kind="host",
                detail=f"{host} BMC: {e.sensor} {e.event} ({stamp}Z, SEL line {e.line_no})",
                values={"line": e.line_no, "time_unix": e.time_unix, "sensor": e.sensor},
            ),
        )
    return list(out.values())


__all__ = ["HostEvents"]
