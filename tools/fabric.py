"""The fabric: switch-side PFC (SONiC ``show pfcwd stats`` / ``show pfc counters``, PFC series) and uplink balance.

- PFC pauses are followed against their direction across the tiers to the device that sends them
  while nothing pauses it (:mod:`forensic.tools._switch_pause`): a switch port, or what is cabled
  to a port. A PFC watchdog that declares a queue ``stormed`` has seen a storm of pauses
  *received* on that port. Topology (``nics[].switch/switch_port``) names the NIC behind a port;
  a NIC of the job is named, a host outside the job is named by the port its storm enters.
- A port whose receive (or transmit) error counter stands far above every other port of its switch
  carries a failing link: frames arrive corrupted (FCS/CRC). ``show interfaces counters`` RX_ERR /
  TX_ERR name the switch port; the spec names that port when the errors show from the switch side.
- ECMP spreads flows over a switch's uplinks. Polarization puts most of them on a few: the
  uplinks' transmit rates (``ifHCOutOctets`` from snmp_exporter) are then very unequal. The
  uplinks are the cables topology lists toward a switch one level further from the hosts (a
  leaf's to its spines, a spine's to its cores); a spine's cables down to its leaves are not.
  The busiest uplink is compared with the colder half of them, not with their median: the median
  of two rates is their mean (a hot/cold pair never reads over 2x), and when half the uplinks are
  hot the median falls between the two groups.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Set as AbstractSet

import numpy as np
from forensic.sandbox import HOST_NAME_MAX, HOST_NAME_PATTERN, ForensicError, NotFoundError, ToolArgumentError
from forensic.tools._switch_pause import PFC_SERIES, Origin, PortPause, trace
from forensic.tools.base import Signal, Tool, ToolContext, ToolInput, ToolResult, count, register
from forensic.tools.metrics import in_window, read_metric
from forensic.tools.parsers.openmetrics import counter_increase
from forensic.tools.parsers.sonic import parse_interfaces_counters, parse_pfc_counters, parse_pfcwd_stats
from pydantic import Field

#: Ratio of the busiest uplink's transmit rate to the colder half's mean above which ECMP is not
#: spreading the load.
IMBALANCE_RATIO = 2.5
#: An uplink carrying less than this (bytes/s) is idle: drained or withdrawn from routing, or
#: starved by the hash; ``_hashed`` says which from how many of its siblings are idle with it.
MIN_UPLINK_RATE = 1e6
#: A port's RX_ERR + TX_ERR must reach this count, this share of its frames, and this multiple of
#: its switch's median port to be a failing link (a few errors happen on any healthy port).
PORT_ERR_MIN = 1000
PORT_ERR_RATIO = 1e-7
PORT_ERR_OVER_MEDIAN = 100.0


class FabricScope(ToolInput):
    """Input of the fabric tool."""

    switch: str | None = Field(
        None,
        description="Switch to examine; omit for every switch.",
        max_length=HOST_NAME_MAX,
        pattern=HOST_NAME_PATTERN,
    )


def _port_owner(ctx: ToolContext) -> dict[tuple[str, str], str]:
    """(switch, port) -> NIC component cabled to it, from topology."""
    out = {}
    topo = ctx.source.topology
    for h in topo.hosts if topo else []:
        for n in h.nics:
            if n.switch and n.switch_port:
                out[(n.switch, n.switch_port)] = f"{h.name}/{n.ibdev}"
    return out


def _links(ctx: ToolContext) -> dict[tuple[str, str], tuple[str, str]]:
    """(switch, port) -> (peer switch, peer port) for every inter-switch cable topology lists,
    from either end (fleets often list a cable on one of its switches only)."""
    topo = ctx.source.topology
    names = {s.name for s in topo.switches} if topo else set()
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for s in topo.switches if topo else []:
        for link in s.links:
            if link.peer in names and link.port and link.peer_port:
                out[(s.name, link.port)] = (link.peer, link.peer_port)
                out.setdefault((link.peer, link.peer_port), (s.name, link.port))
    return out


def _in_job(component: str, job: AbstractSet[str]) -> bool:
    """Whether a NIC's host runs the job (every host does when no rank map says otherwise)."""
    return not job or component.split("/", 1)[0] in job


