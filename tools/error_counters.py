"""GPU error counters that grow inside the window on one part, judged against every peer at once.

A GPU fault may show nowhere but in its counters: NVLink CRC, replay and recovery errors climbing
on one GPU, correctable ECC errors piling up, rows remapped or pages retired while the job runs,
with no XID and no per-rank timing to point at it. Counters count since the driver loaded, so
large old counts are everywhere in a big fleet and mean nothing today: this tool judges **growth
inside the window** (two readings or more per part), never the count, against the growth of every
other part over the same window (:mod:`forensic.tools._growth`, one numpy pass per family).

Readings, whichever the bundle holds:

- metric series (dcgm-exporter): ``DCGM_FI_DEV_ECC_SBE_VOL_TOTAL`` / ``_AGG_TOTAL`` (correctable
  ECC), ``DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS`` (new name ``DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL``),
  ``DCGM_FI_DEV_RETIRED_SBE`` / ``_DBE``; read in the cheap fleet-wide counter pass
  (:func:`forensic.sandbox.metric_scan.scan_counters`), which keeps only each series' values around
  the window. NVLink error series are judged by the ``metrics`` tool (``metric_nvlink_errors``);
- snapshots: the window-start readings under ``nodes/<host>/before/`` and ``now``:
  ``nvidia-smi nvlink -e`` (per-link CRC, replay, recovery errors), ``nvml.json``
  (``nvmlDeviceGetTotalEccErrors.corrected_volatile``, ``nvmlDeviceGetRemappedRows``) or, without
  it, ``nvidia-smi -q`` (ECC volatile correctable, Remapped Rows, Retired Pages).

Uncorrectable ECC and uncorrectable remapped rows are ``gpu_health``'s and ``metrics``' (one such
error is a fault by itself); NIC FEC counters are ``nic_fec``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._growth import Family, outliers, snapshot_growth
from forensic.tools._inventory import inventory
from forensic.tools.base import (
    HostScope,
    Signal,
    Tool,
    ToolContext,
    ToolResult,
    by_signal,
    count,
    gpu_component,
    register,
)
from forensic.tools.parsers.nvidia_smi import SmiGpu, parse_nvidia_smi_q
from forensic.tools.parsers.nvlink import parse_nvlink_errors
from forensic.tools.parsers.nvml import NvmlDevice, parse_nvml_readings
from forensic.tools.parsers.openmetrics import series_host

NVLINK = Family("nvlink_errors_rising", "gpu", "NVLink CRC/replay/recovery errors", floor=50.0)
ECC_CORRECTABLE = Family("ecc_correctable_rising", "gpu", "correctable ECC errors", floor=20.0)
ROWS = Family("rows_remapped_rising", "gpu", "remapped rows / retired pages", floor=1.0)
FAMILIES = (NVLINK, ECC_CORRECTABLE, ROWS)

#: Metric series per family (dcgm-exporter names, classic and renamed).
SERIES: dict[str, tuple[str, ...]] = {
    ECC_CORRECTABLE.signal: ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"),
    ROWS.signal: (
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL",
        "DCGM_FI_DEV_RETIRED_SBE",
        "DCGM_FI_DEV_RETIRED_DBE",
    ),
}
#: Every series name this tool reads (also read by the sweep's fleet-wide pass, so one pass serves both).
SERIES_NAMES = tuple(n for names in SERIES.values() for n in names)
#: The least growth that can count, per series name (its family's floor).
SERIES_FLOORS = {n: f.floor for f in FAMILIES for n in SERIES.get(f.signal, ())}

_NVLINK_ARGV = ["nvidia-smi", "nvlink", "-e"]
_SMI_ARGV = ["nvidia-smi", "-q"]

#: A reading of one snapshot: gpu index -> {family signal: value}.
_Reading = dict[int, dict[str, float]]


def _nvml_values(d: NvmlDevice) -> dict[str, float]:
    out: dict[str, float] = {}
    if d.ecc_corrected_volatile is not None:
        out[ECC_CORRECTABLE.signal] = float(d.ecc_corrected_volatile)
    rows = [v for v in (d.remapped_rows_corrected, d.remapped_rows_uncorrected) if v is not None]
    if rows:
        out[ROWS.signal] = float(sum(rows))
    return out


def _smi_values(g: SmiGpu) -> dict[str, float]:
    out: dict[str, float] = {}
    ecc = g.ecc_volatile.correctable_total
    if ecc is not None:
        out[ECC_CORRECTABLE.signal] = float(ecc)
    rows = [
        v
        for v in (
            g.remapped_rows_correctable,
            g.remapped_rows_uncorrectable,
            g.retired_pages_sbe,
            g.retired_pages_dbe,
        )
        if v is not None
    ]
    if rows:
        out[ROWS.signal] = float(sum(rows))
    return out


def _snapshot(ctx: ToolContext, host: str, snapshot: str, sources: list[str]) -> _Reading:
    """The counters of ``host``'s GPUs in one snapshot (``now`` or ``before``)."""
    node = ctx.source.host(host, snapshot=snapshot)  # type: ignore[arg-type]
    out: _Reading = {}
    try:  # the read says whether it is there: no existence check first (a second walk per file)
        text = node.run(_NVLINK_ARGV)
    except NotFoundError:
        text = None
    if text is not None:
        for g in parse_nvlink_errors(text):
            if g.errors is not None:
                out.setdefault(g.index, {})[NVLINK.signal] = float(g.errors)
        sources.append(node.command_source(_NVLINK_ARGV))
    # ``now``'s NVML readings are the inventory's, parsed once for every tool of the investigation.
    nvml = inventory(ctx, host).nvml if snapshot == "now" else None
    if nvml is None and (raw := node.nvml()) is not None:
        nvml = parse_nvml_readings(raw)
    if nvml is not None:
        for d in nvml.devices:
            if d.index is not None and not d.lost:
                out.setdefault(d.index, {}).update(_nvml_values(d))
        sources.append(node.nvml_source())
    elif node.has_command(_SMI_ARGV):
        inv = inventory(ctx, host)
        for pos, smi in enumerate(parse_nvidia_smi_q(node.run(_SMI_ARGV))):
            if smi.lost:
                continue
            dev = inv.by_pci(smi.pci) if smi.pci else None
            index = int(dev.name[3:]) if dev is not None else pos
            out.setdefault(index, {}).update(_smi_values(smi))
        sources.append(node.command_source(_SMI_ARGV))
    return out


