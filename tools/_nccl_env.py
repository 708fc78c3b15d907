"""NCCL settings as launchers and trainers print them, beside NCCL's own ``set by environment`` lines.

A configuration that forces a slow path is a fault by itself, even with no onset in the window
(the job may have been slow since launch). NCCL prints only the variables it read, and only at
``NCCL_DEBUG=INFO``; the same settings also show in the job's own printouts:

- shell and launcher lines: ``export NCCL_IB_DISABLE=1``, ``NCCL_NET=Socket``, ``env NCCL_P2P_DISABLE=1 torchrun ...``
- environment dumps: ``NCCL_IB_HCA: mlx5_0``, ``'NCCL_NET_GDR_LEVEL': '0'``, ``NCCL_SOCKET_IFNAME=eno1``
- NCCL's own lines: ``NCCL INFO NCCL_IB_DISABLE set by environment to 1``, ``GPU Direct RDMA Disabled``

Each reading keeps the last value seen per variable (a relaunch prints its settings again).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

#: ``NAME=value``, ``NAME: value``, ``'NAME': 'value'``, ``NAME set by environment to value``. Bounded.
_ASSIGN = re.compile(
    r"""(?<![A-Z0-9_])['"]?(NCCL_[A-Z0-9_]{2,40})['"]?\s{0,2}(?:=|:|\bset by environment to\b)\s{0,2}['"]?([^\s'";}\]]{1,128})""")
#: NCCL saying it will not use GPUDirect RDMA (the wordings of 2.x releases).
_GDR_OFF = re.compile(r"GPU ?Direct RDMA (?:Disabled|disabled|is disabled|not (?:enabled|supported))|\bGDR(?:DMA)? (?:disabled|off)\b")
_NEEDS = re.compile(r"NCCL_|GPU ?Direct RDMA|GDR", re.I)

#: Variables whose value can force a slow path.
SLOW_PATH_VARS = ("NCCL_IB_DISABLE", "NCCL_NET", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL",
                  "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_P2P_LEVEL")


@dataclass
class LauncherEnv:
    """The NCCL settings the job's logs print, last value per variable, and GDR-off lines."""

    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    gdr_off_lines: int = 0

    def add_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            line = line[:4096]
            if not _NEEDS.search(line):
                continue
            for m in _ASSIGN.finditer(line):
                name, value = m.group(1), m.group(2).rstrip(".,")
                if name in SLOW_PATH_VARS:
                    self.values[name] = value
                    self.lines[name] = line.strip()[:300]
            if _GDR_OFF.search(line):
                self.gdr_off_lines += 1


def hca_count(value: str, ibdevs: list[str]) -> int | None:
    """How many of a host's RDMA devices (``ibdevs``) an ``NCCL_IB_HCA`` value lets NCCL use.

    ``mlx5_0,mlx5_1`` (prefix match: ``mlx5`` is every mlx5 device), ``=mlx5_0:1`` (exact names),
    ``^mlx5_3`` (all but these). None when the value cannot be read.
    """
    v = value.strip()
    if not v or not ibdevs:
        return None
    exclude = v.startswith("^")
    v = v.lstrip("^")
    exact = v.startswith("=")
    names = [n.split(":")[0].strip() for n in v.lstrip("=").split(",") if n.strip()]
    if not names:
        return None
    hit = [d for d in ibdevs if any(d == n if exact else d.startswith(n) for n in names)]
    return len(ibdevs) - len(hit) if exclude else len(hit)


def slow_path_findings(env: LauncherEnv, *, ibdevs: list[str], netdevs: set[str]) -> list[tuple[str, str, dict]]:
    """(signal name, detail, values) for every setting that forces a slower path than the hardware offers."""
    out: list[tuple[str, str, dict]] = []
    v = env.values
    rdma_nics_per_host = len(ibdevs)
    if rdma_nics_per_host and v.get("NCCL_IB_DISABLE") == "1":
        out.append(("nccl_ib_disabled", f"NCCL_IB_DISABLE=1 in the job's printout ({env.lines['NCCL_IB_DISABLE']!r})",
                    {"NCCL_IB_DISABLE": 1}))
    if rdma_nics_per_host and v.get("NCCL_NET", "").lower() == "socket":
        out.append(("nccl_socket_transport", f"NCCL_NET=Socket forces TCP sockets on a fleet with RDMA NICs ({env.lines['NCCL_NET']!r})",
                    {"NCCL_NET": "Socket"}))
    for var in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"):
        if v.get(var) == "1":
            out.append(("nccl_p2p_disabled", f"{var}=1 in the job's printout: intra-node traffic takes a slower path",
                        {var: 1}))
            break
    if v.get("NCCL_P2P_LEVEL", "").upper() in ("LOC", "0"):
        out.append(("nccl_p2p_disabled", f"NCCL_P2P_LEVEL={v['NCCL_P2P_LEVEL']}: peer-to-peer transfers turned off",
                    {"NCCL_P2P_LEVEL": v["NCCL_P2P_LEVEL"]}))
    if rdma_nics_per_host and (v.get("NCCL_NET_GDR_LEVEL", "").upper() in ("LOC", "0") or env.gdr_off_lines):
        why = (f"NCCL_NET_GDR_LEVEL={v['NCCL_NET_GDR_LEVEL']}" if "NCCL_NET_GDR_LEVEL" in v
               else f"{env.gdr_off_lines} 'GPU Direct RDMA Disabled' line(s)")
        out.append(("nccl_gdr_disabled", f"GPUDirect RDMA is off ({why}): network traffic bounces through host memory",
                    {"gdr_off_lines": env.gdr_off_lines}))
    if rdma_nics_per_host > 1 and "NCCL_IB_HCA" in v:
        n = hca_count(v["NCCL_IB_HCA"], ibdevs)
        if n is not None and n < rdma_nics_per_host:
            out.append(("nccl_rails_reduced", f"NCCL_IB_HCA={v['NCCL_IB_HCA']} lets NCCL use {n} of the {rdma_nics_per_host} "
                                              "RDMA NICs per host", {"ib_devices": n, "available": rdma_nics_per_host}))
    ifname = v.get("NCCL_SOCKET_IFNAME", "")
    sockets = v.get("NCCL_IB_DISABLE") == "1" or v.get("NCCL_NET", "").lower() == "socket"
    if rdma_nics_per_host and sockets and ifname and netdevs and not any(
            n.startswith(ifname.lstrip("=^").split(",")[0]) for n in netdevs):
        out.append(("nccl_socket_transport", f"NCCL_SOCKET_IFNAME={ifname} sends collectives over an interface that is "
                                             "not one of the fabric NICs (a management or front-end port)",
                    {"NCCL_SOCKET_IFNAME": ifname}))
    return out