def _origin_signal(
    o: Origin, owner: dict[tuple[str, str], str], job: AbstractSet[str], links: dict
) -> Signal | None:
    """The finding for one traced origin, named by the part that, repaired, ends the storm.

    A NIC of the job's own hosts is named as the NIC; a switch, or a host outside the job (or a
    port with nothing listed behind it), by the switch port. An origin whose pauses reach no port
    of the job's hosts (only NICs topology places outside the job) is not this job's trouble (an
    old count, another tenant's storm that stays in its own corner) and is left out.
    """
    cabled = owner.get((o.switch, o.port))
    job_victims = [v for v in o.victims if v in owner and _in_job(owner[v], job)]
    unlisted = [v for v in o.victims if v not in owner]
    job_nic = o.sender == "peer" and cabled is not None and _in_job(cabled, job)
    # Where only received pauses were recorded, the job's NICs are not seen paused; a spread over
    # two switches or more into a switch that carries job NICs reaches the job all the same.
    job_switches = {s for (s, _), comp in owner.items() if _in_job(comp, job)}
    spread_to_job = len(o.reached) >= 2 and bool(job_switches & set(o.reached))
    if owner and not job_nic and not job_victims and not unlisted and not spread_to_job:
        return None
    spread = ""
    if o.reached or job_victims:
        spread = (
            f"; they spread through {', '.join(o.reached[:4])}{' …' if len(o.reached) > 4 else ''}"
            if o.reached
            else ""
        ) + (
            f" to {count(len(job_victims), 'port')} of the job's NICs, which only receive them"
            if job_victims
            else ""
        )
    values = {
        "switch": o.switch,
        "port": o.port,
        "frames": o.frames,
        "quiet_level": o.quiet,
        "cabled_to": cabled or "",
        "reached": ",".join(o.reached),
        "job_ports_paused": len(job_victims),
    }
    if job_nic:
        return Signal(
            name="pfc_origin",
            component=cabled,
            kind="nic",
            detail=f"{o.switch} {o.port} received {o.frames:.0f} PFC frames (fabric quiet level {o.quiet:g}) from "
            f"{cabled} and sent none back: the NIC originates the pauses{spread} ({o.basis})",
            values={**values, "rx_pfc": o.frames},
        )
    comp = o.component
    if o.sender == "peer":
        behind = f"{cabled}, a host outside the job" if cabled else "a device topology does not list"
        detail = (
            f"the storm enters the fabric at {comp}: {o.switch} received {o.frames:.0f} PFC frames there (fabric "
            f"quiet level {o.quiet:g}) from {behind}, and nothing paused {behind.split(',')[0]}{spread} ({o.basis})"
        )
    else:
        peer = links.get((o.switch, o.port))
        toward = f"toward {peer[0]}" if peer else (f"into {cabled}" if cabled else "into its peer")
        detail = (
            f"{comp} transmitted {o.frames:.0f} PFC pause frames (fabric quiet level {o.quiet:g}) {toward} while no "
            f"port of {o.switch} received any: the switch port originates them{spread} ({o.basis})"
        )
    return Signal(
        name="switch_port_pause_origin",
        component=comp,
        kind="port",
        detail=detail,
        values={
            **values,
            "tx_pfc": o.frames if o.sender == "switch" else 0.0,
            "outside_job": o.sender == "peer",
            "origin_host": cabled.split("/", 1)[0] if o.sender == "peer" and cabled else "",
        },
    )


def _watchdog_storms(
    watchdog: dict[tuple[str, str], Signal], origins: list[Origin], pauses: list[PortPause]
) -> tuple[list[Signal], list[str]]:
    """The watchdog storms that stand as storms received from what is cabled to the port, and the
    ports (``switch/port``) whose watchdog storm is read as the traced storm's victim instead.

    A stormed queue means pauses arrive on that port. Where the port's own counters read no PFC
    frame received at all and a traced origin's pauses reach the port (the switch transmits them
    toward the NIC), the watchdog's word is the traced storm seen from its victim: the NIC sent
    nothing, and naming it would blame a victim. A port whose receive count was not recorded keeps
    its storm (an unread counter is no evidence that nothing arrived)."""
    rx = {(p.switch, p.port): p.rx for p in pauses}
    reached = {v for o in origins for v in o.victims}
    kept: list[Signal] = []
    victims: list[str] = []
    for key, sig in watchdog.items():
        if key in reached and rx.get(key) == 0:
            victims.append(f"{key[0]}/{key[1]}")
        else:
            kept.append(sig)
    return kept, victims


