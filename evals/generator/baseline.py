"""A healthy fleet running a synchronous job: the state every fault and decoy starts from."""

from __future__ import annotations

import numpy as np

from .fleet import Fleet
from .formats.sysfs import _at
from .sim import (
    H100_MAX_MEM,
    H100_MAX_SM,
    H100_POWER_LIMIT_W,
    IDLE,
    Counter,
    Gauge,
    GpuSim,
    HostSim,
    JobSim,
    NicSim,
    PortSim,
    Proc,
    Scenario,
    SwitchSim,
)

KERNELS_NEW = ["5.15.0-119-generic", "5.15.0-105-generic", "6.8.0-45-generic", "6.5.0-1024-nvidia"]
KERNELS_OLD = ["5.4.0-182-generic", "5.4.0-150-generic"]
DRIVERS_NEW = ["550.90.07", "550.127.05", "535.183.01", "560.35.03"]
DRIVERS_OLD = ["525.147.05", "530.30.02"]


def _gpu_healthy(
    host: str, idx: int, in_job: bool, rng: np.random.Generator, t0: float, rack_heat: float
) -> GpuSim:
    if in_job:
        temp = float(rng.uniform(52, 68) + rack_heat)
        g = GpuSim(
            host=host,
            index=idx,
            in_job=True,
            temp=Gauge(temp, 0.8, lo=20),
            mem_temp=Gauge(temp + rng.uniform(4, 10), 0.8, lo=20),
            sm_clock=Gauge(H100_MAX_SM, 0.0, hi=H100_MAX_SM),
            mem_clock=Gauge(H100_MAX_MEM, 0.0),
            power=Gauge(float(rng.uniform(540, 640)), 22.0, lo=60, hi=H100_POWER_LIMIT_W),
            util=Gauge(99.0, 1.0, lo=0, hi=100),
            tensor=Gauge(float(rng.uniform(0.38, 0.52)), 0.02, lo=0, hi=1),
            sm_active=Gauge(float(rng.uniform(0.82, 0.9)), 0.015, lo=0, hi=1),
            reasons=Gauge(0),
            power_limit=Gauge(H100_POWER_LIMIT_W),
            fb_used=Gauge(float(rng.uniform(61000, 76000)), 0.0),
        )
    else:
        temp = float(rng.uniform(29, 37))
        g = GpuSim(
            host=host,
            index=idx,
            in_job=False,
            temp=Gauge(temp, 0.4, lo=20),
            mem_temp=Gauge(temp + 3, 0.4, lo=20),
            sm_clock=Gauge(345, 0.0),
            mem_clock=Gauge(H100_MAX_MEM, 0.0),
            power=Gauge(float(rng.uniform(66, 74)), 1.0, lo=50),
            util=Gauge(0.0),
            tensor=Gauge(0.0),
            sm_active=Gauge(0.0),
            reasons=Gauge(IDLE),
            power_limit=Gauge(H100_POWER_LIMIT_W),
            fb_used=Gauge(0.0),
        )
        # idle GPUs drop their link speed for power saving; width stays
        g.pcie_cur_gen = Gauge(1)
    g.counters = {
        "pcie_replay": Counter(int(rng.choice([0, 0, 0, 1, 2])), 0.0, t0),
        "sbe": Counter(0, 0.0, t0),
        "dbe": Counter(0, 0.0, t0),
        "nvlink_crc": Counter(0, 0.0, t0),
        "nvlink_replay": Counter(0, 0.0, t0),
        "nvlink_recovery": Counter(0, 0.0, t0),
        "thermal_violation": Counter(0, 0.0, t0),
        "power_violation": Counter(0, 0.0, t0),
        "remap_corr": Counter(0, 0.0, t0),
        "remap_unc": Counter(0, 0.0, t0),
        "energy_mj": Counter(float(rng.uniform(1e11, 9e11)), (g.power.base * 1000.0), t0),
    }
    g.aer_cor = {
        k: Counter(0, 0.0, t0)
        for k in (
            "Receiver Error",
            "Bad TLP",
            "Bad DLLP",
            "RELAY_NUM Rollover",
            "Replay Timer Timeout",
            "Advisory Non-Fatal",
            "Corrected Internal Error",
            "Header Log Overflow",
        )
    }
    if rng.random() < 0.15:
        g.aer_cor["Receiver Error"].v0 = int(rng.integers(1, 4))
    return g


