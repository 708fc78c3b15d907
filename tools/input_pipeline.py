"""The input pipeline as the hosts see it: storage stalls in the kernel log, I/O pressure, iowait.

Time outside compute is not always communication. When every rank waits alike and the network is
quiet, the GPUs are starved of input; the hosts say why in their own words:

- kernel log lines of network and parallel file systems (NFS ``server X not responding``, Lustre
  ``LustreError`` / ``ptlrpc`` / ``Connection to ... was lost``, GPFS ``mmfs``, WekaFS) and tasks
  blocked in uninterruptible sleep (``INFO: task ... blocked for more than N seconds``) within the
  incident window (history is not a symptom);
- ``/proc/pressure/io`` (``some``/``full`` avg10/avg60) and ``top``'s ``wa`` share.

A storage stall is a job-wide cause (the job's input), so the signals name ``job``; the hosts that
saw it are in the values. One kernel line is a lead (``storage_stall_kernel`` with its count);
the playbook weighs it so that it raises the hypothesis and makes the planner test it, while
confirmation still needs the step physics (gaps between steps) or the trainer's own words.
"""

from __future__ import annotations

import re

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._sweep import hosts_for
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, count, register
from forensic.tools.kernel_log import kernel_text, log_read_at, log_year, placed
from forensic.tools.metrics import in_window, read_metric
from forensic.tools.parsers.hostload import parse_pressure, parse_top
from forensic.tools.parsers.kernel_log import kernel_lines
from forensic.tools.parsers.openmetrics import counter_increase

#: (label, pattern): kernel lines that say a file system the job reads from stalled. Bounded repeats.
KERNEL_STORAGE = [
    (
        "nfs",
        re.compile(
            r"\bnfs: server \S{1,253} not responding|\bnfs: server \S{1,253} OK\b|"
            r"\bNFS: .{0,80}(?:timed out|server .{0,80}not responding)|\bRPC: .{0,40}timed out",
            re.I,
        ),
    ),
    (
        "lustre",
        re.compile(
            r"\bLustreError\b|\bLustre: .{0,200}(?:Connection to \S{1,200} .{0,60}was lost|"
            r"timed out|evict|Request sent has (?:timed out|failed))|\bptlrpc_\w{1,40}",
            re.I,
        ),
    ),
    (
        "gpfs",
        re.compile(
            r"\bmmfs\w{0,10}\b.{0,120}(?:expel|timeout|timed out|lease|stuck|waiting)|\bGPFS\b.{0,120}(?:timeout|expel|unmount)",
            re.I,
        ),
    ),
    ("weka", re.compile(r"\bweka\w{0,10}\b.{0,120}(?:timeout|timed out|disconnect|unreachable|stuck)", re.I)),
    ("cifs", re.compile(r"\bCIFS: VFS: .{0,120}(?:not responding|timed out|has not responded)", re.I)),
    (
        "fuse",
        re.compile(
            r"\b(?:gcsfuse|s3fs|mountpoint-s3|goofys|blobfuse\d?)\b.{0,120}(?:timeout|timed out|retry|error|503|429)",
            re.I,
        ),
    ),
]
#: Tasks stuck in D state: storage when the task or the stack says so, a weaker lead otherwise.
BLOCKED_TASK = re.compile(r"INFO: task (\S{1,64}):\d{1,10} blocked for more than (\d{1,6}) seconds")
#: A blocked task whose name says it reads input (python data-loader workers, file system threads).
_INPUT_TASK = re.compile(
    r"pt_data_worker|dataloader|data_worker|python\d{0,4}|nfs|lustre|ll_|ptlrpc|mmfs|weka|"
    r"fuse|gcsfuse|s3fs|kworker/.{0,20}(?:nfs|rpc)",
    re.I,
)

#: Labels of blocked-task lines: they name no file system.
_BLOCKED = ("blocked_input_task", "blocked_task")

