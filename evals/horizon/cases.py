"""The incidents. Each function builds one Case model; every source is printed from it."""
from fleet import IDLE, SW_PWR, HW_SLOW, SW_THERM, HW_THERM, HW_BRAKE, iso, utc, MON
from model import Case
import zlib

NAMES = {
    "a": lambda i: "gpu-a%03d" % (i + 17),
    "dc3": lambda i: "gpu%04d.dc3.internal" % (1001 + i),
    "ip": lambda i: "10-90-43-%d" % (101 + i),
    "rn": lambda i: "h100-r%02d-n%02d" % (i // 4 + 3, i % 4 + 1),
    "node": lambda i: "node%03d" % (i + 1),
    "dgx": lambda i: "dgx-b200-%02d" % (i + 1),
    "fra": lambda i: "hgx%03d.fra2.example.net" % (i + 1),
    "tok": lambda i: "tk1-gpu-%04d" % (i + 200),
}


def alert(name, sev, labels, summary, starts):
    lab = {"alertname": name, "severity": sev}
    lab.update(labels)
    return {"status": "firing", "labels": lab, "annotations": {"summary": summary},
            "startsAt": iso(starts), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=%s" % name,
            "fingerprint": "%016x" % (zlib.crc32((name + summary + str(starts)).encode()) * 2654435761 % (1 << 64))}


def xid(case, g, t, code, text, style_old=False):
    bus = "PCI:0000:%02x:00" % g.bus
    if style_old:
        line = "NVRM: Xid (%s): %d, %s" % (bus, code, text)
    else:
        line = "NVRM: Xid (%s): %d, pid='<unknown>', name=<unknown>, %s" % (bus, code, text)
    g.host.dmesg.append((t, line))
    case.xids.append((g, t, code))


def decoys(case, kinds, avoid=()):
    rng = case.rng
    pool = [(h, g) for h in case.hosts if not h.spare for g in h.gpus if h.name not in avoid]
    for k in kinds:
        h, g = pool[rng.randrange(len(pool))]
        if k == "old_xid":
            t = max(h.boot + 3600, case.t0 - rng.randrange(3, 9) * 86400)
            xid(case, g, t, 63, "pid=%d, Row Remapper: New row marked for remapping, reset gpu to activate." % rng.randrange(2000, 90000)
                if False else "Row Remapper: New row marked for remapping, reset gpu to activate.")
            g.remap = [1, 0, False, False]
            g.agg_extra = 14
        elif k == "old_xid13":
            t = max(h.boot + 7200, case.t0 - rng.randrange(2, 6) * 86400)
            xid(case, g, t, 13, "Graphics SM Warp Exception on (GPC 3, TPC 1, SM 0): Illegal Instruction Parameter")
        elif k == "static_ecc":
            g.sbe0 = rng.randrange(3, 40)
            g.agg_extra = rng.randrange(50, 300)
        elif k == "warm":
            g.temp = rng.randrange(77, 82)
        elif k == "aer":
            g.aer_cor = rng.randrange(2, 6)
        elif k == "nvl_static":
            g.nvl0 = [rng.randrange(5, 60), rng.randrange(0, 4), 0]
            g.nvl_link = rng.randrange(case.nvlinks)
        elif k == "nic_old_down":
            n = h.nics[rng.randrange(len(h.nics))]
            n.c0["downs"] = 1
            n.c0["sym"] = 12
    return case


def nccl_init(case, hcas, env=(), ver="2.21.5", transport="IB", hosts=None):
    lines = ["NCCL version %s+cuda12.4" % ver]
    hs = hosts or sorted({h.name: h for h, g in case.ranks}.values(), key=lambda h: h.name)[:3]
    pid = 5771
    for h in hs:
        pre = "%s:%d:%d [0]" % (h.name, pid, pid + 12)
        lines.append("%s NCCL INFO Bootstrap : Using eth0:%s<0>" % (pre, h.ip))
        for e in env:
            lines.append("%s NCCL INFO %s" % (pre, e))
        lines.append("%s NCCL INFO NET/IB : Using %s [RO]; OOB eth0:%s<0>" % (
            pre, " ".join("[%d]%s:1/%s" % (i, x, transport) for i, x in enumerate(hcas)), h.ip))
        lines.append("%s NCCL INFO Using network IB" % pre)
        pid += 3
    h0 = hs[0]
    lines.append("%s:%d:%d [0] NCCL INFO comm 0x557fe785f7a0 rank 0 nranks %d cudaDev 0 nvmlDev 0 busId %02x000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE"
                 % (h0.name, 5771, 5790, len(case.ranks), h0.gpus[0].bus))
    return lines


def train_log(case, every=50, extra=None):
    """Per-step trainer lines from the model's own step rows (rank 0)."""
    out = []
    rows = sorted((r for r in case.step_rows if r["rank"] == 0), key=lambda r: r["start_unix"])
    ntok = 4096 * 1024
    for r in rows:
        if r["step"] % every:
            continue
        d = utc(r["start_unix"])
        tps = ntok / r["duration_s"] / len(case.ranks)
        out.append("[%s] step=%d loss=%.4f step_time=%.3fs tokens/s/gpu=%.0f" % (
            d.strftime("%Y-%m-%d %H:%M:%S"), r["step"], r.get("loss", 0.0) or 2.3, r["duration_s"], tps))
        if extra:
            out += extra(r)
    return out


def watchdog(case, t, seq, dead_rank, op="ALLREDUCE", n=6):
    d = utc(t)
    out = []
    for r in range(min(n, len(case.ranks))):
        if r == dead_rank:
            continue
        out.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%09d ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (
            r, d.month, d.day, d.hour, d.minute, d.second, 123992144 + r * 977, r, seq, op, 262144000, 262144000, 20 + r))
    out.append("[rank0]:[E%02d%02d %02d:%02d:%02d.%09d ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank %d and we will try our best to dump the debug info. Last enqueued NCCL work: %d, last completed NCCL work: %d.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. " % (
        d.month, d.day, d.hour, d.minute, d.second, 118859045, (dead_rank + 1) % len(case.ranks), seq, seq - 1))
    return out


def slow_gpu(case, host, idx, fs, fac):
    case.slow.append((lambda h, g, H=host, I=idx: h.name == H and g.index == I, fs, fac))


def slow_host(case, host, fs, fac):
    case.slow.append((lambda h, g, H=host: h.name == H, fs, fac))


def finish(case):
    if case.crash_at:
        for h in case.hosts:
            for g in h.gpus:
                g.idle_after = case.crash_at + 600
    case.settle_traffic()
    case.make_steps()
    return case


def pause_chain(case, origin_leaf, fs, rate, origin_port=None, victim_frac=0.25):
    """Pauses spread from a congested point on origin_leaf across spines to the other leaves."""
    job = {h.name for h, g in case.ranks}
    for h in case.hosts:
        for n in h.nics:
            if h.name not in job or n is getattr(case, "origin_nic", None):
                continue
            f = victim_frac if n.switch == origin_leaf else victim_frac * 0.4
            n.fs = fs
            n.rxp_f = n.rxp + rate * f
    for sw in case.switches.values():
        if sw.tier != "leaf":
            continue
        for p in sw.uplinks:
            q = p.mirror
            p.fs = q.fs = fs
            if sw.name == origin_leaf:
                p.pfc_tx_f = rate * 0.35
                q.pfc_rx_f = p.pfc_tx_f
            else:
                q.pfc_tx_f = rate * 0.12
                p.pfc_rx_f = q.pfc_tx_f
    if origin_port is not None:
        origin_port.fs = fs
        origin_port.pfc_rx_f = rate


