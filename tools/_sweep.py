"""Which hosts a fleet-wide sweep reads: every one on a small fleet, suspects plus a sample on a large one.

A sweep (``gpu_health``, ``kernel_log``, ``job_logs``, ... with no host) used to read every host, so
its cost grew with the fleet. On a fleet larger than :data:`SAMPLE` plus its suspects, a
sweep reads instead:

- the **suspects**: hosts that the evidence so far names (the straggler ranks of ``job_steps`` and
  any other finding of an earlier call) and hosts whose counters moved in the window in one cheap
  fleet-wide pass over the metrics (:func:`forensic.sandbox.metric_scan.scan_counters`): InfiniBand
  port errors and link-down events, DCGM XID, ECC and row-remap counters, and GPU series that stop
  early. At most :data:`MAX_SUSPECTS`, the evidence's first;
- a **sample of peers** for comparison: :data:`SAMPLE` other hosts spread evenly over the source's
  host order (:meth:`ToolContext.peers`), the same for every call of an investigation, whatever
  the fleet's size.

The hosts left out are *not read*: a sweep lists only what it read as ``covered``, so their silence
is never evidence of health, and its record says how many hosts were read, sampled and left out
(``data.sweep``). A sample is only drawn where the fleet-wide pass covers what the sweep looks for
(GPU faults need the DCGM counters, link faults the InfiniBand counters); without that pass the
sweep reads every host, as before, and says why.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from forensic.tools.base import PEER_SAMPLE, ToolContext
from forensic.tools.error_counters import NVLINK, SERIES_FLOORS
from forensic.tools.error_counters import SERIES_NAMES as ERROR_SERIES
from forensic.tools.metrics import NVLINK_COUNTERS

#: Peers a sampled sweep reads besides its suspects (independent of the fleet's size).
SAMPLE = PEER_SAMPLE
#: Peers a one-host NIC counter call reads on a large fleet (each host holds over a hundred
#: counter files; 16 hosts give 128 NICs for the fleet's medians).
NIC_PEERS = 16
#: Suspects a sweep reads at most; the rest are counted as left out.
MAX_SUSPECTS = 32
#: A counter that rose this many times more than the fleet's median rise names its host.
PEER_FACTOR = 3.0
#: A GPU whose series ends this long before the fleet's last sample may have been lost.
STOPPED_S = 120.0

_NIC = ("node_infiniband_port_errors_received_total", "node_infiniband_link_downed_total")
#: GPU error counters whose rise in the window names a suspect: uncorrectable memory errors, and the
#: counters a fault may show in alone (NVLink errors, correctable ECC, remapped rows; error_counters).
_GPU_COUNTERS = (
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    *NVLINK_COUNTERS,
    *ERROR_SERIES,
)
_GPU_GAUGES = ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ROW_REMAP_FAILURE")
#: The least rise that names a suspect, for counters that move a little on healthy GPUs (a few
#: correctable errors here and there): the families' floors of error_counters.
FLOORS = {**SERIES_FLOORS, **dict.fromkeys(NVLINK_COUNTERS, NVLINK.floor)}
#: The one fleet-wide counter pass per investigation: every tool that wants it asks for these names.
SCAN_NAMES = (*_NIC, *_GPU_COUNTERS, *_GPU_GAUGES)
#: Fleet-wide pass per domain: the metric whose presence means the pass covers that domain.
COVERS = {"gpu": "DCGM_FI_DEV_XID_ERRORS", "nic": "node_infiniband_port_errors_received_total"}
_WHAT = {"gpu": "DCGM XID/ECC/row-remap counters", "nic": "InfiniBand error counters"}


@dataclass
class Sweep:
    """The hosts one sweep reads, and why."""

    hosts: list[str]
    total: int
    suspects: dict[str, str] = field(default_factory=dict)
    sampled: int = 0
    whole: bool = True
    why: str = ""
    dropped_suspects: int = 0
    fleet_pass: list[str] = field(default_factory=list)

    @property
    def not_read(self) -> int:
        return self.total - len(self.hosts)

    def data(self) -> dict[str, Any]:
        """What goes into the evidence record (``data.sweep``)."""
        out: dict[str, Any] = {
            "hosts_total": self.total,
            "hosts_read": len(self.hosts),
            "hosts_not_read": self.not_read,
            "sampled": not self.whole,
            "why": self.why,
        }
        if not self.whole:
            out.update(
                suspects=dict(list(self.suspects.items())[:MAX_SUSPECTS]),
                peers_sampled=self.sampled,
                suspects_left_out=self.dropped_suspects,
                fleet_pass=self.fleet_pass,
            )
        return out

    def phrase(self) -> str:
        """A clause for the record's summary; empty when every host was read."""
        if self.whole:
            return ""
        return (
            f"; sampled sweep: {len(self.hosts)} of {self.total} hosts read ({len(self.suspects)} suspects, "
            f"{self.sampled} peers spread over the fleet), {self.not_read} not read"
        )


def _host_of_labels(labels: dict[str, str]) -> str | None:
    from forensic.tools.parsers.openmetrics import series_host

    return series_host(labels)


