"""The whole fleet quieter at once: every GPU's activity and every host's network traffic stepping
down together, from one scrape on.

A job that slows for a reason every rank shares (an input pipeline that cannot keep up, a job-wide
wait) leaves its GPUs less busy and moves fewer bytes per second, on every GPU and every host at the
same moment. Nothing stands out from its peers (the per-GPU tools see nothing), and without the
job's steps or logs it is the only trace of the slowdown. This tool reads the fleet's own series:

- GPU activity (``DCGM_FI_PROF_SM_ACTIVE``, else ``DCGM_FI_DEV_GPU_UTIL``): for each GPU busy
  before, the one split of its series in the window that best separates a higher level from a
  lower one; the drop counts when the level after is at most ``DROP`` of the level before.
- NIC bytes (``node_infiniband_port_data_*_bytes_total``, ``node_network_*_bytes_total``): the same
  on each host's summed byte rate.

``fleet_activity_drop`` needs at least ``SHARE`` of the busy GPUs and of the hosts with NIC series
to drop, with onsets within ``ONSET_SCRAPES`` scrape intervals of the fleet's median onset, while
the GPUs stay busy after it (a job that stopped is a hang or a crash, not a slower job). Both
series are needed: GPU activity alone also falls when a collective hangs with its kernels spinning
or waiting, and bytes alone move with other tenants.

``activity_drop_network_quiet`` adds what the fabric and the GPUs did not do: the NICs' transmit
waits and error counters did not rise, the SM clock held and no throttle reason came on. A slower
fabric makes senders wait; a throttled GPU runs a lower clock; a job starved of input does neither.
Without wait counters nothing is said about the network (absence is not quiet).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from forensic.sandbox import MetricRead
from forensic.tools.base import Signal, Tool, ToolContext, ToolInput, ToolResult, register, utc_text
from forensic.tools.metrics import CLOCK_FAULT_BITS, in_window, read_metric
from forensic.tools.parsers.openmetrics import Series, counter_increase, series_host

#: GPU activity series, best first, with the level below which a GPU is not running the job.
ACTIVITY = {"DCGM_FI_PROF_SM_ACTIVE": 0.1, "DCGM_FI_DEV_GPU_UTIL": 10.0}
NIC_BYTES = (
    "node_infiniband_port_data_transmitted_bytes_total",
    "node_infiniband_port_data_received_bytes_total",
    "node_network_transmit_bytes_total",
    "node_network_receive_bytes_total",
)
NIC_WAIT = ("node_infiniband_port_transmit_wait_total",)
NIC_ERRORS = ("node_infiniband_port_errors_received_total", "node_infiniband_link_downed_total")
CLOCK = "DCGM_FI_DEV_SM_CLOCK"
REASONS = ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
#: Interfaces that carry no job traffic.
_NOT_JOB_NIC = ("lo", "docker", "veth", "virbr", "cali", "flannel", "cni", "br-", "tunl", "kube")

#: The level after the onset is at most this share of the level before: a drop.
DROP = 0.8
#: Share of busy GPUs, and of hosts with NIC series, that must drop together.
SHARE = 0.9
#: Onsets within this many scrape intervals of the fleet's median onset are one onset.
ONSET_SCRAPES = 2.0
#: Samples needed on each side of a split.
MIN_SIDE = 3
#: The network did not slow: waits and errors per second after the onset at most this many times
#: the rate before (plus one event a minute, so a counter that sat at zero may tick).
WAIT_RISE = 1.5
#: The SM clock held: the fleet median after is at least this share of before.
CLOCK_HELD = 0.95
#: A throttle reason came on: this much more of the GPUs carry a slowing bit after than before.
REASON_RISE = 0.1


class FleetActivityInput(ToolInput):
    """The tool reads the whole fleet's GPU and NIC series; it takes no arguments."""


@dataclass
class _Drop:
    onset: float
    before: float
    after: float


def _split(t: np.ndarray, v: np.ndarray) -> _Drop | None:
    """The split of one series that best separates a higher level before from a lower one after
    (largest mean gap weighted by the sides' sizes), with the medians either side."""
    n = v.size
    if n < 2 * MIN_SIDE:
        return None
    c = np.cumsum(v)
    k = np.arange(MIN_SIDE, n - MIN_SIDE + 1)
    mean_b = c[k - 1] / k
    mean_a = (c[-1] - c[k - 1]) / (n - k)
    stat = (mean_b - mean_a) * np.sqrt(k * (n - k) / n)
    best = int(k[int(np.argmax(stat))])
    return _Drop(float(t[best]), float(np.median(v[:best])), float(np.median(v[best:])))


