"""Benign evidence real fleets always carry, which an investigator must not blame.

Each decoy is physically harmless: it changes no rank's step time. Names match ``DECOYS`` keys.
"""

from __future__ import annotations

import numpy as np

from .faults import _common as c
from .fleet import GPUS_PER_NODE
from .sim import SW_POWER_CAP, Scenario


def _other_host(scn: Scenario, rng: np.random.Generator, job_only: bool = True) -> str:
    culprit = scn.truth.get("component") or ""
    culprit_host = culprit.split("/")[0] if culprit and culprit != "job" else None
    pool = scn.fleet.job_hosts if job_only else [h.name for h in scn.fleet.hosts]
    cands = [h for h in pool if h != culprit_host] or pool
    return cands[int(rng.integers(0, len(cands)))]


def _other_gpu(scn: Scenario, rng: np.random.Generator, same_host: bool = False) -> tuple[str, int]:
    culprit = scn.truth.get("component") or ""
    if same_host and "/" in culprit:
        h = culprit.split("/")[0]
        gi = int(culprit.rsplit("/gpu", 1)[1]) if "/gpu" in culprit else -1
        choices = [k for k in range(GPUS_PER_NODE) if k != gi]
        return h, int(rng.choice(choices))
    return _other_host(scn, rng), int(rng.integers(0, GPUS_PER_NODE))


def spare_low_gen(scn: Scenario, rng: np.random.Generator) -> None:
    """Spare hosts' idle GPUs already sit at Gen1 (power saving); make one show it in every tool."""
    spares = [h.name for h in scn.fleet.hosts if h.spare]
    if not spares:
        return
    h = spares[int(rng.integers(0, len(spares)))]
    for g in range(GPUS_PER_NODE):
        scn.gpu(h, g).pcie_cur_gen.base = int(rng.choice([1, 1, 2]))
    scn.notes.append(f"decoy: spare {h} idle GPUs at low PCIe gen")


def old_xid(scn: Scenario, rng: np.random.Generator) -> None:
    h, gi = _other_gpu(scn, rng)
    hs = scn.hosts[h]
    earliest = hs.boot + 3600
    latest = scn.t0 - 2 * 86400
    t = float(rng.uniform(earliest, latest))
    code = int(rng.choice([13, 31, 43]))
    pid = f"pid={int(rng.integers(10000, 900000))}, name=python3"
    if code == 13:
        msg = "Graphics SM Warp Exception on (GPC 3, TPC 1, SM 0): Illegal Instruction Parameter"
    elif code == 31:
        msg = (
            f"channel 0x0000000{int(rng.integers(2, 9))}, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 "
            "GPCCLIENT_T1_3 faulted @ 0x7f1c_a0000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
        )
    else:
        msg = "Ch 00000010, engmask 00000101"
    c.xid(scn, h, gi, t, code, msg, pid)
    scn.notes.append(f"decoy: old XID {code} on {h}/gpu{gi}")


def spare_xid(scn: Scenario, rng: np.random.Generator) -> None:
    spares = [h.name for h in scn.fleet.hosts if h.spare]
    if not spares:
        return old_xid(scn, rng)
    h = spares[int(rng.integers(0, len(spares)))]
    gi = int(rng.integers(0, GPUS_PER_NODE))
    t = float(rng.uniform(scn.t0, scn.t1))
    c.xid(
        scn,
        h,
        gi,
        t,
        13,
        "Graphics SM Warp Exception on (GPC 5, TPC 2, SM 1): Out Of Range Address",
        f"pid={int(rng.integers(10000, 900000))}, name=cuda_memtest",
    )
    scn.notes.append(f"decoy: in-window XID 13 on spare {h}/gpu{gi}")


def warm_gpu(scn: Scenario, rng: np.random.Generator, same_host: bool = False) -> None:
    h, gi = _other_gpu(scn, rng, same_host=same_host)
    gs = scn.gpu(h, gi)
    if not gs.in_job or gs.reasons.over:
        return
    gs.temp.base = float(rng.uniform(80, 84))
    gs.mem_temp.base = gs.temp.base + 5
    scn.notes.append(f"decoy: warm unthrottled {h}/gpu{gi}")


def rx_pause_victims(scn: Scenario, rng: np.random.Generator) -> None:
    if scn.fleet.link_layer != "Ethernet":
        return
    for _ in range(int(rng.integers(2, 6))):
        h = _other_host(scn, rng)
        n = scn.fleet.host(h).nics[int(rng.integers(0, 8))]
        e = scn.nic(h, n.ibdev).ethtool
        r = c._rate_at(e["rx_prio3_pause"], scn.t0) * float(rng.uniform(3, 10)) + float(rng.uniform(50, 400))
        e["rx_prio3_pause"].set_rate(scn.t0, r)
        e["rx_prio3_pause_duration"].set_rate(scn.t0, r * float(rng.uniform(5, 20)))
    scn.notes.append("decoy: congestion rx pauses on a few NICs")


def power_cap_blips(scn: Scenario, rng: np.random.Generator) -> None:
    h, gi = _other_gpu(scn, rng)
    gs = scn.gpu(h, gi)
    if not gs.in_job or gs.reasons.over:
        return
    starts = sorted(float(x) for x in rng.uniform(scn.t0, scn.t1, size=int(rng.integers(3, 9))))
    for s in starts:
        gs.reasons.set(s, SW_POWER_CAP, s + float(rng.uniform(20, 90)))
        gs.power.set(s, 699.0, s + 60)
    gs.counters["power_violation"].set_rate(scn.t0, float(rng.uniform(2e6, 2e7)))
    scn.notes.append(f"decoy: brief SW power cap blips on {h}/gpu{gi}")


def static_link_errors(scn: Scenario, rng: np.random.Generator) -> None:
    h = _other_host(scn, rng)
    n = scn.fleet.host(h).nics[int(rng.integers(0, 8))]
    ns = scn.nic(h, n.ibdev)
    ns.counters["symbol_error"].v0 = int(rng.integers(3, 60))
    ns.counters["link_downed"].v0 = 1
    if "rx_symbol_err_phy" in ns.ethtool:
        ns.ethtool["rx_symbol_err_phy"].v0 = ns.counters["symbol_error"].v0
    scn.notes.append(f"decoy: old static link errors on {h}/{n.ibdev}")


def static_sbe(scn: Scenario, rng: np.random.Generator) -> None:
    h, gi = _other_gpu(scn, rng)
    gs = scn.gpu(h, gi)
    gs.counters["sbe"].v0 = int(rng.integers(1, 12))
    gs.counters["remap_corr"].v0 = int(rng.integers(0, 2))
    scn.notes.append(f"decoy: a few old corrected ECC errors on {h}/gpu{gi}")


def overlap_warm(scn: Scenario, rng: np.random.Generator) -> None:
    """A warm, unthrottled neighbour on the culprit's own host."""
    warm_gpu(scn, rng, same_host=True)


DECOYS = {
    "spare_low_gen": spare_low_gen,
    "old_xid": old_xid,
    "spare_xid": spare_xid,
    "warm_gpu": warm_gpu,
    "rx_pause_victims": rx_pause_victims,
    "power_cap_blips": power_cap_blips,
    "static_link_errors": static_link_errors,
    "static_sbe": static_sbe,
    "overlap_warm": overlap_warm,
}
