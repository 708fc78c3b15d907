"""Single-value sysfs files: PCIe link speed and width, AER counters, integers.

A sysfs file holds one short value. These readers return None for a value that cannot be a real
reading (garbage, empty, the all-ones a lost device returns) rather than raising: a missing reading
is "no evidence", and one bad file must not hide the rest of a node.

IB port ``state`` / ``phys_state`` files are read by :func:`tools.parsers.infiniband.parse_ib_port_state`.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "parse_aer_counters",
    "parse_int_file",
    "parse_link_speed",
    "parse_link_width",
    "pcie_generation",
]

# A real value is a few dozen characters; anything far longer is not a sysfs reading.
_MAX_VALUE = 256

# `pci_speed_string()`: "32.0 GT/s PCIe"; kernels <= 5.6: "32 GT/s"; lspci: "32GT/s".
_SPEED = re.compile(r"(\d{1,3}(?:\.\d{1,3})?)\s?GT/s", re.IGNORECASE)

# Negotiated widths the PCIe spec allows. A lost device reads config space as all ones, which
# sysfs shows as 63 (the 6-bit width field) or 255; those, 0 and anything else are not a link.
_VALID_WIDTHS = frozenset({1, 2, 4, 8, 12, 16, 32})
_WIDTH = re.compile(r"x?(\d{1,4})x?", re.IGNORECASE)

_GENERATIONS = ((2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6))

# int() alone would also take "1_000" and surrounding spaces; a sysfs integer is plainer than that.
_DEC = re.compile(r"-?\d{1,30}")
_HEX = re.compile(r"0[xX][0-9a-fA-F]{1,16}")


def parse_link_speed(text: str) -> float | None:
    """``32.0 GT/s PCIe`` / ``32 GT/s`` / ``32GT/s`` -> 32.0; ``Unknown`` or garbage -> None."""
    value = text.strip()
    if not value or len(value) > _MAX_VALUE:
        return None
    m = _SPEED.match(value)
    if not m:
        return None
    speed = float(m.group(1))
    return speed if speed > 0 else None


def parse_link_width(text: str) -> int | None:
    """A bare width (``16``; ``x16``/``16x`` also accepted) -> 16.

    None for 63, 255, 0 and anything not a PCIe width: a device that fell off the bus keeps its
    sysfs folder but reads all ones, and that must never be read as a link of 63 lanes.
    """
    value = text.strip()
    if len(value) > _MAX_VALUE:
        return None
    m = _WIDTH.fullmatch(value)
    if not m:
        return None
    width = int(m.group(1))
    return width if width in _VALID_WIDTHS else None


def pcie_generation(speed_gts: float | None) -> int | None:
    """Transfer rate per lane -> PCIe generation (2.5 -> 1 ... 64 -> 6); None if not a standard rate."""
    if speed_gts is None or not math.isfinite(speed_gts):
        return None
    for rate, generation in _GENERATIONS:
        if abs(speed_gts - rate) < 0.01:
            return generation
    return None


def parse_aer_counters(text: str) -> dict[str, int]:
    """``aer_dev_correctable`` and friends: ``Name count`` lines -> {name: count}.

    Names may contain spaces (``Receiver Error 2``); totals keep their own names
    (``TOTAL_ERR_COR``). Lines that do not end in a count are skipped.
    """
    counters: dict[str, int] = {}
    for line in text.split("\n"):
        if len(line) > _MAX_VALUE:
            continue
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            continue
        name, count = parts[0].strip(), parts[1]
        if name and count.isascii() and count.isdigit():
            counters[name] = int(count)
    return counters


def parse_int_file(text: str) -> int | None:
    """One integer per file (IB counters, ``carrier_changes``, root-port totals); None if not one.

    ``0x``-prefixed hex is accepted for the few attributes the kernel prints that way.
    """
    value = text.strip()
    if _DEC.fullmatch(value):
        return int(value, 10)
    if _HEX.fullmatch(value):
        return int(value[2:], 16)
    return None
