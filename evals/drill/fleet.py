"""One physical model per incident: hosts, GPUs, NICs, links, switches, job.  Every source is
printed from this model (render.py), so the same counter read from two places agrees."""
import zlib, datetime

GPU_MODELS = {
    # name, max sm clk, mem clk, power limit W, pcie gen, idle W, typical busy W
    "A100": ("NVIDIA A100-SXM4-80GB", 1410, 1593, 400, 4, 62, 385),
    "H100": ("NVIDIA H100 80GB HBM3", 1980, 2619, 700, 5, 72, 680),
    "H200": ("NVIDIA H200", 1980, 3201, 700, 5, 78, 690),
}
BUS8 = {"A100": [0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd],
        "H100": [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb],
        "H200": [0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb]}
NICBUS8 = [0x1a, 0x2b, 0x3c, 0x5e, 0x9c, 0xac, 0xbc, 0xdc]
SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}
SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}


def nz(key, t=0):
    """deterministic noise in [-1, 1) from a key and a time"""
    return (zlib.crc32(("%s|%s" % (key, t)).encode()) % 20001) / 10000.0 - 1.0


def val(spec, t):
    """numbers are constant; ('s', a, b, t0) steps from a to b at t0; ('c', base, r0, r1, t0, tref)
    is a counter: base at tref, rising r0 per s, plus r1 per s after t0; ('w', a, b, t0, t1): b only
    between t0 and t1"""
    if not isinstance(spec, tuple):
        return spec
    k = spec[0]
    if k == "s":
        return spec[1] if t < spec[3] else spec[2]
    if k == "w":
        return spec[2] if spec[3] <= t < spec[4] else spec[1]
    if k == "m":
        for t0, t1, v in spec[2]:
            if t0 <= t < t1:
                return v
        return spec[1]
    if k == "c":
        _, base, r0, r1, t0, tref = spec
        return int(base + r0 * max(0, t - tref) + r1 * max(0, t - t0))
    raise ValueError(spec)


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dt(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc)


