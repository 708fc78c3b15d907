"""Print every source of a bundle from the Case model (fleet.py)."""
import gzip, io, json, os, hashlib
from fleet import val, iso, dt, nz, SPEED, SPEED_OLD


def nvbus(g):
    return "00000000:%02X:00.0" % g["bus"]


def sysbus(bus):
    return "0000:%02x:00.0" % bus


# ---------------- NIC counter views (derived from the link) ----------------
def nic_counters(C, n, t):
    L = n["link"]
    c = {}
    if L:
        c["tx_bytes"] = val(L["bytes_ab"], t)
        c["rx_bytes"] = val(L["bytes_ba"], t)
        c["tx_pause"] = val(L["pause_ab"], t)
        c["rx_pause"] = val(L["pause_ba"], t)
        c["rx_err"] = val(L["err_a"], t)
    else:
        c.update(tx_bytes=0, rx_bytes=0, tx_pause=0, rx_pause=0, rx_err=0)
    for k, v in n["ctr"].items():
        c[k] = val(v, t)
    return c


def port_counters(C, sw, pname, t):
    P = C.switches[sw]["ports"][pname]
    L = P["link"]
    if P["side"] == "b":
        return dict(out_octets=val(L["bytes_ab" if False else "bytes_ba"], t), in_octets=val(L["bytes_ab"], t),
                    rx_pfc=val(L["pause_ab"], t), tx_pfc=val(L["pause_ba"], t), rx_err=val(L["err_b"], t))
    return dict(out_octets=val(L["bytes_ab"], t), in_octets=val(L["bytes_ba"], t),
                rx_pfc=val(L["pause_ba"], t), tx_pfc=val(L["pause_ab"], t), rx_err=val(L["err_a"], t))


# ---------------- GPU values at time t ----------------
def gstate(g, t):
    lost = g["lost_at"] is not None and t >= g["lost_at"]
    d = {k: val(g[k], t) for k in ("clk", "power", "temp", "reasons", "util", "tensor", "replay", "sbe", "dbe",
                                   "xid", "therm_ns", "power_ns", "gen", "width")}
    d["nvl"] = {k: val(v, t) for k, v in g["nvl"].items()}
    d["remap"] = val(g["remap"], t) if isinstance(g["remap"], tuple) and g["remap"] and g["remap"][0] == "s" else g["remap"]
    d["lost"] = lost
    return d


