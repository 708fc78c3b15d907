"""Metric time series (OpenMetrics files under ``metrics/``): per-GPU DCGM readings over the window.

Judgements are relative: a GPU is compared with its in-job peers over the same window, and
counters are read as increases within the window (a drop is a reset), never as absolute values.
``DCGM_FI_DEV_XID_ERRORS`` holds the last XID and never resets, so only a *change* of its value
inside the window says that an XID happened.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np
from forensic.sandbox import MetricRead
from forensic.tools._hostwide import host_wide
from forensic.tools._xid import XID_SIGNALS, xid_signal
from forensic.tools.base import (
    HostScope,
    Signal,
    Tool,
    ToolContext,
    ToolResult,
    by_signal,
    gpu_component,
    register,
)
from forensic.tools.parsers.openmetrics import Series, counter_increase, series_host

_THERMAL_BITS = 0x20 | 0x40
_POWER_BRAKE = 0x80
_SW_POWER_CAP = 0x4
#: Under the SW power cap at an unlowered limit, a clock below this fraction of the peers' median
#: is beyond what chip-to-chip spread at the same limit gives (a few per cent, up to ~10%).
DEEP_CLOCK_RATIO = 0.85
#: Reason bits that are a clock fault (HW slowdown, SW/HW thermal, power brake), unlike the SW cap.
CLOCK_FAULT_BITS = 0x8 | 0x20 | 0x40 | 0x80
NVLINK_COUNTERS = (
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
)


def _violation_text(kind: str, share: float | None, bits: float | None, bits_name: str) -> str:
    """Say what each number measures: DCGM's violation-time counter (time, as a share of the
    window) and the throttle-reason bits (share of samples), which can disagree (a counter that
    did not move while the reason bits were set), so neither reads as contradicting the other."""
    parts = []
    if bits:
        parts.append(f"{bits_name} set in {100 * bits:.0f}% of samples")
    if share is not None:
        parts.append(f"DCGM {kind}-violation time {100 * share:.1f}% of the window")
    return "; ".join(parts) or "no violation counter or reason bits in the window"


#: Share of the window a GPU must spend in violation, and how far above its peers, to count.
VIOLATION_SHARE = 0.05
CLOCK_PEER_RATIO = 0.93
#: The SW power cap at an unlowered limit is how busy GPUs run; a less efficient chip clocks a few
#: per cent below its peers there. It is a fault when the limit was lowered (below this fraction
#: of the peers' limit, or the GPU capped while drawing below this fraction of the peers' draw).
#: A GPU at the cap of an unlowered limit is not power-faulted here, however slow: its clock deficit
#: is metric_clock_low, and whether it matters is the straggler's question.
LOWERED_CAP_RATIO = 0.9
HOT_C = 87.0


@dataclass
class GpuSeries:
    host: str
    gpu: int
    by_name: dict[str, Series] = field(default_factory=dict)


#: What the metric source is asked for around the window: an hour before it (the sample before
#: the window for counter increases, a series that stopped shortly before it) and an hour after.
HISTORY_S = 3600.0
AFTER_S = 3600.0
#: The DCGM series this tool reads (dcgm-exporter names; the throttle-reasons name is the old one).
DCGM_NAMES = (
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_THERMAL_VIOLATION",
    "DCGM_FI_DEV_POWER_VIOLATION",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    *NVLINK_COUNTERS,
)


def read_metric(ctx: ToolContext, name: str) -> MetricRead:
    """Every series of one metric around the window, read once per investigation."""

    def build() -> MetricRead:
        start, end = ctx.source.window
        return ctx.source.metrics.series(
            name, None, None if start is None else start - HISTORY_S, None if end is None else end + AFTER_S
        )

    return ctx.memo(f"metric:{name}", build)


def read_metrics(ctx: ToolContext, names: tuple[str, ...]) -> MetricRead:
    """Several metrics merged into one read (sources and errors without repeats)."""
    out = MetricRead()
    reasons = []
    for name in names:
        got = read_metric(ctx, name)
        out.series.extend(got.series)
        out.sources.extend(s for s in got.sources if s not in out.sources)
        out.errors.extend(e for e in got.errors if e not in out.errors)
        out.partial.extend(e for e in got.partial if e not in out.partial)
        if got.unavailable and got.unavailable not in reasons:
            reasons.append(got.unavailable)
    if reasons and not out.series:
        out.unavailable = "; ".join(reasons)
    return out


def in_window(ts: np.ndarray, start: float | None, end: float | None) -> np.ndarray:
    """Mask of the finite timestamps inside [start, end] (an open end is unbounded)."""
    mask = np.isfinite(ts)
    if start is not None:
        mask &= ts >= start
    if end is not None:
        mask &= ts <= end
    return mask


def host_resolver(hosts: list[str]):
    """Map a series' host label to a bundle host: exactly, else by a unique short name (before the first dot)."""
    exact = set(hosts)
    short: dict[str, list[str]] = {}
    for h in hosts:
        short.setdefault(h.split(".")[0], []).append(h)

    def resolve(label: str | None) -> str | None:
        if label is None or label in exact:
            return label
        cands = short.get(label.split(".")[0], [])
        return cands[0] if len(cands) == 1 else label

    return resolve


