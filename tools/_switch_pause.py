"""Where a PFC storm starts, followed from the switch side across every tier.

PFC is hop by hop: a device whose buffer for one port fills transmits PAUSE out of the ports that
feed it; its neighbours stop sending, their own buffers fill, and they pause *their* feeders. The
pauses so travel against the traffic, leaf -> spine -> (core -> spine ->) leaf -> host, and every
job NIC on the way only receives them. The origin is the one device that transmits pauses while
nothing pauses it:

- a **switch** whose port transmits pauses (``Tx PFC`` on a leaf uplink, a spine or core port, a
  leaf's host port) while no port of that switch receives any: ``<switch>/<port>``;
- **what is cabled to a port** that receives pauses (``Rx PFC``, or the PFC watchdog holding the
  port's queue ``stormed``) while the switch sends none back on it: a host's NIC. A NIC of the
  job's own hosts is named as the NIC; a host outside the job (a spare, another tenant) or a port
  with nothing listed behind it is named by the port where the storm enters the fabric.

:func:`trace` builds that graph of pauses (an edge from the device that sends pauses to the one
that receives them; inter-switch cables from ``topology.json``, both ends of a cable read as one
edge) and walks it against the pauses from every sender until it reaches devices that receive
none. A switch counts as an origin only when its own counters were read (a switch nobody recorded
may receive pauses we cannot see). A switch that *transmits* at its strongest port's level (within
``HOT_FACTOR``) on many ports at once with nothing pausing it is congested (incast), not one bad
port: no origin is named there.

Counts come from ``show pfc counters`` (cumulative since the counters were cleared) or from
per-port series (``ieee8021PfcRequests`` sent / ``ieee8021PfcIndications`` received from
snmp_exporter's IEEE8021-PFC-MIB, with ``instance`` the switch and ``ifName`` the port), whose
increase over the window is used. Counts are judged against the fabric's quiet level (a low
quantile of every port's count, both directions), not its median: a storm that spreads over
several tiers makes half the ports of a fabric send pauses.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

#: A port's count must be this many times the fabric's quiet level, and at least MIN_FRAMES.
HOT_FACTOR = 10.0
MIN_FRAMES = 1000
#: The quiet level: this quantile of every port's counts, both directions pooled.
QUIET_QUANTILE = 0.2
#: A switch sending pauses on more ports than this (and this share of its ports) is congested, not
#: one port's origin.
MAX_ORIGIN_PORTS = 2
MAX_HOT_SHARE = 0.1
#: More separate origins than this is general congestion across the fabric.
MAX_ORIGINS = 2

#: Per-port PFC series: (sample name, direction). Transmitted = the switch sent PAUSE out of the port.
PFC_SERIES = (("ieee8021PfcRequests", "tx"), ("ieee8021PfcIndications", "rx"))


@dataclass(frozen=True)
class PortPause:
    """PFC frames one switch port sent (tx) and received (rx) over what was read."""

    switch: str
    port: str
    tx: float
    rx: float
    basis: str


@dataclass(frozen=True)
class Origin:
    """Where a storm starts: a switch sending out of ``port``, or what is cabled to ``port``."""

    switch: str
    port: str
    sender: Literal["switch", "peer"]
    frames: float
    """Pauses sent by the origin over what was read."""
    quiet: float
    """The fabric's quiet level the count was judged against."""
    basis: str
    reached: tuple[str, ...] = ()
    """Switches the pauses crossed after the origin, in the order reached."""
    victims: tuple[tuple[str, str], ...] = ()
    """Host-facing ports (switch, port) paused downstream, i.e. the NICs that only receive."""

    @property
    def component(self) -> str:
        return f"{self.switch}/{self.port}"


@dataclass
class _Edge:
    sender: str
    receiver: str
    frames: float
    send_port: tuple[str, str]
    """Where the pauses leave: the sending switch's port, or for a device cabled to a switch port,
    that port (where they enter the fabric)."""
    recv_port: tuple[str, str]
    """Where they arrive: the receiving switch's port, or the port a receiving device hangs on."""


@dataclass
class _Graph:
    edges: list[_Edge] = field(default_factory=list)
    into: dict[str, list[_Edge]] = field(default_factory=lambda: defaultdict(list))
    out: dict[str, list[_Edge]] = field(default_factory=lambda: defaultdict(list))

    def add(self, e: _Edge) -> None:
        # One cable read from both ends is one edge: keep the larger count.
        for old in self.out[e.sender]:
            if old.receiver == e.receiver and old.send_port == e.send_port:
                old.frames = max(old.frames, e.frames)
                return
        self.edges.append(e)
        self.into[e.receiver].append(e)
        self.out[e.sender].append(e)


def _peer_node(switch: str, port: str) -> str:
    """The node for whatever is cabled to a host-facing (or unlisted) port."""
    return f"@{switch}/{port}"


