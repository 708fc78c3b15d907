"""InfiniBand / RoCE port evidence: ``ibstat`` output, sysfs state and rate files, counter deltas.

sysfs prints a port's state as ``4: ACTIVE`` and its physical state as ``5: LinkUp``; ``ibstat``
prints the bare words (``Active``, ``LinkUp``) and the rate as a bare number of Gb/s. The IB PMA
counters under ``ports/<n>/counters`` are not all bytes or packets: see :data:`IB_COUNTER_UNITS`.
"""

from __future__ import annotations

import math
import re

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import as_text, numbered_lines
from pydantic import BaseModel, ConfigDict

__all__ = [
    "IB_COUNTER_UNITS",
    "IB_DATA_WORD_BYTES",
    "CounterDelta",
    "IbCa",
    "IbPort",
    "IbPortState",
    "ib_counter_deltas",
    "parse_ib_port_state",
    "parse_ib_rate",
    "parse_ibstat",
]

_MAX_LINE = 64 * 1024
_CA_HEADER = re.compile(r"CA '([^'\s]{1,64})'")
_PORT_HEADER = re.compile(r"Port ([0-9]{1,3}):")
_RATE = re.compile(r"([0-9]{1,6}(?:\.[0-9]{1,6})?)(?:\s{0,4}Gb/s(?:ec)?)?(?:\s{1,4}\(.{0,40}\))?")
_STATE = re.compile(r"(?:([0-9]{1,3})\s{0,4}:\s{0,4})?([A-Za-z<][A-Za-z_ <>]{0,39})")

#: Unit of each IB port counter that is not a plain event count. ``port_rcv_data`` and
#: ``port_xmit_data`` count 4-byte words (multiply by :data:`IB_DATA_WORD_BYTES` for bytes);
#: ``port_xmit_wait`` counts ticks in which data was ready but could not be sent (congestion
#: or credit starvation) and is normally non-zero on a busy port.
IB_COUNTER_UNITS: dict[str, str] = {
    "port_rcv_data": "4-byte words",
    "port_xmit_data": "4-byte words",
    "port_xmit_wait": "ticks",
    "port_rcv_packets": "packets",
    "port_xmit_packets": "packets",
    "unicast_rcv_packets": "packets",
    "unicast_xmit_packets": "packets",
    "multicast_rcv_packets": "packets",
    "multicast_xmit_packets": "packets",
}

#: Bytes per unit of ``port_rcv_data`` / ``port_xmit_data``.
IB_DATA_WORD_BYTES = 4

# Widths of the IB PortCounters fields sysfs reads from the 32-bit-era PMA attribute. They saturate
# at their maximum instead of wrapping, so a counter pinned there shows a delta of 0 while errors
# (or congestion) keep happening. Equality, not >=, so a wider counter passing by is not flagged.
_SATURATING_BITS: dict[str, int] = {
    "port_xmit_wait": 32,
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
}


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class IbPortState(_Model):
    """A port state as sysfs (``4: ACTIVE``, ``5: LinkUp``) or ibstat (``Active``) prints it."""

    code: int | None
    """The number before the colon in sysfs; None for ibstat's bare word."""
    name: str
    """The word as printed: ``ACTIVE``, ``LinkUp``, ``Polling``, ``Down``."""

    @property
    def is_up(self) -> bool:
        """True for a logical ``ACTIVE`` or a physical ``LinkUp``."""
        return self.name.replace(" ", "").lower() in {"active", "linkup"}


class IbPort(_Model):
    """One port of a channel adapter as ``ibstat`` prints it."""

    number: int
    """Port number (1-based)."""
    state: str | None = None
    """Logical state: ``Active``, ``Down``, ``Initializing``, ``Armed``."""
    physical_state: str | None = None
    """Physical state: ``LinkUp``, ``Polling``, ``Disabled``, ..."""
    rate_gbps: float | None = None
    """Link rate in Gb/s (ibstat prints a bare number)."""
    link_layer: str | None = None
    """``InfiniBand`` or ``Ethernet`` (RoCE)."""
    base_lid: int | None = None
    """Base LID (0 on RoCE)."""
    sm_lid: int | None = None
    """Subnet manager LID."""
    port_guid: str | None = None
    """Port GUID as printed (``0x...``)."""

    @property
    def is_active(self) -> bool:
        """Logical state Active and physical state LinkUp."""
        return (self.state or "").lower() == "active" and (self.physical_state or "").lower() == "linkup"


class IbCa(_Model):
    """One channel adapter (HCA) from ``ibstat``."""

    name: str
    """Device name, e.g. ``mlx5_5``."""
    ca_type: str | None = None
    """``CA type``, e.g. ``MT4129`` (ConnectX-7)."""
    number_of_ports: int | None = None
    """``Number of ports`` as printed."""
    firmware_version: str | None = None
    """``Firmware version``, e.g. ``28.41.1000``."""
    hardware_version: str | None = None
    """``Hardware version``."""
    node_guid: str | None = None
    """``Node GUID``."""
    system_image_guid: str | None = None
    """``System image GUID``."""
    ports: list[IbPort]
    """Ports in printed order."""


