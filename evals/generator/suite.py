"""The committed incident sets (examples, tuning incidents, holdout) and the function that writes them.

Every entry is a seed plus the few choices that shape the set (cause, fleet size, naming and format
variants). Regenerating with the same code gives the same bytes; ``tests/evals`` checks that.
The holdout deliberately uses host/switch naming schemes, bus layouts, kernel-log styles and fleet
sizes that the tuning set does not.
"""

from __future__ import annotations

from pathlib import Path

from .incident import IncidentSpec, generate


def _spec(case, cause, seed, hosts, variant=None, decoys=None, **opts) -> IncidentSpec:
    return IncidentSpec(
        case=case, cause=cause, seed=seed, hosts=hosts, variant=variant, decoys=decoys, opts=opts
    )


# Examples: one small, readable incident per common class. The first is the README walk-through.
# They are committed, so they stay lean: PCIe link state is in each host's `lspci -vv` (the spec's one-file
# form), and only the README case keeps the per-device sysfs tree (now and at window start) for its culprit
# host, to show that form. Link width and speed are states, not counters: a `before/` tree adds nothing.
_LEAN = dict(sysfs_hosts="none", before=False, lspci=True)
EXAMPLES: list[IncidentSpec] = [
    _spec(
        "pcie-x8-mfu-drop",
        "pcie_downtrain",
        4101,
        8,
        "x8",
        decoys=["spare_low_gen", "warm_gpu", "old_xid"],
        n_spares=1,
        col_compute=True,
        severity=1.17,
        host_scheme="alpha",
        switch_scheme="leafspine",
        link_layer="InfiniBand",
        dmesg_styles=["dmesg"],
        smi=True,
        lspci=True,
        before=True,
        omit_ranks=False,
        benign_restart=False,
        title_style=0,
        alerts=False,
        sysfs_hosts="culprit",
    ),
    _spec(
        "thermal-throttle-straggler",
        "thermal_throttle",
        4102,
        12,
        "sw",
        decoys=["overlap_warm", "old_xid"],
        col_compute=True,
        host_scheme="fqdn",
        dmesg_styles=["ctime"],
        smi=True,
        benign_restart=False,
        **_LEAN,
    ),
    _spec(
        "power-brake-straggler",
        "power_throttle",
        4103,
        8,
        "brake",
        decoys=["power_cap_blips", "spare_low_gen"],
        n_spares=1,
        col_compute=True,
        host_scheme="rackslot",
        dmesg_styles=["journal"],
        benign_restart=False,
        **_LEAN,
    ),
    _spec(
        "gpu-fell-off-bus-hang",
        "gpu_fell_off_bus",
        4104,
        16,
        "xid79",
        decoys=["old_xid", "warm_gpu"],
        host_scheme="alpha",
        dmesg_styles=["dmesg", "journal"],
        smi=True,
        **_LEAN,
    ),
    _spec(
        "hbm-dbe-crash",
        "hbm_degradation",
        4105,
        8,
        "dbe",
        decoys=["static_sbe", "spare_xid"],
        n_spares=1,
        host_scheme="fqdn",
        dmesg_styles=["dmesg"],
        smi=True,
        **_LEAN,
    ),
    _spec(
        "healthy-control",
        "healthy",
        4106,
        12,
        decoys=["spare_low_gen", "old_xid", "warm_gpu", "power_cap_blips"],
        n_spares=2,
        host_scheme="rackslot",
        dmesg_styles=["ctime", "dmesg"],
        **_LEAN,
    ),
]


# Tuning-set look: alpha/fqdn/rackslot hosts, leaf/sw-r switches, HGX/DGX bus ids, dmesg/ctime/journal logs.
def _t(
    case,
    cause,
    seed,
    hosts,
    variant=None,
    decoys=None,
    hs="alpha",
    ss="leafspine",
    styles=("dmesg", "ctime"),
    **kw,
):
    o = dict(host_scheme=hs, switch_scheme=ss, dmesg_styles=list(styles))
    o.update(kw)
    o.setdefault("bus_layout", "hgx" if seed % 2 else "dgx")
    return _spec(case, cause, seed, hosts, variant, decoys, **o)