def _window_values(s: Series, start: float | None, end: float | None) -> tuple[np.ndarray, np.ndarray]:
    m = in_window(s.timestamps, start, end) & np.isfinite(s.values)
    return s.timestamps[m], s.values[m]


def _rates(
    series: list[Series], start: float | None, end: float | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per host, the summed per-second rate of its counters at their common sample times."""
    by_host: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for s in series:
        dev = s.labels.get("device", "")
        if dev.startswith(_NOT_JOB_NIC):
            continue
        host = series_host(s.labels)
        t, v = _window_values(s, start, end)
        if host is None or t.size < 2:
            continue
        dt, dv = np.diff(t), np.diff(v)
        dv = np.where(dv < 0, v[1:], dv)  # a reset starts again from zero
        ok = dt > 0
        by_host.setdefault(host, []).append((t[1:][ok], dv[ok] / dt[ok]))
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for host, parts in by_host.items():
        times = np.unique(np.concatenate([p[0] for p in parts]))
        total = np.zeros(times.size)
        for pt, pr in parts:
            total += np.interp(times, pt, pr) if pt.size > 1 else 0.0
        out[host] = (times, total)
    return out


def _activity(ctx: ToolContext) -> tuple[str, float, MetricRead] | None:
    """(name, busy level, read) of the best GPU activity series recorded; None without any."""
    for name, busy in ACTIVITY.items():
        got = read_metric(ctx, name)
        if got.series:
            return name, busy, got
    return None


def _short(name: str) -> str:
    """'sm_active' for DCGM_FI_PROF_SM_ACTIVE: the activity series as a summary names it."""
    return name.replace("DCGM_FI_PROF_", "").replace("DCGM_FI_DEV_", "").lower()


def _read(ctx: ToolContext, names: tuple[str, ...]) -> tuple[list[Series], list[str]]:
    series: list[Series] = []
    sources: list[str] = []
    for name in names:
        got = read_metric(ctx, name)
        series.extend(got.series)
        sources.extend(s for s in got.sources if s not in sources)
    return series, sources


def _rate_between(series: list[Series], a: float, b: float) -> float | None:
    """Summed per-second increase of counters over [a, b]; None without two samples in it."""
    total, seen = 0.0, False
    for s in series:
        t, v = _window_values(s, a, b)
        if t.size < 2 or t[-1] <= t[0]:
            continue
        inc = counter_increase(v)
        if np.isfinite(inc):
            total += inc / (t[-1] - t[0])
            seen = True
    return total if seen else None


@register
class FleetActivity(Tool):
    name = "fleet_activity"
    emits = frozenset({"fleet_activity_drop", "activity_drop_network_quiet", "activity_drop_mid_run"})
    description = (
        "Whether every GPU's activity (DCGM SM_ACTIVE or GPU_UTIL) and every host's NIC byte rate stepped down "
        "together at one onset in the window, the GPUs still busy after it; and whether the network's waits and "
        "errors, the SM clocks and the throttle reasons stayed as they were (a job-wide slowdown the fabric and the "
        "GPUs did not cause). No arguments."
    )
    Input = FleetActivityInput
    cost = 1.0

    def run(self, ctx: ToolContext, args: FleetActivityInput) -> ToolResult:
        start, end = ctx.source.window
        got = _activity(ctx)
        if got is None:
            return ToolResult(status="no_data", summary="no GPU activity series recorded")
        act_name, busy, act = got
        nic, nic_src = _read(ctx, NIC_BYTES)
        sources = [*act.sources, *(s for s in nic_src if s not in act.sources)]
        windows = [_window_values(s, start, end) for s in act.series]
        gpus: list[_Drop] = []
        for t, v in windows:
            if t.size < 2 * MIN_SIDE or float(np.median(v[:MIN_SIDE])) < busy:
                continue  # not running the job at the window's start (a spare, an idle GPU)
            if (split := _split(t, v)) is not None:
                gpus.append(split)
        if len(gpus) < 2:
            return ToolResult(
                status="ok",
                summary="too few busy GPUs with activity series over the window to judge the fleet",
                source=sources,
            )
        step = _scrape_interval(act.series, start, end)
        short = _short(act_name)
        onset = float(np.median([g.onset for g in gpus]))
        tol = ONSET_SCRAPES * step
        dropped = [g for g in gpus if g.after <= DROP * g.before and abs(g.onset - onset) <= tol]
        still_busy = float(np.median([g.after for g in dropped])) >= busy if dropped else False
        data: dict = {
            "activity": act_name,
            "gpus_busy": len(gpus),
            "gpus_dropped": len(dropped),
            "onset_unix": round(onset, 1),
        }
        if len(dropped) < SHARE * len(gpus) or not still_busy:
            why = (
                f"{len(dropped)} of {len(gpus)} busy GPUs' {short} dropped at one onset"
                if still_busy or not dropped
                else f"the GPUs' {short} fell to idle (a stopped job, not a slower one)"
            )
            return ToolResult(
                status="ok",
                summary=f"no fleet-wide activity drop: {why}",
                source=sources,
                covered=["job"],
                data=data,
            )
        act_b = float(np.median([g.before for g in dropped]))
        act_a = float(np.median([g.after for g in dropped]))
        hosts = _rates(nic, start, end)
        nic_drops = {h: d for h, (t, r) in hosts.items() if (d := _split(t, r)) is not None}
        if not nic_drops:
            return ToolResult(
                status="ok",
                summary=f"{len(dropped)} of {len(gpus)} busy GPUs' {short} dropped at one onset, but no NIC byte "
                "series say whether the job's traffic fell with it: not judged",
                source=sources,
                data=data,
            )
        nic_tol = tol + _median_step(hosts)
        nic_dropped = [
            d for d in nic_drops.values() if d.after <= DROP * d.before and abs(d.onset - onset) <= nic_tol
        ]
        data.update(hosts_nic=len(nic_drops), hosts_dropped=len(nic_dropped))
        if len(nic_dropped) < SHARE * len(nic_drops):
            return ToolResult(
                status="ok",
                summary=f"{len(dropped)} of {len(gpus)} busy GPUs' {short} dropped at one onset, but the NIC byte "
                f"rate fell with it on {len(nic_dropped)} of {len(nic_drops)} hosts only: no fleet-wide drop",
                source=sources,
                covered=["job"],
                data=data,
            )
        nic_b = float(np.median([d.before for d in nic_dropped]))
        nic_a = float(np.median([d.after for d in nic_dropped]))
        when = utc_text(onset)
        drop = Signal(
            name="fleet_activity_drop",
            component="job",
            kind="job",
            detail=f"{len(dropped)} of {len(gpus)} busy GPUs' {short} fell {act_b:.3g} -> {act_a:.3g} and the NIC byte "
            f"rate of {len(nic_dropped)} of {len(nic_drops)} hosts {nic_b / 1e9:.3g} -> {nic_a / 1e9:.3g} GB/s, "
            f"together from {when}: the whole job slowed at once",
            values={
                "gpus": len(dropped),
                "gpus_busy": len(gpus),
                "activity_before": round(act_b, 4),
                "activity_after": round(act_a, 4),
                "activity_ratio": round(act_a / act_b, 4) if act_b else 0.0,
                "hosts": len(nic_dropped),
                "nic_ratio": round(nic_a / nic_b, 4) if nic_b else 0.0,
                "onset_unix": round(onset, 1),
            },
        )
        signals = [drop]
        # No busy GPU went idle anywhere in the window: the job ran on through the onset, with no
        # relaunch (which idles every GPU for a while) that could have brought in new settings.
        ran_on = sum(
            float(v.min()) >= busy
            for _, v in windows
            if v.size >= 2 * MIN_SIDE and float(np.median(v[:MIN_SIDE])) >= busy
        )
        if ran_on >= SHARE * len(gpus):
            signals.append(
                Signal(
                    name="activity_drop_mid_run",
                    component="job",
                    kind="job",
                    detail=f"no busy GPU went idle in the window ({ran_on} of {len(gpus)} stayed at or above "
                    f"{busy:g} {short}): the job slowed while it ran, with no relaunch at the onset",
                    values={"gpus": ran_on, "gpus_busy": len(gpus)},
                )
            )
        quiet, why, more_src = _quiet(ctx, onset, start, end)
        sources += [s for s in more_src if s not in sources]
        data["network_and_clocks"] = why
        if quiet:
            signals.append(
                Signal(
                    name="activity_drop_network_quiet",
                    component="job",
                    kind="job",
                    detail=f"with the fleet-wide drop from {when}, {why}: nothing made the fabric or the GPUs slower, "
                    "the job gave them less to do",
                    values={"onset_unix": round(onset, 1)},
                )
            )
        return ToolResult(
            status="ok",
            summary=drop.detail + f"; {why}",
            source=sources,
            signals=signals,
            covered=["job"],
            data=data,
        )


def _quiet(
    ctx: ToolContext, onset: float, start: float | None, end: float | None
) -> tuple[bool, str, list[str]]:
    """(the network and the GPUs did not slow at the onset, in words, sources read)."""
    lo = start if start is not None else onset - 3600.0
    hi = end if end is not None else onset + 3600.0
    wait, src = _read(ctx, NIC_WAIT)
    if not wait:
        return False, "no NIC wait counters recorded, so the network's part is not known", src
    said: list[str] = []
    for label, names in (("NIC transmit waits", NIC_WAIT), ("NIC errors", NIC_ERRORS)):
        series, more = _read(ctx, names)
        src += [s for s in more if s not in src]
        b, a = _rate_between(series, lo, onset), _rate_between(series, onset, hi)
        if b is None or a is None:
            continue
        if a > WAIT_RISE * b + 1.0 / 60.0:
            return False, f"{label} rose ({b:.3g} -> {a:.3g} per second)", src
        said.append(f"{label} did not rise")
    clk = read_metric(ctx, CLOCK)
    src += [s for s in clk.sources if s not in src]
    cb = [_median_in(s, lo, onset) for s in clk.series]
    ca = [_median_in(s, onset, hi) for s in clk.series]
    pairs = [(b, a) for b, a in zip(cb, ca, strict=True) if b and a is not None]
    if pairs:
        b, a = float(np.median([p[0] for p in pairs])), float(np.median([p[1] for p in pairs]))
        if a < CLOCK_HELD * b:
            return False, f"the SM clock fell ({b:.0f} -> {a:.0f} MHz)", src
        said.append(f"the SM clock held ({b:.0f} -> {a:.0f} MHz)")
    for name in REASONS:
        rs = read_metric(ctx, name)
        if not rs.series:
            continue
        src += [s for s in rs.sources if s not in src]
        share_b = _slowed_share(rs.series, lo, onset)
        share_a = _slowed_share(rs.series, onset, hi)
        if share_a > share_b + REASON_RISE:
            return False, f"a throttle reason came on ({share_b:.0%} -> {share_a:.0%} of GPUs)", src
        said.append("no throttle reason came on")
        break
    return True, ", ".join(said), src


def _median_in(s: Series, a: float, b: float) -> float | None:
    _, v = _window_values(s, a, b)
    return float(np.median(v)) if v.size else None


def _slowed_share(series: list[Series], a: float, b: float) -> float:
    hits = []
    for s in series:
        _, v = _window_values(s, a, b)
        if v.size:
            hits.append(bool(np.mean((v.astype(np.int64) & CLOCK_FAULT_BITS) != 0) > 0.5))
    return float(np.mean(hits)) if hits else 0.0


def _scrape_interval(series: list[Series], start: float | None, end: float | None) -> float:
    steps = []
    for s in series[:32]:
        t, _ = _window_values(s, start, end)
        if t.size >= 2:
            steps.append(float(np.median(np.diff(t))))
    return float(np.median(steps)) if steps else 60.0


def _median_step(hosts: dict[str, tuple[np.ndarray, np.ndarray]]) -> float:
    steps = [float(np.median(np.diff(t))) for t, _ in hosts.values() if t.size >= 2]
    return float(np.median(steps)) if steps else 0.0


#: After a job's last logged step, the GPUs count as still running it when their activity stays at
#: least their busy level and each host's NIC byte rate at least this share of its rate before.
RUNNING_NIC_SHARE = 0.2
#: How far before the last logged step the levels "before" are read.
BEFORE_S = 900.0


def running_after(ctx: ToolContext, last: float) -> str | None:
    """Why the job was still running after ``last`` (its last logged step), or None when the fleet's
    series do not show it: at least ``SHARE`` of the GPUs busy before it stay busy after it, and at
    least ``SHARE`` of the hosts keep moving bytes. Both are needed: a hung collective keeps its
    kernels spinning (the GPUs look busy) while its NICs fall silent."""
    _, end = ctx.source.window
    if end is None or end - last < 2 * MIN_SIDE:
        return None
    got = _activity(ctx)
    if got is None:
        return None
    act_name, busy, act = got
    busy_before = still = 0
    for s in act.series:
        b, a = _median_in(s, last - BEFORE_S, last), _median_in(s, last, end)
        if b is None or a is None or b < busy:
            continue
        busy_before += 1
        still += a >= busy
    nic, _ = _read(ctx, NIC_BYTES)
    before, after = _rates(nic, last - BEFORE_S, last), _rates(nic, last, end)
    hosts = [h for h in before if h in after and before[h][1].size and after[h][1].size]
    moving = sum(
        float(np.median(after[h][1])) >= RUNNING_NIC_SHARE * float(np.median(before[h][1])) > 0 for h in hosts
    )
    if busy_before < 2 or still < SHARE * busy_before or not hosts or moving < SHARE * len(hosts):
        return None
    short = _short(act_name)
    return (
        f"after it, {still} of {busy_before} GPUs stayed busy ({short}) and {moving} of {len(hosts)} hosts kept "
        "moving bytes on their NICs"
    )
