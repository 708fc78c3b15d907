"""The 30 incidents of the "fresh" set.  Each function returns a prepared fleet.Case."""
from fleet import Case, Counter, HW_SLOW, HW_THERM
from faults import (all_hosts, contention, fell_off, fqdn, hbm_crash, hbm_slow, hgx, ifcounters, iplike, link_flaps,
                    log, nvlink, pcie_gpu, pfc_nic, pfc_table, pfcwd_table, power_gpu, power_host, rackslot, set_slow,
                    short, stamp, thermal_gpu, thermal_host)
from render import nccl_init_lines


def base_logs(c, t=None, env=()):
    t = c.t0 - c.fmt.get("lead_s", 1200) - 40 if t is None else t
    for tt, line in nccl_init_lines(c, t, env):
        log(c, "train.log", tt, line)


def stop_traffic(c, t):
    for h in c.hosts:
        for n in h.nics:
            n.traffic_after = (t, 0.0)


def warm_decoy(c, h, g, temp=22.0):
    g.temp_base = g.temp_base + temp  # warm, not throttled: clocks full, reasons 0


def benign_warmup(c, h, g, until, slow=1.35):
    g.warmup_until = until
    g.warmup_slow = slow


def node_subset(c, keep):
    """Record node-level data for only some hosts (always including the given ones)."""
    idx = list(range(len(c.hosts)))
    c.rng.shuffle(idx)
    chosen = set(idx[:16]) | set(keep)
    for i, h in enumerate(c.hosts):
        if i not in chosen:
            h.no_node_dir = True


# ---------------------------------------------------------------------------------------------
def fr01():
    c = Case("fr-01", 101, "thermal_throttle", "Step time up ~30% since 02:25 on llm-34b, no alerts firing")
    c.build(8, 8, "H100", short("gpu-a"), start="2026-11-18T01:40:00Z")
    c.job_name = "llm-34b-pretrain"
    c.fmt.update(dcgm_violation=True)
    h, g = c.host(5), c.host(5).gpus[3]
    thermal_gpu(c, h, g, c.t0 + 2700)
    warm_decoy(c, c.host(2), c.host(2).gpus[6], 21)
    # second slow GPU explained by a benign warm-up (compile) before the window
    wh, wg = c.host(1), c.host(1).gpus[2]
    r = c.rank_of(wh, 2)
    benign_warmup(c, wh, wg, c.t0 - 900)
    base_logs(c)
    log(c, "train.log", c.t0 - 1190, "[rank%d] torch._dynamo: recompiling 14 graphs (cache miss after restart); first steps will be slow" % r)
    c.reported = "Throughput alert from the dashboard; one rack had a chiller maintenance ticket last week."
    return c, "%s/gpu%d" % (h.name, g.index)


def fr02():
    c = Case("fr-02", 102, "thermal_throttle", "A100 finetune job 35% slower since this morning")
    c.build(6, 4, "A100", rackslot(), start="2026-11-19T06:05:00Z", minutes=75)
    c.job_name = "a100-ft-13b"
    c.fmt.update(compute=False, host_label="hostname", dcgm_type="unknown", every=10)
    h = c.host(3)
    thermal_host(c, h, c.t0 - 5400)
    all_hosts(c, smi_form="throttle", sel=[], dmesg_form="ctime")
    h.sel = h.sel  # keep the failing host's events
    thermal_host(c, h, c.t0 - 5400)
    for o in c.hosts:
        if o is not h:
            o.sel = [(o.boot + 30, "System Event #0x83", "Timestamp Clock Sync", "Asserted")]
    base_logs(c)
    c.reported = "Slow since the job was started; nothing in the job logs."
    return c, h.name


def fr03():
    c = Case("fr-03", 103, "power_throttle", "MFU down from 48% to 39% after 02:50 maintenance window")
    c.build(16, 8, "H200", fqdn("dc3"), start="2026-11-20T02:20:00Z", minutes=90)
    c.job_name = "mm-90b"
    c.fmt.update(steps="gz", dcgm_violation=True, reasons_name="DCGM_FI_DEV_CLOCKS_EVENT_REASONS", host_label="hostname")
    h, g = c.host(11), c.host(11).gpus[5]
    power_gpu(c, h, g, c.t0 + 1900, 430.0)
    all_hosts(c, dmesg_form="ctime")
    for i in (2, 7, 11, 14):
        c.host(i).smi_form = "none"
    c.host(4).nvml = False
    base_logs(c)
    c.reported = "Facilities ran a firmware/BMC maintenance on some nodes around 02:50."
    return c, "%s/gpu%d" % (h.name, g.index)


