"""Fleet model and source printers for the summit evaluation set (stdlib only).

One Fleet object per case holds hosts, GPUs, NICs, switches, ranks and the per-part state
at "before" (window start) and "now" (window end) plus time-series shapes; every printer reads
from it, so the same counter printed by two sources agrees.
"""
import gzip
import io
import json
import math
import os
import random

GPU_MODELS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", dev="2330", maxclk=1980, memclk=2619, limit=700, gen=5, mem=81559),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", dev="20b2", maxclk=1410, memclk=1593, limit=400, gen=4, mem=81920),
    "H200": dict(name="NVIDIA H200", dev="2335", maxclk=1980, memclk=3201, limit=700, gen=5, mem=143771),
    "B200": dict(name="NVIDIA B200", dev="2901", maxclk=1965, memclk=3996, limit=1000, gen=5, mem=183359),
}
GPU_BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
NIC_BUSES = ["1a", "3c", "4d", "5e", "9c", "bc", "cc", "dc"]
SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}
SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}


def iso(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))


def ctime(t):
    import time
    return time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(int(t))).replace(" 0", "  ", 1) if False else \
        time.strftime("%a %b ", time.gmtime(int(t))) + ("%2d" % time.gmtime(int(t)).tm_mday) + time.strftime(" %H:%M:%S %Y", time.gmtime(int(t)))


def syslogts(t):
    import time
    g = time.gmtime(int(t))
    return time.strftime("%b ", g) + ("%2d" % g.tm_mday) + time.strftime(" %H:%M:%S", g)


class Out:
    """Collects files in memory; written sorted at the end, gzip with mtime=0."""

    def __init__(self):
        self.files = {}

    def put(self, path, text, gz=False):
        if isinstance(text, (dict, list)):
            text = json.dumps(text, indent=2, sort_keys=True) + "\n"
        data = text.encode()
        if gz:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as f:
                f.write(data)
            data = buf.getvalue()
            path += ".gz"
        self.files[path] = data

    def write(self, root):
        for p in sorted(self.files):
            full = os.path.join(root, p)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(self.files[p])


