"""Naming schemes real fleets use for hosts, switches, NICs and GPUs.

Names carry no meaning for the investigator; the schemes only vary what a reader must accept
(dots, dashes, digits, IP-like names).
"""

from __future__ import annotations

import numpy as np

HOST_SCHEMES = ("alpha", "fqdn", "ip", "rackslot", "pod")
SWITCH_SCHEMES = ("leafspine", "rackt0", "torspine")

# Realistic HGX H100 bus numbers (GPU, and the ConnectX-7 under the same PCIe switch).
BUS_LAYOUTS = {
    "hgx": {
        "gpu": [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB],
        "nic": [0x1A, 0x2C, 0x3C, 0x5F, 0x9C, 0xAD, 0xBC, 0xDD],
    },
    "dgx": {
        "gpu": [0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF],
        "nic": [0x18, 0x40, 0x4F, 0x5E, 0x9A, 0xC0, 0xCE, 0xDC],
    },
    "xe9680": {
        "gpu": [0x19, 0x3B, 0x4C, 0x5D, 0x9B, 0xBB, 0xCB, 0xDB],
        "nic": [0x1D, 0x3F, 0x4D, 0x5F, 0x9F, 0xBF, 0xCD, 0xDD],
    },
}


def host_names(scheme: str, n: int, rng: np.random.Generator, hosts_per_rack: int) -> list[tuple[str, str]]:
    """Return ``n`` (host, rack) pairs in fleet order."""
    out: list[tuple[str, str]] = []
    if scheme == "alpha":
        letter = "abcdefgh"[int(rng.integers(0, 8))]
        start = int(rng.integers(1, 200))
        rack0 = int(rng.integers(1, 30))
        for i in range(n):
            out.append((f"gpu-{letter}{start + i:03d}", f"r{rack0 + i // hosts_per_rack:02d}"))
    elif scheme == "fqdn":
        dc = int(rng.integers(1, 9))
        start = int(rng.integers(1000, 1900))
        rack0 = int(rng.integers(1, 40))
        for i in range(n):
            out.append((f"gpu{start + i}.dc{dc}.internal", f"dc{dc}-r{rack0 + i // hosts_per_rack:03d}"))
    elif scheme == "ip":
        a, b = 10, int(rng.integers(16, 120))
        c0 = int(rng.integers(0, 200))
        d0 = int(rng.integers(2, 120))
        for i in range(n):
            c = c0 + (d0 + i) // 250
            d = 2 + (d0 + i) % 250
            out.append((f"{a}-{b}-{c}-{d}", f"rack{(c0 + i // hosts_per_rack) % 90 + 1:02d}"))
    elif scheme == "rackslot":
        rack0 = int(rng.integers(1, 40))
        for i in range(n):
            rack = rack0 + i // hosts_per_rack
            slot = 1 + i % hosts_per_rack
            out.append((f"node-r{rack:02d}-s{slot:02d}", f"r{rack:02d}"))
    elif scheme == "pod":
        pod = int(rng.integers(1, 6))
        start = int(rng.integers(1, 300))
        rack0 = int(rng.integers(1, 60))
        for i in range(n):
            out.append((f"h100-pod{pod}-{start + i:04d}", f"p{pod}-rk{rack0 + i // hosts_per_rack:02d}"))
    else:
        raise ValueError(f"unknown host naming scheme {scheme!r}")
    return out


def switch_names(scheme: str, n_leaf: int, n_spine: int, racks: list[str], rng: np.random.Generator):
    """Return (leaf names, spine names)."""
    if scheme == "leafspine":
        s0 = int(rng.integers(1, 20))
        leaves = [f"leaf-{s0 + i:02d}" for i in range(n_leaf)]
        spines = [f"spine-{i + 1:02d}" for i in range(n_spine)]
    elif scheme == "rackt0":
        leaves = []
        for i in range(n_leaf):
            digits = "".join(ch for ch in racks[min(i, len(racks) - 1)] if ch.isdigit())[-2:] or f"{i:02d}"
            leaves.append(f"sw-r{int(digits) + (i if i >= len(racks) else 0):02d}-t0")
        # racks may repeat digits across schemes; make unique
        seen: dict[str, int] = {}
        for i, name in enumerate(leaves):
            if name in seen:
                leaves[i] = name.replace("-t0", f"-t0{chr(ord('a') + seen[name])}")
            seen[name] = seen.get(name, 0) + 1
        spines = [f"sw-sp{i + 1:02d}-t1" for i in range(n_spine)]
    elif scheme == "torspine":
        s0 = int(rng.integers(100, 400))
        leaves = [f"tor{s0 + i}" for i in range(n_leaf)]
        spines = [f"spn{i + 1}" for i in range(n_spine)]
    else:
        raise ValueError(f"unknown switch naming scheme {scheme!r}")
    return leaves, spines


def netdev_name(style: str, bus: int, idx: int, link_layer: str) -> str:
    if link_layer == "InfiniBand":
        return f"ibp{bus}s0" if style != "ibN" else f"ib{idx}"
    if style == "enp":
        return f"enp{bus}s0np0"
    if style == "ethN":
        return f"eth{idx + 2}"
    return f"rdma{idx}"


def gpu_uuid(rng: np.random.Generator) -> str:
    h = "".join(f"{int(x):02x}" for x in rng.integers(0, 256, size=16))
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def serial(rng: np.random.Generator) -> str:
    return "1" + "".join(str(int(x)) for x in rng.integers(0, 10, size=12))
