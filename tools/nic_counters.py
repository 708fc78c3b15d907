"""NIC counters as changes over the window: ``ethtool -S`` and InfiniBand/RoCE sysfs counters.

Counters are read at ``before`` (window start) and ``now``; what matters is how much each rose in
between, judged against the other NICs of the fleet. PFC direction matters:
``tx_prioN_pause`` rising means this NIC cannot drain and pauses the switch (a candidate origin);
``rx_prioN_pause`` rising means the switch pauses this NIC (a victim of congestion elsewhere).
A host that holds no rank of the job lends the verdict only the pauses it sends (named by the switch
port they enter); the bytes each NIC moved show whether the job uses every rail.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._inventory import inventory
from forensic.tools._sweep import NIC_PEERS
from forensic.tools.base import (
    PEER_SAMPLE,
    HostScope,
    Signal,
    Tool,
    ToolContext,
    ToolResult,
    by_signal,
    count,
    register,
)
from forensic.tools.parsers.ethtool import counter_deltas, parse_ethtool_stats, pfc_summary
from forensic.tools.parsers.infiniband import (
    ib_counter_deltas,
    parse_ib_port_state,
    parse_ib_rate,
    parse_ibstat,
)
from forensic.tools.parsers.sysfs import parse_int_file

_IB_ERRORS = (
    "symbol_error",
    "port_rcv_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "port_rcv_remote_physical_errors",
    "excessive_buffer_overrun_errors",
)
_ETH_ERRORS = (
    "rx_symbol_err_phy",
    "rx_crc_errors_phy",
    "link_down_events_phy",
    "rx_pcs_symbol_err_phy",
    "carrier_changes",
)
#: Pause frames one NIC must send over the window, and how far above the fleet, to be an origin.
ORIGIN_MIN_PAUSES = 1000
ORIGIN_FLEET_FACTOR = 10.0
#: Hosts whose NICs may each look like a pause origin before the surplus is load, not one origin.
MAX_ORIGIN_HOSTS = 2
MAX_ORIGIN_HOST_SHARE = 0.1
#: A NIC moving less than this share of its host's busiest NIC's bytes over the window is idle.
IDLE_SHARE = 0.02
#: The job's hosts (this share of those read, and at least MIN_RAIL_HOSTS) must leave NICs idle.
RAIL_HOST_SHARE = 0.75
MIN_RAIL_HOSTS = 2
#: Link errors over the window worth a finding (a few symbol errors a day are normal).
MIN_LINK_ERRORS = 10
#: RDMA transport retries (hw_counters) one NIC must count over the window, and how far above the
#: fleet median, to mark the lossy path that ends at it. Retries everywhere are congestion.
_RETRANSMITS = ("packet_seq_err", "out_of_sequence", "local_ack_timeout_err")
MIN_RETRANSMITS = 100


@dataclass
class NicReading:
    host: str
    nic: str
    netdev: str | None
    seconds: float | None = None
    eth: dict[str, int] = field(default_factory=dict)  # deltas (or absolute without before/)
    ib: dict[str, int] = field(default_factory=dict)
    have_before: bool = False
    rate_gbps: float | None = None
    state: str | None = None
    phys_state: str | None = None
    sources: list[str] = field(default_factory=list)

    @property
    def component(self) -> str:
        return f"{self.host}/{self.nic}"


def _ib_counters(node, ibdev: str, port: int) -> tuple[dict[str, int], list[str]]:
    """Every integer counter of one port, and the folders that held them (for citations)."""
    out: dict[str, int] = {}
    srcs: list[str] = []
    for sub in ("counters", "hw_counters"):
        base = f"/sys/class/infiniband/{ibdev}/ports/{port}/{sub}"
        read_from = None
        for name in node.list(base):
            try:
                v = parse_int_file(node.read(f"{base}/{name}"))
            except NotFoundError:
                continue
            if v is not None:
                out[name] = v
                read_from = read_from or node.source(f"{base}/{name}").rsplit("/", 1)[0]
        if read_from:
            srcs.append(read_from)
    return out, srcs


def _read(ctx: ToolContext, host: str) -> list[NicReading]:
    inv = inventory(ctx, host)
    now, before = ctx.source.host(host), ctx.source.host(host, "before")
    times = ctx.source.collected(host)
    seconds = times["now"] - times["before"] if "now" in times and "before" in times else None
    out = []
    for dev in inv.nics.values():
        r = NicReading(host=host, nic=dev.name, netdev=dev.netdev, seconds=seconds)
        port = int(dev.info.get("port") or 1)
        if dev.netdev and now.has_command(["ethtool", "-S", dev.netdev]):
            stats_now = parse_ethtool_stats(now.run(["ethtool", "-S", dev.netdev]))
            r.sources.append(now.command_source(["ethtool", "-S", dev.netdev]))
            if before.has_command(["ethtool", "-S", dev.netdev]):
                r.eth = counter_deltas(
                    parse_ethtool_stats(before.run(["ethtool", "-S", dev.netdev])), stats_now
                )
                r.have_before = True
            else:
                r.eth = stats_now
        ib_now, srcs = _ib_counters(now, dev.name, port)
        if ib_now:
            r.sources.extend(srcs)
            ib_before, _ = _ib_counters(before, dev.name, port)
            if ib_before:
                r.ib = {k: d.delta for k, d in ib_counter_deltas(ib_before, ib_now, seconds).items()}
                r.have_before = True
            else:
                r.ib = ib_now
        base = f"/sys/class/infiniband/{dev.name}/ports/{port}"
        if now.exists(f"{base}/rate"):
            try:
                r.rate_gbps = parse_ib_rate(now.read(f"{base}/rate"))
            except ForensicError:
                r.rate_gbps = None
        if now.exists(f"{base}/state"):
            r.state = now.read(f"{base}/state").strip()
        _link_forms(r, now, before, dev.name, port, base)
        if r.sources or r.rate_gbps is not None:
            out.append(r)
    return out


def _link_forms(r: NicReading, now, before, ibdev: str, port: int, base: str) -> None:
    """The link's other forms, for a link whose rate alone looks fine: physical state (a port stuck in Polling or
    LinkErrorRecovery), carrier changes of its netdev over the window (each flap is two), and
    ``ibstat`` where sysfs gave no rate or state."""
    try:
        if now.exists(f"{base}/phys_state"):
            r.phys_state = parse_ib_port_state(now.read(f"{base}/phys_state")).name
        if r.netdev and now.exists(f"/sys/class/net/{r.netdev}/carrier_changes"):
            cc_now = parse_int_file(now.read(f"/sys/class/net/{r.netdev}/carrier_changes"))
            cc_before = (
                parse_int_file(before.read(f"/sys/class/net/{r.netdev}/carrier_changes"))
                if before.exists(f"/sys/class/net/{r.netdev}/carrier_changes")
                else None
            )
            if cc_now is not None and cc_before is not None and cc_now >= cc_before:
                # Two changes (down, up) per flap; only a rise over the window counts: a link that
                # came up at boot has a few changes forever.
                r.eth["carrier_changes"] = cc_now - cc_before
        if (r.rate_gbps is None or r.state is None) and now.has_command(["ibstat"]):
            for ca in parse_ibstat(now.run(["ibstat"])):
                if ca.name != ibdev:
                    continue
                for p in ca.ports:
                    if p.number == port:
                        r.rate_gbps = r.rate_gbps if r.rate_gbps is not None else p.rate_gbps
                        r.state = r.state or p.state
                        r.phys_state = r.phys_state or p.physical_state
                        r.sources.append(now.command_source(["ibstat"]))
    except ForensicError:
        return


def _tx_pauses(r: NicReading) -> tuple[int, int, int | None]:
    """(tx pauses, rx pauses, lossless priority) on the most active priority."""
    if not r.eth:
        return 0, 0, None
    s = pfc_summary(r.eth)
    if s.lossless is None:
        return 0, 0, None
    return s.lossless.tx_pause or 0, s.lossless.rx_pause or 0, s.lossless_priority


@register
class NicCounters(Tool):
    name = "nic_counters"
    emits = frozenset(
        {
            "link_below_rate",
            "link_errors",
            "nic_out_of_buffer",
            "nic_rails_idle",
            "pause_storm_events",
            "pfc_origin",
            "pfc_victim",
            "rdma_retransmits",
        }
    )
    description = (
        "NIC counters over the window (ethtool -S and InfiniBand/RoCE sysfs counters, before vs now): per-priority "
        "PFC pauses sent (origin: cannot drain) and received (victim), pause-storm events, out-of-buffer and "
        "discards, symbol/CRC errors and link-down events, port rate vs peers, and where the job's bytes went (NICs "
        "left idle on every host). Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        # Fleet context is needed even for one host: an origin is judged against every NIC.
        # On a large fleet a one-host call compares with a sample of peers (ctx.peers), each host's
        # readings parsed once per investigation.
        fleet, failed = _fleet(
            ctx, ctx.source.host_names() if args.host is None else _peers(ctx, ctx.hosts(args.host))
        )
        scope = [r for r in fleet if args.host is None or r.host == args.host]
        unread = [f"{h}: {why}" for h, why in failed.items() if args.host is None or h == args.host]
        if args.host is not None:
            ctx.hosts(args.host)
        if not scope:
            return ToolResult(
                status="error" if unread else "no_data",
                unread=unread,
                summary=f"no NIC counters recorded for {args.host or 'any host'}"
                + (f": {unread[0]}" if unread else ""),
            )
        tx_all = [_tx_pauses(r)[0] for r in fleet]
        tx_median = statistics.median(tx_all) if tx_all else 0
        job = ctx.source.job_hosts()
        cabled = _cabling(ctx)
        # A NIC that cannot drain is one part; the same surplus of sent pauses on NICs of many hosts
        # is load the job puts on them (all its traffic on a few rails), not one origin each.
        senders = {
            r.host
            for r in fleet
            if _tx_pauses(r)[0] >= ORIGIN_MIN_PAUSES
            and _tx_pauses(r)[0] > ORIGIN_FLEET_FACTOR * max(tx_median, 1)
        }
        load_not_origin = len(senders) > max(
            MAX_ORIGIN_HOSTS, int(MAX_ORIGIN_HOST_SHARE * len({r.host for r in fleet}))
        )
        outside: list[str] = []
        modal = Counter(r.rate_gbps for r in fleet if r.rate_gbps).most_common(1)
        modal_rate = modal[0][0] if modal else None
        signals: list[Signal] = []
        victims = []
        # Without a window-start snapshot a counter is a total since its last reset: it can only
        # count as evidence when it stands far above what the same counter reads on its peers.
        err_all = [_errors(r) for r in fleet]
        err_median = statistics.median(sum(e.values()) for e in err_all) if err_all else 0
        rtx_all = [_retransmits(r) for r in fleet if r.have_before]
        rtx_median = statistics.median(rtx_all) if rtx_all else 0
        for r in scope:
            comp = r.component
            # A host that holds no rank of the job: its links cannot slow the job; only pauses it
            # sends into the fabric can, and those are named by the switch port they enter.
            out_of_job = bool(job) and r.host not in job
            port = cabled.get(comp) if out_of_job else None

            def sig(name: str, detail: str, **values: float | int | str | bool | None) -> None:
                _emit(signals, outside, r, port, out_of_job, name, detail, values)  # noqa: B023 (called in this iteration only)

            span = (
                "over the window"
                if r.have_before
                else "since the counters were last reset (no window-start snapshot)"
            )
            tx, rx, prio = _tx_pauses(r)
            if load_not_origin and r.host in senders:
                pass  # said once for all of them below
            elif tx >= ORIGIN_MIN_PAUSES and tx > ORIGIN_FLEET_FACTOR * max(tx_median, 1):
                sig(
                    "pfc_origin",
                    f"{comp} sent {tx} PFC pause frames on priority {prio} {span} (fleet median {tx_median:g}): it cannot drain",
                    tx_pause=tx,
                    rx_pause=rx,
                    priority=prio,
                    fleet_median_tx_pause=tx_median,
                )
            elif r.have_before and rx >= ORIGIN_MIN_PAUSES and rx > 2 * max(tx, 1):
                victims.append(comp)
                sig(
                    "pfc_victim",
                    f"{comp} received {rx} PFC pause frames on priority {prio} {span}: the switch pauses it",
                    rx_pause=rx,
                    tx_pause=tx,
                    priority=prio,
                )
            storms = (r.eth.get("tx_pause_storm_warning_events") or 0) + (
                r.eth.get("tx_pause_storm_error_events") or 0
            )
            if storms:
                sig(
                    "pause_storm_events", f"{comp} reported {storms} pause-storm events {span}", events=storms
                )
            oob = {
                k: v
                for k, v in r.eth.items()
                if (k in ("rx_out_of_buffer", "rx_discards_phy") or k.startswith("outbound_pci_stalled"))
                and v
            }
            if r.ib.get("out_of_buffer"):
                oob["out_of_buffer"] = r.ib["out_of_buffer"]
            if oob and r.have_before and sum(oob.values()) >= ORIGIN_MIN_PAUSES // 10:
                sig(
                    "nic_out_of_buffer",
                    f"{comp} ran out of receive buffer {span}: "
                    + ", ".join(f"{k} +{v}" for k, v in sorted(oob.items())),
                    **{k: v for k, v in sorted(oob.items())},
                )
            errs = _errors(r)
            total = sum(errs.values())
            downs = (
                errs.get("link_downed", 0)
                + errs.get("link_down_events_phy", 0)
                + errs.get("carrier_changes", 0) // 2
            )
            if (r.have_before and (total >= MIN_LINK_ERRORS or downs)) or (
                not r.have_before
                and total >= 10 * MIN_LINK_ERRORS
                and total > ORIGIN_FLEET_FACTOR * max(err_median, 1)
            ):
                sig(
                    "link_errors",
                    f"{comp} link errors {span}: "
                    + ", ".join(f"{k} +{v}" for k, v in sorted(errs.items()))
                    + ("" if r.have_before else f" (fleet median {err_median:g})"),
                    **{k: v for k, v in sorted(errs.items())},
                )
            rtx = _retransmits(r) if r.have_before else 0
            if rtx >= MIN_RETRANSMITS and rtx > ORIGIN_FLEET_FACTOR * max(rtx_median, 1):
                # Go-back-N retries and ACK timeouts at one NIC only: packets on its path are lost
                # (corrupted or dropped), and every retry stalls the collective that waits on it.
                sig(
                    "rdma_retransmits",
                    f"{comp} RDMA transport retries over the window: "
                    + ", ".join(f"{k} +{r.ib[k]}" for k in _RETRANSMITS if r.ib.get(k))
                    + f" (fleet median {rtx_median:g}): packets on its path are lost",
                    **{k: r.ib[k] for k in _RETRANSMITS if r.ib.get(k)},
                    fleet_median=rtx_median,
                )
            if r.rate_gbps and modal_rate and r.rate_gbps < modal_rate:
                sig(
                    "link_below_rate",
                    f"{comp} port runs at {r.rate_gbps:g} Gb/s, its peers at {modal_rate:g} Gb/s",
                    rate_gbps=r.rate_gbps,
                    peer_rate_gbps=modal_rate,
                )
            if r.state and "ACTIVE" not in r.state.upper():
                sig("link_below_rate", f"{comp} port state is {r.state}", state=r.state)
            elif (
                r.phys_state
                and r.phys_state.replace(" ", "").lower() not in ("linkup", "")
                and r.phys_state != "?"
            ):
                sig(
                    "link_below_rate",
                    f"{comp} physical state is {r.phys_state} (not LinkUp)",
                    phys_state=r.phys_state,
                )
        per_host: Counter = Counter(h for h, _ in ctx.source.rank_map().values())
        rails = _rails_idle(fleet, job, dict(per_host))
        if rails is not None:
            signals.append(rails)
        summary = f"{count(len(scope), 'NIC')} read on {count(len({r.host for r in scope}), 'host')}; "
        summary += by_signal(signals) if signals else "no pause origin, drops or link errors"
        if load_not_origin:
            summary += (
                f"; NICs on {count(len(senders), 'host')} send pauses far above the fleet: load on the rails "
                "the job uses, not one NIC that cannot drain"
            )
        if outside:
            summary += f"; outside the job (not counted): {', '.join(outside[:3])}" + (
                f" and {len(outside) - 3} more" if len(outside) > 3 else ""
            )
        if not all(r.have_before for r in scope):
            summary += " (some NICs have no window-start snapshot: their counters are totals since reset)"
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            source=sorted({s for r in scope for s in r.sources}),
            covered=[r.component for r in scope] + sorted({r.host for r in scope}),
            data={
                "fleet_median_tx_pause": tx_median,
                "victims": victims,
                "modal_rate_gbps": modal_rate,
                "nics": {r.component: _rates(r) for r in scope},
            },
            unread=unread,
        )


_RATE_KEYS = (
    "port_xmit_data",
    "port_rcv_data",
    "port_xmit_wait",
    "rx_bytes_phy",
    "tx_bytes_phy",
    "np_cnp_sent",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
)


def _rates(r: NicReading) -> dict[str, float | int | bool | None]:
    """Per-second rates of the traffic and congestion counters, when a window-start snapshot exists."""
    tx, rx, _ = _tx_pauses(r)
    out: dict[str, float | int | bool | None] = {
        "window_s": r.seconds,
        "deltas": r.have_before,
        "tx_pause": tx,
        "rx_pause": rx,
    }
    if r.have_before and r.seconds:
        for k in _RATE_KEYS:
            v = r.ib.get(k, r.eth.get(k))
            if v is not None:
                # IB data counters count 4-byte words
                out[f"{k}_per_s"] = round(v * (4 if k.endswith("_data") else 1) / r.seconds, 3)
    return out


def _retransmits(r: NicReading) -> int:
    """RDMA transport retries counted over the window (hw_counters deltas)."""
    return sum(max(r.ib.get(k, 0), 0) for k in _RETRANSMITS)


def _errors(r: NicReading) -> dict[str, int]:
    """Link error counters that moved, IB and Ethernet names together."""
    both = {**{k: r.ib.get(k, 0) for k in _IB_ERRORS}, **{k: r.eth.get(k, 0) for k in _ETH_ERRORS}}
    return {k: v for k, v in both.items() if v}


def _peers(ctx: ToolContext, hosts: list[str]) -> list[str]:
    """``hosts`` and the peers they are judged against: a fleet of up to ``PEER_SAMPLE`` other hosts
    is read whole (as before); a larger one through a sample of :data:`NIC_PEERS` hosts (eight NICs
    each, over a hundred counter files per host: a fixed cost whatever the fleet's size)."""
    if len(ctx.source.host_names()) <= len(hosts) + PEER_SAMPLE:
        return ctx.peers(hosts)
    return ctx.peers(hosts, NIC_PEERS)


def _fleet(ctx: ToolContext, hosts: list[str]) -> tuple[list[NicReading], dict[str, str]]:
    """The hosts' NIC readings, and the hosts whose NICs could not be read (host -> why)."""
    out: list[NicReading] = []
    failed: dict[str, str] = {}
    for host in hosts:
        readings, why = ctx.memo(f"nic_readings:{host}", partial(_read_or_none, ctx, host))
        out.extend(readings)
        if why is not None:
            failed[host] = why
    return out, failed


def _read_or_none(ctx: ToolContext, host: str) -> tuple[list[NicReading], str | None]:
    """A host's NIC readings; none and why when they cannot be read (not recorded is no error)."""
    try:
        return _read(ctx, host), None
    except NotFoundError:
        return [], None
    except ForensicError as exc:
        return [], str(exc)


def _emit(
    signals: list[Signal],
    outside: list[str],
    r: NicReading,
    port: str | None,
    out_of_job: bool,
    name: str,
    detail: str,
    values: dict,
) -> None:
    """Append one NIC finding: on the NIC; for a host outside the job only pauses it sends count,
    named by the switch port they enter (its link faults are said in the summary, not signalled)."""
    if out_of_job and name not in ("pfc_origin", "pause_storm_events"):
        outside.append(f"{name} on {r.component}")
        return
    if port is not None:
        signals.append(
            Signal(
                name=name,
                component=port,
                kind="port",
                detail=f"{detail}; {r.host} holds no rank of the job: its pauses enter the fabric at {port}",
                values={**values, "origin_host": r.host, "cabled_to": r.component},
            )
        )
        return
    signals.append(Signal(name=name, component=r.component, kind="nic", detail=detail, values=values))


def _cabling(ctx: ToolContext) -> dict[str, str]:
    """NIC component -> the switch port topology cables it to."""
    topo = ctx.source.topology
    return {
        f"{h.name}/{n.ibdev}": f"{n.switch}/{n.switch_port}"
        for h in (topo.hosts if topo else [])
        for n in h.nics
        if n.switch and n.switch_port
    }


def _traffic(r: NicReading) -> float | None:
    """Bytes the NIC moved over the window, both directions; None without a window-start snapshot."""
    if not r.have_before:
        return None
    if "port_xmit_data" in r.ib or "port_rcv_data" in r.ib:
        return 4.0 * (max(r.ib.get("port_xmit_data", 0), 0) + max(r.ib.get("port_rcv_data", 0), 0))
    if "tx_bytes_phy" in r.eth or "rx_bytes_phy" in r.eth:
        return float(max(r.eth.get("tx_bytes_phy", 0), 0) + max(r.eth.get("rx_bytes_phy", 0), 0))
    return None


def _rails_idle(fleet: list[NicReading], job: AbstractSet[str], gpus: dict[str, int]) -> Signal | None:
    """The job's traffic on a subset of each host's NICs, the others idle, on (nearly) every host.

    A synchronous job spreads its collectives over every rail NCCL is allowed to use; the same
    NICs idle on host after host is a setting of the job (which NICs or rails it may use), not a
    fault of any one link. A NIC down or trained low says so in its own counters and state.
    ``gpus``: the job's GPUs per host. A host counts only when at most half its NICs carry the
    traffic (one idle storage or management NIC beside the rails is normal) and fewer NICs than
    the job has GPUs there (NCCL gives each GPU its nearest NIC: two GPUs use two NICs).
    """
    by_host: dict[str, list[tuple[str, float]]] = {}
    for r in fleet:
        if job and r.host not in job:
            continue
        t = _traffic(r)
        if t is not None:
            by_host.setdefault(r.host, []).append((r.nic, t))
    narrowed: dict[str, tuple[int, int]] = {}
    busy_names: Counter = Counter()
    for host, nics in by_host.items():
        if len(nics) < 2:
            continue
        top = max(t for _, t in nics)
        if top <= 0:
            continue
        busy = [n for n, t in nics if t >= IDLE_SHARE * top]
        if len(busy) <= len(nics) // 2 and len(busy) < gpus.get(host, len(nics)):
            narrowed[host] = (len(busy), len(nics))
            busy_names.update(busy)
    hosts = [h for h, nics in by_host.items() if len(nics) >= 2]
    if len(narrowed) < max(MIN_RAIL_HOSTS, RAIL_HOST_SHARE * len(hosts)):
        return None
    used = max(u for u, _ in narrowed.values())
    have = max(n for _, n in narrowed.values())
    names = ", ".join(n for n, _ in busy_names.most_common(used))
    return Signal(
        name="nic_rails_idle",
        component="job",
        kind="job",
        detail=f"on {len(narrowed)} of {len(hosts)} job hosts the traffic of the window went over {used} of "
        f"{have} NICs ({names}); the others idled (under {100 * IDLE_SHARE:g}% of the busiest): the job "
        "uses fewer rails than the hosts have",
        values={
            "hosts": len(narrowed),
            "of_hosts": len(hosts),
            "nics_used": used,
            "nics": have,
            "busy": names,
        },
    )
