"""Fleet model and source renderers for the keystone evaluation set.

One model per case (hosts, GPUs, NICs, switches, ports, ranks, a job); every source file is printed
from it, so the same fact read from two sources agrees. Standard library only; deterministic.
"""
import gzip
import io
import json
import os
import time as _time

# --------------------------------------------------------------------------------------------
# counters: piecewise-linear in time


class Ctr:
    """A counter: value at t = base + integral of the rate segments up to t."""

    def __init__(self, base=0, rate=0.0):
        self.base = base
        self.segs = [(-1e18, float(rate))]

    def at(self, t0, rate):
        self.segs.append((float(t0), float(rate)))
        self.segs.sort()
        return self

    def bump(self, t0, amount):
        # a step of `amount` at t0 (modelled as a 1 s burst)
        cur = self.rate_at(t0)
        self.segs = [s for s in self.segs if not (t0 <= s[0] < t0 + 1)]
        self.segs.append((float(t0), cur + amount))
        after = self.rate_at(t0 + 1.0)
        self.segs.append((float(t0) + 1.0, after))
        self.segs.sort()
        return self

    def rate_at(self, t):
        r = 0.0
        for s, v in self.segs:
            if s <= t:
                r = v
        return r

    def v(self, t, ref):
        """Value at t; `ref` is the time at which the value equals base."""
        tot = 0.0
        for i, (s, rate) in enumerate(self.segs):
            e = self.segs[i + 1][0] if i + 1 < len(self.segs) else 1e18
            lo, hi = max(s, ref), min(e, t)
            if hi > lo:
                tot += rate * (hi - lo)
        return int(self.base + tot)


# --------------------------------------------------------------------------------------------
# models

GPU_MODELS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", arch="Hopper", sm=1980, mem=2619, plim=700, gen=5, mib=81559,
                 slow=87, shut=92, tlimit=87),
    "H200": dict(name="NVIDIA H200", arch="Hopper", sm=1980, mem=3201, plim=700, gen=5, mib=143771,
                 slow=87, shut=92, tlimit=87),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", arch="Ampere", sm=1410, mem=1593, plim=400, gen=4, mib=81920,
                 slow=89, shut=92, tlimit=89),
    "B200": dict(name="NVIDIA B200", arch="Blackwell", sm=1965, mem=3996, plim=1000, gen=6, mib=183359,
                 slow=88, shut=93, tlimit=88),
}
GPU_BUSES = {
    8: [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB],
    4: [0x1B, 0x43, 0x9B, 0xC3],
}
NIC_BUSES = {
    8: [0x1A, 0x3C, 0x4D, 0x5E, 0x9C, 0xBC, 0xCC, 0xDC],
    4: [0x1D, 0x45, 0x9D, 0xC5],
    2: [0x1D, 0x9D],
}
SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0", 6: "64.0"}
SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32", 6: "64"}


class GPU:
    def __init__(self, host, index, bus, model, rng):
        self.host, self.index, self.bus = host, index, bus
        self.m = GPU_MODELS[model]
        self.model = model
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(48))
        self.serial = "%013d" % rng.randrange(10 ** 12, 10 ** 13)
        self.busy = True
        self.clk = self.m["sm"] - rng.choice([15, 30, 30, 45])  # SW power cap at the limit
        self.reasons = 0x4                                     # SW power cap (normal for busy GPUs)
        self.temp = rng.randint(52, 66)
        self.mtemp = self.temp + rng.randint(4, 9)
        self.power = self.m["plim"] - rng.randint(1, 9)
        self.plim = self.m["plim"]
        self.gen_cur = self.gen_max = self.m["gen"]
        self.w_cur = self.w_max = 16
        self.replay = Ctr(rng.choice([0, 0, 0, 1, 2]))
        self.sbe = Ctr(0)
        self.dbe = Ctr(0)
        self.sbe_agg_extra = rng.choice([0, 0, 0, 3, 11])
        self.remap = dict(corrected=0, uncorrected=0, pending=False, failure=False)
        self.nvl_links = 18 if model in ("H100", "H200", "B200") else 12
        self.nvl = {k: [Ctr(0) for _ in range(self.nvl_links)] for k in ("crc", "replay", "recovery")}
        self.xid_last = 0
        self.lost = False
        self.lost_at = None
        self.fault = None          # (onset, clk, reasons, temp, power)
        self.slow = []             # [(onset, compute factor)]
        self.aer_cor = 0
        self.events = []           # nvml events
        self.util_override = None

    @property
    def name(self):
        return "%s/gpu%d" % (self.host.name, self.index)

    def nvml_bus(self):
        return "00000000:%02X:00.0" % self.bus

    def sys_bus(self):
        return "0000:%02x:00.0" % self.bus

    def state(self, t):
        """(clk, reasons, temp, power W) at t."""
        if not self.busy:
            return (345, 0x1, self.temp - 22, 68 if self.model != "A100" else 52)
        if self.fault and t >= self.fault[0]:
            return tuple(self.fault[1:])
        return (self.clk, self.reasons, self.temp, self.power)

    def factor(self, t):
        f = 1.0
        for on, k in self.slow:
            if t >= on:
                f = k
        return f


class NIC:
    def __init__(self, host, idx, bus, link_layer, rng, netdev):
        self.host, self.idx, self.bus = host, idx, bus
        self.ibdev = "mlx5_%d" % idx
        self.netdev = netdev
        self.ll = link_layer
        self.switch = None
        self.port = None
        self.rate = 400
        self.rate_s = "400 Gb/sec (4X NDR)" if link_layer == "InfiniBand" else "400 Gb/sec (4X HDR)"
        self.gen_cur = self.gen_max = 5
        self.w_cur = self.w_max = 16
        self.used = True
        self.share = 1.0            # fraction of host's inter-node traffic (NCCL)
        self.c = {}                 # sysfs counters name -> Ctr
        self.hw = {}                # hw_counters
        self.eth = {}               # ethtool -S name -> Ctr
        self.fec = None             # dict: corrected Ctr, uncorrectable Ctr, lanes
        self.state = "4: ACTIVE"
        self.phys = "5: LinkUp"
        self.carrier = Ctr(2)
        self.fw = "28.39.2048"

    @property
    def name(self):
        return "%s/%s" % (self.host.name, self.ibdev)

    def sys_bus(self):
        return "0000:%02x:00.0" % self.bus


class Host:
    def __init__(self, name, rack):
        self.name, self.rack = name, rack
        self.gpus, self.nics = [], []
        self.node_data = True
        self.load = 18.0
        self.psi_cpu = (0.5, 0.8, 0.7)
        self.psi_cpu_total = Ctr(10 ** 9, 2000)
        self.psi_mem = (0.0, 0.0, 0.0)
        self.psi_mem_full = (0.0, 0.0, 0.0)
        self.psi_io = (0.1, 0.2, 0.2)
        self.contention = None      # (onset, load, psi, procname)
        self.top_extra = []
        self.dmesg = []             # (t_wall, text)
        self.sel = []               # (t, sensor, event, state)
        self.fans = None            # list of (name, rpm, status)
        self.boot = 0
        self.instance = None
        self.extra_cmd = {}


class Port:
    def __init__(self, switch, name):
        self.switch, self.name = switch, name
        self.peer = None            # ("host", NIC) or ("switch", Port)
        self.rx_pfc = [Ctr(0) for _ in range(8)]
        self.tx_pfc = [Ctr(0) for _ in range(8)]
        self.in_oct = Ctr(0)
        self.out_oct = Ctr(0)
        self.discards = Ctr(0)
        self.rx_err = Ctr(0)
        self.rx_ok = Ctr(0)
        self.tx_ok = Ctr(0)
        self.wd = None              # (status, detected, restored, txdrop)
        self.oper = "U"
        self.speed = 400


