"""Fault, decoy and naming helpers used by cases.py."""
from fleet import Counter, HW_BRAKE, HW_SLOW, HW_THERM, SW_POWER, SW_THERM, jtime
import time as _time


# ------------------------------------------------------------------ naming schemes
def short(prefix):
    return lambda i: "%s%03d" % (prefix, 17 + i * 3)


def fqdn(dc):
    return lambda i: "gpu%d.%s.internal" % (1018 + i, dc)


def iplike(a, b, c0):
    return lambda i: "%d-%d-%d-%d" % (a, b, c0 + i // 200, 100 + (i * 7) % 150)


def rackslot():
    return lambda i: "r%02d-s%02d" % (3 + i // 4, 1 + (i % 4) * 3)


def hgx(model):
    return lambda i: "hgx-%s-%02d.prod.example" % (model.lower(), i + 1)


# ------------------------------------------------------------------ helpers
def log(c, name, t, text):
    c.logs.setdefault(name, []).append((t, text))


def stamp(t):
    return _time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(int(t))) + ",%03d" % int((t % 1) * 1000)


def glog_ts(t):
    g = _time.gmtime(int(t))
    return "%02d%02d %02d:%02d:%02d.%09d" % (g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec, int((t % 1) * 1e9))


def set_slow(g, slow, onset):
    g.slow, g.slow_onset = slow, onset


# ------------------------------------------------------------------ GPU faults
def thermal_gpu(c, h, g, onset, hw=True, temp_add=29.0):
    g.temp_add = temp_add
    g.clock = int(c.m["sm"] * (0.68 if hw else 0.78))
    g.reasons = (HW_THERM | HW_SLOW) if hw else SW_THERM
    g.therm_viol = 0.55e9
    set_slow(g, c.m["sm"] / g.clock, onset)


def thermal_host(c, h, onset):
    for g in h.gpus:
        g.temp_add = 27.0 + c.rng.uniform(0, 4)
        g.clock = int(c.m["sm"] * c.rng.uniform(0.70, 0.76))
        g.reasons = HW_THERM | HW_SLOW
        g.therm_viol = 0.6e9
        set_slow(g, c.m["sm"] / g.clock, onset)
    h.fans_bad = [2, 3]
    h.sel = [(h.boot + 30, "System Event #0x83", "Timestamp Clock Sync", "Asserted"),
             (onset - 95, "Fan #0x32", "Lower Critical going low", "Asserted"),
             (onset - 94, "Fan #0x33", "Lower Critical going low", "Asserted"),
             (onset - 40, "Fan #0x32", "Lower Non-recoverable going low", "Asserted"),
             (onset + 60, "Temperature #0x21", "Upper Critical going high", "Asserted")]


def power_gpu(c, h, g, onset, limit_w):
    g.power_limit = limit_w
    g.power_cap = limit_w
    g.clock = int(c.m["sm"] * 0.74)
    g.reasons = SW_POWER
    g.power_viol = 0.8e9
    set_slow(g, c.m["sm"] / g.clock, onset)


def power_host(c, h, onset):
    for g in h.gpus:
        g.clock = int(c.m["sm"] * c.rng.uniform(0.52, 0.56))
        g.reasons = HW_BRAKE | HW_SLOW
        g.power_viol = 0.9e9
        g.power_cap = c.m["tdp"] * 0.45
        set_slow(g, c.m["sm"] / g.clock, onset)
    h.sel = [(h.boot + 30, "System Event #0x83", "Timestamp Clock Sync", "Asserted"),
             (onset - 3, "Power Supply #0x64", "Failure detected", "Asserted"),
             (onset - 2, "Power Supply #0x63", "Redundancy Lost", "Asserted"),
             (onset - 1, "Power Unit #0x01", "Power Capacity Limited", "Asserted")]


def pcie_gpu(c, h, g, onset, gen=None, width=None, slow=1.22, boot_msg=True):
    if gen:
        g.gen = gen
    if width:
        g.width = width
    set_slow(g, slow, onset)
    if boot_msg:
        gg = gen or c.m["gen"]
        ww = width or 16
        per = {3: 7.877, 4: 15.754, 5: 31.508}
        avail = per[gg] * ww
        full = per[c.m["gen"]] * 16
        h.events.append((h.boot + 4.2, "pci %s: %.3f Gb/s available PCIe bandwidth, limited by %s x%d link at 0000:%02x:01.0 (capable of %.3f Gb/s with %s x16 link)"
                         % (g.sys_bdf, avail, {3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}[gg], ww, g.bus - 2, full,
                            {4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}[c.m["gen"]])))


def hbm_crash(c, h, g, t_err, rank):
    g.sbe = Counter(3, extra=0.9, onset=t_err - 1500)
    g.dbe = Counter(0, jumps=[(t_err, 2)])
    g.remap_unc = Counter(0, jumps=[(t_err + 1, 1)])
    g.remap_cor = Counter(1, jumps=[(t_err - 900, 1), (t_err - 300, 1)])
    g.remap_pending = True
    g.xid_events = [(t_err - 900, 63), (t_err - 300, 63), (t_err, 48), (t_err + 0.5, 63)]
    for te, code in g.xid_events:
        if code == 63:
            h.events.append((te, "NVRM: Xid (%s): 63, pid=%d, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate." % (g.xid_tag, 88100 + g.index)))
        else:
            h.events.append((te, "NVRM: Xid (%s): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%x partition 3, subpartition 1." % (g.xid_tag, 0x7fffa8860 + g.bus)))
    c.hang_at = t_err
    log(c, "rank%d.log" % rank, t_err + 0.2, "[rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered" % rank)
    log(c, "rank%d.log" % rank, t_err + 0.2, "[rank%d]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect." % rank)


def hbm_slow(c, h, g, onset):
    g.sbe = Counter(12, extra=2.4, onset=onset)
    g.remap_cor = Counter(2, jumps=[(onset + 600, 1), (onset + 1500, 1), (onset + 2500, 1)])
    g.remap_pending = True
    set_slow(g, 1.09, onset)


def fell_off(c, h, g, t, rank, newer=False):
    g.lost_at = t
    c.hang_at = t
    g.xid_events = [(t, 79)]
    if newer:
        h.events += [(t, "NVRM: The NVIDIA GPU %s" % g.sys_bdf),
                     (t + 0.00001, "NVRM: (PCI ID: 10de:%s) installed in this system has" % c.m["dev"]),
                     (t + 0.00002, "NVRM: fallen off the bus and is not responding to commands."),
                     (t + 0.13, "NVRM: GPU %s: GPU has fallen off the bus." % g.sys_bdf)]
    else:
        h.events += [(t - 0.02, "pcieport 0000:%02x:01.0: AER: Uncorrected (Fatal) error received: %s" % (g.bus - 2, "0000:%02x:01.0" % (g.bus - 2))),
                     (t, "NVRM: GPU at PCI:0000:%02x:00: %s" % (g.bus, g.uuid)),
                     (t + 0.00001, "NVRM: GPU Board Serial Number: 1653%09d" % (int(g.uuid[4:12], 16) % 10 ** 9)),
                     (t + 0.00002, "NVRM: Xid (%s): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." % g.xid_tag),
                     (t + 0.00003, "NVRM: GPU %s: GPU has fallen off the bus." % g.sys_bdf)]
    tw = t + 600
    seq = 91234
    if tw < c.t1:
        for r in range(min(c.nranks, 8)):
            if r == rank:
                continue
            log(c, "train.log", tw + 0.01 * r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=600000) ran for 600044 milliseconds before timing out."
                % (r, glog_ts(tw + 0.01 * r), r, seq))


