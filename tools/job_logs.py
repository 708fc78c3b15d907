"""The job's own logs (``job/logs/*.log``): NCCL transport and errors, PyTorch watchdog lines.

- Transport: a fleet with RDMA NICs whose NCCL says ``NET/Socket`` (or ``NCCL_IB_DISABLE=1``)
  runs its collectives over TCP: every step pays for it. That is a job setting, not a fault of
  any machine.
- Watchdog: every rank of a stuck collective logs the same SeqNum, so the timeouts themselves
  say only that the job hung. The rank named in "Received a dump signal ... from rank N" timed
  out first; with "last completed work" per rank it points at where the hang started.
- A job that got slower after a resubmit while its NCCL environment changed (fewer HCAs, GPU
  Direct RDMA turned off, IB disabled) points at the new settings: the latest run of each
  (host, GPU) is compared with the first one.
- ``status=12`` completion errors are seen by the reporting rank; the faulty link may be anywhere
  on the path, so they are evidence about that host's rail, not a verdict.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._incident_text import stated_reconfiguration
from forensic.tools._nccl_env import SLOW_PATH_SIGNALS, LauncherEnv, slow_path_findings
from forensic.tools._nccl_hw import HostFacts, host_facts
from forensic.tools._sweep import Sweep, plan
from forensic.tools._trainer_log import TrainerFacts
from forensic.tools.base import Signal, Tool, ToolContext, ToolInput, ToolResult, rank_component, register
from forensic.tools.parsers.nccl import NcclLog, parse_nccl_log
from forensic.tools.parsers.torch_log import parse_torch_log


@dataclass
class _Proc:
    """One NCCL process (host, pid): what it was configured with and what it chose."""

    first_line: tuple[int, int]
    env: dict[str, str] = field(default_factory=dict)
    transport: str | None = None
    ib_devices: int | None = None
    gdr: bool | None = None


#: Settings whose change between runs is worth saying; the rest (timeouts, debug) rarely slows a job.
_PERF_ENV = (
    "NCCL_IB_DISABLE",
    "NCCL_IB_HCA",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_SOCKET_IFNAME",
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_NET",
    "NCCL_IB_GID_INDEX",
    "NCCL_CROSS_NIC",
    "NCCL_COLLNET_ENABLE",
    "NCCL_NVLS_ENABLE",
)


def _processes(files: list[tuple[int, NcclLog]]) -> dict[tuple[str, int, int], _Proc]:
    """(host, cuda dev, pid) -> process facts, in order of first appearance."""
    procs: dict[tuple[str, int, int], _Proc] = {}
    for file_no, log in files:

        def proc(host, dev, pid, line, file_no=file_no):
            key = (host or "?", dev if dev is not None else -1, pid or 0)
            return procs.setdefault(key, _Proc(first_line=(file_no, line)))

        for e in log.env:
            proc(e.host, e.cuda_dev, e.pid, e.line_no).env[e.name] = e.value.strip().rstrip(".")
        for n in log.nets:
            p = proc(n.host, n.cuda_dev, n.pid, n.line_no)
            p.transport = n.transport
            if n.transport == "IB":
                p.ib_devices = len(n.devices)
        for u in log.networks:
            p = proc(u.host, u.cuda_dev, u.pid, u.line_no)
            p.transport = p.transport or ("Socket" if "socket" in u.name.lower() else "IB")
        for ch in log.channels:
            if ch.kind == "NET" and "/IB" in ch.via:
                p = proc(ch.host, ch.cuda_dev, ch.pid, ch.line_no)
                p.gdr = bool(p.gdr) or "GDRDMA" in ch.via
    return procs


def _runs(procs: dict[tuple[str, int, int], _Proc]) -> tuple[list[_Proc], list[_Proc]]:
    """The first and the latest process of every (host, GPU): a resubmit starts new pids."""
    by_slot: dict[tuple[str, int], list[_Proc]] = {}
    for (host, dev, _), p in procs.items():
        by_slot.setdefault((host, dev), []).append(p)
    first, latest = [], []
    for ps in by_slot.values():
        ps.sort(key=lambda p: p.first_line)
        first.append(ps[0])
        latest.append(ps[-1])
    return first, latest


def _nccl_config_signals(
    ctx: ToolContext, first: list[_Proc], latest: list[_Proc], hw: HostFacts
) -> list[Signal]:
    out: list[Signal] = []
    restarted = any(a is not b for a, b in zip(first, latest, strict=True))
    nics_per_host = len(hw.ibdevs)
    used = [p.ib_devices for p in latest if p.ib_devices]
    before = [p.ib_devices for p in first if p.ib_devices]
    if used and (max(used) < nics_per_host or (restarted and before and max(used) < max(before))):
        ref = max(before) if restarted and before and max(before) > max(used) else nics_per_host
        out.append(
            Signal(
                name="nccl_rails_reduced",
                component="job",
                kind="job",
                detail=f"NCCL uses {max(used)} IB device(s) per process where {ref} are available",
                values={"ib_devices": max(used), "available": ref},
            )
        )
    gdr_env = {
        p.env.get("NCCL_NET_GDR_LEVEL", p.env.get("NCCL_IB_GDR_LEVEL", "")).upper() for p in latest
    } | {p.env.get("NCCL_NET_GDR_READ", "") for p in latest}
    lost_gdr = (
        restarted
        and any(p.gdr for p in first)
        and not any(p.gdr for p in latest if p.gdr is not None)
        and any(p.gdr is not None for p in latest)
    )
    if lost_gdr or gdr_env & {"LOC", "0"}:
        out.append(
            Signal(
                name="nccl_gdr_disabled",
                component="job",
                kind="job",
                detail="GPU Direct RDMA is off in the latest run"
                + (" (NCCL_NET_GDR_LEVEL set to LOC)" if "LOC" in gdr_env else "")
                + (": its NET/IB channels lost /GDRDMA" if lost_gdr else ""),
                values={"gdr_level": ",".join(sorted(v for v in gdr_env if v))},
            )
        )
    # P2P (NVLink/PCIe peer copies) turned off forces intra-node traffic through host memory: a
    # slow path by configuration wherever a host runs more than one GPU of the job.
    intra = hw.gpus_per_host is None or hw.gpus_per_host > 1

    for var, what in (
        ("NCCL_P2P_DISABLE", "peer-to-peer (NVLink/PCIe) transfers"),
        ("NCCL_SHM_DISABLE", "shared-memory transport"),
    ):
        # Shared memory is only the fallback where peer copies are impossible: on NVLink it
        # matters when P2P is off too (then the P2P setting is the finding).
        if var == "NCCL_SHM_DISABLE" and hw.nvlink is True:
            continue
        if intra and "1" in {p.env.get(var) for p in latest}:
            out.append(
                Signal(
                    name="nccl_p2p_disabled",
                    component="job",
                    kind="job",
                    detail=f"{var}=1 in the latest run: NCCL {what} turned off, intra-node traffic takes a slower path",
                    values={var: 1},
                )
            )
            break
    if restarted:
        changed = sorted(
            k for k in _PERF_ENV if {p.env.get(k) for p in first} != {p.env.get(k) for p in latest}
        )
        if changed:
            out.append(
                Signal(
                    name="nccl_env_changed",
                    component="job",
                    kind="job",
                    detail="the NCCL environment changed at the resubmit: " + ", ".join(changed),
                    values={"changed": ",".join(changed)},
                )
            )
    return out


#: Lines a trainer must print about waiting for input before it counts (one is noise).
MIN_STALL_LINES = 3


def _trainer_signals(t: TrainerFacts, stated: str | None = None) -> list[Signal]:
    """``stated``: where the incident's own text says the job was relaunched with more work per step."""
    out: list[Signal] = []
    # Counts and kinds cover every line; the examples quoted are the first ones kept.
    if t.stall_lines >= MIN_STALL_LINES:
        kinds = sorted(t.stall_kinds)
        out.append(
            Signal(
                name="input_stall_logged",
                component="job",
                kind="job",
                detail=f"the trainer logged {t.stall_lines} waits for input ({', '.join(kinds)}), e.g. {t.stalls[0][1]!r}",
                values={"lines": t.stall_lines, "kinds": ",".join(kinds)},
            )
        )
    if t.storage_lines >= MIN_STALL_LINES:
        kinds = sorted(t.storage_kinds)
        out.append(
            Signal(
                name="storage_errors_logged",
                component="job",
                kind="job",
                detail=f"{t.storage_lines} storage errors or throttling in the job logs ({', '.join(kinds)}), e.g. {t.storage[0][1]!r}",
                values={"lines": t.storage_lines, "kinds": ",".join(kinds)},
            )
        )
    weak = [*t.stalls, *t.storage]
    if weak and t.stall_lines < MIN_STALL_LINES and t.storage_lines < MIN_STALL_LINES:
        # One "nfs: server X not responding" or one DataLoader timeout is a lead worth testing.
        out.append(
            Signal(
                name="input_stall_hint",
                component="job",
                kind="job",
                detail=f"the job logs mention input or storage trouble {len(weak)} time(s), e.g. {weak[0][1]!r}",
                values={"lines": len(weak), "kinds": ",".join(sorted({k for k, _ in weak}))},
            )
        )
    if (rc := t.reconfiguration(stated)) is not None:
        out.append(
            Signal(
                name="job_reconfigured",
                component="job",
                kind="job",
                detail=f"the job was changed ({rc['changed']}) and its work per GPU per second held "
                f"({rc['basis']}: {rc['work_ratio']:.2f} of before): the longer step is explained",
                values={k: v for k, v in rc.items() if isinstance(v, (str, int, float))},
            )
        )
    return out