def _nic_healthy(host: str, nic, in_job: bool, rng: np.random.Generator, t0: float, traffic: float) -> NicSim:
    eth = nic.link_layer == "Ethernet"
    rate = float(traffic * rng.uniform(0.93, 1.07)) if in_job else float(rng.uniform(2e3, 2e4))
    n = NicSim(
        host=host, ibdev=nic.ibdev, netdev=nic.netdev, link_layer=nic.link_layer, rate="400 Gb/sec (4X NDR)"
    )
    pkt = 4096.0
    big = lambda: float(rng.uniform(1e13, 9e14))  # noqa: E731
    n.tx_bytes_rate = Gauge(rate)
    n.counters = {
        "port_xmit_data": Counter(big() / 4, rate / 4, t0),
        "port_rcv_data": Counter(big() / 4, rate / 4 * rng.uniform(0.97, 1.03), t0),
        "port_xmit_packets": Counter(big() / pkt, rate / pkt, t0),
        "port_rcv_packets": Counter(big() / pkt, rate / pkt, t0),
        "unicast_xmit_packets": Counter(big() / pkt, rate / pkt, t0),
        "unicast_rcv_packets": Counter(big() / pkt, rate / pkt, t0),
        "port_xmit_wait": Counter(float(rng.uniform(1e8, 5e9)), (rate / 1e10) * rng.uniform(2e5, 8e5), t0),
        "symbol_error": Counter(0, 0, t0),
        "port_rcv_errors": Counter(int(rng.choice([0, 0, 0, 2, 14])), 0, t0),
        "link_downed": Counter(0, 0, t0),
        "link_error_recovery": Counter(0, 0, t0),
        "local_link_integrity_errors": Counter(0, 0, t0),
        "excessive_buffer_overrun_errors": Counter(0, 0, t0),
        "port_rcv_remote_physical_errors": Counter(0, 0, t0),
        "port_xmit_discards": Counter(0, 0, t0),
        "VL15_dropped": Counter(0, 0, t0),
    }
    n.hw_counters = {
        "out_of_buffer": Counter(0, 0, t0),
        "out_of_sequence": Counter(int(rng.integers(0, 40)), 0.0, t0),
        "packet_seq_err": Counter(int(rng.integers(0, 3)), 0, t0),
        "local_ack_timeout_err": Counter(int(rng.integers(0, 3)), 0, t0),
        "rnr_nak_retry_err": Counter(0, 0, t0),
        "duplicate_request": Counter(int(rng.integers(0, 5)), 0, t0),
        "implied_nak_seq_err": Counter(0, 0, t0),
        "req_transport_retries_exceeded": Counter(0, 0, t0),
        "roce_adp_retrans": Counter(int(rng.integers(0, 8)), 0, t0),
        "rx_write_requests": Counter(big() / 65536, rate / 65536, t0),
        "rx_read_requests": Counter(float(rng.uniform(1e5, 1e7)), 0.5, t0),
    }
    if eth:
        ecn = rate / 1e9 * rng.uniform(20, 120) if in_job else 0.0
        n.hw_counters.update(
            {
                "np_cnp_sent": Counter(float(rng.uniform(1e5, 5e7)), ecn, t0),
                "np_ecn_marked_roce_packets": Counter(float(rng.uniform(1e5, 5e7)), ecn * 1.02, t0),
                "rp_cnp_handled": Counter(float(rng.uniform(1e5, 5e7)), ecn * rng.uniform(0.9, 1.1), t0),
                "rp_cnp_ignored": Counter(0, 0, t0),
            }
        )
        rxp = rate / 1e9 * rng.uniform(0.5, 3.0) if in_job else 0.0
        n.ethtool = {
            "rx_packets_phy": Counter(big() / pkt, rate / pkt, t0),
            "tx_packets_phy": Counter(big() / pkt, rate / pkt, t0),
            "rx_bytes_phy": Counter(big(), rate, t0),
            "tx_bytes_phy": Counter(big(), rate, t0),
            "rx_crc_errors_phy": Counter(0, 0, t0),
            "rx_symbol_err_phy": Counter(0, 0, t0),
            "rx_corrected_bits_phy": Counter(float(rng.uniform(0, 2e4)), float(rng.uniform(0, 0.02)), t0),
            "rx_pcs_symbol_err_phy": Counter(0, 0, t0),
            "rx_discards_phy": Counter(0, 0, t0),
            "tx_discards_phy": Counter(0, 0, t0),
            "link_down_events_phy": Counter(int(rng.choice([0, 1, 1, 2])), 0, t0),
            "rx_out_of_buffer": Counter(0, 0, t0),
            "rx_buffer_passed_thres_phy": Counter(float(rng.uniform(0, 300)), 0.0, t0),
            "rx_pause_ctrl_phy": Counter(0, 0, t0),
            "tx_pause_ctrl_phy": Counter(0, 0, t0),
            "rx_prio3_bytes": Counter(big(), rate, t0),
            "rx_prio3_packets": Counter(big() / pkt, rate / pkt, t0),
            "tx_prio3_bytes": Counter(big(), rate, t0),
            "tx_prio3_packets": Counter(big() / pkt, rate / pkt, t0),
            "rx_prio3_pause": Counter(float(rng.uniform(1e3, 4e5)), rxp, t0),
            "rx_prio3_pause_duration": Counter(float(rng.uniform(1e4, 4e6)), rxp * 9.0, t0),
            "rx_prio3_pause_transition": Counter(float(rng.uniform(5e2, 2e5)), rxp * 0.5, t0),
            "tx_prio3_pause": Counter(0, 0, t0),
            "tx_prio3_pause_duration": Counter(0, 0, t0),
            "rx_prio3_discards": Counter(0, 0, t0),
            "tx_pause_storm_warning_events": Counter(0, 0, t0),
            "tx_pause_storm_error_events": Counter(0, 0, t0),
            "outbound_pci_buffer_overflow": Counter(0, 0, t0),
            "outbound_pci_stalled_rd": Counter(float(rng.uniform(0, 50)), 0, t0),
            "outbound_pci_stalled_wr": Counter(float(rng.uniform(0, 50)), 0, t0),
            "outbound_pci_stalled_rd_events": Counter(float(rng.uniform(0, 5)), 0, t0),
            "outbound_pci_stalled_wr_events": Counter(float(rng.uniform(0, 5)), 0, t0),
            "dev_out_of_buffer": Counter(0, 0, t0),
        }
    return n


