"""The incidents.  Each function builds one fleet model and sets its fault, decoys and presentation."""
from fleet import Case, nz, val, iso
from kit import fleet, swcap, throttle, old_xid, aer_few, static_ecc, nccl_init, train_log, DAY

BASE = 1793583600  # 2026-11-02T01:40:00Z
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def alert(name, sev, labels, summary, t):
    lb = {"alertname": name, "severity": sev}
    lb.update(labels)
    return {"status": "firing", "labels": lb, "annotations": {"summary": summary}, "startsAt": iso(t),
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus.hpc.internal:9090/graph?g0.expr=%s" % name,
            "fingerprint": "%016x" % (abs(hash(name)) % 2 ** 64 if False else (len(name) * 0x9e3779b97f4a7c15) % 2 ** 64)}


def ib_names(fmt, n, start=1):
    return [fmt % (start + i) for i in range(n)]


# ---------------------------------------------------------------- thermal
@case
def dr01(C):
    C.gz = {"job/steps.csv", "metrics/dcgm"}
    names = ib_names("gpu-a%03d", 16, 17)
    hs = fleet(C, names, nd=names[4:7], port_fmt="1/{}")
    swcap(C, hs, 0.5)
    h, g = hs[5], hs[5]["gpus"][3]
    throttle(C, h, g, 1245, 0x40 | 0x8, temp=88, power=455)
    old_xid(C, hs[6], hs[6]["gpus"][1], 13, 9)
    hs[4]["gpus"][6]["temp"] = 79  # warm, no reason
    C.dcgm.update(reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", label="hostname", extra=("viol",))
    C.title = "llm-34b step time up ~40% since 02:10, no job errors"
    C.reported = "Throughput dropped mid-run. Nothing in the NCCL logs. Two nodes had firmware updated last week."
    C.truth = ("thermal_throttle", "%s/gpu3" % h["name"])
    C.hard = "SW-power-cap decoys on half the GPUs, a warm GPU with no reason, an old Xid 13"


@case
def dr02(C):
    names = ib_names("dgx%03d", 8, 41)
    hs = fleet(C, names, model="A100", driver="470.182.03", nd=names[1:5], dstyle="T", kernel_old=True, port_fmt="1/{}")
    h = hs[2]
    for g in h["gpus"]:
        throttle(C, h, g, 1080 - 15 * (g["idx"] % 3), 0x20 | 0x40 | 0x8, temp=86 + g["idx"] % 3, power=300)
    h["fans"] = [("FAN1", 11040, "ok"), ("FAN2", ("s", 10980, 0, C.T0 - 300), ("s", "ok", "cr", C.T0 - 300)),
                 ("FAN3", 11100, "ok"), ("FAN4", ("s", 11060, 0, C.T0 - 300), ("s", "ok", "cr", C.T0 - 300)),
                 ("FAN5", 11000, "ok"), ("FAN6", 10940, "ok")]
    h["sel"] = [(C.T0 - 310, "Fan #0x31", "Lower Critical going low", "Asserted"),
                (C.T0 - 305, "Fan #0x33", "Lower Critical going low", "Asserted"),
                (C.S - 12 * DAY, "Power Supply #0x60", "Power Supply AC lost", "Deasserted")]
    for x in hs[1:5]:
        x["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "sel", "fan")
    swcap(C, [hs[0], hs[1], hs[3]], 0.4)
    C.dcgm.update(reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", label="Hostname", extra=("viol",))
    C.gz_all_cmd = True
    C.title = "ViT-g training: iteration time up ~20% since 02:09"
    C.reported = "Rack r02 had a PDU swap yesterday. Job restarted fine after that. Now slow again."
    C.alerts = [alert("GPUTempHigh", "warning", {"instance": h["name"]}, "GPU temperature above 85C", C.T0 + 120)]
    C.truth = ("thermal_throttle", h["name"])
    C.hard = "every GPU of one host throttles: name the host, not a GPU; old PSU event; A100 470 driver field names"


# ---------------------------------------------------------------- power
@case
def dr03(C):
    names = ib_names("hgx-r%02d-n01", 12, 1)
    hs = fleet(C, names, nd=[names[i] for i in (2, 3, 7)], dstyle="journal", port_fmt="1/{}")
    swcap(C, hs, 0.7)
    h = hs[7]
    for g in h["gpus"]:
        throttle(C, h, g, 1095, 0x80 | 0x8, temp=58, power=290)
    h["sel"] = [(C.T0 - 20, "Power Supply #0x62", "Failure detected", "Asserted"),
                (C.T0 - 19, "Power Supply #0x62", "Power Supply AC lost", "Asserted"),
                (C.T0 - 18, "Power Unit #0x70", "Redundancy Lost", "Asserted")]
    h["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "sel")
    C.dcgm.update(reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", label="Hostname", file="dcgm.om", extra=("viol",))
    C.gz = {"metrics/"}
    C.title = "pretrain-70b: samples/s down about a third after 02:10"
    C.reported = "Power draw on row 3 looks lower than usual on the dashboard. Facilities did maintenance on the busway."
    C.truth = ("power_throttle", h["name"])
    C.hard = "all GPUs of one host in HW power brake; most GPUs elsewhere sit at the normal SW power cap"


@case
def dr04(C):
    names = ib_names("gpu%04d.dc3.internal", 8, 1018)
    hs = fleet(C, names, model="H200", driver="570.86.15", nd=names[2:6], dstyle="T", port_fmt="1/{}")
    swcap(C, hs, 0.6)
    h, g = hs[3], hs[3]["gpus"][6]
    g["limit"] = ("s", 700, 350, C.T0)
    g["deflimit"] = 700
    throttle(C, h, g, 1110, 0x4, temp=49, power=348)
    C.ev(h, C.T0 - 4, "nvidia-smi[%d]: Power limit for GPU 00000000:%02X:00.0 was set to 350.00 W from 700.00 W." % (88123, g["bus"]))
    C.dcgm.update(reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", label="hostname", extra=("viol",))
    C.steps.update(compute_col=False)
    C.title = "moe-8x22b: tokens/s down from 3.9k to 2.6k per GPU at 02:10"
    C.reported = "A tuning script was run across the partition around that time; most nodes show power capping on the dashboard, which is normal for us."
    C.truth = ("power_throttle", "%s/gpu6" % h["name"])
    C.hard = "the same SW power cap reason as the decoys, but a halved limit and a 44% clock drop; no compute_s column"


# ---------------------------------------------------------------- pcie
@case
def dr05(C):
    C.gz = {"metrics/"}
    names = ib_names("nid%06d", 10, 1201)
    hs = fleet(C, names, nd=[names[1], names[4], names[9]], spares=[names[9]], dstyle="kmsg", port_fmt="1/{}")
    swcap(C, hs[:9], 0.5)
    h, g = hs[4], hs[4]["gpus"][2]
    g["gen"], g["width"] = ("s", 5, 3, C.S - 2 * DAY), ("s", 16, 8, C.S - 2 * DAY)
    g["faulty"] = True
    g["replay"] = C.ctr(14, 0.0, 0.6)
    g["slow"] = C.step(1.0, 1.32)  # reload after restart at T0 exposes host<->device transfers
    C.steps["job_start"] = C.T0 - 40
    C.M0 = C.S - 1800
    C.ev(h, h["boot"] + 11.2, "pci 0000:%02x:00.0: 63.012 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:%02x:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (g["bus"], g["bus"] - 2))
    aer_few(C, hs[1], hs[1]["gpus"][5], 3)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "resumed run is 30% slower than before the maintenance restart"
    C.reported = "Job was requeued at 02:10 after node maintenance. Spare nid001210 shows GPUs at Gen1 in the health check."
    C.truth = ("pcie_downtrain", "%s/gpu2" % h["name"])
    C.hard = "spare host's idle GPUs at Gen1 (power saving) as decoy; raw /dev/kmsg dmesg; downtrain predates the window"


@case
def dr06(C):
    names = ["10-90-43-%d" % (140 + i) for i in range(8)]
    hs = fleet(C, names, ll="Ethernet", nnic=4, nd=names[:4], leaf_fmt="sw-leaf{:d}", port_fmt="Ethernet{}",
               per_leaf=4, rate_Bps=3.0e9, nic_names="mlx5_{j}", dstyle="T")
    for i, h in enumerate(hs):
        h["ip"] = "10.90.43.%d" % (140 + i)
    h = hs[2]
    n = h["nics"][1]
    n["gen"], n["width"] = ("s", 5, 5, C.T0), ("s", 16, 4, C.T0)
    L = n["link"]
    L["bytes_ab"] = C.ctr(4e12, 3.0e9, -2.0e9)
    L["bytes_ba"] = C.ctr(4e12, 3.0e9, -2.0e9)
    n["ctr"]["pci_stalled"] = C.ctr(1200, 0.01, 900.0)
    C.ev(h, C.T0 + 2, "mlx5_core %s: mlx5_pcie_event:299:(pid 0): PCIe slot advertised sufficient power (75W)." % ("0000:%02x:00.0" % n["bus"]))
    C.steps.update(comm=C.step(1.0, 2.3), compute_col=True)
    for x in hs:
        for g in x["gpus"]:
            g["nvlinks"] = 18
    swcap(C, hs, 0.5)
    C.node_metrics.update(instance="ip")
    C.snmp.update(on=True)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "RoCE partition: all-reduce bus bandwidth halved since 02:10"
    C.reported = "nccl-tests on these 8 nodes show 180 GB/s instead of 370. No link flaps in the switch log."
    C.truth = ("pcie_downtrain", "%s/%s" % (h["name"], n["ibdev"]))
    C.hard = "NIC's PCIe link retrained to x4 at runtime; node_exporter instance labels are IPs"


# ---------------------------------------------------------------- pfc
def roce_pfc_fabric(C, names, nd, per_leaf=4, nnic=4):
    hs = fleet(C, names, ll="Ethernet", nnic=nnic, nd=nd, leaf_fmt="leaf{:02d}", port_fmt="Ethernet{}",
               per_leaf=per_leaf, rate_Bps=3.0e9, spine="spine{:02d}", uplinks=4, dstyle="journal")
    for h in hs:
        h["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ethtool", "ibstat", "fec")
    return hs


def storm_victims(C, hs, leaf, rate_rx=4000.0):
    for h in hs:
        for n in h["nics"]:
            if n["switch"] == leaf and h["in_job"]:
                L = n["link"]
                L["pause_ba"] = C.ctr(int(500 + 300 * abs(nz(n["ibdev"], h["name"]))), 0.02, rate_rx)
                n["ctr"]["local_ack_timeout_err"] = C.ctr(3, 0, 0.002)


@case
def dr07(C):
    names = ["roce-%02d" % i for i in range(1, 9)]
    hs = roce_pfc_fabric(C, names, nd=names[3:8])
    h = hs[5]
    n = h["nics"][2]
    L = n["link"]
    L["pause_ab"] = C.ctr(40, 0.0, 21000.0)
    n["ctr"].update(out_of_buffer=C.ctr(10, 0, 3000.0), rx_discards_phy=C.ctr(0, 0, 120.0),
                    storm_warn=C.ctr(0, 0, 0.01), pci_stalled=C.ctr(0, 0, 52000.0), buf_thres=C.ctr(100, 0, 800.0))
    storm_victims(C, [x for x in hs if x is not h], n["switch"], 2600.0)
    for m in h["nics"]:
        if m is not n:
            m["link"]["pause_ba"] = C.ctr(50, 0.0, 2500.0)
    C.switches[n["switch"]]["ports"][n["sport"]]["pfcwd"] = ("stormed", "3/2", "0/0", "0/0")
    C.sonic = {n["switch"]: ("pfc", "pfcwd", "ifc"), "leaf01": ("pfc",)}
    C.steps.update(comm=C.step(1.0, 3.1))
    swcap(C, hs, 0.6)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.snmp.update(on=True)
    C.title = "Two RoCE racks: step time 1.5x since 02:10"
    C.reported = "Started after a kernel update rollout on part of the partition."
    C.logs["nccl.log"] = ["%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE [RO]; OOB bond0:10.3.0.%d<0>" % (x["name"], 3000 + i, 3100 + i, 0, 11 + i) for i, x in enumerate(hs)]
    C.truth = ("pfc_pause_storm", "%s/%s" % (h["name"], n["ibdev"]))
    C.hard = "every job NIC on the leaf receives pauses; the one that transmits them is out of receive buffer (PCIe stalls)"


@case
def dr08(C):
    names = ["roce-%02d" % i for i in range(11, 19)] + ["svc-ingest-01"]
    hs = roce_pfc_fabric(C, names, nd=names[:4], per_leaf=3)
    # the service host shares leaf02 with job hosts, outside the job, no node data
    ext = hs[8]
    ext["in_job"] = False
    ext["nd"] = False
    ext["node_exporter"] = False
    for g in ext["gpus"]:
        g["busy"] = False
    xn = ext["nics"][0]
    leaf = xn["switch"]
    xn["link"]["pause_ab"] = C.ctr(0, 0, 30000.0)
    storm_victims(C, hs[:8], leaf, 3500.0)
    # leaf02 backs up toward the spines as well
    for sname, s in C.switches.items():
        for p, P in s["ports"].items():
            if sname == leaf and P["peer"][0] == "sw":
                P["link"]["pause_ab"] = C.ctr(0, 0, 1800.0)
    C.switches[leaf]["ports"][xn["sport"]]["pfcwd"] = ("stormed", "5/4", "0/0", "0/0")
    C.sonic = {leaf: ("pfc", "pfcwd", "ifc"), "spine01": ("pfc",), "leaf01": ("pfc",)}
    C.dcgm["hosts"] = hs[:8]
    C.steps.update(comm=C.step(1.0, 2.8), compute_col=False)
    swcap(C, hs[:8], 0.5)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "Job ~40%% slower; every NIC on %s shows pause frames" % leaf
    C.reported = "All of our NICs on %s are being paused. We have no access to the other tenant's nodes." % leaf
    C.truth = ("pfc_pause_storm", "%s/%s" % (leaf, xn["sport"]))
    C.hard = "origin is a host-facing port whose host is outside the job with no node data; job NICs are only victims"
    C.missing_desc = "no node data for the originating host; node data only for 4 of 8 job hosts"


@case
def dr09(C):
    names = ["c%03d" % i for i in range(1, 17)]
    hs = roce_pfc_fabric(C, names, nd=[names[0], names[5], names[12]], per_leaf=4, nnic=2)
    # spine02's port toward leaf03 originates pauses
    tgt = None
    for p, P in sorted(C.switches["spine02"]["ports"].items()):
        if P["peer"][1] == "leaf03" and tgt is None:
            tgt = p
            P["link"]["pause_ba"] = C.ctr(0, 0, 26000.0)
    storm_victims(C, hs, "leaf03", 3100.0)
    C.sonic = {"spine02": ("pfc", "pfcwd"), "leaf03": ("pfc", "ifc"), "leaf01": ("pfc",), "spine01": ("pfc",)}
    C.steps.update(comm=C.step(1.0, 2.2), compute_col=True)
    swcap(C, hs, 0.5)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.snmp.update(on=True)
    C.title = "Cross-rack all-reduce slow since 02:10; rack 3 hosts show pauses"
    C.reported = "Hosts behind leaf03 see heavy RX pause counts. Host NICs look healthy otherwise."
    C.truth = ("pfc_pause_storm", "spine02/%s" % tgt)
    C.hard = "pause origin at a spine port; follow pauses leaf to spine from switch-side counters"
    C.missing_desc = "node data for 3 of 16 hosts only"


# ---------------------------------------------------------------- ecmp
def imbalance(C, leaf, hot=0, factor=(1.85, 0.4)):
    ups = [(p, P) for p, P in sorted(C.switches[leaf]["ports"].items()) if P["peer"][0] == "sw"]
    for i, (p, P) in enumerate(ups):
        L = P["link"]
        base = val(L["bytes_ab"], C.M0)
        r = (L["bytes_ab"][2])
        f = factor[0] if i == hot else factor[1]
        L["bytes_ab"] = C.ctr(base, r, r * (f - 1))
        P["discards"] = C.ctr(0, 0, 900.0) if i == hot else 0
        P["speed"] = 400e9
    return ups[hot][0]


@case
def dr10(C):
    C.gz = {"metrics/dcgm"}
    names = ["gpu-b%03d" % i for i in range(1, 17)]
    hs = fleet(C, names, ll="Ethernet", nnic=4, nd=names[:2] + names[8:10], leaf_fmt="tor-{:02d}", port_fmt="Ethernet{}",
               per_leaf=8, rate_Bps=5.0e9, spine="agg-{:02d}", uplinks=4, dstyle="T")
    hot = imbalance(C, "tor-02", 1)
    C.snmp.update(on=True)
    C.sonic = {"tor-02": ("ifc", "pfc"), "tor-01": ("ifc",)}
    C.steps.update(comm=C.step(1.0, 2.0, C.S + 600))
    C.T0 = C.S + 600
    swcap(C, hs, 0.6)
    for h in hs[8:]:
        for n in h["nics"]:
            n["ctr"]["np_ecn_marked"] = C.ctr(100, 0.5, 3000.0)
            n["ctr"]["rp_cnp_handled"] = C.ctr(100, 0.5, 2800.0)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "After network change window, 16-node job ~25% slower"
    C.reported = "Network team changed the hashing profile on the aggregation layer at 01:50. Host links all show 400G up."
    C.truth = ("ecmp_hash_polarization", "tor-02")
    C.hard = "one uplink of tor-02 carries most traffic with discards while its peers idle; CNPs on hosts are a symptom"


@case
def dr11(C):
    names = ["n%03d.cluster.local" % i for i in range(1, 25)]
    hs = fleet(C, names, ll="Ethernet", nnic=8, nd=[names[3], names[14]], leaf_fmt="l{:d}", port_fmt="Ethernet{}",
               per_leaf=8, rate_Bps=2.5e9, spine="s{:d}", uplinks=8, dstyle="journal", model="H200", driver="550.127.05")
    imbalance(C, "l2", 5, (2.9, 0.25))
    C.snmp.update(on=True)
    C.steps.update(comm=C.step(1.0, 2.4), log_every=20)
    swcap(C, hs, 0.6)
    h = hs[14]
    g = h["gpus"][4]
    throttle(C, h, g, 1890, 0x40 | 0x8, temp=86, t0=C.T0 + 900, t1=C.T0 + 1200)  # brief, real, too small
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("viol",))
    C.alerts = [alert("GPUThermalSlowdown", "warning", {"Hostname": h["name"], "gpu": "4"}, "HW thermal slowdown active", C.T0 + 910)]
    C.title = "24-node run: step time up 30% since 02:10"
    C.reported = "Alert on n015 GPU4 fired during the slowdown. Please check the node."
    C.truth = ("ecmp_hash_polarization", "l2")
    C.hard = "a real but brief 5% thermal slowdown on one GPU (alert fires) coexists; it lasts 5 minutes and costs 5% on one rank, the job is 30% slower for an hour"


# ---------------------------------------------------------------- link degradation
@case
def dr12(C):
    C.gz_all_cmd = True
    names = ib_names("gpu-q%03d", 16, 1)
    hs = fleet(C, names, model="A100", driver="515.65.01", nd=names[5:9], dstyle="journal", port_fmt="1/{}",
               kernel_old=True)
    h = hs[6]
    n = h["nics"][3]
    n["rate"] = C.step("200 Gb/sec (4X HDR)", "100 Gb/sec (2X HDR)")
    n["ctr"].update(symbol_error=C.ctr(2, 0, 0.9), link_downed=C.ctr(0, 0, 1.0 / 900), link_error_recovery=C.ctr(1, 0, 1 / 300.0))
    n["link"]["err_a"] = C.ctr(0, 0, 0.4)
    for k in range(5):
        tt = C.T0 + k * 900 + 17
        C.ev(h, tt, "mlx5_core 0000:%02x:00.0 %s: Port: 1 Link DOWN" % (n["bus"], n["ibdev"]))
        C.ev(h, tt + 6, "mlx5_core 0000:%02x:00.0 %s: Port: 1 Link ACTIVE" % (n["bus"], n["ibdev"]))
    C.steps.update(comm=C.step(1.0, 2.6))
    static_ecc(hs[5]["gpus"][2], 41, (1, 0, False, False))
    static_ecc(hs[7]["gpus"][0], 7)
    g2 = hs[8]["gpus"][5]
    throttle(C, hs[8], g2, 1335, 0x40 | 0x8, temp=85, t0=C.T0 + 2400, t1=C.T0 + 2700)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", extra=("ecc",))
    C.truncate = ["nodes/%s/cmd/dmesg.txt" % hs[5]["name"]]
    hs[6]["collected_keys"] = ("before", "now")  # boot time not recorded; its kernel log has wall-clock prefixes
    C.title = "HDR partition: training ~40% slower, link alarms intermittent"
    C.reported = "Saw a GPU thermal event on gpu-q009 in Grafana. Also ECC counts on two GPUs."
    C.truth = ("link_degradation", "%s/%s" % (h["name"], n["ibdev"]))
    C.hard = "a real 5-minute thermal slowdown and static ECC decoys coexist; link flaps and half rate on one HCA"
    C.missing_desc = "one host's dmesg is truncated"


@case
def dr13(C):
    names = ["roce-%02d" % i for i in range(21, 29)]
    hs = roce_pfc_fabric(C, names, nd=names[2:8], per_leaf=4, nnic=4)
    # the leaf03/leaf02 side: uplink of leaf02 receives corrupted frames from its spine
    up = [(p, P) for p, P in sorted(C.switches["leaf02"]["ports"].items()) if P["peer"][0] == "sw"][2]
    L = up[1]["link"]
    L["err_a"] = C.ctr(3, 0, 85.0)
    up[1]["rx_drp"] = C.ctr(0, 0, 85.0)
    for h in hs[4:8]:
        for n in h["nics"]:
            n["ctr"]["out_of_sequence"] = C.ctr(20, 0, 11.0)
            n["ctr"]["packet_seq_err"] = C.ctr(4, 0, 2.5)
            n["ctr"]["local_ack_timeout_err"] = C.ctr(0, 0, 0.3)
    C.sonic = {"leaf02": ("ifc", "pfc"), "leaf01": ("ifc",), "spine01": ("ifc",), "spine02": ("ifc",)}
    C.steps.update(comm=C.step(1.0, 1.9))
    swcap(C, hs, 0.5)
    aer_few(C, hs[2], hs[2]["gpus"][0], 2)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "Retransmissions on rack 2 hosts; job ~20% slower"
    C.reported = "Hosts on leaf02 show out-of-sequence and retransmit counters climbing. Host FEC counters look normal."
    C.truth = ("link_degradation", "leaf02/%s" % up[0])
    C.hard = "errors counted only at a switch uplink's receive side; host symptoms are retransmits, host FEC clean"


# ---------------------------------------------------------------- hbm
@case
def dr14(C):
    names = ib_names("dgx%03d", 8, 101)
    hs = fleet(C, names, model="A100", driver="525.147.05", nd=names[2:6], dstyle="journal", port_fmt="1/{}", nnic=4)
    h, g = hs[4], hs[4]["gpus"][5]
    g["faulty"] = True
    g["sbe"] = C.ctr(12, 0, 0.35)
    g["remap"] = ("s", (2, 0, False, False), (3, 1, True, False), C.T0 + 1500)
    t1 = C.T0 + 1500
    g["xid"] = ("s", 0, 94, t1)
    C.ev(h, C.T0 + 310, "NVRM: Xid (PCI:0000:%02x:00): 63, pid=%d, Row Remapper: New row marked for remapping, reset gpu to activate." % (g["bus"], 33120))
    C.ev(h, t1, "NVRM: Xid (PCI:0000:%02x:00): 94, pid=33120, name=python3, Contained: FB DED (0x4, 0x0). physAddr: 0x3f6a2c1e0 RST: No, D-RST: No" % g["bus"])
    h["nvml_events"] = [(5, "XidCriticalError", 63, C.T0 + 310), (5, "XidCriticalError", 94, t1)]
    C.steps.update(restart=(t1, t1 + 420, 180), compute_col=True)
    g["slow"] = C.step(1.0, 1.12)
    static_ecc(hs[2]["gpus"][1], 3, (1, 0, False, False))
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", extra=("ecc",))
    swcap(C, hs, 0.4)
    C.logs["train-rank37.log"] = ["[%s] RuntimeError: CUDA error: uncorrectable ECC error encountered" % iso(t1 + 2),
                                  "[%s] torchrun: restarting worker group (attempt 1/3)" % iso(t1 + 30),
                                  "[%s] resumed from latest checkpoint" % iso(t1 + 420)]
    C.title = "Job crashed once and resumed; iteration time creeping up"
    C.reported = "One crash with a CUDA error, auto-restarted. Not sure which node."
    C.truth = ("hbm_degradation", "%s/gpu5" % h["name"])
    C.hard = "journalctl prefixes; restart gap and rerun step numbers in steps.csv; static ECC decoy on another GPU"


@case
def dr15(C):
    # the large one: 272 hosts, 2176 ranks; node data for the suspect and peers only
    names = ["nid%05d" % (4000 + i) for i in range(272)]
    C.mstep = 600
    suspect = 137
    nd = [names[i] for i in (0, 64, 136, 137, 138, 200, 271)]
    hs = fleet(C, names, nd=nd, per_leaf=8, leaf_fmt="qm9700-{:03d}", port_fmt="1/{}", nnic=8, dstyle="T")
    for i in (5, 40, 91, 136, 222, 250):
        static_ecc(hs[i]["gpus"][i % 8], 200 + 37 * i, (2, 0, False, False))
    h, g = hs[suspect], hs[suspect]["gpus"][6]
    g["faulty"] = True
    g["sbe"] = C.ctr(96, 0, 1.6)
    g["remap"] = ("s", (1, 0, False, False), (4, 0, True, False), C.T0 + 2000)
    g["slow"] = C.step(1.0, 1.21)
    for k in range(8):
        hs[suspect + 1]["gpus"][k]["temp"] = 74
    swcap(C, hs, 0.5)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("ecc",))
    C.gz = {"metrics/", "job/steps.csv"}
    C.steps.update(log_every=50, compute_col=False, loss=False)
    C.node_metrics.update(on=False)
    C.write_ranks = False
    C.title = "2176-GPU run: ~14% slower since 02:10"
    C.reported = "No XIDs in the fleet dashboard. A few GPUs have had ECC counts for months."
    C.truth = ("hbm_degradation", "%s/gpu6" % h["name"])
    C.hard = "only a climbing correctable-ECC counter among 2176 GPUs with old static counts; no XID, no compute_s"
    C.missing_desc = "node data for 7 of 272 hosts; no node_exporter metrics; no rank table (implicit placement)"


# ---------------------------------------------------------------- fell off bus
@case
def dr16(C):
    C.gz = {"metrics/"}
    names = ib_names("gpu-h%03d", 8, 201)
    hs = fleet(C, names, nd=names[:5], dstyle="kmsg", port_fmt="1/{}")
    h, g = hs[2], hs[2]["gpus"][4]
    t = C.T0 + 300
    g["lost_at"] = t
    g["faulty"] = True
    g["xid"] = ("s", 0, 79, t)
    C.ev(h, t, "NVRM: GPU at PCI:0000:%02x:00: %s\nNVRM: GPU Board Serial Number: %s\nNVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\nNVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % (g["bus"], g["uuid"], g["serial"], g["bus"], g["bus"]))
    h["nvml_events"] = [(4, "XidCriticalError", 79, t)]
    C.steps.update(hang_at=t)
    r = [x for x in C.rank_map() if x[1] is h and x[2] is g][0][0]
    C.logs["torch-watchdog.log"] = ["[rank%d]:[E%s 632 ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88412, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600021 milliseconds before timing out." % (k, "1102", k) for k in range(0, 64, 9) if k != r]
    swcap(C, hs, 0.5)
    old_xid(C, hs[5], hs[5]["gpus"][0], 31, 6)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "Training hung at 02:15, NCCL watchdog timeouts on many ranks"
    C.reported = "All ranks timed out in the same all-reduce."
    C.truth = ("gpu_fell_off_bus", "%s/gpu4" % h["name"])
    C.hard = "raw /dev/kmsg records; old Xid 31 on another host; watchdog lines on every rank"


@case
def dr17(C):
    names = ["gpu%04d.dc3.internal" % i for i in range(2001, 2013)]
    hs = fleet(C, names, model="H100", driver="535.129.03", nd=names[3:7], dstyle="T", port_fmt="1/{}")
    h, g = hs[5], hs[5]["gpus"][1]
    t = C.T0 + 200
    g["lost_at"] = t
    g["faulty"] = True
    C.steps.update(hang_at=t, compute_col=False)
    C.missing = ["nodes/%s/cmd/dmesg.txt" % h["name"], "nodes/%s/before/cmd/dmesg.txt" % h["name"],
                 "nodes/%s/nvidia-smi-nvlink-e.txt" % h["name"]]
    C.logs["nccl.log"] = ["%s:%d:%d [%d] transport/net_ib.cc:101 NCCL WARN NET/IB : Got async event : local catastrophic error" % (h["name"], 61022, 61090, 1) if False else
                          "%s:%d:%d [%d] NCCL INFO [Service thread] Connection closed by localRank 1" % (hs[4]["name"], 70211, 70350, 0)]
    swcap(C, hs, 0.5)
    for x in hs[3:7]:
        old_xid(C, x, x["gpus"][2], 43, 12)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
    C.title = "Job stopped making progress at 02:13"
    C.reported = "dmesg collection failed on one node (collector timed out)."
    C.truth = ("gpu_fell_off_bus", "%s/gpu1" % h["name"])
    C.hard = "no kernel log from the faulty host; NVML error, sysfs Unknown/63, lspci rev ff and stopped DCGM series remain"
    C.missing_desc = "dmesg of the faulty host (collector did not run)"


# ---------------------------------------------------------------- nvlink
@case
def dr18(C):
    names = ib_names("gpu-n%03d", 8, 301)
    hs = fleet(C, names, nd=names[:4], dstyle="T", port_fmt="1/{}")
    h, g = hs[1], hs[1]["gpus"][7]
    g["faulty"] = True
    g["bad_link"] = 11
    g["nvl"] = dict(crc=C.ctr(0, 0, 41.0), replay=C.ctr(0, 0, 9.0), recovery=C.ctr(0, 0, 0.05))
    t = C.T0 + 60
    g["xid"] = ("s", 0, 74, t)
    C.ev(h, t, "NVRM: Xid (PCI:0000:%02x:00): 74, pid=59612, name=python3, NVLink: fatal error detected on link 11(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % g["bus"])
    for x in hs[:4]:
        x["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "nvlink")
    hs[3]["gpus"][2]["nvl"] = dict(crc=412, replay=12, recovery=1)
    C.steps.update(comm=C.step(1.0, 1.7))
    swcap(C, hs, 0.5)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("nvlink",))
    C.title = "Tensor-parallel job slower since 02:11"
    C.reported = "Step time up ~15%. One node was swapped into the pool this morning."
    C.truth = ("nvlink_fault", "%s/gpu7" % h["name"])
    C.hard = "old static NVLink counts on another GPU; the live one climbs with Xid 74"


@case
def dr19(C):
    C.gz_all_cmd = True
    names = ["hgx-%02d-%02d" % (1 + i // 8, 1 + i % 8) for i in range(64)]
    nd = [names[i] for i in (0, 9, 17, 18, 33, 50)]
    hs = fleet(C, names, nd=nd, per_leaf=4, port_fmt="1/{}", dstyle="plain", driver="535.161.08")
    for i in (3, 9, 22, 40, 58):
        hs[i]["gpus"][i % 8]["nvl"] = dict(crc=100 + 17 * i, replay=3 + i % 5, recovery=0)
    h, g = hs[17], hs[17]["gpus"][2]
    g["faulty"] = True
    g["bad_link"] = 4
    g["nvl"] = dict(crc=C.ctr(6, 0, 55.0), replay=C.ctr(1, 0, 14.0), recovery=C.ctr(0, 0, 1 / 400.0))
    C.steps.update(comm=C.step(1.0, 1.55), compute_col=False, log_every=20)
    for x in hs:
        if x["nd"]:
            x["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "nvlink")
    swcap(C, hs, 0.6)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("nvlink",))
    C.gz = {"metrics/", "job/steps"}
    C.title = "512-GPU job: 13% slower, no errors anywhere"
    C.reported = "No XIDs, no NCCL warnings. Some GPUs have had NVLink CRC counts since install."
    C.truth = ("nvlink_fault", "%s/gpu2" % h["name"])
    C.hard = "counters only: NVLink replay/CRC growth on one GPU among static decoy counts; no XID, no compute_s"


# ---------------------------------------------------------------- sdc
@case
def dr20(C):
    C.gz = set()
    names = ib_names("gpu-s%03d", 8, 1)
    hs = fleet(C, names, nd=names[2:5], port_fmt="1/{}")
    h, g = hs[3], hs[3]["gpus"][0]
    g["sdc_at"] = C.T0 + 400
    C.steps.update(checksum=True)
    swcap(C, hs, 0.5)
    hs[2]["gpus"][3]["temp"] = 80
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "Loss curve diverging slowly; no crashes"
    C.reported = "Eval loss worse than the previous run at the same step. Hardware checks green on the dashboard."
    C.truth = ("silent_data_corruption", "%s/gpu0" % h["name"])
    C.hard = "no error anywhere; one rank's replica checksum disagrees from 02:17"


@case
def dr21(C):
    names = ["10-91-2-%d" % (10 + i) for i in range(6)]
    hs = fleet(C, names, model="A100", driver="470.199.02", nd=names[2:6], dstyle="plain", kernel_old=True, port_fmt="1/{}", nnic=4)
    h, g = hs[4], hs[4]["gpus"][6]
    g["sdc_at"] = C.M0 + 300
    C.steps.update(checksum=True, restart=(C.T0, C.T0 + 600, 40), order="rank", drop_ranks=(3, 17))
    aer_few(C, hs[4], hs[4]["gpus"][2], 4)
    old_xid(C, hs[1], hs[1]["gpus"][4], 45, 20)
    swcap(C, hs, 0.5)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", extra=("ecc",))
    C.gz = {"job/steps.csv", "metrics/"}
    C.title = "Grad-norm spikes; restart from checkpoint did not help"
    C.reported = "Restarted at 02:10 from the last checkpoint; divergence continues."
    C.truth = ("silent_data_corruption", "%s/gpu6" % h["name"])
    C.hard = "rows ordered by rank, some ranks missing some steps, restart gap and reruns; AER decoy on the same host"


# ---------------------------------------------------------------- host contention
@case
def dr22(C):
    C.gz = {"metrics/"}
    names = ib_names("gpu-c%03d", 8, 11)
    hs = fleet(C, names, nd=names[:5], port_fmt="1/{}")
    h = hs[3]
    h["slow"] = C.step(1.0, 1.38)
    h["cpu"].update(some10=C.step(0.6, 71.3), some60=C.step(0.5, 68.9), some300=C.step(0.4, 55.1),
                    total=("c", 9.1e8, 2000.0, 650000.0, C.T0, C.M0), us=C.step(24.0, 96.4))
    h["load1"] = C.step(18.0, 231.0)
    h["psi_ctr"] = ("c", 9.1e8, 2000.0, 650000.0, C.T0, C.M0)
    h["cpu"]["procs"] = [(C.T0 - 10, (77120 + k, "root", 20, 0, "2.1g", "1.6g", "12m", "R", 99.0 - k * 0.3, 0.1, "41:%02d.11" % k, "xz")) for k in range(24)]
    for x in hs[:5]:
        x["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "pressure", "top")
    C.node_metrics.update(cpu=True)
    swcap(C, hs, 0.5)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "64-GPU job ~30% slower since 02:10"
    C.reported = "A log rotation change went out to the compute nodes at 02:00."
    C.truth = ("host_contention", h["name"])
    C.hard = "all 8 ranks of one host arrive late with no GPU reason; CPU pressure and top on that host only"


@case
def dr23(C):
    names = ["nid%06d" % (3100 + i) for i in range(8)]
    hs = fleet(C, names, nd=names[4:8], port_fmt="1/{}", dstyle="journal", model="A100", driver="515.105.01", nnic=4)
    h = hs[6]
    h["slow"] = C.step(1.0, 1.5)
    h["mem"] = dict(some=C.step(0.0, 48.2), full=C.step(0.0, 31.7))
    h["cpu"].update(free=C.step(802113.0, 1204.0), swap=C.step(0.0, 8150.0), wa=C.step(0.2, 18.5))
    C.ev(h, C.T0 + 900, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0")
    C.ev(h, C.T0 + 900.2, "Out of memory: Killed process 88213 (pt_data_worker) total-vm:91733332kB, anon-rss:60233120kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:120804kB oom_score_adj:0")
    h["cpu"]["procs"] = [(C.T0 - 60, (90000 + k, "u2231", 20, 0, "120.4g", "96.1g", "1.1g", "D", 12.0, 4.7, "3:11.02", "postproc")) for k in range(6)]
    for x in hs:
        x["cmds"] = ("nvidia-smi-q", "lspci-vv", "dmesg", "ibstat", "pressure", "top")
    C.missing = ["metrics/node.om"]
    C.node_metrics.update(on=False)
    swcap(C, hs, 0.4)
    hs[2]["gpus"][7]["temp"] = 81
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
    C.title = "Throughput down a quarter; one OOM message in the logs"
    C.reported = "Someone may have run a post-processing job on a compute node."
    C.truth = ("host_contention", h["name"])
    C.hard = "memory pressure and swap on one host; node_exporter series not recorded"
    C.missing_desc = "no node_exporter metrics"


# ---------------------------------------------------------------- input pipeline
@case
def dr24(C):
    names = ib_names("gpu-d%03d", 16, 1)
    hs = fleet(C, names, nd=names[:3] + [names[9]], port_fmt="1/{}", dstyle="T")
    C.steps.update(data_wait=C.step(0.0, 3.4))
    for h in hs:
        for g in h["gpus"]:
            g["util"] = C.step(97, 58)
            g["tensor"] = C.step(0.46, 0.27)
            g["power"] = C.step(val(g["power"], C.M0), int(val(g["power"], C.M0) * 0.62))
    swcap(C, hs, 0.5)
    h, g = hs[9], hs[9]["gpus"][2]
    throttle(C, h, g, 1920, 0x4, power=699)
    g["faulty"] = False
    hs[1]["gpus"][4]["temp"] = 82
    C.logs["dataloader.log"] = ["[%s] WARNING dataloader: rank %d waited %.1fs for batch (prefetch queue empty)" % (iso(C.T0 + 30 * k), (k * 37) % 128, 3.1 + 0.3 * nz("dl", k)) for k in range(1, 60, 3)]
    C.logs["train.log"] = train_log(C)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "MFU dropped from 48% to 30% at 02:10, every node looks alike"
    C.reported = "Storage team migrated the dataset bucket to a new tier last night."
    C.truth = ("input_pipeline_stall", "job")
    C.hard = "job-wide, no straggler: every rank waits alike; a GPU at the SW power cap and a warm GPU are decoys"


@case
def dr25(C):
    C.gz_all_cmd = True
    names = ["gpu%04d.dc3.internal" % i for i in range(3001, 3033)]
    hs = fleet(C, names, nd=names[:2], port_fmt="1/{}", driver="535.129.03", dstyle="journal")
    C.steps.update(data_wait=C.step(0.4, 4.9), compute_col=True, log_every=20)
    for h in hs:
        h["io"] = dict(some=C.step(0.3, 61.0), full=C.step(0.1, 44.0))
        h["cpu"]["wa"] = C.step(0.2, 21.0)
        for g in h["gpus"]:
            g["util"] = C.step(95, 49)
            g["tensor"] = C.step(0.44, 0.21)
    for h in hs[:2]:
        h["cmds"] = ("nvidia-smi-q", "dmesg", "ibstat", "pressure", "top")
        C.ev(h, C.T0 + 120, "Lustre: 11402:0:(client.c:2310:ptlrpc_expire_one_request()) @@@ Request sent has timed out for slow reply: [sent %d/real %d]  req@00000000a1b2c3d4 x1789123456789/t0(0) o4->scratch-OST0012-osc-ffff9a1c@10.9.0.12@o2ib:6/4 lens 488/448 e 0 to 1 dl %d ref 2 fl Rpc:X/0/ffffffff rc 0/-1" % (C.T0 + 70, C.T0 + 70, C.T0 + 120))
    swcap(C, hs, 0.5)
    C.missing = ["metrics/node.om", "nodes/%s/before" % names[1]]
    C.node_metrics.update(on=False)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.logs["train.log"] = train_log(C, fmt="{ts} INFO trainer step={step} loss={loss:.4f} step_time={dur:.2f}s")
    C.title = "256-GPU job: step time 1.8x since 02:10"
    C.reported = "Only two nodes could be sampled before the allocation ended."
    C.truth = ("input_pipeline_stall", "job")
    C.hard = "node data for 2 of 32 hosts, no node metrics; every rank waits equally; Lustre timeouts and IO pressure"
    C.missing_desc = "no node data for 30 of 32 hosts, no node metrics, no before/ snapshot on one host"


# ---------------------------------------------------------------- nccl config
@case
def dr26(C):
    names = ib_names("gpu-m%03d", 8, 1)
    hs = fleet(C, names, nd=names[:3], port_fmt="1/{}", dstyle="T")
    C.steps.update(job_start=C.S - 600, comm=3.6)
    C.M0 = C.S - 1800
    for h in hs:
        for j, n in enumerate(h["nics"]):
            r = 2.2e9 * 4.0 if j == 0 else 3e3
            n["link"]["bytes_ab"] = ("c", int(4e12 + 1e9 * nz(h["name"], j)), 2e4, r, C.S - 600, C.M0)
            n["link"]["bytes_ba"] = ("c", int(4e12 + 1e9 * nz(j, h["name"])), 2e4, r, C.S - 600, C.M0)
            n["ctr"]["xmit_wait"] = ("c", 1000, 10, 9.0e5 if j == 0 else 0.5, C.S - 600, C.M0)
    env = [("NCCL_IB_HCA", "mlx5_0"), ("NCCL_IB_TIMEOUT", "22")]
    C.logs["nccl.log"] = nccl_init(C, hs[0], [(r, g) for r, h, g in C.rank_map() if h is hs[0]], ["mlx5_0"], env=env) + \
        nccl_init(C, hs[1], [(r, g) for r, h, g in C.rank_map() if h is hs[1]], ["mlx5_0"], env=env)
    swcap(C, hs, 0.5)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "New launcher template: job 1.6x slower than the reference run"
    C.reported = "The reference run on the same nodes last week was much faster. mlx5_0 on every node is very busy; is it failing?"
    C.truth = ("nccl_misconfiguration", "job")
    C.hard = "one HCA of eight carries all traffic from step 1 on every host; the busy link is healthy"


@case
def dr27(C):
    names = ["10-90-44-%d" % (20 + i) for i in range(8)]
    hs = fleet(C, names, ll="Ethernet", nnic=4, nd=names[:4], leaf_fmt="sw-leaf{:d}", port_fmt="Ethernet{}", per_leaf=4,
               rate_Bps=3.0e9, dstyle="journal", driver="535.129.03")
    C.steps.update(job_start=C.S - 300, comm=2.1, compute_col=False)
    C.M0 = C.S - 1800
    for h in hs:
        for j, n in enumerate(h["nics"]):
            r = 6.0e9 if j < 2 else 1e3
            n["link"]["bytes_ab"] = ("c", int(5e12 + 1e9 * nz(h["name"], j)), 1e4, r, C.S - 300, C.M0)
            n["link"]["bytes_ba"] = ("c", int(5e12 + 1e9 * nz(j, h["name"])), 1e4, r, C.S - 300, C.M0)
            if j < 2:
                n["ctr"]["np_ecn_marked"] = ("c", 0, 0, 400.0, C.S - 300, C.M0)
                n["ctr"]["rp_cnp_handled"] = ("c", 0, 0, 390.0, C.S - 300, C.M0)
    env = [("NCCL_IB_HCA", "=mlx5_0,mlx5_1"), ("NCCL_IB_GID_INDEX", "3"), ("NCCL_IB_TC", "106")]
    C.logs["rank0.log"] = nccl_init(C, hs[0], [(r, g) for r, h, g in C.rank_map() if h is hs[0]][:4], ["mlx5_0", "mlx5_1"], ll="RoCE", env=env, version="2.21.5", cuda="12.4")
    C.snmp.update(on=True)
    swcap(C, hs, 0.5)
    hs[1]["nics"][3]["ctr"]["symbol_error"] = 2
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "RoCE cluster: new container image, throughput 20% below baseline"
    C.reported = "Image moved to NCCL 2.21. ECN marks are climbing on some ports."
    C.truth = ("nccl_misconfiguration", "job")
    C.hard = "two of four NICs carry all traffic from job start; ECN marks on the busy ones are a consequence"


# ---------------------------------------------------------------- healthy
@case
def dr28(C):
    C.gz = set()
    names = ib_names("gpu-e%03d", 9, 1)
    hs = fleet(C, names, nd=[names[0], names[3], names[8]], spares=[names[8]], port_fmt="1/{}", dstyle="T")
    swcap(C, hs[:8], 0.6)
    hs[3]["gpus"][5]["temp"] = 83
    aer_few(C, hs[3], hs[3]["gpus"][1], 3)
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.alerts = [alert("GPUPcieLinkDegraded", "warning", {"hostname": names[8]}, "GPU PCIe link below max generation", C.S + 300)]
    C.title = "PCIe degraded alert and step-time jitter, please check"
    C.reported = "Alert fired for gpu-e009. Step time looks noisy to me."
    C.truth = ("healthy", None)
    C.hard = "spare host idle GPUs at Gen1 (power saving), a warm GPU, few AER, SW cap everywhere"


@case
def dr29(C):
    C.gz_all_cmd = True
    names = ib_names("dgx%03d", 8, 201)
    hs = fleet(C, names, model="A100", driver="470.182.03", nd=names[:3], dstyle="journal", port_fmt="1/{}", kernel_old=True, nnic=4)
    swcap(C, hs, 0.4)
    old_xid(C, hs[1], hs[1]["gpus"][3], 13, 8)
    static_ecc(hs[2]["gpus"][0], 55, (2, 0, False, False))
    # checkpoint every 30 min: 3 steps slow on every rank
    C.steps.update(checksum=True)
    ck = [C.S + 1200 + 1800 * k for k in range(3)]
    C.steps["data_wait"] = ("m", 0.0, [(t, t + 25, 9.0) for t in ck])
    C.logs["train.log"] = ["[%s] saving checkpoint to /lustre/ckpt/step_%d (14.2 GB)..." % (iso(t), 10000 + k * 300) for k, t in enumerate(ck)]
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", extra=("ecc",))
    C.alerts = [alert("DCGMXidErrors", "critical", {"Hostname": names[1], "gpu": "3"}, "XID error reported", C.S + 60)]
    C.title = "XID alert on dgx202; is the job at risk?"
    C.reported = "Alert fired this morning. Job seems to run. Static ECC counts on dgx203 too."
    C.truth = ("healthy", None)
    C.hard = "sticky DCGM XID gauge from an 8-day-old Xid 13; static ECC; checksums agree"


@case
def dr30(C):
    names = ["roce-%02d" % i for i in range(31, 39)] + ["roce-39"]
    hs = roce_pfc_fabric(C, names, nd=[names[0], names[4], names[8]], per_leaf=3)
    sp = hs[8]
    sp["in_job"] = False
    for g in sp["gpus"]:
        g.update(busy=False, clk=210, power=70, util=0, tensor=0.0, reasons=1, gen=1, temp=32)
    n = sp["nics"][1]
    n["ctr"]["link_downed"] = C.ctr(3, 0, 1 / 1800.0)
    for k in range(2):
        C.ev(sp, C.T0 + 1800 * k + 33, "mlx5_core 0000:%02x:00.0 %s: Port: 1 Link DOWN" % (n["bus"], n["ibdev"]))
        C.ev(sp, C.T0 + 1800 * k + 40, "mlx5_core 0000:%02x:00.0 %s: Port: 1 Link ACTIVE" % (n["bus"], n["ibdev"]))
    for h in hs[:8]:
        for m in h["nics"]:
            m["ctr"]["np_ecn_marked"] = C.ctr(1000, 6.0)
            m["ctr"]["rp_cnp_handled"] = C.ctr(1000, 5.8)
            m["link"]["pause_ba"] = C.ctr(200, 0.8)
    swcap(C, hs[:8], 0.6)
    hs[4]["nics"][0]["ctr"]["symbol_error"] = 12
    C.sonic = {"leaf01": ("pfc", "pfcwd")}
    C.dcgm.update(label="hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    C.title = "Link flap alerts on rack 3; job owner worried"
    C.reported = "Link down/up messages keep coming on roce-39. Our job is on roce-31..38."
    C.alerts = [alert("NodeNetworkLinkFlap", "warning", {"instance": "roce-39:9100"}, "carrier changes", C.T0 + 40)]
    C.truth = ("healthy", None)
    C.hard = "link flaps on a spare outside the job; steady low ECN/pause rates on job NICs; old symbol errors"


@case
def dr31(C):
    C.gz_all_cmd = True
    names = ["hgx-%02d-%02d" % (1 + i // 8, 1 + i % 8) for i in range(32)]
    hs = fleet(C, names, nd=[names[0], names[13]], per_leaf=4, port_fmt="1/{}", dstyle="kmsg", driver="535.161.08")
    swcap(C, hs, 0.7, drop=(0.02, 0.05))
    C.steps.update(job_start=C.S + 1200, log_every=20)
    C.ev(hs[13], C.S + 1180, "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing")
    for h in hs:
        for g in h["gpus"]:
            g["util"] = ("s", 0, 97, C.S + 1200)
            g["power"] = ("s", 80, val(g["power"], C.M0), C.S + 1200)
            g["clk"] = ("s", 345, val(g["clk"], C.M0), C.S + 1200)
            g["reasons"] = ("s", 1, val(g["reasons"], C.M0), C.S + 1200)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("viol",))
    C.title = "GPUs idle for 20 minutes then power capping on most of them"
    C.reported = "Job was requeued; after it started, the dashboard shows SW power cap on ~70% of GPUs."
    C.truth = ("healthy", None)
    C.hard = "a requeue (idle gap) and the normal SW power cap fleet-wide; a peermem message around the requeue"


@case
def dr32(C):
    # two real anomalies: a mild PCIe downtrain on one GPU and a thermal throttle on another; only one explains the size
    names = ib_names("gpu-k%03d", 12, 1)
    hs = fleet(C, names, nd=names[2:7], port_fmt="1/{}", dstyle="journal", driver="535.129.03")
    swcap(C, hs, 0.5)
    a = hs[3]["gpus"][1]
    a["gen"], a["width"] = 4, 16
    a["faulty"] = True
    h, g = hs[5], hs[5]["gpus"][6]
    throttle(C, h, g, 1140, 0x40 | 0x8, temp=89, power=420)
    C.dcgm.update(label="Hostname", reasons="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", extra=("viol",))
    C.missing = ["nodes/%s/nvml.json" % h["name"]]
    C.steps.update(compute_col=False)
    C.title = "Throughput down ~45% since 02:10"
    C.reported = "Health check flagged a GPU at PCIe Gen4 on gpu-k004 this morning."
    C.truth = ("thermal_throttle", "%s/gpu6" % h["name"])
    C.hard = "a real Gen4 link on another GPU (days old, no onset) cannot explain a 02:10 onset of 45%; nvml.json missing on the culprit"
    C.missing_desc = "nvml.json of the throttled host"
