#!/usr/bin/env python3
"""Write the summit evaluation set: write_incidents.py --out DIR (stdlib only, deterministic)."""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core import Case, Cnt  # noqa: E402
from fleet import iso, ctime  # noqa: E402


# ------------------------------------------------------------------ shared decoys
def sym(c):
    b, a = c.step_duration(False), c.step_duration(True)
    return b, a


def ratio(c):
    b, a = sym(c)
    return a / b


def pct(c):
    b, a = sym(c)
    return int(round(100 * (a - b) / b))


def decoy_old_xid(c, host, gi, code=31, days=6):
    g = c.fl.byname[host]["gpus"][gi]
    t = c.start - days * 86400 - 3600 * 3
    c.boot[host] = t - 86400
    c.add_dmesg(host, t, "NVRM: Xid (PCI:0000:%s:00): %d, pid=%d, name=python3, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x7f3a_1c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ" % (g["bus"], code, 40000 + gi) if code == 31 else
                "NVRM: Xid (PCI:0000:%s:00): %d, pid='<unknown>', name=<unknown>, Ch 00000008" % (g["bus"], code))
    s = c.gs(host, gi)
    s["xid"] = s["xid0"] = code


def decoy_static_sbe(c, host, gi, n=None):
    s = c.gs(host, gi)
    s["sbe"] = Cnt(n or c.rng.randint(3, 40))
    s["sbe_agg_extra"] = c.rng.randint(100, 900)


def decoy_aer(c, host, gi, n=3):
    s = c.gs(host, gi)
    s["aer"] = {"rx": n, "tlp": 1}
    s["aer0"] = s["aer"]
    c.add_dmesg(host, c.start + 1200, "pcieport 0000:%s:01.0: AER: Corrected error message received from 0000:%s:00.0" % (
        "%02x" % (int(c.fl.byname[host]["gpus"][gi]["bus"], 16) - 1), c.fl.byname[host]["gpus"][gi]["bus"]) +
        "\nnvidia 0000:%s:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)" % c.fl.byname[host]["gpus"][gi]["bus"] +
        "\nnvidia 0000:%s:00.0:   device [10de:%s] error status/mask=00000001/0000e000" % (c.fl.byname[host]["gpus"][gi]["bus"], c.fl.m["dev"]) +
        "\nnvidia 0000:%s:00.0:    [ 0] RxErr                  (First)" % c.fl.byname[host]["gpus"][gi]["bus"])


def decoy_warm(c, host, gi, temp=82):
    s = c.gs(host, gi)
    s["temp"] = s["temp0"] = temp
    s["reasons"] = s["reasons0"] = 0
    s["clk"] = s["clk0"] = c.fl.m["maxclk"]
    s["pw"] = s["pw0"] = s["lim"] - c.rng.randint(60, 110)


def gpu_throttle(c, host, gi, clk, reasons, temp=None, pw=None, lim=None, tviol=0, pviol=0):
    s = c.gs(host, gi)
    s["onset"] = c.onset
    base = s["clk0"]
    s["clk"] = clk
    s["reasons"] = reasons
    if temp is not None:
        s["temp"] = temp
    if pw is not None:
        s["pw"] = pw
    if lim is not None:
        s["lim"] = lim
    if tviol:
        s["tviol"] = Cnt(0, 0, tviol, c.onset)
    if pviol:
        s["pviol"] = Cnt(s["pviol"].base, s["pviol"].r0, pviol, c.onset)
    c.slow[c.rank_of(host, gi)] = base / float(clk)


def std_presentation(c, k):
    r = random.Random(k * 7 + 3)
    c.dmesg_style = ["plain", "T", "journal", "kmsg"][k % 4]
    c.label = "Hostname" if k % 3 == 0 else "hostname"
    c.throttle_fam = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" if k % 2 else "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
    c.ranks_explicit = k % 3 == 1
    if k % 4 == 2:
        c.gz |= {"steps", "metrics"}
    if k % 5 == 3:
        c.gz.add("nodes")
    c.shuffle_rows = k % 6 == 5
    c.missing_rank_rows = k % 7 == 4


def peers(c, host, n=2):
    jh = c.fl.job_hosts
    i = jh.index(host)
    out = [host]
    for d in range(1, len(jh)):
        if len(out) > n:
            break
        out.append(jh[(i + d) % len(jh)])
    return sorted(out, key=jh.index)


# ------------------------------------------------------------------ cases
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def c01(k):  # pcie downtrain on a GPU; compute_s present; SW cap decoys
    c = Case(k, "pcie_downtrain", None, 101, n_hosts=8, model="H100")
    std_presentation(c, k)
    h = c.fl.job_hosts[5]
    s = c.gs(h, 3)
    s["onset"] = c.onset
    s["gen0"], s["width0"] = 5, 16
    s["gen"], s["width"] = 3, 16
    s["pcie_replay"] = Cnt(0, 0, 0.4, c.onset)
    c.slow[c.rank_of(h, 3)] = 1.31
    c.add_dmesg(h, c.onset - 5, "nvidia 0000:%s:00.0: PCIe link speed changed to 8.0 GT/s" % c.fl.byname[h]["gpus"][3]["bus"] if False else
                "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%s:00.0" % (int(c.fl.byname[h]["gpus"][3]["bus"], 16) - 1, c.fl.byname[h]["gpus"][3]["bus"]))
    c.comp = "%s/gpu3" % h
    decoy_old_xid(c, c.fl.job_hosts[1], 6)
    c.node_hosts = peers(c, h, 2) + [c.fl.job_hosts[1]]
    b, a = sym(c)
    c.title = "Step time regression on llm-70b since mid-shift"
    c.reported = "Throughput dropped by about %d%% partway through the window. Dashboards show most GPUs sitting at their power limit." % pct(c)
    c.alert("GPUPowerCapped", {"Hostname": c.fl.job_hosts[2], "gpu": "4"}, c.start + 300, summary="GPU at power limit for 15m")
    c.notes = dict(hard="one GPU's link retrained to Gen3 mid-run; every busy GPU shows SW power cap; old XID 31 on a peer; alert on a power-capped peer",
                   missing="-")
    return c


@case
def c02(k):  # pcie downtrain on a NIC, RoCE; no compute_s (job-wide comm slowdown)
    c = Case(k, "pcie_downtrain", None, 102, n_hosts=16, model="H200", ll="Ethernet", naming="dc")
    std_presentation(c, k)
    h = c.fl.job_hosts[9]
    s = c.ns(h, "mlx5_6")
    s["onset"] = c.onset
    s["width0"], s["width"] = 16, 4
    c.compute_col = False
    c.comm_f = 2.6
    for hh in c.fl.job_hosts:
        for ni in c.n[hh].values():
            ni["bytes"] = Cnt(ni["bytes"].base, ni["util"] * ni["bps"], ni["util"] * ni["bps"] / ratio(c), c.onset)
    s["bytes"] = Cnt(s["bytes"].base, s["util"] * s["bps"], 0.04 * s["bps"], c.onset)
    s["stall"] = Cnt(0, 0, 900, c.onset)
    s["txp"] = Cnt(0, 0, 35, c.onset)  # modest pauses: host cannot drain fast enough
    c.comp = "%s/mlx5_6" % h
    c.add_dmesg(h, c.onset - 2, "mlx5_core 0000:%s:00.0: mlx5_pcie_event:299:(pid 0): PCIe slot advertised sufficient power (75W)." % c.fl.byname[h]["nics"][6]["bus"])
    c.add_dmesg(h, c.onset - 1, "mlx5_core 0000:%s:00.0: 63.012 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x4 link at 0000:%02x:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (
        c.fl.byname[h]["nics"][6]["bus"], int(c.fl.byname[h]["nics"][6]["bus"], 16) - 1))
    s["gen"] = 4
    s["gen0"] = 5
    c.node_hosts = peers(c, h, 2)
    decoy_warm(c, c.fl.job_hosts[10], 2, 79)
    b, a = sym(c)
    c.title = "Tokens/s down on h200 pretrain, no node flagged"
    c.reported = "All ranks slowed together (step %.2fs -> %.2fs). No straggler in the health dashboard." % (b, a)
    c.notes = dict(hard="job-wide slowdown with no compute column; one NIC retrained x4 after a link event; warm GPU decoy with no throttle bits",
                   missing="steps has no compute_s")
    return c


