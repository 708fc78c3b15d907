"""Switch ports as pause origins: where a PFC storm starts, read from the switches' side.

PFC is hop by hop: a port transmits PAUSE when the buffer behind it fills. A host NIC that cannot
drain transmits pauses into its leaf (``tx_prioN_pause`` rising on the host, Rx PFC on the leaf
port); a *switch* port that cannot drain transmits pauses into whatever is cabled to it, and the
hosts behind it show only ``rx_prioN_pause`` (victims). Read from the switch side:

- a port that transmits far more PFC than the other ports of the fabric, on a switch that itself
  receives no storm of pauses on any port (it is not passing on someone else's backpressure), is
  the origin: ``<switch>/<port>``;
- a switch that transmits pauses while one of its ports *receives* a storm is propagating: the
  origin is further along, and the device on that receiving port is the lead (left to the
  existing receive-side rules).

Counts come from ``show pfc counters`` (cumulative, so compared across ports of the same fabric)
or from per-port series (``ieee8021PfcRequests`` sent / ``ieee8021PfcIndications`` received from
snmp_exporter's IEEE8021-PFC-MIB, with ``instance`` the switch and ``ifName`` the port), whose
increase over the window is used.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

#: A port's PFC count must be this many times the fleet's port median, and at least MIN_FRAMES.
HOT_FACTOR = 10.0
MIN_FRAMES = 1000
#: A switch receiving this many times the median (and RX_MIN frames) on any port is passing pauses on.
RX_FACTOR = 3.0
RX_MIN = 100
#: More hot ports than this share of the fabric is general congestion, not one origin.
MAX_HOT_SHARE = 0.1

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


def origins(ports: list[PortPause]) -> list[tuple[PortPause, float]]:
    """(port, median tx of all ports) for every switch port that originates pauses.

    A hot *receive* on a switch (a NIC origin on a host-facing port, or a peer switch pausing an
    uplink) marks that switch as a propagator: its own sends are spill-over, not an origin.
    """
    if len(ports) < 4:
        return []
    med_tx = statistics.median(p.tx for p in ports)
    med_rx = statistics.median(p.rx for p in ports)
    hot_tx = [p for p in ports if p.tx >= MIN_FRAMES and p.tx > HOT_FACTOR * max(med_tx, 1.0)]
    # A low bar on purpose: any real backpressure into a switch makes its sends spill-over.
    receiving = {p.switch for p in ports if p.rx >= RX_MIN and p.rx > RX_FACTOR * max(med_rx, 1.0)}
    if not hot_tx or len(hot_tx) > max(2, int(MAX_HOT_SHARE * len(ports))):
        return []
    out = []
    for p in hot_tx:
        if p.switch in receiving:
            continue  # it passes on pauses it receives: not the origin
        out.append((p, med_tx))
    # One origin per switch: the port that sends the most (its neighbours' sends are spill-over).
    best: dict[str, tuple[PortPause, float]] = {}
    for p, med in out:
        if p.switch not in best or p.tx > best[p.switch][0].tx:
            best[p.switch] = (p, med)
    return sorted(best.values(), key=lambda x: -x[0].tx)
