"""Host load: is something other than the job eating a host's CPUs?

Reads ``top -b -n 1``, ``/proc/pressure/cpu`` and the ``node_load1`` /
``node_pressure_cpu_waiting_seconds_total`` series. A busy training host is never idle, so a host
only stands out against its peers: load or CPU pressure well above the fleet's, or a process
outside the job near the top of ``top``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np
from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, count, register
from forensic.tools.metrics import read_metric
from forensic.tools.parsers.hostload import parse_pressure, parse_top
from forensic.tools.parsers.openmetrics import series_host

#: A host whose load (or CPU pressure) is this many times the fleet median stands out.
PEER_FACTOR = 2.0
#: CPU pressure (share of time some task waited for a CPU, %) that is high on its own.
PRESSURE_PCT = 20.0


@dataclass
class Load:
    host: str
    load1: float | None = None
    pressure: float | None = None
    top_procs: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    #: Why the host's own readings (top, pressure) could not be read, when they could not.
    unread: str | None = None


def _loads(ctx: ToolContext) -> dict[str, Load]:
    out: dict[str, Load] = {}
    for host in ctx.source.host_names():
        ld = Load(host)
        try:
            node = ctx.source.host(host)
            if node.has_command(["top", "-b", "-n", "1"]):
                snap = parse_top(node.run(["top", "-b", "-n", "1"]))
                ld.load1 = snap.load1
                ld.top_procs = [f"{p.command} ({p.cpu_pct:g}% CPU)" for p in snap.processes[:3] if p.cpu_pct]
                ld.sources.append(node.command_source(["top", "-b", "-n", "1"]))
            if node.has_command(["cat", "/proc/pressure/cpu"]):
                pr = parse_pressure(node.run(["cat", "/proc/pressure/cpu"]))
                if pr.some is not None:
                    ld.pressure = pr.some.avg60 if pr.some.avg60 is not None else pr.some.avg10
                ld.sources.append(node.command_source(["cat", "/proc/pressure/cpu"]))
        except NotFoundError:
            pass  # not recorded: node_load1 below may still say
        except ForensicError as exc:
            ld.unread = str(exc)
        out[host] = ld
    start, end = ctx.source.window
    got = read_metric(ctx, "node_load1")
    sources = got.sources
    for s in got.series:
        named = series_host(s.labels)
        if named is not None and named in out:
            m = (
                np.isfinite(s.values)
                & (s.timestamps >= (start or -np.inf))
                & (s.timestamps <= (end or np.inf))
            )
            if m.any():
                out[named].load1 = float(np.median(s.values[m]))
                out[named].sources.extend(x for x in sources if x not in out[named].sources)
    return out


@register
class HostLoad(Tool):
    name = "host_load"
    emits = frozenset({"host_cpu_contention"})
    description = (
        "CPU load of each host vs its peers: load average (top, node_load1), CPU pressure (/proc/pressure/cpu), "
        "and the busiest processes. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        loads: dict[str, Load] = ctx.memo("host_loads", lambda: _loads(ctx))
        hosts = ctx.hosts(args.host)
        job_hosts = ctx.source.job_hosts()
        scope = [
            loads[h]
            for h in hosts
            if h in loads and (loads[h].load1 is not None or loads[h].pressure is not None)
        ]
        unread = [f"{h}: {loads[h].unread}" for h in hosts if h in loads and loads[h].unread]
        if not scope:
            return ToolResult(
                status="error" if unread else "no_data",
                unread=unread,
                summary="no host load readings (top, pressure, node_load1)"
                + (f": {unread[0]}" if unread else ""),
            )
        # Peers are the job's hosts; a small job borrows the rest of the fleet as its reference.
        peer_hosts = job_hosts if len(job_hosts & loads.keys()) >= 3 else set(loads)
        peers_load = [ld.load1 for h, ld in loads.items() if ld.load1 is not None and h in peer_hosts]
        peers_pr = [ld.pressure for h, ld in loads.items() if ld.pressure is not None and h in peer_hosts]
        med_load = statistics.median(peers_load) if len(peers_load) >= 3 else None
        med_pr = statistics.median(peers_pr) if len(peers_pr) >= 3 else None
        signals = []
        for ld in scope:
            high_load = (
                ld.load1 is not None and med_load is not None and ld.load1 > PEER_FACTOR * max(med_load, 1.0)
            )
            high_pr = (
                ld.pressure is not None
                and ld.pressure >= PRESSURE_PCT
                and (med_pr is None or ld.pressure > PEER_FACTOR * max(med_pr, 1.0))
            )
            if high_load or high_pr:
                parts = []
                if ld.load1 is not None:
                    parts.append(
                        f"load {ld.load1:g}"
                        + (f" vs fleet median {med_load:g}" if med_load is not None else "")
                    )
                if ld.pressure is not None:
                    parts.append(
                        f"CPU pressure {ld.pressure:g}%"
                        + (f" vs fleet median {med_pr:g}%" if med_pr is not None else "")
                    )
                if ld.top_procs:
                    parts.append("top: " + ", ".join(ld.top_procs))
                signals.append(
                    Signal(
                        name="host_cpu_contention",
                        component=ld.host,
                        kind="host",
                        detail=f"{ld.host} CPUs contended: " + "; ".join(parts),
                        values={
                            "load1": ld.load1,
                            "fleet_median_load1": med_load,
                            "cpu_pressure_pct": ld.pressure,
                        },
                    )
                )
        summary = f"load of {count(len(scope), 'host')} read; " + (
            "; ".join(s.detail for s in signals[:3]) if signals else "no host stands out from its peers"
        )
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            covered=[ld.host for ld in scope],
            source=sorted({s for ld in scope for s in ld.sources}),
            data={"fleet_median_load1": med_load, "fleet_median_pressure": med_pr},
            unread=unread,
        )
