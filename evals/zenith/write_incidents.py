#!/usr/bin/env python3
"""Zenith evaluation set generator: one fleet model per case, every source printed from it."""
import argparse, gzip, json, os, random, sys, time as _t

T0 = 1796000000  # base epoch; every case offsets from here (no wall clock)
WIN = 3600
STEP_DT = 60


def iso(t):
    return _t.strftime("%Y-%m-%dT%H:%M:%SZ", _t.gmtime(t))


class W:
    def __init__(self, root):
        self.root = root; self.files = {}

    def put(self, rel, text, gz=False):
        if gz:
            rel += ".gz"
        self.files[rel] = (text, gz)

    def flush(self):
        for rel in sorted(self.files):
            text, gz = self.files[rel]
            p = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            data = text.encode()
            if gz:
                with open(p, "wb") as f:
                    with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
                        g.write(data)
            else:
                with open(p, "wb") as f:
                    f.write(data)

MODELS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", sm=1980, mem=2619, plim=700000, gen=5, devid="2330", nvl=18),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", sm=1410, mem=1593, plim=400000, gen=4, devid="20b2", nvl=12),
    "H200": dict(name="NVIDIA H200", sm=1980, mem=3201, plim=700000, gen=5, devid="2335", nvl=18),
}
GPU_BUS = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
NIC_BUS = [0x1a, 0x2c, 0x3c, 0x5e, 0x9c, 0xad, 0xbc, 0xdc]


