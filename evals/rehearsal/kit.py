"""Fleet-building helpers shared by the case definitions."""
import argparse, os, sys, time, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetsim import (Case, Ctr, Gauge, set_traffic, pause_chain, model_steps, write_case, iso, bdf_sys, bdf_nvml)

H100 = "NVIDIA H100 80GB HBM3"; H200 = "NVIDIA H200"
CONTIG = ["mlx5_%d" % i for i in range(8)]
NONCONTIG = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def netdevs(kind, nics):
    if kind == "ib":
        return ["ibp%ds0" % b for b in (24, 42, 60, 93, 156, 171, 188, 219)][:len(nics)]
    if kind == "ens":
        return ["ens%dnp0" % (i + 1) for i in range(len(nics))]
    return ["enp%ds0np0" % b for b in (26, 44, 60, 95, 156, 173, 188, 221)][:len(nics)]


def fabric(c, names, model=H100, ll="InfiniBand", nics=CONTIG, ndkind="ib", vendor="ib", per_leaf=4, nspine=2,
           spares=(), outside=(), ngpu=8, leafname="leaf-%02d", spinename="spine-%02d"):
    """Hosts in leaf groups; every NIC of a host on its group's leaf; each leaf has one uplink per spine."""
    nds = netdevs(ndkind, nics)
    c.job["gpus_per_node"] = ngpu
    hosts = []
    nleaf = (len(names) + per_leaf - 1) // per_leaf
    for si in range(nspine):
        c.switch(spinename % (si + 1), "spine", vendor)
    for li in range(nleaf):
        ln = leafname % (li + 1)
        c.switch(ln, "leaf", vendor)
        for si in range(nspine):
            c.link(ln, uplink_port(vendor, si), spinename % (si + 1), spine_port(vendor, li))
    for i, name in enumerate(names):
        h = c.host(name, model, ngpu, list(zip(nics, nds)), ll, in_job=(name not in spares and name not in outside),
                   rack="r%02d" % (i // per_leaf + 1))
        ln = leafname % (i // per_leaf + 1)
        for k, n in enumerate(h.nics):
            c.attach(n, ln, host_port(vendor, (i % per_leaf) * len(nics) + k))
        hosts.append(h)
    c.job["ranks"] = sum(1 for h in hosts if h.in_job) * c.job["gpus_per_node"]
    return hosts


def host_port(vendor, k):
    if vendor == "sonic":
        return "Ethernet%d" % (k * 8)
    if vendor == "arista":
        return "Ethernet%d/1" % (k + 1)
    return "1/%d" % (k + 1)


def uplink_port(vendor, si):
    if vendor == "sonic":
        return "Ethernet%d" % (256 + si * 8)
    if vendor == "arista":
        return "Ethernet%d/1" % (49 + si)
    return "1/%d" % (41 + si)


def spine_port(vendor, li):
    if vendor == "sonic":
        return "Ethernet%d" % (li * 8)
    if vendor == "arista":
        return "Ethernet%d/1" % (li + 1)
    return "1/%d" % (li + 1)


def uplink_traffic(c, share=0.5, polarized=None, onset=None):
    """Cross-leaf traffic of each leaf spread over its uplinks (ECMP); `polarized` = (leaf, hot uplink, fraction)."""
    span = c.t1 - c.t0
    for ln, s in c.switches.items():
        if s.tier != "leaf":
            continue
        tx = sum(p["in_oct"].d for pn, p in s.ports.items() if not any(pn == l[0] for l in s.links))
        rx = sum(p["out_oct"].d for pn, p in s.ports.items() if not any(pn == l[0] for l in s.links))
        ups = [l for l in s.links]
        for j, (pn, peer, pp) in enumerate(ups):
            frac = 1.0 / len(ups)
            if polarized and polarized[0] == ln:
                frac = polarized[2] if pn == polarized[1] else (1 - polarized[2]) / (len(ups) - 1)
            base = c.rng.randint(10 ** 15, 5 * 10 ** 15)
            o = int(tx * share * frac); i_ = int(rx * share * frac)
            s.ports[pn]["out_oct"] = Ctr(base, base + o); s.ports[pn]["in_oct"] = Ctr(base + 999, base + 999 + i_)
            sp = c.switches[peer].ports[pp]
            sp["in_oct"] = Ctr(base + 17, base + 17 + o); sp["out_oct"] = Ctr(base + 4242, base + 4242 + i_)


def nccl_init(c, hosts, hca_used=None, extra_env=(), version="2.21.5+cuda12.4", gdr=True, pid0=41250):
    lines = []
    h0 = hosts[0]
    lines.append("%s:%d:%d [0] NCCL INFO NCCL version %s" % (h0.name, pid0, pid0, version))
    for k, v in extra_env:
        lines.append("%s:%d:%d [0] NCCL INFO %s set by environment to %s." % (h0.name, pid0, pid0 + 31, k, v))
    for h in hosts[:4]:
        for g in range(2):
            nl = [n for n in h.nics if hca_used is None or n.ibdev in hca_used]
            tag = "IB" if nl and nl[0].ll == "InfiniBand" else "RoCE"
            use = " ".join("[%d]%s:1/%s" % (i, n.ibdev, tag) for i, n in enumerate(nl))
            lines.append("%s:%d:%d [%d] NCCL INFO NET/IB : Using %s [RO]; OOB bond0:10.%d.%d.%d<0>" % (
                h.name, pid0 + g, pid0 + 60 + g, g, use, 90, 43, 100 + hosts.index(h)))
    nr = c.job["ranks"]
    lines.append("%s:%d:%d [0] NCCL INFO Channel 00/16 :    0   1   2   3   4   5   6   7" % (h0.name, pid0, pid0 + 60))
    lines.append("%s:%d:%d [0] NCCL INFO Channel 01 : %d[18000] -> 0[18000] [receive] via NET/IB/0%s" % (h0.name, pid0, pid0 + 60, nr - 8, "/GDRDMA" if gdr else ""))
    lines.append("%s:%d:%d [0] NCCL INFO comm 0x55d1e2a0c7a0 rank 0 nranks %d cudaDev 0 nvmlDev 0 busId 18000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE" % (h0.name, pid0, pid0 + 60, nr))
    return lines


def train_log(c, head=(), extra=(), every=5, tput=True):
    """rank-0 training log printed from the steps model (mean duration of logged steps)."""
    rows = c.steps["rows"]
    by = {}
    for r in rows:
        by.setdefault((r[0], round(r[2] // 1)), []).append(r)
    steps = {}
    for r in rows:
        if r[1] == 0 or r[0] not in steps:
            steps[(r[0], int(r[2] // 60))] = r
    out = list(head)
    keys = sorted(steps, key=lambda k: steps[k][2])
    ev = sorted(extra)
    ei = 0
    for i, k in enumerate(keys):
        r = steps[k]
        while ei < len(ev) and ev[ei][0] <= r[2]:
            out.append(stamp(ev[ei][0]) + " " + ev[ei][1]); ei += 1
        if i % every == 0:
            toks = c.job["ranks"] * 4096 * 4 / r[3]
            out.append("%s INFO trainer: step %d | loss %.4f | grad_norm %.3f | step_time %.3fs%s" % (
                stamp(r[2]), r[0], r[-2 if not c.steps["checksum"] else -3], r[-1 if not c.steps["checksum"] else -2], r[3],
                " | tokens/s %.0f" % toks if tput else ""))
    while ei < len(ev):
        out.append(stamp(ev[ei][0]) + " " + ev[ei][1]); ei += 1
    return "\n".join(out) + "\n"


def stamp(t):
    return "[%s,%03d]" % (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(t))), int((t % 1) * 1000))


def swcap_decoy(c, host, gi, clock_drop=45):
    g = host.gpus[gi]
    g.clock = Gauge(g.maxclock - clock_drop); g.reasons = Gauge(0x4); g.power = Gauge(g.limit - 3.5, jitter=4)
    return g


def alert(name, labels, starts, summary, status="firing"):
    lab = {"alertname": name, "severity": "warning"}
    lab.update(labels)
    return {"status": status, "labels": lab, "annotations": {"summary": summary}, "startsAt": iso(starts),
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus.monitoring:9090/graph", "fingerprint": "%016x" % (0x3f9a2c11d0b7e4a5 ^ (len(name) << 40) ^ int(starts))}


def dot_names(n, start=1018, dom="dc3.internal"):
    return ["gpu%04d.%s" % (start + i, dom) for i in range(n)]


def ip_names(n, a=90, b=43, start=141):
    return ["10-%d-%d-%d" % (a, b, start + i) for i in range(n)]


def pod_names(n, rack=12, dom="pod2.example.net"):
    return ["h200-r%02d-n%02d.%s" % (rack + i // 16, i % 16 + 1, dom) for i in range(n)]


def plain_names(n, p="gpu-a", start=17):
    return ["%s%03d" % (p, start + i) for i in range(n)]


def xid(c, h, gi, t, code, msg, style_pid=True):
    g = h.gpus[gi]
    if not hasattr(g, "xids"):
        g.xids = []
    g.xids.append((t, code))
    tag = "PCI:0000:%02x:00" % g.bus
    if style_pid:
        c.dmesg(h, t, "NVRM: Xid (%s): %d, pid='<unknown>', name=<unknown>, %s" % (tag, code, msg))
    else:
        c.dmesg(h, t, "NVRM: Xid (%s): %d, %s" % (tag, code, msg))


def boot_noise(c, h):
    c.dmesg(h, h.boot + 2.1, "Linux version 5.15.0-122-generic (buildd@lcy02-amd64-034) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #132-Ubuntu SMP")
    c.dmesg(h, h.boot + 31.7, "nvidia-nvlink: Nvlink Core is being initialized, major device number 511")
    c.dmesg(h, h.boot + 33.2, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % h.driver)
    for n in h.nics:
        c.dmesg(h, h.boot + 41.0 + n.bus / 100.0, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (bdf_sys(n.bus), n.ibdev))