@case
def c03(k):  # PFC storm originated by a NIC (RoCE), victims everywhere
    c = Case(k, "pfc_pause_storm", None, 103, n_hosts=12, model="H100", ll="Ethernet", naming="node", hosts_per_leaf=4, spines=2)
    std_presentation(c, k)
    h = c.fl.job_hosts[6]
    dev = "mlx5_2"
    s = c.ns(h, dev)
    s["onset"] = c.onset
    s["txp"] = Cnt(0, 0, 41000, c.onset)
    s["oob"] = Cnt(0, 0, 2200, c.onset)
    s["disc"] = Cnt(0, 0, 180, c.onset)
    s["stall"] = Cnt(0, 0, 5000, c.onset)
    s["storm"] = 3
    c.comm_f = 3.1
    leaf = c.fl.byname[h]["leaf"]
    for hh in c.fl.job_hosts:
        for d, ni in c.n[hh].items():
            if (hh, d) != (h, dev):
                rate = 9000 if c.fl.byname[hh]["leaf"] == leaf else 2500
                ni["rxp"] = Cnt(ni["rxp"].base, 0, rate, c.onset)
                ni["bytes"] = Cnt(ni["bytes"].base, ni["util"] * ni["bps"], ni["util"] * ni["bps"] / ratio(c), c.onset)
    for (sw, port), p in c.sw.items():
        if sw == leaf:
            p["txp"] = Cnt(0, 0, 8000, c.onset)
        elif c.fl.switches[sw]["tier"] == "spine":
            p["rxp"] = Cnt(0, 0, 8000, c.onset) if p is not None else None
    # spines: ports toward the origin leaf receive pauses, ports toward other leaves transmit
    for (sw, port), p in c.sw.items():
        if c.fl.switches[sw]["tier"] == "spine":
            peer = [l["peer"] for l in c.fl.switches[sw]["links"] if l["port"] == port][0]
            p["rxp"] = Cnt(0, 0, 8000, c.onset) if peer == leaf else Cnt(0)
            p["txp"] = Cnt(0, 0, 2500, c.onset) if peer != leaf else Cnt(0)
        elif sw != leaf:
            p["rxp"] = Cnt(0, 0, 2500, c.onset)
    c.switch_cmd = True
    c.pfcwd = {(leaf, c.fl.byname[h]["nics"][2]["switch_port"]): ("stormed", "2/1", "0/1840066")}
    c.comp = "%s/%s" % (h, dev)
    c.node_hosts = [c.fl.job_hosts[0], c.fl.job_hosts[3], h, c.fl.job_hosts[7], c.fl.job_hosts[11]]
    c.alert("RoCEPauseFramesHigh", {"instance": c.fl.job_hosts[7] + ":9100", "device": "mlx5_5"}, c.onset + 400,
            summary="rx pause frames high on %s mlx5_5" % c.fl.job_hosts[7])
    b, a = sym(c)
    c.title = "All-reduce bandwidth collapsed, multiple nodes paging"
    c.reported = "Step time went from %.1fs to %.1fs. A pause-frame alert fired on one node; several nodes show pause counters." % (b, a)
    decoy_static_sbe(c, c.fl.job_hosts[0], 5)
    c.notes = dict(hard="every NIC receives pauses; the alert names a victim; only one NIC transmits them (with rx_out_of_buffer and PCIe stalls)",
                   missing="-")
    return c


@case
def c04(k):  # PFC storm originated by a leaf uplink port; switch-side counters only
    c = Case(k, "pfc_pause_storm", None, 104, n_hosts=16, model="H100", ll="Ethernet", naming="ip", hosts_per_leaf=4, spines=2)
    std_presentation(c, k)
    src_leaf = c.fl.leaves[1]
    src_port = "Ethernet264"  # uplink to spine-02
    sp = [l for l in c.fl.switches[src_leaf]["links"] if l["port"] == src_port][0]
    c.comm_f = 2.2
    for (sw, port), p in c.sw.items():
        tier = c.fl.switches[sw]["tier"]
        link = [l for l in c.fl.switches[sw]["links"] if l["port"] == port][0]
        if (sw, port) == (src_leaf, src_port):
            p["txp"] = Cnt(0, 0, 30000, c.onset)
        elif sw == sp["peer"] and port == sp["peer_port"]:
            p["rxp"] = Cnt(0, 0, 30000, c.onset)
        elif sw == sp["peer"]:
            p["txp"] = Cnt(0, 0, 7000, c.onset)
        elif tier == "leaf" and link["peer"] == sp["peer"]:
            p["rxp"] = Cnt(0, 0, 7000, c.onset)
    for hh in c.fl.job_hosts:
        leaf = c.fl.byname[hh]["leaf"]
        for d, ni in c.n[hh].items():
            if leaf != src_leaf:
                ni["rxp"] = Cnt(ni["rxp"].base, 0, 1600, c.onset)
                ni["bytes"] = Cnt(ni["bytes"].base, ni["util"] * ni["bps"], ni["util"] * ni["bps"] / ratio(c), c.onset)
    c.switch_cmd = True
    c.extra_switch_hosts = list(c.fl.job_hosts)
    c.node_hosts = []
    c.metric_hosts = [c.fl.job_hosts[0], c.fl.job_hosts[9]]
    c.node_exporter = False
    c.missing |= {"nvml"}
    c.pfcwd = {(c.fl.leaves[0], "Ethernet0"): ("stormed", "1/1", "0/22031"), (c.fl.leaves[3], "Ethernet9"): ("stormed", "1/0", "0/9120")}
    c.comp = "%s/%s" % (src_leaf, src_port)
    b, a = sym(c)
    c.title = "Collective throughput halved on 16-node job"
    c.reported = "Step time went from %.2fs to %.2fs. Host collectors were down for maintenance; only the fabric was recorded." % (b, a)
    c.alert("PFCWatchdogStorm", {"instance": c.fl.leaves[0], "ifName": "Ethernet0"}, c.onset + 200, severity="critical", summary="PFC storm detected on queue 3")
    c.notes = dict(hard="origin is a leaf uplink toward a spine; pfcwd fires on victim host-facing ports of other leaves; no host data at all",
                   missing="nodes/ (all), nvml, node_exporter")
    return c


