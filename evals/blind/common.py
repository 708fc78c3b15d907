"""Shared pieces for the blind cases: host naming, job set-up, log styles, decoys."""

from __future__ import annotations

import random
from fleet import SW_POWER, Fleet, Job, dt, sh, utc


# --------------------------------------------------------------------------------------------
# names

def names(style: str, n: int, rng: random.Random) -> list[str]:
    if style == "gpu-a":
        letter = rng.choice("abcdefgh")
        s = rng.randint(1, 300)
        return [f"gpu-{letter}{s + i:03d}" for i in range(n)]
    if style == "fqdn":
        s = rng.randint(1000, 1800)
        dc = rng.choice(["dc3", "sjc2", "ams1"])
        return [f"gpu{s + i}.{dc}.internal" for i in range(n)]
    if style == "ip":
        a, b = rng.randint(10, 90), rng.randint(1, 200)
        s = rng.randint(10, 150)
        return [f"10-{a}-{b}-{s + i}" for i in range(n)]
    if style == "dgx":
        s = rng.randint(1, 90)
        return [f"dgx-h100-{s + i:03d}" for i in range(n)]
    if style == "aws":
        a = rng.randint(1, 30)
        return [f"ip-10-{a}-{(i * 7) // 256 + 40}-{(17 + i * 7) % 256}" for i in range(n)]
    if style == "nid":
        s = rng.randint(1000, 5000)
        return [f"nid{s + i:06d}" for i in range(n)]
    if style == "hgx":
        return [f"hgx-r{(i // 4) + 11:02d}-u{(i % 4) * 8 + 3:02d}" for i in range(n)]
    if style == "cw":
        s = rng.randint(10, 90)
        return [f"g{s + i}-a100.train.corp" for i in range(n)]
    raise ValueError(style)


def window(start: str, minutes: int) -> tuple[str, str]:
    t0 = utc(start)
    return start, dt(t0 + minutes * 60).strftime("%Y-%m-%dT%H:%M:%SZ")


def mk_job(f: Fleet, name: str, compute: float, comm: float, *, start: float | None = None, every: int = 20,
           cols=("compute_s",), first_step: int = 0) -> Job:
    j = Job(f, name, compute, comm, f.tm if start is None else start, every, cols)
    j.first_step = first_step
    f.job = j
    return j


def hhmm(t: float) -> str:
    return dt(t).strftime("%H:%M")


# --------------------------------------------------------------------------------------------
# NCCL / torch lines


def nccl_prefix(host: str, pid: int, tid: int, dev: int) -> str:
    return f"{host}:{pid}:{tid} [{dev}]"


def nccl_init(f: Fleet, log: str, t: float, *, version="2.21.5+cuda12.4", net="IB", hcas=None, gdr=True,
              p2p="P2P/CUMEM/read", env: dict | None = None, hosts=None, warn: str | None = None, oob="eth0") -> None:
    """NCCL INFO lines from local rank 0 (and one more) of a few hosts."""
    hosts = hosts or [h for h in f.hosts if not h.spare][:3]
    env = env or {}
    for hi, h in enumerate(hosts):
        pid = 20000 + sh(h.name) % 30000
        ip = f"10.{40 + sh(h.name) % 50}.{sh(h.name, 1) % 250}.{sh(h.name, 2) % 250}"
        for dev in (0, 1) if hi == 0 else (0,):
            p = nccl_prefix(h.name, pid + dev, pid + dev + 311, dev)
            tt = t + hi * 0.2 + dev * 0.01
            if hi == 0 and dev == 0:
                f.log(log, tt, f"{p} NCCL INFO Bootstrap : Using {oob}:{ip}<0>")
                f.log(log, tt + 0.001, f"NCCL version {version}")
            for k, v in env.items():
                f.log(log, tt + 0.002, f"{p} NCCL INFO {k} set by environment to {v}.")
            if net == "IB":
                use = " ".join(f"[{i}]{n}:1/{'RoCE' if f.roce else 'IB'}" for i, n in enumerate(hcas or [n.ibdev for n in h.nics]))
                f.log(log, tt + 0.003, f"{p} NCCL INFO NET/IB : Using {use} [RO]; OOB {oob}:{ip}<0>")
                f.log(log, tt + 0.004, f"{p} NCCL INFO Using network IB")
            else:
                f.log(log, tt + 0.003, f"{p} NCCL INFO NET/Socket : Using [0]{oob}:{ip}<0>")
                f.log(log, tt + 0.004, f"{p} NCCL INFO Using network Socket")
            r0 = f.rank_of(h, dev)
            g0 = h.gpus[dev]
            g1 = h.gpus[(dev + 1) % len(h.gpus)]
            r1 = f.rank_of(h, g1.index)
            f.log(log, tt + 0.05, f"{p} NCCL INFO comm 0x55{sh(h.name, dev) % 10**10:010x} rank {r0} nranks {f.nranks} cudaDev {dev} nvmlDev {dev} busId {g0.bus}000 commId 0x{sh(f.case) % 16**16:016x} - Init START")
            f.log(log, tt + 0.3, f"{p} NCCL INFO Channel 00/0 : {r0}[{g0.bus}000] -> {r1}[{g1.bus}000] via {p2p}")
            if len(f.hosts) > 1:
                other = f.hosts[(f.hosts.index(h) + 1) % len(f.hosts)]
                if other.spare:
                    other = f.hosts[0]
                ro = f.rank_of(other, dev) if other is not h else r0
                nic = (hcas or [n.ibdev for n in h.nics])[dev % len(hcas or h.nics)] if net == "IB" else None
                idx = [n.ibdev for n in h.nics].index(nic) if nic else 0
                via = f"NET/IB/{idx}" + ("/GDRDMA" if gdr else "") if net == "IB" else "NET/Socket/0"
                f.log(log, tt + 0.31, f"{p} NCCL INFO Channel 00/0 : {ro}[{other.gpus[dev].bus}000] -> {r0}[{g0.bus}000] [receive] via {via}")
                f.log(log, tt + 0.32, f"{p} NCCL INFO Channel 00/0 : {r0}[{g0.bus}000] -> {ro}[{other.gpus[dev].bus}000] [send] via {via}")
            f.log(log, tt + 0.6, f"{p} NCCL INFO {16 if net == 'IB' else 2} coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer")
            f.log(log, tt + 0.9, f"{p} NCCL INFO comm 0x55{sh(h.name, dev) % 10**10:010x} rank {r0} nranks {f.nranks} cudaDev {dev} nvmlDev {dev} busId {g0.bus}000 commId 0x{sh(f.case) % 16**16:016x} - Init COMPLETE")
            if warn and hi == len(hosts) - 1 and dev == 0:
                f.log(log, tt + 0.95, f"{p} {warn[0]} NCCL WARN {warn[1]}")


