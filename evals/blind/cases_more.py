"""Blind cases: memory, bus, NVLink, corruption, host, input, NCCL configuration, healthy fleets."""

from __future__ import annotations

import random

from common import (HARMLESS_WARNS, decoy_old_link_flap, decoy_old_xid, decoy_power_cap, decoy_rx_pause_victims,
                    decoy_static_sbe, decoy_warm_gpu, hhmm, iter_lines, megatron_args, mk_job, names, nccl_init, window)
from fleet import Fleet, dt, sh
from render import DEFAULT_FAMILIES, train_top


def _fleet(case, seed, style, n, **kw):
    rng = random.Random(seed * 101)
    return Fleet(case, seed, hosts=names(style, n, rng), **kw), rng


def _stamp(t):
    return dt(t).strftime("%Y-%m-%d %H:%M:%S")


# ------------------------------------------------------------------------------------------ memory
def b14(case, seed):
    f, rng = _fleet(case, seed, "aws", 8, gen="H100", window=window("2026-02-27T12:00:00Z", 100),
                    dmesg_style="plain", sample=60)
    j = mk_job(f, "llm-8b-pretrain", 0.58, 0.16, every=20, cols=("compute_s", "loss"))
    h = f.hosts[2]
    g = h.gpus[3]
    tag = f"PCI:0000:{g.bus}:00"
    fails = [f.t0 + 21 * 60, f.t0 + 63 * 60]
    j.simulate_restarts = True
    last = 0
    for k, tf in enumerate(fails):
        resume_step = None
        j.restarts.append((tf, tf + 9 * 60 + k * 50, 0))
        g.xids = getattr(g, "xids", []) + [(tf, 48), (tf + 0.1, 94)]
        h.nvml_events = getattr(h, "nvml_events", []) + [(tf, 3, 48), (tf + 0.1, 3, 94)]
        h.kern(tf, f"NVRM: Xid ({tag}): 48, pid={51200 + k}, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x{0x7fffa8860 + k * 0x1a40:x} partition 5, subpartition 1.")
        h.kern(tf + 0.05, f"NVRM: Xid ({tag}): 94, pid={51200 + k}, name=python3, Contained: FB DED (0x5, 0x1). physAddr: 0x{0x7fffa8860 + k * 0x1a40:08x} RST: No, D-RST: No")
        h.kern(tf + 0.06, f"NVRM: Xid ({tag}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping, reset gpu to activate.")
        r = f.rank_of(h, 3)
        f.log("train.log", tf + 0.4, f"[rank{r}]: RuntimeError: CUDA error: uncorrectable ECC error encountered")
        f.log("train.log", tf + 0.41, f"[rank{r}]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
        f.log("train.log", tf + 31, f"[{_stamp(tf + 31)}] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 3 (pid: {51200 + k}) of binary: /usr/bin/python3")
        f.log("train.log", tf + 9 * 60 + k * 50 - 5, f"[{_stamp(tf + 9 * 60 + k * 50 - 5)}] torch.distributed.elastic.agent.server.api: [INFO] [default] Starting worker group (restart {k + 1}/3)")
    g.phase(fails[0], dbe=0.0)
    g.start["dbe"] = 0
    g.phase(fails[0], dbe=1 / 3e9)
    g.end_rows = (0, 2, True, False)
    g.remap_t = fails[0]
    j.simulate()
    # resumed runs restart from the last checkpoint (every 500 steps): fix resume steps
    meta = []
    ck = 0
    j.steps_meta.clear()
    t = j.start
    step = 0
    rs = sorted(j.restarts)
    ri = 0
    new_restarts = []
    while t < f.t1:
        if ri < len(rs) and t >= rs[ri][0]:
            ck = (step // 500) * 500
            new_restarts.append((rs[ri][0], rs[ri][1], ck))
            t, step = rs[ri][1], ck
            ri += 1
            continue
        dur, _ = j.step_time(t)
        j.steps_meta.append((step, t, dur * (1 + ((sh(seed, step) % 9) - 4) / 1000)))
        t += dur
        step += 1
    j.restarts = new_restarts
    decoy_static_sbe(f.hosts[5], 2, 4)
    decoy_power_cap(f, 3, rng)
    iter_lines(f, "train.log", "titan", every=50, gbs_fn=lambda t: 512, seq_fn=lambda t: 8192)
    f.incident = {"title": "llm-8b-pretrain restarted twice in the last two hours, goodput down",
                  "reported": "torchrun elastic restarted the workers; loss continues fine after each restart."}
    f.truth = {"root_cause": "hbm_degradation", "component": f"{h.name}/gpu3"}
    return f


# ------------------------------------------------------------------------------------------ bus
def b15(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 32, gen="A100", window=window("2026-06-02T00:30:00Z", 90),
                    dmesg_style="kmsg", sample=120)
    f.rail_fabric()
    j = mk_job(f, "gpt-20b", 1.3, 0.45, every=20)
    h = f.hosts[21]
    g = h.gpus[7]
    tf = f.t0 + 47 * 60 + 12
    g.phase(tf, lost=True)
    g.xids = [(tf, 79)]
    j.stop_at = tf + 0.6
    j.dead.append((tf - 1, f.ranks_of(h, 7)))
    tag = f"PCI:0000:{g.bus}:00"
    h.kern(tf, f"NVRM: GPU at PCI:0000:{g.bus}:00: {g.uuid}")
    h.kern(tf + 0.000008, "NVRM: GPU Board Serial Number: 1653723052734")
    h.kern(tf + 0.000011, f"NVRM: Xid ({tag}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    h.kern(tf + 0.000015, f"NVRM: GPU {g.bdf}: GPU has fallen off the bus.")
    h.kern(tf + 0.000018, f"NVRM: GPU {g.bdf}: GPU serial number is 1653723052734.")
    h.kern(tf + 12.3, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up")
    h.kern(tf + 12.31, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine instance 48 Sub-engine instance 00")
    for r in (0, 37, 118, f.rank_of(h, 6)):
        t_w = tf + 600.02 + r / 1000
        md = dt(t_w).strftime("%m%d %H:%M:%S")
        f.log("train.log", t_w, f"[rank{r}]:[E{md}.{123992 + r:09d} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183321, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=600000) ran for 600019 milliseconds before timing out.")
        f.log("train.log", t_w + 0.001, f"[rank{r}]:[E{md}.{124073 + r:09d} ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank {r}]  failure detected by watchdog at work sequence id: 183321 PG status: last enqueued work: 183321, last completed work: 183320")
    decoy_old_xid(f, f.hosts[3], 2, 79, 20.0, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    f.hosts[3].boot = f.t0 - 6 * 86400  # that host was rebooted since: its old XID is not in this boot's log
    f.hosts[3].events = [e for e in f.hosts[3].events if e[0] >= f.hosts[3].boot]
    decoy_power_cap(f, 8, rng, exclude={(h.name, 7)})
    iter_lines(f, "train.log", "megatron", every=40, gbs_fn=lambda t: 1536, seq_fn=lambda t: 2048)
    f.incident = {"title": f"gpt-20b hung at {hhmm(tf)} and was killed by the NCCL watchdog",
                  "reported": "Watchdog timeouts on every rank. Please find the node before we restart."}
    f.truth = {"root_cause": "gpu_fell_off_bus", "component": f"{h.name}/gpu7"}
    return f


def b16(case, seed):
    f, rng = _fleet(case, seed, "fqdn", 6, gen="H100", gpn=4, window=window("2026-08-30T18:00:00Z", 60),
                    dmesg_style="T", driver="570.86.15", sample=60)
    j = mk_job(f, "whisper-large-ft", 0.42, 0.11, every=25)
    h = f.hosts[4]
    g = h.gpus[2]
    tf = f.t0 + 35 * 60 + 40
    g.base["aer_fatal"] = 0.0
    g.phase(tf - 2, aer_fatal=0.5)
    g.phase(tf, lost=True, aer_fatal=0.0)
    j.stop_at = tf + 0.5
    j.dead.append((tf - 1, f.ranks_of(h, 2)))
    rp = f"0000:{int(g.bus, 16) - 1:02x}:01.0"
    h.kern(tf - 1.2, f"pcieport {rp}: AER: Uncorrected (Fatal) error message received from {g.bdf}")
    h.kern(tf - 1.19, f"nvidia {g.bdf}: PCIe Bus Error: severity=Uncorrected (Fatal), type=Data Link Layer, (Receiver ID)")
    h.kern(tf - 1.18, f"nvidia {g.bdf}:   device [10de:2330] error status/mask=00000020/00000000")
    h.kern(tf - 1.17, f"nvidia {g.bdf}:    [ 5] SDES                   (First)")
    h.kern(tf, f"NVRM: The NVIDIA GPU {g.bdf}\nNVRM: (PCI ID: 10de:2330) installed in this system has\nNVRM: fallen off the bus and is not responding to commands.")
    for r in range(0, f.nranks, 5):
        t_w = tf + 1800.01 + r / 100
        if t_w < f.t1:
            md = dt(t_w).strftime("%m%d %H:%M:%S")
            f.log("finetune.log", t_w, f"[rank{r}]:[E{md}.{440250129 + r} ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=50112, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.")
    decoy_warm_gpu(f.hosts[1], 0, 4.0)
    decoy_power_cap(f, 3, rng, exclude={(h.name, 2)})
    iter_lines(f, "finetune.log", "hf", every=50, gbs_fn=lambda t: 256, seq_fn=lambda t: 448)
    f.incident = {"title": "whisper fine-tune stopped making progress", "reported": "No new log lines since the evening; process still alive."}
    f.truth = {"root_cause": "gpu_fell_off_bus", "component": f"{h.name}/gpu2"}
    return f


# ------------------------------------------------------------------------------------------ NVLink
def b17(case, seed):
    f, rng = _fleet(case, seed, "dgx", 8, gen="H100", window=window("2026-04-03T06:20:00Z", 80),
                    dmesg_style="journal", sample=60)
    f.dcgm_families = DEFAULT_FAMILIES + ["DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"]
    j = mk_job(f, "llama-ft-70b-tp8", 2.2, 0.5, every=10)
    h = f.hosts[5]
    g = h.gpus[1]
    t_on = f.t0 + 26 * 60
    g.base["bad_link"] = 7
    g.phase(t_on, crc=140.0, nvreplay=35.0, nvrecovery=0.002)
    for hh in f.hosts:
        hh.nvlink_cmd = True
    tag = f"PCI:0000:{g.bus}:00"
    for k, dtk in enumerate((0, 211, 1490)):
        h.kern(t_on + dtk, f"NVRM: Xid ({tag}): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 7(0x0, 0x0, 0x{[0x10000, 0x200000, 0x10000][k]:x}, 0x0, 0x0, 0x0, 0x0)")
    g.xids = [(t_on, 74)]
    h.nvml_events = [(t_on, 1, 74)]
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h), 1.06))
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 1), 1.13))
    h.kern(f.t0 - 3600 * 30, "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing")
    decoy_power_cap(f, 4, rng)
    nccl_init(f, "nccl.log", f.tm + 20, version="2.21.5+cuda12.4")
    iter_lines(f, "train.log", "megatron", every=20, gbs_fn=lambda t: 128, seq_fn=lambda t: 8192)
    f.incident = {"title": "70b fine-tune (TP=8) iteration time up ~15%", "reported": ""}
    f.truth = {"root_cause": "nvlink_fault", "component": f"{h.name}/gpu1"}
    return f


