"""One fleet model per incident, and every source printed from it (standard library only)."""
import gzip, io, json, os, random, time, calendar

BOOST = {"NVIDIA H100 80GB HBM3": (1980, 2619, 700), "NVIDIA H200": (1980, 3201, 700),
         "NVIDIA A100-SXM4-80GB": (1410, 1593, 400)}
GEN_SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}
GEN_SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}
LSPCI_SPEED = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))


def unix(s):
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


class Ctr:
    """A counter: value `b` at window start, `n` at snapshot time; growth from `onset` (linear)."""
    def __init__(self, b=0, n=None, onset=None):
        self.b = int(b); self.n = int(b if n is None else n); self.onset = onset

    def at(self, t, t0, t1):
        if self.n == self.b:
            return self.b
        on = t0 if self.onset is None else self.onset
        if t <= on:
            return self.b
        if t >= t1:
            return self.n
        return self.b + int((self.n - self.b) * (t - on) / max(1.0, (t1 - on)))

    @property
    def d(self):
        return self.n - self.b


class Gauge:
    def __init__(self, pre, post=None, onset=None, jitter=0.0):
        self.pre = pre; self.post = pre if post is None else post; self.onset = onset; self.jitter = jitter

    def at(self, t, rng):
        v = self.post if (self.onset is not None and t >= self.onset) else self.pre
        if self.jitter:
            v = v + rng.uniform(-self.jitter, self.jitter)
        return v

    @property
    def now(self):
        return self.post


def bdf_nvml(bus):
    return "00000000:%02X:00.0" % bus


def bdf_sys(bus):
    return "0000:%02x:00.0" % bus


class GPU:
    def __init__(self, case, host, idx, bus, model):
        r = case.rng
        self.idx = idx; self.bus = bus; self.model = model
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(16),
                                                       r.getrandbits(16), r.getrandbits(48))
        mx, mem, lim = BOOST[model]
        self.maxclock = mx; self.memclock = mem; self.limit = lim
        busy = host.in_job
        self.busy = busy
        # normal busy H100/H200: drawing its limit with SW power cap and a slightly lower clock
        if busy:
            capped = r.random() < case.swcap_share
            self.clock = Gauge(mx - r.choice([15, 30, 45, 60, 75]) if capped else mx, jitter=0)
            self.power = Gauge(lim - r.uniform(2, 9) if capped else lim * r.uniform(0.78, 0.92), jitter=6)
            self.reasons = Gauge(0x4 if capped else 0x0)
            self.temp = Gauge(r.randint(56, 71), jitter=1.5)
            self.util = Gauge(100 if r.random() < 0.7 else 99)
            self.tensor = Gauge(round(r.uniform(0.40, 0.47), 3), jitter=0.02)
        else:
            self.clock = Gauge(345); self.power = Gauge(r.uniform(68, 80), jitter=3)
            self.reasons = Gauge(0x1); self.temp = Gauge(r.randint(29, 36), jitter=1)
            self.util = Gauge(0); self.tensor = Gauge(0.0)
        self.enforced = lim
        self.gen_max = 5; self.w_max = 16
        self.gen = 5 if busy else 1      # idle GPUs drop to Gen1 to save power; width stays
        self.w = 16
        self.replay = Ctr(0)
        self.sbe = Ctr(0); self.dbe = Ctr(0)
        self.sbe_agg = 0
        self.remap = {"corrected": 0, "uncorrected": 0, "pending": False, "failure": False}
        self.nvl = [{"replay": Ctr(0), "recovery": Ctr(0), "crc_flit": Ctr(0), "crc_data": Ctr(0)} for _ in range(18)]
        self.aer_cor = Ctr(0)
        self.lost = False; self.lost_at = None
        self.xid_last = 0
        self.thermal_viol = Ctr(0); self.power_viol = Ctr(0)
        self.hbm_temp = None

    def nvl_total(self, key):
        return Ctr(sum(l[key].b for l in self.nvl), sum(l[key].n for l in self.nvl),
                   next((l[key].onset for l in self.nvl if l[key].d), None))


ROCE_ETH_ZERO = ["rx_prio3_pause", "tx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause_duration",
                 "tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_discards_phy",
                 "rx_out_of_buffer", "link_down_events_phy", "rx_symbol_err_phy", "rx_crc_errors_phy",
                 "rx_prio3_discards", "outbound_pci_stalled_wr_events"]
IB_CTRS = ["port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets", "port_rcv_errors",
           "symbol_error", "link_downed", "link_error_recovery", "port_xmit_wait"]
HW_CTRS = ["out_of_sequence", "packet_seq_err", "local_ack_timeout_err"]
ROCE_HW = ["np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"]


class NIC:
    def __init__(self, case, host, ibdev, netdev, bus, ll, switch, port):
        self.ibdev = ibdev; self.netdev = netdev; self.bus = bus; self.ll = ll
        self.switch = switch; self.port = port
        self.rate = 400; self.state = "ACTIVE"; self.phys = "LinkUp"
        self.gen = 5; self.gen_max = 5; self.w = 16; self.w_max = 16
        self.c = {k: Ctr(0) for k in IB_CTRS + HW_CTRS}
        if ll == "Ethernet":
            for k in ROCE_ETH_ZERO + ROCE_HW:
                self.c[k] = Ctr(0)
        self.fec_corr = Ctr(0); self.fec_unc = Ctr(0)
        self.carrier = Ctr(2)
        self.aer_cor = Ctr(0)
        self.used = host.in_job


class Host:
    def __init__(self, case, name, model, ngpu, nic_names, ll, in_job=True, rack="r01"):
        self.name = name; self.rack = rack; self.in_job = in_job
        self.model = model
        r = case.rng
        buses = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][:ngpu] if ngpu <= 8 else list(range(0x10, 0x10 + ngpu))
        self.gpus = [GPU(case, self, i, b, model) for i, b in enumerate(buses)]
        nbus = [0x1a, 0x2c, 0x3c, 0x5f, 0x9c, 0xad, 0xbc, 0xdd, 0x40, 0xc1]
        self.nics = []
        for k, (ib, nd) in enumerate(nic_names):
            self.nics.append(NIC(case, self, ib, nd, nbus[k], ll, None, None))
        self.boot = None
        self.driver = case.driver
        self.dmesg = []          # (wall time, text)
        self.psi_cpu = (0.4, 0.3, 0.2); self.psi_mem = (0.0, 0.0, 0.0); self.psi_io = (0.1, 0.1, 0.1)
        self.psi_cpu_total = Ctr(r.randint(10 ** 8, 10 ** 9))
        self.load1 = Gauge(r.uniform(9, 14), jitter=0.8)
        self.ncpu = 192
        self.procs = [("python3", r.uniform(96, 100), 2.1) for _ in range(ngpu)] if in_job else []
        self.sel = []; self.fans = None
        self.cmd_extra = {}
        self.steal = 0.0


