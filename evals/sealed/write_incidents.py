#!/usr/bin/env python3
"""Write the sealed evaluation set: incident bundles plus truth.json, one folder per case.

    python3 evals/sealed/write_incidents.py --out DIR        # DIR/<case>/bundle/..., DIR/<case>/truth.json

Authored from the bundle contract (shared/spec/bundle.md) and the real formats in
shared/reference/gpu-formats.md only. Deterministic: each case draws from its own seeded
random.Random, gzip members carry mtime 0 and no name, files are written in sorted order.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import HW_BRAKE, HW_SLOW, HW_THERM, SW_POWER, SW_THERM, Fleet, iso, unix, utc  # noqa: E402
from scenario import Scenario, _jit  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ------------------------------------------------------------------------------------------
# shared helpers


def finish(sc: Scenario, *, nodes=None, style="plain", smi=(), lspci=(), ibstat=(), ethtool=(), old_kernel=False,
           dmesg_gz=False, boot=True, dcgm=None, node=None, topo=None, hw=True, sys_ib=True, nvml_gz=False,
           dmesg_hosts=None, aer=None) -> None:
    names = nodes if nodes is not None else [h.name for h in sc.fleet.hosts]
    for name in names:
        h = sc.fleet.host(name)
        sc.collected(h, boot=boot)
        sc.nvml(h, gz=nvml_gz)
        sc.sys_pci(h, old_kernel=old_kernel, aer=(aer or {}).get(name))
        if sys_ib:
            sc.sys_ib(h, hw=hw)
        if dmesg_hosts is None or name in dmesg_hosts:
            sc.write_dmesg(h, style, gz=dmesg_gz)
        if name in smi or smi == "all":
            sc.smi_q(h)
        if name in lspci or lspci == "all":
            sc.lspci(h)
        if name in ibstat or ibstat == "all":
            sc.ibstat(h)
        if name in ethtool or ethtool == "all":
            for n in h.nics:
                sc.ethtool(h, n)
    if dcgm is not False:
        sc.dcgm(**(dcgm or {}))
    if node is not False:
        sc.node_om(**(node or {}))
    if topo is not False:
        sc.topology(**(topo or {}))


def ts_py(t: float) -> str:
    """Python logging asctime."""
    return utc(t).strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % int((t % 1) * 1000)


def at(sc, minutes: float) -> int:
    return int(sc.t0 + minutes * 60)


def nccl_init(sc, host: str, pid: int, dev: int, lines: list[str]) -> list[str]:
    return [f"{host}:{pid}:{pid + 41 + dev} [{dev}] NCCL INFO {x}" for x in lines]


def slow_rank(sc, host, idx, factor, onset):
    def hook(r, h, g, t):
        return factor if (h == host and g == idx and t >= onset) else 1.0
    sc.compute_hooks.append(hook)


def slow_host(sc, host, factor, onset):
    def hook(r, h, g, t):
        return factor if (h == host and t >= onset) else 1.0
    sc.compute_hooks.append(hook)


def comm_after(sc, factor, onset):
    sc.comm_hooks.append(lambda t: factor if t >= onset else 1.0)


def cap_some(sc, picks):
    for h, g in picks:
        sc.capped.add((h, g))


# ------------------------------------------------------------------------------------------
# cases

@case
def s01(out):
    """pcie_downtrain mid-window: AER burst, link retrained to Gen4 on one H100."""
    import random
    rng = random.Random(101)
    names = [f"gpu-h1-{i:02d}" for i in range(1, 8)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx", spares=("gpu-h1-07",))
    sc = Scenario("s01", 101, fl, start=unix("2026-04-08T01:30:00Z"), minutes=90, job="llama-34b-sft", rng=rng)
    bad, gi = "gpu-h1-04", 4
    g = fl.host(bad).gpus[gi]
    onset = at(sc, 38)
    sc.pcie_now[(bad, gi)] = (4, 16)
    sc.pcie_before[(bad, gi)] = (5, 16)
    slow_rank(sc, bad, gi, 1.19, onset)

    def replay(h, i, t, st):
        if h == bad and i == gi and t >= onset - 120:
            st["replay"] = int((t - onset + 120) * 2.7)
    sc.gpu_hooks.append(replay)
    cap_some(sc, [("gpu-h1-02", 1), ("gpu-h1-05", 6), ("gpu-h1-06", 2)])
    rp = "0000:97:01.0"
    burst = []
    for k in range(9):
        t = onset - 95 + k * 11.3
        burst += [(t, f"pcieport {rp}: AER: Corrected error message received from {g.sys_bdf}"),
                  (t + 0.00002, f"nvidia {g.sys_bdf}: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)"),
                  (t + 0.00004, f"nvidia {g.sys_bdf}:   device [10de:2330] error status/mask=00000001/0000e000"),
                  (t + 0.00006, f"nvidia {g.sys_bdf}:    [ 0] RxErr                  (First)")]
    burst.append((onset - 2, f"pcieport {rp}: AER: Multiple Corrected error message received from {g.sys_bdf}"))
    sc.dmesg[bad] += burst
    old = fl.host("gpu-h1-02")
    sc.dmesg["gpu-h1-02"].append((sc.t0 - 9 * 86400 + 3111, f"NVRM: Xid ({old.gpus[3].xid_tag}): 13, pid=88121, name=python3, Graphics SM Warp Exception on (GPC 2, TPC 1, SM 0): Out Of Range Address"))
    sc.sticky_xid[("gpu-h1-02", 3)] = 13
    aer = {bad: {(gi, "now"): {"Receiver Error": 214, "Bad TLP": 3}, (gi, "before"): {"Receiver Error": 2}}}
    sc.steps(compute=0.81, comm=0.29, every=20)
    sc.out.put("job/logs/trainer.log", "\n".join(
        f"{ts_py(t)} INFO train.py:412 step {s} loss {2.2 + 0.3 * _jit(s):.4f} tokens/s {int(1.0e6 / d):d} step_time {d:.3f}s"
        for s, t, d in sc._logged) + "\n")
    finish(sc, style="plain", smi=(bad, "gpu-h1-07"), lspci=(bad, "gpu-h1-07"), aer=aer,
           dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "tensor", "reasons", "xid", "replay")))
    sc.incident(title="llama-34b-sft tokens/s down ~12% since about 02:08, no alerts",
                reported="Throughput dashboard dropped mid-run. Nothing in the job logs. Spare node gpu-h1-07 was just added to the pool.")
    sc.truth("pcie_downtrain", f"{bad}/gpu{gi}")
    sc.write(out)




def sel_text(sc, events) -> str:
    rows = []
    for i, (t, sensor, event, state) in enumerate(events, start=1):
        d = utc(t)
        rows.append(f"{i:>4x} | {d.strftime('%m/%d/%Y')} | {d.strftime('%H:%M:%S')} | {sensor} | {event} | {state}")
    return "\n".join(rows) + "\n"


def fans_text(fans) -> str:
    return "".join(f"{n:<16} | {sid} | {st:<3} | {ent} | {rd}\n" for n, sid, st, ent, rd in fans)


def nccl_env_dump(env: dict) -> list[str]:
    return [f"{k}={v}" for k, v in env.items()]


@case
def s02(out):
    """pcie_downtrain present from boot (x8 width) on an A100: job slow from its first step."""
    import random
    rng = random.Random(202)
    names = [f"a100-r3-n{i:02d}" for i in range(1, 13)]
    fl = Fleet(rng, names, "A100", 4, layout="p4", nics_per_host=4, ib_prefix="mlx5_")
    sc = Scenario("s02", 202, fl, start=unix("2026-02-19T14:05:00Z"), minutes=75, job="mistral-7b-cpt", rng=rng)
    bad, gi = "a100-r3-n07", 2
    g = fl.host(bad).gpus[gi]
    sc.pcie_now[(bad, gi)] = (4, 8)
    sc.pcie_before[(bad, gi)] = (4, 8)
    slow_rank(sc, bad, gi, 1.21, 0)
    sc.dmesg[bad].append((sc.boot[bad] + 10.735323, f"pci {g.sys_bdf}: 126.024 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x8 link at 0000:80:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)"))
    for h in fl.hosts:
        if h.name != bad:
            for n in h.nics[:1]:
                sc.dmesg[h.name].append((sc.boot[h.name] + 10.2, f"pci {n.sys_bdf}: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 link at 0000:00:03.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)"))
    sc.base[("a100-r3-n03", 1)]["temp"] += 4
    def old_remap(h, i, t, st):
        if h == "a100-r3-n10" and i == 0:
            st["remap_cor"] = 1
    sc.gpu_hooks.append(old_remap)
    sc.dmesg["a100-r3-n10"].append((sc.boot["a100-r3-n10"] + 86400 * 2 + 4000, f"NVRM: Xid ({fl.host('a100-r3-n10').gpus[0].xid_tag}): 63, pid=1850, Row Remapper: New row marked for remapping, reset gpu to activate"))
    launch = sc.t0 - 6 * 60
    sc.steps(compute=0.47, comm=0.13, every=25, start=launch)
    lines = [f"[{utc(launch).strftime('%Y-%m-%d %H:%M:%S')}] [INFO] launching mistral-7b-cpt world_size=48 micro_bs=4 seq_len=4096 grad_accum=1"]
    for s, t, d in sc._logged:
        lines.append(f"[{utc(t).strftime('%Y-%m-%d %H:%M:%S')}] [INFO] it={s} loss={2.3 + 0.2 * _jit(s):.3f} it/s={1 / d:.2f} tok/s/gpu={int(16384 / d)}")
    sc.out.put("job/logs/mistral-7b-cpt.log", "\n".join(lines) + "\n")
    order = names[:]
    rng.shuffle(order)
    finish(sc, style="ctime", old_kernel=True, lspci="all", dcgm=dict(every=120), topo=dict(host_order=order))
    sc.incident(title="mistral-7b-cpt never reached the ~0.62 s/step we benchmarked; ~0.70 s/step since launch",
                reported="Same container and config as the benchmark run on rack 2 last week (0.60-0.62 s/step on 48 A100s). "
                         "This allocation has been slow from the very first step.")
    sc.truth("pcie_downtrain", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s03(out):
    """pfc_pause_storm: one RoCE NIC transmits pauses (tx_prio3_pause, storm warnings); the others are victims."""
    import random
    rng = random.Random(303)
    names = [f"10-42-7-{i}" for i in (11, 12, 13, 14, 15, 16, 17, 18)]
    fl = Fleet(rng, names, "H100", 8, layout="xe", link_layer="Ethernet", net_style="eth",
               leaf_of=lambda hi, n: "tor-a" if hi < 4 else "tor-b")
    sc = Scenario("s03", 303, fl, start=unix("2026-06-02T07:10:00Z"), minutes=80, job="rlhf-ppo-70b", rng=rng)
    bad, nic = "10-42-7-15", "mlx5_3"
    onset = at(sc, 31)
    comm_after(sc, 2.3, onset)

    def pauses(h, n, t, v):
        el = max(0.0, t - onset)
        if h.name == bad and n.ibdev == nic:
            v["tx_prio3_pause"] = int(el * 41000)
            v["tx_prio3_pause_duration"] = int(el * 41000 * 7.9)
            v["tx_pause_storm_warning_events"] = int(el // 340)
            v["rx_discards_phy"] = int(el * 950)
            v["rx_out_of_buffer"] = int(el * 610)
            v["outbound_pci_stalled_wr"] = int(el * 3100)
            v["np_cnp_sent"] = v["rcv"] // 2200000
        elif el > 0:
            k = 5200 if h.name in ("10-42-7-16", "10-42-7-17") else 2600
            v["rx_prio3_pause"] = int((t - sc.t0 + 4 * 3600) * 0.4) + int(el * k * (0.6 + _jit(h.name, n.ibdev)))
            v["rx_prio3_pause_duration"] = v["rx_prio3_pause"] * 6
    sc.nic_hooks.append(pauses)
    sc.nic_rate = (lambda orig: (lambda h, n, t: orig(h, n, t) * (0.45 if t >= onset else 1.0)))(sc.nic_rate)
    cap_some(sc, [("10-42-7-12", 0), ("10-42-7-18", 5)])
    sc.steps(compute=1.12, comm=0.41, every=10)
    nl = nccl_init(sc, "10-42-7-11", 51822, 0, [
        "NCCL version 2.21.5+cuda12.4",
        "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE [4]mlx5_4:1/RoCE [5]mlx5_5:1/RoCE [6]mlx5_6:1/RoCE [7]mlx5_7:1/RoCE [RO]; OOB eth0:10.42.7.11<0>",
        "NCCL_IB_TC set by environment to 106.", "NCCL_IB_GID_INDEX set by environment to 3.",
        "comm 0x55d1c9a0e2b0 rank 0 nranks 64 cudaDev 0 nvmlDev 0 busId 19000 commId 0x1c0ffee5ab1e0042 - Init COMPLETE"])
    nl.append("")
    nl.append("10-42-7-13:51907:52011 [5] init.cc:1602 NCCL WARN Cuda failure 'invalid argument' in cudaMemAdvise, falling back to default behaviour")
    sc.out.put("job/logs/nccl-rank0.log", "\n".join(nl) + "\n")
    finish(sc, style="journal", ethtool="all", sys_ib=True, dcgm=dict(every=60), node=dict(ib=False))
    sc.incident(title="PPO rollouts ~35% slower since 07:41; allreduce time dominates the profiler trace",
                reported="RoCE fabric, two ToRs. Compute kernels look the same as yesterday; NCCL allreduce went from ~0.4 s to ~0.9 s per step.")
    sc.truth("pfc_pause_storm", f"{bad}/{nic}")
    sc.write(out)


def sonic_pfc(ports, rx, tx, commas: bool) -> str:
    def f(v):
        return f"{v:,}" if commas else str(v)
    head = "  Port {}    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7"
    sep = "-----------  ------  ------  ------  ------  ------  ------  ------  ------"
    out = []
    for label, data in (("Rx", rx), ("Tx", tx)):
        out.append(head.format(label))
        out.append(sep)
        for p in ports:
            vals = data.get(p, [0] * 8)
            out.append(f"{p:>11}  " + "  ".join(f"{f(v):>6}" for v in vals))
        out.append("")
    return "\n".join(out)


@case
def s04(out):
    """pfc_pause_storm seen only from the switch: SONiC pfc counters and pfcwd on one leaf port."""
    import random
    rng = random.Random(404)
    names = [f"h200-sjc-{i:03d}" for i in range(101, 117)]
    fl = Fleet(rng, names, "H200", 8, layout="hgx", link_layer="Ethernet", net_style="eth", ib_prefix="mlx5_",
               leaf_of=lambda hi, n: f"sjc-leaf-{hi // 8 + 1}")
    sc = Scenario("s04", 404, fl, start=unix("2026-09-14T22:40:00Z"), minutes=100, job="mm-dit-xl", rng=rng)
    bad_host = fl.hosts[5]
    bad_nic = bad_host.nics[6]
    onset = at(sc, 44)
    comm_after(sc, 1.9, onset)

    def wait(h, n, t, v):
        if t >= onset and h.name != bad_host.name and n.switch == bad_nic.switch:
            v["xwait"] += int((t - onset) * 5.5e6)
    sc.nic_hooks.append(wait)
    sc.steps(compute=0.94, comm=0.37, every=20, cols=("compute_s", "loss"))
    leaf = bad_nic.switch
    ports = sorted({n.switch_port for h in fl.hosts for n in h.nics if n.switch == leaf}, key=lambda p: int(p[8:]))
    el = sc.t1 - onset
    rx, tx = {}, {}
    for p in ports:
        if p == bad_nic.switch_port:
            rx[p] = [0, 0, 0, int(el * 38500), 0, 0, 0, 0]
            tx[p] = [0, 0, 0, 1204, 0, 0, 0, 0]
        else:
            rx[p] = [0, 0, 0, int(600 + 900 * _jit(p)), 0, 0, 0, 0]
            tx[p] = [0, 0, 0, int(el * 2100 * (0.5 + _jit(p, 1))), 0, 0, 0, 0]
    sc.out.put(f"switches/{leaf}/cmd/show-pfc-counters.txt", sonic_pfc(ports, rx, tx, commas=True))
    wd = ["      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
          "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for p in ports[:]:
        if p == bad_nic.switch_port:
            wd.append(f"{p + ':3':>11}   stormed                        7/6    0/18342217           0/0         0/2918114                0/0")
        elif _jit(p, "wd") < 0.25:
            wd.append(f"{p + ':3':>11}  operational                        0/0           0/0           0/0                0/0                0/0")
    sc.out.put(f"switches/{leaf}/cmd/show-pfcwd-stats.txt", "\n".join(wd) + "\n")
    other = "sjc-leaf-1" if leaf != "sjc-leaf-1" else "sjc-leaf-2"
    oports = sorted({n.switch_port for h in fl.hosts for n in h.nics if n.switch == other}, key=lambda p: int(p[8:]))
    sc.out.put(f"switches/{other}/cmd/show-pfc-counters.txt", sonic_pfc(
        oports, {p: [0, 0, 0, int(400 + 700 * _jit(p, 2)), 0, 0, 0, 0] for p in oports},
        {p: [0, 0, 0, int(300 + 500 * _jit(p, 3)), 0, 0, 0, 0] for p in oports}, commas=True))
    keep = [h.name for h in fl.hosts[:3]] + [fl.hosts[9].name, fl.hosts[12].name]
    finish(sc, nodes=keep, style="kmsg", dcgm=dict(every=120, fams=("sm", "temp", "power", "util", "reasons")),
           node=dict(every=60), topo=dict(rank_shuffle=True))
    sc.incident(title="mm-dit-xl step time +25% since 23:24 on the sjc pod",
                reported="Fabric team says no link alarms. Only a few nodes had the collector installed.")
    sc.truth("pfc_pause_storm", f"{bad_host.name}/{bad_nic.ibdev}")
    sc.write(out)


@case
def s05(out):
    """ecmp_hash_polarization: snmp series of one leaf's spine uplinks, two ports carry nearly everything."""
    import random
    rng = random.Random(505)
    names = [f"node{i:03d}.ams2.gpu.internal" for i in range(1, 33)]
    fl = Fleet(rng, names, "H100", 4, layout="q4", nics_per_host=4, leaf_of=lambda hi, n: f"ams2-lf{hi // 8 + 1:02d}")
    sc = Scenario("s05", 505, fl, start=unix("2026-03-27T09:00:00Z"), minutes=100, job="vit-22b", rng=rng)
    onset = at(sc, 36)
    comm_after(sc, 1.55, onset)
    badleaf = "ams2-lf03"
    sw = sc.default_switches(spines=2, uplinks=4)
    cap_some(sc, [(names[3], 2), (names[17], 0), (names[22], 3), (names[30], 1)])
    from fleet import OM
    om = OM()
    om.family("ifHCOutOctets", "counter", "The total number of octets transmitted out of the interface, including framing characters.")
    om.family("ifHCInOctets", "counter", "The total number of octets received on the interface, including framing characters.")
    om.family("ifOutDiscards", "counter", "The number of outbound packets which were chosen to be discarded even though no errors had been detected.")
    times = list(range(sc.t0 - 1800, sc.t1 + 1, 60))
    for s in sw:
        if s["tier"] != "leaf":
            continue
        for k, l in enumerate(s["links"]):
            lab = {"ifName": l["port"], "instance": s["name"], "job": "snmp"}
            for fam in ("ifHCOutOctets", "ifHCInOctets", "ifOutDiscards"):
                acc = 3.1e14 * (1 + _jit(s["name"], k, fam))
                for t in times:
                    share = 1 / 8
                    if s["name"] == badleaf and t >= onset:
                        share = 0.44 if k in (1, 6) else 0.02
                    rate = 8 * 3.0e9 * share * (0.97 + 0.06 * _jit(t, k))
                    if fam == "ifOutDiscards":
                        acc = int(120 * (1 + _jit(s["name"], k)) if acc > 1e6 else acc)
                        if s["name"] == badleaf and t >= onset and k in (1, 6):
                            acc += int(60 * 1400 * (0.8 + 0.4 * _jit(t)))
                        om.sample(fam, lab, int(acc), t)
                    else:
                        acc += rate * 60
                        om.sample(fam, lab, int(acc), t)
    sc.out.put("metrics/snmp-leaf-uplinks.om", om.text())
    sc.steps(compute=1.31, comm=0.52, every=15, cols=("compute_s",))
    log = []
    for s_, t, d in sc._logged[::4]:
        log.append(f"I{utc(t).strftime('%m%d %H:%M:%S')}.{int((t % 1) * 1e6):06d} 1 trainer.py:233] step={s_} step_time={d:.3f} examples/s={int(4096 / d)}")
    sc.out.put("job/logs/vit-22b.0.log", "\n".join(log) + "\n")
    sc.out.put("job/logs/change-notes.log", f"{iso(onset - 300)} netops: ams2-lf03 rebooted after NOS patch (approved CHG-20931)\n"
                                            f"{iso(onset - 5200)} netops: ams2 fabric optics audit complete, no action\n")
    finish(sc, nodes=names[8:12] + names[16:18], style="syslog", dcgm=dict(every=120), node=dict(every=120),
           topo=dict(switches=sw))
    sc.incident(title="vit-22b: allreduce bandwidth down by a third since ~09:36, compute unchanged",
                reported="32 nodes over 4 leaves. Profiler: NCCL ring allreduce busbw 38 GB/s -> 25 GB/s.")
    sc.truth("ecmp_hash_polarization", badleaf)
    sc.write(out)