class JobLogsInput(ToolInput):
    """The job logs tool reads every log of the job; it takes no arguments."""


@register
class JobLogs(Tool):
    name = "job_logs"
    emits = frozenset(
        {
            "collective_timeout",
            "dump_signal_rank",
            "input_stall_hint",
            "input_stall_logged",
            "job_reconfigured",
            "lagging_rank",
            "nccl_async_event",
            "nccl_completion_error",
            "nccl_env_changed",
            "nccl_gdr_disabled",
            "nccl_fast_path",
            "nccl_ib_disabled",
            "nccl_p2p_disabled",
            "nccl_rails_reduced",
            "nccl_socket_transport",
            "storage_errors_logged",
        }
    )
    description = (
        "The job's NCCL and PyTorch logs: the transport NCCL chose (NET/IB vs NET/Socket, IB disabled by "
        "environment), completion errors and async events per host, watchdog timeouts, the stuck SeqNum and "
        "the rank whose timeout started the dump. No arguments."
    )
    Input = JobLogsInput
    cost = 1.0

    def run(self, ctx: ToolContext, args: JobLogsInput) -> ToolResult:
        files = ctx.source.log_names()
        if not files:
            return ToolResult(status="no_data", summary="no job logs recorded")
        files, sweep = _select_logs(ctx, files)
        signals: list[Signal] = []
        sources: list[str] = []
        transports: Counter = Counter()
        env: dict[str, set[str]] = {}
        timeouts = 0
        stuck: dict[int, set[int]] = {}
        dump_sources: set[int] = set()
        last_done: dict[int, int] = {}
        errors: list[str] = []
        completion: Counter = Counter()
        capped: list[str] = []
        parsed = []
        trainer = TrainerFacts()
        launcher = LauncherEnv()
        for file_no, name in enumerate(files):
            try:
                doc = ctx.source.log(name)
                # Streamed, one line at a time: memory stays bounded whatever the log's size.
                nccl = parse_nccl_log(doc.lines())
                torch = parse_torch_log(doc.lines())
            except NotFoundError:  # not recorded: absence, not something unread
                continue
            except ForensicError as exc:
                errors.append(f"job/logs/{name}: {exc}")
                continue
            sources.append(doc.source)
            if dropped := nccl.dropped_records() + torch.dropped_records():  # a capped log says so
                capped.append(
                    f"{doc.source}: {dropped} records past the per-log cap not kept "
                    "(timeout counts, completion errors per host and per-rank facts cover every line)"
                )
            trainer.add_lines(doc.lines())
            launcher.add_lines(doc.lines())
            parsed.append((file_no, nccl))
            for sel in nccl.nets:
                transports[sel.transport] += 1
            for use in nccl.networks:
                transports[
                    "Socket"
                    if "socket" in use.name.lower()
                    else "IB"
                    if "ib" in use.name.lower()
                    else use.name
                ] += 1
            for ch in nccl.channels:
                if ch.kind == "NET":
                    transports["Socket" if "Socket" in ch.via else "IB"] += 1
            for k, vals in nccl.env_values().items():
                env.setdefault(k, set()).update(vals)
            completion.update(nccl.completion_places())  # every error, also past the parser's record cap
            for ae in nccl.async_events:
                if ae.host and ae.device:
                    dev = ae.device.split(":")[0]
                    signals.append(
                        Signal(
                            name="nccl_async_event",
                            component=f"{ae.host}/{dev}",
                            kind="nic",
                            detail=f"{ae.host}/{dev} NCCL async event: {ae.event}",
                            values={"line": ae.line_no},
                        )
                    )
            timeouts += torch.timeout_count  # every timeout, also past the parser's record cap
            for seq, ranks in torch.stuck_seqnums().items():
                stuck.setdefault(seq, set()).update(ranks)
            dump_sources |= torch.dump_signal_sources()
            for r, n in torch.last_completed_by_rank().items():
                last_done[r] = max(last_done.get(r, n), n)
        if not sources:
            return ToolResult(
                status="error",
                summary=f"job logs unreadable: {errors[0]}",
                data={"errors": errors},
                unread=errors,
            )
        if trainer.not_kept:
            capped.append(
                f"trainer lines: {trainer.not_kept} rates, step times or example lines past the cap not kept "
                "(stall and storage counts cover every line; early and late values are kept)"
            )
        # What the hosts could do (RDMA NICs, NVLink), from topology or the hosts' own files.
        hw = host_facts(ctx, nvls_channels=launcher.nvls_channels)
        has_rdma = bool(hw.ibdevs)
        first, latest = _runs(_processes(parsed))
        latest_socket = sum(1 for p in latest if p.transport == "Socket")
        socket, ib = transports.get("Socket", 0), transports.get("IB", 0)
        if has_rdma and (
            latest_socket
            and latest_socket >= sum(1 for p in latest if p.transport == "IB")
            or (socket and socket >= ib)
        ):
            signals.append(
                Signal(
                    name="nccl_socket_transport",
                    component="job",
                    kind="job",
                    detail=f"NCCL runs collectives over NET/Socket ({socket} log lines) on a fleet with RDMA NICs",
                    values={"socket_lines": socket, "ib_lines": ib},
                )
            )
        signals.extend(_nccl_config_signals(ctx, first, latest, hw))
        if "1" in {p.env.get("NCCL_IB_DISABLE") for p in latest} or (
            "1" in env.get("NCCL_IB_DISABLE", set()) and not latest
        ):
            signals.append(
                Signal(
                    name="nccl_ib_disabled",
                    component="job",
                    kind="job",
                    detail="NCCL_IB_DISABLE set by environment to 1",
                    values={"NCCL_IB_DISABLE": 1},
                )
            )
        # The same settings as launchers and trainers print them (export lines, env dumps,
        # "GPU Direct RDMA Disabled"): a slow path by configuration, onset or not.
        have = {s.name for s in signals}
        for name, detail, values in slow_path_findings(
            launcher, ibdevs=hw.ibdevs, netdevs=hw.netdevs, nvlink=hw.nvlink, gpus_per_host=hw.gpus_per_host
        ):
            if name not in have:
                have.add(name)
                signals.append(Signal(name=name, component="job", kind="job", detail=detail, values=values))
        if has_rdma and ib and not socket and not SLOW_PATH_SIGNALS & {s.name for s in signals}:
            # NCCL said which transport it chose, and it is the RDMA fabric with nothing forcing a
            # slower path: evidence against a configuration fault, not merely no evidence for one.
            signals.append(
                Signal(
                    name="nccl_fast_path",
                    component="job",
                    kind="job",
                    detail=f"NCCL runs on the RDMA fabric ({ib} NET/IB line(s), none over sockets) and no setting "
                    "in the logs forces a slower path",
                    values={"ib_lines": ib},
                )
            )
        if timeouts:
            worst_seq, ranks = max(stuck.items(), key=lambda kv: len(kv[1])) if stuck else (None, set())
            signals.append(
                Signal(
                    name="collective_timeout",
                    component="job",
                    kind="job",
                    detail=f"{timeouts} watchdog timeouts; {len(ranks)} ranks stuck on SeqNum {worst_seq}",
                    values={"timeouts": timeouts, "seq": worst_seq, "ranks": len(ranks)},
                )
            )
        for r in sorted(dump_sources):
            if comp := rank_component(ctx, r):
                signals.append(
                    Signal(
                        name="dump_signal_rank",
                        component=comp,
                        kind="gpu",
                        detail=f"rank {r} ({comp}) timed out first: the other ranks received its dump signal",
                        values={"rank": r},
                    )
                )
        # The rank that stopped first completed the fewest collectives: every other rank is one
        # ahead, waiting in the collective it never joined.
        if len(last_done) >= 2:
            low = min(last_done.values())
            laggards = [r for r, n in last_done.items() if n == low]
            if len(laggards) <= max(1, len(last_done) // 10) and max(last_done.values()) > low:
                for r in laggards:
                    if comp := rank_component(ctx, r):
                        signals.append(
                            Signal(
                                name="lagging_rank",
                                component=comp,
                                kind="gpu",
                                detail=f"rank {r} ({comp}) last completed work {low}; the other ranks reached "
                                f"{max(last_done.values())}",
                                values={"rank": r, "last_completed": low, "others": max(last_done.values())},
                            )
                        )
        for where, n in completion.items():
            kind = "nic" if "/" in where else "host"
            signals.append(
                Signal(
                    name="nccl_completion_error",
                    component=where,
                    kind=kind,
                    detail=f"{where} reported {n} NCCL completion errors",
                    values={"count": n},
                )
            )
        inc = ctx.source.incident
        signals.extend(_trainer_signals(trainer, stated_reconfiguration(f"{inc.title}. {inc.reported}")))
        summary = (
            f"{len(sources)} job logs read"
            + (f" of {len(sources) + sweep.not_read_logs}" if sweep else "")
            + f"; transport lines: IB {ib}, Socket {socket}"
            + (f"; {timeouts} watchdog timeouts" if timeouts else "")
            + (
                f"; first to time out: rank {', '.join(map(str, sorted(dump_sources)))}"
                if dump_sources
                else ""
            )
            # In words for the person reading the summary; the signals travel as data.
            + (
                f"; found: {', '.join(sorted({s.name.replace('_', ' ') for s in signals}))}"
                if signals
                else ""
            )
            + (sweep.plan.phrase() if sweep else "")
        )
        if capped:
            summary += f"; capped (not every record kept): {capped[0]}" + (
                f" and {len(capped) - 1} more" if len(capped) > 1 else ""
            )
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            source=sources,
            covered=["job"],
            data={
                "transports": dict(transports),
                "env": {k: sorted(v) for k, v in env.items()},
                "errors": errors,
                **({"capped": capped} if capped else {}),
                **({"sweep": {**sweep.plan.data(), "logs_not_read": sweep.not_read_logs}} if sweep else {}),
            },
            unread=errors,
        )


