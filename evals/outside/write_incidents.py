#!/usr/bin/env python3
"""Write the "outside" evaluation set: independently authored incidents in bundle format v1.

    python3 evals/outside/write_incidents.py --out DIR        # DIR/<case>/bundle/... + DIR/<case>/truth.json
    python3 evals/outside/write_incidents.py --list           # the cases, their truth and what each presents

Deterministic: each case draws from its own ``random.Random`` seeded by its name, gzip members
carry mtime 0 and no name, and nothing reads the clock. Stdlib only. See README.md beside this file.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import (  # noqa: E402
    Case, Segment, collected, dcgm_metrics, dmesg, ethtool_fec, ethtool_s, ibstat, incident, iso, lspci,
    node_metrics, nccl_init, nvidia_smi_q, nvlink_e, nvml_json, pressure, ramp, sdr_fan, sel, sonic_interfaces_counters,
    sonic_pfc_counters, sonic_pfcwd, steps, switch_metrics, sys_gpu, sys_nic, top, topology, trainer_procs,
)

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# --------------------------------------------------------------------------------------------
# shared emission


def emit(c: Case, segments, *, slow=None, comm=None, extra=None, columns=("compute_s", "loss"), steps_gz=None,
         checksum_bad=None, dcgm=True, dcgm_kw=None, node_om=False, node_kw=None, nodes=True, nvsmi=True,
         lspci_all=False, throttle_words=False, ethtool=False, old_kernel=False, topo_kw=None, collected_keys=("before", "now", "boot"),
         dmesg_styles=None, dmesg_gz=False, ibstat_on=True, ranks=None, nvml_events=None, job_steps=True, topo=True, aer_hosts=()):
    incident(c, ranks=ranks)
    if topo:
        topology(c, **(topo_kw or {}))
    if job_steps:
        steps(c, segments, slow=slow, comm=comm, extra=extra, columns=columns, checksum_bad=checksum_bad, gz=steps_gz)
    if dcgm:
        dcgm_metrics(c, **(dcgm_kw or {}))
    if node_om:
        node_metrics(c, **(node_kw or {}))
    for i, h in enumerate(node_hosts(c) if nodes is True else (nodes or [])):
        collected(c, h, collected_keys)
        sys_gpu(c, h, old_kernel=old_kernel, aer=h.name in aer_hosts)
        sys_nic(c, h, old_kernel=old_kernel)
        nvml_json(c, h, events=(nvml_events or {}).get(h.name, ()))
        if nvsmi:
            nvidia_smi_q(c, h, throttle_words=throttle_words)
        if lspci_all:
            lspci(c, h)
        if ibstat_on:
            ibstat(c, h)
        if ethtool:
            for nic in h.nics:
                ethtool_s(c, h, nic)
        style = (dmesg_styles or {}).get(h.name)
        dmesg(c, h, c.kern.get(h.name, ()), style=style, gz=dmesg_gz)


def put_logs(c: Case) -> None:
    """The job's logs, stored when the case is complete (cases fill ``c.logs`` after ``emit``)."""
    for name, lines in c.logs.items():
        c.put(f"job/logs/{name}", "\n".join(lines) + "\n")