#: Declared tiers, lowest first: ``leaf`` and ``spine`` are the spec's words, the rest common synonyms.
_TIER_WORDS = (
    ("leaf", "tor", "access", "edge", "t0"),
    ("spine", "agg", "aggregation", "distribution", "t1"),
    ("core", "superspine", "super-spine", "super_spine", "t2"),
)


def _levels(ctx: ToolContext) -> dict[str, int]:
    """Switch -> its level in the fabric (0 for leaves, 1 for spines, 2 for cores).

    The declared tier when it is a known word; otherwise hops from the switches hosts are cabled
    to (level 0) over the inter-switch cables, listed on either end. A switch that neither places
    has no level."""
    topo = ctx.source.topology
    if not topo:
        return {}
    names = {s.name for s in topo.switches}
    level: dict[str, int] = {}
    for s in topo.switches:
        word = (s.tier or "").strip().lower()
        if (rank := next((i for i, w in enumerate(_TIER_WORDS) if word in w), None)) is not None:
            level[s.name] = rank
    adj: dict[str, set[str]] = defaultdict(set)
    for s in topo.switches:
        for link in s.links:
            if link.peer in names and link.peer != s.name:
                adj[s.name].add(link.peer)
                adj[link.peer].add(s.name)
    hops = {n.switch: 0 for h in topo.hosts for n in h.nics if n.switch in names}
    frontier = list(hops)
    while frontier:
        nxt = []
        for sw in frontier:
            for peer in adj[sw] - hops.keys():
                hops[peer] = hops[sw] + 1
                nxt.append(peer)
        frontier = nxt
    return {**hops, **level}


def _uplinks(ctx: ToolContext) -> dict[str, set[str]]:
    """Switch -> its uplinks: the ports whose cable leads one level up (toward the spine or core),
    the only ports among which the switch's own ECMP hash chooses. A spine's cables down to its
    leaves are not uplinks: what each carries is the traffic bound for that leaf, unequal whenever
    the job is placed unevenly, and no hash of the spine's picks between them. A cable to a switch
    of unknown level, or to no listed switch, counts as an uplink (nothing says otherwise)."""
    topo = ctx.source.topology
    names = {s.name for s in topo.switches} if topo else set()
    level = _levels(ctx)
    out: dict[str, set[str]] = defaultdict(set)
    for s in topo.switches if topo else []:
        mine = level.get(s.name)
        for link in s.links:
            if link.peer is None or (
                link.peer in names
                and (mine is None or level.get(link.peer) is None or level[link.peer] > mine)
            ):
                out[s.name].add(link.port)
    # A cable listed only on its upper end is an uplink of the lower switch all the same.
    for s in topo.switches if topo else []:
        for link in s.links:
            if (
                link.peer in names
                and link.peer_port
                and level.get(s.name) is not None
                and level.get(link.peer) is not None
                and level[s.name] > level[link.peer]
            ):
                out[link.peer].add(link.peer_port)
    return out