HARMLESS_WARNS = [
    ("socket.cc:46", "NET/Socket : message truncated : receiving 0 bytes instead of 4. If you believe your socket network is in healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks"),
    ("nvmlwrap.cc:182", "nvmlDeviceGetNvLinkRemotePciInfo() failed: Not Supported"),
    ("utils.cc:216", "Could not find real path of /sys/class/net/bond0/device (/sys/class/net/bond0/device)"),
]


# --------------------------------------------------------------------------------------------
# trainer logs, several frameworks


def iter_lines(f: Fleet, log: str, style: str, *, every: int, gbs_fn, seq_fn, tflops_fn=None,
               data_fn=None, t_from=None, t_to=None, rank_label=0, extra_fn=None) -> None:
    """One line per `every` steps, in a framework's wording, computed from the simulated steps."""
    j = f.job
    j.simulate()
    ngpu = f.nranks
    meta = j.steps_meta
    ref = {"A100": 172.0, "H100": 405.0, "H200": 430.0}[f.genname] * (0.93 + (sh(f.case) % 10) / 100)
    s0, t_0, d_0 = meta[0]
    tps0 = gbs_fn(t_0) * seq_fn(t_0) / j.step_time(t_0)[0] / ngpu
    for k, (step, t, dur) in enumerate(meta):
        if step % every or (t_from and t < t_from) or (t_to and t >= t_to):
            continue
        gbs, seq = gbs_fn(t), seq_fn(t)
        toks = gbs * seq / dur
        tps_gpu = toks / ngpu
        tfl = tflops_fn(t, dur) if tflops_fn else ref * tps_gpu / tps0
        loss = 2.9 - 0.6 * (step / (step + 4000)) + ((sh(f.case, step) % 100) - 50) / 4000
        data = data_fn(t) if data_fn else 0.004 + (sh(f.case, step, 1) % 10) / 2000
        ts = dt(t + dur)
        stamp = ts.strftime("%Y-%m-%d %H:%M:%S")
        ms = (sh(step) % 1000)
        extra = extra_fn(t) if extra_fn else ""
        if style == "megatron":
            line = (f" [{stamp}] iteration {step:>8d}/ 1000000 | consumed samples: {step * gbs:>12d} | "
                    f"elapsed time per iteration (ms): {dur * 1000:.1f} | throughput per GPU (TFLOP/s/GPU): {tfl:.1f} | "
                    f"learning rate: 2.999E-04 | global batch size: {gbs:5d} | lm loss: {loss:.6E} | loss scale: 1.0 | "
                    f"grad norm: {0.21 + (sh(step) % 40) / 1000:.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |{extra}")
        elif style == "titan":
            line = (f"[rank{rank_label}]:[titan] {stamp},{ms:03d} - root - INFO - step: {step:5d}  loss: {loss:7.4f}  "
                    f"memory: 61.02GiB(77.10%)  tps: {tps_gpu:,.0f}  tflops: {tfl:.2f}  mfu: {tfl / 9.89:.2f}%{extra}")
        elif style == "deepspeed":
            line = (f"[{stamp},{ms:03d}] [INFO] [timer.py:264:stop] epoch=0/micro_step={step * 4}/global_step={step}, "
                    f"RunningAvgSamplesPerSec={gbs / dur:.2f}, CurrSamplesPerSec={gbs / dur * (1 + ((sh(step) % 20) - 10) / 1000):.2f}, "
                    f"MemAllocated=61.02GB, MaxMemAllocated=70.13GB{extra}")
        elif style == "timm":
            line = (f"{stamp} INFO train: Train: 2 [{step:>6d}/200000 ({step / 2000:3.0f}%)]  Loss: {loss:.3f} ({loss + 0.004:.3f})  "
                    f"Time: {dur:.3f}s, {gbs / dur:>7.2f}/s  ({dur * 0.998:.3f}s, {gbs / dur * 1.002:>7.2f}/s)  LR: 3.000e-04  "
                    f"Data: {data:.3f} ({data * 0.97:.3f}){extra}")
        elif style == "hf":
            line = (f"{{'loss': {loss:.4f}, 'grad_norm': {0.21 + (sh(step) % 40) / 1000:.4f}, 'learning_rate': 0.0003, "
                    f"'epoch': {step / 20000:.2f}, 'step': {step}, 'train_samples_per_second': {gbs / dur:.3f}, "
                    f"'train_tokens_per_second_per_gpu': {tps_gpu:.1f}}}{extra}")
        elif style == "lightning":
            it = 1 / dur
            line = (f"Epoch 0:  {step % 5000 / 50:>3.0f}%|#####     | {step % 5000}/5000 [{int(step % 5000 * dur) // 60:02d}:{int(step % 5000 * dur) % 60:02d}<"
                    f"{int((5000 - step % 5000) * dur) // 60:02d}:{int((5000 - step % 5000) * dur) % 60:02d}, {it:.2f}it/s, v_num=7, train_loss={loss:.3f}{extra}]")
        elif style == "ray":
            line = (f"(RayTrainWorker pid={31000 + rank_label}, ip=10.0.4.{11 + rank_label}) [{stamp}] step={step} "
                    f"loss={loss:.4f} step_time_s={dur:.3f} samples_per_s={gbs / dur:.1f}{extra}")
        else:
            raise ValueError(style)
        f.log(log, t + dur, line)


