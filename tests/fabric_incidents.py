"""Incidents for the fabric modes that hide the cause away from the job's own parts.

Written from the bundle spec and the format reference only (SONiC ``show pfc counters`` /
``show pfcwd stats``, IEEE8021-PFC-MIB series from snmp_exporter, ``ethtool -S``, InfiniBand
sysfs counters, NCCL INFO lines), never from what the investigator reads:

- **A PFC storm that starts away from the job.** The origin is a switch port (a leaf uplink, a
  spine or core port) or a host outside the job behind a leaf port. Pauses travel against the
  traffic: a device whose buffer for one port fills pauses the ports that feed it, hop by hop
  (leaf -> spine -> core -> spine -> leaf), down to the job's NICs, which only receive pauses.
  Traffic follows up-down routing, so a switch paused on one port pauses exactly the ports where
  traffic toward that port enters it; the storm fades a little at every hop.
- **NCCL held to a subset of its NICs** from the first step: one (or two) NICs of each host carry
  all the traffic, the others idle; the restriction shows in an environment dump, in NCCL's own
  ``NET/IB : Using`` and channel lines, or both.

Each incident varies in names (three naming styles), tiers (2 or 3), NICs per host (4 or 8),
which sources were recorded, and decoys (an old static pause count, a genuinely bad NIC on a spare
host). ``truth`` is returned, never written into the bundle.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

START = 1_795_000_000.0
WINDOW = 5400.0
END = START + WINDOW
ONSET = START + 1800.0

_BUS8 = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
_NIC_BUS8 = ["1a", "2c", "3c", "5e", "9c", "ad", "bc", "dc"]

#: Naming styles: hosts, leaves, spines, cores.
STYLES = {
    "dash": (lambda i: f"gpu-b{100 + i:03d}", "leaf-{:02d}", "spine-{:02d}", "core-{:02d}"),
    "dotted": (lambda i: f"gpu{2200 + i}.dc5.internal", "sw-r{:02d}-t0", "sw-sp{:02d}-t1", "sw-c{:02d}-t2"),
    "ip": (lambda i: f"10-71-{8 + i // 200}-{20 + i % 200}", "tor{}", "spn{}", "sspn{}"),
}


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@dataclass
class Fabric:
    """Hosts, leaves, spines (and cores) with every cable."""

    style: str = "dash"
    tiers: int = 2
    leaves: int = 3
    hosts_per_leaf: int = 3
    nics: int = 8
    spares: int = 1
    link_layer: str = "Ethernet"
    hosts: list[str] = field(default_factory=list)
    job_hosts: list[str] = field(default_factory=list)
    leaf_names: list[str] = field(default_factory=list)
    spine_names: list[str] = field(default_factory=list)
    core_names: list[str] = field(default_factory=list)
    #: (switch, port) -> ("switch", name, port) | ("nic", host, ibdev) | None (nothing listed)
    peer: dict[tuple[str, str], tuple] = field(default_factory=dict)
    tier: dict[str, int] = field(default_factory=dict)
    pod: dict[str, int] = field(default_factory=dict)
    host_leaf: dict[str, str] = field(default_factory=dict)
    unlisted: set[tuple[str, str]] = field(default_factory=set)

    def build(self) -> Fabric:
        host_name, leaf_f, spine_f, core_f = STYLES[self.style]
        self.leaf_names = [leaf_f.format(i + 1) for i in range(self.leaves)]
        pods = 2 if self.tiers == 3 else 1
        spines_per_pod = 2
        self.spine_names = [spine_f.format(i + 1) for i in range(spines_per_pod * pods)]
        self.core_names = [core_f.format(i + 1) for i in range(2)] if self.tiers == 3 else []
        for i, leaf in enumerate(self.leaf_names):
            self.tier[leaf], self.pod[leaf] = 0, (i * pods) // self.leaves
        for i, s in enumerate(self.spine_names):
            self.tier[s], self.pod[s] = 1, i // spines_per_pod
        for c in self.core_names:
            self.tier[c], self.pod[c] = 2, -1
        n = 0
        for leaf in self.leaf_names:
            for k in range(self.hosts_per_leaf):
                h = host_name(n)
                n += 1
                self.hosts.append(h)
                self.host_leaf[h] = leaf
                for j in range(self.nics):
                    self.peer[(leaf, f"Ethernet{4 * (k * self.nics + j)}")] = ("nic", h, f"mlx5_{j}")
        # the last `spares` hosts hold no rank
        self.job_hosts = self.hosts[: len(self.hosts) - self.spares]
        nextport: dict[str, int] = defaultdict(int)

        def cable(a: str, b: str) -> None:
            pa = f"Ethernet{256 + 8 * nextport[a]}"
            pb = f"Ethernet{256 + 8 * nextport[b]}" if self.tier[b] == 0 else f"Ethernet{8 * nextport[b]}"
            if self.tier[a] != 0:
                pa = f"Ethernet{8 * nextport[a]}"
            nextport[a] += 1
            nextport[b] += 1
            self.peer[(a, pa)] = ("switch", b, pb)
            self.peer[(b, pb)] = ("switch", a, pa)

        for leaf in self.leaf_names:
            for s in self.spine_names:
                if self.pod[s] == self.pod[leaf]:
                    cable(leaf, s)
        for s in self.spine_names:
            for c in self.core_names:
                cable(s, c)
        return self

    # -- the job's traffic ------------------------------------------------------------------------
    def below(self, sw: str) -> set[str]:
        """Job hosts under a switch (its subtree in up-down routing)."""
        if self.tier[sw] == 0:
            return {h for h in self.job_hosts if self.host_leaf[h] == sw}
        if self.tier[sw] == 1:
            return {h for lf in self.leaf_names if self.pod[lf] == self.pod[sw] for h in self.below(lf)}
        return set(self.job_hosts)

    def ports(self, sw: str) -> list[str]:
        return sorted((p for (s, p) in self.peer if s == sw), key=lambda p: int(p[8:]))

    def feeders(self, sw: str, paused: str) -> list[str]:
        """Ports where job traffic headed out of ``paused`` enters ``sw``."""
        kind = self.peer[(sw, paused)]
        out = []
        up_paused = kind[0] == "switch" and self.tier[kind[1]] > self.tier[sw]
        for p in self.ports(sw):
            if p == paused:
                continue
            peer = self.peer[(sw, p)]
            if peer is None:
                continue
            if peer[0] == "nic":
                if peer[1] in self.job_hosts:
                    out.append(p)
                continue
            other = peer[1]
            if self.tier[other] > self.tier[sw]:  # an uplink
                if not up_paused:
                    out.append(p)
            elif self.below(other):
                if self.tier[sw] == 2 and kind[0] == "switch" and self.pod[other] == self.pod[kind[1]]:
                    continue  # a spine of the paused pod reaches it directly, not through this core
                out.append(p)
        return out


@dataclass
class Storm:
    """PFC frames per port direction over the window, and per job NIC."""

    tx: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    rx: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    nic_rx: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    nic_tx: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    stormed: set[tuple[str, str]] = field(default_factory=set)


def spread(fab: Fabric, origin: tuple[str, str], *, from_peer: bool, frames: float, rng) -> Storm:
    """Pauses from an origin, hop by hop against the traffic.

    ``origin`` is a switch port. ``from_peer``: what is cabled to that port sends the pauses (a
    host's NIC); otherwise the switch sends them out of that port.
    """
    st = Storm()
    queue: list[tuple[str, str, float]] = []
    sw, port = origin
    if from_peer:
        st.rx[origin] += frames
        st.stormed.add(origin)
        peer = fab.peer.get(origin)
        if peer and peer[0] == "nic":
            st.nic_tx[(peer[1], peer[2])] += frames
        queue.append((sw, port, frames * rng.uniform(0.6, 0.9)))
    else:
        st.tx[origin] += frames
        peer = fab.peer[origin]
        if peer[0] == "switch":
            st.rx[(peer[1], peer[2])] += frames
            queue.append((peer[1], peer[2], frames * rng.uniform(0.6, 0.9)))
        else:
            st.nic_rx[(peer[1], peer[2])] += frames
    seen = {sw} if not from_peer else set()
    while queue:
        s, paused, level = queue.pop(0)
        if s in seen:
            continue
        seen.add(s)
        for p in fab.feeders(s, paused):
            amount = level * rng.uniform(0.85, 1.0)
            st.tx[(s, p)] += amount
            peer = fab.peer[(s, p)]
            if peer[0] == "nic":
                st.nic_rx[(peer[1], peer[2])] += amount
            else:
                st.rx[(peer[1], peer[2])] += amount
                queue.append((peer[1], peer[2], amount * rng.uniform(0.6, 0.9)))
    return st


# -- formats -----------------------------------------------------------------------------------


def _num(v: float, commas: bool) -> str:
    return f"{int(v):,}" if commas else str(int(v))


def pfc_counters_text(ports: list[str], rx: dict[str, float], tx: dict[str, float], commas: bool) -> str:
    """``show pfc counters`` as sonic-utilities prints it (tabulate 'simple'), lossless queue 3."""
    out = []
    for head, vals in (("Port Rx", rx), ("Port Tx", tx)):
        cells = [[p, "0", "0", "0", _num(vals.get(p, 0), commas), "0", "0", "0", "0"] for p in ports]
        hdr = [head, *(f"PFC{i}" for i in range(8))]
        widths = [max(len(r[i]) for r in [hdr, *cells]) for i in range(9)]
        out.append("  ".join(h.rjust(w) for h, w in zip(hdr, widths, strict=True)))
        out.append("  ".join("-" * w for w in widths))
        out.extend("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells)
        out.append("")
    return "\n".join(out)


def pfcwd_text(ports: list[str], storms: dict[str, tuple[str, int, int, int]]) -> str:
    rows = [
        [
            "QUEUE",
            "STATUS",
            "STORM DETECTED/RESTORED",
            "TX OK/DROP",
            "RX OK/DROP",
            "TX LAST OK/DROP",
            "RX LAST OK/DROP",
        ]
    ]
    for p in ports:
        status, det, res, drop = storms.get(p, ("operational", 0, 0, 0))
        rows.append([f"{p}:3", status, f"{det}/{res}", f"0/{drop}", "0/0", f"0/{drop}", "0/0"])
    widths = [max(len(r[i]) for r in rows) for i in range(7)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def ethtool_text(stats: dict[str, int]) -> str:
    return "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in stats.items())


def _series(
    name: str, labels: str, start_value: float, rate_from: list[tuple[float, float]], step: float = 60.0
) -> list[str]:
    """Counter samples from START-600 to END; ``rate_from``: (time, frames/s from then on)."""
    out, v, t = [], start_value, START - 600
    last = t
    while t <= END + 1e-6:
        r = 0.0
        for since, rate in rate_from:
            if t > since:
                r = rate
        v += r * (t - last)
        last = t
        out.append(f"{name}{{{labels}}} {v:.0f} {t:.0f}")
        t += step
    return out


# -- the bundle -------------------------------------------------------------------------------


def _topology(fab: Fabric, gpus: int, listed_spares: bool = True) -> dict:
    hosts = []
    for i, h in enumerate(fab.hosts):
        if not listed_spares and h not in fab.job_hosts:
            continue
        leaf = fab.host_leaf[h]
        nics = []
        for j in range(fab.nics):
            port = next(p for (s, p), v in fab.peer.items() if s == leaf and v == ("nic", h, f"mlx5_{j}"))
            nics.append(
                {
                    "ibdev": f"mlx5_{j}",
                    "netdev": (
                        f"enp{int(_NIC_BUS8[j], 16)}s0np0"
                        if fab.link_layer == "Ethernet"
                        else f"ibp{int(_NIC_BUS8[j], 16)}s0"
                    ),
                    "pci_bus_id": f"0000:{_NIC_BUS8[j]}:00.0",
                    "port": 1,
                    "link_layer": fab.link_layer,
                    "switch": leaf,
                    "switch_port": port,
                }
            )
        hosts.append(
            {
                "name": h,
                "rack": f"r{i // fab.hosts_per_leaf + 1:02d}",
                "gpus": [
                    {
                        "index": g,
                        "pci_bus_id": f"00000000:{_BUS8[g].upper()}:00.0",
                        "uuid": f"GPU-{i:04d}-{g}",
                    }
                    for g in range(gpus)
                ],
                "nics": nics,
            }
        )
    switches = []
    for sw in [*fab.leaf_names, *fab.spine_names, *fab.core_names]:
        links = [
            {"port": p, "peer": v[1], "peer_port": v[2]}
            for (s, p), v in sorted(fab.peer.items())
            if s == sw and v is not None and v[0] == "switch"
        ]
        switches.append({"name": sw, "tier": ("leaf", "spine", "core")[fab.tier[sw]], "links": links})
    ranks = [
        {"rank": r, "host": h, "gpu": g}
        for r, (h, g) in enumerate((h, g) for h in fab.job_hosts for g in range(gpus))
    ]
    return {"hosts": hosts, "ranks": ranks, "switches": switches}


def _steps(
    root: Path, ranks: int, rng, *, comm_after: float, comm_before: float, onset: float | None, compute: bool
) -> None:
    rows = ["step,rank,start_unix,duration_s" + (",compute_s" if compute else "")]
    t, s = START + 5, 0
    while t < END - 5:
        comp = 1.0 + rng.normal(0, 0.004, ranks)
        comm = comm_after if onset is None or t >= onset else comm_before
        dur = comp.max() + comm
        for r in range(ranks):
            rows.append(
                f"{s},{r},{t:.3f},{dur + rng.normal(0, 0.0008):.4f}" + (f",{comp[r]:.4f}" if compute else "")
            )
        t += 20 * (dur + 0.05)  # the job logs every 20th step
        s += 20
    _w(root, "job/steps.csv", "\n".join(rows) + "\n")


def _nvml(root: Path, host: str, gpus: int) -> None:
    devs = [
        {
            "index": g,
            "uuid": f"GPU-{host}-{g}",
            "pci_bus_id": f"00000000:{_BUS8[g].upper()}:00.0",
            "name": "NVIDIA H100 80GB HBM3",
            "nvmlDeviceGetCurrPcieLinkGeneration": 5,
            "nvmlDeviceGetMaxPcieLinkGeneration": 5,
            "nvmlDeviceGetCurrPcieLinkWidth": 16,
            "nvmlDeviceGetMaxPcieLinkWidth": 16,
            "nvmlDeviceGetTemperature": 58 + g % 4,
            "nvmlDeviceGetPowerUsage": 540000,
            "nvmlDeviceGetEnforcedPowerLimit": 700000,
            "nvmlDeviceGetClockInfo": {"sm": 1980, "mem": 2619},
            "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
            "nvmlDeviceGetCurrentClocksEventReasons": 0,
            "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
            "nvmlDeviceGetRemappedRows": {
                "corrected": 0,
                "uncorrected": 0,
                "pending": False,
                "failure": False,
            },
        }
        for g in range(gpus)
    ]
    _w(root, f"nodes/{host}/nvml.json", json.dumps({"driver_version": "550.90.07", "devices": devs}))


@dataclass
class NicState:
    """Counter deltas over the window of one NIC, and its static totals."""

    xmit_words: float = 0.0
    rcv_words: float = 0.0
    xmit_wait: float = 0.0
    tx_pause: float = 0.0
    rx_pause: float = 0.0
    static_tx_pause: float = 0.0
    symbol_errors: float = 0.0
    rate: str = "400 Gb/sec (4X NDR)"


def _write_nic(
    root: Path, fab: Fabric, host: str, j: int, s: NicState, rng, *, ethtool: bool, sysfs: bool
) -> None:
    ib = f"mlx5_{j}"
    netdev = (
        f"enp{int(_NIC_BUS8[j], 16)}s0np0"
        if fab.link_layer == "Ethernet"
        else f"ibp{int(_NIC_BUS8[j], 16)}s0"
    )
    base = {k: float(rng.integers(10**6, 10**9)) for k in ("x", "r", "w")}
    for snap, frac in (("before/", 0.0), ("", 1.0)):
        if sysfs:
            d = f"nodes/{host}/{snap}sys/class/infiniband/{ib}/ports/1"
            _w(root, f"{d}/state", "4: ACTIVE\n")
            _w(root, f"{d}/phys_state", "5: LinkUp\n")
            _w(root, f"{d}/rate", s.rate + "\n")
            _w(root, f"{d}/link_layer", ("Ethernet" if fab.link_layer == "Ethernet" else "InfiniBand") + "\n")
            c = {
                "port_xmit_data": base["x"] + frac * s.xmit_words,
                "port_rcv_data": base["r"] + frac * s.rcv_words,
                "port_xmit_wait": base["w"] + frac * s.xmit_wait,
                "port_rcv_errors": 0,
                "symbol_error": 3 + frac * s.symbol_errors,
                "link_downed": 0,
                "link_error_recovery": 0,
            }
            for k, v in c.items():
                _w(root, f"{d}/counters/{k}", f"{int(v)}\n")
        if ethtool and fab.link_layer == "Ethernet":
            stats = {
                "rx_bytes_phy": int(base["r"] * 4 + frac * s.rcv_words * 4),
                "tx_bytes_phy": int(base["x"] * 4 + frac * s.xmit_words * 4),
                "rx_prio3_pause": int(1200 + frac * s.rx_pause),
                "tx_prio3_pause": int(40 + s.static_tx_pause + frac * s.tx_pause),
                "rx_prio3_pause_duration": int(3600 + frac * s.rx_pause * 2),
                "tx_prio3_pause_duration": int(90 + frac * s.tx_pause * 2),
                "tx_pause_storm_warning_events": 0,
                "tx_pause_storm_error_events": 0,
                "rx_discards_phy": 0,
                "rx_out_of_buffer": 0,
                "link_down_events_phy": 0,
                "rx_symbol_err_phy": int(frac * s.symbol_errors),
                "rx_crc_errors_phy": 0,
            }
            _w(root, f"nodes/{host}/{snap}cmd/ethtool-S-{netdev}.txt", ethtool_text(stats))


def _nccl_lines(
    fab: Fabric,
    gpus: int,
    used: list[int],
    *,
    env_lines: list[str],
    using: bool,
    channels: bool,
    host_list: list[str] | None = None,
) -> str:
    """rank 0's host log: NCCL INFO lines of every local rank."""
    out = []
    tl = "RoCE" if fab.link_layer == "Ethernet" else "IB"
    hosts = host_list or fab.job_hosts[:1]
    for h in hosts:
        hi = fab.job_hosts.index(h)
        for g in range(gpus):
            pre = f"{h}:{4100 + g}:{4200 + g} [{g}] NCCL INFO "
            if g == 0 and hi == 0:
                out.append(f"{h}:{4100}:{4100} [0] NCCL INFO Bootstrap : Using eth0:10.1.{hi}.{g + 10}<0>")
                out.append("NCCL version 2.21.5+cuda12.4")
            out.extend(pre + e for e in env_lines)
            if using:
                devs = " ".join(f"[{k}]mlx5_{d}:1/{tl}" for k, d in enumerate(used))
                out.append(pre + f"NET/IB : Using {devs} [RO]; OOB eth0:10.1.{hi}.{g + 10}<0>")
            out.append(pre + "Using network IB")
            if channels:
                peer = (hi + 1) % len(fab.job_hosts)
                for c in range(4):
                    dev = used[(g + c) % len(used)] if len(used) > 1 else 0
                    idx = used.index(dev) if dev in used else 0
                    out.append(
                        pre
                        + f"Channel {c:02d}/0 : {hi * gpus + g}[{_BUS8[g]}000] -> {peer * gpus + g}[{_BUS8[g]}000] [send] via NET/IB/{idx}/GDRDMA"
                    )
            out.append(
                pre
                + f"comm 0x55d1c0{hi}{g} rank {hi * gpus + g} nranks {len(fab.job_hosts) * gpus} cudaDev {g} nvmlDev {g} busId {_BUS8[g]}000 commId 0x7a1e - Init COMPLETE"
            )
    return "\n".join(out) + "\n"


def _incident(root: Path, fab: Fabric, gpus: int, title: str, reported: str = "") -> None:
    _w(
        root,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": root.name,
                "title": title,
                "window": {"start": _iso(START), "end": _iso(END)},
                "job": {"name": "llm-pretrain", "ranks": len(fab.job_hosts) * gpus, "gpus_per_node": gpus},
                "reported": reported,
            }
        ),
    )


