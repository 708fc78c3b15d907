"""The incidents. Each function builds one fleet model and sets its truth; sources are printed from it."""
import time
from fleetsim import Case, Ctr, Gauge, set_traffic, pause_chain, model_steps, bdf_sys, bdf_nvml, iso
from kit import (H100, H200, CONTIG, NONCONTIG, fabric, uplink_traffic, nccl_init, train_log, swcap_decoy, alert,
                 dot_names, ip_names, pod_names, plain_names, xid, stamp, uplink_port, spine_port, host_port)


def slow_job(c, onset, factor, skip=()):
    for h in c.job_hosts():
        for g in h.gpus:
            if (h.name, g.idx) in skip:
                continue
            g.tensor = Gauge(g.tensor.pre, round(g.tensor.pre / factor, 3), onset, jitter=0.02)


def nic(c, hn, ib):
    return next(n for n in c.H(hn).nics if n.ibdev == ib)


def std_logs(c, hosts, extra=(), hca=None, env=(), gdr=True, every=5):
    head = [stamp(c.t0 + 5) + " INFO launcher: %d ranks on %d nodes, job %s" % (c.job["ranks"], len(c.job_hosts()), c.job["name"])]
    head += nccl_init(c, hosts, hca_used=hca, extra_env=env, gdr=gdr)
    c.logs["rank0.log"] = train_log(c, head=head, extra=extra, every=every)


