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


def healthy_nic_pause(sc):
    """ordinary RoCE fabric: a trickle of received pauses everywhere."""
    return None


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
    sc.incident(title="llama-34b-sft tokens/s down ~15% since about 02:08, no alerts",
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
    sc.incident(title="mistral-7b-cpt never reached the ~0.62 s/step we benchmarked; ~0.75 s/step since launch",
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
    sc.incident(title="PPO rollouts 2x slower since 07:41; allreduce time dominates profiler trace",
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
    sc.incident(title="mm-dit-xl step time +45% since 23:24 on the sjc pod",
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
    om_lines = []
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
    sc.incident(title="vit-22b: allreduce bandwidth halved since ~09:36, compute unchanged",
                reported="32 nodes over 4 leaves. Profiler: NCCL ring allreduce busbw 38 GB/s -> 19 GB/s.")
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
    sc.steps(compute=2.02, comm=0.66, every=5, start=launch, cols=("compute_s", "loss", "grad_norm"))
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
    sc.incident(title="moe-16x22b running ~2.7 s/it since launch; the same config did ~2.1 s/it before the fabric maintenance",
                reported="Expected about 2.1 seconds per iteration (last week's run on this pod). Nothing changed in the job.")
    sc.truth("ecmp_hash_polarization", badleaf)
    sc.write(out)
