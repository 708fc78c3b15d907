"""Renderers: turn a fleet.Case into bundle files (relpath -> bytes)."""
import hashlib
import json
import time as _time

from fleet import (GEN_LSPCI, GEN_OLD, GEN_SPEED, HW_BRAKE, HW_SLOW, HW_THERM, IDLE, SW_POWER, SW_THERM,
                   ctime, gz, iso, jtime)

ARCH = {"A100": "Ampere", "H100": "Hopper", "H200": "Hopper"}


def put(c, rel, text, gzip_it=False):
    data = text.encode() if isinstance(text, str) else text
    if gzip_it:
        c.files[rel + ".gz"] = gz(data)
    else:
        c.files[rel] = data


def jdump(o):
    return json.dumps(o, indent=2, sort_keys=True) + "\n"


# ------------------------------------------------------------------ incident / topology
def render_incident(c):
    inc = {"schema": "forensic.bundle/v1", "id": c.id, "title": c.title,
           "window": {"start": iso(c.t0), "end": iso(c.t1)},
           "job": {"name": c.job_name, "ranks": c.nranks, "gpus_per_node": c.gpn},
           "reported": c.reported}
    if c.alerts:
        inc["alerts"] = c.alerts
    put(c, "incident.json", jdump(inc))


def render_topology(c):
    if not c.fmt["topology"]:
        return
    hosts = []
    order = list(c.hosts)
    if c.fmt.get("topo_shuffle"):
        c.rng.shuffle(order)
    for h in order:
        hosts.append({"name": h.name, "rack": h.rack,
                      "gpus": [{"index": g.index, "pci_bus_id": g.nvml_bdf, "uuid": g.uuid} for g in h.gpus],
                      "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.sys_bdf, "port": 1,
                                "link_layer": n.ll, "switch": n.switch, "switch_port": n.port} for n in h.nics]})
    topo = {"hosts": hosts, "switches": c.switches}
    if c.fmt["ranks"] or c.fmt.get("topo_shuffle"):
        rk = [{"rank": r, "host": h.name, "gpu": g.index} for r, h, g in c.ranks]
        if c.fmt.get("ranks_shuffle"):
            c.rng.shuffle(rk)
        topo["ranks"] = rk
    put(c, "topology.json", jdump(topo))


# ------------------------------------------------------------------ steps
def simulate_steps(c):
    """Returns list of (step, start, duration, {rank: compute}, wait)."""
    rng = c.rng
    rows = []
    every = c.fmt["every"]
    t = c.t0 - c.fmt.get("lead_s", 1200)
    step = c.step0
    end = c.t1 - 5
    if c.hang_at is not None:
        end = min(end, c.hang_at)
    segments = [(t, step, end)]
    if c.restart:
        tc, tr, rs = c.restart
        segments = [(t, step, tc), (tr, rs, end)]
    for (t, step, stop) in segments:
        while t < stop:
            comm = c.comm(t) * (1 + rng.uniform(-0.03, 0.03))
            wait = 0.003
            if c.input_stall and t >= c.input_stall[0] and rng.random() < c.input_stall[1]:
                wait = rng.uniform(c.input_stall[2], c.input_stall[3])
            if step % every == 0:
                comp = {}
                for r, h, g in c.ranks:
                    comp[r] = c.base_compute * c.gpu_slow(g, t) * (1 + rng.gauss(0, 0.008))
                mx = max(comp.values())
                dur = mx + comm + wait
                if t + dur > stop:
                    break
                rows.append((step, t, dur, comp, wait))
            else:
                mx = c.base_compute * c.max_slow(t) * 1.015
                dur = mx + comm + wait
            t += dur
            step += 1
    return rows


def render_steps(c):
    rows = simulate_steps(c)
    c.step_rows = rows
    f = c.fmt
    hdr = ["step", "rank", "start_unix", "duration_s"]
    if f["compute"]:
        hdr.append("compute_s")
    if f["loss"]:
        hdr += ["loss", "grad_norm"]
    if f["checksum"]:
        hdr.append("param_checksum")
    extra = f.get("extra_cols", [])
    hdr += extra
    out = []
    rng = c.rng
    for i, (step, t, dur, comp, wait) in enumerate(rows):
        loss = 2.35 - 0.00004 * (step - c.step0) + rng.uniform(-0.01, 0.01)
        gn = rng.uniform(0.8, 1.1)
        good = hashlib.sha1(("%s-%d" % (c.id, step)).encode()).hexdigest()[:16]
        ds = "%.4f" % dur
        ts = "%.3f" % t
        for r in range(c.nranks):
            if f["drop_rows"] and rng.random() < f["drop_rows"]:
                continue
            v = [str(step), str(r), ts, ds]
            if f["compute"]:
                v.append("%.4f" % comp[r])
            if f["loss"]:
                l = loss + rng.uniform(-0.004, 0.004)
                g = gn
                if c.sdc and step >= c.sdc[1] and c.fmt.get("sdc_loss") and r == c.sdc[0]:
                    l += 0.02
                v += ["%.4f" % l, "%.4f" % g]
            if f["checksum"]:
                ck = good
                if c.sdc and step >= c.sdc[1] and r == c.sdc[0]:
                    ck = hashlib.sha1(("bad-%s-%d" % (c.id, step)).encode()).hexdigest()[:16]
                v.append(ck)
            for e in extra:
                if e == "data_wait_s":
                    v.append("%.4f" % wait)
                elif e == "tokens":
                    v.append("4194304")
                elif e == "lr":
                    v.append("%.3e" % (3e-4 * 0.999 ** ((step - c.step0) / 100)))
            out.append(v)
    if f["shuffle_rows"]:
        rng.shuffle(out)
    text = ",".join(hdr) + "\n" + "".join(",".join(v) + "\n" for v in out)
    put(c, f.get("steps_path", "job/steps.csv"), text, gzip_it=(f["steps"] == "gz"))