class Switch:
    def __init__(self, name, tier, vendor):
        self.name = name; self.tier = tier; self.vendor = vendor
        self.links = []          # (port, peer, peer_port)
        self.ports = {}          # port -> dict of Ctr

    def port(self, p):
        if p not in self.ports:
            self.ports[p] = {"rx_pfc3": Ctr(0), "tx_pfc3": Ctr(0), "in_oct": Ctr(0), "out_oct": Ctr(0),
                             "out_disc": Ctr(0), "in_err": Ctr(0), "storm": False, "up": True}
        return self.ports[p]


class Case:
    def __init__(self, cid, seed, start, minutes=90):
        self.id = cid
        self.rng = random.Random(seed)
        self.t0 = unix(start); self.t1 = self.t0 + minutes * 60
        self.title = ""; self.reported = ""; self.alerts = []
        self.job = {"name": "llm-pretrain", "ranks": 0, "gpus_per_node": 8}
        self.hosts = []; self.switches = {}
        self.explicit_ranks = None
        self.truth = ("healthy", None)
        self.driver = "550.90.07"
        self.swcap_share = 0.35
        self.node_hosts = None          # None: all hosts
        self.missing = set()
        self.gz = {"metrics/dcgm.om", "metrics/node.om", "metrics/switch.om"}   # relative paths (without .gz) to compress
        self.dmesg_style = "T"
        self.hostname_label = "hostname"
        self.old_driver = False
        self.old_kernel = False
        self.reason_family = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
        self.step_period = 60; self.step_every = 10
        self.steps = None               # filled by model_steps
        self.logs = {}
        self.metric_step = 120
        self.dcgm_families = None
        self.files = {}                 # extra files: rel path -> text
        self.truncate = {}              # rel path -> keep bytes (unreadable/truncated file)
        self.collected_keys = ("before", "now", "boot")
        self.notes = {}

    # ---------- fleet building ----------
    def host(self, *a, **k):
        h = Host(self, *a, **k)
        h.boot = self.t0 - self.rng.randint(3, 40) * 86400 - self.rng.randint(0, 86000)
        self.hosts.append(h)
        return h

    def switch(self, name, tier, vendor="sonic"):
        s = Switch(name, tier, vendor); self.switches[name] = s
        return s

    def link(self, a, pa, b, pb):
        self.switches[a].links.append((pa, b, pb)); self.switches[b].links.append((pb, a, pa))
        self.switches[a].port(pa); self.switches[b].port(pb)

    def attach(self, nic, sw, port):
        nic.switch = sw; nic.port = port; self.switches[sw].port(port)

    def H(self, name):
        return next(h for h in self.hosts if h.name == name)

    def job_hosts(self):
        return [h for h in self.hosts if h.in_job]

    def rank_map(self):
        if self.explicit_ranks is not None:
            return self.explicit_ranks
        gpn = self.job["gpus_per_node"]; out = []
        for hi, h in enumerate(self.hosts):
            for g in range(gpn):
                out.append((hi * gpn + g, h.name, g))
        return out[:self.job["ranks"]]

    def dmesg(self, host, t, text):
        host.dmesg.append((t, text))