#: I/O pressure (share of time some task waited for I/O, %) that starves a training host.
IO_PRESSURE_PCT = 20.0
#: iowait share in top (%) that does the same.
IOWAIT_PCT = 20.0
#: Share of the hosts read that must show I/O pressure for it to be job-wide (input is shared).
IO_SHARE = 0.5
#: node_exporter's PSI counters (seconds waited per second = the share of time, 0..1).
IO_PRESSURE_SERIES = ("node_pressure_io_waiting_seconds_total", "node_pressure_io_stalled_seconds_total")


def storage_lines(
    text: str,
    *,
    boot: float | None,
    year: int | None,
    window: tuple[float | None, float | None],
    now: float | None = None,
) -> tuple[list[tuple[str, str]], int]:
    """Storage-stall lines in the window as (label, line), and how many older ones were history."""
    found: list[tuple[str, str]] = []
    history = 0
    not_after = log_read_at(window, {"now": now} if now is not None else {})
    for _, t, body in kernel_lines(text, boot_unix=boot, year=year, not_after=not_after):
        label = None
        for name, pat in KERNEL_STORAGE:
            if pat.search(body):
                label = name
                break
        if label is None and (m := BLOCKED_TASK.search(body)):
            label = "blocked_input_task" if _INPUT_TASK.search(m.group(1)) else "blocked_task"
        if label is None:
            continue
        if placed(window, t) == "history":  # the same rule as kernel_log's
            history += 1
            continue
        found.append((label, body.strip()[:300]))
    return found, history


