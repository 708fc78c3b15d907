"""`ethtool -S <netdev>` statistics (mlx5e names) and the PFC view over a before/now pair.

The kernel prints ``NIC statistics:`` and then one indented ``name: value`` line per counter.
Recorded files lose the header, gain tabs or carriage returns, or end mid-line; every line that
still reads as ``name: integer`` is kept and everything else is skipped.

Direction matters for PFC (reference §4.1, §9.5): ``rx_prioN_pause`` rising means the switch pauses
this host (a victim of congestion elsewhere); ``tx_prioN_pause`` rising means this NIC cannot drain
and pauses the fabric (a candidate origin). Durations are microseconds.
"""

from __future__ import annotations

import re

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import as_text, numbered_lines
from pydantic import BaseModel, ConfigDict

__all__ = [
    "PfcSummary",
    "PriorityPause",
    "counter_deltas",
    "parse_ethtool_stats",
    "pfc_summary",
]

_MAX_LINE = 64 * 1024
# u64 counters print at most 20 digits; refusing longer runs keeps int() cheap on hostile input.
_VALUE = re.compile(r"[0-9]{1,20}")
_PRIO_COUNTER = re.compile(r"(rx|tx)_prio([0-7])_(pause|pause_duration|pause_transition)")
_NAME_MAX = 256

_PORT_COUNTERS = (
    "tx_pause_storm_warning_events",
    "tx_pause_storm_error_events",
    "rx_discards_phy",
    "rx_out_of_buffer",
    "tx_discards_phy",
    "link_down_events_phy",
    "rx_symbol_err_phy",
    "rx_crc_errors_phy",
    "rx_pcs_symbol_err_phy",
)


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class PriorityPause(_Model):
    """Pause activity of one PFC priority over the window; None where the NIC has no such counter."""

    priority: int
    """PFC priority 0..7 (RoCE fleets commonly run lossless traffic on 3)."""
    rx_pause: int | None = None
    """Pause frames received: the switch paused this host (the host is a victim)."""
    rx_pause_duration_us: int | None = None
    """Time this host spent paused by the switch, in microseconds."""
    rx_pause_transition: int | None = None
    """Xoff to Xon transitions seen on receive."""
    tx_pause: int | None = None
    """Pause frames sent: this NIC could not drain and paused the fabric (a candidate origin)."""
    tx_pause_duration_us: int | None = None
    """Time this NIC held the fabric paused, in microseconds."""

    @property
    def activity(self) -> int:
        """Pause frames both ways, for ranking priorities."""
        return (self.rx_pause or 0) + (self.tx_pause or 0)


class PfcSummary(_Model):
    """PFC and drop counters of one NIC over a window, from :func:`counter_deltas` output."""

    lossless_priority: int | None
    """The priority examined: the one given, else the one with the most pause frames; None when no priority paused."""
    priority_inferred: bool
    """True when ``lossless_priority`` was chosen from pause activity rather than given."""
    lossless: PriorityPause | None
    """Pause activity of ``lossless_priority``."""
    priorities: dict[int, PriorityPause]
    """Every priority that has at least one pause counter, by priority."""
    tx_pause_storm_warning_events: int | None = None
    """Times the NIC kept sending pauses for a long period (PFC stall prevention warned)."""
    tx_pause_storm_error_events: int | None = None
    """Times stall prevention timed out and stopped sending pauses; drops may follow."""
    rx_discards_phy: int | None = None
    """Packets dropped for lack of receive buffer on the port: the adapter is congested."""
    rx_out_of_buffer: int | None = None
    """Times a receive queue had no software buffers (host side too slow to post)."""
    tx_discards_phy: int | None = None
    """Packets dropped on transmit (link down, head-of-line drop, pause from the network)."""
    link_down_events_phy: int | None = None
    """Link down events: port flapping, suspect cable or transceiver."""
    rx_symbol_err_phy: int | None = None
    """Symbol errors on receive: a physical-layer (signal) problem."""
    rx_crc_errors_phy: int | None = None
    """Frames with a bad CRC."""
    rx_pcs_symbol_err_phy: int | None = None
    """PCS symbol errors."""
    outbound_pci_stalled: dict[str, int]
    """``outbound_pci_stalled_*`` counters by full name: PCIe back-pressure behind a NIC that cannot drain."""
    warnings: list[str]
    """What was odd about the counters (ties, unknown priority)."""


