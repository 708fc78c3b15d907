"""Blind cases: device and fabric faults."""

from __future__ import annotations

from common import (HARMLESS_WARNS, decoy_old_link_flap, decoy_old_xid, decoy_power_cap, decoy_rx_pause_victims,
                    decoy_static_sbe, decoy_warm_gpu, hhmm, iter_lines, mk_job, names, nccl_init, window)
from fleet import HW_BRAKE, HW_SLOW, HW_THERM, SW_POWER, SW_THERM, Fleet, dt
from render import sonic_counters, sonic_pfc, sonic_pfcwd, snmp_om


def _fleet(case, seed, style, n, **kw):
    import random
    rng = random.Random(seed * 101)
    return Fleet(case, seed, hosts=names(style, n, rng), **kw), rng


# ------------------------------------------------------------------------------------------
def b01(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 16, gen="H100", window=window("2026-03-10T01:30:00Z", 90),
                    dmesg_style="journal", spares=1, sample=60)
    f.rail_fabric()
    j = mk_job(f, "llm-34b-pretrain", 0.92, 0.31, every=25)
    h = f.hosts[6]
    g = h.gpus[5]
    t_on = f.t0 + 38 * 60 + 17
    g.phase(t_on - 40, aer=4.5, replay=2.2)
    g.phase(t_on, pgen=3, aer=0.6, replay=0.3)
    root = "0000:97:01.0" if g.bus == "ab" else f"0000:{int(g.bus, 16) - 1:02x}:01.0"
    for k in range(14):
        te = t_on - 40 + k * 2.7
        h.kern(te, f"pcieport {root}: AER: Multiple Correctable error message received from {g.bdf}")
        h.kern(te + 0.0002, f"nvidia {g.bdf}: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)")
        h.kern(te + 0.0003, f"nvidia {g.bdf}:   device [10de:2330] error status/mask=00000001/0000e000")
        h.kern(te + 0.0004, f"nvidia {g.bdf}:    [ 0] RxErr                  (First)")
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 5), 1.21))
    decoy_power_cap(f, 5, rng, exclude={(h.name, 5)})
    decoy_old_xid(f, f.hosts[2], 3, 13, 9.2, "pid=1843201, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Illegal Instruction Parameter")
    nccl_init(f, "nccl.log", f.tm + 30, warn=HARMLESS_WARNS[1])
    iter_lines(f, "train.log", "megatron", every=50, gbs_fn=lambda t: 1024, seq_fn=lambda t: 4096)
    f.incident = {"title": f"Step time up ~15% since about {hhmm(t_on)}, no alerts",
                  "reported": "Throughput panel for llm-34b-pretrain dropped mid-run. Nothing was changed on our side."}
    f.truth = {"root_cause": "pcie_downtrain", "component": f"{h.name}/gpu5"}
    return f


def b02(case, seed):
    f, rng = _fleet(case, seed, "fqdn", 8, gen="A100", window=window("2026-05-04T13:00:00Z", 75),
                    dmesg_style="T", driver="525.105.17", baseline=600, sample=60)
    start = f.t0 + 4 * 60
    j = mk_job(f, "vit-g-finetune", 1.21, 0.24, start=start, every=10, cols=())
    h = f.hosts[3]
    g = h.gpus[2]
    g.base["width"] = 8
    up = f.t0 - h.boot
    h.kern(h.boot + 9.87, f"pci {g.bdf}: 126.024 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x8 link at 0000:{int(g.bus, 16) - 2:02x}:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)")
    j.slow.append((start, f.t1 + 1, f.ranks_of(h, 2), 1.19))
    decoy_warm_gpu(f.hosts[5], 6, 4.0)
    decoy_static_sbe(f.hosts[1], 4, 9)
    iter_lines(f, "finetune.log", "timm", every=20, gbs_fn=lambda t: 512, seq_fn=lambda t: 256)
    f.incident = {"title": "vit-g-finetune slow from the first step: 1.68 s/it, same config did 1.45 s/it last week",
                  "reported": "Relaunched on the new allocation (8 nodes). It has been slow since launch; the run last week on other nodes was fine."}
    f.truth = {"root_cause": "pcie_downtrain", "component": f"{h.name}/gpu2"}
    return f


