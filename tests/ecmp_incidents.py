"""ECMP hash polarization incidents, and healthy fabrics that look unbalanced from the wrong ports.

Written from the bundle spec and the format reference only (snmp_exporter ``ifHCOutOctets``,
SONiC ``show interfaces counters``), never from what the investigator reads.

The physics: a switch spreads the flows it forwards upward over its uplinks by hashing each
flow's header (ECMP). Polarization puts most flows of one switch on one uplink. Each flow takes
the same cable both ways (a symmetric hash), so a cable carries about as much down as up: the
spine that receives the polarized leaf's traffic sends about as much back down the same cable,
and that spine's downlink toward the polarized leaf stands far above its other downlinks. That
downlink is not the spine's choice (there is one way down to a leaf), so the spine is no culprit.
The same holds one tier up: a spine polarized toward one core makes that core's downlink to it
the busiest. A job placed unevenly over leaves makes a spine's downlinks unequal too, with every
hash working.

Each incident varies the naming (three styles, with switch port names in Ethernet, Arista
``Ethernet49/1`` or Cumulus ``swp`` form), the tiers (2, or 3 with the fault on a spine), the
parallel cables per leaf and spine, the words for the tiers (the spec's, ``T0``/``T1``/``T2``,
none at all, or words nobody agreed on), which end of a cable topology lists, and where the
switch rates come from (snmp series or a SONiC snapshot), how many uplinks a switch has (two or
more) and how many of them the hash crowds the flows onto (one, or half of them), and whether a
spine is drained for maintenance (its cables carry only keepalives, with every hash working). ``truth`` is returned, never written
into the bundle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.fabric_incidents import END, ONSET, START, STYLES, WINDOW, _iso, _nvml, _steps, _w

#: Switch port names by style: host ports, then inter-switch ports, as different vendors print them.
PORTS = {
    "dash": lambda n: f"Ethernet{4 * n}",
    "dotted": lambda n: f"Ethernet{n + 1}/1",
    "ip": lambda n: f"swp{n + 1}",
}
TIER_WORDS = {
    "spec": ("leaf", "spine", "core"),
    "t": ("T0", "T1", "T2"),
    "none": (None, None, None),
    "odd": ("access-pod", "fabric-plane", "super-plane"),
}


@dataclass
class EcmpCase:
    """One incident. ``where``: the polarized switch's tier (``leaf`` or ``spine``), or ``none``."""

    name: str
    where: str = "leaf"
    style: str = "dash"
    tiers: int = 2
    parallel: int = 1
    tier_words: str = "spec"
    listed: str = "both"  # "both" | "upper" | "lower": which end of each cable topology lists
    source: str = "snmp"  # "snmp" | "sonic"
    uneven: bool = False  # the job placed unevenly over the leaves (spine downlinks unequal)
    uplinks: int = 4  # a leaf's uplinks (spines x parallel cables)
    cores: int = 3  # with 3 tiers: a spine's uplinks, one to each core
    hot: int = 1  # how many of the polarized switch's uplinks the hash crowds the flows onto
    drained: bool = False  # the first spine drained for maintenance: routing sends nothing to it
    compute: bool = True
    seed: int = 0