class Switch:
    def __init__(self, name, tier, sonic=True):
        self.name, self.tier, self.sonic = name, tier, sonic
        self.ports = {}
        self.links = []

    def port(self, pname):
        if pname not in self.ports:
            self.ports[pname] = Port(self, pname)
        return self.ports[pname]


# --------------------------------------------------------------------------------------------
# output helpers


class Out:
    """Collects files in memory, then writes them sorted (byte-identical runs)."""

    def __init__(self, root):
        self.root = root
        self.files = {}

    def put(self, rel, data, gz=False):
        if isinstance(data, str):
            data = data.encode()
        if gz:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as f:
                f.write(data)
            data = buf.getvalue()
            rel += ".gz"
        self.files[rel] = data

    def json(self, rel, obj):
        self.put(rel, json.dumps(obj, indent=2, sort_keys=False) + "\n")

    def write(self):
        for rel in sorted(self.files):
            p = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(self.files[rel])


def iso(t):
    return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(t))


def ctime(t):
    # dmesg -T style: "Sat Dec  5 02:18:11 2026"
    g = _time.gmtime(t)
    return _time.strftime("%a %b ", g) + ("%2d" % g.tm_mday) + _time.strftime(" %H:%M:%S %Y", g)


def jtime(t):
    g = _time.gmtime(t)
    return _time.strftime("%b %d %H:%M:%S", g)


def comma(n):
    return "{:,}".format(int(n))


# --------------------------------------------------------------------------------------------
# the case: model + simulation + every source


