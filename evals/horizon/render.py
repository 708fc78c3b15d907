"""Print every bundle source from one Case model."""
import json

from fleet import (GPU_BUS, SPEED, SPEED_OLD, GTS, DAYS, MON, IDLE, SW_PWR, HW_SLOW, SYNC, SW_THERM,
                   HW_THERM, HW_BRAKE, iso, utc, write, jdump)


def f2(x):
    return "%.2f" % x


# ------------------------------------------------------------------ time helpers
def dmesg_line(style, host, t, text, seq):
    u = t - host.boot
    if style == "plain":
        return "[%12.6f] %s" % (u, text)
    d = utc(t)
    if style == "T":
        return "[%s %s %2d %02d:%02d:%02d %d] %s" % (DAYS[d.weekday()], MON[d.month - 1], d.day, d.hour,
                                                      d.minute, d.second, d.year, text)
    if style == "journal":
        return "%s %2d %02d:%02d:%02d %s kernel: %s" % (MON[d.month - 1], d.day, d.hour, d.minute, d.second,
                                                       host.name, text)
    if style == "kmsg":
        pr = 3 if ("Xid" in text or "error" in text.lower() or "fallen" in text) else 6
        return "%d,%d,%d,-;%s" % (pr, seq, int(u * 1e6), text)
    raise ValueError(style)


def render_dmesg(case, host, upto):
    style = case.dmesg_style.get(host.name, case.dmesg_style.get("*", "plain"))
    lines = []
    boot_lines = [
        (host.boot + 0.0, "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #115-Ubuntu SMP"),
        (host.boot + 2.71, "pci 0000:00:01.0: [8086:09a4] type 01 class 0x060400"),
        (host.boot + 31.4, "nvidia: loading out-of-tree module taints kernel."),
        (host.boot + 33.9, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % case.driver),
    ]
    for n in host.nics:
        boot_lines.append((host.boot + 12.2 + n.idx * 0.01,
                           "mlx5_core %s: firmware version: 28.39.1002" % nic_sysfs(n)))
    ev = sorted(boot_lines + [e for e in host.dmesg if e[0] <= upto], key=lambda e: e[0])
    for i, (t, text) in enumerate(ev):
        lines.append(dmesg_line(style, host, t, text, 1200 + i * 3))
    return "\n".join(lines) + "\n"


def gpu_nvml_bus(g):
    return "00000000:%02X:00.0" % g.bus


def gpu_sysfs(g):
    return "0000:%02x:00.0" % g.bus


def nic_sysfs(n):
    return "0000:%02x:00.0" % n.bus


# ------------------------------------------------------------------ incident / topology
def render_incident(case):
    inc = {"schema": "forensic.bundle/v1", "id": case.name, "title": case.title,
           "window": {"start": iso(case.t0), "end": iso(case.t1)},
           "job": {"name": case.job_name, "ranks": len(case.ranks), "gpus_per_node": case.gpn},
           "reported": case.reported}
    if case.alerts:
        inc["alerts"] = case.alerts
    return jdump(inc)


def render_topology(case):
    hosts = []
    for h in case.topo_hosts():
        hosts.append({"name": h.name, "rack": h.rack,
                      "gpus": [{"index": g.index, "pci_bus_id": gpu_nvml_bus(g), "uuid": g.uuid} for g in h.gpus],
                      "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": nic_sysfs(n), "port": 1,
                                "link_layer": n.ll, "switch": n.switch, "switch_port": n.sport} for n in h.nics]})
    topo = {"hosts": hosts}
    if case.explicit_ranks:
        topo["ranks"] = [{"rank": r, "host": h.name, "gpu": g.index} for r, (h, g) in enumerate(case.ranks)]
    sw = []
    for s in sorted(case.switches.values(), key=lambda s: (s.tier != "spine", s.name)):
        sw.append({"name": s.name, "tier": s.tier,
                   "links": [{"port": p.name, "peer": p.peer, "peer_port": p.peer_port} for p in s.uplinks]})
    if sw:
        topo["switches"] = sw
    return jdump(topo)


# ------------------------------------------------------------------ steps
def render_steps(case):
    cols = ["step", "rank", "start_unix", "duration_s"] + case.step_cols
    out = [",".join(cols)]
    for row in case.step_rows:
        vals = []
        for c in cols:
            v = row.get(c)
            if v is None:
                vals.append("")
            elif isinstance(v, float):
                vals.append("%.4f" % v if c in ("duration_s", "compute_s", "loss", "grad_norm") else "%.3f" % v)
            else:
                vals.append(str(v))
        out.append(",".join(vals))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ metrics
