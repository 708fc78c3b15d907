"""Case definitions for the zenith set: each builds a fleet model, then applies one fault (or none) and decoys."""
import time as _t

DAY = 86400


def alert(name, labels, t, summary):
    lab = {"alertname": name, "severity": "warning"}; lab.update(labels)
    return {"status": "firing", "labels": lab, "annotations": {"summary": summary},
            "startsAt": _t.strftime("%Y-%m-%dT%H:%M:%SZ", _t.gmtime(t)), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.mon.internal:9090/graph?g0.expr=" + name, "fingerprint": "%016x" % (abs(hash_s(name + str(t))))}


def hash_s(s):
    v = 1469598103934665603
    for ch in s:
        v = ((v ^ ord(ch)) * 1099511628211) & 0xffffffffffffffff
    return v


def base_dmesg(c, h):
    b = h["boot"]
    kv = "5.4.0-150-generic (buildd@lcy02-amd64-010) (gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.1)) #167-Ubuntu SMP" if c.old_kernel else "5.15.0-105-generic (buildd@lcy02-amd64-007) (gcc 11.4.0) #115-Ubuntu SMP"
    h["dmesg"] += [(b + 1, "Linux version " + kv),
                   (b + 9, "nvidia: loading out-of-tree module taints kernel."),
                   (b + 11, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s" % c.driver)]
    for n in h["nics"]:
        h["dmesg"].append((b + 14, "mlx5_core %s: %s: Link up" % ("0000:%02x:00.0" % n["bus"], n["netdev"])))


def swcap(c, hn, gi, clk=1830):
    """Normal SW power cap on a busy GPU: at its limit, a little below max clock. Not a fault."""
    c.hmap[hn]["keep"] = True
    g = c.g(hn, gi); m = c.plim_of(g)
    g.update(reasons=4, clk=clk, power=int(m * 0.995), powv=0.35, reasons0=4, clk0=clk, basecap=True)


def old_xid(c, hn, gi, code=13, days=6):
    c.hmap[hn]["keep"] = True
    h = c.hmap[hn]; g = c.g(hn, gi)
    t = c.start - days * DAY + 3111
    msg = {13: "Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address",
           31: "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2a_b4000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
           48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0."}[code]
    h["boot"] = min(h["boot"], t - 3600)
    h["dmesg"].append((t, "NVRM: Xid (PCI:0000:%02x:00): %d, pid=88211, name=python3, %s" % (g["bus"], code, msg)))
    g["xid_old"] = code


def static_sbe(c, hn, gi, n=14):
    c.hmap[hn]["keep"] = True
    g = c.g(hn, gi); g.update(sbe0=n, sbe1=n, agg=n * 3)


def warm(c, hn, gi, temp=81):
    c.hmap[hn]["keep"] = True
    g = c.g(hn, gi); g.update(temp=temp)


def aer(c, hn, gi, n=3):
    c.hmap[hn]["keep"] = True
    h = c.hmap[hn]; g = c.g(hn, gi); g["aer"] = n
    for k in range(n):
        h["dmesg"].append((c.start + 300 + 700 * k, "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%02x:00.0" % (g["bus"] - 1, g["bus"])))
        h["dmesg"].append((c.start + 300 + 700 * k, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" % g["bus"]))


def fin(c):
    for h in c.hosts:
        base_dmesg(c, h)
    return c


def mk(Case, cid, seed, **kw):
    c = Case(cid, seed, **kw)
    c.plim_of = lambda g, c=c: g.get("plim", __import__("write_incidents").MODELS[c.model]["plim"])
    return c


def build_all(Case):
    cs = []
    H = lambda c, i: c.hosts[i]["name"]

    # 01 pcie_downtrain on a GPU
    c = mk(Case, "zn-01", 1, nhosts=6, naming="gpu-a%03d", dmesg="plain", title="Step time up ~13% since mid-morning on llm-34b",
           reported="Throughput dropped without a deploy. Someone reseated cables in rack r01 yesterday.", hostname_label="Hostname")
    h = H(c, 3); g = c.g(h, 5); g.update(gen=3, width=16, slow=1.22, pcie_replay=412)
    c.hmap[h]["dmesg"].append((c.fault_t - 30, "nvidia 0000:%02x:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at 0000:%02x:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (g["bus"], g["bus"] - 1)))
    for i in (0, 2, 4): swcap(c, H(c, i), i + 1)
    aer(c, H(c, 1), 2, 2); old_xid(c, H(c, 5), 3)
    c.truth = ("pcie_downtrain", "%s/gpu5" % h); cs.append(fin(c))

    # 02 pcie_downtrain on a NIC (RoCE), no compute column, spare host idle links
    c = mk(Case, "zn-02", 2, nhosts=4, spare=1, ll="Ethernet", naming="node%02d.dc2.internal", dmesg="T", compute_col=False,
           title="all-reduce bus bandwidth down, steps ~1.4x", reported="nccl-tests after the firmware rollout show lower busbw on the full job; single-node tests pass.",
           hostname_label="hostname", port_fmt="Ethernet%d")
    h = H(c, 2); n = c.n(h, 3); n.update(width=4, gen=5)
    c.job_comm = 2.2
    c.hmap[h]["dmesg"].append((c.start - 2 * 3600, "mlx5_core 0000:%02x:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x4 link at 0000:%02x:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (n["bus"], n["bus"] - 1)))
    c.fault_t = c.start
    for i in range(3): swcap(c, H(c, i), 2 * i)
    c.truth = ("pcie_downtrain", "%s/mlx5_3" % h); cs.append(fin(c))

    # 03 pfc storm originated by a host NIC (RoCE), every other NIC a victim
    c = mk(Case, "zn-03", 3, nhosts=8, ll="Ethernet", naming="h100-%02d", dmesg="journal", switch_data=True, compute_col=False,
           title="Training ~2.4x slower, switch alarms on the leaf", reported="Network team says the leaf is dropping; job owners saw no code change.")
    bad = H(c, 5); bn = c.n(bad, 2)
    for hh in c.hosts:
        for nn in hh["nics"]:
            nn["rxp0"] = 1200; nn["rxp1"] = 1200 + (9_400_000 if hh["leaf"] == c.hmap[bad]["leaf"] else 0) + hh["gpus"][0]["temp"]
            nn["txp0"] = 800; nn["txp1"] = 800 + 40
    bn.update(txp0=900, txp1=900 + 61_250_000, rxp1=1300, disc=2_400_000)
    c.job_comm = 5.0
    c.hmap[bad]["dmesg"].append((c.fault_t + 40, "mlx5_core 0000:%02x:00.0: mlx5e_pause_storm... TX pause storm detected on %s" % (bn["bus"], bn["netdev"])))
    c.alerts = [alert("SwitchPFCWatchdogStorm", {"instance": c.hmap[bad]["leaf"]}, c.fault_t + 300, "PFC watchdog storm on leaf")]
    swcap(c, H(c, 0), 3); warm(c, H(c, 6), 4)
    c.truth = ("pfc_pause_storm", "%s/%s" % (bad, bn["ib"])); cs.append(fin(c))

    # 04 pfc storm from a spine port: only switch-side counters show the origin
    c = mk(Case, "zn-04", 4, nhosts=32, gpn=8, nics=4, ll="Ethernet", naming="10-90-43-%d", dmesg="kmsg", switch_data=True,
           node_hosts=None, title="Job slowed ~2.2x around 08:20, nothing on the nodes", reported="No node alerts. NIC counters show received pauses everywhere on leaf-02.")
    c.hosts = c.hosts
    leaf2 = [hh for hh in c.hosts if hh["leaf"] == "leaf-02"]
    for hh in c.hosts:
        for nn in hh["nics"]:
            nn["rxp0"] = 500; nn["rxp1"] = 500 + (5_800_000 + 17 * nn["bus"] if hh["leaf"] == "leaf-02" else 2100); nn["txp0"] = nn["txp1"] = 300
    c.switch_origin = {("spine-02", "Ethernet8", "tx"): 31_000_000, ("spine-02", "Ethernet8", "rx"): 0,
                       ("leaf-02", "Ethernet264", "rx"): 31_000_000, ("leaf-02", "Ethernet264", "tx"): 0}
    c.job_comm = 4.5
    c.node_hosts = [H(c, i) for i in (0, 1, 16, 17, 18, 30)]
    for i in (0, 17): swcap(c, H(c, i), 1)
    c.truth = ("pfc_pause_storm", "spine-02/Ethernet8"); cs.append(fin(c))

    # 05 ecmp polarization on leaf-02
    c = mk(Case, "zn-05", 5, nhosts=32, nics=8, naming="gpu%04d.dc3.internal", switch_data=True, dmesg="T",
           title="Cross-rack all-reduce slow after network change", reported="Spine-03 was drained and returned during the maintenance window; since then steps ~1.8x.")
    c.uplink_share = {"leaf-02": [0.71, 0.11, 0.09, 0.09]}
    c.job_comm = 3.3; c.fault_t = c.start + 600
    c.node_hosts = [H(c, i) for i in (0, 5, 16, 20)]
    swcap(c, H(c, 16), 6); old_xid(c, H(c, 20), 2, 31, 9)
    c.truth = ("ecmp_hash_polarization", "leaf-02"); cs.append(fin(c))

    # 06 ecmp on leaf-01, steps gz without compute, A100 old driver
    c = mk(Case, "zn-06", 6, nhosts=24, nics=4, model="A100", driver="515.65.01", naming="a100-r%02d", switch_data=True,
           compute_col=False, gz=True, title="Throughput regression, only some jobs", reported="Nodes in rack 1 feel slow; reimaged two of them, no change.")
    c.uplink_share = {"leaf-01": [0.46, 0.44, 0.05, 0.05]}
    c.job_comm = 2.4
    c.node_hosts = [H(c, i) for i in (0, 3, 17)]
    swcap(c, H(c, 3), 2, clk=1350); static_sbe(c, H(c, 0), 7, 22)
    c.truth = ("ecmp_hash_polarization", "leaf-01"); cs.append(fin(c))

    # 07 link degradation: NIC at reduced rate with flaps; dmesg missing
    c = mk(Case, "zn-07", 7, nhosts=8, naming="gpu-b%03d", missing=("dmesg",), title="Intermittent slow steps, NCCL warnings",
           reported="dmesg collector failed on this run. Spikes every few minutes.")
    h = H(c, 4); n = c.n(h, 6); n.update(rate=200, sym=18_331, rcv_err=4_120, downed0=1, downed1=4)
    c.job_comm = 1.9
    c.extra_logs.append("%s:5511:5601 [6] NCCL INFO NET/IB : Got async event : port error" % h)
    c.extra_logs.append("%s:5511:5601 [6] NCCL INFO NET/IB : Got async event : port active" % h)
    for i in (1, 5): swcap(c, H(c, i), 0)
    c.n(H(c, 2), 1)["staticsym"] = 3
    c.truth = ("link_degradation", "%s/mlx5_6" % h); cs.append(fin(c))

    # 08 the large one: 288 hosts, link errors only in counters, static decoys elsewhere
    c = mk(Case, "zn-08", 8, nhosts=288, gpn=8, nics=8, naming="gpu%05d", compute_col=False, steps=12, gz=True,
           title="MFU 47% -> 41% over the night, no alerts", reported="Large pretrain; nothing in alerting. Checked the storage cluster: fine.",
           hostname_label="Hostname")
    bad = H(c, 201); n = c.n(bad, 4); n.update(sym=96_000, rcv_err=21_500)
    c.job_comm = 1.35
    for i in (7, 33, 90, 150, 260):
        c.n(H(c, i), i % 8)["staticsym"] = 2 + i % 9
    nh = [H(c, i) for i in (0, 7, 33, 90, 150, 199, 200, 201, 202, 260)]
    c.node_hosts = nh
    for i in (0, 150): swcap(c, H(c, i), 7)
    c.truth = ("link_degradation", "%s/mlx5_4" % bad); cs.append(fin(c))

    # 09 thermal throttle, one GPU
    c = mk(Case, "zn-09", 9, nhosts=6, naming="gpu-c%03d", port_fmt="swp%d", dmesg="plain", title="Steps ~1.3x slower since this morning",
           reported="Facilities replaced a CRAC filter in row C this morning.")
    h = H(c, 2); g = c.g(h, 5); g.update(temp=90, reasons=0x40 | 0x20, clk=1305, slow=1.45, thermv=0.8, temp0=63)
    warm(c, H(c, 4), 1, 82); swcap(c, H(c, 0), 6); swcap(c, h, 2)
    c.alerts = [alert("GPUHighTemp", {"Hostname": H(c, 4), "gpu": "1"}, c.start + 900, "GPU temperature above 80C")]
    c.truth = ("thermal_throttle", "%s/gpu5" % h); cs.append(fin(c))

    # 10 thermal, whole host: fans failed
    c = mk(Case, "zn-10", 10, nhosts=8, port_fmt="Eth1/%d", model="A100", driver="470.199.02", naming="dgx-%02d", dmesg="journal", old_kernel=True,
           title="Steps ~1.35x slower", reported="Happened after a BMC firmware push on some nodes.", hostname_label="Hostname")
    h = H(c, 6)
    for g in c.hmap[h]["gpus"]:
        g.update(temp=88 + g["index"] % 3, reasons=0x40, clk=1005 + 15 * g["index"], slow=1.55, thermv=0.7, temp0=64)
    c.hmap[h]["fans"] = [("FAN1", "ok", "9800 RPM"), ("FAN2", "ok", "9750 RPM"), ("FAN3", "cr", "0 RPM"), ("FAN4", "cr", "0 RPM"), ("FAN5", "ok", "9900 RPM")]
    c.hmap[h]["sel"] = [(c.fault_t - 120, "Fan #0x32", "Lower Critical going low", "Asserted"), (c.fault_t - 110, "Fan #0x33", "Lower Critical going low", "Asserted")]
    c.hmap[H(c, 1)]["keep"] = True
    c.hmap[H(c, 1)]["fans"] = [("FAN%d" % k, "ok", "9800 RPM") for k in range(1, 6)]
    c.hmap[H(c, 1)]["sel"] = [(c.start - 20 * DAY, "PS2 Status", "Power Supply AC lost", "Asserted"), (c.start - 20 * DAY + 60, "PS2 Status", "Power Supply AC lost", "Deasserted")]
    swcap(c, H(c, 2), 3, clk=1350)
    c.truth = ("thermal_throttle", h); cs.append(fin(c))

    # 11 power throttle, one GPU with a lowered enforced limit
    c = mk(Case, "zn-11", 11, nhosts=6, naming="gpu-d%03d", title="Training slower after node maintenance",
           reported="Several nodes were rebooted for a kernel patch yesterday.")
    h = H(c, 1); g = c.g(h, 4); g.update(plim=350000, power=349000, reasons=4, clk=1170, slow=1.5, powv=0.95, clk0=1170, basecap=True, reasons0=4)
    c.fault_t = c.start
    for (i, k) in ((0, 0), (2, 3), (3, 7), (5, 1)): swcap(c, H(c, i), k)
    c.truth = ("power_throttle", "%s/gpu4" % h); cs.append(fin(c))

    # 12 power throttle whole host: PSU lost -> power brake; nvml missing
    c = mk(Case, "zn-12", 12, nhosts=8, naming="xe9680-%02d", missing=("nvml",), dmesg="T", compute_col=True,
           title="Job ~1.6x slower since 08:2x", reported="nvml collector crashed on this capture.")
    h = H(c, 3)
    for g in c.hmap[h]["gpus"]:
        g.update(reasons=0x80 | 0x08, clk=870 + 10 * g["index"], power=260000, slow=1.95)
    c.hmap[h]["sel"] = [(c.fault_t - 15, "PS3 Status", "Power Supply AC lost", "Asserted"), (c.fault_t - 14, "PS4 Status", "Failure detected", "Asserted")]
    swcap(c, H(c, 0), 5); warm(c, H(c, 5), 2, 80)
    c.truth = ("power_throttle", h); cs.append(fin(c))

    # 13 HBM degradation with XID 63/94 and pending remap
    c = mk(Case, "zn-13", 13, nhosts=4, naming="gpu-e%03d", dmesg="plain", title="Loss spikes twice and a slowdown",
           reported="Loss spiked at 08:31 and 08:52; job kept running.")
    h = H(c, 2); g = c.g(h, 1); g.update(sbe0=4, sbe1=3_911, remap_c=3, remap0=0, pending=True, slow=1.07, xid_now=94, xid_t=1460)
    c.hmap[h]["dmesg"] += [(c.fault_t + 200, "NVRM: Xid (PCI:0000:%02x:00): 63, pid=51211, name=python3, Row Remapper: New row (0x00000000000a3b41) Marked for Remapping, reset gpu to activate." % g["bus"]),
                           (c.fault_t + 1460, "NVRM: Xid (PCI:0000:%02x:00): 94, pid=51211, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No" % g["bus"])]
    static_sbe(c, H(c, 0), 3, 9); swcap(c, H(c, 1), 6)
    c.truth = ("hbm_degradation", "%s/gpu1" % h); cs.append(fin(c))

    # 14 HBM degradation seen only in counters, 64 hosts, logs missing
    c = mk(Case, "zn-14", 14, nhosts=64, naming="gpu%03d-f", compute_col=False, missing=("logs",), steps=20,
           title="DCGM ECC dashboard busy; job ~3% slower", reported="Dashboard shows ECC on many GPUs (most counts are old).")
    h = H(c, 41); g = c.g(h, 6); g.update(sbe0=11, sbe1=26_400, remap_c=2, remap0=0, pending=True, slow=1.06)
    for i in (3, 9, 17, 40, 42, 55):
        static_sbe(c, H(c, i), i % 8, 20 + i)
    c.node_hosts = [H(c, i) for i in (3, 17, 40, 41, 42)]
    c.truth = ("hbm_degradation", "%s/gpu6" % h); cs.append(fin(c))

    # 15 GPU fell off the bus; smi file truncated
    c = mk(Case, "zn-15", 15, nhosts=8, naming="gpu-g%03d", dmesg="plain", title="Job hung then crashed with NCCL timeout",
           reported="Watchdog killed the job at 08:41. nvidia-smi capture on one node looks cut off.")
    h = H(c, 5); g = c.g(h, 2); g.update(lost=True, xid_now=79)
    c.hmap[h]["events"] = [{"device": 2, "type": "XidCriticalError", "data": 79, "time": _t.strftime("%Y-%m-%dT%H:%M:%SZ", _t.gmtime(c.fault_t + 61))}]
    c.hmap[h]["dmesg"] += [(c.fault_t + 61, "NVRM: Xid (PCI:0000:%02x:00): 79, pid=61822, name=python3, GPU has fallen off the bus." % g["bus"]),
                           (c.fault_t + 61, "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % g["bus"])]
    rk = c.rank_of[(h, 2)]
    c.extra_logs += ["[rank%d]:[E ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88121, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600043 milliseconds before timing out." % (r, r) for r in (0, 9, 31)]
    old_xid(c, H(c, 1), 4, 13, 12); swcap(c, H(c, 3), 4)
    c.truth = ("gpu_fell_off_bus", "%s/gpu2" % h); cs.append(fin(c))
    c.post["nodes/%s/cmd/nvidia-smi-q.txt" % H(c, 1)] = "\n==============NVSMI LOG==============\n\nTimestamp                                 : Sat\nDriver Version                            : 550.90.07\nCUDA Vers"

    # 16 GPU fell off the bus: nvml missing, kmsg dmesg, DCGM series stop
    c = mk(Case, "zn-16", 16, nhosts=4, naming="hgx-%d", dmesg="kmsg", missing=("nvml",), title="Job restarted by the scheduler",
           reported="Auto-restart kicked in; restarted job excluded nothing. Need to know if a node should be drained.")
    h = H(c, 0); g = c.g(h, 7); g.update(lost=True, xid_now=79)
    c.hmap[h]["dmesg"] += [(c.fault_t + 61, "NVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." % g["bus"])]
    warm(c, H(c, 2), 3, 80)
    c.truth = ("gpu_fell_off_bus", "%s/gpu7" % h); cs.append(fin(c))

    # 17 nvlink fault with XID 74
    c = mk(Case, "zn-17", 17, nhosts=4, naming="gpu-h%03d", dmesg="T", title="Intra-node all-reduce slow on the job",
           reported="Ran nccl-tests per node this morning; did not finish before the incident.")
    h = H(c, 1); g = c.g(h, 6); g.update(nvl0=0, nvl1=184_220, replay1=9_311, xid_now=74, xid_t=30)
    c.hmap[h]["nvlink_cmd"] = True
    c.hmap[h]["dmesg"].append((c.fault_t + 30, "NVRM: Xid (PCI:0000:%02x:00): 74, pid=3319, name=python3, NVLink: fatal error detected on link 2(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % g["bus"]))
    c.job_comm = 2.1
    swcap(c, H(c, 3), 0); aer(c, H(c, 2), 5, 1)
    c.truth = ("nvlink_fault", "%s/gpu6" % h); cs.append(fin(c))

    # 18 nvlink counters only, 48 hosts, static decoys
    c = mk(Case, "zn-18", 18, nhosts=48, naming="gpu-i%03d", compute_col=False, hostname_label="hostname",
           title="Throughput sag ~15%, no XIDs", reported="No XIDs anywhere. Several GPUs show old error counts on the dashboard.")
    h = H(c, 29); g = c.g(h, 3); g.update(nvl0=310, nvl1=3_120_000, replay1=52_000)
    for i in (2, 11, 30, 44):
        gg = c.g(H(c, i), (i * 3) % 8); gg.update(nvl0=40 + i, nvl1=40 + i)
    c.job_comm = 1.45
    c.node_hosts = [H(c, i) for i in (2, 11, 28, 29, 30)]
    for x in c.node_hosts: c.hmap[x]["nvlink_cmd"] = True
    c.truth = ("nvlink_fault", "%s/gpu3" % h); cs.append(fin(c))

    # 19 silent data corruption
    c = mk(Case, "zn-19", 19, nhosts=4, naming="gpu-j%03d", title="Eval loss drifting vs last run", reported="Same data and code as last week's run.")
    c.sdc = (H(c, 2), 4)
    swcap(c, H(c, 2), 4); old_xid(c, H(c, 0), 5, 31, 8); static_sbe(c, H(c, 1), 0, 5)
    c.truth = ("silent_data_corruption", "%s/gpu4" % H(c, 2)); cs.append(fin(c))

    # 20 SDC with explicit rank placement, shuffled gz rows
    c = mk(Case, "zn-20", 20, nhosts=6, naming="n%d.cl7", ranks_explicit=True, shuffle_rows=True, gz=True,
           title="Checkpoint validation mismatch", reported="Replica consistency check flagged the last checkpoint.")
    c.sdc = (H(c, 4), 0)
    warm(c, H(c, 4), 0, 79); swcap(c, H(c, 1), 2)
    c.truth = ("silent_data_corruption", "%s/gpu0" % H(c, 4)); cs.append(fin(c))

    # 21 host contention: rogue process; steps missing
    c = mk(Case, "zn-21", 21, nhosts=6, naming="gpu-k%03d", missing=("steps",), title="Job ~1.3x slower since 08:20",
           reported="Step logs were not captured. Security agent rollout started this morning across the fleet.")
    h = H(c, 3); c.hmap[h].update(load=211.4, load0=12.3, psi=61.2, hslow=1.5,
                                  top=[("python", 101.0), ("python", 99.0), ("av-scan", 5210.0), ("av-scan", 3990.0)])
    for g in c.hmap[h]["gpus"]: g["util"] = 0.66
    for i in (0, 1, 2, 4, 5):
        if i != 3: c.hmap[H(c, i)]["top"] = [("python", 100.0), ("av-scan", 12.0)]
    swcap(c, H(c, 1), 1)
    c.truth = ("host_contention", h); cs.append(fin(c))

    # 22 host contention via memory pressure, no compute column
    c = mk(Case, "zn-22", 22, nhosts=8, naming="gpu-l%03d", compute_col=False, title="Steps ~1.25x slower", reported="")
    h = H(c, 6); c.hmap[h].update(load=96.0, psi=38.5, hslow=1.4, load0=11.0,
                                  top=[("python", 100.0), ("kswapd0", 99.0), ("page-cache-warm", 1400.0)])
    for g in c.hmap[h]["gpus"]: g["util"] = 0.71
    c.extra_cmd[h] = {"pressure-memory.txt": "some avg10=44.10 avg60=39.87 avg300=30.02 total=918273645\nfull avg10=21.33 avg60=19.60 avg300=14.10 total=401928374\n"}
    for i in range(8):
        if i != 6: c.extra_cmd[H(c, i)] = {"pressure-memory.txt": "some avg10=0.00 avg60=0.01 avg300=0.00 total=1203344\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=402113\n"}
    swcap(c, H(c, 0), 2); old_xid(c, H(c, 6), 2, 13, 15)
    c.truth = ("host_contention", h); cs.append(fin(c))

    # 23 input pipeline stall
    c = mk(Case, "zn-23", 23, nhosts=8, naming="gpu-m%03d", title="GPU util dropped across the whole job", reported="New dataset shard layout went live last night.")
    c.job_slow = 2.1; c.job_slow_in_compute = False
    for hh in c.hosts:
        for g in hh["gpus"]: g["util"] = 0.45
        c.extra_cmd[hh["name"]] = {"pressure-io.txt": "some avg10=42.11 avg60=40.02 avg300=33.90 total=%d\nfull avg10=30.40 avg60=28.77 avg300=22.01 total=%d\n" % (771234000 + len(hh["name"]), 551002000)}
    c.extra_logs += ["%s [rank0] WARNING dataloader: batch not ready, waited %.2fs (prefetch queue empty)" % (_iso(c.fault_t + 60 * k), 1.7 + 0.03 * k) for k in range(6)]
    swcap(c, H(c, 2), 5); swcap(c, H(c, 6), 1)
    c.truth = ("input_pipeline_stall", "job"); cs.append(fin(c))

    # 24 input pipeline stall: no compute col; only node evidence + logs
    c = mk(Case, "zn-24", 24, nhosts=16, drop_ranks=True, naming="gpu%02d.ai.lan", compute_col=False, dmesg="journal", hostname_label="hostname",
           title="MFU halved; nodes look idle", reported="Storage team upgraded the object store gateway at 08:15.")
    c.job_slow = 1.9
    for hh in c.hosts:
        for g in hh["gpus"]: g["util"] = 0.5
    c.extra_logs += ["%s [rank0] data_loader.py:212 fetch shard s3://corpus/v7/shard-%05d.tar took %.1fs (retries=2)" % (_iso(c.fault_t + 90 * k), 1100 + k, 14.2 + k) for k in range(5)]
    c.node_hosts = [H(c, i) for i in (0, 5, 11)]
    warm(c, H(c, 5), 7, 80)
    c.truth = ("input_pipeline_stall", "job"); cs.append(fin(c))

    # 25 nccl misconfiguration: one NIC of eight, from step 1
    c = mk(Case, "zn-25", 25, nhosts=8, naming="gpu-n%03d", compute_col=True, title="New run is 2.6x slower than the previous run of the same model",
           reported="Moved the job to the new launcher template. Same nodes as the previous run.")
    c.fault_t = c.start - 3600; c.job_comm = 5.5
    c.nccl_env = [("NCCL_IB_HCA", "mlx5_0"), ("NCCL_IB_TIMEOUT", "22")]; c.used_nics = [0]
    for hh in c.hosts:
        for nn in hh["nics"]:
            nn["share"] = 7.2 if nn["ib"] == "mlx5_0" else 0.0
    swcap(c, H(c, 4), 6)
    c.truth = ("nccl_misconfiguration", "job"); cs.append(fin(c))

    # 26 nccl misconfiguration on RoCE: two of eight rails
    c = mk(Case, "zn-26", 26, nhosts=12, naming="roce-%02d", ll="Ethernet", compute_col=False, dmesg="T",
           title="Scaling efficiency poor on new cluster", reported="Bring-up of cluster B. nccl-tests on 2 nodes were fine with default env.")
    c.fault_t = c.start - 7200; c.job_comm = 3.2
    c.nccl_env = [("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"), ("NCCL_IB_GID_INDEX", "3"), ("NCCL_IB_TC", "106")]; c.used_nics = [0, 1]
    for hh in c.hosts:
        for nn in hh["nics"]:
            nn["share"] = 3.6 if nn["ib"] in ("mlx5_0", "mlx5_1") else 0.0
            nn["rxp0"] = 100; nn["rxp1"] = 100 + (41_000 if nn["share"] else 0); nn["txp0"] = nn["txp1"] = 20
    c.node_hosts = [H(c, i) for i in (0, 3, 7)]
    swcap(c, H(c, 3), 3)
    c.truth = ("nccl_misconfiguration", "job"); cs.append(fin(c))

    # 27 healthy: spare host idle links, warm GPU, few AER, SW power cap everywhere
    c = mk(Case, "zn-27", 27, nhosts=4, spare=1, naming="gpu-p%03d", ranks_explicit=True, title="Node flagged by PCIe link check",
           reported="Automated check flagged a host with links at Gen1; please confirm if the job is affected.")
    for hh in c.hosts[:4]:
        for g in hh["gpus"]: swcap(c, hh["name"], g["index"], clk=1815 + g["index"] * 5)
    warm(c, H(c, 1), 3, 81); aer(c, H(c, 2), 6, 3)
    c.alerts = [alert("PCIeLinkDegraded", {"Hostname": H(c, 4), "gpu": "0"}, c.start + 120, "PCIe link speed below max")]
    c.truth = ("healthy", None); cs.append(fin(c))

    # 28 healthy: power violation alert on a capped GPU, old XID, static ECC
    c = mk(Case, "zn-28", 28, nhosts=6, naming="gpu-q%03d", dmesg="plain", title="Power violation alert on a training node",
           reported="Alert fired at 07:15; job owners ask whether to drain the node.")
    for i in range(6): swcap(c, H(c, i), i % 8, clk=1800 + 10 * i)
    c.g(H(c, 3), 3)["powv"] = 0.6
    old_xid(c, H(c, 3), 3, 48, 11); static_sbe(c, H(c, 3), 3, 31)
    c.alerts = [alert("GPUPowerViolation", {"Hostname": H(c, 3), "gpu": "3"}, c.start + 700, "Power violation time increasing")]
    c.truth = ("healthy", None); cs.append(fin(c))

    # 29 healthy: job restart from checkpoint (gap, rerun steps), old link flap
    c = mk(Case, "zn-29", 29, nhosts=8, naming="gpu-r%03d", dmesg="journal", title="Throughput dip and step counter went backwards",
           reported="Dashboard shows steps repeating and a gap around 08:05.")
    c.hmap[H(c, 2)]["keep"] = True
    c.n(H(c, 2), 5).update(downed0=1, downed1=1, staticsym=6)
    c.hmap[H(c, 2)]["dmesg"].append((c.start - 5 * DAY, "mlx5_core 0000:%02x:00.0: %s: Link down" % (c.n(H(c, 2), 5)["bus"], c.n(H(c, 2), 5)["netdev"])))
    warm(c, H(c, 6), 2, 82); swcap(c, H(c, 1), 1)
    c.restart = True
    c.truth = ("healthy", None); cs.append(fin(c))

    # 30 healthy RoCE with normal pause/CNP activity and a slight noise dip
    c = mk(Case, "zn-30", 30, nhosts=8, naming="rc-%02d", ll="Ethernet", switch_data=True, compute_col=False, hostname_label="hostname",
           dmesg="kmsg", missing=("boot",), title="Is the fabric pausing us? PFC counters non-zero", reported="Network dashboard shows PFC and ECN counters moving on all ports.")
    for hh in c.hosts:
        for nn in hh["nics"]:
            nn["rxp0"] = 10_000; nn["rxp1"] = 10_000 + 2_400 + nn["bus"]; nn["txp0"] = 500; nn["txp1"] = 540
            nn["fec_cmd"] = True; nn["fec_c"] = 3_100_000 + 977 * nn["bus"] + len(hh["name"])
    for i in (0, 4): swcap(c, H(c, i), 2)
    warm(c, H(c, 5), 6, 80)
    c.truth = ("healthy", None); cs.append(fin(c))
    return cs


def _iso(t):
    return _t.strftime("%Y-%m-%dT%H:%M:%SZ", _t.gmtime(t))