def fr04():
    c = Case("fr-04", 104, "power_throttle", "Throughput halved on 96-rank job since 04:12")
    c.build(12, 8, "H100", iplike(10, 90, 43), start="2026-11-21T03:30:00Z", minutes=90)
    c.job_name = "code-70b"
    c.fmt.update(dcgm_gz=True, node_gz=True, dcgm_violation=True)
    h = c.host(7)
    power_host(c, h, c.t0 + 2520)
    all_hosts(c, dmesg_form="journal", sel=[])
    power_host(c, h, c.t0 + 2520)
    for o in c.hosts:
        if o is not h:
            o.sel = [(o.boot + 30, "System Event #0x83", "Timestamp Clock Sync", "Asserted")]
    warm_decoy(c, c.host(2), c.host(2).gpus[1], 20)
    warm_decoy(c, c.host(2), c.host(2).gpus[2], 19)
    base_logs(c)
    return c, h.name


def fr05():
    c = Case("fr-05", 105, "pcie_downtrain", "Job has been ~15% slower than the same config on the old allocation")
    c.build(8, 8, "H100", hgx("H100"), start="2026-11-22T10:00:00Z", minutes=60, spares=1)
    c.job_name = "ablation-7b-sweep"
    h, g = c.host(3), c.host(3).gpus[6]
    pcie_gpu(c, h, g, c.t0 - 86400, gen=4)
    c.host(8).gpus[2].idle_gen = True  # spare host: idle GPU at low generation (power saving), not in the job
    c.fmt.update(ranks=True, ranks_shuffle=True)
    base_logs(c)
    c.reported = "Allocation includes a spare node kept warm."
    return c, "%s/gpu%d" % (h.name, g.index)


def fr06():
    c = Case("fr-06", 106, "pcie_downtrain", "All-reduce bandwidth 30% below baseline on new 192-GPU allocation")
    c.build(24, 8, "H100", short("node"), start="2026-11-23T13:10:00Z", minutes=60, ibnames=["mlx5_%d" % i for i in (0, 1, 2, 3, 6, 7, 8, 9)])
    c.job_name = "llm-175b-pretrain"
    c.fmt.update(old_sysfs=True, metric_step=120, every=25)
    h, n = c.host(17), c.host(17).nics[5]
    n.width = 8
    c.comm_factor.append((c.t0 - 86400, 1.45))
    all_hosts(c, dmesg_form="kmsg")
    base_logs(c)
    return c, "%s/%s" % (h.name, n.ibdev)


def fr07():
    c = Case("fr-07", 107, "pfc_pause_storm", "RoCE job step time doubled at 03:05; NCCL slow, no errors")
    c.build(16, 8, "H100", short("roce"), ll="Ethernet", start="2026-11-24T02:30:00Z", minutes=80,
            netnames=["enp%ds0np0" % b for b in (26, 60, 77, 94, 156, 188, 204, 220)], hosts_per_leaf=8)
    c.job_name = "roce-llm-40b"
    h, n = c.host(9), c.host(9).nics[2]
    pfc_nic(c, h, n, c.t0 + 2100)
    # decoy: an old, finished burst of received pauses on another host (no growth in the window)
    c.host(3).nics[0].c["rx_prio3_pause"] = Counter(48211)
    base_logs(c)

    def post():
        now = c.now
        c.switch_cmds[n.switch] = {"show-pfc-counters.txt": pfc_table(c, n.switch, lambda x: x.c["tx_prio3_pause"].at(now),
                                                                       lambda x: x.c["rx_prio3_pause"].at(now))}
    c.post = post
    return c, "%s/%s" % (h.name, n.ibdev)


