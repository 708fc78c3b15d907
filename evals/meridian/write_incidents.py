#!/usr/bin/env python3
"""Write the meridian evaluation incidents: write_incidents.py --out DIR (stdlib only, deterministic)."""
import argparse
import os
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mrlib as L  # noqa: E402
from mrcase import Case, XIDTXT  # noqa: E402
from mrlib import Ctr, Rate  # noqa: E402


def T(s):
    return int(datetime.strptime(s, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc).timestamp())


def alert(name, labels, summary, starts, sev="warning"):
    lab = {"alertname": name, "severity": sev}
    lab.update(labels)
    return {"status": "firing", "labels": lab, "annotations": {"summary": summary},
            "startsAt": L.iso(starts), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.mon.svc:9090/graph?g0.expr=%s" % name,
            "fingerprint": "%016x" % (L.zlib.crc32((name + repr(sorted(labels.items()))).encode()) * 7919)}


def names(fmt, n, start=1, f=None):
    return [(fmt % (start + i)) if f is None else f(start + i) for i in range(n)]


def fleet(c, hnames, model="h100", nnic=8, ll="InfiniBand", leaves=("leaf-01", "leaf-02"), spines=("spine-01", "spine-02"),
          nup=4, portfmt="Ethernet%d", rail=True, node=None, shuffle=False, rate=400, netdev_fmt=None, traffic=6.0e9,
          ton_traffic=None, r1=None, spine_portfmt="Ethernet%d", gpn=8, ngpu=8):
    hs = c.add_hosts(hnames, model, ngpu, nnic, ll, rate, netdev_fmt=netdev_fmt)
    c.gpn = gpn
    c.cable(hs, list(leaves), portfmt=portfmt, rail=rail)
    for lf in leaves:
        c.uplinks(lf, list(spines), nup, portfmt=portfmt, spine_portfmt=spine_portfmt)
    c.job_ranks(hs, shuffle=shuffle, gpn=gpn)
    c.traffic([n for h in hs for n in h.nics], traffic, r1, ton_traffic)
    for h in hs:
        h.node = node is None or h.name in node
    return hs


def uplink_traffic(c, leaf, shares, total, ton=None, shares_after=None):
    """Spread a leaf's northbound traffic over its uplinks (bytes/s)."""
    sw = c.sw(leaf)
    for i, lk in enumerate(sw.links):
        a = total * shares[i]
        b = total * (shares_after[i] if shares_after else shares[i])
        p = sw.port(lk["port"])
        base = c.rng.randrange(10 ** 13, 10 ** 14)
        p["out_oct"] = Rate(base, a, b, ton, c.t0, c.t1)
        p["in_oct"] = Rate(base + 77, a * 0.97, b * 0.97, ton, c.t0, c.t1)
        sp = c.sw(lk["peer"]).port(lk["peer_port"])
        sp["in_oct"] = p["out_oct"]
        sp["out_oct"] = p["in_oct"]


def xid(c, g, t, code, style="new", extra=None):
    h = g.host
    if t < h.boot:
        h.boot = t - 3 * 86400 - 4111
    tag = "PCI:0000:%02x:00" % g.bus
    body = XIDTXT[code] if extra is None else extra
    if style == "new":
        line = "NVRM: Xid (%s): %d, pid='<unknown>', name=<unknown>, %s" % (tag, code, body)
    elif style == "pid":
        line = "NVRM: Xid (%s): %d, pid=%d, name=python3, %s" % (tag, code, 180000 + g.idx * 17, body)
    else:
        line = "NVRM: Xid (%s): %d, %s" % (tag, code, body)
    h.dmesg.append((t, line))
    if not hasattr(g, "xid_series"):
        g.xid_series = []
    g.xid_series.append((t, code))
    c.events.setdefault(h.name, []).append({"device": g.idx, "type": "XidCriticalError", "data": code,
                                             "time": L.iso(t)})


def boot_noise(c, h, style_nics=True):
    b = h.boot
    h.dmesg += [(b + 2.1, "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP"),
                (b + 14.7, "nvidia-nvlink: Nvlink Core is being initialized, major device number 234"),
                (b + 15.2, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % c.drv)]
    if style_nics:
        for n in h.nics:
            h.dmesg.append((b + 21.0 + n.i * 0.01, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n.sys_bus(), n.ibdev)))


def train_log(c, every=50, mfu0=0.52):
    def f(case):
        out = []
        base = case.step_log[0][1] if case.step_log else 1
        for i, (t, d) in enumerate(case.step_log):
            if i % every:
                continue
            d_ = L.dt(t)
            out.append("[%s] iter %d | step_time %.2fs | tokens/s %d | mfu %.1f%%" % (
                d_.strftime("%Y-%m-%d %H:%M:%S"), 41200 + i, d, int(4194304 / d), 100 * mfu0 * base / d))
        return "\n".join(out) + "\n"
    return f


def nccl_init(c, hosts, hcas, ver="2.21.5", env=(), ll="IB"):
    out = ["NCCL version %s+cuda12.4" % ver]
    pid = 3100
    for h in hosts:
        for g in range(min(2, c.gpn)):
            pre = "%s:%d:%d [%d] NCCL INFO " % (h.name, pid + g, pid + 100 + g, g)
            for e in env:
                out.append(pre + "%s set by environment to %s" % e)
            out.append(pre + "NET/IB : Using " + " ".join("[%d]%s:1/%s" % (i, x, ll) for i, x in enumerate(hcas)) +
                       " [RO]; OOB bond0:10.%d.%d.%d<0>" % (40 + len(h.name) % 7, 10 + g, 20 + hosts.index(h)))
            out.append(pre + "comm 0x55%010x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE" % (
                L.zlib.crc32(h.name.encode()) + g, hosts.index(h) * c.gpn + g, len(c.ranks), g, g, h.gpus[g].bus))
        pid += 11
    return "\n".join(out) + "\n"


def watchdog_log(c, ranks, seq, t, timeout_ms=600000):
    d = L.dt(t)
    out = []
    for r in ranks:
        out.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%09d ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (
            r, d.month, d.day, d.hour, d.minute, d.second, 123992144 + r * 77, r, seq, timeout_ms, timeout_ms + 20 + r % 40))
        out.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%09d ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank %d]  failure detected by watchdog at work sequence id: %d PG status: last enqueued work: %d, last completed work: %d" % (
            r, d.month, d.day, d.hour, d.minute, d.second, 124073319 + r * 77, r, seq, seq, seq - 1))
    return "\n".join(out) + "\n"


def ib_err(n, c, **kw):
    for k, (a, b) in kw.items():
        n.c[k] = Ctr(a, b, c.ton)