def write_ecmp(root: Path, case: EcmpCase) -> dict:
    """Write the incident; returns its truth."""
    rng = np.random.default_rng(case.seed)
    host_name, leaf_f, spine_f, core_f = STYLES[case.style]
    port = PORTS[case.style]
    gpus, nics = 8, 4
    n_leaves = 4 if case.tiers == 3 else 3
    n_spines = case.uplinks // case.parallel  # e.g. four uplinks: four spines, or two with two cables each
    n_cores = case.cores if case.tiers == 3 else 0
    leaves = [leaf_f.format(i + 1) for i in range(n_leaves)]
    spines = [spine_f.format(i + 1) for i in range(n_spines)]
    cores = [core_f.format(i + 1) for i in range(n_cores)]
    per_leaf = [6, 1, 1, 1][:n_leaves] if case.uneven else [2] * n_leaves
    # hosts, their leaf ports
    hosts: list[tuple[str, str, list[str]]] = []  # (host, leaf, [leaf port per NIC])
    nextport = {sw: 0 for sw in [*leaves, *spines, *cores]}
    for li, leaf in enumerate(leaves):
        for _ in range(per_leaf[li]):
            h = host_name(len(hosts))
            ports = []
            for _ in range(nics):
                ports.append(port(nextport[leaf]))
                nextport[leaf] += 1
            hosts.append((h, leaf, ports))
    for leaf in leaves:  # uplinks after a gap, as switches number them
        nextport[leaf] = max(nextport[leaf], 48)
    cables: list[tuple[str, str, str, str]] = []  # (lower, lower port, upper, upper port)

    def cable(lo: str, hi: str) -> None:
        cables.append((lo, port(nextport[lo]), hi, port(nextport[hi])))
        nextport[lo] += 1
        nextport[hi] += 1

    for leaf in leaves:
        for s in spines:
            for _ in range(case.parallel):
                cable(leaf, s)
    for s in spines:
        nextport[s] = max(nextport[s], 32)
        for c in cores:
            cable(s, c)

    # Rates (bytes/s) on every cable, the same both ways: before the onset every hash spreads
    # evenly; after it the polarized switch puts most of its flows on one uplink.
    truth: dict = {"root_cause": "healthy", "component": None}
    polarized = None
    if case.where == "leaf":
        polarized = leaves[int(rng.integers(0, n_leaves))]
    elif case.where == "spine":
        polarized = spines[int(rng.integers(0, n_spines))]
    if polarized is not None:
        truth = {"root_cause": "ecmp_hash_polarization", "component": polarized}
    host_bps = float(rng.uniform(18e9, 26e9))  # each host's traffic to other leaves
    inter_pod = 0.5  # share of a spine's traffic that crosses the cores (3 tiers)

    drained = spines[0] if case.drained else None
    # what a drained spine's cables still carry: routing protocol keepalives, a few kB/s
    keepalive = 2e3

    def spread(sw: str, total: float, ups: list[int], after: bool) -> dict[int, float]:
        if not ups:
            return {}
        idle = [i for i in ups if drained in (cables[i][0], cables[i][2])]
        ups = [i for i in ups if i not in idle]
        out = dict.fromkeys(idle, keepalive)
        if not ups:
            return out
        if after and sw == polarized and case.hot == 1:
            one = ups[int(rng.integers(0, len(ups)))]
            share = float(rng.uniform(0.75, 0.9))
            rest = (1 - share) / (len(ups) - 1)
            return out | {i: total * (share if i == one else rest) for i in ups}
        if after and sw == polarized:
            n_hot = min(case.hot, len(ups) - 1)
            hot = {ups[int(i)] for i in rng.choice(len(ups), n_hot, replace=False)}
            share = float(rng.uniform(0.78, 0.92))
            return out | {
                i: total * (share / n_hot if i in hot else (1 - share) / (len(ups) - n_hot)) for i in ups
            }
        return out | {i: total / len(ups) * float(rng.uniform(0.96, 1.04)) for i in ups}

    def rates(after: bool) -> list[float]:
        out = [0.0] * len(cables)
        spine_total = {s: 0.0 for s in spines}
        for leaf, n in zip(leaves, per_leaf, strict=True):
            ups = [i for i, c in enumerate(cables) if c[0] == leaf]
            for i, r in spread(leaf, n * host_bps, ups, after).items():
                out[i] = r
                spine_total[cables[i][2]] += r
        for s in spines:
            ups = [i for i, c in enumerate(cables) if c[0] == s]
            for i, r in spread(s, inter_pod * spine_total[s], ups, after).items():
                out[i] = r
        return out

    before, after = rates(False), rates(True)
    now_rates = after if polarized is not None else before

    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": root.name,
                "title": "All-reduce time up since 02:00; every rank slower, no rank behind the others"
                if polarized
                else "Fabric dashboard: one spine port far busier than its neighbours, is the job affected?",
                "window": {"start": _iso(START), "end": _iso(END)},
                "job": {"name": "llm-pretrain", "ranks": len(hosts) * gpus, "gpus_per_node": gpus},
                "reported": "RoCE fabric, no alerts."
                if polarized
                else "Step time looks the same as last week.",
            }
        ),
    )
    words = TIER_WORDS[case.tier_words]
    tier_of = {**{s: 0 for s in leaves}, **{s: 1 for s in spines}, **{s: 2 for s in cores}}
    switches = []
    for sw in [*leaves, *spines, *cores]:
        links = []
        for lo, lp, hi, hp in cables:
            if sw == lo and case.listed in ("both", "lower"):
                links.append({"port": lp, "peer": hi, "peer_port": hp})
            if sw == hi and case.listed in ("both", "upper"):
                links.append({"port": hp, "peer": lo, "peer_port": lp})
        entry: dict = {"name": sw, "links": links}
        if words[tier_of[sw]] is not None:
            entry["tier"] = words[tier_of[sw]]
        switches.append(entry)
    topo = {
        "hosts": [
            {
                "name": h,
                "gpus": [{"index": g} for g in range(gpus)],
                "nics": [
                    {
                        "ibdev": f"mlx5_{j}",
                        "netdev": f"enp{j}s0np0",
                        "port": 1,
                        "link_layer": "Ethernet",
                        "switch": leaf,
                        "switch_port": ports[j],
                    }
                    for j in range(nics)
                ],
            }
            for h, leaf, ports in hosts
        ],
        "ranks": [
            {"rank": r, "host": h, "gpu": g}
            for r, (h, g) in enumerate((h, g) for h, _, _ in hosts for g in range(gpus))
        ],
        "switches": switches,
    }
    _w(root, "topology.json", json.dumps(topo))
    slow = float(rng.uniform(1.6, 2.2)) if polarized else 1.0
    _steps(
        root,
        len(hosts) * gpus,
        rng,
        comm_before=0.3,
        comm_after=0.3 * slow,
        onset=ONSET if polarized else None,
        compute=case.compute,
    )
    for h, _, _ in hosts:
        _w(
            root,
            f"nodes/{h}/collected.json",
            json.dumps({"before": START, "now": END, "boot": START - 86400 * 5}),
        )
        _nvml(root, h, gpus)
    log = [
        f"{hosts[0][0]}:4100:4100 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.10<0>",
        "NCCL version 2.21.5+cuda12.4",
    ]
    devs = " ".join(f"[{j}]mlx5_{j}:1/RoCE" for j in range(nics))
    log += [
        f"{h}:4100:4101 [0] NCCL INFO NET/IB : Using {devs} [RO]; OOB eth0:10.1.0.10<0>" for h, _, _ in hosts
    ]
    _w(root, "job/logs/rank0.log", "\n".join(log) + "\n")

    # The switch side: every port of every cable, both ends, and a few host ports.
    ends: list[tuple[str, str, int]] = []
    for i, (lo, lp, hi, hp) in enumerate(cables):
        ends += [(lo, lp, i), (hi, hp, i)]
    if case.source == "snmp":
        lines = [
            "# HELP ifHCOutOctets The total number of octets transmitted out of the interface.",
            "# TYPE ifHCOutOctets counter",
        ]
        for sw, p, i in ends:
            v = float(rng.integers(10**12, 10**15))
            t = START - 600.0
            while t <= END + 1e-6:
                lines.append(f'ifHCOutOctets{{ifName="{p}",instance="{sw}",job="snmp"}} {v:.0f} {t:.0f}')
                v += (after[i] if polarized and t >= ONSET else before[i]) * 60.0
                t += 60.0
        lines.append("# EOF")
        _w(root, "metrics/switch.om", "\n".join(lines) + "\n")
    else:
        head = (
            "      IFACE  STATE    RX_OK      RX_BPS  RX_UTIL  RX_ERR  RX_DRP  RX_OVR    TX_OK          TX_BPS  TX_UTIL  TX_ERR  TX_DRP  TX_OVR\n"
            "-----------  -----  -------  ----------  -------  ------  ------  ------  -------  --------------  -------  ------  ------  ------\n"
        )
        for sw in [*leaves, *spines, *cores]:
            rows = []
            for s2, p, i in ends:
                if s2 != sw:
                    continue
                mbs = f"{now_rates[i] / 1e6:,.2f} MB/s"
                rows.append(
                    f"{p:>11}      U  1,000  {mbs:>10}    40.00%       0       0     N/A    1,000  {mbs:>14}   40.00%       0       0     N/A\n"
                )
            _w(root, f"switches/{sw}/cmd/show-interfaces-counters.txt", head + "".join(rows))
    return truth