def b03(case, seed):
    f, rng = _fleet(case, seed, "ip", 12, gen="H100", window=window("2026-06-21T22:10:00Z", 80), roce=True,
                    netdev_style="ens{bus}f0np0", dmesg_style="plain", sample=60)
    f.rail_fabric(leaf_fmt="tor-{i:02d}", spine_fmt="agg-{i:02d}")
    j = mk_job(f, "moe-8x22b", 1.35, 0.55, every=20)
    h = f.hosts[8]
    n = h.nics[3]
    t_on = f.t0 + 27 * 60
    n.phase(t_on, tx_pause=2.1e4, tx_pause_dur=7.6e5, storm_warn=0.02, rx_disc=350.0, oob=40.0)
    j.commf.append((t_on, f.t1 + 1, 1.85))
    victims = [hh.nics[3] for hh in f.hosts if hh is not h][:7] + [f.hosts[2].nics[1], f.hosts[9].nics[6]]
    for v in victims:
        v.phase(t_on, rx_pause=rng.uniform(3e3, 9e3), rx_pause_dur=rng.uniform(1e5, 3e5), cnp=rng.uniform(40, 90))
    decoy_rx_pause_victims(f, [f.hosts[0].nics[5]], rng)
    decoy_power_cap(f, 4, rng)
    nccl_init(f, "nccl_init.log", f.tm + 20)
    iter_lines(f, "trainer.log", "titan", every=40, gbs_fn=lambda t: 1536, seq_fn=lambda t: 4096)
    f.incident = {"title": "MoE run: all-to-all time up ~85%, tokens/s down ~20%",
                  "reported": f"Started around {hhmm(t_on)}. Several hosts show pause frames in the NIC dashboard.",
                  "alerts": [{"status": "firing", "labels": {"alertname": "RoCEPauseFramesHigh", "instance": f"{victims[0].host.name}:9100", "device": victims[0].netdev, "severity": "warning"},
                              "annotations": {"summary": "rx pause frames rising"}, "startsAt": dt(t_on + 240).strftime("%Y-%m-%dT%H:%M:%SZ"),
                              "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "", "fingerprint": "6f1c2d9e0b7a4c11"}]}
    f.truth = {"root_cause": "pfc_pause_storm", "component": f"{h.name}/{n.ibdev}"}
    return f


def b04(case, seed):
    f, rng = _fleet(case, seed, "hgx", 8, gen="H200", window=window("2026-07-02T05:00:00Z", 70), roce=True,
                    netdev_style="rdma{i}", dmesg_style="caller", sample=60)
    leaves, spines = f.rail_fabric(leaf_fmt="sw-leaf-{i}", spine_fmt="sw-spine-{i}", nspine=2)
    for hh in f.hosts:
        hh.ethtool = False
    j = mk_job(f, "dit-xl-video", 2.1, 0.7, every=10)
    h = f.hosts[5]
    n = h.nics[6]
    t_on = f.t0 + 22 * 60
    j.commf.append((t_on, f.t1 + 1, 1.7))
    n.phase(t_on, cnp=30.0)
    for sw in leaves:
        rx, tx = {}, {}
        for hh in f.hosts:
            nn = next(x for x in hh.nics if x.switch is sw)
            base_rx = rng.randint(0, 40)
            if nn is n:
                rx[nn.port] = [0, 0, 0, 41_377_120 + rng.randint(0, 9999), 0, 0, 0, 0]
            else:
                rx[nn.port] = [0, 0, 0, base_rx, 0, 0, 0, 0]
            tx[nn.port] = [0, 0, 0, rng.randint(0, 60) + (2_900_000 + rng.randint(0, 400000) if sw is n.switch and nn is not n else 0), 0, 0, 0, 0]
        for l in sw.links:
            rx[l["port"]] = [0, 0, 0, rng.randint(0, 50), 0, 0, 0, 0]
            tx[l["port"]] = [0, 0, 0, rng.randint(0, 80) + (1_100_000 if sw is n.switch else 0), 0, 0, 0, 0]
        wd = []
        for p in rx:
            if sw is n.switch and p == n.port:
                wd.append((f"{p}:3", "stormed", "3/2", "0/38911272", "0/0", "0/8211456", "0/0"))
            elif p.startswith("Ethernet") and int(p[8:]) < 256:
                wd.append((f"{p}:3", "operational", "0/0", "0/0", "0/0", "0/0", "0/0"))
        sw.ports["_cmd"] = {"show-pfc-counters.txt": sonic_pfc(rx, tx), "show-pfcwd-stats.txt": sonic_pfcwd(wd)}
    decoy_old_link_flap(f, f.hosts[2].nics[1])
    decoy_power_cap(f, 3, rng)
    nccl_init(f, "nccl.log", f.tm + 15, version="2.23.4+cuda12.6")
    iter_lines(f, "train.log", "deepspeed", every=20, gbs_fn=lambda t: 256, seq_fn=lambda t: 8192)
    f.incident = {"title": "dit-xl-video samples/s down ~15%", "reported": "No NIC alerts. Network team says links are up."}
    f.truth = {"root_cause": "pfc_pause_storm", "component": f"{h.name}/{n.ibdev}"}
    return f


def _ecmp_fleet(case, seed, style, n, start, minutes):
    f, rng = _fleet(case, seed, style, n, gen="H100", window=window(start, minutes), roce=True,
                    netdev_style="eth{i}", dmesg_style="journal", sample=120, nnic=4, racks=4)
    leaves, spines = f.rail_fabric(leaf_fmt="leaf-{rack}", per_rack=True, nspine=4, uplinks_per_spine=2,
                                   spine_fmt="spine{i}")
    return f, rng, leaves, spines


def b05(case, seed):
    f, rng, leaves, spines = _ecmp_fleet(case, seed, "aws", 16, "2026-08-14T09:20:00Z", 100)
    j = mk_job(f, "llm-13b-sft", 0.74, 0.42, every=50)
    bad = leaves[2]
    t_on = f.t0 + 31 * 60
    j.commf.append((t_on, f.t1 + 1, 1.55))
    for hh in f.hosts:
        for n in hh.nics:
            n.phase(t_on, cnp=rng.uniform(20, 60), ecn=rng.uniform(25, 70))
    series = {}
    per_link = 4.0e9
    for sw in leaves + spines:
        for l in sw.links:
            if sw.tier != "leaf":
                continue
            k = sw.links.index(l)
            hot = k in (1, 5)

            def mk(hot=hot, sw=sw):
                def out(t):
                    if sw is bad and t >= t_on:
                        return per_link * (3.4 if hot else 0.37)
                    return per_link * (1 + ((sh_(sw.name, t) % 9) - 4) / 100)
                def disc(t):
                    return 900.0 if (sw is bad and hot and t >= t_on) else 0.0
                return {"in": lambda t: per_link * 0.98, "out": out, "disc": disc}
            series[(sw.name, l["port"])] = mk()
    f.extra_metrics = {"switch.om": snmp_om(f, series)}
    decoy_power_cap(f, 3, rng)
    decoy_warm_gpu(f.hosts[9], 1, 3.0)
    nccl_init(f, "nccl.log", f.tm + 30, version="2.21.5+cuda12.4")
    iter_lines(f, "train.log", "hf", every=100, gbs_fn=lambda t: 512, seq_fn=lambda t: 4096)
    f.incident = {"title": f"llm-13b-sft step time up ~20% since ~{hhmm(t_on)}",
                  "reported": "ECN/CNP counters went up on all nodes at the same time. Leaf firmware was upgraded this morning on some racks."}
    f.truth = {"root_cause": "ecmp_hash_polarization", "component": bad.name}
    return f


def sh_(*a):
    from fleet import sh
    return sh(*a)


def b06(case, seed):
    f, rng, leaves, spines = _ecmp_fleet(case, seed, "cw", 12, "2026-09-03T16:40:00Z", 80)
    j = mk_job(f, "rlhf-policy-70b", 1.9, 0.8, every=10)
    bad = leaves[1]
    t_on = f.t0 + 18 * 60
    j.commf.append((t_on, f.t1 + 1, 2.0))
    for sw in leaves:
        rows = []
        hostports = [n for hh in f.hosts for n in hh.nics if n.switch is sw]
        for n in hostports:
            rows.append((n.port, "U", 9_300_000_000 + rng.randint(0, 10**8), f"{rng.uniform(10.5, 12.5):.2f} GB/s", rng.uniform(21, 26), 0, 0,
                         9_310_000_000 + rng.randint(0, 10**8), f"{rng.uniform(10.5, 12.5):.2f} GB/s", rng.uniform(21, 26), 0, 0))
        for k, l in enumerate(sw.links):
            if sw is bad:
                hot = k in (0, 4)
                u = rng.uniform(96, 99.4) if hot else rng.uniform(4, 9)
                drp = rng.randint(2_000_000, 6_000_000) if hot else 0
            else:
                u = rng.uniform(33, 41)
                drp = 0
            rows.append((l["port"], "U", 41_000_000_000 + rng.randint(0, 10**9), f"{u / 2:.2f} GB/s" if False else f"{rng.uniform(15, 19):.2f} GB/s",
                         rng.uniform(33, 40), 0, 0, int(41_000_000_000 * u / 37), f"{u * 0.5:.2f} GB/s", u, 0, drp))
        sw.ports["_cmd"] = {"show-interfaces-counters.txt": sonic_counters(rows)}
    decoy_power_cap(f, 4, rng)
    decoy_old_xid(f, f.hosts[7], 0, 31, 3.4, "pid=882010, name=python, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")
    nccl_init(f, "nccl.log", f.tm + 10, version="2.18.6+cuda12.2", warn=HARMLESS_WARNS[2])
    iter_lines(f, "policy_train.log", "ray", every=20, gbs_fn=lambda t: 256, seq_fn=lambda t: 2048)
    f.incident = {"title": "RLHF policy update phase slower since this afternoon",
                  "reported": f"Update phase takes ~30% longer since about {hhmm(t_on)}. Rollout phase looks normal."}
    f.truth = {"root_cause": "ecmp_hash_polarization", "component": bad.name}
    return f


def b07(case, seed):
    f, rng = _fleet(case, seed, "nid", 24, gen="H200", window=window("2026-02-11T03:15:00Z", 90),
                    dmesg_style="kmsg", sample=180)
    f.rail_fabric(leaf_fmt="ib-leaf-{i:02d}", spine_fmt="ib-spine-{i:02d}", nspine=4)
    f.gz |= {"dcgm", "node", "steps"}
    j = mk_job(f, "llm-405b-pretrain", 3.4, 1.1, every=10)
    j.missing = {(st, rng.randrange(f.nranks)) for st in range(0, 3000, 10) if rng.random() < 0.1}
    h = f.hosts[17]
    n = h.nics[4]
    t_on = f.t0 + 41 * 60
    n.phase(t_on, symbol=11.0, rcv_err=2.4, recovery=0.004, xmit_wait=6e5)
    n.start["downed"] = 0
    h.kern(t_on + 612, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link DOWN")
    h.kern(t_on + 615.4, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link INIT")
    h.kern(t_on + 616.0, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link ACTIVE")
    n.phase(t_on + 612, symbol=13.0, rcv_err=2.8, recovery=0.004, xmit_wait=6e5, downed=1 / 200000)
    j.commf.append((t_on, f.t1 + 1, 1.6))
    decoy_old_link_flap(f, f.hosts[4].nics[2])
    for hh in f.hosts[::5]:
        hh.nics[1].start["rcv_err"] = 14
    decoy_power_cap(f, 6, rng)
    nccl_init(f, "nccl.log", f.tm + 40)
    iter_lines(f, "train.log", "megatron", every=20, gbs_fn=lambda t: 2048, seq_fn=lambda t: 8192)
    f.incident = {"title": "405b pretrain: TFLOP/s/GPU down ~13%", "reported": "Dropped sometime after 04:00 UTC. No job restarts."}
    f.truth = {"root_cause": "link_degradation", "component": f"{h.name}/{n.ibdev}"}
    return f


def b08(case, seed):
    f, rng = _fleet(case, seed, "fqdn", 8, gen="H100", window=window("2026-10-19T11:00:00Z", 60), roce=True,
                    netdev_style="enp{bus}s0f0np0", dmesg_style="journal", sample=60)
    f.rail_fabric(leaf_fmt="rail{i}-tor")
    for hh in f.hosts:
        hh.ethtool = False
        hh.fec = True
    j = mk_job(f, "asr-conformer", 0.61, 0.22, every=20)
    h = f.hosts[1]
    n = h.nics[2]
    t_on = f.t0 + 14 * 60
    n.phase(t_on, fec_corr=9.0e5, fec_unc=3.2, fec_lane=2, oos=55.0, seqerr=21.0, acktmo=0.8)
    j.commf.append((t_on, f.t1 + 1, 2.5))
    decoy_power_cap(f, 3, rng)
    decoy_static_sbe(f.hosts[4], 7, 3)
    nccl_init(f, "nccl.log", f.tm + 12, warn=HARMLESS_WARNS[0])
    iter_lines(f, "train.log", "lightning", every=20, gbs_fn=lambda t: 1024, seq_fn=lambda t: 1)
    f.incident = {"title": "asr-conformer epoch time up ~40%", "reported": ""}
    f.truth = {"root_cause": "link_degradation", "component": f"{h.name}/{n.ibdev}"}
    return f


def b09(case, seed):
    f, rng = _fleet(case, seed, "dgx", 16, gen="H100", window=window("2026-04-26T14:30:00Z", 90),
                    dmesg_style="T", sample=60)
    j = mk_job(f, "diffusion-unet-xl", 1.05, 0.28, every=20)
    h = f.hosts[11]
    g = h.gpus[4]
    t_on = f.t0 + 33 * 60
    g.phase(t_on - 900, temp=g.base["temp"] + 14)
    g.phase(t_on - 400, temp=84.0)
    g.phase(t_on, temp=88.0, reasons=HW_SLOW | HW_THERM, sm=1395, power=455.0, tviol=6.2e8)
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 4), 1.27))
    decoy_warm_gpu(f.hosts[3], 2, 5.0)
    decoy_warm_gpu(h, 5, 3.0)
    decoy_power_cap(f, 6, rng, exclude={(h.name, 4)})
    nccl_init(f, "nccl.log", f.tm + 20)
    iter_lines(f, "train.log", "deepspeed", every=20, gbs_fn=lambda t: 2048, seq_fn=lambda t: 1)
    f.incident = {"title": "diffusion-unet-xl samples/s dropped ~20% this afternoon",
                  "reported": "Grafana shows a few GPUs with power-cap clock events; maybe the power budget changed?"}
    f.truth = {"root_cause": "thermal_throttle", "component": f"{h.name}/gpu4"}
    return f


def b10(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 6, gen="A100", window=window("2026-01-08T20:00:00Z", 75), gpn=8,
                    dmesg_style="plain", sample=60)
    j = mk_job(f, "bert-xxl-mlm", 0.81, 0.2, every=20)
    h = f.hosts[4]
    t_on = f.t0 + 25 * 60
    h.sel = [(h.boot + 120, "System Event #0x83", "Timestamp Clock Sync", "Asserted"),
             (f.t0 - 6 * 86400, "Power Supply PSU1", "Presence detected", "Asserted"),
             (t_on - 300, "Fan Fan3A", "Lower Critical going low", "Asserted"),
             (t_on - 299, "Fan Fan3B", "Lower Critical going low", "Asserted"),
             (t_on - 60, "Temperature GPU_Inlet", "Upper Non-critical going high", "Asserted")]
    h.fans = [(f"Fan{i // 2 + 1}{'AB'[i % 2]}", 0 if i in (4, 5) else 11640 + (i * 97) % 600, "cr" if i in (4, 5) else "ok") for i in range(12)]
    for other in f.hosts:
        if other is not h:
            other.fans = [(f"Fan{i // 2 + 1}{'AB'[i % 2]}", 7040 + (i * 131) % 500, "ok") for i in range(12)]
    for g in h.gpus:
        g.phase(t_on - 200, temp=g.base["temp"] + 18)
        hot = g.index in (2, 3, 4, 5)
        g.phase(t_on, temp=86 + (3 if hot else 0) + g.index % 2, reasons=SW_THERM | ((HW_SLOW | HW_THERM) if hot else 0),
                sm=1110 if hot else 1230, power=255.0, tviol=4.1e8)
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h), 1.3))
    decoy_power_cap(f, 3, rng, exclude={(h.name, i) for i in range(8)})
    decoy_old_xid(f, f.hosts[1], 6, 63, 12.0, "pid=1850, Row Remapper: New row marked for remapping, reset gpu to activate.")
    iter_lines(f, "mlm.log", "hf", every=50, gbs_fn=lambda t: 4096, seq_fn=lambda t: 512)
    f.incident = {"title": "bert-xxl-mlm ~25% slower since ~20:25", "reported": "GPU temperature alerts on one node, we muted them as noisy."}
    f.truth = {"root_cause": "thermal_throttle", "component": h.name}
    return f


