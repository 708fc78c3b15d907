"""Print a scenario as a bundle: incident.json, topology.json, job/, metrics/, nodes/, switches/."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from ._io import BundleWriter
from .fleet import topology_json
from .formats import dmesg, ethtool, hostload, joblogs, lspci, nvml, openmetrics, smi, sonic, sysfs
from .formats._time import iso
from .sim import Scenario
from .steps import render_csv


def write_bundle(scn: Scenario, w: BundleWriter, incident_id: str) -> None:
    o = scn.opts
    # an independent stream for print-time noise keeps the physics draws stable across format options
    rng = np.random.default_rng([scn.seed, 7])
    inc: dict[str, Any] = {
        "schema": "forensic.bundle/v1",
        "id": f"inc-{zlib.crc32(f'{incident_id}:{scn.seed}'.encode()):08x}",
        "title": scn.title,
        "window": {"start": iso(scn.t0), "end": iso(scn.t1)},
        "job": {"name": scn.job.name, "ranks": scn.fleet.n_ranks, "gpus_per_node": 8},
        "reported": scn.reported,
    }
    if scn.alerts:
        inc["alerts"] = scn.alerts
    w.json("incident.json", inc)
    w.json(
        "topology.json",
        topology_json(
            scn.fleet, include_ranks=not o["omit_ranks"], rng=rng, shuffle_ranks=o["shuffle_rank_rows"]
        ),
        indent=o.get("topo_indent"),
        gz=o.get("gz_topology", False),
    )

    # job/
    res = scn.steps_result
    assert res is not None, "build simulates the steps before anything is written"
    w.text("job/steps.csv", render_csv(res, o["rows_order"], rng), gz=o["gz_steps"])
    for name, text in joblogs.render(scn, res, rng).items():
        w.text(f"job/logs/{name}", text, gz=o.get("gz_logs", False))

    # metrics/
    all_hosts = [h.name for h in scn.fleet.hosts]
    if o["dcgm"]:
        w.text("metrics/dcgm.om", openmetrics.dcgm(scn, all_hosts, rng), gz=o["gz_metrics"])
    if o["node_metrics"]:
        w.text("metrics/node.om", openmetrics.node(scn, all_hosts, rng), gz=o["gz_metrics"])
    if o["snmp"]:
        sw = []
        many = sum(len(s.links) + len(s.down_ports) for s in scn.fleet.leaves()) > 48
        for s in scn.fleet.leaves():
            ports = [link.port for link in s.links] + ([] if many else list(s.down_ports))
            sw.append((s.name, ports))
        w.text("metrics/snmp.om", openmetrics.snmp(scn, sw, rng), gz=o["gz_metrics"])

    # nodes/
    for h in scn.fleet.hosts:
        base = f"nodes/{h.name}"
        hs = scn.hosts[h.name]
        needs_boot = hs.dmesg_style in ("dmesg", "kmsg", "caller")
        if o["collected"] or needs_boot:
            col = {"before": round(scn.t0, 3), "now": round(scn.now, 3), "boot": round(hs.boot, 3)}
            if not needs_boot and rng.random() < 0.3:
                del col["boot"]
            w.json(f"{base}/collected.json", col, indent=None)
        w.json(
            f"{base}/nvml.json",
            nvml.build(scn, h, scn.now, rng),
            indent=o.get("nvml_indent"),
            gz=o.get("gz_nvml", False),
        )
        with_sysfs = _writes_sysfs(o, scn, h.name)
        if with_sysfs:
            sysfs.write(w, f"{base}/sys", scn, h, scn.now)
        w.text(f"{base}/cmd/dmesg.txt", dmesg.render(hs, h.name, scn.now, rng), gz=o["gz_dmesg"])
        if o["smi"]:
            w.text(f"{base}/cmd/nvidia-smi-q.txt", smi.render(scn, h, scn.now, rng), gz=o["gz_cmd"])
        if o["lspci"]:
            w.text(f"{base}/cmd/lspci-vv.txt", lspci.render(scn, h, scn.now), gz=o["gz_cmd"])
        eth = h.nics[0].link_layer == "Ethernet"
        if o["ethtool"] and eth:
            for n in h.nics:
                w.text(
                    f"{base}/cmd/ethtool-S-{n.netdev}.txt",
                    ethtool.render_ethtool(scn.nic(h.name, n.ibdev), scn.now),
                    gz=len(scn.fleet.hosts) > 8,
                )
        if o["ibstat"]:
            w.text(f"{base}/cmd/ibstat.txt", ethtool.render_ibstat(scn, h, scn.now))
        if o["top"]:
            w.text(f"{base}/cmd/top.txt", hostload.top(hs, scn.now, rng))
            w.text(f"{base}/cmd/pressure-cpu.txt", hostload.pressure_cpu(hs, scn.now, rng))
        if o["before"]:
            if with_sysfs:
                sysfs.write(w, f"{base}/before/sys", scn, h, scn.t0)
            if o["ethtool"] and eth:
                for n in h.nics:
                    w.text(
                        f"{base}/before/cmd/ethtool-S-{n.netdev}.txt",
                        ethtool.render_ethtool(scn.nic(h.name, n.ibdev), scn.t0),
                        gz=len(scn.fleet.hosts) > 8,
                    )

    # switches/
    if scn.fleet.link_layer == "Ethernet" and o["sonic"]:
        for s in scn.fleet.leaves():
            ss = scn.switches[s.name]
            w.text(f"switches/{s.name}/cmd/show-pfcwd-stats.txt", sonic.pfcwd_stats(ss))
            w.text(f"switches/{s.name}/cmd/show-pfc-counters.txt", sonic.pfc_counters(ss, scn.now))
            w.text(
                f"switches/{s.name}/cmd/show-interfaces-counters.txt",
                sonic.interfaces_counters(ss, scn.now, 300.0),
            )


def _writes_sysfs(o: dict, scn: Scenario, host: str) -> bool:
    """Whether ``host`` gets its ``sys/`` (and ``before/sys/``) tree: option ``sysfs_hosts``.

    ``"all"`` (the default) writes every host's tree; ``"culprit"`` only the host the truth names
    (a GPU's or NIC's host, or the host itself), so a small readable case shows the sysfs form where
    it matters and the same link state as ``lspci -vv`` elsewhere; ``"none"`` writes no tree.
    """
    which = o.get("sysfs_hosts", "all")
    if which == "all":
        return True
    if which == "none":
        return False
    if which == "culprit":
        comp = (scn.truth or {}).get("component") or ""
        return comp == host or comp.startswith(host + "/")
    raise ValueError(f"sysfs_hosts must be 'all', 'culprit' or 'none', not {which!r}")
