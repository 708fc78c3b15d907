"""Building blocks for the "outside" evaluation incidents: a fleet model and renderers.

Stdlib only. Everything is a pure function of a case's seeded ``random.Random`` and its
parameters, so the same code writes the same bytes on every machine (gzip members carry
mtime 0 and no file name; no wall clock, no set iteration, no hash randomisation).

The model is deliberately small: one function gives a GPU's state at a time ``t``
(:meth:`Case.gpu_state`), one gives a NIC's counters at ``t`` (:meth:`Case.nic_state`), and
every file that shows a GPU or a NIC (metrics, sysfs, ``nvidia-smi -q``, NVML, ``ethtool``)
is rendered from them, so the files of one bundle agree with each other.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

# --------------------------------------------------------------------------------------------
# hardware catalogue (values as the real parts report them)

MODELS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", sm=1980, mem=2619, limit=700, busy=585, idle=72,
                 gen=5, dev="2330", temp=58, vbios="96.00.89.00.01", bus=["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]),
    "H200": dict(name="NVIDIA H200", sm=1980, mem=3201, limit=700, busy=610, idle=76,
                 gen=5, dev="2335", temp=55, vbios="96.00.A5.00.01", bus=["19", "3b", "4c", "5d", "9b", "bb", "cb", "db"]),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", sm=1410, mem=1593, limit=400, busy=335, idle=58,
                 gen=4, dev="20b2", temp=54, vbios="92.00.45.00.03", bus=["07", "0f", "47", "4e", "87", "90", "b7", "bd"]),
}
NIC_BUS = ["1a", "3c", "4d", "5e", "9c", "bc", "cc", "dc"]
SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}
SPEED_OLD = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s"}
LSPCI_SPEED = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}

HELP = {
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
    "DCGM_FI_DEV_MEM_CLOCK": ("gauge", "Memory clock frequency (in MHz)."),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C)."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %)."),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    "DCGM_FI_PROF_SM_ACTIVE": ("gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("gauge", "Current clock throttle reasons."),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("gauge", "Current clock event reasons."),
    "DCGM_FI_DEV_POWER_VIOLATION": ("counter", "Throttling duration due to power constraints (in us)."),
    "DCGM_FI_DEV_THERMAL_VIOLATION": ("counter", "Throttling duration due to thermal constraints (in us)."),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": ("counter", "Total number of single-bit volatile ECC errors."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for correctable errors"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for uncorrectable errors"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink flow-control CRC errors."),
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink retries."),
}
# state key -> DCGM family
FAMILY_KEY = {
    "DCGM_FI_DEV_SM_CLOCK": "sm", "DCGM_FI_DEV_MEM_CLOCK": "mem", "DCGM_FI_DEV_GPU_TEMP": "temp",
    "DCGM_FI_DEV_POWER_USAGE": "power", "DCGM_FI_DEV_GPU_UTIL": "util",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "tensor", "DCGM_FI_PROF_SM_ACTIVE": "sm_active",
    "DCGM_FI_DEV_XID_ERRORS": "xid", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "replay",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "reasons", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "reasons",
    "DCGM_FI_DEV_POWER_VIOLATION": "power_violation", "DCGM_FI_DEV_THERMAL_VIOLATION": "thermal_violation",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "sbe", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "dbe",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "remap_corr", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "remap_unc",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "remap_failure",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "nvl_crc", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": "nvl_replay",
}
BASE_FAMILIES = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                 "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_XID_ERRORS",
                 "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"]


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def unix(s: str) -> int:
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def ramp(t: float, onset: float | None, rate: float, end: float | None = None) -> float:
    """Amount accumulated at ``rate`` per second from ``onset`` (to ``end``) by time ``t``."""
    if onset is None or t <= onset:
        return 0.0
    return rate * ((min(t, end) if end is not None else t) - onset)


def fmt(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e15:
        return str(int(round(v)))
    return f"{v:.6g}" if abs(v) < 1 else f"{v:.3f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------------------------------
# fleet


@dataclass
class Gpu:
    index: int
    bus: str  # two lower-case hex digits
    uuid: str

    @property
    def sysfs(self) -> str:
        return f"0000:{self.bus}:00.0"

    @property
    def nvml(self) -> str:
        return f"00000000:{self.bus.upper()}:00.0"

    @property
    def xid(self) -> str:
        return f"PCI:0000:{self.bus}:00"


@dataclass
class Nic:
    ibdev: str
    netdev: str
    bus: str
    link_layer: str
    switch: str = ""
    port: str = ""

    @property
    def sysfs(self) -> str:
        return f"0000:{self.bus}:00.0"


@dataclass
class Host:
    name: str
    rack: str
    gpus: list
    nics: list
    spare: bool = False
    boot: int = 0

    @property
    def short(self) -> str:
        return self.name.split(".")[0]


def uuid(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def host_names(rng: random.Random, style: str, n: int) -> list[str]:
    if style == "dash":  # gpu-a017
        base = rng.randrange(1, 200)
        return [f"gpu-b{base + i:03d}" for i in range(n)]
    if style == "ip":  # 10-90-43-147
        a, b = rng.randrange(16, 120), rng.randrange(0, 250)
        c0 = rng.randrange(2, 200 - n)
        return [f"10-{a}-{b}-{c0 + i}" for i in range(n)]
    if style == "fqdn":  # gpu1018.dc3.internal
        base = rng.randrange(1000, 1900)
        dc = rng.randrange(1, 9)
        return [f"gpu{base + i}.dc{dc}.internal" for i in range(n)]
    if style == "dgx":
        base = rng.randrange(1, 90)
        return [f"dgx-h100-{base + i:04d}" for i in range(n)]
    if style == "hgx":  # hgx-r12-n03 style: rack and node
        r0 = rng.randrange(1, 30)
        return [f"hgx-r{r0 + i // 4:02d}-n{i % 4 + 1:02d}" for i in range(n)]
    if style == "node":
        base = rng.randrange(100, 800)
        return [f"node{base + 3 * i:04d}" for i in range(n)]
    if style == "aws":  # ip-10-1-33-7 style
        a = rng.randrange(0, 250)
        return [f"ip-10-1-{a}-{7 + 13 * i % 240}" for i in range(n)]
    raise ValueError(style)


@dataclass
class Switch:
    name: str
    tier: str
    links: list = field(default_factory=list)  # {"port", "peer", "peer_port"}


# --------------------------------------------------------------------------------------------
# the case


class Case:
    """One evaluation incident: fleet, timeline, state functions, files."""

    def __init__(self, cid: str, *, root_cause: str, component: str | None, title: str, reported: str,
                 start: str, minutes: int, job: str, model: str = "H100", hosts: int = 8, naming: str = "dash",
                 spares: int = 0, nics: int = 8, link_layer: str = "InfiniBand", hostname_label: str = "Hostname",
                 reasons_family: str = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", driver: str = "550.90.07",
                 dmesg: str = "plain", notes: str = "", presents: str = ""):
        self.id = cid
        self.rng = random.Random(int(hashlib.sha256(cid.encode()).hexdigest()[:16], 16))
        self.truth = {"root_cause": root_cause, "component": component}
        self.title, self.reported, self.job_name = title, reported, job
        self.t0 = unix(start)
        self.t1 = self.t0 + minutes * 60
        self.m = MODELS[model]
        self.model = model
        self.hostname_label = hostname_label
        self.reasons_family = reasons_family
        self.driver = driver
        self.dmesg_style = dmesg
        self.notes, self.presents = notes, presents
        self.files: dict[str, bytes] = {}
        self.alerts: list = []
        rng = self.rng
        names = host_names(rng, naming, hosts + spares)
        self.hosts: list[Host] = []
        self.switches: list[Switch] = []
        per_leaf = 4
        n_leaves = (len(names) + per_leaf - 1) // per_leaf
        ll = link_layer
        for i, n in enumerate(names):
            gpus = [Gpu(g, self.m["bus"][g], uuid(rng)) for g in range(8)]
            nl = []
            for k in range(nics):
                bus = NIC_BUS[k]
                netdev = f"ibp{int(bus, 16)}s0" if ll == "InfiniBand" else f"enp{int(bus, 16)}s0np0"
                leaf = f"leaf-{i // per_leaf + 1:02d}"
                nl.append(Nic(f"mlx5_{k}", netdev, bus, ll, leaf, f"Ethernet{((i % per_leaf) * nics + k) * 4}"))
            boot = self.t0 - rng.randrange(5, 40) * 86400 - rng.randrange(0, 86400)
            self.hosts.append(Host(n, f"r{(i // 4) + 3:02d}", gpus, nl, spare=i >= hosts, boot=boot))
        for li in range(n_leaves):
            links = [{"port": f"Ethernet{128 + 4 * u}", "peer": f"spine-{u % 4 + 1:02d}", "peer_port": f"Ethernet{4 * (li * 2 + u // 4)}"}
                     for u in range(8)]
            self.switches.append(Switch(f"leaf-{li + 1:02d}", "leaf", links))
        for s in range(4):
            self.switches.append(Switch(f"spine-{s + 1:02d}", "spine", []))
        self.job_hosts = [h for h in self.hosts if not h.spare]
        self.job_start = self.t0 - 3 * 3600   # when the job (this launch) began
        self.job_end: float | None = None     # crash / hang time
        self.gpu_mods: list = []              # f(case, host, gpu, t, state) -> None
        self.nic_mods: list = []              # f(case, host, nic, t, state) -> None
        self.capped: set = set()               # (host name, gpu index) at normal SW power cap
        self.noise_seed = rng.getrandbits(32)
        self.before = self.t0
        self.now = self.t1 + 60
        self.kern: dict = {}                  # host name -> [(unix, level, text)] in-window kernel lines
        self.logs: dict = {}                  # job/logs/<name> -> list of lines

    # ---- helpers
    def host(self, i: int) -> Host:
        return self.hosts[i]

    def gpu_ref(self, h: Host, g: int) -> str:
        return f"{h.name}/gpu{g}"

    def ranks_of(self, h: Host) -> list[int]:
        i = self.job_hosts.index(h)
        return list(range(i * 8, i * 8 + 8))

    def running(self, h: Host, t: float) -> bool:
        return (not h.spare) and t >= self.job_start and (self.job_end is None or t < self.job_end)

    def _noise(self, *key) -> float:
        """Deterministic noise in [-1, 1] from a key (no shared RNG state, so order-free)."""
        d = hashlib.blake2b(repr((self.noise_seed,) + key).encode(), digest_size=8).digest()
        return int.from_bytes(d, "big") / 2 ** 63 - 1.0

    # ---- GPU state at time t
    def gpu_state(self, h: Host, g: Gpu, t: float) -> dict:
        m, n = self.m, self._noise
        run = self.running(h, t)
        tb = int(t // 30)
        s = {
            "util": (97 + int(3 * abs(n(h.name, g.index, tb, "u")))) if run else 0,
            "tensor": round(0.42 + 0.03 * n(h.name, g.index, tb, "t"), 3) if run else 0.0,
            "sm_active": round(0.86 + 0.03 * n(h.name, g.index, tb, "a"), 3) if run else 0.0,
            "sm": (m["sm"] - 15 * int(abs(n(h.name, g.index, tb, "c")) > 0.8)) if run else 345,
            "mem": m["mem"],
            "power": round(m["busy"] + 35 * n(h.name, g.index, tb, "p"), 1) if run else round(m["idle"] + 4 * n(h.name, g.index, tb, "p"), 1),
            "limit": m["limit"],
            "temp": int(m["temp"] + 3 * n(h.name, g.index, "base") + (2 * n(h.name, g.index, tb, "T") if run else -22)),
            "mem_temp": 0, "reasons": 0 if run else 1, "xid": 0, "replay": 0, "sbe": 0, "dbe": 0,
            "sbe_agg": 0, "dbe_agg": 0,
            "remap_corr": 0, "remap_unc": 0, "remap_pending": False, "remap_failure": False,
            "gen": m["gen"] if run else 1, "gen_max": m["gen"], "width": 16, "width_max": 16,
            "power_violation": 0, "thermal_violation": 0, "nvl_crc": 0, "nvl_replay": 0, "nvl_recovery": 0,
            "nvl_links": {}, "lost": False, "pstate": "P0" if run else "P8",
        }
        s["mem_temp"] = s["temp"] + 8
        if run and (h.name, g.index) in self.capped:
            # normal software power capping: at the limit on average, clocks a few percent down
            s["reasons"] = 0x4
            s["sm"] = m["sm"] - 45 - int(40 * abs(n(h.name, g.index, tb, "cap")))
            s["power"] = round(m["limit"] - 18 - 14 * abs(n(h.name, g.index, tb, "cp")), 1)
            s["power_violation"] = int(ramp(t, self.job_start, 0.22e6))
        for f in self.gpu_mods:
            f(self, h, g, t, s)
        return s

    # ---- NIC counters at time t
    def nic_state(self, h: Host, nic: Nic, t: float) -> dict:
        run = self.running(h, t)
        ref = self.t0 - 6 * 86400
        el = max(0.0, t - ref)
        jel = max(0.0, min(t, self.job_end or t) - max(ref, self.job_start)) if not h.spare else 0.0
        k = self._noise(h.name, nic.ibdev, "k")
        rate = 11.5e9 * (1 + 0.05 * k)  # bytes/s while the job runs
        s = {
            "bytes": int(3.1e12 * (1 + 0.3 * k) + rate * jel + 2e5 * el),
            "rcv_errors": 0, "symbol_error": 0, "link_downed": 0, "link_error_recovery": 0,
            "xmit_wait": int(1.9e9 * (1 + 0.2 * k) + 41000 * jel),
            "out_of_sequence": int(12 + 3 * abs(k)), "packet_seq_err": 0, "local_ack_timeout_err": 0,
            "np_cnp_sent": int(2.2e6 * (1 + 0.2 * k) + 130 * jel), "rp_cnp_handled": int(2.1e6 * (1 + 0.2 * k) + 128 * jel),
            "np_ecn_marked": int(2.6e6 * (1 + 0.2 * k) + 150 * jel),
            "rx_pause": int(310 + 90 * abs(k)), "rx_pause_dur": int(2600 + 400 * abs(k)),
            "tx_pause": 0, "tx_pause_dur": 0, "storm_warn": 0, "storm_err": 0,
            "rx_discards_phy": 0, "rx_out_of_buffer": 0, "link_down_events": 1, "rx_symbol_err": 0,
            "carrier_changes": 2, "state": "ACTIVE", "fec_corr": int(1.5e6 + 31 * el), "fec_uncorr": 0,
            "gen": 5, "gen_max": 5, "width": 16, "width_max": 16,
            "outbound_stalled_rd": 0, "outbound_stalled_wr": 0, "running": run, "rate": rate,
        }
        if nic.link_layer == "InfiniBand":
            for key in ("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked", "rx_pause", "rx_pause_dur"):
                s[key] = 0
        for f in self.nic_mods:
            f(self, h, nic, t, s)
        return s

    # ---- file output
    def put(self, rel: str, text, gz: bool | None = False) -> None:
        """Store a bundle file; ``gz=None`` compresses it when it is large (as collectors do)."""
        data = text if isinstance(text, bytes) else text.encode()
        if gz is None:
            gz = len(data) > 3_000_000
        if gz:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as z:
                z.write(data)
            data, rel = buf.getvalue(), rel + ".gz"
        self.files["bundle/" + rel] = data

    def write(self, out: Path) -> None:
        d = out / self.id
        for rel, data in sorted(self.files.items()):
            p = d / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        (d / "truth.json").write_text(json.dumps(self.truth, indent=2) + "\n")


# --------------------------------------------------------------------------------------------
# renderers: incident, topology, steps


def incident(c: Case, *, ranks: int | None = None) -> None:
    doc = {"schema": "forensic.bundle/v1", "id": c.id, "title": c.title,
           "window": {"start": iso(c.t0), "end": iso(c.t1)},
           "job": {"name": c.job_name, "ranks": ranks if ranks is not None else 8 * len(c.job_hosts), "gpus_per_node": 8},
           "reported": c.reported}
    if c.alerts:
        doc["alerts"] = c.alerts
    c.put("incident.json", json.dumps(doc, indent=2) + "\n")


def topology(c: Case, *, ranks: str = "explicit", switches: bool = True, shuffle_ranks: bool = False) -> None:
    hosts = []
    for h in c.hosts:
        hosts.append({"name": h.name, "rack": h.rack,
                      "gpus": [{"index": g.index, "pci_bus_id": g.nvml, "uuid": g.uuid} for g in h.gpus],
                      "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.sysfs, "port": 1,
                                "link_layer": n.link_layer, "switch": n.switch, "switch_port": n.port} for n in h.nics]})
    doc: dict = {"hosts": hosts}
    if ranks == "explicit":
        rows = [{"rank": r, "host": h.name, "gpu": r % 8} for h in c.job_hosts for r in c.ranks_of(h)]
        if shuffle_ranks:
            c.rng.shuffle(rows)
        doc["ranks"] = rows
    if switches:
        doc["switches"] = [{"name": s.name, "tier": s.tier, "links": s.links} for s in c.switches]
    c.put("topology.json", json.dumps(doc, indent=1) + "\n")


@dataclass
class Segment:
    """One launch of the job as steps.csv sees it."""
    t_start: float
    t_end: float
    first_step: int
    compute: float = 0.62
    comm: float = 0.26
    every: int = 10


def steps(c: Case, segments: list, *, slow=None, comm=None, extra=None, columns=("compute_s",),
          checksum_bad=None, gz: bool | None = None, drop_ranks=None, loss0: float = 2.41, extra_repeats: int = 1) -> None:
    """Write job/steps.csv from a timing model.

    slow(rank, t) -> multiplier on that rank's compute; comm(t) -> multiplier on the collective;
    extra(t, step) -> seconds every rank waits outside compute in the logged step (input pipeline,
    checkpoint save); ``extra_repeats`` says how many such waits the logged stride holds. The duration of a step is
    the same on every rank (synchronous job): slowest arrival + collective + extra.
    """
    n = c._noise
    ranks = 8 * len(c.job_hosts)
    head = ["step", "rank", "start_unix", "duration_s"] + list(columns)
    lines = [",".join(head)]
    for seg_i, seg in enumerate(segments):
        t, step = seg.t_start, seg.first_step
        while t < seg.t_end:
            if t < c.t0 - 1800:  # older rows were rotated away by the job's logger
                base = seg.compute * (max(slow(r, t) for r in range(ranks)) if slow else 1.0) + seg.comm * (comm(t) if comm else 1.0)
                t += base * seg.every + (extra(t, step) if extra else 0.0) * extra_repeats
                step += seg.every
                continue
            comps = []
            for r in range(ranks):
                cmp_ = seg.compute * (1 + 0.012 * n("c", seg_i, step, r))
                if slow:
                    cmp_ *= slow(r, t)
                comps.append(cmp_)
            cm = seg.comm * (1 + 0.03 * n("m", seg_i, step)) * (comm(t) if comm else 1.0)
            ex = extra(t, step) if extra else 0.0
            dur = max(comps) + cm + ex
            loss = loss0 - 0.25 * (t - c.job_start) / 86400 + 0.02 * n("l", step)
            for r in range(ranks):
                if drop_ranks and drop_ranks(r, step):
                    continue
                row = [str(step), str(r), f"{t:.3f}", f"{dur:.4f}"]
                for col in columns:
                    if col == "compute_s":
                        row.append(f"{comps[r]:.4f}")
                    elif col == "loss":
                        row.append(f"{loss:.4f}")
                    elif col == "grad_norm":
                        row.append(f"{0.8 + 0.05 * n('g', step):.4f}")
                    elif col == "param_checksum":
                        good = "%016x" % (int(hashlib.sha256(f'{c.id}-{step}'.encode()).hexdigest()[:16], 16))
                        bad = checksum_bad(r, t, step) if checksum_bad else None
                        row.append(bad or good)
                    elif col == "tokens_per_s":
                        row.append(f"{seg.tokens / dur:.0f}" if hasattr(seg, "tokens") else "")
                lines.append(",".join(row))
            t += (dur - ex) * seg.every + ex * extra_repeats
            step += seg.every
    c.put("job/steps.csv", "\n".join(lines) + "\n", gz=gz)


# --------------------------------------------------------------------------------------------
# metrics


def _gpu_labels(c: Case, h: Host, g: Gpu, style: str) -> str:
    base = f'gpu="{g.index}",UUID="{g.uuid}",pci_bus_id="{g.nvml}",device="nvidia{g.index}",modelName="{c.m["name"]}"'
    if style == "Hostname":
        return base + f',Hostname="{h.name}",DCGM_FI_DRIVER_VERSION="{c.driver}"'
    if style == "hostname":
        return base + f',hostname="{h.name}",DCGM_FI_DRIVER_VERSION="{c.driver}"'
    return base + f',instance="{h.name}:9400",job="dcgm"'


def dcgm_metrics(c: Case, *, families=None, step: int = 60, pre: int = 900, name: str = "dcgm.om", gz: bool | None = None,
                 hosts=None, extra_families=()) -> None:
    fams = list(families or BASE_FAMILIES) + list(extra_families)
    fams = [c.reasons_family if f == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" else f for f in fams]
    hosts = hosts or c.hosts
    times = list(range(c.t0 - pre, c.t1 + 1, step))
    cache = {}
    for h in hosts:
        for g in h.gpus:
            cache[(h.name, g.index)] = [c.gpu_state(h, g, t) for t in times]
    out = []
    for fam in fams:
        typ, hlp = HELP[fam]
        out.append(f"# HELP {fam} {hlp}")
        out.append(f"# TYPE {fam} {typ}")
        key = FAMILY_KEY[fam]
        for h in hosts:
            for g in h.gpus:
                lab = _gpu_labels(c, h, g, c.hostname_label)
                for t, s in zip(times, cache[(h.name, g.index)]):
                    if s["lost"]:
                        continue  # a lost GPU's series stop
                    out.append(f"{fam}{{{lab}}} {fmt(s[key])} {t}")
    out.append("# EOF")
    c.put("metrics/" + name, "\n".join(out) + "\n", gz=gz)


def node_metrics(c: Case, *, step: int = 60, pre: int = 900, gz: bool | None = None, ib: bool = True, cpu=None,
                 name: str = "node.om", instance_port: str = ":9100") -> None:
    """node_exporter families. cpu(host, t) -> (pressure_waiting_s_total, load1) or None for defaults."""
    times = list(range(c.t0 - pre, c.t1 + 1, step))
    out = []
    if ib:
        for fam, key, hlp in (("node_infiniband_port_data_received_bytes_total", "bytes", "Number of data octets received on all links"),
                              ("node_infiniband_port_data_transmitted_bytes_total", "bytes", "Number of data octets transmitted on all links"),
                              ("node_infiniband_port_errors_received_total", "rcv_errors", "Number of packets containing an error that were received on this port"),
                              ("node_infiniband_link_downed_total", "link_downed", "Number of times the link failed to recover from an error state and went down"),
                              ("node_infiniband_port_transmit_wait_total", "xmit_wait", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick")):
            out.append(f"# HELP {fam} {hlp}")
            out.append(f"# TYPE {fam} counter")
            for h in c.hosts:
                for nic in h.nics:
                    for t in times:
                        v = c.nic_state(h, nic, t)[key]
                        out.append(f'{fam}{{device="{nic.ibdev}",instance="{h.name}{instance_port}",port="1"}} {v} {t}')
    out.append("# HELP node_pressure_cpu_waiting_seconds_total Total time in seconds that processes have waited for CPU time")
    out.append("# TYPE node_pressure_cpu_waiting_seconds_total counter")
    rows_load = []
    for h in c.hosts:
        acc = 0.0
        for i, t in enumerate(times):
            p, load = (cpu(h, t) if cpu else None) or (0.004, 0.0)
            acc += p * step
            base = 1200.0 + 50 * abs(c._noise(h.name, "psi"))
            out.append(f'node_pressure_cpu_waiting_seconds_total{{instance="{h.name}{instance_port}"}} {base + acc:.3f} {t}')
            ld = load or ((22.0 + 3 * c._noise(h.name, t // 60, "ld")) if c.running(h, t) else 0.4)
            rows_load.append(f'node_load1{{instance="{h.name}{instance_port}"}} {ld:.2f} {t}')
    out.append("# HELP node_load1 1m load average.")
    out.append("# TYPE node_load1 gauge")
    out.extend(rows_load)
    out.append("# EOF")
    c.put("metrics/" + name, "\n".join(out) + "\n", gz=gz)


def switch_metrics(c: Case, rates, *, step: int = 60, pre: int = 1800, name: str = "switch.om", discards=None) -> None:
    """snmp_exporter port series. rates(switch, port, t) -> (in_Bps, out_Bps) or None to skip the port."""
    times = list(range(c.t0 - pre, c.t1 + 1, step))
    series = {"ifHCInOctets": [], "ifHCOutOctets": [], "ifOutDiscards": []}
    for sw in c.switches:
        ports = [l["port"] for l in sw.links]
        for p in ports:
            acc_in = 1.7e15 * (1 + 0.1 * c._noise(sw.name, p, "i"))
            acc_out = 1.6e15 * (1 + 0.1 * c._noise(sw.name, p, "o"))
            disc = 1000 + int(200 * abs(c._noise(sw.name, p, "d")))
            prev = times[0]
            for t in times:
                r = rates(sw, p, t)
                if r is None:
                    break
                dt = t - prev
                acc_in += r[0] * dt
                acc_out += r[1] * dt
                if discards:
                    disc += int(discards(sw, p, t) * dt)
                prev = t
                lab = f'ifName="{p}",instance="{sw.name}",job="snmp"'
                series["ifHCInOctets"].append(f"ifHCInOctets{{{lab}}} {int(acc_in)} {t}")
                series["ifHCOutOctets"].append(f"ifHCOutOctets{{{lab}}} {int(acc_out)} {t}")
                series["ifOutDiscards"].append(f"ifOutDiscards{{{lab}}} {disc} {t}")
    out = []
    for fam, rows in series.items():
        out.append(f"# HELP {fam} The total number of octets transmitted out of the interface, including framing characters. - 1.3.6.1.2.1.31.1.1.1.10"
                   if fam == "ifHCOutOctets" else
                   f"# HELP {fam} The total number of octets received on the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.6"
                   if fam == "ifHCInOctets" else
                   f"# HELP {fam} The number of outbound packets which were chosen to be discarded even though no errors had been detected - 1.3.6.1.2.1.2.2.1.19")
        out.append(f"# TYPE {fam} counter")
        out.extend(rows)
    out.append("# EOF")
    c.put("metrics/" + name, "\n".join(out) + "\n")


# --------------------------------------------------------------------------------------------
# node snapshots


def collected(c: Case, h: Host, keys=("before", "now", "boot")) -> None:
    d = {"before": c.before, "now": c.now, "boot": h.boot}
    c.put(f"nodes/{h.name}/collected.json", json.dumps({k: d[k] for k in keys}) + "\n")


def sys_gpu(c: Case, h: Host, *, old_kernel: bool = False, aer: bool = False) -> None:
    sp = SPEED_OLD if old_kernel else SPEED
    for when, t in (("", c.now), ("before/", c.before)):
        for g in h.gpus:
            s = c.gpu_state(h, g, t)
            base = f"nodes/{h.name}/{when}sys/bus/pci/devices/{g.sysfs}/"
            if when == "":
                if s["lost"]:
                    c.put(base + "current_link_speed", "Unknown\n")
                    c.put(base + "max_link_speed", "Unknown\n")
                    c.put(base + "current_link_width", "63\n")
                    c.put(base + "max_link_width", "63\n")
                else:
                    c.put(base + "current_link_speed", sp[s["gen"]] + "\n")
                    c.put(base + "max_link_speed", sp[s["gen_max"]] + "\n")
                    c.put(base + "current_link_width", f"{s['width']}\n")
                    c.put(base + "max_link_width", f"{s['width_max']}\n")
            if aer:
                rx = s.get("aer_rx", 0)
                bt = s.get("aer_badtlp", 0)
                tot = rx + bt + s.get("aer_timeout", 0)
                c.put(base + "aer_dev_correctable",
                      f"Receiver Error {rx}\nBad TLP {bt}\nBad DLLP 0\nRELAY_NUM Rollover 0\nReplay Timer Timeout {s.get('aer_timeout', 0)}\n"
                      f"Advisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR {tot}\n")


IB_COUNTERS = [("port_rcv_data", "bytes4"), ("port_xmit_data", "bytes4"), ("port_rcv_errors", "rcv_errors"),
               ("symbol_error", "symbol_error"), ("link_downed", "link_downed"),
               ("link_error_recovery", "link_error_recovery"), ("port_xmit_wait", "xmit_wait")]
HW_COUNTERS = [("out_of_sequence", "out_of_sequence"), ("packet_seq_err", "packet_seq_err"),
               ("local_ack_timeout_err", "local_ack_timeout_err")]
ROCE_COUNTERS = [("np_cnp_sent", "np_cnp_sent"), ("rp_cnp_handled", "rp_cnp_handled"),
                 ("np_ecn_marked_roce_packets", "np_ecn_marked")]


def sys_nic(c: Case, h: Host, *, old_kernel: bool = False, nics=None) -> None:
    sp = SPEED_OLD if old_kernel else SPEED
    for nic in (nics or h.nics):
        for when, t in (("", c.now), ("before/", c.before)):
            s = c.nic_state(h, nic, t)
            root = f"nodes/{h.name}/{when}sys/class/infiniband/{nic.ibdev}/ports/1/"
            if when == "":
                c.put(root + "state", "4: ACTIVE\n" if s["state"] == "ACTIVE" else "1: DOWN\n")
                c.put(root + "phys_state", "5: LinkUp\n" if s["state"] == "ACTIVE" else "3: Disabled\n")
                c.put(root + "rate", "400 Gb/sec (4X NDR)\n")
                c.put(root + "link_layer", nic.link_layer + "\n")
                pci = f"nodes/{h.name}/sys/bus/pci/devices/{nic.sysfs}/"
                c.put(pci + "current_link_speed", sp[s["gen"]] + "\n")
                c.put(pci + "max_link_speed", sp[s["gen_max"]] + "\n")
                c.put(pci + "current_link_width", f"{s['width']}\n")
                c.put(pci + "max_link_width", f"{s['width_max']}\n")
                net = f"nodes/{h.name}/sys/class/net/{nic.netdev}/"
                c.put(net + "operstate", "up\n" if s["state"] == "ACTIVE" else "down\n")
                c.put(net + "carrier_changes", f"{s['carrier_changes']}\n")
            for name, key in IB_COUNTERS:
                v = s["bytes"] // 4 if key == "bytes4" else 0 if key == "zero" else s[key]
                c.put(root + f"counters/{name}", f"{v}\n")
            hw = HW_COUNTERS + (ROCE_COUNTERS if nic.link_layer == "Ethernet" else [])
            for name, key in hw:
                c.put(root + f"hw_counters/{name}", f"{s[key]}\n")


def ethtool_s(c: Case, h: Host, nic: Nic, *, before: bool = True) -> None:
    for when, t in (("", c.now), ("before/", c.before)) if before else (("", c.now),):
        s = c.nic_state(h, nic, t)
        pk = s["bytes"] // 4100
        rows = [("rx_packets", pk), ("tx_packets", pk + 1233), ("rx_bytes", s["bytes"]), ("tx_bytes", s["bytes"] + 90211),
                ("rx_vport_rdma_unicast_packets", pk - 5000), ("tx_vport_rdma_unicast_packets", pk - 4800),
                ("rx_packets_phy", pk + 71123), ("tx_packets_phy", pk + 69990), ("rx_bytes_phy", s["bytes"] + 4 * pk),
                ("tx_bytes_phy", s["bytes"] + 4 * pk + 1024), ("rx_crc_errors_phy", 0), ("rx_symbol_err_phy", s["rx_symbol_err"]),
                ("rx_discards_phy", s["rx_discards_phy"]), ("tx_discards_phy", 0), ("rx_out_of_buffer", s["rx_out_of_buffer"]),
                ("link_down_events_phy", s["link_down_events"]), ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0),
                ("rx_prio3_bytes", s["bytes"] - 9000), ("rx_prio3_packets", pk - 10), ("tx_prio3_bytes", s["bytes"] - 8000),
                ("tx_prio3_packets", pk - 9), ("rx_prio3_pause", s["rx_pause"]), ("rx_prio3_pause_duration", s["rx_pause_dur"]),
                ("rx_prio3_pause_transition", s["rx_pause"] // 2), ("tx_prio3_pause", s["tx_pause"]),
                ("tx_prio3_pause_duration", s["tx_pause_dur"]), ("tx_prio3_pause_transition", s["tx_pause"] // 2),
                ("rx_prio3_discards", 0), ("tx_pause_storm_warning_events", s["storm_warn"]),
                ("tx_pause_storm_error_events", s["storm_err"]), ("outbound_pci_stalled_rd", s["outbound_stalled_rd"]),
                ("outbound_pci_stalled_wr", s["outbound_stalled_wr"]), ("outbound_pci_stalled_rd_events", s["outbound_stalled_rd"] // 9),
                ("outbound_pci_stalled_wr_events", s["outbound_stalled_wr"] // 9), ("module_high_temp", 0), ("module_unplug", 0)]
        body = "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in rows)
        c.put(f"nodes/{h.name}/{when}cmd/ethtool-S-{nic.netdev}.txt", body)


def ethtool_fec(c: Case, h: Host, nic: Nic) -> None:
    for when, t in (("", c.now), ("before/", c.before)):
        s = c.nic_state(h, nic, t)
        corr, unc = s["fec_corr"], s["fec_uncorr"]
        lanes = [corr // 4 + i * 7 for i in range(4)]
        lanes[0] += corr - sum(lanes)
        body = (f"FEC parameters for {nic.netdev}:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\n"
                f"Statistics:\n  corrected_blocks: {corr}\n    Lane 0: {lanes[0]}\n    Lane 1: {lanes[1]}\n    Lane 2: {lanes[2]}\n    Lane 3: {lanes[3]}\n"
                f"  uncorrectable_blocks: {unc}\n")
        c.put(f"nodes/{h.name}/{when}cmd/ethtool-I-show-fec-{nic.netdev}.txt", body)


def ibstat(c: Case, h: Host) -> None:
    out = []
    for nic in h.nics:
        s = c.nic_state(h, nic, c.now)
        up = s["state"] == "ACTIVE"
        out.append(f"CA '{nic.ibdev}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.41.1000\n\tHardware version: 0\n"
                   f"\tNode GUID: 0x{int(hashlib.md5((h.name + nic.ibdev).encode()).hexdigest()[:16], 16):016x}\n"
                   f"\tSystem image GUID: 0x{int(hashlib.md5(h.name.encode()).hexdigest()[:16], 16):016x}\n"
                   f"\tPort 1:\n\t\tState: {'Active' if up else 'Down'}\n\t\tPhysical state: {'LinkUp' if up else 'Disabled'}\n"
                   f"\t\tRate: {400 if up else 10}\n\t\tBase lid: {(17 + 8 * c.hosts.index(h) + int(nic.ibdev[-1])) if nic.link_layer == 'InfiniBand' else 0}\n"
                   f"\t\tLMC: 0\n\t\tSM lid: {1 if nic.link_layer == 'InfiniBand' else 0}\n\t\tCapability mask: 0x2651e848\n"
                   f"\t\tPort GUID: 0x{int(hashlib.md5((h.name + nic.ibdev + 'p').encode()).hexdigest()[:16], 16):016x}\n"
                   f"\t\tLink layer: {nic.link_layer}\n")
    c.put(f"nodes/{h.name}/cmd/ibstat.txt", "\n".join(out))


def nvml_json(c: Case, h: Host, *, events=()) -> None:
    devs = []
    for g in h.gpus:
        s = c.gpu_state(h, g, c.now)
        if s["lost"]:
            devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml, "error": "GPU is lost"})
            continue
        devs.append({
            "index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml, "name": c.m["name"],
            "nvmlDeviceGetCurrPcieLinkGeneration": s["gen"], "nvmlDeviceGetMaxPcieLinkGeneration": s["gen_max"],
            "nvmlDeviceGetCurrPcieLinkWidth": s["width"], "nvmlDeviceGetMaxPcieLinkWidth": s["width_max"],
            "nvmlDeviceGetPcieReplayCounter": s["replay"], "nvmlDeviceGetTemperature": s["temp"],
            "nvmlDeviceGetPowerUsage": int(s["power"] * 1000), "nvmlDeviceGetEnforcedPowerLimit": int(s["limit"] * 1000),
            "nvmlDeviceGetClockInfo": {"sm": s["sm"], "mem": s["mem"]},
            "nvmlDeviceGetMaxClockInfo": {"sm": c.m["sm"], "mem": c.m["mem"]},
            "nvmlDeviceGetCurrentClocksEventReasons": s["reasons"],
            "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": s["sbe"], "uncorrected_volatile": s["dbe"]},
            "nvmlDeviceGetRemappedRows": {"corrected": s["remap_corr"], "uncorrected": s["remap_unc"],
                                          "pending": s["remap_pending"], "failure": s["remap_failure"]},
        })
    c.put(f"nodes/{h.name}/nvml.json", json.dumps({"driver_version": c.driver, "devices": devs, "events": list(events)}, indent=1) + "\n")


def _act(b: bool) -> str:
    return "Active" if b else "Not Active"


def nvidia_smi_q(c: Case, h: Host, *, throttle_words: bool = False) -> None:
    m = c.m
    stamp = datetime.fromtimestamp(c.now, tz=timezone.utc).strftime("%a %b %d %H:%M:%S %Y")
    out = [f"\n==============NVSMI LOG==============\n\nTimestamp                                 : {stamp}",
           f"Driver Version                            : {c.driver}", "CUDA Version                              : 12.4", "",
           f"Attached GPUs                             : {len(h.gpus)}"]
    for g in h.gpus:
        s = c.gpu_state(h, g, c.now)
        if s["lost"]:
            continue  # nvidia-smi leaves out a GPU it cannot reach (it prints an error on stderr)
        r = s["reasons"]
        head = "Clocks Throttle Reasons" if throttle_words else "Clocks Event Reasons"
        out += [f"GPU {g.nvml}",
                f"    Product Name                          : {m['name']}",
                "    Product Brand                         : NVIDIA", "    Persistence Mode                      : Enabled",
                f"    GPU UUID                              : {g.uuid}", f"    Minor Number                          : {g.index}",
                f"    VBIOS Version                         : {m['vbios']}", f"    Module ID                             : {g.index + 1}",
                "    GPU Reset Status",
                f"        Reset Required                    : {'Yes' if s['remap_pending'] else 'No'}",
                "        Drain and Reset Recommended       : No",
                "    PCI", f"        Bus                               : 0x{g.bus.upper()}",
                "        Device                            : 0x00", "        Domain                            : 0x0000",
                f"        Device Id                         : 0x{m['dev'].upper()}10DE", f"        Bus Id                            : {g.nvml}",
                "        GPU Link Info", "            PCIe Generation",
                f"                Max                       : {s['gen_max']}", f"                Current                   : {s['gen']}",
                f"                Device Current            : {s['gen']}", f"                Device Max                : {s['gen_max']}",
                f"                Host Max                  : {s['gen_max']}", "            Link Width",
                f"                Max                       : {s['width_max']}x", f"                Current                   : {s['width']}x",
                f"        Replays Since Reset               : {s['replay']}", "        Replay Number Rollovers           : 0",
                f"    Performance State                     : {s['pstate']}",
                f"    {head}",
                f"        Idle                              : {_act(r & 0x1)}",
                f"        Applications Clocks Setting       : {_act(r & 0x2)}",
                f"        SW Power Cap                      : {_act(r & 0x4)}",
                f"        HW Slowdown                       : {_act(r & 0x8)}",
                f"            HW Thermal Slowdown           : {_act(r & 0x40)}",
                f"            HW Power Brake Slowdown       : {_act(r & 0x80)}",
                f"        Sync Boost                        : {_act(r & 0x10)}",
                f"        SW Thermal Slowdown               : {_act(r & 0x20)}",
                f"        Display Clock Setting             : {_act(r & 0x100)}",
                "    ECC Mode", "        Current                           : Enabled", "        Pending                           : Enabled",
                "    ECC Errors", "        Volatile",
                "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                f"            DRAM Correctable              : {s['sbe']}", f"            DRAM Uncorrectable            : {s['dbe']}",
                "        Aggregate", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                f"            DRAM Correctable              : {s['sbe'] + s['sbe_agg']}", f"            DRAM Uncorrectable            : {s['dbe'] + s['dbe_agg']}",
                "    Retired Pages", "        Single Bit ECC                    : N/A", "        Double Bit ECC                    : N/A",
                "        Pending Page Blacklist            : N/A",
                "    Remapped Rows", f"        Correctable Error                 : {s['remap_corr']}",
                f"        Uncorrectable Error               : {s['remap_unc']}",
                f"        Pending                           : {'Yes' if s['remap_pending'] else 'No'}",
                f"        Remapping Failure Occurred        : {'Yes' if s['remap_failure'] else 'No'}",
                "        Bank Remap Availability Histogram",
                f"            Max                           : {640 - s['remap_corr'] - s['remap_unc']} bank(s)",
                f"            High                          : {s['remap_corr'] + s['remap_unc']} bank(s)",
                "            Partial                       : 0 bank(s)", "            Low                           : 0 bank(s)",
                "            None                          : 0 bank(s)",
                "    Temperature", f"        GPU Current Temp                  : {s['temp']} C",
                "        GPU T.Limit Temp                  : N/A", "        GPU Shutdown Temp                 : 92 C",
                "        GPU Slowdown Temp                 : 89 C", "        GPU Max Operating Temp            : 87 C",
                "        GPU Target Temperature            : N/A", f"        Memory Current Temp               : {s['mem_temp']} C",
                "        Memory Max Operating Temp         : 95 C",
                "    GPU Power Readings", f"        Power Draw                        : {s['power']:.2f} W",
                f"        Current Power Limit               : {s['limit']:.2f} W", f"        Requested Power Limit             : {s['limit']:.2f} W",
                f"        Default Power Limit               : {m['limit']:.2f} W", "        Min Power Limit                   : 200.00 W",
                f"        Max Power Limit                   : {m['limit']:.2f} W",
                "    Clocks", f"        Graphics                          : {s['sm']} MHz", f"        SM                                : {s['sm']} MHz",
                f"        Memory                            : {s['mem']} MHz", "        Video                             : 1755 MHz",
                "    Max Clocks", f"        Graphics                          : {m['sm']} MHz", f"        SM                                : {m['sm']} MHz",
                f"        Memory                            : {m['mem']} MHz", "        Video                             : 1965 MHz",
                "    Fabric", "        State                             : Completed", "        Status                            : Success",
                ""]
    c.put(f"nodes/{h.name}/cmd/nvidia-smi-q.txt", "\n".join(out) + "\n")


def lspci(c: Case, h: Host) -> None:
    out = []
    rows = [(g.bus, "gpu", g) for g in h.gpus] + [(n.bus, "nic", n) for n in h.nics]
    for bus, kind, obj in sorted(rows, key=lambda r: r[0]):
        if kind == "gpu":
            s = c.gpu_state(h, obj, c.now)
            if s["lost"]:
                out.append(f"{bus}:00.0 3D controller: NVIDIA Corporation Device {c.m['dev']} (rev ff) (prog-if ff)\n"
                           "\t!!! Unknown header type 7f\n\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
                continue
            title = f"{bus}:00.0 3D controller: NVIDIA Corporation Device {c.m['dev']} (rev a1)\n\tSubsystem: NVIDIA Corporation Device 16c1\n"
            driver = "\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
            cap = "Port #0"
        else:
            s = c.nic_state(h, obj, c.now)
            title = (f"{bus}:00.0 {'Infiniband' if obj.link_layer == 'InfiniBand' else 'Ethernet'} controller: "
                     "Mellanox Technologies MT2910 Family [ConnectX-7]\n\tSubsystem: Mellanox Technologies Device 0051\n")
            driver = "\tKernel driver in use: mlx5_core\n\tKernel modules: mlx5_core\n"
            cap = "Port #0"
        sp, spm = LSPCI_SPEED[s["gen"]], LSPCI_SPEED[s["gen_max"]]
        sok = "ok" if s["gen"] >= s["gen_max"] else "downgraded"
        wok = "ok" if s["width"] >= s["width_max"] else "downgraded"
        out.append(title + "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
                   "\t\tDevSta:\tCorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-\n"
                   f"\t\tLnkCap:\t{cap}, Speed {spm}, Width x{s['width_max']}, ASPM L1, Exit Latency L1 <4us\n"
                   "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+\n"
                   f"\t\tLnkSta:\tSpeed {sp} ({sok}), Width x{s['width']} ({wok})\n"
                   "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
                   f"\t\tLnkCap2: Supported Link Speeds: 2.5-{spm}, Crosslink- Retimer+ 2Retimers+ DRS-\n"
                   f"\t\tLnkCtl2: Target Link Speed: {spm}, EnterCompliance- SpeedDis-\n" + driver)
    c.put(f"nodes/{h.name}/cmd/lspci-vv.txt", "\n".join(out))


# --------------------------------------------------------------------------------------------
# kernel log


def dmesg_text(c: Case, h: Host, events: list, style: str | None = None) -> str:
    """events: (unix time, level, text). Renders as plain / caller / ctime / journal / kmsg / syslog."""
    style = style or c.dmesg_style
    out = []
    for seq, (t, lvl, text) in enumerate(sorted(events, key=lambda e: e[0])):
        if t == int(t):  # whole-second event times get the sub-second part a real clock has
            t += 0.05 + 0.9 * (c._noise(h.name, text[:60], "frac") + 1) / 2
        up = t - h.boot
        sec, usec = int(up), int(round((up - int(up)) * 1e6)) % 1000000
        dt = datetime.fromtimestamp(int(t), tz=timezone.utc)
        if style == "plain":
            out.append(f"[{sec:5d}.{usec:06d}] {text}")
        elif style == "caller":
            tid = 1000 + int(abs(c._noise(h.name, text[:20])) * 4000)
            out.append(f"[{sec:5d}.{usec:06d}] [{'T' + str(tid):>6}] {text}")
        elif style == "ctime":
            out.append(f"[{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S %Y}] {text}")
        elif style == "journal":
            out.append(f"{dt:%b} {dt.day:2d} {dt:%H:%M:%S} {h.short} kernel: {text}")
        elif style == "syslog":  # journal/syslog prefix with the kernel timestamp inside
            out.append(f"{dt:%b} {dt.day:2d} {dt:%H:%M:%S} {h.short} kernel: [{sec:5d}.{usec:06d}] {text}")
        elif style == "kmsg":
            out.append(f"{lvl},{4000 + 7 * seq},{int(up * 1e6)},-;{text}")
        else:
            raise ValueError(style)
    return "\n".join(out) + "\n"


def boot_lines(c: Case, h: Host) -> list:
    b = h.boot
    ev = [(b + 0.0, 5, "Linux version 5.15.0-119-generic (buildd@lcy02-amd64-041) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 (Ubuntu 5.15.0-119.129-generic 5.15.160)"),
          (b + 0.000001, 6, "Command line: BOOT_IMAGE=/boot/vmlinuz-5.15.0-119-generic root=UUID=3d1c2f7e-55a1-4a8e-9f0e-0e6c1b1f2a11 ro iommu=pt pci=realloc=off")]
    for i, g in enumerate(h.gpus):
        ev.append((b + 8.1 + 0.01 * i, 6, f"nvidia 0000:{g.bus}:00.0: enabling device (0000 -> 0002)"))
    ev.append((b + 9.2, 6, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {c.driver}  Tue Jun  4 01:11:36 UTC 2024"))
    for i, n in enumerate(h.nics):
        ev.append((b + 5.4 + 0.02 * i, 6, f"mlx5_core 0000:{n.bus}:00.0: firmware version: 28.41.1000"))
        ev.append((b + 5.5 + 0.02 * i, 6, f"mlx5_core 0000:{n.bus}:00.0: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)"))
        ev.append((b + 31.0 + 0.1 * i, 6, f"mlx5_core 0000:{n.bus}:00.0 {n.ibdev}: Port: 1 Link ACTIVE" if n.link_layer == "InfiniBand"
                   else f"mlx5_core 0000:{n.bus}:00.0 {n.netdev}: Link up"))
    ev.append((b + 40.5, 6, "nvidia-peermem: module verification failed: signature and/or required key missing - tainting kernel"))
    return ev


def dmesg(c: Case, h: Host, extra=(), style: str | None = None, gz: bool = False) -> None:
    c.put(f"nodes/{h.name}/cmd/dmesg.txt", dmesg_text(c, h, boot_lines(c, h) + list(extra), style), gz=gz)


# --------------------------------------------------------------------------------------------
# other host commands


def pressure(c: Case, h: Host, kind: str, some10: float, some60: float, some300: float, total_us: int,
             full=None) -> None:
    body = f"some avg10={some10:.2f} avg60={some60:.2f} avg300={some300:.2f} total={total_us}\n"
    if full is not None:
        f10, f60, f300, ftot = full
        body += f"full avg10={f10:.2f} avg60={f60:.2f} avg300={f300:.2f} total={ftot}\n"
    elif kind != "cpu":
        body += f"full avg10=0.00 avg60=0.00 avg300=0.00 total={total_us // 3}\n"
    else:
        body += "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    c.put(f"nodes/{h.name}/cmd/pressure-{kind}.txt", body)


def top(c: Case, h: Host, procs: list, *, load=(22.1, 21.8, 21.5), cpu_line=None, mem=None) -> None:
    dt = datetime.fromtimestamp(c.now, tz=timezone.utc)
    up_days = int((c.now - h.boot) // 86400)
    cpu_line = cpu_line or "%Cpu(s): 18.2 us,  3.1 sy,  0.0 ni, 78.1 id,  0.2 wa,  0.0 hi,  0.4 si,  0.0 st"
    mem = mem or ("MiB Mem : 2063937.4 total, 1402211.8 free, 402118.6 used, 259607.0 buff/cache",
                  "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1650211.3 avail Mem")
    out = [f"top - {dt:%H:%M:%S} up {up_days} days,  3:12,  2 users,  load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
           f"Tasks: {912 + len(procs)} total,   {sum(1 for p in procs if p[7] == 'R')} running, 901 sleeping,   0 stopped,   0 zombie",
           cpu_line, mem[0], mem[1], "",
           "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for pid, user, virt, res, shr, cpu, memp, st, tm, cmd in [(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]) for p in procs]:
        out.append(f"{pid:>7} {user:<9} 20   0 {virt:>7} {res:>6} {shr:>6} {st} {cpu:>5.1f} {memp:>5.1f} {tm:>9} {cmd}")
    c.put(f"nodes/{h.name}/cmd/top.txt", "\n".join(out) + "\n")


def trainer_procs(c: Case, h: Host, cpu_each: float = 101.0) -> list:
    rows = []
    for i in range(8):
        pid = 401200 + 37 * i + int(abs(c._noise(h.name, "pid")) * 1000)
        rows.append((pid, "train", "112.4g", "31.2g", "2.1g", cpu_each + 3 * c._noise(h.name, i, "cpu"), 1.5, "R", "1921:44", "python"))
    return rows


def sel(c: Case, h: Host, rows: list) -> None:
    """rows: (unix time, sensor, event, Asserted/Deasserted)."""
    out = []
    base = [(h.boot - 3600 * 24 * 30, "Event Logging Disabled #0x72", "Log area reset/cleared", "Asserted"),
            (h.boot + 2, "System Event #0x83", "Timestamp Clock Sync", "Asserted"),
            (h.boot + 3, "System Event #0x83", "Timestamp Clock Sync", "Asserted")]
    for i, (t, sensor, ev, state) in enumerate(sorted(base + list(rows), key=lambda r: r[0])):
        dt = datetime.fromtimestamp(int(t), tz=timezone.utc)
        out.append(f"{i + 1:4x} | {dt:%m/%d/%Y} | {dt:%H:%M:%S} | {sensor} | {ev} | {state}")
    c.put(f"nodes/{h.name}/cmd/ipmitool-sel-elist.txt", "\n".join(out) + "\n")


def sdr_fan(c: Case, h: Host, rpms: list, bad=()) -> None:
    out = []
    for i, r in enumerate(rpms):
        name = f"Fan{i // 2 + 1}{'A' if i % 2 == 0 else 'B'}"
        st = "cr" if i in bad else "ok"
        out.append(f"{name:<16} | {0x30 + i:02X}h | {st}  |  7.{i // 2 + 1} | {r} RPM" if st == "ok" or r else
                   f"{name:<16} | {0x30 + i:02X}h | {st}  |  7.{i // 2 + 1} | 0 RPM")
    c.put(f"nodes/{h.name}/cmd/ipmitool-sdr-type-fan.txt", "\n".join(out) + "\n")


def nvlink_e(c: Case, h: Host, *, links: int = 18) -> None:
    out = []
    for g in h.gpus:
        s = c.gpu_state(h, g, c.now)
        if s["lost"]:
            continue
        out.append(f"GPU {g.index}: {c.m['name']} (UUID: {g.uuid})")
        per = s.get("nvl_links", {})
        for li in range(links):
            e = per.get(li, {})
            out.append(f"\t Link {li}: Replay Errors: {e.get('replay', 0)}")
            out.append(f"\t Link {li}: Recovery Errors: {e.get('recovery', 0)}")
            out.append(f"\t Link {li}: CRC Errors: {e.get('crc', 0)}")
    c.put(f"nodes/{h.name}/cmd/nvidia-smi-nvlink-e.txt", "\n".join(out) + "\n")


# --------------------------------------------------------------------------------------------
# switch commands (SONiC)


def sonic_interfaces_counters(c: Case, sw: Switch, ports: list, rows: dict, when: str = "") -> None:
    """rows: port -> dict(rx_ok, rx_err, rx_drp, tx_ok, tx_err, tx_drp, rx_bps, tx_bps, util)."""
    head = ("      IFACE    STATE       RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR       TX_OK        TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
            "-----------  -------  ----------  ------------  ---------  --------  --------  --------  ----------  ------------  ---------  --------  --------  --------")
    out = [head]
    for p in ports:
        r = rows[p]
        out.append(f"{p:>11}        U  {r['rx_ok']:>10,}  {r['rx_bps']:>12}  {r['rx_util']:>9}  {r['rx_err']:>8,}  {r['rx_drp']:>8,}  {0:>8}  "
                   f"{r['tx_ok']:>10,}  {r['tx_bps']:>12}  {r['tx_util']:>9}  {r['tx_err']:>8,}  {r['tx_drp']:>8,}  {0:>8}")
    c.put(f"switches/{sw.name}/{when}cmd/show-interfaces-counters.txt", "\n".join(out) + "\n")


def sonic_pfc_counters(c: Case, sw: Switch, ports: list, rx: dict, tx: dict) -> None:
    def table(kind, vals):
        lines = [f"     Port {kind}    PFC0    PFC1    PFC2        PFC3    PFC4    PFC5    PFC6    PFC7",
                 "-----------  ------  ------  ------  ----------  ------  ------  ------  ------"]
        for p in ports:
            lines.append(f"{p:>11}       0       0       0  {vals.get(p, 0):>10,}       0       0       0       0")
        return "\n".join(lines)
    c.put(f"switches/{sw.name}/cmd/show-pfc-counters.txt", table("Rx", rx) + "\n\n" + table("Tx", tx) + "\n")


def sonic_pfcwd(c: Case, sw: Switch, rows: list) -> None:
    out = ["      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
           "-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for q, st, dr, txo, rxo, txl, rxl in rows:
        out.append(f"{q:>11}  {st:>11}  {dr:>25}  {txo:>12}  {rxo:>12}  {txl:>17}  {rxl:>17}")
    c.put(f"switches/{sw.name}/cmd/show-pfcwd-stats.txt", "\n".join(out) + "\n")


# --------------------------------------------------------------------------------------------
# job logs


def glog_ts(t: float) -> str:
    dt = datetime.fromtimestamp(t, tz=timezone.utc)
    return f"{dt:%Y-%m-%d %H:%M:%S},{int((t % 1) * 1000):03d}"


def nccl_init(c: Case, *, ib_list: str | None = None, socket: bool = False, env=(), channels="gdr", version="2.21.5",
              hosts=None, oob="eth0") -> list[str]:
    """NCCL INFO lines of rank 0..7 of the first hosts (what a job log keeps)."""
    out = [f"NCCL version {version}+cuda12.4"]
    hosts = hosts or c.job_hosts[:2]
    for hi, h in enumerate(hosts):
        ip = f"10.{40 + hi}.{c.hosts.index(h) % 250}.{11 + hi}"
        for g in range(8 if hi == 0 else 2):
            pid = 120890 + 7 * g + 1000 * hi
            pre = f"{h.short}:{pid}:{pid + 670} [{g}]"
            for k, v in env:
                out.append(f"{pre} NCCL INFO {k} set by environment to {v}.")
            out.append(f"{pre} NCCL INFO Bootstrap : Using {oob}:{ip}<0>")
            if socket:
                out.append(f"{pre} NCCL INFO NET/Socket : Using [0]{oob}:{ip}<0>")
                out.append(f"{pre} NCCL INFO Using network Socket")
            else:
                devs = " ".join(f"[{i}]{d}:1/{'IB' if c.job_hosts[0].nics[0].link_layer == 'InfiniBand' else 'RoCE'}"
                                for i, d in enumerate(ib_list.split(",") if ib_list else [n.ibdev for n in h.nics]))
                out.append(f"{pre} NCCL INFO NET/IB : Using {devs} [RO]; OOB {oob}:{ip}<0>")
                out.append(f"{pre} NCCL INFO Using network IB")
            r = hi * 8 + g
            busid = h.gpus[g].bus + "000"
            peer = h.gpus[(g + 1) % 8].bus + "000"
            if channels == "shm":
                out.append(f"{pre} NCCL INFO Channel 00/0 : {r}[{busid}] -> {r + 1 if g < 7 else r - 7}[{peer}] via SHM/direct/direct")
            else:
                out.append(f"{pre} NCCL INFO Channel 00/0 : {r}[{busid}] -> {r + 1 if g < 7 else r - 7}[{peer}] via P2P/CUMEM/read")
            nxt = (hi + 1) % max(2, len(c.job_hosts))
            tr = "NET/Socket/0" if socket else ("NET/IB/0" if channels == "nogdr" else f"NET/IB/{g % (len(ib_list.split(',')) if ib_list else 8)}/GDRDMA")
            out.append(f"{pre} NCCL INFO Channel 01/0 : {nxt * 8 + g}[{busid}] -> {r}[{busid}] [receive] via {tr}")
            out.append(f"{pre} NCCL INFO comm 0x55{(pid * 7919) % 0xffffff:06x}0 rank {r} nranks {8 * len(c.job_hosts)} cudaDev {g} "
                       f"nvmlDev {g} busId {busid} commId 0x5ae77eb5ea4ec1ee - Init COMPLETE")
    return out