class CounterDelta(_Model):
    """Change of one IB counter between two readings."""

    delta: int
    """Increase over the window; after a reset, the value counted since the reset."""
    rate_per_s: float | None
    """``delta`` per second, when the window length is known and positive."""
    reset: bool
    """The counter went down between the readings (cleared or driver reloaded)."""
    saturated: bool = False
    """The counter sits at its maximum width and no longer counts: a zero delta proves nothing."""
    unit: str | None = None
    """Unit from :data:`IB_COUNTER_UNITS` (``4-byte words``, ``ticks``, ...); None for event counts."""


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def parse_ib_rate(text: str) -> float:
    """Gb/s from sysfs ``rate`` (``400 Gb/sec (4X NDR)``) or ibstat's bare ``400``."""
    text = as_text(text).strip()
    match = _RATE.fullmatch(text) if len(text) <= 128 else None
    if match is None:
        raise ParseError(f"not an IB rate: {text[:80]!r}")
    value = float(match.group(1))
    if not math.isfinite(value):
        raise ParseError(f"not an IB rate: {text[:80]!r}")
    return value


def parse_ib_port_state(text: str) -> IbPortState:
    """A sysfs ``state`` / ``phys_state`` file (``4: ACTIVE``) or an ibstat word (``Active``)."""
    text = as_text(text).strip()
    match = _STATE.fullmatch(text) if len(text) <= 64 else None
    if match is None:
        raise ParseError(f"not an IB port state: {text[:80]!r}")
    code = int(match.group(1)) if match.group(1) is not None else None
    return IbPortState(code=code, name=match.group(2).strip())


def _ca_field(ca: IbCa, key: str, value: str) -> None:
    if key == "ca type":
        ca.ca_type = value
    elif key == "number of ports":
        ca.number_of_ports = _int(value)
    elif key == "firmware version":
        ca.firmware_version = value
    elif key == "hardware version":
        ca.hardware_version = value
    elif key == "node guid":
        ca.node_guid = value
    elif key == "system image guid":
        ca.system_image_guid = value


def _port_field(port: IbPort, key: str, value: str) -> None:
    if key == "state":
        port.state = value
    elif key == "physical state":
        port.physical_state = value
    elif key == "rate":
        try:
            port.rate_gbps = parse_ib_rate(value)
        except ParseError:
            port.rate_gbps = None
    elif key == "link layer":
        port.link_layer = value
    elif key == "base lid":
        port.base_lid = _int(value)
    elif key == "sm lid":
        port.sm_lid = _int(value)
    elif key == "port guid":
        port.port_guid = value


def parse_ibstat(text: str) -> list[IbCa]:
    """Channel adapters from ``ibstat`` output, each with its ports.

    Empty text gives ``[]``. Text that holds no ``CA '<name>'`` block (an ``ibpanic`` message,
    another command's output) raises :class:`ParseError`. A block cut short keeps what it has.
    """
    text = as_text(text)
    cas: list[IbCa] = []
    ca: IbCa | None = None
    port: IbPort | None = None
    for _, line in numbered_lines(text, _MAX_LINE):
        if line is None:
            continue
        stripped = line.strip()
        match = _CA_HEADER.fullmatch(stripped)
        if match is not None:
            ca, port = IbCa(name=match.group(1), ports=[]), None
            cas.append(ca)
            continue
        if ca is None:
            continue
        match = _PORT_HEADER.fullmatch(stripped)
        if match is not None:
            port = IbPort(number=int(match.group(1)))
            ca.ports.append(port)
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        # Port lines are indented deeper than CA lines, but indentation is not reliable in
        # recorded files; the key names do not overlap, so the key decides.
        if port is not None and key in {
            "state",
            "physical state",
            "rate",
            "link layer",
            "base lid",
            "sm lid",
            "port guid",
            "lmc",
            "capability mask",
        }:
            _port_field(port, key, value)
        else:
            _ca_field(ca, key, value)
    if not cas and text.strip():
        first = text.strip().splitlines()[0][:120]
        raise ParseError(f"not ibstat output: {first!r}")
    return cas


def ib_counter_deltas(
    before: dict[str, int], now: dict[str, int], seconds: float | None
) -> dict[str, CounterDelta]:
    """Per-counter change between two readings of a port's counters, for counters in both.

    A counter that went down was reset and counted from zero: its delta is its new value and
    ``reset`` is set. ``rate_per_s`` needs ``seconds`` > 0. Counters missing from either reading are
    left out.
    """
    usable_window = seconds is not None and math.isfinite(seconds) and seconds > 0
    deltas: dict[str, CounterDelta] = {}
    for name, value in now.items():
        if name not in before:
            continue
        old = before[name]
        reset = value < old
        delta = value if reset else value - old
        bits = _SATURATING_BITS.get(name)
        deltas[name] = CounterDelta(
            delta=delta,
            rate_per_s=delta / seconds if usable_window and seconds is not None else None,
            reset=reset,
            saturated=bits is not None and value == (1 << bits) - 1,
            unit=IB_COUNTER_UNITS.get(name),
        )
    return deltas