# ====================================================================================== cases
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def mr01():
    c = Case("mr-01", 101, T("2026-11-03 01:40"))
    c.inc_id = "step-time-1103"
    c.ton = T("2026-11-03 02:12")
    hs = fleet(c, names("gpu-a%03d", 8, 17), traffic=7.5e9, ton_traffic=c.ton, r1=2.9e9)
    spare = c.add_hosts(["gpu-a031"])[0]
    spare.spare = True
    spare.node = True
    c.cable([spare], ["leaf-01", "leaf-02"], start=120)
    for g in spare.gpus:
        g.idle()
    bad = hs[3].gpus[3]
    bad.cur_gen = 1  # busy at 2.5 GT/s
    bad.c["replay"] = Ctr(0, 0)
    c.comm_after = 6.0
    c.truth = ("pcie_downtrain", bad.name)
    c.title = "llm-70b step time up ~2x since 02:12 on all ranks"
    c.reported = "Every rank got slower at the same moment, no error in the job log. The node gpu-a031 was added as a spare yesterday."
    c.job = "llm-70b-pretrain"
    for h in hs + [spare]:
        boot_noise(c, h)
    # the link retrained at 02:12 after a burst of correctable errors
    hs[3].dmesg.append((c.ton - 3, "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%02x:00.0" % (bad.bus - 1, bad.bus)))
    hs[3].dmesg.append((c.ton - 3, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)" % bad.bus))
    hs[3].dmesg.append((c.ton - 3, "nvidia 0000:%02x:00.0:    [ 0] RxErr                  (First)" % bad.bus))
    bad.aer = (6, 0)
    bad.aer_before = (0, 0)
    c.logs["train.log"] = train_log(c)
    return c


@case
def mr02():
    c = Case("mr-02", 102, T("2026-11-04 13:00"), 75)
    c.inc_id = "roce-slow-1104"
    c.ton = None
    hs = fleet(c, names("10-90-43-%d", 6, 141), model="h100", ll="Ethernet", traffic=5.0e9, portfmt="Ethernet%d")
    for h in hs:
        c.instance[h.name] = h.name.replace("-", ".") + ":9100"
        h.dmesg.append((h.boot + 2.0, "Linux version 6.5.0-1018-nvidia (buildd@bos03-amd64-044)"))
    bad = hs[2].nics[5]
    bad.cur_width = 4
    hs[2].dmesg.append((hs[2].boot + 11.2, "pci %s: 126.028 Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x4 link at 0000:%02x:02.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (bad.sys_bus(), bad.bus - 1)))
    # NIC cannot drain: moderate pauses it sends, buffer overruns, PCIe stalls
    c.ton = c.t0
    ib_err(bad, c, rx_out_of_buffer=(88213, 141977), tx_prio3_pause=(301122, 488540),
           tx_prio3_pause_duration=(2901442, 4711002), rx_discards_phy=(0, 0))
    c.traffic([bad], 2.0e9)
    c.ton = None
    c.comm_after = 1.0
    c.m0 = 1.25  # the whole job has run this way since the node was reimaged
    p = c.sw(bad.switch).port(bad.port)
    p["rx_pfc3"] = bad.c["tx_prio3_pause"].now
    c.truth = ("pcie_downtrain", bad.name)
    c.title = "6-node RoCE job: throughput ~73% of the acceptance run, unchanged since restart"
    c.reported = "After the 10-90-43-143 motherboard swap the job never got back to the acceptance number. Fabric team says no drops."
    c.compute_col = False
    c.missing.add(("*", "nvml.json"))
    c.truncate[(hs[2].name, "nvidia-smi-q.txt")] = 0.35
    c.dmesg_style = "plain"
    c.drv = "535.129.03"
    return c


@case
def mr03():
    c = Case("mr-03", 103, T("2026-11-05 07:20"), 80)
    c.inc_id = "pauses-1105"
    c.ton = T("2026-11-05 07:51")
    hs = fleet(c, names("h100-r07-n%d", 8, 1), ll="Ethernet", traffic=6.0e9, ton_traffic=T("2026-11-05 07:51"), r1=2.1e9,
               leaves=("lf-r07-a", "lf-r07-b"))
    bad = hs[5].nics[2]
    ib_err(bad, c, tx_prio3_pause=(1204, 9811730), tx_prio3_pause_duration=(9021, 79502118),
           tx_pause_storm_warning_events=(0, 14), rx_out_of_buffer=(310, 1877012))
    leaf = c.sw(bad.switch)
    for h in hs:
        for n in h.nics:
            p = leaf.port(n.port) if n.switch == bad.switch else c.sw(n.switch).port(n.port)
            if n is bad:
                p["rx_pfc3"] = n.c["tx_prio3_pause"].now
                p["tx_pfc3"] = 0
            elif n.switch == bad.switch:
                ib_err(n, c, rx_prio3_pause=(800 + h.gpus[0].idx, 412300 + 17 * n.i),
                       rx_prio3_pause_duration=(6400, 3298400 + 136 * n.i))
                p["tx_pfc3"] = n.c["rx_prio3_pause"].now
            else:
                n.c["rx_prio3_pause"] = Ctr(900, 1400)
                p["tx_pfc3"] = 1400
    leaf.pfcwd.append(("%s:3" % bad.port, "stormed", "14/13", "0/0", "0/1877012", "0/0", "0/1877012"))
    for p in sorted(leaf.ports):
        if p != bad.port:
            leaf.pfcwd.append(("%s:3" % p, "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
    c.comm_after = 4.0
    c.truth = ("pfc_pause_storm", bad.name)
    c.title = "Step time +60% since 07:51; alerts on several nodes"
    victim = hs[1]
    c.alerts = [alert("RoCEPauseFramesHigh", {"instance": victim.name + ":9100", "device": "mlx5_0"},
                      "Rx pause frames above 1000/s on %s mlx5_0" % victim.name, c.ton + 120)]
    c.reported = "Alert fired for %s first, it was drained but the job is still slow." % victim.name
    c.dcgm_label = "hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    c.dmesg_style = "ctime"
    c.fec_cmd = True
    for h in hs:
        boot_noise(c, h)
    c.om_gz = True
    c.compute_col = False
    return c


@case
def mr04():
    c = Case("mr-04", 104, T("2026-11-06 22:00"), 90)
    c.inc_id = "fabric-1106"
    c.ton = T("2026-11-06 22:37")
    hs = fleet(c, names("node%04d", 8, 421), ll="Ethernet", traffic=5.5e9, ton_traffic=T("2026-11-06 22:37"), r1=1.6e9,
               leaves=("leaf-01", "leaf-02"), rail=False, nnic=4, node=["node0421", "node0426"], nup=4)
    # the pause source: a host-facing port on leaf-02 whose host is not in the job or the topology
    l1, l2 = c.sw("leaf-01"), c.sw("leaf-02")
    org = l2.port("Ethernet44")
    org["in_oct"] = Rate(8123001772211, 2.1e9, 0.6e9, c.ton, c.t0, c.t1)
    org["out_oct"] = Rate(9120331001717, 3.9e9, 0.4e9, c.ton, c.t0, c.t1)
    uplink_traffic(c, "leaf-01", [0.25, 0.25, 0.25, 0.25], 8 * 4 * 5.5e9 * 0.5 / 4, c.ton, [0.25, 0.25, 0.25, 0.25])
    uplink_traffic(c, "leaf-02", [0.25, 0.25, 0.25, 0.25], 3.0e9, c.ton, [0.25, 0.24, 0.26, 0.25])
    org["rx_pfc3"] = 6210443
    org["tx_pfc3"] = 0
    for h in hs:
        for n in h.nics:
            p = c.sw(n.switch).port(n.port)
            if n.switch == "leaf-02":
                v = 1522100 + 311 * n.i + 7 * h.nics.index(n)
            else:
                v = 611000 + 97 * n.i
            ib_err(n, c, rx_prio3_pause=(300, 300 + v), rx_prio3_pause_duration=(2400, 2400 + v * 8))
            p["tx_pfc3"] = n.c["rx_prio3_pause"].now
            p["rx_pfc3"] = 0
    # leaf-02 pauses its uplinks; spines pause leaf-01's uplinks
    for lk in l2.links:
        l2.ports[lk["port"]]["tx_pfc3"] = 2108000 + 13 * len(lk["port"])
        c.sw(lk["peer"]).ports[lk["peer_port"]]["rx_pfc3"] = l2.ports[lk["port"]]["tx_pfc3"]
        c.sw(lk["peer"]).ports[lk["peer_port"]]["tx_pfc3"] = 0
    for lk in l1.links:
        v = 1300500 + 17 * len(lk["port"])
        c.sw(lk["peer"]).ports[lk["peer_port"]]["tx_pfc3"] = v
        l1.ports[lk["port"]]["rx_pfc3"] = v
        l1.ports[lk["port"]]["tx_pfc3"] = 0
    l2.pfcwd.append(("Ethernet44:3", "stormed", "9/8", "0/0", "0/5200133", "0/0", "0/5200133"))
    c.comm_after = 5.0
    c.truth = ("pfc_pause_storm", "leaf-02/Ethernet44")
    c.title = "All ranks ~1.8x slower since 22:37, nothing on the GPUs"
    c.reported = "Only two nodes had the collector running; GPUs and host logs look clean. A storage tenant shares the leaves."
    c.compute_col = True
    c.dmesg_style = "journal"
    for h in hs:
        boot_noise(c, h)
    c.dcgm_hosts = [h for h in hs if h.node]
    c.missing.add(("leaf-01", "show-pfcwd-stats.txt"))
    c.missing.add(("spine-01", "show-pfcwd-stats.txt"))
    c.missing.add(("spine-02", "show-pfcwd-stats.txt"))
    return c


@case
def mr05():
    c = Case("mr-05", 105, T("2026-11-07 03:00"), 100)
    c.inc_id = "alltoall-1107"
    c.ton = T("2026-11-07 03:30")
    leaves = ("leaf-01", "leaf-02", "leaf-03", "leaf-04")
    hs = fleet(c, names("gpu1%03d.dc3.internal", 16, 18), ll="Ethernet", leaves=leaves, nup=4, traffic=5.0e9,
               ton_traffic=c.ton, r1=3.0e9, node=["gpu1018.dc3.internal", "gpu1027.dc3.internal"], rail=True)
    for lf in leaves:
        if lf == "leaf-03":
            uplink_traffic(c, lf, [0.25] * 4, 8 * 16 * 5.0e9 / 4 * 0.5, c.ton, [0.49, 0.02, 0.47, 0.02])
            sw = c.sw(lf)
            for i in (0, 2):
                sw.port(sw.links[i]["port"])["discards"] = Ctr(120, 481220, c.ton)
        else:
            uplink_traffic(c, lf, [0.25, 0.25, 0.26, 0.24], 8 * 16 * 5.0e9 / 4 * 0.5, c.ton,
                           [0.25, 0.24, 0.26, 0.25])
    c.snmp = True
    c.comm_after = 2.0
    c.truth = ("ecmp_hash_polarization", "leaf-03")
    c.title = "Throughput down ~17% after the 03:30 maintenance window"
    c.reported = "Network change 03:25: spine-02 routing daemon restarted (planned). The change owner says the spines look fine."
    c.compute_col = True
    c.dcgm_hosts = [h for h in hs if h.node]
    c.switch_cmds = False
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr06():
    c = Case("mr-06", 106, T("2026-11-08 16:10"), 70)
    c.inc_id = "slow-after-reroute"
    c.ton = T("2026-11-08 16:31")
    leaves = ("leaf-1a", "leaf-1b")
    hs = fleet(c, names("b200-%02d", 8, 1), model="b200", ll="Ethernet", leaves=leaves, nup=8, traffic=9.0e9,
               ton_traffic=c.ton, r1=5.9e9, node=["b200-01", "b200-05"])
    uplink_traffic(c, "leaf-1a", [0.125] * 8, 8 * 8 * 9e9 / 2 * 0.5, c.ton, [0.40, 0.01, 0.01, 0.02, 0.39, 0.01, 0.15, 0.01])
    uplink_traffic(c, "leaf-1b", [0.125] * 8, 8 * 8 * 9e9 / 2 * 0.5, c.ton, [0.13, 0.12, 0.125, 0.125, 0.13, 0.12, 0.125, 0.125])
    c.comm_after = 3.2
    c.truth = ("ecmp_hash_polarization", "leaf-1a")
    c.title = "B200 job ~1.45x slower since 16:31"
    c.reported = "No hardware alerts. leaf-1a got a config push (new BGP peer group) at 16:30, leaf-1b the same push at 16:40."
    c.compute_col = False
    c.node_exp = False
    c.dcgm_hosts = [h for h in hs if h.node]
    c.drv = "570.133.20"
    c.dcgm_label = "hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    c.dmesg_style = "kmsg"
    c.with_boot = False
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr07():
    c = Case("mr-07", 107, T("2026-11-09 09:00"), 90)
    c.inc_id = "ib-stalls-1109"
    c.ton = T("2026-11-09 09:24")
    hs = fleet(c, names("gpu-b%03d", 12, 101), traffic=7e9, ton_traffic=c.ton, r1=4.1e9, portfmt="%d",
               leaves=("qm-l1", "qm-l2", "qm-l3", "qm-l4"))
    for sw in c.switches.values():
        sw.sonic = False
    bad = hs[7].nics[6]
    ib_err(bad, c, symbol_error=(0, 18322), port_rcv_errors=(0, 4410), link_downed=(0, 3), link_error_recovery=(0, 41),
           carrier_changes=(2, 8))
    dec = hs[2].nics[1]
    dec.c["symbol_error"] = Ctr(12, 12)
    dec.c["port_rcv_errors"] = Ctr(3, 3)
    for k in range(3):
        tt = c.ton + 300 + k * 1100
        hs[7].dmesg.append((tt, "mlx5_core %s %s: Port: 1 Link DOWN" % (bad.sys_bus(), bad.ibdev)))
        hs[7].dmesg.append((tt + 9, "mlx5_core %s %s: Port: 1 Link INIT" % (bad.sys_bus(), bad.ibdev)))
        hs[7].dmesg.append((tt + 11, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (bad.sys_bus(), bad.ibdev)))
    c.comm_after = 2.5
    c.truth = ("link_degradation", bad.name)
    c.title = "Periodic stalls and ~30% slower steps on the 96-GPU run"
    c.reported = "Stalls began mid-morning. gpu-b103 had a NIC replaced last month."
    c.compute_col = True
    c.dmesg_style = "plain"
    for h in hs:
        boot_noise(c, h)
    c.logs["nccl.log"] = nccl_init(c, hs[:3], ["mlx5_%d" % i for i in range(8)]) + \
        "%s:3188:3301 [6] NCCL INFO NET/IB : Got async event : port error\n" % hs[7].name
    return c


@case
def mr08():
    c = Case("mr-08", 108, T("2026-11-10 18:30"), 80)
    c.inc_id = "retrans-1110"
    c.ton = T("2026-11-10 18:58")
    hs = fleet(c, names("h200-%02d", 8, 11), model="h200", ll="Ethernet", traffic=6e9, ton_traffic=c.ton, r1=3.8e9,
               leaves=("t0-a", "t0-b"), nnic=8)
    bad = hs[4].nics[3]
    port = c.sw(bad.switch).port(bad.port)
    port["rx_err"] = Ctr(4, 2931877, c.ton)
    port["discards"] = Ctr(0, 0)
    ib_err(bad, c, local_ack_timeout_err=(11, 30221), packet_seq_err=(2, 9911))
    # the NIC's own receive side and FEC stay clean: the switch's receiver counts the bad frames
    bad.c["fec_corrected"] = Ctr(1022, 1460)
    for h in hs:
        for n in h.nics:
            if n is not bad:
                n.c["fec_corrected"] = Ctr(900 + n.i, 1300 + n.i)
    c.fec_cmd = True
    c.comm_after = 2.2
    c.truth = ("link_degradation", "%s/%s" % (bad.switch, bad.port))
    c.title = "Job ~25% slower; NCCL retransmits on one node"
    c.reported = "h200-15 looks guilty (retransmit counters), we'd like to know whether to pull it."
    c.missing.add((hs[4].name, "nvml.json"))
    c.missing.add((hs[4].name, "dmesg.txt"))
    c.compute_col = False
    c.drv = "550.127.05"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr09():
    c = Case("mr-09", 109, T("2026-11-11 12:00"), 90)
    c.inc_id = "a100-slow-1111"
    c.ton = T("2026-11-11 12:41")
    hs = fleet(c, names("dgx-a100-%02d", 6, 3), model="a100", rate=200, traffic=4e9, nnic=4, ton_traffic=c.ton, r1=3e9)
    bad = hs[1].gpus[5]
    bad.ton = c.ton
    bad.after = dict(clk=1005, temp=88, reasons=0x68, power=265.0, tensor=0.29)
    bad.c["tviol"] = Ctr(0, 2.2e9, c.ton)
    for h in hs:
        for g in h.gpus:
            if g is not bad and g.idx in (2, 4):
                g.base["temp"] = 77 + (g.idx % 3)  # warm without reasons
    c.truth = ("thermal_throttle", bad.name)
    c.title = "A100 job ~15% slower since 12:41"
    c.reported = "Several GPUs in that row run warm all the time; facilities rebalanced the CRAH units at noon."
    c.drv = "470.199.02"
    c.old_smi = True
    c.dcgm_label = "Hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
    c.old_kernel = True
    c.dmesg_style = "journal"
    c.alerts = [alert("GPUTempHigh", {"Hostname": hs[4].name, "gpu": "2"}, "GPU temperature above 75C", c.t0 + 300)]
    for h in hs:
        boot_noise(c, h)
    c.m0 = 0.35
    return c


@case
def mr10():
    c = Case("mr-10", 110, T("2026-11-12 04:00"), 90)
    c.inc_id = "h200-node-slow"
    c.ton = T("2026-11-12 04:26")
    hs = fleet(c, names("h200-c%02d", 6, 20), model="h200", traffic=6e9)
    bh = hs[3]
    for i, g in enumerate(bh.gpus):
        g.ton = c.ton + i * 20
        g.after = dict(clk=1290 - 25 * (i % 3), temp=87 + (i % 3), reasons=0x68 if i % 2 else 0x20, power=480.0, tensor=0.27)
        g.c["tviol"] = Ctr(0, int(3.4e9 - i * 1e8), g.ton)
    bh.sel = ("   1 | 10/30/2026 | 08:12:44 | Event Logging Disabled #0x51 | Log area reset/cleared | Asserted\n"
              "   2 | 11/12/2026 | 04:25:31 | Fan #0x33 | Lower Critical going low  | Asserted\n"
              "   3 | 11/12/2026 | 04:25:33 | Fan #0x34 | Lower Critical going low  | Asserted\n"
              "   4 | 11/12/2026 | 04:27:02 | Temperature #0x0b | Upper Non-critical going high | Asserted\n")
    bh.fans = ("FAN1             | 30h | ok  |  7.1 | 11340 RPM\nFAN2             | 31h | ok  |  7.1 | 11280 RPM\n"
               "FAN3             | 33h | cr  |  7.1 | 0 RPM\nFAN4             | 34h | cr  |  7.1 | 0 RPM\n"
               "FAN5             | 35h | ok  |  7.1 | 11400 RPM\nFAN6             | 36h | ok  |  7.1 | 11220 RPM\n")
    other = hs[1]
    other.fans = ("FAN1             | 30h | ok  |  7.1 | 9120 RPM\nFAN2             | 31h | ok  |  7.1 | 9180 RPM\n"
                  "FAN3             | 33h | ok  |  7.1 | 9060 RPM\nFAN4             | 34h | ok  |  7.1 | 9140 RPM\n")
    other.sel = "   1 | 11/02/2026 | 14:02:10 | Power Supply #0x62 | Redundancy Lost | Asserted\n   2 | 11/02/2026 | 14:40:57 | Power Supply #0x62 | Redundancy Lost | Deasserted\n"
    c.truth = ("thermal_throttle", bh.name)
    c.title = "h200 job ~1.3x slower since 04:26"
    c.reported = ""
    c.compute_col = True
    c.dmesg_style = "ctime"
    c.dcgm_label = "hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    c.steps_gz = True
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr11():
    c = Case("mr-11", 111, T("2026-11-13 20:00"), 90)
    c.inc_id = "mfu-1113"
    c.ton = T("2026-11-13 20:33")
    hs = fleet(c, names("gpu-c%03d", 8, 201), traffic=6e9, shuffle=True, nnic=4)
    bad = hs[6].gpus[1]
    bad.ton = c.ton
    bad.limit = 300
    bad.after = dict(clk=1095, power=298.0, reasons=0x4, tensor=0.24, temp=51)
    bad.base["reasons"] = 0x4 if bad.swcap else 0
    bad.c["pviol"] = Ctr(0, int(1.9e9), c.ton)
    for h in hs:
        for g in h.gpus:
            if g.swcap and g is not bad:
                g.c["pviol"] = Ctr(int(5e10 * abs(L.noise(g.name))), int(5e10 * abs(L.noise(g.name)) + 3.1e9))
    hs[6].dmesg.append((c.ton - 40, "audit: type=1105 audit(%d.118:9312): pid=811202 uid=0 auid=1004 ses=44 subj=unconfined msg='op=PAM:session_open grantors=pam_limits acct=\"root\" exe=\"/usr/bin/sudo\" hostname=? addr=? terminal=/dev/pts/3 res=success'" % (c.ton - 40)))
    c.truth = ("power_throttle", bad.name)
    c.title = "MFU dropped from 49% to 34% at 20:33"
    c.reported = "Nothing changed in the job. Ops ran maintenance scripts on some nodes around 20:30."
    c.alerts = [alert("GPUPowerCapped", {"hostname": hs[0].name, "gpu": "0"}, "SW power cap active for 10m", c.t0 + 600)]
    c.compute_col = False
    c.dcgm_fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "REASONS",
                   "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_GPU_UTIL"]
    c.dcgm_label = "hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr12():
    c = Case("mr-12", 112, T("2026-11-14 10:00"), 90)
    c.inc_id = "one-node-slow"
    c.ton = T("2026-11-14 10:19")
    hs = fleet(c, names("sjc2-gpu%03d", 8, 40), traffic=6e9)
    bh = hs[2]
    for g in bh.gpus:
        g.ton = c.ton
        g.after = dict(clk=930 + g.idx * 7, power=330.0, reasons=0x88, tensor=0.21, temp=55)
        g.c["pviol"] = Ctr(0, int(4.2e9), c.ton)
    bh.sel = ("   1 | 11/14/2026 | 10:18:52 | Power Supply #0x64 | Failure detected | Asserted\n"
              "   2 | 11/14/2026 | 10:18:52 | Power Supply #0x64 | Power Supply AC lost | Asserted\n"
              "   3 | 11/14/2026 | 10:18:53 | Power Unit #0x01 | Redundancy Lost | Asserted\n")
    hs[5].sel = "   1 | 09/22/2026 | 03:11:07 | Fan #0x31 | Lower Critical going low | Asserted\n   2 | 09/22/2026 | 03:19:40 | Fan #0x31 | Lower Critical going low | Deasserted\n"
    c.truth = ("power_throttle", bh.name)
    c.title = "Step time up 65% at 10:19"
    c.reported = "PDU maintenance in rack r02 was scheduled for this morning."
    c.compute_col = True
    c.dmesg_style = "kmsg"
    for h in hs:
        boot_noise(c, h)
    c.cmd_gz = {"nvidia-smi-q.txt", "lspci-vv.txt"}
    return c


@case
def mr13():
    c = Case("mr-13", 113, T("2026-11-15 01:00"), 120)
    c.inc_id = "restarts-1115"
    c.ton = T("2026-11-15 01:47")
    hs = fleet(c, names("gpu%d.pod2.lan", 8, 301), traffic=6e9)
    bad = hs[4].gpus[6]
    bad.c["dbe"] = Ctr(0, 1, c.ton)
    bad.c["sbe"] = Ctr(0, 214, c.ton - 600)
    bad.rows.update(uncorrected=1, corrected=0, pending=True)
    bad.row_t = c.ton
    xid(c, bad, c.ton, 94, "pid")
    xid(c, bad, c.ton + 1, 63, "pid", "Row Remapper: New row marked for remapping, reset gpu to activate.")
    old = hs[1].gpus[2]
    xid(c, old, c.t0 - 6 * 86400, 13, "pid")
    c.stop_at = c.ton
    c.restart = (c.ton + 900, 41200 + 300)
    c.truth = ("hbm_degradation", bad.name)
    r = hs.index(hs[4]) * 8 + 6
    c.title = "Training job crashed and restarted from checkpoint at 01:47"
    c.reported = "Auto-restart worked, loss continued. Is it safe to keep the same nodes?"
    c.logs["rank%d.log" % r] = ("[rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
                                "[rank%d]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n" % (r, r))
    c.logs["launcher.log"] = "%s torchrun: worker group failed, restarting (1/3) from checkpoint step 41500\n" % L.iso(c.ton + 30)
    c.dmesg_style = "journal"
    c.compute_col = True
    c.dcgm_fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                   "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"]
    for h in hs:
        boot_noise(c, h)
    c.truncate["steps"] = 0.93
    return c


@case
def mr14():
    c = Case("mr-14", 114, T("2026-11-16 05:00"), 90)
    c.inc_id = "jitter-1116"
    c.ton = T("2026-11-16 05:22")
    hs = fleet(c, names("gpu-d%03d", 32, 1), traffic=6e9, node=["gpu-d009", "gpu-d014", "gpu-d021"])
    bad = hs[13].gpus[4]
    bad.c["sbe"] = Ctr(3, 4117, c.ton)
    bad.rows.update(corrected=2, pending=True)
    bad.rows_before = 0
    bad.row_t = c.ton + 1800
    bad.ton = c.ton
    bad.after = dict(tensor=0.33)
    # a few GPUs with old, static correctable counts
    for h, gi, n in ((hs[8], 1, 40), (hs[20], 7, 188), (hs[27], 3, 61)):
        g = h.gpus[gi]
        g.c["sbe"] = Ctr(n, n)
        g.agg_sbe_extra = n * 3
    # the GPU spends time in ECC handling: a few percent slower per step
    bad.base_clk_factor = 1.0
    c.truth = ("hbm_degradation", bad.name)
    c.title = "Step time jitter and ~8% slowdown since early morning"
    c.reported = ""
    c.compute_col = True
    c.dcgm_fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                   "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_XID_ERRORS", "REASONS"]
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    c.dcgm_label = "hostname"
    c.om_gz = True
    c.log_every = 5
    hs[13].cfac_gpu = bad
    for h in hs:
        boot_noise(c, h)
    c.slow_gpu = (bad, 1.20)
    return c


@case
def mr15():
    c = Case("mr-15", 115, T("2026-11-17 14:00"), 70)
    c.inc_id = "hang-1117"
    c.om_gz = False
    c.interval = 120
    c.ton = T("2026-11-17 14:28")
    hs = fleet(c, names("gpu-e%03d", 4, 50), model="h100", traffic=6e9, ton_traffic=c.ton, r1=0)
    bad = hs[2].gpus[4]
    bad.lost_at = c.ton
    hs[2].dmesg.append((c.ton, "NVRM: GPU at PCI:0000:%02x:00: %s" % (bad.bus, bad.uuid)))
    hs[2].dmesg.append((c.ton, "NVRM: GPU Board Serial Number: %s" % bad.serial))
    xid(c, bad, c.ton, 79)
    hs[2].dmesg.append((c.ton, "NVRM: GPU %s: GPU has fallen off the bus." % bad.sys_bus()))
    c.stop_at = c.ton
    r = 2 * 8 + 4
    c.logs["watchdog.log"] = watchdog_log(c, [0, 7, r + 1, 31], 88211, c.ton + 600)
    c.truth = ("gpu_fell_off_bus", bad.name)
    c.title = "Job hung at 14:28, NCCL watchdog timeouts on many ranks"
    c.reported = "Watchdog fired on ranks 0, 7, 21 and 31 first."
    c.dmesg_style = "plain"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr16():
    c = Case("mr-16", 116, T("2026-11-18 08:00"), 60)
    c.inc_id = "hang-1118"
    c.ton = T("2026-11-18 08:19")
    hs = fleet(c, names("a100-%02d", 4, 31), model="a100", rate=200, traffic=4e9, ton_traffic=c.ton, r1=0)
    bad = hs[1].gpus[0]
    bad.lost_at = c.ton
    c.stop_at = c.ton + 5
    c.missing |= {(hs[1].name, "dmesg.txt"), (hs[1].name, "nvml.json")}
    c.truth = ("gpu_fell_off_bus", bad.name)
    c.title = "A100 job stopped making progress at 08:19"
    c.reported = "The collector on a100-32 timed out partway, so some files are missing."
    c.drv = "535.183.01"
    c.old_kernel = True
    idle_dec = hs[3].gpus[7]
    idle_dec.c["replay"] = Ctr(14, 14)
    c.compute_col = False
    c.logs["watchdog.log"] = watchdog_log(c, [3, 12, 25], 5120, c.ton + 1800, 1800000)
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr17():
    c = Case("mr-17", 117, T("2026-11-19 11:00"), 80)
    c.inc_id = "allreduce-1119"
    c.ton = T("2026-11-19 11:34")
    hs = fleet(c, names("gpu-f%03d", 8, 10), traffic=6e9, ton_traffic=c.ton, r1=4.2e9)
    bad = hs[5].gpus[2]
    bad.crc_link = 7
    bad.c["crc"] = Ctr(0, 882140, c.ton)
    bad.c["nvreplay"] = Ctr(0, 40112, c.ton)
    bad.c["nvrecov"] = Ctr(0, 6, c.ton)
    xid(c, bad, c.ton + 1500, 74, "new", XIDTXT[74] % 7)
    c.nvlink_cmd = True
    c.comm_after = 2.0
    c.truth = ("nvlink_fault", bad.name)
    c.title = "Step time up ~20% since 11:34"
    c.reported = "No node alarms. A quick bus-bandwidth test on gpu-f012 looked normal."
    c.dcgm_fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_POWER_USAGE", "REASONS", "DCGM_FI_DEV_XID_ERRORS",
                   "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"]
    c.dmesg_style = "ctime"
    c.compute_col = True
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr18():
    c = Case("mr-18", 118, T("2026-11-20 02:00"), 60)
    c.inc_id = "big-run-1120"
    c.ton = T("2026-11-20 02:21")
    c.interval = 180
    leaves = tuple("leaf-%02d" % i for i in range(1, 17))
    hn = names("g%05d", 256, 10001)
    nodes = ["g10077", "g10078", "g10140", "g10203", "g10012", "g10250"]
    hs = fleet(c, hn, traffic=6e9, leaves=leaves, spines=tuple("spine-%02d" % i for i in range(1, 9)), nup=8,
               node=nodes, rail=True)
    for sw in c.switches.values():
        sw.sonic = False
    bad = c.host("g10078").gpus[5]
    bad.crc_link = 11
    bad.c["crc"] = Ctr(0, 1288301, c.ton)
    bad.c["nvreplay"] = Ctr(0, 30222, c.ton)
    # old static counts on other GPUs (decoys)
    for i, (hname, gi, link, v) in enumerate((("g10077", 3, 2, 9211), ("g10140", 0, 4, 120455), ("g10203", 6, 1, 77),
                                               ("g10012", 2, 9, 4401), ("g10250", 7, 15, 61000), ("g10033", 1, 3, 15),
                                               ("g10119", 4, 6, 3310), ("g10188", 5, 0, 998))):
        g = c.host(hname).gpus[gi]
        g.static_crc = {link: v}
        g.c["nvreplay"] = Ctr(v // 40, v // 40)
    c.nvlink_cmd = True
    c.comm_after = 1.6
    c.truth = ("nvlink_fault", bad.name)
    c.title = "2048-GPU run: step time +15% since 02:21"
    c.reported = "No XIDs anywhere per the on-call dashboard."
    c.dcgm_fams = ["DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                   "DCGM_FI_DEV_XID_ERRORS"]
    c.om_gz = True
    c.steps_gz = True
    c.log_every = 20
    c.compute_col = False
    c.loss_col = False
    c.nexp_hosts = [h for h in hs if h.node]
    c.dcgm_hosts = hs
    c.node_cap = 5
    c.dcgm_label = "hostname"
    c.c0, c.m0 = 3.1, 1.1
    for h in hs:
        if h.node:
            boot_noise(c, h, False)
    c.dmesg_style = "kmsg"
    c.drv = "570.133.20"
    return c


@case
def mr19():
    c = Case("mr-19", 119, T("2026-11-21 06:00"), 90)
    c.inc_id = "replica-1121"
    c.om_gz = False
    c.interval = 120
    c.ton = T("2026-11-21 06:40")
    hs = fleet(c, names("gpu-g%03d", 4, 70), traffic=6e9)
    c.sdc_rank = 13
    c.checksum_col = True
    c.truth = ("silent_data_corruption", "%s/gpu%d" % (hs[1].name, 5))
    c.title = "Consistency check failed at 06:40 (job continues)"
    c.reported = "The replica consistency check fired at 06:40. No errors in any log; the job keeps running."
    c.compute_col = True
    c.dmesg_style = "plain"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr20():
    c = Case("mr-20", 120, T("2026-11-22 19:00"), 90)
    c.inc_id = "loss-1122"
    c.ton = T("2026-11-22 19:12")
    hs = fleet(c, names("10-12-7-%d", 6, 21), traffic=6e9, shuffle=True, ll="Ethernet")
    for h in hs:
        c.instance[h.name] = h.name.replace("-", ".")
    c.sdc_rank = 30
    c.checksum_col = True
    hh, gg = c.ranks[30]
    c.truth = ("silent_data_corruption", "%s/gpu%d" % (hh.name, gg))
    dec = hs[0].gpus[3]
    xid(c, dec, c.t0 - 9 * 86400, 13, "pid")
    dec.aer = (3, 1)
    dec.aer_before = (3, 1)
    other = hs[2].gpus[1]
    other.c["sbe"] = Ctr(7, 7)
    c.title = "Loss spiked at step ~41,3xx and grad-norm is erratic"
    c.reported = "One node had an Xid last week (replaced a cable). Loss recovered partly."
    c.dmesg_style = "ctime"
    c.logs["train.log"] = train_log(c, 40)
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr21():
    c = Case("mr-21", 121, T("2026-11-23 15:00"), 90)
    c.inc_id = "straggler-1123"
    c.ton = T("2026-11-23 15:31")
    hs = fleet(c, names("gpu-h%03d", 8, 1), traffic=6e9, nnic=4)
    bh = hs[5]
    bh.cfac = 1.38
    bh.cpu_psi = (0.5, 61.4)
    bh.psi_rate = (0.02, 0.62)
    bh.load_pair = (17.0, 214.0)
    bh.top_extra = [(772101, "root", 20, 0, "11.2g", "6.1g", "21m", "R", 2311.0, 0.3, "611:02.14", "clamscan"),
                    (772144, "root", 20, 0, "1.1g", "402m", "12m", "R", 388.0, 0.0, "98:41.20", "rsync")]
    c.truth = ("host_contention", bh.name)
    c.title = "Step time 1.3x since 15:31"
    c.reported = "Security team rolled out a new agent this afternoon, reportedly only to idle nodes."
    c.compute_col = True
    c.corrupt.add((bh.name, "dmesg.txt"))
    c.dmesg_style = "journal"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr22():
    c = Case("mr-22", 122, T("2026-11-24 22:00"), 90)
    c.inc_id = "slow-1124"
    c.ton = T("2026-11-24 22:40")
    hs = fleet(c, names("trn-%02d", 6, 1), model="h200", traffic=6e9, nnic=2, rate=200)
    bh = hs[4]
    bh.cfac = 1.45
    bh.mem_psi = (38.2, 29.7)
    for h in hs:
        if h is not bh:
            h.mem_psi = (0.0, 0.0)
    bh.swap = 8011.4
    bh.memfree = 2101.3
    bh.top_extra = [(201, "root", 20, 0, "0", "0", "0", "R", 98.0, 0.0, "45:12.01", "kswapd0"),
                    (202, "root", 20, 0, "0", "0", "0", "R", 91.0, 0.0, "44:02.77", "kswapd1")]
    bh.wa = 14.2
    for g in bh.gpus:
        g.ton = c.ton
        g.after = dict(util=71, tensor=0.27)
    bh.dmesg.append((c.ton + 400, "INFO: task python3:2211901 blocked for more than 120 seconds."))
    c.truth = ("host_contention", bh.name)
    c.title = "Step time up ~35% since 22:40"
    c.compute_col = False
    c.dmesg_style = "plain"
    for h in hs:
        boot_noise(c, h)
    c.truth = ("host_contention", bh.name)
    c.reported = "Nothing deployed on the fabric. The dashboard shows trn-05's GPUs less busy."
    return c


@case
def mr23():
    c = Case("mr-23", 123, T("2026-11-25 09:00"), 90)
    c.inc_id = "tokens-1125"
    c.ton = T("2026-11-25 09:35")
    hs = fleet(c, names("gpu-k%03d", 8, 1), traffic=6e9, ton_traffic=c.ton, r1=3.5e9)
    c.data_wait = 1.55
    for h in hs:
        h.io_psi = 22.5 + 3 * L.noise(h.name, "io")
        h.wa = 9.5
        for g in h.gpus:
            g.ton = c.ton
            g.after = dict(util=58, tensor=0.24, power=g.m["limit"] * 0.62, clk=g.m["clk"], reasons=0)
    dec = hs[2].gpus[6]
    dec.base["temp"] = 81
    c.alerts = [alert("GPUUtilLow", {"hostname": hs[0].name}, "GPU utilization below 70% for 10m", c.ton + 700)]
    c.truth = ("input_pipeline_stall", "job")
    c.title = "Tokens/s down ~40% at 09:35 on every node"
    c.reported = "A kernel live patch was rolled out cluster-wide at 09:30 (no reboot)."
    c.logs["train.log"] = (lambda case: train_log(case, 30)(case) +
                           "".join("[%s] WARNING dataloader: worker 3 waited %.1fs for next batch\n" % (
                               L.dt(c.ton + k * 300).strftime("%Y-%m-%d %H:%M:%S"), 1.4 + 0.3 * L.noise(k))
                                   for k in range(6)))
    c.compute_col = True
    c.dcgm_label = "hostname"
    c.reason_field = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr24():
    c = Case("mr-24", 124, T("2026-11-26 17:00"), 90)
    c.inc_id = "stutter-1126"
    c.ton = T("2026-11-26 17:25")
    hs = fleet(c, names("node%03d", 12, 101), model="a100", rate=200, traffic=4e9)
    # whole-job stalls: every ~25 steps a 20-40 s wait before the next step
    c.spikes = []
    t = c.ton
    k = 0
    while t < c.t1:
        c.spikes.append((t, t + 3.0, 24.0 + 12 * abs(L.noise("sp", k))))
        t += 60 + 30 * abs(L.noise("gap", k))
        k += 1
    for h in hs:
        for g in h.gpus:
            g.ton = c.ton
            g.after = dict(util=49, tensor=0.18)
    c.truth = ("input_pipeline_stall", "job")
    c.title = "Step time wildly uneven since 17:25"
    c.reported = ""
    c.compute_col = False
    c.missing |= {("*", "top.txt")}
    c.drv = "535.129.03"
    c.dmesg_style = "kmsg"
    c.dcgm_fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "REASONS",
                   "DCGM_FI_DEV_POWER_USAGE"]
    for h in hs:
        boot_noise(c, h)
        h.cpu_psi = (0.3, 0.4)
    return c


@case
def mr25():
    c = Case("mr-25", 125, T("2026-11-27 03:00"), 60)
    c.inc_id = "new-job-1127"
    hs = fleet(c, names("gpu-m%03d", 16, 1), traffic=0)
    for h in hs:
        c.traffic([h.nics[0]], 46.0e9)
        c.traffic(h.nics[1:], 2.0e4)
    c.m0 = 3.6
    c.truth = ("nccl_misconfiguration", "job")
    c.title = "New 128-GPU job runs at 40% of the benchmark throughput from the first step"
    c.reported = "Same container image as the benchmark; the launcher script was rewritten for the new scheduler."
    c.logs["nccl.log"] = nccl_init(c, hs[:4], ["mlx5_0"], env=[("NCCL_IB_HCA", "mlx5_0"), ("NCCL_IB_TIMEOUT", "22")])
    c.compute_col = True
    c.alerts = [alert("IBPortXmitWaitHigh", {"instance": hs[3].name + ":9100", "device": "mlx5_0"},
                      "port_xmit_wait rate high on mlx5_0", c.t0 + 200)]
    for h in hs:
        boot_noise(c, h)
    c.dmesg_style = "ctime"
    return c


@case
def mr26():
    c = Case("mr-26", 126, T("2026-11-28 12:00"), 60)
    c.inc_id = "roce-underperf"
    hs = fleet(c, names("rc%02d.gpu.corp", 8, 1), ll="Ethernet", traffic=0, nnic=8)
    for h in hs:
        c.traffic(h.nics[:2], 19.0e9)
        c.traffic(h.nics[2:], 1.5e4)
        for n in h.nics[:2]:
            ib_err(n, c, np_cnp_sent=(10 ** 6, 10 ** 6 + 81200), rp_cnp_handled=(9 * 10 ** 5, 9 * 10 ** 5 + 80044),
                   np_ecn_marked_roce_packets=(3 * 10 ** 6, 3 * 10 ** 6 + 244100))
    c.m0 = 1.8
    c.truth = ("nccl_misconfiguration", "job")
    c.title = "RoCE cluster: job far below expected bus bandwidth"
    c.reported = "All links up at 400G per the fabric team. ECN marks visible on some NICs."
    c.compute_col = False
    c.fec_cmd = True
    c.drv = "550.90.07"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr27():
    c = Case("mr-27", 127, T("2026-11-29 08:00"), 90)
    c.inc_id = "check-1129"
    hs = fleet(c, names("gpu-n%03d", 6, 1), traffic=6e9)
    spare = c.add_hosts(["gpu-n099"])[0]
    spare.node = True
    c.cable([spare], ["leaf-01", "leaf-02"], start=100)
    for g in spare.gpus:
        g.idle()
    warm = hs[3].gpus[2]
    warm.base["temp"] = 82
    warm.aer = (4, 1)
    warm.aer_before = (2, 1)
    hs[3].dmesg.append((c.t0 + 1900, "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%02x:00.0" % (warm.bus - 1, warm.bus)))
    hs[3].dmesg.append((c.t0 + 1900, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)" % warm.bus))
    hs[3].dmesg.append((c.t0 + 1900, "nvidia 0000:%02x:00.0:    [12] Timeout" % warm.bus))
    c.alerts = [alert("GPUTempHigh", {"Hostname": hs[3].name, "gpu": "2"}, "GPU temperature above 80C", c.t0 + 900)]
    c.truth = ("healthy", None)
    c.title = "Please check gpu-n004 before we extend the reservation"
    c.reported = "Temperature alert on one GPU and the spare shows 'PCIe Gen1' in nvidia-smi."
    for h in hs + [spare]:
        boot_noise(c, h)
    c.compute_col = True
    return c


@case
def mr28():
    c = Case("mr-28", 128, T("2026-11-30 00:00"), 120)
    c.inc_id = "spikes-1130"
    hs = fleet(c, names("h100-%03d", 8, 401), traffic=6e9)
    for k in range(4):
        a = c.t0 + 600 + k * 1800
        c.spikes.append((a, a + 4, 38.0))
    for h in hs:
        for g in h.gpus:
            if g.swcap:
                g.c["pviol"] = Ctr(int(2e10 * abs(L.noise(g.name))), int(2e10 * abs(L.noise(g.name)) + 6.2e9))
    c.alerts = [alert("GPUPowerViolation", {"Hostname": hs[2].name, "gpu": "5"}, "power violation counter increasing",
                      c.t0 + 1300)]
    c.truth = ("healthy", None)
    c.title = "Step time spikes to ~40 s every 30 minutes"
    c.reported = "Power violation alerts on several GPUs. Checkpoint interval is 500 steps since Friday."
    c.logs["train.log"] = lambda case: "".join("[%s] saving checkpoint to /ckpt/step_%d (async=False)\n" % (
        L.dt(a).strftime("%Y-%m-%d %H:%M:%S"), 41500 + 500 * i) for i, (a, b, x) in enumerate(case.spikes))
    c.dcgm_label = "Hostname"
    c.compute_col = True
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr29():
    c = Case("mr-29", 129, T("2026-12-01 10:00"), 120)
    c.inc_id = "restart-1201"
    hs = fleet(c, names("gpu-p%02d", 8, 1), traffic=6e9)
    c.stop_at = c.t0 + 2400
    c.restart = (c.t0 + 3300, 41200 + 1000)
    old = hs[6].gpus[0]
    xid(c, old, c.t0 - 12 * 86400, 79)
    hs[6].boot = c.t0 - 11 * 86400
    # the old XID happened before this boot: keep it only in the DCGM sticky value
    hs[6].dmesg = [x for x in hs[6].dmesg if x[0] >= hs[6].boot]
    c.events[hs[6].name] = []
    for h in hs:
        for g in h.gpus[:2]:
            g.c["sbe"] = Ctr(2 + g.idx, 2 + g.idx)
    c.logs["launcher.log"] = ("%s deploy: rolling config v2026.12.01-1 (tokenizer cache path)\n"
                              "%s job stopped by operator for deploy\n%s job resumed from checkpoint step 42200\n") % (
        L.iso(c.t0 + 2350), L.iso(c.t0 + 2400), L.iso(c.t0 + 3300))
    c.truth = ("healthy", None)
    c.title = "Throughput dip around 10:40-10:55, please confirm nothing is wrong"
    c.reported = "DCGM shows XID 79 on gpu-p07 GPU 0 in the dashboard panel."
    c.dmesg_style = "plain"
    for h in hs:
        boot_noise(c, h)
    c.compute_col = True
    return c


@case
def mr30():
    c = Case("mr-30", 130, T("2026-12-02 13:00"), 90)
    c.inc_id = "weekend-1202"
    hs = fleet(c, names("rocky-%02d", 8, 1), ll="Ethernet", traffic=6e9)
    for h in hs:
        for n in h.nics:
            ib_err(n, c, np_cnp_sent=(2 * 10 ** 6, 2 * 10 ** 6 + 4100 + n.i), rp_cnp_handled=(10 ** 6, 10 ** 6 + 3900),
                   rx_prio3_pause=(40000, 40000 + 1200 + 3 * n.i), rx_prio3_pause_duration=(320000, 320000 + 9600))
            c.sw(n.switch).port(n.port)["tx_pfc3"] = n.c["rx_prio3_pause"].now
            n.c["fec_corrected"] = Ctr(10 ** 5, 10 ** 5 + 3000)
    f = hs[4].nics[6]
    f.c["link_downed"] = Ctr(1, 1)
    f.c["link_down_events_phy"] = Ctr(1, 1)
    f.c["carrier_changes"] = Ctr(4, 4)
    hs[4].dmesg.append((c.t0 - 9 * 86400, "mlx5_core %s %s: Port: 1 Link DOWN" % (f.sys_bus(), f.ibdev)))
    hs[4].dmesg.append((c.t0 - 9 * 86400 + 12, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (f.sys_bus(), f.ibdev)))
    c.truth = ("healthy", None)
    c.title = "Job feels slower after the weekend"
    c.reported = "Compare with Friday please. rocky-05 had a link flap at some point."
    c.fec_cmd = True
    c.compute_col = False
    c.dmesg_style = "journal"
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr31():
    c = Case("mr-31", 131, T("2026-12-03 21:00"), 90)
    c.inc_id = "eval-1203"
    hs = fleet(c, names("gpu-q%03d", 32, 1), traffic=6e9, node=["gpu-q003", "gpu-q017"])
    c.log_every = 5
    for k in range(3):
        a = c.t0 + 1200 + k * 1500
        c.spikes.append((a, a + 60, 6.5))
    c.truth = ("healthy", None)
    c.title = "Throughput dashboard shows periodic 3-minute dips"
    c.reported = "In-loop evaluation runs every 400 steps. Can someone confirm these dips are expected?"
    c.topology = False
    c.dmesg_style = "kmsg"
    c.dcgm_hosts = [h for h in hs if h.node]
    for h in hs:
        boot_noise(c, h)
    return c


@case
def mr32():
    c = Case("mr-32", 132, T("2026-12-04 05:00"), 90)
    c.inc_id = "pfc-1204"
    c.ton = T("2026-12-04 05:29")
    hs = fleet(c, names("gpu-s%03d", 8, 1), ll="Ethernet", traffic=6e9, ton_traffic=c.ton, r1=2.5e9,
               leaves=("leaf-11", "leaf-12"), rail=False, nnic=4, node=["gpu-s001", "gpu-s002", "gpu-s005", "gpu-s006"])
    bad = c.host("gpu-s006").nics[1]
    ib_err(bad, c, tx_prio3_pause=(0, 7021994), tx_prio3_pause_duration=(0, 56175952),
           tx_pause_storm_warning_events=(0, 9), rx_out_of_buffer=(0, 1422011), rx_prio3_pause=(500, 512))
    for h in hs:
        for n in h.nics:
            p = c.sw(n.switch).port(n.port)
            if n is bad:
                p["rx_pfc3"] = bad.c["tx_prio3_pause"].now
                p["tx_pfc3"] = bad.c["rx_prio3_pause"].now
            else:
                v = (988000 if n.switch == bad.switch else 402000) + 71 * n.i
                ib_err(n, c, rx_prio3_pause=(500, 500 + v))
                p["tx_pfc3"] = n.c["rx_prio3_pause"].now
    c.comm_after = 2.4
    # decoy: the host that sits on the same leaf and got drained shows old pauses it sent
    c.truth = ("pfc_pause_storm", bad.name)
    c.title = "Step time +30% since 05:29"
    c.reported = "gpu-s002 logged NCCL timeouts first and was drained; the job is still slow."
    c.switch_cmds = False
    c.compute_col = True
    c.dmesg_style = "ctime"
    for h in hs:
        boot_noise(c, h)
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    for fn in CASES:
        c = fn()
        if a.only and c.cid != a.only:
            continue
        c.emit(os.path.join(a.out, c.cid))
        print(c.cid, c.truth[0], c.truth[1])


if __name__ == "__main__":
    main()
