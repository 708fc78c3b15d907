"""pcie_downtrain: a GPU's or a NIC's PCIe link running below its capability while in use."""

from __future__ import annotations

import numpy as np

from ..sim import Scenario
from . import _common as c


def _aer_burst(
    scn: Scenario,
    host: str,
    bdf: str,
    port_bdf: str,
    t: float,
    dev: str,
    driver: str,
    n: int,
    rng: np.random.Generator,
) -> None:
    for k in range(n):
        tt = t + k * float(rng.uniform(0.5, 40))
        scn.kernel(
            host, tt, f"pcieport {port_bdf}: AER: Multiple Correctable error message received from {bdf}", 3
        )
        scn.kernel(
            host,
            tt + 1e-4,
            f"{driver} {bdf}: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)",
            4,
        )
        scn.kernel(
            host, tt + 2e-4, f"{driver} {bdf}:   device [{dev}] error status/mask=00000001/0000e000", 4
        )
        scn.kernel(host, tt + 3e-4, f"{driver} {bdf}:    [ 0] RxErr                  (First)", 4)


def apply_gpu(scn: Scenario, rng: np.random.Generator, variant: str) -> None:
    host, gi = c.pick_gpu(scn, rng)
    g = scn.fleet.host(host).gpus[gi]
    gs = scn.gpu(host, gi)
    tf = scn.tf
    quiet = variant.endswith("quiet")
    if variant in ("gen", "gen-quiet"):
        gen = int(rng.choice([3, 4]))
        gs.pcie_cur_gen.set(tf, gen)
        bw_frac = {3: 0.25, 4: 0.5}[gen]
    else:
        width = {"x8": 8, "x8-quiet": 8, "x4": 4}.get(variant, int(rng.choice([8, 8, 8, 4])))
        gs.pcie_cur_width.set(tf, width)
        bw_frac = width / 16.0
    # replays accompany a marginal link before and after it retrains lower
    gs.counters["pcie_replay"].set_rate(tf - 600, float(rng.uniform(0.01, 0.05)))
    gs.counters["pcie_replay"].bump(tf, int(rng.integers(20, 400)))
    gs.counters["pcie_replay"].set_rate(tf, float(rng.uniform(0.005, 0.05)))
    gs.aer_cor["Receiver Error"].bump(tf, int(rng.integers(3, 40)))
    gs.aer_cor["Bad TLP"].bump(tf, int(rng.integers(0, 5)))
    if not quiet:
        port = f"0000:{g.pci.bus - 1:02x}:00.0"
        _aer_burst(
            scn,
            host,
            g.pci.sysfs,
            port,
            tf - float(rng.uniform(2, 30)),
            "10de:2330",
            "nvidia",
            int(rng.integers(1, 4)),
            rng,
        )
    sev = c.severity(scn, rng, (1.04, 1.25))
    # host-device traffic (input copies, offload) halves with the width: a straggler, not a hang
    c.straggler(scn, [c.rank(scn, host, gi)], tf, sev)
    c.comm_slow(scn, tf, 1.0 + (1 - bw_frac) * float(rng.uniform(0.0, 0.06)))
    gs.power.set(tf, gs.power.base - 25 * (sev - 1) * 10)
    gs.tensor.set(tf, gs.tensor.base / sev)
    scn.truth = {"root_cause": "pcie_downtrain", "component": f"{host}/gpu{gi}"}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"GPU {host}/gpu{gi} link retrained low at tf; straggler x{sev:.3f}")