def uuid(rng):
    h = "%032x" % rng.getrandbits(128)
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# ---------------------------------------------------------------- model
class Case:
    def __init__(self, cid, seed, **kw):
        self.cid = cid; self.rng = random.Random(seed)
        d = dict(nhosts=4, gpn=8, nics=8, model="H100", ll="InfiniBand", naming="gpu-a%03d",
                 driver="550.90.07", hostname_label="Hostname", dmesg="plain", ranks_explicit=False,
                 compute_col=True, gz=False, node_hosts=None, old_kernel=False, port_fmt="Ethernet%d",
                 switch_data=False, steps=30, base_step=1.6, start=T0, spare=0, missing=(),
                 title="", reported="", alerts=(), job="llm-pretrain", nstride=0,
                 job_slow_in_compute=False, drop_ranks=False, shuffle_rows=False, nccl_ver="2.21.5", used_nics=None)
        d.update(kw); self.__dict__.update(d)
        self.start = T0 + seed * 86400 + 7 * 3600
        self.end = self.start + WIN
        self.fault_t = self.start + 1200
        self.post = {}
        r = self.rng
        self.hosts = []
        total = self.nhosts + self.spare
        for h in range(total):
            name = self.naming % (h + 1 + r.randint(0, 3) * 0) if "%" in self.naming else self.naming
            hs = dict(name=name, rack="r%02d" % (h // 16 + 1), spare=h >= self.nhosts,
                      leaf="leaf-%02d" % (h // 16 + 1), gpus=[], nics=[],
                      load=round(r.uniform(8, 14), 2), psi=round(r.uniform(0.5, 2.5), 2),
                      boot=self.start - r.randint(5, 40) * 86400, dmesg=[], sel=[], fans=None, top=None)
            for g in range(self.gpn):
                hs["gpus"].append(dict(index=g, bus=GPU_BUS[g], uuid=uuid(r), gen=MODELS[self.model]["gen"], width=16,
                                       temp=r.randint(52, 66), clk=MODELS[self.model]["sm"], reasons=0,
                                       power=int(MODELS[self.model]["plim"] * r.uniform(0.78, 0.92)), lost=False,
                                       sbe0=0, sbe1=0, dbe=0, remap_c=0, remap_u=0, pending=False, xid=0,
                                       nvl0=0, nvl1=0, replay0=0, replay1=0, pcie_replay=0, slow=1.0,
                                       aer=0, idle=h >= self.nhosts, thermv=0, powv=0))
            for n in range(self.nics):
                port = (h % 16) * self.nics + n + 1 if self.nics else 0
                hs["nics"].append(dict(ib="mlx5_%d" % n, netdev=("ibp%ds0" % NIC_BUS[n]) if self.ll == "InfiniBand" else ("enp%ds0np0" % NIC_BUS[n]),
                                       bus=NIC_BUS[n], gen=5, width=16, rate=400, sym=0, rcv_err=0, downed0=0, downed1=0,
                                       txp0=0, txp1=0, rxp0=0, rxp1=0, disc=0, share=1.0, fec_c=0, fec_u=0,
                                       sw=hs["leaf"], swport=self.port_fmt % (4 * (port - 1)) if "Ethernet" in self.port_fmt and "/" not in self.port_fmt else self.port_fmt % port,
                                       state="ACTIVE", carrier=1, staticsym=0))
            self.hosts.append(hs)
        self.hmap = {h["name"]: h for h in self.hosts}
        self.ranks = []
        jh = [h for h in self.hosts if not h["spare"]]
        order = list(jh)
        if self.ranks_explicit:
            r.shuffle(order)
        for i, h in enumerate(order):
            for g in range(self.gpn):
                self.ranks.append((i * self.gpn + g, h["name"], g))
        self.rank_of = {(h, g): rk for rk, h, g in self.ranks}
        self.job_slow = 1.0; self.job_comm = 1.0; self.sdc = None; self.extra_logs = []
        self.spines = ["spine-01", "spine-02", "spine-03", "spine-04"]
        self.uplink_share = None; self.switch_origin = None; self.nccl_env = []
        self.sync_wait = 0.35
        self.truth = ("healthy", None)
        self.extra_cmd = {}
        self.after_step = 0  # step index after which the fault acts

    def g(self, host, i):
        return self.hmap[host]["gpus"][i]

    def n(self, host, i):
        return self.hmap[host]["nics"][i]

    def nodes_with_data(self):
        if self.node_hosts is None:
            if len(self.hosts) <= 4:
                return [h["name"] for h in self.hosts]
            th = (self.truth[1] or "").split("/")[0]
            keep = [h["name"] for i, h in enumerate(self.hosts)
                    if i in (0, 1, len(self.hosts) - 1) or h.get("keep") or h["name"] == th]
            return keep
        return self.node_hosts


# ---------------------------------------------------------------- renderers
def fmt_bus_nvml(b):
    return "00000000:%02X:00.0" % b


def fmt_bus_sys(b):
    return "0000:%02x:00.0" % b


def speed_sys(gen, old):
    s = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}[gen]
    if old:
        s = s.replace(".0", "")
        return "%s GT/s" % s
    return "%s GT/s PCIe" % s


def speed_lspci(gen):
    return {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}[gen]


def nvidia_smi_q(c, h, snap_t):
    m = MODELS[c.model]; old = c.driver.startswith("470") or c.driver.startswith("515")
    out = ["", "==============NVSMI LOG==============", "",
           "Timestamp                                 : %s" % _t.strftime("%a %b %d %H:%M:%S %Y", _t.gmtime(snap_t)),
           "Driver Version                            : %s" % c.driver,
           "CUDA Version                              : %s" % ("11.4" if old else "12.4"), "",
           "Attached GPUs                             : %d" % len(h["gpus"])]
    for g in h["gpus"]:
        if g["lost"]:
            continue
        act = lambda bit: "Active" if g["reasons"] & bit else "Not Active"
        out += ["GPU %s" % fmt_bus_nvml(g["bus"]),
                "    Product Name                          : %s" % m["name"],
                "    GPU UUID                              : %s" % g["uuid"],
                "    Minor Number                          : %d" % g["index"],
                "    PCI",
                "        Bus                               : 0x%02X" % g["bus"],
                "        Bus Id                            : %s" % fmt_bus_nvml(g["bus"]),
                "        GPU Link Info",
                "            PCIe Generation",
                "                Max                       : %d" % m["gen"],
                "                Current                   : %d" % (1 if g["idle"] else g["gen"]),
                "                Device Current            : %d" % (1 if g["idle"] else g["gen"]),
                "                Device Max                : %d" % m["gen"],
                "                Host Max                  : %d" % m["gen"],
                "            Link Width",
                "                Max                       : 16x",
                "                Current                   : %dx" % g["width"],
                "        Replays Since Reset               : %d" % g["pcie_replay"],
                "        Replay Number Rollovers           : 0",
                "    Performance State                     : %s" % ("P8" if g["idle"] else "P0"),
                "    Clocks %s Reasons" % ("Throttle" if old else "Event"),
                "        Idle                              : %s" % act(1),
                "        Applications Clocks Setting       : Not Active",
                "        SW Power Cap                      : %s" % act(4),
                "        HW Slowdown                       : %s" % act(8 | 0x40 | 0x80),
                "            HW Thermal Slowdown           : %s" % act(0x40),
                "            HW Power Brake Slowdown       : %s" % act(0x80),
                "        Sync Boost                        : Not Active",
                "        SW Thermal Slowdown               : %s" % act(0x20),
                "        Display Clock Setting             : Not Active",
                "    ECC Errors",
                "        Volatile",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % g["sbe1"],
                "            DRAM Uncorrectable            : %d" % g["dbe"],
                "        Aggregate",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % (g["sbe1"] + g.get("agg", 0)),
                "            DRAM Uncorrectable            : %d" % g["dbe"],
                "    Remapped Rows",
                "        Correctable Error                 : %d" % g["remap_c"],
                "        Uncorrectable Error               : %d" % g["remap_u"],
                "        Pending                           : %s" % ("Yes" if g["pending"] else "No"),
                "        Remapping Failure Occurred        : No",
                "    Temperature",
                "        GPU Current Temp                  : %d C" % g["temp"],
                "        GPU Shutdown Temp                 : 92 C",
                "        GPU Slowdown Temp                 : 87 C",
                "        GPU Max Operating Temp            : 85 C",
                "    %s" % ("Power Readings" if old else "GPU Power Readings"),
                "        Power Draw                        : %.2f W" % (g["power"] / 1000.0),
                "        %s : %.2f W" % ("Power Limit                      " if old else "Current Power Limit              ", g.get("plim", m["plim"]) / 1000.0),
                "    Clocks",
                "        Graphics                          : %d MHz" % g["clk"],
                "        SM                                : %d MHz" % g["clk"],
                "        Memory                            : %d MHz" % m["mem"],
                "    Max Clocks",
                "        Graphics                          : %d MHz" % m["sm"],
                "        SM                                : %d MHz" % m["sm"],
                "        Memory                            : %d MHz" % m["mem"], ""]
    return "\n".join(out) + "\n"


def nvml_json(c, h):
    m = MODELS[c.model]; devs = []
    for g in h["gpus"]:
        d = {"index": g["index"], "uuid": g["uuid"], "pci_bus_id": fmt_bus_nvml(g["bus"]), "name": m["name"]}
        if g["lost"]:
            d["error"] = "GPU is lost"
        else:
            d.update({"nvmlDeviceGetCurrPcieLinkGeneration": g["gen"] if not g["idle"] else 1,
                      "nvmlDeviceGetMaxPcieLinkGeneration": m["gen"],
                      "nvmlDeviceGetCurrPcieLinkWidth": g["width"], "nvmlDeviceGetMaxPcieLinkWidth": 16,
                      "nvmlDeviceGetPcieReplayCounter": g["pcie_replay"],
                      "nvmlDeviceGetTemperature": g["temp"], "nvmlDeviceGetPowerUsage": g["power"],
                      "nvmlDeviceGetEnforcedPowerLimit": g.get("plim", m["plim"]),
                      "nvmlDeviceGetClockInfo": {"sm": g["clk"], "mem": m["mem"]},
                      "nvmlDeviceGetMaxClockInfo": {"sm": m["sm"], "mem": m["mem"]},
                      "nvmlDeviceGetCurrentClocksEventReasons": g["reasons"],
                      "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g["sbe1"], "uncorrected_volatile": g["dbe"]},
                      "nvmlDeviceGetRemappedRows": {"corrected": g["remap_c"], "uncorrected": g["remap_u"],
                                                    "pending": g["pending"], "failure": False}})
        devs.append(d)
    ev = [e for e in h.get("events", [])]
    return json.dumps({"driver_version": c.driver, "devices": devs, "events": ev}, indent=1, sort_keys=True) + "\n"


def lspci(c, h):
    m = MODELS[c.model]; out = []
    items = [(g["bus"], "gpu", g) for g in h["gpus"]] + [(n["bus"], "nic", n) for n in h["nics"]]
    for bus, kind, d in sorted(items, key=lambda x: x[0]):
        if kind == "gpu" and d["lost"]:
            out += ["%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)" % (bus, m["devid"]),
                    "\t!!! Unknown header type 7f", ""]
            continue
        maxg = m["gen"] if kind == "gpu" else 5
        name = ("3D controller: NVIDIA Corporation Device %s (rev a1)" % m["devid"]) if kind == "gpu" else \
            ("Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]" if c.ll == "InfiniBand" else
             "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]")
        cur = 1 if (kind == "gpu" and d["idle"]) else d["gen"]
        sp = "ok" if cur == maxg else "downgraded"; wd = "ok" if d["width"] == 16 else "downgraded"
        aer = "RxErr+ BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-" if d.get("aer") else "RxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-"
        out += ["%02x:00.0 %s" % (bus, name),
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                "\t\tLnkCap:\tPort #0, Speed %s, Width x16, ASPM L1, Exit Latency L1 <4us" % speed_lspci(maxg),
                "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)" % (speed_lspci(cur), sp, d["width"], wd),
                "\tCapabilities: [1b8 v2] Advanced Error Reporting",
                "\t\tCESta:\t%s" % aer,
                "\tKernel driver in use: %s" % ("nvidia" if kind == "gpu" else "mlx5_core"), ""]
    return "\n".join(out) + "\n"


def aer_text(n):
    names = ["RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr", "CorrIntErr", "HeaderOF"]
    vals = {"RxErr": n}
    return "".join("%s %d\n" % (k, vals.get(k, 0)) for k in names) + "TOTAL_ERR_COR %d\n" % n


def dmesg_render(c, h, lines):
    out = []
    for i, (t, text) in enumerate(sorted(lines)):
        up = t - h["boot"]
        if c.dmesg == "plain":
            out.append("[%12.6f] %s" % (up, text))
        elif c.dmesg == "T":
            out.append("[%s] %s" % (_t.strftime("%a %b %d %H:%M:%S %Y", _t.gmtime(t)), text.replace("\n", "")))
        elif c.dmesg == "journal":
            out.append("%s %s kernel: %s" % (_t.strftime("%b %d %H:%M:%S", _t.gmtime(t)), h["name"], text))
        else:
            out.append("%d,%d,%d,-;%s" % (3 if "Xid" in text or "error" in text.lower() else 6, 1000 + i, int(up * 1e6), text))
    return "\n".join(out) + "\n"


def ibstat(c, h):
    out = []
    for n in h["nics"]:
        out += ["CA '%s'" % n["ib"], "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.39.1002",
                "\tHardware version: 0", "\tPort 1:", "\t\tState: %s" % ("Active" if n["state"] == "ACTIVE" else "Down"),
                "\t\tPhysical state: %s" % ("LinkUp" if n["state"] == "ACTIVE" else "Polling"),
                "\t\tRate: %d" % n["rate"], "\t\tBase lid: %d" % (n["bus"] + 1), "\t\tSM lid: 1",
                "\t\tLink layer: %s" % c.ll, ""]
    return "\n".join(out)


def ethtool_S(n, before):
    txp = n["txp0"] if before else n["txp1"]; rxp = n["rxp0"] if before else n["rxp1"]
    f = before and 0.0 or 1.0
    vals = [("rx_packets_phy", 81230000000 + int(3e8 * n["share"] * f)), ("tx_packets_phy", 80110000000 + int(3e8 * n["share"] * f)),
            ("rx_discards_phy", int(n["disc"] * f)), ("rx_out_of_buffer", int(n["disc"] * f * 0.8)),
            ("rx_symbol_err_phy", n["sym"] if not before else 0), ("link_down_events_phy", n["downed0"] if before else n["downed1"]),
            ("rx_prio3_pause", rxp), ("rx_prio3_pause_duration", rxp * 3), ("tx_prio3_pause", txp),
            ("tx_prio3_pause_duration", txp * 3), ("tx_pause_storm_warning_events", 0 if before or txp - n["txp0"] < 10**6 else 4),
            ("tx_pause_storm_error_events", 0)]
    return "NIC statistics:\n" + "".join("     %s: %d\n" % kv for kv in vals)


def fec(n):
    return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\n"
            "Statistics:\n  corrected_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n  uncorrectable_blocks: %d\n" %
            (n["netdev"], n["fec_c"], n["fec_c"] - n["fec_c"] // 2, n["fec_c"] // 2, n["fec_u"]))


def nvlink_e(h):
    out = []
    for g in h["gpus"]:
        out.append("GPU %d: %s (UUID: %s)" % (g["index"], "NVIDIA", g["uuid"]))
        for l in range(4):
            crc = g["nvl1"] if l == 2 else 0; rp = g["replay1"] if l == 2 else 0
            out += ["\t Link %d: Replay Errors: %d" % (l, rp), "\t Link %d: Recovery Errors: %d" % (l, 1 if rp > 100 and l == 2 else 0),
                    "\t Link %d: CRC Errors: %d" % (l, crc)]
    return "\n".join(out) + "\n"


def top_txt(c, h):
    procs = h["top"] or [("python", 98.0 * 8 / max(1, c.gpn))]
    lines = ["top - %s up %d days,  load average: %.2f, %.2f, %.2f" % ("07:00:00", 20, h["load"], h["load"], h["load"]),
             "Tasks: 812 total,   3 running, 809 sleeping,   0 stopped,   0 zombie",
             "%%Cpu(s): %.1f us,  1.2 sy,  0.0 ni, %.1f id,  0.0 wa,  0.0 hi,  0.1 si,  0.0 st" % (min(99, h["load"]), max(0, 99 - h["load"])),
             "", "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for i, (p, cpu) in enumerate(procs):
        lines.append("%7d %-9s 20   0  %6dg  %5dg 1.2g R %5.1f   2.1 %9s %s" % (41000 + i * 17, "train" if p == "python" else "root", 120, 40, cpu, "812:11.42", p))
    return "\n".join(lines) + "\n"


def write_node(c, w, h):
    base = "nodes/%s/" % h["name"]; gz = c.gz
    ms = c.missing
    w.put(base + "collected.json", json.dumps({"before": c.start, "now": c.end, "boot": h["boot"]} if "boot" not in ms else {"before": c.start, "now": c.end}, sort_keys=True) + "\n")
    if "nvml" not in ms:
        w.put(base + "nvml.json", nvml_json(c, h))
    if "smi" not in ms:
        w.put(base + "cmd/nvidia-smi-q.txt", nvidia_smi_q(c, h, c.end), gz)
    w.put(base + "cmd/lspci-vv.txt", lspci(c, h), gz)
    if "dmesg" not in ms:
        w.put(base + "cmd/dmesg.txt", dmesg_render(c, h, h["dmesg"]), gz)
    elif "dmesg_trunc" in ms:
        pass
    w.put(base + "cmd/pressure-cpu.txt", "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % (h["psi"], h["psi"], h["psi"] * 0.9, int(h["psi"] * 1e9)))
    w.put(base + "cmd/top.txt", top_txt(c, h))
    if c.ll == "InfiniBand":
        w.put(base + "cmd/ibstat.txt", ibstat(c, h))
    if h["sel"]:
        w.put(base + "cmd/ipmitool-sel-elist.txt", "".join("%4x | %s | %s | %s | %s | %s\n" % (i + 1, _t.strftime("%m/%d/%Y", _t.gmtime(t)), _t.strftime("%H:%M:%S", _t.gmtime(t)), s, e, a) for i, (t, s, e, a) in enumerate(h["sel"])))
    if h["fans"]:
        w.put(base + "cmd/ipmitool-sdr-type-fan.txt", "".join("%-16s | %02Xh | %-3s |  7.1 | %s\n" % (nm, 0x30 + i, st, rd) for i, (nm, st, rd) in enumerate(h["fans"])))
    if any(g["nvl1"] for g in h["gpus"]) or h.get("nvlink_cmd"):
        w.put(base + "cmd/nvidia-smi-nvlink-e.txt", nvlink_e(h))
    for key, text in sorted(c.extra_cmd.get(h["name"], {}).items()):
        w.put(base + "cmd/" + key, text)
    for g in h["gpus"]:
        p = "sys/bus/pci/devices/%s/" % fmt_bus_sys(g["bus"])
        m = MODELS[c.model]
        if g["lost"]:
            vals = {"current_link_speed": "Unknown", "max_link_speed": "Unknown", "current_link_width": "63", "max_link_width": "63"}
        else:
            vals = {"current_link_speed": speed_sys(g["gen"] if not g["idle"] else 1, c.old_kernel), "max_link_speed": speed_sys(m["gen"], c.old_kernel),
                    "current_link_width": str(g["width"]), "max_link_width": "16"}
        for k, v in vals.items():
            w.put(base + p + k, v + "\n")
        w.put(base + p + "aer_dev_correctable", aer_text(g["aer"]))
    for n in h["nics"]:
        p = "sys/bus/pci/devices/%s/" % fmt_bus_sys(n["bus"])
        for k, v in {"current_link_speed": speed_sys(n["gen"], c.old_kernel), "max_link_speed": speed_sys(5, c.old_kernel),
                     "current_link_width": str(n["width"]), "max_link_width": "16"}.items():
            w.put(base + p + k, v + "\n")
        ip = "sys/class/infiniband/%s/ports/1/" % n["ib"]
        for pre, before in (("", False), ("before/", True)):
            f = 0.0 if before else 1.0
            if not before:
              w.put(base + pre + ip + "state", "4: ACTIVE\n" if n["state"] == "ACTIVE" else "1: DOWN\n")
              w.put(base + pre + ip + "phys_state", "5: LinkUp\n" if n["state"] == "ACTIVE" else "2: Polling\n")
              w.put(base + pre + ip + "rate", "%d Gb/sec (4X NDR)\n" % n["rate"] if n["rate"] == 400 else "%d Gb/sec (4X HDR)\n" % n["rate"])
              w.put(base + pre + ip + "link_layer", c.ll + "\n")
              w.put(base + pre + "sys/class/net/%s/operstate" % n["netdev"], "up\n")
            words = 9100000000000 + n["bus"] * 1000003
            ctr = {"port_rcv_errors": n["rcv_err"] * f + n["staticsym"], "symbol_error": n["sym"] * f + n["staticsym"],
                   "link_downed": n["downed0"] if before else n["downed1"],
                   "port_xmit_wait": 5000000 + int(4.0e7 * n["share"] * f) + (n["txp0"] if before else n["txp1"]) * 4 // 1000,
                   "port_rcv_data": words + int(WIN * 40e9 / 4 * n["share"] * f),
                   }
            if not before:
                ctr["port_xmit_data"] = words + int(WIN * 40e9 / 4 * n["share"]) + 77
            for k, v in ctr.items():
                w.put(base + pre + ip + "counters/" + k, "%d\n" % v)
            hw = {"out_of_sequence": 0, "packet_seq_err": 0, "local_ack_timeout_err": 0}
            if c.ll == "Ethernet":
                hw.update(np_cnp_sent=int(1200 * f), rp_cnp_handled=int(900 * f), np_ecn_marked_roce_packets=int(1500 * f))
            for k, v in (hw.items() if c.ll == "Ethernet" or n["rcv_err"] else ()):
                w.put(base + pre + ip + "hw_counters/" + k, "%d\n" % v)
            w.put(base + pre + "sys/class/net/%s/carrier_changes" % n["netdev"], "%d\n" % (2 + 2 * (n["downed0"] if before else n["downed1"])))
            if c.ll == "Ethernet":
                w.put(base + pre + "cmd/ethtool-S-%s.txt" % n["netdev"], ethtool_S(n, before))
        if n["fec_c"] or n.get("fec_cmd"):
            w.put(base + "cmd/ethtool-I-show-fec-%s.txt" % n["netdev"], fec(n))


def lbl_gpu(c, h, g):
    m = MODELS[c.model]
    return 'gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s",DCGM_FI_DRIVER_VERSION="%s"' % (
        g["index"], g["uuid"], fmt_bus_nvml(g["bus"]), g["index"], m["name"], c.hostname_label, h["name"], c.driver)


def dcgm_metrics(c):
    thr = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" if c.driver < "535" else "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    fams = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "DCGM_FI_DEV_GPU_UTIL", thr, "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION"]
    times = list(range(c.start - 600, c.end + 1, 300 if c.nhosts >= 24 else 120))
    out = []
    for fam in fams:
        out.append("# HELP %s %s" % (fam, fam.lower()))
        out.append("# TYPE %s %s" % (fam, "counter" if fam.endswith("TOTAL") or "VIOLATION" in fam or "COUNTER" in fam else "gauge"))
        for h in c.hosts:
            for g in h["gpus"]:
                L = lbl_gpu(c, h, g)
                for t in times:
                    frac = min(1.0, max(0.0, (t - c.fault_t) / float(c.end - c.fault_t))) if t >= c.fault_t else 0.0
                    on = t >= c.fault_t
                    if g["lost"] and t >= c.fault_t + 180:
                        continue
                    if fam == "DCGM_FI_DEV_SM_CLOCK":
                        v = (210 if g["idle"] else (g["clk"] if on else g.get("clk0", MODELS[c.model]["sm"] if not (g.get("basecap")) else g["clk"])))
                    elif fam == "DCGM_FI_DEV_GPU_TEMP":
                        v = (34 if g["idle"] else (g["temp"] if on else min(g["temp"], g.get("temp0", g["temp"]))))
                    elif fam == "DCGM_FI_DEV_POWER_USAGE":
                        v = "%.3f" % ((62.0 if g["idle"] else (g["power"] if on else g.get("power0", g["power"])) / 1000.0) + ((t // 60) % 7) * 0.37)
                    elif fam == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
                        v = "%.4f" % (0.0 if g["idle"] else (0.52 / (c.ratio if on else 1.0)) * (g["slow"] if on else 1.0) * (g.get("util", 1.0) if on else 1.0))
                    elif fam == "DCGM_FI_DEV_GPU_UTIL":
                        v = 0 if g["idle"] else int(min(100, 97 * (g.get("util", 1.0) if on else 1.0)))
                    elif fam == thr:
                        v = 1 if g["idle"] else (g["reasons"] if on else g.get("reasons0", 0))
                    elif fam == "DCGM_FI_DEV_XID_ERRORS":
                        v = g.get("xid_old", 0)
                        if g.get("xid_now") and t >= c.fault_t + g.get("xid_t", 61):
                            v = g["xid_now"]
                    elif fam == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
                        v = int(g["sbe0"] + (g["sbe1"] - g["sbe0"]) * frac)
                    elif fam == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
                        v = int(g["nvl0"] + (g["nvl1"] - g["nvl0"]) * frac)
                    elif fam == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
                        v = g["pcie_replay"]
                    elif fam == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":
                        v = g["remap_c"] if on else g.get("remap0", 0)
                    elif fam == "DCGM_FI_DEV_POWER_VIOLATION":
                        v = int(g["powv"] * max(0, t - c.start) * 1e9) if not g["idle"] else 0
                    else:
                        v = int(g["thermv"] * max(0, t - c.fault_t) * 1e9)
                    out.append("%s{%s} %s %d" % (fam, L, v, t))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def node_metrics(c):
    times = list(range(c.start - 600, c.end + 1, 120))
    out = []
    hosts = [c.hmap[n] for n in c.nodes_with_data()]
    for fam, kind in (("node_infiniband_port_data_transmitted_bytes_total", "counter"), ("node_infiniband_port_errors_received_total", "counter"),
                      ("node_infiniband_port_transmit_wait_total", "counter"), ("node_infiniband_link_downed_total", "counter"),
                      ("node_load1", "gauge"), ("node_pressure_cpu_waiting_seconds_total", "counter")):
        out += ["# HELP %s %s" % (fam, fam), "# TYPE %s %s" % (fam, kind)]
        for h in hosts:
            inst = '%s:9100' % h["name"]
            for t in times:
                f = max(0.0, (t - c.start) / float(WIN))
                if fam == "node_load1":
                    v = "%.2f" % (h["load"] if t >= c.fault_t else h.get("load0", h["load"]))
                    out.append('%s{instance="%s"} %s %d' % (fam, inst, v, t)); continue
                if fam == "node_pressure_cpu_waiting_seconds_total":
                    v = "%.3f" % (1000 + h["psi"] / 100.0 * (t - c.start + 600))
                    out.append('%s{instance="%s"} %s %d' % (fam, inst, v, t)); continue
                for n in h["nics"]:
                    if fam.endswith("transmitted_bytes_total"):
                        v = 36400000000000 + n["bus"] * 1000003 * 4 + int(WIN * 40e9 * n["share"] * f)
                    elif fam.endswith("errors_received_total"):
                        v = int(n["rcv_err"] * f) + n["staticsym"]
                    elif fam.endswith("wait_total"):
                        v = 5000000 + int(4.0e7 * n["share"] * f) + int(n["txp0"] + (n["txp1"] - n["txp0"]) * f) * 4 // 1000
                    else:
                        v = n["downed0"] if t < c.fault_t else n["downed1"]
                    out.append('%s{device="%s",instance="%s",port="1"} %d %d' % (fam, n["ib"], inst, v, t))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def switch_metrics(c):
    times = list(range(c.start - 600, c.end + 1, 60))
    out = ["# HELP ifHCOutOctets The total number of octets transmitted out of the interface", "# TYPE ifHCOutOctets counter"]
    disc = ["# HELP ifOutDiscards The number of outbound packets discarded", "# TYPE ifOutDiscards counter"]
    leaves = sorted(set(h["leaf"] for h in c.hosts))
    for leaf in leaves:
        for i, sp in enumerate(c.spines):
            port = "Ethernet%d" % (256 + 8 * i)
            share = c.uplink_share[leaf][i] if c.uplink_share and leaf in c.uplink_share else 0.25
            for t in times:
                f = max(0.0, (t - c.start + 600) / float(WIN))
                v = 8800000000000 + i * 12345678901 + int(f * WIN * 400e9 / 8 * 0.6 * share)
                out.append('ifHCOutOctets{ifName="%s",instance="%s"} %d %d' % (port, leaf, v, t))
                d = int(max(0, share - 0.3) * 4e6 * f)
                disc.append('ifOutDiscards{ifName="%s",instance="%s"} %d %d' % (port, leaf, d, t))
    return "\n".join(out + disc + ["# EOF"]) + "\n"


def pfc_table(rows, title_tx):
    hdr = "%-13s %10s %10s %10s %14s %10s %10s %10s %10s" % (("Port " + title_tx,) + tuple("PFC%d" % i for i in range(8)))
    out = ["  " + hdr, "  " + "  ".join(["-" * 12] + ["-" * 9] * 8)]
    for port, v in rows:
        vals = ["0"] * 8; vals[3] = "{:,}".format(v)
        out.append("  %-13s %10s %10s %10s %14s %10s %10s %10s %10s" % ((port,) + tuple(vals)))
    return "\n".join(out) + "\n"


def switch_cmds(c, w):
    for leaf in sorted(set(h["leaf"] for h in c.hosts)):
        rx = []; tx = []
        for h in c.hosts:
            if h["leaf"] != leaf:
                continue
            for n in h["nics"]:
                rx.append((n["swport"], n["txp1"])); tx.append((n["swport"], n["rxp1"]))
        for i, sp in enumerate(c.spines):
            p = "Ethernet%d" % (256 + 8 * i)
            so = c.switch_origin or {}
            rx.append((p, so.get((leaf, p, "rx"), 0))); tx.append((p, so.get((leaf, p, "tx"), 0)))
        w.put("switches/%s/cmd/show-pfc-counters.txt" % leaf, pfc_table(rx, "Rx") + "\n" + pfc_table(tx, "Tx"))
        st = ["      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
              "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------"]
        for port, v in rx:
            stormed = v > 10**6
            st.append("%11s  %8s  %25s  %12s  %12s  %17s  %17s" % (port + ":3", "stormed" if stormed else "operational",
                      "3/2" if stormed else "0/0", "0/%d" % (v // 40) if stormed else "0/0", "0/0", "0/%d" % (v // 400) if stormed else "0/0", "0/0"))
        w.put("switches/%s/cmd/show-pfcwd-stats.txt" % leaf, "\n".join(st) + "\n")
    for sp in c.spines:
        rx = []; tx = []
        for j, leaf in enumerate(sorted(set(h["leaf"] for h in c.hosts))):
            p = "Ethernet%d" % (8 * j)
            so = c.switch_origin or {}
            rx.append((p, so.get((sp, p, "rx"), 0))); tx.append((p, so.get((sp, p, "tx"), 0)))
        w.put("switches/%s/cmd/show-pfc-counters.txt" % sp, pfc_table(rx, "Rx") + "\n" + pfc_table(tx, "Tx"))


def steps_csv(c):
    r = c.rng; rows = []
    hdr = "step,rank,start_unix,duration_s" + (",compute_s" if c.compute_col else "") + ",loss" + (",param_checksum" if c.sdc is not None else "")
    t = float(c.start + 5)
    fault_step = None
    if not c.nstride:
        c.nstride = max(1, int((WIN - 120) / (c.steps * c.base_step)))
    lost = any(g["lost"] for h in c.hosts for g in h["gpus"])
    c.ratio = 1.0
    for s in range(c.steps * 4):
        st = s * c.nstride + 1
        if t > c.end - 30 or (lost and t > c.fault_t + 61):
            break
        on = t >= c.fault_t
        if on and fault_step is None:
            fault_step = st
        comps = {}
        for rk, hn, gi in c.ranks:
            g = c.hmap[hn]["gpus"][gi]
            base = c.base_step * (1 - c.sync_wait) * (1 + r.uniform(-0.01, 0.01))
            comps[rk] = base * (g["slow"] if on else 1.0) * (c.hmap[hn].get("hslow", 1.0) if on else 1.0)
        comm = c.base_step * c.sync_wait * (c.job_comm if on else 1.0)
        dur = max(comps.values()) + comm
        if on and c.job_slow > 1:
            dur *= c.job_slow
        if on:
            c.ratio = dur / c.base_step
        loss = 2.9 - 0.0004 * st
        for rk, hn, gi in c.ranks:
            d = dur * (1 + r.uniform(0, 0.002))
            if c.drop_ranks and (st + rk) % 37 == 0:
                continue  # this rank's logger missed the step
            row = "%d,%d,%.3f,%.4f" % (st, rk, t, d)
            if c.compute_col:
                row += ",%.4f" % (comps[rk] * (c.job_slow if (on and c.job_slow > 1 and c.job_slow_in_compute) else 1.0))
            row += ",%.4f" % loss
            if c.sdc is not None:
                ck = "%08x" % (hash_int(c.cid, st))
                if on and (hn, gi) == c.sdc:
                    ck = "%08x" % (hash_int(c.cid + "x", st))
                row += "," + ck
            rows.append(row)
        t += dur * c.nstride
        if getattr(c, "restart", False) and s == 15 and not getattr(c, "_rs", False):
            c._rs = True
            t += 420.0  # scheduler restart from the checkpoint of step 13: steps 14..16 are logged again
            for s2 in (13, 14, 15):
                st2 = s2 * c.nstride + 1
                for rk, hn, gi in c.ranks:
                    row = "%d,%d,%.3f,%.4f" % (st2, rk, t, dur * (1 + r.uniform(0, 0.002)))
                    if c.compute_col:
                        row += ",%.4f" % (c.base_step * (1 - c.sync_wait) * (1 + r.uniform(-0.01, 0.01)))
                    row += ",%.4f" % (2.9 - 0.0004 * st2)
                    rows.append(row)
                t += dur
    c.last_step_t = t
    if c.shuffle_rows:
        r.shuffle(rows)
    return hdr + "\n" + "\n".join(rows) + "\n"


def hash_int(s, k):
    v = 2166136261
    for ch in "%s:%d" % (s, k):
        v = ((v ^ ord(ch)) * 16777619) & 0xffffffff
    return v


def train_log(c):
    lines = []
    h0 = c.ranks[0][1]
    lines.append("NCCL version %s+cuda12.4" % c.nccl_ver)
    for e in c.nccl_env:
        lines.append("%s:4101:4190 [0] NCCL INFO %s set by environment to %s." % (h0, e[0], e[1]))
    nics = c.hmap[h0]["nics"]
    used = c.used_nics if c.used_nics is not None else list(range(len(nics)))
    proto = "IB" if c.ll == "InfiniBand" else "RoCE"
    lines.append("%s:4101:4190 [0] NCCL INFO NET/IB : Using %s [RO]; OOB eth0:10.12.0.11<0>" % (h0, " ".join("[%d]%s:1/%s" % (k, nics[i]["ib"], proto) for k, i in enumerate(used))))
    lines.append("%s:4101:4190 [0] NCCL INFO comm 0x55d1c0a3e100 rank 0 nranks %d cudaDev 0 nvmlDev 0 busId %x000 commId 0x7f3e2a11c0de5b17 - Init COMPLETE" % (h0, len(c.ranks), GPU_BUS[0]))
    t = c.start + 5
    for s in range(0, c.steps, 3):
        ts = t + s * c.nstride * c.base_step
        if ts > c.end:
            break
        lines.append("%s [rank0] step %d | loss %.4f | tokens/s/gpu %d" % (iso(ts), s * c.nstride + 1, 2.9 - 0.0004 * s * c.nstride, int(3900 / (c.ratio if ts > c.fault_t else 1))))
    lines += c.extra_logs
    return "\n".join(lines) + "\n"


def write_case(c, outdir):
    w = W(os.path.join(outdir, c.cid, "bundle"))
    inc = {"schema": "forensic.bundle/v1", "id": c.cid + "-" + c.job, "title": c.title,
           "window": {"start": iso(c.start), "end": iso(c.end)},
           "job": {"name": c.job, "ranks": len(c.ranks), "gpus_per_node": c.gpn},
           "reported": c.reported}
    if c.alerts:
        inc["alerts"] = list(c.alerts)
    w.put("incident.json", json.dumps(inc, indent=2, sort_keys=True) + "\n")
    if "topology" not in c.missing:
        topo = {"hosts": [], "switches": []}
        for h in c.hosts:
            topo["hosts"].append({"name": h["name"], "rack": h["rack"],
                                  "gpus": [{"index": g["index"], "pci_bus_id": fmt_bus_nvml(g["bus"]), "uuid": g["uuid"]} for g in h["gpus"]],
                                  "nics": [{"ibdev": n["ib"], "netdev": n["netdev"], "pci_bus_id": fmt_bus_sys(n["bus"]), "port": 1,
                                            "link_layer": c.ll, "switch": n["sw"], "switch_port": n["swport"]} for n in h["nics"]]})
        for j, leaf in enumerate(sorted(set(h["leaf"] for h in c.hosts))):
            topo["switches"].append({"name": leaf, "tier": "leaf", "links": [{"port": "Ethernet%d" % (256 + 8 * i), "peer": sp, "peer_port": "Ethernet%d" % (8 * j)} for i, sp in enumerate(c.spines)]})
        for sp in c.spines:
            topo["switches"].append({"name": sp, "tier": "spine", "links": []})
        if c.ranks_explicit:
            topo["ranks"] = [{"rank": rk, "host": hn, "gpu": gi} for rk, hn, gi in c.ranks]
        w.put("topology.json", json.dumps(topo, indent=1, sort_keys=True) + "\n", c.nhosts >= 128)
    stext = steps_csv(c)
    if "steps" not in c.missing:
        w.put("job/steps.csv", stext, c.gz or len(c.ranks) > 256)
    if "logs" not in c.missing:
        w.put("job/logs/train-rank0.log", train_log(c))
    if "dcgm" not in c.missing:
        w.put("metrics/dcgm.om", dcgm_metrics(c), c.gz or c.nhosts > 4)
    if "node_metrics" not in c.missing:
        w.put("metrics/node.om", node_metrics(c), c.gz or c.nhosts > 4)
    if c.switch_data:
        w.put("metrics/snmp-switch.om", switch_metrics(c))
        switch_cmds(c, w)
    for hn in c.nodes_with_data():
        write_node(c, w, c.hmap[hn])
    for rel, text in sorted(c.post.items()):
        w.put(rel, text)
    w.flush()
    with open(os.path.join(outdir, c.cid, "truth.json"), "w") as f:
        f.write(json.dumps({"root_cause": c.truth[0], "component": c.truth[1]}, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--out", required=True); a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import zenith_cases
    for c in zenith_cases.build_all(Case):
        write_case(c, a.out)


if __name__ == "__main__":
    main()