def b11(case, seed):
    f, rng = _fleet(case, seed, "hgx", 20, gen="H100", window=window("2026-11-23T07:45:00Z", 90),
                    dmesg_style="journal", sample=120)
    f.gz.add("dcgm")
    j = mk_job(f, "llm-70b-cpt", 1.6, 0.5, every=20)
    for hh in f.hosts[1::2]:
        hh.gz_dmesg = True
    h = f.hosts[13]
    t_on = f.t0 + 36 * 60
    h.sel = [(h.boot + 90, "System Event #0x83", "Timestamp Clock Sync", "Asserted"),
             (t_on - 3, "Power Supply PSU3", "Power Supply AC lost", "Asserted"),
             (t_on - 2, "Power Unit Redundancy", "Redundancy Lost", "Asserted"),
             (t_on + 1, "Power Supply PSU3", "Failure detected", "Asserted")]
    for other in f.hosts[::4]:
        if other is not h:
            other.sel = [(other.boot + 90, "System Event #0x83", "Timestamp Clock Sync", "Asserted")]
    for g in h.gpus:
        g.phase(t_on, reasons=HW_SLOW | HW_BRAKE, sm=rng.choice([990, 1005, 1020]), power=rng.uniform(300, 345), pviol=9.5e8)
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h), 1.42))
    decoy_power_cap(f, 9, rng, exclude={(h.name, i) for i in range(8)})
    nccl_init(f, "nccl.log", f.tm + 25)
    iter_lines(f, "train.log", "titan", every=40, gbs_fn=lambda t: 1024, seq_fn=lambda t: 8192)
    f.incident = {"title": "70b CPT: tokens/s down ~25%", "reported": f"Seen since about {hhmm(t_on + 120)}. Several GPUs show power capping."}
    f.truth = {"root_cause": "power_throttle", "component": h.name}
    return f