# ------------------------------------------------------------------ logs
def render_logs(c):
    for name, lines in sorted(c.logs.items()):
        lines = sorted(lines, key=lambda x: (x[0], x[1]))
        put(c, "job/logs/" + name, "".join(l[1] + "\n" for l in lines))


def nccl_init_lines(c, t, extra_env=()):
    lines = []
    rng = c.rng
    lines.append((t, "NCCL version 2.21.5+cuda12.4"))
    for hi, h in enumerate(c.job_hosts[: min(4, len(c.job_hosts))]):
        pid = 4000 + rng.randint(0, 50000)
        if c.fmt.get("nccl_socket"):
            using = "NET/Socket : Using [0]eth0:10.%d.%d.%d<0>" % (rng.randint(0, 9), hi, 10 + hi)
        else:
            nics = h.nics if not c.fmt.get("nccl_one_hca") else h.nics[:1]
            kind = "IB" if h.nics[0].ll == "InfiniBand" else "RoCE"
            using = "NET/IB : Using " + " ".join("[%d]%s:1/%s" % (i, n.ibdev, kind) for i, n in enumerate(nics)) + " [RO]; OOB eth0:10.0.%d.%d<0>" % (hi, 10 + hi)
        lines.append((t + 0.5, "%s:%d:%d [0] NCCL INFO %s" % (h.name, pid, pid + 311, using)))
        for e in extra_env:
            lines.append((t + 0.6, "%s:%d:%d [0] NCCL INFO %s" % (h.name, pid, pid + 311, e)))
        lines.append((t + 2.0, "%s:%d:%d [0] NCCL INFO comm 0x55%010x rank %d nranks %d cudaDev 0 nvmlDev 0 busId %x000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE"
                      % (h.name, pid, pid + 311, rng.getrandbits(40), hi * c.gpn, c.nranks, h.gpus[0].bus)))
    return lines