@register
class Fabric(Tool):
    name = "fabric"
    emits = frozenset(
        {
            "pfc_origin",
            "pfcwd_storm",
            "switch_port_errors",
            "switch_port_pause_origin",
            "switch_uplink_imbalance",
        }
    )
    description = (
        "Switch-side evidence: PFC pauses (SONiC pfc counters and watchdog, or IEEE8021-PFC series) followed "
        "against their direction across leaf, spine and core switches to where the storm starts (a switch port, "
        "or the NIC or outside host cabled to one), ports whose error counters stand out (a failing link), and "
        "ECMP uplink balance from ifHCOutOctets rates (polarization). "
        "Scope: one switch or all."
    )
    Input = FabricScope
    cost = 1.0

    def run(self, ctx: ToolContext, args: FabricScope) -> ToolResult:
        switches = ctx.source.switch_names()
        if args.switch is not None and args.switch not in switches:
            raise ToolArgumentError(f"unknown switch {args.switch!r}")
        scope = [args.switch] if args.switch else switches
        owner = _port_owner(ctx)
        links = _links(ctx)
        job = ctx.source.job_hosts()
        signals: list[Signal] = []
        sources: list[str] = []
        covered: list[str] = []
        seen_any = False
        pauses: list[PortPause] = []
        unread: list[str] = []
        stormed: set[tuple[str, str]] = set()
        history: set[tuple[str, str]] = set()
        # Watchdog storms on host-facing ports, held until the trace has run: (switch, port) -> signal.
        watchdog: dict[tuple[str, str], Signal] = {}
        for name in scope:
            try:
                sw = ctx.source.switch(name)
            except ForensicError as exc:  # a name that cannot be a folder's: nothing of it is read
                unread.append(f"switch {name}: {exc}")
                continue
            for argv in (["show", "pfcwd", "stats"], ["show", "pfc", "counters"]):
                try:
                    text = sw.run(argv)
                except NotFoundError:  # not recorded: no evidence here
                    continue
                except ForensicError as exc:  # recorded but unreadable: said, never taken for absence
                    unread.append(f"switch {name}: {exc}")
                    continue
                seen_any = True
                sources.append(sw.command_source(argv))
                if argv[1] == "pfcwd":
                    for q in parse_pfcwd_stats(text):
                        key = (name, q.port)
                        live = q.status == "stormed" or (q.storm_detected or 0) > (q.storm_restored or 0)
                        if not live:
                            if (q.storm_detected or 0) > 0:
                                history.add(key)  # every storm it saw there ended
                            continue
                        stormed.add(key)
                        if key in links:
                            continue  # a storm from another switch: the trace follows it further
                        comp = owner.get(key)
                        in_job = comp is not None and _in_job(comp, job)
                        target = comp if in_job else f"{name}/{q.port}"
                        watchdog.setdefault(
                            key,
                            Signal(
                                name="pfcwd_storm",
                                component=target,
                                kind="nic" if in_job else "port",
                                detail=f"{name} PFC watchdog: {q.port} queue {q.queue} {q.status}, storms detected {q.storm_detected}"
                                + (f"; the port is cabled to {comp}" if comp else "")
                                + ("" if in_job or comp is None else ", a host outside the job"),
                                values={
                                    "switch": name,
                                    "port": q.port,
                                    "queue": q.queue,
                                    "storm_detected": q.storm_detected,
                                    "tx_drop": q.tx_drop,
                                    "cabled_to": comp or "",
                                    "origin_host": comp.split("/", 1)[0] if comp and not in_job else "",
                                },
                            ),
                        )
                else:
                    parsed = parse_pfc_counters(text)
                    for p in sorted(parsed.rx.keys() | parsed.tx.keys()):  # a set: read in a fixed order
                        pauses.append(
                            PortPause(
                                name,
                                p,
                                float(sum(v or 0 for v in parsed.tx.get(p, []))),
                                float(sum(v or 0 for v in parsed.rx.get(p, []))),
                                "show pfc counters",
                            )
                        )
                covered.extend(c for (s, _), c in owner.items() if s == name)
            covered.append(name)
        series_pauses, series_sources = _series_pauses(ctx, scope, {(p.switch, p.port) for p in pauses})
        if series_pauses:
            seen_any = True
            pauses.extend(series_pauses)
            sources.extend(series_sources)
        origins = trace(pauses, links, stormed=stormed, history=history)
        storms, storm_victims = _watchdog_storms(watchdog, origins, pauses)
        signals.extend(storms)
        for origin in origins:
            sig = _origin_signal(origin, owner, job, links)
            if sig is not None:
                signals.append(sig)
                covered.append(sig.component)
        errs, err_checked, err_sources = _port_errors(ctx, scope, owner, unread)
        if err_checked:
            seen_any = True
            signals.extend(errs)
            covered.extend(err_checked)
            sources.extend(err_sources)
        idle: list[str] = []
        imbalance, checked = self._ecmp(ctx, scope, idle)
        signals.extend(imbalance)
        if checked:
            seen_any = True
            covered.extend(checked)
            sources.extend(read_metric(ctx, "ifHCOutOctets").sources)
        # Switches without snmp series may still have a `show interfaces counters` snapshot: the
        # same question (are the uplinks evenly loaded?) from its TX_BPS column.
        snap, snap_checked, snap_sources = self._ecmp_snapshot(
            ctx, [n for n in scope if n not in checked], unread, idle
        )
        signals.extend(snap)
        if snap_checked:
            seen_any = True
            covered.extend(snap_checked)
            sources.extend(snap_sources)
        if not seen_any:
            return ToolResult(
                status="error" if unread else "no_data",
                unread=unread,
                summary="no switch outputs or switch port metrics recorded"
                + (f": {unread[0]}" if unread else ""),
            )
        found = sorted({s.name for s in signals})
        summary = f"{len(scope)} switches examined; "
        summary += (
            ("; ".join(s.detail for s in signals[:4])) if found else "no PFC storm and uplinks evenly loaded"
        )
        if storm_victims:
            summary += (
                f"; PFC watchdog storms on {', '.join(storm_victims[:4])}{' …' if len(storm_victims) > 4 else ''} "
                "read as the traced storm's victims (no PFC frame received there, pauses sent toward them)"
            )
        if idle:
            summary += f"; idle uplinks left out of the balance (down or drained): {', '.join(idle[:4])}" + (
                " …" if len(idle) > 4 else ""
            )
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            source=sorted(set(sources)),
            covered=sorted(set(covered)),
            data={"uplinks_checked": checked, "idle_uplinks": idle, "watchdog_on_victims": storm_victims},
            unread=list(dict.fromkeys(unread)),
        )

    def _ecmp_snapshot(
        self, ctx: ToolContext, scope: list[str], unread: list[str], idle: list[str]
    ) -> tuple[list[Signal], list[str], list[str]]:
        uplinks = _uplinks(ctx)
        signals, checked, sources = [], [], []
        argv = ["show", "interfaces", "counters"]
        for name in scope:
            if not uplinks.get(name):
                continue  # without topology we cannot tell uplinks from host ports
            try:
                text = ctx.source.switch(name).run(argv)
            except NotFoundError:
                continue
            except ForensicError as exc:
                unread.append(f"switch {name}: {exc}")
                continue
            rows = {
                r.iface: r.tx_bps
                for r in parse_interfaces_counters(text).interfaces
                if r.iface in uplinks[name] and r.tx_bps is not None and r.state not in ("disabled", "down")
            }
            if len(rows) < 2:
                continue
            checked.append(name)
            sources.append(ctx.source.switch(name).command_source(argv))
            idle.extend(f"{name}/{p}" for p in _idle(rows))
            if (sig := _imbalance(name, rows, "show interfaces counters TX_BPS")) is not None:
                signals.append(sig)
        return signals, checked, sources

    def _ecmp(self, ctx: ToolContext, scope: list[str], idle: list[str]) -> tuple[list[Signal], list[str]]:
        uplinks = _uplinks(ctx)
        start, end = ctx.source.window
        rates: dict[str, dict[str, float]] = defaultdict(dict)
        series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = defaultdict(dict)
        for s in read_metric(ctx, "ifHCOutOctets").series:
            sw = (s.labels.get("instance") or "").split(":")[0]
            port = s.labels.get("ifName") or s.labels.get("ifDescr")
            if sw not in scope or not port or (uplinks.get(sw) and port not in uplinks[sw]):
                continue
            mask = in_window(s.timestamps, start, end)
            t, v = s.timestamps[mask], s.values[mask]
            if t.size >= 2 and t[-1] > t[0]:
                rates[sw][port] = counter_increase(v) / (t[-1] - t[0])
                series[sw][port] = (t, v)
        signals, checked = [], []
        for sw, by_port in rates.items():
            if len(by_port) < 2 or not uplinks.get(sw):
                continue  # without topology we cannot tell uplinks from host ports
            checked.append(sw)
            # Polarization starts somewhere in the window (a reroute, a new flow set): a window
            # average dilutes it. Judge the latest stretch in which the imbalance persists.
            by_port = _persistent_rates(series[sw]) or by_port
            idle.extend(f"{sw}/{p}" for p in _idle(by_port))
            if (sig := _imbalance(sw, by_port, "ifHCOutOctets")) is not None:
                signals.append(sig)
        return signals, checked