def fr08():
    c = Case("fr-08", 108, "pfc_pause_storm", "Half the ranks stall in all-gather since 01:32; RoCE fabric")
    c.build(8, 8, "H200", rackslot(), ll="Ethernet", start="2026-11-25T01:00:00Z", minutes=70, hosts_per_leaf=4)
    c.job_name = "h200-moe"
    h, n = c.host(6), c.host(6).nics[4]
    onset = c.t0 + 1900
    n.c["rx_prio3_pause"] = Counter(900, extra=3100.0, onset=onset)
    n.c["rx_prio3_pause_duration"] = Counter(2700, extra=3100.0 * 98, onset=onset)
    c.comm_factor.append((onset, 2.0))
    all_hosts(c, dmesg_form="journal")
    base_logs(c)

    def post():
        now = c.now
        c.switch_cmds[n.switch] = {
            "show-pfc-counters.txt": pfc_table(c, n.switch, lambda x: x.c["tx_prio3_pause"].at(now), lambda x: x.c["rx_prio3_pause"].at(now)),
            "show-pfcwd-stats.txt": pfcwd_table(c, [("%s:3" % x.port, "operational", 0, 0, 0) for o in c.hosts for x in o.nics if x.switch == n.switch])}
    c.post = post
    return c, "%s/%s" % (n.switch, n.port)


def fr09():
    c = Case("fr-09", 109, "ecmp_hash_polarization", "Cross-rack all-reduce slow since 22:40 fabric change")
    c.build(32, 8, "H100", fqdn("dc1"), ll="Ethernet", start="2026-11-26T22:10:00Z", minutes=80, hosts_per_leaf=8,
            leaf_names=["lf1-a", "lf1-b", "lf2-a", "lf2-b"])
    c.job_name = "fabric-llm-120b"
    c.fmt.update(metric_step=120, every=25, dcgm_prof=False)
    onset = c.t0 + 1800
    leaf = "lf2-a"
    c.prepare_uplinks = True
    c.comm_factor.append((onset, 1.8))
    base_logs(c)

    def pre():
        for ln in c.leaves:
            nh = sum(1 for x in c.job_hosts if x.nics[0].switch == ln)
            c.leaf_uplink_bps[ln] = nh * 8 * 1.0e9
        c.set_uplinks("lf1-a", [0.262, 0.247, 0.251, 0.240])
        c.set_uplinks(leaf, [0.25, 0.25, 0.25, 0.25], onset=onset, new_shares=[0.74, 0.24, 0.01, 0.01], discard_rates=[1400.0, 420.0, 0, 0])
    c.pre = pre
    node_subset(c, [])
    c.reported = "Network team pushed a hashing-profile change to some leaves at 22:40."
    return c, leaf


