"""Pictures of an investigation (matplotlib, no display needed): what a person looks at next.

- ``rank-heatmap``: ranks x time, each cell the rank's own work per step (``compute_s``, else
  ``duration_s``) relative to that step's median over ranks, with the detectors' onset marked.
- ``timeline``: one host over the window: its ranks' step time against the fleet median, its
  GPUs' SM clocks with throttle reasons shaded, kernel events (XIDs, fallen off the bus) and
  counter jumps (PCIe replays, ECC, remapped rows, NVLink CRC) as marks.

Both read the bundle through the same confined parsers the tools use; nothing here decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from forensic.harness import series as _series
from forensic.sandbox import Bundle, EvidenceSource, ForensicError

Kind = Literal["rank-heatmap", "timeline"]
KINDS: tuple[str, ...] = ("rank-heatmap", "timeline")

#: Figure size in inches and resolution: 10 x 5.6 in at 100 dpi is a 1000 x 560 PNG.
FIGSIZE = (10.0, 5.6)
DPI = 100
#: Counters whose increase inside the window is marked on the timeline.
JUMP_COUNTERS = (
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_XID_ERRORS",
)
THROTTLE_SERIES = ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
#: Throttle-reason bits that mean the clock was held down (idle and application settings are not).
THROTTLE_MASK = 0x2 | 0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x100


class PlotError(ForensicError):
    """Nothing to draw: the bundle lacks what the picture needs."""


def _figure():
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def _dt(t: Any) -> Any:  # a unix time or anything np.asarray makes an array of them from
    return np.asarray(np.asarray(t, dtype=float) * 1e3, dtype="datetime64[ms]")


def rank_heatmap(report: dict[str, Any], bundle: Bundle | EvidenceSource, out: Path) -> Path:
    """Ranks x steps heat map of each rank's time relative to the step's median."""
    table = _series.load_table(bundle)
    if table is None:
        raise PlotError("the bundle has no usable job/steps.csv: no per-rank heat map to draw")
    secs, metric = _series.per_step_seconds(table)
    with np.errstate(all="ignore"):
        med = np.nanmedian(secs, axis=1, keepdims=True)
        rel = secs / med
    plt = _figure()
    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI)
    finite = rel[np.isfinite(rel)]
    hi = float(np.nanpercentile(finite, 99.9)) if finite.size else 1.1
    hi = max(hi, 1.05)
    img = ax.imshow(
        rel.T,
        aspect="auto",
        interpolation="nearest",
        cmap="magma",
        vmin=min(1.0 / hi, 0.95),
        vmax=hi,
        extent=(-0.5, rel.shape[0] - 0.5, table.ranks[-1] + 0.5, table.ranks[0] - 0.5),
    )
    fig.colorbar(img, ax=ax, label=f"{metric} / step median")
    who = _series.suspect(report, bundle)
    if who is not None:
        rank, component, onset = who
        ax.axhline(rank, color="cyan", lw=0.8, ls=":")
        ax.annotate(
            f"rank {rank} ({component})",
            (0, rank),
            xytext=(4, -6),
            textcoords="offset points",
            color="cyan",
            fontsize=8,
        )
        if onset is not None and (idx := np.flatnonzero(table.steps == onset)).size:
            ax.axvline(idx[0], color="cyan", lw=1.2)
            ax.annotate(
                f"onset: step {onset}",
                (idx[0], table.ranks[-1]),
                xytext=(4, 6),
                textcoords="offset points",
                color="cyan",
                fontsize=8,
            )
    ticks = np.linspace(0, rel.shape[0] - 1, min(8, rel.shape[0])).astype(int)
    ax.set_xticks(ticks, [str(table.steps[i]) for i in ticks])
    ax.set_xlabel("step (in time order)")
    ax.set_ylabel("rank")
    ax.set_title(
        f"{report.get('incident', bundle.incident.id)}: per-rank {metric} relative to the step median"
    )
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out


def _host_of_report(report: dict[str, Any], bundle: Bundle | EvidenceSource) -> str:
    comp = ((report.get("verdict") or {}).get("component")) or ""
    hosts = bundle.host_names()
    host = comp.split("/", 1)[0]
    if host in hosts:
        return host
    who = _series.suspect(report, bundle)
    if who is not None and who[1].split("/", 1)[0] in hosts:
        return who[1].split("/", 1)[0]
    if not hosts:
        raise PlotError("the bundle names no host: no timeline to draw")
    return hosts[0]


def _same_host(label: str | None, host: str) -> bool:
    return (
        bool(label)
        and label is not None
        and (label == host or host.startswith(label + ".") or label.startswith(host + "."))
    )


def timeline(
    report: dict[str, Any], bundle: Bundle | EvidenceSource, out: Path, host: str | None = None
) -> Path:
    """One host: step time against the fleet, clocks and throttle reasons, kernel events, counter jumps."""
    from forensic.tools import ToolContext
    from forensic.tools.kernel_log import read_kernel_log
    from forensic.tools.metrics import read_metrics
    from forensic.tools.parsers.openmetrics import series_host

    host = host or _host_of_report(report, bundle)
    if host not in bundle.host_names():
        raise PlotError(f"no host {host!r} in the bundle (hosts: {', '.join(bundle.host_names()[:5])}, ...)")
    ctx = ToolContext(bundle)
    plt = _figure()
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=FIGSIZE, dpi=DPI, sharex=True, height_ratios=(3, 2, 1))
    drawn = False

    table = _series.load_table(bundle)
    if table is not None:
        secs, metric = _series.per_step_seconds(table)
        placement = bundle.rank_map()
        mine = [r for r, (h, _) in placement.items() if h == host]
        with np.errstate(all="ignore"):
            ax1.plot(
                _dt(table.start), np.nanmedian(secs, axis=1), color="black", lw=1.5, label="fleet median"
            )
        for r in mine:
            cols = np.flatnonzero(table.ranks == r)
            if cols.size:
                ax1.plot(_dt(table.start), secs[:, cols[0]], lw=0.8, label=f"rank {r} (gpu{placement[r][1]})")
                drawn = True
        ax1.set_ylabel(f"{metric}, s")
        ax1.legend(fontsize=6, ncol=5, loc="upper left")

    wanted = ("DCGM_FI_DEV_SM_CLOCK", *THROTTLE_SERIES, *JUMP_COUNTERS)
    for s in read_metrics(ctx, wanted).series:
        if not _same_host(series_host(s.labels), host) or not s.timestamps.size:
            continue
        gpu = s.labels.get("gpu", "?")
        if s.name == "DCGM_FI_DEV_SM_CLOCK":
            ax2.plot(_dt(s.timestamps), s.values, lw=0.8, label=f"gpu{gpu}")
            drawn = True
        elif s.name in THROTTLE_SERIES:
            held = (np.nan_to_num(s.values).astype(np.int64) & THROTTLE_MASK) != 0
            step = float(np.median(np.diff(s.timestamps))) if s.timestamps.size > 1 else 60.0
            for t in s.timestamps[held]:  # a set bit holds until the next scrape
                ax2.axvspan(_dt(t), _dt(t + step), color="orange", alpha=0.25, lw=0)
            drawn = drawn or bool(held.any())
        elif s.name in JUMP_COUNTERS and s.values.size > 1:
            jumps = np.flatnonzero(np.diff(s.values) > 0) + 1
            if jumps.size:
                ax3.scatter(
                    _dt(s.timestamps[jumps]),
                    [1.0] * jumps.size,
                    marker="^",
                    s=24,
                    label=f"{s.name.removeprefix('DCGM_FI_DEV_').lower()} gpu{gpu}",
                )
                drawn = True
    ax2.set_ylabel("SM clock, MHz")
    if ax2.lines:
        ax2.legend(
            fontsize=6, ncol=8, loc="lower left", title="orange: throttle reasons set", title_fontsize=6
        )

    try:
        got = read_kernel_log(ctx, host)
    except ForensicError:
        got = None
    if got is not None:
        events = [
            e for e in got[0].events if e.time_unix is not None and e.kind in ("xid", "fell_off_bus", "sxid")
        ]
        for e in events:
            for ax in (ax1, ax2, ax3):
                ax.axvline(_dt(e.time_unix), color="red", lw=0.8, alpha=0.7)
        if events:
            ax3.scatter(
                _dt([e.time_unix for e in events]),
                [0.0] * len(events),
                marker="x",
                color="red",
                label="kernel: "
                + ", ".join(sorted({f"xid {e.xid}" if e.kind == "xid" else e.kind for e in events}))[:60],
            )
            drawn = True
    ax3.set_yticks([0.0, 1.0], ["kernel", "counters"])
    ax3.set_ylim(-0.6, 1.6)
    if ax3.collections:
        ax3.legend(fontsize=6, ncol=3, loc="upper left")
    if not drawn:
        plt.close(fig)
        raise PlotError(
            f"nothing recorded over time for {host}: no step table, metrics or timed kernel events"
        )
    start, end = bundle.window
    if start is not None and end is not None:
        ax3.set_xlim(_dt(start), _dt(end))
    ax3.set_xlabel("time (UTC)")
    fig.suptitle(f"{report.get('incident', bundle.incident.id)}: {host}")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out


def plot(
    kind: str, report: dict[str, Any], bundle: Bundle | EvidenceSource, out: Path, host: str | None = None
) -> Path:
    """Draw ``kind`` for a report of ``bundle`` into the PNG ``out``."""
    if kind == "rank-heatmap":
        return rank_heatmap(report, bundle, out)
    if kind == "timeline":
        return timeline(report, bundle, out, host=host)
    raise PlotError(f"unknown picture {kind!r}: choose one of {', '.join(KINDS)}")


__all__ = ["KINDS", "PlotError", "plot", "rank_heatmap", "timeline"]