@register
class InputPipeline(Tool):
    name = "input_pipeline"
    emits = frozenset({"storage_stall_kernel", "io_pressure_high"})
    description = (
        "Input-pipeline evidence on the hosts: network/parallel file system stalls in the kernel log (NFS not "
        "responding, Lustre/ptlrpc errors, GPFS, WekaFS), tasks blocked in D state, /proc/pressure/io and top's "
        "iowait. Job-wide signals (the input is shared). Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        year = log_year(ctx.source.window)
        lines: list[tuple[str, str, str]] = []  # (host, label, line)
        history = 0
        io: dict[str, float] = {}
        read: list[str] = []
        sources: list[str] = []
        errors: list[str] = []
        partial: list[str] = []
        # The input is shared, so a stall shows on many hosts: a large fleet's sweep reads the
        # suspects plus a fixed sample of peers (forensic.tools._sweep), never every host.
        hosts, sweep = hosts_for(ctx, args.host, ())
        for host in hosts:
            try:
                node = ctx.source.host(host)
                if (kernel := kernel_text(ctx, host)) is not None:  # the same read kernel_log uses
                    found, old = storage_lines(
                        kernel[0],
                        boot=ctx.source.collected(host).get("boot"),
                        year=year,
                        now=ctx.source.collected(host).get("now"),
                        window=ctx.source.window,
                    )
                    lines.extend((host, label, text) for label, text in found)
                    history += old
                    sources.append(kernel.source)
                    read.append(host)
                    if kernel.lost:
                        partial.append(f"{host}: {kernel.source}: partly read: {kernel.lost}")
                pressure = wa = None
                if node.has_command(["cat", "/proc/pressure/io"]):
                    pr = parse_pressure(node.run(["cat", "/proc/pressure/io"]))
                    if pr.some is not None:
                        pressure = (
                            max(v for v in (pr.some.avg10, pr.some.avg60) if v is not None)
                            if (pr.some.avg10 is not None or pr.some.avg60 is not None)
                            else None
                        )
                    sources.append(node.command_source(["cat", "/proc/pressure/io"]))
                if node.has_command(["top", "-b", "-n", "1"]):
                    top = parse_top(node.run(["top", "-b", "-n", "1"]))
                    wa = top.cpu.wa if top.cpu is not None else None
                    sources.append(node.command_source(["top", "-b", "-n", "1"]))
                if pressure is not None or wa is not None:
                    io[host] = max(pressure or 0.0, wa or 0.0)
                    read.append(host)
            except NotFoundError:  # not recorded: absence, not something unread
                pass
            except ForensicError as exc:
                errors.append(f"{host}: {exc}")
        in_scope = set(hosts)
        for host, pct, src in _io_pressure_series(ctx):
            if host in in_scope or args.host is None:
                io[host] = max(io.get(host, 0.0), pct)
                read.append(host)
                if src not in sources:
                    sources.append(src)
        read = sorted(set(read))
        if not read:
            return ToolResult(
                status="error" if errors else "no_data",
                summary="no kernel log, I/O pressure or top recorded" + (f": {errors[0]}" if errors else ""),
                data={"errors": errors},
                unread=errors,
            )
        signals: list[Signal] = []
        # A file system's own words name the shared input. A task blocked in D state names nothing:
        # it is the shared input only when many hosts' tasks block; on a minority of the hosts read
        # it is that host's trouble (its memory thrashing, its local disk), not the job's input.
        blocked_hosts = {h for h, label, _ in lines if label in _BLOCKED}
        local = sorted(blocked_hosts) if len(blocked_hosts) < max(1.0, IO_SHARE * len(set(read))) else []
        shared = [x for x in lines if x[0] not in local or x[1] not in _BLOCKED]
        strong = [x for x in shared if x[1] != "blocked_task"]
        if strong or len(shared) >= 3:
            use = strong or shared
            kinds = sorted({label for _, label, _ in use})
            hosts = sorted({h for h, _, _ in use})
            signals.append(
                Signal(
                    name="storage_stall_kernel",
                    component="job",
                    kind="job",
                    detail=f"{len(use)} storage-stall line(s) in the window on {count(len(hosts), 'host')} ({', '.join(kinds)}), "
                    f"e.g. {hosts[0]}: {use[0][2]!r}",
                    values={
                        "lines": len(use),
                        "hosts": len(hosts),
                        "kinds": ",".join(kinds),
                        "first_host": hosts[0],
                    },
                )
            )
        high = sorted(h for h, v in io.items() if v >= max(IO_PRESSURE_PCT, IOWAIT_PCT))
        if io and len(high) >= max(1, IO_SHARE * len(io)):
            worst = max(io.values())
            signals.append(
                Signal(
                    name="io_pressure_high",
                    component="job",
                    kind="job",
                    detail=f"{len(high)} of {len(io)} hosts wait on I/O (pressure or iowait up to {worst:g}%): the input is slow",
                    values={"hosts_high": len(high), "hosts_read": len(io), "max_pct": worst},
                )
            )
        summary = (
            f"{count(len(read), 'host')} read for input-pipeline evidence; "
            + (", ".join(s.detail for s in signals) if signals else "no storage stall, no I/O pressure")
            + (f"; {history} older storage lines are history" if history else "")
            + (sweep.phrase() if sweep is not None else "")
        )
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            source=sources,
            covered=["job", *read],
            data={
                "io_pct": io,
                "lines": [list(x) for x in lines[:20]],
                "history": history,
                "errors": errors,
                "blocked_on_few_hosts": local,
                **({"sweep": sweep.data()} if sweep is not None and not sweep.whole else {}),
            },
            unread=errors,
            partial=partial,
        )


def _io_pressure_series(ctx: ToolContext) -> list[tuple[str, float, str]]:
    """(host, % of time waiting on I/O over the last third of the window, source) from PSI series."""
    start, end = ctx.source.window
    out: list[tuple[str, float, str]] = []
    for name in IO_PRESSURE_SERIES:
        got = read_metric(ctx, name)
        for s in got.series:
            host = (
                s.labels.get("hostname")
                or s.labels.get("Hostname")
                or (s.labels.get("instance") or "").split(":")[0]
            )
            mask = in_window(s.timestamps, start, end)
            t, v = s.timestamps[mask], s.values[mask]
            if not host or t.size < 3:
                continue
            tail = slice(
                int(t.size * 2 / 3) - 1, None
            )  # a stall starts inside the window: judge its late part
            tt, vv = t[tail], v[tail]
            if tt.size >= 2 and tt[-1] > tt[0]:
                out.append(
                    (
                        host,
                        min(100.0, 100.0 * counter_increase(vv) / (tt[-1] - tt[0])),
                        got.sources[0] if got.sources else name,
                    )
                )
        if out:
            break
    return out
