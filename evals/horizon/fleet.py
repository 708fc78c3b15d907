"""One physical model of a fleet per case; every source is printed from it.

Standard library only. Deterministic: every random draw comes from the case's own Random.
"""
import datetime as _dt
import gzip
import hashlib
import io
import json
import os

GPU_MODELS = {
    "h100": dict(name="NVIDIA H100 80GB HBM3", dev="2330", maxclk=1980, mem=2619, plimit=700000,
                 gen=5, arch="Hopper", fb=81559, slow=87, shut=92),
    "h200": dict(name="NVIDIA H200", dev="2335", maxclk=1980, mem=3201, plimit=700000,
                 gen=5, arch="Hopper", fb=143771, slow=87, shut=92),
    "a100": dict(name="NVIDIA A100-SXM4-80GB", dev="20b2", maxclk=1410, mem=1593, plimit=400000,
                 gen=4, arch="Ampere", fb=81920, slow=89, shut=92),
    "b200": dict(name="NVIDIA B200", dev="2901", maxclk=1965, mem=3996, plimit=1000000,
                 gen=5, arch="Blackwell", fb=183359, slow=88, shut=95),
}
GPU_BUS = [0x19, 0x3B, 0x4C, 0x5D, 0x9B, 0xBB, 0xCB, 0xDB]
NIC_BUS = [0x1A, 0x3C, 0x4D, 0x5E, 0x9C, 0xBC, 0xCC, 0xDC]
SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}
SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}
GTS = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

# NVML clock event reason bits
IDLE, SW_PWR, HW_SLOW, SYNC, SW_THERM, HW_THERM, HW_BRAKE = 0x1, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80


def iso(t):
    return _dt.datetime.fromtimestamp(int(t), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc(t):
    return _dt.datetime.fromtimestamp(int(t), _dt.timezone.utc)


def ts_epoch(s):
    return int(_dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.timezone.utc).timestamp())


def uuid_for(rng):
    h = "%032x" % rng.getrandbits(128)
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


class Gpu:
    def __init__(self, host, index, bus, model, rng):
        self.host = host
        self.index = index
        self.bus = bus
        self.model = model
        m = GPU_MODELS[model]
        self.m = m
        self.uuid = uuid_for(rng)
        self.serial = str(1650000000000 + rng.randrange(10 ** 9))
        self.busy = True
        # behaviour (base, then after fault start `fs` if set)
        self.fs = None
        self.clk = m["maxclk"] - rng.choice([0, 15, 30, 45, 60, 75])  # SW power cap decoy on busy GPUs
        self.clk_f = None
        self.temp = rng.randrange(52, 66)
        self.temp_f = None
        self.power = m["plimit"] - rng.randrange(2000, 14000)
        self.power_f = None
        self.plimit = m["plimit"]
        self.reasons = SW_PWR if self.clk < m["maxclk"] else 0
        self.reasons_f = None
        self.therm_rate = 0.0  # ns of violation per s
        self.therm_rate_f = 0.0
        self.pow_rate = 3.0e8 if self.reasons & SW_PWR else 0.0
        self.pow_rate_f = None
        self.sbe0 = 0
        self.sbe_rate_f = 0.0
        self.dbe0 = 0
        self.dbe_f = 0
        self.remap = [0, 0, False, False]
        self.remap_f = None
        self.nvl0 = [0, 0, 0]  # crc flit, replay, recovery (totals)
        self.nvl_rate_f = [0.0, 0.0, 0.0]
        self.nvl_link = 0
        self.replay0 = 0
        self.replay_rate_f = 0.0
        self.gen = m["gen"]
        self.gen_max = m["gen"]
        self.width = 16
        self.width_max = 16
        self.lost_at = None
        self.util = 100
        self.tensor = 0.0
        self.aer_cor = 0
        self.agg_extra = 0
        self.gen_f = None
        self.idle_after = None
        self.idle_before = None
        self.width_f = None
        self.nvl_static = {}
        self.t0 = 0
        self.therm0 = rng.randrange(0, 10 ** 9)
        self.pow0 = rng.randrange(10 ** 10, 10 ** 12)

    def at(self, t):
        f = self.fs is not None and t >= self.fs
        if self.lost_at is not None and t >= self.lost_at:
            return None
        busy = self.busy and not (self.idle_after is not None and t >= self.idle_after) \
            and not (self.idle_before is not None and t < self.idle_before)
        d = {}
        d["clk"] = (self.clk_f if (f and self.clk_f is not None) else self.clk) if busy else 345
        d["temp"] = (self.temp_f if (f and self.temp_f is not None) else self.temp) if busy else self.temp
        d["power"] = (self.power_f if (f and self.power_f is not None) else self.power) if busy else 71000 + self.index * 900
        r = self.reasons_f if (f and self.reasons_f is not None) else self.reasons
        d["reasons"] = r if busy else IDLE
        dt_f = max(0.0, t - self.fs) if self.fs is not None else 0.0
        d["therm_ns"] = int(self.therm_rate * (t - self.t0) + self.therm_rate_f * dt_f) + self.therm0
        pr = self.pow_rate_f if self.pow_rate_f is not None else self.pow_rate
        d["pow_ns"] = int(self.pow_rate * (t - self.t0) + (pr - self.pow_rate) * dt_f) + self.pow0
        d["sbe"] = self.sbe0 + int(self.sbe_rate_f * dt_f)
        d["dbe"] = self.dbe0 + (self.dbe_f if f else 0)
        d["remap"] = list(self.remap_f) if (f and self.remap_f) else list(self.remap)
        d["nvl"] = [self.nvl0[i] + int(self.nvl_rate_f[i] * dt_f) for i in range(3)]
        d["replay"] = self.replay0 + int(self.replay_rate_f * dt_f)
        gen = self.gen_f if (f and self.gen_f) else self.gen
        d["gen"] = gen if busy else 1
        d["width"] = self.width_f if (f and self.width_f) else self.width
        return d


