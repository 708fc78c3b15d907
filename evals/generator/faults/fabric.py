"""Fabric faults: PFC pause storm, ECMP hash polarization, a degrading NIC link."""

from __future__ import annotations

import numpy as np

from ..sim import PfcwdRow, Scenario
from . import _common as c
from .pcie import _propagate_pauses


def _pfcwd_rows(
    scn: Scenario, leaf_name: str, rng: np.random.Generator, stormed: dict[str, tuple[int, int, int]]
):
    leaf = scn.fleet.switch(leaf_name)
    rows = []
    for port in list(leaf.down_ports) + [link.port for link in leaf.links]:
        if port in stormed:
            det, res, drop = stormed[port]
            rows.append(PfcwdRow(port, 3, "stormed", det, res, 0, drop, 0, 0, 0, drop, 0, 0))
        else:
            rows.append(PfcwdRow(port, 3, "operational", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    scn.switches[leaf_name].pfcwd = rows


def init_pfcwd(scn: Scenario, rng: np.random.Generator) -> None:
    """Every leaf of a RoCE fabric runs the PFC watchdog on its lossless queue 3."""
    for leaf in scn.fleet.leaves():
        if not scn.switches[leaf.name].pfcwd:
            _pfcwd_rows(scn, leaf.name, rng, {})


def pfc_pause_storm(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    if scn.fleet.link_layer != "Ethernet":
        raise ValueError("PFC storms need a RoCE (Ethernet) fleet")
    host = c.pick_job_host(scn, rng)
    k = int(rng.integers(0, 8))
    nic = scn.fleet.host(host).nics[k]
    ns = scn.nic(host, nic.ibdev)
    tf = scn.tf
    pause = float(rng.uniform(3e4, 2e5))  # continuous XOFF refresh
    e = ns.ethtool
    e["tx_prio3_pause"].set_rate(tf, pause)
    e["tx_prio3_pause_duration"].set_rate(
        tf, float(rng.uniform(6e5, 9.8e5))
    )  # µs per second: nearly always paused
    e["tx_pause_storm_warning_events"].bump(tf + 5, 1)
    for _ in range(int(rng.integers(0, 4))):
        e["tx_pause_storm_warning_events"].bump(tf + float(rng.uniform(60, scn.t1 - tf)), 1)
    if variant == "error" or rng.random() < 0.3:
        e["tx_pause_storm_error_events"].bump(tf + float(rng.uniform(20, 200)), 1)
    e["rx_discards_phy"].set_rate(tf, float(rng.uniform(0, 20)))
    _propagate_pauses(scn, rng, host, nic.ibdev, tf, pause * 0.05, storm=True)
    leaf = nic.switch
    det = int(rng.integers(1, 4))
    res = det - (1 if rng.random() < 0.7 else 0)
    drops = int(pause * (scn.t1 - tf) * float(rng.uniform(0.5, 3)))
    status_port = nic.switch_port
    init_pfcwd(scn, rng)
    _pfcwd_rows(scn, leaf, rng, {status_port: (det, res, drops)})
    if res == det:
        for r in scn.switches[leaf].pfcwd:
            if r.port == status_port:
                r.status = "stormed" if rng.random() < 0.5 else "operational"
    sev = c.comm_mult(scn, rng, 1.08, 1.4)
    c.comm_slow(scn, tf, sev)
    scn.truth = {"root_cause": "pfc_pause_storm", "component": f"{host}/{nic.ibdev}"}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"storm origin {host}/{nic.ibdev} at {leaf}/{status_port}, comm x{sev:.2f}")


def ecmp_hash_polarization(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    leaves = [
        lf for lf in scn.fleet.leaves() if any(h in scn.fleet.job_hosts for h, _ in lf.down_ports.values())
    ]
    if len(leaves) < 2:
        raise ValueError("ECMP polarization needs at least two leaves carrying the job")
    leaf = leaves[int(rng.integers(0, len(leaves)))]
    ss = scn.switches[leaf.name]
    tf = scn.tf
    ups = [link.port for link in leaf.links]
    total = sum(c._rate_at(ss.ports[p].out_octets, tf) for p in ups)
    n_hot = int(rng.choice([2, 2, 3])) if variant != "one" else 1
    hot = sorted(rng.choice(len(ups), size=n_hot, replace=False).tolist())
    hot_share = float(rng.uniform(0.7, 0.88))
    cap = 100e9  # 800G uplink in bytes/s
    for j, p in enumerate(ups):
        if j in hot:
            r = min(cap * 0.97, total * hot_share / n_hot) * float(rng.uniform(0.97, 1.03))
            ss.ports[p].out_discards.set_rate(tf, float(rng.uniform(200, 5000)))
        else:
            r = total * (1 - hot_share) / (len(ups) - n_hot) * float(rng.uniform(0.8, 1.2))
        ss.ports[p].out_octets.set_rate(tf, r)
        link = leaf.links[j]
        scn.switches[link.peer].ports[link.peer_port].in_octets.set_rate(tf, r)
    # hosts behind the leaf see ECN marks and CNPs from the congested uplinks
    for h, ib in leaf.down_ports.values():
        if h not in scn.fleet.job_hosts:
            continue
        ns = scn.nic(h, ib)
        for name in ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled"):
            if name in ns.hw_counters:
                cc = ns.hw_counters[name]
                cc.set_rate(tf, c._rate_at(cc, tf) * float(rng.uniform(4, 15)))
        if "rx_prio3_pause" in ns.ethtool:
            cc = ns.ethtool["rx_prio3_pause"]
            cc.set_rate(tf, c._rate_at(cc, tf) * float(rng.uniform(1.5, 4)))
    sev = c.comm_mult(scn, rng, 1.05, 1.25)
    c.comm_slow(scn, tf, sev)
    scn.truth = {"root_cause": "ecmp_hash_polarization", "component": leaf.name}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"{leaf.name} uplinks {hot} carry {hot_share:.0%}; comm x{sev:.2f}")


def link_degradation(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host = c.pick_job_host(scn, rng)
    k = int(rng.integers(0, 8))
    nic = scn.fleet.host(host).nics[k]
    ns = scn.nic(host, nic.ibdev)
    tf = scn.tf
    eth = nic.link_layer == "Ethernet"
    flaps = int(rng.integers(2, 7)) if variant != "errors" else 0
    span = scn.t1 - tf
    ns.counters["symbol_error"].set_rate(tf, float(rng.uniform(0.5, 30)))
    ns.counters["port_rcv_errors"].set_rate(tf, float(rng.uniform(0.2, 8)))
    ns.counters["link_error_recovery"].set_rate(tf, float(rng.uniform(0.0005, 0.01)))
    ns.counters["local_link_integrity_errors"].set_rate(tf, float(rng.uniform(0.0, 0.003)))
    ns.hw_counters["packet_seq_err"].set_rate(tf, float(rng.uniform(0.01, 0.3)))
    ns.hw_counters["out_of_sequence"].set_rate(tf, float(rng.uniform(0.1, 3)))
    ns.hw_counters["local_ack_timeout_err"].set_rate(tf, float(rng.uniform(0.001, 0.02)))
    if eth:
        ns.ethtool["rx_symbol_err_phy"].set_rate(tf, float(rng.uniform(0.5, 30)))
        ns.ethtool["rx_crc_errors_phy"].set_rate(tf, float(rng.uniform(0.2, 8)))
        ns.ethtool["rx_corrected_bits_phy"].set_rate(tf, float(rng.uniform(1e3, 5e5)))
        ns.ethtool["rx_pcs_symbol_err_phy"].set_rate(tf, float(rng.uniform(0.1, 5)))
    times = sorted(float(tf + x) for x in rng.uniform(30, span * 0.95, size=flaps))
    states = [(0.0, "4: ACTIVE")]
    phys = [(0.0, "5: LinkUp")]
    for t in times:
        down = float(rng.uniform(1.5, 12))
        ns.counters["link_downed"].bump(t, 1)
        ns.carrier_changes.bump(t, 2)
        if eth:
            ns.ethtool["link_down_events_phy"].bump(t, 1)
            scn.kernel(host, t, f"mlx5_core {nic.pci.sysfs} {nic.netdev}: Link down", 6)
            scn.kernel(host, t + down, f"mlx5_core {nic.pci.sysfs} {nic.netdev}: Link up", 6)
        else:
            scn.kernel(host, t, f"mlx5_core {nic.pci.sysfs} {nic.ibdev}: Port: 1 Link DOWN", 6)
            scn.kernel(host, t + down * 0.6, f"mlx5_core {nic.pci.sysfs} {nic.ibdev}: Port: 1 Link INIT", 6)
            scn.kernel(host, t + down, f"mlx5_core {nic.pci.sysfs} {nic.ibdev}: Port: 1 Link ACTIVE", 6)
        states += [(t, "1: DOWN"), (t + down, "4: ACTIVE")]
        phys += [(t, "2: Polling"), (t + down, "5: LinkUp")]
        scn.job.comm_spikes.append((t, down + float(rng.uniform(0.5, 3))))
    ns.state, ns.phys_state = states, phys
    if variant == "rate" or (variant is None and rng.random() < 0.4):
        t_rate = times[0] if times else tf
        ns.rate = [(0.0, "400 Gb/sec (4X NDR)"), (t_rate, "200 Gb/sec (2X NDR)")]
    sev = c.comm_mult(scn, rng, 1.03, 1.15)
    c.comm_slow(scn, tf, sev)
    scn.truth = {"root_cause": "link_degradation", "component": f"{host}/{nic.ibdev}"}
    c.set_symptom(scn, "slow")
    scn.notes.append(f"{host}/{nic.ibdev} errors from tf, {flaps} flaps, comm x{sev:.2f}")