def apply_nic(scn: Scenario, rng: np.random.Generator, variant: str) -> None:
    """A RoCE NIC whose PCIe link came up narrow cannot drain to host memory: it pauses the fabric."""
    if scn.fleet.link_layer != "Ethernet":
        raise ValueError("NIC downtrain incidents need a RoCE (Ethernet) fleet")
    host = c.pick_job_host(scn, rng)
    k = int(rng.integers(0, 8))
    nic = scn.fleet.host(host).nics[k]
    ns = scn.nic(host, nic.ibdev)
    tf = scn.tf
    if variant == "speed":
        ns.pcie_cur_speed = [(0.0, 32.0), (tf, float(rng.choice([8.0, 16.0])))]
    else:
        ns.pcie_cur_width = [(0.0, 16), (tf, int(rng.choice([4, 8])))]
    port = f"0000:{nic.pci.bus - 1:02x}:00.0"
    _aer_burst(
        scn,
        host,
        nic.pci.sysfs,
        port,
        tf - float(rng.uniform(1, 10)),
        "15b3:1021",
        "mlx5_core",
        int(rng.integers(1, 3)),
        rng,
    )
    pause = float(rng.uniform(800, 9000))
    e = ns.ethtool
    e["tx_prio3_pause"].set_rate(tf, pause)
    e["tx_prio3_pause_duration"].set_rate(tf, pause * float(rng.uniform(8, 40)))
    e["rx_out_of_buffer"].set_rate(tf, float(rng.uniform(50, 2000)))
    e["rx_buffer_passed_thres_phy"].set_rate(tf, float(rng.uniform(50, 500)))
    e["outbound_pci_stalled_wr"].set_rate(tf, float(rng.uniform(1e4, 1e6)))
    e["outbound_pci_stalled_wr_events"].set_rate(tf, float(rng.uniform(10, 300)))
    e["outbound_pci_stalled_rd"].set_rate(tf, float(rng.uniform(1e3, 1e5)))
    e["outbound_pci_stalled_rd_events"].set_rate(tf, float(rng.uniform(1, 50)))
    if rng.random() < 0.5:
        e["rx_discards_phy"].set_rate(tf, float(rng.uniform(1, 40)))
    ns.hw_counters["out_of_buffer"].set_rate(tf, float(rng.uniform(20, 800)))
    _propagate_pauses(scn, rng, host, nic.ibdev, tf, pause, storm=False)
    sev = c.comm_mult(scn, rng, 1.05, 1.25)
    c.comm_slow(scn, tf, sev)
    scn.truth = {"root_cause": "pcie_downtrain", "component": f"{host}/{nic.ibdev}"}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"NIC {host}/{nic.ibdev} PCIe narrow at tf; pauses x{pause:.0f}/s, comm x{sev:.2f}")


def _propagate_pauses(
    scn: Scenario, rng: np.random.Generator, host: str, ibdev: str, tf: float, pause: float, storm: bool
) -> None:
    """The switch receives the origin's pauses, its buffer fills, and it pauses the senders (victims)."""
    nic = next(n for n in scn.fleet.host(host).nics if n.ibdev == ibdev)
    leaf = scn.fleet.switch(nic.switch)
    ss = scn.switches[leaf.name]
    ss.ports[nic.switch_port].pfc_rx[3].set_rate(tf, pause)
    for port, (h, ib) in leaf.down_ports.items():
        if (h, ib) == (host, ibdev) or h not in scn.fleet.job_hosts:
            continue
        share = float(rng.uniform(0.05, 0.35)) if not storm else float(rng.uniform(0.3, 0.9))
        vict = scn.nic(h, ib)
        base = c._rate_at(vict.ethtool["rx_prio3_pause"], tf)
        vict.ethtool["rx_prio3_pause"].set_rate(tf, base + pause * share)
        vict.ethtool["rx_prio3_pause_duration"].set_rate(
            tf, (base + pause * share) * float(rng.uniform(5, 30))
        )
        ss.ports[port].pfc_tx[3].set_rate(tf, c._rate_at(ss.ports[port].pfc_tx[3], tf) + pause * share)
    # the same rail on other leaves sees a little of it through the spines
    for other in scn.fleet.job_hosts:
        if other == host:
            continue
        vict = scn.nic(other, ibdev)
        if scn.fleet.host(other).nics[nic.index].switch == leaf.name:
            continue
        base = c._rate_at(vict.ethtool["rx_prio3_pause"], tf)
        vict.ethtool["rx_prio3_pause"].set_rate(
            tf, base + pause * float(rng.uniform(0.0, 0.08 if not storm else 0.3))
        )
    for link in leaf.links:
        ss.ports[link.port].pfc_tx[3].set_rate(tf, pause * float(rng.uniform(0.05, 0.3)))


def apply(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    variant = variant or "x8"
    if variant.startswith("nic"):
        apply_nic(scn, rng, variant.split("-", 1)[1] if "-" in variant else "width")
    else:
        apply_gpu(scn, rng, variant)


__all__ = ["apply"]