def quiet_level(ports: list[PortPause]) -> float:
    """The fabric's quiet level: a low quantile of every port's counts. A direction that reads zero
    on every port was not recorded (an exporter set up for one direction): it is left out, or its
    zeros would make every port's noise look hot."""
    tx = [p.tx for p in ports]
    rx = [p.rx for p in ports]
    vals = sorted((tx if any(tx) else []) + (rx if any(rx) else []))
    if not vals:
        return 0.0
    return float(statistics.quantiles(vals, n=10, method="inclusive")[1]) if len(vals) >= 2 else vals[0]


def trace(
    ports: list[PortPause],
    links: dict[tuple[str, str], tuple[str, str]],
    *,
    stormed: set[tuple[str, str]] | frozenset = frozenset(),
    history: set[tuple[str, str]] | frozenset = frozenset(),
) -> list[Origin]:
    """Every origin of the pauses in ``ports``, strongest first (at most :data:`MAX_ORIGINS`).

    ``links``: (switch, port) -> (peer switch, peer port) for inter-switch cables (both ends).
    ``stormed``: ports whose PFC watchdog holds a queue in storm now (a storm received there).
    ``history``: ports whose watchdog says every storm it saw there was restored: a receive count
    there is history (the counters are cumulative), not a live storm.
    """
    if len(ports) < 4:
        return []
    quiet = quiet_level(ports)
    bar = max(MIN_FRAMES, HOT_FACTOR * max(quiet, 1.0))
    recorded = {p.switch for p in ports}
    per_switch: dict[str, int] = defaultdict(int)
    for p in ports:
        per_switch[p.switch] += 1
    basis = {p.switch: p.basis for p in ports}
    g = _Graph()
    for p in ports:
        key = (p.switch, p.port)
        peer = links.get(key)
        other, far = (peer[0], peer) if peer else (_peer_node(p.switch, p.port), key)
        if p.tx >= bar:
            g.add(_Edge(p.switch, other, p.tx, key, far))
        rx_live = p.rx >= bar and (key not in history or key in stormed)
        if rx_live or key in stormed:
            g.add(_Edge(other, p.switch, max(p.rx, bar if key in stormed else 0.0), far, key))
    found: list[Origin] = []
    for node, sent in list(g.out.items()):
        if not sent or g.into.get(node):
            continue  # it receives pauses: it passes them on
        if node.startswith("@"):
            e = max(sent, key=lambda x: x.frames)
            sender: Literal["switch", "peer"] = "peer"
        else:
            if node not in recorded:
                continue  # its own ports were not read: it may receive pauses we cannot see
            e = max(sent, key=lambda x: x.frames)
            # "Many ports" is judged against the strongest sender, not against the bar: ports that
            # send within a factor HOT_FACTOR of it send at its level, hot or not (a leaf pausing
            # every busy job port at 400-1100 frames is loaded, and the one port that crossed the
            # bar is the top of that spread), while ports more than HOT_FACTOR below it are the
            # switch's background, however many of them cross the absolute bar (a port sending
            # 100M frames beside host ports trickling a few thousand is one origin).
            level = [p for p in ports if p.switch == node and p.tx > 0 and p.tx * HOT_FACTOR >= e.frames]
            if len(level) > max(MAX_ORIGIN_PORTS, int(MAX_HOT_SHARE * per_switch[node])):
                continue  # pausing many ports at once: congestion at this switch, not one port
            sender = "switch"
        reached, victims = _downstream(g, e)
        found.append(
            Origin(
                switch=e.send_port[0],
                port=e.send_port[1],
                sender=sender,
                frames=e.frames,
                quiet=quiet,
                basis=basis.get(e.send_port[0], ""),
                reached=tuple(reached),
                victims=tuple(victims),
            )
        )
    found.sort(key=lambda o: (-(len(o.victims) + len(o.reached)), -o.frames))
    return found if len(found) <= MAX_ORIGINS else []


def _downstream(g: _Graph, first: _Edge) -> tuple[list[str], list[tuple[str, str]]]:
    """Switches and host-facing ports the pauses from ``first`` reach.

    A device passes on the pauses of its strongest incoming edge: its sends are attributed to that
    one (so a weaker, unrelated count elsewhere on a propagating switch claims none of them).
    """
    reached: list[str] = []
    victims: list[tuple[str, str]] = []
    todo = [first]
    seen: set[str] = set()
    while todo:
        e = todo.pop(0)
        node = e.receiver
        if node.startswith("@"):
            victims.append(e.recv_port)
            continue
        if node in seen:
            continue
        strongest = max(g.into.get(node, [e]), key=lambda x: x.frames)
        if strongest is not e and strongest.frames > e.frames:
            # Not marked seen: its strongest edge may still come later in the walk (the order of
            # the edges is the order ports were read in, which says nothing about the storm).
            continue
        seen.add(node)
        reached.append(node)
        todo.extend(g.out.get(node, []))
    return reached, victims


def origins(ports: list[PortPause]) -> list[tuple[PortPause, float]]:
    """(port, quiet level) for every switch port that originates pauses, read without topology."""
    by = {(p.switch, p.port): p for p in ports}
    return [(by[(o.switch, o.port)], o.quiet) for o in trace(ports, {}) if o.sender == "switch"]