def b18(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 10, gen="A100", window=window("2026-09-15T10:00:00Z", 90),
                    dmesg_style="plain", sample=60)
    f.dcgm_families = DEFAULT_FAMILIES + ["DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"]
    j = mk_job(f, "recsys-dlrm", 0.35, 0.18, every=50)
    f.skip.add("node")
    h = f.hosts[7]
    g = h.gpus[5]
    t_on = f.t0 + 40 * 60
    g.base["bad_link"] = 3
    g.phase(t_on, nvreplay=60.0, nvrecovery=0.01)
    for hh in f.hosts:
        hh.nvlink_cmd = True
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 5), 1.22))
    decoy_static_sbe(f.hosts[2], 3, 2)
    decoy_warm_gpu(f.hosts[7], 2, 4.0)
    decoy_power_cap(f, 5, rng)
    nccl_init(f, "nccl.log", f.tm + 20, version="2.18.6+cuda12.2", p2p="P2P/IPC/read")
    iter_lines(f, "train.log", "hf", every=200, gbs_fn=lambda t: 65536, seq_fn=lambda t: 1)
    f.incident = {"title": "DLRM training: embedding all-to-all slower since ~10:40", "reported": "About 13% fewer samples/s."}
    f.truth = {"root_cause": "nvlink_fault", "component": f"{h.name}/gpu5"}
    return f