@case
def c05(k):  # ECMP polarization at one leaf
    c = Case(k, "ecmp_hash_polarization", None, 105, n_hosts=16, model="H100", ll="Ethernet", naming="a", hosts_per_leaf=4, spines=4)
    std_presentation(c, k)
    bad = c.fl.leaves[2]
    c.comm_f = 1.9
    c.snmp = True
    for (sw, port), p in c.sw.items():
        if c.fl.switches[sw]["tier"] != "leaf":
            continue
        u0 = 10.2e9  # average bytes/s per uplink before (bursty: saturates only during collectives)
        R = ratio(c)
        if sw == bad:
            i = int(port[8:]) // 8 - 32
            share = [0.47, 0.03, 0.47, 0.03][i]
            p["out"] = Cnt(p["out"].base, u0, 4 * u0 * share / R, c.onset)
            p["disc"] = Cnt(0, 0, 800 if share > 0.1 else 0, c.onset)
        else:
            p["out"] = Cnt(p["out"].base, u0, u0 / R, c.onset)
        p["in"] = Cnt(p["in"].base, u0, u0 / R, c.onset)
        c.snmp_ports.append((sw, port))
    c.snmp_ports.sort()
    c.compute_col = c.rng.random() < 0.5
    c.comp = bad
    c.node_hosts = [c.fl.job_hosts[8], c.fl.job_hosts[1]]
    c.add_dmesg(c.fl.job_hosts[8], c.start - 3 * 86400, "mlx5_core 0000:1a:00.0 mlx5_0: Port: 1 Link INIT")
    c.logs.append("[%s] INFO change-mgmt: CHG-20931 leaf firmware rollout completed on rack r03/r04 (hash seed reset)" % iso(c.onset - 900))
    b, a = sym(c)
    c.title = "Job %d%% slower after maintenance window" % pct(c)
    c.reported = "Fabric team did a rollout overnight. Step time %.2fs -> %.2fs. Nothing flagged on the hosts." % (b, a)
    c.notes = dict(hard="no host shows errors; only snmp uplink octets show two of four uplinks at line rate on one leaf", missing="-")
    return c


@case
def c06(k):  # ECMP polarization on IB-ish naming, spine-facing, with decoy discards elsewhere
    c = Case(k, "ecmp_hash_polarization", None, 106, n_hosts=24, model="A100", ll="Ethernet", naming="dc", hosts_per_leaf=8, spines=2,
             switch_style="x", driver="525.85.12")
    std_presentation(c, k)
    bad = c.fl.leaves[0]
    c.comm_f = 1.6
    c.snmp = True
    tot = 2 * 6.1e9
    R = ratio(c)
    for (sw, port), p in c.sw.items():
        if c.fl.switches[sw]["tier"] != "leaf":
            continue
        i = (int(port[8:]) - 256) // 8
        if sw == bad:
            share = [0.96, 0.04][i]
            p["out"] = Cnt(p["out"].base, tot / 2, tot * share / R, c.onset)
            p["disc"] = Cnt(0, 0, 1500 if share > 0.5 else 0, c.onset)
        else:
            p["out"] = Cnt(p["out"].base, tot / 2, tot / 2 / R, c.onset)
            if sw == c.fl.leaves[2] and i == 1:
                p["disc"] = Cnt(4000, 0)  # old, static
        p["in"] = Cnt(p["in"].base, tot / 2, tot / 2 / R, c.onset)
        c.snmp_ports.append((sw, port))
    c.snmp_ports.sort()
    c.comp = bad
    c.node_hosts = [c.fl.job_hosts[2], c.fl.job_hosts[15]]
    decoy_aer(c, c.fl.job_hosts[2], 1, 2)
    b, a = sym(c)
    c.title = "Intermittent slow all-reduce, older A100 pod"
    c.reported = "Step time up from %.2fs to %.2fs. One host has PCIe AER messages." % (b, a)
    c.notes = dict(hard="2-spine pod; leaf sends 96% on one uplink; static old discards on another leaf; correctable AER decoy", missing="-")
    return c


@case
def c07(k):  # link degradation NIC IB: symbol errors, downshift to HDR, flaps
    c = Case(k, "link_degradation", None, 107, n_hosts=8, model="H100", naming="b7")
    std_presentation(c, k)
    h = c.fl.job_hosts[4]
    s = c.ns(h, "mlx5_5")
    s["onset"] = c.onset
    s["sym"] = Cnt(0, 0, 14, c.onset)
    s["rcverr"] = Cnt(0, 0, 9, c.onset)
    s["down"] = Cnt(0, 0, 0, c.onset, jumps=[(c.onset, 1), (c.onset + 900, 1), (c.onset + 2000, 1)])
    s["rate0"], s["rate"] = 400, 200
    c.comm_f = 1.8
    s["bytes"] = Cnt(s["bytes"].base, s["util"] * s["bps"], s["util"] * s["bps"] / ratio(c), c.onset)
    bus = c.fl.byname[h]["nics"][5]["bus"]
    for t in (c.onset, c.onset + 900, c.onset + 2000):
        c.add_dmesg(h, t, "mlx5_core 0000:%s:00.0 mlx5_5: Port: 1 Link DOWN" % bus)
        c.add_dmesg(h, t + 6, "mlx5_core 0000:%s:00.0 mlx5_5: Port: 1 Link INIT" % bus)
        c.add_dmesg(h, t + 7, "mlx5_core 0000:%s:00.0 mlx5_5: Port: 1 Link ACTIVE" % bus)
    c.comp = "%s/mlx5_5" % h
    c.node_hosts = peers(c, h, 2)
    decoy_old_xid(c, c.fl.job_hosts[5], 2, 13, 9)
    b, a = sym(c)
    c.title = "Training throughput unstable, NCCL retries"
    c.reported = "Step time %.2fs -> %.2fs, with bursts." % (b, a)
    c.logs.append("%s:4811:4930 [5] NCCL INFO NET/IB : Got completion from peer 10.12.0.%d<41102> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.12.0.14 remoteGids::ffff:10.12.0.15 hca mlx5_5" % (c.fl.job_hosts[3], 14))
    c.notes = dict(hard="NCCL error reported by a peer host, not the faulty one; fault is on another host's NIC (symbol errors, 3 flaps, 200G)", missing="-")
    return c


@case
def c08(k):  # link degradation RoCE via FEC only, counters only
    c = Case(k, "link_degradation", None, 108, n_hosts=32, model="H100", ll="Ethernet", naming="node")
    std_presentation(c, k)
    h = c.fl.job_hosts[21]
    s = c.ns(h, "mlx5_1")
    s["onset"] = c.onset
    s["fec"] = True
    for hh in c.fl.job_hosts:
        for ni in c.n[hh].values():
            ni["fec"] = True
    s["fec_corr"] = Cnt(s["fec_corr"].base, s["fec_corr"].r0, 2.5e5, c.onset)
    s["fec_unc"] = Cnt(0, 0, 3.1, c.onset)
    s["sym"] = Cnt(0, 0, 3.1, c.onset)
    s["ackto"] = Cnt(0, 0, 0.8, c.onset)
    c.comm_f = 1.45
    for hh in peers(c, c.fl.job_hosts[3], 1):
        c.ns(hh, "mlx5_4")["fec_corr"] = Cnt(c.ns(hh, "mlx5_4")["fec_corr"].base * 40, c.ns(hh, "mlx5_4")["fec_corr"].r0)
    c.comp = "%s/mlx5_1" % h
    c.node_hosts = [c.fl.job_hosts[3], c.fl.job_hosts[4], h, c.fl.job_hosts[22]]
    c.compute_col = False
    b, a = sym(c)
    c.title = "Slow steps on 256-GPU run, nothing in the logs"
    c.reported = "Step %.2fs -> %.2fs since earlier today. No XIDs, no NCCL warnings." % (b, a)
    c.notes = dict(hard="only FEC uncorrectable blocks and symbol errors growing on one NIC; a peer has a large but static corrected count", missing="steps has no compute_s")
    return c


