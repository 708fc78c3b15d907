"""NCCL settings as launchers and trainers print them, beside NCCL's own ``set by environment`` lines.

A configuration that forces a slow path is a fault by itself, even with no onset in the window
(the job may have been slow since launch). NCCL prints only the variables it read, and only at
``NCCL_DEBUG=INFO``; the same settings also show in the job's own printouts:

- shell and launcher lines: ``export NCCL_IB_DISABLE=1``, ``NCCL_NET=Socket``, ``env NCCL_P2P_DISABLE=1 torchrun ...``
- environment dumps: ``NCCL_IB_HCA: mlx5_0``, ``'NCCL_NET_GDR_LEVEL': '0'``, ``NCCL_SOCKET_IFNAME=eno1``
- NCCL's own lines: ``NCCL INFO NCCL_IB_DISABLE set by environment to 1``, ``GPU Direct RDMA Disabled``
- other printouts: ``setenv NCCL_P2P_DISABLE 1`` (csh), ``ENV NCCL_IB_HCA mlx5_0`` (Dockerfile),
  ``os.environ["NCCL_P2P_DISABLE"] = "1"``, ``{"name": "NCCL_IB_HCA", "value": "mlx5_0"}`` and the
  two-line YAML ``- name: NCCL_IB_HCA`` / ``value: mlx5_0`` of a pod spec
- old names: ``NCCL_IB_GDR_LEVEL`` (now ``NCCL_NET_GDR_LEVEL``), ``NCCL_IB_CUDA_SUPPORT=0`` (GDR off)

Each reading keeps the last value seen per variable (a relaunch prints its settings again).

Which settings force a slow path depends on the hardware (:mod:`forensic.tools._nccl_hw`):

- ``NCCL_P2P_DISABLE=1`` / ``NCCL_P2P_LEVEL=LOC``: intra-node traffic through host memory, a loss
  wherever a host runs more than one GPU of the job. ``NCCL_P2P_LEVEL=NVL`` only where the GPUs have
  no NVLink (it then forbids PCIe peer copies); other levels only narrow PCIe peer paths.
- ``NCCL_SHM_DISABLE=1``: shared memory is NCCL's fallback when peer copies are impossible; on
  NVLink-connected GPUs it changes nothing unless P2P is off too.
- ``NCCL_NET_GDR_LEVEL=LOC``/``0`` or ``NCCL_IB_CUDA_SUPPORT=0`` beside RDMA NICs: network data
  bounces through host memory. NCCL's ``GPU Direct RDMA Disabled ...`` lines count only when no
  ``Enabled`` line and no ``/GDRDMA`` channel says GDR is used after all (a far NIC is often
  reported as disabled while the near one is used).
- Harmless: ``NCCL_DEBUG``, ``NCCL_IB_HCA`` naming every NIC, ``NCCL_SOCKET_IFNAME`` for bootstrap
  while IB carries the data, ``NCCL_NET_GDR_LEVEL`` PIX/PXB/PHB/SYS, ``NCCL_IB_DISABLE=0``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

#: ``NAME=value``, ``NAME: value``, ``'NAME': 'value'``, ``NAME set by environment to value``. Bounded.
_ASSIGN = re.compile(
    r"""(?<![A-Z0-9_])['"]?(NCCL_[A-Z0-9_]{2,40})['"]?\]?\s{0,2}(?:=|:|\bset by environment to\b)\s{0,2}['"]?([^\s'";}\]]{1,128})"""
)
#: ``setenv NAME value`` (csh), ``ENV NAME value`` (Dockerfile's old form).
_WORD_ASSIGN = re.compile(r"""\b(?:setenv|ENV)\s{1,4}(NCCL_[A-Z0-9_]{2,40})\s{1,4}['"]?([^\s'"=;]{1,128})""")
#: ``{"name": "NCCL_IB_HCA", "value": "mlx5_0"}`` (Kubernetes env as JSON).
_NAME_VALUE = re.compile(
    r"""['"]name['"]\s{0,2}:\s{0,2}['"](NCCL_[A-Z0-9_]{2,40})['"]\s{0,2},\s{0,2}['"]value['"]\s{0,2}:\s{0,2}['"]([^'"]{0,128})['"]"""
)
#: The two-line YAML form: ``- name: NCCL_IB_HCA`` then ``value: "mlx5_0"``.
_YAML_NAME = re.compile(r"""^\s{0,40}-?\s{0,4}name:\s{0,2}['"]?(NCCL_[A-Z0-9_]{2,40})['"]?\s*$""")
_YAML_VALUE = re.compile(r"""^\s{0,40}value:\s{0,2}['"]?([^\s'"]{0,128})['"]?\s*$""")
#: Old names NCCL still reads.
_ALIASES = {"NCCL_IB_GDR_LEVEL": "NCCL_NET_GDR_LEVEL"}
#: NCCL saying it will not use GPUDirect RDMA (the wordings of 2.x releases).
_GDR_OFF = re.compile(
    r"GPU ?Direct RDMA (?:Disabled|disabled|is disabled|not (?:enabled|supported))|\bGDR(?:DMA)? (?:disabled|off)\b"
)
#: NCCL saying it uses GPUDirect RDMA: ``GPU Direct RDMA Enabled for ...``, ``via NET/IB/0/GDRDMA``,
#: ``Connected all rings, use ring PXN 0 GDR 1``.
_GDR_ON = re.compile(r"GPU ?Direct RDMA Enabled|/GDRDMA\b|\bPXN [01] GDR 1\b")
#: ``Connected all rings, use ring PXN 0 GDR 0``: the rings run without GDR.
_GDR_RING_OFF = re.compile(r"\bPXN [01] GDR 0\b")
#: ``P2P is disabled between NVLINK connected GPUs 1 and 0 ... probably due to a hardware issue``:
#: NCCL's own word that peer access failed on NVLink, a hardware state, not a setting.
_P2P_HW = re.compile(r"P2P is disabled between NVLINK connected GPUs")
#: Intra-node channels: ``via P2P/IPC``, ``via P2P/CUMEM/read``, ``via P2P/direct pointer``, ``via SHM/direct/direct``.
_INTRA = re.compile(r"\bvia (P2P|SHM)/")
#: ``16 coll channels, 0 collnet channels, 16 nvls channels, ...``: NVLS needs an NVSwitch.
_NVLS = re.compile(r"\b([0-9]{1,4}) nvls channels\b")
_NEEDS = re.compile(
    r"NCCL_|GPU ?Direct RDMA|GDR|via (?:P2P|SHM)/|nvls channels|name:|value:|P2P is disabled", re.I
)

#: Variables whose value can force a slow path.
SLOW_PATH_VARS = (
    "NCCL_IB_DISABLE",
    "NCCL_NET",
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_IB_HCA",
    "NCCL_SOCKET_IFNAME",
    "NCCL_P2P_LEVEL",
    "NCCL_IB_GDR_LEVEL",
    "NCCL_IB_CUDA_SUPPORT",
)
#: Signals of a setting that forces a slow path (what ``slow_path_findings`` and job_logs report).
SLOW_PATH_SIGNALS = frozenset(
    {
        "nccl_socket_transport",
        "nccl_ib_disabled",
        "nccl_p2p_disabled",
        "nccl_gdr_disabled",
        "nccl_rails_reduced",
    }
)


@dataclass
class LauncherEnv:
    """The NCCL settings the job's logs print, last value per variable, and GDR-off lines."""

    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    gdr_off_lines: int = 0
    gdr_on_lines: int = 0
    p2p_channel_lines: int = 0
    shm_channel_lines: int = 0
    nvls_channels: int = 0
    p2p_hw_lines: int = 0
    _yaml_name: str | None = None

    def add_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            line = line[:4096]
            if not _NEEDS.search(line):
                self._yaml_name = None
                continue
            pending, self._yaml_name = self._yaml_name, None
            if pending and (m := _YAML_VALUE.match(line)):
                self._set(pending, m.group(1), line)
                continue
            if m := _YAML_NAME.match(line):
                self._yaml_name = m.group(1)
                continue
            for rx in (_ASSIGN, _WORD_ASSIGN, _NAME_VALUE):
                for m in rx.finditer(line):
                    self._set(m.group(1), m.group(2), line)
            if _GDR_OFF.search(line) or _GDR_RING_OFF.search(line):
                self.gdr_off_lines += 1
            elif _GDR_ON.search(line):
                self.gdr_on_lines += 1
            if _P2P_HW.search(line):
                self.p2p_hw_lines += 1
            if m := _INTRA.search(line):
                if m.group(1) == "P2P":
                    self.p2p_channel_lines += 1
                else:
                    self.shm_channel_lines += 1
            if m := _NVLS.search(line):
                self.nvls_channels = max(self.nvls_channels, int(m.group(1)))

    def _set(self, name: str, value: str, line: str) -> None:
        if name not in SLOW_PATH_VARS:
            return
        name = _ALIASES.get(name, name)
        self.values[name] = value.rstrip(".,")
        self.lines[name] = line.strip()[:300]


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


def slow_path_findings(
    env: LauncherEnv,
    *,
    ibdevs: list[str],
    netdevs: set[str],
    nvlink: bool | None = None,
    gpus_per_host: int | None = None,
) -> list[tuple[str, str, dict]]:
    """(signal name, detail, values) for every setting that forces a slower path than the hardware offers.

    ``nvlink``: whether a host's GPUs are NVLink-connected (None: unknown); ``gpus_per_host``: GPUs
    of the job per host (peer-to-peer settings cannot matter with one).
    """
    out: list[tuple[str, str, dict]] = []
    v = env.values
    rdma_nics_per_host = len(ibdevs)
    intra = gpus_per_host is None or gpus_per_host > 1
    if rdma_nics_per_host and v.get("NCCL_IB_DISABLE") == "1":
        out.append(
            (
                "nccl_ib_disabled",
                f"NCCL_IB_DISABLE=1 in the job's printout ({env.lines['NCCL_IB_DISABLE']!r})",
                {"NCCL_IB_DISABLE": 1},
            )
        )
    if rdma_nics_per_host and v.get("NCCL_NET", "").lower() == "socket":
        out.append(
            (
                "nccl_socket_transport",
                f"NCCL_NET=Socket forces TCP sockets on a fleet with RDMA NICs ({env.lines['NCCL_NET']!r})",
                {"NCCL_NET": "Socket"},
            )
        )
    p2p_off = intra and v.get("NCCL_P2P_DISABLE") == "1"
    if p2p_off:
        out.append(
            (
                "nccl_p2p_disabled",
                "NCCL_P2P_DISABLE=1 in the job's printout: intra-node traffic takes a slower path "
                "through host memory" + (" instead of NVLink" if nvlink else ""),
                {"NCCL_P2P_DISABLE": 1},
            )
        )
    elif intra and v.get("NCCL_SHM_DISABLE") == "1" and nvlink is not True:
        # Shared memory is the fallback where peer copies are impossible: it matters without NVLink.
        out.append(
            (
                "nccl_p2p_disabled",
                "NCCL_SHM_DISABLE=1 in the job's printout on GPUs not known to be NVLink-connected: "
                "intra-node traffic takes a slower path",
                {"NCCL_SHM_DISABLE": 1},
            )
        )
    level = v.get("NCCL_P2P_LEVEL", "").upper()
    if intra and not p2p_off and (level in ("LOC", "0") or (level in ("NVL", "1") and nvlink is False)):
        out.append(
            (
                "nccl_p2p_disabled",
                f"NCCL_P2P_LEVEL={v['NCCL_P2P_LEVEL']}: peer-to-peer transfers turned off"
                + (" on GPUs without NVLink" if level in ("NVL", "1") else ""),
                {"NCCL_P2P_LEVEL": v["NCCL_P2P_LEVEL"]},
            )
        )
    # SHM channels on NVLink GPUs with no P2P channel: P2P is off. Not a setting when NCCL says
    # peer access failed between NVLink-connected GPUs (a hardware state for nvlink_fault's tests).
    if (
        intra
        and nvlink
        and not p2p_off
        and env.shm_channel_lines
        and not env.p2p_channel_lines
        and not env.p2p_hw_lines
    ):
        out.append(
            (
                "nccl_p2p_disabled",
                f"NCCL connects GPUs of one host via SHM ({env.shm_channel_lines} channel line(s), "
                "none via P2P) although they are NVLink-connected: peer-to-peer is off",
                {"shm_channels": env.shm_channel_lines},
            )
        )
    gdr_level = v.get("NCCL_NET_GDR_LEVEL", "").upper()
    gdr_forced = gdr_level in ("LOC", "0") or v.get("NCCL_IB_CUDA_SUPPORT") == "0"
    if rdma_nics_per_host and (gdr_forced or (env.gdr_off_lines and not env.gdr_on_lines)):
        why = (
            f"NCCL_NET_GDR_LEVEL={v['NCCL_NET_GDR_LEVEL']}"
            if gdr_level in ("LOC", "0")
            else "NCCL_IB_CUDA_SUPPORT=0"
            if gdr_forced
            else f"{env.gdr_off_lines} 'GPU Direct RDMA Disabled' line(s), none enabled"
        )
        out.append(
            (
                "nccl_gdr_disabled",
                f"GPUDirect RDMA is off ({why}): network traffic bounces through host memory",
                {"gdr_off_lines": env.gdr_off_lines},
            )
        )
    if rdma_nics_per_host > 1 and "NCCL_IB_HCA" in v:
        n = hca_count(v["NCCL_IB_HCA"], ibdevs)
        if n is not None and n < rdma_nics_per_host:
            out.append(
                (
                    "nccl_rails_reduced",
                    f"NCCL_IB_HCA={v['NCCL_IB_HCA']} lets NCCL use {n} of the {rdma_nics_per_host} "
                    "RDMA NICs per host",
                    {"ib_devices": n, "available": rdma_nics_per_host},
                )
            )
    ifname = v.get("NCCL_SOCKET_IFNAME", "")
    sockets = v.get("NCCL_IB_DISABLE") == "1" or v.get("NCCL_NET", "").lower() == "socket"
    if (
        rdma_nics_per_host
        and sockets
        and ifname
        and netdevs
        and not any(n.startswith(ifname.lstrip("=^").split(",")[0]) for n in netdevs)
    ):
        out.append(
            (
                "nccl_socket_transport",
                f"NCCL_SOCKET_IFNAME={ifname} sends collectives over an interface that is "
                "not one of the fabric NICs (a management or front-end port)",
                {"NCCL_SOCKET_IFNAME": ifname},
            )
        )
    return out
