"""``nvidia-smi nvlink -e``: per-GPU, per-link NVLink error counters.

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-fb90cb7a-b446-730d-381c-b2f9cd75651d)
    \t Link 0: Replay Errors: 0
    \t Link 0: Recovery Errors: 0
    \t Link 0: CRC Errors: 0

Drivers differ in the counter names after ``Link N:`` (``CRC Errors``, ``CRC Flit Errors``,
``CRC Data Errors``, ``Data Latency`` ...), and some print a lane (``CRC Errors (Lane 0)``) or
``N/A`` for a link that is off. Every ``Link N: <name>: <integer>`` line is kept under its name;
lines that are not are skipped. The GPU's index is the number after ``GPU``.
"""

from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel, Field

# Both line kinds in one pattern, matched once over the text in C (up to 18 digits: every count
# fits an int64): a GPU heading fills the first two groups, a link counter line the last three.
_LINE = re.compile(
    r"^(?:GPU (\d{1,4}):[^\n(]{0,200}(?:\(UUID:[ \t]{0,4}([^)\s]{1,80})\))?[ \t]*"
    r"|[ \t]{0,16}Link (\d{1,3}):[ \t]{0,4}([A-Za-z][A-Za-z0-9 ()._-]{0,60}?)[ \t]{0,4}:[ \t]{0,4}(\d{1,18})[ \t]*)\r?$",
    re.M,
)
#: Counter names that count link errors (CRC flit/data, replay, recovery), as the drivers word them.
NVLINK_ERROR_WORDS = ("crc", "replay", "recovery")


class NvlinkGpu(BaseModel):
    """One GPU's NVLink error counters."""

    index: int = Field(description="GPU index as nvidia-smi numbers it.")
    uuid: str | None = Field(None, description="GPU UUID from the heading, when printed.")
    counters: dict[str, int] = Field(
        default_factory=dict, description="Counter name (lower case) -> sum over the GPU's links."
    )
    errors: int | None = Field(
        None, description="CRC, replay and recovery errors summed over links; None when none printed."
    )
    worst_link: int | None = Field(None, description="The link with the most of those errors.")


def parse_nvlink_errors(text: str) -> list[NvlinkGpu]:
    """Parse ``nvidia-smi nvlink -e`` text; unknown lines are skipped, nothing raises.

    A 1,024-host fleet records a million such lines per snapshot: the text is matched once in C
    and summed per GPU, counter and link with numpy, never line by line in Python."""
    rows = _LINE.findall(text)
    if not rows:
        return []
    cols = np.array(rows, dtype=str)
    head = cols[:, 0] != ""
    out = [NvlinkGpu(index=int(i), uuid=u or None) for i, u in zip(cols[head, 0], cols[head, 1], strict=True)]
    owner = np.cumsum(head) - 1  # the GPU each line belongs to (-1: before the first heading)
    keep = ~head & (owner >= 0)
    if not out or not keep.any():
        return out
    gpu, link, value = owner[keep], cols[keep, 2].astype(np.int64), cols[keep, 4].astype(np.int64)
    names, at = np.unique(np.char.lower(cols[keep, 3]), return_inverse=True)
    clean = [" ".join(str(n).split()) for n in names]
    sums = np.zeros((len(out), len(names)), dtype=np.int64)
    np.add.at(sums, (gpu, at), value)
    seen = np.zeros((len(out), len(names)), dtype=bool)
    seen[gpu, at] = True
    error = np.array([any(w in n for w in NVLINK_ERROR_WORDS) for n in clean], dtype=bool)[at]
    per_link = np.zeros((len(out), int(link.max()) + 1), dtype=np.int64)
    np.add.at(per_link, (gpu[error], link[error]), value[error])
    has_error = np.zeros(len(out), dtype=bool)
    has_error[gpu[error]] = True
    for g, item in enumerate(out):
        for k in np.flatnonzero(seen[g]).tolist():
            item.counters[clean[k]] = item.counters.get(clean[k], 0) + int(sums[g, k])
        if has_error[g]:
            item.errors = int(per_link[g].sum())
            item.worst_link = int(per_link[g].argmax())
    return out


__all__ = ["NVLINK_ERROR_WORDS", "NvlinkGpu", "parse_nvlink_errors"]