@case
def c09(k):  # thermal throttle single GPU
    c = Case(k, "thermal_throttle", None, 109, n_hosts=8, model="H100", naming="dc")
    std_presentation(c, k)
    h = c.fl.job_hosts[2]
    gpu_throttle(c, h, 6, 1215, 0x60, temp=91, pw=560, tviol=0.7e9)
    c.comp = "%s/gpu6" % h
    decoy_warm(c, c.fl.job_hosts[3], 1, 80)
    c.node_hosts = peers(c, h, 2)
    b, a = sym(c)
    c.title = "Straggler suspected on llm pretrain"
    c.reported = "Step time %.2fs -> %.2fs. Facilities mentioned CRAC maintenance in hall B (unrelated?)." % (b, a)
    c.notes = dict(hard="throttled GPU draws less power than peers (power looks 'better'); warm neighbour with no reasons", missing="-")
    return c


@case
def c10(k):  # thermal host: fan failure
    c = Case(k, "thermal_throttle", None, 110, n_hosts=8, model="H200", naming="a")
    std_presentation(c, k)
    h = c.fl.job_hosts[3]
    for gi in range(8):
        gpu_throttle(c, h, gi, 1395 - gi * 15, 0x20 | (0x40 if gi in (2, 3) else 0), temp=86 + gi % 4, pw=520, tviol=0.5e9)
    c.comp = h
    t = c.onset - 120
    c.sel[h] = "\n".join([
        "  1f | %s | %s | Fan FAN3 | Lower Critical going low  | Asserted" % (ctime(t)[4:10].strip(), "x"),
    ])
    import time as _t
    g = lambda tt: (_t.strftime("%m/%d/%Y", _t.gmtime(tt)), _t.strftime("%H:%M:%S", _t.gmtime(tt)))
    d1, t1 = g(c.start - 40 * 86400)
    d2, t2 = g(c.onset - 120)
    d3, t3 = g(c.onset - 60)
    c.sel[h] = ("   1 | %s | %s | Event Logging Disabled #0x07 | Log area reset/cleared | Asserted\n"
                "  1e | %s | %s | Fan FAN3 | Lower Critical going low  | Asserted\n"
                "  1f | %s | %s | Fan FAN4 | Lower Critical going low  | Asserted\n"
                "  20 | %s | %s | Temperature GPU_Zone | Upper Non-critical going high | Asserted\n") % (d1, t1, d2, t2, d2, t2, d3, t3)
    c.fans[h] = ("FAN1             | 30h | ok  | 29.1 | 8520 RPM\nFAN2             | 31h | ok  | 29.2 | 8400 RPM\n"
                 "FAN3             | 32h | cr  | 29.3 | 0 RPM\nFAN4             | 33h | cr  | 29.4 | 0 RPM\n"
                 "FAN5             | 34h | ok  | 29.5 | 8640 RPM\nFAN6             | 35h | ok  | 29.6 | 8460 RPM\n")
    c.node_hosts = peers(c, h, 1)
    c.missing.add("metrics") if False else None
    b, a = sym(c)
    c.title = "One node hot? step time up"
    c.reported = "Step %.2fs -> %.2fs." % (b, a)
    c.notes = dict(hard="all 8 GPUs of one host throttle (SW/HW thermal) after two fans fail: host-level", missing="-")
    return c


@case
def c11(k):  # power throttle single GPU: lowered enforced limit (vs normal cap decoy)
    c = Case(k, "power_throttle", None, 111, n_hosts=8, model="H100", naming="b7")
    std_presentation(c, k)
    h = c.fl.job_hosts[6]
    gpu_throttle(c, h, 1, 1140, 0x4, pw=399, lim=400, pviol=0.95e9)
    c.comp = "%s/gpu1" % h
    c.node_hosts = peers(c, h, 2)
    c.logs.append("[%s] INFO node-agent %s: applied power profile 'eco-400' to gpu 1 (ticket OPS-5512)" % (iso(c.onset - 30), h))
    b, a = sym(c)
    c.title = "Run slower than yesterday's baseline"
    c.reported = "Step %.2fs -> %.2fs. Most GPUs report SW Power Cap active, which is normal for us." % (b, a)
    c.notes = dict(hard="same SW power cap bit as every busy GPU, but limit lowered to 400 W and clock far below peers", missing="-")
    return c


@case
def c12(k):  # power throttle host: PSU failure, power brake on every GPU
    c = Case(k, "power_throttle", None, 112, n_hosts=16, model="B200", naming="ip", driver="570.124.06")
    std_presentation(c, k)
    h = c.fl.job_hosts[11]
    for gi in range(8):
        gpu_throttle(c, h, gi, 960 + gi * 5, 0x88, pw=390 + gi, pviol=0.9e9)
    c.comp = h
    import time as _t
    g = lambda tt: (_t.strftime("%m/%d/%Y", _t.gmtime(tt)), _t.strftime("%H:%M:%S", _t.gmtime(tt)))
    d1, t1 = g(c.onset - 20)
    d0, t0 = g(c.start - 12 * 86400)
    c.sel[h] = ("  9a | %s | %s | Power Supply PSU2 | Power Supply AC lost | Asserted\n"
                "  9b | %s | %s | Power Supply PSU2 | Power Supply AC lost | Deasserted\n"
                "  a0 | %s | %s | Power Supply PSU4 | Failure detected | Asserted\n"
                "  a1 | %s | %s | Power Unit PWR_REDUNDANCY | Redundancy Lost | Asserted\n") % (d0, t0, d0, t0, d1, t1, d1, t1)
    c.node_hosts = peers(c, h, 1)
    c.missing.add("dmesg")
    b, a = sym(c)
    c.title = "B200 job: throughput drop, one rack under maintenance"
    c.reported = "Step %.2fs -> %.2fs. Datacenter ops were doing PDU work on a neighbouring rack." % (b, a)
    c.notes = dict(hard="HW power brake on every GPU of one host from a failed PSU; an old, recovered AC-lost event in SEL", missing="dmesg")
    return c


