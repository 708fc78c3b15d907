"""Fleet model and renderers for the "fresh" evaluation set.

A Case holds one synthetic fleet (hosts, GPUs, NICs, switches), a time window, and the
per-entity effects of one fault (plus decoys).  Everything rendered into the bundle is
derived from the same functions of time, so every file tells one story.
Standard library only; all randomness comes from a per-case random.Random.
"""
import gzip
import io
import json
import os
import random
import time as _time

MODELS = {
    "A100": dict(name="NVIDIA A100-SXM4-80GB", dev="20b2", gen=4, speed="16.0 GT/s PCIe", old_speed="16 GT/s",
                 lspci="16GT/s", sm=1410, mem=1593, tdp=400, slow=85, shut=92, driver="535.161.08"),
    "H100": dict(name="NVIDIA H100 80GB HBM3", dev="2330", gen=5, speed="32.0 GT/s PCIe", old_speed="32 GT/s",
                 lspci="32GT/s", sm=1980, mem=2619, tdp=700, slow=87, shut=92, driver="550.90.07"),
    "H200": dict(name="NVIDIA H200", dev="2335", gen=5, speed="32.0 GT/s PCIe", old_speed="32 GT/s",
                 lspci="32GT/s", sm=1980, mem=3201, tdp=700, slow=87, shut=92, driver="560.35.03"),
}
GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}
GEN_OLD = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s"}
GEN_LSPCI = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}
GPU_BUS8 = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
GPU_BUS4 = [0x07, 0x0f, 0x47, 0x4e]
NIC_BUS8 = [0x1a, 0x3c, 0x4d, 0x5e, 0x9c, 0xbc, 0xcc, 0xdc]
NIC_BUS4 = [0x0c, 0x13, 0x4b, 0x52]
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

# clock event reason bits
IDLE, SW_POWER, HW_SLOW, SW_THERM, HW_THERM, HW_BRAKE = 0x1, 0x4, 0x8, 0x20, 0x40, 0x80


def iso(t):
    return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(int(t)))


def ctime(t):
    g = _time.gmtime(int(t))
    return "%s %s %2d %02d:%02d:%02d %d" % (DOW[g.tm_wday], MON[g.tm_mon - 1], g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec, g.tm_year)


def jtime(t):
    g = _time.gmtime(int(t))
    return "%s %2d %02d:%02d:%02d" % (MON[g.tm_mon - 1], g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec)


class Counter:
    """Monotone integer counter: base + rate*(t-ref) + extra*(t-onset)+ for t>onset, + jumps."""

    def __init__(self, base, rate=0.0, extra=0.0, onset=None, jumps=()):
        self.base, self.rate, self.extra, self.onset, self.jumps = base, rate, extra, onset, list(jumps)
        self.ref = 0

    def at(self, t):
        if self.onset is not None and t > self.onset:
            v = self.base + self.rate * (self.onset - self.ref) + (self.rate + self.extra) * (t - self.onset)
        else:
            v = self.base + self.rate * (t - self.ref)
        for (tj, n) in self.jumps:
            if t >= tj:
                v += n
        return int(v)


class Gpu:
    def __init__(self, index, bus, uuid):
        self.index, self.bus, self.uuid = index, bus, uuid
        self.nvml_bdf = "00000000:%02X:00.0" % bus
        self.sys_bdf = "0000:%02x:00.0" % bus
        self.lspci_bdf = "%02x:00.0" % bus
        self.xid_tag = "PCI:0000:%02x:00" % bus
        # state
        self.slow = 1.0            # compute multiplier once onset
        self.slow_onset = None
        self.clock = None          # sm clock while affected (MHz)
        self.temp_add = 0.0        # degrees added when affected
        self.temp_base = None
        self.power_limit = None    # enforced limit W (None -> tdp)
        self.power_cap = None      # draw capped at W while affected
        self.reasons = 0
        self.therm_viol = 0.0      # ns per s while affected
        self.power_viol = 0.0
        self.gen = None            # current pcie gen (None -> max)
        self.width = 16
        self.replay = Counter(0)
        self.sbe = Counter(0)
        self.dbe = Counter(0)
        self.remap_cor = Counter(0)
        self.remap_unc = Counter(0)
        self.remap_pending = False
        self.nvl_crc = Counter(0)
        self.nvl_replay = Counter(0)
        self.nvl_recovery = Counter(0)
        self.nvl_bad_links = []
        self.xid = 0               # sticky last XID before window
        self.xid_events = []       # (t, code)
        self.lost_at = None
        self.warmup_until = None   # benign warm-up slowness
        self.warmup_slow = 1.0
        self.idle_gen = False      # spare GPU idling at lower gen
        self.tviol_base = 0
        self.pviol_base = 0
        self.sbe_agg_extra = 0
        self.nvml_event = True