def fr10():
    c = Case("fr-10", 110, "ecmp_hash_polarization", "384-GPU job never reached expected bus bandwidth")
    c.build(48, 8, "H200", short("h200-"), ll="Ethernet", start="2026-11-27T08:00:00Z", minutes=60, hosts_per_leaf=8)
    c.job_name = "h200-frontier-run"
    c.fmt.update(metric_step=180, every=40, switch_metrics=False, dcgm_prof=False, dcgm_gz=True)
    leaf = "leaf-04"
    c.comm_factor.append((c.t0 - 86400, 1.6))

    def pre():
        for ln in c.leaves:
            nh = sum(1 for x in c.job_hosts if x.nics[0].switch == ln)
            c.leaf_uplink_bps[ln] = nh * 8 * 1.0e9
        c.set_uplinks(leaf, [0.71, 0.02, 0.26, 0.01], discard_rates=[0, 0, 0, 0])
        c.uplink[(leaf, 0, "ifOutDiscards")] = Counter(9000, rate=800.0)
        c.uplink[(leaf, 0, "ifOutDiscards")].ref = c.t0 - 7200

    def post():
        for sw in c.switches:
            if sw["tier"] != "leaf":
                continue
            ln = sw["name"]
            rows = []
            bps = c.leaf_uplink_bps[ln]
            for k, link in enumerate(sw["links"]):
                u = c.uplink[(ln, k, "ifHCOutOctets")]
                i = c.uplink[(ln, k, "ifHCInOctets")]
                rows.append((link["port"], i.at(c.now) // 4000, i.rate, u.at(c.now) // 4000, u.rate, c.uplink[(ln, k, "ifOutDiscards")].at(c.now)))
            c.switch_cmds[ln] = {"show-interfaces-counters.txt": ifcounters(c, ln, [(p, a, b, 0, d, e, f) for (p, a, b, d, e, f) in rows])}
    c.pre, c.post = pre, post
    node_subset(c, [])
    base_logs(c)
    return c, leaf


def fr11():
    c = Case("fr-11", 111, "link_degradation", "Intermittent NCCL slowdowns since 05:20, IB fabric")
    c.build(16, 8, "A100", short("ib-"), start="2026-11-28T04:50:00Z", minutes=90)
    c.job_name = "a100-vlm"
    h, n = c.host(12), c.host(12).nics[6]
    onset = c.t0 + 1800
    link_flaps(c, h, n, onset, [onset + 400, onset + 1900, onset + 3100])
    n.rate = "100 Gb/sec (2X HDR)"
    all_hosts(c, dmesg_form="journal")
    base_logs(c)
    log(c, "train.log", onset + 400.3, "%s:51233:51544 [6] transport/net_ib.cc:1038 NCCL WARN NET/IB : Got completion from peer 10.0.12.%d<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:10.0.7.21 remoteGids::ffff:10.0.12.18" % (c.host(4).name, 20))
    return c, "%s/%s" % (h.name, n.ibdev)


def fr12():
    c = Case("fr-12", 112, "link_degradation", "RoCE throughput sawtooth since 14:15")
    c.build(8, 8, "H100", hgx("h100r"), ll="Ethernet", start="2026-11-29T13:45:00Z", minutes=75)
    c.job_name = "roce-rlhf"
    h, n = c.host(2), c.host(2).nics[7]
    onset = c.t0 + 1800
    link_flaps(c, h, n, onset, [onset + 300, onset + 1500, onset + 2600], ib=False, journal_msgs=False)
    c.host(6).nics[1].c["symbol_error"] = Counter(37)  # historic errors, no growth
    c.host(6).nics[1].c["rx_symbol_err_phy"] = Counter(37)
    all_hosts(c, dmesg_form="caller")
    c.host(5).truncate.add("dmesg.txt")
    base_logs(c)
    return c, "%s/%s" % (h.name, n.ibdev)


def fr13():
    c = Case("fr-13", 113, "hbm_degradation", "Job crashed at 03:41 with CUDA error on one rank")
    c.build(8, 8, "A100", fqdn("dc7"), start="2026-11-30T02:40:00Z", minutes=75)
    c.job_name = "a100-pretrain-30b"
    c.fmt.update(dcgm_ecc=True)
    h, g = c.host(4), c.host(4).gpus[1]
    r = c.rank_of(h, 1)
    t_err = c.t0 + 3660
    hbm_crash(c, h, g, t_err, r)
    stop_traffic(c, t_err)
    all_hosts(c, dmesg_form="journal", smi_form="throttle")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr14():
    c = Case("fr-14", 114, "hbm_degradation", "Step time creeping up since 11:05; one rank consistently last")
    c.build(12, 8, "H100", iplike(10, 12, 8), start="2026-12-01T10:30:00Z", minutes=90)
    c.job_name = "dense-65b"
    c.fmt.update(dcgm_ecc=True, split_dcgm=True)
    h, g = c.host(9), c.host(9).gpus[4]
    hbm_slow(c, h, g, c.t0 + 2100)
    all_hosts(c, nvml=False, smi_form="none", dmesg_form="plain")
    c.host(3).truncate.add("dmesg.txt")
    c.host(10).empty.add("lspci-vv.txt")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr15():
    c = Case("fr-15", 115, "gpu_fell_off_bus", "Job hung at 04:22, NCCL watchdog killed it 10 min later")
    c.build(8, 8, "H100", short("gpu-b"), start="2026-12-02T03:50:00Z", minutes=60)
    c.job_name = "llm-13b-rl"
    h, g = c.host(6), c.host(6).gpus[4]
    r = c.rank_of(h, 4)
    t = c.t0 + 1920
    fell_off(c, h, g, t, r)
    stop_traffic(c, t)
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr16():
    c = Case("fr-16", 116, "gpu_fell_off_bus", "Small H200 job stopped making progress at 19:07")
    c.build(4, 8, "H200", rackslot(), start="2026-12-02T18:40:00Z", minutes=50)
    c.job_name = "h200-eval-harness"
    c.fmt.update(compute=False, every=5, host_label="hostname")
    h, g = c.host(1), c.host(1).gpus[7]
    r = c.rank_of(h, 7)
    t = c.t0 + 1620
    fell_off(c, h, g, t, r, newer=True)
    stop_traffic(c, t)
    all_hosts(c, dmesg_form="kmsg")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr17():
    c = Case("fr-17", 117, "nvlink_fault", "Intra-node all-reduce slow on one node since 07:30")
    c.build(8, 8, "H100", short("dgx"), start="2026-12-03T07:00:00Z", minutes=70)
    c.job_name = "tp8-llm-70b"
    c.fmt.update(dcgm_nvlink=True)
    h, g = c.host(2), c.host(2).gpus[5]
    nvlink(c, h, g, c.t0 + 1800, [4, 5])
    all_hosts(c, dmesg_form="ctime")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr18():
    c = Case("fr-18", 118, "nvlink_fault", "Tensor-parallel job degraded; no XIDs reported by the alerting")
    c.build(16, 8, "H200", fqdn("dc5"), start="2026-12-03T15:00:00Z", minutes=80)
    c.job_name = "tp8-h200-405b"
    c.fmt.update(dcgm_nvlink=True, host_label="hostname", reasons_name="DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    h, g = c.host(13), c.host(13).gpus[0]
    nvlink(c, h, g, c.t0 - 3600, [11], xid=False, rate=6.0)
    # decoy: sticky XID 13 from an old application bug, last week
    dh, dg = c.host(4), c.host(4).gpus[3]
    dg.xid = 13
    dh.boot = min(dh.boot, c.t0 - 8 * 86400)
    dh.events.append((c.t0 - 6 * 86400, "NVRM: Xid (%s): 13, pid=1797828, name=pt_main_thread, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter" % dg.xid_tag))
    all_hosts(c, dmesg_form="plain")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr19():
    c = Case("fr-19", 119, "silent_data_corruption", "Replica checksum check failed at step 41,3xx; loss looks normal")
    c.build(16, 8, "H100", short("gpu-c"), start="2026-12-01T01:00:00Z", minutes=60)
    c.job_name = "llm-8b-dp"
    c.fmt.update(checksum=True, every=20)
    h, g = c.host(10), c.host(10).gpus[2]
    r = c.rank_of(h, 2)
    c.sdc = (r, 40000 + 1300)
    warm_decoy(c, c.host(4), c.host(4).gpus[7], 20)
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr20():
    c = Case("fr-20", 120, "silent_data_corruption", "Loss divergence investigation: small cluster, no hardware alerts")
    c.build(4, 4, "A100", iplike(172, 16, 121), start="2026-11-29T20:00:00Z", minutes=60)
    c.job_name = "a100-dp16"
    c.fmt.update(checksum=True, steps="gz", shuffle_rows=True, drop_rows=0.01, every=10, sdc_loss=True, ranks=False)
    h, g = c.host(2), c.host(2).gpus[1]
    r = c.rank_of(h, 1)
    c.sdc = (r, 40000 + 200)
    c.host(0).nics[1].c["symbol_error"] = Counter(12)
    all_hosts(c, dmesg_form="journal", smi_form="throttle")
    base_logs(c)
    return c, "%s/gpu%d" % (h.name, g.index)


def fr21():
    c = Case("fr-21", 121, "host_contention", "Step time +25% since 16:40; all GPUs look healthy")
    c.build(12, 8, "H100", iplike(10, 40, 2), start="2026-11-30T16:10:00Z", minutes=75)
    c.job_name = "dense-34b"
    h = c.host(8)
    contention(c, h, c.t0 + 1800, [("clamd", 2210.4, 3.1), ("falcon-sensor", 780.2, 0.9), ("updatedb.mlocat", 99.7, 0.1)])
    for o in c.hosts:
        o.load = 38 + c.rng.uniform(0, 12)  # busy but normal everywhere
        o.top = True
        o.psi_files = True
        o.psi_cpu = c.rng.uniform(0.5, 2.5)
    h.psi_cpu = 1.2
    base_logs(c)
    c.reported = "Security team rolled out a new scanning policy this afternoon (scope unknown)."
    return c, h.name


def fr22():
    c = Case("fr-22", 122, "host_contention", "4-GPU node pool job slowed down at 09:15")
    c.build(8, 4, "H100", short("pcie-h100-"), start="2026-12-02T08:45:00Z", minutes=60)
    c.job_name = "h100pcie-ft"
    c.fmt.update(compute=False, every=10)
    h = c.host(5)
    contention(c, h, c.t0 + 1800, [("kswapd0", 99.8, 0.0), ("kswapd1", 97.1, 0.0), ("java", 310.2, 41.7)],
               psi_hot=9.0, load_hot=71.0, slow=1.3, mem=True)
    for o in c.hosts:
        o.top = True
        o.psi_files = True
    all_hosts(c, dmesg_form="ctime")
    h.events.append((c.t0 + 1790, "java invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"))
    base_logs(c)
    return c, h.name


def fr23():
    c = Case("fr-23", 123, "input_pipeline_stall", "Step time spiky since 12:20; GPUs idle between steps")
    c.build(16, 8, "H100", short("gpu-d"), start="2026-11-27T11:50:00Z", minutes=75)
    c.job_name = "vlm-video-pretrain"
    c.fmt.update(extra_cols=["data_wait_s", "tokens"])
    onset = c.t0 + 1800
    c.input_stall = (onset, 0.45, 0.8, 3.6)
    base_logs(c)
    t = onset + 30
    while t < c.t1:
        log(c, "train.log", t, "[%s] WARNING data: rank 0 waited %.2fs for next batch (prefetch queue empty, 0/8 ready)" % (stamp(t), 1.2 + (t % 7) * 0.3))
        t += 480
    c.reported = "Dataset was re-sharded onto the new object store at 12:15."
    return c, "job"


def fr24():
    c = Case("fr-24", 124, "input_pipeline_stall", "A100 job throughput 40% below plan all day")
    c.build(24, 8, "A100", fqdn("dc2"), start="2026-11-26T09:00:00Z", minutes=60)
    c.job_name = "a100-speech"
    c.fmt.update(compute=False, every=30, metric_step=120)
    c.input_stall = (c.t0 - 86400, 0.6, 1.0, 2.4)
    for o in c.hosts:
        o.psi_files = True
        o.psi_io = 42.0 + c.rng.uniform(-4, 4)
    base_logs(c)
    t = c.t0 + 60
    while t < c.t1:
        log(c, "train.log", t, "[%s] INFO trainer: data_time=%.3fs compute+comm=%.3fs (num_workers=2, pin_memory=False)" % (stamp(t), 1.6 + (t % 5) * 0.2, 2.47))
        t += 300
    return c, "job"


def fr25():
    c = Case("fr-25", 125, "nccl_misconfiguration", "New launcher version: step time +60% since restart")
    c.build(8, 8, "H100", short("gpu-e"), start="2026-11-25T14:00:00Z", minutes=60)
    c.job_name = "llm-70b-launcher-v2"
    c.fmt.update(nccl_one_hca=True)
    for h in c.hosts:
        for i, n in enumerate(h.nics):
            n.traffic = 1.0 * 8 * 0.45 if i == 0 else 0.002
    c.comm_factor.append((c.t0 - 86400, 2.6))
    base_logs(c, env=["NCCL_IB_HCA set by environment to mlx5_0", "NCCL_IB_TIMEOUT set by environment to 22."])
    c.reported = "Only change: launcher v2 (new env templating)."
    return c, "job"


def fr26():
    c = Case("fr-26", 126, "nccl_misconfiguration", "H200 job 4x slower than on the reference cluster")
    c.build(6, 8, "H200", iplike(10, 7, 1), start="2026-11-24T21:00:00Z", minutes=45)
    c.job_name = "h200-port-test"
    c.fmt.update(nccl_socket=True, compute=False, every=5)
    for h in c.hosts:
        for n in h.nics:
            n.traffic = 0.0005
    c.comm_factor.append((c.t0 - 86400, 5.0))
    base_logs(c, env=["NCCL_IB_DISABLE set by environment to 1.", "NCCL_SOCKET_IFNAME set by environment to eth0"])
    return c, "job"


def fr27():
    c = Case("fr-27", 127, "healthy", "XID alert on a training node; please check whether the job is affected")
    c.build(8, 8, "H100", short("gpu-f"), start="2026-11-23T05:00:00Z", minutes=60)
    c.job_name = "llm-34b-cont"
    dh, dg = c.host(3), c.host(3).gpus[2]
    dg.xid = 31
    dh.boot = min(dh.boot, c.t0 - 12 * 86400)
    dh.events.append((c.t0 - 9 * 86400, "NVRM: Xid (%s): 31, pid=13705, name=python3, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ" % dg.xid_tag))
    warm_decoy(c, c.host(6), c.host(6).gpus[0], 23)
    c.alerts = [{"status": "firing", "labels": {"alertname": "GPUXidError", "Hostname": dh.name, "gpu": "2", "severity": "warning"},
                 "annotations": {"summary": "DCGM_FI_DEV_XID_ERRORS is 31"}, "startsAt": "2026-11-23T05:02:00Z", "endsAt": "0001-01-01T00:00:00Z"}]
    base_logs(c)
    return c, None


def fr28():
    c = Case("fr-28", 128, "healthy", "Weekly health review: is anything degrading this job?")
    c.build(16, 8, "A100", rackslot(), start="2026-11-22T00:00:00Z", minutes=90)
    c.job_name = "a100-pretrain-steady"
    c.host(9).nics[3].c["symbol_error"] = Counter(214)
    c.host(9).nics[3].c["port_rcv_errors"] = Counter(19)
    c.host(9).nics[3].c["link_downed"] = Counter(1)
    for o in c.hosts:
        o.load = 85 + c.rng.uniform(0, 20)
        o.top = True
        o.psi_files = True
        o.psi_cpu = 3.0 + c.rng.uniform(0, 1)
    base_logs(c)
    log(c, "train.log", c.t0 - 1200 - 39, "%s:4711:4711 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetNvLinkRemoteDeviceType() failed: Not Supported" % c.host(0).name)
    log(c, "train.log", c.t0 - 1200 - 39, "%s:4711:4711 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin." % c.host(0).name)
    all_hosts(c, dmesg_form="journal")
    return c, None


def fr29():
    c = Case("fr-29", 129, "healthy", "Job restarted overnight; confirm it is healthy now")
    c.build(6, 8, "H200", fqdn("dc9"), start="2026-11-21T07:00:00Z", minutes=60, spares=1)
    c.job_name = "h200-sft"
    c.fmt.update(lead_s=7200, every=20)
    c.restart = (c.t0 - 4300, c.t0 - 2100, 40000 + 600)
    c.host(6).gpus[0].idle_gen = True
    c.host(6).gpus[5].idle_gen = True
    c.host(1).truncate.add("dmesg.txt")
    c.host(4).empty.add("nvidia-smi-q.txt")
    c.remove_files.append("nodes/%s/nvml.json" % c.host(2).name)
    base_logs(c)
    log(c, "train.log", c.t0 - 4290, "[rank11]:[E1121 05:48:30.124073319 ProcessGroupNCCL.cpp:684] [Rank 11] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
    log(c, "train.log", c.t0 - 2110, "[%s] INFO trainer: resumed from checkpoint step 40600 (preempted by scheduler)" % stamp(c.t0 - 2110))
    return c, None


def fr30():
    c = Case("fr-30", 130, "healthy", "Capacity check on 48-node H100 job before scaling up")
    c.build(48, 8, "H100", hgx("H100"), start="2026-11-20T12:00:00Z", minutes=60)
    c.job_name = "llm-400b-prelim"
    c.fmt.update(metric_step=180, every=40, dcgm_gz=True, node_gz=True, dcgm_prof=False)
    c.host(21).gpus[4].replay = Counter(17)  # historic replays, no growth
    warm_decoy(c, c.host(33), c.host(33).gpus[6], 22)
    node_subset(c, [21, 33, 40])
    c.host(40).truncate.add("dmesg.txt")
    all_hosts(c, dmesg_form="caller")
    base_logs(c)
    return c, None


CASES = [fr01, fr02, fr03, fr04, fr05, fr06, fr07, fr08, fr09, fr10, fr11, fr12, fr13, fr14, fr15,
         fr16, fr17, fr18, fr19, fr20, fr21, fr22, fr23, fr24, fr25, fr26, fr27, fr28, fr29, fr30]
