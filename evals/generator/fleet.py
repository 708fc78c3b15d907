"""Fleet model: hosts with 8 GPUs and their NICs, racks, leaf/spine switches, rank placement."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import naming

GPUS_PER_NODE = 8


@dataclass(frozen=True)
class Pci:
    """One PCI function; prints itself the four ways real tools do."""

    bus: int
    domain: int = 0
    dev: int = 0
    fn: int = 0

    @property
    def sysfs(self) -> str:
        return f"{self.domain:04x}:{self.bus:02x}:{self.dev:02x}.{self.fn}"

    @property
    def nvml(self) -> str:
        return f"{self.domain:08X}:{self.bus:02X}:{self.dev:02X}.{self.fn}"

    @property
    def lspci(self) -> str:
        return f"{self.bus:02x}:{self.dev:02x}.{self.fn}"

    @property
    def xid(self) -> str:
        return f"PCI:{self.domain:04x}:{self.bus:02x}:{self.dev:02x}"

    @property
    def nccl(self) -> str:
        return f"{self.bus:x}{self.dev:02x}{self.fn:01x}".lstrip("0") or "0"


@dataclass
class Gpu:
    index: int
    pci: Pci
    uuid: str
    serial: str


@dataclass
class Nic:
    index: int
    ibdev: str
    netdev: str
    pci: Pci
    link_layer: str  # "InfiniBand" | "Ethernet"
    port: int = 1
    switch: str = ""
    switch_port: str = ""
    guid: str = ""


@dataclass
class Host:
    name: str
    rack: str
    ip: str
    gpus: list[Gpu]
    nics: list[Nic]
    spare: bool = False


@dataclass
class Link:
    port: str
    peer: str
    peer_port: str


@dataclass
class Switch:
    name: str
    tier: str  # "leaf" | "spine"
    links: list[Link] = field(default_factory=list)
    down_ports: dict[str, tuple[str, str]] = field(default_factory=dict)  # port -> (host, ibdev)


@dataclass
class Fleet:
    hosts: list[Host]  # file order of topology.json
    job_hosts: list[str]  # job order: job host k holds ranks 8k..8k+7
    switches: list[Switch]
    link_layer: str
    bus_layout: str

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    @property
    def n_ranks(self) -> int:
        return len(self.job_hosts) * GPUS_PER_NODE

    def rank_of(self, host: str, gpu: int) -> int | None:
        if host not in self.job_hosts:
            return None
        return self.job_hosts.index(host) * GPUS_PER_NODE + gpu

    def place(self, rank: int) -> tuple[str, int]:
        return self.job_hosts[rank // GPUS_PER_NODE], rank % GPUS_PER_NODE

    def leaves(self) -> list[Switch]:
        return [s for s in self.switches if s.tier == "leaf"]

    def switch(self, name: str) -> Switch:
        for s in self.switches:
            if s.name == name:
                return s
        raise KeyError(name)

    def rack_of(self, host: str) -> str:
        return self.host(host).rack


def _ip_for(name: str, i: int, scheme: str, rng_base: int) -> str:
    if scheme == "ip":
        return name.replace("-", ".")
    return f"10.{(rng_base >> 8) % 200 + 20}.{(rng_base + i) // 250 % 250}.{(rng_base + i) % 250 + 2}"


def build_fleet(
    rng: np.random.Generator,
    n_job_hosts: int,
    n_spares: int = 0,
    host_scheme: str = "alpha",
    switch_scheme: str = "leafspine",
    link_layer: str = "InfiniBand",
    bus_layout: str = "hgx",
    netdev_style: str = "enp",
    hosts_per_rack: int = 4,
    hosts_per_leaf: int = 4,
    n_spines: int = 4,
    shuffle_file_order: bool = False,
    spares_first: bool = False,
) -> Fleet:
    n_total = n_job_hosts + n_spares
    names = naming.host_names(host_scheme, n_total, rng, hosts_per_rack)
    layout = naming.BUS_LAYOUTS[bus_layout]
    ip_base = int(rng.integers(0, 60000))
    hosts: list[Host] = []
    for i, (name, rack) in enumerate(names):
        gpus = [
            Gpu(index=g, pci=Pci(layout["gpu"][g]), uuid=naming.gpu_uuid(rng), serial=naming.serial(rng))
            for g in range(GPUS_PER_NODE)
        ]
        nics = []
        for k in range(GPUS_PER_NODE):
            bus = layout["nic"][k]
            nics.append(
                Nic(
                    index=k,
                    ibdev=f"mlx5_{k}",
                    netdev=naming.netdev_name(netdev_style, bus, k, link_layer),
                    pci=Pci(bus),
                    link_layer=link_layer,
                    guid="%04x:%04x:%04x:%04x" % tuple(int(x) for x in rng.integers(0, 65536, 4)),
                )
            )
        hosts.append(
            Host(name=name, rack=rack, ip=_ip_for(name, i, host_scheme, ip_base), gpus=gpus, nics=nics)
        )
    # spares are the last hosts of the fleet numbering; the job runs on the others
    job_hosts = [h.name for h in hosts[:n_job_hosts]]
    for h in hosts[n_job_hosts:]:
        h.spare = True

    # switches: one leaf per `hosts_per_leaf` hosts (every NIC of a host on its leaf), spines above
    n_leaf = max(1, -(-n_total // hosts_per_leaf))
    if n_leaf == 1:
        n_spines = max(2, min(n_spines, 2))
    racks = sorted({h.rack for h in hosts}, key=lambda r: [h.rack for h in hosts].index(r))
    leaf_names, spine_names = naming.switch_names(switch_scheme, n_leaf, n_spines, racks, rng)
    eth = link_layer == "Ethernet"
    leaves = [Switch(name=n, tier="leaf") for n in leaf_names]
    spines = [Switch(name=n, tier="spine") for n in spine_names]
    for i, h in enumerate(hosts):
        leaf = leaves[i // hosts_per_leaf]
        slot = i % hosts_per_leaf
        for nic in h.nics:
            k = slot * GPUS_PER_NODE + nic.index
            port = f"Ethernet{4 * k}" if eth else f"{k + 1}"
            nic.switch, nic.switch_port = leaf.name, port
            leaf.down_ports[port] = (h.name, nic.ibdev)
    n_up = 8
    for li, leaf in enumerate(leaves):
        for j in range(n_up):
            spine = spines[j % len(spines)]
            sp_port_idx = li * (n_up // len(spines) or 1) + j // len(spines)
            up = f"Ethernet{256 + 8 * j}" if eth else f"{41 + j}"
            sp = f"Ethernet{8 * sp_port_idx}" if eth else f"{sp_port_idx + 1}"
            leaf.links.append(Link(port=up, peer=spine.name, peer_port=sp))
            spine.links.append(Link(port=sp, peer=leaf.name, peer_port=up))

    file_hosts = list(hosts)
    if shuffle_file_order:
        order = rng.permutation(len(file_hosts))
        file_hosts = [file_hosts[int(k)] for k in order]
    elif spares_first and n_spares:
        file_hosts = hosts[n_job_hosts:] + hosts[:n_job_hosts]
    # the job's own rank order is a permutation of its hosts too (the scheduler's order)
    return Fleet(
        hosts=file_hosts,
        job_hosts=job_hosts,
        switches=leaves + spines,
        link_layer=link_layer,
        bus_layout=bus_layout,
    )


def permute_job_order(fleet: Fleet, rng: np.random.Generator) -> None:
    """Scheduler placed ranks in an order unrelated to host numbering."""
    order = rng.permutation(len(fleet.job_hosts))
    fleet.job_hosts = [fleet.job_hosts[int(k)] for k in order]


def topology_json(
    fleet: Fleet, include_ranks: bool, rng: np.random.Generator | None = None, shuffle_ranks: bool = False
) -> dict:
    hosts = []
    for h in fleet.hosts:
        hosts.append(
            {
                "name": h.name,
                "rack": h.rack,
                "gpus": [{"index": g.index, "pci_bus_id": g.pci.nvml, "uuid": g.uuid} for g in h.gpus],
                "nics": [
                    {
                        "ibdev": n.ibdev,
                        "netdev": n.netdev,
                        "pci_bus_id": n.pci.sysfs,
                        "port": n.port,
                        "link_layer": n.link_layer,
                        "switch": n.switch,
                        "switch_port": n.switch_port,
                    }
                    for n in h.nics
                ],
            }
        )
    out: dict = {"hosts": hosts}
    if include_ranks:
        ranks = [
            {"rank": r, "host": fleet.place(r)[0], "gpu": fleet.place(r)[1]} for r in range(fleet.n_ranks)
        ]
        if shuffle_ranks and rng is not None:
            order = rng.permutation(len(ranks))
            ranks = [ranks[int(k)] for k in order]
        out["ranks"] = ranks
    out["switches"] = [
        {
            "name": s.name,
            "tier": s.tier,
            "links": [
                {"port": link.port, "peer": link.peer, "peer_port": link.peer_port} for link in s.links
            ],
        }
        for s in fleet.switches
    ]
    return out