def metric_suspects(ctx: ToolContext) -> tuple[dict[str, tuple[float, str]], set[str], list[str]]:
    """Hosts whose counters moved in the window (host -> (score, why)), the domains the pass
    covers, and its problems; one read of the metrics per investigation."""

    def build() -> tuple[dict[str, tuple[float, str]], set[str], list[str]]:
        from forensic.sandbox.metric_scan import scan_counters

        start, end = ctx.source.window
        scan = scan_counters(ctx.source, SCAN_NAMES, start, end)
        names = set(ctx.source.host_names())
        out: dict[str, tuple[float, str]] = {}

        def name(host: str | None, score: float, why: str) -> None:
            if host in names and (host not in out or score > out[host][0]):
                out[host] = (score, why)

        rises: dict[str, list[tuple[float, Any]]] = {}
        for s in scan.spans:
            if s.name in _NIC or s.name in _GPU_COUNTERS:
                rises.setdefault(s.name, []).append((s.increase(), s))
        for metric, rows in rises.items():
            # Series the scan did not list held one value: their rise is 0.
            quiet = max(0, scan.series.get(metric, len(rows)) - len(rows))
            median = statistics.median([r for r, _ in rows] + [0.0] * quiet)
            for rise, s in rows:
                if rise > max(0.0, FLOORS.get(metric, 0.0) - 1) and rise > PEER_FACTOR * median:
                    dev = s.labels.get("device") or s.labels.get("gpu") or ""
                    name(
                        _host_of_labels(s.labels),
                        rise / (median + 1.0),
                        f"{metric} +{rise:g} on {dev} in the window",
                    )
        seen = [s.last_seen for s in scan.spans if s.name.startswith("DCGM") and s.last_seen is not None]
        fleet_last = max(seen, default=None)
        for s in scan.spans:
            if s.name not in _GPU_GAUGES:
                continue
            gpu = s.labels.get("gpu", "")
            if (
                s.name == "DCGM_FI_DEV_XID_ERRORS"
                and s.last is not None
                and (s.peak or 0) > 0
                and (s.before is not None and s.peak != s.before or s.first != s.last)
            ):
                name(
                    _host_of_labels(s.labels),
                    1e6,
                    f"XID gauge changed to {s.last:g} on GPU {gpu} in the window",
                )
            elif s.name == "DCGM_FI_DEV_ROW_REMAP_FAILURE" and (s.peak or 0) > 0:
                name(_host_of_labels(s.labels), 1e6, f"row remap failure on GPU {gpu}")
            if fleet_last is not None and s.last_seen is not None and fleet_last - s.last_seen > STOPPED_S:
                name(
                    _host_of_labels(s.labels),
                    1e6,
                    f"GPU {gpu} DCGM series stop {fleet_last - s.last_seen:.0f} s early",
                )
        covered = {d for d, metric in COVERS.items() if metric in scan.found}
        return out, covered, [*scan.errors]

    return ctx.memo("sweep:metric_suspects", build)


def plan(ctx: ToolContext, needs: tuple[str, ...]) -> Sweep:
    """The hosts a fleet-wide call of a tool that looks for faults in ``needs`` (``gpu``, ``nic``) reads."""
    names = ctx.source.host_names()
    total = len(names)
    if total <= SAMPLE + 1:
        return Sweep(hosts=names, total=total, why="small fleet: every host read")
    known = set(names)
    suspects: dict[str, str] = {
        h: f"named by the evidence: {why}" for h, why in ctx.evidence_hosts.items() if h in known
    }
    from_metrics, covered, errors = metric_suspects(ctx)
    missing = [d for d in needs if d not in covered]
    if missing:
        what = ", ".join(_WHAT.get(d, d) for d in missing)
        why = (
            f"no fleet-wide {what} to rest a sample on"
            + (f" ({errors[0]})" if errors else "")
            + ": every host read"
        )
        return Sweep(hosts=names, total=total, why=why)
    for host, (_, why) in sorted(from_metrics.items(), key=lambda kv: (-kv[1][0], kv[0])):
        suspects.setdefault(host, why)
    dropped = max(0, len(suspects) - MAX_SUSPECTS)
    suspects = dict(list(suspects.items())[:MAX_SUSPECTS])
    if total <= len(suspects) + SAMPLE:
        return Sweep(
            hosts=names,
            total=total,
            suspects=suspects,
            why="fleet no larger than suspects plus sample: every host read",
        )
    hosts = ctx.peers(sorted(suspects), SAMPLE)
    passes = ["job_steps and earlier findings"] + [f"metrics ({_WHAT[d]})" for d in sorted(covered)]
    return Sweep(
        hosts=hosts,
        total=total,
        suspects=suspects,
        sampled=len(hosts) - len(suspects),
        whole=False,
        why="large fleet: the suspects of the fleet-wide pass plus a fixed sample of peers",
        dropped_suspects=dropped,
        fleet_pass=passes,
    )


def hosts_for(ctx: ToolContext, host: str | None, needs: tuple[str, ...]) -> tuple[list[str], Sweep | None]:
    """The hosts a call with ``host`` (None: a sweep) reads, and the sweep plan when it swept."""
    if host is not None:
        return ctx.hosts(host), None
    sweep = plan(ctx, needs)
    return sweep.hosts, sweep


__all__ = ["MAX_SUSPECTS", "SAMPLE", "SCAN_NAMES", "Sweep", "hosts_for", "metric_suspects", "plan"]