def sonic_ifcounters(rows) -> str:
    h = ("      IFACE    STATE            RX_OK       RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR            TX_OK       TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR")
    s = ("-----------  -------  ---------------  -----------  ---------  --------  --------  --------  ---------------  -----------  ---------  --------  --------  --------")
    out = [h, s]
    for p, rxok, rxbps, rxu, rxdrp, txok, txbps, txu, txdrp in rows:
        out.append(f"{p:>11}  {'U':>7}  {rxok:>15,}  {rxbps:>7.2f} MB/s  {rxu:>8.2f}%  {0:>8}  {rxdrp:>8,}  {0:>8}  {txok:>15,}  {txbps:>7.2f} MB/s  {txu:>8.2f}%  {0:>8}  {txdrp:>8,}  {0:>8}")
    return "\n".join(out) + "\n"


@case
def s06(out):
    """ecmp_hash_polarization from launch: `show interfaces counters` snapshot on the leaves."""
    import random
    rng = random.Random(606)
    names = [f"gx{i:02d}-b{j}" for i in range(1, 11) for j in (1, 2)]
    fl = Fleet(rng, names, "H200", 8, layout="dgx", leaf_of=lambda hi, n: f"leaf-a{hi // 5 + 1}")
    sc = Scenario("s06", 606, fl, start=unix("2026-10-03T03:20:00Z"), minutes=60, job="moe-16x22b", rng=rng)
    badleaf = "leaf-a3"
    comm_after(sc, 1.7, 0)
    launch = sc.t0 - 12 * 60
    sc.steps(compute=1.55, comm=0.55, every=5, start=launch, cols=("compute_s", "loss", "grad_norm"))
    sw = sc.default_switches(spines=4, uplinks=2)
    for s in sw:
        if s["tier"] != "leaf":
            continue
        rows = []
        for k, l in enumerate(s["links"]):
            if s["name"] == badleaf:
                u = 97.8 - 1.2 * _jit(k) if k in (0, 5) else 3.0 + 2 * _jit(k, 1)
                drp = int(2.2e6 * _jit(k, 2)) if k in (0, 5) else 0
            else:
                u = 34 + 6 * _jit(s["name"], k)
                drp = 0
            bps = u / 100 * 400e9 / 8 / 1e6
            rows.append((l["port"], int(4.1e11 * (1 + _jit(s["name"], k, 9))), bps * 0.98, u * 0.98, 0,
                         int(4.3e11 * (1 + _jit(s["name"], k, 8))), bps, u, drp))
        for h in fl.hosts:
            for n in h.nics:
                if n.switch == s["name"]:
                    u = 31 + 5 * _jit(n.switch_port)
                    bps = u / 100 * 400e9 / 8 / 1e6
                    rows.append((n.switch_port, int(3.0e11 * (1 + _jit(n.switch_port, 1))), bps, u, 0, int(3.0e11 * (1 + _jit(n.switch_port, 2))), bps, u, 0))
        rows.sort(key=lambda r: int(r[0][8:]))
        sc.out.put(f"switches/{s['name']}/cmd/show-interfaces-counters.txt", sonic_ifcounters(rows))
    lg = [f"{ts_py(launch)} | INFO | moe-16x22b | world=160 ep=8 tp=4 pp=5 gbs=1280 seq=4096",
          f"{ts_py(launch + 4)} | INFO | moe-16x22b | first fabric job after spine replacement window CHG-7781"]
    for s_, t, d in sc._logged[::3]:
        lg.append(f"{ts_py(t)} | INFO | moe-16x22b | step {s_} | {d:.2f} s/it | {int(1280 * 4096 / d / 160)} tok/s/gpu")
    sc.out.put("job/logs/launcher.log", "\n".join(lg) + "\n")
    finish(sc, nodes=names[:4] + names[10:12], style="ctime", dcgm=dict(every=120, fams=("sm", "power", "util", "tensor", "reasons")),
           node=dict(every=120), topo=dict(switches=sw))
    sc.incident(title="moe-16x22b running ~2.5 s/it since launch; the same config did ~2.1 s/it before the fabric maintenance",
                reported="Expected about 2.1 seconds per iteration (last week's run on this pod). Nothing changed in the job.")
    sc.truth("ecmp_hash_polarization", badleaf)
    sc.write(out)