def b12(case, seed):
    f, rng = _fleet(case, seed, "ip", 10, gen="H200", window=window("2026-12-01T02:00:00Z", 80),
                    dmesg_style="caller", sample=60, rank_order="shuffled")
    j = mk_job(f, "code-15b", 0.88, 0.26, every=25)
    f.topo_shuffle = True
    h = f.hosts[7]
    g = h.gpus[1]
    t_on = f.t0 + 29 * 60
    g.phase(t_on, plimit=300.0, power=296.0, reasons=SW_POWER, sm=1215, pviol=9.8e8)
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 1), 1.33))
    decoy_power_cap(f, 7, rng, exclude={(h.name, 1)})
    decoy_warm_gpu(f.hosts[2], 3, 4.0)
    nccl_init(f, "nccl.log", f.tm + 12)
    iter_lines(f, "train.log", "megatron", every=50, gbs_fn=lambda t: 512, seq_fn=lambda t: 8192)
    f.incident = {"title": f"code-15b step time +25% since {hhmm(t_on)}",
                  "reported": "Power-cap clock events are on for many GPUs as usual. Someone ran a power-limit test on the cluster tonight, not sure which nodes."}
    f.truth = {"root_cause": "power_throttle", "component": f"{h.name}/gpu1"}
    return f