class Case:
    def __init__(self, cid, rng, start, minutes=90, base_min=60, step=300):
        self.id = cid
        self.rng = rng
        self.S = start
        self.E = start + minutes * 60
        self.T0 = start + 30 * 60          # default fault onset
        self.M0 = start - base_min * 60    # metrics begin (baseline)
        self.mstep = step
        self.hosts = []
        self.switches = {}
        self.links = []                    # dicts, see link()
        self.ranks = None
        self.write_ranks = True
        self.gpn = 8
        self.title = ""
        self.reported = ""
        self.alerts = []
        self.job = "job"
        self.truth = ("healthy", None)
        self.missing = []                  # relative paths to drop
        self.truncate = []                 # relative paths to cut short
        self.gz = {"metrics/", "job/steps.csv"}  # relative path patterns to gzip
        self.gz_all_cmd = False
        self.steps = dict(c0=4.2, m0=1.3, log_every=10, compute_col=True, loss=True, checksum=False,
                          comm=1.0, data_wait=0.0, hang_at=None, restart=None, drop_ranks=(),
                          job_start=None, extra_cols=())
        self.dcgm = dict(families="std", label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                         file="dcgm.om", extra=(), stop={}, hosts=None)
        self.node_metrics = dict(on=True, file="node.om", ib=True, cpu=False, instance="name")
        self.snmp = dict(on=False, file="switch-ports.om", ports=None)
        self.logs = {}                     # name -> list of lines
        self.sonic = {}                    # switch -> list of command names
        self.notes = ""
        self.hard = ""
        self.missing_desc = "none"

    # ---------- building ----------
    def host(self, name, model="H100", ngpu=8, nnic=8, ll="InfiniBand", rack="r01", driver="550.90.07",
             kernel_old=False, dstyle="plain", node_data=True, in_job=True, rate=None, nic_names=None,
             netdev_fmt="ibp{bus:d}s0", uptime_days=21):
        mname, maxclk, memclk, limit, gen, idlew, busyw = GPU_MODELS[model]
        h = dict(name=name, rack=rack, model=model, driver=driver, kernel_old=kernel_old, dstyle=dstyle,
                 nd=node_data, in_job=in_job, gpus=[], nics=[], events=[], files={},
                 boot=self.S - uptime_days * 86400 - int(self.rng.random() * 80000),
                 cpu=dict(some10=0.4, some60=0.3, some300=0.3, total=123456789, full=False, load=18.0,
                          procs=[]),
                 mem=dict(some=0.0, full=0.0), io=dict(some=0.2, full=0.1), sel=[], fans=None,
                 before=True, collected_keys=("before", "now", "boot"))
        for i in range(ngpu):
            bus = BUS8[model][i]
            uid = "GPU-%08x-%04x-%04x-%04x-%012x" % (self.rng.getrandbits(32), self.rng.getrandbits(16),
                                                    self.rng.getrandbits(16), self.rng.getrandbits(16),
                                                    self.rng.getrandbits(48))
            busy = in_job
            g = dict(idx=i, bus=bus, uuid=uid, model=model, mname=mname, maxclk=maxclk, memclk=memclk,
                     limit=limit, maxgen=gen, gen=gen if busy else 1, width=16, maxwidth=16,
                     clk=(maxclk if busy else 210), power=(busyw - 6 + int(nz(uid) * 8)) if busy else idlew,
                     temp=(62 + int(nz(uid, 1) * 6)) if busy else 31 + int(nz(uid, 2) * 3),
                     reasons=0 if busy else 1, util=(97 if busy else 0), tensor=(0.46 if busy else 0.0),
                     replay=int(abs(nz(uid, 3)) * 3), sbe=0, dbe=0, remap=(0, 0, False, False),
                     nvl=dict(crc=0, replay=0, recovery=0), nvlinks=18 if model != "A100" else 12,
                     bad_link=None, lost_at=None, xid=0, therm_ns=0, power_ns=0, slow=1.0, aer=0,
                     busy=busy, serial="16%011d" % self.rng.randrange(10 ** 10, 10 ** 11))
            h["gpus"].append(g)
        for j in range(nnic):
            bus = NICBUS8[j] if nnic <= 8 else 0x10 + j
            ib = (nic_names or "mlx5_{j}").format(j=j)
            nd = netdev_fmt.format(bus=bus, j=j)
            n = dict(ibdev=ib, netdev=nd, bus=bus, ll=ll, port=1, switch=None, sport=None,
                     rate=rate or ("400 Gb/sec (4X NDR)" if model != "A100" else "200 Gb/sec (4X HDR)"),
                     state="4: ACTIVE", phys="5: LinkUp", gen=5 if model != "A100" else 4, width=16,
                     maxgen=5 if model != "A100" else 4, maxwidth=16, ctr={}, link=None,
                     fec=None)
            h["nics"].append(n)
        self.hosts.append(h)
        return h

    def switch(self, name, tier):
        s = self.switches.setdefault(name, dict(name=name, tier=tier, ports={}))
        return s

    def link(self, a, b, bytes_ab, bytes_ba, pause_ab=0, pause_ba=0, err_a=0, err_b=0, kind="host"):
        """a: ('nic', host, nic) or ('sw', switch, port); b: ('sw', switch, port).  pause_ab: PFC
        frames a transmits (b receives).  err_a: receive errors counted at a."""
        L = dict(a=a, b=b, bytes_ab=bytes_ab, bytes_ba=bytes_ba, pause_ab=pause_ab, pause_ba=pause_ba,
                 err_a=err_a, err_b=err_b, kind=kind)
        self.links.append(L)
        for end, other in ((a, b), (b, a)):
            if end[0] == "sw":
                self.switch(end[1], "leaf").setdefault("ports", {})
                self.switches[end[1]]["ports"][end[2]] = dict(link=L, side="a" if end is a else "b",
                                                              peer=other)
            else:
                end[2]["link"] = L
                end[2]["switch"] = b[1]
                end[2]["sport"] = b[2]
        return L

    def ctr(self, base, rate, extra=0.0, t0=None):
        return ("c", base, rate, extra, t0 if t0 is not None else self.T0, self.M0)

    def step(self, a, b, t0=None):
        return ("s", a, b, t0 if t0 is not None else self.T0)

    def job_hosts(self):
        return [h for h in self.hosts if h["in_job"]]

    def rank_map(self):
        if self.ranks is not None:
            return self.ranks
        out = []
        r = 0
        for h in self.job_hosts():
            for g in h["gpus"][:self.gpn]:
                out.append((r, h, g))
                r += 1
        return out

    def ev(self, h, t, text):
        h["events"].append((t, text))

    def wire(self, hosts, leaf_of, port_of, rate_Bps=2.0e9, ll_pause=0):
        """attach every NIC of the hosts to its leaf port; traffic rate_Bps each way"""
        for h in hosts:
            for n in h["nics"]:
                sw = leaf_of(h, n)
                p = port_of(h, n)
                self.switch(sw, "leaf")
                busy = rate_Bps if h["in_job"] else 2.0e4
                self.link(("nic", h, n), ("sw", sw, p),
                          self.ctr(int(nz(n["ibdev"] + h["name"]) * 1e9 + 4e12), busy * (1 + 0.02 * nz(h["name"], n["ibdev"]))),
                          self.ctr(int(nz(h["name"] + n["ibdev"]) * 1e9 + 4e12), busy * (1 + 0.02 * nz(n["ibdev"], h["name"]))),
                          pause_ab=0, pause_ba=0)