# =====================================================================================
def hz01():
    c = Case("hz-01", "2026-03-10T01:40:00Z", 80)
    c.steps_gz = False
    c.build(6, NAMES["a"], hosts_per_leaf=4)
    c.place_ranks()
    decoys(c, ["warm", "static_ecc", "aer", "old_xid13"], avoid=("gpu-a019",))
    h = c.host("gpu-a019")
    g = h.gpus[5]
    fs = c.t0 + 1900
    g.fs = fs
    g.width_f = 4
    g.replay0 = 3
    g.replay_rate_f = 0.8
    g.aer_cor = 41
    h.dmesg += [(fs - 2.2, "pcieport 0000:b8:01.0: AER: Multiple Correctable error message received from 0000:%02x:00.0" % g.bus),
                (fs - 2.19, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)" % g.bus),
                (fs - 2.18, "nvidia 0000:%02x:00.0:   device [10de:2330] error status/mask=00000001/0000a000" % g.bus),
                (fs - 2.17, "nvidia 0000:%02x:00.0:    [ 0] RxErr                  (First)" % g.bus),
                (fs - 0.4, "pcieport 0000:b8:01.0: pciehp: Slot(12): Link Up"),
                (fs - 0.3, "pci 0000:%02x:00.0: 126.028 Gb/s available PCIe bandwidth, limited by 32.0 GT/s PCIe x4 link at 0000:b8:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % g.bus)]
    slow_gpu(c, h.name, 5, fs, 1.38)
    c.step_cols = ["compute_s", "loss"]
    c.title = "Throughput down ~30% on llm-34b since 02:12, no job errors"
    c.reported = "Tokens/s dropped from 410k to about 300k around 02:12. Same data, no code change. A few nodes show power-capped GPUs on the dashboard."
    c.alerts = [alert("GPUPowerCapped", "info", {"instance": "gpu-a021:9400", "gpu": "2"}, "GPU clocks limited by SW power cap", c.t0 + 400)]
    c.job_name = "llm-34b"
    c.extra_cmds = {"pressure"}
    c.truth = ("pcie_downtrain", "gpu-a019/gpu5")
    c.notes = dict(hard="GPU link retrains x16->x4 mid-window; nvml/sysfs/lspci/dmesg agree; decoys: power-cap alert, warm GPU, old XID 13, static ECC", missing="none")
    return finish(c)


def hz02():
    c = Case("hz-02", "2026-04-02T13:30:00Z", 70)
    c.build(8, NAMES["ip"], ll="Ethernet", nics=4, hosts_per_leaf=8, gpus=8)
    c.place_ranks()
    c.instance_ip = True
    c.nic_pci = True
    decoys(c, ["warm", "static_ecc", "aer"])
    h = c.host("10-90-43-106")
    # the faulty host's node data carries the evidence (sysfs link speed, the mlx5_core line); the
    # default node-host choice did not know a NIC's PCIe generation, so it left this host out
    c.key_hosts.add(h.name)
    n = h.nics[2]
    n.gen = 3  # trained at 8 GT/s: ~126 Gb/s for a 400G port
    c.comm.append((c.t0 - 7200, 2.7))  # the link has been slow since the reboot before the window
    h.boot = c.t0 - 5400
    h.dmesg.append((h.boot + 12.9, "mlx5_core 0000:%02x:00.0: 126.024 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at 0000:%02x:01.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)" % (n.bus, n.bus - 3)))
    c.step_cols = []
    c.skip = {"metrics/dcgm.om"}
    c.extra_cmds = {"fec"}
    c.title = "After the maintenance reboots, all-reduce time roughly 2.5x what it was last week"
    c.reported = "Six nodes were rebooted for a firmware update at 12:00. Since the job restarted, step time is ~2.3 s (was ~1.6 s). NCCL tests not run yet."
    c.job_name = "vlm-pretrain"
    c.truth = ("pcie_downtrain", "10-90-43-106/mlx5_2")
    c.notes = dict(hard="NIC PCIe link at 8 GT/s since boot (no before/after change in window); no compute_s column; job-wide slowdown with no GPU straggler", missing="metrics/dcgm.om (collector did not run)")
    return finish(c)


def hz03():
    c = Case("hz-03", "2026-05-14T08:00:00Z", 60)
    c.build(8, NAMES["rn"], ll="Ethernet", nics=8, hosts_per_leaf=4, gpus=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "old_xid"])
    h = c.host("h100-r04-n03")
    n = h.nics[3]
    fs = c.t0 + 1500
    c.origin_nic = n
    n.fs = fs
    n.txp_f = 14000.0
    n.oob_rate_f = 900.0
    n.stall_rate_f = 25000.0
    n.storm_warn = 6
    n.c0["stall"] = 1200
    pause_chain(c, n.switch, fs, 14000.0)
    c.switches[n.switch].pfcwd[n.sport] = ([fs + 3, fs + 900, fs + 1900], None, 8241332)
    c.comm.append((fs, 2.4))
    c.switch_cli = {n.switch, "spine-01"}
    c.nic_pci = True
    c.title = "All-reduce bandwidth collapsed; step time 2x since 08:25"
    c.reported = "Job step time went from ~1.55 s to ~2.4 s. Every node shows rising rx pause counters. Network team says fabric links are all up."
    c.truth = ("pfc_pause_storm", "h100-r04-n03/mlx5_3")
    c.notes = dict(hard="every job NIC receives pauses (victims); only one NIC transmits them, with rx_out_of_buffer and PCIe stalls; switch pfcwd names the port", missing="none")
    return finish(c)


def hz04():
    c = Case("hz-04", "2026-05-20T22:10:00Z", 60)
    c.build(14, NAMES["fra"], ll="Ethernet", nics=4, hosts_per_leaf=8, gpus=8, spines=2, uplinks_per_spine=2,
            leaf_fmt="sw-leaf-%d", spine_fmt="sw-spine-%d")
    # the job runs on the first 6 hosts (leaf 1); the remaining hosts belong to another tenant
    c.hosts_job = c.hosts[:6]
    c.ranks = [(h, g) for h in c.hosts_job for g in h.gpus]
    for h in c.hosts[6:]:
        for g in h.gpus:
            g.busy = False
    decoys(c, ["warm", "static_ecc"], avoid=[h.name for h in c.hosts[6:]])
    other = c.host("hgx012.fra2.example.net")
    port = c.switches[other.nics[1].switch].ports[other.nics[1].sport]
    fs = c.t0 + 1320
    pause_chain(c, other.nics[1].switch, fs, 9000.0, origin_port=port)
    port.nic = None  # the host beyond is not ours: its side is only seen from the switch
    port.out_rate = port.in_rate = 2.0e6
    c.switches[port.switch].pfcwd[port.name] = ([fs + 2], None, 3120448)
    c.comm.append((fs, 1.9))
    c.node_hosts = c.hosts[:6]
    c.node_metric_hosts = c.hosts[:6]
    c.dcgm_hosts = c.hosts[:6]
    c.topo_hosts = lambda: c.hosts[:6]
    c.switch_cli = {"sw-leaf-1", "sw-leaf-2", "sw-spine-1", "sw-spine-2"}
    c.title = "Job on leaf 1 slowed down at 22:32; nothing changed on our nodes"
    c.reported = "Our 6 nodes all see pause frames coming in. Nobody touched them. Another team shares the spines."
    c.truth = ("pfc_pause_storm", "sw-leaf-2/%s" % port.name)
    c.notes = dict(hard="origin is a host-facing port on another leaf whose host is outside the job and has no node data; must follow pauses leaf->spine->leaf from switch counters", missing="no node data for the originating host (other tenant)")
    return finish(c)


def hz05():
    c = Case("hz-05", "2026-06-03T03:00:00Z", 75)
    c.steps_gz = False
    c.build(16, NAMES["node"], nics=8, hosts_per_leaf=4, spines=4, uplinks_per_spine=1,
            port_fmt=lambda i: "Ethernet%d" % (i * 4))
    c.place_ranks()
    decoys(c, ["warm", "static_ecc", "aer", "nic_old_down"])
    fs = c.t0 + 1200
    c.restart = (fs - 240, fs, 20400)
    c.step_start = c.t0 - 900
    c.first_step = 20000
    c.uplink_weights = {"leaf-03": [0.5, 0.5, 0.0, 0.0]}
    c.offleaf = 0.75
    c.comm.append((fs, 1.85))
    c.title = "Job 1.8x slower after resuming from checkpoint at 03:20"
    c.reported = "Node node009 was replaced and the job resumed from the 03:16 checkpoint. Since the resume it runs much slower. Replacement node passes dcgmi diag -r 3."
    c.alerts = [alert("NodeRecentlyReplaced", "info", {"instance": "node009:9100"}, "node009 joined the pool less than 24h ago", c.t0 + 600)]
    c.truth = ("ecmp_hash_polarization", "leaf-03")
    for p in c.switches["leaf-03"].uplinks[:2]:
        p.disc_f = 40.0
    c.switch_cli = {"leaf-03", "leaf-01"}
    c.step_cols = ["compute_s", "loss"]
    c.notes = dict(hard="after resume the flows of leaf-03 hash onto 2 of 4 uplinks (others idle); decoy: a replaced node", missing="none")
    return finish(c)


def hz06():
    c = Case("hz-06", "2026-06-11T10:00:00Z", 60)
    c.build(24, NAMES["tok"], nics=4, ll="Ethernet", hosts_per_leaf=8, spines=4, uplinks_per_spine=2,
            leaf_fmt="tk1-l%02d", spine_fmt="tk1-s%02d", port_fmt=lambda i: "Ethernet%d/1" % (i + 1), up_base=40)
    c.place_ranks()
    decoys(c, ["static_ecc", "old_xid13"])
    c.uplink_weights = {"tk1-l02": [0.25, 0.0, 0.25, 0.0, 0.25, 0.0, 0.25, 0.0]}
    c.uplink_weights_before = {"tk1-l02": [0.25, 0.0, 0.25, 0.0, 0.25, 0.0, 0.25, 0.0]}
    c.offleaf = 0.66
    c.comm.append((c.t0 - 3600, 1.6))
    for p in c.switches["tk1-l02"].uplinks[0::2]:
        p.disc_f = 25.0
        p.fs = c.t0 - 3600
    c.step_cols = ["loss"]
    c.node_hosts = [c.hosts[i] for i in (0, 8, 9, 16)]
    c.title = "24-node run is at 0.62 of the scaling we measured on 16 nodes"
    c.reported = "Scaling from 16 to 24 nodes should give ~1.45x, we get 0.98x. Step time is flat (bad from the start). Suspect slow nodes."
    c.truth = ("ecmp_hash_polarization", "tk1-l02")
    c.notes = dict(hard="steady state, no before/after: four of eight uplinks carry everything from step 1; Arista-style port names; only snmp counters show it", missing="node data for only 4 hosts; no switch CLI")
    return finish(c)


def hz07():
    c = Case("hz-07", "2026-07-01T04:30:00Z", 60)
    c.build(8, NAMES["dc3"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    c.dmesg_style = {"*": "journal"}
    c.extra_cmds = {"ethtool_ib"}
    decoys(c, ["warm", "static_ecc", "nic_old_down", "aer"])
    h = c.host("gpu1005.dc3.internal")
    n = h.nics[6]
    fs = c.t0 + 900
    n.fs = fs
    n.sym_rate_f = 3.2
    n.rcverr_rate_f = 1.1
    downs = [fs + 300, fs + 1260, fs + 2110]
    n.downs_f = downs
    for d in downs:
        h.dmesg += [(d, "mlx5_core %s %s: Port: 1 Link DOWN" % ("0000:%02x:00.0" % n.bus, n.ibdev)),
                    (d + 7, "mlx5_core %s %s: Port: 1 Link INIT" % ("0000:%02x:00.0" % n.bus, n.ibdev)),
                    (d + 8, "mlx5_core %s %s: Port: 1 Link ACTIVE" % ("0000:%02x:00.0" % n.bus, n.ibdev))]
    for hh in c.hosts:
        if hh is not h:
            hh.nics[6].fs = fs
            hh.nics[6].acktmo_rate_f = 0.05
    c.comm.append((fs, 1.45))
    c.truncate = {"nodes/gpu1005.dc3.internal/cmd/dmesg.txt": 0.93}
    c.title = "Step time up and noisy since 04:45"
    c.reported = "Step time is noisy with occasional long steps. No NCCL errors, the job keeps running. GPUs look fine."
    c.logs["nccl.log"] = nccl_init(c, ["mlx5_%d" % i for i in range(8)],
                                   env=["NCCL_IB_TIMEOUT set by environment to 22.", "NCCL_IB_RETRY_CNT set by environment to 7."])
    c.truth = ("link_degradation", "gpu1005.dc3.internal/mlx5_6")
    c.notes = dict(hard="symbol errors and three flaps on one NIC; peers see ack timeouts on the same rail (victims); dmesg of the faulty host truncated (last flap lines lost), counters still tell", missing="truncated dmesg on the faulty host")
    return finish(c)


def hz08():
    c = Case("hz-08", "2026-07-09T18:00:00Z", 60)
    c.build(8, NAMES["a"], ll="Ethernet", nics=8, hosts_per_leaf=4)
    c.place_ranks()
    decoys(c, ["warm", "static_ecc", "old_xid"])
    h = c.host("gpu-a022")
    n = h.nics[1]
    fs = c.t0 + 1100
    port = c.switches[n.switch].ports[n.sport]
    port.fs = fs
    port.inerr_f = 55.0
    n.fs = fs
    n.acktmo_rate_f = 2.0
    c.comm.append((fs, 1.35))
    c.switch_cli = {n.switch}
    c.nic_pci = True
    c.extra_cmds = {"fec"}
    c.title = "Step time up 35% since 18:18"
    c.reported = "No NCCL errors, no XIDs. Host NIC error counters look clean everywhere (no symbol or FEC errors). A cable in rack r02 was reseated last week."
    c.logs["nccl.log"] = nccl_init(c, ["mlx5_%d" % i for i in range(8)], transport="RoCE",
                                   env=["NCCL_IB_GID_INDEX set by environment to 3", "NCCL_IB_TIMEOUT set by environment to 20."])
    c.truth = ("link_degradation", "%s/%s" % (n.switch, n.sport))
    c.notes = dict(hard="errors counted only on the switch's receive side of one host link; host NIC clean (FEC too) except ack timeouts", missing="none")
    return finish(c)


def hz09():
    c = Case("hz-09", "2026-08-04T11:00:00Z", 60)
    c.steps_gz = False
    c.build(4, NAMES["dgx"], model="b200", nics=8, hosts_per_leaf=4)
    c.place_ranks()
    c.driver, c.dcgm_new = "570.124.06", True
    decoys(c, ["static_ecc", "aer", "old_xid13"], avoid=("dgx-b200-03",))
    decoys(c, ["warm"])
    g = c.host("dgx-b200-03").gpus[6]
    fs = c.t0 + 1000
    g.fs = fs
    g.temp_f = 91
    g.clk_f = 1290
    g.power_f = 690000
    g.reasons_f = SW_THERM | HW_THERM
    g.therm_rate_f = 8.5e8
    slow_gpu(c, "dgx-b200-03", 6, fs, 1.52)
    c.step_cols = ["compute_s", "loss"]
    c.extra_cmds = {"fans", "sel"}
    for h in c.hosts:
        h.fans = [(16800 + i * 37, True) for i in range(8)]
    c.title = "B200 pilot: step time 1.9 s -> 2.6 s at 11:17"
    c.reported = "Four-node pilot. Every GPU on the dashboard shows SW power cap at times. Fans all OK per BMC."
    c.truth = ("thermal_throttle", "dgx-b200-03/gpu6")
    c.notes = dict(hard="one GPU hot with thermal reasons while fans read normal; every busy GPU carries the SW power cap decoy", missing="none")
    return finish(c)


def hz10():
    c = Case("hz-10", "2026-08-19T02:00:00Z", 70)
    c.build(8, NAMES["node"], model="a100", nics=4, hosts_per_leaf=8)
    c.driver, c.cuda, c.dcgm_new = "525.105.17", "12.0", False
    c.driver_major = 525
    c.old_kernel = True
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "aer"])
    h = c.host("node006")
    fs = c.t0 + 1500
    for i, g in enumerate(h.gpus):
        g.fs = fs
        g.temp_f = 86 + i % 4
        g.clk_f = 1095 + 15 * (i % 3)
        g.power_f = 330000 + i * 1700
        g.reasons_f = SW_THERM | HW_THERM
        g.therm_rate_f = 6e8
    slow_host(c, "node006", fs, 1410 / 1095.0)
    h.sel = [(fs - 95, "Fan #0x32", "Lower Critical going low", "Asserted"),
             (fs - 90, "Fan #0x33", "Lower Critical going low", "Asserted"),
             (fs - 60, "Temperature #0x0c", "Upper Non-critical going high", "Asserted"),
             (c.t0 - 5 * 86400, "Power Supply #0x51", "Power Supply AC lost", "Asserted"),
             (c.t0 - 5 * 86400 + 40, "Power Supply #0x51", "Power Supply AC lost", "Deasserted")]
    h.fans = [(15200, True), (15320, True), (0, False), (0, False), (15100, True), (15260, True)]
    for hh in c.hosts:
        if hh is not h:
            hh.fans = [(15200 + i * 40, True) for i in range(6)]
    c.extra_cmds = {"sel", "fans"}
    c.dmesg_style = {"*": "T"}
    c.step_cols = ["loss"]
    c.title = "A100 job: steady 25% slowdown since 02:25"
    c.reported = "Old cluster (A100, driver 525). No XIDs. One node had a PSU alarm last week that cleared."
    c.truth = ("thermal_throttle", "node006")
    c.notes = dict(hard="all 8 GPUs of one host throttle thermally after two fans fail (SEL + sdr); old driver field names; decoy: old PSU event", missing="none")
    return finish(c)


def hz11():
    c = Case("hz-11", "2026-09-02T06:00:00Z", 60)
    c.build(6, NAMES["rn"], model="h200", nics=8, hosts_per_leaf=6)
    c.place_ranks()
    c.dcgm_new = True
    decoys(c, ["static_ecc", "warm", "aer"], avoid=("h100-r04-n02",))
    g = c.host("h100-r04-n02").gpus[1]
    fs = c.t0 + 1700
    g.fs = fs
    g.clk_f = 1005
    g.power_f = 318000
    g.reasons_f = HW_SLOW | HW_BRAKE
    g.pow_rate_f = 9.5e8
    slow_gpu(c, "h100-r04-n02", 1, fs, 1.9)
    c.step_cols = ["compute_s", "loss", "grad_norm"]
    c.alerts = [alert("GPUPowerCapped", "warning", {"hostname": "h100-r05-n01", "gpu": "4"}, "GPU at power limit for 15m", c.t0 + 300)]
    c.title = "H200 job at half speed since 06:28"
    c.reported = "Power-cap alert firing on h100-r05-n01 GPU 4 since 06:05. Step time doubled later."
    c.truth = ("power_throttle", "h100-r04-n02/gpu1")
    c.notes = dict(hard="one GPU brake-throttled at ~320 W and ~1 GHz; the alert fires on a different GPU's normal SW power cap", missing="none")
    return finish(c)


def hz12():
    c = Case("hz-12", "2026-09-15T20:00:00Z", 60)
    c.build(8, NAMES["a"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "old_xid", "warm"])
    h = c.host("gpu-a021")
    fs = c.t0 + 1200
    for i, g in enumerate(h.gpus):
        g.fs = fs
        g.clk_f = 1170 + 15 * (i % 2)
        g.power_f = 372000 + i * 2100
        g.reasons_f = HW_SLOW | HW_BRAKE
        g.pow_rate_f = 9.9e8
    slow_host(c, "gpu-a021", fs, 1.62)
    h.sel = [(fs - 4, "Power Supply #0x52", "Failure detected", "Asserted"),
             (fs - 3, "Power Supply #0x52", "Power Supply AC lost", "Asserted"),
             (fs - 2, "System ACPI Power State #0x7f", "S0/G0: working", "Asserted"),
             (c.t0 - 20 * 86400, "Watchdog2 #0x71", "Timer interrupt", "Asserted")]
    for hh in c.hosts:
        if hh is not h:
            hh.sel = [(c.t0 - 30 * 86400, "Event Logging Disabled #0x09", "Log area reset/cleared", "Asserted")]
    c.extra_cmds = {"sel"}
    c.dmesg_style = {"*": "kmsg"}
    c.step_cols = ["compute_s"]
    c.title = "Training 60% slower from 20:20, no errors in job logs"
    c.reported = "Facilities did PDU work in hall B around 20:00."
    c.truth = ("power_throttle", "gpu-a021")
    c.notes = dict(hard="every GPU of one host power-brake throttled after a PSU failure; host-level component; kmsg dmesg", missing="none")
    return finish(c)


def hz13():
    c = Case("hz-13", "2026-10-01T09:00:00Z", 45)
    c.build(8, NAMES["dc3"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["old_xid", "static_ecc", "warm"])
    h = c.host("gpu1007.dc3.internal")
    g = h.gpus[3]
    fs = c.t0 + 1560
    g.fs = fs
    g.sbe0 = 2
    g.sbe_rate_f = 0.0
    g.dbe_f = 1
    g.remap_f = [0, 1, True, False]
    xid(c, g, fs, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x3fe8a8860 partition 5, subpartition 1.")
    xid(c, g, fs + 0.2, 94, "Contained: FB DED (0x5, 0x1). physAddr: 0x3fe8a8860 RST: No, D-RST: No")
    xid(c, g, fs + 0.4, 63, "Row Remapper: New row marked for remapping, reset gpu to activate.")
    c.crash_at = fs
    r = [i for i, (hh, gg) in enumerate(c.ranks) if gg is g][0]
    d = utc(fs)
    c.logs["rank%d.log" % r] = ["[rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered" % r,
                                "[rank%d]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect." % r]
    c.logs["torch.log"] = watchdog(c, fs + 600, 88112, r)
    c.corrupt = {"metrics/dcgm.om.gz"}
    c.metrics_gz = True
    c.step_cols = ["compute_s", "loss"]
    c.title = "Job crashed at 09:26 after a collective timeout"
    c.reported = "All ranks hit the NCCL watchdog. Restarting from checkpoint unless someone objects."
    c.truth = ("hbm_degradation", "gpu1007.dc3.internal/gpu3")
    c.notes = dict(hard="DBE + contained error + pending uncorrectable remap on one GPU; watchdog lines on every other rank; decoy: an old XID 63 on another GPU", missing="metrics/dcgm.om.gz unreadable (corrupt gzip)")
    return finish(c)


def hz14():
    c = Case("hz-14", "2026-10-08T14:00:00Z", 60)
    c.build(64, NAMES["node"], nics=8, hosts_per_leaf=16, spines=4, uplinks_per_spine=2)
    c.place_ranks()
    c.sample_dt = 120
    for k in range(14):
        decoys(c, ["static_ecc"])
    decoys(c, ["old_xid", "old_xid", "warm", "aer"])
    h = c.host("node041")
    g = h.gpus[7]
    fs = c.t0 + 900
    g.fs = fs
    g.sbe0 = 11
    g.sbe_rate_f = 9.0
    g.remap_f = [3, 0, True, False]
    slow_gpu(c, "node041", 7, fs, 1.14)
    c.step_cols = ["loss"]
    c.step_every = 10
    c.dcgm_fams = ["clk", "power", "sbe", "reasons", "xid", "remap_c"]
    c.node_hosts = [c.host("node%03d" % i) for i in (3, 17, 40, 41, 42, 58)]
    c.title = "512-GPU run ~14% slower than yesterday, no errors"
    c.reported = "No XIDs in the job logs, no alerts. Several nodes have non-zero ECC counts but they always had."
    c.truth = ("hbm_degradation", "node041/gpu7")
    c.notes = dict(hard="correctable ECC climbing fast on one GPU (remap pending) among 14+ GPUs with old static counts; no XID, no compute_s", missing="node data only for 6 hosts")
    return finish(c)


def hz15():
    c = Case("hz-15", "2026-10-20T01:00:00Z", 45)
    c.build(4, NAMES["a"], nics=8, hosts_per_leaf=4)
    c.place_ranks()
    c.dmesg_style = {"*": "kmsg"}
    decoys(c, ["static_ecc", "warm", "aer"])
    h = c.host("gpu-a018")
    g = h.gpus[2]
    fs = c.t0 + 1400
    g.lost_at = fs
    h.dmesg += [(fs, "NVRM: GPU at PCI:0000:%02x:00: %s" % (g.bus, g.uuid)),
                (fs + 0.00001, "NVRM: GPU Board Serial Number: %s" % g.serial),
                (fs + 0.00002, "NVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." % g.bus),
                (fs + 0.00003, "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus." % g.bus)]
    c.xids.append((g, fs, 79))
    c.crash_at = fs
    r = [i for i, (hh, gg) in enumerate(c.ranks) if gg is g][0]
    c.logs["torch.log"] = watchdog(c, fs + 600, 51220, r, n=12)
    c.step_cols = ["compute_s"]
    c.title = "Job hung then died at 01:33, watchdog timeouts on all ranks"
    c.reported = "Watchdog fired on every rank. Could be the network, we saw an IB alarm last night."
    c.alerts = [alert("IBPortErrors", "warning", {"instance": "gpu-a020:9100", "device": "mlx5_4"}, "port_rcv_errors increased", c.t0 - 8 * 3600)]
    c.truth = ("gpu_fell_off_bus", "gpu-a018/gpu2")
    c.notes = dict(hard="XID 79 in raw /dev/kmsg records (boot-relative); GPU lost in nvml/sysfs/lspci; DCGM series stop; decoy: old IB alert", missing="none")
    return finish(c)


def hz16():
    c = Case("hz-16", "2026-11-03T16:00:00Z", 50)
    c.build(6, NAMES["fra"], nics=4, ll="Ethernet", hosts_per_leaf=6)
    c.place_ranks()
    c.dmesg_style = {"*": "journal"}
    c.driver = "570.158.01"
    decoys(c, ["static_ecc", "old_xid13", "aer"])
    h = c.host("hgx004.fra2.example.net")
    g = h.gpus[5]
    fs = c.t0 + 1700
    g.lost_at = fs
    h.dmesg += [(fs, "NVRM: The NVIDIA GPU 0000:%02x:00.0" % g.bus),
                (fs, "NVRM: (PCI ID: 10de:2330) installed in this system has"),
                (fs, "NVRM: fallen off the bus and is not responding to commands."),
                (fs + 31, "pcieport 0000:%02x:01.0: pciehp: Slot(5): Link Down" % (g.bus - 3))]
    c.crash_at = fs
    r = [i for i, (hh, gg) in enumerate(c.ranks) if gg is g][0]
    c.logs["torch.log"] = watchdog(c, fs + 600, 7731, r, n=8, op="_REDUCE_SCATTER_BASE")
    c.skip = {"nodes/hgx004.fra2.example.net/nvml.json", "topology.json"}
    c.topology = False
    c.step_cols = ["loss"]
    c.title = "Reduce-scatter timeout, job exited at 16:38"
    c.reported = "Job died; nvidia-smi on one node prints errors. Please find which part to replace."
    c.truth = ("gpu_fell_off_bus", "hgx004.fra2.example.net/gpu5")
    c.notes = dict(hard="newer-driver multi-line 'fallen off the bus' text without an XID number; journalctl prefix; lspci rev ff; DCGM series stop", missing="nvml.json of the faulty host, topology.json")
    return finish(c)


def hz17():
    c = Case("hz-17", "2026-11-12T05:00:00Z", 60)
    c.build(4, NAMES["dgx"], model="h100", nics=8, hosts_per_leaf=4)
    c.place_ranks()
    c.dcgm_new = True
    c.extra_cmds = {"nvlink"}
    decoys(c, ["warm", "static_ecc", "nvl_static"], avoid=("dgx-b200-02",))
    g = c.host("dgx-b200-02").gpus[4]
    fs = c.t0 + 1300
    g.fs = fs
    g.nvl_link = 7
    g.nvl0 = [0, 0, 0]
    g.nvl_rate_f = [35.0, 6.0, 0.02]
    xid(c, g, fs + 40, 74, "NVLink: fatal error detected on link 7(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)")
    c.dcgm_fams = c.dcgm_fams + ["nvl_crc", "nvl_replay"]
    c.comm.append((fs, 1.7))
    c.step_cols = ["compute_s", "loss"]
    c.title = "Step time 1.55 s -> 2.0 s at 05:22 on the 4-node H100 run"
    c.reported = "No job errors. All ranks look equally slow; compute time per rank unchanged."
    c.truth = ("nvlink_fault", "dgx-b200-02/gpu4")
    c.notes = dict(hard="no straggler in compute_s (collective itself slower); XID 74 and NVLink CRC/replay growth on one GPU link; host names say b200 but GPUs are H100 (names mean nothing); decoy: static NVLink counts elsewhere", missing="none")
    return finish(c)


def hz18():
    c = Case("hz-18", "2026-11-20T12:00:00Z", 60)
    c.build(256, NAMES["tok"], nics=8, hosts_per_leaf=32, spines=8, uplinks_per_spine=1,
            leaf_fmt="tk2-l%02d", spine_fmt="tk2-s%02d")
    c.place_ranks()
    c.sample_dt = 180
    c.switch_dt = 300
    c.dcgm_new = True
    for k in range(40):
        decoys(c, ["nvl_static"])
    for k in range(6):
        decoys(c, ["static_ecc"])
    h = c.host("tk1-gpu-0337")
    g = h.gpus[3]
    fs = c.t0 + 1000
    g.fs = fs
    g.nvl_link = 11
    g.nvl0 = [21, 2, 0]
    g.nvl_rate_f = [60.0, 9.0, 0.0]
    c.comm.append((fs, 1.3))
    c.dcgm_fams = ["nvl_crc", "nvl_replay", "power", "clk"]
    c.metrics_gz = True
    c.steps_gz = True
    c.step_every = 25
    c.step_cols = ["loss"]
    c.base_compute = 2.6
    c.base_comm = 0.9
    peers = [c.host("tk1-gpu-%04d" % i) for i in (200, 251, 336, 338, 401, 455)]
    c.node_hosts = [h] + peers
    c.node_metric_hosts = [h] + peers
    c.extra_cmds = {"nvlink"}
    c.no_snmp = set(c.switches)
    c.title = "2048-GPU run: +30% step time since 12:17, no errors anywhere"
    c.reported = "No XIDs, no alerts, NCCL quiet. Many GPUs show non-zero link error counts on the dashboard, but those have been there for months."
    c.truth = ("nvlink_fault", "tk1-gpu-0337/gpu3")
    c.notes = dict(hard="256 hosts; one GPU link's CRC/replay counters grow in the window among 40 GPUs with old static counts; no XID, no per-rank timing column", missing="node data for 7 of 256 hosts; no switch metrics")
    return finish(c)


def hz19():
    c = Case("hz-19", "2026-12-01T07:00:00Z", 45)
    c.steps_gz = False
    c.build(4, NAMES["rn"], nics=8, hosts_per_leaf=4)
    c.place_ranks()
    decoys(c, ["old_xid13", "warm", "static_ecc", "aer"])
    c.sdc_group = 8
    c.sdc = (21, 4210)
    c.first_step = 4000
    c.step_cols = ["compute_s", "loss", "param_checksum"]
    c.step_every = 10
    c.title = "Replica checksum mismatch reported by the consistency checker"
    c.reported = "Our checker compares replica checksums every 10 steps and flagged a mismatch from step 4210. Loss looks normal. No errors in any log."
    c.truth = ("silent_data_corruption", "h100-r03-n03/gpu5")
    c.notes = dict(hard="one rank's checksum disagrees with its 3 data-parallel peers (TP=8); no error anywhere; decoy: an old XID 13 on another GPU", missing="none")
    return finish(c)


def hz20():
    c = Case("hz-20", "2026-12-02T19:00:00Z", 45)
    c.build(8, NAMES["ip"], nics=4, ll="Ethernet", hosts_per_leaf=8)
    c.place_ranks(order=[3, 0, 6, 1, 7, 2, 4, 5])
    c.instance_ip = True
    decoys(c, ["static_ecc", "warm", "old_xid"])
    c.sdc_group = 16
    c.sdc = (37, 12050)
    c.first_step = 11800
    c.step_cols = ["loss", "grad_norm", "param_checksum"]
    c.step_every = 5
    c.steps_gz = True
    c.shuffle_rows = True
    c.title = "Eval loss diverged from the reference run after step ~12k"
    c.reported = "Training loss fine, but the eval loss of the saved checkpoint is off. We reloaded and checked the shards; one data-parallel replica differs."
    hh, gg = c.ranks[37]
    c.truth = ("silent_data_corruption", "%s/gpu%d" % (hh.name, gg.index))
    c.notes = dict(hard="explicit rank placement in a shuffled host order; rows in random order; gzip steps; DP groups of 4 via rank % 16", missing="none")
    return finish(c)


def hz21():
    c = Case("hz-21", "2026-12-03T03:00:00Z", 60)
    c.build(8, NAMES["a"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "aer", "old_xid13"])
    h = c.host("gpu-a023")
    fs = c.t0 + 1250
    c.contention["gpu-a023"] = (fs, 38.0, 263.4, 61.22)
    h.top_extra = [(88213, "root", "20", "0", "9.1g", "4.0g", "12m", "R", 2980.3, "0.2", "9123:44.10", "clamscan"),
                   (88240, "root", "20", "0", "1.2g", "220m", "8m", "S", 310.1, "0.0", "812:10.88", "freshclam")]
    slow_host(c, "gpu-a023", fs, 1.31)
    c.extra_cmds = {"top", "pressure"}
    c.skip = {"metrics/node.om"}
    c.step_cols = ["compute_s", "loss"]
    c.title = "Tokens/s dropped 25% at 03:21"
    c.reported = "Security rolled out a new endpoint agent this week. GPU metrics look normal on all nodes."
    c.truth = ("host_contention", "gpu-a023")
    c.notes = dict(hard="all 8 ranks of one host arrive late; top/PSI show a CPU hog; GPUs clean", missing="metrics/node.om")
    return finish(c)


def hz22():
    c = Case("hz-22", "2026-12-03T11:00:00Z", 60)
    c.build(6, NAMES["dc3"], nics=4, ll="Ethernet", hosts_per_leaf=6)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm"])
    h = c.host("gpu1003.dc3.internal")
    fs = c.t0 + 1500
    c.contention["gpu1003.dc3.internal"] = (fs, 4.0, 96.0, 8.4)
    c.mem_pressure["gpu1003.dc3.internal"] = (fs, 47.9, 38.3)
    h.top_extra = [(412, "root", "20", "0", "0", "0", "0", "R", 98.7, "0.0", "611:01.02", "kswapd0"),
                   (413, "root", "20", "0", "0", "0", "0", "R", 97.9, "0.0", "603:44.91", "kswapd1"),
                   (71002, "logship", "20", "0", "1688.0g", "1.81t", "9m", "S", 41.0, "91.9", "1202:10.30", "java")]
    h.dmesg.append((fs + 600, "python3 invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0"))
    slow_host(c, "gpu1003.dc3.internal", fs, 1.27)
    c.extra_cmds = {"top", "pressure"}
    c.step_cols = ["loss"]
    c.title = "Step time +27% since 11:25, dataloader workers restarting"
    c.reported = "One dataloader worker got OOM-killed. Could be the data pipeline again?"
    c.truth = ("host_contention", "gpu1003.dc3.internal")
    c.notes = dict(hard="memory pressure (kswapd, PSI full) from a log shipper on one host; OOM line makes a data-pipeline story tempting; no compute_s", missing="none")
    return finish(c)


def hz23():
    c = Case("hz-23", "2026-12-04T00:00:00Z", 60)
    c.build(8, NAMES["rn"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "aer", "old_xid"])
    fs = c.t0 + 1200
    c.stall = (fs, 0.03, 1.4)
    c.step_cols = ["compute_s", "loss"]
    c.alerts = [alert("GPUPowerCapped", "info", {"Hostname": "h100-r04-n01", "gpu": "6"}, "GPU clocks limited by SW power cap", c.t0 + 200)]
    c.title = "Throughput down 40% since 00:20; GPU utilisation dashboards dropped"
    c.reported = "We switched the training mix to include the new web shard at 00:18 (streamed from object storage). GPU util is down everywhere."

    def extra(r):
        if r["start_unix"] >= fs:
            return ["[%s] WARNING dataloader: batch wait %.2fs (prefetch queue empty)" % (utc(r["start_unix"]).strftime("%Y-%m-%d %H:%M:%S"), r["duration_s"] * 0.45)]
        return []
    c.truth = ("input_pipeline_stall", "job")
    c.notes = dict(hard="a different rank arrives last each step; fleet-wide GPU util drop; decoy power-cap alert", missing="none")
    finish(c)
    c.logs["train.log"] = train_log(c, every=100, extra=extra)
    return c


def hz24():
    c = Case("hz-24", "2026-12-04T06:00:00Z", 60)
    c.build(4, NAMES["node"], model="a100", nics=4, ll="Ethernet", hosts_per_leaf=4)
    c.driver, c.cuda = "535.161.08", "12.2"
    c.driver_major = 535
    c.place_ranks()
    decoys(c, ["warm", "static_ecc"])
    fs = c.t0 + 900
    c.stall = (fs, 0.004, 6.0)
    c.io_pressure = {h.name: (fs, 3.1) for h in c.hosts}
    c.extra_cmds = {"pressure"}
    c.step_cols = ["loss"]
    c.title = "Periodic multi-second hiccups since 06:15"
    c.reported = "Every few minutes the whole job stalls for several seconds. Storage team changed the NFS mount options this morning."
    c.truth = ("input_pipeline_stall", "job")
    c.notes = dict(hard="rare long stalls on random ranks (no fixed straggler), modest IO pressure on every host, no compute_s", missing="none")
    return finish(c)


def hz25():
    c = Case("hz-25", "2026-12-04T09:00:00Z", 50)
    c.build(16, NAMES["a"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "old_xid13", "aer"])
    c.step_start = c.t0 + 300
    c.job_start = c.step_start
    c.first_step = 1
    c.comm.append((c.t0 - 7200, 3.1))
    c.nic_share = lambda h, n: 1.0 if n.idx == 0 else 0.0005
    c.logs["nccl.log"] = nccl_init(c, ["mlx5_0"], env=["NCCL_IB_HCA set by environment to mlx5_0",
                                                       "NCCL_SOCKET_IFNAME set by environment to eth0"])
    c.step_cols = ["compute_s", "loss"]
    c.title = "New 128-GPU job runs at about two-thirds of the throughput of the same config last month"
    c.reported = "Fresh launch at 09:05 with the new container image. mlx5_0 on every node is very busy during all-reduce, so is the fabric saturated?"
    c.truth = ("nccl_misconfiguration", "job")
    c.notes = dict(hard="from step 1 every node moves all traffic on mlx5_0, the other seven NICs idle; env restricts NCCL_IB_HCA", missing="no baseline before the job")
    return finish(c)


def hz26():
    c = Case("hz-26", "2026-12-04T12:00:00Z", 50)
    c.build(8, NAMES["fra"], nics=8, ll="Ethernet", hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["static_ecc", "warm"])
    c.step_start = c.t0 + 240
    c.job_start = c.step_start
    c.first_step = 1
    c.comm.append((c.t0 - 7200, 1.6))
    c.nic_share = lambda h, n: 0.5 if n.idx in (2, 3) else 0.0002
    c.logs["nccl.log"] = nccl_init(c, ["mlx5_2", "mlx5_3"], transport="RoCE",
                                   env=["NCCL_IB_HCA set by environment to =mlx5_2,mlx5_3",
                                        "NCCL_IB_GID_INDEX set by environment to 3",
                                        "NCCL_IB_TC set by environment to 106"])
    c.before = False
    c.skip = {"metrics/switch.om"}
    c.step_cols = ["loss"]
    c.title = "RoCE cluster: job launched at 12:04 is 25% slower than the same model on the IB cluster"
    c.reported = "Two NICs per node show high tx; the rest look idle. Is something wrong with rails 2 and 3?"
    c.truth = ("nccl_misconfiguration", "job")
    c.notes = dict(hard="two rails of eight carry all traffic from step 1 on RoCE; reported text blames the busy rails", missing="metrics/switch.om; before/ snapshots")
    return finish(c)


def hz27():
    c = Case("hz-27", "2026-12-04T15:00:00Z", 60)
    c.steps_gz = False
    c.build(6, NAMES["a"], nics=8, hosts_per_leaf=8, spares=1)
    c.place_ranks()
    decoys(c, ["warm", "aer", "static_ecc"])
    c.dmesg_style = {"*": "T"}
    c.step_cols = ["compute_s", "loss"]
    c.title = "Spare node shows PCIe Gen1 and idle clocks; step time jitter"
    c.reported = "gpu-a023 (spare) reports PCIe gen 1 on all GPUs in nvidia-smi. Also one GPU at ~80C and a few AER correctable errors on another node. Should we drain anything?"
    c.truth = ("healthy", None)
    c.notes = dict(hard="spare host idle GPUs in power-saving link states; warm GPU without throttle reasons; few correctable AER at full width", missing="none")
    return finish(c)


def hz28():
    c = Case("hz-28", "2026-12-04T17:00:00Z", 60)
    c.build(12, NAMES["dc3"], nics=8, hosts_per_leaf=6)
    c.place_ranks()
    c.dcgm_new = True
    decoys(c, ["warm", "static_ecc", "nvl_static"])
    for h in c.hosts:
        for g in h.gpus:
            g.clk = g.m["maxclk"] - c.rng.choice([45, 60, 75, 90])
            g.reasons = SW_PWR
            g.pow_rate = 4.0e8
    c.alerts = [alert("GPUPowerCapped", "warning", {"hostname": h.name, "gpu": str(i)}, "GPU clocks limited by SW power cap for 30m", c.t0 + 60 * i)
                for i, h in enumerate(c.hosts[:5])]
    c.step_cols = ["compute_s", "loss"]
    c.extra_cmds = {"nvlink"}
    c.title = "Power-cap alerts firing across the fleet"
    c.reported = "Five power alerts at once. MFU is 47.8% (usual 47-49%). Is something throttling the job?"
    c.truth = ("healthy", None)
    c.notes = dict(hard="every busy GPU at the SW power cap with 45-90 MHz below max; alerts fire; step time flat", missing="none")
    return finish(c)


def hz29():
    c = Case("hz-29", "2026-12-04T20:00:00Z", 90)
    c.build(8, NAMES["rn"], nics=8, hosts_per_leaf=8)
    c.place_ranks()
    decoys(c, ["old_xid", "old_xid13", "static_ecc", "nic_old_down", "warm"])
    c.step_cols = ["compute_s", "loss"]
    c.dmesg_style = {"*": "T"}
    c.io_pressure = {h.name: (c.t0 + 1800, 0.8) for h in c.hosts}
    c.extra_cmds = {"pressure"}
    c.ckpt = [c.t0 + 1800, c.t0 + 3600]
    c.title = "Step-time spikes every 30 minutes"
    c.reported = "Every 30 min one step takes ~40 s. Dashboards show an XID on one node from last week and ECC counts on others."
    c.truth = ("healthy", None)
    finish(c)
    # checkpoint steps: one long step on every rank at the same time (synchronous save)
    for t in c.ckpt:
        st = min((r for r in c.step_rows if r["start_unix"] >= t), key=lambda r: r["start_unix"])["step"]
        shift = 38.0
        for r in c.step_rows:
            if r["step"] == st:
                r["duration_s"] += shift
                if "compute_s" in r:
                    r["compute_s"] += shift
            if r["step"] > st:
                r["start_unix"] = round(r["start_unix"] + shift, 3)
    c.step_rows = [r for r in c.step_rows if r["start_unix"] < c.t1]
    c.logs["train.log"] = ["[%s] saving checkpoint to s3://ckpt/run-17/step_%d (sharded, 512 files)" % (utc(t).strftime("%Y-%m-%d %H:%M:%S"), 1000 + i) for i, t in enumerate(c.ckpt)]
    c.notes = dict(hard="periodic synchronous checkpoint stalls (logged) with IO pressure; old XIDs outside the window, static ECC, old link flap", missing="none")
    return c


def hz30():
    c = Case("hz-30", "2026-12-04T22:00:00Z", 60)
    c.build(8, NAMES["ip"], nics=8, ll="Ethernet", hosts_per_leaf=4)
    c.place_ranks()
    c.instance_ip = True
    decoys(c, ["static_ecc", "nic_old_down", "warm"])
    for h in c.hosts:
        for n in h.nics:
            n.rxp = 6.0 + c.rng.random()
    c.switch_cli = {"leaf-01", "leaf-02", "spine-01"}
    c.nic_pci = True
    c.step_cols = ["loss"]
    c.title = "PFC pause counters increasing on all nodes"
    c.reported = "New dashboard shows rx_prio3_pause going up on every NIC. Job seems OK but we want to be sure before the big run."
    c.truth = ("healthy", None)
    c.notes = dict(hard="uniform low-rate received pauses and CNP/ECN marks (normal congestion control), pfcwd operational, no NIC transmits pauses, step time flat", missing="none")
    return finish(c)


def hz31():
    c = Case("hz-31", "2026-12-05T01:00:00Z", 60)
    c.build(64, NAMES["tok"], nics=8, hosts_per_leaf=16, spines=4, uplinks_per_spine=2)
    c.place_ranks()
    c.sample_dt = 120
    decoys(c, ["static_ecc"] * 8 + ["old_xid", "nic_old_down", "warm", "aer", "nvl_static"])
    c.dcgm_gap = (c.t0 + 1800, c.t0 + 2280)
    c.dcgm_fams = ["clk", "temp", "power", "reasons", "xid"]
    c.restart = (c.t0 + 2100, c.t0 + 2520, 30900)
    c.first_step = 30000
    c.step_start = c.t0 - 900
    c.step_every = 10
    c.step_cols = ["loss"]
    c.node_hosts = [c.host("tk1-gpu-%04d" % i) for i in (200, 215, 230, 262)]
    c.title = "Dashboards gap at 01:30 and the step counter went backwards"
    c.reported = "Monitoring agents were upgraded at 01:30 (dcgm-exporter restart). Around the same time the user restarted the job from the last checkpoint to pick up a config change."
    c.truth = ("healthy", None)
    c.notes = dict(hard="metric gap during exporter restart, job restart with repeated step numbers, 64 hosts with old static counts", missing="node data only for 4 hosts")
    return finish(c)


def hz32():
    c = Case("hz-32", "2026-12-05T03:00:00Z", 60)
    c.build(16, NAMES["node"], ll="Ethernet", nics=4, hosts_per_leaf=8, spines=2, uplinks_per_spine=2,
            leaf_fmt="leaf%d", spine_fmt="spine%d")
    c.place_ranks()
    decoys(c, ["static_ecc", "warm", "aer"])
    fs = c.t0 + 1400
    sp = c.switches["spine2"]
    q = [p for p in sp.ports.values() if p.peer == "leaf1"][1]
    # the spine port transmits pauses toward leaf1 while receiving none: a lossless-buffer misprogram on it
    job = {h.name for h, g in c.ranks}
    for h in c.hosts:
        for n in h.nics:
            n.fs = fs
            n.rxp_f = n.rxp + (2500.0 if n.switch == "leaf1" else 0.0)
    q.fs = fs
    q.pfc_tx_f = 9000.0
    lp = q_leaf = c.switches["leaf1"].ports[q.peer_port]
    lp.fs = fs
    lp.pfc_rx_f = 9000.0
    for p in c.switches["leaf1"].uplinks:
        p.fs = fs
    c.comm.append((fs, 1.75))
    c.switch_cli = {"leaf1", "leaf2", "spine1", "spine2"}
    c.node_hosts = c.hosts[:3] + c.hosts[8:10]
    c.title = "Half the job's nodes see pause storms since 03:23"
    c.reported = "Hosts on leaf1 receive lots of pause frames; hosts on leaf2 do not. No host NIC sends pauses. Spine2 was upgraded to the new SONiC image yesterday."
    c.truth = ("pfc_pause_storm", "spine2/%s" % q.name)
    c.notes = dict(hard="a spine port transmits pauses toward leaf1 without receiving any; leaf1 relays them to its hosts; no NIC originates", missing="node data for 5 of 16 hosts")
    return finish(c)


ALL = [hz01, hz02, hz03, hz04, hz05, hz06, hz07, hz08, hz09, hz10, hz11, hz12, hz13, hz14, hz15, hz16,
       hz17, hz18, hz19, hz20, hz21, hz22, hz23, hz24, hz25, hz26, hz27, hz28, hz29, hz30, hz31, hz32]