# ----------------------------------------------------------------------------- pcie_downtrain
def rh01():
    c = Case("rh-01", 101, "2026-11-03T01:20:00Z")
    c.gz = set()
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 32 * 60
    bad = hs[3]; g = bad.gpus[5]
    g.gen = 3; g.replay = Ctr(0, 142, on); g.aer_cor = Ctr(0, 9, on)
    for k in range(3):
        c.dmesg(bad, on + 40 + k * 611, "pcieport 0000:%02x:01.0: AER: Corrected error received: 0000:%02x:00.0" % (g.bus - 1, g.bus))
        c.dmesg(bad, on + 40.0002 + k * 611, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" % g.bus)
    swcap_decoy(c, hs[1], 2); swcap_decoy(c, hs[6], 7, 30)
    hs[5].gpus[1].temp = Gauge(79, jitter=1)
    set_traffic(c, 180, on, 150)
    rk = 3 * 8 + 5
    model_steps(c, 1.55, 0.42, 50, rank_slow={rk: (1.24, on)})
    slow_job(c, on, 1.19, skip={(bad.name, 5)})
    std_logs(c, hs)
    c.title = "llm-70b step time up ~20% since about 01:52"
    c.reported = "Throughput panel dropped around 01:50. Nothing restarted. Someone mentioned a power capping alert on gpu1019 earlier this week."
    c.alerts = [alert("GPUPowerCapped", {"Hostname": hs[1].name, "gpu": "2"}, c.t0 + 600, "GPU clocks limited by SW power cap")]
    c.truth = ("pcie_downtrain", "%s/gpu5" % bad.name)
    c.notes = dict(hard="rank straggler small per-GPU link clue; two SW-power-cap decoys and an alert on one; warm GPU",
                   missing="none", single="no")
    return c


def rh02():
    c = Case("rh-02", 102, "2026-11-04T07:00:00Z")
    c.job["name"] = "moe-ft-32"
    hs = fabric(c, ip_names(6), H100, "Ethernet", NONCONTIG, "enp", "sonic", per_leaf=3)
    on = c.t0 + 25 * 60
    bad = hs[2]; n = nic(c, bad.name, "mlx5_9")
    n.w = 4
    set_traffic(c, 160, on, 100)
    k = 41000
    pause_chain(c, ("nic", bad.name, "mlx5_9"), [], k, on, dur_us_per=3)
    n.c["rx_out_of_buffer"] = Ctr(12, 12 + 9100, on)
    n.c["outbound_pci_stalled_wr_events"] = Ctr(0, 118000, on)
    n.c["rx_discards_phy"] = Ctr(0, 0)
    swcap_decoy(c, hs[0], 4)
    model_steps(c, 1.1, 0.6, 45, comm_mult=(1.6, on), with_compute=False)
    slow_job(c, on, 1.35)
    std_logs(c, hs)
    c.dmesg_style = "journal"
    c.title = "moe-ft-32 all-to-all time up 60%, started mid-morning"
    c.reported = "Network team says the fabric looks clean apart from some pause frames. Firmware on the ConnectX cards was updated fleet-wide last Tuesday."
    c.truth = ("pcie_downtrain", "%s/mlx5_9" % bad.name)
    c.notes = dict(hard="the NIC transmits pauses because its PCIe link is narrow: a pause origin whose cause is the link; non-contiguous RDMA names",
                   missing="none", single="no")
    return c


# ----------------------------------------------------------------------------- pfc_pause_storm
def rh03():
    c = Case("rh-03", 103, "2026-11-05T13:30:00Z")
    c.job["name"] = "dense-180b"
    hs = fabric(c, pod_names(8), H200, "Ethernet", CONTIG, "ens", "sonic", per_leaf=8, nspine=2)
    on = c.t0 + 35 * 60
    set_traffic(c, 300, on, 130)
    org = hs[4].name
    victims = [(h.name, n.ibdev) for h in hs for n in h.nics if not (h.name == org and n.ibdev == "mlx5_3")]
    leaf = c.switches["leaf-01"]
    txp = [n.port for h in hs for n in h.nics if not (h.name == org and n.ibdev == "mlx5_3")] + [uplink_port("sonic", 0), uplink_port("sonic", 1)]
    pause_chain(c, ("nic", org, "mlx5_3"), [("leaf-01", None, txp)], 2600000, on, nic_victims=victims)
    o = nic(c, org, "mlx5_3")
    o.c["tx_pause_storm_warning_events"] = Ctr(0, 14, on); o.c["rx_out_of_buffer"] = Ctr(3, 388000, on)
    leaf.ports[o.port]["storm"] = True
    model_steps(c, 1.3, 0.5, 40, comm_mult=(3.6, on), with_compute=False)
    slow_job(c, on, 2.2)
    std_logs(c, hs)
    c.dmesg_style = "plain"
    c.title = "dense-180b 1.7x slower since 14:05"
    c.reported = "Every rank slowed at once. Network counters are up on every NIC we looked at."
    c.truth = ("pfc_pause_storm", "%s/mlx5_3" % org)
    c.notes = dict(hard="every NIC receives pauses; only one transmits them; leaf re-transmits to all", missing="none", single="no")
    return c


def rh04():
    c = Case("rh-04", 104, "2026-11-06T22:10:00Z")
    c.job["name"] = "vlm-34b"
    hs = fabric(c, ip_names(8, 92, 7, 10), H100, "Ethernet", CONTIG, "enp", "sonic", per_leaf=4, nspine=2)
    on = c.t0 + 28 * 60
    set_traffic(c, 240, on, 120)
    uplink_traffic(c, 0.5)
    l1 = c.switches["leaf-01"]
    hostports = [n.port for h in hs[:4] for n in h.nics]
    victims = [(h.name, n.ibdev) for h in hs[:4] for n in h.nics]
    pause_chain(c, ("port", "spine-01", spine_port("sonic", 0)), [("leaf-01", uplink_port("sonic", 0), hostports)], 1900000, on, nic_victims=victims)
    l1.ports[uplink_port("sonic", 0)]["storm"] = True
    model_steps(c, 1.2, 0.55, 40, comm_mult=(2.1, on), with_compute=False)
    slow_job(c, on, 1.6)
    swcap_decoy(c, hs[2], 3); swcap_decoy(c, hs[6], 0)
    std_logs(c, hs)
    c.title = "vlm-34b iteration time up 35% since 22:38"
    c.reported = "A network alert came in from leaf-01 at 22:39. Only one node had the collector running."
    c.alerts = [alert("SonicPfcWatchdogStorm", {"instance": "leaf-01", "ifName": uplink_port("sonic", 0)}, on + 90, "PFC storm detected on queue 3")]
    c.truth = ("pfc_pause_storm", "spine-01/%s" % spine_port("sonic", 0))
    c.notes = dict(hard="the watchdog and alert name the leaf uplink that receives the storm; the spine port that transmits it receives none; every job NIC is a victim",
                   missing="none", single="switch counters only (show pfc counters)")
    return c


def rh05():
    c = Case("rh-05", 105, "2026-11-07T03:00:00Z")
    c.job["name"] = "llm-13b-sft"
    names = ip_names(4, 90, 60, 21) + ip_names(4, 90, 61, 21)
    hs = fabric(c, names, H100, "Ethernet", NONCONTIG, "enp", "sonic", per_leaf=4, nspine=2, outside=tuple(names[4:]))
    on = c.t0 + 40 * 60
    set_traffic(c, 220, on, 110)
    uplink_traffic(c, 0.4)
    hostports = [n.port for h in hs[:4] for n in h.nics]
    victims = [(h.name, n.ibdev) for h in hs[:4] for n in h.nics]
    pause_chain(c, ("port", "leaf-02", uplink_port("sonic", 1)),
                [("spine-02", spine_port("sonic", 1), [spine_port("sonic", 0)]),
                 ("leaf-01", uplink_port("sonic", 1), hostports)], 1500000, on, nic_victims=victims)
    c.switches["spine-02"].ports[spine_port("sonic", 1)]["storm"] = True
    c.switches["leaf-01"].ports[uplink_port("sonic", 1)]["storm"] = True
    c.node_hosts = {names[0], names[2]}
    model_steps(c, 1.0, 0.4, 40, comm_mult=(2.4, on), with_compute=False)
    slow_job(c, on, 1.55)
    std_logs(c, hs[:4])
    c.dmesg_style = "kmsg"
    c.title = "llm-13b-sft slowed ~40% at 03:40, no node alarms"
    c.reported = "Only two of the four nodes had the collector installed. The other rack belongs to another team and we have no access to those hosts."
    c.truth = ("pfc_pause_storm", "leaf-02/%s" % uplink_port("sonic", 1))
    c.notes = dict(hard="origin two switch hops away on a leaf serving hosts outside the job; leaf -> spine -> leaf; watchdogs fire on victims",
                   missing="node data for 2 of 4 job hosts and all non-job hosts", single="switch counters")
    return c


def rh06():
    c = Case("rh-06", 106, "2026-11-08T10:45:00Z")
    c.job["name"] = "diffusion-xl"
    hs = fabric(c, plain_names(6, "gpu-c", 301), H200, "Ethernet", CONTIG, "ens", "arista", per_leaf=6, nspine=2)
    on = c.t0 + 20 * 60
    set_traffic(c, 200, on, 95)
    org = hs[1].name
    victims = [(h.name, n.ibdev) for h in hs for n in h.nics if not (h.name == org and n.ibdev == "mlx5_6")]
    txp = [n.port for h in hs for n in h.nics if not (h.name == org and n.ibdev == "mlx5_6")]
    pause_chain(c, ("nic", org, "mlx5_6"), [("leaf-01", None, txp)], 900000, on, nic_victims=victims, dur_us_per=11)
    o = nic(c, org, "mlx5_6")
    o.c["tx_pause_storm_warning_events"] = Ctr(0, 6, on); o.c["rx_out_of_buffer"] = Ctr(0, 204000, on)
    o.c["rx_prio3_pause"] = Ctr(0, 0)
    o.c["rx_prio3_pause_duration"] = Ctr(0, 0)
    model_steps(c, 1.4, 0.5, 40, comm_mult=(3.0, on), with_compute=False)
    slow_job(c, on, 2.0)
    swcap_decoy(c, hs[1], 6)
    std_logs(c, hs)
    c.title = "diffusion-xl throughput down by a third shortly after 11:05"
    c.reported = "No switch CLI access on this Arista pod, only SNMP. One GPU on gpu-c302 shows a power cap reason."
    c.alerts = [alert("GPUPowerCapped", {"hostname": org, "gpu": "6"}, on - 300, "GPU clocks limited by SW power cap")]
    c.truth = ("pfc_pause_storm", "%s/mlx5_6" % org)
    c.notes = dict(hard="no switch CLI; origin visible only in the NIC's ethtool counters; an alert and a power-cap decoy on the same host and same index",
                   missing="switch CLI (Arista, SNMP only)", single="ethtool -S of the origin")
    return c


# ----------------------------------------------------------------------------- ecmp_hash_polarization
def rh07():
    c = Case("rh-07", 107, "2026-11-09T04:00:00Z")
    c.job["name"] = "llm-34b"
    hs = fabric(c, ip_names(8, 88, 12, 30), H100, "Ethernet", CONTIG, "enp", "sonic", per_leaf=4, nspine=4)
    on = c.t0 + 30 * 60
    set_traffic(c, 230, on, 140)
    uplink_traffic(c, 0.5, polarized=("leaf-02", uplink_port("sonic", 2), 0.85))
    hot = c.switches["leaf-02"].ports[uplink_port("sonic", 2)]
    hot["out_disc"] = Ctr(1200, 1200 + 3400000, on)
    for h in hs:
        for n in h.nics:
            n.c["rx_prio3_pause"] = Ctr(100, 100 + c.rng.randint(300, 900))
    model_steps(c, 1.2, 0.6, 40, comm_mult=(1.75, on), with_compute=False)
    slow_job(c, on, 1.4)
    swcap_decoy(c, hs[5], 1)
    std_logs(c, hs)
    c.title = "llm-34b inter-rack collectives slow since 04:30"
    c.reported = "A routing policy change was rolled out in this pod at 04:28 (per change ticket). Links all up, no errors."
    c.truth = ("ecmp_hash_polarization", "leaf-02")
    c.notes = dict(hard="only uplink octets and discards show it; light benign pauses on every NIC", missing="none", single="no")
    return c


def rh08():
    c = Case("rh-08", 108, "2026-11-10T16:20:00Z")
    c.job["name"] = "rec-dlrm"
    hs = fabric(c, plain_names(12, "gpu-d", 101), H100, "Ethernet", CONTIG, "ens", "arista", per_leaf=4, nspine=4,
                leafname="tor-%02d", spinename="agg-%02d")
    on = c.t0 + 15 * 60
    set_traffic(c, 210, on, 120)
    uplink_traffic(c, 0.6, polarized=("tor-03", uplink_port("arista", 0), 0.9))
    c.switches["tor-03"].ports[uplink_port("arista", 0)]["out_disc"] = Ctr(0, 5100000, on)
    n = nic(c, hs[1].name, "mlx5_2"); n.c["rx_symbol_err_phy"] = Ctr(37, 37); n.c["link_down_events_phy"] = Ctr(1, 1)
    model_steps(c, 1.0, 0.7, 40, comm_mult=(1.8, on), with_compute=False)
    slow_job(c, on, 1.5)
    std_logs(c, hs)
    c.node_hosts = {h.name for h in hs[::4]}
    c.title = "rec-dlrm steps 1.3x slower from 16:35"
    c.reported = "No host changes. gpu-d102 had a cable reseated last week."
    c.truth = ("ecmp_hash_polarization", "tor-03")
    c.notes = dict(hard="evidence only in SNMP octets of the uplinks; old static symbol errors on a reseated NIC",
                   missing="no switch CLI (Arista, SNMP only)", single="SNMP switch counters")
    return c


# ----------------------------------------------------------------------------- link_degradation
def rh09():
    c = Case("rh-09", 109, "2026-11-11T08:00:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 2040, "dc1.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 22 * 60
    bad = hs[6]; n = nic(c, bad.name, "mlx5_4")
    n.rate = 200
    n.c["symbol_error"] = Ctr(0, 48211, on); n.c["port_rcv_errors"] = Ctr(0, 2210, on); n.c["link_downed"] = Ctr(0, 3, on)
    n.c["link_error_recovery"] = Ctr(0, 11, on)
    set_traffic(c, 250, on, 170)
    for k in range(3):
        t = on + 5 + k * 900
        c.dmesg(bad, t, "mlx5_core %s %s: Port: 1 Link INIT" % (bdf_sys(n.bus), n.ibdev))
        c.dmesg(bad, t + 4, "mlx5_core %s %s: Port: 1 Link ACTIVE" % (bdf_sys(n.bus), n.ibdev))
    hs[2].gpus[3].sbe = Ctr(4, 4)
    swcap_decoy(c, hs[6], 4)
    model_steps(c, 1.4, 0.5, 45, comm_mult=(1.7, on), with_compute=True)
    slow_job(c, on, 1.3)
    std_logs(c, hs, extra=[(on + 30, "%s:%d:%d [4] NCCL INFO NET/IB : mlx5_4:1 Got async event : port error" % (bad.name, 51122, 51190))])
    c.dmesg_style = "plain"
    c.collected_keys = ("before", "now")
    c.title = "step time +18% since 08:22 on llm-70b"
    c.reported = "No changes. One GPU on gpu2046 shows power capping."
    c.truth = ("link_degradation", "%s/mlx5_4" % bad.name)
    c.notes = dict(hard="plain dmesg without boot time (order only); power-cap decoy on the same host", missing="boot time in collected.json", single="no")
    return c


def rh10():
    c = Case("rh-10", 110, "2026-11-12T19:00:00Z")
    c.job["name"] = "dense-405b-stage2"
    names = pod_names(40, 20)
    hs = fabric(c, names, H200, "Ethernet", NONCONTIG, "ens", "sonic", per_leaf=8, nspine=2)
    on = c.t0 + 30 * 60
    set_traffic(c, 280, on, 235)
    bad = hs[17]; n = nic(c, bad.name, "mlx5_10")
    n.fec_corr = Ctr(9100, 9100 + 88000000, on); n.fec_unc = Ctr(0, 5300, on); n.fec_lane = 2
    n.c["packet_seq_err"] = Ctr(3, 3 + 4400, on); n.c["local_ack_timeout_err"] = Ctr(0, 37, on); n.c["out_of_sequence"] = Ctr(14, 14 + 5200, on)
    n.c["rx_crc_errors_phy"] = Ctr(0, 5300, on)
    for h in hs[::3]:
        for m in h.nics[:2]:
            m.fec_corr = Ctr(c.rng.randint(10 ** 5, 10 ** 7)); m.fec_corr.n = m.fec_corr.b + c.rng.randint(40, 300)
    hs[5].gpus[2].sbe = Ctr(2, 2); hs[30].gpus[7].replay = Ctr(12, 12)
    for h in hs:
        for g in h.gpus[:3]:
            if c.rng.random() < 0.5:
                swcap_decoy(c, h, g.idx, c.rng.choice([15, 30]))
    c.node_hosts = {h.name for h in hs[15:19]}
    model_steps(c, 1.5, 0.45, 35, comm_mult=(1.25, on), with_compute=False)
    slow_job(c, on, 1.08)
    std_logs(c, hs)
    c.gz = {"metrics/dcgm.om", "metrics/node.om", "metrics/switch.om", "job/steps.csv"}
    c.truncate = {"metrics/switch.om": 30000}
    c.title = "dense-405b stage 2: 6% slower than stage 1, no errors in job logs"
    c.reported = "Stage 2 started 19:00 on the same 40 nodes. Nothing obvious."
    c.truth = ("link_degradation", "%s/mlx5_10" % bad.name)
    c.notes = dict(hard="only FEC/retransmit counters climb on one NIC among old static FEC counts and many power-capped GPUs; no link flap",
                   missing="metrics/switch.om.gz truncated (unreadable)", single="ethtool FEC + hw_counters")
    return c


def rh11():
    c = Case("rh-11", 111, "2026-11-13T06:15:00Z")
    c.job["name"] = "llm-8b-sweep"
    hs = fabric(c, ip_names(4, 10, 2, 70), H100, "InfiniBand", ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_7"], "ib", "ib", ngpu=4)
    on = c.t0 + 18 * 60
    bad = hs[1]; n = nic(c, bad.name, "mlx5_7")
    n.rate = 100
    n.c["link_downed"] = Ctr(2, 9, on); n.c["symbol_error"] = Ctr(0, 902, on)
    n.carrier = Ctr(2, 16, on)
    set_traffic(c, 150, on, 90)
    model_steps(c, 0.8, 0.4, 45, comm_mult=(2.0, on), with_compute=False)
    slow_job(c, on, 1.5)
    c.missing = {"nodes/%s/cmd/dmesg.txt" % bad.name, "metrics/dcgm.om"}
    std_logs(c, hs, env=[("NCCL_IB_TIMEOUT", "22")])
    c.title = "8b sweep: steps a third slower from 06:33"
    c.reported = "DCGM exporter was being upgraded during this window so GPU metrics are missing."
    c.truth = ("link_degradation", "%s/mlx5_7" % bad.name)
    c.notes = dict(hard="dcgm and the host's dmesg missing; NIC at 100 Gb/s with flaps in sysfs only", missing="metrics/dcgm.om; dmesg of the faulty host", single="no")
    return c


# ----------------------------------------------------------------------------- thermal_throttle
def rh12():
    c = Case("rh-12", 112, "2026-11-14T14:00:00Z")
    c.job["name"] = "video-gen-12b"
    hs = fabric(c, pod_names(6, 3), H200, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 26 * 60
    bad = hs[2]; g = bad.gpus[6]
    g.temp = Gauge(68, 89, on, jitter=1); g.clock = Gauge(1980, 1395, on); g.reasons = Gauge(0x0, 0x60, on)
    g.thermal_viol = Ctr(0, int(3.1e12), on); g.power = Gauge(610, 455, on, jitter=5)
    for h in hs:
        if h is not bad:
            h.gpus[0].temp = Gauge(81, jitter=1)
    swcap_decoy(c, hs[4], 2)
    set_traffic(c, 170, on, 130)
    rk = 2 * 8 + 6
    model_steps(c, 1.6, 0.4, 45, rank_slow={rk: (1.38, on)})
    slow_job(c, on, 1.3, skip={(bad.name, 6)})
    g.tensor = Gauge(0.45, 0.44, on)
    std_logs(c, hs)
    c.old_driver = True; c.hostname_label = "Hostname"; c.reason_family = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"; c.driver = "525.147.05"
    for h in hs:
        h.driver = c.driver
    c.title = "video-gen-12b 30% slower since 14:26"
    c.reported = "Several GPUs sit above 80C on this pod all the time; facilities says the room is fine."
    c.truth = ("thermal_throttle", "%s/gpu6" % bad.name)
    c.notes = dict(hard="older driver (Throttle names, Hostname label, CLOCK_THROTTLE_REASONS); warm decoys without reasons on every other host", missing="none", single="no")
    return c


def rh13():
    c = Case("rh-13", 113, "2026-11-15T02:30:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 3100, "dc2.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 35 * 60
    bad = hs[5]
    for i, g in enumerate(bad.gpus):
        g.temp = Gauge(66, 86 + i % 4, on, jitter=1); g.clock = Gauge(1980, 1560 - i * 12, on)
        g.reasons = Gauge(0x0, 0x20 if i % 3 else 0x60, on); g.thermal_viol = Ctr(0, int(2.4e12 + i * 1e10), on)
    bad.fans = [("FAN1", "30h", "ok", "29.1", "8400 RPM"), ("FAN2", "31h", "ok", "29.2", "8520 RPM"),
                ("FAN3", "32h", "cr", "29.3", "0 RPM"), ("FAN4", "33h", "cr", "29.4", "0 RPM"),
                ("FAN5", "34h", "ok", "29.5", "8460 RPM"), ("FAN6", "35h", "ok", "29.6", "8400 RPM")]
    bad.sel = [(on - 95, "Fan #0x32", "Lower Critical going low", "Asserted"), (on - 94, "Fan #0x33", "Lower Critical going low", "Asserted"),
               (c.t0 - 86400 * 6, "Power Unit #0x01", "Power off/down", "Asserted")]
    set_traffic(c, 200, on, 160)
    ranks = list(range(40, 48))
    model_steps(c, 1.5, 0.45, 45, rank_slow={r: (1.25 + 0.01 * (r % 3), on) for r in ranks}, with_compute=False)
    slow_job(c, on, 1.22)
    swcap_decoy(c, hs[0], 1)
    c.missing = {"nodes/%s/cmd/dmesg.txt" % h.name for h in hs}
    std_logs(c, hs)
    c.title = "llm-70b 22% slower since 03:05"
    c.reported = "dmesg collection failed fleet-wide (permissions). Facilities did maintenance in hall 2 yesterday."
    c.truth = ("thermal_throttle", bad.name)
    c.notes = dict(hard="every GPU of one host throttles from one cause (fans in BMC data); no per-rank compute column", missing="dmesg on every host", single="no")
    return c


# ----------------------------------------------------------------------------- power_throttle
def rh14():
    c = Case("rh-14", 114, "2026-11-16T09:40:00Z")
    c.job["name"] = "llm-34b"
    hs = fabric(c, ip_names(6, 91, 8, 200), H200, "Ethernet", NONCONTIG, "enp", "sonic", per_leaf=6)
    c.swcap_share = 0.6
    on = c.t0 + 20 * 60
    bad = hs[3]
    for i, g in enumerate(bad.gpus):
        g.clock = Gauge(g.clock.pre, 960 + i * 5, on); g.reasons = Gauge(g.reasons.pre, 0x88, on)
        g.power = Gauge(g.power.pre, 330 + i * 3, on, jitter=5); g.power_viol = Ctr(0, int(3.6e12), on)
    bad.sel = [(on - 4, "Power Supply PS3", "Power Supply AC lost", "Asserted"), (on - 2, "Power Supply PS3", "Failure detected", "Asserted"),
               (on - 1, "System Event", "OEM System Boot Event", "Asserted"), (c.t0 - 86400 * 12, "Power Supply PS3", "Presence detected", "Asserted")]
    set_traffic(c, 190, on, 100)
    ranks = list(range(24, 32))
    model_steps(c, 1.3, 0.4, 45, rank_slow={r: (2.02, on) for r in ranks})
    slow_job(c, on, 1.75)
    std_logs(c, hs)
    c.dmesg_style = "journal"
    c.title = "llm-34b 1.8x slower since 10:00"
    c.reported = "Most GPUs fleet-wide show SW power cap; that is normal here. No XIDs."
    c.truth = ("power_throttle", bad.name)
    c.notes = dict(hard="60% of GPUs show the normal SW power cap; one host's eight GPUs show HW power brake after a PSU loss", missing="none", single="no")
    return c


def rh15():
    c = Case("rh-15", 115, "2026-11-17T11:00:00Z")
    c.job["name"] = "llm-8b-rlhf"
    hs = fabric(c, plain_names(4, "gpu-e", 11), H100, "InfiniBand", CONTIG, "ib", "ib")
    c.swcap_share = 0.5
    on = c.t0 + 15 * 60
    bad = hs[2]; g = bad.gpus[4]
    g.enforced = 300.0; g.power = Gauge(g.power.pre, 298.5, on, jitter=2); g.clock = Gauge(g.clock.pre, 1185, on); g.reasons = Gauge(g.reasons.pre, 0x4, on)
    g.power_viol = Ctr(0, int(4.2e12), on)
    for h in hs:
        for x in h.gpus:
            if x is not g and x.reasons.pre == 0x4:
                pass
    set_traffic(c, 150, on, 110)
    model_steps(c, 1.2, 0.35, 50, rank_slow={2 * 8 + 4: (1.62, on)})
    slow_job(c, on, 1.45, skip={(bad.name, 4)})
    std_logs(c, hs, extra=[(on - 20, "INFO ops: power policy agent applied profile 'eco-300' to selected devices (ticket OPS-4471)")])
    c.title = "rlhf job 45% slower since 11:15"
    c.reported = "Half the GPUs show SW Power Cap in nvidia-smi, as always."
    c.truth = ("power_throttle", "%s/gpu4" % bad.name)
    c.notes = dict(hard="the faulty GPU shows the same SW-power-cap bit as half the fleet; only the enforced limit and the clock depth differ",
                   missing="none", single="no")
    return c


# ----------------------------------------------------------------------------- hbm_degradation
def rh16():
    c = Case("rh-16", 116, "2026-11-18T00:40:00Z", minutes=120)
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 4400, "dc3.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 30 * 60
    bad = hs[1]; g = bad.gpus[2]
    g.sbe = Ctr(14, 14 + 61000, on); g.remap = {"corrected": 2, "uncorrected": 1, "pending": True, "failure": False}
    g.dbe = Ctr(0, 1, on + 3000)
    xid(c, bad, 2, on + 600, 63, "Row Remapper: New row marked for remapping, reset gpu to activate.")
    xid(c, bad, 2, on + 3000, 94, "Contained: FB DED (0x1, 0x0). physAddr: 0x7fffa88604 RST: No, D-RST: No")
    xid(c, hs[5], 1, c.t0 - 86400 * 9, 13, "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter")
    set_traffic(c, 180)
    end = model_steps(c, 1.5, 0.4, 60, rank_slow={8 + 2: (1.06, on)}, gap=(on + 3040, 540, 30))
    slow_job(c, on, 1.05)
    std_logs(c, hs, extra=[(on + 3001, "ERROR rank10: RuntimeError: CUDA error: uncorrectable ECC error encountered"),
                           (on + 3030, "WARN launcher: job restarted from checkpoint step 1370 (attempt 2)")])
    c.dmesg_style = "T"
    c.title = "llm-70b crashed at ~01:58 and resumed; slower since 01:10"
    c.reported = "Auto-restart kicked in. A GPU on gpu4405 had an XID 13 last week (app bug, fixed)."
    c.truth = ("hbm_degradation", "%s/gpu2" % bad.name)
    c.notes = dict(hard="restart gap and rerun steps in steps.csv; old XID 13 decoy elsewhere", missing="none", single="no")
    return c


def rh17():
    c = Case("rh-17", 117, "2026-11-19T05:00:00Z")
    c.job["name"] = "dense-180b"
    names = pod_names(96, 30)
    hs = fabric(c, names, H200, "InfiniBand", CONTIG, "ib", "ib", per_leaf=8, nspine=4)
    on = c.t0 + 20 * 60
    bad = hs[61]; g = bad.gpus[3]
    g.sbe = Ctr(31, 31 + 212000, on); g.remap = {"corrected": 5, "uncorrected": 0, "pending": True, "failure": False}
    for h in hs:
        for x in h.gpus:
            if c.rng.random() < 0.05:
                # Team fix after the first scoring: the draws are kept (every other byte of the set is
                # unchanged), but the faulty GPU is no longer overwritten with a static decoy history,
                # which had erased the climbing counter and the pending remap this case is about.
                sbe, agg = Ctr(c.rng.randint(1, 900)), c.rng.randint(100, 3000)
                remap = {"corrected": c.rng.randint(0, 2), "uncorrected": 0, "pending": False, "failure": False}
                if x is not g:
                    x.sbe, x.sbe_agg, x.remap = sbe, agg, remap
    set_traffic(c, 160)
    model_steps(c, 1.4, 0.4, 30, rank_slow={61 * 8 + 3: (1.07, on)}, with_compute=False)
    slow_job(c, on, 1.05)
    c.node_hosts = {h.name for h in hs[59:63]}
    c.dcgm_families = ["SM_CLOCK", "GPU_TEMP", "POWER_USAGE", "REASONS", "XID", "SBE", "DBE", "REMAP_C", "REMAP_U"]
    c.metric_step = 300
    std_logs(c, hs)
    c.gz = {"metrics/dcgm.om", "job/steps.csv", "metrics/node.om"}
    c.title = "dense-180b ~5% slower over the last hour, no alerts"
    c.reported = "Slow drift. Many GPUs in this pod have some correctable ECC history."
    c.truth = ("hbm_degradation", "%s/gpu3" % bad.name)
    c.notes = dict(hard="counters only (SBE climbing, remap pending) among ~40 GPUs with old static counts; no XID, no compute column", missing="node data for most hosts", single="dcgm/nvml counters")
    return c


# ----------------------------------------------------------------------------- gpu_fell_off_bus
def rh18():
    c = Case("rh-18", 118, "2026-11-20T21:00:00Z")
    c.job["name"] = "llm-13b"
    hs = fabric(c, ip_names(4, 95, 3, 11), H100, "Ethernet", CONTIG[:4], "enp", "sonic", per_leaf=4, ngpu=4)
    on = c.t0 + 37 * 60
    bad = hs[0]; g = bad.gpus[3]
    g.lost = True; g.lost_at = on
    xid(c, bad, 3, on, 79, "GPU has fallen off the bus.")
    c.dmesg(bad, on + 0.0001, "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % g.bus)
    c.dmesg(bad, on - 0.5, "NVRM: GPU at PCI:0000:%02x:00: %s" % (g.bus, g.uuid))
    set_traffic(c, 150, on, 0.5)
    model_steps(c, 1.0, 0.3, 40)
    rows = [r for r in c.steps["rows"] if r[2] < on]
    c.steps["rows"] = rows
    slow_job(c, on, 20)
    ex = [(on + 600.2, "[rank%d]:[E1120 %s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88214, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600041 milliseconds before timing out." % (r, "%s.%09d" % (time.strftime("%H:%M:%S", time.gmtime(on + 600)), 118859045 + r), r)) for r in (0, 1, 12)]
    std_logs(c, hs, extra=ex)
    c.dmesg_style = "kmsg"
    c.title = "llm-13b hung at 21:37, then killed by watchdog"
    c.reported = "All ranks timed out in the same all-reduce."
    c.truth = ("gpu_fell_off_bus", "%s/gpu3" % bad.name)
    c.notes = dict(hard="raw /dev/kmsg dmesg; watchdog lines on every rank point nowhere", missing="none", single="no")
    return c


def rh19():
    c = Case("rh-19", 119, "2026-11-21T12:00:00Z")
    c.job["name"] = "moe-ft-64"
    hs = fabric(c, plain_names(8, "gpu-f", 1), H200, "InfiniBand", CONTIG, "ib", "ib")
    order = list(range(8)); c.rng.shuffle(order)
    c.explicit_ranks = [(i * 8 + gi, hs[hi].name, gi) for i, hi in enumerate(order) for gi in range(8)]
    on = c.t0 + 44 * 60
    bad = hs[order[5]]; g = bad.gpus[1]
    g.lost = True; g.lost_at = on
    g.xids = [(on, 79)]
    xid(c, hs[order[2]], 4, c.t0 - 86400 * 21, 79, "GPU has fallen off the bus.")
    set_traffic(c, 170, on, 0.4)
    model_steps(c, 1.2, 0.3, 40)
    c.steps["rows"] = [r for r in c.steps["rows"] if r[2] < on]
    slow_job(c, on, 30)
    ex = [(on + 1800.1, "[rank%d]:[E1121 %s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5521, OpType=_REDUCE_SCATTER_BASE, NumelIn=8388608, NumelOut=1048576, Timeout(ms)=1800000) ran for 1800052 milliseconds before timing out." % (r, "%s.%09d" % (time.strftime("%H:%M:%S", time.gmtime(on + 1800)), 465150152 + r), r)) for r in (0, 9, 40)]
    std_logs(c, hs, extra=ex)
    c.missing = {"nodes/%s/cmd/dmesg.txt" % bad.name, "nodes/%s/nvml.json" % bad.name, "nodes/%s/cmd/lspci-vv.txt" % bad.name}
    c.title = "moe-ft-64 stalled at 12:44, all ranks timed out 30 min later"
    c.reported = "The node that had the XID 79 three weeks ago (gpu-f00%d) is back in the pool after an RMA." % (order[2] + 1)
    c.truth = ("gpu_fell_off_bus", "%s/gpu1" % bad.name)
    c.notes = dict(hard="explicit shuffled rank placement; the reported text points at a host with an old XID 79; the affected host's dmesg, nvml and lspci are missing",
                   missing="dmesg, nvml.json and lspci of the affected host", single="sysfs + nvidia-smi -q + dcgm series stop")
    return c


# ----------------------------------------------------------------------------- nvlink_fault
def rh20():
    c = Case("rh-20", 120, "2026-11-22T15:30:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(4, 5010, "dc4.internal"), H100, "InfiniBand", CONTIG[:4], "ib", "ib", ngpu=4)
    on = c.t0 + 29 * 60
    bad = hs[2]; g = bad.gpus[0]
    L = g.nvl[7]
    L["crc_flit"] = Ctr(0, 91000, on); L["replay"] = Ctr(0, 44000, on); L["recovery"] = Ctr(0, 12, on); L["crc_data"] = Ctr(0, 300, on)
    xid(c, bad, 0, on + 240, 74, "NVLink: fatal error detected on link 7(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)")
    xid(c, bad, 0, on + 1900, 74, "NVLink: fatal error detected on link 7(0x0, 0x0, 0x200000, 0x0, 0x0, 0x0, 0x0)")
    hs[1].gpus[2].nvl[3]["crc_flit"] = Ctr(17, 17)
    set_traffic(c, 160, on, 120)
    model_steps(c, 1.2, 0.5, 45, comm_mult=(1.5, on))
    slow_job(c, on, 1.3)
    std_logs(c, hs)
    c.title = "llm-70b step time +15% after 15:59"
    c.reported = "IB fabric checks are green."
    c.truth = ("nvlink_fault", "%s/gpu0" % bad.name)
    c.notes = dict(hard="comm-bound slowdown with no IB errors; old static NVLink CRC on another GPU", missing="none", single="no")
    return c


def rh21():
    c = Case("rh-21", 121, "2026-11-23T03:00:00Z")
    c.job["name"] = "frontier-dense-1t"
    names = ip_names(136, 100, 16, 1) + ip_names(136, 100, 17, 1)
    hs = fabric(c, names, H200, "InfiniBand", CONTIG, "ib", "ib", per_leaf=16, nspine=8)
    on = c.t0 + 33 * 60
    bad = hs[203]; g = bad.gpus[6]
    g.nvl[11]["crc_flit"] = Ctr(3, 3 + 640000, on); g.nvl[11]["replay"] = Ctr(0, 210000, on); g.nvl[11]["recovery"] = Ctr(1, 19, on)
    for h in hs:
        for x in h.gpus:
            if c.rng.random() < 0.03:
                x.nvl[c.rng.randint(0, 17)]["crc_flit"] = Ctr(c.rng.randint(1, 4000)); x.nvl[0]["replay"] = Ctr(c.rng.randint(0, 300))
            if c.rng.random() < 0.02:
                x.sbe = Ctr(c.rng.randint(1, 50))
    set_traffic(c, 200, on, 175)
    c.step_every = 25
    model_steps(c, 2.2, 0.6, 22, comm_mult=(1.35, on), with_compute=False)
    slow_job(c, on, 1.1)
    c.node_hosts = {h.name for h in hs[201:205]}
    c.node_metric_hosts = [h for h in hs[190:214]]
    c.dcgm_families = ["SM_CLOCK", "POWER_USAGE", "REASONS", "XID", "NVL_CRC", "NVL_REPLAY", "SBE"]
    c.metric_step = 600
    std_logs(c, hs)
    c.gz = {"metrics/dcgm.om", "metrics/node.om", "job/steps.csv", "topology.json"}
    c.title = "1T run: ~7% lower tokens/s since 03:33, no errors"
    c.reported = "272 nodes, nothing in the job logs. NVLink counters on this fleet are never zero."
    c.truth = ("nvlink_fault", "%s/gpu6" % bad.name)
    c.notes = dict(hard="272 hosts / 2176 GPUs; one GPU's NVLink CRC/replay counters climb inside the window among ~65 GPUs with old static counts; no XID, no per-rank compute",
                   missing="node data for most hosts", single="DCGM NVLink counters (and nvlink -e on the host)")
    return c


# ----------------------------------------------------------------------------- silent_data_corruption
def rh22():
    c = Case("rh-22", 122, "2026-11-24T08:00:00Z")
    c.gz = {"metrics/dcgm.om", "job/steps.csv", "nodes/gpu-g043/cmd/nvidia-smi-q.txt"}
    c.job["name"] = "llm-8b-ddp"
    hs = fabric(c, plain_names(4, "gpu-g", 41), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 41 * 60
    bad_rank = 19
    def ck(rk, step, t):
        v = (step * 2654435761) & 0xffffffff
        if rk == bad_rank and t >= on:
            v ^= (step * 40503 + 0x5bd1e995) & 0xffffffff
        return "%08x" % v
    set_traffic(c, 140)
    model_steps(c, 0.9, 0.3, 50, checksum=ck, grad_spike=on)
    hs[0].gpus[6].sbe = Ctr(6, 6); hs[3].gpus[1].temp = Gauge(80, jitter=1)
    std_logs(c, hs, extra=[(on + 900, "WARNING trainer: grad norm 8.31 above clip threshold 1.0; clipping"),
                           (on + 2100, "WARNING trainer: loss spike detected (2.91 vs ema 2.21); skipping batch")])
    c.title = "llm-8b: grad-norm spikes and loss spikes since ~08:40"
    c.reported = "No hardware alerts. Data team swapped in a new data shard at 08:30, suspect that."
    c.truth = ("silent_data_corruption", "%s/gpu3" % hs[2].name)
    c.notes = dict(hard="no error anywhere; one rank's param_checksum disagrees with the 31 others; reported text blames data", missing="none", single="steps.csv param_checksum")
    return c


def rh23():
    c = Case("rh-23", 123, "2026-11-25T17:00:00Z")
    c.job["name"] = "llm-34b-tp8"
    hs = fabric(c, ip_names(6, 77, 4, 50), H200, "Ethernet", NONCONTIG, "enp", "sonic", per_leaf=6)
    order = [4, 1, 0, 5, 2, 3]
    c.explicit_ranks = [(i * 8 + gi, hs[hi].name, gi) for i, hi in enumerate(order) for gi in range(8)]
    on = c.t0 + 25 * 60
    bad_rank = 3 * 8 + 5      # host hs[5], gpu 5
    def ck(rk, step, t):
        shard = rk % 8
        v = (shard * 0x9e3779b1 + step * 2246822519) & 0xffffffff
        if rk == bad_rank and t >= on:
            v = (v * 3 + 0x27d4eb2f) & 0xffffffff
        return "0x%08x" % v
    set_traffic(c, 150)
    c.step_every = 50
    model_steps(c, 1.1, 0.4, 24, checksum=ck, grad_spike=on + 600)
    xid(c, hs[1], 2, c.t0 - 3 * 86400, 13, "Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174")
    hs[1].gpus[2].xids = [(c.t0 - 3 * 86400, 13)]
    std_logs(c, hs, extra=[(on + 1500, "WARNING trainer: non-finite grad norm at step; skipped optimizer step")])
    c.dmesg_style = "journal"
    c.title = "llm-34b-tp8: diverged after 17:25, rolled back twice"
    c.reported = "Sticky XID 13 showing on 10-77-4-51 in Grafana."
    c.alerts = [alert("GPUXidError", {"hostname": hs[1].name, "gpu": "2", "xid": "13"}, c.t0 + 60, "XID 13 reported")]
    c.truth = ("silent_data_corruption", "%s/gpu5" % hs[5].name)
    c.notes = dict(hard="tensor-parallel shards: checksums agree per shard index across replicas; explicit non-identity placement; sticky XID 13 alert from days before",
                   missing="none", single="steps.csv param_checksum")
    return c


# ----------------------------------------------------------------------------- host_contention
def rh24():
    c = Case("rh-24", 124, "2026-11-26T01:00:00Z")
    c.job["name"] = "vlm-34b"
    hs = fabric(c, dot_names(6, 6200, "dc2.internal"), H100, "InfiniBand", CONTIG, "ib", "ib", per_leaf=6)
    on = c.t0 + 30 * 60
    bad = hs[4]
    bad.procs = bad.procs + [("backup-agent", 17640.0, 4.8), ("gzip", 99.0, 0.1), ("pigz", 396.0, 0.1)]
    bad.psi_cpu = (61.3, 58.9, 44.0); bad.psi_cpu_total = Ctr(9 * 10 ** 8, 9 * 10 ** 8 + int(3.1e11), on)
    bad.load1 = Gauge(11, 231, on, jitter=4)
    set_traffic(c, 160, on, 120)
    model_steps(c, 1.3, 0.4, 45, rank_slow={r: (1.3 + 0.02 * (r % 4), on) for r in range(32, 40)})
    slow_job(c, on, 1.3)
    swcap_decoy(c, hs[4], 3); hs[1].gpus[2].temp = Gauge(82, jitter=1)
    std_logs(c, hs)
    c.title = "vlm-34b 30% slower from 01:30"
    c.reported = "Nightly maintenance window started 01:30 (backups, log rotation). GPUs look fine except one power-capped device."
    c.truth = ("host_contention", bad.name)
    c.notes = dict(hard="eight ranks of one host straggle without any GPU reason; power-cap decoy on that same host", missing="none", single="no")
    return c


def rh25():
    c = Case("rh-25", 125, "2026-11-27T13:00:00Z")
    c.job["name"] = "diffusion-xl"
    hs = fabric(c, pod_names(8, 40), H200, "Ethernet", CONTIG, "ens", "sonic", per_leaf=8)
    on = c.t0 + 22 * 60
    bad = hs[6]
    bad.psi_mem = (48.1, 44.6, 31.2)
    set_traffic(c, 130, on, 100)
    model_steps(c, 1.1, 0.3, 45, rank_slow={r: (1.34 + 0.03 * (r % 3), on) for r in range(48, 56)}, with_compute=False)
    slow_job(c, on, 1.3)
    for h in hs:
        h.psi_mem = h.psi_mem if h is bad else (0.0, 0.0, 0.0)
    swcap_decoy(c, hs[1], 5)
    c.missing = {"nodes/%s/cmd/top.txt" % h.name for h in hs} | {"metrics/node.om"}
    std_logs(c, hs)
    c.title = "diffusion-xl ~30% slower since 13:22"
    c.reported = "node_exporter was down on this pod; top not collected. A notebook user was given access to one of the nodes this afternoon for debugging."
    c.truth = ("host_contention", bad.name)
    c.notes = dict(hard="memory pressure visible only in /proc/pressure/memory; node metrics and top missing", missing="metrics/node.om; top on all hosts", single="pressure-memory")
    return c


# ----------------------------------------------------------------------------- input_pipeline_stall
def rh26():
    c = Case("rh-26", 126, "2026-11-28T06:00:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 7000, "dc3.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    on = c.t0 + 24 * 60
    set_traffic(c, 190, on, 125)
    model_steps(c, 1.5, 0.4, 50, data_wait=(1.0, on))
    for h in hs:
        for g in h.gpus:
            g.util = Gauge(100, 62, on, jitter=9); g.tensor = Gauge(g.tensor.pre, round(g.tensor.pre * 0.66, 3), on, jitter=0.03)
    swcap_decoy(c, hs[2], 6, 60)
    ex = [(on + 60 + k * 540, "INFO dataloader: rank0 data_time %.2fs (prefetch queue empty, 0/8 batches ready)" % (0.9 + 0.05 * k)) for k in range(5)]
    ex += [(c.t0 + 300, "INFO dataloader: rank0 data_time 0.01s (prefetch queue 8/8)")]
    ex += [(on - 30, "INFO dataloader: switching to shard set s3://corpus-v7/mix-b (1,024 shards)")]
    std_logs(c, hs, extra=ex)
    c.title = "llm-70b 55% slower since 06:24"
    c.reported = "gpu7002 GPU6 shows SW power cap in nvidia-smi, alert is firing."
    c.alerts = [alert("GPUPowerCapped", {"Hostname": hs[2].name, "gpu": "6"}, on + 120, "GPU clocks limited by SW power cap")]
    c.truth = ("input_pipeline_stall", "job")
    c.notes = dict(hard="all ranks slow equally (no straggler); the compute column includes the wait; an alert fires on the power-cap decoy", missing="none", single="job logs + uniform step shape")
    return c


def rh27():
    c = Case("rh-27", 127, "2026-11-29T18:00:00Z")
    c.job["name"] = "moe-ft-32"
    hs = fabric(c, ip_names(4, 93, 1, 90), H200, "Ethernet", ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5"], "enp", "sonic", per_leaf=4, ngpu=4)
    on = c.t0 + 10 * 60
    set_traffic(c, 40)
    model_steps(c, 1.0, 0.2, 45, data_wait=(1.2, c.t0 - 1), with_compute=False)   # stalled from the first step
    for h in hs:
        for g in h.gpus:
            g.util = Gauge(48, jitter=12); g.tensor = Gauge(round(g.tensor.pre * 0.5, 3), jitter=0.03)
            g.power = Gauge(g.limit * 0.55, jitter=20); g.reasons = Gauge(0x0); g.clock = Gauge(g.maxclock)
    hs[3].gpus[2].reasons = Gauge(0x4); hs[3].gpus[2].clock = Gauge(1950)
    n = nic(c, hs[2].name, "mlx5_5"); n.c["symbol_error"] = Ctr(12, 12)
    for h in hs:
        h.procs = h.procs + [("pt_data_worker", 99.0, 0.8) for _ in range(2)]
        h.load1 = Gauge(4, jitter=0.5)
    ex = [(c.t0 + 120 + k * 900, "WARNING dataloader: DataLoader worker 1 waited %.1fs for sample from https://objects.internal/bucket-ft/part-%05d.tar" % (1.4 + 0.1 * k, 412 + k)) for k in range(6)]
    std_logs(c, hs, extra=ex, env=[("NCCL_IB_HCA", "mlx5_0,mlx5_3,mlx5_4,mlx5_5")])
    c.title = "moe-ft-32 new run at half the expected throughput"
    c.reported = "Same model and config as last week's run, which did 2x this. Storage and network were both reshuffled on Monday."
    c.truth = ("input_pipeline_stall", "job")
    c.notes = dict(hard="slow from step 1 with low, uniform GPU utilisation and light NIC traffic; an old static symbol-error count and a lone power cap as decoys", missing="none", single="job logs")
    return c


# ----------------------------------------------------------------------------- nccl_misconfiguration
def rh28():
    c = Case("rh-28", 128, "2026-11-30T09:00:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 8100, "dc1.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    set_traffic(c, 360, nics={(h.name, "mlx5_0") for h in hs})
    for h in hs:
        for n in h.nics:
            if n.ibdev != "mlx5_0":
                b = c.rng.randint(10 ** 12, 10 ** 13)
                n.c["port_xmit_data"] = Ctr(b, b + c.rng.randint(2000, 9000)); n.c["port_rcv_data"] = Ctr(b + 5, b + 5 + c.rng.randint(2000, 9000))
            else:
                n.c["port_xmit_wait"].n = n.c["port_xmit_wait"].b + 9 * 10 ** 9
    model_steps(c, 1.5, 2.6, 45)
    for h in hs:
        for g in h.gpus:
            g.tensor = Gauge(0.17, jitter=0.02); g.power = Gauge(g.limit * 0.5, jitter=15); g.reasons = Gauge(0); g.clock = Gauge(g.maxclock)
    swcap_decoy(c, hs[4], 0)
    std_logs(c, hs, hca=["mlx5_0"], env=[("NCCL_IB_HCA", "=mlx5_0:1"), ("NCCL_IB_TIMEOUT", "22")])
    c.title = "llm-70b relaunch runs at 40% of the previous throughput"
    c.reported = "Relaunched on the same 8 nodes with the new launcher template. mlx5_0 on every node shows high xmit_wait; network team asked to check cables."
    c.truth = ("nccl_misconfiguration", "job")
    c.notes = dict(hard="one NIC of eight carries all traffic from step 1 (busy link looks congested); the launcher's env restricts NCCL", missing="none", single="no")
    return c


def rh29():
    c = Case("rh-29", 129, "2026-12-01T20:00:00Z")
    c.job["name"] = "dense-180b"
    hs = fabric(c, ip_names(6, 94, 20, 31), H200, "Ethernet", NONCONTIG, "ens", "sonic", per_leaf=6)
    used = {"mlx5_0", "mlx5_3"}
    set_traffic(c, 390, nics={(h.name, i) for h in hs for i in used})
    for h in hs:
        for n in h.nics:
            if n.ibdev not in used:
                b = c.rng.randint(10 ** 12, 10 ** 13)
                n.c["port_xmit_data"] = Ctr(b, b + c.rng.randint(1000, 5000)); n.c["port_rcv_data"] = Ctr(b + 9, b + 9 + c.rng.randint(1000, 5000))
                p = c.switches[n.switch].ports[n.port]
                p["in_oct"] = Ctr(p["in_oct"].b, p["in_oct"].b + n.c["port_xmit_data"].d * 4)
                p["out_oct"] = Ctr(p["out_oct"].b, p["out_oct"].b + n.c["port_rcv_data"].d * 4)
    model_steps(c, 1.6, 2.2, 45, with_compute=False)
    for h in hs:
        for g in h.gpus:
            g.tensor = Gauge(0.19, jitter=0.02); g.power = Gauge(g.limit * 0.52, jitter=15); g.reasons = Gauge(0); g.clock = Gauge(g.maxclock)
    c.logs["rank0.log"] = train_log(c, head=[stamp(c.t0 + 5) + " INFO launcher: 48 ranks on 6 nodes, job dense-180b (NCCL_DEBUG unset)"])
    c.files["job/logs/launcher-env.log"] = "".join("%s export %s\n" % (stamp(c.t0 + 1), kv) for kv in [
        "CUDA_DEVICE_MAX_CONNECTIONS=1", "NCCL_IB_GID_INDEX=3", "NCCL_SOCKET_IFNAME=bond0", "NCCL_IB_HCA==mlx5_0,mlx5_3",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "OMP_NUM_THREADS=8"])
    c.title = "dense-180b on pod 94: 1.8x slower than on pod 93"
    c.reported = "Pod 94 is new. RDMA device names skip numbers on these hosts (mlx5_1/2 are the BMC-side and storage ports, not in topology)."
    c.truth = ("nccl_misconfiguration", "job")
    c.notes = dict(hard="non-contiguous RDMA names; two NICs of eight carry everything; NCCL_DEBUG unset so no NET/IB line; env dump only", missing="NCCL INFO lines", single="no")
    return c


# ----------------------------------------------------------------------------- healthy
def rh30():
    c = Case("rh-30", 130, "2026-12-02T02:00:00Z")
    c.gz = set()
    c.job["name"] = "llm-13b"
    names = dot_names(5, 9100, "dc2.internal")
    hs = fabric(c, names, H100, "InfiniBand", CONTIG[:4], "ib", "ib", per_leaf=5, spares=(names[4],), ngpu=4)
    sp = hs[4]
    for g in sp.gpus:
        g.gen = 1
    hs[1].gpus[3].temp = Gauge(83, jitter=1)
    hs[2].gpus[0].aer_cor = Ctr(2, 5); hs[2].dmesg_style = None
    c.dmesg(hs[2], c.t0 + 1800, "pcieport 0000:17:01.0: AER: Corrected error received: 0000:18:00.0")
    c.dmesg(hs[2], c.t0 + 1800.0003, "nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)")
    c.dmesg(hs[2], c.t0 + 1800.0006, "nvidia 0000:18:00.0:    [ 0] RxErr                  (First)")
    set_traffic(c, 170)
    model_steps(c, 1.2, 0.35, 45)
    std_logs(c, hs[:4])
    c.title = "gpu9104 GPUs at PCIe Gen1, and job feels slow?"
    c.reported = "Dashboard flagged PCIe Gen1 on all of gpu9104 (standby node) and a GPU at 83C on gpu9101. Step time looks about the same as yesterday to me, but please check."
    c.alerts = [alert("GPUHighTemp", {"Hostname": hs[1].name, "gpu": "3"}, c.t0 + 500, "GPU temperature above 80C")]
    c.truth = ("healthy", None)
    c.notes = dict(hard="spare host's idle GPUs at Gen1 (power saving), warm GPU without reasons, a few correctable AER on a full-width link", missing="none", single="-")
    return c


def rh31():
    c = Case("rh-31", 131, "2026-12-02T14:00:00Z")
    c.job["name"] = "llm-34b"
    hs = fabric(c, ip_names(6, 96, 2, 40), H200, "Ethernet", CONTIG, "enp", "sonic", per_leaf=6)
    c.swcap_share = 0.7
    set_traffic(c, 180)
    c.step_every = 10
    model_steps(c, 1.3, 0.35, 60)
    # checkpoint every 500 steps: a long step for every rank
    for r in c.steps["rows"]:
        if r[0] % 500 == 0:
            r[3] += 14.0
    for h in hs:
        for n in h.nics:
            n.c["rx_prio3_pause"] = Ctr(2000, 2000 + c.rng.randint(50, 400))
    ex = [(r[2] + 1, "INFO checkpoint: saved step %d to /ckpt/llm-34b (14.1s)" % r[0]) for r in c.steps["rows"] if r[1] == 0 and r[0] % 500 == 0]
    std_logs(c, hs, extra=ex)
    c.title = "MFU dips every ~25 minutes on llm-34b"
    c.reported = "Power cap alerts fire all day on this pod. Can someone check if the dips are power related?"
    c.alerts = [alert("GPUPowerCapped", {"hostname": hs[k].name, "gpu": str(k)}, c.t0 + 300 * k, "GPU clocks limited by SW power cap") for k in range(3)]
    c.truth = ("healthy", None)
    c.notes = dict(hard="periodic checkpoint steps; 70% SW power caps with alerts; light benign pauses", missing="none", single="-")
    return c


def rh32():
    c = Case("rh-32", 132, "2026-12-03T05:00:00Z")
    c.job["name"] = "llm-70b-pretrain"
    hs = fabric(c, dot_names(8, 9300, "dc3.internal"), H100, "InfiniBand", CONTIG, "ib", "ib")
    g = hs[5].gpus[2]
    xid(c, hs[5], 2, c.t0 - 86400 * 16, 79, "GPU has fallen off the bus.")
    g.xids = [(c.t0 - 86400 * 16, 79)]
    hs[5].boot = c.t0 - 86400 * 20
    c.dmesg(hs[5], c.t0 - 86400 * 16 + 0.2, "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % g.bus)
    hs[5].gpus[2].sbe = Ctr(3, 3); hs[5].gpus[2].sbe_agg = 41; hs[0].gpus[7].remap = {"corrected": 1, "uncorrected": 0, "pending": False, "failure": False}
    nic(c, hs[3].name, "mlx5_2").c["link_downed"] = Ctr(1, 1)
    c.driver = "550.127.05"
    set_traffic(c, 175)
    model_steps(c, 1.5, 0.4, 50)
    std_logs(c, hs)
    c.dmesg_style = "T"
    c.title = "XID 79 alert firing on gpu9305 during the run"
    c.reported = "Alert GPUXid79 came in at 05:03. The job looks normal to me. Driver was upgraded to 550.127.05 across the pod on Monday."
    c.alerts = [alert("GPUXid79", {"Hostname": hs[5].name, "gpu": "2"}, c.t0 + 180, "DCGM_FI_DEV_XID_ERRORS == 79", "firing")]
    c.truth = ("healthy", None)
    c.notes = dict(hard="sticky DCGM XID gauge from an event 16 days old fires an alert; static ECC/remap/link_downed counts", missing="none", single="-")
    return c


def rh33():
    c = Case("rh-33", 133, "2026-12-04T11:00:00Z")
    c.job["name"] = "moe-ft-64"
    hs = fabric(c, pod_names(8, 50), H200, "Ethernet", NONCONTIG, "ens", "sonic", per_leaf=4, nspine=2)
    set_traffic(c, 200)
    uplink_traffic(c, 0.5)
    for h in hs:
        for n in h.nics:
            k = c.rng.randint(200, 1500)
            n.c["rx_prio3_pause"] = Ctr(5000, 5000 + k)
            c.switches[n.switch].ports[n.port]["tx_pfc3"] = Ctr(0, k)
            n.c["rx_prio3_pause_duration"] = Ctr(40000, 40000 + k * 3)
    gap_at = c.t0 + 40 * 60
    model_steps(c, 1.2, 0.5, 45, gap=(gap_at, 420, 0))
    ex = [(gap_at - 5, "INFO launcher: planned restart to pick up new container image (change CHG-2231); resuming from checkpoint")]
    std_logs(c, hs, extra=ex)
    c.gz = {"metrics/dcgm.om"}
    c.truncate = {"metrics/dcgm.om": 4096}
    c.old_kernel = True
    c.title = "moe-ft-64 gap in throughput graph around 11:40"
    c.reported = "There is a 7-minute hole in the tokens/s graph and DCGM data looks broken for this window."
    c.truth = ("healthy", None)
    c.notes = dict(hard="planned restart gap; DCGM metrics file truncated (unreadable); light balanced PFC; older kernel link-speed strings", missing="metrics/dcgm.om.gz truncated", single="-")
    return c


def rh34():
    c = Case("rh-34", 134, "2026-12-04T23:00:00Z")
    c.job["name"] = "dense-180b"
    names = ip_names(64, 101, 5, 1)
    hs = fabric(c, names, H100, "InfiniBand", CONTIG, "ib", "ib", per_leaf=8, nspine=4, spares=(names[63],))
    for h in hs:
        for g in h.gpus:
            if c.rng.random() < 0.04:
                g.nvl[c.rng.randint(0, 17)]["crc_flit"] = Ctr(c.rng.randint(1, 2000))
            if c.rng.random() < 0.02:
                g.sbe = Ctr(c.rng.randint(1, 80))
    for g in hs[63].gpus:
        g.gen = 1
    hs[17].gpus[4].temp = Gauge(84, jitter=1)
    set_traffic(c, 190)
    model_steps(c, 1.4, 0.45, 30, with_compute=False, dropped={(i, 100) for i in range(5, 9)})
    c.node_hosts = {h.name for h in hs[16:18]} | {names[63]}
    c.dcgm_families = ["SM_CLOCK", "GPU_TEMP", "POWER_USAGE", "REASONS", "XID", "NVL_CRC", "SBE"]
    c.metric_step = 300
    c.gz = {"metrics/dcgm.om", "job/steps.csv"}
    std_logs(c, hs[:63])
    c.title = "dense-180b: rank 100 missing from a few step records, GPU at 84C on 10-101-5-18"
    c.reported = "Metrics logger dropped a few rows for one rank. Also one GPU runs hot. Worth cordoning anything?"
    c.truth = ("healthy", None)
    c.notes = dict(hard="64 hosts with old static NVLink/ECC counts, a spare at Gen1, a hot GPU without reasons, missing rows for one rank", missing="node data for most hosts", single="-")
    return c


CASES = [("rh-%02d" % i, f) for i, f in enumerate([rh01, rh02, rh03, rh04, rh05, rh06, rh07, rh08, rh09, rh10, rh11, rh12, rh13,
                                                  rh14, rh15, rh16, rh17, rh18, rh19, rh20, rh21, rh22, rh23, rh24, rh25,
                                                  rh26, rh27, rh28, rh29, rh30, rh31, rh32, rh33, rh34], 1)]