class OM:
    def __init__(self):
        self.fams = {}
        self.order = []

    def add(self, name, typ, help_, labels, value, t):
        if name not in self.fams:
            self.fams[name] = (typ, help_, [])
            self.order.append(name)
        self.fams[name][2].append((labels, value, t))

    def text(self):
        out = []
        for name in self.order:
            typ, help_, samples = self.fams[name]
            out.append("# HELP %s %s" % (name, help_))
            out.append("# TYPE %s %s" % (name, typ))
            for labels, value, t in samples:
                if isinstance(value, float):
                    vs = "%.6g" % value if abs(value) < 1e6 else "%.0f" % value
                else:
                    vs = str(value)
                out.append("%s{%s} %s %d" % (name, labels, vs, t))
        out.append("# EOF")
        return "\n".join(out) + "\n"


def dcgm_labels(case, h, g):
    hk = "hostname" if case.dcgm_new else "Hostname"
    s = 'gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s"' % (
        g.index, g.uuid, gpu_nvml_bus(g), g.index, g.m["name"], hk, h.name)
    if not case.dcgm_new:
        s += ',DCGM_FI_DRIVER_VERSION="%s"' % case.driver
    return s


def render_dcgm(case, hosts, fams):
    om = OM()
    reasons_fam = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" if case.dcgm_new else "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
    spec = {
        "clk": ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
        "temp": ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in \u00b0C)." if case.dcgm_new else "GPU temperature (in C)."),
        "power": ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
        "tensor": ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
        "util": ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
        "reasons": (reasons_fam, "gauge", "Current clock event reasons." if case.dcgm_new else "Current clock throttle reasons."),
        "therm_ns": ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns)."),
        "pow_ns": ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns)."),
        "sbe": ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
        "dbe": ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
        "xid": ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
        "replay": ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
        "nvl_crc": ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
        "nvl_replay": ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."),
        "remap_c": ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
        "remap_u": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
        "remap_f": ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    }
    for key in fams:
        name, typ, help_ = spec[key]
        for h in hosts:
            for g in h.gpus:
                lab = dcgm_labels(case, h, g)
                for t in case.sample_times:
                    if case.dcgm_gap and case.dcgm_gap[0] <= t < case.dcgm_gap[1]:
                        continue
                    d = g.at(t)
                    if d is None:
                        continue
                    if key == "power":
                        v = "%.3f" % (d["power"] / 1000.0)
                    elif key in ("tensor",):
                        v = "%.6f" % case.tensor_at(h, g, t)
                    elif key == "util":
                        v = str(int(round(case.util_at(h, g, t))))
                    elif key == "xid":
                        v = str(case.last_xid(g, t))
                    elif key == "nvl_crc":
                        v = str(d["nvl"][0])
                    elif key == "nvl_replay":
                        v = str(d["nvl"][1])
                    elif key == "remap_c":
                        v = str(d["remap"][0])
                    elif key == "remap_u":
                        v = str(d["remap"][1])
                    elif key == "remap_f":
                        v = "1" if d["remap"][3] else "0"
                    elif key in ("therm_ns", "pow_ns"):
                        v = str(d[key])
                    else:
                        v = str(d[key])
                    om.add(name, typ, help_, lab, _Raw(v), int(t))
    return om.text()


class _Raw(str):
    pass


