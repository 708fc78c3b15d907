#!/usr/bin/env python3
"""Write the keystone evaluation set: DIR/<case>/bundle/... and DIR/<case>/truth.json.

    python3 evals/keystone/write_incidents.py --out DIR

Standard library only. Deterministic: a seeded random.Random per case, no wall clock, sorted writes,
gzip with mtime=0.
"""
import argparse
import calendar
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ksfleet import Case, Ctr, render, Out, watchdog  # noqa: E402
from fleetkit import build, throttle, alert, old_xid, pause_link, eth_netdev  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def T(day, hh, mm):
    return calendar.timegm((2026, 11, day, hh, mm, 0, 0, 0, 0))


def hm(t):
    import time
    return time.strftime("%H:%M", time.gmtime(t))


# ============================================================================================
# pcie_downtrain


@case
def ks01(c):
    """GPU link retrains to Gen3 mid-run; compute_s shows no straggler; idle spare at Gen1 as a decoy."""
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dash", ll="InfiniBand", ports="ib", spares=1, sonic=False,
                                      leafname="ib-leaf-%02d", spinename="ib-spine-%02d")
    on = c.S + 1900
    h = hosts[3]
    g = h.gpus[5]
    g.gen_cur = 3
    g.replay.at(on - 40, 30.0).at(on + 20, 0.02)
    g.aer_cor = 212
    for k in range(6):
        h.dmesg.append((on - 35 + k * 4, "pcieport 0000:%02x:01.0: AER: Corrected error received: 0000:%02x:00.0" % (g.bus - 1, g.bus)))
        h.dmesg.append((on - 35 + k * 4 + 0.0001, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
                        "nvidia 0000:%02x:00.0:   device [10de:2330] error status/mask=00000001/0000e000\n"
                        "nvidia 0000:%02x:00.0:    [ 0] RxErr                  (First)" % (g.bus, g.bus, g.bus)))
    # the GPU's rail now moves at Gen3 x16 (~16 GB/s) instead of the NIC's 50 GB/s: the ring runs at that rate
    c.comm.append((on, 2.35))
    old_xid(c, hosts[6], hosts[6].gpus[1], 9, 13, "pid=88121, name=python3, Graphics SM Warp Exception on (GPC 2, TPC 1, SM 0): Illegal Instruction Parameter")
    c.title = "Step time up ~{pct}%% since %s on llm-34b-pretrain" % hm(on)
    c.onset = on
    c.reported = "Throughput fell mid-run, no job changes. Per-rank compute times look flat. Someone noticed one node's GPUs idle in the dashboard."
    c.truth = {"root_cause": "pcie_downtrain", "component": "%s/gpu5" % h.name}
    c.job.update(name="llm-34b-pretrain")