def _host_procs(in_job: bool, rng: np.random.Generator) -> list[Proc]:
    procs = []
    pid = int(rng.integers(20000, 900000))
    if in_job:
        for k in range(8):
            procs.append(
                Proc(
                    pid + k,
                    "train",
                    float(rng.uniform(96, 104)),
                    1.3,
                    f"{int(rng.integers(300, 900))}:{int(rng.integers(10, 59)):02d}.{int(rng.integers(10, 99))}",
                    "python3",
                    int(rng.uniform(2.0e7, 2.6e7)),
                    "R",
                )
            )
        for k in range(6):
            procs.append(
                Proc(
                    pid + 40 + k,
                    "train",
                    float(rng.uniform(18, 40)),
                    0.5,
                    f"{int(rng.integers(60, 200))}:{int(rng.integers(10, 59)):02d}.{int(rng.integers(10, 99))}",
                    "pt_data_worker",
                    int(rng.uniform(3e6, 6e6)),
                    "S",
                )
            )
    procs.append(
        Proc(
            int(rng.integers(2000, 9000)),
            "root",
            float(rng.uniform(0.5, 3)),
            0.1,
            "95:12.44",
            "nv-hostengine",
            81234,
            "S",
        )
    )
    procs.append(
        Proc(
            int(rng.integers(2000, 9000)),
            "root",
            float(rng.uniform(0.3, 2)),
            0.0,
            "41:02.10",
            "node_exporter",
            40211,
            "S",
        )
    )
    procs.append(
        Proc(
            int(rng.integers(2000, 9000)),
            "root",
            float(rng.uniform(0.1, 1)),
            0.0,
            "12:47.83",
            "dcgm-exporter",
            62012,
            "S",
        )
    )
    procs.append(Proc(1, "root", 0.0, 0.0, "2:41.77", "systemd", 13212, "S"))
    return procs


