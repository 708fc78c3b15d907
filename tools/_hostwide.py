"""Host-wide patterns: when every in-job GPU of one host shows the same fault, the cause is shared.

The spec ("Which part is named") names the host when all of its GPUs are affected by one shared
cause (its power supply or power brake, its cooling): replacing one GPU would not end it. Tools
report both levels: the per-GPU signals stay, and one host signal says the pattern is host-wide.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from forensic.tools.base import Signal

#: Share of a host's in-job GPUs that must show the signal (and at least this many GPUs).
HOST_WIDE_SHARE = 0.75
HOST_WIDE_MIN = 2


def host_wide(
    signals: Iterable[Signal], gpus_of_host: dict[str, list[str]], names: dict[str, str]
) -> list[Signal]:
    """For each GPU signal name in ``names`` (gpu signal -> host signal), one host signal per host
    where at least HOST_WIDE_SHARE of its GPUs (``gpus_of_host``: host -> GPU components) carry it."""
    hit: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s in signals:
        if s.kind == "gpu" and s.name in names:
            hit[(s.name, s.component.split("/", 1)[0])].add(s.component)
    out = []
    for (name, host), comps in sorted(hit.items()):
        gpus = set(gpus_of_host.get(host, []))
        n = len(comps & gpus) if gpus else 0
        if n >= HOST_WIDE_MIN and n >= HOST_WIDE_SHARE * len(gpus):
            out.append(
                Signal(
                    name=names[name],
                    component=host,
                    kind="host",
                    detail=f"{n} of {len(gpus)} GPUs of {host} show {name}: a cause the host shares (power, cooling), not one GPU",
                    values={"gpus_affected": n, "gpus_on_host": len(gpus), "gpu_signal": name},
                )
            )
    return out