@case
def c13(k):  # hbm degradation: SBE growth -> XID 94 -> restart
    c = Case(k, "hbm_degradation", None, 113, n_hosts=8, model="A100", naming="a", driver="535.161.08")
    std_presentation(c, k)
    h = c.fl.job_hosts[1]
    s = c.gs(h, 4)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    s["sbe"] = Cnt(2, 0, 0.9, c.onset)
    s["remap"] = {"corrected": 3, "uncorrected": 1, "pending": True, "failure": False}
    s["dbe"] = 1
    s["xid"] = 94
    t94 = c.onset + 1900
    s["xid_t"] = t94
    bus = c.fl.byname[h]["gpus"][4]["bus"]
    c.add_dmesg(h, c.onset + 300, "NVRM: Xid (PCI:0000:%s:00): 63, pid=%d, Row Remapper: New row marked for remapping, reset gpu to activate." % (bus, 22331))
    c.add_dmesg(h, t94, "NVRM: Xid (PCI:0000:%s:00): 94, pid=22331, name=python3, Ch 00000008, Contained: CE User Channel (0x9). RST: No, D-RST: No" % bus)
    c.nvml_events = {h: [{"device": 4, "type": "XidCriticalError", "data": 94, "time": iso(t94)}]}
    c.restart = (t94, t94 + 1100)
    c.slow[c.rank_of(h, 4)] = 1.04
    c.comp = "%s/gpu4" % h
    decoy_static_sbe(c, c.fl.job_hosts[5], 2, 61)
    c.node_hosts = peers(c, h, 1) + [c.fl.job_hosts[5]]
    c.logs.append("[rank%d]:[E%s] RuntimeError: CUDA error: uncorrectable ECC error encountered" % (c.rank_of(h, 4), ctime(t94)[4:10]))
    c.logs.append("[%s] INFO launcher: job restarted from checkpoint (attempt 2)" % iso(t94 + 1100))
    c.title = "Job crashed and auto-restarted"
    c.reported = "Restarted from checkpoint, lost ~20 minutes. Want to know if we should drain anything."
    c.notes = dict(hard="SBE climbing then a contained uncorrectable error; a peer has a larger but static SBE count", missing="-")
    return c


@case
def c14(k):  # hbm degradation counters-only: SBE storm, XID 92, no crash
    c = Case(k, "hbm_degradation", None, 114, n_hosts=16, model="H100", naming="node")
    std_presentation(c, k)
    h = c.fl.job_hosts[13]
    s = c.gs(h, 0)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    s["sbe"] = Cnt(11, 0, 4.2, c.onset)
    s["remap"] = {"corrected": 7, "uncorrected": 0, "pending": True, "failure": False}
    s["remap0"] = {"corrected": 1, "uncorrected": 0, "pending": False, "failure": False}
    s["xid"] = 92
    s["xid_t"] = c.onset + 600
    bus = c.fl.byname[h]["gpus"][0]["bus"]
    c.add_dmesg(h, c.onset + 600, "NVRM: Xid (PCI:0000:%s:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate" % bus)
    c.slow[c.rank_of(h, 0)] = 1.09
    c.comp = "%s/gpu0" % h
    for hh in c.fl.job_hosts[:6]:
        decoy_static_sbe(c, hh, c.rng.randint(0, 7))
    c.metric_hosts = c.fl.job_hosts
    c.node_hosts = [h, c.fl.job_hosts[2]]
    c.compute_col = True
    b, a = sym(c)
    c.title = "~%d%% slowdown, no crash" % pct(c)
    c.reported = "Step %.2fs -> %.2fs. Several GPUs report ECC errors in DCGM." % (b, a)
    c.notes = dict(hard="several hosts with old static SBE counts; one GPU grows thousands in window; compute_s points at the same rank", missing="-")
    return c