def _read(fn: Callable[[], Any], host: str, unread: list[str]) -> Any:
    try:
        return fn()
    except NotFoundError:  # not recorded: absence, not something unread
        return None
    except ForensicError as exc:
        unread.append(f"{host}: {exc}")
        return None


def _series_growth(
    ctx: ToolContext, hosts: list[str]
) -> tuple[dict[tuple[str, int, str], float], dict[str, int], list[str], list[str], list[str]]:
    """Growth in the window per (host, gpu, family) of the series that moved, the number of GPUs
    per family whose series held one value (zero growth), the sources and the problems; from the
    fleet-wide counter pass (one read of the metric files, shared with the sweep planner)."""
    from forensic.sandbox.metric_scan import scan_counters
    from forensic.tools._sweep import SCAN_NAMES
    from forensic.tools.metrics import host_resolver

    start, end = ctx.source.window
    scan = scan_counters(ctx.source, SCAN_NAMES, start, end)
    resolve = host_resolver(hosts)
    known = set(hosts)
    family_of = {n: fam for fam, names in SERIES.items() for n in names}
    growth: dict[tuple[str, int, str], float] = {}
    for s in scan.spans:
        fam = family_of.get(s.name)
        host = resolve(series_host(s.labels))
        if fam is None or host not in known or s.last is None:
            continue
        try:
            gpu = int(s.labels.get("gpu", ""))
        except ValueError:
            continue
        if s.before is None and s.first == s.last:
            continue  # one reading in the window: no growth to judge
        key = (host, gpu, fam)
        # Two names of one counter (volatile and aggregate) rise together: the larger rise, not their sum.
        growth[key] = max(growth.get(key, 0.0), s.increase())
    quiet: dict[str, int] = {}
    for fam, names in SERIES.items():
        gpus = max((scan.series.get(n, 0) for n in names), default=0)
        quiet[fam] = max(0, gpus - sum(1 for k in growth if k[2] == fam))
    return growth, quiet, list(scan.sources), list(scan.errors), list(scan.partial)


@dataclass
class _Fleet:
    """Every GPU's counter readings of one investigation, read once."""

    series: dict[tuple[str, int, str], float]
    quiet: dict[str, int]
    series_sources: list[str]
    series_errors: list[str]
    #: Metric files read only in part (cut short): their samples before the damage were judged.
    series_partial: list[str]
    keys: list[tuple[str, int]] = field(default_factory=list)
    now: list[dict[str, float]] = field(default_factory=list)
    before: list[dict[str, float]] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    unread: dict[str, list[str]] = field(default_factory=dict)