# ---------------------------------------------------------------- physics helpers
def set_traffic(case, gbps_per_nic, onset=None, after=None, nics=None):
    """Data counters of job NICs and the switch ports they face (bytes out of the NIC = bytes into the port)."""
    span = case.t1 - case.t0
    for h in case.job_hosts():
        for n in h.nics:
            if nics is not None and (h.name, n.ibdev) not in nics:
                continue
            if not n.used:
                continue
            rate = gbps_per_nic * 1e9 / 8
            if onset is not None:
                total = rate * (onset - case.t0) + (after if after is not None else gbps_per_nic) * 1e9 / 8 * (case.t1 - onset)
            else:
                total = rate * span
            total *= case.rng.uniform(0.985, 1.015)
            bx = case.rng.randint(10 ** 13, 9 * 10 ** 14)
            words = int(total / 4)
            n.c["port_xmit_data"] = Ctr(bx // 4, bx // 4 + words)
            n.c["port_rcv_data"] = Ctr(bx // 4 + 77777, bx // 4 + 77777 + int(words * case.rng.uniform(0.995, 1.005)))
            pk = int(total / 4096)
            n.c["port_xmit_packets"] = Ctr(bx // 4096, bx // 4096 + pk)
            n.c["port_rcv_packets"] = Ctr(bx // 4096 + 911, bx // 4096 + 911 + pk)
            n.c["port_xmit_wait"] = Ctr(case.rng.randint(10 ** 8, 4 * 10 ** 9))
            n.c["port_xmit_wait"].n = n.c["port_xmit_wait"].b + int(pk * case.rng.uniform(0.02, 0.05))
            if n.switch:
                p = case.switches[n.switch].port(n.port)
                base = case.rng.randint(10 ** 14, 10 ** 15)
                p["in_oct"] = Ctr(base, base + n.c["port_xmit_data"].d * 4)
                p["out_oct"] = Ctr(base + 5555, base + 5555 + n.c["port_rcv_data"].d * 4)
            if n.ll == "Ethernet":
                cn = int(pk * case.rng.uniform(0.00002, 0.00006))
                b0 = case.rng.randint(10 ** 5, 10 ** 7)
                n.c["np_ecn_marked_roce_packets"] = Ctr(b0, b0 + cn)
                n.c["np_cnp_sent"] = Ctr(b0, b0 + cn)
                n.c["rp_cnp_handled"] = Ctr(b0 + 13, b0 + 13 + int(cn * case.rng.uniform(0.9, 1.1)))


def pause_chain(case, origin, hops, count, onset, nic_victims=(), dur_us_per=8):
    """PFC pauses flow opposite to congestion: `origin` transmits pauses (receives none).
    origin: ("nic", host, ibdev) or ("port", switch, port). hops: list of (switch, rx_port, [tx_ports]) receiving
    then re-transmitting. nic_victims: (host, ibdev) whose NIC receives pauses from its switch port."""
    def add_tx_port(sw, p, k):
        c = case.switches[sw].port(p)["tx_pfc3"]; c.n += k; c.onset = onset
        for lp, peer, pp in case.switches[sw].links:      # the peer switch port receives what this one sends
            if lp == p:
                add_rx_port(peer, pp, k)

    def add_rx_port(sw, p, k):
        c = case.switches[sw].port(p)["rx_pfc3"]; c.n += k; c.onset = onset
    if origin[0] == "nic":
        h = case.H(origin[1]); n = next(x for x in h.nics if x.ibdev == origin[2])
        for key, k in (("tx_prio3_pause", count), ("tx_prio3_pause_duration", count * dur_us_per)):
            n.c[key].n += k; n.c[key].onset = onset
        add_rx_port(n.switch, n.port, count)
    else:
        add_tx_port(origin[1], origin[2], count)
    for sw, rxp, txps in hops:
        got = max([p["rx_pfc3"].d for p in case.switches[sw].ports.values()] + [0]) or count
        for tp in txps:
            k = int(got * case.rng.uniform(0.55, 0.8))
            add_tx_port(sw, tp, k)
    for hn, ib in nic_victims:
        h = case.H(hn); n = next(x for x in h.nics if x.ibdev == ib)
        k = case.switches[n.switch].port(n.port)["tx_pfc3"].d
        n.c["rx_prio3_pause"].n += k; n.c["rx_prio3_pause"].onset = onset
        n.c["rx_prio3_pause_duration"].n += k * dur_us_per; n.c["rx_prio3_pause_duration"].onset = onset


def model_steps(case, compute, comm, nsteps, first_step=1000, rank_slow=None, comm_mult=None, with_compute=True,
                checksum=None, loss0=2.4, dropped=None, gap=None, data_wait=None, grad_spike=None):
    """Synchronous job: each step ends at the collective; duration = slowest rank's compute + comm.
    rank_slow: {rank: (factor, onset)}; comm_mult: (factor, onset); data_wait: (extra_s, onset) to every rank."""
    r = case.rng
    ranks = [x[0] for x in case.rank_map()]
    rows = []
    t = case.t0 + 30.0
    raw = (case.t1 - case.t0 - 60) / (nsteps * (compute + comm))
    every = max([x for x in (1, 2, 5, 10, 20, 25, 50, 100, 200) if x <= max(1, raw)])
    case.step_every = every
    step = first_step
    rank_slow = rank_slow or {}
    lo = loss0
    gap_done = False
    for i in range(nsteps * 4):
        if t >= case.t1 - 20:
            break
        if gap and not gap_done and t >= gap[0]:
            gap_done = True
            t += gap[1]
            step -= gap[2]
        comps = {}
        for rk in ranks:
            c = compute * r.uniform(0.992, 1.008)
            f = rank_slow.get(rk)
            if f and t >= f[1]:
                c *= f[0]
            if data_wait and t >= data_wait[1]:
                c += data_wait[0] * r.uniform(0.9, 1.1)
            comps[rk] = c
        cm = comm * (comm_mult[0] if comm_mult and t >= comm_mult[1] else 1.0)
        slow = max(comps.values())
        lo = max(1.2, lo - 0.0015 + r.uniform(-0.01, 0.01))
        gn = r.uniform(0.8, 1.2)
        if grad_spike and t >= grad_spike and r.random() < 0.25:
            gn *= r.uniform(3, 9)
        for rk in ranks:
            if dropped and (i, rk) in dropped:
                continue
            d = slow + cm * r.uniform(0.997, 1.003)
            row = [step, rk, t + r.uniform(0, 0.004), d]
            if with_compute:
                row.append(comps[rk])
            row.append(lo); row.append(gn)
            if checksum:
                row.append(checksum(rk, step, t))
            rows.append(row)
        t += (slow + cm) * every
        step += every
    case.steps = {"rows": rows, "with_compute": with_compute, "checksum": bool(checksum)}
    return t


# ---------------------------------------------------------------- renderers
def fmt_num(v):
    if isinstance(v, float):
        return "%.6g" % v if abs(v) < 1e15 else "%d" % int(v)
    return str(v)


def om_family(lines, name, typ, help_, samples):
    lines.append("# HELP %s %s" % (name, help_))
    lines.append("# TYPE %s %s" % (name, typ))
    for labels, v, t in samples:
        lab = ",".join('%s="%s"' % kv for kv in labels)
        lines.append("%s{%s} %s %d" % (name, lab, v, t))


def sample_times(case, step=None):
    step = step or case.metric_step
    out = []; t = case.t0 - 10 * 60
    while t <= case.t1:
        out.append(t); t += step
    return out


def render_dcgm(case, hosts=None):
    r = random.Random(case.rng.random())
    times = sample_times(case)
    fams = case.dcgm_families or ["SM_CLOCK", "GPU_TEMP", "POWER_USAGE", "GPU_UTIL", "TENSOR", "REASONS",
                                  "PCIE_REPLAY", "XID", "SBE", "DBE", "NVL_CRC", "NVL_REPLAY", "REMAP_C", "REMAP_U",
                                  "POWER_VIOL", "THERMAL_VIOL"]
    spec = {
        "SM_CLOCK": ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", lambda g, t: "%d" % g.clock.at(t, r)),
        "GPU_TEMP": ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", lambda g, t: "%d" % round(g.temp.at(t, r))),
        "POWER_USAGE": ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", lambda g, t: "%.3f" % min(g.power.at(t, r), g.enforced / 1.0 + 1.5)),
        "GPU_UTIL": ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", lambda g, t: "%d" % max(0, min(100, round(g.util.at(t, r))))),
        "TENSOR": ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", lambda g, t: "%.6f" % max(0.0, g.tensor.at(t, r))),
        "REASONS": (case.reason_family, "gauge", "Current clock event reasons (bitmask).", lambda g, t: "%d" % g.reasons.at(t, r)),
        "PCIE_REPLAY": ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", lambda g, t: "%d" % g.replay.at(t, case.t0, case.t1)),
        "XID": ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", lambda g, t: "%d" % xid_at(g, t)),
        "SBE": ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", lambda g, t: "%d" % g.sbe.at(t, case.t0, case.t1)),
        "DBE": ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", lambda g, t: "%d" % g.dbe.at(t, case.t0, case.t1)),
        "NVL_CRC": ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors.", lambda g, t: "%d" % g.nvl_total("crc_flit").at(t, case.t0, case.t1)),
        "NVL_REPLAY": ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.", lambda g, t: "%d" % g.nvl_total("replay").at(t, case.t0, case.t1)),
        "REMAP_C": ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", lambda g, t: "%d" % g.remap["corrected"]),
        "REMAP_U": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", lambda g, t: "%d" % g.remap["uncorrected"]),
        "POWER_VIOL": ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us).", lambda g, t: "%d" % g.power_viol.at(t, case.t0, case.t1)),
        "THERMAL_VIOL": ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in us).", lambda g, t: "%d" % g.thermal_viol.at(t, case.t0, case.t1)),
    }
    lines = []
    hosts = hosts if hosts is not None else case.hosts
    for f in fams:
        name, typ, hlp, fn = spec[f]
        samples = []
        for h in hosts:
            for g in h.gpus:
                labels = (("gpu", str(g.idx)), ("UUID", g.uuid), ("pci_bus_id", bdf_nvml(g.bus)),
                          ("device", "nvidia%d" % g.idx), ("modelName", g.model), (case.hostname_label, h.name),
                          ("DCGM_FI_DRIVER_VERSION", h.driver))
                for t in times:
                    if g.lost and g.lost_at is not None and t > g.lost_at:
                        break
                    samples.append((labels, fn(g, t), t))
        om_family(lines, name, typ, hlp, samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def xid_at(g, t):
    v = 0
    for tt, x in getattr(g, "xids", []):
        if tt <= t:
            v = x
    return v


def render_node_om(case, hosts):
    r = random.Random(case.rng.random())
    times = sample_times(case)
    lines = []
    fam = [("node_infiniband_port_data_received_bytes_total", "port_rcv_data", 4, "Number of data octets received on all links"),
           ("node_infiniband_port_data_transmitted_bytes_total", "port_xmit_data", 4, "Number of data octets transmitted on all links"),
           ("node_infiniband_port_errors_received_total", "port_rcv_errors", 1, "Number of packets containing an error that were received on this port"),
           ("node_infiniband_link_downed_total", "link_downed", 1, "Number of times the link failed to recover from an error state and went down"),
           ("node_infiniband_port_transmit_wait_total", "port_xmit_wait", 1, "Number of ticks during which the port had data to transmit but no data was sent during the entire tick")]
    for name, key, mul, hlp in fam:
        samples = []
        for h in hosts:
            for n in h.nics:
                labels = (("device", n.ibdev), ("instance", "%s:9100" % h.name), ("job", "node"), ("port", "1"))
                for t in times:
                    samples.append((labels, "%d" % (n.c[key].at(t, case.t0, case.t1) * mul), t))
        om_family(lines, name, "counter", hlp, samples)
    samples = []
    for h in hosts:
        for t in times:
            samples.append(((("instance", "%s:9100" % h.name), ("job", "node")), "%.2f" % h.load1.at(t, r), t))
    om_family(lines, "node_load1", "gauge", "1m load average.", samples)
    samples = []
    for h in hosts:
        for t in times:
            samples.append(((("instance", "%s:9100" % h.name), ("job", "node")), "%.6f" % (h.psi_cpu_total.at(t, case.t0, case.t1) / 1e6), t))
    om_family(lines, "node_pressure_cpu_waiting_seconds_total", "counter", "Total time in seconds that processes have waited for CPU time", samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def render_snmp(case, switches):
    times = sample_times(case)
    lines = []
    for name, key, hlp in (("ifHCInOctets", "in_oct", "The total number of octets received on the interface, including framing characters."),
                           ("ifHCOutOctets", "out_oct", "The total number of octets transmitted out of the interface, including framing characters."),
                           ("ifOutDiscards", "out_disc", "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted."),
                           ("ifInErrors", "in_err", "For packet-oriented interfaces, the number of inbound packets that contained errors preventing them from being deliverable to a higher-layer protocol.")):
        samples = []
        for sw in switches:
            s = case.switches[sw]
            for p in sorted(s.ports, key=port_key):
                labels = (("ifName", p), ("instance", sw), ("job", "snmp"))
                for t in times:
                    samples.append((labels, "%d" % s.ports[p][key].at(t, case.t0, case.t1), t))
        om_family(lines, name, "counter", hlp, samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def port_key(p):
    digits = "".join(ch if ch.isdigit() else " " for ch in p).split()
    return tuple(int(x) for x in digits) + (p,)


def commas(n):
    return "{:,}".format(n)


def render_sonic_pfc(case, s):
    out = []
    for dirn, key in (("Rx", "rx_pfc3"), ("Tx", "tx_pfc3")):
        out.append("  Port %s    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7" % dirn)
        out.append("-----------  ------  ------  ------  ------  ------  ------  ------  ------")
        for p in sorted(s.ports, key=port_key):
            v = s.ports[p][key].n
            out.append("%11s  %6s  %6s  %6s  %6s  %6s  %6s  %6s  %6s" % (p, "0", "0", "0", commas(v), "0", "0", "0", "0"))
        out.append("")
    return "\n".join(out)


def render_sonic_pfcwd(case, s):
    out = ["      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP         RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
           "-----------  -----------  -------------------------  ------------  -----------------  -----------------  -----------------"]
    for p in sorted(s.ports, key=port_key):
        st = s.ports[p]
        if st["storm"]:
            drop = st["rx_pfc3"].d * 37
            out.append("%11s  %11s  %25s  %12s  %17s  %17s  %17s" % (p + ":3", "stormed", "1/0", "0/%d" % drop, "0/0", "0/%d" % drop, "0/0"))
        else:
            out.append("%11s  %11s  %25s  %12s  %17s  %17s  %17s" % (p + ":3", "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
    return "\n".join(out) + "\n"


def render_sonic_ifcounters(case, s):
    out = ["      IFACE    STATE        RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR        TX_OK     TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
           "-----------  -------  -----------  ---------  ---------  --------  --------  --------  -----------  ---------  ---------  --------  --------  --------"]
    span = case.t1 - case.t0
    for p in sorted(s.ports, key=port_key):
        st = s.ports[p]
        rxb = st["in_oct"].d / span; txb = st["out_oct"].d / span
        out.append("%11s  %7s  %11s  %9s  %9s  %8s  %8s  %8s  %11s  %9s  %9s  %8s  %8s  %8s" % (
            p, "U" if st["up"] else "D", commas(st["in_oct"].n // 4096), "%.2f MB/s" % (rxb / 1e6), "%.2f%%" % (rxb * 8 / 4e11 * 100),
            commas(st["in_err"].n), "0", "0", commas(st["out_oct"].n // 4096), "%.2f MB/s" % (txb / 1e6), "%.2f%%" % (txb * 8 / 4e11 * 100),
            "0", commas(st["out_disc"].n), "0"))
    return "\n".join(out) + "\n"


def snap(ctr, which):
    return ctr.b if which == "before" else ctr.n


def node_sys(case, h, which):
    """sysfs files of one host at `which` (before|now): rel path -> text."""
    f = {}
    spd = GEN_SPEED_OLD if case.old_kernel else GEN_SPEED
    sfx = "" if case.old_kernel else " PCIe"
    devs = [(g.bus, g.gen, g.gen_max, g.w, g.w_max, g.aer_cor, g.lost) for g in h.gpus] + \
           [(n.bus, n.gen, n.gen_max, n.w, n.w_max, None, False) for n in h.nics]
    for bus, gen, gmax, w, wmax, aer, lost in devs:
        p = "sys/bus/pci/devices/%s/" % bdf_sys(bus)
        if which == "before":
            pass
        elif lost:
            f[p + "current_link_speed"] = "Unknown\n"; f[p + "max_link_speed"] = "Unknown\n"
            f[p + "current_link_width"] = "63\n"; f[p + "max_link_width"] = "63\n"
        else:
            f[p + "current_link_speed"] = "%s GT/s%s\n" % (spd[gen], sfx)
            f[p + "max_link_speed"] = "%s GT/s%s\n" % (spd[gmax], sfx)
            f[p + "current_link_width"] = "%d\n" % w; f[p + "max_link_width"] = "%d\n" % wmax
        if aer is None:
            continue
        v = snap(aer, which)
        rx = v - v // 4; to = v // 4
        f[p + "aer_dev_correctable"] = ("Receiver Error %d\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\nReplay Timer Timeout %d\n"
                                        "Advisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n") % (rx, to, v)
    for n in h.nics:
        p = "sys/class/infiniband/%s/ports/1/" % n.ibdev
        if which == "now":
            f[p + "state"] = {"ACTIVE": "4: ACTIVE", "DOWN": "1: DOWN", "INIT": "2: INIT"}[n.state] + "\n"
            f[p + "phys_state"] = {"LinkUp": "5: LinkUp", "Polling": "2: Polling", "Disabled": "3: Disabled"}[n.phys] + "\n"
            if n.ll == "InfiniBand":
                f[p + "rate"] = {400: "400 Gb/sec (4X NDR)", 200: "200 Gb/sec (4X HDR)", 100: "100 Gb/sec (4X EDR)"}[n.rate] + "\n"
            else:
                f[p + "rate"] = "%d Gb/sec (4X NDR)\n" % n.rate if n.rate == 400 else "%d Gb/sec (4X HDR)\n" % n.rate
            f[p + "link_layer"] = n.ll + "\n"
        for k in IB_CTRS:
            if k in ("port_rcv_packets", "port_xmit_packets", "link_error_recovery") and not n.c[k].d and n.c[k].b == 0:
                continue
            if k in ("port_rcv_packets", "port_xmit_packets"):
                continue
            f[p + "counters/" + k] = "%d\n" % snap(n.c[k], which)
        for k in HW_CTRS + (ROCE_HW if n.ll == "Ethernet" else []):
            f[p + "hw_counters/" + k] = "%d\n" % snap(n.c[k], which)
        q = "sys/class/net/%s/" % n.netdev
        if which == "now":
            f[q + "operstate"] = ("up" if n.state == "ACTIVE" else "down") + "\n"
        f[q + "carrier_changes"] = "%d\n" % snap(n.carrier, which)
    return f


def reasons_block(g, old):
    v = g.reasons.now
    def a(bit):
        return "Active" if v & bit else "Not Active"
    head = "Clocks Throttle Reasons" if old else "Clocks Event Reasons"
    return ["    %s" % head,
            "        Idle                              : %s" % a(0x1),
            "        Applications Clocks Setting       : %s" % a(0x2),
            "        SW Power Cap                      : %s" % a(0x4),
            "        HW Slowdown                       : %s" % a(0x8 | 0x40 | 0x80),
            "            HW Thermal Slowdown           : %s" % a(0x40),
            "            HW Power Brake Slowdown       : %s" % a(0x80),
            "        Sync Boost                        : %s" % a(0x10),
            "        SW Thermal Slowdown               : %s" % a(0x20),
            "        Display Clock Setting             : %s" % a(0x100)]


def render_smi_q(case, h, which):
    old = case.old_driver
    out = ["", "==============NVSMI LOG==============", "",
           "Timestamp                                 : %s" % time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(case.t1 if which == "now" else case.t0)),
           "Driver Version                            : %s" % h.driver,
           "CUDA Version                              : %s" % ("12.2" if old else "12.4"), "",
           "Attached GPUs                             : %d" % len([g for g in h.gpus if not (g.lost and which == "now")])]
    lost_msgs = []
    for g in h.gpus:
        if g.lost and which == "now":
            lost_msgs.append("Unable to determine the device handle for GPU%s: Unknown Error" % bdf_nvml(g.bus))
            continue
        smi_gen = g.gen
        out += ["GPU %s" % bdf_nvml(g.bus),
                "    Product Name                          : %s" % g.model,
                "    Product Architecture                  : %s" % ("Ampere" if "A100" in g.model else "Hopper"),
                "    Persistence Mode                      : Enabled",
                "    GPU UUID                              : %s" % g.uuid,
                "    Minor Number                          : %d" % g.idx,
                "    GPU Reset Status",
                "        Reset Required                    : %s" % ("Yes" if g.remap["pending"] else "No"),
                "        Drain and Reset Recommended       : No",
                "    PCI",
                "        Bus                               : 0x%02X" % g.bus,
                "        Device                            : 0x00",
                "        Domain                            : 0x0000",
                "        Bus Id                            : %s" % bdf_nvml(g.bus),
                "        GPU Link Info",
                "            PCIe Generation",
                "                Max                       : %d" % g.gen_max,
                "                Current                   : %d" % smi_gen,
                "                Device Current            : %d" % smi_gen,
                "                Device Max                : %d" % g.gen_max,
                "                Host Max                  : %d" % g.gen_max,
                "            Link Width",
                "                Max                       : %dx" % g.w_max,
                "                Current                   : %dx" % g.w,
                "        Replays Since Reset               : %d" % snap(g.replay, which),
                "        Replay Number Rollovers           : 0",
                "    Fan Speed                             : N/A",
                "    Performance State                     : %s" % ("P0" if g.busy else "P0")]
        out += reasons_block(g, old)
        sbe = snap(g.sbe, which); dbe = snap(g.dbe, which)
        out += ["    FB Memory Usage",
                "        Total                             : %d MiB" % (81559 if "H100" in g.model else 143771),
                "        Reserved                          : 565 MiB",
                "        Used                              : %d MiB" % (71000 + g.idx * 13 if g.busy else 0),
                "    Utilization",
                "        Gpu                               : %d %%" % g.util.now,
                "        Memory                            : %d %%" % (38 if g.busy else 0),
                "    ECC Errors",
                "        Volatile",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % sbe,
                "            DRAM Uncorrectable            : %d" % dbe,
                "        Aggregate",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % (sbe + g.sbe_agg),
                "            DRAM Uncorrectable            : %d" % dbe,
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
                "            Max                           : %d bank(s)" % (639 - g.remap["corrected"] - g.remap["uncorrected"]),
                "            High                          : %d bank(s)" % (g.remap["corrected"] + g.remap["uncorrected"]),
                "            Partial                       : 0 bank(s)",
                "            Low                           : 0 bank(s)",
                "            None                          : 0 bank(s)",
                "    Temperature",
                "        GPU Current Temp                  : %d C" % round(g.temp.now),
                "        GPU T.Limit Temp                  : %d C" % (87 - round(g.temp.now)),
                "        GPU Shutdown Temp                 : 92 C",
                "        GPU Slowdown Temp                 : 87 C",
                "        GPU Max Operating Temp            : 85 C",
                "        Memory Current Temp               : %d C" % round(g.temp.now - 4 if g.hbm_temp is None else g.hbm_temp),
                "        Memory Max Operating Temp         : 95 C"]
        pw = min(g.power.now, g.enforced + 1.0)
        if old:
            out += ["    Power Readings",
                    "        Power Management                  : Supported",
                    "        Power Draw                        : %.2f W" % pw,
                    "        Power Limit                       : %.2f W" % g.enforced,
                    "        Default Power Limit               : %.2f W" % g.limit,
                    "        Enforced Power Limit              : %.2f W" % g.enforced,
                    "        Min Power Limit                   : 200.00 W",
                    "        Max Power Limit                   : %.2f W" % g.limit]
        else:
            out += ["    GPU Power Readings",
                    "        Power Draw                        : %.2f W" % pw,
                    "        Current Power Limit               : %.2f W" % g.enforced,
                    "        Requested Power Limit             : %.2f W" % g.enforced,
                    "        Default Power Limit               : %.2f W" % g.limit,
                    "        Min Power Limit                   : 200.00 W",
                    "        Max Power Limit                   : %.2f W" % g.limit]
        out += ["    Clocks",
                "        Graphics                          : %d MHz" % g.clock.now,
                "        SM                                : %d MHz" % g.clock.now,
                "        Memory                            : %d MHz" % g.memclock,
                "    Max Clocks",
                "        Graphics                          : %d MHz" % g.maxclock,
                "        SM                                : %d MHz" % g.maxclock,
                "        Memory                            : %d MHz" % g.memclock, ""]
    return "\n".join(lost_msgs + out) + "\n"


def render_lspci(case, h):
    out = []
    devs = [("g", g) for g in h.gpus] + [("n", n) for n in h.nics]
    devs.sort(key=lambda x: x[1].bus)
    for kind, d in devs:
        if kind == "g" and d.lost:
            out += ["%02x:00.0 3D controller: NVIDIA Corporation Device 2330 (rev ff) (prog-if ff)" % d.bus,
                    "\t!!! Unknown header type 7f", ""]
            continue
        if kind == "g":
            head = "%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev a1)" % (d.bus, "2330" if "H100" in d.model else "2335")
            sub = "\tSubsystem: NVIDIA Corporation Device 16c1"
        else:
            head = "%02x:00.0 %s controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % (d.bus, "Infiniband" if d.ll == "InfiniBand" else "Ethernet")
            sub = "\tSubsystem: Mellanox Technologies Device 0023"
        sp = "(ok)" if d.gen == d.gen_max else "(downgraded)"
        wd = "(ok)" if d.w == d.w_max else "(downgraded)"
        out += [head, sub,
                "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR+ FastB2B- DisINTx+",
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                "\t\tDevSta:\tCorrErr%s NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-" % ("+" if d.aer_cor.n > 0 else "-"),
                "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us" % (LSPCI_SPEED[d.gen_max], d.w_max),
                "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
                "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-",
                "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-",
                "\t\tLnkSta:\tSpeed %s %s, Width x%d %s" % (LSPCI_SPEED[d.gen], sp, d.w, wd),
                "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
                "\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+ 2Retimers+ DRS-",
                "\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-",
                "\tCapabilities: [1b8 v2] Advanced Error Reporting",
                "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-",
                "\t\tCESta:\tRxErr%s BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-" % ("+" if d.aer_cor.n > 0 else "-"),
                "\t\tCEMsk:\tRxErr+ BadTLP+ BadDLLP+ Rollover+ Timeout+ AdvNonFatalErr+",
                "\tKernel driver in use: %s" % ("nvidia" if kind == "g" else "mlx5_core"),
                "\tKernel modules: %s" % ("nvidiafb, nouveau, nvidia_drm, nvidia" if kind == "g" else "mlx5_core"), ""]
    return "\n".join(out) + "\n"


def render_dmesg(case, h, style):
    lines = []
    seq = 2000 + case.rng.randint(0, 5000)
    for t, text in sorted(h.dmesg, key=lambda x: x[0]):
        up = t - h.boot
        tm = time.gmtime(int(t))
        if style == "plain":
            lines.append("[%12.6f] %s" % (up, text))
        elif style == "T":
            lines.append("[%s %s %2d %s %d] %s" % (DOW[tm.tm_wday], MON[tm.tm_mon - 1], tm.tm_mday, time.strftime("%H:%M:%S", tm), tm.tm_year, text))
        elif style == "journal":
            lines.append("%s %2d %s %s kernel: %s" % (MON[tm.tm_mon - 1], tm.tm_mday, time.strftime("%H:%M:%S", tm), h.name, text))
        elif style == "kmsg":
            seq += 1
            lines.append("%d,%d,%d,-;%s" % (3 if "Xid" in text or "rror" in text else 6, seq, int(up * 1e6), text))
    return "\n".join(lines) + "\n"


def render_ethtool(case, h, n, which):
    out = ["NIC statistics:"]
    def v(k):
        return snap(n.c[k], which)
    bytes_tx = v("port_xmit_data") * 4; bytes_rx = v("port_rcv_data") * 4
    items = [("rx_packets", v("port_rcv_packets") // 1000), ("tx_packets", v("port_xmit_packets") // 1000),
             ("rx_bytes", bytes_rx // 1000), ("tx_bytes", bytes_tx // 1000),
             ("rx_vport_rdma_unicast_packets", v("port_rcv_packets")), ("rx_vport_rdma_unicast_bytes", bytes_rx),
             ("tx_vport_rdma_unicast_packets", v("port_xmit_packets")), ("tx_vport_rdma_unicast_bytes", bytes_tx),
             ("rx_packets_phy", v("port_rcv_packets") + v("port_rcv_packets") // 1000), ("tx_packets_phy", v("port_xmit_packets") + v("port_xmit_packets") // 1000),
             ("rx_bytes_phy", bytes_rx + bytes_rx // 990), ("tx_bytes_phy", bytes_tx + bytes_tx // 990),
             ("rx_crc_errors_phy", v("rx_crc_errors_phy")), ("rx_symbol_err_phy", v("rx_symbol_err_phy")),
             ("rx_discards_phy", v("rx_discards_phy")), ("tx_discards_phy", 0), ("rx_out_of_buffer", v("rx_out_of_buffer")),
             ("link_down_events_phy", v("link_down_events_phy")), ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0),
             ("rx_prio3_bytes", bytes_rx), ("rx_prio3_packets", v("port_rcv_packets")),
             ("tx_prio3_bytes", bytes_tx), ("tx_prio3_packets", v("port_xmit_packets")),
             ("rx_prio3_pause", v("rx_prio3_pause")), ("rx_prio3_pause_duration", v("rx_prio3_pause_duration")),
             ("rx_prio3_pause_transition", v("rx_prio3_pause")), ("rx_prio3_discards", v("rx_prio3_discards")),
             ("tx_prio3_pause", v("tx_prio3_pause")), ("tx_prio3_pause_duration", v("tx_prio3_pause_duration")),
             ("tx_pause_storm_warning_events", v("tx_pause_storm_warning_events")),
             ("tx_pause_storm_error_events", v("tx_pause_storm_error_events")),
             ("outbound_pci_stalled_wr_events", v("outbound_pci_stalled_wr_events")),
             ("module_high_temp", 0), ("module_unplug", 0)]
    for k, x in items:
        out.append("     %s: %d" % (k, x))
    return "\n".join(out) + "\n"


def render_fec(case, h, n, which):
    c = snap(n.fec_corr, which); u = snap(n.fec_unc, which)
    lanes_c = [c // 4 + (1 if i < c % 4 else 0) for i in range(4)]
    if getattr(n, "fec_lane", None) is not None:
        hot = n.fec_lane; base = snap(Ctr(n.fec_corr.b), which) // 4
        lanes_c = [base] * 4; lanes_c[hot] = c - base * 3
    lanes_u = [0, 0, 0, 0]
    if u:
        lanes_u[getattr(n, "fec_lane", 0) or 0] = u
    out = ["FEC parameters for %s:" % n.netdev, "Supported/Configured FEC encodings: Auto RS", "Active FEC encoding: RS", "Statistics:",
           "  corrected_blocks: %d" % c] + ["    Lane %d: %d" % (i, x) for i, x in enumerate(lanes_c)] + \
          ["  uncorrectable_blocks: %d" % u] + ["    Lane %d: %d" % (i, x) for i, x in enumerate(lanes_u)]
    return "\n".join(out) + "\n"


def render_ibstat(case, h):
    out = []
    for n in h.nics:
        out += ["CA '%s'" % n.ibdev, "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.41.1000",
                "\tHardware version: 0", "\tNode GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 7 + len(h.name)),
                "\tSystem image GUID: 0x%016x" % (0xa088c20300000000 + len(h.name)), "\tPort 1:",
                "\t\tState: %s" % ("Active" if n.state == "ACTIVE" else "Down"),
                "\t\tPhysical state: %s" % n.phys, "\t\tRate: %d" % n.rate,
                "\t\tBase lid: %d" % (n.bus + 100) if n.ll == "InfiniBand" else "\t\tBase lid: 0",
                "\t\tLMC: 0", "\t\tSM lid: %d" % (1 if n.ll == "InfiniBand" else 0),
                "\t\tCapability mask: 0x%s" % ("a751e848" if n.ll == "InfiniBand" else "00010000"),
                "\t\tPort GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 7 + len(h.name)),
                "\t\tLink layer: %s" % n.ll]
    return "\n".join(out) + "\n"


def render_top(case, h):
    tm = time.gmtime(case.t1)
    up_days = int((case.t1 - h.boot) // 86400)
    us = sum(p[1] for p in h.procs) / h.ncpu
    lines = ["top - %s up %d days,  3:12,  0 users,  load average: %.2f, %.2f, %.2f" % (time.strftime("%H:%M:%S", tm), up_days, h.load1.now, h.load1.now * 0.97, h.load1.now * 0.9),
             "Tasks: %d total,   %d running, %d sleeping,   0 stopped,   0 zombie" % (900 + len(h.procs), len(h.procs), 880),
             "%%Cpu(s): %4.1f us,  %3.1f sy,  0.0 ni, %4.1f id,  0.0 wa,  0.0 hi,  0.1 si,  %3.1f st" % (us * 0.9, us * 0.1, max(0.0, 100 - us - h.steal), h.steal),
             "MiB Mem : 2063842.1 total, 1411210.4 free, %8.1f used, 298118.3 buff/cache" % (354513.4 if h.psi_mem[0] < 5 else 1689944.2),
             "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1702410.7 avail Mem", "",
             "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    pid = 41210
    for name, cpu, mem in sorted(h.procs, key=lambda p: -p[1]):
        pid += 17
        lines.append("%7d %-8s  20   0  %6.1fg  %5.1fg  1.2g %s %5.1f  %4.1f %9s %s" % (
            pid, "root" if name != "python3" else "train", 180.3, mem * 20, "R" if cpu > 50 else "S", cpu, mem, "%d:%02d.%02d" % (int(cpu) * 3, pid % 60, pid % 100), name))
    return "\n".join(lines) + "\n"


def render_psi(vals, total, full=True):
    a, b, c = vals
    s = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (a, b, c, total)
    if full:
        s += "full avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (a * 0.6 if a > 3 else 0.0, b * 0.6 if b > 3 else 0.0, c * 0.6 if c > 3 else 0.0, total // 3 if a > 3 else 0)
    return s


def render_nvlink_e(case, h, which):
    out = []
    for g in h.gpus:
        if g.lost and which == "now":
            continue
        out.append("GPU %d: %s (UUID: %s)" % (g.idx, g.model, g.uuid))
        for li, l in enumerate(g.nvl):
            out.append("\t Link %d: Replay Errors: %d" % (li, snap(l["replay"], which)))
            out.append("\t Link %d: Recovery Errors: %d" % (li, snap(l["recovery"], which)))
            out.append("\t Link %d: CRC Errors: %d" % (li, snap(l["crc_flit"], which)))
    return "\n".join(out) + "\n"


def render_nvml(case, h):
    devs = []
    for g in h.gpus:
        if g.lost:
            devs.append({"index": g.idx, "pci_bus_id": bdf_nvml(g.bus), "uuid": g.uuid, "error": "GPU is lost"})
            continue
        key = "nvmlDeviceGetCurrentClocksThrottleReasons" if case.old_driver else "nvmlDeviceGetCurrentClocksEventReasons"
        devs.append({"index": g.idx, "uuid": g.uuid, "pci_bus_id": bdf_nvml(g.bus), "name": g.model,
                     "nvmlDeviceGetCurrPcieLinkGeneration": g.gen, "nvmlDeviceGetMaxPcieLinkGeneration": g.gen_max,
                     "nvmlDeviceGetCurrPcieLinkWidth": g.w, "nvmlDeviceGetMaxPcieLinkWidth": g.w_max,
                     "nvmlDeviceGetPcieReplayCounter": g.replay.n,
                     "nvmlDeviceGetTemperature": int(round(g.temp.now)),
                     "nvmlDeviceGetPowerUsage": int(min(g.power.now, g.enforced + 1.0) * 1000),
                     "nvmlDeviceGetEnforcedPowerLimit": int(g.enforced * 1000),
                     "nvmlDeviceGetClockInfo": {"sm": int(g.clock.now), "mem": g.memclock},
                     "nvmlDeviceGetMaxClockInfo": {"sm": g.maxclock, "mem": g.memclock},
                     key: int(g.reasons.now),
                     "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g.sbe.n, "uncorrected_volatile": g.dbe.n},
                     "nvmlDeviceGetRemappedRows": dict(g.remap)})
    ev = []
    for g in h.gpus:
        for t, x in getattr(g, "xids", []):
            if case.t0 - 3600 <= t <= case.t1:
                ev.append({"device": g.idx, "type": "XidCriticalError", "data": x, "time": iso(t)})
    return json.dumps({"driver_version": h.driver, "devices": devs, "events": ev}, indent=1, sort_keys=True) + "\n"


# ---------------------------------------------------------------- bundle writer
def build_files(case):
    F = {}
    inc = {"schema": "forensic.bundle/v1", "id": case.id, "title": case.title,
           "window": {"start": iso(case.t0), "end": iso(case.t1)}, "job": case.job, "reported": case.reported}
    if case.alerts:
        inc["alerts"] = case.alerts
    F["incident.json"] = json.dumps(inc, indent=2, sort_keys=True) + "\n"
    topo = {"hosts": [], "switches": []}
    for h in case.hosts:
        topo["hosts"].append({"name": h.name, "rack": h.rack,
                              "gpus": [{"index": g.idx, "pci_bus_id": bdf_nvml(g.bus), "uuid": g.uuid} for g in h.gpus],
                              "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": bdf_sys(n.bus), "port": 1,
                                        "link_layer": n.ll, "switch": n.switch, "switch_port": n.port} for n in h.nics]})
    if case.explicit_ranks is not None:
        topo["ranks"] = [{"rank": r, "host": hn, "gpu": g} for r, hn, g in case.explicit_ranks]
    for sn in sorted(case.switches):
        s = case.switches[sn]
        topo["switches"].append({"name": sn, "tier": s.tier,
                                 "links": [{"port": p, "peer": peer, "peer_port": pp} for p, peer, pp in sorted(s.links, key=lambda x: port_key(x[0]))]})
    F["topology.json"] = json.dumps(topo, indent=1, sort_keys=True) + "\n"
    if case.steps:
        head = "step,rank,start_unix,duration_s" + (",compute_s" if case.steps["with_compute"] else "") + ",loss,grad_norm" + (",param_checksum" if case.steps["checksum"] else "")
        out = [head]
        for row in case.steps["rows"]:
            parts = ["%d" % row[0], "%d" % row[1], "%.3f" % row[2], "%.4f" % row[3]]
            i = 4
            if case.steps["with_compute"]:
                parts.append("%.4f" % row[i]); i += 1
            parts.append("%.4f" % row[i]); parts.append("%.3f" % row[i + 1]); i += 2
            if case.steps["checksum"]:
                parts.append(row[i])
            out.append(",".join(parts))
        F["job/steps.csv"] = "\n".join(out) + "\n"
    for name, text in case.logs.items():
        F["job/logs/" + name] = text
    node_hosts = case.hosts if case.node_hosts is None else [h for h in case.hosts if h.name in case.node_hosts]
    F["metrics/dcgm.om"] = render_dcgm(case, getattr(case, "dcgm_hosts", None))
    F["metrics/node.om"] = render_node_om(case, getattr(case, "node_metric_hosts", None) or (case.hosts if len(case.hosts) <= 16 else node_hosts))
    eth_sw = [sn for sn in sorted(case.switches) if case.switches[sn].vendor != "ib"]
    if eth_sw:
        F["metrics/switch.om"] = render_snmp(case, eth_sw)
    for sn in sorted(case.switches):
        s = case.switches[sn]
        if s.vendor == "sonic":
            F["switches/%s/cmd/show-pfc-counters.txt" % sn] = render_sonic_pfc(case, s)
            F["switches/%s/cmd/show-pfcwd-stats.txt" % sn] = render_sonic_pfcwd(case, s)
            F["switches/%s/cmd/show-interfaces-counters.txt" % sn] = render_sonic_ifcounters(case, s)
    for h in node_hosts:
        b = "nodes/%s/" % h.name
        col = {"before": case.t0, "now": case.t1, "boot": h.boot}
        F[b + "collected.json"] = json.dumps({k: v for k, v in col.items() if k in case.collected_keys}, sort_keys=True) + "\n"
        for which, pre in (("now", b), ("before", b + "before/")):
            for rel, txt in node_sys(case, h, which).items():
                F[pre + rel] = txt
            F[pre + "cmd/nvidia-smi-q.txt"] = render_smi_q(case, h, which)
            F[pre + "cmd/nvidia-smi-nvlink-e.txt"] = render_nvlink_e(case, h, which)
            for n in h.nics:
                if n.ll == "Ethernet":
                    F[pre + "cmd/ethtool-S-%s.txt" % n.netdev] = render_ethtool(case, h, n, which)
                    F[pre + "cmd/ethtool-I-show-fec-%s.txt" % n.netdev] = render_fec(case, h, n, which)
        F[b + "cmd/lspci-vv.txt"] = render_lspci(case, h)
        F[b + "cmd/dmesg.txt"] = render_dmesg(case, h, getattr(h, "dmesg_style", None) or case.dmesg_style)
        F[b + "cmd/ibstat.txt"] = render_ibstat(case, h)
        F[b + "cmd/top.txt"] = render_top(case, h)
        F[b + "cmd/pressure-cpu.txt"] = render_psi(h.psi_cpu, h.psi_cpu_total.n, full=not case.old_kernel)
        F[b + "cmd/pressure-memory.txt"] = render_psi(h.psi_mem, int(h.psi_mem[2] * 1e7) + 4412)
        F[b + "cmd/pressure-io.txt"] = render_psi(h.psi_io, 918273645)
        if h.sel:
            F[b + "cmd/ipmitool-sel-elist.txt"] = "\n".join(
                "%4x | %s | %s | %s | %s | %s" % (i + 1, time.strftime("%m/%d/%Y", time.gmtime(t)), time.strftime("%H:%M:%S", time.gmtime(t)), sen, ev, st)
                for i, (t, sen, ev, st) in enumerate(sorted(h.sel))) + "\n"
        if h.fans:
            F[b + "cmd/ipmitool-sdr-type-fan.txt"] = "\n".join(
                "%-16s | %s | %-3s | %s | %s" % (nm, hx, st, ent, rd) for nm, hx, st, ent, rd in h.fans) + "\n"
        F[b + "nvml.json"] = render_nvml(case, h)
        for rel, txt in h.cmd_extra.items():
            F[b + rel] = txt
    F.update(case.files)
    for m in list(F):
        if any(m == x or m.startswith(x.rstrip("*")) and x.endswith("*") for x in case.missing):
            del F[m]
    return F


def write_case(case, outdir):
    F = build_files(case)
    root = os.path.join(outdir, case.id)
    for rel in sorted(F):
        data = F[rel].encode()
        path = os.path.join(root, "bundle", rel)
        if rel in case.gz or any(rel.startswith(x.rstrip("*")) and x.endswith("*") for x in case.gz):
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as z:
                z.write(data)
            data = buf.getvalue(); path += ".gz"
        if rel in case.truncate:
            data = data[:case.truncate[rel]]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    rc, comp = case.truth
    with open(os.path.join(root, "truth.json"), "w") as f:
        f.write(json.dumps({"root_cause": rc, "component": comp}, sort_keys=True) + "\n")
