"""Building blocks for the sealed evaluation set: fleets, time, and the raw formats a bundle holds.

Standard library only. Every random draw goes through a ``random.Random`` seeded per case, every
float is printed with an explicit format, and every file is written from sorted names, so the
output is byte-identical across runs, machines and Python versions.
"""

from __future__ import annotations

import gzip
import json
import random
from datetime import datetime, timezone
from pathlib import Path

# --------------------------------------------------------------------------------------------
# GPU generations

GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}
GEN_SPEED_OLD = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s"}
GEN_LSPCI = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}

MODELS = {
    "A100": dict(name="NVIDIA A100-SXM4-80GB", arch="Ampere", sm=1410, mem=1593, plimit=400, pmin=100, gen=4,
                 devid="20B2", busy_w=(285.0, 345.0), idle_w=58.0, temp=(52, 63), slow_t=92, shut_t=95, maxop_t=87,
                 driver="525.147.05", cuda="12.0", event_word="Throttle", dcgm_reason="DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                 host_label="Hostname", nic="MT28908 Family [ConnectX-6]", nic_rate="200 Gb/sec (4X HDR)", nic_gen=4),
    "H100": dict(name="NVIDIA H100 80GB HBM3", arch="Hopper", sm=1980, mem=2619, plimit=700, pmin=200, gen=5,
                 devid="2330", busy_w=(540.0, 665.0), idle_w=72.0, temp=(48, 62), slow_t=90, shut_t=92, maxop_t=87,
                 driver="550.90.07", cuda="12.4", event_word="Event", dcgm_reason="DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                 host_label="Hostname", nic="MT2910 Family [ConnectX-7]", nic_rate="400 Gb/sec (4X NDR)", nic_gen=5),
    "H200": dict(name="NVIDIA H200", arch="Hopper", sm=1980, mem=3201, plimit=700, pmin=200, gen=5,
                 devid="2335", busy_w=(555.0, 680.0), idle_w=78.0, temp=(45, 60), slow_t=90, shut_t=92, maxop_t=87,
                 driver="565.57.01", cuda="12.7", event_word="Event", dcgm_reason="DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                 host_label="hostname", nic="MT2910 Family [ConnectX-7]", nic_rate="400 Gb/sec (4X NDR)", nic_gen=5),
}

# HGX-style bus numbers per GPU index (8 GPUs) and PCIe switch slots (4 GPUs)
BUS8 = {
    "hgx": [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB],
    "dgx": [0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD],
    "xe": [0x19, 0x3B, 0x4C, 0x5D, 0x9B, 0xBB, 0xCB, 0xDB],
}
BUS4 = {"p4": [0x01, 0x41, 0x81, 0xC1], "q4": [0x17, 0x65, 0xCA, 0xE3]}

# clocks event reason bits (NVML)
IDLE, APP, SW_POWER, HW_SLOW, SYNC, SW_THERM, HW_THERM, HW_BRAKE = 0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80


def iso(t: float) -> str:
    return datetime.fromtimestamp(int(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


def unix(s: str) -> int:
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def uuid_for(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# --------------------------------------------------------------------------------------------
# Fleet description


class Gpu:
    def __init__(self, index: int, bus: int, uuid: str):
        self.index, self.bus, self.uuid = index, bus, uuid

    @property
    def nvml_bdf(self) -> str:
        return f"00000000:{self.bus:02X}:00.0"

    @property
    def sys_bdf(self) -> str:
        return f"0000:{self.bus:02x}:00.0"

    @property
    def xid_tag(self) -> str:
        return f"PCI:0000:{self.bus:02x}:00"


class Nic:
    def __init__(self, ibdev: str, netdev: str, bus: int, link_layer: str, switch: str, port: str):
        self.ibdev, self.netdev, self.bus, self.link_layer = ibdev, netdev, bus, link_layer
        self.switch, self.switch_port = switch, port

    @property
    def sys_bdf(self) -> str:
        return f"0000:{self.bus:02x}:00.0"


class Host:
    def __init__(self, name: str, rack: str, gpus: list[Gpu], nics: list[Nic], spare: bool = False,
                 instance: str | None = None):
        self.name, self.rack, self.gpus, self.nics, self.spare = name, rack, gpus, nics, spare
        self.instance = instance or name  # what node_exporter calls it (a name or an IP)


class Fleet:
    def __init__(self, rng: random.Random, names: list[str], model: str, gpn: int, *, layout: str = "hgx",
                 link_layer: str = "InfiniBand", nics_per_host: int | None = None, spares: tuple[str, ...] = (),
                 leaf_of=None, racks=None, instances=None, ib_prefix: str = "mlx5_", net_style: str = "ib"):
        self.model = model
        self.m = MODELS[model]
        self.gpn = gpn
        self.link_layer = link_layer
        buses = (BUS8 if gpn == 8 else BUS4)[layout]
        nn = nics_per_host if nics_per_host is not None else gpn
        self.hosts: list[Host] = []
        for hi, name in enumerate(names):
            gpus = [Gpu(i, buses[i], uuid_for(rng)) for i in range(gpn)]
            nics = []
            leaf = leaf_of(hi, name) if leaf_of else f"leaf-{hi // 8 + 1:02d}"
            for k in range(nn):
                bus = buses[k * gpn // nn] + 1 if nn else 0
                if net_style == "ib":
                    netdev = f"ibp{bus}s0"
                else:
                    netdev = f"enp{bus}s0np0"
                port = f"Ethernet{((hi % 8) * nn + k) * 4}"
                nics.append(Nic(f"{ib_prefix}{k}", netdev, bus, link_layer, leaf, port))
            rack = racks(hi, name) if racks else f"r{hi // 4 + 1:02d}"
            inst = instances(hi, name) if instances else None
            self.hosts.append(Host(name, rack, gpus, nics, spare=name in spares, instance=inst))

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    @property
    def workers(self) -> list[Host]:
        return [h for h in self.hosts if not h.spare]


# --------------------------------------------------------------------------------------------
# Kernel log prefixes


def kline(style: str, t: float, boot: float, host: str, text: str, seq: int = 0, caller: str = "") -> str:
    up = t - boot
    if style == "plain":
        return f"[{int(up):>5d}.{int(round((up % 1) * 1e6)) % 1000000:06d}] {text}"
    if style == "caller":
        return f"[{int(up):>5d}.{int(round((up % 1) * 1e6)) % 1000000:06d}] [{caller or ' T1'}] {text}"
    if style == "ctime":
        return f"[{utc(t).strftime('%a %b %e %H:%M:%S %Y')}] {text}"
    if style == "journal":
        return f"{utc(t).strftime('%b %d %H:%M:%S')} {host} kernel: {text}"
    if style == "syslog":  # rsyslog with the kernel's own uptime stamp kept
        return (f"{utc(t).strftime('%b %e %H:%M:%S')} {host} kernel: "
                f"[{int(up):>5d}.{int(round((up % 1) * 1e6)) % 1000000:06d}] {text}")
    if style == "kmsg":
        prio = 3 if ("Xid" in text or "error" in text.lower()) else 6
        return f"{prio},{seq},{int(up * 1e6)},-;{text}"
    raise ValueError(style)


def boot_lines(model: str, kernel: str = "5.15.0-119-generic") -> list[tuple[float, str]]:
    """(seconds after boot, text) of an ordinary boot."""
    return [
        (0.0, f"Linux version {kernel} (buildd@lcy02-amd64-026) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #129-Ubuntu SMP"),
        (0.0, f"Command line: BOOT_IMAGE=/vmlinuz-{kernel} root=UUID=5b1c0d8e-3f1e-4c55-9b1e-2a1f6c3f7d11 ro iommu=pt pci=realloc=off"),
        (0.000412, "x86/fpu: Supporting XSAVE feature 0x001: 'x87 floating point registers'"),
        (1.204517, "ACPI: PCI Root Bridge [PC00] (domain 0000 [bus 00-16])"),
        (4.88121, "EDAC MC0: Giving out device to module i10nm_edac controller Intel_10nm Socket#0 IMC#0: DEV 0000:7e:0c.0 (INTERRUPT)"),
        (9.301145, "mlx5_core 0000:1a:00.0: firmware version: 28.39.1002"),
        (12.55022, "nvidia: module license 'NVIDIA' taints kernel."),
        (12.90314, f"nvidia-nvlink: Nvlink Core is being initialized, major device number 508"),
        (13.1102, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {MODELS[model]['driver']}  Thu Jun  5 09:11:57 UTC 2025"),
        (15.70021, "nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module nvidia, inheriting taint."),
        (41.2001, "nvidia-peermem: loading out-of-tree module taints kernel."),
    ]


# --------------------------------------------------------------------------------------------
# Output


class Out:
    """Collects a case's files (relative path -> bytes) and writes them in sorted order."""

    def __init__(self):
        self.files: dict[str, bytes] = {}

    def put(self, rel: str, data, gz: bool = False) -> None:
        if isinstance(data, str):
            data = data.encode()
        if gz:
            data = gzip.compress(data, compresslevel=6, mtime=0)
            rel += ".gz"
        if rel in self.files:
            raise ValueError(f"duplicate file {rel}")
        self.files[rel] = data

    def json(self, rel: str, obj, gz: bool = False) -> None:
        self.put(rel, json.dumps(obj, indent=2) + "\n", gz=gz)

    def write(self, root: Path) -> None:
        for rel in sorted(self.files):
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(self.files[rel])


# --------------------------------------------------------------------------------------------
# OpenMetrics


class OM:
    """One OpenMetrics text file: families kept in insertion order, samples grouped per family."""

    def __init__(self):
        self.fam: dict[str, tuple[str, str, list[str]]] = {}

    def family(self, name: str, typ: str, help_: str) -> None:
        if name not in self.fam:
            self.fam[name] = (typ, help_, [])

    def sample(self, name: str, labels: dict, value, ts: float) -> None:
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        if isinstance(value, float):
            v = f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
        else:
            v = str(value)
        self.fam[name][2].append(f"{name}{{{lab}}} {v} {int(ts)}")

    def text(self) -> str:
        out = []
        for name, (typ, help_, lines) in self.fam.items():
            if not lines:
                continue
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {typ}")
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"
