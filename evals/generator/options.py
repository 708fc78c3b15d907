"""Format and fleet variants of one incident, drawn from its seed unless the spec pins them."""

from __future__ import annotations

import numpy as np

from . import naming
from .baseline import DRIVERS_NEW, DRIVERS_OLD, KERNELS_NEW, KERNELS_OLD
from .faults import NEEDS_ETHERNET

DCGM_DEFAULT = ["SM_CLOCK", "GPU_TEMP", "POWER_USAGE", "GPU_UTIL", "TENSOR", "PCIE_REPLAY", "XID", "REASONS"]
DCGM_EXTRA = [
    "MEM_CLOCK",
    "MEMORY_TEMP",
    "SM_ACTIVE",
    "THERMAL_VIOLATION",
    "POWER_VIOLATION",
    "ECC_SBE",
    "ECC_DBE",
    "NVLINK_CRC",
    "NVLINK_REPLAY",
    "REMAP_UNC",
    "REMAP_COR",
    "REMAP_FAIL",
    "FB_USED",
]
EXTRA_COLS = ["lr", "tokens_per_s", "mem_gb", "micro_batches"]


def _p(rng: np.random.Generator, p: float) -> bool:
    return bool(rng.random() < p)


def resolve(cause: str, variant: str | None, n_hosts: int, rng: np.random.Generator, pinned: dict) -> dict:
    """Draw every option in a fixed order (so the seed alone decides), then apply pinned values."""
    o: dict = {}
    big = n_hosts > 24
    o["host_scheme"] = str(rng.choice(naming.HOST_SCHEMES))
    o["switch_scheme"] = str(rng.choice(naming.SWITCH_SCHEMES))
    need_eth = cause in NEEDS_ETHERNET or (cause == "pcie_downtrain" and (variant or "").startswith("nic"))
    o["link_layer"] = "Ethernet" if need_eth or _p(rng, 0.4) else "InfiniBand"
    o["bus_layout"] = str(rng.choice(list(naming.BUS_LAYOUTS)))
    o["netdev_style_eth"] = str(rng.choice(["enp", "ethN", "rdma"]))
    o["netdev_style_ib"] = str(rng.choice(["ibp", "ibN"]))
    o["hosts_per_rack"] = int(rng.choice([2, 4]))
    o["hosts_per_leaf"] = int(rng.choice([2, 4]))
    o["n_spares"] = int(rng.choice([0, 1, 1, 2])) if n_hosts < 24 else int(rng.choice([0, 1]))
    o["omit_ranks"] = _p(rng, 0.3)
    o["shuffle_hosts"] = _p(rng, 0.5)
    o["permute_job"] = _p(rng, 0.5)
    o["shuffle_rank_rows"] = _p(rng, 0.3)
    # keep steps.csv modest: rows = ranks x logged steps
    rows = float(rng.uniform(14000, 20000)) if big else float(rng.uniform(3500, 7000))
    o["logged_steps"] = int(min(400, max(40 if n_hosts >= 48 else 60, rows / (8 * n_hosts))))
    o["benign_restart"] = _p(rng, 0.2)
    o["missing_p"] = float(rng.choice([0.0, 0.0, 0.02, 0.05]))
    o["extra_cols"] = [c for c in EXTRA_COLS if _p(rng, 0.25)]
    o["col_compute"] = _p(rng, 0.75)
    o["col_loss"] = _p(rng, 0.9)
    o["col_grad"] = _p(rng, 0.6)
    o["col_checksum"] = _p(rng, 0.7)
    o["loss_mode"] = "global" if big or _p(rng, 0.4) else "local"
    o["rows_order"] = str(rng.choice(["step", "step", "rank", "chunks"]))
    o["tp"] = int(rng.choice([1, 1, 2, 4, 8]))
    styles = list(rng.permutation(["dmesg", "ctime", "journal", "kmsg", "caller"]))
    o["dmesg_styles"] = [str(s) for s in styles[: int(rng.choice([1, 1, 2, 3]))]]
    o["dcgm_host_label"] = str(rng.choice(["Hostname", "hostname"]))
    o["dcgm_reasons_old"] = _p(rng, 0.35)
    if o["dcgm_reasons_old"]:
        o["dcgm_host_label"] = "Hostname"  # the renamed field and the lowercase label came years apart
    o["dcgm_counter_type"] = str(rng.choice(["counter", "counter", "gauge", "unknown"]))
    extra = [f for f in DCGM_EXTRA if _p(rng, 0.08 if big else 0.15)]
    o["dcgm_fields"] = (DCGM_DEFAULT[:6] + ["XID", "REASONS"] if big else DCGM_DEFAULT) + extra
    o["om_frac_ts"] = _p(rng, 0.3)
    o["sysfs_old"] = _p(rng, 0.3)
    o["kernel"] = str(rng.choice(KERNELS_OLD if o["sysfs_old"] else KERNELS_NEW))
    o["smi_old"] = _p(rng, 0.3)
    o["driver"] = str(rng.choice(DRIVERS_OLD if o["smi_old"] else DRIVERS_NEW))
    o["xid_style"] = "pid" if not o["smi_old"] or _p(rng, 0.5) else "old"
    o["smi"] = _p(rng, 0.25 if big else 0.4)
    o["lspci"] = _p(rng, 0.2 if big else 0.35)
    o["ethtool"] = _p(rng, 0.6)
    o["ib_sysfs"] = _p(rng, 0.35)
    o["ibstat"] = _p(rng, 0.15)
    o["before"] = _p(rng, 0.4)
    o["collected"] = _p(rng, 0.9)
    o["top"] = _p(rng, 0.35)
    o["aer"] = _p(rng, 0.3)
    o["net_sysfs"] = _p(rng, 0.3)
    o["sonic"] = _p(rng, 0.5)
    o["snmp"] = _p(rng, 0.6)
    o["node_metrics"] = _p(rng, 0.85)
    o["node_ib"] = _p(rng, 0.4)
    o["node_ib_symbol"] = _p(rng, 0.4)
    o["node_ib_wait"] = _p(rng, 0.3)
    o["dcgm"] = _p(rng, 0.9)
    o["nvml_extended"] = _p(rng, 0.3)
    o["nvml_indent"] = None if big or _p(rng, 0.6) else 1
    o["topo_indent"] = None if n_hosts > 8 or _p(rng, 0.5) else 1
    o["gz_topology"] = n_hosts >= 32 or (n_hosts >= 12 and _p(rng, 0.7))
    o["gz_nvml"] = _p(rng, 0.8 if n_hosts > 8 else 0.4)
    # samples per series over the window (the exporter's range query step is set from it)
    o["samples"] = int(rng.integers(9, 13)) if big else int(rng.integers(11, 16))
    o["gz_steps"] = True
    o["gz_metrics"] = True
    o["gz_cmd"] = True  # nvidia-smi -q and lspci -vv run to 30-70 kB a host
    o["gz_dmesg"] = n_hosts > 12 or _p(rng, 0.4)
    o["log_names"] = str(rng.choice(["host", "node", "torchrun"]))
    o["gz_logs"] = n_hosts > 8 or _p(rng, 0.7)
    o["torch_style"] = str(rng.choice(["2.5", "2.7", "1.13"]))
    o["nccl_version"] = str(rng.choice(["2.18.6", "2.21.5", "2.23.4"]))
    o["oob_if"] = str(rng.choice(["bond0", "eth0", "enp86s0f0"]))
    o["progress_data_time"] = _p(rng, 0.35)
    o["alerts"] = _p(rng, 0.5)
    o["title_style"] = int(rng.integers(0, 4))
    o["decoy_count"] = int(rng.integers(1, 4))
    # what an incident of this cause cannot do without (a recorder configured for the fleet at hand)
    if cause == "ecmp_hash_polarization":
        o["snmp"] = True
        o["hosts_per_leaf"] = min(o["hosts_per_leaf"], max(1, n_hosts // 2))
    if cause in ("pfc_pause_storm",) or (cause == "pcie_downtrain" and (variant or "").startswith("nic")):
        o["ethtool"] = True
    if cause == "link_degradation":
        o["ib_sysfs"] = True
    if cause == "host_contention":
        o["node_metrics"] = True
    if cause == "nvlink_fault":
        o["dcgm"] = True
        for f in ("NVLINK_CRC", "NVLINK_REPLAY"):
            if f not in o["dcgm_fields"]:
                o["dcgm_fields"].append(f)
    if cause == "silent_data_corruption":
        o["col_checksum"] = True
    if cause in (
        "input_pipeline_stall",
        "nccl_misconfiguration",
        "silent_data_corruption",
        "hbm_degradation",
    ):
        o["benign_restart"] = False
    if cause == "gpu_fell_off_bus":
        o["benign_restart"] = False
    if o["omit_ranks"]:
        o["shuffle_hosts"] = False
        o["permute_job"] = False
    if o["torch_style"] == "1.13":
        o["timeout_ms"] = 1800000
    else:
        o["timeout_ms"] = int(rng.choice([600000, 600000, 1800000]))
    o.update(pinned)
    return o