def build_scenario(
    rng: np.random.Generator,
    seed: int,
    fleet: Fleet,
    opts: dict,
    t0: float,
    t1: float,
    tf: float,
    job: JobSim,
) -> Scenario:
    scn = Scenario(
        seed=seed,
        rng=rng,
        fleet=fleet,
        t0=t0,
        t1=t1,
        now=t1 + float(rng.uniform(20, 240)),
        tf=tf,
        job=job,
        opts=opts,
    )
    scn.scrape = opts["scrape"]
    scn.metrics_start = job.t_start - opts.get("metrics_pre", 0.0)
    traffic = float(rng.uniform(6e9, 14e9))
    opts["traffic"] = traffic
    racks = sorted({h.rack for h in fleet.hosts})
    rack_heat = {r: float(rng.uniform(-3, 5)) for r in racks}
    styles = opts["dmesg_styles"]
    for i, h in enumerate(fleet.hosts):
        in_job = h.name in fleet.job_hosts
        boot = t0 - float(rng.uniform(6, 60)) * 86400.0
        hs = HostSim(
            name=h.name,
            boot=boot,
            dmesg_style=styles[i % len(styles)],
            load1=Gauge(
                float(rng.uniform(14, 26)) if in_job else float(rng.uniform(0.2, 1.5)),
                1.2 if in_job else 0.15,
                lo=0,
            ),
            cpu_pressure_rate=Gauge(float(rng.uniform(0.05, 0.4)) if in_job else 0.01, 0.03, lo=0),
            io_pressure_rate=Gauge(float(rng.uniform(0.01, 0.08)), 0.01, lo=0),
        )
        hs.cpu_some_avg10 = Gauge(float(rng.uniform(0.2, 1.5)) if in_job else 0.0, 0.2, lo=0.0)
        hs.procs = _host_procs(in_job, rng)
        scn.hosts[h.name] = hs
        for g in h.gpus:
            scn.gpus[(h.name, g.index)] = _gpu_healthy(
                h.name, g.index, in_job, rng, t0 - 86400, rack_heat[h.rack]
            )
        for n in h.nics:
            scn.nics[(h.name, n.ibdev)] = _nic_healthy(h.name, n, in_job, rng, t0 - 86400, traffic)
    _switches(scn, rng)
    _boot_history(scn, rng)
    # the job's traffic starts with the job; before it NICs were near idle
    return scn


def _switches(scn: Scenario, rng: np.random.Generator) -> None:
    fleet = scn.fleet
    t0 = scn.t0 - 86400
    n_leaf = len(fleet.leaves())
    for sw in fleet.switches:
        ss = SwitchSim(name=sw.name)
        if sw.tier == "leaf":
            host_rate = 0.0
            for port, (host, ibdev) in sw.down_ports.items():
                nic = scn.nics[(host, ibdev)]
                r = nic.tx_bytes_rate.base
                host_rate += r
                ss.ports[port] = PortSim(
                    out_octets=Counter(float(rng.uniform(1e14, 1e16)), r, t0),
                    in_octets=Counter(float(rng.uniform(1e14, 1e16)), r, t0),
                    out_discards=Counter(0, 0, t0),
                    pfc_tx={3: Counter(float(rng.uniform(1e3, 2e5)), r / 1e9 * rng.uniform(0.5, 3.0), t0)},
                    pfc_rx={3: Counter(float(rng.uniform(0, 500)), 0.0, t0)},
                )
            up_share = 0.55 if n_leaf > 1 else 0.0
            n_up = len(sw.links)
            for link in sw.links:
                r = host_rate * up_share / n_up * rng.uniform(0.96, 1.04)
                ss.ports[link.port] = PortSim(
                    out_octets=Counter(float(rng.uniform(1e15, 5e16)), r, t0),
                    in_octets=Counter(float(rng.uniform(1e15, 5e16)), r * rng.uniform(0.97, 1.03), t0),
                    out_discards=Counter(int(rng.integers(0, 30)), 0, t0),
                    pfc_tx={3: Counter(float(rng.uniform(0, 1e4)), 0.0, t0)},
                    pfc_rx={3: Counter(float(rng.uniform(0, 1e4)), 0.0, t0)},
                )
        else:
            for link in sw.links:
                ss.ports[link.port] = PortSim(
                    out_octets=Counter(float(rng.uniform(1e15, 5e16)), 1e9, t0),
                    in_octets=Counter(float(rng.uniform(1e15, 5e16)), 1e9, t0),
                    out_discards=Counter(0, 0, t0),
                )
        scn.switches[sw.name] = ss
    # spine port rates mirror the leaf uplinks
    for sw in fleet.switches:
        if sw.tier != "leaf":
            continue
        for link in sw.links:
            up = scn.switches[sw.name].ports[link.port]
            sp = scn.switches[link.peer].ports[link.peer_port]
            sp.in_octets.rates = [(a, r) for a, r in up.out_octets.rates]
            sp.out_octets.rates = [(a, r) for a, r in up.in_octets.rates]


