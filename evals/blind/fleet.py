"""Fleet model and bundle writer for the blind evaluation set (stdlib only).

A case builds a :class:`Fleet` (hosts, GPUs, NICs, switches, a job), changes its state over time
(``Gpu.phase``, ``Job.slow``/``Job.extra``), adds log lines, and calls :meth:`Fleet.write`.
Everything is a deterministic function of the case's seed.
"""

from __future__ import annotations

import gzip
import hashlib
import random
from datetime import datetime, timezone

# --------------------------------------------------------------------------------------------
# GPU generations

GENS = {
    "A100": dict(name="NVIDIA A100-SXM4-80GB", arch="Ampere", sm=1410, mem=1593, plimit=400,
                 pmin=100, pgen=4, sysfs="16.0 GT/s PCIe", old="16 GT/s", lspci="16GT/s",
                 power=(285, 365), temp=(50, 63), slow_temp=92, shut_temp=95, tlimit=None,
                 gbps=200, rate="200 Gb/sec (4X HDR)", hca="MT4123", fw="20.39.1002", devid="20b2",
                 gpu_bus=["07", "0f", "47", "4e", "87", "90", "b7", "bd"],
                 nic_bus=["0c", "12", "4b", "54", "8d", "94", "ba", "cc"], mem_total=81920),
    "H100": dict(name="NVIDIA H100 80GB HBM3", arch="Hopper", sm=1980, mem=2619, plimit=700,
                 pmin=200, pgen=5, sysfs="32.0 GT/s PCIe", old="32 GT/s", lspci="32GT/s",
                 power=(520, 660), temp=(48, 62), slow_temp=87, shut_temp=92, tlimit=True,
                 gbps=400, rate="400 Gb/sec (4X NDR)", hca="MT4129", fw="28.39.1002", devid="2330",
                 gpu_bus=["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"],
                 nic_bus=["1a", "2c", "3c", "5f", "9c", "ad", "bc", "dd"], mem_total=81559),
    "H200": dict(name="NVIDIA H200", arch="Hopper", sm=1980, mem=3201, plimit=700,
                 pmin=200, pgen=5, sysfs="32.0 GT/s PCIe", old="32 GT/s", lspci="32GT/s",
                 power=(540, 675), temp=(47, 61), slow_temp=87, shut_temp=92, tlimit=True,
                 gbps=400, rate="400 Gb/sec (4X NDR)", hca="MT4129", fw="28.41.1000", devid="2335",
                 gpu_bus=["19", "3b", "4c", "5d", "9b", "bb", "cb", "db"],
                 nic_bus=["1b", "3d", "4e", "5f", "9d", "bd", "cd", "dd"], mem_total=143771),
}
SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}
OLDSPEED = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s"}
LSPEED = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}

# NVML clock event reason bits
IDLE, APP, SW_POWER, HW_SLOW, SYNC, SW_THERM, HW_THERM, HW_BRAKE = 0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80


def sh(*a) -> int:
    """A stable hash (Python's hash() of a str changes per process)."""
    return int(hashlib.md5(repr(a).encode()).hexdigest()[:12], 16)