# ------------------------------------------------------------------------------------------ SDC
def b19(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 48, gen="H100", gpn=4, window=window("2026-05-19T03:30:00Z", 90),
                    dmesg_style="journal", sample=300, spares=2)
    f.gz |= {"steps"}
    j = mk_job(f, "llm-7b-ddp-ablation", 0.52, 0.2, every=50, cols=("compute_s", "loss", "grad_norm", "param_checksum"))
    h = f.hosts[29]
    r = f.rank_of(h, 2)
    t_on = f.t0 + 37 * 60
    j.checksum_bad = (t_on, r)
    decoy_warm_gpu(f.hosts[11], 1, 5.0)
    decoy_static_sbe(f.hosts[40], 0, 17)
    decoy_power_cap(f, 10, rng)
    decoy_old_xid(f, f.hosts[5], 3, 13, 6.0, "pid=72011, name=python3, Graphics SM Global Exception on (GPC 2, TPC 5, SM 1): Multiple Warp Errors")
    nccl_init(f, "nccl.log", f.tm + 10, warn=HARMLESS_WARNS[2])
    iter_lines(f, "train.log", "titan", every=100, gbs_fn=lambda t: 768, seq_fn=lambda t: 2048)
    f.incident = {"title": "7b ablation: eval loss diverged from the sister run after ~04:10",
                  "reported": "Training loss on rank 0 looks normal. Same seed/config as the sister run on another cluster."}
    f.truth = {"root_cause": "silent_data_corruption", "component": f"{h.name}/gpu2"}
    return f


def b20(case, seed):
    f, rng = _fleet(case, seed, "ip", 6, gen="A100", window=window("2026-10-07T05:40:00Z", 100),
                    dmesg_style="T", sample=60, rank_order="default")
    f.skip.add("node")
    j = mk_job(f, "bio-protein-lm", 0.95, 0.3, every=40, cols=("loss", "grad_norm", "param_checksum"))
    f.shuffle_rows = True
    f.gz.add("steps")
    h = f.hosts[1]
    r = f.rank_of(h, 6)
    t_on = f.t0 + 22 * 60
    j.checksum_bad = (t_on, r)
    j.loss_spike = (t_on, r)
    decoy_old_xid(f, f.hosts[4], 0, 13, 2.5, "pid=15021, name=python, Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174")
    decoy_power_cap(f, 3, rng)
    decoy_warm_gpu(h, 6, 2.0)
    iter_lines(f, "train.log", "deepspeed", every=40, gbs_fn=lambda t: 1024, seq_fn=lambda t: 1024)
    for k in range(6):
        tt = t_on + 300 + k * 700
        f.log("train.log", tt, f"[{_stamp(tt)},{k * 37:03d}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {2 ** (16 - k % 2)}, reducing to {2 ** (15 - k % 2)}")
    f.incident = {"title": "protein LM: loss spikes and skipped steps since this morning",
                  "reported": "Loss scaler keeps overflowing. We lowered the LR once, no change. No hardware alerts."}
    f.truth = {"root_cause": "silent_data_corruption", "component": f"{h.name}/gpu6"}
    return f


# ------------------------------------------------------------------------------------------ host
def b21(case, seed):
    f, rng = _fleet(case, seed, "nid", 16, gen="H100", window=window("2026-07-21T13:10:00Z", 90),
                    dmesg_style="kmsg", sample=60, rank_order="shuffled")
    j = mk_job(f, "mm-vlm-pretrain", 1.45, 0.4, every=20)
    f.topo_shuffle = True
    h = f.hosts[10]
    t_on = f.t0 + 30 * 60
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h), 1.29))
    h.cpu_phases.append((t_on, {"wait": 38.0, "load": 211.0}))
    h.pressure = dict(cpu=(58.2, 0.0), mem=(0.0, 0.0), io=(0.4, 0.1))
    h.top = train_top(h, f.t1 - 20, extra=[(3141592, "root", "12.3g", "9.8g", "12m", 3871.4, "R", 0.4, "4312:11.52", "zstd"),
                                         (3141590, "root", "2.1g", "1.0g", "10m", 410.2, "S", 0.1, "501:08.91", "restic")],
                      load=(211.4, 198.7, 141.2), cpu=" 71.2 us, 27.9 sy,  0.0 ni,  0.0 id,  0.3 wa,  0.0 hi,  0.6 si,  0.0 st")
    for other in f.hosts[::3]:
        if other is not h:
            other.top = train_top(other, f.t1 - 20)
    decoy_power_cap(f, 6, rng)
    decoy_warm_gpu(f.hosts[2], 7, 4.0)
    nccl_init(f, "nccl.log", f.tm + 25)
    iter_lines(f, "train.log", "titan", every=40, gbs_fn=lambda t: 1024, seq_fn=lambda t: 4096)
    f.incident = {"title": "VLM pretrain slowed ~25% this afternoon",
                  "reported": "Dataloader workers were not changed. A backup policy was rolled out to some racks today."}
    f.truth = {"root_cause": "host_contention", "component": h.name}
    return f


