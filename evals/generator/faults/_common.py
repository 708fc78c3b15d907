"""Helpers the fault families share: choosing a culprit, XID lines, stragglers, symptoms."""

from __future__ import annotations

import numpy as np

from ..fleet import GPUS_PER_NODE
from ..sim import RankSlow, Scenario, Xid


def pick_job_host(scn: Scenario, rng: np.random.Generator, avoid: set[str] | None = None) -> str:
    cands = [h for h in scn.fleet.job_hosts if not avoid or h not in avoid]
    return cands[int(rng.integers(0, len(cands)))]


def pick_gpu(scn: Scenario, rng: np.random.Generator) -> tuple[str, int]:
    return pick_job_host(scn, rng), int(rng.integers(0, GPUS_PER_NODE))


def rank(scn: Scenario, host: str, gpu: int) -> int:
    r = scn.fleet.rank_of(host, gpu)
    assert r is not None
    return r


def straggler(scn: Scenario, ranks: list[int], t_from: float, factor, t_to: float = float("inf")) -> None:
    scn.job.slow.append(RankSlow(ranks=list(ranks), t_from=t_from, factor=factor, t_to=t_to))


def comm_slow(scn: Scenario, t_from: float, mult, t_to: float = float("inf")) -> None:
    scn.job.comm_mult.append((t_from, t_to, mult))


def comm_mult(scn: Scenario, rng: np.random.Generator, lo: float, hi: float) -> float:
    """Communication multiplier that slows the whole step by a factor drawn from [lo, hi] (or --severity)."""
    s = scn.opts.get("severity")
    s = float(s) if s is not None else float(rng.uniform(lo, hi))
    return 1.0 + (s - 1.0) * scn.opts["ref_step"] / scn.job.base_comm


def severity(scn: Scenario, rng: np.random.Generator, default: tuple[float, float]) -> float:
    s = scn.opts.get("severity")
    if s is not None:
        return float(s)
    return float(rng.uniform(*default))


def xid(
    scn: Scenario,
    host: str,
    gpu: int,
    t: float,
    code: int,
    message: str,
    pid: str | None = None,
    announce: bool = True,
) -> None:
    """Record an XID on a GPU and print it in the host's kernel log the way the driver does."""
    g = scn.fleet.host(host).gpus[gpu]
    gs = scn.gpu(host, gpu)
    style = scn.opts.get("xid_style", "pid")
    if announce and not any(x.t < t for x in gs.xids):
        scn.kernel(host, t - 1e-6 * 3, f"NVRM: GPU at {g.pci.xid}: {g.uuid}", 4)
        scn.kernel(host, t - 1e-6 * 2, f"NVRM: GPU Board Serial Number: {g.serial}", 4)
    if style == "old":
        line = f"NVRM: Xid ({g.pci.xid}): {code}, {message}"
    else:
        who = pid or "pid='<unknown>', name=<unknown>"
        line = f"NVRM: Xid ({g.pci.xid}): {code}, {who}, {message}"
    scn.kernel(host, t, line, 4)
    gs.xids.append(Xid(t=t, code=code, message=message))


def train_pid(scn: Scenario, host: str, gpu: int) -> str:
    import zlib

    base = 100000 + zlib.crc32(host.encode()) % 800000
    return f"pid={base + gpu}, name=python3"


def set_symptom(scn: Scenario, kind: str, **kw) -> None:
    scn.opts["symptom"] = {"kind": kind, **kw}


def job_gpus(scn: Scenario):
    for h in scn.fleet.job_hosts:
        for g in range(GPUS_PER_NODE):
            yield scn.gpu(h, g)


def traffic_scale(
    scn: Scenario,
    t_from: float,
    factor: float,
    hosts: list[str] | None = None,
    ibdevs: list[str] | None = None,
    switches: bool = True,
) -> None:
    """Scale NIC traffic counters (and the leaf ports carrying them) from t_from on."""
    hosts = hosts or scn.fleet.job_hosts
    for h in hosts:
        for n in scn.fleet.host(h).nics:
            if ibdevs is not None and n.ibdev not in ibdevs:
                continue
            ns = scn.nic(h, n.ibdev)
            for name in (
                "port_xmit_data",
                "port_rcv_data",
                "port_xmit_packets",
                "port_rcv_packets",
                "unicast_xmit_packets",
                "unicast_rcv_packets",
                "port_xmit_wait",
                "rx_write_requests",
            ):
                c = ns.counters.get(name) or ns.hw_counters[name]
                c.set_rate(t_from, _rate_at(c, t_from) * factor)
            for name in (
                "rx_packets_phy",
                "tx_packets_phy",
                "rx_bytes_phy",
                "tx_bytes_phy",
                "rx_prio3_bytes",
                "rx_prio3_packets",
                "tx_prio3_bytes",
                "tx_prio3_packets",
                "rx_prio3_pause",
                "rx_prio3_pause_duration",
                "rx_prio3_pause_transition",
            ):
                if name in ns.ethtool:
                    c = ns.ethtool[name]
                    c.set_rate(t_from, _rate_at(c, t_from) * factor)
            for name in ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled"):
                if name in ns.hw_counters:
                    c = ns.hw_counters[name]
                    c.set_rate(t_from, _rate_at(c, t_from) * factor)
    for sw in scn.fleet.leaves() if switches else []:
        ss = scn.switches[sw.name]
        touched = False
        for port, (h, _ib) in sw.down_ports.items():
            if h in hosts:
                touched = True
                for attr in ("out_octets", "in_octets"):
                    c = getattr(ss.ports[port], attr)
                    c.set_rate(t_from, _rate_at(c, t_from) * factor)
        if touched:
            for link in sw.links:
                for attr in ("out_octets", "in_octets"):
                    c = getattr(ss.ports[link.port], attr)
                    c.set_rate(t_from, _rate_at(c, t_from) * factor)
                    sp = scn.switches[link.peer].ports[link.peer_port]
                    c2 = getattr(sp, "in_octets" if attr == "out_octets" else "out_octets")
                    c2.set_rate(t_from, _rate_at(c2, t_from) * factor)


def _rate_at(c, t: float) -> float:
    r = 0.0
    for ts, rate in c.rates:
        if ts <= t:
            r = rate
    return r