class Nic:
    def __init__(self, host, idx, bus, ibdev, netdev, ll, rng):
        self.host = host
        self.idx = idx
        self.bus = bus
        self.ibdev = ibdev
        self.netdev = netdev
        self.ll = ll
        self.switch = None
        self.sport = None
        self.fs = None
        self.tx_rate = 0.0  # bytes/s
        self.rx_rate = 0.0
        self.tx_rate_f = None
        self.rx_rate_f = None
        self.txp = 0.0  # pause frames/s transmitted by NIC
        self.rxp = 0.0
        self.txp_f = None
        self.rxp_f = None
        self.sym_rate_f = 0.0
        self.rcverr_rate_f = 0.0
        self.downs_f = 0
        self.acktmo_rate_f = 0.0
        self.fec_rate_f = 0.0
        self.rate_gbs = 400
        self.rate_f = None
        self.gen = 5
        self.width = 16
        self.disc_rate_f = 0.0
        self.oob_rate_f = 0.0
        self.stall_rate_f = 0.0
        self.storm_warn = 0
        self.fec_unc_rate_f = 0.0
        self.down_between = None
        self.guid = rng.getrandbits(63) | (0x946dae << 40)
        self.lid = rng.randrange(10, 4000)
        self.c0 = {k: rng.randrange(10 ** 11, 10 ** 13) for k in ("tx", "rx")}
        self.c0.update({"txp": rng.randrange(0, 4000), "rxp": rng.randrange(1000, 90000),
                        "sym": rng.choice([0, 0, 0, 2, 7]), "rcverr": rng.choice([0, 0, 1, 3, 14]),
                        "downs": rng.choice([0, 0, 0, 1]), "acktmo": rng.choice([0, 0, 2]),
                        "wait": rng.randrange(10 ** 8, 3 * 10 ** 9), "fec": rng.randrange(10 ** 5, 10 ** 7),
                        "cnp": rng.randrange(10 ** 4, 10 ** 6)})

    def state_at(self, t):
        if self.down_between and self.down_between[0] <= t < self.down_between[1]:
            return False
        return True

    def cnt(self, t, t0):
        f = self.fs is not None and t >= self.fs
        dt = t - t0
        dtf = max(0.0, t - self.fs) if self.fs is not None else 0.0
        dtb = dt - dtf

        def lin(base, fault):
            fv = base if fault is None else fault
            return base * dtb + fv * dtf

        d = {}
        d["tx"] = self.c0["tx"] + int(lin(self.tx_rate, self.tx_rate_f))
        d["rx"] = self.c0["rx"] + int(lin(self.rx_rate, self.rx_rate_f))
        d["txp"] = self.c0["txp"] + int(lin(self.txp, self.txp_f))
        d["rxp"] = self.c0["rxp"] + int(lin(self.rxp, self.rxp_f))
        d["sym"] = self.c0["sym"] + int(self.sym_rate_f * dtf)
        d["rcverr"] = self.c0["rcverr"] + int(self.rcverr_rate_f * dtf)
        d["downs"] = self.c0["downs"] + (self.downs_f if self.fs is not None and t >= self.fs else 0) \
            if not isinstance(self.downs_f, list) else self.c0["downs"] + sum(1 for x in self.downs_f if x <= t)
        d["acktmo"] = self.c0["acktmo"] + int(self.acktmo_rate_f * dtf)
        d["wait"] = self.c0["wait"] + int(lin(self.tx_rate, self.tx_rate_f) / 4e4 + d["rxp"] * 30)
        d["fec"] = self.c0["fec"] + int(3000 * dt + self.fec_rate_f * dtf)
        d["cnp"] = self.c0["cnp"] + int(50 * dt)
        d["rate"] = self.rate_f if (f and self.rate_f) else self.rate_gbs
        return d