class Case:
    def __init__(self, cid, rng, start, minutes=90):
        self.id = cid
        self.rng = rng
        self.S = start
        self.E = start + minutes * 60
        self.before = self.S
        self.now = self.E - 60
        self.ref = self.S - 7200           # counters equal their base here
        self.hosts, self.switches = [], {}
        self.ranks = []                     # (rank, host, gpu)
        self.write_ranks = True
        self.title = ""
        self.reported = ""
        self.alerts = []
        self.job = dict(name="llm-pretrain", c0=6.0, m0=1.6, log_every=10, compute=True, checksum=False,
                        loss0=2.31, start=self.S - 2400, gpn=8)
        self.comm = []                      # (onset, factor) job-wide collective slowdown
        self.wait = []                      # (onset, seconds) input wait before compute, all ranks
        self.restarts = []                  # (t_stop, t_resume, resume_step)
        self.sdc = None                     # (rank, onset_step)
        self.crash = None                   # (t, rank) job stops logging at t (hang/crash)
        self.opts = dict(hostname_label="Hostname", old_driver=False, driver="550.90.07", cuda="12.4",
                         dmesg="plain", gz=set(), missing=set(), truncated=set(), garbage=set(),
                         scrape=120, dcgm_extra=True, ecc_metrics=False, nvlink_metrics=False,
                         node_instance_port=True, nccl_log=True, metrics_hosts=None, nccl_version="2.21.5",
                         torch_style="new", fec=False, lspci=True, snapshots=True, sys_old_speed=False)
        self.truth = None
        self.logs_extra = []                # (t, line) train log lines
        self.nccl_env = []
        self.nccl_using = None
        self.skip_metrics = set()
        self.gpu_metric_stop = {}           # gpu -> t (series stop)

    # ---- building -------------------------------------------------------------------------
    def add_host(self, name, rack, model="H100", ngpu=8, nnic=8, ll="InfiniBand", netdev=None, busy=True):
        h = Host(name, rack)
        h.boot = self.S - self.rng.randint(9, 40) * 86400 - self.rng.randint(0, 80000)
        for i in range(ngpu):
            g = GPU(h, i, GPU_BUSES[ngpu][i], model, self.rng)
            g.busy = busy
            h.gpus.append(g)
        for j in range(nnic):
            nd = netdev(j, NIC_BUSES[nnic][j]) if netdev else "ibp%ds0" % NIC_BUSES[nnic][j]
            n = NIC(h, j, NIC_BUSES[nnic][j], ll, self.rng, nd)
            if ll == "Ethernet":
                n.rate_s = "400 Gb/sec (4X NDR)" if False else "400 Gb/sec (4X HDR)"
            n.used = busy
            n.share = 1.0 / nnic
            h.nics.append(n)
        self.hosts.append(h)
        return h

    def add_switch(self, name, tier, sonic=True):
        s = Switch(name, tier, sonic)
        self.switches[name] = s
        return s

    def cable(self, nic, sw, pname):
        p = sw.port(pname)
        p.peer = ("host", nic)
        nic.switch, nic.port = sw.name, pname
        return p

    def uplink(self, a, ap, b, bp):
        pa, pb = a.port(ap), b.port(bp)
        pa.peer, pb.peer = ("switch", pb), ("switch", pa)
        a.links.append(dict(port=ap, peer=b.name, peer_port=bp))
        b.links.append(dict(port=bp, peer=a.name, peer_port=ap))
        return pa, pb

    def place(self, hosts, order=None):
        r = 0
        for h in hosts:
            for g in (order or range(len(h.gpus))):
                self.ranks.append((r, h, h.gpus[g]))
                r += 1

    def job_hosts(self):
        seen = []
        for _, h, _ in self.ranks:
            if h not in seen:
                seen.append(h)
        return seen

    # ---- step simulation --------------------------------------------------------------------
    def _piece(self, lst, t, default):
        v = default
        for on, k in sorted(lst, key=lambda x: x[0]):
            if t >= on:
                v = k
        return v

    def simulate(self):
        j, rng = self.job, self.rng
        self.rows = []
        self.durs = []            # (t, duration)
        t = float(j["start"])
        step = 1
        restarts = sorted(self.restarts)
        ri = 0
        nr = len(self.ranks)
        jit = [rng.uniform(-0.012, 0.012) for _ in range(nr)]
        loss = j["loss0"]
        cks = {}
        while t < self.now:
            if ri < len(restarts) and t >= restarts[ri][0]:
                t = float(restarts[ri][1])
                step = restarts[ri][2] if restarts[ri][2] is not None else max(1, step - 37 - step % 10)
                ri += 1
                continue
            if self.crash and t >= self.crash[0]:
                break
            wait = self._piece(self.wait, t, 0.0)
            comp = []
            for idx, (r, h, g) in enumerate(self.ranks):
                hf = 1.0
                if h.contention and t >= h.contention[0]:
                    hf = h.contention[4]
                c = j["c0"] * g.factor(t) * hf * (1 + jit[idx] * 0.5 + rng.uniform(-0.006, 0.006))
                comp.append(c)
            comm = j["m0"] * self._piece(self.comm, t, 1.0) * (1 + rng.uniform(-0.01, 0.01))
            dur = wait + max(comp) + comm
            self.durs.append((t, dur))
            if step % j["log_every"] == 0 or step == 1:
                loss = j["loss0"] * (1.0 - 0.08 * (1 - 2.718 ** (-(t - j["start"]) / 20000.0))) + rng.uniform(-0.02, 0.02)
                gn = 0.9 + rng.uniform(-0.15, 0.15)
                base_ck = "%08x" % rng.getrandbits(32)
                for idx, (r, h, g) in enumerate(self.ranks):
                    d = dur + rng.uniform(-0.003, 0.003)
                    row = [step, r, "%.3f" % (t + rng.uniform(0, 0.004)), "%.3f" % d]
                    if j["compute"]:
                        row.append("%.3f" % comp[idx])
                    row.append("%.4f" % loss)
                    row.append("%.3f" % gn)
                    if j["checksum"]:
                        ck = base_ck
                        if self.sdc and r == self.sdc[0] and step >= self.sdc[1]:
                            ck = "%08x" % (int(base_ck, 16) ^ 0x5a3c91 ^ (step * 2654435761 & 0xffffffff))
                        row.append(ck)
                    self.rows.append(row)
            t += dur
            step += 1
        self.last_step = step

    def mean_dur(self, a, b):
        xs = [d for (t, d) in self.durs if a <= t < b]
        if not xs:
            return None
        return sum(xs) / len(xs)

    def change_points(self):
        pts = set([self.job["start"]])
        for on, _ in self.comm + self.wait:
            pts.add(on)
        for _, h, g in self.ranks:
            for on, _ in g.slow:
                pts.add(on)
        for h in self.hosts:
            if h.contention:
                pts.add(h.contention[0])
        for a, b, _ in self.restarts:
            pts.add(a)
            pts.add(b)
        if self.crash:
            pts.add(self.crash[0])
        return sorted(pts)

    def traffic(self, vol=2.4e10):
        """Set NIC data counters (and their switch ports' octets) from the simulated steps."""
        pts = self.change_points() + [self.now + 3600]
        segs = []
        for i in range(len(pts) - 1):
            md = self.mean_dur(pts[i], pts[i + 1])
            segs.append((pts[i], (vol / md) if md else 0.0))
        jh = set(self.job_hosts())
        for h in self.hosts:
            for n in h.nics:
                base_rx = self.rng.randrange(10 ** 13, 9 * 10 ** 13)
                base_tx = base_rx + self.rng.randrange(-10 ** 12, 10 ** 12)
                rx, tx = Ctr(base_rx // 4, 2e3), Ctr(base_tx // 4, 2e3)
                if h in jh and n.used:
                    for on, bps in segs:
                        r = bps * n.share * len(h.nics) / 4.0
                        rx.at(on, r * (1 + self.rng.uniform(-0.01, 0.01)))
                        tx.at(on, r * (1 + self.rng.uniform(-0.01, 0.01)))
                n.c.setdefault("port_rcv_data", rx)
                n.c.setdefault("port_xmit_data", tx)
                sw = self.switches.get(n.switch)
                if sw:
                    p = sw.port(n.port)
                    p.in_oct = _scaled(n.c["port_xmit_data"], 4)
                    p.out_oct = _scaled(n.c["port_rcv_data"], 4)

    def defaults(self):
        for h in self.hosts:
            for n in h.nics:
                c = n.c
                for k, b in (("symbol_error", 0), ("port_rcv_errors", 0), ("link_downed", 0)):
                    c.setdefault(k, Ctr(b))
                c.setdefault("port_xmit_wait", Ctr(self.rng.randrange(10 ** 8, 4 * 10 ** 9), 3e4 if n.used else 0))
                for k in ("out_of_sequence", "local_ack_timeout_err"):
                    n.hw.setdefault(k, Ctr(self.rng.choice([0, 0, 1, 3])))
                if n.ll == "Ethernet":
                    n.hw.setdefault("np_cnp_sent", Ctr(self.rng.randrange(10 ** 5, 10 ** 6), 40 if n.used else 0))
                    n.hw.setdefault("rp_cnp_handled", Ctr(self.rng.randrange(10 ** 5, 10 ** 6), 40 if n.used else 0))
                    n.hw.setdefault("np_ecn_marked_roce_packets", Ctr(self.rng.randrange(10 ** 5, 10 ** 6), 45 if n.used else 0))
                    e = n.eth
                    for k in ("rx_prio3_pause", "tx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause_duration",
                              "tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_discards_phy",
                              "rx_out_of_buffer", "link_down_events_phy", "rx_symbol_err_phy", "rx_crc_errors_phy",
                              "outbound_pci_stalled_wr", "outbound_pci_stalled_rd", "rx_prio3_discards"):
                        e.setdefault(k, Ctr(0))
                    # background: a few pauses now and then on a busy RoCE fabric (normal)
                    if n.used and e["rx_prio3_pause"].segs == [(-1e18, 0.0)]:
                        e["rx_prio3_pause"] = Ctr(self.rng.randrange(100, 900), 0.02)
                        e["rx_prio3_pause_duration"] = Ctr(0, 0.0)
                sw = self.switches.get(n.switch)
                if sw and n.ll == "Ethernet":
                    p = sw.port(n.port)
                    # the NIC's transmitted pauses are the switch port's received pauses, and back
                    p.rx_pfc[3] = n.eth["tx_prio3_pause"]
                    p.tx_pfc[3] = n.eth["rx_prio3_pause"]
        if self.opts["fec"]:
            for h in self.hosts:
                for n in h.nics:
                    if n.fec is None and n.ll == "Ethernet":
                        n.fec = dict(mode="RS", corr=[Ctr(self.rng.randrange(10 ** 4, 10 ** 6), 3.0) for _ in range(4)],
                                     unc=[Ctr(0) for _ in range(4)])


def _scaled(ctr, k):
    c = Ctr(ctr.base * k)
    c.segs = [(s, r * k) for s, r in ctr.segs]
    return c


# --------------------------------------------------------------------------------------------
# renderers


def render(case, out):
    o = case.opts
    b = "bundle/"

    def put(rel, text):
        if rel in o["missing"]:
            return
        if rel in o["truncated"]:
            text = text[: int(len(text) * 0.55)]
            text = text[: text.rfind("\n") + 1] + text[text.rfind("\n") + 1:][:17]
        if rel in o["garbage"]:
            rr = case.rng
            text = bytes(rr.getrandbits(8) for _ in range(3000))
            out.put(b + rel + ".gz", b"\x1f\x8b\x08\x00" + text)
            return
        out.put(b + rel, text, gz=(rel in o["gz"]))

    inc = {"schema": "forensic.bundle/v1", "id": case.id, "title": case.title,
           "window": {"start": iso(case.S), "end": iso(case.E)},
           "job": {"name": case.job["name"], "ranks": len(case.ranks), "gpus_per_node": case.job["gpn"]},
           "reported": case.reported}
    if case.alerts:
        inc["alerts"] = case.alerts
    out.json(b + "incident.json", inc)
    if "topology.json" not in o["missing"]:
        put("topology.json", json.dumps(topology(case), indent=1) + "\n")
    put("job/steps.csv", steps_csv(case))
    for name, text in logs(case).items():
        put("job/logs/" + name, text)
    put("metrics/dcgm.om", dcgm_om(case))
    put("metrics/node.om", node_om(case))
    sw = snmp_om(case) if o.get("snmp", True) else None
    if sw:
        put("metrics/switch.om", sw)
    for h in case.hosts:
        if not h.node_data:
            continue
        for rel, text in node_files(case, h).items():
            put("nodes/%s/%s" % (h.name, rel), text)
    for s in case.switches.values():
        if not s.sonic:
            continue
        for rel, text in switch_files(case, s).items():
            put("switches/%s/cmd/%s" % (s.name, rel), text)
    out.json("truth.json", case.truth)


def topology(case):
    hosts = []
    for h in case.hosts:
        hosts.append({"name": h.name, "rack": h.rack,
                      "gpus": [{"index": g.index, "pci_bus_id": g.nvml_bus(), "uuid": g.uuid} for g in h.gpus],
                      "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.sys_bus(), "port": 1,
                                "link_layer": n.ll, "switch": n.switch, "switch_port": n.port} for n in h.nics]})
    topo = {"hosts": hosts}
    if case.write_ranks:
        topo["ranks"] = [{"rank": r, "host": h.name, "gpu": g.index} for r, h, g in case.ranks]
    topo["switches"] = [{"name": s.name, "tier": s.tier, "links": s.links} for s in case.switches.values()]
    return topo