@case
def s07(out):
    """link_degradation on InfiniBand: one HCA port with symbol errors, recoveries and flaps (journalctl)."""
    import random
    rng = random.Random(707)
    names = [f"gpu-ib-{i:02d}" for i in range(1, 13)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s07", 707, fl, start=unix("2026-05-11T16:00:00Z"), minutes=90, job="gpt-neox-20b", rng=rng)
    bad, nic = "gpu-ib-09", "mlx5_6"
    n = next(x for x in fl.host(bad).nics if x.ibdev == nic)
    onset = at(sc, 29)
    comm_after(sc, 1.45, onset)

    def errs(h, nn, t, v):
        if h.name == bad and nn.ibdev == nic and t >= onset:
            el = t - onset
            v["symbol_error"] = int(el * 37)
            v["rcv_err"] = int(el * 11.5)
            v["link_error_recovery"] = int(el // 700)
            v["downed"] = 2 if el > 1500 else (1 if el > 400 else 0)
        if nn.ibdev == "mlx5_2" and h.name == "gpu-ib-03":
            v["rcv_err"] = 14
    sc.nic_hooks.append(errs)
    for k, dt in enumerate((400, 1500)):
        sc.dmesg[bad] += [(onset + dt, f"mlx5_core {n.sys_bdf} {nic}: Port: 1 Link DOWN"),
                          (onset + dt + 6.2, f"mlx5_core {n.sys_bdf} {nic}: Port: 1 Link INIT"),
                          (onset + dt + 8.9, f"mlx5_core {n.sys_bdf} {nic}: Port: 1 Link ACTIVE")]
    sc.steps(compute=0.88, comm=0.31, every=30)
    warn = [f"gpu-ib-02:40177:40501 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB bond0:10.20.0.2<0>",
            "NCCL version 2.20.5+cuda12.4"]
    sc.out.put("job/logs/nccl.log", "\n".join(warn) + "\n")
    finish(sc, style="journal", ibstat=(bad, "gpu-ib-03"), dcgm=dict(every=90), node=dict(every=60))
    sc.incident(title="gpt-neox-20b: step time 1.2 s -> 1.35 s since ~16:30",
                reported="No NCCL errors, no restarts. Fabric is NDR InfiniBand.")
    sc.truth("link_degradation", f"{bad}/{nic}")
    sc.write(out)


def fec_text(netdev, corrected, uncorrectable, lanes) -> str:
    out = [f"FEC parameters for {netdev}:", "Supported/Configured FEC encodings: Auto", "Active FEC encoding: RS", "Statistics:"]
    out.append(f"  corrected_blocks: {sum(corrected)}")
    if lanes:
        out += [f"    Lane {i}: {v}" for i, v in enumerate(corrected)]
    out.append(f"  uncorrectable_blocks: {sum(uncorrectable)}")
    if lanes:
        out += [f"    Lane {i}: {v}" for i, v in enumerate(uncorrectable)]
    return "\n".join(out) + "\n"


@case
def s08(out):
    """link_degradation on RoCE seen only in FEC statistics (uncorrectable blocks on one lane) and QP retransmits."""
    import random
    rng = random.Random(808)
    names = [f"trn-{c}{i}" for c in "ab" for i in range(1, 5)]
    fl = Fleet(rng, names, "H200", 8, layout="xe", link_layer="Ethernet", net_style="eth", leaf_of=lambda hi, n: "tor-17")
    sc = Scenario("s08", 808, fl, start=unix("2026-11-20T11:45:00Z"), minutes=70, job="diffusion-video-8b", rng=rng)
    bad_h = "trn-b2"
    bad = fl.host(bad_h).nics[1]
    onset = at(sc, 22)
    comm_after(sc, 1.8, onset)

    def retrans(h, nn, t, v):
        if h.name == bad_h and nn.ibdev == bad.ibdev and t >= onset:
            v["out_of_sequence"] = int((t - onset) * 160)
            v["packet_seq_err"] = int((t - onset) * 95)
            v["local_ack_timeout_err"] = int((t - onset) * 0.4)
    sc.nic_hooks.append(retrans)
    for h in fl.hosts:
        for nn in h.nics:
            for which, t in (("now", sc.t1), ("before", sc.t0)):
                base = [int(1e5 * _jit(h.name, nn.ibdev, k)) + 3000 for k in range(4)]
                unc = [0, 0, 0, 0]
                if h.name == bad_h and nn is bad and which == "now":
                    el = t - onset
                    base = [b + int(el * x) for b, x in zip(base, (900, 1100, 48000, 1000))]
                    unc = [0, 0, int(el * 3.1), 0]
                pre = f"nodes/{h.name}/" + ("" if which == "now" else "before/") + "cmd/"
                sc.out.put(pre + f"ethtool-I-show-fec-{nn.netdev}.txt", fec_text(nn.netdev, base, unc, lanes=True))
    sc.steps(compute=1.57, comm=0.44, every=8, cols=("compute_s", "loss", "grad_norm", "lr"), extra=None)
    finish(sc, style="caller", dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "xid")), node=dict(ib=False))
    sc.incident(title="diffusion-video-8b ~15% slower since 12:07; no link down, no NCCL errors",
                reported="RoCE, single ToR (tor-17). Network dashboards are green: no drops, no pause storms.")
    sc.truth("link_degradation", f"{bad_h}/{bad.ibdev}")
    sc.write(out)


@case
def s09(out):
    """thermal_throttle on one GPU (HW+SW thermal slowdown) next to a merely warm neighbour and normal power capping."""
    import random
    rng = random.Random(909)
    names = [f"gpu-c{i:02d}" for i in range(1, 9)]
    fl = Fleet(rng, names, "H100", 8, layout="xe")
    sc = Scenario("s09", 909, fl, start=unix("2026-07-21T13:15:00Z"), minutes=90, job="sd3-finetune", rng=rng)
    bad, gi = "gpu-c04", 3
    onset = at(sc, 41)
    slow_rank(sc, bad, gi, 1.32, onset)
    sc.base[(bad, 6)]["temp"] = 69
    cap_some(sc, [("gpu-c01", 2), ("gpu-c02", 7), ("gpu-c06", 0), ("gpu-c07", 4), ("gpu-c04", 1)])

    def hot(h, i, t, st):
        if h == bad and i == gi and t >= onset - 600:
            ramp = min(1.0, (t - onset + 600) / 600)
            st["temp"] = int(70 + ramp * 21)
            if t >= onset:
                st["reasons"] = HW_THERM | SW_THERM | HW_SLOW if _jit(t, 1) < 0.5 else SW_THERM
                st["sm"] = 1260 + int(_jit(t, 2) * 200)
                st["power"] = 430 + 40 * _jit(t, 3)
                st["tviol"] = int((t - onset) * 0.8e9)
    sc.gpu_hooks.append(hot)
    sc.steps(compute=0.63, comm=0.18, every=20)
    finish(sc, style="plain", smi=(bad, "gpu-c02"), dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "tensor", "reasons", "pviol", "tviol")))
    sc.incident(title="sd3-finetune iteration time up ~25% since 13:56",
                reported="Someone mentioned the cold aisle in row C was being worked on this week.")
    sc.truth("thermal_throttle", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s10(out):
    """thermal_throttle of a whole host: two fans failed (BMC SEL + sdr), every GPU of the host runs hot."""
    import random
    rng = random.Random(1010)
    names = [f"dgx-{i:03d}" for i in (12, 13, 14, 15, 21, 22, 23, 24, 31, 32)]
    fl = Fleet(rng, names, "H100", 8, layout="dgx")
    sc = Scenario("s10", 1010, fl, start=unix("2026-08-02T20:30:00Z"), minutes=100, job="asr-conformer-xl", rng=rng)
    bad = "dgx-023"
    onset = at(sc, 33)
    slow_host(sc, bad, 1.17, onset + 240)

    def hot(h, i, t, st):
        if h == bad and t >= onset:
            ramp = min(1.0, (t - onset) / 420)
            st["temp"] = int(st["temp"] + ramp * (24 + i % 3))
            if t >= onset + 240:
                if _jit(h, i, t) < 0.7:
                    st["reasons"] = SW_THERM
                st["sm"] = 1590 + int(_jit(h, i, t, 2) * 190)
                st["tviol"] = int((t - onset - 240) * 0.55e9)
    sc.gpu_hooks.append(hot)
    sel = [(sc.boot[bad] + 200, "Power Supply PSU1 Status", "Presence detected", "Asserted"),
           (sc.boot[bad] + 201, "Power Supply PSU2 Status", "Presence detected", "Asserted"),
           (onset - 30, "Fan FAN3A", "Lower Critical going low", "Asserted"),
           (onset - 29, "Fan FAN3B", "Lower Critical going low", "Asserted"),
           (onset + 310, "Temperature GPU Zone Temp", "Upper Non-critical going high", "Asserted")]
    sc.out.put(f"nodes/{bad}/cmd/ipmitool-sel-elist.txt", sel_text(sc, sel))
    fans = [(f"FAN{k}{s}", f"{0x30 + 2 * k + (s == 'B'):02x}h", "ok", "29.1", f"{11760 + int(_jit(k, s) * 800)} RPM")
            for k in range(1, 7) for s in "AB"]
    fans = [(a, b, "cr" if a in ("FAN3A", "FAN3B") else c, d, "0 RPM" if a in ("FAN3A", "FAN3B") else e) for a, b, c, d, e in fans]
    sc.out.put(f"nodes/{bad}/cmd/ipmitool-sdr-type-fan.txt", fans_text(fans))
    okh = "dgx-014"
    sc.out.put(f"nodes/{okh}/cmd/ipmitool-sel-elist.txt", sel_text(sc, [(sc.boot[okh] + 190, "Power Supply PSU1 Status", "Presence detected", "Asserted")]))
    sc.out.put(f"nodes/{okh}/cmd/ipmitool-sdr-type-fan.txt", fans_text([(f"FAN{k}{s}", f"{0x30 + 2 * k + (s == 'B'):02x}h", "ok", "29.1", f"{11800 + int(_jit(k, s, 1) * 700)} RPM") for k in range(1, 7) for s in "AB"]))
    sc.steps(compute=0.74, comm=0.23, every=25, cols=("compute_s",))
    finish(sc, style="ctime", smi=(bad,), dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "tviol")))
    sc.incident(title="asr-conformer-xl slowed ~12% around 21:05 and has not recovered",
                reported="")
    sc.truth("thermal_throttle", bad)
    sc.write(out)


@case
def s11(out):
    """power_throttle of a whole host: a PSU lost AC, the board asserts power brake on all eight GPUs."""
    import random
    rng = random.Random(1111)
    names = [f"hgx{i:02d}.lon4.example.net" for i in range(1, 17)]
    fl = Fleet(rng, names, "H200", 8, layout="hgx", spares=(names[15],))
    sc = Scenario("s11", 1111, fl, start=unix("2026-12-01T05:00:00Z"), minutes=80, job="llm-120b-pretrain", rng=rng)
    bad = names[9]
    onset = at(sc, 27)
    slow_host(sc, bad, 1.85, onset)
    cap_some(sc, [(names[1], 3), (names[4], 4), (names[6], 0), (names[12], 6)])

    def brake(h, i, t, st):
        if h == bad and t >= onset:
            st["reasons"] = HW_SLOW | HW_BRAKE
            st["sm"] = 900 + int(_jit(h, i, t) * 120)
            st["power"] = 265 + 30 * _jit(h, i, t, 1)
            st["pviol"] = int((t - onset) * 1e9)
    sc.gpu_hooks.append(brake)
    sel = [(sc.boot[bad] + 240, "Power Supply PSU1", "Presence detected", "Asserted"),
           (sc.boot[bad] + 240, "Power Supply PSU2", "Presence detected", "Asserted"),
           (sc.boot[bad] + 241, "Power Supply PSU3", "Presence detected", "Asserted"),
           (sc.boot[bad] + 241, "Power Supply PSU4", "Presence detected", "Asserted"),
           (onset - 4, "Power Supply PSU3", "Power Supply AC lost", "Asserted"),
           (onset - 3, "Power Unit PSU Redundancy", "Redundancy Lost", "Asserted"),
           (onset + 1500, "Power Supply PSU3", "Failure detected", "Asserted")]
    sc.out.put(f"nodes/{bad}/cmd/ipmitool-sel-elist.txt", sel_text(sc, sel))
    sc.steps(compute=1.96, comm=0.71, every=5, gz=True)
    finish(sc, nodes=[bad, names[1], names[4], names[15]], style="journal", smi=(bad, names[4]),
           dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "pviol")))
    sc.incident(title="llm-120b-pretrain MFU 47% -> 29% since 05:27",
                reported="Loss is fine. Power dashboards show several GPUs with power throttling across the pod, which is normal for us.")
    sc.truth("power_throttle", bad)
    sc.write(out)