def _read_fleet(ctx: ToolContext) -> _Fleet:
    names = ctx.source.host_names()
    fleet = _Fleet(*_series_growth(ctx, names))
    for host in names:
        mine: list[str] = []
        met: list[str] = []
        now = _read(partial(_snapshot, ctx, host, "now", mine), host, met)
        if now:
            before = _read(partial(_snapshot, ctx, host, "before", mine), host, met)
            for idx, vals in now.items():
                fleet.keys.append((host, idx))
                fleet.now.append(vals)
                fleet.before.append((before or {}).get(idx, {}))
        if mine:
            fleet.sources[host] = mine
        if met:
            fleet.unread[host] = met
    return fleet


@register
class ErrorCounters(Tool):
    name = "error_counters"
    emits = frozenset(f.signal for f in FAMILIES)
    description = (
        "GPU error counters that grew inside the window far beyond every peer's growth: NVLink CRC/replay/"
        "recovery errors (nvidia-smi nvlink -e snapshots), correctable ECC errors and remapped rows / retired "
        "pages (DCGM series, nvml.json or nvidia-smi -q snapshots). Static counts, however large, are history. "
        "Reads every host in one pass; scope narrows the findings to one host."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        scope = set(ctx.hosts(args.host))
        # Every part of the fleet is read once per investigation (the peers are the fleet); a call
        # scoped to one host judges against the same readings and names only that host's parts.
        fleet = ctx.memo("error_counters:fleet", lambda: _read_fleet(ctx))
        series, quiet, series_sources = fleet.series, fleet.quiet, fleet.series_sources
        keys, now_v, before_v = fleet.keys, fleet.now, fleet.before
        unread = list(fleet.series_errors) + [u for h in sorted(scope) for u in fleet.unread.get(h, [])]
        sources = [s for h in sorted(scope) for s in fleet.sources.get(h, [])]
        signals: list[Signal] = []
        judged: dict[str, int] = {}
        for fam in FAMILIES:
            # part -> (growth, how it was read): series first, a snapshot pair where it has one.
            grown: dict[tuple[str, int], tuple[float, str]] = {
                (h, i): (v, "metric series") for (h, i, f), v in series.items() if f == fam.signal
            }
            rows = [i for i, v in enumerate(now_v) if fam.signal in v]
            pairs = snapshot_growth(
                np.array([now_v[i][fam.signal] for i in rows], dtype=float),
                np.array([before_v[i].get(fam.signal, np.nan) for i in rows], dtype=float),
            )
            for i, v in zip(rows, pairs.tolist(), strict=True):
                if keys[i] not in grown or np.isfinite(v):
                    grown[keys[i]] = (v, "window-start snapshot to now")
            parts = list(grown)
            g = np.array([grown[p][0] for p in parts], dtype=float)
            if not rows and quiet.get(fam.signal):
                # GPUs whose series held one value all window: peers that grew by nothing.
                g = np.concatenate([g, np.zeros(quiet[fam.signal])])
            found, med, n = outliers(g, fam.floor)
            judged[fam.signal] = n
            for o in found:
                host, idx = parts[o.index]
                if host not in scope:
                    continue
                comp = gpu_component(host, idx)
                signals.append(
                    Signal(
                        name=fam.signal,
                        component=comp,
                        kind="gpu",
                        detail=f"{comp} {fam.what} rose by {o.growth:.0f} in the window ({grown[(host, idx)][1]}), "
                        f"against a median rise of {med:g} over {n} GPUs",
                        values={"increase": o.growth, "peer_median": med, "peers": n, "cut": round(o.cut, 1)},
                    )
                )
        covered = {gpu_component(h, i) for h, i in keys if h in scope}
        covered |= {gpu_component(h, i) for (h, i, _f) in series if h in scope}
        if not covered:
            return ToolResult(
                status="error" if unread else "no_data",
                summary="no GPU error counters recorded (no nvidia-smi nvlink -e, nvml.json, nvidia-smi -q or DCGM "
                "ECC/remap series)" + (f": {unread[0]}" if unread else ""),
                unread=unread,
                partial=list(fleet.series_partial),
            )
        judged_text = ", ".join(
            f"{fam.what} on {judged[fam.signal]}" for fam in FAMILIES if judged[fam.signal]
        )
        summary = (
            f"error counters of {count(len(set(covered)), 'GPU')} read; growth in the window judged for "
            f"{judged_text or 'no GPU (a single reading each: counts alone are history)'}; "
            + (f"findings: {by_signal(signals)}" if signals else "no GPU's counters grew beyond its peers'")
        )
        return ToolResult(
            status="ok",
            summary=summary,
            source=sorted(set(sources)) + [s for s in series_sources if s not in sources],
            signals=signals,
            covered=sorted(set(covered)),
            data={"judged": judged},
            unread=list(dict.fromkeys(unread)),
            partial=list(fleet.series_partial),
        )


__all__ = ["FAMILIES", "NVLINK", "SERIES_FLOORS", "SERIES_NAMES", "ErrorCounters"]