INCIDENTS: list[IncidentSpec] = [
    _t("case-001", "pcie_downtrain", 5001, 8, "x8", hs="alpha", styles=("dmesg",)),
    _t("case-002", "thermal_throttle", 5002, 12, "hw", hs="fqdn", styles=("ctime",)),
    _t(
        "case-003",
        "gpu_fell_off_bus",
        5003,
        16,
        "multiline",
        hs="rackslot",
        ss="rackt0",
        styles=("journal", "dmesg"),
    ),
    _t("case-004", "healthy", 5004, 8, hs="alpha", styles=("dmesg", "ctime"), n_spares=2),
    _t("case-005", "pfc_pause_storm", 5005, 12, hs="fqdn", styles=("journal",)),
    _t("case-006", "input_pipeline_stall", 5006, 16, "growing", hs="rackslot", styles=("dmesg",)),
    _t("case-007", "hbm_degradation", 5007, 8, "contained", hs="alpha", styles=("ctime",)),
    _t("case-008", "nccl_misconfiguration", 5008, 12, "socket", hs="alpha", ss="rackt0", styles=("dmesg",)),
    _t("case-009", "power_throttle", 5009, 8, "cap", hs="rackslot", styles=("journal",), col_compute=False),
    _t(
        "case-010",
        "link_degradation",
        5010,
        16,
        None,
        hs="fqdn",
        styles=("dmesg", "journal"),
        link_layer="InfiniBand",
    ),
    _t("case-011", "silent_data_corruption", 5011, 8, "blip", hs="alpha", styles=("ctime",), tp=1),
    _t(
        "case-012",
        "ecmp_hash_polarization",
        5012,
        16,
        None,
        hs="rackslot",
        ss="leafspine",
        styles=("dmesg",),
        hosts_per_leaf=4,
    ),
    _t("case-013", "host_contention", 5013, 12, "full", hs="fqdn", styles=("journal",), top=True),
    _t("case-014", "nvlink_fault", 5014, 8, "replay", hs="alpha", styles=("dmesg",)),
    _t("case-015", "healthy", 5015, 20, hs="fqdn", ss="rackt0", styles=("ctime", "journal")),
    _t(
        "case-016",
        "pcie_downtrain",
        5016,
        12,
        "nic-width",
        hs="rackslot",
        styles=("dmesg",),
        decoys=["rx_pause_victims", "static_link_errors", "old_xid"],
    ),  # overlap: victims look like a storm
    _t(
        "case-017",
        "thermal_throttle",
        5017,
        8,
        "sw",
        hs="alpha",
        styles=("journal",),
        severity=1.05,
        decoys=["overlap_warm", "power_cap_blips"],
    ),  # overlap: warm neighbour, cap blips
    _t("case-018", "gpu_fell_off_bus", 5018, 8, "xid79", hs="fqdn", styles=("dmesg",)),
    _t("case-019", "pfc_pause_storm", 5019, 24, "error", hs="alpha", ss="rackt0", styles=("ctime",)),
    _t("case-020", "input_pipeline_stall", 5020, 8, None, hs="fqdn", styles=("journal",), col_compute=True),
    _t("case-021", "hbm_degradation", 5021, 12, "sbe", hs="rackslot", styles=("dmesg",), col_compute=True),
    _t("case-022", "nccl_misconfiguration", 5022, 8, "hca", hs="alpha", styles=("ctime",)),
    _t("case-023", "power_throttle", 5023, 16, "brake", hs="fqdn", styles=("dmesg", "ctime")),
    _t(
        "case-024",
        "link_degradation",
        5024,
        8,
        "rate",
        hs="rackslot",
        styles=("journal",),
        link_layer="Ethernet",
    ),
    _t(
        "case-025",
        "silent_data_corruption",
        5025,
        16,
        None,
        hs="fqdn",
        styles=("dmesg",),
        tp=8,
        col_checksum=True,
    ),
    _t(
        "case-026",
        "ecmp_hash_polarization",
        5026,
        8,
        "one",
        hs="alpha",
        ss="rackt0",
        styles=("ctime",),
        hosts_per_leaf=2,
    ),
    _t("case-027", "host_contention", 5027, 8, None, hs="alpha", styles=("dmesg",), severity=1.06),
    _t("case-028", "nvlink_fault", 5028, 12, "fatal", hs="rackslot", styles=("journal", "ctime")),
    _t("case-029", "healthy", 5029, 12, hs="rackslot", styles=("dmesg",), n_spares=1),
    _t(
        "case-030",
        "pcie_downtrain",
        5030,
        64,
        "gen-quiet",
        hs="fqdn",
        ss="leafspine",
        styles=("dmesg", "ctime"),
        severity=1.06,
        before=False,
        ib_sysfs=False,
        aer=False,
        net_sysfs=False,
        node_ib=False,
    ),
    _t("case-031", "thermal_throttle", 5032, 24, None, hs="rackslot", ss="rackt0", styles=("journal",)),
    _t(
        "case-032",
        "pcie_downtrain",
        5033,
        8,
        "x8-quiet",
        hs="fqdn",
        styles=("dmesg",),
        severity=1.04,
        col_compute=False,
    ),
    # Presentations read more widely. An input stall only the hosts' kernels report
    # (NFS not responding), with and without compute_s; NCCL with peer-to-peer copies turned off.
    _t(
        "case-033",
        "input_pipeline_stall",
        5034,
        12,
        "nfs",
        hs="alpha",
        styles=("journal",),
        col_compute=False,
    ),
    _t(
        "case-034",
        "input_pipeline_stall",
        5035,
        8,
        "nfs-in-step",
        hs="rackslot",
        styles=("ctime",),
        col_compute=True,
    ),
    _t("case-035", "nccl_misconfiguration", 5036, 12, "p2p", hs="fqdn", styles=("dmesg",)),
]