# -- PFC storms -------------------------------------------------------------------------------


@dataclass
class StormCase:
    """One pause-storm incident; ``origin`` picks where it starts."""

    name: str
    origin: str  # "leaf-uplink" | "spine-port" | "core-port" | "outside-host" | "unlisted-port" | "job-nic"
    style: str = "dash"
    tiers: int = 2
    nics: int = 8
    switch_source: str = "sonic"  # "sonic" | "series" | "series-tx" | "series-rx" (one direction only)
    host_counters: bool = True
    commas: bool = True
    decoy_static: bool = False
    decoy_bad_nic: bool = False
    #: Counters cleared when the window opened: nothing counts but the storm and every leaf's light
    #: pausing of its own host ports (a few thousand frames each, over the absolute floor).
    cleared: bool = False
    #: Host ports the storm reaches whose PFC watchdog reports ``stormed`` while their own
    #: received-PFC count reads 0 (a watchdog that contradicts the counters, on victims).
    watchdog_on_victims: int = 0
    compute: bool = True
    seed: int = 0


def write_storm(root: Path, case: StormCase) -> dict:
    """Write the incident; returns its truth."""
    rng = np.random.default_rng(case.seed)
    fab = Fabric(
        style=case.style,
        tiers=case.tiers,
        nics=case.nics,
        leaves=4 if case.tiers == 3 else 3,
        spares=2 if case.decoy_bad_nic else 1,
    ).build()
    gpus = 8
    frames = float(rng.uniform(2.5e6, 8e6))
    if case.origin == "none":
        st = Storm()
        truth = {"root_cause": "healthy", "component": None}
        listed_spares = True
    elif case.origin in ("outside-host", "unlisted-port"):
        spare = fab.hosts[-1]
        leaf = fab.host_leaf[spare]
        j = int(rng.integers(0, fab.nics))
        port = next(p for (s, p), v in fab.peer.items() if s == leaf and v == ("nic", spare, f"mlx5_{j}"))
        origin = (leaf, port)
        st = spread(fab, origin, from_peer=True, frames=frames, rng=rng)
        truth = {"root_cause": "pfc_pause_storm", "component": f"{leaf}/{port}"}
        listed_spares = case.origin == "outside-host"
    elif case.origin == "job-nic":
        h = fab.job_hosts[int(rng.integers(0, len(fab.job_hosts)))]
        j = int(rng.integers(0, fab.nics))
        leaf = fab.host_leaf[h]
        port = next(p for (s, p), v in fab.peer.items() if s == leaf and v == ("nic", h, f"mlx5_{j}"))
        st = spread(fab, (leaf, port), from_peer=True, frames=frames, rng=rng)
        truth = {"root_cause": "pfc_pause_storm", "component": f"{h}/mlx5_{j}"}
        listed_spares = True
    else:
        if case.origin == "leaf-uplink":
            sw = fab.leaf_names[int(rng.integers(0, len(fab.leaf_names)))]
            cands = [p for p in fab.ports(sw) if fab.peer[(sw, p)][0] == "switch"]
        elif case.origin == "spine-port":
            sw = fab.spine_names[int(rng.integers(0, len(fab.spine_names)))]
            cands = [
                p
                for p in fab.ports(sw)
                if fab.peer[(sw, p)][0] == "switch" and fab.tier[fab.peer[(sw, p)][1]] == 0
            ]
        else:
            sw = fab.core_names[0]
            cands = fab.ports(sw)
        port = cands[int(rng.integers(0, len(cands)))]
        st = spread(fab, (sw, port), from_peer=False, frames=frames, rng=rng)
        truth = {"root_cause": "pfc_pause_storm", "component": f"{sw}/{port}"}
        listed_spares = True
    if case.origin == "unlisted-port":
        fab.unlisted.add(origin)
    storm = case.origin != "none"
    _incident(
        root,
        fab,
        gpus,
        "All-reduce time up since 02:00; every rank slower, no rank behind the others"
        if storm
        else "Weekly fabric review of the training pod",
        "RoCE fabric.",
    )
    topo = _topology(fab, gpus, listed_spares=listed_spares)
    _w(root, "topology.json", json.dumps(topo))
    _steps(
        root,
        len(fab.job_hosts) * gpus,
        rng,
        comm_before=0.25,
        comm_after=0.25 * rng.uniform(1.8, 2.6) if storm else 0.25,
        onset=ONSET,
        compute=case.compute,
    )
    # switch side
    static: tuple[str, str] | None = None
    if case.decoy_static:
        # an old storm on a port of the spare's leaf: counted last week, nothing since
        leaf = fab.leaf_names[-1]
        static = (leaf, fab.ports(leaf)[1])
    victims = sorted(
        (sw, p)
        for (sw, p), n in st.tx.items()
        if n > 0 and (fab.peer.get((sw, p)) or ("",))[0] == "nic" and fab.peer[(sw, p)][1] in fab.job_hosts
    )
    decoys = (
        {victims[int(i)] for i in rng.choice(len(victims), case.watchdog_on_victims, replace=False)}
        if case.watchdog_on_victims
        else set()
    )
    light: dict[tuple[str, str], float] = {}  # (host, ibdev) -> light pauses its leaf sent it
    for sw in [*fab.leaf_names, *fab.spine_names, *fab.core_names]:
        ports = fab.ports(sw)
        noise_rx = {p: float(rng.integers(0, 3000)) for p in ports}
        noise_tx = {p: float(rng.integers(0, 3000)) for p in ports}
        if case.cleared:
            noise_rx = {p: 0.0 for p in ports}
            noise_tx = {p: 0.0 for p in ports}
            for p in ports:
                peer = fab.peer.get((sw, p))
                if peer and peer[0] == "nic":
                    noise_tx[p] = float(rng.integers(1_000, 3_000))
                    light[(peer[1], peer[2])] = noise_tx[p]
        for d_sw, d_port in decoys:
            if d_sw == sw:
                noise_rx[d_port] = 0.0
        if case.switch_source == "sonic":
            rx = {p: noise_rx[p] + st.rx.get((sw, p), 0) for p in ports}
            tx = {p: noise_tx[p] + st.tx.get((sw, p), 0) for p in ports}
            wd = {}
            for p in ports:
                if (sw, p) in st.stormed:
                    wd[p] = ("stormed", 2, 1, int(st.rx[(sw, p)] * 3))
            for d_sw, d_port in decoys:
                if d_sw == sw:
                    wd[d_port] = ("stormed", 1, 0, int(st.tx[(sw, d_port)]))
            if static and static[0] == sw:
                rx[static[1]] += 1_900_000
                wd[static[1]] = ("operational", 1, 1, 220_000)
            _w(
                root,
                f"switches/{sw}/cmd/show-pfc-counters.txt",
                pfc_counters_text(ports, rx, tx, case.commas),
            )
            if fab.tier[sw] == 0:
                _w(root, f"switches/{sw}/cmd/show-pfcwd-stats.txt", pfcwd_text(ports, wd))
        else:
            lines = []
            for p in ports:
                lab = f'instance="{sw}",ifName="{p}"'
                for metric, vals, noise in (
                    ("ieee8021PfcRequests", st.tx, noise_tx),
                    ("ieee8021PfcIndications", st.rx, noise_rx),
                ):
                    if case.switch_source == f"series-{'rx' if metric.endswith('Requests') else 'tx'}":
                        continue  # this exporter was set up for one direction only
                    start = float(rng.integers(10**4, 10**6))
                    if static and (sw, p) == static and metric == "ieee8021PfcIndications":
                        start += 9_000_000
                    rate = vals.get((sw, p), 0.0) / (END - ONSET)
                    lines.extend(
                        _series(
                            metric,
                            lab,
                            start,
                            [
                                (START - 601, noise[p] / (WINDOW + 600)),
                                (ONSET, rate + noise[p] / (WINDOW + 600)),
                            ],
                        )
                    )
            _w(
                root,
                f"metrics/switch-{sw}.om",
                "# TYPE ieee8021PfcRequests counter\n# TYPE ieee8021PfcIndications counter\n"
                + "\n".join(lines)
                + "\n# EOF\n",
            )
    # host side
    node_hosts = list(fab.job_hosts)
    bad_host = fab.hosts[-2] if case.decoy_bad_nic else None
    if bad_host:
        node_hosts.append(bad_host)  # a spare with node data and a genuinely bad NIC
    for h in node_hosts:
        if case.origin in ("outside-host", "unlisted-port") and h == fab.hosts[-1]:
            continue  # the origin host: outside the job, nothing collected
        _w(
            root,
            f"nodes/{h}/collected.json",
            json.dumps({"before": START, "now": END, "boot": START - 86400 * 9}),
        )
        _nvml(root, h, gpus)
        for j in range(fab.nics):
            s = NicState(
                xmit_words=2.5e9 * WINDOW / 4 * rng.uniform(0.9, 1.1),
                rcv_words=2.5e9 * WINDOW / 4 * rng.uniform(0.9, 1.1),
            )
            s.xmit_wait = s.xmit_words * 0.02
            s.rx_pause = (
                st.nic_rx.get((h, f"mlx5_{j}"), 0.0)
                + light.get((h, f"mlx5_{j}"), 0.0)
                + float(rng.integers(0, 200))
            )
            s.tx_pause = st.nic_tx.get((h, f"mlx5_{j}"), 0.0) + float(rng.integers(0, 100))
            if s.rx_pause > 1e5:
                s.xmit_wait *= 6  # paused: it waits to send
            if case.decoy_static and h == fab.job_hosts[1] and j == 2:
                s.static_tx_pause = 3_400_000  # an old storm, counted before the window
            if h == bad_host and j == 1:
                s.rate, s.symbol_errors = "200 Gb/sec (2X NDR)", 4000
                s.xmit_words = s.rcv_words = 1e6
            _write_nic(root, fab, h, j, s, rng, ethtool=case.host_counters, sysfs=case.host_counters)
    _w(
        root,
        "job/logs/rank0.log",
        _nccl_lines(fab, gpus, list(range(fab.nics)), env_lines=[], using=True, channels=True),
    )
    return truth


