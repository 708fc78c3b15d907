"""The job's own logs (``job/logs/*.log``): NCCL transport and errors, PyTorch watchdog lines.

- Transport: a fleet with RDMA NICs whose NCCL says ``NET/Socket`` (or ``NCCL_IB_DISABLE=1``)
  runs its collectives over TCP: every step pays for it. That is a job setting, not a fault of
  any machine.
- Watchdog: every rank of a stuck collective logs the same SeqNum, so the timeouts themselves
  say only that the job hung. The rank named in "Received a dump signal ... from rank N" timed
  out first; with "last completed work" per rank it points at where the hang started.
- ``status=12`` completion errors are seen by the reporting rank; the faulty link may be anywhere
  on the path, so they are evidence about that host's rail, not a verdict.
"""

from __future__ import annotations

from collections import Counter

from sandbox import ForensicError
from tools.base import Signal, Tool, ToolContext, ToolInput, ToolResult, rank_component, register
from tools.parsers.nccl import parse_nccl_log
from tools.parsers.torch_log import parse_torch_log


class JobLogsInput(ToolInput):
    """The job logs tool reads every log of the job; it takes no arguments."""


@register
class JobLogs(Tool):
    name = "job_logs"
    description = (
        "The job's NCCL and PyTorch logs: the transport NCCL chose (NET/IB vs NET/Socket, IB disabled by "
        "environment), completion errors and async events per host, watchdog timeouts, the stuck SeqNum and "
        "the rank whose timeout started the dump. No arguments."
    )
    Input = JobLogsInput
    cost = 1.0

    def run(self, ctx: ToolContext, args: JobLogsInput) -> ToolResult:
        files = ctx.bundle.files("job/logs", (".log",))
        if not files:
            return ToolResult(status="no_data", summary="no job logs recorded")
        signals: list[Signal] = []
        sources: list[str] = []
        transports: Counter = Counter()
        env: dict[str, set[str]] = {}
        timeouts = 0
        stuck: dict[int, set[int]] = {}
        dump_sources: set[int] = set()
        errors: list[str] = []
        completion: Counter = Counter()
        for rel in files:
            try:
                text = ctx.bundle.fs.read_text(rel)
            except ForensicError as exc:
                errors.append(f"{rel}: {exc}")
                continue
            sources.append(ctx.bundle.fs.source_of(rel))
            nccl = parse_nccl_log(text)
            for sel in nccl.nets:
                transports[sel.transport] += 1
            for use in nccl.networks:
                transports["Socket" if "socket" in use.name.lower() else "IB" if "ib" in use.name.lower() else use.name] += 1
            for ch in nccl.channels:
                if ch.kind == "NET":
                    transports["Socket" if "Socket" in ch.via else "IB"] += 1
            for k, vals in nccl.env_values().items():
                env.setdefault(k, set()).update(vals)
            for ce in nccl.completion_errors:
                where = f"{ce.host}/{ce.hca}" if ce.host and ce.hca else ce.host
                if where:
                    completion[where] += 1
            for ae in nccl.async_events:
                if ae.host and ae.device:
                    dev = ae.device.split(":")[0]
                    signals.append(Signal(name="nccl_async_event", component=f"{ae.host}/{dev}", kind="nic",
                                          detail=f"{ae.host}/{dev} NCCL async event: {ae.event}", values={"line": ae.line_no}))
            torch = parse_torch_log(text)
            timeouts += len(torch.timeouts)
            for seq, ranks in torch.stuck_seqnums().items():
                stuck.setdefault(seq, set()).update(ranks)
            dump_sources |= torch.dump_signal_sources()
        if not sources:
            return ToolResult(status="error", summary=f"job logs unreadable: {errors[0]}", data={"errors": errors})
        has_rdma = bool(ctx.bundle.topology and any(h.nics for h in ctx.bundle.topology.hosts))
        socket, ib = transports.get("Socket", 0), transports.get("IB", 0)
        if socket and socket >= ib and has_rdma:
            signals.append(Signal(name="nccl_socket_transport", component="job", kind="job",
                                  detail=f"NCCL runs collectives over NET/Socket ({socket} log lines) on a fleet with RDMA NICs",
                                  values={"socket_lines": socket, "ib_lines": ib}))
        if "1" in env.get("NCCL_IB_DISABLE", set()):
            signals.append(Signal(name="nccl_ib_disabled", component="job", kind="job",
                                  detail="NCCL_IB_DISABLE set by environment to 1", values={"NCCL_IB_DISABLE": 1}))
        if timeouts:
            seq, ranks = max(stuck.items(), key=lambda kv: len(kv[1])) if stuck else (None, set())
            signals.append(Signal(name="collective_timeout", component="job", kind="job",
                                  detail=f"{timeouts} watchdog timeouts; {len(ranks)} ranks stuck on SeqNum {seq}",
                                  values={"timeouts": timeouts, "seq": seq, "ranks": len(ranks)}))
        for r in sorted(dump_sources):
            if comp := rank_component(ctx, r):
                signals.append(Signal(name="dump_signal_rank", component=comp, kind="gpu",
                                      detail=f"rank {r} ({comp}) timed out first: the other ranks received its dump signal",
                                      values={"rank": r}))
        for where, n in completion.items():
            kind = "nic" if "/" in where else "host"
            signals.append(Signal(name="nccl_completion_error", component=where, kind=kind,
                                  detail=f"{where} reported {n} NCCL completion errors", values={"count": n}))
        summary = (f"{len(sources)} job logs read; transport lines: IB {ib}, Socket {socket}"
                   + (f"; {timeouts} watchdog timeouts" if timeouts else "")
                   + (f"; first to time out: rank {', '.join(map(str, sorted(dump_sources)))}" if dump_sources else "")
                   + (f"; findings: {', '.join(sorted({s.name for s in signals}))}" if signals else ""))
        return ToolResult(status="ok", summary=summary, signals=signals, source=sources, covered=["job"],
                          data={"transports": dict(transports), "env": {k: sorted(v) for k, v in env.items()}, "errors": errors})