def b22(case, seed):
    f, rng = _fleet(case, seed, "cw", 8, gen="A100", window=window("2026-11-02T08:00:00Z", 75),
                    dmesg_style="caller", sample=60)
    j = mk_job(f, "speech-tts-xl", 0.7, 0.21, every=20)
    h = f.hosts[6]
    t_on = f.t0 + 24 * 60
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h), 1.24))
    h.pressure = dict(cpu=(3.1, 0.0), mem=(41.7, 33.9), io=(6.2, 4.8))
    h.cpu_phases.append((t_on, {"wait": 0.9, "load": 31.0}))
    h.top = top_mem(h, f.t1 - 30)
    for other in f.hosts:
        if other is not h:
            other.pressure = dict(cpu=(0.6, 0.0), mem=(0.0, 0.0), io=(0.2, 0.1))
    decoy_power_cap(f, 4, rng)
    decoy_old_xid(f, f.hosts[2], 5, 31, 1.5, "pid=90210, name=python, channel 0x00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC3 GPCCLIENT_T1_2 faulted @ 0x7f12_a0000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")
    iter_lines(f, "train.log", "lightning", every=20, gbs_fn=lambda t: 256, seq_fn=lambda t: 1)
    f.incident = {"title": "TTS training 20% slower since ~08:25", "reported": "Someone may be preprocessing data on the training nodes again."}
    f.truth = {"root_cause": "host_contention", "component": h.name}
    return f


def top_mem(h, t):
    from render import top
    procs = [(41000 + i * 7, "tts", "71.2g", "14.9g", "1.2g", 88.3 - i, "R", 0.7, "651:10.33", "python") for i in range(8)]
    procs += [(88120, "etl", "912.4g", "871.2g", "12m", 96.1, "D", 42.2, "310:41.18", "python3"),
              (211, "root", "0", "0", "0", 61.0, "R", 0.0, "1211:07.42", "kswapd0"),
              (212, "root", "0", "0", "0", 57.2, "R", 0.0, "1190:55.01", "kswapd1")]
    procs.sort(key=lambda p: -p[5])
    return top(h, t, procs, (31.2, 29.8, 22.4), " 8.1 us, 14.9 sy,  0.0 ni, 62.7 id, 13.8 wa,  0.0 hi,  0.5 si,  0.0 st",
               "2063777.0 total,   6112.4 free, 1960412.3 used,  97252.3 buff/cache")


# ------------------------------------------------------------------------------------------ input
def _stalls(j, rng, t_from, t_to, every=(90, 300), length=(20, 120), extra=(0.6, 2.5)):
    t = t_from
    spans = []
    while t < t_to:
        t += rng.uniform(*every)
        ln = rng.uniform(*length)
        s = rng.uniform(*extra)
        j.extra.append((t, t + ln, s))
        spans.append((t, t + ln, s))
        t += ln
    return spans


def b23(case, seed):
    f, rng = _fleet(case, seed, "aws", 12, gen="A100", window=window("2026-03-16T15:00:00Z", 90),
                    dmesg_style="journal", sample=60)
    j = mk_job(f, "clip-vit-h", 0.9, 0.25, every=20)
    t_on = f.t0 + 28 * 60
    spans = _stalls(j, rng, t_on, f.t1, every=(15, 60), length=(60, 200), extra=(0.5, 1.6))

    def data(t):
        return next((s for a, b, s in spans if a <= t < b), 0.0) + 0.011

    iter_lines(f, "train.log", "timm", every=20, gbs_fn=lambda t: 32768, seq_fn=lambda t: 1, data_fn=data)
    for k, (a, b, s) in enumerate(spans):
        for m in range(3):
            tt = a + m * (b - a) / 3
            hh = f.hosts[(k + m) % len(f.hosts)]
            f.log("train.log", tt, f"{_stamp(tt)} WARNING webdataset_s3: rank {f.rank_of(hh, m % 8)}: GetObject s3://corp-ml-datasets/laion2b-en/shards/{(k * 131 + m * 17) % 23000:06d}.tar failed: An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate.; retry {m + 1}/8 in {1.0 + m * 0.8:.1f}s")
        f.log("train.log", a + 2, f"{_stamp(a + 2)} WARNING urllib3.connectionpool: Connection pool is full, discarding connection: corp-ml-datasets.s3.us-east-1.amazonaws.com. Connection pool size: 10")
    decoy_power_cap(f, 4, rng)
    decoy_warm_gpu(f.hosts[3], 4, 4.0)
    nccl_init(f, "nccl.log", f.tm + 10, version="2.18.6+cuda12.2")
    f.incident = {"title": "CLIP training throughput unstable since 15:30, step time spikes",
                  "reported": "Another team started a big preprocessing job this afternoon; we share the account with them."}
    f.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    return f


def b24(case, seed):
    f, rng = _fleet(case, seed, "hgx", 16, gen="H100", window=window("2026-05-08T21:00:00Z", 90),
                    dmesg_style="journal", sample=120)
    j = mk_job(f, "llm-22b-pretrain", 1.3, 0.35, every=20)
    t_on = f.t0 + 35 * 60
    spans = _stalls(j, rng, t_on, f.t1, every=(40, 200), length=(30, 150), extra=(1.0, 4.0))
    iter_lines(f, "train.log", "megatron", every=20, gbs_fn=lambda t: 1024, seq_fn=lambda t: 4096)
    for step, t, dur in j.steps_meta:
        if step % 100 == 0:
            bg = next((s for a, b, s in spans if a <= t < b), 0.0) * 1000 + 0.9
            f.log("train.log", t + dur + 0.01, "(min, max) time across ranks (ms):")
            f.log("train.log", t + dur + 0.011, f"    forward-backward ...............................: ({j.compute * 1000 * 0.98:.2f}, {j.compute * 1000 * 1.01:.2f})")
            f.log("train.log", t + dur + 0.012, f"    batch-generator ................................: ({bg * 0.6:.2f}, {bg:.2f})")
            f.log("train.log", t + dur + 0.013, f"    optimizer ......................................: (31.20, 33.07)")
    ost = [f"scratch-OST{n:04x}" for n in (0x12, 0x1f, 0x2a)]
    for k, (a, b, s) in enumerate(spans):
        for hh in f.hosts:
            if sh(hh.name, k) % 3 == 0:
                continue
            o = ost[k % 3]
            nid = f"10.10.{k % 3 + 1}.{12 + k % 3}@o2ib"
            off = (sh(hh.name, k, 1) % 40) / 10
            hh.kern(a + off, f"Lustre: {o}-osc-ffff9a2b3c4d{sh(hh.name) % 4096:03x}0: Connection to {o} (at {nid}) was lost; in progress operations using this service will wait for recovery to complete")
            hh.kern(b + off, f"Lustre: {o}-osc-ffff9a2b3c4d{sh(hh.name) % 4096:03x}0: Connection restored to {o} (at {nid})")
            if k % 4 == 0:
                hh.kern(a + off + 0.2, f"LustreError: 11-0: {o}-osc-ffff9a2b3c4d{sh(hh.name) % 4096:03x}0: operation ost_read to node {nid} failed: rc = -107")
        # pressure io from stalls
    for hh in f.hosts:
        hh.pressure = dict(cpu=(0.8, 0.0), mem=(0.0, 0.0), io=(rng.uniform(18, 31), rng.uniform(15, 27)))
    decoy_power_cap(f, 7, rng)
    decoy_rx_pause_victims(f, [f.hosts[3].nics[2]], rng)
    nccl_init(f, "nccl.log", f.tm + 30)
    f.incident = {"title": "22b pretrain: iteration time jumps from 1.7 s to 3-5 s, intermittently",
                  "reported": "Started around 21:35. Looks like network? All-reduce bandwidth in nccl-tests is fine."}
    f.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    return f