class Port:
    """A switch port. Counters accrue from rates (host ports mirror their NIC)."""

    def __init__(self, switch, name, rng):
        self.switch = switch
        self.name = name
        self.nic = None
        self.peer = None
        self.peer_port = None
        self.fs = None
        self.out_rate = 0.0
        self.in_rate = 0.0
        self.out_rate_f = None
        self.in_rate_f = None
        self.pfc_tx = 0.0  # pause frames the port transmits (toward its peer)
        self.pfc_rx = 0.0
        self.pfc_tx_f = None
        self.pfc_rx_f = None
        self.disc_f = 0.0
        self.inerr_f = 0.0
        self.c0 = {"out": rng.randrange(10 ** 12, 10 ** 14), "in": rng.randrange(10 ** 12, 10 ** 14),
                   "pfc_tx": rng.randrange(0, 3000), "pfc_rx": rng.randrange(0, 3000),
                   "disc": rng.randrange(0, 40), "inerr": rng.choice([0, 0, 1, 4])}

    def cnt(self, t, t0):
        dt = t - t0
        dtf = max(0.0, t - self.fs) if self.fs is not None else 0.0
        dtb = dt - dtf
        if self.nic is not None:
            n = self.nic.cnt(t, t0)
            d = {"out": n["rx"], "in": n["tx"], "pfc_tx": n["rxp"], "pfc_rx": n["txp"]}
            d["disc"] = self.c0["disc"] + int(self.disc_f * dtf)
            d["inerr"] = self.c0["inerr"] + int(self.inerr_f * dtf)
            return d
        else:
            def lin(b, f):
                return b * dtb + (b if f is None else f) * dtf
            nb = {"out": lin(self.out_rate, self.out_rate_f), "in": lin(self.in_rate, self.in_rate_f),
                  "pfc_tx": lin(self.pfc_tx, self.pfc_tx_f), "pfc_rx": lin(self.pfc_rx, self.pfc_rx_f)}
        d = {k: self.c0[k] + int(v) for k, v in nb.items()}
        d["disc"] = self.c0["disc"] + int(self.disc_f * dtf)
        d["inerr"] = self.c0["inerr"] + int(self.inerr_f * dtf)
        return d


class Host:
    def __init__(self, name, rack):
        self.name = name
        self.rack = rack
        self.gpus = []
        self.nics = []
        self.spare = False
        self.boot = 0
        self.ip = None
        self.cpu_psi = (0.4, 0.9, 1.1)
        self.cpu_psi_f = None
        self.mem_psi = None
        self.io_psi = None
        self.load1 = 40.0
        self.load1_f = None
        self.fs = None
        self.top_extra = []
        self.dmesg = []  # (wall_t, text)
        self.sel = []
        self.fans = None


class Switch:
    def __init__(self, name, tier, vendor="sonic"):
        self.name = name
        self.tier = tier
        self.vendor = vendor
        self.ports = {}
        self.uplinks = []
        self.pfcwd = {}


def write(root, rel, data, gz=False):
    path = os.path.join(root, rel + (".gz" if gz else ""))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    if gz:
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as g:
            g.write(data)
        data = buf.getvalue()
    with open(path, "wb") as f:
        f.write(data)


def jdump(o):
    return json.dumps(o, indent=2, sort_keys=False) + "\n"


def checksum(seed, step, tag=""):
    return hashlib.sha256(("%s:%s:%s" % (seed, step, tag)).encode()).hexdigest()[:16]