# -- NCCL held to a subset of the NICs --------------------------------------------------------


@dataclass
class RailCase:
    """A job launched with NCCL on fewer NICs than the hosts have."""

    name: str
    nics: int = 8
    used: tuple[int, ...] = (0,)
    presentation: str = "env"  # "env" (a launcher's env dump) | "info" (NCCL INFO lines only) | "both" | "counters" (no NCCL lines: only the hosts' counters show it)
    env_form: str = "export"  # "export" | "dump" | "nccl" | "exclude" | "json"
    link_layer: str = "InfiniBand"
    style: str = "dash"
    busy_pauses: bool = False
    decoy_bad_nic: bool = False
    counters: bool = True
    compute: bool = True
    control: bool = False
    """Every NIC used and nothing slow: a healthy job whose logs name NCCL_IB_HCA all the same."""
    title: str | None = None
    """The incident's title and report, when not the defaults (a stated step time)."""
    reported: str | None = None
    switch_load: bool = False
    """The leaves' ``show pfc counters``: the busy job ports receive a spread of load pauses (a few
    hundred to just over a thousand frames) from their leaf, which receives none."""
    seed: int = 0


def write_rails(root: Path, case: RailCase) -> dict:
    rng = np.random.default_rng(case.seed)
    fab = Fabric(
        style=case.style, nics=case.nics, leaves=2, hosts_per_leaf=3, link_layer=case.link_layer
    ).build()
    gpus = 8
    if case.control:
        case.used = tuple(range(case.nics))
    if case.title is not None:
        _incident(root, fab, gpus, case.title, case.reported or "")
    elif case.control:
        _incident(root, fab, gpus, "Routine check after the launch-script change", "")
    else:
        _incident(
            root,
            fab,
            gpus,
            "Step time 1.9 s since the job started; the same model used to do 1.1 s per step on this pod",
            "New launch script this week; nothing failed, no alerts.",
        )
    _w(root, "topology.json", json.dumps(_topology(fab, gpus)))
    _steps(
        root,
        len(fab.job_hosts) * gpus,
        rng,
        comm_before=0.0,
        comm_after=0.1 if case.control else 0.9,
        onset=None,
        compute=case.compute,
    )
    used_names = [f"mlx5_{u}" for u in case.used]
    value = ",".join(used_names)
    env_lines: list[str] = []
    header: list[str] = []
    if case.presentation in ("env", "both"):
        if case.env_form == "export":
            header = [
                "+ export NCCL_DEBUG=INFO",
                f"+ export NCCL_IB_HCA={value}",
                "+ torchrun --nnodes 5 --nproc-per-node 8 train.py",
            ]
        elif case.env_form == "dump":
            header = [
                "[launcher] environment:",
                "  NCCL_DEBUG: INFO",
                f"  NCCL_IB_HCA: ={','.join(n + ':1' for n in used_names)}",
                "  NCCL_IB_GID_INDEX: 3",
            ]
        elif case.env_form == "exclude":
            others = ",".join(f"mlx5_{k}" for k in range(case.nics) if k not in case.used)
            header = [f"+ export NCCL_IB_HCA=^{others}"]
        elif case.env_form == "json":
            header = [
                'env: [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "NCCL_IB_HCA", "value": "'
                + value
                + '"}]'
            ]
        else:
            env_lines = [f"NCCL_IB_HCA set by environment to {value}"]
    using = case.presentation in ("info", "both")
    log = "\n".join(header) + ("\n" if header else "")
    if case.presentation == "counters":
        # NCCL's debug lines off: the trainer's own lines say nothing of transports or NICs
        log += "".join(
            f"[rank0] step {k * 20} loss {3.2 - 0.01 * k:.3f} lr 3.0e-04 grad_norm 1.02\n" for k in range(20)
        )
    else:
        log += _nccl_lines(
            fab,
            gpus,
            list(case.used) if using or case.presentation == "both" else list(case.used),
            env_lines=env_lines,
            using=using,
            channels=using,
        )
    _w(root, "job/logs/rank0.log", log)
    if case.switch_load:
        busy = {(h, f"mlx5_{u}") for h in fab.job_hosts for u in case.used}
        for sw in [*fab.leaf_names, *fab.spine_names]:
            ports = fab.ports(sw)
            tx = {
                p: float(rng.uniform(380, 1150))
                for p in ports
                if (peer := fab.peer[(sw, p)]) is not None and peer[0] == "nic" and (peer[1], peer[2]) in busy
            }
            _w(root, f"switches/{sw}/cmd/show-pfc-counters.txt", pfc_counters_text(ports, {}, tx, True))
            if fab.tier[sw] == 0:
                _w(root, f"switches/{sw}/cmd/show-pfcwd-stats.txt", pfcwd_text(ports, {}))
    node_hosts = list(fab.job_hosts) + ([fab.hosts[-1]] if case.decoy_bad_nic else [])
    if case.counters:
        per_host_words = 2.5e9 * WINDOW / 4 * 2  # what the job sends per host over the window
        for h in node_hosts:
            _w(
                root,
                f"nodes/{h}/collected.json",
                json.dumps({"before": START, "now": END, "boot": START - 86400 * 4}),
            )
            _nvml(root, h, gpus)
            for j in range(fab.nics):
                s = NicState()
                if h in fab.job_hosts and j in case.used:
                    s.xmit_words = s.rcv_words = per_host_words / len(case.used) * rng.uniform(0.95, 1.05)
                    s.xmit_wait = s.xmit_words * 0.4
                    if case.busy_pauses and fab.link_layer == "Ethernet":
                        s.tx_pause = float(rng.uniform(2e5, 6e5))
                        s.rx_pause = float(rng.uniform(1e5, 4e5))
                else:
                    s.xmit_words = s.rcv_words = float(rng.uniform(1e4, 5e4))  # management chatter
                if case.decoy_bad_nic and h == fab.hosts[-1] and j == 2:
                    s.rate, s.symbol_errors = "200 Gb/sec (2X NDR)", 5000
                _write_nic(root, fab, h, j, s, rng, ethtool=True, sysfs=True)
    if case.control:
        return {"root_cause": "healthy", "component": None}
    return {"root_cause": "nccl_misconfiguration", "component": "job"}