def _boot_history(scn: Scenario, rng: np.random.Generator) -> None:
    """Lines every host printed at boot and since: the history a reader must not mistake for symptoms."""
    o = scn.opts
    for h in scn.fleet.hosts:
        hs = scn.hosts[h.name]
        b = hs.boot
        kv = o["kernel"]
        add = lambda dt, text, prio=6, h=h, b=b: scn.kernel(h.name, b + dt, text, prio)  # noqa: E731
        if kv.startswith("5.4."):
            add(
                0.0,
                f"Linux version {kv} (buildd@lcy02-amd64-{int(rng.integers(10, 120)):03d}) (gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2)) #{int(rng.integers(150, 210))}-Ubuntu SMP",
                5,
            )
        else:
            add(
                0.0,
                f"Linux version {kv} (buildd@lcy02-amd64-{int(rng.integers(10, 120)):03d}) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #{int(rng.integers(100, 140))}-Ubuntu SMP",
                5,
            )
        add(
            0.0,
            f"Command line: BOOT_IMAGE=/vmlinuz-{kv} root=UUID={'%08x' % int(rng.integers(0, 2**32))}-6d1c-4c2b-9f3e-1b2a3c4d5e6f ro iommu=pt pci=realloc=off",
            6,
        )
        for g in h.gpus:
            add(1.9 + g.index * 0.01, f"pci {g.pci.sysfs}: [10de:2330] type 00 class 0x030200", 7)
        for n in h.nics:
            add(
                2.2 + n.index * 0.01,
                f"pci {n.pci.sysfs}: [15b3:1021] type 00 class 0x020700"
                if n.link_layer == "InfiniBand"
                else f"pci {n.pci.sysfs}: [15b3:1021] type 00 class 0x020000",
                7,
            )
        t = 9.5
        for n in h.nics:
            nic = scn.nics[(h.name, n.ibdev)]
            speed, width = _at(nic.pcie_cur_speed, t), _at(nic.pcie_cur_width, t)
            add(t, f"mlx5_core {n.pci.sysfs}: firmware version: 28.41.1000", 6)
            add(
                t + 0.02,
                f"mlx5_core {n.pci.sysfs}: {_bw(speed, width)} Gb/s available PCIe bandwidth ({_speed(speed)} x{width} link)",
                6,
            )
            t += 0.31
        add(t + 2.0, "nvidia: loading out-of-tree module taints kernel.", 4)
        add(t + 2.0, "nvidia: module license 'NVIDIA' taints kernel.", 4)
        add(t + 2.1, "nvidia-nvlink: Nvlink Core is being initialized, major device number 508", 6)
        add(
            t + 2.4,
            f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {o['driver']}  Fri May 31 09:35:42 UTC 2024",
            6,
        )
        add(
            t + 2.9,
            "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  "
            + o["driver"]
            + "  Fri May 31 09:30:06 UTC 2024",
            6,
        )
        add(
            t + 3.3,
            "nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module nvidia, inheriting taint.",
            4,
        )
        t += 14
        for n in h.nics:
            if n.link_layer == "InfiniBand":
                add(t, f"mlx5_core {n.pci.sysfs} {n.ibdev}: Port: 1 Link INIT", 6)
                add(t + 0.6, f"mlx5_core {n.pci.sysfs} {n.ibdev}: Port: 1 Link ACTIVE", 6)
            else:
                add(t + 0.6, f"mlx5_core {n.pci.sysfs} {n.netdev}: Link up", 6)
            t += 0.07
        add(
            t + 30,
            "IPv6: ADDRCONF(NETDEV_CHANGE): "
            + (h.nics[0].netdev if h.nics[0].link_layer == "Ethernet" else "bond0")
            + ": link becomes ready",
            6,
        )
        # routine noise well after boot
        for _ in range(int(rng.integers(1, 4))):
            dt = float(rng.uniform(3600, max(3700.0, scn.t0 - b - 3600)))
            add(
                dt,
                "workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 times, consider switching to WQ_UNBOUND",
                4,
            )


def _speed(gts: float) -> str:
    return {
        2.5: "2.5 GT/s PCIe",
        5.0: "5.0 GT/s PCIe",
        8.0: "8.0 GT/s PCIe",
        16.0: "16.0 GT/s PCIe",
        32.0: "32.0 GT/s PCIe",
    }[gts]


def _bw(gts: float, width: int) -> str:
    enc = 128.0 / 130.0 if gts >= 8 else 0.8
    mbps = int(gts * 1000 * enc) * width  # the kernel rounds per lane, then multiplies
    return f"{mbps // 1000}.{mbps % 1000:03d}"
