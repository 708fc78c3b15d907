"""Case model: builds state, job physics and prints every source of one bundle."""
import json
import math
import random

from fleet import Fleet, Out, gpu_state, nic_state, iso, ctime, syslogts, SPEED, SPEED_OLD
import printers as P

DAY0 = 1793000000  # 2026-10-26
CUR = {"T0": 0}


class Cnt:
    """A counter: base at T0, rate r0 per second before onset, r1 after."""

    def __init__(self, base=0, r0=0.0, r1=None, onset=None, jumps=()):
        self.base, self.r0 = base, r0
        self.r1 = r0 if r1 is None else r1
        self.onset = onset
        self.jumps = list(jumps)  # (t, amount)
        self.T0 = None

    def v(self, t):
        on = self.onset if self.onset is not None else 1e18
        T0 = self.T0 if self.T0 is not None else CUR["T0"]
        val = self.base + self.r0 * (min(t, on) - T0) + (self.r1 * (t - on) if t > on else 0)
        val += sum(a for (tj, a) in self.jumps if tj <= t)
        return int(val)


class Case:
    def __init__(self, idx, cause, comp, seed, n_hosts=8, gpus=8, nics=8, model="H100", ll="InfiniBand", naming="a",
                 hosts_per_leaf=16, spines=4, driver="550.90.07", job_hosts=None, dur=5400, switch_style="sonic"):
        self.cid = "sm-%02d" % idx
        self.cause, self.comp = cause, comp
        self.rng = random.Random(seed)
        self.fl = Fleet(self.rng, n_hosts, gpus, nics, model, ll, naming, hosts_per_leaf, spines, switch_style=switch_style, driver=driver,
                        job_hosts=job_hosts)
        self.start = DAY0 + idx * 86400 + self.rng.randint(0, 20) * 600
        self.end = self.start + dur
        self.T0 = self.start - 1800
        self.onset = self.start + int(dur * self.rng.uniform(0.25, 0.4))
        nl = 12 if model == "A100" else 18
        self.nl = nl
        job = set(self.fl.job_hosts)
        self.g = {}
        self.n = {}
        for h in self.fl.hosts:
            busy = h["name"] in job
            self.g[h["name"]] = []
            for gi in range(gpus):
                s = gpu_state(self.fl, self.rng, busy)
                for k in ("crc", "replay_nv", "rec"):
                    s[k] = [Cnt(0) for _ in range(nl)]
                s["sbe"] = Cnt(0)
                s["pcie_replay"] = Cnt(0)
                s["tviol"] = Cnt(0)
                s["pviol"] = Cnt(self.rng.randint(10 ** 9, 10 ** 11) if s["reasons"] & 4 else 0,
                                 0.35e9 if s["reasons"] & 4 else 0)
                self.g[h["name"]].append(s)
            self.n[h["name"]] = {}
            for ni in h["nics"]:
                s = nic_state(self.fl, self.rng, busy)
                s["util1"] = s["util"]
                s["bytes"] = Cnt(self.rng.randint(10 ** 13, 10 ** 14), s["util"] * s["bps"])
                s["pkts_div"] = 4096
                for k in ("sym", "rcverr", "down", "txp", "rxp", "disc", "oob", "stall", "fec_unc", "cnp"):
                    s[k] = Cnt(0)
                s["fec_corr"] = Cnt(s["fec_corr_b"], s["fec_corr_rate"])
                s["wait"] = Cnt(self.rng.randint(10 ** 8, 10 ** 10), s["wait_rate"])
                s["rxp"] = Cnt(self.rng.randint(0, 3000) if busy else 0)
                s["cnp"] = Cnt(self.rng.randint(10 ** 4, 10 ** 6), s["cnp_rate"])
                self.n[h["name"]][ni["ibdev"]] = s
        # switch port counters beyond host-facing ones (uplinks): (switch, port) -> dict rx_pfc/tx_pfc/in/out/disc
        self.sw = {}
        for sname, sw in self.fl.switches.items():
            for l in sw["links"]:
                self.sw[(sname, l["port"])] = {"rxp": Cnt(0), "txp": Cnt(0), "in": Cnt(self.rng.randint(10 ** 14, 10 ** 15), 0),
                                                "out": Cnt(self.rng.randint(10 ** 14, 10 ** 15), 0), "disc": Cnt(0), "rxerr": Cnt(0)}
        # job physics
        self.C = self.rng.uniform(0.8, 2.4)  # compute per step
        self.M = self.C * self.rng.uniform(0.18, 0.3)  # exposed comm
        self.slow = {}  # rank -> factor on compute after onset
        self.comm_f = 1.0  # factor on comm after onset
        self.data_wait = 0.0  # extra per-step wait after onset (input)
        self.start_slow = False  # slowdown from step 1 (config)
        self.steps_every = self.rng.choice([1, 5, 10, 20, 50])
        self.compute_col = True
        self.checksum = False
        self.sdc_rank = None
        self.restart = None  # (t_stop, t_resume)
        self.stop_at = None  # job hangs at t
        self.shuffle_rows = False
        self.missing_rank_rows = False
        # presentation
        self.ranks_explicit = False
        self.node_hosts = list(self.fl.job_hosts[:2])
        self.metric_hosts = None
        self.metric_light_hosts = []  # hosts with only counters families
        self.light_fams = []
        self.label = "hostname"
        self.throttle_fam = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
        self.dmesg_style = "plain"
        self.gz = set()  # 'steps', 'metrics', 'dmesg', 'nodes'
        self.missing = set()  # 'steps', 'metrics', 'nvml', 'dmesg', 'topology', 'logs', 'before', 'switches'
        self.truncate = set()
        self.dmesg = {}
        self.sel = {}
        self.fans = {}
        self.top = {}
        self.psi = {}
        self.logs = []
        self.nccl_env = []
        self.nccl_hcas = None
        self.switch_cmd = False
        self.snmp = False
        self.snmp_ports = []
        self.node_exporter = True
        self.alerts = []
        self.title = ""
        self.reported = ""
        self.job_name = "llm-pretrain"
        self.old_kernel = False
        self.extra_nodes_cmd = {}
        self.boot = {}
        self.no_boot = set()
        self.notes = {}
        self.sdc_from = None

    # ------------------------------------------------------------- helpers
    def gs(self, host, gi):
        return self.g[host][gi]

    def ns(self, host, dev):
        return self.n[host][dev]

    def ranks(self):
        return self.fl.ranks()

    def rank_of(self, host, gi):
        return self.ranks().index((host, gi))

    def add_dmesg(self, host, t, text):
        self.dmesg.setdefault(host, []).append((t, text))

    def step_times(self):
        """Yields (t, factor_by_rank-dict, comm, wait) per step; synchronous job."""
        pass

    # ------------------------------------------------------------- build
    def build(self):
        CUR["T0"] = self.T0
        for c in self._all_cnts():
            c.T0 = self.T0
        out = Out()
        b = "%s/bundle/" % self.cid
        self.emit_incident(out, b)
        if "topology" not in self.missing:
            out.put(b + "topology.json", self.fl.topology(self.ranks_explicit, random.Random(self.rng.random()) if self.ranks_explicit else None))
        if "steps" not in self.missing:
            txt = self.emit_steps()
            if "steps" in self.truncate:
                txt = txt[: len(txt) // 2].rsplit("\n", 1)[0] + "\n3"  # cut mid-row
            out.put(b + "job/steps.csv", txt, gz="steps" in self.gz)
        if "logs" not in self.missing:
            out.put(b + "job/logs/train.log", self.emit_logs())
        if "metrics" not in self.missing:
            txt = self.emit_dcgm()
            if "metrics" in self.truncate:
                raw = txt.encode()
                out.put(b + "metrics/dcgm.om", txt, gz=True)
                out.files[b + "metrics/dcgm.om.gz"] = out.files[b + "metrics/dcgm.om.gz"][: 4000]
            else:
                out.put(b + "metrics/dcgm.om", txt, gz="metrics" in self.gz or len(txt) > 1500000)
            if self.node_exporter:
                out.put(b + "metrics/node.om", self.emit_nodeexp(), gz="metrics" in self.gz)
        if self.snmp:
            out.put(b + "metrics/switch-ports.om", self.emit_snmp(), gz="metrics" in self.gz)
        for h in self.node_hosts:
            self.emit_node(out, b + "nodes/%s/" % h, h)
        if self.switch_cmd and "switches" not in self.missing:
            self.emit_switches(out, b)
        out.put("%s/truth.json" % self.cid, {"root_cause": self.cause, "component": self.comp})
        return out

    def _all_cnts(self):
        for h in self.g.values():
            for s in h:
                for k in ("crc", "replay_nv", "rec"):
                    yield from s[k]
                for k in ("sbe", "pcie_replay", "tviol", "pviol"):
                    yield s[k]
        for h in self.n.values():
            for s in h.values():
                for k, v in s.items():
                    if isinstance(v, Cnt):
                        yield v
        for p in self.sw.values():
            yield from p.values()

    # ------------------------------------------------------------- incident
    def emit_incident(self, out, b):
        inc = {"schema": "forensic.bundle/v1", "id": "%s-%s" % (self.job_name.split("-")[0], self.cid.replace("sm-", "")),
               "title": self.title, "window": {"start": iso(self.start), "end": iso(self.end)},
               "job": {"name": self.job_name, "ranks": len(self.ranks()), "gpus_per_node": self.fl.gpn},
               "reported": self.reported}
        if self.alerts:
            inc["alerts"] = self.alerts
        out.put(b + "incident.json", inc)

    def alert(self, name, labels, t, severity="warning", summary=""):
        lab = {"alertname": name, "severity": severity}
        lab.update(labels)
        self.alerts.append({"status": "firing", "labels": lab, "annotations": {"summary": summary},
                            "startsAt": iso(t), "endsAt": "0001-01-01T00:00:00Z",
                            "generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=%s" % name,
                            "fingerprint": "%016x" % self.rng.getrandbits(64)})

    # ------------------------------------------------------------- steps
    def emit_steps(self):
        rk = self.ranks()
        R = len(rk)
        rng = random.Random(self.rng.random())
        rows = []
        t = self.T0 + 60
        step = 1000 * rng.randint(3, 40)
        base_ck = "%08x" % rng.getrandbits(32)
        n_total = (self.end - self.T0) / self.step_duration(False)
        for e in (1, 5, 10, 20, 50, 100, 200, 500):
            if e >= self.steps_every and n_total / e <= (70 if R <= 128 else 35):
                self.steps_every = e
                break
        while t < self.end - 30:
            if self.stop_at and t >= self.stop_at:
                break
            if self.restart and self.restart[0] <= t < self.restart[1]:
                t = self.restart[1]
                step -= self.steps_every * 3  # resumed from checkpoint: step numbers repeat
                continue
            after = t >= self.onset or self.start_slow
            comps = []
            for r in range(R):
                f = self.slow.get(r, 1.0) if after else 1.0
                comps.append(self.C * f * (1 + rng.uniform(-0.012, 0.012)))
            cf = self.comm_f if after else 1.0
            dw = self.data_wait * rng.uniform(0.7, 1.3) if after else 0.0
            dur = max(comps) + self.M * cf + dw
            if self.compute_col:
                comps = [cc + dw for cc in comps] if False else comps
            loss = 2.1 + 1.5 * math.exp(-(step) / 90000.0) + rng.uniform(-0.02, 0.02)
            ck = "%08x" % (int(base_ck, 16) ^ (step * 2654435761 & 0xffffffff))
            for r in range(R):
                if self.missing_rank_rows and rng.random() < 0.01:
                    continue
                d = dur + rng.uniform(0, 0.004)
                row = [str(step), str(r), "%.3f" % (t + rng.uniform(0, 0.002)), "%.4f" % d]
                if self.compute_col:
                    row.append("%.4f" % comps[r])
                row.append("%.4f" % loss)
                if self.checksum:
                    c = ck
                    if self.sdc_rank == r and t >= self.sdc_from:
                        c = "%08x" % (int(ck, 16) ^ 0x00400000)
                    row.append(c)
                rows.append(row)
            t += dur * self.steps_every
            step += self.steps_every
        if self.shuffle_rows:
            rng.shuffle(rows)
        hdr = ["step", "rank", "start_unix", "duration_s"] + (["compute_s"] if self.compute_col else []) + ["loss"] + \
              (["param_checksum"] if self.checksum else [])
        return ",".join(hdr) + "\n" + "".join(",".join(r) + "\n" for r in rows)

    def step_duration(self, after):
        f = max(self.slow.values()) if (after and self.slow) else 1.0
        return self.C * f + self.M * (self.comm_f if after else 1.0) + (self.data_wait if after else 0)

    # ------------------------------------------------------------- logs
    def emit_logs(self):
        L = []
        h0 = self.fl.job_hosts[0]
        t = self.T0 - 600
        L.append("[%s] INFO launcher: starting %s with %d ranks on %d nodes" % (iso(t), self.job_name, len(self.ranks()), len(self.fl.job_hosts)))
        L.append("NCCL version 2.21.5+cuda12.4")
        for e in self.nccl_env:
            L.append("%s:%d:%d [0] NCCL INFO %s set by environment to %s." % (h0, 4811, 4811, e[0], e[1]))
        hcas = self.nccl_hcas or [n["ibdev"] for n in self.fl.byname[h0]["nics"]]
        kind = "IB" if self.fl.ll == "InfiniBand" else "RoCE"
        L.append("%s:4811:4930 [0] NCCL INFO NET/IB : Using %s [RO]; OOB bond0:10.12.0.%d<0>" % (
            h0, " ".join("[%d]%s:1/%s" % (i, d, kind) for i, d in enumerate(hcas)), 11))
        L.append("%s:4811:4930 [0] NCCL INFO comm 0x55d1c2a0e3b0 rank 0 nranks %d cudaDev 0 nvmlDev 0 busId 18000 commId 0x%016x - Init COMPLETE" % (
            h0, len(self.ranks()), self.rng.getrandbits(64)))
        L += self.logs
        L.sort(key=lambda x: 0)
        return "\n".join(L) + "\n"

    # ------------------------------------------------------------- metrics
    def mtimes(self, every=180):
        return list(range(self.T0, self.end + 1, every))

    def gauge(self, s, key, t):
        return s[key] if (s["onset"] is not None and t >= s["onset"]) or (s["onset"] is None and False) else s[key + "0"] if key + "0" in s else s[key]

    def emit_dcgm(self):
        hosts = self.metric_hosts if self.metric_hosts is not None else self.node_hosts
        T = self.mtimes()
        fams = [("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
                ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
                ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
                ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
                (self.throttle_fam, "gauge", "Current clock throttle reasons." if "THROTTLE" in self.throttle_fam else "Current clock event reasons."),
                ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us)."),
                ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in us)."),
                ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
                ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
                ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
                ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
                ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.")]
        out = []
        for fam, typ, hlp in fams:
            full = [h for h in hosts]
            light = [h for h in self.metric_light_hosts if h not in hosts] if fam in self.light_fams else []
            if not full and not light:
                continue
            out.append("# HELP %s %s" % (fam, hlp))
            out.append("# TYPE %s %s" % (fam, typ))
            for h in full + light:
                hh = self.fl.byname[h]
                for g in hh["gpus"]:
                    s = self.g[h][g["index"]]
                    lab = 'gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s"' % (
                        g["index"], g["uuid"], g["pci_bus_id"], g["index"], self.fl.m["name"], self.label, h)
                    for t in T:
                        if s["lost"] and s.get("lost_at") and t >= s["lost_at"]:
                            break
                        v = self.metric_value(fam, s, t)
                        out.append("%s{%s} %s %d" % (fam, lab, v, t))
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def metric_value(self, fam, s, t):
        aft = s["onset"] is not None and t >= s["onset"]
        if fam == "DCGM_FI_DEV_SM_CLOCK":
            return "%d" % (s["clk"] if aft else s["clk0"])
        if fam == "DCGM_FI_DEV_GPU_TEMP":
            return "%d" % (s["temp"] if aft else s["temp0"])
        if fam == "DCGM_FI_DEV_POWER_USAGE":
            return "%.3f" % ((s["pw"] if aft else s["pw0"]) + ((t * 7919) % 13) / 10.0 - 0.65 if s["busy"] else (s["pw"] if aft else s["pw0"]))
        if fam == "DCGM_FI_DEV_GPU_UTIL":
            u = s.get("util_t")
            return "%d" % (u(t) if u else s["util"])
        if fam in ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"):
            return "%d" % (s["reasons"] if aft else s["reasons0"])
        if fam == "DCGM_FI_DEV_POWER_VIOLATION":
            return "%d" % (s["pviol"].v(t) // 1000)
        if fam == "DCGM_FI_DEV_THERMAL_VIOLATION":
            return "%d" % (s["tviol"].v(t) // 1000)
        if fam == "DCGM_FI_DEV_XID_ERRORS":
            xt = s.get("xid_t")
            return "%d" % (s["xid"] if (xt is None or t >= xt) and s["xid"] else s["xid0"])
        if fam == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
            return "%d" % s["sbe"].v(t)
        if fam == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
            return "%d" % s["pcie_replay"].v(t)
        if fam == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
            return "%d" % sum(c.v(t) for c in s["crc"])
        if fam == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":
            return "%d" % sum(c.v(t) for c in s["replay_nv"])
        raise KeyError(fam)

    def emit_nodeexp(self):
        T = self.mtimes(300)
        fams = [("node_infiniband_port_data_transmitted_bytes_total", "bytes"),
                ("node_infiniband_port_data_received_bytes_total", "bytes"),
                ("node_infiniband_port_errors_received_total", "rcverr"),
                ("node_infiniband_link_downed_total", "down"),
                ("node_infiniband_port_transmit_wait_total", "wait")]
        out = []
        for fam, key in fams:
            out.append("# HELP %s Infiniband port counter %s" % (fam, key))
            out.append("# TYPE %s counter" % fam)
            for h in self.node_hosts:
                for ni in self.fl.byname[h]["nics"]:
                    s = self.n[h][ni["ibdev"]]
                    for t in T:
                        v = s[key].v(t)
                        if key == "bytes":
                            v = v // 4 * 4
                        out.append('%s{device="%s",instance="%s:9100",port="1"} %d %d' % (fam, ni["ibdev"], h, v, t))
        for h in self.node_hosts:
            if h in self.psi:
                pass
        if any(h in self.psi for h in self.node_hosts):
            out.append("# HELP node_pressure_cpu_waiting_seconds_total Total time in seconds that processes have waited for CPU time")
            out.append("# TYPE node_pressure_cpu_waiting_seconds_total counter")
            for h in self.node_hosts:
                r0, r1 = self.psi.get(h, {}).get("cpu_rates", (0.002, 0.002))
                on = self.psi.get(h, {}).get("onset", self.onset)
                base = 5000.0
                for t in T:
                    v = base + r0 * (min(t, on) - self.T0) + (r1 * (t - on) if t > on else 0)
                    out.append('node_pressure_cpu_waiting_seconds_total{instance="%s:9100"} %.3f %d' % (h, v, t))
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def emit_snmp(self):
        T = self.mtimes(300)
        out = []
        for fam, key in (("ifHCInOctets", "in"), ("ifHCOutOctets", "out"), ("ifOutDiscards", "disc")):
            out.append("# HELP %s The total number of octets" % fam if key != "disc" else "# HELP %s The number of outbound packets discarded" % fam)
            out.append("# TYPE %s counter" % fam)
            for (sw, port) in self.snmp_ports:
                p = self.port_cnts(sw, port)
                for t in T:
                    out.append('%s{ifName="%s",instance="%s"} %d %d' % (fam, port, sw, p[key].v(t), t))
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def port_cnts(self, sw, port):
        """Counters of a switch port; host-facing ports mirror the NIC's counters."""
        if (sw, port) in self.sw:
            return self.sw[(sw, port)]
        host, dev = self.fl.switches[sw]["ports"][port]
        s = self.n[host][dev]
        return {"rxp": s["txp"], "txp": s["rxp"], "in": s["bytes"], "out": s["bytes"], "disc": Cnt(0, 0), "rxerr": s["sym"] if s.get("sw_side") else Cnt(0)}

    # ------------------------------------------------------------- node files
    def emit_node(self, out, p, h):
        hh = self.fl.byname[h]
        gz = "nodes" in self.gz
        boot = self.boot.get(h, self.start - self.rng.randint(3, 40) * 86400)
        self.boot[h] = boot
        col = {"before": self.start, "now": self.end, "boot": boot}
        if h in self.no_boot:
            del col["boot"]
        if "before" in self.missing:
            del col["before"]
        out.put(p + "collected.json", col)
        snaps = [("", self.end)] + ([] if "before" in self.missing else [("before/", self.start)])
        for pre, t in snaps:
            st = [self.snapshot_gpu(s, t) for s in self.g[h]]
            nst = {k: self.snapshot_nic(s, t) for k, s in self.n[h].items()}
            for g in hh["gpus"]:
                s = st[g["index"]]
                d = p + pre + "sys/bus/pci/devices/0000:%s:00.0/" % g["bus"]
                if s["lost"]:
                    out.put(d + "current_link_speed", "Unknown\n")
                    out.put(d + "current_link_width", "63\n")
                else:
                    sp = (SPEED_OLD if self.old_kernel else SPEED)[s["gen"]]
                    out.put(d + "current_link_speed", "%s GT/s%s\n" % (sp, "" if self.old_kernel else " PCIe"))
                    out.put(d + "current_link_width", "%d\n" % s["width"])
                sp = (SPEED_OLD if self.old_kernel else SPEED)[s["maxgen"]]
                out.put(d + "max_link_speed", "%s GT/s%s\n" % (sp, "" if self.old_kernel else " PCIe"))
                out.put(d + "max_link_width", "%d\n" % s["maxwidth"])
                aer = s["aer"]
                out.put(d + "aer_dev_correctable", "Receiver Error %d\nBad TLP %d\nBad DLLP %d\nRELAY_NUM Rollover 0\nReplay Timer Timeout %d\n"
                        "Advisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n" % (
                            aer.get("rx", 0), aer.get("tlp", 0), aer.get("dllp", 0), aer.get("to", 0),
                            aer.get("rx", 0) + aer.get("tlp", 0) + aer.get("dllp", 0) + aer.get("to", 0)))
            for ni in hh["nics"]:
                s = nst[ni["ibdev"]]
                d = p + pre + "sys/class/infiniband/%s/ports/1/" % ni["ibdev"]
                out.put(d + "state", s["state"] + "\n")
                out.put(d + "phys_state", s["phys"] + "\n")
                out.put(d + "rate", "%d Gb/sec (4X %s)\n" % (s["rate"], {400: "NDR", 200: "HDR", 100: "EDR"}.get(s["rate"], "NDR")))
                out.put(d + "link_layer", self.fl.ll + "\n")
                for name, val in (("port_rcv_errors", s["rcverr_v"]), ("symbol_error", s["sym_v"]), ("link_downed", s["down_v"]),
                                  ("port_xmit_wait", s["wait_v"]), ("port_rcv_data", s["bytes_v"] // 4), ("port_xmit_data", s["bytes_v"] // 4),
                                  ("link_error_recovery", s["down_v"])):
                    out.put(d + "counters/" + name, "%d\n" % val)
                hw = [("out_of_sequence", 0), ("packet_seq_err", 0), ("local_ack_timeout_err", s.get("ackto_v", 0))]
                if self.fl.ll == "Ethernet":
                    hw += [("np_cnp_sent", s["cnp_v"]), ("rp_cnp_handled", s["cnp_v"]), ("np_ecn_marked_roce_packets", s["cnp_v"])]
                for name, val in hw:
                    out.put(d + "hw_counters/" + name, "%d\n" % val)
                out.put(p + pre + "sys/class/net/%s/operstate" % ni["netdev"], ("up" if "ACTIVE" in s["state"] else "down") + "\n")
                out.put(p + pre + "sys/class/net/%s/carrier_changes" % ni["netdev"], "%d\n" % (2 + 2 * s["down_v"]))
                if self.fl.ll == "Ethernet":
                    out.put(p + pre + "cmd/ethtool-S-%s.txt" % ni["netdev"], P.ethtool_s(ni, self.ethtool_view(s), "now"), gz=gz)
                if self.n[h][ni["ibdev"]].get("fec"):
                    out.put(p + pre + "cmd/ethtool-I-show-fec-%s.txt" % ni["netdev"], self.fec_text(ni, s))
            if pre == "" and "nvml" not in self.missing:
                ev = [e for e in self.nvml_events.get(h, [])] if hasattr(self, "nvml_events") else []
                out.put(p + "nvml.json", P.nvml_json(self, hh, st, ev))
            if "smi" not in self.missing or pre:
                out.put(p + pre + "cmd/nvidia-smi-q.txt", P.nvidia_smi_q(self, hh, st, t), gz=gz)
            out.put(p + pre + "cmd/lspci-vv.txt", P.lspci(self, hh, st, nst), gz=gz)
            out.put(p + pre + "cmd/ibstat.txt", P.ibstat(self, hh, nst))
            out.put(p + pre + "cmd/nvidia-smi-nvlink-e.txt", self.nvlink_text(hh, st))
        if "dmesg" not in self.missing:
            txt = self.dmesg_text(h, boot)
            if "dmesg" in self.truncate:
                txt = txt[: int(len(txt) * 0.6)]
            out.put(p + "cmd/dmesg.txt", txt, gz="dmesg" in self.gz)
        if h in self.sel:
            out.put(p + "cmd/ipmitool-sel-elist.txt", self.sel[h])
        if h in self.fans:
            out.put(p + "cmd/ipmitool-sdr-type-fan.txt", self.fans[h])
        if h in self.top:
            out.put(p + "cmd/top.txt", self.top[h])
        for k, v in self.psi.get(h, {}).items():
            if k.startswith("pressure"):
                out.put(p + "cmd/%s.txt" % k, v)
        for k, v in self.extra_nodes_cmd.get(h, {}).items():
            out.put(p + "cmd/" + k, v)

    def snapshot_gpu(self, s, t):
        d = dict(s)
        aft = s["onset"] is not None and t >= s["onset"]
        for k in ("clk", "temp", "pw", "reasons"):
            d[k] = s[k] if aft else s[k + "0"]
        if not aft:
            d["gen"], d["width"] = s.get("gen0", s["gen"]), s.get("width0", s["width"])
            d["lost"] = False
            d["remap"] = s.get("remap0", s["remap"])
            d["dbe"] = s.get("dbe0", s["dbe"])
            d["aer"] = s.get("aer0", s["aer"])
        d["sbe_n"] = s["sbe"].v(t)
        d["pcie_replay_n"] = s["pcie_replay"].v(t)
        d["crc_v"] = [c.v(t) for c in s["crc"]]
        d["replay_v"] = [c.v(t) for c in s["replay_nv"]]
        d["rec_v"] = [c.v(t) for c in s["rec"]]
        if not s["busy"]:
            d["util"] = 0
        return d

    def snapshot_nic(self, s, t):
        d = dict(s)
        for k, v in s.items():
            if isinstance(v, Cnt):
                d[k + "_v"] = v.v(t)
        aft = s["onset"] is not None and t >= s["onset"]
        if not aft:
            for k in ("state", "phys", "rate", "width", "gen"):
                d[k] = s.get(k + "0", s[k])
        return d

    def ethtool_view(self, s):
        v = {}
        for k in ("sym", "disc", "oob", "down", "rxp", "txp", "stall"):
            v[k + "_n"] = s[k + "_v"]
        v["bytes_n"] = s["bytes_v"]
        v["pkts_n"] = s["bytes_v"] // 4096
        v["storm"] = s.get("storm", 0)
        return v

    def fec_text(self, ni, s):
        corr = s["fec_corr_v"]
        unc = s["fec_unc_v"]
        lanes = [corr // 4 + (i * 7919 % 97) for i in range(4)]
        return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\nStatistics:\n"
                "  corrected_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n"
                "  uncorrectable_blocks: %d\n" % (ni["netdev"], sum(lanes), lanes[0], lanes[1], lanes[2], lanes[3], unc))

    def nvlink_text(self, hh, st):
        L = []
        for g in hh["gpus"]:
            s = st[g["index"]]
            if s["lost"]:
                continue
            L.append("GPU %d: %s (UUID: %s)" % (g["index"], self.fl.m["name"], g["uuid"]))
            for l in range(self.nl):
                L.append("\t Link %d: Replay Errors: %d" % (l, s["replay_v"][l]))
                L.append("\t Link %d: Recovery Errors: %d" % (l, s["rec_v"][l]))
                L.append("\t Link %d: CRC Errors: %d" % (l, s["crc_v"][l]))
        return "\n".join(L) + "\n"

    def dmesg_text(self, h, boot):
        base = [(boot + 2.1, "Linux version 5.15.0-119-generic (buildd@lcy02-amd64-041) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #129-Ubuntu SMP"),
                (boot + 14.2, "nvidia: loading out-of-tree module taints kernel."),
                (boot + 15.9, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % self.fl.driver)]
        for n in self.fl.byname[h]["nics"]:
            base.append((boot + 21.0 + int(n["ibdev"][5:]) * 0.01, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n["pci_bus_id"], n["ibdev"])))
        ev = sorted(base + self.dmesg.get(h, []))
        style = self.dmesg_style
        L = []
        for i, (t, txt) in enumerate(ev):
            up = t - boot
            for j, line in enumerate(txt.split("\n")):
                if style == "plain":
                    L.append(("[%12.6f] " % up if j == 0 else " " * 15) + line)
                elif style == "T":
                    L.append("[%s] %s" % (ctime(t), line))
                elif style == "journal":
                    L.append("%s %s kernel: %s" % (syslogts(t), h, line))
                elif style == "kmsg":
                    pr = 3 if ("Xid" in line or "error" in line.lower()) else 6
                    L.append("%d,%d,%d,-;%s" % (pr, 1000 + i * 3 + j, int(up * 1e6), line))
        return "\n".join(L) + "\n"

    # ------------------------------------------------------------- switches
    def emit_switches(self, out, b):
        for sname, sw in self.fl.switches.items():
            ports = sorted(set(list(sw["ports"].keys()) + [l["port"] for l in sw["links"]]), key=lambda x: int(x[8:]))
            ports = [pp for pp in ports if (sname, pp) in self.sw or sw["ports"][pp][0] in self.switch_hosts()]
            if not ports:
                continue
            cs = [(pp, self.port_cnts(sname, pp)) for pp in ports]
            fmt = lambda v: "{:,}".format(v)
            L = []
            for dirn, key in (("Rx", "rxp"), ("Tx", "txp")):
                L.append("  Port %s    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7" % dirn)
                L.append("-----------  ------  ------  ------  ------  ------  ------  ------  ------")
                for pp, c in cs:
                    L.append("%11s  %6s  %6s  %6s  %6s  %6s  %6s  %6s  %6s" % (pp, 0, 0, 0, fmt(c[key].v(self.end)), 0, 0, 0, 0))
                L.append("")
            out.put(b + "switches/%s/cmd/show-pfc-counters.txt" % sname, "\n".join(L))
            L = ["      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
                 "-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------"]
            for pp, c in cs:
                st = self.pfcwd.get((sname, pp)) if hasattr(self, "pfcwd") else None
                if st:
                    L.append("%11s  %11s  %25s  %12s  %12s  %17s  %17s" % (pp + ":3", st[0], st[1], st[2], "0/0", st[2], "0/0"))
                else:
                    L.append("%11s  %11s  %25s  %12s  %12s  %17s  %17s" % (pp + ":3", "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
            out.put(b + "switches/%s/cmd/show-pfcwd-stats.txt" % sname, "\n".join(L) + "\n")
            L = ["      IFACE    STATE           RX_OK       RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR           TX_OK       TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
                 "-----------  -------  --------------  -----------  ---------  --------  --------  --------  --------------  -----------  ---------  --------  --------  --------"]
            for pp, c in cs:
                inn = c["in"].v(self.end)
                outt = c["out"].v(self.end)
                rin = (c["in"].r1) / 1e6
                rout = (c["out"].r1) / 1e6
                L.append("%11s  %7s  %14s  %11s  %8.2f%%  %8s  %8s  %8s  %14s  %11s  %8.2f%%  %8s  %8s  %8s" % (
                    pp, "U", fmt(inn // 4096), "%.2f MB/s" % rin, rin / 500.0, fmt(c["rxerr"].v(self.end)), 0, 0,
                    fmt(outt // 4096), "%.2f MB/s" % rout, rout / 500.0, 0, fmt(c["disc"].v(self.end)), 0))
            out.put(b + "switches/%s/cmd/show-interfaces-counters.txt" % sname, "\n".join(L) + "\n")

    def switch_hosts(self):
        return set(self.node_hosts) | set(getattr(self, "extra_switch_hosts", []))