@case
def ks02(c):
    """NIC came back at x4 after maintenance reboot; the NIC also sends some pauses (a consequence)."""
    hosts, spares, leaves, sp = build(c, 12, "H200", ll="Ethernet", naming="rack", ports="sonic", per_leaf=6)
    h = hosts[7]
    n = h.nics[2]
    n.w_cur = 4
    boot = c.S + 420
    h.boot = boot
    resume = c.S + 1500
    c.restarts = [(c.S + 300, resume, None)]
    c.job["step_offset"] = 0
    h.dmesg.append((boot + 6.1, "mlx5_core %s: 126.028 Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x4 link at 0000:%02x:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (n.sys_bus(), n.bus - 2)))
    c.comm.append((resume, 3.1))
    e = n.eth
    e["tx_prio3_pause"] = Ctr(0).at(resume, 180.0)
    e["tx_prio3_pause_duration"] = Ctr(0).at(resume, 180.0 * 14)
    e["outbound_pci_stalled_wr"] = Ctr(0).at(resume, 5200.0)
    e["outbound_pci_stalled_rd"] = Ctr(0).at(resume, 900.0)
    for hh in hosts:
        if hh is not h:
            for m in hh.nics:
                m.eth["rx_prio3_pause"] = Ctr(300).at(resume, 25.0)
                m.eth["rx_prio3_pause_duration"] = Ctr(900).at(resume, 25.0 * 14)
    c.title = "Tokens/s ~{tput}% lower after resuming from checkpoint"
    c.onset = resume
    c.reported = "We resumed after the maintenance window (BIOS updates on a few nodes). Same config, same nodes. Some RoCE pause counters are non-zero."
    c.alerts = [alert("RoCEPauseFramesTx", {"instance": h.name + ":9100", "device": n.ibdev}, "NIC transmitting PFC pauses", resume + 600)]
    c.truth = {"root_cause": "pcie_downtrain", "component": "%s/%s" % (h.name, n.ibdev)}
    c.job.update(name="moe-141b", compute=False)
    c.opts.update(dmesg="T", hostname_label="hostname")
    c._post = None


# ============================================================================================
# pfc_pause_storm


def _storm(c, origin_nic, on, rate, victims_rate):
    """A NIC that cannot drain its receive buffer transmits pauses; its leaf backs up; job NICs are victims."""
    e = origin_nic.eth
    e["tx_prio3_pause"] = Ctr(41).at(on, rate)
    e["tx_prio3_pause_duration"] = Ctr(820).at(on, rate * 330)
    e["rx_out_of_buffer"] = Ctr(12).at(on, 3100.0)
    e["rx_discards_phy"] = Ctr(0).at(on, 45.0)
    e["tx_pause_storm_warning_events"] = Ctr(0).at(on, 1 / 300.0)
    e["outbound_pci_stalled_wr"] = Ctr(0).at(on, 1.0)


@case
def ks03(c):
    hosts, spares, leaves, sp = build(c, 16, "H100", ll="Ethernet", naming="sea", ports="sonic", per_leaf=8, nnic=4, ngpu=8)
    on = c.S + 2200
    o = hosts[11].nics[3]
    _storm(c, o, on, 2600.0, 0)
    # victims: NICs behind the same leaf are paused hardest, the others through the spines
    for hh in hosts:
        for m in hh.nics:
            if m is o:
                continue
            same = m.switch == o.switch
            r = (1900.0 if same else 700.0) * (1.0 + 0.05 * m.idx)
            if hh is hosts[4]:
                r *= 1.5  # the most-paused victim is elsewhere
            m.eth["rx_prio3_pause"] = Ctr(500 + m.idx * 37).at(on, r)
            m.eth["rx_prio3_pause_duration"] = Ctr(4000).at(on, r * 300)
            m.eth["rx_prio3_pause_transition"] = Ctr(0)
    c.comm.append((on, 2.2))
    c.keep = [hosts[11], hosts[4], hosts[0], hosts[9]]
    c._post = lambda c: _uplink_storm(c, leaves, sp, on, src_leaf=leaves[1])
    c.title = "Step time up {x} since %s; all-reduce busbw from 180 to ~{bw} GB/s" % hm(on)
    c.onset = on
    c.reported = "Nothing changed in the job. A host alert fired on %s." % hosts[4].name
    c.alerts = [alert("RoCEPauseFramesRx", {"instance": hosts[4].name + ":9100"}, "Host receiving many PFC pauses", on + 300)]
    c.truth = {"root_cause": "pfc_pause_storm", "component": "%s/%s" % (hosts[11].name, o.ibdev)}
    c.job.update(name="dlrm-ft", gpn=8)
    c.opts.update(dmesg="journal")


def _uplink_storm(c, leaves, sp, on, src_leaf, rate=1200.0):
    # the origin's leaf pauses its uplinks (spines receive), spines pause the other leaves (they receive)
    for leaf in leaves:
        for lk in leaf.links:
            lp = leaf.port(lk["port"])
            spn = c.switches[lk["peer"]]
            spp = spn.port(lk["peer_port"])
            if leaf is src_leaf:
                lp.tx_pfc[3] = Ctr(0).at(on, rate)
                pause_link(lp, spp)
            else:
                spp.tx_pfc[3] = Ctr(0).at(on, rate * 0.4)
                pause_link(spp, lp)
    for pn, p in src_leaf.ports.items():
        if p.peer and p.peer[0] == "host" and p.rx_pfc[3].rate_at(on + 10) > 1000:
            p.wd = ("stormed", 1, 0, 412771)


@case
def ks04(c):
    """A spine port transmits pauses without receiving any; only switch-side counters were collected."""
    hosts, spares, leaves, sp = build(c, 24, "H100", ll="Ethernet", naming="node", ports="sonic", per_leaf=8, nnic=4,
                                      spines=2, uplinks_per_spine=2)
    on = c.S + 1500
    bad_leaf = leaves[2]
    spine = sp[1]
    # leaf-03's uplink to spine-02
    lk = [l for l in bad_leaf.links if l["peer"] == spine.name][0]
    lp = bad_leaf.port(lk["port"])
    spp = spine.port(lk["peer_port"])
    spp.tx_pfc[3] = Ctr(0).at(on, 3400.0)
    pause_link(spp, lp)
    lp.wd = ("stormed", 3, 2, 1838811)
    c.keep = []
    for hh in hosts:
        for m in hh.nics:
            if m.switch == bad_leaf.name:
                m.eth["rx_prio3_pause"] = Ctr(200).at(on, 1400.0 + 30 * m.idx)
                m.eth["rx_prio3_pause_duration"] = Ctr(800).at(on, 1400.0 * 280)
    c.comm.append((on, 1.9))
    c.title = "Training throughput down ~{tput}%% since %s, no host alerts" % hm(on)
    c.onset = on
    c.reported = "Node collector did not run (credentials expired), only fabric and exporter data. Step times are uniform across ranks."
    c.truth = {"root_cause": "pfc_pause_storm", "component": "%s/%s" % (spine.name, spp.name)}
    c.job.update(name="llm-13b-sft", compute=False)
    c.opts.update(hostname_label="hostname")


@case
def ks05(c):
    """Storm enters through a host-facing leaf port whose device is not in the job nor in the topology."""
    hosts, spares, leaves, sp = build(c, 12, "A100", ll="Ethernet", naming="ip", ports="sonic", per_leaf=6, nnic=4,
                                      spines=2, uplinks_per_spine=2)
    on = c.S + 2700
    leaf = leaves[1]
    ext = leaf.port("Ethernet120")  # storage gateway port, not a job host
    ext.rx_pfc[3] = Ctr(11).at(on, 2900.0)
    ext.in_oct = Ctr(10 ** 12, 2e8)
    ext.out_oct = Ctr(10 ** 12, 3e9).at(on, 2e8)
    ext.wd = ("stormed", 4, 3, 2231090)
    for hh in hosts:
        for m in hh.nics:
            if m.switch == leaf.name:
                r = 1300.0 + 20 * m.idx
            else:
                r = 380.0
            m.eth["rx_prio3_pause"] = Ctr(90).at(on, r)
            m.eth["rx_prio3_pause_duration"] = Ctr(700).at(on, r * 260)
    c.comm.append((on, 1.7))
    c.keep = [hosts[6], hosts[7], hosts[0], hosts[2]]
    c._post = lambda c: _uplink_storm(c, leaves, sp, on, src_leaf=leaf, rate=900.0)
    # decoy: one job NIC also transmitted a short burst of pauses long before the window
    hosts[2].nics[1].eth["tx_prio3_pause"] = Ctr(1840)
    c.title = "Step time {x} since %s" % hm(on)
    c.onset = on
    c.reported = "Storage team says the new checkpoint gateway went live this week. Step times are uniform across ranks."
    c.truth = {"root_cause": "pfc_pause_storm", "component": "%s/%s" % (leaf.name, ext.name)}
    c.job.update(name="vit-22b", c0=4.2, m0=1.3)
    c.opts.update(old_driver=True, driver="525.147.05", cuda="12.0", node_instance_port=False, dmesg="kmsg")
    for h in hosts:
        h.instance = "10.90.43.%s" % h.name.split("-")[-1]


# ============================================================================================
# ecmp_hash_polarization


def _ecmp(c, leaf, on, hot, total_rate, speed_bps=50e9):
    ups = [leaf.port(l["port"]) for l in leaf.links]
    for i, p in enumerate(ups):
        spn = c.switches[leaf.links[i]["peer"]]
        spp = spn.port(leaf.links[i]["peer_port"])
        bal = total_rate / len(ups)
        p.out_oct = Ctr(10 ** 14 + i * 10 ** 12, bal)
        if i in hot:
            p.out_oct.at(on, min(speed_bps * 0.985, total_rate / len(hot)))
            p.discards = Ctr(1200 + i).at(on, 5200.0)
        else:
            p.out_oct.at(on, bal * 0.04)
        p.in_oct = Ctr(10 ** 14 + i * 7 * 10 ** 11, bal)
        spp.in_oct = p.out_oct
        spp.out_oct = p.in_oct
    for l2 in c.switches.values():
        if l2.tier == "leaf" and l2 is not leaf:
            for i, lk in enumerate(l2.links):
                p = l2.port(lk["port"])
                p.out_oct = Ctr(10 ** 14 + i * 10 ** 12, total_rate / len(l2.links) * (1 + 0.02 * i))
                p.in_oct = Ctr(10 ** 14 + i * 10 ** 12, total_rate / len(l2.links) * (1 - 0.015 * i))
                spn = c.switches[lk["peer"]]
                spp = spn.port(lk["peer_port"])
                spp.in_oct, spp.out_oct = p.out_oct, p.in_oct


@case
def ks06(c):
    hosts, spares, leaves, sp = build(c, 16, "H100", ll="Ethernet", naming="dgx", ports="sonic", per_leaf=8, nnic=8,
                                      spines=4, uplinks_per_spine=2)
    on = c.S + 1300
    c.comm.append((on, 1.95))
    c._post = lambda c: _ecmp(c, leaves[1], on, hot=(2, 5), total_rate=9.6e10)
    hosts[9].gpus[2].temp = 83
    c.title = "Cross-rack all-reduce slow since %s" % hm(on)
    c.reported = "Login nodes got new NFS mount options at about the same time. Per-rank step times are uniform."
    c.alerts = [alert("GPUTemperatureHigh", {"Hostname": hosts[9].name, "gpu": "2"}, "GPU temperature above 82C", on + 200)]
    c.truth = {"root_cause": "ecmp_hash_polarization", "component": leaves[1].name}
    c.job.update(name="llm-70b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks07(c):
    hosts, spares, leaves, sp = build(c, 8, "H200", ll="Ethernet", naming="fqdn", ports="eos", per_leaf=4, nnic=8,
                                      spines=4, uplinks_per_spine=1, sonic=False, leafname="tor-b%d", spinename="agg-%d")
    on = c.S + 2100
    c.comm.append((on, 1.6))
    c._post = lambda c: _ecmp(c, leaves[0], on, hot=(1,), total_rate=4.4e10)
    c.title = "Job slower after the fabric maintenance window"
    c.reported = "Switch OS upgrade on the aggregation tier finished at %s; links all up, no errors on hosts." % hm(on - 900)
    c.truth = {"root_cause": "ecmp_hash_polarization", "component": leaves[0].name}
    c.job.update(name="diffusion-xl", compute=False, c0=3.1, m0=1.2)
    c.opts.update(hostname_label="hostname", dmesg="journal")


# ============================================================================================
# link_degradation


@case
def ks08(c):
    hosts, spares, leaves, sp = build(c, 10, "H100", naming="rack", ports="ib", per_leaf=10, sonic=False,
                                      leafname="ibsw-l%d", spinename="ibsw-s%d")
    on = c.S + 2000
    h = hosts[5]
    n = h.nics[3]
    n.c["symbol_error"] = Ctr(0).at(on - 300, 4.2)
    n.c["port_rcv_errors"] = Ctr(0).at(on - 300, 0.9)
    n.c["link_error_recovery"] = Ctr(0).bump(on - 120, 3).bump(on, 2)
    n.c["link_downed"] = Ctr(0).bump(on, 1)
    n.rate = 200
    n.rate_s = "200 Gb/sec (2X NDR)"
    n.carrier = Ctr(2).bump(on, 2)
    h.dmesg += [(on - 0.5, "mlx5_core %s %s: Port: 1 Link DOWN" % (n.sys_bus(), n.ibdev)),
                (on + 7.2, "mlx5_core %s %s: Port: 1 Link INIT" % (n.sys_bus(), n.ibdev)),
                (on + 7.9, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (n.sys_bus(), n.ibdev))]
    c.comm.append((on, 1.85))
    d = hosts[2].nics[7]
    d.c["symbol_error"] = Ctr(4012)
    d.c["port_rcv_errors"] = Ctr(37)
    c.alerts = [alert("InfinibandSymbolErrors", {"instance": hosts[2].name + ":9100", "device": d.ibdev}, "symbol_error above 1000", c.S + 600)]
    c.title = "Step time {x} since %s; NCCL warnings in logs" % hm(on)
    c.onset = on
    c.reported = "One IB alert has been firing since yesterday on another node."
    c.logs_extra.append((on + 3, "%s:22114:22290 [3] NCCL INFO NET/IB : %s:1 Got async event : port error" % (h.name, n.ibdev)))
    c.truth = {"root_cause": "link_degradation", "component": "%s/%s" % (h.name, n.ibdev)}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="plain")


@case
def ks09(c):
    hosts, spares, leaves, sp = build(c, 12, "H100", ll="Ethernet", naming="ip", ports="cumulus", per_leaf=6, nnic=4,
                                      sonic=False, leafname="leaf%d", spinename="spine%d")
    c.opts["fec"] = True
    on = c.S + 1200
    h = hosts[8]
    n = h.nics[1]
    n.fec = dict(mode="RS", corr=[Ctr(20000, 3.0), Ctr(21000, 3.0), Ctr(19000, 3.0).at(on, 41000.0), Ctr(22000, 3.0)],
                 unc=[Ctr(0), Ctr(0), Ctr(0).at(on, 6.5), Ctr(0)])
    n.eth["rx_symbol_err_phy"] = Ctr(0).at(on, 52.0)
    n.eth["rx_crc_errors_phy"] = Ctr(0).at(on, 6.5)
    n.hw["out_of_sequence"] = Ctr(3).at(on, 44.0)
    n.hw["packet_seq_err"] = Ctr(0).at(on, 12.0)
    n.hw["local_ack_timeout_err"] = Ctr(0).at(on, 0.4)
    c.comm.append((on, 1.45))
    c.title = "~{tput}% throughput regression, no errors reported by the job"
    c.onset = on
    c.reported = ("Nothing in dmesg. A few GPUs show SW power cap active in the dashboard. "
                  "Pause counters look normal.")
    c.truth = {"root_cause": "link_degradation", "component": "%s/%s" % (h.name, n.ibdev)}
    c.job.update(name="rec-ranker", c0=5.0, m0=1.9)
    c.opts.update(node_instance_port=False, hostname_label="hostname")
    for hh in c.hosts:
        hh.instance = "10.90.43.%s" % hh.name.split("-")[-1]


# ============================================================================================
# thermal_throttle


@case
def ks10(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="fqdn", ports="ib", sonic=False, leafname="ql-%02d",
                                      spinename="qs-%02d")
    on = c.S + 1700
    h = hosts[2]
    g = h.gpus[4]
    throttle(c, g, on, 1095, 0x48, temp=91, power=520)
    g._tv = Ctr(0).at(on, 0.93e9)
    warm = hosts[6].gpus[1]
    warm.temp = 84
    c.alerts = [alert("GPUTemperatureHigh", {"Hostname": hosts[6].name, "gpu": "1"}, "GPU temperature above 82C", c.S + 900)]
    c.title = "Iteration time regressed from {old} s to ~{new} s at %s" % hm(on)
    c.onset = on
    c.reported = "An alert fired earlier on one node. Dashboards otherwise look as usual."
    c.truth = {"root_cause": "thermal_throttle", "component": "%s/gpu4" % h.name}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks11(c):
    hosts, spares, leaves, sp = build(c, 8, "A100", naming="node", ports="ib", sonic=False, leafname="ibl-%d",
                                      spinename="ibs-%d", nnic=4)
    on = c.S + 2400
    h = hosts[5]
    h.sel = [(c.S - 20 * 86400, "Fan FAN3", "Fully Redundant", "Asserted"),
             (on - 420, "Fan FAN3", "Lower Critical going low", "Asserted"),
             (on - 410, "Fan FAN4", "Lower Critical going low", "Asserted"),
             (on - 405, "Fan Redundancy", "Redundancy Lost", "Asserted"),
             (on - 5, "Temperature GPU_Zone2", "Upper Non-critical going high", "Asserted")]
    h.fans = [("FAN1", 16200, "ok"), ("FAN2", 16080, "ok"), ("FAN3", 0, "cr"), ("FAN4", 0, "cr"),
              ("FAN5", 16440, "ok"), ("FAN6", 16320, "ok")]
    for g in h.gpus:
        throttle(c, g, on + g.index * 20, 1005 + 15 * g.index, 0x20 | (0x48 if g.index in (2, 5) else 0),
                 temp=88 + g.index % 3, power=330)
        g._tv = Ctr(0).at(on, 0.8e9)
    c.opts["garbage"] = {"nodes/%s/cmd/dmesg.txt" % h.name}
    c.title = "Job slowed to ~{keep}%% of normal speed around %s" % hm(on)
    c.onset = on
    c.reported = "dmesg on one host could not be read by the collector. Facilities replaced a PDU in another row yesterday."
    c.truth = {"root_cause": "thermal_throttle", "component": h.name}
    c.job.update(name="bert-xxl", compute=False, c0=5.2, m0=1.1)
    c.opts.update(old_driver=True, driver="525.147.05", cuda="12.0", dmesg="plain", sys_old_speed=True)
    for hh in c.hosts:
        for g in hh.gpus:
            g.clk = 1410 - 15  # A100s sit at the cap too
            g.reasons = 0x4


# ============================================================================================
# power_throttle


@case
def ks12(c):
    hosts, spares, leaves, sp = build(c, 12, "H100", naming="dash", ports="ib", sonic=False, leafname="ib-l%02d",
                                      spinename="ib-s%02d", per_leaf=6)
    on = c.S + 2000
    h = hosts[9]
    h.sel = [(on - 3, "Power Supply PS2", "Failure detected", "Asserted"),
             (on - 2, "Power Supply PS2", "Power Supply AC lost", "Asserted"),
             (on - 1, "Power Unit Redundancy", "Redundancy Lost", "Asserted"),
             (c.S - 40 * 86400, "System Event", "Timestamp Clock Sync", "Asserted")]
    for g in h.gpus:
        throttle(c, g, on, 1005 + 10 * (g.index % 3), 0x88, temp=g.temp - 8, power=300 + g.index)
    c.title = "Throughput dropped ~{tput}%% at %s" % hm(on)
    c.onset = on
    c.reported = "No job change, no alerts fired, per-rank timings were not enabled for this run."
    c.truth = {"root_cause": "power_throttle", "component": h.name}
    c.job.update(name="llm-70b-pretrain", compute=True)
    c.opts.update(dmesg="journal", hostname_label="hostname")


@case
def ks13(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="node", ports="ib", sonic=False, leafname="l%d", spinename="s%d")
    h = hosts[4]
    g = h.gpus[2]
    on = c.S - 7200
    g.plim = 400
    throttle(c, g, on, 1290, 0x4, temp=g.temp - 9, power=398)
    c.title = "New run is ~{pct}% slower than last week's run of the same config"
    c.onset = None
    c.reported = "Same container, same NCCL settings. Nodes came back from a burn-in test suite on Tuesday."
    c.truth = {"root_cause": "power_throttle", "component": "%s/gpu2" % h.name}
    c.job.update(name="llm-34b-pretrain", compute=False, start=c.S + 300)
    c.opts.update(dmesg="plain")
    c.opts["plain_metrics"] = True


# ============================================================================================
# hbm_degradation


@case
def ks14(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dgx", ports="ib", sonic=False)
    crash = c.S + 2300
    h = hosts[6]
    g = h.gpus[1]
    c.crash = (crash, "exit")
    g.dbe = Ctr(0).bump(crash - 2, 1)
    g.sbe = Ctr(0).at(crash - 1500, 0.05).bump(crash - 2, 3)
    g.remap = dict(corrected=0, uncorrected=1, pending=True, failure=False)
    g.events = [(crash - 2, 48, True), (crash - 1.9, 63, True)]
    h.dmesg += [(crash - 2, "NVRM: Xid (PCI:0000:%02x:00): 48, pid=311204, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x1f3c48a00 partition 3, subpartition 0." % g.bus),
                (crash - 1.9, "NVRM: Xid (PCI:0000:%02x:00): 63, pid=311204, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate." % g.bus)]
    r = [rk for rk, hh, gg in c.ranks if gg is g][0]
    c.logs_extra += [(crash + 1, "[rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered" % r),
                     (crash + 600.2, watchdog(crash + 600.2, 3, 88211))]
    d = hosts[1].gpus[6]
    d.remap = dict(corrected=1, uncorrected=0, pending=False, failure=False)
    d.sbe_agg_extra = 11
    c.title = "Job exited at %s and failed to restart twice" % hm(crash)
    c.reported = "Scheduler restarted the job twice, both times it died during init on the same allocation."
    c.truth = {"root_cause": "hbm_degradation", "component": "%s/gpu1" % h.name}
    c.job.update(name="llm-70b-pretrain")
    c.opts.update(dmesg="T", ecc_metrics=True)


@case
def ks15(c):
    hosts, spares, leaves, sp = build(c, 16, "H200", naming="sea", ports="sonic", ll="Ethernet", per_leaf=8, nnic=8)
    h = hosts[12]
    g = h.gpus[6]
    t1, t2 = c.S + 1400, c.S + 3300
    g.sbe = Ctr(140).at(c.S - 3600, 0.004).at(c.S + 600, 0.35)
    g.remap = dict(corrected=0, uncorrected=2, pending=True, failure=False)
    g._remap_t = t1
    g.events = [(t1, 94, True), (t2, 94, True)]
    for t in (t1, t2):
        h.dmesg.append((t, "NVRM: Xid (PCI:0000:%02x:00): 94, pid=%d, name=python3, Contained: FB DED (0x1, 0x0). physAddr: 0x%08x RST: No, D-RST: No" % (g.bus, 201000 + int(t) % 977, 0x2f1c4000 + int(t) % 4096)))
    c.restarts = [(t1 + 5, t1 + 480, None), (t2 + 5, t2 + 470, None)]
    d = hosts[3].gpus[0]
    d.sbe = Ctr(2)
    d.sbe_agg_extra = 14
    d.remap = dict(corrected=1, uncorrected=0, pending=False, failure=False)
    c.title = "Two unexplained job restarts in 40 minutes"
    c.reported = "No OOM, no node failures reported by the scheduler."
    c.truth = {"root_cause": "hbm_degradation", "component": "%s/gpu6" % h.name}
    c.job.update(name="llm-405b-sft", c0=7.5, m0=2.0)
    c.opts.update(dmesg="kmsg", ecc_metrics=True, hostname_label="hostname", gz={"metrics/dcgm.om"})


# ============================================================================================
# gpu_fell_off_bus


@case
def ks16(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dash", ports="ib", sonic=False)
    t = c.S + 2500
    h = hosts[1]
    g = h.gpus[3]
    g.lost, g.lost_at = True, t
    g.events = [(t, 79, True)]
    c.gpu_metric_stop[g] = t
    c.crash = (t, "hang")
    h.dmesg += [(t, "NVRM: GPU at PCI:0000:%02x:00: %s\nNVRM: GPU Board Serial Number: %s\nNVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\nNVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % (g.bus, g.uuid, g.serial, g.bus, g.bus))]
    r = [rk for rk, hh, gg in c.ranks if gg is g][0]
    c.logs_extra += [(t + 600 + 0.01 * k, watchdog(t + 600 + 0.01 * k, k, 51207, numel=131072)) for k in (0, 1, 2, 17, 40)]
    old_xid(c, hosts[5], hosts[5].gpus[0], 12, 31, "pid=71823, name=python3, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")
    c.title = "Training hung at %s, watchdog timeout 10 minutes later" % hm(t)
    c.reported = "All ranks report the same collective timeout."
    c.truth = {"root_cause": "gpu_fell_off_bus", "component": "%s/gpu3" % h.name}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks17(c):
    hosts, spares, leaves, sp = build(c, 12, "H100", naming="fqdn", ports="sonic", ll="Ethernet", per_leaf=6, nnic=4)
    t = c.S + 1900
    h = hosts[10]
    g = h.gpus[6]
    g.lost, g.lost_at = True, t
    c.gpu_metric_stop[g] = t
    c.crash = (t, "exit")
    h.dmesg += [(t, "NVRM: The NVIDIA GPU 0000:%02x:00.0\nNVRM: (PCI ID: 10de:2330) installed in this system has\nNVRM: fallen off the bus and is not responding to commands." % g.bus)]
    c.logs_extra += [(t + 30, "%s:40112:40391 [6] transport/net_ib.cc:1615 NCCL WARN NET/IB : Got completion from peer 10.12.4.77<51023> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.12.4.81 remoteGids::ffff:10.12.4.77" % hosts[3].name)]
    old_xid(c, hosts[2], hosts[2].gpus[5], 16, 79, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    c.opts.update(dmesg="kmsg", missing={"nodes/%s/cmd/nvidia-smi-q.txt" % h.name}, truncated={"metrics/dcgm.om"})
    c.title = "Job crashed with NCCL errors at %s" % hm(t)
    c.reported = "First error seen on %s (NCCL status=12). nvidia-smi output was not captured on one node." % hosts[3].name
    c.truth = {"root_cause": "gpu_fell_off_bus", "component": "%s/gpu6" % h.name}
    c.job.update(name="code-llm-15b", c0=4.4, m0=1.3)


# ============================================================================================
# nvlink_fault


@case
def ks18(c):
    """256 hosts; the fault is only in NVLink counters climbing on one GPU; hundreds of static old counts."""
    hosts, spares, leaves, sp = build(c, 256, "H100", naming="node", ports="ib", sonic=False, per_leaf=32, spines=4,
                                      uplinks_per_spine=1, leafname="ibl%02d", spinename="ibs%02d")
    on = c.S + 1600
    bad = hosts[173]
    g = bad.gpus[5]
    for k in (2, 3, 11):
        g.nvl["crc"][k] = Ctr(0).at(on, 55.0 if k == 3 else 8.0)
        g.nvl["replay"][k] = Ctr(0).at(on, 6.0 if k == 3 else 1.0)
        g.nvl["recovery"][k] = Ctr(0).bump(on + 300, 1) if k == 3 else Ctr(0)
    rng = c.rng
    for h in hosts:
        h.nvlink_cmd = True
        for gg in h.gpus:
            if gg is not g and rng.random() < 0.09:
                k = rng.randrange(18)
                gg.nvl["crc"][k] = Ctr(rng.choice([1, 4, 17, 120, 340, 1802, 9911]))
                gg.nvl["replay"][k] = Ctr(rng.choice([0, 1, 2, 30]))
    c.comm.append((on, 1.8))
    c.keep = [hosts[i] for i in sorted(set(rng.sample(range(256), 5)) | {173, 172, 174})]
    c.title = "2048-GPU pretraining ~{pct}%% slower since %s" % hm(on)
    c.onset = on
    c.reported = "No XIDs, no job errors, no straggler visible in the per-rank timings we log. Node collector ran on a sample of hosts."
    c.truth = {"root_cause": "nvlink_fault", "component": "%s/gpu5" % bad.name}
    c.job.update(name="llm-405b-pretrain", compute=False, log_every=60, c0=9.0, m0=2.2)
    c.opts.update(scrape=180, nvlink_metrics=True, snmp=False, gz={"metrics/dcgm.om", "metrics/node.om", "job/steps.csv", "topology.json"},
                  lspci=False, hostname_label="hostname")


@case
def ks19(c):
    hosts, spares, leaves, sp = build(c, 8, "B200", naming="sea", ports="ib", sonic=False)
    on = c.S + 2100
    h = hosts[3]
    g = h.gpus[6]
    h.nvlink_cmd = True
    for k in (8, 9):
        g.nvl["crc"][k] = Ctr(0).at(on, 120.0)
        g.nvl["replay"][k] = Ctr(0).at(on, 14.0)
        g.nvl["recovery"][k] = Ctr(0).bump(on + 5, 2).bump(on + 900, 1)
    h.dmesg += [(on + 5, "NVRM: Xid (PCI:0000:%02x:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 09 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)" % g.bus),
                (on + 900, "NVRM: Xid (PCI:0000:%02x:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 08 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)" % g.bus)]
    g.events = [(on + 5, 145, True)]
    # tensor parallel inside the node: every rank of the host waits on the slow link before the DP collective
    for gg in h.gpus:
        gg.slow.append((on, 1.42))
    c.title = "Step time up ~{pct}%% since %s" % hm(on)
    c.onset = on
    c.reported = "Per-rank timings point at one node's ranks. That node had a GPU tray reseated last week."
    c.truth = {"root_cause": "nvlink_fault", "component": "%s/gpu6" % h.name}
    c.job.update(name="llm-1t-moe", c0=8.0, m0=1.8)
    c.opts.update(driver="570.133.20", cuda="12.8", nccl_version="2.26.2", dmesg="plain", hostname_label="hostname")
    for hh in c.hosts:
        for gg in hh.gpus:
            gg.clk = 1965 - 30


# ============================================================================================
# silent_data_corruption


@case
def ks20(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dgx", ports="ib", sonic=False, place=False)
    order = [hosts[i] for i in (5, 0, 7, 2, 6, 1, 4, 3)]
    c.place(order, order=[7, 6, 5, 4, 3, 2, 1, 0])
    c.job["checksum"] = True
    c.sdc = (37, 420)
    rk, h, g = c.ranks[37]
    old_xid(c, hosts[0], hosts[0].gpus[3], 8, 13, "pid=51222, name=python3, Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174")
    c.title = "Replica checksum alarm from the training framework"
    c.reported = "The framework's replica consistency check failed at step 420 and keeps failing. Loss is still decreasing."
    c.truth = {"root_cause": "silent_data_corruption", "component": "%s/gpu%d" % (h.name, g.index)}
    c.job.update(name="llm-34b-pretrain", log_every=10)
    c.opts.update(dmesg="T")


@case
def ks21(c):
    hosts, spares, leaves, sp = build(c, 4, "A100", naming="ip", ports="ib", sonic=False, spares=1)
    c.write_ranks = False
    c.job["checksum"] = True
    c.sdc = (13, 310)
    rk, h, g = c.ranks[13]
    c.restarts = [(c.S + 2600, c.S + 2900, None)]
    hosts[2].gpus[4].sbe_agg_extra = 11
    hosts[0].gpus[1].temp = 79
    c.title = "Replica consistency check failing after a restart from checkpoint"
    c.reported = "We restarted from the latest checkpoint after a scheduler hiccup. The consistency checker flags disagreements."
    c.truth = {"root_cause": "silent_data_corruption", "component": "%s/gpu%d" % (h.name, g.index)}
    c.job.update(name="speech-2b", c0=3.2, m0=0.9, shuffle=True)
    c.opts.update(old_driver=True, driver="535.161.08", cuda="12.2", dmesg="journal", node_instance_port=False,
                  gz={"job/steps.csv"})
    for hh in c.hosts:
        hh.instance = "10.90.43.%s" % hh.name.split("-")[-1]
        for gg in hh.gpus:
            gg.clk = 1410 - 15
    c.opts["plain_metrics"] = True


# ============================================================================================
# host_contention


@case
def ks22(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dgx", ports="ib", sonic=False)
    on = c.S + 1800
    h = hosts[6]
    h.contention = (on, 221.0, 61.0, "cpu", 1.38)
    h.top_extra = [(88123, "root", 20, 0, "2.1g", "1.4g", "3124", "R", 1594.0, 0.1, "831:02.44", "pigz"),
                   (88119, "root", 20, 0, "211m", "12m", "3100", "S", 42.0, 0.0, "20:11.02", "tar")]
    c.opts["truncated"] = {"metrics/node.om"}
    c.title = "Iteration time up ~{pct}%% since %s" % hm(on)
    c.onset = on
    c.reported = "A log-archival cron job was rolled out to the fleet today. Node exporter data looks partial."
    c.truth = {"root_cause": "host_contention", "component": h.name}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="plain")


@case
def ks23(c):
    hosts, spares, leaves, sp = build(c, 12, "H200", naming="rack", ports="sonic", ll="Ethernet", per_leaf=6, nnic=4)
    on = c.S + 2200
    h = hosts[2]
    h.contention = (on, 41.0, 38.0, "mem", 1.27)
    h.top_extra = [(141, "root", 20, 0, "0", "0", "0", "R", 99.3, 0.0, "14:12.81", "kswapd0"),
                   (142, "root", 20, 0, "0", "0", "0", "R", 97.1, 0.0, "13:58.07", "kswapd1"),
                   (2231988, "svc-etl", 20, 0, "1.6t", "1.2t", "1.1g", "S", 12.0, 61.0, "70:11.42", "java")]
    hosts[8].load = 62.0
    c.title = "Throughput down ~{tput}%% since %s" % hm(on)
    c.onset = on
    c.reported = "A data-team ETL service was scheduled onto some GPU nodes this week."
    c.truth = {"root_cause": "host_contention", "component": h.name}
    c.job.update(name="moe-141b", compute=False)
    c.opts.update(dmesg="journal", hostname_label="hostname")
    h.dmesg.append((on + 400, "java invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"))


# ============================================================================================
# input_pipeline_stall


@case
def ks24(c):
    hosts, spares, leaves, sp = build(c, 16, "H100", naming="dash", ports="ib", sonic=False, per_leaf=8)
    on = c.S + 1500
    c.wait.append((on, 3.4))
    c.job["data_log"] = True
    warm = hosts[11].gpus[7]
    warm.temp = 85
    c.alerts = [alert("GPUTemperatureHigh", {"Hostname": hosts[11].name, "gpu": "7"}, "GPU temperature above 82C", on + 120)]
    c.title = "MFU down from {mfu0}%% to ~{mfu1}%% since %s" % hm(on)
    c.onset = on
    c.reported = "A GPU temperature alert fired around the same time on one node."
    c.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    c.job.update(name="llm-70b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks25(c):
    hosts, spares, leaves, sp = build(c, 8, "A100", naming="fqdn", ports="ib", sonic=False, nnic=4)
    on = c.S + 2000
    c.wait.append((on, 2.6))
    c.job["data_log"] = True
    hosts[3].nics[2].c["link_downed"] = Ctr(3)
    hosts[3].nics[2].c["symbol_error"] = Ctr(211)
    c.logs_extra += [(on + 35, "[rank0] WARNING: dataloader: worker 5 fetch from s3://corpus-v7/shard-0%d took 41.2s (retry 2/5)" % 4121),
                     (on + 610, "[rank0] WARNING: dataloader: 14 of 16 workers blocked on object store reads")]
    c.opts["missing"] = {"job/steps.csv"}
    c.title = "Throughput dropped at %s, GPU utilization sawtooth on every node" % hm(on)
    c.reported = "Per-rank step timings were not uploaded this run. One IB port has a link_downed count."
    c.truth = {"root_cause": "input_pipeline_stall", "component": "job"}
    c.job.update(name="bert-xxl", c0=4.0, m0=1.0)
    c.opts.update(old_driver=True, driver="525.147.05", cuda="12.0", dmesg="plain")
    for hh in c.hosts:
        for gg in hh.gpus:
            gg.clk = 1410 - 15


# ============================================================================================
# nccl_misconfiguration


@case
def ks26(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="node", ports="ib", sonic=False)
    c.job["start"] = c.S + 600
    for h in hosts:
        for n in h.nics:
            n.share = 1.0 if n.idx == 0 else 0.0
            n.used = n.idx == 0
        h.nics[0].c["port_xmit_wait"] = Ctr(10 ** 9).at(c.S + 600, 2.2e6)
    c.comm.append((c.S + 600, 4.6))
    c.nccl_env = [("NCCL_IB_HCA", "mlx5_0"), ("NCCL_IB_TIMEOUT", "22")]
    c.nccl_using = "[0]mlx5_0:1/IB"
    c.alerts = [alert("InfinibandXmitWaitHigh", {"instance": hosts[2].name + ":9100", "device": "mlx5_0"}, "port_xmit_wait rate high", c.S + 1800)]
    c.title = "New launch of llm-34b is {x} slower than the previous run"
    c.onset = None
    c.reported = "Launcher scripts were migrated to the new template this morning. IB congestion alert on one port."
    c.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks27(c):
    hosts, spares, leaves, sp = build(c, 12, "H100", naming="sea", ports="sonic", ll="Ethernet", per_leaf=6, nnic=8)
    c.job["start"] = c.S + 420
    for h in hosts:
        for n in h.nics:
            n.share = 0.5 if n.idx in (0, 1) else 0.0
            n.used = n.idx in (0, 1)
    c.comm.append((c.S + 420, 3.3))
    c.opts["nccl_log"] = False
    c.title = "Restarted run is much slower than yesterday's on the same nodes"
    c.reported = "Debug logging was turned off in the new image. No hardware alerts."
    c.truth = {"root_cause": "nccl_misconfiguration", "component": "job"}
    c.job.update(name="moe-141b", compute=False)
    c.opts.update(dmesg="journal", hostname_label="hostname")


# ============================================================================================
# healthy controls


@case
def ks28(c):
    hosts, spares, leaves, sp = build(c, 8, "H100", naming="dash", ports="ib", sonic=False, spares=2)
    c.title = "Dashboard: 16 GPUs at PCIe Gen1 and 0% utilization"
    c.reported = "Is the job degraded? Step time looks the same as yesterday to me."
    c.truth = {"root_cause": "healthy", "component": None}
    c.job.update(name="llm-34b-pretrain")
    c.opts.update(dmesg="plain")


@case
def ks29(c):
    hosts, spares, leaves, sp = build(c, 8, "H200", naming="fqdn", ports="ib", sonic=False)
    w = hosts[5].gpus[3]
    w.temp = 85
    w.mtemp = 92
    hosts[1].gpus[0].aer_cor = 3
    hosts[1].dmesg.append((c.S + 1200, "pcieport 0000:17:01.0: AER: Corrected error received: 0000:18:00.0\nnvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)\nnvidia 0000:18:00.0:   device [10de:2335] error status/mask=00001000/0000a000\nnvidia 0000:18:00.0:    [12] Timeout"))
    hosts[4].nics[6].c["symbol_error"] = Ctr(93)
    c.alerts = [alert("GPUTemperatureHigh", {"Hostname": hosts[5].name, "gpu": "3"}, "GPU temperature above 82C", c.S + 300)]
    c.title = "GPU temperature alert on a training node"
    c.reported = "Please check whether the job is affected."
    c.truth = {"root_cause": "healthy", "component": None}
    c.job.update(name="llm-70b-pretrain")
    c.opts.update(dmesg="T")


@case
def ks30(c):
    hosts, spares, leaves, sp = build(c, 12, "H100", naming="node", ports="sonic", ll="Ethernet", per_leaf=6, nnic=4)
    c.restarts = [(c.S + 2000, c.S + 2450, None)]
    old_xid(c, hosts[4], hosts[4].gpus[2], 12, 79, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    old_xid(c, hosts[9], hosts[9].gpus[6], 5, 13, "pid=4411, name=python3, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter")
    c.logs_extra += [(c.S + 1990, "[rank0] Saving checkpoint to /ckpt/moe-141b/latest (planned preemption for maintenance)"),
                     (c.S + 2450, "[rank0] Resuming from /ckpt/moe-141b/latest")]
    c.title = "Gap in training metrics around %s" % hm(c.S + 2000)
    c.reported = "Was this a hardware failure? DCGM shows a non-zero XID on two GPUs."
    c.truth = {"root_cause": "healthy", "component": None}
    c.job.update(name="moe-141b")
    c.opts.update(dmesg="kmsg", hostname_label="hostname")


@case
def ks31(c):
    hosts, spares, leaves, sp = build(c, 16, "H100", naming="sea", ports="sonic", ll="Ethernet", per_leaf=8, nnic=8)
    rng = c.rng
    c.keep = [hosts[0], hosts[5], hosts[11]]
    for h in hosts:
        for n in h.nics:
            n.eth["rx_prio3_pause"] = Ctr(rng.randrange(2000, 9000), rng.uniform(0.2, 0.9))
            n.eth["rx_prio3_pause_duration"] = Ctr(rng.randrange(10 ** 5, 10 ** 6), rng.uniform(20, 80))
            n.eth["tx_prio3_pause"] = Ctr(rng.randrange(0, 40), 0.0)
    c.title = "PFC pause counters non-zero on every RoCE host"
    c.reported = "New monitoring shows rx_prio3_pause increasing everywhere. Is the fabric congested? Job seems fine."
    c.truth = {"root_cause": "healthy", "component": None}
    c.job.update(name="llm-70b-pretrain", compute=False)
    c.opts.update(dmesg="T", hostname_label="hostname", gz={"metrics/node.om"})


@case
def ks32(c):
    hosts, spares, leaves, sp = build(c, 8, "B200", naming="dgx", ports="ib", sonic=False, spares=1)
    c.job["checksum"] = True
    hosts[2].sel = [(c.S + 900, "Fan Redundancy", "Redundancy Lost", "Asserted"),
                    (c.S + 960, "Fan Redundancy", "Fully Redundant", "Asserted")]
    hosts[2].fans = [("FAN%d" % i, 14800 + i * 60, "ok") for i in range(1, 7)]
    c.logs_extra += [(c.S + 2900, "[rank0] WARNING: loss spike 2.41 -> 3.07 at iter 880 (batch from shard web-0917); grad clipped")]
    c.title = "Loss spike at %s — possible silent corruption?" % hm(c.S + 2900)
    c.reported = "Loss jumped once and recovered. A fan event was logged on one node about that time."
    c.truth = {"root_cause": "healthy", "component": None}
    c.job.update(name="llm-1t-moe", c0=8.0, m0=1.8)
    c.opts.update(driver="570.133.20", cuda="12.8", dmesg="journal", hostname_label="hostname")
    for hh in c.hosts:
        for gg in hh.gpus:
            gg.clk = 1965 - 30


# ============================================================================================


def interesting(h):
    if h.dmesg or h.sel or h.contention or h.fans or h.load != 18.0 or h.top_extra:
        return True
    for g in h.gpus:
        if (g.fault or g.lost or g.events or g.temp >= 78 or g.remap["corrected"] or g.remap["uncorrected"] or g.aer_cor
                or g.plim != g.m["plim"] or g.gen_cur != g.gen_max or g.slow or g.xid_last
                or g.sbe.segs != [(-1e18, 0.0)] or g.sbe.base):
            return True
    for n in h.nics:
        if n.w_cur != n.w_max or n.rate != 400 or n.fec or any(k in n.c for k in ("symbol_error", "link_downed")):
            return True
        if n.eth.get("tx_prio3_pause") is not None and (n.eth["tx_prio3_pause"].base or len(n.eth["tx_prio3_pause"].segs) > 1):
            return True
    return False


def choose_node_hosts(c):
    """Node data for the hosts that matter plus a few peers (the spec allows partial node coverage)."""
    if getattr(c, "keep", None) is not None:
        keep = set(x.name for x in c.keep)
    else:
        jh = c.job_hosts()
        keep = set(h.name for h in c.hosts if interesting(h))
        for h in jh[:1] + jh[-1:]:
            keep.add(h.name)
        spares = [h for h in c.hosts if h not in jh]
        for h in spares[:1]:
            keep.add(h.name)
    for h in c.hosts:
        if h.name not in keep:
            h.node_data = False


def fill_title(c):
    """Numbers in a title are measured from the simulated job, never asserted."""
    if "{" not in c.title:
        return
    on = getattr(c, "onset", None)
    ref = c.job["c0"] + c.job["m0"]
    if on is None:
        before = ref
        after = c.mean_dur(c.job["start"] + 120, c.now)
    else:
        before = c.mean_dur(c.job["start"], on) or ref
        after = c.mean_dur(on + 300, c.now)
    r = after / before
    mfu0 = c.job.get("mfu0", 0.48) * 100
    c.title = c.title.format(pct=int(round((r - 1) * 100)), tput=int(round((1 - 1 / r) * 100)), x="%.1fx" % r,
                             old="%.1f" % before, new="%.1f" % after, keep=int(round(100 / r)),
                             mfu0=int(round(mfu0)), mfu1=int(round(mfu0 * ref / after)),
                             bw=int(round(180 / c._piece(c.comm, c.now, 1.0))))


def make(idx, fn, outdir):
    cid = "ks-%02d" % (idx + 1)
    rng = random.Random(0x6B73 * 1000 + idx)
    c = Case(cid, rng, T(3 + idx % 25, 1, 40 + (idx * 7) % 15))
    c.job["start"] = c.S - 2400
    fn(c)
    choose_node_hosts(c)
    if not c.opts.get("plain_metrics"):
        c.opts["gz"] = set(c.opts["gz"]) | {"metrics/dcgm.om", "metrics/node.om", "metrics/switch.om"}
    c.simulate()
    fill_title(c)
    c.traffic()
    c.defaults()
    post = getattr(c, "_post", None)
    if post:
        post(c)
    out = Out(os.path.join(outdir, cid))
    render(c, out)
    out.write()
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i, fn in enumerate(CASES):
        cid = "ks-%02d" % (i + 1)
        if a.only and cid not in a.only.split(","):
            continue
        make(i, fn, a.out)
        print(cid, "ok")


if __name__ == "__main__":
    main()