def _gpus(series: list[Series], hosts: list[str]) -> dict[tuple[str, int], GpuSeries]:
    resolve = host_resolver(hosts)
    out: dict[tuple[str, int], GpuSeries] = {}
    for s in series:
        if not s.name.startswith("DCGM_") or "gpu" not in s.labels:
            continue
        host = resolve(series_host(s.labels))
        try:
            gpu = int(s.labels["gpu"])
        except ValueError:
            continue
        if host is None:
            continue
        gs = out.setdefault((host, gpu), GpuSeries(host, gpu))
        gs.by_name.setdefault(s.name, s)
    return out


def _median_in(s: Series | None, start: float | None, end: float | None) -> float | None:
    if s is None:
        return None
    v = s.values[in_window(s.timestamps, start, end)]
    v = v[np.isfinite(v)]
    return float(np.median(v)) if v.size else None


def _increase_in(s: Series | None, start: float | None, end: float | None) -> float | None:
    if s is None:
        return None
    mask = in_window(s.timestamps, start, end)
    # Include the last sample before the window so an increase at its very start is seen.
    idx = np.flatnonzero(mask)
    if idx.size and idx[0] > 0:
        mask[idx[0] - 1] = True
    inc = counter_increase(s.values[mask])
    return None if math.isnan(inc) else inc


def _bit_share(s: Series | None, bits: int, start: float | None, end: float | None) -> float | None:
    if s is None:
        return None
    v = s.values[in_window(s.timestamps, start, end)]
    v = v[np.isfinite(v)]
    if not v.size:
        return None
    return float(np.mean((v.astype(np.int64) & bits) != 0))


def _reasons(g: GpuSeries) -> Series | None:
    return g.by_name.get("DCGM_FI_DEV_CLOCKS_EVENT_REASONS") or g.by_name.get(
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
    )


#: GPU signals whose host-wide pattern is reported as one host signal (``_hostwide``).
HOST_WIDE_METRICS = {
    "metric_thermal_violation": "host_thermal_violation",
    "metric_power_violation": "host_power_violation",
}