# ---------------- files ----------------
class Writer:
    def __init__(self, root, C):
        self.root = root
        self.C = C
        self.files = {}

    def put(self, rel, text):
        self.files[rel] = text

    def flush(self):
        C = self.C
        for rel in sorted(self.files):
            if any(rel == m or rel.startswith(m.rstrip("/") + "/") for m in C.missing):
                continue
            data = self.files[rel]
            if isinstance(data, str):
                data = data.encode()
            out = rel
            if should_gz(C, rel):
                bio = io.BytesIO()
                with gzip.GzipFile(filename="", mode="wb", fileobj=bio, mtime=0, compresslevel=6) as f:
                    f.write(data)
                data = bio.getvalue()
                out = rel + ".gz"
            if rel in C.truncate:
                data = data[: max(40, len(data) // 3)]
            p = os.path.join(self.root, out)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)


def should_gz(C, rel):
    if rel in ("incident.json", "topology.json") or rel.endswith(".json"):
        return False
    if "/sys/" in rel or rel.startswith("sys/"):
        return False
    for pat in C.gz:
        if pat in rel:
            return True
    return C.gz_all_cmd and "/cmd/" in rel


def render(C, root):
    W = Writer(os.path.join(root, "bundle"), C)
    r_incident(C, W)
    r_topology(C, W)
    r_steps(C, W)
    for name, lines in sorted(C.logs.items()):
        W.put("job/logs/" + name, "\n".join(lines) + "\n")
    r_dcgm(C, W)
    r_node_metrics(C, W)
    r_snmp(C, W)
    for h in C.hosts:
        if h["nd"]:
            r_node(C, W, h)
    for sw, cmds in sorted(C.sonic.items()):
        r_sonic(C, W, sw, cmds)
    W.flush()
    tr = {"root_cause": C.truth[0], "component": C.truth[1]}
    with open(os.path.join(root, "truth.json"), "w") as f:
        f.write(json.dumps(tr, sort_keys=True) + "\n")


def r_incident(C, W):
    d = {"schema": "forensic.bundle/v1", "id": C.job_id if hasattr(C, "job_id") else C.id,
         "title": C.title, "window": {"start": iso(C.S), "end": iso(C.E)},
         "job": {"name": C.job, "ranks": len(C.rank_map()), "gpus_per_node": C.gpn},
         "reported": C.reported}
    if C.alerts:
        d["alerts"] = C.alerts
    W.put("incident.json", json.dumps(d, indent=2) + "\n")


def r_topology(C, W):
    if "topology.json" in C.missing:
        return
    hosts = []
    for h in C.hosts:
        hosts.append({"name": h["name"], "rack": h["rack"],
                      "gpus": [{"index": g["idx"], "pci_bus_id": nvbus(g), "uuid": g["uuid"]} for g in h["gpus"]],
                      "nics": [{"ibdev": n["ibdev"], "netdev": n["netdev"], "pci_bus_id": sysbus(n["bus"]),
                                "port": n["port"], "link_layer": n["ll"], "switch": n["switch"],
                                "switch_port": n["sport"]} for n in h["nics"]]})
    d = {"hosts": hosts}
    if C.write_ranks:
        d["ranks"] = [{"rank": r, "host": h["name"], "gpu": g["idx"]} for r, h, g in C.rank_map()]
    sws = []
    for name in sorted(C.switches):
        s = C.switches[name]
        links = []
        for p in sorted(s["ports"]):
            peer = s["ports"][p]["peer"]
            if peer[0] == "sw":
                links.append({"port": p, "peer": peer[1], "peer_port": peer[2]})
        sws.append({"name": name, "tier": s["tier"], "links": links})
    d["switches"] = sws
    W.put("topology.json", json.dumps(d, indent=1) + "\n")


# ---------------- job ----------------
def rank_factor(C, h, g, t):
    f = val(g["slow"], t) * val(h.get("slow", 1.0), t)
    return f


def r_steps(C, W):
    st = C.steps
    if st.get("none"):
        return
    rm = C.rank_map()
    slow = [(r, h, g) for r, h, g in rm if g["slow"] != 1.0 or h.get("slow", 1.0) != 1.0]
    t = st["job_start"] or (C.M0 + 120)
    step = st.get("first_step", 1)
    rows = []
    end = C.E
    if st["hang_at"]:
        end = min(end, st["hang_at"])
    restart = st["restart"]       # (t_fail, t_resume, step_back)
    c0, m0 = st["c0"], st["m0"]
    loss = 2.31
    while t < end:
        if restart and t >= restart[0] and not st.get("_r"):
            st["_r"] = True
            t = restart[1]
            step -= restart[2]
            continue
        fmax = 1.0
        for r, h, g in slow:
            fmax = max(fmax, rank_factor(C, h, g, t))
        comm = m0 * val(st["comm"], t)
        wait = val(st["data_wait"], t)
        dur = c0 * fmax * (1 + 0.004 * nz("fx", step)) + comm + wait + 0.02 * abs(nz("j", step))
        if step % st["log_every"] == 0:
            loss_s = 2.31 * (0.9994 ** (step / 10.0)) + 0.01 * nz("l", step)
            for r, h, g in rm:
                if r in st["drop_ranks"] and step % (3 * st["log_every"]) == 0:
                    continue
                comp = c0 * rank_factor(C, h, g, t) * (1 + 0.004 * nz(r, step))
                row = [str(step), str(r), "%.3f" % t, "%.4f" % dur]
                if st["compute_col"]:
                    row.append("%.4f" % min(comp, dur - 0.01))
                if st["loss"]:
                    row.append("%.4f" % (loss_s + 0.02 * nz("lr", r * 7919 + step)))
                if st["checksum"]:
                    row.append(checksum(C, r, h, g, step, t))
                rows.append((t, r, ",".join(row)))
        t += dur
        step += 1
    hdr = ["step", "rank", "start_unix", "duration_s"]
    if st["compute_col"]:
        hdr.append("compute_s")
    if st["loss"]:
        hdr.append("loss")
    if st["checksum"]:
        hdr.append("param_checksum")
    order = st.get("order", "time")
    if order == "rank":
        rows.sort(key=lambda x: (x[1], x[0]))
    W.put("job/steps.csv", ",".join(hdr) + "\n" + "".join(x[2] + "\n" for x in rows))


def checksum(C, r, h, g, step, t):
    good = hashlib.sha1(("%s-%d" % (C.id, step)).encode()).hexdigest()[:16]
    bad = g.get("sdc_at")
    if bad is not None and t >= bad:
        return hashlib.sha1(("%s-%d-%d" % (C.id, step, r)).encode()).hexdigest()[:16]
    return good


# ---------------- metrics ----------------
def om_family(name, typ, help_, samples):
    out = ["# HELP %s %s" % (name, help_), "# TYPE %s %s" % (name, typ)]
    out.extend(samples)
    return out


def fmtv(v):
    if isinstance(v, float):
        return "%.6g" % v if abs(v) < 1e15 else "%.0f" % v
    return str(v)


def times(C):
    return list(range(C.M0, C.E + 1, C.mstep))


def r_dcgm(C, W):
    if C.dcgm["families"] is None:
        return
    ts = times(C)
    hosts = C.dcgm["hosts"] or [h for h in C.hosts]
    lab = C.dcgm["label"]
    fams = [("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", lambda g, s: s["clk"]),
            ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", lambda g, s: s["temp"]),
            ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", lambda g, s: round(s["power"] + 0.0, 3)),
            ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", lambda g, s: s["util"]),
            ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.",
             lambda g, s: round(s["tensor"], 6)),
            (C.dcgm["reasons"], "gauge", "Current clock throttle reasons.", lambda g, s: s["reasons"]),
            ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", lambda g, s: s["xid"]),
            ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", lambda g, s: s["replay"])]
    ext = C.dcgm["extra"]
    if "ecc" in ext:
        fams += [("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", lambda g, s: s["sbe"]),
                 ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", lambda g, s: s["dbe"]),
                 ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", lambda g, s: s["remap"][0]),
                 ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", lambda g, s: s["remap"][1]),
                 ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", lambda g, s: int(s["remap"][3]))]
    if "nvlink" in ext:
        fams += [("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors.", lambda g, s: s["nvl"]["crc"]),
                 ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.", lambda g, s: s["nvl"]["replay"])]
    if "viol" in ext:
        fams += [("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns).", lambda g, s: s["therm_ns"]),
                 ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns).", lambda g, s: s["power_ns"])]
    lines = []
    for fname, typ, hlp, fn in fams:
        samples = []
        for h in hosts:
            for g in h["gpus"]:
                labels = '{gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s",DCGM_FI_DRIVER_VERSION="%s"}' % (
                    g["idx"], g["uuid"], nvbus(g), g["idx"], g["mname"], lab, h["name"], h["driver"])
                for t in ts:
                    if g["lost_at"] is not None and t >= g["lost_at"]:
                        break
                    stop = C.dcgm["stop"].get(h["name"])
                    if stop is not None and t >= stop:
                        break
                    s = gstate(g, t)
                    samples.append("%s%s %s %d" % (fname, labels, fmtv(fn(g, s)), t))
        lines += om_family(fname, typ, hlp, samples)
    lines.append("# EOF")
    W.put("metrics/" + C.dcgm["file"], "\n".join(lines) + "\n")


def r_node_metrics(C, W):
    nm = C.node_metrics
    if not nm["on"]:
        return
    ts = times(C)
    hosts = [h for h in C.hosts if h.get("node_exporter", True)]
    def inst(h):
        if nm["instance"] == "ip":
            return "%s:9100" % h.get("ip", "10.0.0.1")
        return "%s:9100" % h["name"]
    lines = []
    if nm["ib"]:
        fams = [("node_infiniband_port_data_received_bytes_total", "Number of data octets received on all links", lambda c: c["rx_bytes"]),
                ("node_infiniband_port_data_transmitted_bytes_total", "Number of data octets transmitted on all links", lambda c: c["tx_bytes"]),
                ("node_infiniband_port_errors_received_total", "Number of packets containing an error that were received on this port", lambda c: c["rx_err"]),
                ("node_infiniband_link_downed_total", "Number of times the link failed to recover from an error state and went down", lambda c: c.get("link_downed", 0)),
                ("node_infiniband_port_transmit_wait_total", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick", lambda c: c.get("xmit_wait", 0))]
        for fname, hlp, fn in fams:
            samples = []
            for h in hosts:
                for n in h["nics"]:
                    for t in ts:
                        c = nic_counters(C, n, t)
                        samples.append('%s{device="%s",instance="%s",port="1"} %s %d' % (fname, n["ibdev"], inst(h), fmtv(fn(c)), t))
            lines += om_family(fname, "counter", hlp, samples)
    if nm["cpu"]:
        samples = []
        s2 = []
        for h in hosts:
            for t in ts:
                p = val(h.get("psi_ctr", ("c", 1000.0, 0.004, 0.0, C.T0, C.M0)), t)
                samples.append('node_pressure_cpu_waiting_seconds_total{instance="%s"} %s %d' % (inst(h), fmtv(round(p / 1000.0, 3)), t))
                s2.append('node_load1{instance="%s"} %s %d' % (inst(h), fmtv(round(val(h.get("load1", 18.0), t) + abs(nz(h["name"], t)), 2)), t))
        lines += om_family("node_pressure_cpu_waiting_seconds_total", "counter", "Total time in seconds that processes have waited for CPU time", samples)
        lines += om_family("node_load1", "gauge", "1m load average.", s2)
    lines.append("# EOF")
    W.put("metrics/" + nm["file"], "\n".join(lines) + "\n")


def r_snmp(C, W):
    sn = C.snmp
    if not sn["on"]:
        return
    ts = times(C)
    ports = sn["ports"] or [(s, p) for s in sorted(C.switches) for p in sorted(C.switches[s]["ports"])]
    lines = []
    for fname, key in (("ifHCInOctets", "in_octets"), ("ifHCOutOctets", "out_octets"), ("ifOutDiscards", None)):
        samples = []
        for s, p in ports:
            for t in ts:
                v = port_counters(C, s, p, t)[key] if key else val(C.switches[s]["ports"][p].get("discards", 0), t)
                samples.append('%s{ifName="%s",instance="%s"} %s %d' % (fname, p, s, fmtv(v), t))
        lines += om_family(fname, "counter", "The total number of octets." if key else "The number of outbound packets discarded.", samples)
    lines.append("# EOF")
    W.put("metrics/" + sn["file"], "\n".join(lines) + "\n")


def r_sonic(C, W, sw, cmds):
    s = C.switches[sw]
    base = "switches/%s/cmd/" % sw
    t = C.E
    ports = sorted(s["ports"], key=lambda p: (len(p), p))
    if "pfc" in cmds:
        out = []
        for direction, key in (("Rx", "rx_pfc"), ("Tx", "tx_pfc")):
            out.append("  Port %s    PFC0    PFC1    PFC2       PFC3    PFC4    PFC5    PFC6    PFC7" % direction)
            out.append("-----------  ------  ------  ------  ---------  ------  ------  ------  ------")
            for p in ports:
                v = port_counters(C, sw, p, t)[key]
                out.append("%11s  %6s  %6s  %6s  %9s  %6s  %6s  %6s  %6s" % (p, "0", "0", "0", "{:,}".format(v), "0", "0", "0", "0"))
            out.append("")
        W.put(base + "show-pfc-counters.txt", "\n".join(out))
    if "pfcwd" in cmds:
        out = ["      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP      RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
               "-------------  -----------  -------------------------  ------------  --------------  -----------------  -----------------"]
        for p in ports:
            wd = s["ports"][p].get("pfcwd")
            if wd:
                out.append("%13s  %11s  %25s  %12s  %14s  %17s  %17s" % (p + ":3", wd[0], wd[1], wd[2], "0/0", wd[3], "0/0"))
            else:
                out.append("%13s  %11s  %25s  %12s  %14s  %17s  %17s" % (p + ":3", "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
        W.put(base + "show-pfcwd-stats.txt", "\n".join(out) + "\n")
    if "ifc" in cmds:
        out = ["      IFACE    STATE            RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR            TX_OK     TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
               "-----------  -------  ---------------  ---------  ---------  --------  --------  --------  ---------------  ---------  ---------  --------  --------  --------"]
        for p in ports:
            a = port_counters(C, sw, p, t)
            b = port_counters(C, sw, p, t - 10)
            rxbps = (a["in_octets"] - b["in_octets"]) / 10.0
            txbps = (a["out_octets"] - b["out_octets"]) / 10.0
            sp = s["ports"][p].get("speed", 400e9) / 8
            out.append("%11s  %7s  %15s  %9s  %9s  %8s  %8s  %8s  %15s  %9s  %9s  %8s  %8s  %8s" % (
                p, "U", "{:,}".format(a["in_octets"] // 4096), "%.2f MB/s" % (rxbps / 1e6), "%.2f%%" % (100 * rxbps / sp),
                "{:,}".format(a["rx_err"]), "{:,}".format(val(s["ports"][p].get("rx_drp", 0), t)), "0",
                "{:,}".format(a["out_octets"] // 4096), "%.2f MB/s" % (txbps / 1e6), "%.2f%%" % (100 * txbps / sp),
                "0", "{:,}".format(val(s["ports"][p].get("discards", 0), t)), "0"))
        W.put(base + "show-interfaces-counters.txt", "\n".join(out) + "\n")


# ---------------- node ----------------
def r_node(C, W, h):
    base = "nodes/%s/" % h["name"]
    col = {"before": C.S, "now": C.E, "boot": h["boot"]}
    col = {k: v for k, v in col.items() if k in h["collected_keys"]}
    W.put(base + "collected.json", json.dumps(col, sort_keys=True) + "\n")
    snaps = [("", C.E)]
    if h["before"]:
        snaps.append(("before/", C.S))
    for pre, t in snaps:
        r_sys(C, W, h, base + pre, t, before=(pre != ""))
        r_cmds(C, W, h, base + pre + "cmd/", t, final=(pre == ""))
    W.put(base + "nvml.json", r_nvml(C, h, C.E))


def r_sys(C, W, h, base, t, before=False):
    sp = SPEED_OLD if h["kernel_old"] else SPEED
    if before:  # the window-start snapshot keeps what changes: links and counters
        W = Sub(W)
    for g in h["gpus"]:
        s = gstate(g, t)
        d = base + "sys/bus/pci/devices/%s/" % sysbus(g["bus"])
        if s["lost"]:
            W.put(d + "current_link_speed", "Unknown\n")
            W.put(d + "current_link_width", "63\n")
        else:
            W.put(d + "current_link_speed", "%s GT/s%s\n" % (sp[s["gen"]], "" if h["kernel_old"] else " PCIe"))
            W.put(d + "current_link_width", "%d\n" % s["width"])
        W.put(d + "max_link_speed", "%s GT/s%s\n" % (sp[g["maxgen"]], "" if h["kernel_old"] else " PCIe"))
        W.put(d + "max_link_width", "%d\n" % g["maxwidth"])
        aer = val(g["aer"], t)
        W.put(d + "aer_dev_correctable", "Receiver Error %d\nBad TLP 0\nBad DLLP %d\nRELAY_NUM Rollover 0\nReplay Timer Timeout 0\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n" % (aer - aer // 3, aer // 3, aer))
        if s["lost"]: W.put(d + "aer_dev_fatal", "Undefined 0\nData Link Protocol 0\nSurprise Down Error %d\nPoisoned TLP 0\nFlow Control Protocol 0\nCompletion Timeout 0\nCompleter Abort 0\nUnexpected Completion 0\nReceiver Overflow 0\nMalformed TLP 0\nECRC 0\nUnsupported Request 0\nACS Violation 0\nUncorrectable Internal Error 0\nMC Blocked TLP 0\nAtomicOp Egress Blocked 0\nTLP Prefix Blocked Error 0\nTOTAL_ERR_FATAL %d\n" % ((1, 1) if s["lost"] else (0, 0)))
    for n in h["nics"]:
        c = nic_counters(C, n, t)
        d = base + "sys/bus/pci/devices/%s/" % sysbus(n["bus"])
        W.put(d + "current_link_speed", "%s GT/s%s\n" % (sp[val(n["gen"], t)], "" if h["kernel_old"] else " PCIe"))
        W.put(d + "current_link_width", "%d\n" % val(n["width"], t))
        W.put(d + "max_link_speed", "%s GT/s%s\n" % (sp[n["maxgen"]], "" if h["kernel_old"] else " PCIe"))
        W.put(d + "max_link_width", "%d\n" % n["maxwidth"])
        p = base + "sys/class/infiniband/%s/ports/1/" % n["ibdev"]
        W.put(p + "state", val(n["state"], t) + "\n")
        W.put(p + "phys_state", val(n["phys"], t) + "\n")
        W.put(p + "rate", val(n["rate"], t) + "\n")
        W.put(p + "link_layer", n["ll"] + "\n")
        cn = {"port_rcv_data": c["rx_bytes"] // 4, "port_xmit_data": c["tx_bytes"] // 4,
              "port_rcv_errors": c["rx_err"], "symbol_error": c.get("symbol_error", 0),
              "link_downed": c.get("link_downed", 0), "port_xmit_wait": c.get("xmit_wait", 0)}
        if c.get("link_error_recovery"):
            cn["link_error_recovery"] = c["link_error_recovery"]
        for k in sorted(cn):
            W.put(p + "counters/" + k, "%d\n" % cn[k])
        hw = {"out_of_sequence": c.get("out_of_sequence", 0), "packet_seq_err": c.get("packet_seq_err", 0),
              "local_ack_timeout_err": c.get("local_ack_timeout_err", 0)}
        if n["ll"] == "Ethernet":
            hw.update(np_cnp_sent=c.get("np_cnp_sent", 0), rp_cnp_handled=c.get("rp_cnp_handled", 0),
                      np_ecn_marked_roce_packets=c.get("np_ecn_marked", 0))
        for k in sorted(hw):
            if n["ll"] == "Ethernet" or hw[k]:
                W.put(p + "hw_counters/" + k, "%d\n" % hw[k])
        q = base + "sys/class/net/%s/" % n["netdev"]
        W.put(q + "operstate", ("up" if val(n["state"], t) == "4: ACTIVE" else "down") + "\n")
        if c.get("link_downed", 0):
            W.put(q + "carrier_changes", "%d\n" % (2 + 2 * c.get("link_downed", 0)))


class Sub:
    """drops the static files from a before/ snapshot"""
    KEEP = ("current_link_speed", "current_link_width", "/counters/", "/hw_counters/", "/state", "aer_dev_correctable")

    def __init__(self, W):
        self.W = W

    def put(self, rel, text):
        if any(k in rel for k in self.KEEP):
            self.W.put(rel, text)


def r_cmds(C, W, h, base, t, final):
    files = h.get("cmds", ("nvidia-smi-q", "lspci-vv", "dmesg", "ethtool", "ibstat"))
    if "nvidia-smi-q" in files:
        W.put(base + "nvidia-smi-q.txt", smi_q(C, h, t))
    if "lspci-vv" in files:
        W.put(base + "lspci-vv.txt", lspci(C, h, t))
    if "dmesg" in files:
        W.put(base + "dmesg.txt", dmesg(C, h, t))
    if "ibstat" in files:
        W.put(base + "ibstat.txt", ibstat(C, h, t))
    if "ethtool" in files:
        for n in h["nics"]:
            if n["ll"] == "Ethernet" or h.get("ethtool_ib"):
                W.put(base + "ethtool-S-%s.txt" % n["netdev"], ethtool(C, h, n, t))
    if "fec" in files:
        for n in h["nics"]:
            W.put(base + "ethtool-I-show-fec-%s.txt" % n["netdev"], fec(C, h, n, t))
    if "nvlink" in files:
        W.put(base + "nvidia-smi-nvlink-e.txt", nvlink_e(C, h, t))
    if "pressure" in files:
        cp = h["cpu"]
        W.put(base + "pressure-cpu.txt", "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % (
            val(cp["some10"], t), val(cp["some60"], t), val(cp["some300"], t), val(cp["total"], t)))
        m = h["mem"]
        W.put(base + "pressure-memory.txt", "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
            val(m["some"], t), val(m["some"], t) * 0.9, val(m["some"], t) * 0.6, int(val(m["some"], t) * 1e6) + 5123,
            val(m["full"], t), val(m["full"], t) * 0.9, val(m["full"], t) * 0.6, int(val(m["full"], t) * 1e6) + 812))
        io_ = h["io"]
        W.put(base + "pressure-io.txt", "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (
            val(io_["some"], t), val(io_["some"], t), val(io_["some"], t), int(val(io_["some"], t) * 1e7) + 99331,
            val(io_["full"], t), val(io_["full"], t), val(io_["full"], t), int(val(io_["full"], t) * 1e7) + 4410))
    if "top" in files:
        W.put(base + "top.txt", top(C, h, t))
    if "sel" in files and final:
        W.put(base + "ipmitool-sel-elist.txt", "".join("%4x | %s | %s | %s | %s | %s\n" % (i + 1, dt(e[0]).strftime("%m/%d/%Y"), dt(e[0]).strftime("%H:%M:%S"), e[1], e[2], e[3]) for i, e in enumerate(sorted(h["sel"]))))
    if "fan" in files:
        fans = h["fans"] or [("FAN%d" % i, 9800 + 120 * i, "ok") for i in range(1, 7)]
        W.put(base + "ipmitool-sdr-type-fan.txt", "".join("%-16s | %02Xh | %-2s | 29.%d | %s\n" % (nm, 0x30 + i, val(st, t), i + 1, ("%d RPM" % val(rpm, t)) if val(rpm, t) else "No Reading") for i, (nm, rpm, st) in enumerate(fans)))


def smi_q(C, h, t):
    old = h["driver"].startswith(("470", "515", "525"))
    L = ["", "==============NVSMI LOG==============", "",
         "Timestamp                                 : %s" % dt(t).strftime("%a %b %d %H:%M:%S %Y"),
         "Driver Version                            : %s" % h["driver"],
         "CUDA Version                              : %s" % {"470": "11.4", "515": "11.7", "525": "12.0", "535": "12.2", "550": "12.4", "570": "12.8"}[h["driver"][:3]],
         "", "Attached GPUs                             : %d" % len(h["gpus"])]
    for g in h["gpus"]:
        s = gstate(g, t)
        L.append("GPU %s" % nvbus(g))
        if s["lost"]:
            continue
        r = s["reasons"]
        A = lambda bit: "Active" if r & bit else "Not Active"
        rm = s["remap"]
        L += ["    Product Name                          : %s" % g["mname"],
              "    Product Brand                         : NVIDIA",
              "    Product Architecture                  : %s" % ("Ampere" if g["model"] == "A100" else "Hopper"),
              "    Persistence Mode                      : Enabled",
              "    Serial Number                         : %s" % g["serial"],
              "    GPU UUID                              : %s" % g["uuid"],
              "    Minor Number                          : %d" % g["idx"],
              "    PCI",
              "        Bus                               : 0x%02X" % g["bus"],
              "        Device                            : 0x00",
              "        Domain                            : 0x0000",
              "        Bus Id                            : %s" % nvbus(g),
              "        GPU Link Info",
              "            PCIe Generation",
              "                Max                       : %d" % g["maxgen"],
              "                Current                   : %d" % s["gen"],
              "                Device Current            : %d" % s["gen"],
              "                Device Max                : %d" % g["maxgen"],
              "                Host Max                  : %d" % g["maxgen"],
              "            Link Width",
              "                Max                       : %dx" % g["maxwidth"],
              "                Current                   : %dx" % s["width"],
              "        Replays Since Reset               : %d" % s["replay"],
              "        Replay Number Rollovers           : 0",
              "    Fan Speed                             : N/A",
              "    Performance State                     : %s" % ("P0" if g["busy"] else "P0"),
              "    Clocks %s Reasons" % ("Throttle" if old else "Event"),
              "        Idle                              : %s" % A(1),
              "        Applications Clocks Setting       : %s" % A(2),
              "        SW Power Cap                      : %s" % A(4),
              "        HW Slowdown                       : %s" % A(8 | 0x40 | 0x80),
              "            HW Thermal Slowdown           : %s" % A(0x40),
              "            HW Power Brake Slowdown       : %s" % A(0x80),
              "        Sync Boost                        : %s" % A(0x10),
              "        SW Thermal Slowdown               : %s" % A(0x20),
              "        Display Clock Setting             : %s" % A(0x100),
              "    ECC Errors",
              "        Volatile",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % s["sbe"],
              "            DRAM Uncorrectable            : %d" % s["dbe"],
              "        Aggregate",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % (s["sbe"] + g.get("sbe_agg_extra", 0)),
              "            DRAM Uncorrectable            : %d" % s["dbe"],
              "    Retired Pages",
              "        Single Bit ECC                    : N/A",
              "        Double Bit ECC                    : N/A",
              "        Pending Page Blacklist            : N/A",
              "    Remapped Rows",
              "        Correctable Error                 : %d" % rm[0],
              "        Uncorrectable Error               : %d" % rm[1],
              "        Pending                           : %s" % ("Yes" if rm[2] else "No"),
              "        Remapping Failure Occurred        : %s" % ("Yes" if rm[3] else "No"),
              "    Temperature",
              "        GPU Current Temp                  : %d C" % s["temp"],
              "        GPU Shutdown Temp                 : %d C" % (92 if g["model"] == "A100" else 92),
              "        GPU Slowdown Temp                 : %d C" % (89 if g["model"] == "A100" else 87),
              "        GPU Max Operating Temp            : %d C" % (85 if g["model"] == "A100" else 85),
              "        Memory Current Temp               : %d C" % (s["temp"] + 4)]
        if old:
            L += ["    Power Readings",
                  "        Power Management                  : Supported",
                  "        Power Draw                        : %.2f W" % s["power"],
                  "        Power Limit                       : %.2f W" % val(g["limit"], t),
                  "        Default Power Limit               : %.2f W" % g.get("deflimit", val(g["limit"], t)),
                  "        Enforced Power Limit              : %.2f W" % val(g["limit"], t),
                  "        Min Power Limit                   : 100.00 W",
                  "        Max Power Limit                   : %.2f W" % g.get("deflimit", val(g["limit"], t))]
        else:
            L += ["    GPU Power Readings",
                  "        Power Draw                        : %.2f W" % s["power"],
                  "        Current Power Limit               : %.2f W" % val(g["limit"], t),
                  "        Requested Power Limit             : %.2f W" % val(g["limit"], t),
                  "        Default Power Limit               : %.2f W" % g.get("deflimit", val(g["limit"], t)),
                  "        Min Power Limit                   : 200.00 W",
                  "        Max Power Limit                   : %.2f W" % g.get("deflimit", val(g["limit"], t))]
        L += ["    Clocks",
              "        Graphics                          : %d MHz" % s["clk"],
              "        SM                                : %d MHz" % s["clk"],
              "        Memory                            : %d MHz" % g["memclk"],
              "        Video                             : %d MHz" % int(s["clk"] * 0.88),
              "    Max Clocks",
              "        Graphics                          : %d MHz" % g["maxclk"],
              "        SM                                : %d MHz" % g["maxclk"],
              "        Memory                            : %d MHz" % g["memclk"],
              "        Video                             : %d MHz" % int(g["maxclk"] * 0.88),
              "    Processes                             : %s" % ("" if g["busy"] else "None")]
        if g["busy"]:
            L += ["        GPU instance ID                   : N/A",
                  "        Compute instance ID               : N/A",
                  "        Process ID                        : %d" % (40000 + 7 * g["idx"] + h["boot"] % 1000),
                  "            Type                          : C",
                  "            Name                          : python3",
                  "            Used GPU Memory               : %d MiB" % (71200 + 13 * g["idx"])]
        L.append("")
    bad = [g for g in h["gpus"] if gstate(g, t)["lost"]]
    if bad:
        L = ["Unable to determine the device handle for GPU%s: Unknown Error" % nvbus(g) for g in bad] + L
    return "\n".join(L) + "\n"


def r_nvml(C, h, t):
    old = h["driver"].startswith(("470", "515", "525"))
    key = "nvmlDeviceGetCurrentClocksThrottleReasons" if old else "nvmlDeviceGetCurrentClocksEventReasons"
    devs = []
    for g in h["gpus"]:
        s = gstate(g, t)
        d = {"index": g["idx"], "uuid": g["uuid"], "pci_bus_id": nvbus(g), "name": g["mname"]}
        if s["lost"]:
            d["error"] = "GPU is lost"
        else:
            d.update({"nvmlDeviceGetCurrPcieLinkGeneration": s["gen"], "nvmlDeviceGetMaxPcieLinkGeneration": g["maxgen"],
                      "nvmlDeviceGetCurrPcieLinkWidth": s["width"], "nvmlDeviceGetMaxPcieLinkWidth": g["maxwidth"],
                      "nvmlDeviceGetPcieReplayCounter": s["replay"], "nvmlDeviceGetTemperature": s["temp"],
                      "nvmlDeviceGetPowerUsage": int(round(s["power"] * 1000)),
                      "nvmlDeviceGetEnforcedPowerLimit": int(val(g["limit"], t) * 1000),
                      "nvmlDeviceGetClockInfo": {"sm": s["clk"], "mem": g["memclk"]},
                      "nvmlDeviceGetMaxClockInfo": {"sm": g["maxclk"], "mem": g["memclk"]},
                      key: s["reasons"],
                      "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": s["sbe"], "uncorrected_volatile": s["dbe"]},
                      "nvmlDeviceGetRemappedRows": {"corrected": s["remap"][0], "uncorrected": s["remap"][1],
                                                    "pending": bool(s["remap"][2]), "failure": bool(s["remap"][3])}})
        devs.append(d)
    evs = [{"device": e[0], "type": e[1], "data": e[2], "time": iso(e[3])} for e in sorted(h.get("nvml_events", []), key=lambda e: e[3]) if e[3] <= t]
    return json.dumps({"driver_version": h["driver"], "devices": devs, "events": evs}, indent=1) + "\n"


def lspci(C, h, t):
    L = []
    for g in sorted(h["gpus"], key=lambda g: g["bus"]):
        s = gstate(g, t)
        did = {"A100": "20b2", "H100": "2330", "H200": "2335"}[g["model"]]
        if s["lost"]:
            L += ["%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)" % (g["bus"], did),
                  "\t!!! Unknown header type 7f", "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia", ""]
            continue
        sp = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}
        L += ["%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev a1)" % (g["bus"], did),
              "\tSubsystem: NVIDIA Corporation Device 16c1",
              "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
              "\t\tDevSta:\tCorrErr%s NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend+" % ("+" if val(g["aer"], t) else "-"),
              "\t\tLnkCap:\tPort #0, Speed %sGT/s, Width x%d, ASPM L1, Exit Latency L1 <4us" % (sp[g["maxgen"]], g["maxwidth"]),
              "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
              "\t\tLnkSta:\tSpeed %sGT/s (%s), Width x%d (%s)" % (sp[s["gen"]], "ok" if s["gen"] == g["maxgen"] else "downgraded",
                                                              s["width"], "ok" if s["width"] == g["maxwidth"] else "downgraded"),
              "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
              "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia", ""]
    for n in sorted(h["nics"], key=lambda n: n["bus"]):
        sp = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}
        gen, w = val(n["gen"], t), val(n["width"], t)
        L += ["%02x:00.0 %s controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % (n["bus"], "Infiniband" if n["ll"] == "InfiniBand" else "Ethernet")
              if h["model"] != "A100" else "%02x:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]" % n["bus"],
              "\tSubsystem: Mellanox Technologies Device 0041",
              "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
              "\t\tLnkCap:\tPort #0, Speed %sGT/s, Width x%d, ASPM not supported" % (sp[n["maxgen"]], n["maxwidth"]),
              "\t\tLnkSta:\tSpeed %sGT/s (%s), Width x%d (%s)" % (sp[gen], "ok" if gen == n["maxgen"] else "downgraded", w, "ok" if w == n["maxwidth"] else "downgraded"),
              "\tKernel driver in use: mlx5_core", "\tKernel modules: mlx5_core", ""]
    return "\n".join(L)


def dmesg(C, h, t):
    evs = sorted(e for e in h["events"] + boot_lines(C, h) if e[0] <= t)
    st = h["dstyle"]
    out = []
    seq = 1200
    for ts, text in evs:
        up = ts - h["boot"]
        for i, line in enumerate(text.split("\n")):
            if st == "plain":
                out.append("[%12.6f] %s" % (up + i * 1e-6, line))
            elif st == "T":
                out.append("[%s] %s" % (dt(ts).strftime("%a %b %e %H:%M:%S %Y").replace("  ", " ", 0), line))
            elif st == "journal":
                out.append("%s %s kernel: %s" % (dt(ts).strftime("%b %d %H:%M:%S"), h["name"], line))
            elif st == "kmsg":
                seq += 1
                out.append("%d,%d,%d,-;%s" % (4 if "Xid" in line or "error" in line.lower() else 6, seq, int(up * 1e6), line))
    if st == "journal":
        out.insert(0, "-- Logs begin at %s, end at %s. --" % (dt(h["boot"]).strftime("%a %Y-%m-%d %H:%M:%S UTC"), dt(t).strftime("%a %Y-%m-%d %H:%M:%S UTC")))
    return "\n".join(out) + "\n"


def boot_lines(C, h):
    b = h["boot"]
    L = [(b + 0.0, "Linux version %s (buildd@lcy02-amd64-059) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #%d-Ubuntu SMP" % ("5.4.0-169-generic" if h["kernel_old"] else "5.15.0-119-generic", 129)),
         (b + 0.4, "Command line: BOOT_IMAGE=/vmlinuz root=UUID=3c1b8a77-1e2f-4b6a-9d8b-6c1d0e2f3a4b ro iommu=pt"),
         (b + 9.1, "mlx5_core %s: firmware version: %s" % (sysbus(h["nics"][0]["bus"]) if h["nics"] else "0000:1a:00.0", "28.39.2048" if h["model"] != "A100" else "20.35.1012")),
         (b + 14.6, "nvidia: loading out-of-tree module taints kernel."),
         (b + 15.2, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s  " % h["driver"])]
    for n in h["nics"]:
        L.append((b + 22.0 + 0.01 * n["bus"], "mlx5_core %s %s: Port: 1 Link ACTIVE" % (sysbus(n["bus"]), n["ibdev"])))
    return L


def ibstat(C, h, t):
    L = []
    for n in h["nics"]:
        rate = val(n["rate"], t).split()[0]
        L += ["CA '%s'" % n["ibdev"], "\tCA type: %s" % ("MT4129" if h["model"] != "A100" else "MT4123"), "\tNumber of ports: 1",
              "\tFirmware version: %s" % ("28.39.2048" if h["model"] != "A100" else "20.35.1012"), "\tHardware version: 0",
              "\tNode GUID: 0x%016x" % (0x946dae03009e0000 + n["bus"] * 256 + (zlib_h(h["name"]) & 0xff)),
              "\tSystem image GUID: 0x%016x" % (0x946dae03009e0000 + (zlib_h(h["name"]) & 0xffff)),
              "\tPort 1:", "\t\tState: %s" % val(n["state"], t).split(": ")[1].capitalize(),
              "\t\tPhysical state: %s" % val(n["phys"], t).split(": ")[1], "\t\tRate: %s" % rate,
              "\t\tBase lid: %d" % (100 + n["bus"] % 97), "\t\tLMC: 0", "\t\tSM lid: 1",
              "\t\tCapability mask: 0xa751e848", "\t\tPort GUID: 0x%016x" % (0x946dae03009e0000 + n["bus"] * 256 + (zlib_h(h["name"]) & 0xff)),
              "\t\tLink layer: %s" % n["ll"]]
    return "\n".join(L) + "\n"


def zlib_h(s):
    import zlib
    return zlib.crc32(s.encode())


def ethtool(C, h, n, t):
    c = nic_counters(C, n, t)
    items = [("rx_packets_phy", c["rx_bytes"] // 4096), ("tx_packets_phy", c["tx_bytes"] // 4096),
             ("rx_bytes_phy", c["rx_bytes"]), ("tx_bytes_phy", c["tx_bytes"]),
             ("rx_crc_errors_phy", c.get("crc_err", 0)), ("rx_symbol_err_phy", c.get("symbol_error", 0)),
             ("rx_discards_phy", c.get("rx_discards_phy", 0)), ("tx_discards_phy", 0),
             ("rx_out_of_buffer", c.get("out_of_buffer", 0)), ("link_down_events_phy", c.get("link_downed", 0)),
             ("rx_buffer_passed_thres_phy", c.get("buf_thres", 0)),
             ("rx_prio3_bytes", c["rx_bytes"] - c["rx_bytes"] // 50), ("tx_prio3_bytes", c["tx_bytes"] - c["tx_bytes"] // 50),
             ("rx_prio3_pause", c["rx_pause"]), ("rx_prio3_pause_duration", c["rx_pause"] * 3),
             ("rx_prio3_pause_transition", c["rx_pause"] // 2),
             ("tx_prio3_pause", c["tx_pause"]), ("tx_prio3_pause_duration", c["tx_pause"] * 3),
             ("rx_prio3_discards", 0),
             ("tx_pause_storm_warning_events", c.get("storm_warn", 0)), ("tx_pause_storm_error_events", 0),
             ("outbound_pci_stalled_rd", c.get("pci_stalled", 0)), ("outbound_pci_stalled_wr", c.get("pci_stalled", 0) // 3),
             ("outbound_pci_stalled_rd_events", c.get("pci_stalled", 0) // 1000), ("outbound_pci_stalled_wr_events", 0)]
    return "NIC statistics:\n" + "".join("     %s: %d\n" % kv for kv in items)


def fec(C, h, n, t):
    c = nic_counters(C, n, t)
    corr = c.get("fec_corr", 1000 + int(abs(nz(n["ibdev"], h["name"])) * 5000))
    unc = c.get("fec_unc", 0)
    lanes = [corr // 4 + (i if i < corr % 4 else 0) for i in range(4)]
    return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\nStatistics:\n"
            "  corrected_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n"
            "  uncorrectable_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n") % (
        n["netdev"], corr, lanes[0], lanes[1], lanes[2], lanes[3], unc, unc, 0, 0, 0)


def nvlink_e(C, h, t):
    L = []
    for g in h["gpus"]:
        s = gstate(g, t)
        L.append("GPU %d: %s (UUID: %s)" % (g["idx"], g["mname"], g["uuid"]))
        if s["lost"]:
            L.append("\tUnable to retrieve NVLink information as the GPU is lost")
            continue
        nl = g["nvlinks"]
        for k in range(nl):
            share = lambda tot: (tot if k == g["bad_link"] else 0) if g["bad_link"] is not None else (tot // nl + (1 if k < tot % nl else 0))
            L += ["\t Link %d: Replay Errors: %d" % (k, share(s["nvl"]["replay"])),
                  "\t Link %d: Recovery Errors: %d" % (k, share(s["nvl"]["recovery"])),
                  "\t Link %d: CRC Errors: %d" % (k, share(s["nvl"]["crc"]))]
    return "\n".join(L) + "\n"


def top(C, h, t):
    cp = h["cpu"]
    load = val(h.get("load1", 18.0), t)
    us = val(cp.get("us", 22.0), t)
    L = ["top - %s up %d days,  %d:%02d,  2 users,  load average: %.2f, %.2f, %.2f" % (
        dt(t).strftime("%H:%M:%S"), (t - h["boot"]) // 86400, ((t - h["boot"]) % 86400) // 3600, ((t - h["boot"]) % 3600) // 60, load, load * 0.97, load * 0.9),
         "Tasks: 1043 total,   %d running, 1012 sleeping,   0 stopped,   0 zombie" % max(9, int(load)),
         "%%Cpu(s): %4.1f us,  %3.1f sy,  0.0 ni, %4.1f id,  %3.1f wa,  0.0 hi,  0.3 si,  0.0 st" % (us, us / 8, max(0.0, 100 - us - us / 8 - 0.5), val(cp.get("wa", 0.2), t)),
         "MiB Mem : 2063740.0 total, %8.1f free, %8.1f used, 912233.0 buff/cache" % (val(cp.get("free", 802113.0), t), 2063740.0 - 912233.0 - val(cp.get("free", 802113.0), t)),
         "MiB Swap:   8192.0 total, %7.1f free, %7.1f used. 1101442.0 avail Mem" % (8192.0 - val(cp.get("swap", 0.0), t), val(cp.get("swap", 0.0), t)),
         "", "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    procs = [(41000 + i, "train", 20, 0, "78.1g", "11.2g", "1.3g", "R", 101.0 + 3 * nz(h["name"], i), 0.5, "812:%02d.%02d" % (i * 7 % 60, i), "python3") for i in range(len(h["gpus"]))]
    for p in h["cpu"]["procs"]:
        if p[0] <= t:
            procs.append(p[1])
    procs.sort(key=lambda p: -p[8])
    for p in procs[:20]:
        L.append("%7d %-8s  %2d  %2d %7s %6s %6s %s %5.1f %5.1f %9s %s" % p)
    return "\n".join(L) + "\n"