class Fleet:
    def __init__(self, rng, n_hosts, gpus=8, nics=8, model="H100", ll="InfiniBand", naming="a",
                 hosts_per_leaf=16, spines=4, switch_style="sonic", driver="550.90.07", job_hosts=None):
        self.rng = rng
        self.model = model
        self.m = GPU_MODELS[model]
        self.ll = ll
        self.driver = driver
        self.old_driver = driver.split(".")[0] < "535"
        self.gpn = gpus
        self.hosts = []
        self.switches = {}
        nleaf = max(1, math.ceil(n_hosts / hosts_per_leaf))
        self.leaves = ["leaf-%02d" % (i + 1) if switch_style == "sonic" else "sw-l%d" % (i + 1) for i in range(nleaf)]
        self.spines = ["spine-%02d" % (i + 1) if switch_style == "sonic" else "sw-s%d" % (i + 1) for i in range(spines)]
        for s in self.leaves:
            self.switches[s] = {"name": s, "tier": "leaf", "links": [], "ports": {}}
        for s in self.spines:
            self.switches[s] = {"name": s, "tier": "spine", "links": [], "ports": {}}
        for li, leaf in enumerate(self.leaves):
            for si, sp in enumerate(self.spines):
                lp = "Ethernet%d" % (256 + 8 * si)
                spp = "Ethernet%d" % (8 * li)
                self.switches[leaf]["links"].append({"port": lp, "peer": sp, "peer_port": spp})
                self.switches[sp]["links"].append({"port": spp, "peer": leaf, "peer_port": lp})
        for h in range(n_hosts):
            name = self.hostname(naming, h)
            leaf = self.leaves[h // hosts_per_leaf]
            hh = {"name": name, "rack": "r%02d" % (h // 4 + 1), "gpus": [], "nics": [], "leaf": leaf}
            for g in range(gpus):
                b = GPU_BUSES[g]
                hh["gpus"].append({"index": g, "bus": b,
                                   "pci_bus_id": "00000000:%s:00.0" % b.upper(),
                                   "uuid": "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(n) for n in (32, 16, 16, 16, 48))})
            for n in range(nics):
                b = NIC_BUSES[n]
                port = "Ethernet%d" % ((h % hosts_per_leaf) * 8 + n) if nics > 1 else "Ethernet%d" % ((h % hosts_per_leaf) * 4)
                netdev = ("ibp%ds0" % int(b, 16)) if ll == "InfiniBand" else ("ens%dnp0" % (n + 1) if naming != "ip" else "eth%d" % (n + 2))
                hh["nics"].append({"ibdev": "mlx5_%d" % n, "netdev": netdev, "bus": b, "pci_bus_id": "0000:%s:00.0" % b,
                                   "port": 1, "link_layer": ll, "switch": leaf, "switch_port": port})
                self.switches[leaf]["ports"][port] = (name, "mlx5_%d" % n)
            self.hosts.append(hh)
        self.byname = {h["name"]: h for h in self.hosts}
        self.job_hosts = [h["name"] for h in self.hosts] if job_hosts is None else job_hosts

    @staticmethod
    def hostname(naming, h):
        if naming == "a":
            return "gpu-a%03d" % (h + 1)
        if naming == "dc":
            return "gpu%04d.dc3.internal" % (1000 + h + 1)
        if naming == "ip":
            return "10-90-%d-%d" % (40 + h // 200, 11 + h % 200)
        if naming == "node":
            return "node%02d-%02d" % (h // 16 + 1, h % 16 + 1)
        return "hgx-%s-%03d" % (naming, h + 1)

    def topology(self, ranks_explicit=False, order_rng=None, hosts=None):
        out_hosts = []
        for h in self.hosts if hosts is None else [self.byname[x] for x in hosts]:
            out_hosts.append({"name": h["name"], "rack": h["rack"],
                              "gpus": [{"index": g["index"], "pci_bus_id": g["pci_bus_id"], "uuid": g["uuid"]} for g in h["gpus"]],
                              "nics": [{k: n[k] for k in ("ibdev", "netdev", "pci_bus_id", "port", "link_layer", "switch", "switch_port")} for n in h["nics"]]})
        topo = {"hosts": out_hosts,
                "switches": [{"name": s["name"], "tier": s["tier"], "links": s["links"]} for s in self.switches.values()]}
        if ranks_explicit:
            rk = self.ranks()
            rows = [{"rank": r, "host": h, "gpu": g} for r, (h, g) in enumerate(rk)]
            if order_rng:
                order_rng.shuffle(rows)
            topo["ranks"] = rows
        return topo

    def ranks(self):
        return [(h, g) for h in self.job_hosts for g in range(self.gpn)]


# ---------------------------------------------------------------- per-part state
def gpu_state(fl, rng, busy=True):
    m = fl.m
    if busy:
        clk = m["maxclk"] - rng.choice([0, 15, 30, 45, 60, 75, 90, 105])
        reasons = 0x4 if clk < m["maxclk"] else 0
        pw = m["limit"] - rng.randint(1, 9) if reasons else m["limit"] - rng.randint(40, 120)
        temp = rng.randint(58, 71)
        util = 100
    else:
        clk, reasons, pw, temp, util = 345, 0x1, rng.randint(68, 90), rng.randint(29, 36), 0
    return {"clk": clk, "clk0": clk, "reasons": reasons, "reasons0": reasons, "pw": pw, "pw0": pw,
            "lim": m["limit"], "temp": temp, "temp0": temp, "util": util,
            "gen": m["gen"] if busy else 1, "maxgen": m["gen"], "width": 16, "maxwidth": 16,
            "lost": False, "sbe_b": 0, "sbe_n": 0, "dbe": 0, "crc_b": [0] * 4, "crc_n": [0] * 4,
            "replay_nv_b": [0] * 4, "replay_nv_n": [0] * 4, "rec_b": [0] * 4, "rec_n": [0] * 4,
            "pcie_replay_b": 0, "pcie_replay_n": 0, "xid": 0, "xid0": 0,
            "remap": {"corrected": 0, "uncorrected": 0, "pending": False, "failure": False},
            "tviol_b": 0, "tviol_n": 0, "pviol_b": 0, "pviol_n": 0, "aer": {}, "onset": None,
            "busy": busy}


def nic_state(fl, rng, busy=True, rate_gbs=None):
    bps = (rate_gbs or (400 if fl.ll == "InfiniBand" else 400)) * 1e9 / 8
    util = rng.uniform(0.30, 0.36) if busy else 0.0
    return {"util": util, "bps": bps, "rate": 400 if fl.ll == "InfiniBand" else 400,
            "sym_b": 0, "sym_n": 0, "rcverr_b": 0, "rcverr_n": 0, "down_b": 0, "down_n": 0,
            "txp_b": 0, "txp_n": 0, "rxp_b": 0, "rxp_n": 0, "txpd_n": 0, "rxpd_n": 0, "storm": 0,
            "disc_b": 0, "disc_n": 0, "oob_b": 0, "oob_n": 0, "wait_rate": rng.randint(2, 6) * 10 ** 5 if busy else 0,
            "fec_corr_b": rng.randint(10 ** 5, 10 ** 6), "fec_corr_rate": rng.randint(50, 400), "fec_unc_b": 0, "fec_unc_n": 0,
            "width": 16, "maxwidth": 16, "gen": 5, "maxgen": 5, "state": "4: ACTIVE", "phys": "5: LinkUp",
            "carrier": 2, "onset": None, "cnp_rate": rng.randint(0, 40) if busy else 0}