@register
class Metrics(Tool):
    name = "metrics"
    emits = (
        frozenset(
            {
                "metric_clock_low",
                "metric_ecc_dbe",
                "metric_nvlink_errors",
                "metric_power_violation",
                "metric_remap",
                "metric_series_stopped",
                "metric_temp_high",
                "metric_thermal_violation",
            }
        )
        | XID_SIGNALS
        | frozenset(HOST_WIDE_METRICS.values())
    )
    description = (
        "Per-GPU DCGM time series over the incident window: thermal and power violation time, clock-event "
        "reason bits, SM clock vs in-job peers, temperature, ECC and row-remap counters, NVLink error counters, "
        "XID gauge changes, and GPUs whose series stop. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        got = read_metrics(ctx, DCGM_NAMES)
        sources, errors = got.sources, got.errors
        if got.unavailable:
            return ToolResult(
                status="error" if errors else "no_data",
                summary=got.unavailable,
                data={"errors": errors},
                unread=errors,
            )
        start, end = ctx.source.window
        gpus = ctx.memo("metrics_gpus", lambda: _gpus(got.series, ctx.source.host_names()))
        hosts = set(ctx.hosts(args.host)) if args.host else None
        job = ctx.source.job_gpus()
        in_job = {k: (k in job) for k in gpus}
        scope = {k: g for k, g in gpus.items() if hosts is None or k[0] in hosts}
        if not scope:
            # A metric file that could not be read may have held them: say so, never plain absence.
            return ToolResult(
                status="error" if errors else "no_data",
                summary=f"no DCGM series for {args.host or 'any host'}"
                + (f": {errors[0]}" if errors else ""),
                source=sources,
                unread=errors,
                partial=got.partial,
            )

        # Peers: every in-job GPU of the fleet, not only the ones in scope.
        clocks = {k: _median_in(g.by_name.get("DCGM_FI_DEV_SM_CLOCK"), start, end) for k, g in gpus.items()}
        busy = [c for k, c in clocks.items() if c is not None and in_job[k]]
        peer_clock = statistics.median(busy) if len(busy) >= 4 else None
        span = (end - start) if start is not None and end is not None and end > start else None
        therm = {
            k: _increase_in(g.by_name.get("DCGM_FI_DEV_THERMAL_VIOLATION"), start, end)
            for k, g in gpus.items()
        }
        power = {
            k: _increase_in(g.by_name.get("DCGM_FI_DEV_POWER_VIOLATION"), start, end) for k, g in gpus.items()
        }
        peer_therm = _peer_share(therm, in_job, span)
        peer_power = _peer_share(power, in_job, span)
        draw = {k: _median_in(g.by_name.get("DCGM_FI_DEV_POWER_USAGE"), start, end) for k, g in gpus.items()}
        limit = {
            k: _median_in(g.by_name.get("DCGM_FI_DEV_ENFORCED_POWER_LIMIT"), start, end)
            for k, g in gpus.items()
        }
        peer_draw = _peer_median(draw, in_job)
        peer_limit = _peer_median(limit, in_job)
        last_seen = {k: _last_ts(g) for k, g in gpus.items()}
        fleet_last = max((t for t in last_seen.values() if t is not None), default=None)
        interval = _scrape_interval(gpus)
        nvl = {
            k: sum(
                v for n in NVLINK_COUNTERS if (v := _increase_in(g.by_name.get(n), start, end)) is not None
            )
            for k, g in gpus.items()
        }
        peer_nvl = statistics.median([v for k, v in nvl.items() if in_job[k]] or [0.0])

        signals: list[Signal] = []
        #: GPU -> its clock as a share of the peers' median, for the GPUs at the normal SW cap.
        normal_cap: dict[str, float] = {}
        for (host, idx), g in sorted(scope.items()):
            comp = gpu_component(host, idx)

            def sig(
                name: str, detail: str, comp: str = comp, /, **values: float | int | str | bool | None
            ) -> None:
                signals.append(Signal(name=name, component=comp, kind="gpu", detail=detail, values=values))

            share_t = (
                (therm[(host, idx)] or 0) / 1e9 / span if span and therm[(host, idx)] is not None else None
            )
            bits_t = _bit_share(_reasons(g), _THERMAL_BITS, start, end)
            if (share_t is not None and share_t >= VIOLATION_SHARE and share_t > 3 * peer_therm) or (
                bits_t or 0
            ) >= 0.2:
                sig(
                    "metric_thermal_violation",
                    f"{comp} thermally limited: "
                    + _violation_text("thermal", share_t, bits_t, "thermal throttle reasons"),
                    violation_share=None if share_t is None else round(share_t, 4),
                    thermal_bit_share=bits_t,
                )
            clock = clocks[(host, idx)]
            low = (
                clock is not None
                and peer_clock is not None
                and in_job[(host, idx)]
                and clock < CLOCK_PEER_RATIO * peer_clock
            )
            share_p = (
                (power[(host, idx)] or 0) / 1e9 / span if span and power[(host, idx)] is not None else None
            )
            brake = _bit_share(_reasons(g), _POWER_BRAKE, start, end)
            cap = _bit_share(_reasons(g), _SW_POWER_CAP, start, end)
            capped = (share_p is not None and share_p >= VIOLATION_SHARE and share_p > 3 * peer_power) or (
                cap or 0
            ) >= 0.5
            mine_w, mine_limit = draw[(host, idx)], limit[(host, idx)]
            lowered = (
                mine_limit is not None and peer_limit and mine_limit < LOWERED_CAP_RATIO * peer_limit
            ) or (mine_w is not None and peer_draw and mine_w < LOWERED_CAP_RATIO * peer_draw)
            # A deep deficit at an unlowered cap is gpu_health's power_cap_clocks_low (one reading
            # of the same fact is enough: the clock deficit is metric_clock_low here).
            if (brake or 0) >= 0.2 or (low and capped and lowered):
                watts = (
                    f"; drawing {mine_w:.0f} W vs peer median {peer_draw:.0f} W"
                    if mine_w is not None and peer_draw
                    else ""
                ) + (
                    f"; enforced limit {mine_limit:.0f} W vs peers' {peer_limit:.0f} W"
                    if mine_limit is not None and peer_limit
                    else ""
                )
                sig(
                    "metric_power_violation",
                    f"{comp} power-limited: "
                    + _violation_text("power", share_p, brake, "the power brake")
                    + (f"; SW power cap in {100 * cap:.0f}% of samples" if cap else "")
                    + watts,
                    violation_share=None if share_p is None else round(share_p, 4),
                    brake_share=brake,
                    cap_share=cap,
                    power_w=None if mine_w is None else round(mine_w, 1),
                    limit_w=None if mine_limit is None else round(mine_limit, 1),
                    lowered=bool(lowered),
                )
            # At the normal SW power cap (that bit alone through the window, an unlowered limit,
            # within the chip spread under the cap) a clock below the peers' is how the chip runs
            # capped, not a clock fault: many GPUs of a busy fleet sit there at once.
            other = _bit_share(_reasons(g), CLOCK_FAULT_BITS, start, end)
            at_normal_cap = False
            if clock is not None and peer_clock is not None:
                at_normal_cap = (
                    (cap or 0) >= 0.5
                    and (other or 0) < VIOLATION_SHARE
                    and not lowered
                    and clock >= DEEP_CLOCK_RATIO * peer_clock
                )
                if at_normal_cap:
                    normal_cap[comp] = round(clock / peer_clock, 4)
            if low and clock is not None and peer_clock is not None and not at_normal_cap:
                sig(
                    "metric_clock_low",
                    f"{comp} median SM clock {clock:.0f} MHz vs in-job peer median {peer_clock:.0f} MHz",
                    sm_mhz=round(clock, 1),
                    peer_median_mhz=round(peer_clock, 1),
                )
            temp = _median_in(g.by_name.get("DCGM_FI_DEV_GPU_TEMP"), start, end)
            if temp is not None and temp >= HOT_C:
                sig(
                    "metric_temp_high",
                    f"{comp} median temperature {temp:.0f} C in the window",
                    temp_c=round(temp, 1),
                )
            last = last_seen[(host, idx)]
            if (
                last is not None
                and fleet_last is not None
                and fleet_last - last > max(60.0, 3 * interval)
                and (start is None or last >= start - 3600)
            ):
                sig(
                    "metric_series_stopped",
                    f"{comp} DCGM series stop at {last:.0f}, {fleet_last - last:.0f} s before the fleet's",
                    last_unix=last,
                    gap_s=round(fleet_last - last, 1),
                )
            dbe = _increase_in(g.by_name.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), start, end)
            if dbe:
                sig(
                    "metric_ecc_dbe",
                    f"{comp} volatile double-bit ECC errors rose by {dbe:.0f} in the window",
                    dbe_increase=dbe,
                )
            remap = _increase_in(g.by_name.get("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"), start, end)
            fail = _median_in(g.by_name.get("DCGM_FI_DEV_ROW_REMAP_FAILURE"), start, end)
            if remap or fail:
                sig(
                    "metric_remap",
                    f"{comp} uncorrectable remapped rows +{remap or 0:.0f}, remap failure {int(fail or 0)}",
                    remap_increase=remap,
                    remap_failure=fail,
                )
            n = nvl[(host, idx)]
            if n >= 100 and n > 10 * peer_nvl + 10:
                sig(
                    "metric_nvlink_errors",
                    f"{comp} NVLink error counters rose by {n:.0f} in the window (peer median {peer_nvl:.0f})",
                    nvlink_errors=n,
                    peer_median=peer_nvl,
                )
            for code, when in _xid_changes(g.by_name.get("DCGM_FI_DEV_XID_ERRORS"), start, end):
                if s := xid_signal(
                    code, comp, f"{comp} DCGM XID gauge changed to {code} at {when:.0f}", source="dcgm"
                ):
                    signals.append(s)

        # Most in-job GPUs of one host in violation over the window: the host's cooling or power
        # (a window of samples says it better than one nvidia-smi reading: gpu_health does the same)
        in_job_of: dict[str, list[str]] = {}
        for host, idx in scope:
            if in_job[(host, idx)]:
                in_job_of.setdefault(host, []).append(gpu_component(host, idx))
        signals.extend(host_wide(signals, in_job_of, HOST_WIDE_METRICS))
        summary = f"{len(scope)} GPUs' DCGM series read over the window; " + (
            f"findings: {by_signal(signals)}" if signals else "no GPU stands out from its peers"
        )
        return ToolResult(
            status="ok",
            summary=summary,
            source=sources,
            signals=signals,
            covered=[gpu_component(h, i) for h, i in scope],
            data={
                "peer_median_sm_mhz": peer_clock,
                "gpus": len(scope),
                "errors": errors,
                "normal_cap": normal_cap,
            },
            unread=errors,
            partial=got.partial,
        )