class Nic:
    def __init__(self, ibdev, netdev, bus, ll, switch, port, rng):
        self.ibdev, self.netdev, self.bus, self.ll = ibdev, netdev, bus, ll
        self.switch, self.port = switch, port
        self.sys_bdf = "0000:%02x:00.0" % bus
        self.lspci_bdf = "%02x:00.0" % bus
        self.rate = "400 Gb/sec (4X NDR)" if ll == "InfiniBand" else "400 Gb/sec (4X NDR)"
        self.gen, self.width, self.max_width = 5, 16, 16
        self.traffic = 1.0          # fraction of normal traffic
        self.traffic_after = None   # (onset, fraction)
        self.c = {}
        self.carrier = Counter(2)
        self.rng = rng
        self.flaps = []             # times of link flaps
        self.state_now = ("4: ACTIVE", "5: LinkUp")


class Host:
    def __init__(self, name, rack):
        self.name, self.rack = name, rack
        self.gpus, self.nics = [], []
        self.spare = False
        self.boot = None
        self.load = 28.0
        self.psi_cpu = 0.4          # some avg10 baseline
        self.psi_cpu_onset = None
        self.psi_cpu_hot = None
        self.psi_mem = 0.0
        self.psi_io = 0.1
        self.top_extra = []         # (cmd, cpu%, mem%)
        self.sel = []               # (t, sensor, event, state)
        self.fans_bad = []
        self.events = []            # dmesg events (t, text)
        self.dmesg_form = "plain"
        self.drop = set()           # files deliberately missing
        self.truncate = set()       # files written as truncated gzip
        self.empty = set()          # files written empty
        self.smi_form = "event"     # event | throttle | none
        self.nvml = True
        self.gz = set()             # cmd names to gzip
        self.no_boot = False
        self.nvlink_e = False
        self.fec = False
        self.top = False
        self.psi_files = False
        self.sel = None
        self.no_node_dir = False
        self.psi_base = 0.0
        self.load_hot = None
        self.kernel = "5.15.0-105-generic"

    def psi_cpu_now(self, c):
        return self.psi_cpu_hot if (self.psi_cpu_onset is not None and c.now >= self.psi_cpu_onset) else self.psi_cpu

    def boot_events(self):
        b = self.boot
        ev = [(b + 0.000001, "Linux version %s (buildd@lcy02-amd64-051) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024" % self.kernel),
              (b + 0.012, "Command line: BOOT_IMAGE=/vmlinuz-%s root=UUID=0b9c1e7a ro iommu=pt pci=realloc" % self.kernel)]
        for i, n in enumerate(self.nics):
            ev.append((b + 6.1 + 0.01 * i, "mlx5_core %s: firmware version: 28.41.1000" % n.sys_bdf))
        ev.append((b + 9.4, "nvidia: loading out-of-tree module taints kernel."))
        ev.append((b + 9.6, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s  Fri May 31 09:35:42 UTC 2024" % self.driver))
        for i, n in enumerate(self.nics):
            ev.append((b + 21.3 + 0.02 * i, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n.sys_bdf, n.ibdev)))
        return ev


class Case:
    def __init__(self, cid, seed, root_cause, title):
        self.id, self.rc, self.title = cid, root_cause, title
        self.rng = random.Random(seed)
        self.component = None
        self.hosts, self.switches = [], []
        self.reported = ""
        self.alerts = []
        self.files = {}  # relpath -> bytes
        self.fmt = dict(steps="csv", compute=True, checksum=False, loss=True, every=20, dcgm_gz=False,
                        host_label="Hostname", dcgm_type="gauge", node_gz=False, old_sysfs=False, ranks=True,
                        shuffle_rows=False, metric_step=60, drop_rows=0.0, topology=True, switch_metrics=True,
                        dcgm_prof=True, dcgm_violation=False, dcgm_ecc=False, dcgm_nvlink=False,
                        split_dcgm=False, node_metrics=True, dcgm_metrics=True)
        # job
        self.base_compute = 2.0
        self.base_comm = 0.45
        self.comm_factor = []   # (onset, factor)
        self.input_stall = None  # (onset, prob, min, max)
        self.sdc = None          # (rank, step)
        self.log_lines = []      # (t, text) training log
        self.nccl_env = []
        self.restart = None      # (t_crash, t_resume, resume_step)
        self.hang_at = None
        self.job_name = "llm-pretrain"
        self.step0 = 40000
        self.no_node_exporter = set()
        self.leaf_uplink_bps = {}
        self.uplink = {}           # (leaf, k, key) -> Counter
        self.switch_cmds = {}
        self.extra_files = {}
        self.remove_files = []
        self.logs = {}
        self.pre = None
        self.post = None
        self.slow_gpus = []

    def prepare(self):
        if self.pre:
            self.pre()
        for ln in self.leaves:
            if ln not in self.leaf_uplink_bps:
                nh = sum(1 for h in self.job_hosts if h.nics and h.nics[0].switch == ln)
                self.leaf_uplink_bps[ln] = nh * len(self.job_hosts[0].nics) * 1.0e9
            if (ln, 0, "ifHCOutOctets") not in self.uplink:
                self.set_uplinks(ln, [0.25 + self.rng.uniform(-0.01, 0.01) for _ in range(4)])
        self.finalize_counters()
        self.slow_gpus = [g for h in self.hosts for g in h.gpus if g.slow != 1.0 or g.warmup_until]

    def max_slow(self, t):
        m = 1.0
        for g in self.slow_gpus:
            m = max(m, self.gpu_slow(g, t))
        return m

    def uplink_counter(self, leaf, k, key, t):
        return self.uplink[(leaf, k, key)].at(t)

    def set_uplinks(self, leaf, shares, onset=None, new_shares=None, discard_rates=None):
        bps = self.leaf_uplink_bps[leaf]
        for k in range(4):
            s0 = shares[k]
            s1 = new_shares[k] if new_shares else s0
            for key in ("ifHCOutOctets", "ifHCInOctets"):
                c = Counter(self.rng.randint(10 ** 14, 10 ** 15), rate=bps * s0, extra=bps * (s1 - s0), onset=onset)
                c.ref = self.t0 - 7200
                self.uplink[(leaf, k, key)] = c
            dr = discard_rates[k] if discard_rates else 0.0
            c = Counter(self.rng.randint(0, 40), rate=0.0, extra=dr, onset=onset)
            self.uplink[(leaf, k, "ifOutDiscards")] = c

    # ---------------------------------------------------------------- fleet
    def build(self, n_hosts, gpn, model, naming, ll="InfiniBand", nics=None, ibnames=None, netnames=None,
              start="2026-11-18T01:40:00Z", minutes=90, spares=0, leaf_names=None, hosts_per_leaf=8):
        rng = self.rng
        self.model = model
        self.m = MODELS[model]
        self.gpn = gpn
        self.t0 = int(_time.mktime(_time.strptime(start, "%Y-%m-%dT%H:%M:%SZ"))) - _time.timezone
        self.t1 = self.t0 + minutes * 60
        self.before, self.now = self.t0, self.t1
        nn = nics if nics else (8 if gpn == 8 else 4)
        gbus = GPU_BUS8 if gpn == 8 else GPU_BUS4
        nbus = NIC_BUS8 if nn == 8 else NIC_BUS4
        ibnames = ibnames or ["mlx5_%d" % i for i in range(nn)]
        if netnames is None:
            netnames = ["ibp%ds0" % b for b in nbus] if ll == "InfiniBand" else ["ens%df0np0" % (i + 1) for i in range(nn)]
        nleaf = max(1, (n_hosts + spares + hosts_per_leaf - 1) // hosts_per_leaf)
        leaf_names = leaf_names or ["leaf-%02d" % (i + 1) for i in range(nleaf)]
        spines = ["spine-%02d" % (i + 1) for i in range(4)]
        self.leaves = leaf_names[:nleaf]
        self.spines = spines
        for li, ln in enumerate(self.leaves):
            self.switches.append(dict(name=ln, tier="leaf", links=[
                dict(port="Ethernet%d" % (256 + 8 * k), peer=spines[k], peer_port="Ethernet%d" % (8 * li)) for k in range(4)]))
        for k, sn in enumerate(spines):
            self.switches.append(dict(name=sn, tier="spine", links=[
                dict(port="Ethernet%d" % (8 * li), peer=ln, peer_port="Ethernet%d" % (256 + 8 * k)) for li, ln in enumerate(self.leaves)]))
        for h in range(n_hosts + spares):
            name = naming(h)
            host = Host(name, "r%02d" % (3 + h // 4))
            host.boot = self.t0 - rng.randint(3, 40) * 86400 - rng.randint(0, 86000)
            for g in range(gpn):
                u = "GPU-%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),
                                                        rng.getrandbits(16), rng.getrandbits(48))
                gp = Gpu(g, gbus[g], u)
                gp.temp_base = rng.uniform(52, 64)
                host.gpus.append(gp)
            leaf = self.leaves[h // hosts_per_leaf]
            for i in range(nn):
                nic = Nic(ibnames[i], netnames[i], nbus[i], ll, leaf, "Ethernet%d" % (4 * ((h % hosts_per_leaf) * nn + i)), rng)
                if model == "A100":
                    nic.rate = "200 Gb/sec (4X HDR)"
                    nic.gen = 4
                host.nics.append(nic)
            host.load = rng.uniform(20, 34)
            host.driver = self.m["driver"]
            host.psi_base = rng.uniform(1000, 90000)
            if h >= n_hosts:
                host.spare = True
            self.hosts.append(host)
        self.job_hosts = [h for h in self.hosts if not h.spare]
        self.ranks = []
        order = list(self.job_hosts)
        for hi, h in enumerate(order):
            for g in range(gpn):
                self.ranks.append((hi * gpn + g, h, h.gpus[g]))
        self.nranks = len(self.ranks)

    def host(self, i):
        return self.hosts[i]

    def rank_of(self, host, gi):
        for r, h, g in self.ranks:
            if h is host and g.index == gi:
                return r
        return None

    # ---------------------------------------------------------------- physics
    def gpu_slow(self, g, t):
        f = 1.0
        if g.slow_onset is not None and t >= g.slow_onset:
            f *= g.slow
        if g.warmup_until is not None and t < g.warmup_until:
            f *= g.warmup_slow
        return f

    def gpu_affected(self, g, t):
        return g.slow_onset is not None and t >= g.slow_onset

    def comm(self, t):
        f = 1.0
        for (on, fac) in self.comm_factor:
            if t >= on:
                f *= fac
        return self.base_comm * f

    def finalize_counters(self):
        """Create NIC counters from traffic (integrals of rates)."""
        rng = self.rng
        for h in self.hosts:
            for n in h.nics:
                bps = 0 if h.spare else rng.uniform(9.0e9, 11.0e9)  # bytes/s average both ways
                frac = n.traffic
                base_words = rng.randint(10 ** 12, 10 ** 13)
                on, f2 = n.traffic_after if n.traffic_after else (None, frac)
                for key in ("port_rcv_data", "port_xmit_data"):
                    c = Counter(base_words + rng.randint(0, 10 ** 11), rate=bps * frac / 4.0, extra=bps * (f2 - frac) / 4.0, onset=on)
                    c.ref = self.t0 - 7200
                    n.c.setdefault(key, c)
                for key, b in (("port_rcv_packets", 0), ("port_xmit_packets", 0)):
                    c = Counter(base_words // 1100 + rng.randint(0, 10 ** 8), rate=bps * frac / 4096.0, extra=bps * (f2 - frac) / 4096.0, onset=on)
                    c.ref = self.t0 - 7200
                    n.c.setdefault(key, c)
                c = Counter(rng.randint(10 ** 9, 5 * 10 ** 9), rate=0 if h.spare else rng.uniform(2e4, 6e4))
                c.ref = self.t0 - 7200
                n.c.setdefault("port_xmit_wait", c)
                for key in ("symbol_error", "port_rcv_errors", "link_downed", "link_error_recovery",
                            "local_link_integrity_errors", "excessive_buffer_overrun_errors", "port_xmit_discards",
                            "port_rcv_remote_physical_errors", "VL15_dropped"):
                    n.c.setdefault(key, Counter(0))
                for key in ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
                            "out_of_buffer", "duplicate_request", "implied_nak_seq_err"):
                    n.c.setdefault(key, Counter(rng.randint(0, 3)))
                if n.ll == "Ethernet":
                    for key in ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"):
                        c = Counter(rng.randint(10 ** 4, 10 ** 6), rate=0 if h.spare else rng.uniform(0.5, 3))
                        c.ref = self.t0 - 7200
                        n.c.setdefault(key, c)
                    for key in ("rx_prio3_pause", "tx_prio3_pause"):
                        c = Counter(rng.randint(100, 5000), rate=0 if h.spare else rng.uniform(0.0, 0.05))
                        c.ref = self.t0 - 7200
                        n.c.setdefault(key, c)
                    for key in ("rx_prio3_pause_duration", "tx_prio3_pause_duration"):
                        src = n.c[key.replace("_duration", "")]
                        n.c.setdefault(key, Counter(src.base * 3, rate=src.rate * 3, extra=src.extra * 40, onset=src.onset))
                        n.c[key].ref = src.ref
                    for key in ("tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_discards_phy",
                                "rx_out_of_buffer", "link_down_events_phy", "rx_symbol_err_phy", "rx_crc_errors_phy",
                                "tx_discards_phy"):
                        n.c.setdefault(key, Counter(0))

    # ---------------------------------------------------------------- GPU readings
    def gpu_reading(self, h, g, t):
        m = self.m
        rng = random.Random("%s|%s|%d|%d" % (self.id, h.name, g.index, int(t)))
        aff = self.gpu_affected(g, t)
        lost = g.lost_at is not None and t >= g.lost_at
        spare = h.spare
        hung = self.hang_at is not None and t >= self.hang_at
        temp = g.temp_base + (g.temp_add if aff else 0.0) + rng.uniform(-1.2, 1.2)
        clock = m["sm"]
        reasons = 0
        if spare:
            temp = g.temp_base - 18 + rng.uniform(-1, 1)
            clock = 345
            reasons = IDLE
        elif aff and g.clock:
            clock = g.clock + rng.choice([-15, 0, 0, 15])
        if aff:
            reasons |= g.reasons
        limit = g.power_limit or m["tdp"]
        if spare:
            power = 0.11 * m["tdp"]
        else:
            power = rng.uniform(0.78, 0.90) * m["tdp"]
            if aff and g.power_cap:
                power = min(power, g.power_cap) if g.power_cap >= limit else g.power_cap * rng.uniform(0.985, 1.0)
            elif aff and g.clock:
                power *= g.clock / m["sm"]
        if hung and not spare:
            power = 0.35 * m["tdp"]
        dur = self.base_compute * 1.3
        comp = self.base_compute * self.gpu_slow(g, t)
        tensor = 0.0 if spare or hung else min(0.92, 0.58 * comp / max(dur, comp * 1.05))
        util = 0 if spare else 100
        return dict(temp=temp, clock=clock, reasons=reasons, power=power, limit=limit, tensor=tensor, util=util, lost=lost)

    def gpu_gen(self, h, g):
        if g.gen:
            return g.gen
        if g.idle_gen:
            return 1
        return self.m["gen"]


_MADE = set()


def write_bytes(path, data):
    d = os.path.dirname(path)
    if d not in _MADE:
        os.makedirs(d, exist_ok=True)
        _MADE.add(d)
    with open(path, "wb") as f:
        f.write(data)


def gz(data):
    bio = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=bio, mtime=0, compresslevel=6) as f:
        f.write(data)
    return bio.getvalue()