def megatron_args(f: Fleet, log: str, t: float, **args) -> None:
    f.log(log, t, "------------------------ arguments ------------------------")
    for k in sorted(args):
        f.log(log, t + 0.001, f"  {k} {'.' * max(3, 48 - len(k))} {args[k]}")
    f.log(log, t + 0.002, "-------------------- end of arguments ---------------------")


# --------------------------------------------------------------------------------------------
# decoys


def decoy_power_cap(f: Fleet, n: int, rng: random.Random, exclude=()) -> list:
    """Normal software power capping on several busy GPUs: clocks a little under max, well under the limit."""
    cands = [(h, g) for h in f.hosts if not h.spare for g in h.gpus if (h.name, g.index) not in exclude]
    picked = rng.sample(cands, min(n, len(cands)))
    for h, g in picked:
        g.base.update(reasons=SW_POWER, sm=h.gen["sm"] - rng.choice([45, 60, 75, 90, 105]),
                      power=h.gen["plimit"] * rng.uniform(0.78, 0.95), pviol=rng.uniform(2e7, 1.5e8))
    return picked


def decoy_old_xid(f: Fleet, h, gi: int, code: int, days: float, text: str) -> None:
    g = h.gpus[gi]
    t = f.t0 - days * 86400
    if t < h.boot:
        h.boot = t - 3 * 86400
    h.kern(t, f"NVRM: Xid (PCI:0000:{g.bus}:00): {code}, {text}")
    g.xids = getattr(g, "xids", []) + [(t, code)]


def decoy_warm_gpu(h, gi: int, deg: float = 4.0) -> None:
    h.gpus[gi].base["temp"] += deg


def decoy_static_sbe(h, gi: int, n: int = 12) -> None:
    g = h.gpus[gi]
    g.start["sbe"] = n
    g.start["sbe_agg"] = n + 40


def decoy_rx_pause_victims(f: Fleet, nics: list, rng: random.Random) -> None:
    for n in nics:
        n.base.update(rx_pause=rng.uniform(40, 120), rx_pause_dur=rng.uniform(400, 1500))


def decoy_old_link_flap(f: Fleet, n) -> None:
    h = n.host
    t = f.t0 - 4.3 * 86400
    if t < h.boot:
        h.boot = t - 2 * 86400
    h.kern(t, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link DOWN")
    h.kern(t + 3.1, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link ACTIVE")
