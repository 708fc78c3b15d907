"""Forward error correction on each NIC's link (``ethtool -I --show-fec <netdev>``).

A link that runs near its error limit shows it in FEC before anything fails: corrected blocks
climb, and uncorrectable blocks (data lost on the wire, retransmitted by the transport) appear.
Counters are read as increases from the window-start snapshot (``before/cmd/``) to ``now``; with
no snapshot, a count is judged against the fleet's NICs (a link far above its peers).
"""

from __future__ import annotations

import statistics

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, by_signal, count, register
from forensic.tools.parsers.fec import parse_show_fec

#: Uncorrectable blocks in the window that count (any loss is a fault; a few may be noise).
UNCORRECTABLE_MIN = 10
#: Without a window-start snapshot: this many times the fleet median (and at least UNCORRECTABLE_MIN * 10).
PEER_FACTOR = 10.0


def _read(
    ctx: ToolContext, host: str, netdev: str, snapshot: str, unread: list[str]
) -> tuple[int | None, str] | None:
    """(uncorrectable blocks, source) of one NIC; None when not recorded, or unreadable (then said in ``unread``)."""
    argv = ["ethtool", "-I", "--show-fec", netdev]
    try:
        node = ctx.source.host(host, snapshot=snapshot)  # type: ignore[arg-type]
        if not node.has_command(argv):
            return None
        return parse_show_fec(node.run(argv)).uncorrectable_blocks, node.command_source(argv)
    except NotFoundError:
        return None
    except ForensicError as exc:
        unread.append(f"{host}: {exc}")
        return None


@register
class NicFec(Tool):
    name = "nic_fec"
    emits = frozenset(
        {
            "fec_uncorrectable",
        }
    )
    description = (
        "FEC statistics of each NIC link (ethtool -I --show-fec): uncorrectable blocks in the window "
        "(from the window-start snapshot) or far above the fleet's. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        topo = ctx.source.topology
        if topo is None:
            return ToolResult(status="no_data", summary="no topology: NIC interface names unknown")
        scope = set(ctx.hosts(args.host))
        rows: dict[str, tuple[int | None, int | None]] = {}
        sources: list[str] = []
        unread: list[str] = []
        for h in topo.hosts:
            for n in h.nics:
                if not n.netdev:
                    continue
                now = _read(ctx, h.name, n.netdev, "now", unread if h.name in scope else [])
                if now is None:
                    continue
                before = _read(ctx, h.name, n.netdev, "before", unread if h.name in scope else [])
                rows[f"{h.name}/{n.ibdev}"] = (now[0], before[0] if before else None)
                if h.name in scope:
                    sources.append(now[1])
                    if before:
                        sources.append(before[1])
        mine = {c: v for c, v in rows.items() if c.split("/", 1)[0] in scope}
        unread = list(dict.fromkeys(unread))  # one line per host and problem, not per NIC
        if not mine:
            return ToolResult(
                status="error" if unread else "no_data",
                unread=unread,
                summary="no FEC statistics recorded" + (f": {unread[0]}" if unread else ""),
            )
        totals = [v[0] for v in rows.values() if v[0] is not None]
        med = statistics.median(totals) if len(totals) >= 4 else None
        signals: list[Signal] = []
        for comp, (blocks, blocks_before) in sorted(mine.items()):
            if blocks is None:
                continue
            if blocks_before is not None and blocks >= blocks_before:
                rise = blocks - blocks_before
                if rise >= UNCORRECTABLE_MIN:
                    signals.append(
                        Signal(
                            name="fec_uncorrectable",
                            component=comp,
                            kind="nic",
                            detail=f"{comp} FEC uncorrectable blocks rose by {rise} in the window ({blocks_before} -> {blocks})",
                            values={"increase": rise, "now": blocks, "before": blocks_before},
                        )
                    )
            elif (
                blocks_before is None
                and med is not None
                and blocks >= 10 * UNCORRECTABLE_MIN
                and blocks > PEER_FACTOR * max(med, 1)
            ):
                signals.append(
                    Signal(
                        name="fec_uncorrectable",
                        component=comp,
                        kind="nic",
                        detail=f"{comp} FEC uncorrectable blocks {blocks} vs fleet median {med:g} (no window-start snapshot)",
                        values={"now": blocks, "fleet_median": med},
                    )
                )
        summary = f"FEC of {count(len(mine), 'NIC')} read; " + (
            f"findings: {by_signal(signals)}" if signals else "no uncorrectable FEC blocks stand out"
        )
        return ToolResult(
            status="ok",
            summary=summary,
            source=sorted(set(sources)),
            signals=signals,
            covered=sorted(mine),
            unread=unread,
        )


__all__ = ["NicFec"]