@case
def c15(k):  # GPU fell off the bus, XID 79; job hangs
    c = Case(k, "gpu_fell_off_bus", None, 115, n_hosts=8, model="H100", naming="dc")
    std_presentation(c, k)
    h = c.fl.job_hosts[7]
    s = c.gs(h, 5)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    s["lost"] = True
    s["lost_at"] = c.onset
    s["xid"] = 79
    s["xid_t"] = c.onset
    g = c.fl.byname[h]["gpus"][5]
    c.add_dmesg(h, c.onset, "NVRM: GPU at PCI:0000:%s:00: %s\nNVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\nNVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % (g["bus"], g["uuid"], g["bus"], g["bus"]))
    c.stop_at = c.onset + 5
    r = c.rank_of(h, 5)
    c.logs.append("[rank%d]:[E%s 05:20:03.123992144 ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88121, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600020 milliseconds before timing out." % (0, "1107", 0))
    c.comp = "%s/gpu5" % h
    decoy_old_xid(c, c.fl.job_hosts[0], 2, 79, 12)
    c.node_hosts = [c.fl.job_hosts[0], h]
    c.title = "Job hung, NCCL watchdog timeouts on all ranks"
    c.reported = "Every rank timed out in the same all-reduce. Rank 0's host had a GPU issue before (XID 79 two weeks ago)."
    c.notes = dict(hard="old XID 79 on rank 0's host is history; the live one is on another host; sticky DCGM XID gauge on both", missing="-")
    return c


@case
def c16(k):  # fell off bus: raw kmsg multi-line form, nvml missing, metrics stop
    c = Case(k, "gpu_fell_off_bus", None, 116, n_hosts=16, model="H200", naming="ip")
    std_presentation(c, k)
    c.dmesg_style = "kmsg"
    h = c.fl.job_hosts[4]
    s = c.gs(h, 2)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    s["lost"] = True
    s["lost_at"] = c.onset
    g = c.fl.byname[h]["gpus"][2]
    c.add_dmesg(h, c.onset, "NVRM: The NVIDIA GPU %s:00.0\nNVRM: (PCI ID: 10de:%s) installed in this system has\nNVRM: fallen off the bus and is not responding to commands." % ("0000:" + g["bus"], c.fl.m["dev"]))
    c.stop_at = c.onset + 5
    c.missing |= {"nvml"}
    c.comp = "%s/gpu2" % h
    c.node_hosts = peers(c, h, 1)
    c.alert("NodeNotReady", {"instance": c.fl.job_hosts[5]}, c.onset + 100, summary="kubelet not ready")
    c.title = "Training job stopped making progress"
    c.reported = "Job stuck since around %s. Kubernetes flagged a different node NotReady at the same time." % iso(c.onset + 100)[11:16]
    c.notes = dict(hard="newer driver wording without an Xid number, raw /dev/kmsg; one GPU's DCGM series stop; nvml.json absent", missing="nvml.json")
    return c


@case
def c17(k):  # NVLink fault with XID 74
    c = Case(k, "nvlink_fault", None, 117, n_hosts=8, model="H100", naming="b7")
    std_presentation(c, k)
    h = c.fl.job_hosts[2]
    s = c.gs(h, 7)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    for l in (4, 5):
        s["crc"][l] = Cnt(0, 0, 35.0, c.onset)
        s["replay_nv"][l] = Cnt(0, 0, 6.0, c.onset)
        s["rec"][l] = Cnt(0, 0, 0, c.onset, jumps=[(c.onset + 60, 1)])
    s["xid"] = 74
    s["xid_t"] = c.onset + 60
    c.add_dmesg(h, c.onset + 60, "NVRM: Xid (PCI:0000:%s:00): 74, pid=58812, name=python3, NVLink: fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % c.fl.byname[h]["gpus"][7]["bus"])
    for gi in range(8):
        c.slow[c.rank_of(h, gi)] = 1.35 if gi == 7 else 1.0
    c.comp = "%s/gpu7" % h
    c.gs(c.fl.job_hosts[1], 3)["crc"][0] = Cnt(1200)
    c.node_hosts = peers(c, h, 1)
    b, a = sym(c)
    c.title = "Intra-node all-gather slow on one node?"
    c.reported = "Step %.2fs -> %.2fs." % (b, a)
    c.notes = dict(hard="XID 74 and CRC/replay growth on two links of one GPU; a peer GPU has an old static CRC count", missing="-")
    return c


@case
def c18(k):  # NVLink counters only at 256 hosts
    c = Case(k, "nvlink_fault", None, 118, n_hosts=256, model="H100", naming="dc", hosts_per_leaf=32, spines=8)
    std_presentation(c, k)
    c.steps_every = 50
    h = c.fl.job_hosts[187]
    s = c.gs(h, 4)
    s["onset"] = c.onset
    for kk in ("clk", "temp", "pw", "reasons"):
        s[kk] = s[kk + "0"]
    for l in (9,):
        s["crc"][l] = Cnt(0, 0, 22.0, c.onset)
        s["replay_nv"][l] = Cnt(0, 0, 4.0, c.onset)
    rng = random.Random(1818)
    for hh in rng.sample(c.fl.job_hosts, 40):
        if hh != h:
            gg = c.gs(hh, rng.randint(0, 7))
            gg["crc"][rng.randint(0, 17)] = Cnt(rng.randint(50, 40000))
            gg["replay_nv"][rng.randint(0, 17)] = Cnt(rng.randint(1, 300))
    c.comm_f = 1.7
    c.compute_col = False
    c.comp = "%s/gpu4" % h
    c.metric_hosts = [h, c.fl.job_hosts[186], c.fl.job_hosts[0]]
    c.metric_light_hosts = c.fl.job_hosts
    c.light_fams = ["DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"]
    c.gz |= {"metrics", "steps"}
    c.node_hosts = [h, c.fl.job_hosts[186]]
    c.node_exporter = False
    b, a = sym(c)
    c.title = "2048-GPU run: step time regression, no errors reported"
    c.reported = "Step %.2fs -> %.2fs. No XIDs in alerting, NCCL quiet. 40-ish nodes show nonzero NVLink counters on the dashboard." % (b, a)
    c.notes = dict(hard="256 hosts; NVLink CRC counts on ~40 hosts are static history; one link of one GPU grows in window; no XID, no compute column",
                   missing="node data only for 2 hosts; steps without compute_s")
    return c


@case
def c19(k):  # SDC: param checksum divergence
    c = Case(k, "silent_data_corruption", None, 119, n_hosts=8, model="H100", naming="a")
    std_presentation(c, k)
    c.checksum = True
    h = c.fl.job_hosts[4]
    c.sdc_rank = c.rank_of(h, 6)
    c.sdc_from = c.onset
    c.comp = "%s/gpu6" % h
    decoy_warm(c, h, 6, 77)
    decoy_old_xid(c, c.fl.job_hosts[3], 1, 13, 5)
    c.node_hosts = [c.fl.job_hosts[3], h]
    c.title = "Loss curve looks off after resume?"
    c.reported = "Eval loss diverged slightly from the reference run. No errors, no crashes. Throughput normal."
    c.notes = dict(hard="one rank's param_checksum disagrees with its replicas; no error anywhere; the same GPU is warm (decoy)", missing="-")
    return c


@case
def c20(k):  # SDC, shuffled rows, old XID 48 history on another GPU, steps gz
    c = Case(k, "silent_data_corruption", None, 120, n_hosts=16, model="A100", naming="node", driver="470.182.03")
    std_presentation(c, k)
    c.checksum = True
    c.shuffle_rows = True
    c.gz.add("steps")
    h = c.fl.job_hosts[9]
    c.sdc_rank = c.rank_of(h, 2)
    c.sdc_from = c.start + 600
    c.comp = "%s/gpu2" % h
    hh = c.fl.job_hosts[12]
    g = c.fl.byname[hh]["gpus"][5]
    c.add_dmesg(hh, c.start - 8 * 86400, "NVRM: Xid (PCI:0000:%s:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1." % g["bus"])
    c.boot[hh] = c.start - 9 * 86400
    c.gs(hh, 5)["xid"] = c.gs(hh, 5)["xid0"] = 48
    c.node_hosts = [h, hh]
    c.metric_hosts = [h, hh]
    c.title = "Gradient norm spikes, replicas suspected inconsistent"
    c.reported = "grad_norm had a few spikes. Another team says host %s had ECC trouble last week." % hh
    c.notes = dict(hard="old DBE XID on another host is history; checksum mismatch on a different rank; old driver field names", missing="-")
    return c


@case
def c21(k):  # host contention: CPU hog
    c = Case(k, "host_contention", None, 121, n_hosts=8, model="H100", naming="dc")
    std_presentation(c, k)
    h = c.fl.job_hosts[3]
    for gi in range(8):
        c.slow[c.rank_of(h, gi)] = 1.42 + gi * 0.004
        s = c.gs(h, gi)
        s["onset"] = c.onset
        for kk in ("clk", "temp", "pw", "reasons"):
            s[kk] = s[kk + "0"]
        s["pw"] = s["pw0"] - 80
        s["reasons"] = 0
    c.top[h] = ("top - %s up 21 days,  3:12,  0 users,  load average: 231.55, 198.02, 121.40\n"
                "Tasks: 1412 total,  97 running, 1315 sleeping,   0 stopped,   0 zombie\n"
                "%%Cpu(s): 71.2 us, 26.1 sy,  0.0 ni,  1.9 id,  0.0 wa,  0.0 hi,  0.8 si,  0.0 st\n"
                "MiB Mem : 2063793.4 total, 301112.9 free, 1402241.1 used, 360439.4 buff/cache\n\n"
                "    PID USER      PR  NI    VIRT    RES    SHR S  %%CPU  %%MEM     TIME+ COMMAND\n"
                " 884121 root      20   0   12.1g   2.1g  12300 R  6388   0.1 811:02.11 xz\n"
                "  22310 train     20   0  112.4g  21.2g   1.1g R  98.7   1.1   3202:11 python3\n"
                "  22311 train     20   0  112.3g  21.1g   1.1g R  97.9   1.1   3199:48 python3\n") % iso(c.end)[11:19]
    c.psi[h] = {"pressure-cpu": "some avg10=71.32 avg60=68.10 avg300=44.95 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % 9911232117,
                "cpu_rates": (0.01, 0.7), "onset": c.onset}
    c.psi[c.fl.job_hosts[2]] = {"pressure-cpu": "some avg10=1.02 avg60=0.88 avg300=0.91 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % 442013,
                                "cpu_rates": (0.01, 0.01)}
    c.logs.append("[%s] INFO cron %s: log-archiver (xz -T0) started for /var/log/train-archive" % (iso(c.onset - 10), h))
    c.comp = h
    c.node_hosts = peers(c, h, 1)
    b, a = sym(c)
    c.title = "Straggler node, GPUs look idle-ish"
    c.reported = "Step %.2fs -> %.2fs. 8 ranks on one node are consistently late; their GPUs draw less power." % (b, a)
    c.notes = dict(hard="all 8 ranks of one host slow; GPUs show no throttle and lower power (starved); top and PSI show the CPU hog", missing="-")
    return c


@case
def c22(k):  # host contention: memory pressure
    c = Case(k, "host_contention", None, 122, n_hosts=16, model="H200", naming="b7")
    std_presentation(c, k)
    h = c.fl.job_hosts[10]
    for gi in range(8):
        c.slow[c.rank_of(h, gi)] = 1.25 + gi * 0.003
    c.psi[h] = {"pressure-memory": "some avg10=38.11 avg60=35.92 avg300=22.40 total=%d\nfull avg10=21.70 avg60=19.55 avg300=12.03 total=%d\n" % (2207712231, 1193221001),
                "pressure-cpu": "some avg10=4.12 avg60=3.80 avg300=3.10 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % 99312020,
                "pressure-io": "some avg10=9.10 avg60=8.77 avg300=5.21 total=%d\nfull avg10=7.80 avg60=7.12 avg300=4.33 total=%d\n" % (312220119, 288120221)}
    c.psi[c.fl.job_hosts[9]] = {"pressure-memory": "some avg10=0.00 avg60=0.00 avg300=0.00 total=1022\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=611\n"}
    c.add_dmesg(h, c.onset + 200, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0")
    c.add_dmesg(h, c.onset + 201, "Out of memory: Killed process 771202 (pt_data_worker) total-vm:88121220kB, anon-rss:61230112kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:120112kB oom_score_adj:0")
    c.top[h] = ("top - %s up 5 days,  1:02,  0 users,  load average: 61.20, 58.11, 40.02\n"
                "Tasks: 1208 total,   9 running, 1199 sleeping,   0 stopped,   0 zombie\n"
                "%%Cpu(s): 18.2 us, 22.9 sy,  0.0 ni, 38.1 id, 19.9 wa,  0.0 hi,  0.9 si,  0.0 st\n"
                "MiB Mem : 2063793.4 total,   4101.2 free, 2049112.0 used,  10580.2 buff/cache\n"
                "MiB Swap:  65536.0 total,    112.0 free,  65424.0 used.   2211.0 avail Mem\n\n"
                "    PID USER      PR  NI    VIRT    RES    SHR S  %%CPU  %%MEM     TIME+ COMMAND\n"
                "    411 root      20   0       0      0      0 R  99.1   0.0 211:10.20 kswapd0\n"
                " 902211 etl       20   0 1201.2g 1.102t   1212 D  88.2  56.0  91:02.11 spark-executor\n") % iso(c.end)[11:19]
    c.comp = h
    c.node_hosts = peers(c, h, 1)
    c.compute_col = True
    b, a = sym(c)
    c.title = "H200 job slowed, one dataloader worker OOM-killed"
    c.reported = "Step %.2fs -> %.2fs. A dataloader worker was OOM-killed — maybe our input pipeline?" % (b, a)
    c.notes = dict(hard="reported text points at the input pipeline; only one host's 8 ranks are slow; memory PSI and a co-scheduled process", missing="-")
    return c


@case
def c23(k):  # input pipeline stall
    c = Case(k, "input_pipeline_stall", "job", 123, n_hosts=8, model="H100", naming="a")
    std_presentation(c, k)
    c.data_wait = c.C * 0.9
    for hh in c.fl.job_hosts:
        for gi in range(8):
            s = c.gs(hh, gi)
            f = c.C / (c.C + c.M + c.data_wait)
            s["util_t"] = (lambda on: (lambda t: 100 if t < on else 56))(c.onset)
        for ni in c.n[hh].values():
            ni["bytes"] = Cnt(ni["bytes"].base, ni["util"] * ni["bps"], ni["util"] * ni["bps"] * (c.C + c.M) / (c.C + c.M + c.data_wait), c.onset)
    hh = c.fl.job_hosts[6]
    gpu_throttle(c, hh, 0, c.gs(hh, 0)["clk0"] - 30, 0x4, pw=c.gs(hh, 0)["lim"] - 2)
    c.slow = {}
    c.logs += ["[%s] WARNING data: shard fetch from s3://corp-llm-data/tok-v7/ slow: p50=4.1s p99=19.8s (prefetch queue empty)" % iso(c.onset + 60),
               "[%s] WARNING data: dataloader waited 1.8s for batch (num_workers=8)" % iso(c.onset + 400)]
    c.node_hosts = [c.fl.job_hosts[0], hh]
    b, a = sym(c)
    c.title = "Step time nearly doubled at %s" % iso(c.onset)[11:16]
    c.reported = "All ranks slower together (%.2fs -> %.2fs). GPU utilization dropped everywhere. Power-cap alert on one GPU." % (b, a)
    c.alert("GPUPowerCapped", {"hostname": hh, "gpu": "0"}, c.onset + 30, summary="SW power cap active")
    c.notes = dict(hard="job-wide, no straggler in compute_s; the only per-GPU oddity is the normal SW power cap; logs show the data source slowing", missing="-")
    return c


@case
def c24(k):  # input pipeline stall, no compute column, steps truncated, logs missing
    c = Case(k, "input_pipeline_stall", "job", 124, n_hosts=16, model="A100", naming="dc", driver="525.85.12")
    std_presentation(c, k)
    c.data_wait = c.C * 1.3
    c.compute_col = False
    for hh in c.fl.job_hosts:
        for gi in range(8):
            c.gs(hh, gi)["util_t"] = (lambda on: (lambda t: 100 if t < on else 44))(c.onset)
        for ni in c.n[hh].values():
            ni["bytes"] = Cnt(ni["bytes"].base, ni["util"] * ni["bps"], ni["util"] * ni["bps"] * (c.C + c.M) / (c.C + c.M + c.data_wait), c.onset)
    c.truncate.add("steps")
    c.node_hosts = [c.fl.job_hosts[3], c.fl.job_hosts[12]]
    c.metric_hosts = c.fl.job_hosts
    for hh in c.node_hosts:
        c.psi[hh] = {"pressure-io": "some avg10=0.42 avg60=0.51 avg300=0.40 total=%d\nfull avg10=0.10 avg60=0.11 avg300=0.09 total=%d\n" % (912201, 302110),
                     "pressure-cpu": "some avg10=0.90 avg60=0.85 avg300=0.80 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" % 301220}
    decoy_aer(c, c.fl.job_hosts[12], 3, 4)
    c.missing.add("logs")
    c.logs = []
    c.title = "Utilization down on all A100 nodes"
    c.reported = "GPU util fell from ~100%% to ~45%% on every node at once; collection of the training logs failed."
    c.notes = dict(hard="no compute column, no logs; steps.csv truncated mid-row; all GPUs and NICs idle more at once with no fabric/host errors",
                   missing="job/logs; steps.csv truncated")
    return c


@case
def c25(k):  # NCCL restricted to one HCA
    c = Case(k, "nccl_misconfiguration", "job", 125, n_hosts=8, model="H100", naming="b7")
    std_presentation(c, k)
    c.start_slow = True
    c.comm_f = 4.5
    c.nccl_env = [("NCCL_IB_HCA", "mlx5_0"), ("NCCL_IB_TIMEOUT", "22")]
    c.nccl_hcas = ["mlx5_0"]
    for hh in c.fl.job_hosts:
        for d, ni in c.n[hh].items():
            if d == "mlx5_0":
                ni["bytes"] = Cnt(ni["bytes"].base, 0.93 * ni["bps"])
                ni["wait"] = Cnt(ni["wait"].base, ni["wait_rate"] * 30)
            else:
                ni["bytes"] = Cnt(ni["bytes"].base, 0)
                ni["wait"] = Cnt(ni["wait"].base, 0)
    c.onset = c.T0
    c.node_hosts = [c.fl.job_hosts[0], c.fl.job_hosts[5]]
    b, a = sym(c)
    c.title = "New cluster runs slower than the reference run"
    c.reported = "Same model and batch as on the old cluster, but %.2fs per step instead of about %.2fs. mlx5_0 on every node shows high transmit wait." % (a, b)
    c.alert("IBPortXmitWaitHigh", {"instance": c.fl.job_hosts[0] + ":9100", "device": "mlx5_0"}, c.start + 60, summary="port_xmit_wait growing fast")
    c.notes = dict(hard="one of eight NICs carries everything from step 1; alert names the busy NIC; env line restricts NCCL", missing="-")
    return c


@case
def c26(k):  # NCCL restricted to 2 of 8 on RoCE, via launcher env
    c = Case(k, "nccl_misconfiguration", "job", 126, n_hosts=16, model="H200", ll="Ethernet", naming="ip")
    std_presentation(c, k)
    c.start_slow = True
    c.comm_f = 2.8
    c.nccl_env = [("NCCL_IB_HCA", "=mlx5_0,mlx5_1"), ("NCCL_IB_GID_INDEX", "3")]
    c.nccl_hcas = ["mlx5_0", "mlx5_1"]
    for hh in c.fl.job_hosts:
        for d, ni in c.n[hh].items():
            if d in ("mlx5_0", "mlx5_1"):
                ni["bytes"] = Cnt(ni["bytes"].base, 0.9 * ni["bps"])
                ni["cnp"] = Cnt(ni["cnp"].base, 600)
            else:
                ni["bytes"] = Cnt(ni["bytes"].base, 0)
                ni["cnp"] = Cnt(ni["cnp"].base, 0)
    c.onset = c.T0
    c.logs.append("[%s] INFO launcher: env from template roce-2rail-debug.env applied" % iso(c.T0 - 700))
    c.node_hosts = [c.fl.job_hosts[2], c.fl.job_hosts[14]]
    c.switch_cmd = True
    decoy_warm(c, c.fl.job_hosts[2], 7, 81)
    b, a = sym(c)
    c.title = "RoCE pod underperforming since bring-up"
    c.reported = "Step %.2fs vs %.2fs expected from the benchmark. ECN marks and CNPs on a couple of NICs per node." % (a, b)
    c.notes = dict(hard="two NICs per host saturated with CNPs (congestion is real but self-inflicted), six idle from the first step", missing="-")
    return c


# ---------------------------------------------------------------- healthy controls
def healthy_base(k, seed, **kw):
    c = Case(k, "healthy", None, seed, **kw)
    std_presentation(c, k)
    c.comp = None
    return c


@case
def c27(k):  # spare host with idle GPUs at low PCIe gen; alert on it
    c = healthy_base(k, 127, n_hosts=9, model="H100", naming="a", job_hosts=["gpu-a%03d" % i for i in range(1, 9)])
    c.ranks_explicit = True
    spare = "gpu-a009"
    c.node_hosts = [spare, "gpu-a004"]
    c.alert("GPUPCIeLinkDegraded", {"Hostname": spare, "gpu": "2"}, c.start + 900, summary="PCIe gen below max")
    c.title = "PCIe link alert on gpu-a009"
    c.reported = "Alert fired for PCIe link speed. Job owners see normal step time but asked us to check."
    c.notes = dict(hard="spare host (no ranks): idle GPUs at Gen1 in P8 — power saving, not a downtrain", missing="-")
    return c


@case
def c28(k):  # warm GPU with no throttle reasons + thermal alert + normal SW power cap everywhere
    c = healthy_base(k, 128, n_hosts=8, model="H100", naming="dc")
    h = c.fl.job_hosts[5]
    decoy_warm(c, h, 3, 84)
    c.node_hosts = [h, c.fl.job_hosts[4]]
    c.alert("GPUTemperatureHigh", {"hostname": h, "gpu": "3"}, c.start + 600, summary="GPU temperature above 83C")
    c.logs.append("[%s] INFO trainer: step time p50 unchanged, MFU 48.2%%" % iso(c.end - 300))
    c.title = "Temperature alert on a training node"
    c.reported = "Temp alert on gpu3; the job seems fine. Is this node at risk?"
    c.notes = dict(hard="84C GPU with no throttle reasons at full clock; SW power cap on other busy GPUs", missing="-")
    return c


@case
def c29(k):  # correctable AER + old XID + static counters; checkpoint spikes
    c = healthy_base(k, 129, n_hosts=16, model="A100", naming="node", driver="535.161.08")
    h = c.fl.job_hosts[7]
    decoy_aer(c, h, 4, 5)
    decoy_old_xid(c, c.fl.job_hosts[8], 1, 79, 20)
    decoy_static_sbe(c, h, 6, 12)
    c.node_hosts = [h, c.fl.job_hosts[8]]
    c.logs.append("[%s] INFO checkpoint: saved step checkpoint in 48.2s" % iso(c.start + 1800))
    c.title = "PCIe errors in dmesg on a training node"
    c.reported = "Found PCIe Bus Error lines in dmesg and an old XID 79 on the neighbouring node. Throughput looks the same."
    c.notes = dict(hard="a few correctable AER on a full-width Gen4 link; XID 79 three weeks old; static SBE", missing="-")
    return c


@case
def c30(k):  # benign: planned restart + RoCE pause noise, metrics missing
    c = healthy_base(k, 130, n_hosts=12, model="H200", ll="Ethernet", naming="b7", hosts_per_leaf=4, spines=2)
    c.restart = (c.start + 1500, c.start + 2100)
    for hh in c.fl.job_hosts:
        for ni in c.n[hh].values():
            ni["rxp"] = Cnt(ni["rxp"].base, 0.3)
    c.missing.add("metrics")
    c.switch_cmd = True
    c.node_hosts = [c.fl.job_hosts[1], c.fl.job_hosts[9]]
    c.logs.append("[%s] INFO launcher: planned restart to pick up config change (max_steps)" % iso(c.start + 1500))
    c.logs.append("[%s] INFO launcher: job restarted from checkpoint (attempt 2)" % iso(c.start + 2100))
    c.title = "Gap in training progress this morning"
    c.reported = "Throughput graph shows a gap of ~10 minutes; some NICs report pause frames. Was there a fabric problem?"
    c.notes = dict(hard="planned restart gap in steps; a trickle of received pauses on all NICs (normal); metrics not collected", missing="metrics/")
    return c


@case
def c31(k):  # healthy at 64 hosts with one slow step blip (all ranks) and a dmesg truncated
    c = healthy_base(k, 131, n_hosts=64, model="B200", naming="ip", driver="570.124.06", hosts_per_leaf=16)
    c.steps_every = 20
    c.truncate.add("dmesg")
    h = c.fl.job_hosts[40]
    decoy_warm(c, h, 0, 80)
    c.gs(c.fl.job_hosts[12], 3)["crc"][2] = Cnt(310)
    c.node_hosts = [h, c.fl.job_hosts[12]]
    c.metric_hosts = c.fl.job_hosts[:4] + [h, c.fl.job_hosts[12]]
    c.title = "Weekly health review of the B200 pod"
    c.reported = "Nothing obviously wrong; reviewing flagged counters before the long run. One node's dmesg collection was cut short."
    c.notes = dict(hard="static NVLink CRC history, warm GPU without reasons, SW power cap; dmesg truncated", missing="dmesg truncated on one host")
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    truth = []
    for i, fn in enumerate(CASES, 1):
        c = fn(i)
        o = c.build()
        o.write(a.out)
        truth.append((c.cid, c.cause, c.comp, c.notes.get("hard", ""), c.notes.get("missing", "-")))
    return truth


if __name__ == "__main__":
    main()
