"""GPU health: clocks and why they are reduced, temperature, power, ECC, row remapping, lost GPUs.

Reads NVML readings (``nvml.json``) and falls back to ``nvidia-smi -q``. A reason bit alone is
not a fault: SW power cap is active on many busy GPUs that run at full speed. A clock reduction
is judged against the GPU's own maximum and its peers in the same scan; thermal bits and the
power brake are faults on their own.

Power capping is how a busy H100 normally runs: a GPU drawing its full default limit with the SW
power cap set, a few per cent slower than its peers, is a less efficient chip, not a fault. The
cap is a fault when someone lowered it (the enforced limit below the board's default limit or
its peers' limit), when the power brake or HW slowdown acts, or when the clocks sit far below
the peers' (further than chip-to-chip spread reaches).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._hostwide import host_wide
from forensic.tools._inventory import inventory
from forensic.tools._sweep import hosts_for
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
from forensic.tools.metrics import DEEP_CLOCK_RATIO  # one chip-spread bound for both readings
from forensic.tools.parsers.nvidia_smi import parse_nvidia_smi_q
from forensic.tools.parsers.nvml import decode_clock_event_reasons, parse_nvml_readings

_GPU_IDLE = 0x1
_SW_POWER_CAP = 0x4
_HW_SLOWDOWN = 0x8
_SW_THERMAL = 0x20
_HW_THERMAL = 0x40
_HW_POWER_BRAKE = 0x80

#: A GPU whose SM clock is below this fraction of its peers' median runs measurably slower.
CLOCK_PEER_RATIO = 0.93
#: ... or below this fraction of its own maximum when it has no peers to compare with.
CLOCK_MAX_RATIO = 0.85
#: GPU signals that, on most of one host's GPUs at once, name the host (a shared cause).
HOST_WIDE_SIGNALS = {"thermal_slowdown": "host_thermal_slowdown", "power_slowdown": "host_power_slowdown"}
#: An enforced power limit below this fraction of the board's default (or the peers') limit was lowered.
LOWERED_CAP_RATIO = 0.9
#: Hot enough to be worth saying even with no slowdown bit (H100 slowdown is ~87-90 C).
HOT_C = 87


@dataclass
class Reading:
    host: str
    index: int
    in_job: bool
    lost: bool = False
    error: str | None = None
    temp: float | None = None
    slowdown_temp: float | None = None
    power_w: float | None = None
    limit_w: float | None = None
    #: The board's default power limit (nvidia-smi -q), when recorded.
    default_limit_w: float | None = None
    sm: float | None = None
    sm_max: float | None = None
    reasons: int | None = None
    ecc_unc: int | None = None
    remap_unc: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    source: str = ""
    #: The uncorrectable counts equal the window-start snapshot's: errors from before the window.
    static_unc: bool = False

    @property
    def component(self) -> str:
        return gpu_component(self.host, self.index)


def _from_nvml(ctx: ToolContext, host: str) -> list[Reading]:
    inv = inventory(ctx, host)
    if inv.nvml is None:
        return []
    out = []
    for d in inv.nvml.devices:
        if d.index is None:
            continue
        dev = inv.gpus.get(d.index)
        out.append(
            Reading(
                host=host,
                index=d.index,
                in_job=bool(dev and dev.in_job),
                lost=d.lost,
                error=d.error,
                temp=d.temperature_c,
                power_w=d.power_usage_mw / 1000 if d.power_usage_mw is not None else None,
                limit_w=d.enforced_power_limit_mw / 1000 if d.enforced_power_limit_mw is not None else None,
                sm=d.clock_sm_mhz,
                sm_max=d.max_clock_sm_mhz,
                reasons=d.clocks_event_reasons,
                ecc_unc=d.ecc_uncorrected_volatile,
                remap_unc=d.remapped_rows_uncorrected,
                remap_pending=d.remapped_rows_pending,
                remap_failure=d.remapped_rows_failure,
                source=inv.nvml_source or "",
            )
        )
    return out


def _from_smi(ctx: ToolContext, host: str) -> list[Reading]:
    node = ctx.source.host(host)
    argv = ["nvidia-smi", "-q"]
    if not node.has_command(argv):
        return []
    inv = inventory(ctx, host)
    out = []
    for pos, g in enumerate(parse_nvidia_smi_q(node.run(argv))):
        dev = inv.by_pci(g.pci) if g.pci else None
        index = int(dev.name[3:]) if dev is not None else pos
        out.append(
            Reading(
                host=host,
                index=index,
                in_job=bool(dev and dev.in_job) or (host, index) in ctx.source.job_gpus(),
                lost=g.lost,
                error=g.lost_reason,
                temp=g.temp_gpu_c,
                slowdown_temp=g.temp_slowdown_c,
                power_w=g.power_draw_w,
                limit_w=g.power_limit_w,
                default_limit_w=g.default_power_limit_w,
                sm=g.clock_sm_mhz,
                sm_max=g.max_clock_sm_mhz,
                reasons=g.clock_event_reasons_mask,
                ecc_unc=g.ecc_volatile.uncorrectable_total,
                remap_unc=g.remapped_rows_uncorrectable,
                remap_pending=g.remapped_rows_pending,
                remap_failure=g.remapped_rows_failure,
                source=node.command_source(argv),
            )
        )
    return out


def _add_default_limits(ctx: ToolContext, host: str, readings: list[Reading]) -> None:
    """The board's default power limit from ``nvidia-smi -q`` for NVML readings (NVML's readings
    carry only the enforced limit): without it a cap lowered on every GPU of a host looks normal."""
    todo = [r for r in readings if r.default_limit_w is None and not r.lost]
    if not todo:
        return
    argv = ["nvidia-smi", "-q"]
    try:
        node = ctx.source.host(host)
        if not node.has_command(argv):
            return
        gpus = parse_nvidia_smi_q(node.run(argv))
    except ForensicError:
        return  # the NVML readings stand on their own; the peers' limits are still compared
    inv = inventory(ctx, host)
    by_index: dict[int, float] = {}
    for pos, g in enumerate(gpus):
        if g.default_power_limit_w is None:
            continue
        dev = inv.by_pci(g.pci) if g.pci else None
        by_index[int(dev.name[3:]) if dev is not None else pos] = g.default_power_limit_w
    for r in todo:
        r.default_limit_w = by_index.get(r.index)


def _before_counts(ctx: ToolContext, host: str) -> dict[int, tuple[int | None, int | None]]:
    """Uncorrectable (ECC volatile, remapped rows) per GPU index in the window-start snapshot; {}
    when none was recorded or it cannot be read (then nothing is judged static)."""
    try:
        node = ctx.source.host(host, snapshot="before")
        raw = node.nvml()
        if raw is not None:
            return {
                d.index: (d.ecc_uncorrected_volatile, d.remapped_rows_uncorrected)
                for d in parse_nvml_readings(raw).devices
                if d.index is not None
            }
        argv = ["nvidia-smi", "-q"]
        if node.has_command(argv):
            inv = inventory(ctx, host)
            out = {}
            for pos, g in enumerate(parse_nvidia_smi_q(node.run(argv))):
                dev = inv.by_pci(g.pci) if g.pci else None
                out[int(dev.name[3:]) if dev is not None else pos] = (
                    g.ecc_volatile.uncorrectable_total,
                    g.remapped_rows_uncorrectable,
                )
            return out
    except ForensicError:
        pass
    return {}


def _mark_static(ctx: ToolContext, readings: list[Reading]) -> None:
    """Uncorrectable counts that did not move since the window-start snapshot are history: a GPU
    that remapped two rows last month and none since is not failing now (large static counts sit
    on many GPUs of a big fleet)."""
    hosts = sorted({r.host for r in readings if (r.ecc_unc or 0) > 0 or (r.remap_unc or 0) > 0})
    for host in hosts:
        before = _before_counts(ctx, host)
        for r in readings:
            if r.host != host or r.index not in before:
                continue
            b_ecc, b_rows = before[r.index]
            r.static_unc = (r.ecc_unc or 0) == (b_ecc or 0) and (r.remap_unc or 0) == (b_rows or 0)


def _clock_low(r: Reading, peer_median: float | None) -> bool:
    if r.sm is None or (r.reasons or 0) & _GPU_IDLE:
        return False
    if peer_median:
        return r.sm < CLOCK_PEER_RATIO * peer_median
    return r.sm_max is not None and r.sm_max > 0 and r.sm < CLOCK_MAX_RATIO * r.sm_max


def normal_cap(r: Reading, peer_median: float | None, peer_limit: float | None = None) -> bool:
    """The GPU runs at its normal SW power cap: that bit is its only clock-event reason, it draws
    its limit, the limit was not lowered, it is not hot, and its clock sits within the chip spread
    under the cap of its peers'. Such a GPU clocks a few per cent below uncapped peers by design:
    its deficit is no clock fault (and in a fleet where many GPUs sit at the cap, a crowd of them
    does)."""
    reasons = r.reasons or 0
    return (
        reasons == _SW_POWER_CAP
        and r.sm is not None
        and r.power_w is not None
        and r.limit_w is not None
        and r.power_w >= 0.97 * r.limit_w
        and lowered_cap(r, peer_limit) is None
        and not (
            r.temp is not None
            and (r.temp >= HOT_C or (r.slowdown_temp is not None and r.temp >= r.slowdown_temp - 3))
        )
        and (peer_median is None or r.sm >= DEEP_CLOCK_RATIO * peer_median)
    )


def lowered_cap(r: Reading, peer_limit: float | None) -> float | None:
    """The limit the enforced one was lowered from (the board's default, else the peers'), or
    None when it was not lowered or nothing says what it should be."""
    if r.limit_w is None:
        return None
    ref = r.default_limit_w or peer_limit
    if ref and r.limit_w < LOWERED_CAP_RATIO * ref:
        return ref
    return None


def assess(r: Reading, peer_median: float | None, peer_limit: float | None = None) -> list[Signal]:
    comp = r.component
    sigs: list[Signal] = []

    def sig(name: str, detail: str, **values: float | int | str | bool | None) -> None:
        sigs.append(Signal(name=name, component=comp, kind="gpu", detail=detail, values=values))

    if r.lost:
        sig(
            "device_lost",
            f"{comp} cannot be read by NVML: {r.error or 'GPU is lost'}",
            error=r.error or "lost",
        )
        return sigs
    reasons = r.reasons or 0
    names = decode_clock_event_reasons(reasons) if reasons else []
    low = _clock_low(r, peer_median)
    clocks = f"SM clock {r.sm:g} MHz" if r.sm is not None else "SM clock unknown"
    if r.sm is not None and r.sm_max:
        clocks += f" of max {r.sm_max:g} MHz"
    hot = r.temp is not None and (
        r.temp >= HOT_C or (r.slowdown_temp is not None and r.temp >= r.slowdown_temp - 3)
    )
    hw_slow = bool(reasons & _HW_SLOWDOWN)
    near_limit = r.power_w is not None and r.limit_w is not None and r.power_w >= 0.97 * r.limit_w
    # A hot GPU whose clocks sit below its peers' is thermally limited even where the reason
    # bits are not recorded (older drivers, partial readings).
    if reasons & (_SW_THERMAL | _HW_THERMAL) or (hot and (hw_slow or (low and r.reasons is None))):
        sig(
            "thermal_slowdown",
            f"{comp} thermal slowdown active ({', '.join(names)}) at {r.temp:g} C, {clocks}"
            if r.temp is not None
            else f"{comp} thermal slowdown active ({', '.join(names)}), {clocks}",
            reasons=reasons,
            temp_c=r.temp,
            sm_mhz=r.sm,
            sm_max_mhz=r.sm_max,
        )
    # The software power cap is how busy GPUs normally run (at the default limit a less
    # efficient chip clocks a few per cent below its peers): it is a fault only when the GPU draws
    # at its limit (when the reading exists), its clocks sit below its in-job peers', and the
    # limit was lowered or the clocks sit further below than chip spread reaches. Without peers
    # only a lowered limit says it is abnormal. The power brake is a fault on its own.
    at_cap = near_limit or r.power_w is None or r.limit_w is None
    lowered_from = lowered_cap(r, peer_limit)
    deep = r.sm is not None and peer_median is not None and r.sm < DEEP_CLOCK_RATIO * peer_median
    capped = bool(reasons & _SW_POWER_CAP) and at_cap
    why = (
        "power brake"
        if reasons & _HW_POWER_BRAKE
        else "hw_slowdown at the limit"
        if hw_slow and near_limit and not hot and low and peer_median is not None
        else "lowered limit"
        if capped and lowered_from is not None and (low or _clock_low(r, None))
        else None
    )
    if why is None and capped and low and deep:
        # At an unlowered limit a deep deficit is a fault only if that GPU's rank is the straggler
        # that explains the job's slowdown (the report's rule): its own signal, not power_slowdown.
        sig(
            "power_cap_clocks_low",
            f"{comp} at the SW power cap of an unlowered limit"
            + (
                f" ({r.power_w:g} W of {r.limit_w:g} W)"
                if r.power_w is not None and r.limit_w is not None
                else ""
            )
            + f", {clocks} vs peer median {peer_median:g} MHz: further below than chip spread reaches",
            power_w=r.power_w,
            limit_w=r.limit_w,
            sm_mhz=r.sm,
            peer_median_mhz=peer_median,
        )
    if why is not None:
        power = (
            f" drawing {r.power_w:g} W of a {r.limit_w:g} W limit"
            if r.power_w is not None and r.limit_w is not None
            else ""
        )
        if lowered_from is not None:
            power += f" (lowered from {lowered_from:g} W)"
        sig(
            "power_slowdown",
            f"{comp} power-limited ({', '.join(names)}){power}, {clocks}",
            reasons=reasons,
            power_w=r.power_w,
            limit_w=r.limit_w,
            default_limit_w=lowered_from or r.default_limit_w,
            sm_mhz=r.sm,
            sm_max_mhz=r.sm_max,
            why=why,
        )
    if low and not normal_cap(r, peer_median, peer_limit):
        ref = f" vs peer median {peer_median:g} MHz" if peer_median else ""
        sig(
            "clocks_reduced",
            f"{comp} {clocks}{ref}",
            sm_mhz=r.sm,
            sm_max_mhz=r.sm_max,
            peer_median_mhz=peer_median,
        )
    if hot:
        sig("gpu_hot", f"{comp} at {r.temp:g} C", temp_c=r.temp)
    if ((r.ecc_unc or 0) > 0 or (r.remap_unc or 0) > 0) and not r.static_unc:
        sig(
            "ecc_uncorrectable",
            f"{comp} uncorrectable ECC errors {r.ecc_unc or 0} (volatile), "
            f"{r.remap_unc or 0} rows remapped for uncorrectable errors",
            ecc_uncorrected=r.ecc_unc,
            remapped_uncorrectable=r.remap_unc,
        )
    if r.remap_pending:
        sig(
            "remap_pending", f"{comp} has a row remap pending (activates at the next GPU reset)", pending=True
        )
    if r.remap_failure:
        sig("remap_failure", f"{comp} row remapping failed: no spare rows left", failure=True)
    return sigs


@register
class GpuHealth(Tool):
    name = "gpu_health"
    emits = frozenset(
        {
            "clocks_reduced",
            "device_lost",
            "ecc_uncorrectable",
            "gpu_hot",
            "power_cap_clocks_low",
            "power_slowdown",
            "remap_failure",
            "remap_pending",
            "thermal_slowdown",
        }
    ) | frozenset(HOST_WIDE_SIGNALS.values())
    description = (
        "Per-GPU health from NVML readings or nvidia-smi -q: clock event (throttle) reasons, temperature, "
        "power vs limit, SM clock vs max and vs peers, ECC, row remapping, lost GPUs. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        readings: list[Reading] = []
        sources: list[str] = []
        errors: list[str] = []
        hosts, sweep = hosts_for(ctx, args.host, ("gpu",))
        for host in hosts:
            try:
                rs = _from_nvml(ctx, host) or _from_smi(ctx, host)
            except NotFoundError:  # not recorded: absence, not something unread
                continue
            except ForensicError as exc:
                errors.append(f"{host}: {exc}")
                continue
            if (err := inventory(ctx, host).nvml_error) is not None:
                errors.append(f"{host}: {err}")
            _add_default_limits(ctx, host, rs)
            readings.extend(rs)
            sources.extend(sorted({r.source for r in rs if r.source}))
        if not readings:
            return ToolResult(
                status="error" if errors else "no_data",
                summary="no GPU readings (no nvml.json or nvidia-smi -q)"
                + (f"; {errors[0]}" if errors else ""),
                data={"errors": errors},
                unread=errors,
            )
        busy = [
            r.sm
            for r in readings
            if r.in_job and r.sm is not None and not r.lost and not (r.reasons or 0) & _GPU_IDLE
        ]
        peer_median = statistics.median(busy) if len(busy) >= 4 else None
        limits = [r.limit_w for r in readings if r.in_job and r.limit_w is not None and not r.lost]
        peer_limit = statistics.median(limits) if len(limits) >= 4 else None
        _mark_static(ctx, readings)
        signals: list[Signal] = []
        for r in readings:
            signals.extend(assess(r, peer_median if r.in_job else None, peer_limit))
        in_job: dict[str, list[str]] = {}
        for r in readings:
            if r.in_job:
                in_job.setdefault(r.host, []).append(r.component)
        signals.extend(host_wide(signals, in_job, HOST_WIDE_SIGNALS))
        warm = [r.component for r in readings if r.temp is not None and 80 <= r.temp < HOT_C]
        summary = (
            f"{count(len(readings), 'GPU')} on {count(len({r.host for r in readings}), 'host')} read; "
            + (f"findings: {by_signal(signals)}" if signals else "no throttling, ECC or lost GPUs")
        )
        if warm:
            summary += f"; warm but not throttled: {', '.join(warm[:4])}"
        if static := [r.component for r in readings if r.static_unc]:
            summary += (
                f"; uncorrectable ECC/remapped-row counts unchanged since the window start (history, "
                f"not a fault in the window): {', '.join(static[:4])}" + (" …" if len(static) > 4 else "")
            )
        if errors:
            summary += f"; unreadable: {'; '.join(errors[:2])}"
        if sweep is not None:
            summary += sweep.phrase()
        return ToolResult(
            status="ok",
            summary=summary,
            source=sources,
            signals=signals,
            covered=[r.component for r in readings],
            data={
                "peer_median_sm_mhz": peer_median,
                "errors": errors,
                **({"sweep": sweep.data()} if sweep is not None and not sweep.whole else {}),
                "gpus": {
                    r.component: {
                        "temp_c": r.temp,
                        "sm_mhz": r.sm,
                        "power_w": r.power_w,
                        "reasons": r.reasons,
                        "in_job": r.in_job,
                        "normal_cap": normal_cap(r, peer_median if r.in_job else None, peer_limit),
                    }
                    for r in readings
                },
            },
            unread=errors,
        )
