"""Forward error correction on each NIC's link (``ethtool -I --show-fec <netdev>``).

A link that runs near its error limit shows it in FEC before anything fails: corrected blocks
climb, and uncorrectable blocks (data lost on the wire, retransmitted by the transport) appear.
Counters are read as increases from the window-start snapshot (``before/cmd/``) to ``now``; with
no snapshot, a count is judged against the fleet's NICs (a link far above its peers).

Corrected blocks climb on every busy link; what marks one that is degrading is corrected blocks
growing in the window far beyond every other link's growth (:mod:`forensic.tools._growth`, one
numpy pass over the fleet's NICs): ``fec_corrected_rising``. A large count that did not grow is history.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._growth import outliers, snapshot_growth
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, by_signal, count, register
from forensic.tools.parsers.fec import FecStats, parse_show_fec

#: Uncorrectable blocks in the window that count (any loss is a fault; a few may be noise).
UNCORRECTABLE_MIN = 10
#: Without a window-start snapshot: this many times the fleet median (and at least UNCORRECTABLE_MIN * 10).
PEER_FACTOR = 10.0
#: Corrected blocks a link must gain in the window before its growth is judged against its peers'.
CORRECTED_FLOOR = 10_000


def _read(
    node: Any, host: str, netdev: str, unread: list[str], with_source: bool
) -> tuple[FecStats, str] | None:
    """(FEC counters, source) of one NIC of ``node`` (one snapshot of ``host``); None when not
    recorded, or unreadable (then said in ``unread``). The read itself says whether the file is
    there (an existence check first would walk the confined path twice: 16,384 NICs on 1,024 hosts)."""
    if node is None:
        return None
    argv = ["ethtool", "-I", "--show-fec", netdev]
    try:
        stats = parse_show_fec(node.run(argv))
        return stats, node.command_source(argv) if with_source else ""
    except NotFoundError:
        return None
    except ForensicError as exc:
        unread.append(f"{host}: {exc}")
        return None


def _node(ctx: ToolContext, host: str, snapshot: str, unread: list[str]) -> Any:
    """One snapshot of ``host`` (None when it has no node data, or cannot be read: said in ``unread``)."""
    try:
        return ctx.source.host(host, snapshot=snapshot)  # type: ignore[arg-type]
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
            "fec_corrected_rising",
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
        corrected: dict[str, tuple[float, float]] = {}  # NIC -> (now, before); NaN where not printed
        sources: list[str] = []
        unread: list[str] = []
        for h in topo.hosts:
            met = unread if h.name in scope else []
            nics = [(n, n.netdev) for n in h.nics if n.netdev]
            now_node = _node(ctx, h.name, "now", met) if nics else None
            before_node = _node(ctx, h.name, "before", met) if now_node is not None else None
            for n, netdev in nics:
                now = _read(now_node, h.name, netdev, met, h.name in scope)
                if now is None:
                    continue
                before = _read(before_node, h.name, netdev, met, h.name in scope)
                comp = f"{h.name}/{n.ibdev}"
                rows[comp] = (now[0].uncorrectable_blocks, before[0].uncorrectable_blocks if before else None)
                c_now, c_before = now[0].corrected_blocks, before[0].corrected_blocks if before else None
                corrected[comp] = (
                    np.nan if c_now is None else float(c_now),
                    np.nan if c_before is None else float(c_before),
                )
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
        # Corrected blocks: growth in the window against every NIC's growth, in one pass.
        parts = list(corrected)
        arr = np.array([corrected[p] for p in parts], dtype=float).reshape(-1, 2)
        grown, med, judged = outliers(snapshot_growth(arr[:, 0], arr[:, 1]), CORRECTED_FLOOR)
        for o in grown:
            comp = parts[o.index]
            if comp.split("/", 1)[0] not in scope:
                continue
            signals.append(
                Signal(
                    name="fec_corrected_rising",
                    component=comp,
                    kind="nic",
                    detail=f"{comp} FEC corrected blocks rose by {o.growth:.0f} in the window, against a median "
                    f"rise of {med:.0f} over {judged} links: the link runs near its error limit",
                    values={"increase": o.growth, "peer_median": med, "peers": judged},
                )
            )
        summary = f"FEC of {count(len(mine), 'NIC')} read; " + (
            f"findings: {by_signal(signals)}"
            if signals
            else "no uncorrectable FEC blocks, and no link's corrected blocks grew beyond its peers'"
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
