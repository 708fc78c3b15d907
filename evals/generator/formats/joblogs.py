"""Job logs: NCCL INFO init lines, trainer progress lines, PyTorch ProcessGroupNCCL watchdog output."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from ..fleet import GPUS_PER_NODE
from ..sim import Scenario
from ._time import utc


def _glog(t: float) -> str:
    d = utc(t)
    ns = int((t % 1) * 1e9)
    return f"{d.month:02d}{d.day:02d} {d.strftime('%H:%M:%S')}.{ns:09d}"


def _py(t: float) -> str:
    d = utc(t)
    return d.strftime("%Y-%m-%d %H:%M:%S") + f",{d.microsecond // 1000:03d}"


def _elastic(t: float) -> str:
    d = utc(t)
    return f"{d.month:02d}{d.day:02d} {d.strftime('%H:%M:%S')}.{d.microsecond:06d}"


class _Log:
    def __init__(self):
        self.items: list[tuple[float, int, str]] = []
        self.n = 0

    def add(self, t: float, line: str) -> None:
        self.items.append((t, self.n, line))
        self.n += 1

    def text(self) -> str:
        return "\n".join(line for _t, _n, line in sorted(self.items)) + "\n"


def _nccl_init(
    log: _Log,
    scn: Scenario,
    host,
    local: int,
    rank: int,
    pid: int,
    t: float,
    rng: np.random.Generator,
    comm_id: str,
) -> None:
    job = scn.job
    fleet = scn.fleet
    g = host.gpus[local]
    pre = f"{host.name}:{pid}:{pid + int(rng.integers(60, 400))} [{local}]"
    oob = scn.opts.get("oob_if", "bond0")
    ip = host.ip
    eth = fleet.link_layer == "Ethernet"
    L = lambda dt, s: log.add(t + dt, f"{pre} NCCL INFO {s}")  # noqa: E731
    if rank == 0:
        log.add(t, f"NCCL version {job.nccl_version}+cuda12.4")
    L(0.001, f"Bootstrap : Using {oob}:{ip}<0>")
    for env in job.nccl_env:
        L(0.002, env)
    L(0.003, "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.")
    if job.nccl_transport == "Socket":
        L(0.004, f"NET/Socket : Using [0]{oob}:{ip}<0>")
        L(0.005, "Using non-device net plugin version 0")
        L(0.005, "Using network Socket")
    else:
        hcas = job.nccl_hca_limit or [n.ibdev for n in host.nics]
        kind = "RoCE" if eth else "IB"
        devs = " ".join(f"[{i}]{h}:1/{kind}" for i, h in enumerate(hcas))
        L(0.004, f"NET/IB : Using {devs} [RO]; OOB {oob}:{ip}<0>")
        L(0.005, "Using non-device net plugin version 0")
        L(0.005, "Using network IB")
        if not job.gdr:
            for i, h in enumerate(hcas):
                L(0.006, f"GPU Direct RDMA Disabled for HCA {i} '{h}'")
    busid = g.pci.nccl
    L(
        0.2,
        f"comm 0x{int(rng.integers(0x5500000000, 0x56FFFFFFFF)):x} rank {rank} nranks {fleet.n_ranks} cudaDev {local} "
        f"nvmlDev {local} busId {busid} commId {comm_id} - Init START",
    )
    L(
        0.3,
        "Setting affinity for GPU %d to %s"
        % (local, "ffffffff,00000000,ffffffff" if local >= 4 else "ffffffff,ffffffff"),
    )
    nxt = (rank + GPUS_PER_NODE) % fleet.n_ranks
    prv = (rank - GPUS_PER_NODE) % fleet.n_ranks
    if job.nccl_transport == "Socket":
        via = "NET/Socket/0"
    else:
        hcas = job.nccl_hca_limit or [n.ibdev for n in host.nics]
        nic_i = local % len(hcas)
        via = f"NET/IB/{nic_i}" + ("/GDRDMA" if job.gdr else "")
    for ch in range(1):
        L(0.5 + ch * 0.01, f"Channel {ch:02d}/0 : {prv}[{local}] -> {rank}[{local}] [receive] via {via}")
        L(0.5 + ch * 0.01, f"Channel {ch:02d}/0 : {rank}[{local}] -> {nxt}[{local}] [send] via {via}")
    L(0.9, "Connected all rings")
    L(1.0, "Connected all trees")
    L(1.05, "threadThresholds 8/8/64 | 512/8/64 | 512 | 512")
    L(1.06, "16 coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer")
    L(
        1.2,
        f"comm 0x{int(rng.integers(0x5500000000, 0x56FFFFFFFF)):x} rank {rank} nranks {fleet.n_ranks} cudaDev {local} "
        f"nvmlDev {local} busId {busid} commId {comm_id} - Init COMPLETE",
    )


def _watchdog(
    log: _Log, style: str, rank: int, seq: int, t: float, timeout_ms: int, ran_ms: int, numel: int
) -> None:
    if style == "1.13":
        work = f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)={timeout_ms})"
        log.add(
            t,
            f"[E ProcessGroupNCCL.cpp:821] [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out.",
        )
        log.add(
            t + 0.01,
            "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        )
        log.add(
            t + 0.011,
            "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.",
        )
        log.add(t + 0.05, "terminate called after throwing an instance of 'std::runtime_error'")
        log.add(
            t + 0.05,
            f"  what():  [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out.",
        )
        return
    work = f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms})"
    p = f"[rank{rank}]:[E{_glog(t)} "
    if style == "2.7":
        pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
        log.add(
            t,
            f"{p}ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out.",
        )
        log.add(
            t + 1e-4,
            f"[rank{rank}]:[E{_glog(t + 1e-4)} ProcessGroupNCCL.cpp:2271] {pg}  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {seq - 1}",
        )
        log.add(
            t + 2e-4,
            f"[rank{rank}]:[E{_glog(t + 2e-4)} ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
        )
        log.add(
            t + 3e-4,
            f"[rank{rank}]:[E{_glog(t + 3e-4)} ProcessGroupNCCL.cpp:684] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        )
        log.add(
            t + 4e-4,
            f"[rank{rank}]:[E{_glog(t + 4e-4)} ProcessGroupNCCL.cpp:698] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
        )
        log.add(
            t + 0.2,
            f"[rank{rank}]:[E{_glog(t + 0.2)} ProcessGroupNCCL.cpp:1895] {pg} Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out.",
        )
        log.add(
            t + 0.2,
            "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",
        )
        log.add(t + 0.21, "terminate called after throwing an instance of 'c10::DistBackendError'")
        return
    pg = f"[PG 0 (default_pg) Rank {rank}]"
    log.add(
        t,
        f"{p}ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out.",
    )
    log.add(
        t + 1e-4,
        f"[rank{rank}]:[E{_glog(t + 1e-4)} ProcessGroupNCCL.cpp:1664] {pg} Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.",
    )
    log.add(
        t + 2e-4,
        f"[rank{rank}]:[E{_glog(t + 2e-4)} ProcessGroupNCCL.cpp:621] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    )
    log.add(
        t + 3e-4,
        f"[rank{rank}]:[E{_glog(t + 3e-4)} ProcessGroupNCCL.cpp:627] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
    )
    log.add(
        t + 0.1,
        f"[rank{rank}]:[E{_glog(t + 0.1)} ProcessGroupNCCL.cpp:1709] {pg} Timeout at NCCL work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.",
    )
    log.add(t + 0.2, "terminate called after throwing an instance of 'c10::DistBackendError'")


CUDA_TAIL = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]


def render(scn: Scenario, steps, rng: np.random.Generator) -> dict[str, str]:
    """Return {file name: text}, one log per job host (torchrun node log)."""
    job, fleet = scn.job, scn.fleet
    logs: dict[str, _Log] = {h: _Log() for h in fleet.job_hosts}
    pids = {h: int(rng.integers(100000, 3000000)) for h in fleet.job_hosts}
    comm_id = f"0x{int(rng.integers(1 << 60, 1 << 63)):x}"
    coll_per_step = int(rng.integers(3, 9))
    seq_base = int(rng.integers(10, 200))
    numel = int(rng.integers(20, 120)) * 1048576

    def init_all(t_init: float, pid_shift: int = 0, override: dict | None = None):
        saved = {}
        if override:
            for key, attr in (
                ("transport", "nccl_transport"),
                ("env", "nccl_env"),
                ("hca_limit", "nccl_hca_limit"),
                ("gdr", "gdr"),
            ):
                if key in override:
                    saved[attr] = getattr(job, attr)
                    setattr(job, attr, override[key])
        _init_hosts(t_init, pid_shift)
        for attr, v in saved.items():
            setattr(job, attr, v)

    def _init_hosts(t_init: float, pid_shift: int):
        for k, h in enumerate(fleet.job_hosts):
            host = fleet.host(h)
            logs[h].add(
                t_init - 5,
                f"W{_elastic(t_init - 5)} {pids[h] - 7 + pid_shift} torch/distributed/run.py:793] ",
            )
            logs[h].add(
                t_init - 5,
                f"W{_elastic(t_init - 5)} {pids[h] - 7 + pid_shift} torch/distributed/run.py:793] *****************************************",
            )
            logs[h].add(
                t_init - 5,
                f"W{_elastic(t_init - 5)} {pids[h] - 7 + pid_shift} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
            )
            for local in range(GPUS_PER_NODE):
                rank = k * GPUS_PER_NODE + local
                _nccl_init(
                    logs[h],
                    scn,
                    host,
                    local,
                    rank,
                    pids[h] + local + pid_shift,
                    t_init + 0.01 * local,
                    rng,
                    comm_id,
                )

    t_init = job.t_start - float(rng.uniform(20, 60))
    init_all(t_init)
    h0 = fleet.job_hosts[0]
    # trainer progress: rank 0 prints every K-th logged step
    recs = [r for r in steps.records if r.logged]
    every = max(1, len(recs) // 60)
    tokens = int(scn.opts.get("tokens_per_rank", 16384)) * fleet.n_ranks
    all_recs = steps.records
    gap_after = {id(a): b.t - a.end for a, b in pairwise(all_recs)}
    show_data = bool(scn.opts.get("progress_data_time"))
    prev = None
    for i, r in enumerate(recs):
        if (
            prev is not None
            and i % every == 0
            and r.step > prev.step
            and r.t - prev.t < 5 * (r.step - prev.step) * scn.opts["ref_step"]
        ):
            st = (r.t - prev.t) / (r.step - prev.step)
            mfu = job.mfu_base * (scn.opts["ref_step"] / st) * 100.0
            data = f" | data_time {gap_after.get(id(r), job.base_gap):.3f}s" if show_data else ""
            logs[h0].add(
                r.end,
                f"[{_py(r.end)}] [INFO] [train.py:512] [Rank 0] step {r.step} | loss {steps.loss.get(r.step, 0.0):.4f} | "
                f"lr 1.500e-04 | step_time {st:.3f}s{data} | tok/s {int(tokens / st)} | mfu {mfu:.1f}%",
            )
        prev = r
    if steps.resume_step is not None:
        _crash_and_restart(scn, steps, logs, pids, rng, init_all)
    if steps.hang_step is not None:
        _hang(scn, steps, logs, pids, rng, coll_per_step, seq_base, numel)
    for t, rank, line in job.extra_log:
        h = fleet.job_hosts[rank // GPUS_PER_NODE] if rank is not None else h0
        logs[h].add(t, line)
    names = scn.opts.get("log_names", "host")
    out = {}
    for k, h in enumerate(fleet.job_hosts):
        fname = (
            f"{h}.log" if names == "host" else f"node-{k:03d}.log" if names == "node" else f"torchrun-{h}.log"
        )
        out[fname] = logs[h].text()
    return out


def _hang(scn, steps, logs, pids, rng, coll_per_step, seq_base, numel):
    job, fleet = scn.job, scn.fleet
    seq = seq_base + steps.hang_step * coll_per_step
    t_enq = steps.hang_t + job.base_compute * 0.9
    if job.lost_rank is not None and scn.opts.get("lost_rank_logs", True):
        r = job.lost_rank
        h = fleet.job_hosts[r // GPUS_PER_NODE]
        t = (scn.gpu(h, r % GPUS_PER_NODE).lost_at or steps.hang_t) + float(rng.uniform(1.0, 4.0))
        p = f"[rank{r}]:[E{_glog(t)} ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank {r}] "
        logs[h].add(
            t,
            p
            + "Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure",
        )
        for k, line in enumerate(CUDA_TAIL):
            logs[h].add(t + 1e-6 * (k + 1), line)
    for k, h in enumerate(fleet.job_hosts):
        for local in range(GPUS_PER_NODE):
            rank = k * GPUS_PER_NODE + local
            if rank == job.lost_rank and scn.opts.get("lost_rank_logs", True):
                continue
            ran = job.timeout_ms + int(rng.integers(5, 95))
            t = t_enq + ran / 1000.0 + float(rng.uniform(0, 0.05))
            _watchdog(logs[h], job.torch_style, rank, seq, t, job.timeout_ms, ran, numel)
        t_exit = t_enq + job.timeout_ms / 1000.0 + float(rng.uniform(2, 6))
        logs[h].add(
            t_exit,
            f"E{_elastic(t_exit)} {pids[h] - 7} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: {pids[h]}) of binary: /usr/bin/python3",
        )


def _crash_and_restart(scn, steps, logs, pids, rng, init_all):
    job, fleet = scn.job, scn.fleet
    t_c = job.crash_at
    r = job.crash_rank if job.crash_rank is not None else 0
    h = fleet.job_hosts[r // GPUS_PER_NODE]
    if job.crash_message:
        for k, line in enumerate(
            [
                "Traceback (most recent call last):",
                '  File "/workspace/train.py", line 731, in <module>',
                "    main()",
                '  File "/workspace/train.py", line 655, in main',
                "    loss.backward()",
                job.crash_message,
                *CUDA_TAIL,
            ]
        ):
            logs[h].add(t_c + 1e-5 * k, f"[rank{r}]: {line}")
    for hh in fleet.job_hosts:
        tt = t_c + float(rng.uniform(1, 4))
        if not job.crash_message:
            logs[hh].add(
                tt,
                f"W{_elastic(tt)} {pids[hh] - 7} torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers",
            )
            logs[hh].add(
                tt + 0.01,
                f"W{_elastic(tt + 0.01)} {pids[hh] - 7} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[hh]} closing signal SIGTERM",
            )
        elif hh == h:
            logs[hh].add(
                tt,
                f"E{_elastic(tt)} {pids[hh] - 7} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: {r % GPUS_PER_NODE} (pid: {pids[hh] + r % GPUS_PER_NODE}) of binary: /usr/bin/python3",
            )
        else:
            logs[hh].add(
                tt,
                f"W{_elastic(tt)} {pids[hh] - 7} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[hh]} closing signal SIGTERM",
            )
    init_all(steps.resume_t - float(rng.uniform(15, 40)), pid_shift=50000, override=job.restart_nccl)
    h0 = fleet.job_hosts[0]
    logs[h0].add(
        steps.resume_t - 2.0,
        f"[{_py(steps.resume_t - 2.0)}] [INFO] [checkpoint.py:211] [Rank 0] resumed from checkpoint at step {steps.resume_step - 1}",
    )