def _peer_median(vals: dict[tuple[str, int], float | None], in_job: dict) -> float | None:
    got = [v for k, v in vals.items() if v is not None and in_job[k]]
    return statistics.median(got) if len(got) >= 4 else None


def _peer_share(inc: dict[tuple[str, int], float | None], in_job: dict, span: float | None) -> float:
    vals = [v / 1e9 / span for k, v in inc.items() if v is not None and in_job[k] and span]
    return statistics.median(vals) if vals else 0.0


def _last_ts(g: GpuSeries) -> float | None:
    ts = [float(np.nanmax(s.timestamps)) for s in g.by_name.values() if np.isfinite(s.timestamps).any()]
    return max(ts) if ts else None


def _scrape_interval(gpus: dict[tuple[str, int], GpuSeries]) -> float:
    diffs = []
    for g in list(gpus.values())[:16]:
        for s in list(g.by_name.values())[:2]:
            t = s.timestamps[np.isfinite(s.timestamps)]
            if t.size > 2:
                diffs.append(float(np.median(np.diff(t))))
    return statistics.median(diffs) if diffs else 15.0


def _xid_changes(s: Series | None, start: float | None, end: float | None) -> list[tuple[int, float]]:
    """(xid, time) for each change of the sticky last-XID gauge to a new non-zero value in the window."""
    if s is None or s.values.size < 2:
        return []
    out = []
    v, t = s.values, s.timestamps
    for i in range(1, v.size):
        if np.isfinite(v[i]) and v[i] != v[i - 1] and v[i] > 0 and in_window(t[i : i + 1], start, end)[0]:
            out.append((int(v[i]), float(t[i])))
    return out


__all__ = ["DCGM_NAMES", "NVLINK_COUNTERS", "Metrics", "host_resolver", "read_metric", "read_metrics"]