def nvlink(c, h, g, onset, links, xid=True, rate=3.5):
    g.nvl_crc = Counter(0, extra=rate, onset=onset)
    g.nvl_replay = Counter(0, extra=rate * 0.4, onset=onset)
    g.nvl_recovery = Counter(0, jumps=[(onset + 300 * i, 1) for i in range(1, 6)])
    g.nvl_bad_links = links
    h.nvlink_e = True
    if xid:
        for i in range(3):
            te = onset + 5 + 900 * i
            g.xid_events.append((te, 74))
            h.events.append((te, "NVRM: Xid (%s): 74, pid=%d, name=python3, NVLink: fatal error detected on link %d(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % (g.xid_tag, 77120 + g.index, links[0])))
    c.comm_factor.append((onset, 1.55))


# ------------------------------------------------------------------ network faults
def nic_extra(n, key, rate, onset, base=None):
    old = n.c.get(key)
    b = base if base is not None else (old.base if old else 0)
    n.c[key] = Counter(b, rate=old.rate if old else 0.0, extra=rate, onset=onset)
    if old:
        n.c[key].ref = old.ref


def pfc_nic(c, h, n, onset):
    n.c["tx_prio3_pause"] = Counter(1200, extra=2600.0, onset=onset)
    n.c["tx_prio3_pause_duration"] = Counter(3900, extra=2600.0 * 105, onset=onset)
    n.c["tx_pause_storm_warning_events"] = Counter(0, jumps=[(onset + 20, 1), (onset + 1400, 1), (onset + 2900, 1)])
    n.c["rx_out_of_buffer"] = Counter(0, extra=310.0, onset=onset)
    n.c["rx_discards_phy"] = Counter(0, extra=55.0, onset=onset)
    n.c["out_of_buffer"] = Counter(2, extra=310.0, onset=onset)
    for oh in c.job_hosts:
        for on in oh.nics:
            if on is n or on.switch != n.switch:
                continue
            on.c["rx_prio3_pause"] = Counter(c.rng.randint(300, 3000), extra=c.rng.uniform(120, 260), onset=onset)
            on.c["rx_prio3_pause_duration"] = Counter(on.c["rx_prio3_pause"].base * 3, extra=on.c["rx_prio3_pause"].extra * 60, onset=onset)
            on.c["np_cnp_sent"] = Counter(c.rng.randint(10 ** 4, 10 ** 6), extra=c.rng.uniform(50, 90), onset=onset)
    c.comm_factor.append((onset, 2.3))


def pfc_table(c, leaf, rx_of, tx_of):
    """SONiC `show pfc counters`: Rx = pauses the switch received on the port (= host tx), Tx = sent (= host rx)."""
    rows = []
    for h in c.hosts:
        for n in h.nics:
            if n.switch == leaf:
                rows.append((int(n.port[8:]), n.port, rx_of(n), tx_of(n)))
    rows.sort()
    out = []
    for title, idx in (("Port Rx", 2), ("Port Tx", 3)):
        out.append("%11s  %s" % (title, "  ".join("%10s" % ("PFC%d" % i) for i in range(8))))
        out.append("-----------  " + "  ".join("-" * 10 for _ in range(8)))
        for r in rows:
            vals = [0] * 8
            vals[3] = r[idx]
            out.append("%11s  %s" % (r[1], "  ".join("%10s" % format(v, ",") for v in vals)))
        out.append("")
    return "\n".join(out)


def pfcwd_table(c, entries):
    out = ["      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
           "-------------  -----------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for q, st, det, res, txd in entries:
        out.append("%13s  %11s  %25s  %12s  %12s  %17s  %17s" % (q, st, "%d/%d" % (det, res), "0/%d" % txd, "0/0", "0/%d" % txd, "0/0"))
    return "\n".join(out) + "\n"


def ifcounters(c, leaf, rows):
    hdr = "      IFACE    STATE        RX_OK     RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR        TX_OK     TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR"
    out = [hdr, "-----------  -------  -----------  ---------  ---------  --------  --------  --------  -----------  ---------  ---------  --------  --------  --------"]
    for (port, rxok, rxbps, rxerr, txok, txbps, txdrp) in rows:
        out.append("%11s  %7s  %11s  %9s  %9s  %8s  %8s  %8s  %11s  %9s  %9s  %8s  %8s  %8s" % (
            port, "U", format(rxok, ","), "%.2f GB/s" % (rxbps / 1e9), "%.2f%%" % (rxbps * 8 / 4e11 * 100), "0", "0", "0",
            format(txok, ","), "%.2f GB/s" % (txbps / 1e9), "%.2f%%" % (txbps * 8 / 4e11 * 100), "0", format(txdrp, ","), "0"))
    return "\n".join(out) + "\n"


def link_flaps(c, h, n, onset, flaps, ib=True, journal_msgs=True):
    n.c["symbol_error"] = Counter(0, extra=1.8, onset=onset)
    n.c["port_rcv_errors"] = Counter(0, extra=0.9, onset=onset)
    n.c["link_error_recovery"] = Counter(0, jumps=[(t, 1) for t in flaps])
    n.c["link_downed"] = Counter(0, jumps=[(t, 1) for t in flaps])
    n.carrier = Counter(2, jumps=[(t, 2) for t in flaps])
    n.c["local_ack_timeout_err"] = Counter(1, extra=0.05, onset=onset)
    if not ib:
        n.c["link_down_events_phy"] = Counter(0, jumps=[(t, 1) for t in flaps])
        n.c["rx_symbol_err_phy"] = Counter(0, extra=1.8, onset=onset)
        n.c["rx_crc_errors_phy"] = Counter(0, extra=0.9, onset=onset)
        n.c["fec_corrected"] = Counter(10 ** 6, rate=40.0, extra=9000.0, onset=onset)
        n.c["fec_corrected"].ref = c.t0 - 7200
        n.c["fec_uncorrectable"] = Counter(0, extra=1.1, onset=onset)
        h.fec = True
    if journal_msgs:
        for t in flaps:
            h.events.append((t, "mlx5_core %s %s: Port: 1 Link DOWN" % (n.sys_bdf, n.ibdev)))
            h.events.append((t + 7.4, "mlx5_core %s %s: Port: 1 Link INIT" % (n.sys_bdf, n.ibdev)))
            h.events.append((t + 7.9, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n.sys_bdf, n.ibdev)))
    c.comm_factor.append((onset, 1.7))


# ------------------------------------------------------------------ host / job faults
def contention(c, h, onset, procs, psi_hot=38.0, load_hot=None, slow=1.28, mem=False):
    for g in h.gpus:
        set_slow(g, slow * (1 + c.rng.uniform(-0.02, 0.02)), onset)
    h.psi_cpu_onset = onset
    h.psi_cpu_hot = psi_hot
    h.load_hot = load_hot or (h.load * 7.5)
    h.top_extra = procs
    if mem:
        h.psi_mem = 31.5


def all_hosts(c, **kw):
    for h in c.hosts:
        for k, v in kw.items():
            setattr(h, k, v)