def _h(case, cause, seed, hosts, variant=None, decoys=None, hs="ip", ss="torspine", styles=("kmsg",), **kw):
    o = dict(host_scheme=hs, switch_scheme=ss, dmesg_styles=list(styles), bus_layout="xe9680")
    o.update(kw)
    return _spec(case, cause, seed, hosts, variant, decoys, **o)


# Holdout: IP-like and pod names, tor/spn switches, XE9680 bus ids, /dev/kmsg and caller-id kernel logs,
# old kernels and drivers, fleet sizes the tuning set never uses.
HOLDOUT: list[IncidentSpec] = [
    _h("case-101", "pcie_downtrain", 7101, 10, "x8", hs="ip", styles=("kmsg",), sysfs_old=True),
    _h("case-102", "pfc_pause_storm", 7102, 20, None, hs="pod", styles=("caller",)),
    _h(
        "case-103",
        "ecmp_hash_polarization",
        7103,
        14,
        None,
        hs="ip",
        styles=("kmsg", "caller"),
        hosts_per_leaf=2,
    ),
    _h(
        "case-104",
        "link_degradation",
        7104,
        10,
        "errors",
        hs="pod",
        styles=("caller",),
        link_layer="InfiniBand",
        smi_old=True,
    ),
    _h("case-105", "thermal_throttle", 7105, 36, "hw", hs="ip", styles=("kmsg",), col_compute=False),
    _h(
        "case-106",
        "power_throttle",
        7106,
        14,
        "cap",
        hs="pod",
        styles=("kmsg",),
        smi_old=True,
        sysfs_old=True,
    ),
    _h("case-107", "hbm_degradation", 7107, 10, "uncontained", hs="ip", styles=("caller",)),
    _h(
        "case-108",
        "gpu_fell_off_bus",
        7108,
        48,
        "multiline",
        hs="pod",
        styles=("kmsg", "caller"),
        before=False,
        ib_sysfs=False,
    ),
    _h("case-109", "nvlink_fault", 7109, 14, "replay", hs="ip", styles=("caller",), dcgm_reasons_old=True),
    _h("case-110", "silent_data_corruption", 7110, 20, None, hs="pod", styles=("kmsg",), tp=4),
    _h("case-111", "host_contention", 7111, 10, None, hs="ip", styles=("kmsg",)),
    _h("case-112", "input_pipeline_stall", 7112, 14, None, hs="pod", styles=("caller",)),
    _h("case-113", "nccl_misconfiguration", 7113, 20, "gdr", hs="ip", styles=("kmsg",), torch_style="1.13"),
    _h("case-114", "healthy", 7114, 10, hs="pod", styles=("kmsg",), n_spares=2),
    _h("case-115", "healthy", 7115, 20, hs="ip", styles=("caller",), n_spares=1),
]


def build_suite(root: str | Path, which: str = "all") -> list[dict]:
    """Regenerate the committed sets under ``root`` (``evals``): examples/, incidents/, incidents/holdout/."""
    root = Path(root)
    out = []
    sets = {
        "examples": (EXAMPLES, root / "examples"),
        "incidents": (INCIDENTS, root / "incidents"),
        "holdout": (HOLDOUT, root / "incidents" / "holdout"),
    }
    for name, (specs, d) in sets.items():
        if which not in ("all", name):
            continue
        for spec in specs:
            out.append(generate(spec, d))
    return out