def steps_csv(case):
    j = case.job
    cols = ["step", "rank", "start_unix", "duration_s"] + (["compute_s"] if j["compute"] else []) + ["loss", "grad_norm"]
    if j["checksum"]:
        cols.append("param_checksum")
    lines = [",".join(cols)]
    rows = list(case.rows)
    if j.get("shuffle"):
        case.rng.shuffle(rows)
    for r in rows:
        lines.append(",".join(str(x) for x in r))
    return "\n".join(lines) + "\n"


def _glog(t):
    g = _time.gmtime(t)
    return "%s %s.%09d" % (_time.strftime("%m%d", g), _time.strftime("%H:%M:%S", g), int((t % 1) * 1e9))


def watchdog(t, rank, seq, op="ALLREDUCE", numel=262144):
    return ("[rank%d]:[E%s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for %d milliseconds before timing out.") % (
        rank, _glog(t), rank, seq, op, numel, numel, 600000 + int(t * 1000) % 97)


def logs(case):
    j = case.job
    h0 = case.ranks[0][1].name if case.ranks else "node"
    L = []
    t0 = j["start"] - 95
    pid = 4000 + case.rng.randrange(1, 90000)
    if case.opts["nccl_log"]:
        L.append((t0, "NCCL version %s+cuda%s" % (case.opts["nccl_version"], case.opts["cuda"])))
        for e in case.nccl_env:
            L.append((t0 + 1, "%s:%d:%d [0] NCCL INFO %s set by environment to %s." % (h0, pid, pid + 40, e[0], e[1])))
        h = case.ranks[0][1]
        using = case.nccl_using
        if using is None:
            tag = "IB" if h.nics[0].ll == "InfiniBand" else "RoCE"
            using = " ".join("[%d]%s:1/%s" % (i, n.ibdev, tag) for i, n in enumerate(h.nics))
        L.append((t0 + 1, "%s:%d:%d [0] NCCL INFO NET/IB : Using %s [RO]; OOB eth0:10.%d.%d.%d<0>" % (
            h0, pid, pid + 40, using, 20 + case.rng.randrange(50), case.rng.randrange(250), case.rng.randrange(250))))
        L.append((t0 + 3, "%s:%d:%d [0] NCCL INFO comm 0x55%010x rank 0 nranks %d cudaDev 0 nvmlDev 0 busId %02x000 commId 0x%016x - Init COMPLETE" % (
            h0, pid, pid + 40, case.rng.getrandbits(40), len(case.ranks), case.ranks[0][2].bus, case.rng.getrandbits(64))))
    tokens = j.get("tokens", 4 * 1024 * 1024)
    for (t, d) in case.durs[:: max(1, j["log_every"])]:
        pass
    k = 0
    for i, (t, d) in enumerate(case.durs):
        if i % j["log_every"] == 0:
            mfu = j.get("mfu0", 0.48) * (j["c0"] + j["m0"]) / d
            extra = ""
            if j.get("data_log"):
                w = case._piece(case.wait, t, 0.0)
                extra = " | data_time %.2fs" % (0.04 + w + case.rng.uniform(0, 0.02))
            L.append((t + d, "[rank0] iter %7d | step_time %.2fs | tokens/s %d | mfu %.1f%%%s" % (
                i + j.get("step_offset", 0) + 1, d, int(tokens / d), 100 * mfu, extra)))
            k += 1
    L.extend(case.logs_extra)
    L.sort(key=lambda x: x[0])
    text = []
    for t, line in L:
        if line.startswith("[rank") and ":[E" in line or line.startswith("[rank") and ":[W" in line:
            text.append(line)
        else:
            text.append("%s %s" % (_time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(t)), line))
    return {"train.log": "\n".join(text) + "\n"}


def _samples(case):
    st = case.opts["scrape"]
    t = case.S - 1200
    ts = []
    while t <= case.now:
        ts.append(t)
        t += st
    if ts[-1] != case.now:
        ts.append(case.now)
    return ts


def _metric_hosts(case):
    mh = case.opts["metrics_hosts"]
    return [h for h in case.hosts if (mh is None or h.name in mh)]