def node_hosts(c: Case) -> list:
    """Hosts the collector snapshotted: all of a small fleet; of a larger one, the hosts that
    monitoring flagged (anything already recorded for them: kernel lines, BMC, top, ...), the
    spares, and a random half of the rest (so a host's presence says little)."""
    if len(c.hosts) <= 8:
        return list(c.hosts)
    comp = (c.truth.get("component") or "").split("/")[0]
    flagged = {h.name for h in c.hosts if h.name == comp or h.spare or h.name in c.kern
               or any(k.startswith(f"bundle/nodes/{h.name}/") for k in c.files)}
    rest = [h for h in c.hosts if h.name not in flagged]
    want = max(8, len(c.hosts) // 2) - len(flagged)
    picked = set(h.name for h in c.rng.sample(rest, max(0, min(len(rest), want))))
    return [h for h in c.hosts if h.name in flagged or h.name in picked]


def rank_host(c: Case, r: int):
    return c.job_hosts[r // 8], r % 8


def n01(c: Case, *key) -> float:
    """Deterministic noise in [0, 1)."""
    return (c._noise(*key) + 1) / 2


def cap_some(c: Case, count: int, *, exclude=()):
    """Mark ``count`` GPUs at normal software power cap (a healthy fleet always has a few)."""
    picks = []
    while len(picks) < count:
        h = c.rng.choice(c.job_hosts)
        g = c.rng.randrange(8)
        if (h.name, g) not in picks and h.name not in exclude:
            picks.append((h.name, g))
    c.capped.update(picks)
    return picks


def old_xid(c: Case, h, g: int, days: float, code: int = 13):
    t = c.t0 - days * 86400
    if h.boot > t - 3600:  # the host has been up since before that event
        h.boot = int(t - 86400 * (3 + 4 * n01(c, "boot", h.name)))
    bus = h.gpus[g].bus
    if code == 13:
        return [(t, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 13, pid=2219931, name=python, Graphics SM Warp Exception on (GPC 3, TPC 1, SM 0): Out Of Range Address"),
                (t + 0.0001, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 13, pid=2219931, name=python, Graphics Exception: ESR 0x51e730=0x205000e 0x51e734=0x0 0x51e728=0x4c1eb72 0x51e72c=0x174")]
    if code == 79:
        return [(t, 3, f"NVRM: GPU at PCI:0000:{bus}:00: {h.gpus[g].uuid}"),
                (t + 0.00001, 3, f"NVRM: Xid (PCI:0000:{bus}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
                (t + 0.00002, 3, f"NVRM: GPU 0000:{bus}:00.0: GPU has fallen off the bus.")]
    if code == 31:
        return [(t, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 31, pid=77120, name=pt_main_thread, channel 0x00000012, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_2 faulted @ 0x7f1c_4a000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")]
    raise ValueError(code)


def megatron_iter(t, it, total, ms, gbs, lr, loss, tflops, consumed):
    return (f" [{iso(t).replace('T', ' ').rstrip('Z')}] iteration {it:>8}/{total:>8} | consumed samples: {consumed:>12} | "
            f"elapsed time per iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | learning rate: {lr:.6E} | "
            f"global batch size: {gbs:>5} | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 0.{812 + it % 97} | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |")


def step_times(c: Case, seg: Segment, dur_fn):
    """(step, start) pairs of a segment at the duration the model gives (for log lines)."""
    t, s, out = seg.t_start, seg.first_step, []
    while t < seg.t_end:
        d = dur_fn(t, s)
        out.append((s, t, d))
        t += d * seg.every
        s += seg.every
    return out


def torch_ts(t: float) -> str:
    from datetime import datetime, timezone
    dt = datetime.fromtimestamp(t, tz=timezone.utc)
    return f"{dt:%m%d %H:%M:%S}.{int((t % 1) * 1e9):09d}"


# --------------------------------------------------------------------------------------------
# healthy


@case
def oc01():
    c = Case("oc-01", root_cause="healthy", component=None,
             title="DCGM clock-event alerts: SW Power Cap active on 9 GPUs of llm-34b-sft",
             reported="Alertmanager paged on GpuClockEventPowerCap for several GPUs overnight. Step time on the dashboard looks like the usual ~0.88 s "
                      "but the on-call wants a check that the job is not being throttled.",
             start="2026-03-09T01:30:00Z", minutes=90, job="llm-34b-sft", hosts=12, naming="dgx", dmesg="ctime",
             notes="normal software power capping on 9 GPUs across 5 hosts, clocks 2-4% under max; old XID 13 from last week",
             presents="1 normal power management (several GPUs, not tied to any slow rank); history XIDs")
    capped = cap_some(c, 9)
    c.alerts = [{"status": "firing", "labels": {"alertname": "GpuClockEventPowerCap", "severity": "warning", "Hostname": hn, "gpu": str(g)},
                 "annotations": {"summary": f"GPU {g} on {hn} reports clock event reason SW Power Cap"},
                 "startsAt": iso(c.t0 + 300 + 60 * i), "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus:9090/graph",
                 "fingerprint": f"{0xa1b2c3d4e5f60000 + i:016x}"} for i, (hn, g) in enumerate(capped[:4])]
    h3 = c.host(3)
    c.kern[h3.name] = old_xid(c, h3, 5, 6.4, 13)
    emit(c, [Segment(c.job_start, c.t1, 41000)])
    return c


@case
def oc02():
    c = Case("oc-02", root_cause="healthy", component=None,
             title="Step time up 35% after the 02:40 restart (0.88 s -> 1.19 s per step)",
             reported="gpt-52b pretraining was restarted from checkpoint at about 02:40 after a scheduled node drain. Since then each iteration "
                      "takes ~1.2 s instead of ~0.88 s. No hardware alerts. Is something wrong with the new allocation?",
             start="2026-04-22T02:00:00Z", minutes=100, job="gpt-52b-pretrain", hosts=16, naming="hgx", dmesg="plain",
             notes="relaunch with global batch 1024 -> 1536 (same micro batch, more accumulation); TFLOP/s per GPU unchanged; static SBE counts on one GPU",
             presents="7 slowdown the job explains itself (config lines across the restart), resumed step numbers")
    cap_some(c, 4)
    restart = c.t0 + 40 * 60
    c.job_start = c.t0 - 5 * 3600
    gap_end = restart + 7 * 60
    sb = c.host(9).gpus[2]

    def static_sbe(case, h, g, t, s):
        if h is c.host(9) and g is sb:
            s["sbe"], s["sbe_agg"] = 3, 11

    c.gpu_mods.append(static_sbe)

    def pause(case, h, g, t, s):  # the job is down between the stop and the relaunch
        if restart <= t < gap_end and case.running(h, t):
            s.update(util=0, tensor=0.0, sm_active=0.0, sm=345, power=round(case.m["idle"] + 3, 1), reasons=1, pstate="P8")

    c.gpu_mods.append(pause)
    seg1 = Segment(c.t0 - 1800, restart, 96400, compute=0.62, comm=0.26)
    resume = 96400 + int((restart - 600 - seg1.t_start) / 0.88) // 10 * 10  # last checkpoint ~10 min before the stop
    seg2 = Segment(gap_end, c.t1, resume, compute=0.93, comm=0.262)
    emit(c, [seg1, seg2])
    log = []
    for s, t, d in step_times(c, seg1, lambda t, s: 0.885):
        if s % 50 == 0:
            log.append(megatron_iter(t, s, 500000, d * 1000, 1024, 2.4e-4, 2.21 - s * 1e-7, 401.7, s * 1024))
    log += [f" [{iso(restart).replace('T', ' ').rstrip('Z')}] [exiting program after receiving SIGTERM.]", "", "using world size: 128, data-parallel size: 16, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1",
            "------------------------ arguments ------------------------",
            "  global_batch_size ............................... 1536", "  micro_batch_size ................................ 4",
            "  seq_length ...................................... 4096", "  tensor_model_parallel_size ...................... 8",
            "  pipeline_model_parallel_size .................... 1", "  lr .............................................. 0.00024",
            "  load ............................................ /checkpoints/gpt-52b", "  rampup_batch_size ............................... None",
            "-------------------- end of arguments ---------------------",
            f" loading checkpoint from /checkpoints/gpt-52b at iteration {resume}",
            "  successfully loaded checkpoint from /checkpoints/gpt-52b [ t 1/8, p 1/1 ] at iteration " + str(resume)]
    for s, t, d in step_times(c, seg2, lambda t, s: 1.19):
        if s % 50 == 0:
            log.append(megatron_iter(t, s, 500000, d * 1000 + 3, 1536, 2.4e-4, 2.2 - s * 1e-7, 402.3 + (s % 7) * 0.1, s * 1536))
    c.logs["megatron-rank0.log"] = log
    return c


@case
def oc03():
    c = Case("oc-03", root_cause="healthy", component=None,
             title="llama-ft relaunch: 1.9 s/it instead of 1.0 s/it",
             reported="The fine-tune was relaunched at 09:20 with the long-context recipe. Iterations now take almost twice as long. A spare node "
                      "in the reservation also shows PCIe Gen1 in nvidia-smi.",
             start="2026-05-14T08:50:00Z", minutes=80, job="llama-70b-longctx", hosts=10, spares=1, naming="fqdn", dmesg="journal",
             hostname_label="hostname", model="H200",
             notes="relaunch with sequence length 4096 -> 8192 (tokens per step doubled, tokens/s per GPU unchanged); idle spare at PCIe Gen1",
             presents="7 explained slowdown (Lightning/NeMo config lines); spare host idle PCIe gen decoy; healthy")
    relaunch = c.t0 + 30 * 60
    c.job_start = c.t0 - 2 * 3600
    c.gpu_mods.append(lambda case, h, g, t, s: s.update(util=0, tensor=0.0, sm=345, power=80.0, reasons=1, pstate="P8")
                      if (relaunch - 240 <= t < relaunch and case.running(h, t)) else None)
    seg1 = Segment(c.t0 - 1200, relaunch - 240, 1200, compute=0.71, comm=0.29, every=5)
    seg2 = Segment(relaunch, c.t1, 0, compute=1.55, comm=0.34, every=5)
    emit(c, [seg1, seg2], columns=("compute_s",))
    lines = []
    for seq, seg, dur in ((4096, seg1, 1.0), (8192, seg2, 1.89)):
        t = seg.t_start
        lines += [f"[NeMo I {iso(t - 60).replace('T', ' ').rstrip('Z')} exp_manager:396] Experiments will be logged at /results/llama-70b-longctx",
                  f"[NeMo I {iso(t - 50).replace('T', ' ').rstrip('Z')} train:58] Config:",
                  "model:", f"  encoder_seq_length: {seq}", f"  micro_batch_size: 1", f"  global_batch_size: 80",
                  f"  tensor_model_parallel_size: 8", "  data:", f"    seq_length: {seq}",
                  "GPU available: True (cuda), used: True", "Trainer already configured with model summary callbacks: [<class 'lightning.pytorch.callbacks.rich_model_summary.RichModelSummary'>]."]
        tps = 80 * seq / dur / 80
        for k in range(1, 6):
            it = int(k * 280 / dur)
            lines.append(f"Epoch 0: {int(it / 50):3d}%| | {it}/5000 [{int(it * dur) // 60:02d}:{int(it * dur) % 60:02d}<, {1 / dur:.2f}it/s, "
                         f"v_num=3, reduced_train_loss={1.92 - 0.01 * k:.3f}, global_step={it}.0, consumed_samples={it * 80}.0, train_step_timing in s={dur:.3f}, "
                         f"tokens_per_sec_per_gpu={tps:.0f}]")
    c.logs["nemo_log_globalrank-0_localrank-0.log"] = lines
    return c


@case
def oc04():
    c = Case("oc-04", root_cause="healthy", component=None,
             title="StepTimeP99High firing: steps of 35-45 s every ~15 minutes",
             reported="p99 step time alert on moe-16x8b. Most steps take 0.9 s but every 15 minutes or so a step takes over half a minute.",
             start="2026-06-03T13:00:00Z", minutes=90, job="moe-16x8b", hosts=8, naming="ip", dmesg="caller",
             notes="the job saves a checkpoint every 1000 steps (DeepSpeed save lines match the long steps); 3 GPUs at normal power cap",
             presents="7 the job explains its own slow steps; 1 normal power capping")
    cap_some(c, 3)
    seg = Segment(c.job_start, c.t1, 0, compute=0.63, comm=0.27, every=10)
    ckpt = {}

    def extra(t, s):
        if s % 1000 == 0 and s > 0:
            ckpt.setdefault(s, (t, 36.0 + 8 * n01(c, "ck", s)))
            return ckpt[s][1]  # the save blocks the step that triggers it
        return 0.0

    emit(c, [seg], extra=extra)
    log = []
    for s, (t, d) in sorted(ckpt.items()):
        if t < c.t0 - 3600:
            continue
        log += [f"[{iso(t).replace('T', ' ').rstrip('Z')},101] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step{s} is about to be saved!",
                f"[{iso(t + 0.4).replace('T', ' ').rstrip('Z')},512] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: /ckpt/moe-16x8b/global_step{s}/mp_rank_00_model_states.pt",
                f"[{iso(t + d).replace('T', ' ').rstrip('Z')},020] [INFO] [engine.py:3536:_save_zero_checkpoint] zero checkpoint saved /ckpt/moe-16x8b/global_step{s}/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt",
                f"[{iso(t + d).replace('T', ' ').rstrip('Z')},044] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step{s} is ready now!",
                f"[{iso(t + d + 1).replace('T', ' ').rstrip('Z')},310] [INFO] [logging.py:96:log_dist] [Rank 0] step={s + 10}, skipped=0, lr=[0.00018], mom=[(0.9, 0.95)]",
                f"[{iso(t + d + 1).replace('T', ' ').rstrip('Z')},311] [INFO] [timer.py:260:stop] epoch=0/micro_step={(s + 10) * 4}/global_step={s + 10}, RunningAvgSamplesPerSec=142.3, CurrSamplesPerSec=141.9, MemAllocated=61.2GB, MaxMemAllocated=70.4GB"]
    c.logs["deepspeed-train.log"] = log
    return c


# --------------------------------------------------------------------------------------------
# power


@case
def oc05():
    c = Case("oc-05", root_cause="power_throttle", component=None,
             title="Throughput down ~35% since 03:25, no XID, no alerts",
             reported="Tokens/s on llm-176b fell at about 03:25 and stayed down. Nothing in the GPU alerts.",
             start="2026-02-17T02:50:00Z", minutes=90, job="llm-176b", hosts=16, naming="hgx", dmesg="journal",
             notes="host PSU failure: BMC SEL power-supply events; all 8 GPUs of the host at HW Power Brake Slowdown; other hosts have normal power capping",
             presents="4 host-level fault (component = host); 8 BMC SEL evidence; 1 decoy power capping elsewhere")
    bad = c.host(6)
    c.truth["component"] = bad.name
    onset = c.t0 + 35 * 60
    cap_some(c, 6, exclude=(bad.name,))

    def brake(case, h, g, t, s):
        if h is bad and t >= onset and case.running(h, t):
            s.update(reasons=0x88, sm=1095 + int(60 * case._noise(h.name, g.index, int(t // 30))), power=round(318 + 20 * case._noise(g.index, int(t // 30)), 1),
                     tensor=round(s["tensor"] * 0.62, 3))
            s["power_violation"] += int(ramp(t, onset, 0.97e6))

    c.gpu_mods.append(brake)
    sel(c, bad, [(onset - 2, "Power Supply #0x63", "Failure detected", "Asserted"),
                 (onset - 2, "Power Supply #0x63", "Power Supply AC lost", "Asserted"),
                 (onset - 1, "Power Unit #0x01", "Redundancy Lost", "Asserted"),
                 (bad.boot + 400, "Power Unit #0x01", "Fully Redundant", "Asserted")])
    for h in c.hosts[:4]:
        if h is not bad:
            sel(c, h, [(h.boot + 400, "Power Unit #0x01", "Fully Redundant", "Asserted")])
    slow_r = set(c.ranks_of(bad))
    emit(c, [Segment(c.job_start, c.t1, 220000)], slow=lambda r, t: 1.55 if (r in slow_r and t >= onset) else 1.0,
         dcgm_kw=dict(extra_families=("DCGM_FI_DEV_POWER_VIOLATION",)))
    return c


@case
def oc06():
    c = Case("oc-06", root_cause="power_throttle", component=None,
             title="Step time 0.88 -> 1.07 s since 01:58",
             reported="vision-22b training slowed down a bit before 02:00. One node was touched by the facilities team last night, not sure which.",
             start="2026-01-28T01:30:00Z", minutes=75, job="vision-22b", hosts=8, naming="ip", model="A100", driver="525.105.17",
             reasons_family="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", dmesg="plain", hostname_label="instance",
             notes="one A100 with its enforced power limit at 250 W (others 400 W): SW Power Cap, clocks -29%, its rank slowest; 5 other GPUs at normal cap",
             presents="1 power cap that IS a fault: abnormal against peers and its rank is the slow one; old-driver throttle wording")
    bad_h, bad_g = c.host(4), 1
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    onset = c.t0 + 28 * 60
    cap_some(c, 5, exclude=(bad_h.name,))

    def lim(case, h, g, t, s):
        if h is bad_h and g.index == bad_g and t >= onset - 120:
            s["limit"] = 250
            if case.running(h, t) and t >= onset:
                s.update(reasons=0x4, sm=1005 + int(25 * case._noise(int(t // 30))), power=round(248.5 + case._noise(int(t // 30), "p"), 1))
                s["power_violation"] += int(ramp(t, onset, 0.99e6))

    c.gpu_mods.append(lim)
    rr = c.ranks_of(bad_h)[bad_g]
    emit(c, [Segment(c.job_start, c.t1, 51000, compute=0.6, comm=0.28)], slow=lambda r, t: 1.31 if (r == rr and t >= onset) else 1.0,
         throttle_words=True, dcgm_kw=dict(extra_families=("DCGM_FI_DEV_POWER_VIOLATION",)))
    return c


# --------------------------------------------------------------------------------------------
# thermal


@case
def oc07():
    c = Case("oc-07", root_cause="thermal_throttle", component=None,
             title="MFU 48% -> 39% since ~14:05",
             reported="Nothing obvious; job keeps running. Facilities mentioned a cooling ticket in row 4 earlier this week.",
             start="2026-07-08T13:40:00Z", minutes=80, job="code-34b", hosts=12, naming="node", dmesg="syslog",
             notes="host fan failure: ipmitool sdr shows two fans at 0 RPM, SEL fan events; all 8 GPUs of the host hot (86-91 C) with thermal slowdown",
             presents="4 host-level thermal fault (component = host); 8 BMC SEL and sdr fan evidence")
    bad = c.host(3)
    c.truth["component"] = bad.name
    onset = c.t0 + 25 * 60

    def hot(case, h, g, t, s):
        if h is bad and t >= onset - 300 and case.running(h, t):
            heat = min(1.0, (t - onset + 300) / 600)
            s["temp"] = int(s["temp"] + heat * (30 + 3 * case._noise(g.index, "h")))
            s["mem_temp"] = s["temp"] + 9
            if t >= onset:
                s["reasons"] = 0x20 if g.index % 3 else 0x68
                s["sm"] = 1530 + int(70 * case._noise(g.index, int(t // 30)))
                s["power"] = round(s["power"] * 0.82, 1)
                s["thermal_violation"] = int(ramp(t, onset, 0.9e6))

    c.gpu_mods.append(hot)
    sdr_fan(c, bad, [9840, 9720, 9900, 9660, 0, 0, 9780, 9810], bad=(4, 5))
    sdr_fan(c, c.host(0), [9840, 9720, 9900, 9660, 9610, 9701, 9780, 9810])
    sel(c, bad, [(onset - 420, "Fan #0x34", "Lower Critical going low", "Asserted"),
                 (onset - 419, "Fan #0x35", "Lower Critical going low", "Asserted"),
                 (onset - 418, "Fan #0x34", "Lower Non-recoverable going low", "Asserted"),
                 (onset + 200, "Temperature #0x30", "Upper Non-critical going high", "Asserted")])
    slow_r = set(c.ranks_of(bad))
    emit(c, [Segment(c.job_start, c.t1, 7300)], slow=lambda r, t: 1.27 if (r in slow_r and t >= onset) else 1.0,
         dcgm_kw=dict(extra_families=("DCGM_FI_DEV_THERMAL_VIOLATION",)))
    return c


@case
def oc08():
    c = Case("oc-08", root_cause="thermal_throttle", component=None,
             title="Job ~18% slower since 22:40",
             reported="rl-policy-70b step time went from 0.88 s to about 1.04 s. No alert fired.",
             start="2026-08-30T22:10:00Z", minutes=75, job="rl-policy-70b", hosts=8, naming="fqdn", model="H200", dmesg="ctime",
             hostname_label="hostname",
             notes="one GPU at 88-90 C with SW/HW thermal slowdown, its rank slowest; other GPUs 53-58 C; 4 GPUs at normal power cap",
             presents="device-level thermal fault among power-capped peers")
    bad_h, bad_g = c.host(2), 5
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    onset = c.t0 + 30 * 60
    cap_some(c, 4, exclude=(bad_h.name,))

    def hot(case, h, g, t, s):
        if h is bad_h and g.index == bad_g and case.running(h, t):
            s["temp"] = int(74 + min(1.0, max(0.0, (t - onset + 900) / 900)) * 15)
            if t >= onset:
                s.update(reasons=0x60 if int(t // 60) % 3 == 0 else 0x20, sm=1560 + int(60 * case._noise(int(t // 30))))
                s["thermal_violation"] = int(ramp(t, onset, 0.94e6))
            s["mem_temp"] = s["temp"] + 7

    c.gpu_mods.append(hot)
    rr = c.ranks_of(bad_h)[bad_g]
    emit(c, [Segment(c.job_start, c.t1, 12000)], slow=lambda r, t: 1.26 if (r == rr and t >= onset) else 1.0,
         dcgm_kw=dict(extra_families=("DCGM_FI_DEV_THERMAL_VIOLATION",), gz=True))
    return c


# --------------------------------------------------------------------------------------------
# PCIe


@case
def oc09():
    c = Case("oc-09", root_cause="pcie_downtrain", component=None,
             title="New allocation slow since launch: 1.06 s per step, same config used to do 0.88 s per step",
             reported="Launched at 10:04 on a fresh reservation. From the first step it runs 1.06 s/step; the identical job used to do 0.88 s per step "
                      "on the old nodes. The reservation also has a spare node.",
             start="2026-03-27T10:00:00Z", minutes=70, job="asr-13b", hosts=8, spares=1, naming="dash", dmesg="plain",
             notes="one GPU trained at 8.0 GT/s (Gen3) instead of 32.0 GT/s since boot (kernel 'limited by' line, lspci downgraded, PCIe replays); "
                   "no onset in the window; idle spare host at Gen1",
             presents="5 slow from the first step (expected numbers in the title); spare host PCIe gen decoy")
    bad_h, bad_g = c.host(5), 3
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    c.job_start = c.t0 + 4 * 60

    def down(case, h, g, t, s):
        if h is bad_h and g.index == bad_g:
            s["gen"] = 3
            s["replay"] = 1840 + int(ramp(t, case.job_start, 0.9))
            s["aer_rx"] = 233 + int(ramp(t, case.job_start, 0.05))
            s["aer_badtlp"] = 41

    c.gpu_mods.append(down)
    g = bad_h.gpus[bad_g]
    c.kern[bad_h.name] = [(bad_h.boot + 10.73, 6, f"pci 0000:{g.bus}:00.0: 63.012 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at 0000:{int(g.bus, 16) - 2:02x}:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)")]
    rr = c.ranks_of(bad_h)[bad_g]
    emit(c, [Segment(c.job_start, c.t1, 0)], slow=lambda r, t: 1.29 if r == rr else 1.0, lspci_all=True,
         dcgm_kw=dict(pre=600), aer_hosts=(bad_h.name, c.host(0).name, c.host(7).name))
    return c


@case
def oc10():
    c = Case("oc-10", root_cause="pcie_downtrain", component=None,
             title="All-reduce time up ~40% since 09:31, no rank stands out",
             reported="nccl busbw on the in-job probe dropped from ~360 GB/s to ~250 GB/s. Compute time per rank is flat.",
             start="2026-09-15T09:00:00Z", minutes=80, job="mm-90b", hosts=16, naming="aws", link_layer="Ethernet", dmesg="kmsg",
             notes="one NIC's PCIe link retrained to 16.0 GT/s x8 after a burst of AER correctable errors in the kernel log; outbound_pci_stalled rising",
             presents="2 in-window hardware event in a kernel log (AER burst, /dev/kmsg format); NIC-level PCIe fault")
    bad_h = c.host(9)
    nic = bad_h.nics[4]
    c.truth["component"] = f"{bad_h.name}/{nic.ibdev}"
    onset = c.t0 + 31 * 60

    def nicmod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.28 * (t - onset))
        if h is bad_h and n is nic:
            if t >= onset:
                s.update(gen=4, width=8)
                s["outbound_stalled_rd"] = int(ramp(t, onset, 5400))
                s["outbound_stalled_wr"] = int(ramp(t, onset, 2100))
                s["bytes"] -= int(s["rate"] * 0.25 * (t - onset))

    c.nic_mods.append(nicmod)
    ev = []
    root = f"0000:{int(nic.bus, 16) - 2:02x}:01.0"
    for k in range(14):
        t = onset - 40 + 2.3 * k
        ev += [(t, 3, f"pcieport {root}: AER: Corrected error received: 0000:{nic.bus}:00.0"),
               (t + 0.00002, 3, f"mlx5_core 0000:{nic.bus}:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
               (t + 0.00003, 3, f"mlx5_core 0000:{nic.bus}:00.0:   device [15b3:1021] error status/mask=00000001/00000000"),
               (t + 0.00004, 3, f"mlx5_core 0000:{nic.bus}:00.0:    [ 0] RxErr                  (First)")]
    ev.append((onset - 3, 4, f"mlx5_core 0000:{nic.bus}:00.0: mlx5_pcie_event:301:(pid 0): PCIe link speed/width changed: 16.0 GT/s x8 (was 32.0 GT/s x16)"))
    c.kern[bad_h.name] = ev
    emit(c, [Segment(c.job_start, c.t1, 88000, compute=0.55, comm=0.33)], comm=lambda t: 1.42 if t >= onset else 1.0,
         columns=("compute_s",), ethtool=True, lspci_all=False, nvsmi=False, node_om=True, node_kw=dict(step=60, gz=True),
         dcgm_kw=dict(step=60, gz=True))
    lspci(c, bad_h)
    lspci(c, c.host(2))
    return c


# --------------------------------------------------------------------------------------------
# fabric


@case
def oc11():
    c = Case("oc-11", root_cause="pfc_pause_storm", component=None,
             title="Training throughput down ~30% at 11:02; NCCL all-reduce busbw collapsed",
             reported="Every rank slowed at the same time. RoCE fabric. Several hosts show rx pause counters climbing.",
             start="2026-10-06T10:30:00Z", minutes=80, job="llm-13b-ablation", hosts=16, naming="dgx", link_layer="Ethernet",
             dmesg="journal",
             notes="host NIC transmits PFC pauses (tx_prio3_pause, storm warnings, rx_out_of_buffer); victims elsewhere only receive pauses; pfcwd on the leaf port stormed",
             presents="rx pause victims next to the real tx pause origin; SONiC pfcwd/pfc counters")
    bad_h = c.host(11)
    nic = bad_h.nics[2]
    c.truth["component"] = f"{bad_h.name}/{nic.ibdev}"
    onset = c.t0 + 32 * 60
    victims = [(c.host(i), c.host(i).nics[k]) for i, k in ((1, 2), (3, 2), (8, 5), (12, 2), (14, 0), (10, 2))]

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.5 * (t - onset))
        if h is bad_h and n is nic:
            s["tx_pause"] += int(ramp(t, onset, 2.1e4))
            s["tx_pause_dur"] += int(ramp(t, onset, 8.4e5))
            s["storm_warn"] += int(ramp(t, onset, 1 / 40))
            s["rx_out_of_buffer"] += int(ramp(t, onset, 1.2e3))
            s["rx_discards_phy"] += int(ramp(t, onset, 310))
        elif (h, n) in victims:
            s["rx_pause"] += int(ramp(t, onset, 3.1e3))
            s["rx_pause_dur"] += int(ramp(t, onset, 1.6e5))

    c.nic_mods.append(mod)
    leaf = next(sw for sw in c.switches if sw.name == nic.switch)
    ports = [n.port for h in c.hosts if h.nics[0].switch == leaf.name for n in h.nics]
    el = c.now - onset
    sonic_pfcwd(c, leaf, [(f"{p}:3", "stormed" if p == nic.port else "operational", "1/0" if p == nic.port else "0/0",
                           "0/51231008" if p == nic.port else f"{int(4.1e8 + 1e6 * i)}/0", "0/0", "0/51231008" if p == nic.port else "0/0", "0/0")
                          for i, p in enumerate(ports)])
    sonic_pfc_counters(c, leaf, ports, rx={p: (int(2.1e4 * el) if p == nic.port else 0) for p in ports},
                       tx={p: (int(3.1e3 * el) if any(v[1].port == p for v in victims) else 12) for p in ports})
    emit(c, [Segment(c.job_start, c.t1, 31000, compute=0.5, comm=0.38)], comm=lambda t: 2.05 if t >= onset else 1.0,
         ethtool=True, nvsmi=False, dcgm_kw=dict(step=60))
    return c


@case
def oc12():
    c = Case("oc-12", root_cause="pfc_pause_storm", component=None,
             title="Step time up ~55% since 16:20 on every rank",
             reported="RoCE cluster, nothing changed on the job. Host NIC counters show pauses received on one node, but that node's NICs send none.",
             start="2026-11-12T15:50:00Z", minutes=75, job="speech-8b", hosts=12, naming="fqdn", link_layer="Ethernet", dmesg="plain",
             notes="a leaf port keeps sending PFC pauses to a healthy host NIC (show pfc counters: Tx PFC3 on that port only); the host NIC only receives",
             presents="switch port as pause origin; host side shows only the victim's rx pauses")
    leaf = c.switches[1]
    bad_h = c.host(5)
    nic = bad_h.nics[3]
    port = nic.port
    c.truth["component"] = f"{leaf.name}/{port}"
    onset = c.t0 + 30 * 60

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.52 * (t - onset))
        if h is bad_h and n is nic:
            s["rx_pause"] += int(ramp(t, onset, 2.4e4))
            s["rx_pause_dur"] += int(ramp(t, onset, 9.1e5))
            s["xmit_wait"] += int(ramp(t, onset, 2.2e7))

    c.nic_mods.append(mod)
    ports = [n.port for h in c.hosts if h.nics[0].switch == leaf.name for n in h.nics]
    el = c.now - onset
    sonic_pfc_counters(c, leaf, ports, rx={p: 4 for p in ports}, tx={p: (int(2.4e4 * el) if p == port else 9) for p in ports})
    sonic_pfcwd(c, leaf, [(f"{p}:3", "operational", "0/0", f"{int(3.3e8 + 7e5 * i)}/0", "0/0", "0/0", "0/0") for i, p in enumerate(ports)])
    emit(c, [Segment(c.job_start, c.t1, 5000, compute=0.48, comm=0.4)], comm=lambda t: 2.2 if t >= onset else 1.0,
         ethtool=True, nvsmi=False, dcgm_kw=dict(step=60))
    return c


@case
def oc13():
    c = Case("oc-13", root_cause="ecmp_hash_polarization", component=None,
             title="Cross-rack all-reduce ~60% slower since the 04:00 maintenance window",
             reported="Fabric maintenance ran 04:00-04:20. Since then the job is slower; host NICs and GPUs look clean.",
             start="2026-05-30T03:40:00Z", minutes=90, job="llm-65b", hosts=24, naming="hgx", link_layer="Ethernet", dmesg="plain",
             notes="after the maintenance one leaf hashes nearly all traffic onto 2 of its 8 spine uplinks (ifHCOutOctets per uplink), discards on those two",
             presents="8 evidence only as spine-port series (snmp_exporter), no SONiC command outputs; no compute_s column")
    bad = c.switches[2]
    c.truth["component"] = bad.name
    onset = c.t0 + 40 * 60

    def rates(sw, p, t):
        if sw.tier != "leaf":
            return None
        base = 9.5e9 * (1 + 0.04 * c._noise(sw.name, p, int(t // 60)))
        if sw is bad and t >= onset:
            idx = int(p.replace("Ethernet", "")) // 4 - 32
            share = 0.49 if idx in (1, 6) else 0.0033
            v = 8 * 9.5e9 * 0.62 * share * (1 + 0.02 * c._noise(p, int(t // 60)))
            return (v, v)
        if t >= onset:
            base *= 0.62
        return (base, base)

    def disc(sw, p, t):
        if sw is bad and t >= onset and int(p.replace("Ethernet", "")) // 4 - 32 in (1, 6):
            return 4100.0
        return 0.0

    switch_metrics(c, rates, discards=disc)

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.38 * (t - onset))

    c.nic_mods.append(mod)
    emit(c, [Segment(c.job_start, c.t1, 140000, compute=0.52, comm=0.36)], comm=lambda t: 1.62 if t >= onset else 1.0,
         columns=("loss",), nvsmi=False, dcgm_kw=dict(step=60, gz=True), steps_gz=True, ethtool=False,
         nodes=c.hosts[::3])
    return c


# --------------------------------------------------------------------------------------------
# links


@case
def oc14():
    c = Case("oc-14", root_cause="link_degradation", component=None,
             title="Collective time up ~40% since 07:12, intermittent NCCL slowness",
             reported="RoCE job, no link flaps reported by the network team.",
             start="2026-04-04T06:50:00Z", minutes=70, job="embed-7b", hosts=8, naming="ip", link_layer="Ethernet", dmesg="journal",
             notes="one NIC's FEC uncorrectable blocks climb (ethtool -I --show-fec) with RoCE retransmission counters; no link down, no ethtool -S",
             presents="8 evidence only as FEC statistics and hw_counters")
    bad_h = c.host(6)
    nic = bad_h.nics[1]
    c.truth["component"] = f"{bad_h.name}/{nic.ibdev}"
    onset = c.t0 + 22 * 60

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.3 * (t - onset))
        if h is bad_h and n is nic:
            s["fec_corr"] += int(ramp(t, onset - 600, 9.1e4))
            s["fec_uncorr"] += int(ramp(t, onset, 37))
            s["out_of_sequence"] += int(ramp(t, onset, 61))
            s["packet_seq_err"] += int(ramp(t, onset, 14))
            s["local_ack_timeout_err"] += int(ramp(t, onset, 0.8))

    c.nic_mods.append(mod)
    for h in c.hosts:
        for n in h.nics:
            ethtool_fec(c, h, n)
    emit(c, [Segment(c.job_start, c.t1, 3000, compute=0.5, comm=0.36)], comm=lambda t: 1.4 if t >= onset else 1.0,
         nvsmi=False, dcgm_kw=dict(step=60), topo_kw=dict(ranks="implicit"))
    return c


@case
def oc15():
    c = Case("oc-15", root_cause="link_degradation", component=None,
             title="Intermittent slow steps since ~05:10",
             reported="Step time jumps between 0.9 and 1.6 s since about 05:10. RoCE. Switch counters were captured by the network team.",
             start="2026-02-02T04:45:00Z", minutes=70, job="diffusion-xl", hosts=12, naming="node", link_layer="Ethernet", dmesg="ctime",
             notes="a leaf port shows RX_ERR climbing in 'show interfaces counters' (frames from the host NIC arrive corrupted); host side sees only retransmissions",
             presents="8 switch counters only as SONiC show interfaces counters; switch-side port named")
    leaf = c.switches[1]
    bad_h = c.host(6)
    nic = bad_h.nics[5]
    c.truth["component"] = f"{leaf.name}/{nic.port}"
    onset = c.t0 + 25 * 60

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.25 * (t - onset))
        if h is bad_h and n is nic:
            s["local_ack_timeout_err"] += int(ramp(t, onset, 0.6))
            s["packet_seq_err"] += int(ramp(t, onset, 3))

    c.nic_mods.append(mod)
    ports = [n.port for h in c.hosts if h.nics[0].switch == leaf.name for n in h.nics] + [l["port"] for l in leaf.links]
    el = c.now - onset
    rows = {}
    for i, p in enumerate(ports):
        ok = int(9.1e10 + 3e8 * i)
        rows[p] = dict(rx_ok=ok, rx_err=(int(2900 * el) if p == nic.port else 0), rx_drp=(int(140 * el) if p == nic.port else 0),
                       tx_ok=ok + 77123, tx_err=0, tx_drp=0, rx_bps=f"{10.2 - 0.1 * (i % 5):.2f} GB/s", tx_bps=f"{10.1 - 0.1 * (i % 3):.2f} GB/s",
                       rx_util="20.40%", tx_util="20.20%")
    sonic_interfaces_counters(c, leaf, ports, rows)
    other = c.switches[0]
    oports = [n.port for h in c.hosts if h.nics[0].switch == other.name for n in h.nics]
    sonic_interfaces_counters(c, other, oports, {p: dict(rx_ok=int(9e10 + 1e8 * i), rx_err=0, rx_drp=0, tx_ok=int(9e10 + 1e8 * i + 5), tx_err=0, tx_drp=0,
                                                         rx_bps="10.05 GB/s", tx_bps="10.11 GB/s", rx_util="20.10%", tx_util="20.22%")
                                                 for i, p in enumerate(oports)})

    def comm(t):
        if t < onset:
            return 1.0
        return 1.0 + 0.8 * n01(c, "burst", int(t // 20))

    emit(c, [Segment(c.job_start, c.t1, 62000, compute=0.6, comm=0.3)], comm=comm, nvsmi=False, dcgm_kw=dict(step=60))
    return c


@case
def oc16():
    c = Case("oc-16", root_cause="link_degradation", component=None,
             title="Two NCCL timeouts overnight, job ~12% slower since 01:12",
             reported="The job restarted itself twice (torch elastic). Now running but slower. InfiniBand fabric.",
             start="2026-06-21T00:45:00Z", minutes=90, job="llm-405b-ft", hosts=16, naming="fqdn", dmesg="journal",
             notes="one IB port flaps in the window (mlx5 Link DOWN/INIT/ACTIVE burst in journalctl -k), symbol errors and link_downed climb; NCCL status=12 completion errors",
             presents="2 in-window error burst in a kernel log; IB counters and node_exporter series")
    bad_h = c.host(4)
    nic = bad_h.nics[6]
    c.truth["component"] = f"{bad_h.name}/{nic.ibdev}"
    onset = c.t0 + 27 * 60

    def mod(case, h, n, t, s):
        if t >= onset and case.running(h, t):
            s["bytes"] -= int(s["rate"] * 0.22 * (t - onset))
        if h is bad_h and n is nic:
            s["symbol_error"] += int(ramp(t, onset - 300, 21))
            s["rcv_errors"] += int(ramp(t, onset, 3.5))
            s["link_error_recovery"] += int(ramp(t, onset, 1 / 300))
            s["link_downed"] += min(3, int(ramp(t, onset, 1 / 600)) + (1 if t >= onset else 0))

    c.nic_mods.append(mod)
    ev = []
    for k, t in enumerate((onset, onset + 610, onset + 1215)):
        ev += [(t, 6, f"mlx5_core 0000:{nic.bus}:00.0 {nic.ibdev}: Port: 1 Link DOWN"),
               (t + 4.2, 6, f"mlx5_core 0000:{nic.bus}:00.0 {nic.ibdev}: Port: 1 Link INIT"),
               (t + 6.9, 6, f"mlx5_core 0000:{nic.bus}:00.0 {nic.ibdev}: Port: 1 Link ACTIVE")]
    c.kern[bad_h.name] = ev
    c.logs["torchrun-node0.log"] = [
        f"{bad_h.short}:43120:44001 [6] transport/net_ib.cc:1695 NCCL WARN NET/IB: Got completion from peer 10.31.4.{17 + k}<51123> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid fe80::a088:c203:0:{k + 10:x} remoteGidsfe80::a088:c203:0:{k + 50:x} hca {nic.ibdev}"
        for k in range(2)] + [
        f"[rank52]:[E621 {torch_ts(onset + 650)[5:]} ProcessGroupNCCL.cpp:632] [Rank 52] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=884211, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=600000) ran for 600089 milliseconds before timing out.",
        f"[{iso(onset + 700).replace('T', ' ').rstrip('Z')},112] torch.distributed.elastic.agent.server.api: [WARNING] Restarting worker group"]
    emit(c, [Segment(c.job_start, c.t1, 410000, compute=0.58, comm=0.3)], comm=lambda t: 1.38 if t >= onset else 1.0,
         nvsmi=False, node_om=True, node_kw=dict(step=60, gz=True), dcgm_kw=dict(step=60, gz=True))
    return c


# --------------------------------------------------------------------------------------------
# GPU memory, bus, NVLink, SDC


@case
def oc17():
    c = Case("oc-17", root_cause="hbm_degradation", component=None,
             title="Step time creeping up since 07:30",
             reported="bert-xxl pretraining: ~10% slower and a few ECC warnings on the GPU dashboard (one GPU has had a handful of corrected errors for months).",
             start="2026-03-03T07:00:00Z", minutes=80, job="bert-xxl", hosts=8, naming="dgx", dmesg="kmsg",
             notes="one GPU: XID 63 row-remap events and a contained XID 94, correctable ECC climbing, remap pending; another GPU has static old SBE counts",
             presents="raw /dev/kmsg kernel log; static SBE decoy; ECC and remap families")
    bad_h, bad_g = c.host(2), 6
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    onset = c.t0 + 30 * 60
    dec_h, dec_g = c.host(5), 1

    def mod(case, h, g, t, s):
        if h is bad_h and g.index == bad_g:
            s["sbe"] = 2 + int(ramp(t, onset - 900, 0.41))
            s["remap_corr"] = 1 + (1 if t >= onset else 0) + (1 if t >= onset + 1500 else 0)
            s["remap_pending"] = t >= onset
            if t >= onset + 1500:
                s["xid"] = 94
            elif t >= onset:
                s["xid"] = 63
        if h is dec_h and g.index == dec_g:
            s["sbe"], s["sbe_agg"], s["remap_corr"] = 14, 30, 1

    c.gpu_mods.append(mod)
    bus = bad_h.gpus[bad_g].bus
    c.kern[bad_h.name] = [(onset, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 63, pid=88214, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."),
                          (onset + 1500, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 63, pid=88214, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."),
                          (onset + 1500.2, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 94, pid=88214, name=python3, Contained: FB DED (0x1, 0x0). physAddr: 0x1f5a44e60 RST: No, D-RST: No")]
    rr = c.ranks_of(bad_h)[bad_g]
    emit(c, [Segment(c.job_start, c.t1, 15000)], slow=lambda r, t: (1.0 + min(0.17, ramp(t, onset - 600, 0.17 / 1800))) if r == rr else 1.0,
         dcgm_kw=dict(extra_families=("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                                      "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE")),
         nvml_events={bad_h.name: [{"device": bad_g, "type": "XidCriticalError", "data": 63, "time": iso(onset)},
                                   {"device": bad_g, "type": "XidCriticalError", "data": 94, "time": iso(onset + 1500)}]})
    return c


@case
def oc18():
    c = Case("oc-18", root_cause="gpu_fell_off_bus", component=None,
             title="Job hung at 21:41, NCCL watchdog timeout on all ranks",
             reported="llm-30b stopped making progress; torch watchdog killed it 10 minutes later. A node had an XID 79 last week and was returned to service.",
             start="2026-12-01T21:00:00Z", minutes=70, job="llm-30b", hosts=12, naming="hgx", dmesg="plain",
             notes="newer-driver multi-line 'fallen off the bus' message without an Xid number; sysfs Unknown/63, lspci rev ff, NVML error, its series stop; "
                   "decoy: an old XID 79 on another host 9 days ago",
             presents="2 in-window kernel event (multi-line form); history XID decoy")
    bad_h, bad_g = c.host(7), 2
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    ev_t = c.t0 + 41 * 60
    c.job_end = ev_t
    old_h = c.host(3)
    c.kern[old_h.name] = old_xid(c, old_h, 4, 9.2, 79)

    def lost(case, h, g, t, s):
        if h is bad_h and g.index == bad_g and t >= ev_t:
            s["lost"] = True

    c.gpu_mods.append(lost)
    g = bad_h.gpus[bad_g]
    c.kern[bad_h.name] = [(ev_t, 3, f"NVRM: The NVIDIA GPU 0000:{g.bus}:00.0\n               NVRM: (PCI ID: 10de:{c.m['dev']}) installed in this system has\n"
                                    "               NVRM: fallen off the bus and is not responding to commands."),
                          (ev_t + 0.2, 4, f"nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing")]
    rr = c.ranks_of(bad_h)[bad_g]
    log = []
    for r in (0, 17, rr, 90):
        log.append(f"[rank{r}]:[E1201 {torch_ts(ev_t + 600.3 + 0.01 * r)[5:]} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: "
                   "WorkNCCL(SeqNum=1207733, OpType=ALLREDUCE, NumelIn=50331648, NumelOut=50331648, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
    log.append(f"[rank0]:[E1201 {torch_ts(ev_t + 600.4)[5:]} ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 17 and we will try our best to dump the debug info. Last enqueued NCCL work: 1207733, last completed NCCL work: 1207732.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ")
    log.append("terminate called after throwing an instance of 'c10::DistBackendError'")
    c.logs["train-rank0.log"] = log
    emit(c, [Segment(c.job_start, ev_t - 1, 302000)], lspci_all=False, dcgm_kw=dict(step=60))
    lspci(c, bad_h)
    return c


@case
def oc19():
    c = Case("oc-19", root_cause="nvlink_fault", component=None,
             title="Intra-node all-reduce slow on one node group since 05:05",
             reported="NCCL tests in the pre-step probe show lower busbw than usual. Job is ~15% slower.",
             start="2026-07-19T04:40:00Z", minutes=70, job="t5-xxl", hosts=8, naming="node", model="A100", dmesg="caller",
             driver="535.183.01",
             notes="burst of XID 74 NVLink errors on one GPU in the kernel log (printk caller prefix), nvidia-smi nvlink -e replay/CRC counters high on two of its links",
             presents="2 in-window error burst a quick reader might miss; 8 NVLink counters only in nvidia-smi nvlink -e")
    bad_h, bad_g = c.host(3), 1
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    onset = c.t0 + 25 * 60

    def mod(case, h, g, t, s):
        if h is bad_h and g.index == bad_g:
            el = max(0.0, t - onset)
            s["nvl_links"] = {6: {"replay": int(el * 19), "recovery": int(el / 200), "crc": int(el * 44)},
                              7: {"replay": int(el * 11), "recovery": int(el / 300), "crc": int(el * 23)}}
            if t >= onset:
                s["xid"] = 74

    c.gpu_mods.append(mod)
    bus = bad_h.gpus[bad_g].bus
    c.kern[bad_h.name] = [(onset + 17 * k, 4, f"NVRM: Xid (PCI:0000:{bus}:00): 74, pid=51877, name=python3, NVLink: non-fatal error detected on link {6 + k % 2}(0x0, 0x0, 0x200000, 0x0, 0x0, 0x0, 0x0)")
                          for k in range(9)]
    for h in c.hosts:
        nvlink_e(c, h, links=12)
    emit(c, [Segment(c.job_start, c.t1, 77000, compute=0.6, comm=0.3)],
         comm=lambda t: 1.45 if t >= onset else 1.0, columns=("loss",), dcgm_kw=dict(step=60), old_kernel=True)
    return c


@case
def oc20():
    c = Case("oc-20", root_cause="silent_data_corruption", component=None,
             title="Replica checksum monitor: DP replicas disagree since 12:47",
             reported="Our param checksum hook flagged a mismatch between data-parallel replicas. Loss still looks fine. No XIDs today.",
             start="2026-08-11T12:20:00Z", minutes=70, job="llm-8b-dpo", hosts=8, naming="ip", dmesg="ctime",
             notes="one rank's param_checksum disagrees from 12:47 with no error anywhere; decoys: old XID 13 on another GPU of that host, static SBE on a third GPU, power capping",
             presents="no error anywhere; history XID on the same host; 1 normal power capping")
    bad_h, bad_g = c.host(2), 5
    c.truth["component"] = f"{bad_h.name}/gpu{bad_g}"
    onset = c.t0 + 27 * 60
    cap_some(c, 3)
    c.kern[bad_h.name] = old_xid(c, bad_h, 2, 5.1, 13)
    rr = c.ranks_of(bad_h)[bad_g]
    dec = c.host(6).gpus[4]
    c.gpu_mods.append(lambda case, h, g, t, s: s.update(sbe=6, sbe_agg=40) if g is dec else None)

    def bad(r, t, step):
        if r == rr and t >= onset:
            import hashlib
            return "%016x" % int(hashlib.sha256(f"x{step}".encode()).hexdigest()[:16], 16)
        return None

    emit(c, [Segment(c.job_start, c.t1, 8000)], columns=("compute_s", "loss", "grad_norm", "param_checksum"), checksum_bad=bad,
         dcgm_kw=dict(step=60))
    return c


# --------------------------------------------------------------------------------------------
# host contention


@case
def oc21():
    c = Case("oc-21", root_cause="host_contention", component=None,
             title="Step time 0.88 -> 1.1 s since 18:10",
             reported="No hardware alerts. A data-prep team shares some of these nodes for CPU jobs.",
             start="2026-10-27T17:45:00Z", minutes=75, job="llm-20b", hosts=12, naming="node", dmesg="journal",
             notes="one host under memory pressure (PSI memory some/full high, kswapd busy, an ETL process with 1.6 TiB RSS, swap in use); its 8 ranks compute slower",
             presents="4 host-level fault; 8 memory-pressure evidence")
    bad = c.host(8)
    c.truth["component"] = bad.name
    onset = c.t0 + 25 * 60
    slow_r = set(c.ranks_of(bad))
    for h in c.hosts:
        if h is bad:
            pressure(c, h, "memory", 38.4, 31.2, 12.9, 1_829_331_004, full=(21.7, 17.9, 7.1, 1_020_112_998))
            pressure(c, h, "io", 11.2, 9.8, 4.1, 902_113_421)
            pressure(c, h, "cpu", 4.1, 3.9, 1.6, 311_221_003)
            top(c, h, [(211, "root", "0", "0", "0", 98.7, 0.0, "R", "341:12.77", "kswapd0"),
                       (212, "root", "0", "0", "0", 96.1, 0.0, "R", "338:54.01", "kswapd1"),
                       (3312091, "etl", "1.7t", "1.6t", "1.1g", 412.0, 81.2, "R", "5102:11", "python3 build_shards.py")] + trainer_procs(c, h, 88.0),
                load=(41.2, 37.8, 22.4), cpu_line="%Cpu(s): 21.0 us, 14.8 sy,  0.0 ni, 49.3 id, 14.1 wa,  0.0 hi,  0.8 si,  0.0 st",
                mem=("MiB Mem : 2063937.4 total,   9211.2 free, 2041102.6 used,  13623.6 buff/cache",
                     "MiB Swap:  65536.0 total,  11840.0 free,  53696.0 used.   8122.1 avail Mem"))
        else:
            pressure(c, h, "memory", 0.0, 0.0, 0.0, 2_331_004)
            pressure(c, h, "io", 0.12, 0.08, 0.05, 12_113_421)
            pressure(c, h, "cpu", 0.31, 0.28, 0.22, 41_221_003)
            top(c, h, trainer_procs(c, h))
    c.kern[bad.name] = [(onset + 300, 4, "python3 invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0"),
                        (onset + 300.01, 6, "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/user.slice/user-2107.slice,task=python3,pid=3312110,uid=2107"),
                        (onset + 300.02, 3, "Out of memory: Killed process 3312110 (python3) total-vm:91236612kB, anon-rss:88123400kB, file-rss:0kB, shmem-rss:0kB, UID:2107 pgtables:176820kB oom_score_adj:0")]
    emit(c, [Segment(c.job_start, c.t1, 40000)], slow=lambda r, t: 1.36 if (r in slow_r and t >= onset) else 1.0, dcgm_kw=dict(step=60),
         nvsmi=False)
    return c


@case
def oc22():
    c = Case("oc-22", root_cause="host_contention", component=None,
             title="Job ~20% slower since 03:05; GPU utilization dips on the dashboard",
             reported="Nothing changed in the job. IP-named nodes from the new pool.",
             start="2026-01-09T02:40:00Z", minutes=75, job="ranker-3b", hosts=16, naming="ip", dmesg="plain",
             notes="one host's CPUs saturated by a backup agent (node_load1 ~190, PSI cpu waiting climbing in node_exporter, top shows 24 rsync/xz processes)",
             presents="4 host-level fault; node_exporter pressure/load series; GPU util dips on that host")
    bad = c.host(12)
    c.truth["component"] = bad.name
    onset = c.t0 + 25 * 60
    slow_r = set(c.ranks_of(bad))

    def cpu(h, t):
        if h is bad and t >= onset:
            return (0.71 + 0.05 * c._noise(int(t // 60)), 188.0 + 6 * c._noise(int(t // 60), "l"))
        return None

    def gmod(case, h, g, t, s):
        if h is bad and t >= onset and case.running(h, t):
            s["util"] = 71 + int(8 * case._noise(g.index, int(t // 30)))
            s["tensor"] = round(s["tensor"] * 0.74, 3)
            s["power"] = round(s["power"] * 0.81, 1)

    c.gpu_mods.append(gmod)
    procs = [(900100 + 3 * k, "root", "10.4m", "6.1m", "2.2m", 99.0 - k * 0.3, 0.0, "R", "21:0" + str(k % 10), "rsync" if k % 2 else "xz -9 -T1") for k in range(24)]
    top(c, bad, procs + trainer_procs(c, bad, 61.0), load=(189.4, 176.2, 98.1),
        cpu_line="%Cpu(s): 93.1 us,  5.2 sy,  0.0 ni,  1.1 id,  0.4 wa,  0.0 hi,  0.2 si,  0.0 st")
    for h in c.hosts[:3]:
        top(c, h, trainer_procs(c, h))
    emit(c, [Segment(c.job_start, c.t1, 91000)], slow=lambda r, t: 1.3 if (r in slow_r and t >= onset) else 1.0,
         node_om=True, node_kw=dict(ib=False, cpu=cpu, step=30), nvsmi=False, dcgm_kw=dict(step=60),
         topo_kw=dict(shuffle_ranks=True), collected_keys=("before", "now"))
    return c


# --------------------------------------------------------------------------------------------
# input pipeline


def stall_extra(c: Case, onset: float, p: float, lo: float, hi: float):
    """Input waits: a fraction ``p`` of steps wait lo..hi s for data, the rest a little."""
    def extra(t, s):
        if t < onset:
            return 0.0
        if n01(c, "st", s) < p:
            return lo + (hi - lo) * n01(c, "sd", s)
        return 0.35 * n01(c, "sm", s)
    return extra


@case
def oc23():
    c = Case("oc-23", root_cause="input_pipeline_stall", component=None,
             title="Step time spiky since 06:20 (p50 1.1 s, p99 12 s)",
             reported="GPU util graphs have gaps. Network team says the fabric is quiet. Data is read from S3.",
             start="2026-02-24T05:55:00Z", minutes=75, job="clip-g14", hosts=8, naming="dgx", dmesg="plain",
             notes="PyTorch DataLoader wait warnings and botocore SlowDown retries from S3; compute_s and network counters unchanged",
             presents="6 input pipeline: PyTorch DataLoader + S3 wording")
    c.truth["component"] = "job"
    onset = c.t0 + 25 * 60
    ex = stall_extra(c, onset, p=0.25, lo=2, hi=12)

    def gmod(case, h, g, t, s):
        if t >= onset and case.running(h, t) and n01(case, "gap", int(t // 30)) < 0.4:
            s.update(util=int(20 + 30 * n01(case, "u", int(t // 30))), tensor=round(s["tensor"] * 0.3, 3), power=round(s["power"] * 0.55, 1))

    c.gpu_mods.append(gmod)
    seg = Segment(c.job_start, c.t1, 20000, compute=0.6, comm=0.27)
    emit(c, [seg], extra=ex, node_om=True, node_kw=dict(step=60), dcgm_kw=dict(step=60))
    log = []
    for s, t, d in step_times(c, Segment(onset, c.t1, 0), lambda t, s: 1.3):
        if n01(c, "lg", s) < 0.3:
            w = 4 + 20 * n01(c, "w", s)
            log.append(f"{iso(t).replace('T', ' ').rstrip('Z')},{s % 1000:03d} WARNING train.py:212 rank 0: waited {w:.1f}s for next batch from DataLoader (num_workers=8, prefetch_factor=2); worker queue empty")
        if n01(c, "bo", s) < 0.15:
            log.append(f"{iso(t + 1).replace('T', ' ').rstrip('Z')},{(s * 7) % 1000:03d} WARNING botocore.retryhandler: Retry needed, retrying request after delay of: 1.{s % 9}")
            log.append(f"{iso(t + 2).replace('T', ' ').rstrip('Z')},{(s * 3) % 1000:03d} ERROR webdataset_s3.py:88 shard s3://laion-shards/train/{s % 40000:06d}.tar: "
                       "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate.")
    log.append(f"{iso(c.t1 - 200).replace('T', ' ').rstrip('Z')},551 ERROR torch.utils.data: RuntimeError: DataLoader timed out after 300 seconds (worker 5, rank 37); retrying shard")
    c.logs["train.log"] = log
    return c


@case
def oc24():
    c = Case("oc-24", root_cause="input_pipeline_stall", component=None,
             title="Iteration time up from 0.9 s to ~2 s average since 19:40",
             reported="Megatron job on the Lustre scratch filesystem. Slow on all ranks at the same time.",
             start="2026-09-02T19:10:00Z", minutes=80, job="llm-110b", hosts=16, naming="fqdn", dmesg="journal",
             notes="Megatron batch-generator timer huge while forward-backward is flat; LustreError / connection lost lines to one OST on every host's kernel log",
             presents="6 input pipeline: Megatron timers + Lustre client kernel lines")
    c.truth["component"] = "job"
    onset = c.t0 + 30 * 60
    ex = stall_extra(c, onset, p=0.3, lo=2, hi=8)
    for i, h in enumerate(c.job_hosts):
        ev = []
        for k in range(3):
            t = onset + 5 + 600 * k + 7 * i
            ev += [(t, 3, f"LustreError: 11-0: scratch-OST0017-osc-ffff9a8c{(i * 4099) % 65536:04x}a000: operation ost_read to node 10.20.0.17@o2ib failed: rc = -107"),
                   (t + 0.001, 4, f"Lustre: scratch-OST0017-osc-ffff9a8c{(i * 4099) % 65536:04x}a000: Connection to scratch-OST0017 (at 10.20.0.17@o2ib) was lost; in progress operations using this service will wait for recovery to complete"),
                   (t + 44 + 30 * n01(c, "lr", i, k), 6, f"Lustre: scratch-OST0017-osc-ffff9a8c{(i * 4099) % 65536:04x}a000: Connection restored to 10.20.0.17@o2ib (at 10.20.0.17@o2ib)")]
        c.kern[h.name] = ev
    seg = Segment(c.job_start, c.t1, 61000, compute=0.6, comm=0.29)
    emit(c, [seg], extra=ex, node_om=True, node_kw=dict(step=60, gz=True), dcgm_kw=dict(step=60, gz=True), nvsmi=False,
         dmesg_gz=True)
    log = []
    for s, t, d in step_times(c, Segment(c.t0 - 600, c.t1, 61500), lambda t, s: 0.9 if t < onset else 2.05):
        if s % 100 == 0:
            bg = (1.1, 2.9) if t < onset else (1.2, 1600 + 20000 * n01(c, "bg", s))
            log.append(megatron_iter(t, s, 300000, d * 1000, 2048, 1.5e-4, 1.98, 405.1 if t < onset else 145.0 + 40 * n01(c, "tf", s), s * 2048))
            log += ["(min, max) time across ranks (ms):", f"    forward-backward ...............................: ({591.2 + s % 7:.2f}, {603.8 + s % 5:.2f})",
                    f"    forward-compute ................................: ({201.5:.2f}, {214.0:.2f})",
                    f"    backward-compute ...............................: ({379.0:.2f}, {388.1:.2f})",
                    f"    batch-generator ................................: ({bg[0]:.2f}, {bg[1]:.2f})",
                    f"    optimizer ......................................: ({31.1:.2f}, {33.9:.2f})"]
    c.logs["megatron.log"] = log
    return c


@case
def oc25():
    c = Case("oc-25", root_cause="input_pipeline_stall", component=None,
             title="Samples/sec down ~50% since 23:15",
             reported="DeepSpeed job; datasets on the shared NFS export. GPUs look idle part of the time.",
             start="2026-06-12T22:50:00Z", minutes=75, job="moe-48b", hosts=8, naming="hgx", dmesg="plain",
             notes="'nfs: server ... not responding, still trying' on every host's kernel log; DeepSpeed throughput lines drop; compute_s flat",
             presents="6 input pipeline: DeepSpeed + NFS client kernel lines")
    c.truth["component"] = "job"
    onset = c.t0 + 25 * 60
    for i, h in enumerate(c.job_hosts):
        ev = []
        for k in range(4):
            t = onset + 450 * k + 3 * i
            ev += [(t, 4, "nfs: server nfs-data01.storage.internal not responding, still trying"),
                   (t + 60 + 50 * n01(c, "nfs", i, k), 4, "nfs: server nfs-data01.storage.internal OK")]
        c.kern[h.name] = ev
    emit(c, [Segment(c.job_start, c.t1, 30000, compute=0.62, comm=0.27)], extra=stall_extra(c, onset, p=0.25, lo=1.5, hi=4.5),
         dcgm_kw=dict(step=60), topo_kw=dict(ranks="implicit"), lspci_all=True)
    log = []
    for s, t, d in step_times(c, Segment(c.t0 - 600, c.t1, 30500), lambda t, s: 0.89 if t < onset else 1.62):
        if s % 100 == 0:
            sps = 128 / (0.89 if t < onset else 1.6 + 0.5 * n01(c, "d", s))
            log.append(f"[{iso(t).replace('T', ' ').rstrip('Z')},{s % 997:03d}] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]")
            log.append(f"[{iso(t).replace('T', ' ').rstrip('Z')},{s % 991:03d}] [INFO] [timer.py:260:stop] epoch=0/micro_step={s * 2}/global_step={s}, RunningAvgSamplesPerSec={sps:.2f}, CurrSamplesPerSec={sps * (0.9 + 0.2 * n01(c, 'c', s)):.2f}, MemAllocated=58.1GB, MaxMemAllocated=66.7GB")
    c.logs["deepspeed.log"] = log
    return c


@case
def oc26():
    c = Case("oc-26", root_cause="input_pipeline_stall", component=None,
             title="Lightning fit: it/s dropped from 1.1 to ~0.4 since 15:05",
             reported="Training reads its shards through gcsfuse. One node's GPU looks idle sometimes, all of them really.",
             start="2026-11-03T14:40:00Z", minutes=70, job="vit-22b", hosts=8, naming="aws", dmesg="ctime", model="A100",
             notes="Lightning progress lines slow; gcsfuse 429/503 read errors with retries; no compute_s column, network flat",
             presents="6 input pipeline: Lightning + GCS (gcsfuse) wording; no compute_s")
    c.truth["component"] = "job"
    onset = c.t0 + 25 * 60

    def gmod(case, h, g, t, s):
        if t >= onset and case.running(h, t) and n01(case, "gap", int(t // 30)) < 0.5:
            s.update(util=int(10 + 40 * n01(case, "u", int(t // 30))), tensor=round(s["tensor"] * 0.35, 3), power=round(s["power"] * 0.5, 1))

    c.gpu_mods.append(gmod)
    emit(c, [Segment(c.job_start, c.t1, 9000, compute=0.62, comm=0.28)], extra=stall_extra(c, onset, p=0.35, lo=2, hi=5),
         columns=("loss",), node_om=True, node_kw=dict(step=60), dcgm_kw=dict(step=60))
    lg = []
    for k, t in enumerate(range(c.t0 - 600, c.t1, 240)):
        rate = 1.1 if t < onset else 0.37 + 0.08 * n01(c, "r", k)
        lg.append(f"Epoch 3:  {min(99, 10 + k):2d}%|▉         | {900 + int(k * 240 * rate)}/9211 [{k * 4 // 60:02d}:{k * 4 % 60:02d}<2:01:11, {rate:.2f}it/s, v_num=17, train_loss={1.41 - 0.002 * k:.3f}]")
        if t >= onset and n01(c, "gw", k) < 0.5:
            lg.append(f"{iso(t + 9)} W gcsfuse: ReadFile: Error 429: The object gs://vit-shards-eu/train/shard-{k * 37 % 4096:05d}.tar exceeded the rate limit for reads, retrying (attempt 3)")
            lg.append(f"{iso(t + 17)} E gcsfuse: ReadFile: googleapi: Error 503: We encountered an internal error. Please try again., backendError")
    lg.insert(3, "/usr/local/lib/python3.10/dist-packages/lightning/pytorch/trainer/connectors/data_connector.py:441: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=31` in the `DataLoader` to improve performance.")
    c.logs["lightning.log"] = lg
    return c


@case
def oc27():
    c = Case("oc-27", root_cause="input_pipeline_stall", component=None,
             title="Ray Train job: step time p50 0.9 s -> 1.8 s since 08:15",
             reported="Ray Train + Ray Data streaming from S3. Nothing in the GPU alerts.",
             start="2026-04-29T07:50:00Z", minutes=70, job="rec-dlrm-xl", hosts=12, naming="ip", dmesg="journal",
             notes="Ray Data operator backpressure / read task retries on S3 503 SlowDown; compute_s and NIC counters flat",
             presents="6 input pipeline: Ray Data + S3 wording")
    c.truth["component"] = "job"
    onset = c.t0 + 25 * 60
    emit(c, [Segment(c.job_start, c.t1, 4000, compute=0.6, comm=0.27)], extra=stall_extra(c, onset, p=0.3, lo=1.5, hi=4),
         node_om=True, node_kw=dict(step=60, gz=True), dcgm_kw=dict(step=60), nvsmi=False)
    lg = []
    for k, t in enumerate(range(c.t0, c.t1, 180)):
        if t >= onset:
            lg.append(f"(SplitCoordinator pid=2231, ip=10.{k % 7}.3.11) Operator ReadParquet->SplitBlocks(16) is backpressured: 0 outputs queued, "
                      f"{12 + k % 9} tasks running, waiting for inputs. Data ingestion is the bottleneck; consider increasing read parallelism.")
            if n01(c, "s3", k) < 0.5:
                lg.append(f"(ReadParquet->SplitBlocks(16) pid={33100 + k}, ip=10.{k % 7}.3.{12 + k % 40}) Retrying read of s3://rec-logs-prod/day=2026-04-27/part-{k:05d}.parquet "
                          "(attempt 2/10): AWS Error SLOW_DOWN during GetObject operation: Please reduce your request rate.")
        lg.append(f"(RayTrainWorker pid={41000 + k % 12}, ip=10.{k % 7}.3.11) [train] step time {0.9 if t < onset else 1.5 + n01(c, 'x', k):.2f}s, "
                  f"data wait {0.02 if t < onset else 0.6 + n01(c, 'x', k):.2f}s")
    c.logs["ray-train-driver.log"] = lg
    return c


# --------------------------------------------------------------------------------------------
# NCCL configuration


@case
def oc28():
    c = Case("oc-28", root_cause="nccl_misconfiguration", component=None,
             title="New run slow since launch: 2.1 s per step, used to do 0.9 s per step",
             reported="Same model and node count as last week's run, new container image. Slow from the first step.",
             start="2026-05-05T12:00:00Z", minutes=60, job="llm-7b-repro", hosts=8, naming="dash", dmesg="plain",
             notes="NCCL_IB_DISABLE=1 from the new image: NET/Socket over eth0 while 8 IB HCAs per host sit idle (node_exporter IB bytes flat)",
             presents="5 slow from the first step (expected numbers in the title); config forcing a slow path: sockets beside idle RDMA")
    c.truth["component"] = "job"
    c.job_start = c.t0 + 3 * 60

    def idle(case, h, n, t, s):
        s["bytes"] -= int(s["rate"] * max(0.0, min(t, case.now) - case.job_start))

    c.nic_mods.append(idle)
    c.logs["rank0.log"] = nccl_init(c, socket=True, env=(("NCCL_IB_DISABLE", "1"), ("NCCL_SOCKET_IFNAME", "eth0")), channels="socket")
    emit(c, [Segment(c.job_start, c.t1, 0, compute=0.62, comm=1.48)], node_om=True, node_kw=dict(step=60), dcgm_kw=dict(pre=300, step=60))
    return c


@case
def oc29():
    c = Case("oc-29", root_cause="nccl_misconfiguration", component=None,
             title="Job 1.45 s/step since launch; used to do 0.88 s per step",
             reported="Relaunched with the debug environment from last month's bring-up. Slow since launch on all ranks.",
             start="2026-08-18T09:30:00Z", minutes=60, job="llm-34b-cont", hosts=12, naming="hgx", dmesg="journal",
             notes="NCCL_P2P_DISABLE=1 and NCCL_NET_GDR_LEVEL=LOC left in the environment: intra-node via SHM, inter-node without GPUDirect RDMA",
             presents="5 slow since launch; config forcing a slow path: P2P and GPUDirect RDMA disabled")
    c.truth["component"] = "job"
    c.job_start = c.t0 - 10 * 60
    c.logs["train-node0.log"] = nccl_init(c, env=(("NCCL_P2P_DISABLE", "1"), ("NCCL_NET_GDR_LEVEL", "LOC"), ("NCCL_IB_TIMEOUT", "22")),
                                          channels="shm", version="2.23.4")
    c.logs["train-node0.log"] = [l.replace("/GDRDMA", "") for l in c.logs["train-node0.log"]]
    emit(c, [Segment(c.job_start, c.t1, 0, compute=0.62, comm=0.83)], node_om=True, node_kw=dict(step=60, gz=True),
         dcgm_kw=dict(step=60), nvsmi=False)
    return c


@case
def oc30():
    c = Case("oc-30", root_cause="nccl_misconfiguration", component=None,
             title="Slow since launch on the new 48-node cluster: 1.7 s per step vs 0.9 s per step expected",
             reported="Ported from the old cluster (2 HCAs per node) to the new one (8 HCAs per node). Slow from the first step, no errors.",
             start="2026-12-02T06:00:00Z", minutes=60, job="llm-70b-port", hosts=48, naming="fqdn", dmesg="plain",
             notes="NCCL_IB_HCA=mlx5_0,mlx5_1 carried over: 2 rails used out of 8 (only two HCAs per host move bytes)",
             presents="5 slow since launch; fewer rails than NICs; 48-host fleet, partial node data, gz files")
    c.truth["component"] = "job"
    c.job_start = c.t0 + 2 * 60

    def rails(case, h, n, t, s):
        el = max(0.0, min(t, case.now) - case.job_start)
        if n.ibdev in ("mlx5_0", "mlx5_1"):
            s["bytes"] += int(s["rate"] * 2.2 * el)
            s["xmit_wait"] += int(4.1e5 * el)
        else:
            s["bytes"] -= int(s["rate"] * el)

    c.nic_mods.append(rails)
    c.logs["rank0.log"] = nccl_init(c, ib_list="mlx5_0,mlx5_1", env=(("NCCL_IB_HCA", "mlx5_0,mlx5_1"),))
    emit(c, [Segment(c.job_start, c.t1, 0, compute=0.6, comm=1.1, every=20)], node_om=True, node_kw=dict(step=120, gz=True, pre=600),
         dcgm_kw=dict(step=120, gz=True, pre=600, families=["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                                                            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_XID_ERRORS"]),
         nvsmi=False, steps_gz=True, nodes=c.hosts[::6], columns=("compute_s",))
    return c


# --------------------------------------------------------------------------------------------


def build_all() -> list[Case]:
    return [fn() for fn in CASES]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, help="folder to write the cases into (created; existing cases replaced)")
    p.add_argument("--list", action="store_true", help="print the cases and what each presents")
    p.add_argument("--only", nargs="*", help="case names to write (default: all)")
    a = p.parse_args(argv)
    if not a.out and not a.list:
        p.error("give --out DIR or --list")
    todo = [fn for fn in CASES if not a.only or fn.__name__.replace("oc", "oc-") in a.only]
    for fn in todo:
        c = fn()
        if a.list:
            comp = c.truth["component"]
            print(f"| {c.id} | {c.truth['root_cause']} | {comp if comp else 'null'} | {len(c.hosts)} | {c.notes} | {c.presents} |")
        if a.out:
            put_logs(c)
            d = a.out / c.id
            if d.exists():
                shutil.rmtree(d)
            c.write(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