def train_lines(c):
    out = []
    for (step, t, dur, comp, wait) in c.step_rows[:: max(1, len(c.step_rows) // 25)]:
        tok = 4194304 / dur
        out.append((t + dur, "[%s] INFO trainer: step %d | loss %.4f | step_time %.3fs | tokens/s %.0f"
                    % (_time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(int(t + dur))), step,
                       2.35 - 0.00004 * (step - c.step0), dur, tok)))
    return out


# ------------------------------------------------------------------ metrics
def om_family(lines, name, typ, help_, samples, suffix=""):
    lines.append("# TYPE %s %s" % (name, typ))
    lines.append("# HELP %s %s" % (name, help_))
    for lab, v, t in samples:
        lines.append("%s%s{%s} %s %s" % (name, suffix, lab, v, t))


def metric_times(c):
    st = c.fmt["metric_step"]
    t = c.t0 - 900
    out = []
    while t <= c.t1:
        out.append(t)
        t += st
    return out


def render_dcgm(c):
    f = c.fmt
    times = metric_times(c)
    hl = f["host_label"]
    typ = f["dcgm_type"]
    fams = [("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "clock", "%d"),
            ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temp", "%d"),
            ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power", "%.3f"),
            ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "util", "%d"),
            ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "xid", "%d"),
            ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", "replay", "%d")]
    if f["dcgm_prof"]:
        fams.append(("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", "tensor", "%.6f"))
    reasons_name = f.get("reasons_name", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
    fams.append((reasons_name, "Current clock throttle reasons.", "reasons", "%d"))
    if f["dcgm_violation"]:
        fams += [("DCGM_FI_DEV_THERMAL_VIOLATION", "Throttling duration due to thermal constraints (in ns).", "tviol", "%d"),
                 ("DCGM_FI_DEV_POWER_VIOLATION", "Throttling duration due to power constraints (in ns).", "pviol", "%d")]
    if f["dcgm_ecc"]:
        fams += [("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile ECC errors.", "sbe", "%d"),
                 ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.", "dbe", "%d"),
                 ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Number of remapped rows for correctable errors", "rcor", "%d"),
                 ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Number of remapped rows for uncorrectable errors", "runc", "%d"),
                 ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed", "rfail", "%d")]
    if f["dcgm_nvlink"]:
        fams += [("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "Total number of NVLink flow-control CRC errors.", "nvcrc", "%d"),
                 ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "Total number of NVLink retries.", "nvrep", "%d")]
    # precompute readings
    rd = {}
    viol_acc = {}
    for h in c.hosts:
        for g in h.gpus:
            tv = pv = 0.0
            for t in times:
                if g.lost_at is not None and t >= g.lost_at:
                    continue
                r = c.gpu_reading(h, g, t)
                if c.gpu_affected(g, t):
                    tv += g.therm_viol * f["metric_step"]
                    pv += g.power_viol * f["metric_step"]
                xid = g.xid
                for (te, code) in g.xid_events:
                    if te <= t:
                        xid = code
                r.update(xid=xid, replay=g.replay.at(t), tviol=int(g.tviol_base + tv), pviol=int(g.pviol_base + pv),
                         sbe=g.sbe.at(t), dbe=g.dbe.at(t), rcor=g.remap_cor.at(t), runc=g.remap_unc.at(t), rfail=0,
                         nvcrc=g.nvl_crc.at(t), nvrep=g.nvl_replay.at(t))
                rd[(h.name, g.index, t)] = r
    by_host_file = {}
    split = f["split_dcgm"]
    for fam, help_, key, vf in fams:
        for h in c.hosts:
            fname = ("metrics/dcgm-%s.om" % h.name) if split else "metrics/dcgm.om"
            lines = by_host_file.setdefault(fname, {})
            samples = lines.setdefault(fam, [])
            for g in h.gpus:
                lab = 'gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s",DCGM_FI_DRIVER_VERSION="%s"' % (
                    g.index, g.uuid, g.nvml_bdf, g.index, c.m["name"], hl, h.name, c.m["driver"])
                for t in times:
                    r = rd.get((h.name, g.index, t))
                    if r is None:
                        continue
                    v = r[key]
                    ts = ("%.3f" % t) if f.get("ts_frac") else str(t)
                    samples.append((lab, vf % v, ts))
    for fname in sorted(by_host_file):
        lines = []
        for fam, help_, key, vf in fams:
            s = by_host_file[fname].get(fam)
            if s:
                om_family(lines, fam, typ, help_, s)
        lines.append("# EOF")
        put(c, fname, "\n".join(lines) + "\n", gzip_it=f["dcgm_gz"])


def render_node_metrics(c):
    f = c.fmt
    times = metric_times(c)
    lines = []
    specs = [("node_infiniband_port_data_received_bytes", "port_rcv_data", 4, "Number of data octets received on all links"),
             ("node_infiniband_port_data_transmitted_bytes", "port_xmit_data", 4, "Number of data octets transmitted on all links"),
             ("node_infiniband_port_errors_received", "port_rcv_errors", 1, "Number of errors received"),
             ("node_infiniband_link_downed", "link_downed", 1, "Number of times the link failed to recover from an error state and went down"),
             ("node_infiniband_port_transmit_wait", "port_xmit_wait", 1, "Number of ticks during which the port had data to transmit but no data was sent during the entire tick")]
    for fam, key, mul, help_ in specs:
        samples = []
        for h in c.hosts:
            if h.name in c.no_node_exporter:
                continue
            for n in h.nics:
                lab = 'device="%s",port="1",instance="%s:9100"' % (n.ibdev, h.name)
                for t in times:
                    samples.append((lab, str(n.c[key].at(t) * mul), str(t)))
        om_family(lines, fam, "counter", help_, samples, suffix="_total")
    samples = []
    for h in c.hosts:
        if h.name in c.no_node_exporter:
            continue
        for t in times:
            samples.append(('instance="%s:9100"' % h.name, "%.2f" % host_load(c, h, t), str(t)))
    om_family(lines, "node_load1", "gauge", "1m load average.", samples)
    samples = []
    for h in c.hosts:
        if h.name in c.no_node_exporter:
            continue
        for t in times:
            samples.append(('instance="%s:9100"' % h.name, "%.3f" % host_psi_total(c, h, t), str(t)))
    om_family(lines, "node_pressure_cpu_waiting_seconds", "counter",
              "Total time in seconds that processes have waited for CPU time", samples, suffix="_total")
    lines.append("# EOF")
    put(c, "metrics/node.om", "\n".join(lines) + "\n", gzip_it=f["node_gz"])


def host_load(c, h, t):
    if h.spare:
        return 0.4
    if h.psi_cpu_onset is not None and t >= h.psi_cpu_onset:
        return h.load_hot
    return h.load


def host_psi_rate(c, h, t):
    if h.psi_cpu_onset is not None and t >= h.psi_cpu_onset:
        return h.psi_cpu_hot / 100.0
    return h.psi_cpu / 100.0


def host_psi_total(c, h, t):
    base = h.psi_base
    ref = c.t0 - 7200
    if h.psi_cpu_onset is None or t < h.psi_cpu_onset:
        return base + (t - ref) * h.psi_cpu / 100.0
    return base + (h.psi_cpu_onset - ref) * h.psi_cpu / 100.0 + (t - h.psi_cpu_onset) * h.psi_cpu_hot / 100.0


def render_switch_metrics(c):
    times = metric_times(c)
    lines = []
    data = {"ifHCOutOctets": [], "ifHCInOctets": [], "ifOutDiscards": []}
    for sw in c.switches:
        if sw["tier"] != "leaf":
            continue
        ln = sw["name"]
        total = c.leaf_uplink_bps.get(ln, 0)
        for k, link in enumerate(sw["links"]):
            port = link["port"]
            lab = 'ifName="%s",instance="%s"' % (port, ln)
            for key in data:
                for t in times:
                    data[key].append((lab, str(c.uplink_counter(ln, k, key, t)), str(t)))
    for key in ("ifHCInOctets", "ifHCOutOctets", "ifOutDiscards"):
        om_family(lines, key, "counter" if key != "ifOutDiscards" else "unknown", "The total number of octets/packets (" + key + ")", data[key])
    lines.append("# EOF")
    put(c, "metrics/switch-ports.om", "\n".join(lines) + "\n")


# ------------------------------------------------------------------ node files
def sysfs_speed(c, gen):
    return (GEN_OLD[gen] if c.fmt["old_sysfs"] else GEN_SPEED[gen]) + "\n"


def render_node(c, h):
    base = "nodes/%s/" % h.name
    col = {"before": c.before, "now": c.now}
    if not h.no_boot:
        col["boot"] = h.boot
    put(c, base + "collected.json", jdump(col))
    # sysfs: pci
    for snap, t in (("", c.now), ("before/", c.before)):
        for g in h.gpus:
            p = base + snap + "sys/bus/pci/devices/%s/" % g.sys_bdf
            lost = g.lost_at is not None and t >= g.lost_at
            if snap == "":
                if lost:
                    put(c, p + "current_link_speed", "Unknown\n")
                    put(c, p + "max_link_speed", "Unknown\n")
                    put(c, p + "current_link_width", "255\n")
                    put(c, p + "max_link_width", "255\n")
                else:
                    put(c, p + "current_link_speed", sysfs_speed(c, c.gpu_gen(h, g)))
                    put(c, p + "max_link_speed", sysfs_speed(c, c.m["gen"]))
                    put(c, p + "current_link_width", "%d\n" % g.width)
                    put(c, p + "max_link_width", "16\n")
            if not (g.lost_at is not None and c.now >= g.lost_at):
                rep = g.replay.at(t)
                put(c, p + "aer_dev_correctable",
                    "Receiver Error %d\nBad TLP %d\nBad DLLP 0\nRELAY_NUM Rollover 0\nReplay Timer Timeout %d\nAdvisory Non-Fatal 0\n"
                    "Corrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR %d\n" % (rep // 2, rep // 4, rep - rep // 2 - rep // 4, rep))
        for n in h.nics:
            p = base + snap + "sys/bus/pci/devices/%s/" % n.sys_bdf
            if snap == "":
                put(c, p + "current_link_speed", sysfs_speed(c, n.gen))
                put(c, p + "max_link_speed", sysfs_speed(c, 5 if c.model != "A100" else 4))
                put(c, p + "current_link_width", "%d\n" % n.width)
                put(c, p + "max_link_width", "%d\n" % n.max_width)
            ib = base + snap + "sys/class/infiniband/%s/ports/1/" % n.ibdev
            if snap == "":
                st = n.state_now
                put(c, ib + "state", st[0] + "\n")
                put(c, ib + "phys_state", st[1] + "\n")
                put(c, ib + "rate", n.rate + "\n")
                put(c, ib + "link_layer", n.ll + "\n")
            for key in ("symbol_error", "port_rcv_errors", "link_downed", "link_error_recovery", "port_rcv_data",
                        "port_xmit_data", "port_xmit_wait", "excessive_buffer_overrun_errors"):
                put(c, ib + "counters/" + key, "%d\n" % n.c[key].at(t))
            hw = ["out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "out_of_buffer"]
            if n.ll == "Ethernet":
                hw += ["np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"]
            for key in hw:
                put(c, ib + "hw_counters/" + key, "%d\n" % n.c[key].at(t))
            nd = base + snap + "sys/class/net/%s/" % n.netdev
            if snap == "":
                put(c, nd + "operstate", "up\n")
            put(c, nd + "carrier_changes", "%d\n" % n.carrier.at(t))
        # cmd snapshots
        if n_roce(h):
            for n in h.nics:
                put(c, base + snap + "cmd/ethtool-S-%s.txt" % n.netdev, ethtool_s(c, n, t))
        if h.nvlink_e:
            put(c, base + snap + "cmd/nvidia-smi-nvlink-e.txt", nvlink_e(c, h, t))
        if h.fec:
            for n in h.nics:
                put(c, base + snap + "cmd/ethtool-I-show-fec-%s.txt" % n.netdev, fec(c, n, t))
    # now-only commands
    cmds = {}
    if h.smi_form != "none":
        cmds["nvidia-smi-q.txt"] = smi_q(c, h)
    cmds["lspci-vv.txt"] = lspci(c, h)
    cmds["dmesg.txt"] = dmesg(c, h)
    cmds["ibstat.txt"] = ibstat(c, h)
    if h.top:
        cmds["top.txt"] = top(c, h)
    if h.psi_files:
        cmds["pressure-cpu.txt"] = psi_text(h.psi_cpu_now(c), 0.0, int(host_psi_total(c, h, c.now) * 1e6), cpu=True)
        cmds["pressure-memory.txt"] = psi_text(h.psi_mem, h.psi_mem * 0.6, int(h.psi_mem * 3.1e8) + 12345)
        cmds["pressure-io.txt"] = psi_text(h.psi_io, h.psi_io * 0.7, int(h.psi_io * 2.9e8) + 54321)
    if h.sel is not None:
        cmds["ipmitool-sel-elist.txt"] = sel(c, h)
        cmds["ipmitool-sdr-type-fan.txt"] = sdr_fan(c, h)
    for name in sorted(cmds):
        rel = base + "cmd/" + name
        if name in h.drop:
            continue
        if name in h.empty:
            c.files[rel] = b""
            continue
        if name in h.truncate:
            data = gz(cmds[name].encode())
            c.files[rel + ".gz"] = data[: max(20, len(data) // 3)]
            continue
        put(c, rel, cmds[name], gzip_it=(name in h.gz))
    if h.nvml:
        put(c, base + "nvml.json", nvml_json(c, h))


def n_roce(h):
    return h.nics and h.nics[0].ll == "Ethernet"


def psi_text(a10, full10, total, cpu=False):
    s = "some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (a10, a10 * 0.93, a10 * 0.71, total)
    f = "full avg10=%.2f avg60=%.2f avg300=%.2f total=%d\n" % (full10, full10 * 0.9, full10 * 0.7, int(total * (full10 / a10) if a10 else 0))
    return s + f


def ethtool_s(c, n, t):
    keys = ["rx_packets_phy", "tx_packets_phy", "rx_bytes_phy", "tx_bytes_phy", "rx_crc_errors_phy", "rx_symbol_err_phy",
            "rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer", "link_down_events_phy", "rx_prio3_pause",
            "rx_prio3_pause_duration", "tx_prio3_pause", "tx_prio3_pause_duration", "tx_pause_storm_warning_events",
            "tx_pause_storm_error_events"]
    out = ["NIC statistics:"]
    for k in keys:
        if k.endswith("_packets_phy"):
            v = n.c["port_" + ("rcv" if k.startswith("rx") else "xmit") + "_packets"].at(t)
        elif k.endswith("_bytes_phy"):
            v = n.c["port_" + ("rcv" if k.startswith("rx") else "xmit") + "_data"].at(t) * 4
        else:
            v = n.c[k].at(t)
        out.append("     %s: %d" % (k, v))
    return "\n".join(out) + "\n"


def fec(c, n, t):
    corr = n.c.get("fec_corrected")
    unc = n.c.get("fec_uncorrectable")
    cv = corr.at(t) if corr else 0
    uv = unc.at(t) if unc else 0
    lanes = [cv // 4 + (1 if i < cv % 4 else 0) for i in range(4)]
    return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\nStatistics:\n"
            "  corrected_blocks: %d\n    Lane 0: %d\n    Lane 1: %d\n    Lane 2: %d\n    Lane 3: %d\n"
            "  uncorrectable_blocks: %d\n" % (n.netdev, cv, lanes[0], lanes[1], lanes[2], lanes[3], uv))


def nvlink_e(c, h, t):
    out = []
    nl = 18 if c.model != "A100" else 12
    for g in h.gpus:
        out.append("GPU %d: %s (UUID: %s)" % (g.index, c.m["name"], g.uuid))
        for l in range(nl):
            crc = rep = rec = 0
            if l in g.nvl_bad_links:
                k = len(g.nvl_bad_links)
                i = g.nvl_bad_links.index(l)
                crc = g.nvl_crc.at(t) // k + (1 if i < g.nvl_crc.at(t) % k else 0)
                rep = g.nvl_replay.at(t) // k + (1 if i < g.nvl_replay.at(t) % k else 0)
                rec = g.nvl_recovery.at(t) // k + (1 if i < g.nvl_recovery.at(t) % k else 0)
            out.append("\t Link %d: Replay Errors: %d" % (l, rep))
            out.append("\t Link %d: Recovery Errors: %d" % (l, rec))
            out.append("\t Link %d: CRC Errors: %d" % (l, crc))
    return "\n".join(out) + "\n"


def smi_q(c, h):
    m = c.m
    t = c.now
    old = h.smi_form == "throttle"
    out = ["", "==============NVSMI LOG==============", "",
           "Timestamp                                 : %s" % ctime(t),
           "Driver Version                            : %s" % m["driver"],
           "CUDA Version                              : 12.4", "",
           "Attached GPUs                             : %d" % len(h.gpus)]
    for g in h.gpus:
        if g.lost_at is not None and g.lost_at <= t:
            out.append("Unable to determine the device handle for GPU%s: Unknown Error" % g.nvml_bdf[4:])
            continue
        r = c.gpu_reading(h, g, t)
        gen = c.gpu_gen(h, g)
        bits = r["reasons"]

        def act(b):
            return "Active" if bits & b else "Not Active"
        out += ["GPU %s" % g.nvml_bdf,
                "    Product Name                          : %s" % m["name"],
                "    Product Brand                         : NVIDIA",
                "    Product Architecture                  : %s" % ARCH[c.model],
                "    Persistence Mode                      : Enabled",
                "    Serial Number                         : 1653%09d" % (int(g.uuid[4:12], 16) % 10 ** 9),
                "    GPU UUID                              : %s" % g.uuid,
                "    Minor Number                          : %d" % g.index,
                "    GPU Reset Status",
                "        Reset Required                    : %s" % ("Yes" if g.remap_pending else "No"),
                "        Drain and Reset Recommended       : No",
                "    PCI",
                "        Bus                               : 0x%02X" % g.bus,
                "        Device                            : 0x00",
                "        Domain                            : 0x0000",
                "        Device Id                         : 0x%s10DE" % m["dev"].upper(),
                "        Bus Id                            : %s" % g.nvml_bdf,
                "        GPU Link Info",
                "            PCIe Generation",
                "                Max                       : %d" % m["gen"],
                "                Current                   : %d" % gen,
                "                Device Current            : %d" % gen,
                "                Device Max                : %d" % m["gen"],
                "                Host Max                  : %d" % m["gen"],
                "            Link Width",
                "                Max                       : 16x",
                "                Current                   : %dx" % g.width,
                "        Replays Since Reset               : %d" % g.replay.at(t),
                "        Replay Number Rollovers           : 0",
                "    Fan Speed                             : N/A",
                "    Performance State                     : %s" % ("P0" if not h.spare else "P0"),
                "    Clocks %s Reasons" % ("Throttle" if old else "Event"),
                "        Idle                              : %s" % act(IDLE),
                "        Applications Clocks Setting       : Not Active",
                "        SW Power Cap                      : %s" % act(SW_POWER),
                "        HW Slowdown                       : %s" % act(HW_SLOW),
                "            HW Thermal Slowdown           : %s" % act(HW_THERM),
                "            HW Power Brake Slowdown       : %s" % act(HW_BRAKE),
                "        Sync Boost                        : Not Active",
                "        SW Thermal Slowdown               : %s" % act(SW_THERM),
                "        Display Clock Setting             : Not Active",
                "    ECC Errors",
                "        Volatile",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % g.sbe.at(t),
                "            DRAM Uncorrectable            : %d" % g.dbe.at(t),
                "        Aggregate",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : %d" % (g.sbe.at(t) + g.sbe_agg_extra),
                "            DRAM Uncorrectable            : %d" % g.dbe.at(t),
                "    Retired Pages",
                "        Single Bit ECC                    : N/A",
                "        Double Bit ECC                    : N/A",
                "        Pending Page Blacklist            : N/A",
                "    Remapped Rows",
                "        Correctable Error                 : %d" % g.remap_cor.at(t),
                "        Uncorrectable Error               : %d" % g.remap_unc.at(t),
                "        Pending                           : %s" % ("Yes" if g.remap_pending else "No"),
                "        Remapping Failure Occurred        : No",
                "    Temperature",
                "        GPU Current Temp                  : %d C" % r["temp"],
                "        GPU Shutdown Temp                 : %d C" % m["shut"],
                "        GPU Slowdown Temp                 : %d C" % m["slow"],
                "        GPU Max Operating Temp            : %d C" % (m["slow"] - 2)]
        if old:
            out += ["    Power Readings",
                    "        Power Management                  : Supported",
                    "        Power Draw                        : %.2f W" % r["power"],
                    "        Power Limit                       : %.2f W" % r["limit"],
                    "        Default Power Limit               : %.2f W" % m["tdp"],
                    "        Enforced Power Limit              : %.2f W" % r["limit"],
                    "        Min Power Limit                   : 100.00 W",
                    "        Max Power Limit                   : %.2f W" % m["tdp"]]
        else:
            out += ["    GPU Power Readings",
                    "        Power Draw                        : %.2f W" % r["power"],
                    "        Current Power Limit               : %.2f W" % r["limit"],
                    "        Requested Power Limit             : %.2f W" % r["limit"],
                    "        Default Power Limit               : %.2f W" % m["tdp"],
                    "        Min Power Limit                   : 200.00 W",
                    "        Max Power Limit                   : %.2f W" % m["tdp"]]
        out += ["    Clocks",
                "        Graphics                          : %d MHz" % r["clock"],
                "        SM                                : %d MHz" % r["clock"],
                "        Memory                            : %d MHz" % m["mem"],
                "    Max Clocks",
                "        Graphics                          : %d MHz" % m["sm"],
                "        SM                                : %d MHz" % m["sm"],
                "        Memory                            : %d MHz" % m["mem"], ""]
    return "\n".join(out) + "\n"


def nvml_json(c, h):
    m = c.m
    t = c.now
    devs = []
    events = []
    for g in h.gpus:
        if g.lost_at is not None and g.lost_at <= t:
            devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bdf, "error": "GPU is lost"})
        else:
            r = c.gpu_reading(h, g, t)
            gen = c.gpu_gen(h, g)
            devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bdf, "name": m["name"],
                         "nvmlDeviceGetCurrPcieLinkGeneration": gen, "nvmlDeviceGetMaxPcieLinkGeneration": m["gen"],
                         "nvmlDeviceGetCurrPcieLinkWidth": g.width, "nvmlDeviceGetMaxPcieLinkWidth": 16,
                         "nvmlDeviceGetPcieReplayCounter": g.replay.at(t),
                         "nvmlDeviceGetTemperature": int(r["temp"]), "nvmlDeviceGetPowerUsage": int(r["power"] * 1000),
                         "nvmlDeviceGetEnforcedPowerLimit": int(r["limit"] * 1000),
                         "nvmlDeviceGetClockInfo": {"sm": r["clock"], "mem": m["mem"]},
                         "nvmlDeviceGetMaxClockInfo": {"sm": m["sm"], "mem": m["mem"]},
                         "nvmlDeviceGetCurrentClocksEventReasons": r["reasons"],
                         "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g.sbe.at(t), "uncorrected_volatile": g.dbe.at(t)},
                         "nvmlDeviceGetRemappedRows": {"corrected": g.remap_cor.at(t), "uncorrected": g.remap_unc.at(t),
                                                       "pending": g.remap_pending, "failure": False}})
        for (te, code) in g.xid_events:
            if c.before <= te <= t and g.nvml_event:
                events.append({"device": g.index, "type": "XidCriticalError", "data": code, "time": iso(te)})
    return jdump({"driver_version": m["driver"], "devices": devs, "events": events})


def lspci(c, h):
    out = []
    for n in h.nics:
        mx = GEN_LSPCI[5 if c.model != "A100" else 4]
        cur = GEN_LSPCI[n.gen]
        out += ["%s Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % n.lspci_bdf,
                "\tSubsystem: Mellanox Technologies Device 0026",
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM not supported" % (mx, n.max_width),
                "\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+",
                "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)" % (cur, "ok" if cur == mx else "downgraded", n.width,
                                                             "ok" if n.width == n.max_width else "downgraded"),
                "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
                "\tKernel driver in use: mlx5_core", "\tKernel modules: mlx5_core", ""]
    for g in h.gpus:
        if g.lost_at is not None and g.lost_at <= c.now:
            out += ["%s 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)" % (g.lspci_bdf, c.m["dev"]),
                    "\t!!! Unknown header type 7f", "\tKernel driver in use: nvidia", ""]
            continue
        mx = GEN_LSPCI[c.m["gen"]]
        cur = GEN_LSPCI[c.gpu_gen(h, g)]
        out += ["%s 3D controller: NVIDIA Corporation Device %s (rev a1)" % (g.lspci_bdf, c.m["dev"]),
                "\tSubsystem: NVIDIA Corporation Device 16c1",
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                "\t\tDevSta:\tCorrErr%s NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-" % ("+" if g.replay.at(c.now) else "-"),
                "\t\tLnkCap:\tPort #0, Speed %s, Width x16, ASPM L1, Exit Latency L1 <4us" % mx,
                "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
                "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)" % (cur, "ok" if cur == mx else "downgraded", g.width,
                                                             "ok" if g.width == 16 else "downgraded"),
                "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
                "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia", ""]
    return "\n".join(out) + "\n"


def ibstat(c, h):
    out = []
    for n in h.nics:
        st = n.state_now
        out += ["CA '%s'" % n.ibdev, "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.41.1000",
                "\tHardware version: 0", "\tNode GUID: 0x%016x" % (0x946dae0300000000 + n.bus * 7 + hash_small(c.id + n.ibdev)),
                "\tPort 1:", "\t\tState: %s" % ("Active" if st[0].endswith("ACTIVE") else "Down"),
                "\t\tPhysical state: %s" % st[1].split(": ")[1],
                "\t\tRate: %s" % n.rate.split(" ")[0], "\t\tLink layer: %s" % n.ll]
    return "\n".join(out) + "\n"


def hash_small(s):
    return int(hashlib.md5(s.encode()).hexdigest()[:6], 16)


def top(c, h):
    load = host_load(c, h, c.now)
    ncpu = 224 if c.model != "A100" else 128
    procs = []
    for g in h.gpus:
        procs.append(("python3", 100.0 + c.rng.uniform(0, 8), 1.9))
    procs.append(("pt_data_worker", 6.0 * c.gpn * 0.5 + c.rng.uniform(0, 5), 0.8))
    procs += h.top_extra
    procs.sort(key=lambda p: -p[1])
    busy = sum(p[1] for p in procs) / ncpu
    us = min(96.0, busy * 0.92)
    if h.psi_cpu_onset is not None and c.now >= h.psi_cpu_onset and h.psi_cpu_hot >= 20:
        us = 96.4
    sy = min(3.0, busy * 0.06)
    idle = max(0.0, 100 - us - sy - 0.4)
    g = _time.gmtime(c.now)
    up = (c.now - h.boot) // 86400
    out = ["top - %02d:%02d:%02d up %d days,  3:12,  2 users,  load average: %.2f, %.2f, %.2f" % (g.tm_hour, g.tm_min, g.tm_sec, up, load, load * 0.97, load * 0.9),
           "Tasks: 1187 total,   %d running, 1172 sleeping,   0 stopped,   0 zombie" % (len(procs)),
           "%%Cpu(s): %4.1f us, %4.1f sy,  0.0 ni, %4.1f id,  0.3 wa,  0.0 hi,  0.1 si,  0.0 st" % (us, sy, idle),
           "MiB Mem : 2063781.2 total, %9.1f free, %9.1f used, 1120512.4 buff/cache" % ((410233.5, 533035.3) if h.psi_mem < 5 else (9120.4, 934148.4)),
           "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1498211.0 avail Mem", "",
           "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for i, (cmd, cpu, mem) in enumerate(procs[:16]):
        out.append("%7d %-9s %3d %3d %7s %7s %6s %s %5.1f %5.1f %9s %s" % (
            20000 + 137 * i + hash_small(cmd) % 9000, "root" if cmd not in ("python3", "pt_data_worker") else "train",
            20, 0, "98.1g", "11.2g", "1.1g", "R" if cpu > 50 else "S", cpu, mem, "%d:%02d.%02d" % (int(cpu) * 3, i * 7 % 60, i), cmd))
    return "\n".join(out) + "\n"


def sel(c, h):
    out = []
    for i, (t, sensor, ev, st) in enumerate(sorted(h.sel)):
        g = _time.gmtime(int(t))
        out.append("%4x | %02d/%02d/%04d | %02d:%02d:%02d | %s | %s | %s" % (
            i + 1, g.tm_mon, g.tm_mday, g.tm_year, g.tm_hour, g.tm_min, g.tm_sec, sensor, ev, st))
    return "\n".join(out) + ("\n" if out else "")


def sdr_fan(c, h):
    out = []
    for i in range(6):
        bad = i in h.fans_bad
        rpm = 0 if bad else 8400 + 120 * ((i * 37 + hash_small(h.name)) % 9)
        out.append("%-16s | %02Xh | %-3s | 29.%d | %s" % ("FAN%d" % (i + 1), 0x30 + i, "cr" if bad else "ok", i + 1,
                                                      ("%d RPM" % rpm) if not bad else "0 RPM"))
    return "\n".join(out) + "\n"


def dmesg(c, h):
    ev = list(h.boot_events()) + list(h.events)
    ev.sort(key=lambda e: e[0])
    form = h.dmesg_form
    out = []
    seq = 1000
    for (t, text) in ev:
        up = t - h.boot
        us = int(round(up * 1e6))
        if form == "plain":
            out.append("[%5d.%06d] %s" % (us // 10 ** 6, us % 10 ** 6, text))
        elif form == "caller":
            out.append("[%5d.%06d] [ T%d] %s" % (us // 10 ** 6, us % 10 ** 6, 1900 + (seq % 300), text))
        elif form == "ctime":
            out.append("[%s] %s" % (ctime(t), text))
        elif form == "journal":
            out.append("%s %s kernel: %s" % (jtime(t), h.name, text))
        elif form == "kmsg":
            prio = 3 if ("Xid" in text or "error" in text.lower()) else 6
            out.append("%d,%d,%d,-;%s" % (prio, seq, us, text))
        seq += 1
    return "\n".join(out) + "\n"


def render_switch_cmds(c):
    for sw in c.switches:
        cmds = c.switch_cmds.get(sw["name"])
        if not cmds:
            continue
        for name, text in sorted(cmds.items()):
            put(c, "switches/%s/cmd/%s" % (sw["name"], name), text)


def render_all(c):
    c.files = {}
    render_incident(c)
    render_topology(c)
    render_steps(c)
    for t, line in train_lines(c):
        c.logs.setdefault("train.log", []).append((t, line))
    render_logs(c)
    if c.fmt["dcgm_metrics"]:
        render_dcgm(c)
    if c.fmt["node_metrics"]:
        render_node_metrics(c)
    if c.fmt["switch_metrics"]:
        render_switch_metrics(c)
    for h in c.hosts:
        if h.no_node_dir:
            continue
        render_node(c, h)
    render_switch_cmds(c)
    for rel in list(c.extra_files):
        c.files[rel] = c.extra_files[rel]
    for rel in c.remove_files:
        c.files.pop(rel, None)
    return c.files
