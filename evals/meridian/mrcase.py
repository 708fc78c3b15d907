"""Case assembly: one fleet model -> every source of one bundle."""
import json
import random

import mrlib as L
from mrlib import Ctr, Rate, Scaled

XIDTXT = {
    79: "GPU has fallen off the bus.",
    74: "NVLink: fatal error detected on link %d(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
    63: "Row Remapper: New row marked for remapping, reset gpu to activate.",
    94: "Contained: FB DED (0x1, 0x0). physAddr: 0x7fffa8860 RST: No, D-RST: No",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.",
    13: "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
    31: "channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    43: "Ch 00000020, engmask 00000101",
}


class Case:
    def __init__(self, cid, seed, t0, minutes=90):
        self.cid = cid
        self.rng = random.Random(seed)
        self.t0 = t0
        self.t1 = t0 + minutes * 60
        self.ton = None
        self.hosts = []
        self.switches = {}
        self.gpn = 8
        self.ranks = None  # list of (host, gpu); None = implicit
        self.write_ranks = False
        self.title = ""
        self.reported = ""
        self.alerts = []
        self.job = "llm-pretrain"
        self.truth = ("healthy", None)
        # step model
        self.c0, self.m0 = 1.6, 0.45
        self.comm_after = 1.0
        self.compute_col = True
        self.checksum_col = False
        self.loss_col = True
        self.log_every = 1
        self.steps_gz = False
        self.steps = True
        self.stop_at = None
        self.restart = None  # (time, resume_step)
        self.drop_rank_at = {}  # rank -> time after which it no longer logs
        self.sdc_rank = None
        self.data_wait = 0.0  # per-step extra wait on every rank after onset
        self.spikes = []  # (t_from, t_to, extra seconds) benign
        # metrics
        self.dcgm = True
        self.dcgm_hosts = None
        self.dcgm_fams = None
        self.dcgm_label = "Hostname"
        self.reason_field = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
        self.interval = None
        self.om_gz = True
        self.node_cap = 3
        self.keep = []
        self.node_exp = True
        self.instance = {}  # host -> instance label
        self.snmp = False
        self.extra_om = []
        # node data
        self.drv = "550.90.07"
        self.old_smi = False
        self.old_kernel = False
        self.dmesg_style = "plain"
        self.missing = set()  # (host or '*', filename) or 'topology', 'steps', 'logs'
        self.truncate = {}  # path -> keep fraction
        self.corrupt = set()
        self.before = True
        self.with_boot = True
        self.logs = {}
        self.nvlink_cmd = False
        self.fec_cmd = False
        self.ipmi = False
        self.cmd_gz = set()
        self.events = {}  # host -> list
        self.topology = True
        self.switch_cmds = True
        self.ib_traffic = 6.0e9  # bytes/s per NIC before onset

    # ---------------------------------------------------------------- fleet building
    def add_hosts(self, names, model="h100", ngpu=8, nnic=8, ll="InfiniBand", rate=400, racks=None, netdev_fmt=None):
        hs = []
        for i, n in enumerate(names):
            h = L.Host(n, racks[i] if racks else "r%02d" % (i // 4 + 1), model, ngpu, nnic, ll, self.rng, rate, netdev_fmt)
            h.boot = self.t0 - self.rng.randrange(3, 40) * 86400 - self.rng.randrange(86400)
            self.hosts.append(h)
            hs.append(h)
        return hs

    def host(self, name):
        return next(h for h in self.hosts if h.name == name)

    def sw(self, name, tier="leaf", sonic=True):
        if name not in self.switches:
            self.switches[name] = L.Switch(name, tier, sonic)
        return self.switches[name]

    def cable(self, hosts, leaves, portfmt="Ethernet%d", per_leaf=None, rail=True, start=0, step=4):
        """Attach NICs to leaves: rail-optimised (NIC i -> its rail's leaf) or host-per-leaf; one port per NIC."""
        if not hasattr(self, "port_ctr"):
            self.port_ctr = {}
        nn = max(1, len(hosts[0].nics))
        for hi, h in enumerate(hosts):
            for n in h.nics:
                if rail:
                    if len(leaves) > nn:
                        groups = len(leaves) // nn
                        g = hi * groups // max(1, len(hosts))
                        lf = leaves[(g * nn + n.i) % len(leaves)]
                    else:
                        lf = leaves[n.i % len(leaves)]
                else:
                    lf = leaves[(hi * nn // (per_leaf or 32)) % len(leaves)]
                key = (lf, start)
                self.port_ctr[key] = self.port_ctr.get(key, -1) + 1
                pidx = start + self.port_ctr[key] * step
                n.switch = lf
                n.port = portfmt % pidx
                self.sw(lf).port(n.port)
                self.sw(lf).maxp = max(getattr(self.sw(lf), "maxp", 0), pidx)

    def uplinks(self, leaf, spines, nup, portfmt="Ethernet%d", start=256, spine_portfmt="Ethernet%d", spine_start=0):
        s = self.sw(leaf)
        start = max(start, getattr(s, "maxp", 0) + 8)
        out = []
        for u in range(nup):
            sp = spines[u % len(spines)]
            p = portfmt % (start + 8 * u)
            sidx = int(''.join(c for c in leaf if c.isdigit()) or 0)
            pp = spine_portfmt % (spine_start + 8 * sidx + u // len(spines))
            s.links.append(dict(port=p, peer=sp, peer_port=pp))
            s.port(p)
            self.sw(sp, "spine").port(pp)
            self.sw(sp, "spine").links.append(dict(port=pp, peer=leaf, peer_port=p))
            out.append((p, sp, pp))
        return out

    def job_ranks(self, hosts, shuffle=False, gpn=None):
        gpn = gpn or self.gpn
        rk = [(h, g) for h in hosts for g in range(gpn)]
        if shuffle:
            # block placement in a non file order
            order = list(range(len(hosts)))
            self.rng.shuffle(order)
            rk = [(hosts[i], g) for i in order for g in range(gpn)]
            self.write_ranks = True
        self.ranks = rk
        return rk

    def traffic(self, nics, r0, r1=None, ton=None):
        for n in nics:
            base_w = self.rng.randrange(10 ** 11, 10 ** 13)
            r1v = r0 if r1 is None else r1
            n.c["port_xmit_data"] = Rate(base_w, r0 / 4, r1v / 4, ton, self.t0, self.t1)
            n.c["port_rcv_data"] = Rate(base_w + self.rng.randrange(10 ** 9), r0 / 4 * 0.998, r1v / 4 * 0.998, ton,
                                        self.t0, self.t1)
            n.c["port_xmit_wait"] = Rate(self.rng.randrange(10 ** 8, 10 ** 9), r0 / 2.0e4, r1v / 2.0e4, ton, self.t0,
                                         self.t1)
            if n.switch:
                p = self.sw(n.switch).port(n.port)
                p["in_oct"] = Scaled(n.c["port_xmit_data"], 4)
                p["out_oct"] = Scaled(n.c["port_rcv_data"], 4)

    # ---------------------------------------------------------------- job model
    def rank_factor(self, h, g, t):
        clk = g.v("clk", t)
        if g.lost_at is not None and t >= g.lost_at:
            return None
        nominal = g.m["clk"]
        f = 0.15 + 0.85 * nominal / max(200.0, clk)
        if getattr(h, "cfac", None) and self.ton is not None and t >= self.ton:
            f *= h.cfac
        sg = getattr(self, "slow_gpu", None)
        if sg is not None and sg[0] is g and self.ton is not None and t >= self.ton:
            f *= sg[1]
        return f

    def gen_steps(self):
        ranks = self.ranks
        rows = []
        t = self.t0 - 240.0
        s = getattr(self, "step0", 41200)
        cols = ["step", "rank", "start_unix", "duration_s"]
        if self.compute_col:
            cols.append("compute_s")
        if self.loss_col:
            cols.append("loss")
        if self.checksum_col:
            cols.append("param_checksum")
        restarted = False
        self.step_log = []
        host_slow = {}
        while t < self.t1 - 5:
            if self.stop_at is not None and t >= self.stop_at and not restarted:
                if self.restart is None:
                    break
                t = self.restart[0]
                s = self.restart[1]
                restarted = True
                continue
            comp = []
            logged = s % self.log_every == 0
            if not logged and getattr(self, "_last", None) is not None and int(t) // 600 == self._last[0]:
                comp = None
            for r, (h, gi) in (enumerate(ranks) if comp is not None else []):
                g = h.gpus[gi]
                key = (h.name, gi)
                f = self.rank_factor(h, g, t)
                if f is None:
                    comp.append(None)
                    continue
                if restarted and g.lost_at is not None:
                    comp.append(None)
                    continue
                comp.append(self.c0 * f * (1 + 0.006 * L.noise(r, s)))
            if comp is None:
                cmax = self._last[1] * (1 + 0.004 * L.noise("cm", s))
            else:
                valid = [c for c in comp if c is not None]
                if not valid:
                    break
                cmax = max(valid)
                self._last = (int(t) // 600, cmax)
            comm = self.m0 * (self.comm_after if (self.ton is not None and t >= self.ton) else 1.0)
            comm *= 1 + 0.01 * L.noise("comm", s)
            extra = 0.0
            if self.ton is not None and t >= self.ton:
                extra += self.data_wait * (1 + 0.3 * L.noise("dw", s))
            for a, b, x in self.spikes:
                if a <= t < b:
                    extra += x
            dur = cmax + comm + extra
            if logged:
                loss = 2.31 - 0.00001 * (s - 41200) + 0.01 * L.noise("loss", s)
                for r, c in enumerate(comp):
                    if c is None:
                        continue
                    if r in self.drop_rank_at and t >= self.drop_rank_at[r]:
                        continue
                    dj = dur + 0.002 * L.noise("d", r, s)
                    row = ["%d" % s, "%d" % r, "%.3f" % (t + 0.001 * abs(L.noise("st", r, s))), "%.4f" % dj]
                    if self.compute_col:
                        row.append("%.4f" % c)
                    if self.loss_col:
                        row.append("%.4f" % loss)
                    if self.checksum_col:
                        ck = "%08x" % (L.zlib.crc32(("p%d" % s).encode()) if hasattr(L, "zlib") else 0)
                        if self.sdc_rank is not None and r == self.sdc_rank and self.ton is not None and t >= self.ton:
                            ck = "%08x" % (L.zlib.crc32(("bad%d%d" % (s, r)).encode()))
                        row.append(ck)
                    rows.append(row)
            self.step_log.append((t, dur))
            t += dur
            s += 1
        # rows in a stable but not sorted order (rank-major chunks shuffled by step)
        return ",".join(cols) + "\n" + "".join(",".join(r) + "\n" for r in rows)

    # ---------------------------------------------------------------- emit
    def node_hosts(self):
        return [h for h in self.hosts if h.node]

    def miss(self, host, fn):
        return (host, fn) in self.missing or ("*", fn) in self.missing

    def cap_nodes(self):
        nh = [h for h in self.hosts if h.node]
        if len(nh) <= self.node_cap:
            return
        comp = self.truth[1] or ""
        must = [h for h in nh if comp.split("/")[0] == h.name or h.spare or h in self.keep or h.sel is not None
                or any(t >= h.boot + 60 for t, _ in h.dmesg)]
        rest = [h for h in nh if h not in must]
        keep = must + rest[:max(0, self.node_cap - len(must))]
        for h in nh:
            h.node = h in keep

    def emit(self, root):
        self.cap_nodes()
        if self.dcgm_hosts is None and len(self.hosts) > 8:
            self.dcgm_hosts = [h for h in self.hosts if h.node] + [h for h in self.hosts if not h.node][:4]
        o = L.Out()
        B = "bundle/"
        inc = {"schema": "forensic.bundle/v1", "id": self.inc_id, "title": self.title,
               "window": {"start": L.iso(self.t0), "end": L.iso(self.t1)},
               "job": {"name": self.job, "ranks": len(self.ranks), "gpus_per_node": self.gpn},
               "reported": self.reported}
        if self.alerts:
            inc["alerts"] = self.alerts
        o.put(B + "incident.json", json.dumps(inc, indent=2, sort_keys=False) + "\n")
        if self.topology:
            o.put(B + "topology.json", self.topology_json())
        if self.steps:
            txt = self.gen_steps()
            if "steps" in self.truncate:
                txt = txt[:int(len(txt) * self.truncate["steps"])]
            o.put(B + "job/steps.csv", txt, gz=self.steps_gz or len(txt) > 3000000)
        for name, txt in sorted(self.logs.items()):
            o.put(B + "job/logs/" + name, txt(self) if callable(txt) else txt)
        if self.dcgm:
            self.emit_dcgm(o, B)
        if self.node_exp:
            self.emit_node_exp(o, B)
        if self.snmp:
            self.emit_snmp(o, B)
        for name, txt in self.extra_om:
            o.put(B + "metrics/" + name, txt)
        for h in self.node_hosts():
            self.emit_node(o, B, h)
        if self.switch_cmds:
            for sw in sorted(self.switches.values(), key=lambda s: s.name):
                if not sw.sonic:
                    continue
                pfc, ic, wd = L.sonic_tables(sw, self.t1, self.t0, self.t1)
                base = B + "switches/%s/cmd/" % sw.name
                if not self.miss(sw.name, "show-pfc-counters.txt"):
                    o.put(base + "show-pfc-counters.txt", pfc)
                if not self.miss(sw.name, "show-interfaces-counters.txt"):
                    o.put(base + "show-interfaces-counters.txt", ic)
                if sw.pfcwd or not self.miss(sw.name, "show-pfcwd-stats.txt"):
                    if not self.miss(sw.name, "show-pfcwd-stats.txt"):
                        o.put(base + "show-pfcwd-stats.txt", wd)
        truth = {"root_cause": self.truth[0], "component": self.truth[1]}
        o.put("truth.json", json.dumps(truth, indent=2) + "\n")
        o.write(root)
        return o

    def topology_json(self):
        hosts = []
        for h in self.hosts:
            hosts.append({"name": h.name, "rack": h.rack,
                          "gpus": [{"index": g.idx, "pci_bus_id": g.nvml_bus(), "uuid": g.uuid} for g in h.gpus],
                          "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.sys_bus(), "port": 1,
                                    "link_layer": n.ll, "switch": n.switch, "switch_port": n.port} for n in h.nics]})
        topo = {"hosts": hosts}
        if self.write_ranks:
            topo["ranks"] = [{"rank": r, "host": h.name, "gpu": g} for r, (h, g) in enumerate(self.ranks)]
        topo["switches"] = [{"name": s.name, "tier": s.tier, "links": s.links}
                            for s in sorted(self.switches.values(), key=lambda s: s.name)]
        return json.dumps(topo, indent=1) + "\n"

    def times(self):
        if self.interval is None:
            self.interval = 60 if len(self.hosts) <= 6 else 120
        ts = []
        t = self.t0 - 20 * 60
        while t <= self.t1:
            ts.append(t)
            t += self.interval
        return ts

    def emit_dcgm(self, o, B):
        om = L.OM()
        ts = self.times()
        hosts = self.dcgm_hosts if self.dcgm_hosts is not None else self.hosts
        fams = self.dcgm_fams or ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                                  "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "REASONS",
                                  "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION",
                                  "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_XID_ERRORS",
                                  "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"]
        helps = {"DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
                 "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C)."),
                 "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
                 "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %)."),
                 "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
                 "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("gauge", "Current clock throttle reasons."),
                 "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("gauge", "Current clock event reasons."),
                 "DCGM_FI_DEV_POWER_VIOLATION": ("counter", "Throttling duration due to power constraints (in us)."),
                 "DCGM_FI_DEV_THERMAL_VIOLATION": ("counter", "Throttling duration due to thermal constraints (in us)."),
                 "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
                 "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
                 "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": ("counter", "Total number of single-bit volatile ECC errors."),
                 "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", "Total number of double-bit volatile ECC errors."),
                 "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink flow-control CRC errors."),
                 "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink retries."),
                 "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for correctable errors"),
                 "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for uncorrectable errors"),
                 }
        for fam in fams:
            fname = self.reason_field if fam == "REASONS" else fam
            typ, hp = helps[fname]
            for h in hosts:
                for g in h.gpus:
                    lab = [("gpu", str(g.idx)), ("UUID", g.uuid), ("pci_bus_id", g.nvml_bus()),
                           ("device", "nvidia%d" % g.idx), ("modelName", g.m["name"]), (self.dcgm_label, h.name),
                           ("DCGM_FI_DRIVER_VERSION", self.drv)]
                    smp = []
                    for t in ts:
                        if g.lost_at is not None and t >= g.lost_at:
                            break
                        smp.append((t, self.dval(fname, g, t)))
                    om.add(fname, typ, hp, lab, smp)
        o.put(B + "metrics/dcgm.om", om.text(), gz=self.om_gz)

    def dval(self, f, g, t):
        t0, t1 = self.t0, self.t1
        if f == "DCGM_FI_DEV_SM_CLOCK":
            return int(g.v("clk", t))
        if f == "DCGM_FI_DEV_GPU_TEMP":
            return int(g.v("temp", t))
        if f == "DCGM_FI_DEV_POWER_USAGE":
            return round(g.v("power", t), 3)
        if f == "DCGM_FI_DEV_GPU_UTIL":
            if self.stop_at is not None and t >= self.stop_at and (self.restart is None or t < self.restart[0]):
                return 0
            return int(g.v("util", t))
        if f == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
            return round(g.v("tensor", t), 3)
        if f in ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"):
            return int(g.v("reasons", t))
        if f == "DCGM_FI_DEV_POWER_VIOLATION":
            return g.c["pviol"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_THERMAL_VIOLATION":
            return g.c["tviol"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
            return g.c["replay"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_XID_ERRORS":
            x = g.base_xid if hasattr(g, "base_xid") else 0
            for (tx, code) in getattr(g, "xid_series", []):
                if t >= tx:
                    x = code
            return x
        if f == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
            return g.c["sbe"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
            return g.c["dbe"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
            return g.c["crc"].at(t, t0, t1) + sum(g.static_crc.values())
        if f == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":
            return g.c["nvreplay"].at(t, t0, t1)
        if f == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":
            return g.rows["corrected"] if t >= getattr(g, "row_t", t0 - 1e9) else getattr(g, "rows_before", 0)
        if f == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS":
            return g.rows["uncorrected"] if t >= getattr(g, "row_t", t0 - 1e9) else 0
        raise KeyError(f)

    def emit_node_exp(self, o, B):
        om = L.OM()
        ts = self.times()
        t0, t1 = self.t0, self.t1
        hosts = self.nexp_hosts if getattr(self, "nexp_hosts", None) is not None else self.hosts
        spec = [("node_infiniband_port_data_received_bytes_total", "port_rcv_data", 4,
                 "Number of data octets received on all links"),
                ("node_infiniband_port_data_transmitted_bytes_total", "port_xmit_data", 4,
                 "Number of data octets transmitted on all links"),
                ("node_infiniband_port_errors_received_total", "port_rcv_errors", 1,
                 "Number of packets containing an error that were received on this port"),
                ("node_infiniband_link_downed_total", "link_downed", 1,
                 "Number of times the link failed to recover from an error state and went down"),
                ("node_infiniband_port_transmit_wait_total", "port_xmit_wait", 1,
                 "Number of ticks during which the port had data to transmit but no data was sent during the entire tick")]
        for fam, key, k, hp in spec:
            for h in hosts:
                inst = self.instance.get(h.name, h.name + ":9100")
                for n in h.nics:
                    om.add(fam, "counter", hp, [("device", n.ibdev), ("instance", inst), ("port", "1")],
                           [(t, n.c[key].at(t, t0, t1) * k) for t in ts])
        for h in hosts:
            inst = self.instance.get(h.name, h.name + ":9100")
            psi = getattr(h, "psi_rate", (0.02, 0.02))
            acc = 1000.0 + 37 * abs(L.noise(h.name, "psi"))
            smp = []
            for t in ts:
                smp.append((t, round(acc, 3)))
                acc += self.interval * (psi[1] if (self.ton and t >= self.ton) else psi[0])
            om.add("node_pressure_cpu_waiting_seconds_total", "counter",
                   "Total time in seconds that processes have waited for CPU time", [("instance", inst)], smp)
            ld = getattr(h, "load_pair", (h.load, h.load))
            om.add("node_load1", "gauge", "1m load average.", [("instance", inst)],
                   [(t, round((ld[1] if (self.ton and t >= self.ton) else ld[0]) * (1 + 0.03 * L.noise(h.name, t)), 2))
                    for t in ts])
        o.put(B + "metrics/node.om", om.text(), gz=self.om_gz)

    def emit_snmp(self, o, B):
        om = L.OM()
        ts = self.times()
        for sw in sorted(self.switches.values(), key=lambda s: s.name):
            for p in sorted(sw.ports, key=lambda p: (len(p), p)):
                d = sw.ports[p]
                for fam, key in (("ifHCInOctets", "in_oct"), ("ifHCOutOctets", "out_oct"), ("ifOutDiscards", "discards")):
                    om.add(fam, "counter" if fam != "ifOutDiscards" else "unknown",
                           {"ifHCInOctets": "The total number of octets received on the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.6",
                            "ifHCOutOctets": "The total number of octets transmitted out of the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.10",
                            "ifOutDiscards": "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted - 1.3.6.1.2.1.2.2.1.19"}[fam],
                           [("ifName", p), ("instance", sw.name)], [(t, d[key].at(t, self.t0, self.t1)) for t in ts])
        o.put(B + "metrics/switch-ports.om", om.text(), gz=self.om_gz)

    def emit_node(self, o, B, h):
        base = B + "nodes/%s/" % h.name
        t0, t1 = self.t0, self.t1
        col = {"before": t0, "now": t1}
        if self.with_boot:
            col["boot"] = h.boot
        if not self.miss(h.name, "collected.json"):
            o.put(base + "collected.json", json.dumps(col, sort_keys=True) + "\n")
        snaps = [("", t1)] + ([("before/", t0)] if self.before else [])
        for pfx, t in snaps:
            files = {}
            for g in h.gpus:
                lost = g.lost_at is not None and g.lost_at <= t
                aer = getattr(g, "aer", None)
                if aer is not None and pfx:
                    aer = getattr(g, "aer_before", aer)
                pf = L.pci_sys(g.sys_bus(), g.max_gen, g.max_width, g.cur_gen, g.cur_width, self.old_kernel, "sys",
                               lost, aer)
                if pfx:
                    pf = {k: v for k, v in pf.items() if "aer_" in k}
                files.update(pf)
            for n in h.nics:
                if not pfx:
                    files.update(L.pci_sys(n.sys_bus(), n.max_gen, n.max_width, n.cur_gen, n.cur_width,
                                           self.old_kernel, "sys"))
                files.update(L.ib_sys(n, t, t0, t1, "sys", bool(pfx)))
            for p, txt in sorted(files.items()):
                if self.miss(h.name, "sys"):
                    continue
                o.put(base + pfx + p, txt)
            # commands
            cmds = {}
            if h.nics and h.nics[0].ll == "Ethernet":
                for n in h.nics:
                    cmds["ethtool-S-%s.txt" % n.netdev] = L.ethtool_s(n, t, t0, t1)
                    if self.fec_cmd:
                        cmds["ethtool-I-show-fec-%s.txt" % n.netdev] = L.fec(n, t, t0, t1)
            if self.nvlink_cmd:
                cmds["nvidia-smi-nvlink-e.txt"] = L.nvlink_e(h, t, t0, t1)
            if not pfx:
                cmds["nvidia-smi-q.txt"] = L.nvidia_smi_q(h, t, self.drv, self.old_smi)
                cmds["lspci-vv.txt"] = L.lspci_vv(h, t)
                cmds["dmesg.txt"] = L.dmesg_lines(h, self.dmesg_style, t0)
                cmds["ibstat.txt"] = L.ibstat(h)
                a10 = h.cpu_psi[1]
                cmds["pressure-cpu.txt"] = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % (
                    a10, a10 * 0.92, a10 * 0.6, int(1e9 + 1e6 * a10 * 77))
                if h.mem_psi is not None:
                    s_, f_ = h.mem_psi
                    cmds["pressure-memory.txt"] = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
                        s_, s_ * 0.9, s_ * 0.5, int(2e8 + 1e6 * s_ * 90), f_, f_ * 0.9, f_ * 0.5, int(1e8 + 1e6 * f_ * 90))
                if h.io_psi is not None:
                    s_ = h.io_psi
                    cmds["pressure-io.txt"] = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
                        s_, s_ * 0.9, s_ * 0.6, int(3e8 + 1e6 * s_ * 60), s_ * 0.7, s_ * 0.6, s_ * 0.4, int(2e8 + 1e6 * s_ * 40))
                cmds["top.txt"] = self.top(h, t)
                if h.sel is not None:
                    cmds["ipmitool-sel-elist.txt"] = h.sel
                if h.fans is not None:
                    cmds["ipmitool-sdr-type-fan.txt"] = h.fans
            for name, txt in sorted(cmds.items()):
                if self.miss(h.name, name):
                    continue
                key = (h.name, pfx + name)
                if key in self.truncate:
                    txt = txt[:int(len(txt) * self.truncate[key])]
                if key in self.corrupt:
                    txt = "\x1f\x8b\x08\x00" + "".join(chr(33 + (i * 7) % 90) for i in range(300))
                    o.put(base + pfx + "cmd/" + name + ".gz", txt.encode("latin-1"))
                    continue
                o.put(base + pfx + "cmd/" + name, txt, gz=(name in self.cmd_gz))
            if not pfx and not self.miss(h.name, "nvml.json"):
                o.put(base + "nvml.json", L.nvml_json(h, t, self.drv, self.events.get(h.name, [])))

    def top(self, h, t):
        d = L.dt(t)
        busy = sum(1 for g in h.gpus if g.busy)
        ld = getattr(h, "load_pair", (h.load, h.load))[1]
        procs = []
        pid = 41000 + int(abs(L.noise(h.name, "pid")) * 9000)
        for i in range(busy):
            procs.append((pid + i, "svc-ml", 20, 0, "62.1g", "9.8g", "1.2g", "R", 101.0 + 3 * L.noise(h.name, i), 2.6, "1382:11.40", "python3"))
        procs += getattr(h, "top_extra", [])
        procs.sort(key=lambda p: -p[8])
        us = min(98.0, 8.0 + sum(p[8] for p in procs) / h.cpus)
        L_ = ["top - %02d:%02d:%02d up %d days,  %d:%02d,  2 users,  load average: %.2f, %.2f, %.2f" % (
            d.hour, d.minute, d.second, (t - h.boot) // 86400, ((t - h.boot) % 86400) // 3600,
            ((t - h.boot) % 3600) // 60, ld, ld * 0.97, ld * 0.9),
              "Tasks: 1021 total,  %d running, 1008 sleeping,   0 stopped,   0 zombie" % (len(procs) + 2),
              "%%Cpu(s): %4.1f us,  2.1 sy,  0.0 ni, %4.1f id,  %3.1f wa,  0.0 hi,  0.3 si,  0.0 st" % (
                  us, max(0.0, 97.6 - us - getattr(h, "wa", 0.1)), getattr(h, "wa", 0.1)),
              "MiB Mem : 2063741.2 total, %9.1f free, %9.1f used, 1040212.7 buff/cache" % (
                  getattr(h, "memfree", 512339.9), 511188.6),
              "MiB Swap:   8192.0 total,   %6.1f free,   %6.1f used. 1531022.1 avail Mem" % (
                  8192.0 - getattr(h, "swap", 0.0), getattr(h, "swap", 0.0)),
              "",
              "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
        for p in procs:
            L_.append("%7d %-8s  %2d  %2d %7s %6s %6s %s %5.1f %5.1f %9s %s" % p)
        return "\n".join(L_) + "\n"