@dataclass
class _LogSweep:
    plan: Sweep
    not_read_logs: int


def _select_logs(ctx: ToolContext, files: list[str]) -> tuple[list[str], _LogSweep | None]:
    """The logs to read: every one on a small fleet; on a large one the logs of the sweep's hosts
    (suspects and sampled peers, :mod:`forensic.tools._sweep`), the host of rank 0 (where trainers
    print), and every log that names no host. Job-wide facts (transport, NCCL settings, watchdog
    timeouts) are in every rank's log, so the sample sees them; a host's own completion errors
    need its link counters to have moved, which makes it a suspect."""
    sweep = plan(ctx, ("nic",))
    if sweep.whole:
        return files, None
    hosts = set(ctx.source.host_names())
    keep = set(sweep.hosts)
    if (first := ctx.source.rank_map().get(0)) is not None:
        keep.add(first[0])
    chosen = [f for f in files if (host := _log_host(f, hosts)) is None or host in keep]
    return chosen, _LogSweep(plan=sweep, not_read_logs=len(files) - len(chosen))


def _log_host(name: str, hosts: set[str]) -> str | None:
    """The host a log is named after (``<host>.log``, ``<host>-rank3.log``), or None."""
    stem = name[:-4] if name.endswith(".log") else name
    if stem in hosts:
        return stem
    for sep in ("-rank", "_rank", ".rank", "."):
        head = stem.split(sep, 1)[0]
        if head in hosts:
            return head
    return None
