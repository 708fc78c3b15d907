"""The Case: fleet + job + physics, and the writer that prints the bundle from it."""
import json
import os
import random
import zlib

import render as R
from fleet import (Gpu, Nic, Port, Host, Switch, GPU_BUS, NIC_BUS, GPU_MODELS, write, jdump, iso,
                   ts_epoch, checksum, SW_PWR)


class Case:
    def __init__(self, cid, start, minutes, seed_extra=""):
        self.name = cid
        self.rng = random.Random("horizon:" + cid + seed_extra)
        self.t0 = ts_epoch(start)
        self.t1 = self.t0 + minutes * 60
        self.tnow = self.t1
        self.tbefore = self.t0
        self.sample_dt = 60
        self.switch_dt = 60
        self.hosts = []
        self.switches = {}
        self.ranks = []
        self.gpn = 8
        self.explicit_ranks = False
        self.job_name = "pretrain"
        self.title = ""
        self.reported = ""
        self.alerts = []
        self.driver = "550.90.07"
        self.cuda = "12.4"
        self.dcgm_new = False
        self.old_kernel = False
        self.dmesg_style = {"*": "plain"}
        self.roce_prio = 3
        self.nvlinks = 18
        self.nvml_nvlink = False
        self.xids = []  # (gpu, t, code)
        # physics
        self.base_compute = 1.2
        self.base_comm = 0.35
        self.bytes_per_step_nic = 6.0e9
        self.slow = []  # (predicate(h,g), fs, factor)
        self.comm = []  # (fs, factor)
        self.stall = None  # (fs, prob, mean_s)
        self.contention = {}  # host -> (fs, cpu_rate)
        # presentation
        self.step_every = 5
        self.step_cols = ["compute_s", "loss"]
        self.steps_gz = True
        self.step_start = None
        self.restart = None  # (t_crash, t_resume, resume_step)
        self.crash_at = None
        self.sdc = None  # (rank, from_step)
        self.drop_ranks = set()
        self.node_hosts = None  # default: job hosts + spares
        self.peer_hosts = None
        self.before = True
        self.dcgm_fams = ["clk", "temp", "power", "tensor", "util", "reasons", "therm_ns", "pow_ns", "xid", "sbe"]
        self.dcgm_gap = None
        self.dcgm_hosts = None
        self.metrics_gz = True
        self.no_snmp = set()
        self.skip = set()  # relative paths (from bundle root, may be prefixes ending with /) not written
        self.truncate = {}  # rel path -> fraction kept
        self.corrupt = set()  # rel path -> garbage bytes
        self.cmds = ["nvidia-smi-q", "lspci-vv", "dmesg", "ethtool", "ibstat"]
        self.extra_cmds = set()  # top, pressure, nvlink, fec, sel, fans, mem, io
        self.logs = {}  # name -> list of lines (already formatted)
        self.switch_cli = set()  # switch names with SONiC CLI outputs
        self.instance_ip = False
        self.topology = True
        self.gz_nodes = False
        self.truth = None
        self.notes = {}
        self.uplink_weights = {}
        self.driver_major = 550
        self.key_hosts = set()
        self.job_start = None
        self.nic_pci = False
        self.uplink_weights_before = {}
        self.collected_drop = {}
        self.mem_pressure = {}
        self.io_pressure = {}
        self.node_metric_hosts = None
        self.step_rows = []

    # ------------------------------------------------------------ fleet
    def build(self, n_hosts, name_fn, model="h100", gpus=8, nics=8, ll="InfiniBand", hosts_per_leaf=8,
              spines=2, uplinks_per_spine=2, leaf_fmt="leaf-%02d", spine_fmt="spine-%02d",
              port_fmt=lambda i: "Ethernet%d" % (i * 8), up_base=32, netdev_fmt=None, racks=8, spares=0):
        rng = self.rng
        self.gpn = gpus
        for s in range(spines):
            sw = Switch(spine_fmt % (s + 1), "spine")
            self.switches[sw.name] = sw
        n_leaf = (n_hosts + spares + hosts_per_leaf - 1) // hosts_per_leaf
        for li in range(n_leaf):
            lf = Switch(leaf_fmt % (li + 1), "leaf")
            self.switches[lf.name] = lf
            k = 0
            for s in range(spines):
                sp = self.switches[spine_fmt % (s + 1)]
                for u in range(uplinks_per_spine):
                    pn = port_fmt(up_base + k)
                    spn = port_fmt(li * uplinks_per_spine + u)
                    p = Port(lf.name, pn, rng)
                    p.peer, p.peer_port = sp.name, spn
                    q = Port(sp.name, spn, rng)
                    q.peer, q.peer_port = lf.name, pn
                    p.mirror = q
                    lf.ports[pn] = p
                    lf.uplinks.append(p)
                    sp.ports[spn] = q
                    sp.uplinks.append(q)
                    k += 1
        hi = 0
        for i in range(n_hosts + spares):
            h = Host(name_fn(i), "r%02d" % (i * racks // (n_hosts + spares) + 1))
            h.boot = self.t0 - rng.randrange(3 * 86400, 40 * 86400)
            h.ip = "10.%d.%d.%d" % (40 + i // 250 // 250, (i // 250) % 250 + 10, i % 250 + 2)
            h.spare = i >= n_hosts
            for gi in range(gpus):
                g = Gpu(h, gi, GPU_BUS[gi], model, rng)
                g.t0 = self.t0 - 3600
                if h.spare:
                    g.busy = False
                    g.reasons = 0
                h.gpus.append(g)
            leaf = self.switches[leaf_fmt % (i // hosts_per_leaf + 1)]
            for ni in range(nics):
                if ll == "InfiniBand":
                    nd = netdev_fmt(ni) if netdev_fmt else "ibp%ds0" % NIC_BUS[ni]
                else:
                    nd = netdev_fmt(ni) if netdev_fmt else "enp%ds0np0" % NIC_BUS[ni]
                n = Nic(h, ni, NIC_BUS[ni], "mlx5_%d" % ni, nd, ll, rng)
                n.switch = leaf.name
                pi = (i % hosts_per_leaf) * nics + ni
                n.sport = port_fmt(pi) if pi < up_base else port_fmt(pi + 64)
                p = Port(leaf.name, n.sport, rng)
                p.nic = n
                p.peer, p.peer_port = h.name, n.netdev
                leaf.ports[n.sport] = p
                h.nics.append(n)
            self.hosts.append(h)
        return self

    def host(self, name):
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def place_ranks(self, order=None):
        hs = [h for h in self.hosts if not h.spare]
        if order:
            hs = [hs[i] for i in order]
            self.explicit_ranks = True
        self.ranks = [(h, g) for h in hs for g in h.gpus]

    # ------------------------------------------------------------ physics
    def mult(self, h, g, t):
        m = 1.0
        for pred, fs, fac in self.slow:
            if t >= fs and pred(h, g):
                m *= fac
        return m

    def comm_mult(self, t):
        m = 1.0
        for fs, fac in self.comm:
            if t >= fs:
                m *= fac
        return m

    def step_nominal(self, t):
        mx = max(self.mult(h, g, t) for h, g in self.ranks_uniq())
        st = self.base_compute * mx + self.base_comm * self.comm_mult(t)
        if self.stall and t >= self.stall[0]:
            st += self.stall[1] * self.stall[2] * 1.6
        return st

    def ranks_uniq(self):
        if not hasattr(self, "_ru"):
            seen = {}
            for h, g in self.ranks:
                if self.slow and any(pred(h, g) for pred, _, _ in self.slow):
                    seen[(h.name, g.index)] = (h, g)
            if self.ranks:
                h, g = self.ranks[0]
                seen.setdefault((h.name, g.index), (h, g))
            self._ru = list(seen.values())
        return self._ru

    def tensor_at(self, h, g, t):
        if (self.job_start and t < self.job_start) or not g.busy or (self.crash_at and t >= self.crash_at):
            return 0.0
        st = self.step_nominal(t)
        return 0.71 * self.base_compute * self.mult(h, g, t) / st * (1.0 / self.mult(h, g, t) ** 0.15)

    def util_at(self, h, g, t):
        if (self.job_start and t < self.job_start) or not g.busy or (self.crash_at and t >= self.crash_at + 600):
            return 0
        if self.stall and t >= self.stall[0]:
            st = self.step_nominal(t)
            return 100.0 * (st - self.stall[1] * self.stall[2] * 1.6) / st
        return 100

    def last_xid(self, g, t):
        v = 0
        for gg, tt, code in sorted(self.xids, key=lambda x: x[1]):
            if gg is g and tt <= t:
                v = code
        return v

    def host_psi(self, h, t):
        hv = zlib.crc32(h.name.encode())
        base = 0.004 + (hv % 7) * 0.001
        c = self.contention.get(h.name)
        tot = base * (t - self.t0 + 86400)
        load = 41.0 + (hv % 5)
        mem = None
        if c and t >= c[0]:
            tot += c[1] * (t - c[0])
            load = c[2]
        return {"cpu_total": tot, "load1": load}

    def instance(self, h):
        return "%s:9100" % (h.ip if self.instance_ip else h.name)

    def topo_hosts(self):
        return self.hosts

    # ------------------------------------------------------------ traffic
    def settle_traffic(self):
        """Per-NIC rates from bytes per step and the step time, leaf uplinks from their hosts."""
        job_hosts = {h.name for h, g in self.ranks}
        fs_list = sorted(set([fs for _, fs, _ in self.slow] + [fs for fs, _ in self.comm] +
                             ([self.stall[0]] if self.stall else [])))
        fs = fs_list[0] if fs_list else None
        s0 = self.step_nominal(self.t0 - 1)
        s1 = self.step_nominal(self.t1) if fs else s0
        self.step_base, self.step_fault = s0, s1
        for h in self.hosts:
            for n in h.nics:
                if h.name not in job_hosts:
                    n.tx_rate = n.rx_rate = 2.0e6
                    continue
                share = self.nic_share(h, n)
                n.tx_rate = n.rx_rate = self.bytes_per_step_nic * share * len(h.nics) / s0
                if fs and n.fs is None:
                    n.fs = fs
                if fs:
                    n.tx_rate_f = n.rx_rate_f = self.bytes_per_step_nic * share * len(h.nics) / s1
                if n.rxp == 0.0:
                    n.rxp = self.rng.choice([0.0, 0.2, 0.5, 1.5])
        # leaf uplinks carry the off-leaf share of their hosts
        for sw in self.switches.values():
            if sw.tier != "leaf":
                continue
            hp = [p for p in sw.ports.values() if p.nic is not None]
            up = sw.uplinks
            if not up:
                continue
            tot0 = sum(p.nic.tx_rate for p in hp) * self.offleaf
            tot1 = sum((p.nic.tx_rate_f if p.nic.tx_rate_f is not None else p.nic.tx_rate) for p in hp) * self.offleaf
            weights = self.uplink_weights.get(sw.name)
            for i, p in enumerate(up):
                w = (weights[i] if weights else 1.0 / len(up))
                w0 = self.uplink_weights_before.get(sw.name, [1.0 / len(up)] * len(up))[i]
                p.out_rate = tot0 * w0
                p.in_rate = tot0 * w0
                if fs:
                    p.fs = fs
                    p.out_rate_f = tot1 * w
                    p.in_rate_f = tot1 / len(up)
                q = p.mirror
                q.out_rate, q.in_rate = p.in_rate, p.out_rate
                q.fs, q.out_rate_f, q.in_rate_f = p.fs, p.in_rate_f, p.out_rate_f

        if self.job_start:
            # nothing ran before the job: idle links and GPUs until its first step
            for h in self.hosts:
                if h.name not in job_hosts:
                    continue
                for n in h.nics:
                    n.tx_rate_f, n.rx_rate_f = n.tx_rate, n.rx_rate
                    n.tx_rate = n.rx_rate = 2.0e6
                    n.fs = self.job_start
                for g in h.gpus:
                    g.idle_before = self.job_start
            for sw in self.switches.values():
                for p in sw.uplinks:
                    if p.nic is None and p.out_rate_f is None:
                        p.out_rate_f, p.in_rate_f = p.out_rate, p.in_rate
                    p.out_rate = p.in_rate = 1.0e6
                    p.fs = self.job_start

    def nic_share(self, h, n):
        return 1.0 / len(h.nics)

    offleaf = 0.6
    uplink_weights = {}
    uplink_weights_before = {}

    # ------------------------------------------------------------ steps
    def make_steps(self):
        rng = self.rng
        rows = []
        t = self.step_start if self.step_start is not None else self.t0 - 600
        step = self.first_step if hasattr(self, "first_step") else 1000
        nr = len(self.ranks)
        loss = 2.41
        while t < self.t1 - 2:
            if self.crash_at and t >= self.crash_at:
                break
            if self.restart and self.restart[0] <= t < self.restart[1]:
                t = self.restart[1]
                step = self.restart[2]
                continue
            comps = []
            for r, (h, g) in enumerate(self.ranks):
                c = self.base_compute * self.mult(h, g, t) * (1 + rng.gauss(0, 0.008))
                if self.stall and t >= self.stall[0] and rng.random() < self.stall[1]:
                    c += rng.expovariate(1.0 / self.stall[2])
                comps.append(c)
            comm = self.base_comm * self.comm_mult(t) * (1 + abs(rng.gauss(0, 0.03)))
            st = max(comps) + comm
            if step % self.step_every == 0:
                loss = loss - 0.00004 * self.step_every + rng.gauss(0, 0.004)
                for r in range(nr):
                    if (step, r) in self.drop_ranks or r in self.drop_ranks:
                        continue
                    row = {"step": step, "rank": r, "start_unix": round(t, 3),
                           "duration_s": st + rng.uniform(-0.0015, 0.0015)}
                    if "compute_s" in self.step_cols:
                        row["compute_s"] = comps[r]
                    if "loss" in self.step_cols:
                        row["loss"] = loss
                    if "grad_norm" in self.step_cols:
                        row["grad_norm"] = 0.9 + rng.random() * 0.2
                    if "param_checksum" in self.step_cols:
                        grp = r % self.sdc_group if self.sdc_group else 0
                        tag = "g%d" % grp
                        if self.sdc and r == self.sdc[0] and step >= self.sdc[1]:
                            tag = "bad%d" % r
                        row["param_checksum"] = checksum(self.name, step, tag)
                    rows.append(row)
            t += st
            step += 1
        if self.shuffle_rows:
            rng.shuffle(rows)
        self.step_rows = rows

    sdc_group = 0
    shuffle_rows = False

    # ------------------------------------------------------------ writing
    @property
    def sample_times(self):
        return list(range(self.t0 - 600, self.t1 + 1, self.sample_dt))

    @property
    def switch_sample_times(self):
        return list(range(self.t0 - 600, self.t1 + 1, self.switch_dt))

    def write(self, out):
        root = os.path.join(out, self.name, "bundle")
        files = {}

        def put(rel, data, gz=False):
            files[rel + (".gz" if gz else "")] = (data, gz)

        put("incident.json", R.render_incident(self))
        if self.topology:
            put("topology.json", R.render_topology(self))
        if self.ranks and self.step_rows:
            put("job/steps.csv", R.render_steps(self), self.steps_gz)
        for name, lines in sorted(self.logs.items()):
            put("job/logs/%s" % name, "\n".join(lines) + "\n")
        dh = self.dcgm_hosts if self.dcgm_hosts is not None else [h for h in self.hosts]
        if dh and self.dcgm_fams:
            put("metrics/dcgm.om", R.render_dcgm(self, dh, self.dcgm_fams), self.metrics_gz)
        nh = self.node_metric_hosts if self.node_metric_hosts is not None else self.hosts
        if nh:
            put("metrics/node.om", R.render_node_metrics(self, nh), self.metrics_gz)
        if any(s.name not in self.no_snmp for s in self.switches.values()):
            put("metrics/switch.om", R.render_switch_metrics(self), self.metrics_gz)
        node_hosts = self.node_hosts if self.node_hosts is not None else self.default_node_hosts()
        for h in node_hosts:
            base = "nodes/%s/" % h.name
            col = {"before": self.tbefore, "now": self.tnow, "boot": h.boot}
            for k in self.collected_drop.get(h.name, ()):
                col.pop(k, None)
            put(base + "collected.json", jdump(col))
            snaps = [("", self.tnow)] + ([("before/", self.tbefore)] if self.before else [])
            for pre, t in snaps:
                for rel, txt in R.sysfs_files(self, h, t, before=bool(pre)):
                    put(base + pre + rel, txt)
                cmd = base + pre + "cmd/"
                gz = self.gz_nodes
                put(cmd + "nvidia-smi-q.txt", R.render_smi_q(self, h, t), gz)
                if pre == "":
                    put(base + "nvml.json", R.render_nvml(self, h, t))
                    put(cmd + "lspci-vv.txt", R.render_lspci(self, h, t), gz)
                    put(cmd + "dmesg.txt", R.render_dmesg(self, h, t), gz)
                    put(cmd + "ibstat.txt", R.render_ibstat(self, h, t))
                for n in h.nics:
                    if n.ll == "Ethernet" or "ethtool_ib" in self.extra_cmds:
                        put(cmd + "ethtool-S-%s.txt" % n.netdev, R.render_ethtool(self, n, t))
                    if "fec" in self.extra_cmds:
                        put(cmd + "ethtool-I-show-fec-%s.txt" % n.netdev, R.render_fec(self, n, t))
                if "top" in self.extra_cmds and pre == "":
                    put(cmd + "top.txt", R.render_top(self, h, t))
                if "pressure" in self.extra_cmds:
                    put(cmd + "pressure-cpu.txt", R.render_psi(self.psi_text(h, t, "cpu")))
                    put(cmd + "pressure-memory.txt", R.render_psi(self.psi_text(h, t, "memory")))
                    put(cmd + "pressure-io.txt", R.render_psi(self.psi_text(h, t, "io")))
                if "nvlink" in self.extra_cmds:
                    put(cmd + "nvidia-smi-nvlink-e.txt", R.render_nvlink_e(self, h, t))
                if "sel" in self.extra_cmds and pre == "":
                    put(cmd + "ipmitool-sel-elist.txt", R.render_sel(h))
                if "fans" in self.extra_cmds and h.fans and pre == "":
                    put(cmd + "ipmitool-sdr-type-fan.txt", R.render_fans(h))
        for sname in sorted(self.switch_cli):
            s = self.switches[sname]
            base = "switches/%s/cmd/" % sname
            put(base + "show-pfc-counters.txt", R.render_pfc_counters(self, s, self.tnow))
            put(base + "show-pfcwd-stats.txt", R.render_pfcwd(self, s, self.tnow))
            put(base + "show-interfaces-counters.txt", R.render_if_counters(self, s, self.tnow))
        for rel in sorted(files):
            if any(rel == s or (s.endswith("/") and rel.startswith(s)) or rel.startswith(s + ".") for s in self.skip):
                continue
            data, gz = files[rel]
            relw = rel[:-3] if gz else rel
            if isinstance(data, str):
                data = data.encode()
            if rel in self.truncate or relw in self.truncate:
                frac = self.truncate.get(rel, self.truncate.get(relw))
                data = data[:int(len(data) * frac)]
            if rel in self.corrupt or relw in self.corrupt:
                write(root, rel, b"\x1f\x8b\x08\x00" + bytes(self.rng.randrange(256) for _ in range(300)), False)
                continue
            write(root, relw, data, gz)
        cdir = os.path.join(out, self.name)
        with open(os.path.join(cdir, "truth.json"), "w") as f:
            f.write(json.dumps({"root_cause": self.truth[0], "component": self.truth[1]}) + "\n")

    collected_drop = {}
    node_metric_hosts = None

    def default_node_hosts(self):
        """The hosts that matter (faults, decoys, named in text) plus a couple of peers, in fleet order."""
        keep = set(self.key_hosts)
        for g, t, code in self.xids:
            keep.add(g.host.name)
        for h in self.hosts:
            if h.spare or (h.sel and h.sel[-1][0] > self.t0 - 86400) or h.top_extra or any(n.fs for n in h.nics if n.sym_rate_f or n.txp_f) \
                    or any(g.fs or g.lost_at or g.aer_cor or g.sbe0 or g.temp > 75 for g in h.gpus):
                keep.add(h.name)
        job = [h for h in self.hosts if not h.spare]
        for h in job[:1]:
            keep.add(h.name)
        return [h for h in self.hosts if h.name in keep]

    def psi_text(self, h, t, kind):
        if kind == "cpu":
            c = self.contention.get(h.name)
            tot = int(self.host_psi(h, t)["cpu_total"] * 1e6)
            if c and t >= c[0]:
                return ((c[3], c[3] * 0.9, c[3] * 0.5, tot), (0.0, 0.0, 0.0, 0))
            return ((0.31, 0.42, 0.38, tot), (0.0, 0.0, 0.0, 0))
        if kind == "memory":
            m = self.mem_pressure.get(h.name)
            if m and t >= m[0]:
                return ((m[1], m[1] * 0.9, m[1] * 0.4, int(m[1] * 4e7)), (m[2], m[2] * 0.9, m[2] * 0.4, int(m[2] * 4e7)))
            return ((0.0, 0.0, 0.0, 15231), (0.0, 0.0, 0.0, 11020))
        io = self.io_pressure.get(h.name)
        if io and t >= io[0]:
            return ((io[1], io[1] * 0.95, io[1] * 0.5, int(io[1] * 3e7)), (io[1] * 0.6, io[1] * 0.5, io[1] * 0.3, int(io[1] * 2e7)))
        return ((0.05, 0.09, 0.11, 9052331), (0.01, 0.02, 0.03, 4121907))

    mem_pressure = {}
    io_pressure = {}