@case
def s12(out):
    """power_throttle of one A100: its enforced limit was lowered to 250 W; peers only touch their normal cap."""
    import random
    rng = random.Random(1212)
    names = [f"a100-{i:02d}" for i in range(1, 9)]
    fl = Fleet(rng, names, "A100", 8, layout="dgx", nics_per_host=8)
    sc = Scenario("s12", 1212, fl, start=unix("2026-01-14T10:00:00Z"), minutes=90, job="t5-xxl-ft", rng=rng)
    bad, gi = "a100-06", 1
    onset = at(sc, 47)
    slow_rank(sc, bad, gi, 1.27, onset)
    cap_some(sc, [("a100-02", 5), ("a100-03", 0), ("a100-05", 7), ("a100-06", 4), ("a100-08", 2)])

    def lowcap(h, i, t, st):
        if h == bad and i == gi and t >= onset:
            st["plimit"] = 250
            st["power"] = 246 + 4 * _jit(t)
            st["reasons"] = SW_POWER
            st["sm"] = 1035 + int(_jit(t, 1) * 90)
            st["pviol"] = int((t - onset) * 0.98e9)
    sc.gpu_hooks.append(lowcap)
    sc.steps(compute=0.52, comm=0.17, every=20, cols=("compute_s", "loss"))
    finish(sc, style="syslog", smi="all", ibstat=("a100-06",),
           dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "pviol")))
    sc.incident(title="t5-xxl-ft slower since 10:47; dcgm shows power throttling on six GPUs",
                reported="We always see some power capping on this DGX pod. Not sure it is related.")
    sc.truth("power_throttle", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s13(out):
    """hbm_degradation: an in-window burst of row-remap XIDs and a contained error that restarted the job."""
    import random
    rng = random.Random(1313)
    names = [f"sc-gpu{i:02d}" for i in range(1, 7)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s13", 1313, fl, start=unix("2026-03-05T00:40:00Z"), minutes=90, job="codegen-15b", rng=rng)
    bad, gi = "sc-gpu05", 2
    g = fl.host(bad).gpus[gi]
    onset = at(sc, 34)
    crash = at(sc, 52)
    resume = crash + 7 * 60
    slow_rank(sc, bad, gi, 1.09, onset)

    def ecc(h, i, t, st):
        if h == bad and i == gi:
            if t >= onset:
                st["sbe"] = st["sbe"] + int((t - onset) * 4.2)
                st["remap_cor"] = 3 if t >= onset + 700 else 1
                st["remap_pending"] = True
            if t >= crash:
                st["xid"] = 94
            elif t >= onset:
                st["xid"] = 63
    sc.gpu_hooks.append(ecc)
    sc.gpu_hooks.append(lambda h, i, t, st: st.update(sbe=st["sbe"] + 40) if (h == "sc-gpu02" and i == 6) else None)
    ev = []
    for k, dt in enumerate((0, 380, 700)):
        ev.append((onset + dt, f"NVRM: Xid ({g.xid_tag}): 63, pid=3317{k}, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."))
    ev.append((crash - 0.8, f"NVRM: Xid ({g.xid_tag}): 94, pid=33170, name=python3, Contained: FB DED (0x0, 0x0). physAddr: 0x1e2c9a0c0 RST: No, D-RST: No"))
    sc.dmesg[bad] += ev
    sc.dmesg["sc-gpu02"].append((sc.boot["sc-gpu02"] + 86400 * 2.3, f"NVRM: Xid ({fl.host('sc-gpu02').gpus[6].xid_tag}): 63, pid=1212, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate."))
    rk = sc.rank_of[(bad, gi)]
    sc.steps(compute=0.71, comm=0.22, every=20, restarts=[(crash, resume, 13000)], first_step=11000)
    lg = [f"[{ts_py(t)}] [rank0] step {s}/200000 lr 2.4e-4 loss {2.0 + 0.2 * _jit(s):.3f} {d * 1000:.0f} ms/step" for s, t, d in sc._logged[::5]]
    lg.append(f"[{ts_py(crash)}] [rank{rk}] RuntimeError: CUDA error: uncorrectable ECC error encountered")
    lg.append(f"[{ts_py(crash + 2)}] [launcher] worker rank {rk} exited with code 1, restarting from checkpoint step 13000 (attempt 2/5)")
    lg.sort()
    sc.out.put("job/logs/codegen-15b.log", "\n".join(lg) + "\n")
    finish(sc, style="ctime", smi=(bad,), dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "xid", "sbe", "remap_cor")))
    sc.incident(title="codegen-15b: step time drifting up since ~01:14 and one crash-restart at 01:32",
                reported="Restarted from checkpoint automatically. Still slower than this morning.")
    sc.truth("hbm_degradation", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s14(out):
    """hbm_degradation: double-bit error and a failed row remap in syslog; the job crashed twice on the same rank."""
    import random
    rng = random.Random(1414)
    names = [f"10.91.4.{i}" .replace(".", "-") for i in range(21, 45)]
    fl = Fleet(rng, names, "A100", 8, layout="dgx", leaf_of=lambda hi, n: f"ib-leaf-{hi // 6 + 1}",
               instances=lambda hi, n: n.replace("-", "."))
    sc = Scenario("s14", 1414, fl, start=unix("2026-02-02T18:00:00Z"), minutes=120, job="bert-pretrain-mlperf", rng=rng)
    bad, gi = names[13], 5
    g = fl.host(bad).gpus[gi]
    c1, r1 = at(sc, 31), at(sc, 39)
    c2, r2 = at(sc, 78), at(sc, 88)

    def ecc(h, i, t, st):
        if h == bad and i == gi and t >= c1:
            st["dbe"] = 1 if t < c2 else 2
            st["remap_unc"] = 1 if t < c2 else 2
            st["remap_fail"] = 1 if t >= c2 else 0
            st["xid"] = 64 if t >= c2 else 48
    sc.gpu_hooks.append(ecc)
    for c in (c1, c2):
        sc.dmesg[bad] += [(c - 1.2, f"NVRM: Xid ({g.xid_tag}): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa{int(_jit(c) * 9999):04x} partition 3, subpartition 1."),
                          (c - 1.1, f"NVRM: Xid ({g.xid_tag}): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).")
                          if c == c2 else (c - 1.1, f"NVRM: Xid ({g.xid_tag}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping, reset gpu to activate.")]
    sc.sticky_xid[(names[2], 3)] = 43
    sc.steps(compute=0.38, comm=0.09, every=50, restarts=[(c1, r1, 5000), (c2, r2, 10000)], gz=True,
             cols=("compute_s", "loss"), missing=0.002)
    rk = sc.rank_of[(bad, gi)]
    lg = []
    for c in (c1, c2):
        lg += [f"{ts_py(c)} ERROR [rank{rk}] CUDA error: uncorrectable ECC error encountered",
               f"{ts_py(c + 0.2)} ERROR [rank{rk}] Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
               f"{ts_py(c + 3)} WARNING torch.distributed.elastic.multiprocessing.api: Sending process {80211 + int(c) % 1000} closing signal SIGTERM",
               f"{ts_py(c + 9)} INFO torch.distributed.elastic.agent.server.api: [default] Worker group FAILED. 3/3 attempts left; will restart worker group"]
    sc.out.put("job/logs/torchrun.log", "\n".join(lg) + "\n")
    finish(sc, nodes=[bad] + names[:4], style="syslog", dcgm=dict(every=120, fams=("sm", "temp", "util", "xid", "dbe", "remap_unc", "remap_fail")),
           node=dict(port_suffix=":9100"))
    sc.incident(title="bert-pretrain-mlperf restarted twice in two hours (CUDA error)",
                reported="torchrun restarts the worker group each time; losing ~10 min per restart.")
    sc.truth("hbm_degradation", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s15(out):
    """gpu_fell_off_bus: raw /dev/kmsg records, NVML lost, config space all ones; the job hangs on a collective."""
    import random
    rng = random.Random(1515)
    names = [f"k8s-gpu-pool2-{s}" for s in ("x7k2p", "b91qz", "m3tt8", "q0v2a", "r88dn", "c4jw1")]
    fl = Fleet(rng, names, "H100", 8, layout="xe")
    sc = Scenario("s15", 1515, fl, start=unix("2026-09-30T08:00:00Z"), minutes=60, job="dpo-34b", rng=rng)
    bad, gi = "k8s-gpu-pool2-r88dn", 6
    g = fl.host(bad).gpus[gi]
    onset = at(sc, 24) + 7
    sc.lost[(bad, gi)] = onset
    sc.dmesg[bad] += [(onset, f"NVRM: GPU at PCI:0000:{g.bus:02x}:00: {g.uuid}"),
                      (onset + 0.00001, "NVRM: GPU Board Serial Number: 1653723052734"),
                      (onset + 0.00002, f"NVRM: Xid ({g.xid_tag}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
                      (onset + 0.00003, f"NVRM: GPU {g.sys_bdf}: GPU has fallen off the bus."),
                      (onset + 11.8, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up")]
    sc.nvml_events[bad].append({"device": gi, "type": "XidCriticalError", "data": 79, "time": iso(onset)})
    sc.gpu_hooks.append(lambda h, i, t, st: st.update(tensor=0.0, power=118 + 9 * _jit(h, i), util=100) if t >= onset + 20 else None)
    other = "k8s-gpu-pool2-b91qz"
    sc.dmesg[other].append((sc.boot[other] + 3 * 86400 + 1000, f"NVRM: Xid ({fl.host(other).gpus[1].xid_tag}): 31, pid=20931, name=python3, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"))
    sc.sticky_xid[(other, 1)] = 31
    sc.steps(compute=1.21, comm=0.40, every=10, stop_at=onset)
    rk = sc.rank_of[(bad, gi)]
    wd = [f"[rank{r}]:[E{utc(onset + 600).strftime('%m%d %H:%M:%S')}.{123992144 + r:09d} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600020 milliseconds before timing out."
          for r in (0, 9, 17, 40)]
    wd.append(f"[rank3]:[E{utc(onset + 600).strftime('%m%d %H:%M:%S')}.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from  rank {rk} and we will try our best to dump the debug info. Last enqueued NCCL work: 88213, last completed NCCL work: 88212.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ")
    sc.out.put("job/logs/pod-logs.log", "\n".join(wd) + "\n")
    finish(sc, style="kmsg", lspci=(bad,), smi=(bad,), dcgm=dict(every=30, before=600, fams=("sm", "temp", "power", "util", "xid")))
    sc.incident(title="dpo-34b stuck: no step logged since 08:24, NCCL watchdog timeouts",
                reported="All pods still Running. Training loop frozen.")
    sc.truth("gpu_fell_off_bus", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s16(out):
    """gpu_fell_off_bus in the newer multi-line wording; the elastic job continues on fewer ranks."""
    import random
    rng = random.Random(1616)
    names = [f"h200-{r}{i}" for r in "pq" for i in range(1, 5)]
    fl = Fleet(rng, names, "H200", 8, layout="hgx")
    sc = Scenario("s16", 1616, fl, start=unix("2026-11-02T02:15:00Z"), minutes=90, job="embed-ft-elastic", rng=rng)
    bad, gi = "h200-q3", 5
    g = fl.host(bad).gpus[gi]
    onset = at(sc, 40)
    sc.lost[(bad, gi)] = onset
    sc.dmesg[bad] += [(onset, f"NVRM: The NVIDIA GPU {g.sys_bdf}"), (onset, "NVRM: (PCI ID: 10de:2335) installed in this system has"),
                      (onset, "NVRM: fallen off the bus and is not responding to commands."),
                      (onset + 2.1, f"pcieport 0000:{g.bus - 3:02x}:01.0: pciehp: Slot(10): Link Down")]
    from fleet import IDLE
    sc.gpu_hooks.append(lambda h, i, t, st: st.update(util=0, tensor=0.0, sm=345, power=fl.m["idle_w"] + 3 * _jit(i), reasons=IDLE)
                        if (h == bad and t >= onset + 60) else None)
    for k in range(8):
        if k != gi:
            sc.pcie_now[(bad, k)] = (1, 16)
            sc.pcie_before[(bad, k)] = (5, 16)
    ranks_before = sc.ranks
    ranks_after = [x for x in sc.ranks if x[1] != bad]
    resume = onset + 420
    sc.steps(compute=0.58, comm=0.20, every=20, end=onset, name="job/steps.csv", ranks=ranks_before, cols=("compute_s", "loss", "grad_norm"))
    first = sc._logged
    rows_a = sc.out.files.pop("job/steps.csv").decode().splitlines()
    sc.steps(compute=0.58 * 64 / 56, comm=0.19, every=20, start=resume, first_step=first[-1][0] - 200, ranks=ranks_after,
             cols=("compute_s", "loss", "grad_norm"))
    rows_b = sc.out.files.pop("job/steps.csv").decode().splitlines()
    sc.out.put("job/steps.csv", "\n".join(rows_a + rows_b[1:]) + "\n")
    lg = [f"{ts_py(onset + 30)} [elastic] membership change: node {bad} left (heartbeat timeout)",
          f"{ts_py(resume - 20)} [elastic] re-rendezvous complete: world_size 64 -> 56, resuming from step {first[-1][0] - 200}"]
    sc.out.put("job/logs/elastic-agent.log", "\n".join(lg) + "\n")
    finish(sc, style="journal", nvml_gz=True, dcgm=dict(every=60, fams=("sm", "power", "util", "tensor", "reasons")))
    sc.incident(title="embed-ft-elastic shrank from 64 to 56 GPUs at ~02:55 and per-step time went up",
                reported="The elastic agent kicked a node out. Want to know why before re-adding it.")
    sc.truth("gpu_fell_off_bus", f"{bad}/gpu{gi}")
    sc.write(out)


def nvlink_e(gpus, counts) -> str:
    out = []
    for g, bdf in gpus:
        out.append(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: {bdf})")
        for l in range(18):
            c = counts.get((g, l), (0, 0, 0, 0))
            out += [f"\t Link {l}: Replay Errors: {c[0]}", f"\t Link {l}: Recovery Errors: {c[1]}",
                    f"\t Link {l}: CRC Errors: {c[2]}"]
    return "\n".join(out) + "\n"


@case
def s17(out):
    """nvlink_fault with an XID 74 and rising CRC/replay counters on one GPU's links."""
    import random
    rng = random.Random(1717)
    names = [f"nv{i:02d}" for i in range(1, 7)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s17", 1717, fl, start=unix("2026-06-18T19:00:00Z"), minutes=80, job="mixtral-ft", rng=rng)
    bad, gi = "nv04", 7
    g = fl.host(bad).gpus[gi]
    onset = at(sc, 30)
    comm_after(sc, 1.5, onset)

    def nvl(h, i, t, st):
        if h == bad and i == gi and t >= onset:
            st["nvl_crc"] = int((t - onset) * 55)
            st["nvl_replay"] = int((t - onset) * 9)
        if h == "nv02" and i == 3:
            st["nvl_replay"] = 4
    sc.gpu_hooks.append(nvl)
    sc.dmesg[bad].append((onset + 95, f"NVRM: Xid ({g.xid_tag}): 74, pid=51022, name=python3, NVLink: fatal error detected on link 11(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"))
    for h in (bad, "nv02"):
        hh = fl.host(h)
        for which, t in (("now", sc.t1), ("before", sc.t0)):
            counts = {}
            for gg in hh.gpus:
                st = sc.gpu_state(h, gg.index, t)
                if st["nvl_crc"] or st["nvl_replay"]:
                    counts[(gg.index, 11 if h == bad else 2)] = (st["nvl_replay"], 0, st["nvl_crc"], 0)
                    if h == bad:
                        counts[(gg.index, 12)] = (st["nvl_replay"] // 3, 0, st["nvl_crc"] // 4, 0)
            pre = f"nodes/{h}/" + ("" if which == "now" else "before/") + "cmd/"
            sc.out.put(pre + "nvidia-smi-nvlink-e.txt", nvlink_e([(gg.index, gg.uuid) for gg in hh.gpus], counts))
    sc.steps(compute=0.96, comm=0.34, every=15)
    finish(sc, style="caller", dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "xid", "nvl_crc", "nvl_replay")))
    sc.incident(title="mixtral-ft step time 1.3 s -> 1.5 s since ~19:30",
                reported="Expert-parallel all-to-all time went up in the profiler.")
    sc.truth("nvlink_fault", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s18(out):
    """nvlink_fault without any XID: only replay/CRC counters in DCGM series climb on one GPU."""
    import random
    rng = random.Random(1818)
    names = [f"pod7-{i:02d}" for i in range(1, 11)]
    fl = Fleet(rng, names, "H100", 8, layout="xe")
    sc = Scenario("s18", 1818, fl, start=unix("2026-08-25T12:30:00Z"), minutes=75, job="longctx-13b", rng=rng)
    bad, gi = "pod7-08", 6
    onset = at(sc, 20)
    comm_after(sc, 1.8, onset)

    def nvl(h, i, t, st):
        if h == bad and i == gi and t >= onset:
            st["nvl_replay"] = int((t - onset) * 21)
            st["nvl_crc"] = int((t - onset) * 6)
    sc.gpu_hooks.append(nvl)
    sc.dmesg["pod7-02"].append((sc.boot["pod7-02"] + 38.17, "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt"))
    sc.dmesg["pod7-02"].append((sc.boot["pod7-02"] + 38.18, "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Severity 0 Engine instance 44 Sub-engine instance 00"))
    sc.steps(compute=1.45, comm=0.52, every=10, cols=("compute_s", "loss", "grad_norm", "tokens"),
             extra={"tokens": 262144})
    finish(sc, nodes=[bad, "pod7-02", "pod7-05"], style="plain",
           dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons", "xid", "nvl_crc", "nvl_replay")))
    sc.incident(title="longctx-13b ~20% slower since 12:50; nothing in the logs",
                reported="")
    sc.truth("nvlink_fault", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s19(out):
    """silent_data_corruption: one replica's parameter checksum departs from its peers; no error anywhere."""
    import random
    rng = random.Random(1919)
    names = [f"gpu{i}.dc3.internal" for i in (1018, 1019, 1022, 1023, 1031, 1040)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s19", 1919, fl, start=unix("2026-04-29T02:00:00Z"), minutes=90, job="llama-8b-dp", rng=rng)
    order = names[:]
    rng.shuffle(order)
    # ranks placed host by host in a shuffled host order
    sc.ranks = [(k * 8 + g, h, g) for k, h in enumerate(order) for g in range(8)]
    sc.rank_of = {(h, g): r for r, h, g in sc.ranks}
    bad, gi = names[3], 2
    rk = sc.rank_of[(bad, gi)]
    onset = at(sc, 44)
    sc.steps(compute=0.44, comm=0.15, every=25, cols=("compute_s", "loss", "grad_norm", "param_checksum"),
             checksum_bad=lambda r, s, t: r == rk and t >= onset)
    sc.dmesg[names[4]].append((sc.boot[names[4]] + 86400 * 1.7, f"NVRM: Xid ({fl.host(names[4]).gpus[5].xid_tag}): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"))
    warn = ["", f"{names[1]}:40112:40466 [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_3:1 Got async event : GID table change"]
    sc.out.put("job/logs/nccl-warn.log", "\n".join(warn) + "\n")
    finish(sc, style="ctime", dcgm=dict(every=60), topo=dict(rank_shuffle=True))
    sc.incident(title="llama-8b-dp: loss has small spikes since ~02:45, eval ppl slightly worse, no alerts",
                reported="Pure data parallel, 48 GPUs. The replicas should be bit-identical after every optimizer step.")
    sc.truth("silent_data_corruption", f"{bad}/gpu{gi}")
    sc.write(out)


@case
def s20(out):
    """silent_data_corruption after a restart: checksums logged every 50 steps, some ranks missing from rows."""
    import random
    rng = random.Random(2020)
    names = [f"{i:03d}-gpu-{j}" for i in (4, 5, 6, 7) for j in (1, 2, 3)]
    fl = Fleet(rng, names, "A100", 4, layout="q4", nics_per_host=2)
    sc = Scenario("s20", 2020, fl, start=unix("2026-01-30T21:00:00Z"), minutes=120, job="protein-lm", rng=rng)
    bad, gi = names[7], 3
    rk = sc.rank_of[(bad, gi)]
    stop, resume = at(sc, 35), at(sc, 43)
    sc.steps(compute=0.81, comm=0.22, every=50, cols=("compute_s", "loss", "grad_norm", "param_checksum"),
             checksum_bad=lambda r, s, t: r == rk and t >= resume + 900, restarts=[(stop, resume, 6000)],
             missing=0.01, first_step=3000, gz=True)
    lg = [f"{ts_py(stop)} INFO preempted by scheduler (maintenance window), checkpoint step 6000 saved",
          f"{ts_py(resume)} INFO resumed from step 6000 on the same allocation"]
    sc.out.put("job/logs/run.log", "\n".join(lg) + "\n")
    sc.capped.update({(names[2], 1), (names[9], 0)})
    finish(sc, nodes=names[6:9], style="journal", dcgm=dict(every=120, gz=False, fams=("sm", "temp", "power", "util", "xid", "sbe")),
           node=dict(every=120, gz=False))
    sc.incident(title="protein-lm replica divergence alarm fired at 22:00",
                reported="The checksum monitor compares replicas every 50 steps.")
    sc.truth("silent_data_corruption", f"{bad}/gpu{gi}")
    sc.write(out)


def top_text(t, load, us, sy, idle, procs, mem_total=2063842.4, mem_free=181220.1, swap_used=0.0, boot=None) -> str:
    d = utc(t)
    up = int(t - boot) if boot else 21 * 86400 + 3 * 3600 + 720
    L = [f"top - {d.strftime('%H:%M:%S')} up {up // 86400} days, {up % 86400 // 3600:>2}:{up % 3600 // 60:02d},  2 users,  load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
         f"Tasks: 1421 total,   {sum(1 for p in procs if p[7] == 'R') + 1} running, 1419 sleeping,   0 stopped,   0 zombie",
         f"%Cpu(s): {us:4.1f} us, {sy:4.1f} sy,  0.0 ni, {idle:4.1f} id,  0.1 wa,  0.0 hi,  0.3 si,  0.0 st",
         f"MiB Mem : {mem_total:9.1f} total, {mem_free:9.1f} free, {mem_total - mem_free - 412000:9.1f} used, {412000.0:9.1f} buff/cache",
         f"MiB Swap:   8192.0 total, {8192.0 - swap_used:8.1f} free, {swap_used:8.1f} used. {mem_free + 300000:9.1f} avail Mem",
         "",
         "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for pid, user, virt, res, shr, cpu, mem, s, tm, cmd in procs:
        L.append(f"{pid:>7} {user:<9} 20   0 {virt:>7} {res:>6} {shr:>6} {s} {cpu:>5.1f} {mem:>5.1f} {tm:>9} {cmd}")
    return "\n".join(L) + "\n"


def trainer_procs(n, cpu=99.7):
    return [(401220 + k, "mlsvc", "61.2g", "9.8g", "1.1g", cpu - k * 0.3, 0.5, "R", f"{1980 + k * 3}:11.42", "python3") for k in range(n)]


@case
def s21(out):
    """host_contention: a stray CPU-heavy process on one host starves its eight ranks (top, PSI, load)."""
    import random
    rng = random.Random(2121)
    names = [f"ml-{r}-{i:02d}" for r in ("west", "east") for i in range(1, 9)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s21", 2121, fl, start=unix("2026-05-30T06:00:00Z"), minutes=90, job="recsys-dlrm-v3", rng=rng)
    bad = "ml-east-03"
    onset = at(sc, 29)
    slow_host(sc, bad, 1.34, onset)
    sc.gpu_hooks.append(lambda h, i, t, st: st.update(util=71 + int(_jit(h, i, t) * 9), tensor=st["tensor"] * 0.74)
                        if (h == bad and t >= onset) else None)
    sc.steps(compute=0.66, comm=0.21, every=20)
    procs = [(771902, "etl", "38.1g", "30.2g", "12.0m", 5421.0, 1.5, "R", "2451:09.88", "python3 reshard_parquet.py --workers 64")]
    procs += trainer_procs(8, cpu=61.0)
    procs += [(2211, "root", "2.1g", "311.0m", "41.2m", 3.9, 0.0, "S", "902:11.05", "dcgm-exporter"),
              (1840, "root", "1.3g", "75.3m", "23.1m", 1.2, 0.0, "S", "301:22.19", "node_exporter")]
    sc.out.put(f"nodes/{bad}/cmd/top.txt", top_text(sc.t1, (171.8, 168.2, 122.6), 88.9, 10.2, 0.4, procs, boot=sc.boot[bad]))
    sc.out.put(f"nodes/{bad}/cmd/pressure-cpu.txt", "some avg10=71.04 avg60=69.82 avg300=58.11 total=1987732112\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    ok = "ml-west-05"
    sc.out.put(f"nodes/{ok}/cmd/top.txt", top_text(sc.t1, (13.9, 14.1, 14.0), 9.1, 3.0, 87.6, trainer_procs(8) + [(2210, "root", "2.1g", "309.1m", "41.0m", 2.6, 0.0, "S", "899:01.11", "dcgm-exporter")], boot=sc.boot[ok]))
    sc.out.put(f"nodes/{ok}/cmd/pressure-cpu.txt", "some avg10=0.41 avg60=0.38 avg300=0.35 total=218733126\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")

    def psi(h, t):
        return 0.69 if (h == bad and t >= onset) else None

    def load(h, t):
        return 160 + 15 * _jit(t) if (h == bad and t >= onset) else None
    finish(sc, nodes=[bad, ok, "ml-west-01", "ml-east-07"], style="journal", dcgm=dict(every=60),
           node=dict(every=60, psi=psi, load=load))
    sc.incident(title="recsys-dlrm-v3: 25% slower since 06:29, GPU util dashboards look uneven",
                reported="Nothing changed in the job. Shared cluster; other teams run CPU jobs on the same pool.")
    sc.truth("host_contention", bad)
    sc.write(out)


@case
def s22(out):
    """host_contention through memory: reclaim stalls on one host (PSI memory, kswapd, swap), visible nowhere else."""
    import random
    rng = random.Random(2222)
    names = [f"gn{i:03d}" for i in (110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121)]
    fl = Fleet(rng, names, "A100", 8, layout="dgx")
    sc = Scenario("s22", 2222, fl, start=unix("2026-03-16T15:20:00Z"), minutes=100, job="whisper-large-ft", rng=rng)
    bad = "gn117"
    onset = at(sc, 37)
    slow_host(sc, bad, 1.24, onset)
    sc.steps(compute=0.92, comm=0.18, every=20, cols=("compute_s", "loss"))
    procs = trainer_procs(8, cpu=88.0) + [(99120, "jlee", "1.4t", "1.2t", "1.1m", 101.2, 61.4, "S", "412:10.05", "python3 build_index.py --in-memory"),
                                         (233, "root", "0", "0", "0", 62.1, 0.0, "R", "88:42.17", "kswapd0"),
                                         (234, "root", "0", "0", "0", 58.4, 0.0, "R", "79:12.40", "kswapd1")]
    sc.out.put(f"nodes/{bad}/cmd/top.txt", top_text(sc.t1, (41.2, 39.9, 30.1), 31.2, 22.4, 45.1, procs, mem_free=2311.4, swap_used=8011.2, boot=sc.boot[bad]))
    sc.out.put(f"nodes/{bad}/cmd/pressure-memory.txt", "some avg10=52.18 avg60=49.77 avg300=38.02 total=1877210044\nfull avg10=33.61 avg60=31.09 avg300=22.85 total=1101228830\n")
    sc.out.put(f"nodes/{bad}/cmd/pressure-cpu.txt", "some avg10=3.12 avg60=2.95 avg300=2.40 total=312009112\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    sc.out.put(f"nodes/{bad}/cmd/pressure-io.txt", "some avg10=8.40 avg60=7.91 avg300=6.02 total=401228001\nfull avg10=7.95 avg60=7.40 avg300=5.71 total=380002113\n")
    for ok in ("gn110", "gn121"):
        sc.out.put(f"nodes/{ok}/cmd/pressure-memory.txt", "some avg10=0.00 avg60=0.00 avg300=0.00 total=10231\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=8112\n")
    sc.dmesg[bad] += [(onset + 900, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"),
                      (onset + 900.01, "Out of memory: Killed process 99544 (python3) total-vm:40091224kB, anon-rss:39120012kB, file-rss:0kB, shmem-rss:0kB, UID:1023 pgtables:77312kB oom_score_adj:0")]
    finish(sc, nodes=[bad, "gn110", "gn121"], style="ctime", dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons")),
           node=dict(every=60))
    sc.incident(title="whisper-large-ft: step time up ~20% since ~15:57, dataloader workers fine",
                reported="DGX A100 pool shared with interactive users.")
    sc.truth("host_contention", bad)
    sc.write(out)


@case
def s23(out):
    """input_pipeline_stall: Lightning + PyTorch DataLoader reading from S3, botocore SlowDown retries."""
    import random
    rng = random.Random(2323)
    names = [f"ip-10-0-{a}-{b}" for a, b in ((12, 41), (12, 77), (13, 5), (13, 190), (14, 22), (14, 61), (15, 9), (15, 150))]
    fl = Fleet(rng, names, "H100", 8, layout="xe", nics_per_host=4, link_layer="Ethernet", net_style="eth",
               instances=lambda hi, n: n[3:].replace("-", "."))
    sc = Scenario("s23", 2323, fl, start=unix("2026-07-07T09:10:00Z"), minutes=80, job="vlm-7b-sft", rng=rng)
    onset = at(sc, 26)
    sc.wait_hooks.append(lambda t: (0.35 + 0.9 * _jit(int(t) // 30)) if t >= onset else 0.0)
    sc.nic_rate = (lambda orig: (lambda h, n, t: orig(h, n, t) * (0.62 if t >= onset else 1.0)))(sc.nic_rate)
    cap_some(sc, [(names[0], 4), (names[2], 2), (names[5], 7)])
    sc.steps(compute=0.83, comm=0.24, every=10)
    L = []
    for s, t, d in sc._logged[::3]:
        dw = max(0.0, d - 1.1)
        L.append(f"Epoch 0:  {s / 200000 * 100:.0f}%|          | {s}/200000 [{int((t - sc.t0 + 3600) // 3600)}:{int((t - sc.t0) % 3600 // 60):02d}:00<00:00, {1 / d:.2f}it/s, v_num=3, train_loss={2.1 + 0.1 * _jit(s):.3f}, data_wait_s={dw:.3f}]")
    for k in range(30):
        t = onset + k * 97 + 13
        L.append(f"{ts_py(t)} WARNING botocore.retryhandler: Retry needed, action of: {0.5 + _jit(k):.2f}")
        if k % 4 == 0:
            L.append(f"{ts_py(t + 3)} WARNING dataset.s3_shards: GetObject s3://vlm-corpus-use1/shards/train-{int(_jit(k, 1) * 9999):05d}.tar failed, retrying (4/10): An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate.")
        if k % 9 == 4:
            L.append(f"{ts_py(t + 7)} WARNING lightning.pytorch.utilities.rank_zero: DataLoader worker queue empty for {20 + int(_jit(k, 2) * 20)} s on rank {int(_jit(k, 3) * 64)}; consider increasing prefetch_factor")
    L.sort(key=lambda x: x[:19] if x[0].isdigit() else "9")
    sc.out.put("job/logs/lightning.log", "\n".join(L) + "\n")
    finish(sc, nodes=names[:3], style="journal", ethtool=names[:1], dcgm=dict(every=60), node=dict(ib=False))
    sc.incident(title="vlm-7b-sft iterations 1.1 s -> ~1.9 s since 09:36; GPUs at ~60% util",
                reported="Data comes straight from S3 (us-east-1 bucket). Nothing changed in the training code.")
    sc.truth("input_pipeline_stall", "job")
    sc.write(out)


@case
def s24(out):
    """input_pipeline_stall: Megatron batch-generator time grows; Lustre OST timeouts in kernel logs; IO pressure."""
    import random
    rng = random.Random(2424)
    names = [f"nid{i:06d}" for i in range(1200, 1224)]
    fl = Fleet(rng, names, "H100", 4, layout="p4", nics_per_host=4)
    sc = Scenario("s24", 2424, fl, start=unix("2026-10-21T04:00:00Z"), minutes=100, job="gpt-175b-repro", rng=rng)
    onset = at(sc, 41)
    sc.wait_hooks.append(lambda t: (0.9 + 0.6 * _jit(int(t) // 60)) if t >= onset else 0.02)
    sc.nic_rate = (lambda orig: (lambda h, n, t: orig(h, n, t) * (0.70 if t >= onset else 1.0)))(sc.nic_rate)
    sc.steps(compute=2.31, comm=0.55, every=10, cols=("loss",), first_step=117400)
    L = []
    for s, t, d in sc._logged[::2]:
        L.append(f" [{utc(t).strftime('%Y-%m-%d %H:%M:%S')}] iteration    {s:>6}/  250000 | consumed samples:     {s * 1536:>10} | elapsed time per iteration (ms): {d * 1000:.1f} | learning rate: 1.500E-04 | global batch size:  1536 | lm loss: {2.4 + 0.05 * _jit(s):.6E} | loss scale: 1.0 | grad norm: {0.8 + 0.2 * _jit(s, 1):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        bg = (d - 2.86) * 1000 if t >= onset else 12.0 + 5 * _jit(s)
        L.append(f"(min, max) time across ranks (ms):\n    forward-backward ...............................: ({2280 + 20 * _jit(s, 2):.2f}, {2330 + 20 * _jit(s, 3):.2f})\n    batch-generator ................................: ({max(1.0, bg * 0.6):.2f}, {max(2.0, bg):.2f})\n    optimizer ......................................: (41.02, 44.87)")
    sc.out.put("job/logs/megatron-rank0.log", "\n".join(L) + "\n")
    for k, h in enumerate(names[::3]):
        base = onset + 40 + k * 17
        ost = f"scratch-OST00{(k * 3) % 16 + 16:02x}"
        sc.dmesg[h] += [(base, f"Lustre: 11874:0:(client.c:2305:ptlrpc_expire_one_request()) @@@ Request sent has timed out for slow reply: [sent {int(base - 120)}/real {int(base - 120)}]  req@ffff9a3c5e6a1000 x1784312298123456/t0(0) o3->{ost}-osc-ffff9a3c91f7e800@10.3.0.27@o2ib:6/4 lens 488/440 e 4 to 1 dl {int(base)} ref 2 fl Rpc:Xr/2/ffffffff rc 0/-1 job:'python3.0'"),
                        (base + 0.3, f"Lustre: {ost}-osc-ffff9a3c91f7e800: Connection to {ost} (at 10.3.0.27@o2ib) was lost; in progress operations using this service will wait for recovery to complete"),
                        (base + 211, f"Lustre: {ost}-osc-ffff9a3c91f7e800: Connection restored to 10.3.0.27@o2ib (at 10.3.0.27@o2ib)"),
                        (base + 640, f"LustreError: 11-0: {ost}-osc-ffff9a3c91f7e800: operation ost_read to node 10.3.0.27@o2ib failed: rc = -110")]
        sc.out.put(f"nodes/{h}/cmd/pressure-io.txt", f"some avg10={38 + 9 * _jit(h):.2f} avg60={35 + 8 * _jit(h, 1):.2f} avg300={24 + 5 * _jit(h, 2):.2f} total=8812003412\nfull avg10={31 + 7 * _jit(h):.2f} avg60={29 + 6 * _jit(h, 1):.2f} avg300={19 + 4 * _jit(h, 2):.2f} total=7012220031\n")
    finish(sc, nodes=names[::3] + [names[1]], style="syslog", dcgm=dict(every=120, fams=("sm", "power", "util", "tensor", "reasons")),
           node=dict(every=120))
    sc.incident(title="gpt-175b-repro elapsed time per iteration 2.9 s -> 4.1 s since 04:41",
                reported="Megatron-LM on the Slurm partition, data on /lus/scratch.")
    sc.truth("input_pipeline_stall", "job")
    sc.write(out)


@case
def s25(out):
    """input_pipeline_stall: DeepSpeed samples/sec drops; NFS server not responding; no compute or network change."""
    import random
    rng = random.Random(2525)
    names = [f"c{i}n{j}" for i in (3, 4) for j in range(1, 5)]
    fl = Fleet(rng, names, "A100", 8, layout="dgx", nics_per_host=4, spares=("c4n4",))
    sc = Scenario("s25", 2525, fl, start=unix("2026-06-09T23:30:00Z"), minutes=75, job="ds-llama-13b", rng=rng)
    onset = at(sc, 30)
    sc.wait_hooks.append(lambda t: (1.4 + 2.2 * _jit(int(t) // 45)) if t >= onset else 0.0)
    sc.nic_rate = (lambda orig: (lambda h, n, t: orig(h, n, t) * (0.50 if t >= onset else 1.0)))(sc.nic_rate)
    sc.steps(compute=1.62, comm=0.41, every=10, cols=("compute_s", "loss", "grad_norm"))
    L = []
    for s, t, d in sc._logged[::2]:
        sps = 512 / d
        L.append(f"[{utc(t).strftime('%Y-%m-%d %H:%M:%S')},{int(t % 1 * 1000):03d}] [INFO] [timer.py:260:stop] epoch=0/micro_step={s * 4}/global_step={s}, RunningAvgSamplesPerSec={sps * 1.03:.2f}, CurrSamplesPerSec={sps:.2f}, MemAllocated=31.4GB, MaxMemAllocated=58.12GB")
    L.append(f"[{utc(onset + 700).strftime('%Y-%m-%d %H:%M:%S')},000] [WARNING] [data_utils.py:88:__iter__] rank=17 waited 41.7s for next batch from /mnt/datasets/tokenized/ (NFS)")
    sc.out.put("job/logs/deepspeed.log", "\n".join(L) + "\n")
    for h in names[:7]:
        t = onset + 20 + 3 * _jit(h)
        sc.dmesg[h] += [(t, "nfs: server nfs-data01.corp not responding, still trying"),
                        (t + 200 + 30 * _jit(h, 1), "nfs: server nfs-data01.corp not responding, still trying"),
                        (t + 1100, "nfs: server nfs-data01.corp OK"),
                        (t + 1300, "nfs: server nfs-data01.corp not responding, still trying")]
        sc.out.put(f"nodes/{h}/cmd/pressure-io.txt", f"some avg10={52 + 10 * _jit(h):.2f} avg60={47 + 5 * _jit(h):.2f} avg300={33.10:.2f} total=4410022318\nfull avg10={49 + 9 * _jit(h):.2f} avg60={44 + 5 * _jit(h):.2f} avg300={30.52:.2f} total=4001876544\n")
    sc.dmesg["c3n2"].append((sc.boot["c3n2"] + 86400 * 4, f"NVRM: Xid ({fl.host('c3n2').gpus[4].xid_tag}): 43, pid=71109, name=python3, Ch 00000020"))
    finish(sc, style="plain", dmesg_gz=True, dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "tensor", "reasons")),
           node=dict(every=60), lspci=("c4n4",))
    sc.incident(title="ds-llama-13b samples/sec fell from ~250 to ~120 at midnight",
                reported="DeepSpeed ZeRO-3, dataset on the shared NFS mount. Spare node c4n4 is idle in the reservation.")
    sc.truth("input_pipeline_stall", "job")
    sc.write(out)


@case
def s26(out):
    """input_pipeline_stall from launch: Ray Data streaming from GCS, backpressure and retries; expected rate stated."""
    import random
    rng = random.Random(2626)
    names = [f"gke-a3-pool-{c}" for c in ("7f2k", "8c1m", "9xq0", "a0p4", "b7r2", "c5zz")]
    fl = Fleet(rng, names, "H100", 8, layout="xe", nics_per_host=8, link_layer="Ethernet", net_style="eth")
    sc = Scenario("s26", 2626, fl, start=unix("2026-12-02T15:00:00Z"), minutes=60, job="ray-train-clip", rng=rng)
    launch = sc.t0 - 300
    sc.wait_hooks.append(lambda t: 0.55 + 0.5 * _jit(int(t) // 20))
    sc.steps(compute=0.57, comm=0.16, every=10, start=launch)
    L = [f"{ts_py(launch)}\tINFO streaming_executor.py:108 -- Starting execution of Dataset. Full logs are in /tmp/ray/session_latest/logs/ray-data",
         f"{ts_py(launch + 1)}\tINFO streaming_executor.py:109 -- Execution plan of Dataset: InputDataBuffer[Input] -> TaskPoolMapOperator[ReadParquet->Map(decode_and_resize)] -> OutputSplitter[split(48, equal=True)]"]
    for k in range(40):
        t = launch + 60 + k * 88
        L.append(f"{ts_py(t)}\tWARNING backpressure_policy.py:162 -- TaskPoolMapOperator[ReadParquet->Map(decode_and_resize)] is backpressured: output queue empty, {2 + int(_jit(k) * 6)} tasks waiting on object store reads")
        if k % 3 == 0:
            L.append(f"{ts_py(t + 5)}\tWARNING gcsfs: Retrying request to https://storage.googleapis.com/storage/v1/b/laion-mirror-eu/o/part-{int(_jit(k, 1) * 99999):05d}.parquet after 429 Too Many Requests (attempt {1 + k % 5})")
        if k % 7 == 2:
            L.append(f"{ts_py(t + 9)}\tINFO train_loop.py:88 -- [rank {int(_jit(k, 2) * 48)}] iter_time={1.25 + 0.5 * _jit(k, 3):.2f}s data_wait={0.5 + 0.5 * _jit(k, 3):.2f}s")
    L.sort()
    sc.out.put("job/logs/ray-train.log", "\n".join(L) + "\n")
    finish(sc, nodes=names[:2], style="journal", ethtool=names[:1], dcgm=dict(every=60), node=dict(ib=False), topo=False)
    sc.incident(title="ray-train-clip at ~1.5 s/iter from the start; the same job did 0.75 s/iter on the reference cluster",
                reported="Expected ~0.75 s per iteration (reference run, same image). This cluster reads the dataset from a GCS bucket in another region.")
    sc.truth("input_pipeline_stall", "job")
    sc.write(out)


def idle_rdma(sc, keep=()):
    """NICs that carry (almost) nothing: RDMA unused by the job."""
    def rate(orig):
        return lambda h, n, t: orig(h, n, t) if n.ibdev in keep else 1.5e3 * (1 + _jit(h.name, n.ibdev))
    sc.nic_rate = rate(sc.nic_rate)


@case
def s27(out):
    """nccl_misconfiguration: NCCL_IB_DISABLE=1 left in the env; NCCL runs over sockets beside idle HCAs; slow since launch."""
    import random
    rng = random.Random(2727)
    names = [f"g{i:02d}.hpc.lab" for i in (3, 4, 5, 6, 9, 10, 11, 12)]
    fl = Fleet(rng, names, "H100", 8, layout="hgx")
    sc = Scenario("s27", 2727, fl, start=unix("2026-08-12T10:00:00Z"), minutes=60, job="llama3-70b-lora", rng=rng)
    launch = sc.t0 - 15 * 60
    idle_rdma(sc)
    sc.steps(compute=1.04, comm=1.95, every=5, start=launch)
    env = {"MASTER_ADDR": "g03.hpc.lab", "MASTER_PORT": "29500", "WORLD_SIZE": "64", "NCCL_DEBUG": "INFO",
           "NCCL_SOCKET_IFNAME": "bond0", "NCCL_IB_DISABLE": "1", "NCCL_ASYNC_ERROR_HANDLING": "1",
           "CUDA_DEVICE_MAX_CONNECTIONS": "1", "OMP_NUM_THREADS": "8", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    L = [f"{ts_py(launch)} launcher: environment for rank 0:"] + [f"    {k}={v}" for k, v in env.items()]
    L += nccl_init(sc, "g03", 20112, 0, [
        "Bootstrap : Using bond0:10.8.0.3<0>",
        "NCCL_IB_DISABLE set by environment to 1.",
        "NET/Socket : Using [0]bond0:10.8.0.3<0>",
        "Using network Socket",
        "NCCL version 2.19.3+cuda12.3",
        "Channel 00/02 :    0   8  16  24  32  40  48  56",
        "Channel 00/0 : 56[db000] -> 0[18000] [receive] via NET/Socket/0",
        "Channel 00/0 : 0[18000] -> 8[18000] [send] via NET/Socket/0",
        "comm 0x5581f2c3a0d0 rank 0 nranks 64 cudaDev 0 nvmlDev 0 busId 18000 commId 0x7c1e90a2d04b11f2 - Init COMPLETE"])
    for s, t, d in sc._logged[::4]:
        L.append(f"{ts_py(t)} trainer: step {s} | {d:.2f} s/step | {int(65536 / d / 64)} tokens/s/gpu")
    sc.out.put("job/logs/rank0.log", "\n".join(L) + "\n")
    finish(sc, nodes=names[:4], style="ctime", ibstat=names[:1], dcgm=dict(every=60), node=dict(every=60))
    sc.incident(title="llama3-70b-lora at ~3 s/step since launch; the sizing doc says ~1.3 s/step on 8 nodes",
                reported="New cluster, first big run. Expected about 1.3 seconds per step (same recipe on the old cluster). GPUs look underused.")
    sc.truth("nccl_misconfiguration", "job")
    sc.write(out)


@case
def s28(out):
    """nccl_misconfiguration: GPUDirect RDMA disabled (NCCL_NET_GDR_LEVEL=LOC); proxies copy through host memory."""
    import random
    rng = random.Random(2828)
    names = [f"cn-{i:04d}" for i in range(301, 317)]
    fl = Fleet(rng, names, "H200", 8, layout="dgx")
    sc = Scenario("s28", 2828, fl, start=unix("2026-11-11T08:30:00Z"), minutes=60, job="sparse-moe-200b", rng=rng)
    launch = sc.t0 - 40 * 60
    sc.steps(compute=2.48, comm=1.62, every=5, start=launch, cols=("compute_s", "loss", "grad_norm"))
    L = nccl_init(sc, "cn-0301", 77120, 0, [
        "NCCL version 2.23.4+cuda12.6",
        "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ibp8s0:192.168.30.1<0>",
        "NCCL_NET_GDR_LEVEL set by environment to LOC",
        "NCCL_P2P_LEVEL set by environment to NVL",
        "GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (distance 3 > 0)",
        "GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (distance 3 > 0)",
        "Channel 00/0 : 120[7000] -> 0[7000] [receive] via NET/IB/0",
        "Channel 01/0 : 120[7000] -> 0[7000] [receive] via NET/IB/1",
        "Channel 00/0 : 0[7000] -> 8[7000] [send] via NET/IB/0",
        "Connected all rings",
        "comm 0x55e0c2a41b90 rank 0 nranks 128 cudaDev 0 nvmlDev 0 busId 7000 commId 0x3f9e02c1d5a7b004 - Init COMPLETE"])
    L.append(f"cn-0301:77120:77240 [0] NCCL INFO Init timings: rank 0 nranks 128 total 2.41 (kernels 0.51, bootstrap 0.62, allgathers 0.09, topo 0.72, graphs 0.11, connections 0.33, rest 0.03)")
    L.append("")
    L.append("cn-0307:77301:77409 [4] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.30.1<48199> failed : Software caused connection abort (retrying)")
    sc.out.put("job/logs/nccl_init.log", "\n".join(L) + "\n")
    T = [f"{utc(launch).strftime('%Y-%m-%dT%H:%M:%SZ')} torchtitan: job config: dp_shard=16 ep=8 tp=1 pp=1 seq_len=8192 local_batch=4"]
    for s, t, d in sc._logged[::4]:
        T.append(f"{utc(t).strftime('%Y-%m-%dT%H:%M:%SZ')} torchtitan: step: {s}  loss: {2.6 + 0.1 * _jit(s):.4f}  memory: 118.40GiB(84.31%)  tps: {int(32768 / d)}  mfu: {100 * 0.36 * 4.1 / d:.2f}%")
    sc.out.put("job/logs/torchtitan.log", "\n".join(T) + "\n")
    finish(sc, nodes=names[:2] + names[8:9], style="plain", dcgm=dict(every=120), node=dict(every=120))
    sc.incident(title="sparse-moe-200b: mfu ~36% instead of the ~55% we planned for",
                reported="Planned MFU was 55% (about 2.7 s per step at this size); we have been at ~4.1 s/step since the job started.")
    sc.truth("nccl_misconfiguration", "job")
    sc.write(out)


@case
def s29(out):
    """nccl_misconfiguration: NCCL_IB_HCA lists two of eight rails; the other six HCAs carry nothing."""
    import random
    rng = random.Random(2929)
    names = [f"r{r}u{u:02d}" for r in (7, 8) for u in (3, 7, 11, 15, 19, 23)]
    fl = Fleet(rng, names, "H100", 8, layout="xe")
    sc = Scenario("s29", 2929, fl, start=unix("2026-10-08T17:45:00Z"), minutes=75, job="vision-moe-ft", rng=rng)
    relaunch = at(sc, 18)
    sc.comm_hooks.append(lambda t: 2.9 if t >= relaunch else 1.0)
    sc.nic_rate = (lambda orig: (lambda h, n, t: orig(h, n, t) * (1.35 if n.ibdev in ("mlx5_0", "mlx5_1") else 0.0002)
                                 if t >= relaunch else orig(h, n, t)))(sc.nic_rate)
    sc.steps(compute=0.79, comm=0.33, every=10, restarts=[(relaunch - 240, relaunch, 42000)], first_step=40200)
    env_old = {"NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7", "NCCL_CROSS_NIC": "0"}
    env_new = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_CROSS_NIC": "0"}
    L = [f"{ts_py(sc.t0 - 7200)} [launch] image=registry.local/train:2026.09.3", f"{ts_py(sc.t0 - 7200)} [launch] env " + " ".join(f"{k}={v}" for k, v in env_old.items())]
    L += nccl_init(sc, "r7u03", 10221, 0, ["NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB bond0:10.7.3.1<0>"])
    L += [f"{ts_py(relaunch - 60)} [launch] image=registry.local/train:2026.10.1 (base image update)",
          f"{ts_py(relaunch - 60)} [launch] env " + " ".join(f"{k}={v}" for k, v in env_new.items())]
    L += nccl_init(sc, "r7u03", 55810, 0, ["NCCL_IB_HCA set to =mlx5_0,mlx5_1",
                                           "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB bond0:10.7.3.1<0>",
                                           "comm 0x5612c0a0b2e0 rank 0 nranks 96 cudaDev 0 nvmlDev 0 busId 19000 commId 0x0badc0de11aa2201 - Init COMPLETE"])
    sc.out.put("job/logs/launch.log", "\n".join(L) + "\n")
    finish(sc, nodes=names[:3], style="kmsg", dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "reasons")), node=dict(every=60))
    sc.incident(title="vision-moe-ft step time 1.15 s -> 1.75 s after the 18:03 relaunch onto the new base image",
                reported="Relaunched from checkpoint after the image bump; same node list.")
    sc.truth("nccl_misconfiguration", "job")
    sc.write(out)


def alert(name, labels, summary, starts):
    return {"status": "firing", "labels": dict({"alertname": name, "severity": "warning"}, **labels),
            "annotations": {"summary": summary}, "startsAt": iso(starts), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=DCGM_FI_DEV_CLOCKS_EVENT_REASONS&g0.tab=1",
            "fingerprint": "%016x" % int(_jit(name, starts) * 2 ** 63)}


@case
def s30(out):
    """healthy: a big H100 fleet where several GPUs sit at their software power cap; steps are flat."""
    import random
    rng = random.Random(3030)
    names = [f"h100-{r}{i:02d}" for r in "abc" for i in range(1, 17)]
    fl = Fleet(rng, names, "H100", 4, layout="p4", nics_per_host=4, spares=(names[-1], names[-2]),
               leaf_of=lambda hi, n: f"leaf{hi // 12 + 1}")
    sc = Scenario("s30", 3030, fl, start=unix("2026-09-03T13:00:00Z"), minutes=90, job="llm-30b-pretrain", rng=rng)
    picks = [(names[k], g) for k, g in ((1, 0), (4, 3), (9, 1), (15, 2), (22, 0), (23, 3), (30, 1), (37, 2), (41, 0))]
    cap_some(sc, picks)
    sc.base[(names[12], 2)]["temp"] += 5
    sc.sticky_xid[(names[20], 1)] = 119
    sc.dmesg[names[20]].append((sc.boot[names[20]] + 86400 * 1.2, f"NVRM: Xid ({fl.host(names[20]).gpus[1].xid_tag}): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c)."))
    sc.steps(compute=1.08, comm=0.37, every=30, gz=True)
    alerts = [alert("GPUClockThrottled", {"hostname": h, "gpu": str(g)}, f"GPU {g} on {h} reports SW power cap clock events", sc.t0 + 600 + 60 * k)
              for k, (h, g) in enumerate(picks[:5])]
    finish(sc, nodes=[names[1], names[4], names[12], names[20], names[-1]], style="journal", smi=(names[1], names[4]),
           lspci=(names[-1],), dcgm=dict(every=120, fams=("sm", "temp", "power", "util", "reasons", "xid", "pviol")),
           node=dict(every=120))
    sc.incident(title="Clock throttle alerts on 5 GPUs in the llm-30b pod: is the run affected?",
                reported="Alerts started during the afternoon. Job dashboard looks normal to me but please check.",
                alerts=alerts)
    sc.truth("healthy", None)
    sc.write(out)


@case
def s31(out):
    """healthy: relaunch with a doubled global batch; step time doubles, tokens/s per GPU does not drop."""
    import random
    rng = random.Random(3131)
    names = [f"10-90-43-{i}" for i in (147, 148, 150, 152, 155, 156, 160, 161)]
    fl = Fleet(rng, names, "H100", 8, layout="xe", instances=lambda hi, n: n.replace("-", "."))
    sc = Scenario("s31", 3131, fl, start=unix("2026-04-14T01:20:00Z"), minutes=90, job="llm-13b-pt", rng=rng)
    stop, relaunch = at(sc, 26), at(sc, 33)
    sc.compute_hooks.append(lambda r, h, g, t: 2.0 if t >= relaunch else 1.0)
    sc.steps(compute=0.61, comm=0.29, every=10, restarts=[(stop, relaunch, 24000)], first_step=21000)
    L = []
    cfgs = [(sc.t0 - 3 * 3600, "global_batch_size=512 micro_batch_size=2 grad_accum=4 seq_length=4096 tp=1 pp=1 dp=64"),
            (relaunch - 30, "global_batch_size=1024 micro_batch_size=2 grad_accum=8 seq_length=4096 tp=1 pp=1 dp=64")]
    for t, c in cfgs:
        L.append(f"{ts_py(t)} | INFO | config | {c}")
    L.append(f"{ts_py(stop)} | INFO | checkpoint | saved step 24000; stopping for batch-size ramp (schedule: 512 -> 1024 at step 24000)")
    for s, t, d in sc._logged[::3]:
        gbs = 1024 if t >= relaunch else 512
        L.append(f"{ts_py(t)} | INFO | train | step {s} | step_time {d:.3f}s | tokens/s/gpu {int(gbs * 4096 / d / 64)} | loss {2.2 + 0.1 * _jit(s):.3f}")
    L.sort()
    sc.out.put("job/logs/train.log", "\n".join(L) + "\n")
    sc.dmesg[names[2]].append((sc.boot[names[2]] + 86400 * 3, f"NVRM: Xid ({fl.host(names[2]).gpus[0].xid_tag}): 31, pid=18812, name=python3, channel 0x00000013, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC5 GPCCLIENT_T1_3 faulted @ 0x7f1e_8c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"))
    sc.sticky_xid[(names[2], 0)] = 31
    cap_some(sc, [(names[3], 6), (names[5], 2)])
    finish(sc, style="plain", dcgm=dict(every=60), node=dict(every=60), smi=(names[2],))
    sc.incident(title="Step time jumped from ~0.9 s to ~1.5 s after the 01:53 restart",
                reported="Nobody touched the hardware. Was something degraded during the restart?")
    sc.truth("healthy", None)
    sc.write(out)


@case
def s32(out):
    """healthy: relaunch with 8k sequences and a new data mix; seconds per step up, tokens per GPU-second flat."""
    import random
    rng = random.Random(3232)
    names = [f"b200x-{i:02d}" for i in range(1, 7)]
    names = [n.replace("b200x", "h200x") for n in names]
    fl = Fleet(rng, names, "H200", 8, layout="dgx")
    sc = Scenario("s32", 3232, fl, start=unix("2026-12-02T03:00:00Z"), minutes=75, job="ctx-extend-34b", rng=rng)
    stop, relaunch = at(sc, 20), at(sc, 28)
    sc.compute_hooks.append(lambda r, h, g, t: 2.06 if t >= relaunch else 1.0)
    sc.comm_hooks.append(lambda t: 1.0)
    sc.steps(compute=1.72, comm=0.41, every=10, restarts=[(stop, relaunch, 5000)], first_step=3400,
             cols=("compute_s", "loss", "grad_norm", "seq_len"), extra=None)
    L = [f"[{utc(sc.t0 - 5000).strftime('%Y-%m-%d %H:%M:%S')}] stage-1 config: seq_len=4096 global_batch_tokens=4194304 data_mix=web:0.70,code:0.20,math:0.10",
         f"[{utc(stop).strftime('%Y-%m-%d %H:%M:%S')}] stage-1 done at step 5000; switching to stage-2 (long-context)",
         f"[{utc(relaunch - 40).strftime('%Y-%m-%d %H:%M:%S')}] stage-2 config: seq_len=8192 global_batch_tokens=8388608 data_mix=web:0.45,code:0.15,books_long:0.30,math:0.10 rope_theta=1000000"]
    for s, t, d in sc._logged[::3]:
        tokens = 8388608 if t >= relaunch else 4194304
        L.append(f"[{utc(t).strftime('%Y-%m-%d %H:%M:%S')}] step={s} step_s={d:.2f} tok_per_gpu_s={int(tokens / d / 48)} loss={2.05 + 0.1 * _jit(s):.3f}")
    L.sort()
    sc.out.put("job/logs/ctx-extend.log", "\n".join(L) + "\n")
    cap_some(sc, [(names[0], 5), (names[3], 1), (names[4], 6)])
    finish(sc, style="ctime", dcgm=dict(every=60, fams=("sm", "temp", "power", "util", "tensor", "reasons")), node=dict(every=60))
    sc.incident(title="ctx-extend-34b: seconds per step nearly doubled since 03:28",
                reported="Stage 2 started tonight. Is the cluster OK?")
    sc.truth("healthy", None)
    sc.write(out)


@case
def s33(out):
    """healthy: a new parallel layout (TP/PP) after a relaunch; per-step time changes, work per GPU-second holds."""
    import random
    rng = random.Random(3333)
    names = [f"node-{i:03d}" for i in range(40, 88)]
    fl = Fleet(rng, names, "A100", 4, layout="q4", nics_per_host=2, spares=("node-087",),
               leaf_of=lambda hi, n: f"ib-sw{hi // 16 + 1}")
    sc = Scenario("s33", 3333, fl, start=unix("2026-02-24T06:00:00Z"), minutes=100, job="t2i-unet-xl", rng=rng)
    stop, relaunch = at(sc, 38), at(sc, 47)
    sc.compute_hooks.append(lambda r, h, g, t: 1.48 if t >= relaunch else 1.0)
    sc.comm_hooks.append(lambda t: 1.25 if t >= relaunch else 1.0)
    sc.steps(compute=0.95, comm=0.30, every=25, restarts=[(stop, relaunch, 90000)], first_step=88000, gz=True,
             cols=("compute_s",))
    L = [f"{iso(sc.t0 - 9000)} rank0 parallel layout: dp=188 tp=1 pp=1 micro_batch=8 global_batch=1504 samples",
         f"{iso(stop)} rank0 stopping at step 90000 for layout change (ticket MLP-4412)",
         f"{iso(relaunch - 20)} rank0 parallel layout: dp=94 tp=2 pp=1 micro_batch=16 global_batch=1504 samples (activation memory headroom for 1024px stage)"]
    for s, t, d in sc._logged[::4]:
        L.append(f"{iso(t)} rank0 step {s} time/step {d:.3f}s samples/s/gpu {1504 / d / 188:.2f}")
    L.sort()
    sc.out.put("job/logs/rank0.log", "\n".join(L) + "\n")
    cap_some(sc, [(names[5], 1), (names[17], 0), (names[31], 3)])
    sc.nic_hooks.append(lambda h, n, t, v: v.update(rcv_err=14, symbol_error=3) if (h.name == "node-052" and n.ibdev == "mlx5_1") else None)
    finish(sc, nodes=["node-040", "node-052", "node-061", "node-087"], style="syslog", lspci=("node-087",),
           dcgm=dict(every=180, gz=False, fams=("sm", "power", "util", "reasons")), node=dict(every=120))
    sc.incident(title="t2i-unet-xl: time/step up ~40% since the 06:47 relaunch", reported="")
    sc.truth("healthy", None)
    sc.write(out)


@case
def s34(out):
    """healthy: an acceptance run whose stated expectation is met; decoys everywhere (warm GPU, old XIDs, idle spare)."""
    import random
    rng = random.Random(3434)
    names = [f"sea1-gpu-{i:02d}" for i in (2, 1, 4, 3, 6, 5)]
    fl = Fleet(rng, names, "H100", 8, layout="xe", link_layer="Ethernet", net_style="eth", spares=("sea1-gpu-05",))
    sc = Scenario("s34", 3434, fl, start=unix("2026-07-30T17:00:00Z"), minutes=60, job="acceptance-llama-8b", rng=rng)
    sc.base[("sea1-gpu-03", 4)]["temp"] += 6
    cap_some(sc, [("sea1-gpu-01", 3), ("sea1-gpu-04", 6)])
    sc.dmesg["sea1-gpu-01"] += [(sc.boot["sea1-gpu-01"] + 86400 * 5 + 10, f"NVRM: Xid ({fl.host('sea1-gpu-01').gpus[2].xid_tag}): 13, pid=301, name=python3, Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174"),
                                (sc.boot["sea1-gpu-01"] + 86400 * 5 + 12, f"NVRM: Xid ({fl.host('sea1-gpu-01').gpus[2].xid_tag}): 43, pid=301, name=python3, Ch 00000008")]
    sc.gpu_hooks.append(lambda h, i, t, st: st.update(sbe=st["sbe"] + 12) if (h == "sea1-gpu-06" and i == 0) else None)
    sc.steps(compute=0.71, comm=0.25, every=10)
    L = [f"{ts_py(t)} INFO acceptance: step {s} {d:.3f} s/step" for s, t, d in sc._logged[::5]]
    L.insert(2, "")
    L.insert(3, f"sea1-gpu-02:31001:31055 [0] init.cc:1602 NCCL WARN Cuda failure 'invalid argument' in cudaMemAdvise, falling back to default behaviour")
    sc.out.put("job/logs/acceptance.log", "\n".join(L) + "\n")
    finish(sc, style="caller", smi=("sea1-gpu-03", "sea1-gpu-05"), lspci=("sea1-gpu-05",), ethtool=("sea1-gpu-02",),
           dcgm=dict(every=60), node=dict(every=60, ib=False), topo=dict(host_order=sorted(names)))
    sc.incident(title="Acceptance run on sea1: target is 0.95-1.0 s/step for llama-8b on 40 GPUs; please confirm the cluster is healthy",
                reported="We need a sign-off before handing the cluster to the research team. sea1-gpu-05 is the hot spare.")
    sc.truth("healthy", None)
    sc.write(out)


# ------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder to write the cases into (created; existing cases replaced)")
    p.add_argument("--only", nargs="*", help="case names to write (default: all)")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for fn in CASES:
        if a.only and fn.__name__ not in a.only:
            continue
        target = out / fn.__name__
        if target.exists():
            shutil.rmtree(target)
        fn(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