def dcgm_om(case):
    o = case.opts
    ts = _samples(case)
    hl = o["hostname_label"]
    fam = []
    thr = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" if o["old_driver"] else "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    big = len(case.hosts) > 100
    fams = [("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
            ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
            ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
            ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
            ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
            ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
            ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
            (thr, "gauge", "Current clock event reasons (bitmask)."),
            ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns)."),
            ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns).")]
    if big:
        fams = [f for f in fams if f[0] in ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS")]
    if o["ecc_metrics"]:
        fams += [("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
                 ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
                 ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
                 ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors")]
    if o["nvlink_metrics"]:
        fams += [("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
                 ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.")]
    busy_frac = {}
    for name, typ, help_ in fams:
        out = ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, typ)]
        for h in _metric_hosts(case):
            for g in h.gpus:
                lab = '%s{gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s",DCGM_FI_DRIVER_VERSION="%s"}' % (
                    name, g.index, g.uuid, g.nvml_bus(), g.index, g.m["name"], hl, h.name, o["driver"])
                stop = case.gpu_metric_stop.get(g)
                for t in ts:
                    if stop is not None and t >= stop:
                        break
                    v = gpu_metric(case, g, name, t)
                    out.append("%s %s %d" % (lab, v, t))
        fam.append("\n".join(out))
    return "\n".join(fam) + "\n# EOF\n"


def gpu_util(case, g, t):
    if not g.busy:
        return 0.0
    if case.crash and t >= case.crash[0]:
        return 1.0 if case.crash[1] == "hang" else 0.0
    for a, b_, _ in case.restarts:
        if a <= t < b_:
            return 0.0
    w = case._piece(case.wait, t, 0.0)
    j = case.job
    # a synchronous job: the GPU works its own compute share of the slowest step
    c = j["c0"] * g.factor(t)
    hf = g.host.contention[4] if (g.host.contention and t >= g.host.contention[0]) else 1.0
    c *= hf
    import bisect
    if not hasattr(case, "_dt"):
        case._dt = [x[0] for x in case.durs]
    i = bisect.bisect_right(case._dt, t) - 1
    if i < 0:
        return 0.0
    d = case.durs[i][1]
    return min(1.0, (c + j["m0"] * 0.5) / d)


def gpu_metric(case, g, name, t):
    clk, rs, temp, pw = g.state(t)
    lost = g.lost and t >= g.lost_at
    if name == "DCGM_FI_DEV_SM_CLOCK":
        return "%d" % clk
    if name == "DCGM_FI_DEV_GPU_TEMP":
        return "%d" % temp
    if name == "DCGM_FI_DEV_POWER_USAGE":
        u = gpu_util(case, g, t)
        p = pw if u > 0.9 else (pw * (0.35 + 0.6 * u) if g.busy else pw)
        return "%.3f" % (p + ((t * 7919) % 13) / 10.0 - 0.6)
    if name == "DCGM_FI_DEV_GPU_UTIL":
        u = gpu_util(case, g, t)
        return "%d" % round(100 * (1.0 if (u > 0.6 and g.busy) else u) if g.busy else 0)
    if name == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
        return "%.6f" % (0.62 * gpu_util(case, g, t))
    if name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
        return "%d" % g.replay.v(t, case.ref)
    if name == "DCGM_FI_DEV_XID_ERRORS":
        v = 0
        for ev in g.events:
            if ev[0] <= t:
                v = ev[1]
        if not g.events:
            v = g.xid_last
        return "%d" % v
    if name.endswith("REASONS"):
        return "%d" % rs
    if name == "DCGM_FI_DEV_POWER_VIOLATION":
        return "%d" % g.__dict__.setdefault("_pv", Ctr(g.index * 10 ** 9 + 3 * 10 ** 11, 0.6e9 if g.busy else 0)).v(t, case.ref)
    if name == "DCGM_FI_DEV_THERMAL_VIOLATION":
        tv = g.__dict__.get("_tv") or Ctr(0)
        return "%d" % tv.v(t, case.ref)
    if name == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
        return "%d" % g.sbe.v(t, case.ref)
    if name == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
        return "%d" % g.dbe.v(t, case.ref)
    if name == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":
        return "%d" % g.remap["corrected"]
    if name == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS":
        return "%d" % (g.remap["uncorrected"] if (not g.__dict__.get("_remap_t") or t >= g._remap_t) else 0)
    if name == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
        return "%d" % sum(c.v(t, case.ref) for c in g.nvl["crc"])
    if name == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":
        return "%d" % sum(c.v(t, case.ref) for c in g.nvl["replay"])
    raise KeyError(name)


def node_om(case):
    o = case.opts
    ts = _samples(case)
    fams = [("node_infiniband_port_data_received_bytes_total", "counter", "Number of data octets received on all links", "port_rcv_data", 4),
            ("node_infiniband_port_data_transmitted_bytes_total", "counter", "Number of data octets transmitted on all links", "port_xmit_data", 4),
            ("node_infiniband_port_errors_received_total", "counter", "Number of packets containing an error that were received on this port", "port_rcv_errors", 1),
            ("node_infiniband_link_downed_total", "counter", "Number of times the link failed to recover from an error state and went down", "link_downed", 1),
            ("node_infiniband_port_transmit_wait_total", "counter", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick", "port_xmit_wait", 1)]
    big = len(case.hosts) > 100
    res = []
    for name, typ, help_, key, k in fams:
        if big and key not in ("port_rcv_data", "port_xmit_data"):
            continue
        out = ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, typ)]
        for h in _metric_hosts(case):
            inst = h.instance or h.name
            if o["node_instance_port"]:
                inst += ":9100"
            for n in h.nics:
                c = n.c[key]
                for t in ts:
                    out.append('%s{device="%s",instance="%s",port="1"} %d %d' % (name, n.ibdev, inst, c.v(t, case.ref) * k, t))
        res.append("\n".join(out))
    for name, typ, help_ in (("node_load1", "gauge", "1m load average."),
                             ("node_pressure_cpu_waiting_seconds_total", "counter", "Total time in seconds that processes have waited for CPU time")):
        if big:
            continue
        out = ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, typ)]
        for h in _metric_hosts(case):
            inst = (h.instance or h.name) + (":9100" if o["node_instance_port"] else "")
            for t in ts:
                cont = h.contention and t >= h.contention[0]
                if name == "node_load1":
                    v = "%.2f" % ((h.contention[1] if cont else h.load) + ((t // 60) % 5) * 0.37)
                else:
                    c = h.__dict__.get("_psi_c")
                    if c is None:
                        c = Ctr(h.psi_cpu_total.base / 1e6, 0.004)
                        if h.contention:
                            c.at(h.contention[0], h.contention[2] / 100.0)
                        h._psi_c = c
                    v = "%.3f" % (c.base + sum(r * max(0, min(t, (c.segs[i + 1][0] if i + 1 < len(c.segs) else 1e18)) - max(s, case.ref)) for i, (s, r) in enumerate(c.segs)))
                out.append('%s{instance="%s"} %s %d' % (name, inst, v, t))
        res.append("\n".join(out))
    return "\n".join(res) + "\n# EOF\n"


def snmp_om(case):
    ts = _samples(case)
    sws = [s for s in case.switches.values()]
    if not sws:
        return None
    res = []
    for name, attr, help_ in (("ifHCInOctets", "in_oct", "The total number of octets received on the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.6"),
                              ("ifHCOutOctets", "out_oct", "The total number of octets transmitted out of the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.10"),
                              ("ifOutDiscards", "discards", "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted - 1.3.6.1.2.1.2.2.1.19")):
        out = ["# HELP %s %s" % (name, help_), "# TYPE %s counter" % name]
        for s in sws:
            for pn in sorted(s.ports, key=_portkey):
                p = s.ports[pn]
                c = getattr(p, attr)
                for t in ts:
                    out.append('%s{ifName="%s",instance="%s"} %d %d' % (name, pn, s.name, c.v(t, case.ref), t))
        res.append("\n".join(out))
    return "\n".join(res) + "\n# EOF\n"


def _portkey(p):
    import re
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p)]


# --------------------------------------------------------------------------------------------
# node files


def node_files(case, h):
    o = case.opts
    F = {}
    F["collected.json"] = json.dumps({"before": case.before, "now": case.now, "boot": h.boot}) + "\n"
    snaps = [("", case.now)] + ([("before/", case.before)] if o["snapshots"] else [])
    for pre, t in snaps:
        for rel, text in sysfs(case, h, t).items():
            if pre and "counters/" not in rel and "carrier_changes" not in rel:
                continue
            F[pre + "sys/" + rel] = text
        for n in h.nics:
            if n.ll == "Ethernet":
                F[pre + "cmd/ethtool-S-%s.txt" % n.netdev] = ethtool_s(case, n, t)
                if n.fec:
                    F[pre + "cmd/ethtool-I-show-fec-%s.txt" % n.netdev] = ethtool_fec(case, n, t)
        if any(any(c.segs != [(-1e18, 0.0)] or c.base for c in g.nvl["crc"]) for g in h.gpus) or h.__dict__.get("nvlink_cmd"):
            F[pre + "cmd/nvidia-smi-nvlink-e.txt"] = nvlink_e(case, h, t)
    F["cmd/nvidia-smi-q.txt"] = smi_q(case, h, case.now)
    if o["lspci"]:
        F["cmd/lspci-vv.txt"] = lspci(case, h)
    F["cmd/dmesg.txt"] = dmesg(case, h)
    F["cmd/ibstat.txt"] = ibstat(case, h)
    F["cmd/top.txt"] = top(case, h)
    F["cmd/pressure-cpu.txt"] = psi(case, h, "cpu")
    F["cmd/pressure-memory.txt"] = psi(case, h, "memory")
    F["cmd/pressure-io.txt"] = psi(case, h, "io")
    if h.sel:
        F["cmd/ipmitool-sel-elist.txt"] = "".join(
            "%4x | %s | %s | %s | %s | %s\n" % (i + 1, _time.strftime("%m/%d/%Y", _time.gmtime(t)),
                                              _time.strftime("%H:%M:%S", _time.gmtime(t)), s, e, st)
            for i, (t, s, e, st) in enumerate(sorted(h.sel)))
    if h.fans:
        F["cmd/ipmitool-sdr-type-fan.txt"] = "".join(
            "%-16s | %02Xh | %-3s | 29.%d | %s\n" % (nm, 0x30 + i, "ok" if st == "ok" else "cr", i + 1,
                                                   ("%d RPM" % rpm) if rpm else "No Reading")
            for i, (nm, rpm, st) in enumerate(h.fans))
    F["nvml.json"] = json.dumps(nvml(case, h), indent=1) + "\n"
    for k, v in h.extra_cmd.items():
        F["cmd/" + k] = v
    return F


def sysfs(case, h, t):
    o = case.opts
    F = {}
    sp = SPEED_OLD if o["sys_old_speed"] else SPEED
    suf = " GT/s" if o["sys_old_speed"] else " GT/s PCIe"
    for g in h.gpus:
        d = "bus/pci/devices/%s/" % g.sys_bus()
        lost = g.lost and t >= g.lost_at
        gen = g.gen_cur if g.busy else 1
        if lost:
            F[d + "current_link_speed"] = "Unknown\n"
            F[d + "current_link_width"] = "63\n"
            F[d + "max_link_speed"] = "Unknown\n"
            F[d + "max_link_width"] = "63\n"
        else:
            F[d + "current_link_speed"] = sp[gen] + suf + "\n"
            F[d + "current_link_width"] = "%d\n" % g.w_cur
            F[d + "max_link_speed"] = sp[g.gen_max] + suf + "\n"
            F[d + "max_link_width"] = "%d\n" % g.w_max
        F[d + "aer_dev_correctable"] = ("Receiver Error %d\nBad TLP 0\nBad DLLP %d\nRELAY_NUM Rollover 0\nReplay Timer Timeout 0\n"
                                        "Advisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n") % (
            g.aer_cor - g.aer_cor // 3, g.aer_cor // 3, g.aer_cor)
    for n in h.nics:
        d = "bus/pci/devices/%s/" % n.sys_bus()
        F[d + "current_link_speed"] = sp[n.gen_cur] + suf + "\n"
        F[d + "current_link_width"] = "%d\n" % n.w_cur
        F[d + "max_link_speed"] = sp[n.gen_max] + suf + "\n"
        F[d + "max_link_width"] = "%d\n" % n.w_max
        p = "class/infiniband/%s/ports/1/" % n.ibdev
        F[p + "state"] = n.state + "\n"
        F[p + "phys_state"] = n.phys + "\n"
        F[p + "rate"] = n.rate_s + "\n"
        F[p + "link_layer"] = n.ll + "\n"
        for k, c in sorted(n.c.items()):
            F[p + "counters/" + k] = "%d\n" % c.v(t, case.ref)
        for k, c in sorted(n.hw.items()):
            F[p + "hw_counters/" + k] = "%d\n" % c.v(t, case.ref)
        F["class/net/%s/operstate" % n.netdev] = ("up" if n.state.startswith("4") else "down") + "\n"
        F["class/net/%s/carrier_changes" % n.netdev] = "%d\n" % n.carrier.v(t, case.ref)
    return F


ETH_ORDER = ["rx_packets_phy", "tx_packets_phy", "rx_bytes_phy", "tx_bytes_phy", "rx_crc_errors_phy", "rx_symbol_err_phy",
             "rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer", "link_down_events_phy",
             "rx_prio3_bytes", "rx_prio3_packets", "tx_prio3_bytes", "tx_prio3_packets",
             "rx_prio3_pause", "rx_prio3_pause_duration", "rx_prio3_pause_transition", "tx_prio3_pause",
             "tx_prio3_pause_duration", "rx_prio3_discards", "tx_pause_storm_warning_events", "tx_pause_storm_error_events",
             "outbound_pci_stalled_rd", "outbound_pci_stalled_wr", "rx_pci_signal_integrity", "tx_pci_signal_integrity"]


def ethtool_s(case, n, t):
    e = n.eth
    rx = n.c["port_rcv_data"].v(t, case.ref) * 4
    tx = n.c["port_xmit_data"].v(t, case.ref) * 4
    vals = {"rx_bytes_phy": rx + rx // 40, "tx_bytes_phy": tx + tx // 40, "rx_packets_phy": rx // 4096, "tx_packets_phy": tx // 4096,
            "rx_prio3_bytes": rx, "tx_prio3_bytes": tx, "rx_prio3_packets": rx // 4150, "tx_prio3_packets": tx // 4150,
            "tx_discards_phy": 0, "rx_prio3_pause_transition": e["rx_prio3_pause"].v(t, case.ref) // 2,
            "rx_pci_signal_integrity": 0, "tx_pci_signal_integrity": 0}
    for k, c in e.items():
        vals[k] = c.v(t, case.ref)
    lines = ["NIC statistics:"]
    for k in ETH_ORDER:
        lines.append("     %s: %d" % (k, vals.get(k, 0)))
    return "\n".join(lines) + "\n"


def ethtool_fec(case, n, t):
    f = n.fec
    cs = [c.v(t, case.ref) for c in f["corr"]]
    us = [c.v(t, case.ref) for c in f["unc"]]
    return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\n"
            "Statistics:\n  corrected_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n"
            "  uncorrectable_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n") % (
        n.netdev, sum(cs), cs[0], cs[1], cs[2], cs[3], sum(us), us[0], us[1], us[2], us[3])


def nvlink_e(case, h, t):
    L = []
    for g in h.gpus:
        L.append("GPU %d: %s (UUID: %s)" % (g.index, g.m["name"], g.uuid))
        for k in range(g.nvl_links):
            L.append("\t Link %d: Replay Errors: %d" % (k, g.nvl["replay"][k].v(t, case.ref)))
            L.append("\t Link %d: Recovery Errors: %d" % (k, g.nvl["recovery"][k].v(t, case.ref)))
            L.append("\t Link %d: CRC Errors: %d" % (k, g.nvl["crc"][k].v(t, case.ref)))
    return "\n".join(L) + "\n"


def _act(b):
    return "Active" if b else "Not Active"


def smi_q(case, h, t):
    o = case.opts
    old = o["old_driver"]
    L = ["", "==============NVSMI LOG==============", "",
         "Timestamp                                 : %s" % _time.strftime("%a %b %d %H:%M:%S %Y", _time.gmtime(t)),
         "Driver Version                            : %s" % o["driver"],
         "CUDA Version                              : %s" % o["cuda"], "",
         "Attached GPUs                             : %d" % len(h.gpus)]
    for g in h.gpus:
        if g.lost and t >= g.lost_at:
            L.insert(0, "Unable to determine the device handle for GPU%s: Unknown Error" % g.nvml_bus())
            continue
        clk, rs, temp, pw = g.state(t)
        m = g.m
        gen = g.gen_cur if g.busy else 1
        L += ["GPU %s" % g.nvml_bus(),
              "    Product Name                          : %s" % m["name"],
              "    Product Brand                         : NVIDIA",
              "    Product Architecture                  : %s" % m["arch"],
              "    Persistence Mode                      : Enabled",
              "    Serial Number                         : %s" % g.serial,
              "    GPU UUID                              : %s" % g.uuid,
              "    Minor Number                          : %d" % g.index,
              "    PCI",
              "        Bus                               : 0x%02X" % g.bus,
              "        Device                            : 0x00",
              "        Domain                            : 0x0000",
              "        Bus Id                            : %s" % g.nvml_bus(),
              "        GPU Link Info",
              "            PCIe Generation",
              "                Max                       : %d" % g.gen_max,
              "                Current                   : %d" % gen,
              "                Device Current            : %d" % gen,
              "                Device Max                : %d" % g.gen_max,
              "                Host Max                  : %d" % g.gen_max,
              "            Link Width",
              "                Max                       : %dx" % g.w_max,
              "                Current                   : %dx" % g.w_cur,
              "        Replays Since Reset               : %d" % g.replay.v(t, case.ref),
              "        Replay Number Rollovers           : 0",
              "    Fan Speed                             : N/A",
              "    Performance State                     : %s" % ("P0" if g.busy else "P0"),
              "    Clocks Throttle Reasons" if old else "    Clocks Event Reasons",
              "        Idle                              : %s" % _act(rs & 1),
              "        Applications Clocks Setting       : %s" % _act(rs & 2),
              "        SW Power Cap                      : %s" % _act(rs & 4),
              "        HW Slowdown                       : %s" % _act(rs & (8 | 0x40 | 0x80)),
              "            HW Thermal Slowdown           : %s" % _act(rs & 0x40),
              "            HW Power Brake Slowdown       : %s" % _act(rs & 0x80),
              "        Sync Boost                        : %s" % _act(rs & 0x10),
              "        SW Thermal Slowdown               : %s" % _act(rs & 0x20),
              "        Display Clock Setting             : %s" % _act(rs & 0x100),
              "    FB Memory Usage",
              "        Total                             : %d MiB" % m["mib"],
              "        Reserved                          : 565 MiB",
              "        Used                              : %d MiB" % ((m["mib"] - 4000) if g.busy else 1),
              "        Free                              : %d MiB" % ((3435) if g.busy else m["mib"] - 566),
              "    Utilization",
              "        Gpu                               : %d %%" % (round(100 * min(1.0, gpu_util(case, g, t) * 1.6)) if g.busy else 0),
              "        Memory                            : %d %%" % (41 if g.busy else 0),
              "    ECC Mode",
              "        Current                           : Enabled",
              "        Pending                           : Enabled",
              "    ECC Errors",
              "        Volatile",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % g.sbe.v(t, case.ref),
              "            DRAM Uncorrectable            : %d" % g.dbe.v(t, case.ref),
              "        Aggregate",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % (g.sbe.v(t, case.ref) + g.sbe_agg_extra),
              "            DRAM Uncorrectable            : %d" % g.dbe.v(t, case.ref),
              "    Retired Pages",
              "        Single Bit ECC                    : N/A",
              "        Double Bit ECC                    : N/A",
              "        Pending Page Blacklist            : N/A",
              "    Remapped Rows",
              "        Correctable Error                 : %d" % g.remap["corrected"],
              "        Uncorrectable Error               : %d" % g.remap["uncorrected"],
              "        Pending                           : %s" % ("Yes" if g.remap["pending"] else "No"),
              "        Remapping Failure Occurred        : %s" % ("Yes" if g.remap["failure"] else "No"),
              "        Bank Remap Availability Histogram",
              "            Max                           : %d bank(s)" % (640 - g.remap["corrected"] - g.remap["uncorrected"]),
              "            High                          : %d bank(s)" % (g.remap["corrected"] + g.remap["uncorrected"]),
              "            Partial                       : 0 bank(s)",
              "            Low                           : 0 bank(s)",
              "            None                          : 0 bank(s)",
              "    Temperature",
              "        GPU Current Temp                  : %d C" % temp,
              "        GPU T.Limit Temp                  : %d C" % (m["tlimit"] - temp),
              "        GPU Shutdown Temp                 : %d C" % m["shut"],
              "        GPU Slowdown Temp                 : %d C" % m["slow"],
              "        GPU Max Operating Temp            : %d C" % (m["slow"] - 2),
              "        Memory Current Temp               : %d C" % (g.mtemp + (temp - g.temp)),
              "        Memory Max Operating Temp         : 95 C"]
        if old:
            L += ["    Power Readings",
                  "        Power Management                  : Supported",
                  "        Power Draw                        : %.2f W" % pw,
                  "        Power Limit                       : %.2f W" % g.plim,
                  "        Default Power Limit               : %.2f W" % m["plim"],
                  "        Enforced Power Limit              : %.2f W" % g.plim,
                  "        Min Power Limit                   : %.2f W" % (m["plim"] * 0.3),
                  "        Max Power Limit                   : %.2f W" % m["plim"]]
        else:
            L += ["    GPU Power Readings",
                  "        Power Draw                        : %.2f W" % pw,
                  "        Current Power Limit               : %.2f W" % g.plim,
                  "        Requested Power Limit             : %.2f W" % g.plim,
                  "        Default Power Limit               : %.2f W" % m["plim"],
                  "        Min Power Limit                   : %.2f W" % (m["plim"] * 0.3),
                  "        Max Power Limit                   : %.2f W" % m["plim"]]
        L += ["    Clocks",
              "        Graphics                          : %d MHz" % clk,
              "        SM                                : %d MHz" % clk,
              "        Memory                            : %d MHz" % m["mem"],
              "        Video                             : %d MHz" % int(clk * 0.9),
              "    Max Clocks",
              "        Graphics                          : %d MHz" % m["sm"],
              "        SM                                : %d MHz" % m["sm"],
              "        Memory                            : %d MHz" % m["mem"],
              "        Video                             : %d MHz" % int(m["sm"] * 0.9), ""]
    return "\n".join(L) + "\n"


def lspci(case, h):
    L = []
    t = case.now
    devs = [(g.bus, "g", g) for g in h.gpus] + [(n.bus, "n", n) for n in h.nics]
    for bus, kind, d in sorted(devs, key=lambda x: x[0]):
        if kind == "g":
            if d.lost and t >= d.lost_at:
                L += ["%02x:00.0 3D controller: NVIDIA Corporation Device 2330 (rev ff) (prog-if ff)" % bus,
                      "\t!!! Unknown header type 7f", ""]
                continue
            gen = d.gen_cur if d.busy else 1
            L += ["%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev a1)" % (bus, {"H100": "2330", "H200": "2335", "A100": "20b2", "B200": "2901"}[d.model]),
                  "\tSubsystem: NVIDIA Corporation Device 16c1"]
        else:
            gen = d.gen_cur
            L += ["%02x:00.0 %s: Mellanox Technologies MT2910 Family [ConnectX-7]" % (bus, "Infiniband controller" if d.ll == "InfiniBand" else "Ethernet controller"),
                  "\tSubsystem: Mellanox Technologies Device 0023"]
        sc, sm = "%sGT/s" % SPEED_OLD[gen], "%sGT/s" % SPEED_OLD[d.gen_max]
        L += ["\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
              "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us" % (sm, d.w_max),
              "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
              "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)" % (sc, "ok" if gen == d.gen_max else "downgraded", d.w_cur,
                                                           "ok" if d.w_cur == d.w_max else "downgraded"),
              "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
              "\tKernel driver in use: %s" % ("nvidia" if kind == "g" else "mlx5_core"), ""]
    return "\n".join(L) + "\n"


def dmesg(case, h):
    style = case.opts["dmesg"]
    ev = [(h.boot + 0.9 + i * 0.013, txt) for i, txt in enumerate([
        "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #115-Ubuntu SMP",
        "Command line: BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=UUID=7b1c2a04 ro iommu=pt pci=realloc=off",
        "nvidia: loading out-of-tree module taints kernel.",
        "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % case.opts["driver"]])]
    for n in h.nics:
        ev.append((h.boot + 14.2 + n.idx * 0.011, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n.sys_bus(), n.ibdev)))
    ev += h.dmesg
    ev.sort(key=lambda x: x[0])
    L = []
    seq = 900
    for t, txt in ev:
        for k, line in enumerate(txt.split("\n")):
            up = t - h.boot
            if style == "plain":
                L.append(("[%12.6f] " % up if k == 0 else " " * 15) + line)
            elif style == "T":
                L.append("[%s] %s" % (ctime(t), line))
            elif style == "journal":
                L.append("%s %s kernel: %s" % (jtime(t), h.name, line))
            elif style == "kmsg":
                seq += 1
                L.append("%d,%d,%d,-;%s" % (3 if "Xid" in line or "rror" in line else 6, seq, int(up * 1e6), line))
    return "\n".join(L) + "\n"


def ibstat(case, h):
    L = []
    for n in h.nics:
        L += ["CA '%s'" % n.ibdev, "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: %s" % n.fw,
              "\tHardware version: 0", "\tNode GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 256 + n.idx),
              "\tSystem image GUID: 0xa088c20300f1e2d0", "\tPort 1:",
              "\t\tState: %s" % ("Active" if n.state.startswith("4") else "Down"),
              "\t\tPhysical state: %s" % ("LinkUp" if n.phys.startswith("5") else "Polling"),
              "\t\tRate: %d" % n.rate, "\t\tBase lid: %d" % (n.idx + 1 if n.ll == "InfiniBand" else 0),
              "\t\tLMC: 0", "\t\tSM lid: %d" % (1 if n.ll == "InfiniBand" else 0),
              "\t\tCapability mask: 0x%s" % ("a751e848" if n.ll == "InfiniBand" else "00010000"),
              "\t\tPort GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 256 + n.idx),
              "\t\tLink layer: %s" % n.ll]
    return "\n".join(L) + "\n"


def top(case, h):
    t = case.now
    cont = h.contention and t >= h.contention[0]
    load = h.contention[1] if cont else h.load
    lines = ["top - %s up %d days, %2d:%02d,  0 users,  load average: %.2f, %.2f, %.2f" % (
        _time.strftime("%H:%M:%S", _time.gmtime(t)), (t - h.boot) // 86400, ((t - h.boot) % 86400) // 3600,
        ((t - h.boot) % 3600) // 60, load, load * 0.97, load * 0.9),
        "Tasks: 1012 total,   %d running, 1004 sleeping,   0 stopped,   0 zombie" % (int(load) if cont else 9),
        "%%Cpu(s): %4.1f us, %4.1f sy,  0.0 ni, %4.1f id,  %3.1f wa,  0.0 hi,  0.3 si,  0.0 st" % (
            (62.0, 30.1, 3.2, 4.4) if cont else (14.2, 3.1, 82.1, 0.1)),
        "MiB Mem : 2063807.2 total, %9.1f free, %9.1f used, 801234.4 buff/cache" % ((3120.4, 1259452.4) if cont and h.contention[3] == "mem" else (612345.6, 650227.2)),
        "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1402345.0 avail Mem", "",
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    procs = []
    if h.gpus and h.gpus[0].busy:
        for i, g in enumerate(h.gpus):
            procs.append((231400 + i, "train", 20, 0, "88.1g", "21.4g", "1.2g", "R", 101.0 - i * 0.7, 1.0, "812:11.42", "python3"))
    procs += h.top_extra
    procs.sort(key=lambda p: -p[8])
    for p in procs:
        lines.append("%7d %-8s  %2d  %2d %7s %6s %6s %s %5.1f %5.1f %9s %s" % p)
    lines.append("   1893 root      20   0 2311208  81232  41020 S   1.3   0.0  41:02.17 nv-hostengine")
    lines.append("   2207 root      20   0 1532404  52100  22112 S   0.7   0.0  12:44.90 dcgm-exporter")
    return "\n".join(lines) + "\n"


def psi(case, h, kind):
    t = case.now
    cont = h.contention and t >= h.contention[0]
    if kind == "cpu":
        a = (h.contention[2], h.contention[2] * 0.9, h.contention[2] * 0.6) if cont and h.contention[3] == "cpu" else h.psi_cpu
        tot = int(h.psi_cpu_total.v(t, case.ref))
        return "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % (a + (tot,))
    if kind == "memory":
        a = (h.contention[2], h.contention[2] * 0.85, h.contention[2] * 0.5) if cont and h.contention[3] == "mem" else h.psi_mem
        f = tuple(x * 0.6 for x in a)
        return "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
            a + (int(a[2] * 1e7) + 1203,) + f + (int(f[2] * 1e7) + 411,))
    a = h.psi_io
    return "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
        a + (88123412,) + tuple(x * 0.5 for x in a) + (40211876,))


def nvml(case, h):
    t = case.now
    devs = []
    events = []
    for g in h.gpus:
        if g.lost and t >= g.lost_at:
            devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bus(), "error": "GPU is lost"})
            continue
        clk, rs, temp, pw = g.state(t)
        gen = g.gen_cur if g.busy else 1
        devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bus(), "name": g.m["name"],
                     "nvmlDeviceGetCurrPcieLinkGeneration": gen, "nvmlDeviceGetMaxPcieLinkGeneration": g.gen_max,
                     "nvmlDeviceGetCurrPcieLinkWidth": g.w_cur, "nvmlDeviceGetMaxPcieLinkWidth": g.w_max,
                     "nvmlDeviceGetPcieReplayCounter": g.replay.v(t, case.ref),
                     "nvmlDeviceGetTemperature": temp, "nvmlDeviceGetPowerUsage": int(pw * 1000),
                     "nvmlDeviceGetEnforcedPowerLimit": int(g.plim * 1000),
                     "nvmlDeviceGetClockInfo": {"sm": clk, "mem": g.m["mem"]},
                     "nvmlDeviceGetMaxClockInfo": {"sm": g.m["sm"], "mem": g.m["mem"]},
                     ("nvmlDeviceGetCurrentClocksThrottleReasons" if case.opts["old_driver"] else "nvmlDeviceGetCurrentClocksEventReasons"): rs,
                     "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g.sbe.v(t, case.ref), "uncorrected_volatile": g.dbe.v(t, case.ref)},
                     "nvmlDeviceGetRemappedRows": dict(g.remap)})
        for ev in g.events:
            if len(ev) > 2 and ev[2]:
                events.append({"device": g.index, "type": "XidCriticalError", "data": ev[1], "time": iso(ev[0])})
    return {"driver_version": case.opts["driver"], "devices": devs, "events": events}