def b25(case, seed):
    f, rng = _fleet(case, seed, "ip", 8, gen="H200", window=window("2026-12-12T01:00:00Z", 80),
                    dmesg_style="plain", sample=60)
    j = mk_job(f, "sd3-finetune", 1.1, 0.3, every=20)
    f.hosts[5].keep_boot = False
    t_on = f.t0 + 18 * 60
    spans = _stalls(j, rng, t_on, f.t1, every=(60, 240), length=(90, 240), extra=(1.2, 3.5))
    for k, (a, b, s) in enumerate(spans):
        for hh in f.hosts:
            hh.kern(a + 0.3, "nfs: server nfs-data01 not responding, still trying")
            hh.kern(b + 0.1, "nfs: server nfs-data01 OK")
            if b - a > 150 and k % 2 == 0:
                pid = 60000 + sh(hh.name, k) % 5000
                hh.kern(a + 122.5, f"INFO: task pt_data_worker:{pid} blocked for more than 122 seconds.")
                hh.kern(a + 122.51, f"      Not tainted {hh.kernel} #1")
                hh.kern(a + 122.52, "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.")
                hh.kern(a + 122.53, f"task:pt_data_worker state:D stack:0     pid:{pid} ppid:{pid - 40} flags:0x00000002")
    for hh in f.hosts:
        hh.pressure = dict(cpu=(0.5, 0.0), mem=(0.0, 0.0), io=(rng.uniform(35, 52), rng.uniform(30, 47)))
    iter_lines(f, "train.log", "deepspeed", every=20, gbs_fn=lambda t: 256, seq_fn=lambda t: 1)
    decoy_power_cap(f, 3, rng)
    decoy_static_sbe(f.hosts[0], 5, 6)
    nccl_init(f, "nccl.log", f.tm + 15, version="2.23.4+cuda12.6")
    f.incident = {"title": "sd3 fine-tune: samples/s dropped by about a third", "reported": "GPU util in Grafana dips to 0 for a minute at a time."}
    f.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    return f


def b26(case, seed):
    f, rng = _fleet(case, seed, "fqdn", 4, gen="H100", window=window("2026-01-25T17:00:00Z", 70),
                    dmesg_style="T", sample=60, baseline=600)
    start = f.t0 + 3 * 60
    j = mk_job(f, "vision-seg-lightning", 0.36, 0.1, start=start, every=25)
    f.skip.add("dcgm")
    j.extra.append((start, f.t1 + 1, 0.3))
    for k in range(40):
        tt = start + 60 + k * 95 + rng.uniform(0, 40)
        f.log("train.log", tt, f"{_stamp(tt)} DEBUG google.api_core.retry: Retrying due to 429 GET https://storage.googleapis.com/download/storage/v1/b/seg-train-eu/o/tiles%2F{(k * 7919) % 100000:06d}.png?alt=media: The rate of change requests to the object seg-train-eu/tiles/index.json exceeds the rate limit. Please reduce the rate of create, update, and delete requests., sleeping {rng.uniform(0.5, 3.0):.1f}s ...")
    iter_lines(f, "train.log", "lightning", every=25, gbs_fn=lambda t: 128, seq_fn=lambda t: 1,
               extra_fn=lambda t: f", data_wait={0.3 + rng.uniform(-0.05, 0.05):.3f}")
    f.log("train.log", start - 20, f"{_stamp(start - 20)} INFO lightning.pytorch.utilities.rank_zero: GPU available: True (cuda), used: True")
    f.log("train.log", start - 19, f"{_stamp(start - 19)} INFO dataset: streaming 1,920,000 tiles from gs://seg-train-eu/tiles (num_workers=6, prefetch_factor=2)")
    decoy_power_cap(f, 2, rng)
    nccl_init(f, "nccl.log", start - 10)
    f.incident = {"title": "seg model slow since launch: 1.3 it/s, the previous run did ~2.2 it/s",
                  "reported": "Moved the dataset from local NVMe to the GCS bucket for this run. Same code and nodes otherwise."}
    f.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    return f


