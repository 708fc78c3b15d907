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

from pydantic import BaseModel, Field

# One pattern for both line kinds, run once over the text (a 1,024-host fleet has a million lines).
_LINE = re.compile(
    r"^(?:GPU (\d{1,4}):[^\n(]{0,200}(?:\(UUID:[ \t]{0,4}([^)\s]{1,80})\))?[ \t]*"
    r"|[ \t]{0,16}Link (\d{1,3}):[ \t]{0,4}([A-Za-z][A-Za-z0-9 ()._-]{0,60}?)[ \t]{0,4}:[ \t]{0,4}(\d{1,20})[ \t]*)\r?$",
    re.M,
)
#: Counter names that count link errors (CRC flit/data, replay, recovery), as the drivers word them.
ERROR_WORDS = ("crc", "replay", "recovery")


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
    """Parse ``nvidia-smi nvlink -e`` text; unknown lines are skipped, nothing raises."""
    out: list[NvlinkGpu] = []
    head: tuple[int, str | None] | None = None
    counters: dict[str, int] = {}
    per_link: dict[int, int] = {}
    is_error: dict[str, bool] = {}

    def close() -> None:
        if head is not None:
            errors = sum(per_link.values()) if per_link else None
            worst = max(per_link, key=per_link.__getitem__) if per_link else None
            out.append(
                NvlinkGpu(index=head[0], uuid=head[1], counters=counters, errors=errors, worst_link=worst)
            )

    for gpu, uuid, link, name, value in _LINE.findall(text):
        if gpu:
            close()
            head, counters, per_link = (int(gpu), uuid or None), {}, {}
            continue
        if head is None:
            continue
        name = " ".join(name.lower().split())
        n = int(value)
        counters[name] = counters.get(name, 0) + n
        err = is_error.get(name)
        if err is None:
            err = is_error[name] = any(w in name for w in ERROR_WORDS)
        if err:
            k = int(link)
            per_link[k] = per_link.get(k, 0) + n
    close()
    return out


__all__ = ["ERROR_WORDS", "NvlinkGpu", "parse_nvlink_errors"]