def iso(t: float) -> str:
    return datetime.fromtimestamp(int(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc(s: str) -> int:
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


# --------------------------------------------------------------------------------------------
# Parts


class Gpu:
    def __init__(self, host: "Host", index: int, bus: str, uuid: str):
        self.host, self.index, self.bus, self.uuid = host, index, bus, uuid
        g = host.gen
        r = host.fleet.rng
        self.base = dict(temp=r.uniform(*g["temp"]), power=r.uniform(*g["power"]), sm=g["sm"],
                         reasons=0, plimit=g["plimit"], pgen=g["pgen"], width=16,
                         pviol=0.0, tviol=0.0, sbe=0.0, dbe=0.0, replay=0.0, crc=0.0, nvreplay=0.0,
                         nvrecovery=0.0, aer=0.0, xid=0, lost=False, busy=True)
        self.start = dict(sbe=0, dbe=0, replay=r.choice([0, 0, 0, 1, 2]), crc=0, nvreplay=0,
                          nvrecovery=0, aer=r.choice([0, 0, 1, 2]), xid=0, rows_cor=0, rows_unc=0,
                          pending=False, failure=False)
        self.phases: list[tuple[float, dict]] = []
        self.end_rows = None  # remapped rows at "now" if changed

    @property
    def nvml_bus(self) -> str:
        return f"00000000:{self.bus.upper()}:00.0"

    @property
    def bdf(self) -> str:
        return f"0000:{self.bus}:00.0"

    def phase(self, t0: float, **kw) -> None:
        self.phases.append((t0, kw))
        self.phases.sort(key=lambda p: p[0])

    def state(self, t: float) -> dict:
        s = dict(self.base)
        for t0, kw in self.phases:
            if t0 <= t:
                s.update(kw)
        return s

    def counter(self, key: str, t: float, t_from: float) -> float:
        """Integral of rate ``key`` (per second) from t_from to t, plus the starting count."""
        marks = sorted({t_from, t} | {p[0] for p in self.phases if t_from < p[0] < t})
        total = 0.0
        for a, b in zip(marks, marks[1:]):
            total += self.state(a)[key] * (b - a)
        return total

    def count(self, key: str, t: float) -> int:
        return int(self.start.get(key, 0) + self.counter(key, t, self.host.fleet.tm))


class Nic:
    def __init__(self, host: "Host", i: int, bus: str, ibdev: str, netdev: str, roce: bool):
        self.host, self.i, self.bus, self.ibdev, self.netdev, self.roce = host, i, bus, ibdev, netdev, roce
        r = host.fleet.rng
        self.switch = None
        self.port = None
        self.base = dict(rcv_err=0.0, symbol=0.0, downed=0.0, recovery=0.0, xmit_wait=r.uniform(2e4, 6e4),
                         util=1.0, rx_pause=0.0, tx_pause=0.0, tx_pause_dur=0.0, rx_pause_dur=0.0,
                         storm_warn=0.0, rx_disc=0.0, oob=0.0, fec_corr=r.uniform(0.5, 4.0), fec_unc=0.0,
                         cnp=r.uniform(0, 2), ecn=r.uniform(0, 2), oos=0.0, seqerr=0.0, acktmo=0.0,
                         state="4: ACTIVE", phys="5: LinkUp", rate=None, pgen=None, width=16, carrier=0.0)
        self.start = {k: 0 for k in self.base}
        self.start.update(symbol=r.choice([0, 0, 0, 3]), rcv_err=r.choice([0, 0, 1, 14]),
                          carrier=r.choice([2, 2, 4]), downed=r.choice([0, 0, 1]), xmit_wait=r.randint(10**8, 3 * 10**9),
                          fec_corr=r.randint(10**5, 10**7), data=r.randint(10**13, 10**14))
        self.phases: list[tuple[float, dict]] = []

    @property
    def bdf(self) -> str:
        return f"0000:{self.bus}:00.0"

    phase = Gpu.phase
    state = Gpu.state
    counter = Gpu.counter

    def count(self, key: str, t: float) -> int:
        return int(self.start.get(key, 0) + self.counter(key, t, self.host.fleet.tm))

    def data_bytes(self, t: float) -> int:
        """Bytes moved each way since t0 (port data counters)."""
        f = self.host.fleet
        return int(self.start["data"] * 4 + f.traffic_bytes(self, t))


class Host:
    def __init__(self, fleet: "Fleet", name: str, rack: str, gen: str, ngpu: int, nnic: int):
        self.fleet, self.name, self.rack = fleet, name, rack
        self.gen = GENS[gen]
        self.genname = gen
        r = fleet.rng
        self.gpus = [Gpu(self, i, self.gen["gpu_bus"][i * (8 // ngpu)],
                         "GPU-" + _uuid(r)) for i in range(ngpu)]
        roce = fleet.roce
        self.nics = []
        for i in range(nnic):
            bus = self.gen["nic_bus"][i * (8 // nnic)] if nnic <= 8 else f"{0x20 + i:02x}"
            if roce:
                netdev = fleet.netdev_style.format(bus=int(bus, 16), i=i)
            else:
                netdev = f"ibp{int(bus, 16)}s0"
            self.nics.append(Nic(self, i, bus, f"mlx5_{i}", netdev, roce))
        self.boot = fleet.t0 - r.randint(6, 40) * 86400 - r.randint(0, 86400)
        self.dmesg_style = fleet.dmesg_style
        self.kernel = r.choice(["5.15.0-105-generic", "5.15.0-119-generic", "6.5.0-1024-nvidia", "6.8.0-45-generic"])
        self.events: list[tuple[float, str]] = []  # kernel log (time, text)
        self.cmd_extra: dict[str, str] = {}
        self.pressure = dict(cpu=(0.4, 0.0), mem=(0.0, 0.0), io=(0.3, 0.1))
        self.pressure_before = None
        self.top = None
        self.sel: list[tuple[float, str, str, str]] = []
        self.fans = None
        self.collect = True
        self.keep_boot = True
        self.ethtool = True
        self.fec = False
        self.spare = False
        self.load1 = r.uniform(9, 14)
        self.cpu_wait_rate = r.uniform(0.002, 0.02)
        self.cpu_phases: list[tuple[float, dict]] = []

    def kern(self, t: float, text: str) -> None:
        self.events.append((t, text))


def _uuid(r: random.Random) -> str:
    h = "%032x" % r.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Switch:
    def __init__(self, name: str, tier: str):
        self.name, self.tier = name, tier
        self.links: list[dict] = []
        self.ports: dict[str, dict] = {}  # port -> counters at now (SONiC), filled by cases


# --------------------------------------------------------------------------------------------
# Job timing model


class Job:
    """Synchronous data-parallel job: every rank ends a step at the same collective."""

    def __init__(self, fleet: "Fleet", name: str, compute: float, comm: float, start: float,
                 every: int, cols=("compute_s",)):
        self.fleet, self.name = fleet, name
        self.compute, self.comm, self.start, self.every, self.cols = compute, comm, start, every, cols
        self.slow: list[tuple[float, float, set[int], float]] = []   # (t0, t1, ranks, factor on compute)
        self.extra: list[tuple[float, float, float]] = []             # (t0, t1, seconds added after compute)
        self.commf: list[tuple[float, float, float]] = []             # (t0, t1, factor on comm)
        self.scale: list[tuple[float, float]] = []                    # (t0, factor on all compute+comm: bigger steps)
        self.restarts: list[tuple[float, float, int]] = []            # (t_stop, t_resume, resume_step)
        self.dead: list[tuple[float, set[int]]] = []                  # (t, ranks whose rows stop)
        self.stop_at: float | None = None
        self.first_step = 0
        self.checksum_bad: tuple[float, int] | None = None
        self.loss_spike: tuple[float, int] | None = None
        self.missing: set[tuple[int, int]] = set()
        self.rows_out: list = []
        self.steps_meta: list[tuple[int, float, float]] = []  # (step, start, duration) for every step

    def _in(self, spans, t):
        return [s for s in spans if s[0] <= t < s[1]]

    def compute_of(self, rank: int, t: float) -> float:
        c = self.compute
        for t0, f in self.scale:
            if t >= t0:
                c = self.compute * f
        for t0, t1, ranks, f in self.slow:
            if t0 <= t < t1 and rank in ranks:
                c *= f
        return c

    def step_time(self, t: float) -> tuple[float, float]:
        """(duration, mean compute) at time t, noise free."""
        n = self.fleet.nranks
        cmax = max(self.compute_of(r, t) for r in self.slowish_ranks(t)) if self.slow else self.compute_of(0, t)
        comm = self.comm
        for t0, f in self.scale:
            if t >= t0:
                comm = self.comm * f
        for t0, t1, f in self.commf:
            if t0 <= t < t1:
                comm *= f
        ex = sum(s for t0, t1, s in self.extra if t0 <= t < t1)
        return cmax + comm + ex, sum(self.compute_of(r, t) for r in range(min(n, 8))) / min(n, 8)

    def slowish_ranks(self, t):
        rs = {0}
        for t0, t1, ranks, f in self.slow:
            if t0 <= t < t1:
                rs |= ranks
        return rs

    def running(self, t: float) -> bool:
        if t < self.start or (self.stop_at and t >= self.stop_at):
            return False
        return not any(a <= t < b for a, b, _ in self.restarts)

    def simulate(self) -> None:
        if self.steps_meta:
            return
        f = self.fleet
        rng = random.Random(f.seed * 7 + 11)
        t = self.start
        step = self.first_step
        restarts = sorted(self.restarts)
        end = self.stop_at or f.t1
        ri = 0
        while t < end:
            if ri < len(restarts) and t >= restarts[ri][0]:
                t = restarts[ri][1]
                step = restarts[ri][2]
                ri += 1
                continue
            dur, _ = self.step_time(t)
            dur *= 1 + rng.gauss(0, 0.004)
            self.steps_meta.append((step, t, dur))
            t += dur
            step += 1

    def rows(self) -> list[list]:
        f = self.fleet
        rng = random.Random(f.seed * 13 + 5)
        out = []
        dead = {}
        for td, ranks in self.dead:
            for r in ranks:
                dead[r] = td
        for step, t, dur in self.steps_meta:
            if step % self.every:
                continue
            comps = {}
            for r in range(f.nranks):
                if r in dead and t >= dead[r]:
                    continue
                if (step, r) in self.missing:
                    continue
                comps[r] = self.compute_of(r, t) * (1 + rng.gauss(0, 0.006))
            if not comps:
                continue
            cmax = max(comps.values())
            # the barrier: everyone leaves together; the duration is the same to a few ms
            base_dur = max(dur, cmax + 0.02)
            for r, c in comps.items():
                d = base_dur + rng.uniform(-0.0015, 0.0015)
                row = [step, r, round(t + rng.uniform(0, 0.002), 3), round(d, 4)]
                if "compute_s" in self.cols:
                    row.append(round(c, 4))
                if "loss" in self.cols:
                    loss = 2.9 - 0.6 * (step / (step + 4000)) + rng.gauss(0, 0.012)
                    if self.loss_spike and t >= self.loss_spike[0] and r == self.loss_spike[1]:
                        loss += rng.uniform(0.15, 0.9)
                    row.append(round(loss, 4))
                if "grad_norm" in self.cols:
                    g = abs(0.28 + rng.gauss(0, 0.03))
                    if self.loss_spike and t >= self.loss_spike[0] and r == self.loss_spike[1]:
                        g *= rng.uniform(3, 12)
                    row.append(round(g, 4))
                if "param_checksum" in self.cols:
                    key = f"{f.seed}:{step}"
                    if self.checksum_bad and t >= self.checksum_bad[0] and r == self.checksum_bad[1]:
                        key += ":x"
                    row.append(hashlib.sha1(key.encode()).hexdigest()[:16])
                if "tokens" in self.cols:
                    row.append(self.tokens_per_step(t) // f.nranks)
                out.append(row)
        return out

    tokens_fn = None

    def tokens_per_step(self, t):
        return self.tokens_fn(t) if self.tokens_fn else 0


# --------------------------------------------------------------------------------------------
# The fleet


class Fleet:
    def __init__(self, case: str, seed: int, *, gen: str, hosts: list[str], gpn: int = 8, nnic: int | None = None,
                 window: tuple[str, str], roce: bool = False, netdev_style: str = "enp{bus}s0np0",
                 dmesg_style: str = "plain", driver: str | None = None, hostname_label: str = "Hostname",
                 racks: int = 4, spares: int = 0, rank_order: str = "file", sample: int = 60, baseline: int = 1800):
        self.case, self.seed = case, seed
        self.rng = random.Random(seed)
        self.t0, self.t1 = utc(window[0]), utc(window[1])
        self.tm = self.t0 - baseline
        self.window = window
        self.gpn = gpn
        self.roce = roce
        self.netdev_style = netdev_style
        self.dmesg_style = dmesg_style
        self.genname = gen
        self.driver = driver or {"A100": "535.129.03", "H100": "550.90.07", "H200": "550.127.05"}[gen]
        self.cuda = {"525": "12.0", "535": "12.2", "550": "12.4", "560": "12.6", "570": "12.8"}[self.driver[:3]]
        self.hostname_label = hostname_label if seed % 3 else "hostname"  # newer dcgm-exporter
        self.sample = sample
        self.baseline = baseline
        nnic = nnic if nnic is not None else gpn
        self.hosts = [Host(self, h, f"r{(i * racks) // max(1, len(hosts)) + 1:02d}", gen, gpn, nnic)
                      for i, h in enumerate(hosts)]
        self.spare_hosts = self.hosts[len(hosts) - spares:] if spares else []
        for h in self.spare_hosts:
            h.spare = True
        workers = [h for h in self.hosts if not h.spare]
        order = list(workers)
        if rank_order == "shuffled":
            self.rng.shuffle(order)
        self.rank_order = rank_order
        self.placement = [(h, g.index) for h in order for g in h.gpus]
        self.nranks = len(self.placement)
        self.switches: list[Switch] = []
        self.job: Job | None = None
        self.logs: dict[str, list[tuple[float, str]]] = {}
        self.metric_extra: dict[str, list[str]] = {}
        self.files: dict[str, bytes] = {}
        self.incident: dict = {}
        self.truth: dict = {}
        self.gz: set[str] = set()
        self.skip: set[str] = set()     # file kinds left out
        self.dcgm_families = None
        self.nccl_bytes_per_step = 2.0e9   # bytes per NIC per step (ring all-reduce share)
        self.idle_nics: set[str] = set()  # ibdev names no traffic goes through (fleet-wide)
        self.traffic_nics: dict = {}

    # ---- structure ----------------------------------------------------------------------
    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    def ranks_of(self, host: Host, gpu: int | None = None) -> set[int]:
        return {r for r, (h, g) in enumerate(self.placement) if h is host and (gpu is None or g == gpu)}

    def rank_of(self, host: Host, gpu: int) -> int:
        return next(iter(self.ranks_of(host, gpu)))

    def rail_fabric(self, leaf_fmt="leaf-{i:02d}", spine_fmt="spine-{i:02d}", nspine=4, port_step=4,
                    uplinks_per_spine=2, per_rack=False):
        """Leaves (one per rail, or per rack) with host ports, and spines with uplinks."""
        nnic = len(self.hosts[0].nics)
        keys = sorted({h.rack for h in self.hosts}) if per_rack else list(range(nnic))
        leaves = {}
        for k, key in enumerate(keys):
            leaves[key] = Switch(leaf_fmt.format(i=k + 1, rack=key), "leaf")
        spines = [Switch(spine_fmt.format(i=s + 1), "spine") for s in range(nspine)]
        used: dict[str, int] = {}
        for h in self.hosts:
            for n in h.nics:
                sw = leaves[h.rack if per_rack else n.i]
                p = used.get(sw.name, 0)
                used[sw.name] = p + 1
                n.switch, n.port = sw, f"Ethernet{p * port_step}"
        for li, sw in enumerate(leaves.values()):
            base = 256
            k = 0
            for s, sp in enumerate(spines):
                for u in range(uplinks_per_spine):
                    port = f"Ethernet{base + k * port_step}"
                    pport = f"Ethernet{(li * uplinks_per_spine + u) * port_step}"
                    sw.links.append({"port": port, "peer": sp.name, "peer_port": pport})
                    sp.links.append({"port": pport, "peer": sw.name, "peer_port": port})
                    k += 1
        self.switches = list(leaves.values()) + spines
        return list(leaves.values()), spines

    # ---- traffic ------------------------------------------------------------------------
    def _grid(self):
        if getattr(self, "_cum", None) is None:
            j = self.job
            cum = [0.0]
            t = self.tm
            while t < self.t1 + 60:
                rate = 0.0
                if j is not None and j.running(t):
                    dur, _ = j.step_time(t)
                    rate = self.nccl_bytes_per_step / dur
                cum.append(cum[-1] + rate * 60)
                t += 60
            self._cum = cum
        return self._cum

    def traffic_bytes(self, nic: Nic, t: float) -> float:
        """Bytes through a NIC from tm to t, driven by the job model (the job makes all traffic)."""
        if nic.host.spare or self.job is None or nic.ibdev in self.idle_nics:
            return 2.0e3 * max(0.0, t - self.tm)
        cum = self._grid()
        m = max(0, min(len(cum) - 2, int((t - self.tm) // 60)))
        frac = (t - self.tm) / 60 - m
        if not nic.phases:
            return nic.base["util"] * (cum[m] + (cum[m + 1] - cum[m]) * frac)
        total = 0.0
        for k in range(m):
            total += (cum[k + 1] - cum[k]) * nic.state(self.tm + k * 60)["util"]
        return total + (cum[m + 1] - cum[m]) * frac * nic.state(t)["util"]

    # ---- logs ---------------------------------------------------------------------------
    def log(self, name: str, t: float, line: str) -> None:
        self.logs.setdefault(name, []).append((t, line))

    # ---- writing ------------------------------------------------------------------------
    def put(self, rel: str, text: str | bytes, gz: bool = False) -> None:
        data = text.encode() if isinstance(text, str) else text
        if gz:
            data = gzip.compress(data, compresslevel=6, mtime=0)
            rel += ".gz"
        self.files[rel] = data