# ------------------------------------------------------------------------------------------ NCCL config
def b27(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 24, gen="H100", window=window("2026-06-09T10:00:00Z", 60),
                    dmesg_style="journal", sample=120, baseline=600)
    f.rail_fabric()
    start = f.t0 + 5 * 60
    j = mk_job(f, "llm-30b-sft", 0.95, 1.35, start=start, every=20)
    f.idle_nics = {n.ibdev for n in f.hosts[0].nics}
    f.log("launch.log", start - 60, "+ source /shared/envs/cluster-b.sh")
    for k, v in (("NCCL_DEBUG", "INFO"), ("NCCL_SOCKET_IFNAME", "bond0"), ("NCCL_IB_DISABLE", "1"),
                 ("CUDA_DEVICE_MAX_CONNECTIONS", "1"), ("OMP_NUM_THREADS", "8")):
        f.log("launch.log", start - 59, f"++ export {k}={v}")
    f.log("launch.log", start - 50, f"+ torchrun --nnodes=24 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint={f.hosts[0].name}:29500 sft.py --config configs/30b_sft.yaml")
    nccl_init(f, "nccl.log", start - 30, net="Socket", oob="bond0")
    iter_lines(f, "train.log", "hf", every=50, gbs_fn=lambda t: 512, seq_fn=lambda t: 4096)
    decoy_power_cap(f, 6, rng)
    decoy_old_link_flap(f, f.hosts[9].nics[3])
    f.incident = {"title": "llm-30b-sft: 2.3 s/step from the first step; the same recipe ran at ~1.0 s/step last month",
                  "reported": "Moved to the cluster-b env file this week. Nodes passed burn-in."}
    f.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    return f


def b28(case, seed):
    f, rng = _fleet(case, seed, "dgx", 8, gen="H100", window=window("2026-10-28T04:00:00Z", 60),
                    dmesg_style="T", sample=60, baseline=300)
    start = f.t0 + 2 * 60
    j = mk_job(f, "llm-13b-pretrain", 1.0, 0.72, start=start, every=10)
    env = {"NCCL_P2P_DISABLE": "1", "NCCL_NET_GDR_LEVEL": "LOC", "NCCL_IB_TIMEOUT": "22"}
    nccl_init(f, "nccl.log", start - 20, env=env, gdr=False, p2p="SHM/direct/direct", version="2.21.5+cuda12.4")
    iter_lines(f, "train.log", "megatron", every=20, gbs_fn=lambda t: 1024, seq_fn=lambda t: 4096,
               tflops_fn=lambda t, d: 410 * 1.38 / d)
    decoy_power_cap(f, 5, rng)
    decoy_warm_gpu(f.hosts[2], 3, 3.0)
    f.incident = {"title": "13b pretrain on the new DGX pod runs at ~330 TFLOP/s/GPU, acceptance run did ~410",
                  "reported": "Slow since the first iteration. Container image was rebuilt with a debugging profile last week."}
    f.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    return f


def b29(case, seed):
    f, rng = _fleet(case, seed, "nid", 12, gen="H200", window=window("2026-02-02T19:30:00Z", 60),
                    dmesg_style="kmsg", sample=60, baseline=300)
    f.rail_fabric(leaf_fmt="rail-{i}")
    start = f.t0 + 4 * 60
    j = mk_job(f, "llm-70b-pretrain", 2.6, 3.6, start=start, every=10)
    f.idle_nics = {f"mlx5_{i}" for i in range(2, 8)}
    for hh in f.hosts:
        for n in hh.nics[:2]:
            n.base["util"] = 4.0
    f.log("train.log", start - 40, f"{_stamp(start - 40)} INFO launcher: env NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_IB_GID_INDEX=3 NCCL_SOCKET_IFNAME=ib0 NCCL_CROSS_NIC=0 TORCH_NCCL_ASYNC_ERROR_HANDLING=1")
    nccl_init(f, "nccl.log", start - 30, hcas=["mlx5_0", "mlx5_1"], version="2.23.4+cuda12.6", oob="ib0")
    iter_lines(f, "train.log", "titan", every=20, gbs_fn=lambda t: 96, seq_fn=lambda t: 4096)
    decoy_power_cap(f, 4, rng)
    decoy_static_sbe(f.hosts[6], 6, 11)
    now = 96 * 4096 / f.nranks / (2.6 + 3.6)
    was = 96 * 4096 / f.nranks / (2.6 + 3.6 / 4)
    f.incident = {"title": f"70b run: ~{now:,.0f} tokens/s/GPU since launch, acceptance test on this pod did ~{was:,.0f}",
                  "reported": "All 8 NICs per node are up and passed ib_write_bw. Launch scripts were copied from the 2-NIC dev cluster."}
    f.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    return f