# --------------------------------------------------------------------------------------------
# switch files (SONiC)


def switch_files(case, s):
    t = case.now
    F = {}
    ports = sorted(s.ports, key=_portkey)
    hdr = "  Port %s    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7"
    sep = "-----------  ------  ------  ------  ------  ------  ------  ------  ------"
    out = []
    for dirn, attr in (("Rx", "rx_pfc"), ("Tx", "tx_pfc")):
        out += [hdr % dirn, sep]
        for pn in ports:
            vals = [getattr(s.ports[pn], attr)[i].v(t, case.ref) for i in range(8)]
            out.append("%11s  " % pn + "  ".join("%6s" % comma(v) for v in vals))
        out.append("")
    F["show-pfc-counters.txt"] = "\n".join(out) + "\n"
    wd = ["      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
          "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for pn in ports:
        p = s.ports[pn]
        if p.wd:
            st, det, res, drop = p.wd
            wd.append("%11s  %8s  %25s  %12s  %12s  %17s  %17s" % (pn + ":3", st, "%d/%d" % (det, res), "0/%d" % drop, "0/0",
                                                                    "0/%d" % drop, "0/0"))
    F["show-pfcwd-stats.txt"] = "\n".join(wd) + "\n"
    ic = ["      IFACE    STATE        RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR        TX_OK     TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
          "-----------  -------  -----------  ---------  ---------  --------  --------  --------  -----------  ---------  ---------  --------  --------  --------"]
    for pn in ports:
        p = s.ports[pn]
        inr = p.in_oct.rate_at(t)
        outr = p.out_oct.rate_at(t)
        ic.append("%11s  %7s  %11s  %9s  %9s  %8s  %8s  %8s  %11s  %9s  %9s  %8s  %8s  %8s" % (
            pn, p.oper, comma(p.in_oct.v(t, case.ref) // 4000), "%.2f MB/s" % (inr / 1e6), "%.2f%%" % (100 * inr * 8 / (p.speed * 1e9)),
            comma(p.rx_err.v(t, case.ref)), "0", "0", comma(p.out_oct.v(t, case.ref) // 4000), "%.2f MB/s" % (outr / 1e6),
            "%.2f%%" % (100 * outr * 8 / (p.speed * 1e9)), "0", comma(p.discards.v(t, case.ref)), "0"))
    F["show-interfaces-counters.txt"] = "\n".join(ic) + "\n"
    return F