#: Cases that tests parametrize over (names say what varies).
CASES = [
    EcmpCase("leaf-2tier-snmp", seed=1),
    EcmpCase("leaf-arista-ports-upper-listed", style="dotted", listed="upper", seed=2),
    EcmpCase("leaf-cumulus-no-tiers-lower-listed", style="ip", tier_words="none", listed="lower", seed=3),
    EcmpCase("leaf-parallel-cables-t-words", parallel=2, tier_words="t", compute=False, seed=4),
    EcmpCase("leaf-sonic-snapshot-odd-words", source="sonic", tier_words="odd", seed=5),
    EcmpCase("leaf-uneven-placement", uneven=True, style="dotted", seed=6),
    EcmpCase("spine-3tier", where="spine", tiers=3, seed=7),
    EcmpCase(
        "spine-3tier-no-tiers-sonic",
        where="spine",
        tiers=3,
        tier_words="none",
        source="sonic",
        style="ip",
        seed=8,
    ),
]
# Two uplinks (the median of two rates is their mean) and half the uplinks hot (the median falls
# between the groups): a max/median test can never see these.
CASES += [
    EcmpCase("leaf-two-uplinks", uplinks=2, seed=21),
    EcmpCase("leaf-half-hot-sonic", hot=2, source="sonic", style="dotted", seed=22),
    EcmpCase(
        "leaf-two-uplinks-cumulus-no-tiers-upper-listed",
        uplinks=2,
        style="ip",
        tier_words="none",
        listed="upper",
        seed=23,
    ),
    EcmpCase("leaf-half-of-eight-hot-parallel", uplinks=8, hot=4, parallel=2, tier_words="t", seed=24),
    EcmpCase("spine-3tier-two-cores", where="spine", tiers=3, cores=2, seed=25),
    EcmpCase(
        "spine-3tier-half-of-four-cores-sonic",
        where="spine",
        tiers=3,
        cores=4,
        hot=2,
        style="dotted",
        source="sonic",
        seed=26,
    ),
    EcmpCase("leaf-beside-a-drained-spine", drained=True, style="ip", seed=27),
]
CONTROLS = [
    EcmpCase("control-uneven-placement", where="none", uneven=True, seed=11),
    EcmpCase(
        "control-uneven-3tier-no-tiers",
        where="none",
        uneven=True,
        tiers=3,
        tier_words="none",
        style="dotted",
        seed=12,
    ),
    EcmpCase(
        "control-uneven-sonic-upper",
        where="none",
        uneven=True,
        source="sonic",
        listed="upper",
        style="ip",
        seed=13,
    ),
    EcmpCase("control-two-uplinks-uneven", where="none", uplinks=2, uneven=True, seed=31),
    # a drained spine: routing sends the leaves nothing over its cables (not a hash choice)
    EcmpCase("control-drained-spine", where="none", drained=True, seed=32),
    EcmpCase(
        "control-two-uplinks-one-drained-sonic",
        where="none",
        uplinks=2,
        drained=True,
        source="sonic",
        style="ip",
        seed=33,
    ),
    EcmpCase(
        "control-3tier-two-cores-uneven", where="none", tiers=3, cores=2, uneven=True, style="dotted", seed=34
    ),
]

__all__ = ["CASES", "CONTROLS", "EcmpCase", "WINDOW", "write_ecmp"]