def render_node_metrics(case, hosts):
    om = OM()
    fams = [("node_infiniband_port_data_received_bytes_total", "counter", "Number of data octets received on all links", "rx"),
            ("node_infiniband_port_data_transmitted_bytes_total", "counter", "Number of data octets transmitted on all links", "tx"),
            ("node_infiniband_port_errors_received_total", "counter", "Number of packets containing an error that were received on this port", "rcverr"),
            ("node_infiniband_link_downed_total", "counter", "Number of times the link failed to recover from an error state and went down", "downs"),
            ("node_infiniband_port_transmit_wait_total", "counter", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick", "wait")]
    for name, typ, help_, key in fams:
        for h in hosts:
            inst = case.instance(h)
            for n in h.nics:
                lab = 'device="%s",instance="%s",port="1"' % (n.ibdev, inst)
                for t in case.sample_times:
                    c = n.cnt(t, case.t0)
                    v = c[key]
                    if key in ("rx", "tx"):
                        v = (v // 4) * 4
                    om.add(name, typ, help_, lab, _Raw(str(v)), int(t))
    for h in hosts:
        inst = case.instance(h)
        for t in case.sample_times:
            ps = case.host_psi(h, t)
            om.add("node_load1", "gauge", "1m load average.", 'instance="%s"' % inst, _Raw("%.2f" % ps["load1"]), int(t))
        for t in case.sample_times:
            ps = case.host_psi(h, t)
            om.add("node_pressure_cpu_waiting_seconds_total", "counter",
                   "Total time in seconds that processes have waited for CPU time", 'instance="%s"' % inst,
                   _Raw("%.3f" % ps["cpu_total"]), int(t))
    return om.text()


def render_switch_metrics(case):
    om = OM()
    for name, help_, key in (("ifHCInOctets", "The total number of octets received on the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.6", "in"),
                             ("ifHCOutOctets", "The total number of octets transmitted out of the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.10", "out"),
                             ("ifOutDiscards", "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted - 1.3.6.1.2.1.2.2.1.19", "disc"),
                             ("ifInErrors", "For packet-oriented interfaces, the number of inbound packets that contained errors preventing them from being deliverable to a higher-layer protocol - 1.3.6.1.2.1.2.2.1.14", "inerr")):
        for s in sorted(case.switches.values(), key=lambda s: s.name):
            if s.name in case.no_snmp:
                continue
            for pn in sorted(s.ports, key=port_key):
                p = s.ports[pn]
                lab = 'ifName="%s",instance="%s"' % (pn, s.name)
                for t in case.switch_sample_times:
                    om.add(name, "counter" if key in ("in", "out") else "gauge", help_, lab,
                           _Raw(str(p.cnt(t, case.t0)[key])), int(t))
    return om.text()


def port_key(n):
    import re
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)]


# ------------------------------------------------------------------ node files
def render_nvml(case, h, t):
    devs = []
    for g in h.gpus:
        d = g.at(t)
        base = {"index": g.index, "uuid": g.uuid, "pci_bus_id": gpu_nvml_bus(g), "name": g.m["name"]}
        if d is None:
            base["error"] = "GPU is lost"
            devs.append(base)
            continue
        base.update({
            "nvmlDeviceGetCurrPcieLinkGeneration": d["gen"], "nvmlDeviceGetMaxPcieLinkGeneration": g.gen_max,
            "nvmlDeviceGetCurrPcieLinkWidth": d["width"], "nvmlDeviceGetMaxPcieLinkWidth": g.width_max,
            "nvmlDeviceGetPcieReplayCounter": d["replay"],
            "nvmlDeviceGetTemperature": d["temp"], "nvmlDeviceGetPowerUsage": d["power"],
            "nvmlDeviceGetEnforcedPowerLimit": g.plimit,
            "nvmlDeviceGetClockInfo": {"sm": d["clk"], "mem": g.m["mem"]},
            "nvmlDeviceGetMaxClockInfo": {"sm": g.m["maxclk"], "mem": g.m["mem"]},
        })
        key = "nvmlDeviceGetCurrentClocksEventReasons" if case.driver_major >= 535 else "nvmlDeviceGetCurrentClocksThrottleReasons"
        base[key] = d["reasons"]
        base["nvmlDeviceGetTotalEccErrors"] = {"corrected_volatile": d["sbe"], "uncorrected_volatile": d["dbe"]}
        r = d["remap"]
        base["nvmlDeviceGetRemappedRows"] = {"corrected": r[0], "uncorrected": r[1], "pending": r[2], "failure": r[3]}
        if case.nvml_nvlink:
            base["nvmlDeviceGetNvLinkErrorCounter"] = {"link%d" % L: (
                {"replay": d["nvl"][1], "recovery": d["nvl"][2], "crc_flit": d["nvl"][0], "crc_data": 0}
                if L == g.nvl_link else {"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0}) for L in range(case.nvlinks)}
        devs.append(base)
    ev = [{"device": g.index, "type": "XidCriticalError", "data": x, "time": iso(tt)}
          for (gg, tt, x) in case.xids if gg.host is h for g in [gg] if tt <= t and tt >= case.t0 - 86400]
    return jdump({"driver_version": case.driver, "devices": devs, "events": ev})


def yn(b):
    return "Active" if b else "Not Active"


def render_smi_q(case, h, t):
    new = case.driver_major >= 535
    lost = [g for g in h.gpus if g.at(t) is None]
    if lost:
        # nvidia-smi gives up on the whole query when one device handle cannot be opened
        return "Unable to determine the device handle for GPU%s: Unknown Error\n" % gpu_nvml_bus(lost[0])
    out = ["", "==============NVSMI LOG==============", "",
           "Timestamp                                 : %s" % utc(t).strftime("%a %b %d %H:%M:%S %Y"),
           "Driver Version                            : %s" % case.driver,
           "CUDA Version                              : %s" % case.cuda, "",
           "Attached GPUs                             : %d" % len(h.gpus)]
    for g in h.gpus:
        d = g.at(t)
        out.append("GPU %s" % gpu_nvml_bus(g))
        if d is None:
            out.append("    Product Name                          : Unknown Error")
            out.append("    GPU UUID                              : Unknown Error")
            continue
        r = d["reasons"]
        out += [
            "    Product Name                          : %s" % g.m["name"],
            "    Product Architecture                  : %s" % g.m["arch"],
            "    Persistence Mode                      : Enabled",
            "    Serial Number                         : %s" % g.serial,
            "    GPU UUID                              : %s" % g.uuid,
            "    Minor Number                          : %d" % g.index,
            "    VBIOS Version                         : 96.00.89.00.01",
        ]
        if new:
            out.append("    GSP Firmware Version                  : %s" % case.driver)
        out += [
            "    GPU Reset Status",
            "        Reset Required                    : %s" % ("Yes" if d["remap"][2] else "No"),
            "        Drain and Reset Recommended       : No",
            "    PCI",
            "        Bus                               : 0x%02X" % g.bus,
            "        Device                            : 0x00",
            "        Domain                            : 0x0000",
            "        Device Id                         : 0x%s10DE" % g.m["dev"].upper(),
            "        Bus Id                            : %s" % gpu_nvml_bus(g),
            "        GPU Link Info",
            "            PCIe Generation",
            "                Max                       : %d" % g.gen_max,
            "                Current                   : %d" % d["gen"],
            "                Device Current            : %d" % d["gen"],
            "                Device Max                : %d" % g.gen_max,
            "                Host Max                  : %d" % g.gen_max,
            "            Link Width",
            "                Max                       : %dx" % g.width_max,
            "                Current                   : %dx" % d["width"],
            "        Replays Since Reset               : %d" % d["replay"],
            "        Replay Number Rollovers           : 0",
            "    Fan Speed                             : N/A",
            "    Performance State                     : %s" % ("P0" if g.busy else "P0"),
            "    Clocks Event Reasons" if new else "    Clocks Throttle Reasons",
            "        Idle                              : %s" % yn(r & IDLE),
            "        Applications Clocks Setting       : Not Active",
            "        SW Power Cap                      : %s" % yn(r & SW_PWR),
            "        HW Slowdown                       : %s" % yn(r & (HW_SLOW | HW_THERM | HW_BRAKE)),
            "            HW Thermal Slowdown           : %s" % yn(r & HW_THERM),
            "            HW Power Brake Slowdown       : %s" % yn(r & HW_BRAKE),
            "        Sync Boost                        : Not Active",
            "        SW Thermal Slowdown               : %s" % yn(r & SW_THERM),
            "        Display Clock Setting             : Not Active",
            "    ECC Errors",
            "        Volatile",
            "            SRAM Correctable              : 0",
            "            SRAM Uncorrectable            : 0",
            "            DRAM Correctable              : %d" % d["sbe"],
            "            DRAM Uncorrectable            : %d" % d["dbe"],
            "        Aggregate",
            "            SRAM Correctable              : 0",
            "            SRAM Uncorrectable            : 0",
            "            DRAM Correctable              : %d" % (d["sbe"] + g.agg_extra),
            "            DRAM Uncorrectable            : %d" % d["dbe"],
            "    Retired Pages",
            "        Single Bit ECC                    : N/A",
            "        Double Bit ECC                    : N/A",
            "        Pending Page Blacklist            : N/A",
            "    Remapped Rows",
            "        Correctable Error                 : %d" % d["remap"][0],
            "        Uncorrectable Error               : %d" % d["remap"][1],
            "        Pending                           : %s" % ("Yes" if d["remap"][2] else "No"),
            "        Remapping Failure Occurred        : %s" % ("Yes" if d["remap"][3] else "No"),
            "    Temperature",
            "        GPU Current Temp                  : %d C" % d["temp"],
            "        GPU Shutdown Temp                 : %d C" % g.m["shut"],
            "        GPU Slowdown Temp                 : %d C" % g.m["slow"],
            "        GPU Max Operating Temp            : %d C" % (g.m["slow"] - 2),
        ]
        if new:
            out += ["    GPU Power Readings",
                    "        Power Draw                        : %.2f W" % (d["power"] / 1000.0),
                    "        Current Power Limit               : %.2f W" % (g.plimit / 1000.0),
                    "        Default Power Limit               : %.2f W" % (g.m["plimit"] / 1000.0)]
        else:
            out += ["    Power Readings",
                    "        Power Management                  : Supported",
                    "        Power Draw                        : %.2f W" % (d["power"] / 1000.0),
                    "        Power Limit                       : %.2f W" % (g.plimit / 1000.0),
                    "        Default Power Limit               : %.2f W" % (g.m["plimit"] / 1000.0),
                    "        Enforced Power Limit              : %.2f W" % (g.plimit / 1000.0)]
        out += ["    Clocks",
                "        Graphics                          : %d MHz" % d["clk"],
                "        SM                                : %d MHz" % d["clk"],
                "        Memory                            : %d MHz" % g.m["mem"],
                "    Max Clocks",
                "        Graphics                          : %d MHz" % g.m["maxclk"],
                "        SM                                : %d MHz" % g.m["maxclk"],
                "        Memory                            : %d MHz" % g.m["mem"], ""]
    return "\n".join(out) + "\n"


def lspci_block(case, dev_bus, cls, name, cap_gen, cap_w, cur_gen, cur_w, lost=False, aer=False):
    bdf = "%02x:00.0" % dev_bus
    if lost:
        return "%s %s: %s (rev ff) (prog-if ff)\n\t!!! Unknown header type 7f\n\tKernel driver in use: nvidia\n\n" % (bdf, cls, name)
    sp = "ok" if cur_gen >= cap_gen else "downgraded"
    wd = "ok" if cur_w >= cap_w else "downgraded"
    return ("%s %s: %s (rev a1)\n"
            "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
            "\t\tDevSta:\tCorrErr%s NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-\n"
            "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us\n"
            "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+\n"
            "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)\n"
            "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
            "\t\tLnkCap2: Supported Link Speeds: 2.5-%s, Crosslink- Retimer+ 2Retimers+ DRS-\n\n") % (
        bdf, cls, name, "+" if aer else "-", GTS[cap_gen], cap_w, GTS[cur_gen], sp, cur_w, wd, GTS[cap_gen])


def render_lspci(case, h, t):
    out = []
    for g in h.gpus:
        d = g.at(t)
        name = "NVIDIA Corporation Device %s" % g.m["dev"]
        if d is None:
            out.append(lspci_block(case, g.bus, "3D controller", name, 0, 0, 0, 0, lost=True))
        else:
            out.append(lspci_block(case, g.bus, "3D controller", name, g.gen_max, g.width_max, d["gen"], d["width"],
                                   aer=g.aer_cor > 0))
    for n in h.nics:
        out.append(lspci_block(case, n.bus, "Infiniband controller" if n.ll == "InfiniBand" else "Ethernet controller",
                               "Mellanox Technologies MT2910 Family [ConnectX-7]", 5, 16, n.gen, n.width))
    return "".join(out)


def render_ethtool(case, n, t):
    c = n.cnt(t, case.t0)
    prio = case.roce_prio
    lines = ["NIC statistics:"]
    vals = [("rx_packets_phy", c["rx"] // 4096), ("tx_packets_phy", c["tx"] // 4096),
            ("rx_bytes_phy", c["rx"]), ("tx_bytes_phy", c["tx"]),
            ("rx_crc_errors_phy", c["rcverr"]), ("rx_symbol_err_phy", c["sym"]),
            ("rx_discards_phy", n.c0.get("disc", 0) + int(n.disc_rate_f * max(0, t - n.fs)) if n.fs else n.c0.get("disc", 0)),
            ("tx_discards_phy", 0),
            ("rx_out_of_buffer", n.c0.get("oob", 0) + (int(n.oob_rate_f * max(0, t - n.fs)) if n.fs else 0)),
            ("link_down_events_phy", c["downs"]),
            ("rx_prio%d_bytes" % prio, c["rx"] - c["rx"] // 50), ("tx_prio%d_bytes" % prio, c["tx"] - c["tx"] // 50),
            ("rx_prio%d_pause" % prio, c["rxp"]), ("rx_prio%d_pause_duration" % prio, c["rxp"] * 3),
            ("rx_prio%d_pause_transition" % prio, c["rxp"] // 2),
            ("tx_prio%d_pause" % prio, c["txp"]), ("tx_prio%d_pause_duration" % prio, c["txp"] * 3),
            ("tx_pause_storm_warning_events", n.storm_warn if (n.fs and t >= n.fs) else 0),
            ("tx_pause_storm_error_events", 0),
            ("rx_pci_signal_integrity", 0), ("tx_pci_signal_integrity", 0),
            ("outbound_pci_stalled_rd", n.c0.get("stall", 0) + (int(n.stall_rate_f * max(0, t - n.fs)) if n.fs else 0)),
            ("outbound_pci_stalled_wr", 0)]
    for k, v in vals:
        lines.append("     %s: %d" % (k, v))
    return "\n".join(lines) + "\n"


def render_fec(case, n, t):
    c = n.cnt(t, case.t0)
    per = [c["fec"] // 4 + i for i in range(4)]
    unc = n.c0.get("fec_unc", 0) + (int(n.fec_unc_rate_f * max(0, t - n.fs)) if n.fs else 0)
    return ("FEC parameters for %s:\n"
            "Supported/Configured FEC encodings: RS\n"
            "Active FEC encoding: RS\n"
            "Statistics:\n"
            "  corrected_blocks: %d\n"
            "    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n"
            "  uncorrectable_blocks: %d\n") % (n.netdev, sum(per), per[0], per[1], per[2], per[3], unc)


def render_ibstat(case, h, t):
    out = []
    for n in h.nics:
        c = n.cnt(t, case.t0)
        up = n.state_at(t)
        out.append("CA '%s'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n"
                   "\tHardware version: 0\n\tNode GUID: 0x%016x\n\tSystem image GUID: 0x%016x\n\tPort 1:\n"
                   "\t\tState: %s\n\t\tPhysical state: %s\n\t\tRate: %d\n\t\tBase lid: %d\n\t\tLMC: 0\n"
                   "\t\tSM lid: 1\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0x%016x\n\t\tLink layer: %s\n"
                   % (n.ibdev, n.guid, n.guid & ~0xff, "Active" if up else "Down", "LinkUp" if up else "Polling",
                      c["rate"], n.lid if n.ll == "InfiniBand" else 0, n.guid, n.ll))
    return "\n".join(out)


def sysfs_files(case, h, t, before=False):
    """(relative path, content) pairs for sys/ at time t (a before snapshot keeps only what changes)."""
    files = []
    old = case.old_kernel
    for g in h.gpus:
        d = g.at(t)
        base = "sys/bus/pci/devices/%s/" % gpu_sysfs(g)
        if before and not (g.gen_f or g.width_f or g.lost_at):
            continue
        if d is None:
            files += [(base + "current_link_speed", "Unknown\n"), (base + "current_link_width", "63\n"),
                      (base + "max_link_speed", "Unknown\n"), (base + "max_link_width", "255\n")]
        else:
            sp = SPEED_OLD if old else SPEED
            fmt = "%s GT/s\n" if old else "%s GT/s PCIe\n"
            files += [(base + "current_link_speed", fmt % sp[d["gen"]]), (base + "max_link_speed", fmt % sp[g.gen_max]),
                      (base + "current_link_width", "%d\n" % d["width"]), (base + "max_link_width", "%d\n" % g.width_max)]
        if before:
            continue
        files.append((base + "aer_dev_correctable",
                      "Receiver Error %d\nBad TLP 0\nBad DLLP %d\nRELAY_NUM Rollover 0\nReplay Timer Timeout 0\n"
                      "Advisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n"
                      % (g.aer_cor - g.aer_cor // 3, g.aer_cor // 3, g.aer_cor)))
        if d is None:
            files.append((base + "aer_dev_fatal", "Undefined 0\nData Link Protocol 0\nSurprise Down Error %d\nPoisoned TLP 0\n"
                      "Flow Control Protocol 0\nCompletion Timeout 0\nCompleter Abort 0\nUnexpected Completion 0\n"
                      "Receiver Overflow 0\nMalformed TLP 0\nECRC 0\nUnsupported Request 0\nACS Violation 0\n"
                      "Uncorrectable Internal Error 0\nMC Blocked TLP 0\nAtomicOp Egress Blocked 0\n"
                      "TLP Prefix Blocked Error 0\nTOTAL_ERR_FATAL %d\n" % ((1, 1) if d is None else (0, 0))))
    for n in h.nics:
        c = n.cnt(t, case.t0)
        base = "sys/bus/pci/devices/%s/" % nic_sysfs(n)
        sp = SPEED_OLD if old else SPEED
        fmt = "%s GT/s\n" if old else "%s GT/s PCIe\n"
        if not before and (n.gen < 5 or n.width < 16 or case.nic_pci):
            files += [(base + "current_link_speed", fmt % sp[n.gen]), (base + "max_link_speed", fmt % sp[5]),
                  (base + "current_link_width", "%d\n" % n.width), (base + "max_link_width", "16\n")]
        ib = "sys/class/infiniband/%s/ports/1/" % n.ibdev
        up = n.state_at(t)
        rate = c["rate"]
        rs = {400: "400 Gb/sec (4X NDR)", 200: "200 Gb/sec (4X HDR)", 100: "100 Gb/sec (4X EDR)"}[rate] \
            if n.ll == "InfiniBand" else "%d Gb/sec (4X)" % rate
        if not before:
            files += [(ib + "state", "4: ACTIVE\n" if up else "1: DOWN\n"),
                      (ib + "phys_state", "5: LinkUp\n" if up else "2: Polling\n"),
                      (ib + "rate", rs + "\n"), (ib + "link_layer", n.ll + "\n")]
        cnt = {"port_rcv_data": c["rx"] // 4, "port_xmit_data": c["tx"] // 4,
               "port_rcv_errors": c["rcverr"], "symbol_error": c["sym"], "link_downed": c["downs"],
               "port_xmit_wait": c["wait"]}
        for k in sorted(cnt):
            files.append((ib + "counters/" + k, "%d\n" % cnt[k]))
        hw = {"out_of_sequence": n.c0.get("oos", 0) + c["acktmo"] * 5, "packet_seq_err": n.c0.get("pse", 0) + c["acktmo"],
              "local_ack_timeout_err": c["acktmo"]}
        if n.ll == "Ethernet":
            hw.update({"np_cnp_sent": c["cnp"], "rp_cnp_handled": c["cnp"] + 17,
                       "np_ecn_marked_roce_packets": c["cnp"] * 2 + 3, "rp_cnp_ignored": 0})
        if before:
            continue
        for k in sorted(hw):
            files.append((ib + "hw_counters/" + k, "%d\n" % hw[k]))
        if n.ll != "Ethernet" and not c["downs"]:
            continue
        files += [("sys/class/net/%s/operstate" % n.netdev, "up\n" if up else "down\n"),
                  ("sys/class/net/%s/carrier_changes" % n.netdev, "%d\n" % (2 + 2 * c["downs"]))]
    return files


def render_top(case, h, t):
    ps = case.host_psi(h, t)
    d = utc(t)
    load = ps["load1"]
    us = min(99.0, 20 + load * 0.35)
    lines = ["top - %02d:%02d:%02d up %d days,  %d:%02d,  0 users,  load average: %.2f, %.2f, %.2f" % (
        d.hour, d.minute, d.second, int((t - h.boot) // 86400), int((t - h.boot) % 86400 // 3600),
        int((t - h.boot) % 3600 // 60), load, load * 0.97, load * 0.9),
        "Tasks: 1123 total,   %d running, 1107 sleeping,   0 stopped,   0 zombie" % (12 + len(h.top_extra) * 20),
        "%%Cpu(s): %4.1f us,  %3.1f sy,  0.0 ni, %4.1f id,  0.1 wa,  0.0 hi,  0.3 si,  0.0 st" % (us, 2.1, max(0.0, 100 - us - 2.5)),
        "MiB Mem : 2063720.0 total, %9.1f free, %9.1f used, 1034560.0 buff/cache" % (
            ps.get("memfree", 602233.4), 2063720.0 - 1034560.0 - ps.get("memfree", 602233.4)),
        "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1412006.2 avail Mem", "",
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    procs = []
    for i, g in enumerate(h.gpus):
        if g.busy:
            procs.append((21840 + i, "train", "20", "0", "142.3g", "18.2g", "2.1g", "R", 101.3 - i * 0.7, "0.9", "812:11.42", "python3"))
    procs += h.top_extra
    procs.sort(key=lambda p: -p[8])
    for p in procs:
        lines.append("%7d %-8s %3s %3s %7s %6s %6s %s %5.1f %5s %9s %s" % p)
    return "\n".join(lines) + "\n"


def render_psi(vals):
    some, full = vals
    out = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % some
    if full is not None:
        out += "full avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % full
    return out


def render_nvlink_e(case, h, t):
    out = []
    for g in h.gpus:
        d = g.at(t)
        out.append("GPU %d: %s (UUID: %s)" % (g.index, g.m["name"], g.uuid))
        if d is None:
            out.append("\tUnable to determine the device handle for GPU%s: Unknown Error" % gpu_nvml_bus(g))
            continue
        for L in range(case.nvlinks):
            crc, rep, rec = d["nvl"] if L == g.nvl_link else (g.nvl_static.get(L, (0, 0, 0)))
            out.append("\t Link %d: Replay Errors: %d" % (L, rep))
            out.append("\t Link %d: Recovery Errors: %d" % (L, rec))
            out.append("\t Link %d: CRC Errors: %d" % (L, crc))
    return "\n".join(out) + "\n"


def render_sel(h):
    out = []
    for i, (t, sensor, ev, st) in enumerate(sorted(h.sel)):
        d = utc(t)
        out.append("%4x | %02d/%02d/%04d | %02d:%02d:%02d | %s | %s | %s" % (
            i + 1, d.month, d.day, d.year, d.hour, d.minute, d.second, sensor, ev, st))
    return "\n".join(out) + "\n"


def render_fans(h):
    out = []
    for i, (rpm, ok) in enumerate(h.fans):
        out.append("%-16s | %02Xh | %-2s | 29.%d | %s" % (
            "Fan%d" % (i + 1), 0x30 + i, "ok" if ok else "cr", i + 1,
            ("%d RPM" % rpm) if rpm else "No Reading"))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ switch CLI
def fmtn(v):
    return "{:,}".format(v)


def render_pfc_counters(case, s, t):
    out = []
    ports = [s.ports[p] for p in sorted(s.ports, key=port_key)]
    prio = case.roce_prio
    for direction, key in (("Rx", "pfc_rx"), ("Tx", "pfc_tx")):
        out.append("  Port %s    PFC0    PFC1    PFC2          PFC3    PFC4    PFC5    PFC6    PFC7" % direction)
        out.append("-----------  ------  ------  ------  ------------  ------  ------  ------  ------")
        for p in ports:
            v = p.cnt(t, case.t0)[key]
            cols = ["0"] * 8
            cols[prio] = fmtn(v)
            out.append("%11s  %6s  %6s  %6s  %12s  %6s  %6s  %6s  %6s" % tuple([p.name] + cols))
        out.append("")
    return "\n".join(out)


def render_pfcwd(case, s, t):
    out = ["      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
           "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for pn in sorted(s.ports, key=port_key):
        st = s.pfcwd.get(pn)
        if st is None:
            out.append("%11s  %8s  %25s  %12s  %12s  %17s  %17s" % ("%s:%d" % (pn, case.roce_prio), "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
        else:
            det, res, drop = st
            stormed = t >= det[0] and (res is None or t < res)
            nd = sum(1 for x in det if x <= t)
            out.append("%11s  %8s  %25s  %12s  %12s  %17s  %17s" % (
                "%s:%d" % (pn, case.roce_prio), "stormed" if stormed else "operational",
                "%d/%d" % (nd, nd - (1 if stormed else 0)), "0/%d" % drop if nd else "0/0", "0/0",
                "0/%d" % drop if nd else "0/0", "0/0"))
    return "\n".join(out) + "\n"


def render_if_counters(case, s, t):
    out = ["      IFACE    STATE           RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR           TX_OK     TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
           "-----------  -------  --------------  ---------  ---------  --------  --------  --------  --------------  ---------  ---------  --------  --------  --------"]
    dt = 60.0
    for pn in sorted(s.ports, key=port_key):
        p = s.ports[pn]
        c = p.cnt(t, case.t0)
        c1 = p.cnt(t - dt, case.t0)
        rxb = (c["in"] - c1["in"]) / dt
        txb = (c["out"] - c1["out"]) / dt
        out.append("%11s  %7s  %14s  %9s  %9s  %8s  %8s  %8s  %14s  %9s  %9s  %8s  %8s  %8s" % (
            pn, "U", fmtn(c["in"] // 4096), "%.2f MB/s" % (rxb / 1e6), "%.2f%%" % (rxb * 8 / 4e11 * 100),
            fmtn(c["inerr"]), "0", "N/A", fmtn(c["out"] // 4096), "%.2f MB/s" % (txb / 1e6),
            "%.2f%%" % (txb * 8 / 4e11 * 100), "0", fmtn(c["disc"]), "N/A"))
    return "\n".join(out) + "\n"