# ------------------------------------------------------------------------------------------ healthy
def b30(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 16, gen="H100", window=window("2026-03-03T02:40:00Z", 90),
                    dmesg_style="journal", sample=120, spares=1)
    j = mk_job(f, "llm-34b-pretrain", 0.82, 0.26, every=20, first_step=40000)
    t_r = f.t0 + 32 * 60
    j.restarts.append((t_r, t_r + 6 * 60, 0))
    j.scale.append((t_r, 2.0))
    j.simulate()
    # the relaunch resumes from the checkpoint at the last multiple of 1000
    meta = list(j.steps_meta)
    before = [m for m in meta if m[1] < t_r]
    ck = (before[-1][0] // 1000) * 1000
    shift = None
    fixed = []
    for step, t, d in meta:
        if t >= t_r:
            if shift is None:
                shift = step - ck
            step -= shift
        fixed.append((step, t, d))
    j.steps_meta[:] = fixed
    megatron_args(f, "train.log", f.tm - 30, global_batch_size=1024, micro_batch_size=2, seq_length=4096,
                  tensor_model_parallel_size=4, pipeline_model_parallel_size=2, lr="0.0003")
    megatron_args(f, "train.log", t_r + 6 * 60 - 40, global_batch_size=2048, micro_batch_size=2, seq_length=4096,
                  tensor_model_parallel_size=4, pipeline_model_parallel_size=2, lr="0.0003")
    f.log("train.log", t_r + 6 * 60 - 20, f" [{_stamp(t_r + 6 * 60 - 20)}] loading checkpoint from /ckpt/llm-34b/iter_{ck:07d} at iteration {ck}")
    iter_lines(f, "train.log", "megatron", every=50, gbs_fn=lambda t: 2048 if t >= t_r else 1024, seq_fn=lambda t: 4096)
    decoy_power_cap(f, 6, rng)
    decoy_old_xid(f, f.hosts[4], 6, 119, 8.0, "pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU6 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c).")
    nccl_init(f, "nccl.log", f.tm - 20, warn=HARMLESS_WARNS[1])
    f.incident = {"title": f"llm-34b step time doubled after the {hhmm(t_r)} restart",
                  "reported": "Job was relaunched by the scheduler after maintenance; now ~2.2 s per step instead of ~1.1 s."}
    f.truth = {"root_cause": "healthy", "component": None}
    return f


def b31(case, seed):
    f, rng = _fleet(case, seed, "ip", 8, gen="H200", window=window("2026-07-11T09:00:00Z", 80),
                    dmesg_style="plain", sample=60)
    j = mk_job(f, "llm-8b-longctx", 0.7, 0.2, every=10, first_step=12000)
    t_r = f.t0 + 25 * 60
    j.restarts.append((t_r, t_r + 5 * 60, 0))
    j.scale.append((t_r, 2.08))
    j.simulate()
    meta = list(j.steps_meta)
    last = max(s for s, t, d in meta if t < t_r)
    ck = (last // 500) * 500
    fixed = []
    shift = None
    for step, t, d in meta:
        if t >= t_r:
            shift = step - ck if shift is None else shift
            step -= shift
        fixed.append((step, t, d))
    j.steps_meta[:] = fixed
    f.log("train.log", f.tm - 30, f"[rank0]:[titan] {_stamp(f.tm - 30)},101 - root - INFO - Training starts at step {12001}, with local batch size 4, global batch size 256, sequence length 4096, total steps 60000")
    f.log("train.log", t_r + 5 * 60 - 15, f"[rank0]:[titan] {_stamp(t_r + 5 * 60 - 15)},554 - root - INFO - Training starts at step {ck + 1}, with local batch size 2, global batch size 128, sequence length 16384, total steps 60000 (context extension stage 2)")
    iter_lines(f, "train.log", "titan", every=20, gbs_fn=lambda t: 128 if t >= t_r else 256,
               seq_fn=lambda t: 16384 * 0.99 if t >= t_r else 4096)
    decoy_warm_gpu(f.hosts[5], 3, 5.0)
    decoy_static_sbe(f.hosts[2], 0, 15)
    decoy_power_cap(f, 4, rng)
    nccl_init(f, "nccl.log", f.tm - 20, warn=HARMLESS_WARNS[0])
    f.incident = {"title": "8b run: step time 2x since the restart at " + hhmm(t_r),
                  "reported": "Was ~0.9 s/step this morning, now ~1.9 s. Did something happen to the nodes?"}
    f.truth = {"root_cause": "healthy", "component": None}
    return f


def b32(case, seed):
    f, rng = _fleet(case, seed, "aws", 6, gen="A100", window=window("2026-08-21T11:10:00Z", 80),
                    dmesg_style="journal", sample=60)
    j = mk_job(f, "llm-3b-midtrain", 0.62, 0.15, every=20, cols=("compute_s", "loss"), first_step=88000)
    t_r = f.t0 + 30 * 60
    j.restarts.append((t_r, t_r + 4 * 60, 0))
    j.simulate()
    meta = list(j.steps_meta)
    last = max(s for s, t, d in meta if t < t_r)
    ck = (last // 250) * 250
    fixed, shift = [], None
    for step, t, d in meta:
        if t >= t_r:
            shift = step - ck if shift is None else shift
            step -= shift
        fixed.append((step, t, d))
    j.steps_meta[:] = fixed
    f.log("train.log", f.tm - 20, f"{_stamp(f.tm - 20)} INFO data: mixture v7 weights web=0.72 code=0.18 math=0.05 books=0.05 (avg doc 1,310 tokens, packing=True)")
    f.log("train.log", t_r + 4 * 60 - 10, f"{_stamp(t_r + 230)} INFO data: mixture v8 weights web=0.45 code=0.30 math=0.15 books=0.10 (avg doc 2,480 tokens, packing=True)")
    f.log("train.log", t_r + 4 * 60 - 9, f"{_stamp(t_r + 231)} INFO trainer: resumed from checkpoint step {ck}; data loader state reset for new mixture")

    class Samples:
        def __call__(self, t):
            return 1024 if t < t_r else 540
    iter_lines(f, "train.log", "hf", every=50, gbs_fn=Samples(), seq_fn=lambda t: 4096 if t < t_r else 4096 * 1024 / 540)
    decoy_power_cap(f, 3, rng)
    decoy_old_xid(f, f.hosts[3], 1, 63, 25.0, "pid=1850, Row Remapper: New row marked for remapping, reset gpu to activate")
    f.hosts[3].gpus[1].start["rows_cor"] = 1
    f.incident = {"title": "midtrain: samples/s down 47% and loss jumped after the 11:40 restart",
                  "reported": "Data team pushed the v8 mixture today. Please check the nodes anyway, the drop is big."}
    f.truth = {"root_cause": "healthy", "component": None}
    return f


def b33(case, seed):
    f, rng = _fleet(case, seed, "hgx", 16, gen="H100", window=window("2026-09-26T00:00:00Z", 90),
                    dmesg_style="caller", sample=120)
    j = mk_job(f, "llm-65b-pretrain", 1.55, 0.4, every=20, first_step=150000)
    f.topo_shuffle = True
    t_r = f.t0 + 35 * 60
    j.restarts.append((t_r, t_r + 7 * 60, 0))
    j.scale.append((t_r, 1.167))
    j.simulate()
    meta = list(j.steps_meta)
    last = max(s for s, t, d in meta if t < t_r)
    ck = (last // 500) * 500
    fixed, shift = [], None
    for step, t, d in meta:
        if t >= t_r:
            shift = step - ck if shift is None else shift
            step -= shift
        fixed.append((step, t, d))
    j.steps_meta[:] = fixed
    megatron_args(f, "train.log", f.tm - 30, global_batch_size=1536, micro_batch_size=1, seq_length=4096,
                  tensor_model_parallel_size=4, pipeline_model_parallel_size=2, data_parallel_size=16, sequence_parallel=True)
    megatron_args(f, "train.log", t_r + 7 * 60 - 30, global_batch_size=1792, micro_batch_size=1, seq_length=4096,
                  tensor_model_parallel_size=8, pipeline_model_parallel_size=1, data_parallel_size=16, sequence_parallel=True)
    iter_lines(f, "train.log", "megatron", every=20, gbs_fn=lambda t: 1792 if t >= t_r else 1536, seq_fn=lambda t: 4096)
    decoy_power_cap(f, 8, rng)
    decoy_rx_pause_victims(f, [f.hosts[4].nics[6], f.hosts[12].nics[0]], rng)
    decoy_warm_gpu(f.hosts[9], 5, 4.0)
    nccl_init(f, "nccl.log", f.tm - 20)
    f.incident = {"title": "65b: iteration time +17% after relaunch at " + hhmm(t_r),
                  "reported": "We switched the layout to TP=8 PP=1 to fix a pipeline bubble; expected it to be faster, it's slower."}
    f.truth = {"root_cause": "healthy", "component": None}
    return f


def b34(case, seed):
    f, rng = _fleet(case, seed, "fqdn", 12, gen="H100", window=window("2026-11-14T13:00:00Z", 90),
                    dmesg_style="T", sample=60, spares=1)
    j = mk_job(f, "llm-20b-pretrain", 1.1, 0.3, every=20)
    j.compute_jitter = 0.03
    caps = decoy_power_cap(f, 11, rng)
    decoy_warm_gpu(f.hosts[2], 5, 5.0)
    decoy_old_xid(f, f.hosts[8], 2, 13, 4.0, "pid=1797828, name=pt_main_thread, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter")
    decoy_static_sbe(f.hosts[6], 4, 8)
    nccl_init(f, "nccl.log", f.tm + 10, warn=HARMLESS_WARNS[1])
    iter_lines(f, "train.log", "megatron", every=50, gbs_fn=lambda t: 1024, seq_fn=lambda t: 4096)
    h, g = caps[0]
    f.incident = {"title": "Power-cap clock events on many GPUs of llm-20b, please check",
                  "reported": f"Grafana shows 'SW Power Cap' on {len(caps)} GPUs (e.g. {h.name} GPU {g.index}). Step time looks normal to me, but the dashboard alert is red.",
                  "alerts": [{"status": "firing", "labels": {"alertname": "GPUClocksEventPowerCap", "Hostname": h.name, "gpu": str(g.index), "severity": "info"},
                              "annotations": {"summary": "GPU clock event reason SW power cap active"}, "startsAt": dt(f.t0 + 300).strftime("%Y-%m-%dT%H:%M:%SZ"),
                              "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "", "fingerprint": "0c1e3a5b7d9f2468"}]}
    f.truth = {"root_cause": "healthy", "component": None}
    return f


def b35(case, seed):
    f, rng = _fleet(case, seed, "dgx", 6, gen="H100", window=window("2026-04-14T07:30:00Z", 80),
                    dmesg_style="journal", sample=60)
    j = mk_job(f, "ray-train-embed", 0.48, 0.14, every=25)
    t_on = f.t0 + 26 * 60
    spans = _stalls(j, rng, t_on, f.t1, every=(30, 120), length=(60, 180), extra=(0.4, 1.4))
    iter_lines(f, "ray_train.log", "ray", every=25, gbs_fn=lambda t: 4096, seq_fn=lambda t: 512)
    for k in range(0, int((f.t1 - f.tm) // 600)):
        tt = f.tm + 600 * (k + 1)
        blocked = sum(min(b, tt) - max(a, tt - 600) for a, b, s in spans if a < tt and b > tt - 600)
        blocked_s = 2.1 + blocked * 0.55
        f.log("ray_train.log", tt, f"(RayTrainWorker pid=31000, ip=10.0.4.11) Dataset iterator time breakdown (last 10 min):")
        f.log("ray_train.log", tt + 0.001, f"(RayTrainWorker pid=31000, ip=10.0.4.11) * Total time overall: 10.00min")
        f.log("ray_train.log", tt + 0.002, f"(RayTrainWorker pid=31000, ip=10.0.4.11)     * Total time in Ray Data iterator initialization code: 0.0us")
        f.log("ray_train.log", tt + 0.003, f"(RayTrainWorker pid=31000, ip=10.0.4.11)     * Total time user thread is blocked by Ray Data iter_batches: {blocked_s:.1f}s")
        f.log("ray_train.log", tt + 0.004, f"(RayTrainWorker pid=31000, ip=10.0.4.11)     * Total execution time for user thread: {600 - blocked_s:.1f}s")
    for hh in f.hosts:
        hh.pressure = dict(cpu=(1.2, 0.0), mem=(0.0, 0.0), io=(rng.uniform(22, 40), rng.uniform(18, 35)))
        lines = []
        for m in range(4):
            w = rng.uniform(8, 95)
            since = dt(f.t1 - w).strftime("%H:%M:%S")
            lines.append(f"Waiting {w:.4f} sec since {since}, monitored, thread {70000 + sh(hh.name, m) % 9000} "
                         f"PrefetchWorkerThread: for I/O completion on disk nsd{(sh(hh.name, m, 2) % 24):02d}")
        lines.append(f"Waiting 0.0009 sec since {dt(f.t1 - 1).strftime('%H:%M:%S')}, monitored, thread 3311 RcvWorkerThread: on ThCond 0x7F31A8011C58 (MsgRecordCondvar), reason 'RPC wait'")
        hh.cmd_extra["cmd/mmdiag---waiters.txt"] = "=== mmdiag: waiters ===\n" + "\n".join(lines) + "\n"
    decoy_power_cap(f, 3, rng)
    decoy_warm_gpu(f.hosts[1], 6, 4.0)
    nccl_init(f, "nccl.log", f.tm + 10)
    f.incident = {"title": "embedding trainer (Ray Train) samples/s down 35-50% since ~07:55",
                  "reported": "Reads come from /gpfs/datasets via Ray Data read_parquet. The storage team is rebalancing the filesystem this week."}
    f.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    return f