def b13(case, seed):
    f, rng = _fleet(case, seed, "gpu-a", 12, gen="A100", window=window("2026-03-29T09:10:00Z", 90),
                    dmesg_style="journal", sample=60)
    f.dcgm_families = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                       "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                       "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE"]
    j = mk_job(f, "t5-xxl-pretrain", 1.12, 0.3, every=20)
    h = f.hosts[9]
    g = h.gpus[6]
    t_on = f.t0 + 44 * 60
    g.phase(t_on, sbe=2.6)
    g.end_rows = (3, 0, True, False)
    g.remap_t = t_on + 95
    tag = f"PCI:0000:{g.bus}:00"
    for k, dtk in enumerate((95, 96.5, 410, 1320)):
        h.kern(t_on + dtk, f"NVRM: Xid ({tag}): 63, pid={40000 + k * 3}, name=python, Row Remapper: New row marked for remapping, reset gpu to activate.")
    h.kern(t_on + 1321, f"NVRM: Xid ({tag}): 94, pid=40011, name=python, Contained: SM (0x1). RST: No, D-RST: No")
    g.xids = [(t_on + 95, 63), (t_on + 1321, 94)]
    h.nvml_events = [(t_on + 95, 6, 63), (t_on + 1321, 6, 94)]
    j.slow.append((t_on, f.t1 + 1, f.ranks_of(h, 6), 1.12))
    decoy_static_sbe(f.hosts[2], 1, 21)
    decoy_old_xid(f, f.hosts[4], 2, 63, 17.0, "pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.")
    f.hosts[4].gpus[2].start["rows_cor"] = 1
    decoy_power_cap(f, 4, rng, exclude={(h.name, 6)})
    iter_lines(f, "train.log", "deepspeed", every=40, gbs_fn=lambda t: 2048, seq_fn=lambda t: 512)
    f.incident = {"title": "t5-xxl slower since late morning (~10%)", "reported": "Small but steady. No crash."}
    f.truth = {"root_cause": "hbm_degradation", "component": f"{h.name}/gpu6"}
    return f
