"""``ethtool -I --show-fec <netdev>``: the FEC mode and, with ``-I``, its block counters.

    FEC parameters for ibp24s0:
    Supported/Configured FEC encodings: Auto RS
    Active FEC encoding: RS
    Statistics:
      corrected_blocks: 1234567
        Lane 0: 300000
      uncorrectable_blocks: 12

Drivers print the totals as ``corrected_blocks: N`` (some on one line with per-lane values
after it: ``corrected_blocks: 1234 lane_0: 300 lane_1: ...``), optionally followed by indented
``Lane k: n`` lines. The totals are what this parser keeps; a missing counter is None.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

_ACTIVE = re.compile(r"^\s{0,8}Active FEC encoding:\s{0,4}(\S{1,32})", re.I | re.M)
_COUNTER = re.compile(
    r"^\s{0,8}(corrected_blocks|uncorrectable_blocks|corrected_bits)\s{0,2}:\s{0,4}(\d{1,20})", re.I | re.M
)


class FecStats(BaseModel):
    """FEC mode and block counters of one interface."""

    active: str | None = Field(None, description="Active FEC encoding (RS, BaseR, Off, ...).")
    corrected_blocks: int | None = Field(None, description="Blocks FEC corrected (total over lanes).")
    uncorrectable_blocks: int | None = Field(
        None, description="Blocks FEC could not correct: lost data on the wire."
    )


def parse_show_fec(text: str) -> FecStats:
    out = FecStats()
    if m := _ACTIVE.search(text):
        out.active = m.group(1)
    for m in _COUNTER.finditer(text):
        name, value = m.group(1).lower(), int(m.group(2))
        if name == "corrected_blocks":
            out.corrected_blocks = value
        elif name == "uncorrectable_blocks":
            out.uncorrectable_blocks = value
    return out


__all__ = ["FecStats", "parse_show_fec"]