def _stat_line(line: str) -> tuple[str, int] | None:
    # Split at the last colon: a few drivers put colons in names, never in values.
    name, sep, value = line.rpartition(":")
    if not sep:
        return None
    name, value = name.strip(), value.strip()
    if not name or len(name) > _NAME_MAX or not name.isprintable() or not _VALUE.fullmatch(value):
        return None
    return name, int(value)


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """Counters from ``ethtool -S`` output, by name; non-integer values are skipped.

    Empty text gives ``{}`` (no evidence). Text with neither the header nor a single counter line,
    such as ``Cannot get stats strings information``, raises :class:`ParseError`. A counter printed
    twice keeps its last value.
    """
    text = as_text(text)
    stats: dict[str, int] = {}
    header = False
    for _, line in numbered_lines(text, _MAX_LINE):
        if line is None:
            continue
        if line.strip() == "NIC statistics:":
            header = True
            continue
        parsed = _stat_line(line)
        if parsed is not None:
            stats[parsed[0]] = parsed[1]
    if not stats and not header and text.strip():
        first = text.strip().splitlines()[0][:120]
        raise ParseError(f"not ethtool -S output: {first!r}")
    return stats


def counter_deltas(before: dict[str, int], now: dict[str, int]) -> dict[str, int]:
    """Per-counter increase from ``before`` to ``now``, for counters present in both.

    A counter that went down was reset (driver reload, ``ethtool`` reset): it counted from zero, so
    its delta is its new value. Counters missing from either side have no known delta and are left
    out rather than guessed.
    """
    deltas: dict[str, int] = {}
    for name, value in now.items():
        if name not in before:
            continue
        old = before[name]
        deltas[name] = value - old if value >= old else value
    return deltas


def _priorities(deltas: dict[str, int]) -> dict[int, PriorityPause]:
    fields: dict[int, dict[str, int]] = {}
    for name, value in deltas.items():
        match = _PRIO_COUNTER.fullmatch(name)
        if match is None:
            continue
        direction, prio, kind = match.group(1), int(match.group(2)), match.group(3)
        key = f"{direction}_{kind}" + ("_us" if kind == "pause_duration" else "")
        fields.setdefault(prio, {})[key] = value
    return {prio: PriorityPause(priority=prio, **values) for prio, values in sorted(fields.items())}


def pfc_summary(deltas: dict[str, int], priority: int | None = None) -> PfcSummary:
    """Summarise PFC pause and drop counters from ``counter_deltas(before, now)``.

    ``priority`` names the lossless priority; without it the priority with the most pause frames
    (received plus sent) is taken, the lowest one on a tie (with a warning). Raises ``ValueError``
    for a priority outside 0..7.
    """
    if priority is not None and not 0 <= priority <= 7:
        raise ValueError(f"PFC priority must be 0..7, got {priority}")
    warnings: list[str] = []
    priorities = _priorities(deltas)
    inferred = priority is None
    if inferred:
        active = [p for p in priorities.values() if p.activity > 0]
        if active:
            top = max(p.activity for p in active)
            leaders = [p.priority for p in active if p.activity == top]
            priority = leaders[0]
            if len(leaders) > 1:
                warnings.append(f"priorities {leaders} paused equally; took {priority}")
    elif priority not in priorities:
        warnings.append(f"no pause counters for priority {priority}")
    lossless = priorities.get(priority) if priority is not None else None
    port = {name: deltas.get(name) for name in _PORT_COUNTERS}
    stalled = {n: v for n, v in sorted(deltas.items()) if n.startswith("outbound_pci_stalled_")}
    return PfcSummary(
        lossless_priority=priority,
        priority_inferred=inferred,
        lossless=lossless,
        priorities=priorities,
        outbound_pci_stalled=stalled,
        warnings=warnings,
        **port,
    )