def _cold_half(vals: np.ndarray) -> float:
    """Mean rate of the colder half of the uplinks (the middle one with them when their number is
    odd). One idle or slow uplink among four or more shares its half with a busy one, so it alone
    never makes the switch look polarized; a polarized switch leaves a whole half (or more) cold."""
    s = np.sort(vals)
    return float(s[: len(s) - len(s) // 2].mean())


def _hashed(vals: np.ndarray) -> np.ndarray:
    """Which uplinks (a mask over ``vals``, bytes/s) the switch's hash spreads traffic over.

    An idle uplink (under ``MIN_UPLINK_RATE``) beside at least two busy ones that outnumber the
    idle is one that routing withdrew, a spine drained for maintenance: left out, the rest are
    judged among themselves. Idle uplinks as many as the busy ones, or beside one busy uplink of
    three or more, are the hash's doing: a polarized hash leaves the other uplinks with nothing,
    and draining most of a switch's spines at once is not how maintenance is done. Two uplinks,
    one idle, cannot be told apart from counters: read as drained, and said so."""
    finite = np.isfinite(vals)
    busy = finite & (vals >= MIN_UPLINK_RATE)
    n_busy, n_idle = int(busy.sum()), int((finite & ~busy).sum())
    if n_busy >= 2 and n_idle < n_busy:
        return busy
    if n_busy == 1 and n_idle == 1:
        return busy
    return finite


def _idle(by_port: dict[str, float]) -> list[str]:
    """The uplinks read as drained (left out of the balance)."""
    vals = np.array(list(by_port.values()), dtype=float)
    mask = _hashed(vals)
    return [p for p, r, m in zip(by_port, vals, mask, strict=True) if not m and np.isfinite(r)]


def _spread_ratio(vals: np.ndarray) -> float:
    """The busiest uplink's rate over the colder half's mean, among the uplinks the hash spreads
    over (NaN with fewer than two of them, or when none carries traffic)."""
    vals = vals[_hashed(vals)]
    if vals.size < 2 or vals.max() < MIN_UPLINK_RATE:
        return float("nan")
    return float(vals.max() / max(_cold_half(vals), 1.0))


def _imbalance(sw: str, by_port: dict[str, float], basis: str) -> Signal | None:
    """The uplink-imbalance signal for per-uplink transmit rates (bytes/s), or None when balanced."""
    drained = set(_idle(by_port))
    by_port = {p: r for p, r in by_port.items() if p not in drained}
    vals = np.array(list(by_port.values()))
    if not (vals.size >= 2 and _spread_ratio(vals) > IMBALANCE_RATIO):
        return None
    top = max(by_port, key=lambda port: by_port[port])
    cold = _cold_half(vals)
    # The hot uplinks: those far above the cold half, as the busiest is (one, or up to half of them).
    hot = sorted(
        (p for p, r in by_port.items() if r > IMBALANCE_RATIO * max(cold, MIN_UPLINK_RATE)),
        key=lambda p: -by_port[p],
    )
    share = float(sum(by_port[p] for p in hot) / vals.sum()) if vals.sum() else 0.0
    carry = (
        f"{top} alone carries {100 * share:.0f}% of the traffic of {len(vals)} uplinks"
        if len(hot) == 1
        else f"{len(hot)} of {len(vals)} uplinks ({', '.join(hot[:4])}{' …' if len(hot) > 4 else ''}) "
        f"carry {100 * share:.0f}% of the traffic"
    )
    return Signal(
        name="switch_uplink_imbalance",
        component=sw,
        kind="switch",
        detail=f"{sw} uplinks unevenly loaded: {top} at {by_port[top] * 8 / 1e9:.1f} Gb/s vs "
        f"{cold * 8 / 1e9:.1f} Gb/s on the colder half; {carry} ({basis})",
        values={
            "max_gbps": round(by_port[top] * 8 / 1e9, 1),
            "cold_half_gbps": round(cold * 8 / 1e9, 1),
            "uplinks": len(vals),
            "hot_uplinks": len(hot),
            "hot_share_pct": round(100 * share),
        },
    )


#: Consecutive scrape intervals an imbalance must last to be judged on its own (not a burst).
PERSIST_INTERVALS = 3


def _persistent_rates(by_port: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, float] | None:
    """Per-port rates over the trailing run of intervals in which the uplinks stay imbalanced.

    The ports' samples are aligned on their common timestamps; each interval's rates come from
    counter deltas (a drop is a reset and that interval is skipped). Returns None when no run of
    ``PERSIST_INTERVALS`` imbalanced intervals ends the window, so the window average decides.
    """
    common = None
    for t, _ in by_port.values():
        common = set(t.tolist()) if common is None else common & set(t.tolist())
    if not common or len(common) < PERSIST_INTERVALS + 1:
        return None
    ts = np.array(sorted(common))
    per: dict[str, np.ndarray] = {}
    for port, (t, v) in by_port.items():
        idx = np.searchsorted(t, ts)
        d = np.diff(v[idx])
        d[d < 0] = np.nan
        per[port] = d / np.diff(ts)
    mat = np.vstack(list(per.values()))  # ports x intervals
    ratio = np.array([_spread_ratio(mat[:, j]) for j in range(mat.shape[1])])
    run = 0
    for r in ratio[::-1]:
        if not np.isfinite(r) or r <= IMBALANCE_RATIO:
            break
        run += 1
    if run < PERSIST_INTERVALS:
        return None
    tail = mat[:, -run:]
    return {port: float(np.nanmean(row)) for port, row in zip(per, tail, strict=True)}


def _series_pauses(
    ctx: ToolContext, scope: list[str], have: set[tuple[str, str]]
) -> tuple[list[PortPause], list[str]]:
    """Per-port PFC counts from switch-port series (increase over the window), for ports with no
    ``show pfc counters`` row."""
    start, end = ctx.source.window
    counts: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: {"tx": 0.0, "rx": 0.0})
    sources: list[str] = []
    for metric, direction in PFC_SERIES:
        read = read_metric(ctx, metric)
        for s in read.series:
            sw = (s.labels.get("instance") or "").split(":")[0]
            port = s.labels.get("ifName") or s.labels.get("ifDescr") or s.labels.get("interface")
            if sw not in scope or not port or (sw, port) in have:
                continue
            mask = in_window(s.timestamps, start, end)
            if mask.sum() >= 2:
                counts[(sw, port)][direction] += counter_increase(s.values[mask])
        if read.series:
            sources.extend(read.sources)
    return [
        PortPause(sw, port, c["tx"], c["rx"], "PFC series increase over the window")
        for (sw, port), c in counts.items()
    ], sources


def _port_errors(
    ctx: ToolContext, scope: list[str], owner: dict[tuple[str, str], str], unread: list[str]
) -> tuple[list[Signal], list[str], list[str]]:
    """Switch ports whose RX_ERR + TX_ERR (``show interfaces counters``) stand out from their switch's.

    The counters count since they were last cleared, so one snapshot cannot place the errors in
    the window; a port far above every other port of the same switch, at a rate no healthy link
    shows, is a failing link all the same. When many ports stand out the cause is not one link.
    """
    argv = ["show", "interfaces", "counters"]
    signals: list[Signal] = []
    checked: list[str] = []
    sources: list[str] = []
    for name in scope:
        try:
            sw = ctx.source.switch(name)
            rows = parse_interfaces_counters(sw.run(argv)).interfaces
        except NotFoundError:
            continue
        except ForensicError as exc:
            unread.append(f"switch {name}: {exc}")
            continue
        errs = {
            r.iface: (r.rx_err or 0) + (r.tx_err or 0)
            for r in rows
            if r.rx_err is not None or r.tx_err is not None
        }
        if len(errs) < 4:
            continue
        frames = {r.iface: (r.rx_ok or 0) + (r.tx_ok or 0) for r in rows}
        checked.extend([name, *(f"{name}/{p}" for p in errs)])
        sources.append(sw.command_source(argv))
        med = statistics.median(errs.values())
        hot = [
            p
            for p, n in errs.items()
            if n >= PORT_ERR_MIN
            and n > PORT_ERR_OVER_MEDIAN * max(med, 1.0)
            and n >= PORT_ERR_RATIO * max(frames.get(p, 0), 1)
        ]
        if not 0 < len(hot) <= max(2, len(errs) // 20):
            continue
        by = {r.iface: r for r in rows}
        for port in hot:
            r = by[port]
            cabled = owner.get((name, port))
            comp = f"{name}/{port}"
            signals.append(
                Signal(
                    name="switch_port_errors",
                    component=comp,
                    kind="port",
                    detail=f"{comp} counts {r.rx_err or 0} receive and {r.tx_err or 0} transmit errors (port median {med:g})"
                    + (f" on its link to {cabled}" if cabled else "")
                    + ": frames cross that link corrupted (show interfaces counters)",
                    values={
                        "switch": name,
                        "port": port,
                        "rx_err": r.rx_err or 0,
                        "tx_err": r.tx_err or 0,
                        "median": med,
                        "cabled_to": cabled or "",
                    },
                )
            )
    return signals, checked, sources
