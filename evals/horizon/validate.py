#!/usr/bin/env python3
"""Self-consistency checks for a generated horizon set.  Usage: validate.py DIR

Prints each problem and the count; exit 1 if any. Files the set corrupts on purpose are listed in
INTENDED_BROKEN and are only checked to be unreadable.
"""
import csv
import gzip
import io
import json
import os
import re
import sys

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation",
          "thermal_throttle", "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault",
          "silent_data_corruption", "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
INTENDED_BROKEN = {("hz-13", "metrics/dcgm.om.gz")}
INTENDED_TRUNC = {("hz-07", "nodes/gpu1005.dc3.internal/cmd/dmesg.txt")}
problems = []


def P(case, msg):
    problems.append("%s: %s" % (case, msg))


def read(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read().decode()
    with open(path) as f:
        return f.read()


def find(b, rel):
    for cand in (rel, rel + ".gz"):
        if os.path.exists(os.path.join(b, cand)):
            return os.path.join(b, cand)
    return None


def om_last(text, name, match):
    last = None
    for line in text.splitlines():
        if line.startswith(name + "{") and all(m in line for m in match):
            v, t = line.rsplit(" ", 2)[1:]
            last = (float(v), int(t))
    return last


def check_case(root, cid):
    b = os.path.join(root, cid, "bundle")
    try:
        truth = json.load(open(os.path.join(root, cid, "truth.json")))
    except Exception as e:
        P(cid, "truth.json unreadable: %s" % e)
        return
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in CAUSES:
        P(cid, "bad root_cause %r" % rc)
    if (rc == "healthy") != (comp is None):
        P(cid, "component/healthy mismatch")
    if rc in ("input_pipeline_stall", "nccl_misconfiguration") and comp != "job":
        P(cid, "job-wide cause must name job")
    inc_p = os.path.join(b, "incident.json")
    if not os.path.exists(inc_p):
        P(cid, "incident.json missing")
        return
    inc = json.load(open(inc_p))
    for k in ("schema", "id", "title", "window", "job"):
        if k not in inc:
            P(cid, "incident.json lacks %s" % k)
    if inc.get("schema") != "forensic.bundle/v1":
        P(cid, "schema")
    text = (inc.get("title", "") + " " + inc.get("reported", "")).lower()
    if comp and comp != "job":
        part = comp.split("/")[-1].lower()
        host = comp.split("/")[0].lower()
        if "/" in comp and part in text.split() or ("/" in comp and comp.lower() in text):
            P(cid, "reported text names the faulty part %s" % comp)
        if host in text and rc not in ("pfc_pause_storm",):
            P(cid, "reported text names the faulty host %s" % host)
    for w in rc.split("_"):
        if len(w) > 5 and w in text and rc != "healthy":
            P(cid, "reported text names the cause word %r" % w)
    # component exists somewhere in the bundle
    if comp and comp != "job":
        head = comp.split("/")[0]
        topo_p = find(b, "topology.json")
        known = set(os.listdir(os.path.join(b, "nodes"))) if os.path.isdir(os.path.join(b, "nodes")) else set()
        if os.path.isdir(os.path.join(b, "switches")):
            known |= set(os.listdir(os.path.join(b, "switches")))
        if topo_p:
            topo = json.load(open(topo_p))
            known |= {h["name"] for h in topo.get("hosts", [])} | {s["name"] for s in topo.get("switches", [])}
        if head not in known:
            P(cid, "component head %s not found in bundle" % head)
    # every file readable; OpenMetrics well-formed
    for dp, dn, fn in os.walk(b):
        for f in fn:
            p = os.path.join(dp, f)
            rel = os.path.relpath(p, b)
            if (cid, rel) in INTENDED_BROKEN:
                try:
                    read(p)
                    P(cid, "%s meant to be unreadable but reads" % rel)
                except Exception:
                    pass
                continue
            try:
                t = read(p)
            except Exception as e:
                P(cid, "%s unreadable: %s" % (rel, e))
                continue
            if rel.startswith("metrics/") and not t.endswith("# EOF\n"):
                P(cid, "%s lacks # EOF" % rel)
    # steps: synchronous durations; compute <= duration
    sp = find(b, "job/steps.csv")
    if sp:
        rows = list(csv.DictReader(io.StringIO(read(sp))))
        for k in ("step", "rank", "start_unix", "duration_s"):
            if rows and k not in rows[0]:
                P(cid, "steps.csv lacks %s" % k)
        by = {}
        for r in rows:
            by.setdefault((r["step"], r["start_unix"]), []).append(r)
        for key, rs in by.items():
            ds = [float(r["duration_s"]) for r in rs]
            if max(ds) - min(ds) > 0.01:
                P(cid, "step %s durations not synchronous" % (key,))
                break
            if "compute_s" in rs[0] and rs[0]["compute_s"]:
                if any(float(r["compute_s"]) > float(r["duration_s"]) + 1e-6 for r in rs):
                    P(cid, "compute_s > duration at step %s" % (key,))
                    break
        nr = inc["job"]["ranks"]
        ranks = {int(r["rank"]) for r in rows}
        if ranks and max(ranks) >= nr:
            P(cid, "rank beyond job.ranks")
    # node cross-checks
    nodes = os.path.join(b, "nodes")
    dcgm_p = find(b, "metrics/dcgm.om")
    dcgm = None
    if dcgm_p and (cid, os.path.relpath(dcgm_p, b)) not in INTENDED_BROKEN:
        dcgm = read(dcgm_p)
    node_p = find(b, "metrics/node.om")
    nodeom = read(node_p) if node_p else None
    for h in sorted(os.listdir(nodes)) if os.path.isdir(nodes) else []:
        hp = os.path.join(nodes, h)
        col = json.load(open(os.path.join(hp, "collected.json"))) if os.path.exists(os.path.join(hp, "collected.json")) else {}
        now = col.get("now")
        nv_p = os.path.join(hp, "nvml.json")
        smi_p = find(hp, "cmd/nvidia-smi-q.txt")
        if os.path.exists(nv_p) and smi_p:
            nv = json.load(open(nv_p))
            smi = read(smi_p)
            if smi.startswith("Unable to determine the device handle"):
                if not any("error" in d for d in nv["devices"]):
                    P(cid, "%s nvidia-smi failed but nvml reads every GPU" % h)
                continue
            blocks = re.split(r"\nGPU (0000\S+)\n", smi)
            sm = {blocks[i]: blocks[i + 1] for i in range(1, len(blocks) - 1, 2)}
            for d in nv["devices"]:
                blk = sm.get(d["pci_bus_id"])
                if blk is None:
                    P(cid, "%s gpu%d missing in nvidia-smi -q" % (h, d["index"]))
                    continue
                if "error" in d:
                    if "Unknown Error" not in blk:
                        P(cid, "%s gpu%d lost in nvml but readable in smi" % (h, d["index"]))
                    continue
                temp = int(re.search(r"GPU Current Temp\s+: (\d+) C", blk).group(1))
                if temp != d["nvmlDeviceGetTemperature"]:
                    P(cid, "%s gpu%d temp nvml %s smi %s" % (h, d["index"], d["nvmlDeviceGetTemperature"], temp))
                rep = int(re.search(r"Replays Since Reset\s+: (\d+)", blk).group(1))
                if rep != d["nvmlDeviceGetPcieReplayCounter"]:
                    P(cid, "%s gpu%d replay mismatch" % (h, d["index"]))
                sbe = int(re.search(r"Volatile\n(?:.*\n){2}\s+DRAM Correctable\s+: (\d+)", blk).group(1))
                if sbe != d["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]:
                    P(cid, "%s gpu%d SBE mismatch" % (h, d["index"]))
                w = int(re.search(r"Link Width\n\s+Max\s+: \d+x\n\s+Current\s+: (\d+)x", blk).group(1))
                if w != d["nvmlDeviceGetCurrPcieLinkWidth"]:
                    P(cid, "%s gpu%d width mismatch" % (h, d["index"]))
                sysw = os.path.join(hp, "sys/bus/pci/devices/0000:%s/current_link_width" % d["pci_bus_id"][9:].lower())
                if os.path.exists(sysw) and int(open(sysw).read()) != w:
                    P(cid, "%s gpu%d sysfs width mismatch" % (h, d["index"]))
                if dcgm and now:
                    last = om_last(dcgm, "DCGM_FI_DEV_GPU_TEMP", ['gpu="%d"' % d["index"], 'ostname="%s"' % h])
                    if last and last[1] == now and int(last[0]) != temp:
                        P(cid, "%s gpu%d dcgm temp %s vs %s" % (h, d["index"], last[0], temp))
        # IB counters vs node_exporter at now
        ibd = os.path.join(hp, "sys/class/infiniband")
        if os.path.isdir(ibd) and nodeom and now:
            for dev in sorted(os.listdir(ibd)):
                f = os.path.join(ibd, dev, "ports/1/counters/port_rcv_data")
                if not os.path.exists(f):
                    continue
                words = int(open(f).read())
                last = om_last(nodeom, "node_infiniband_port_data_received_bytes_total", ['device="%s"' % dev])
                # instance may be an IP: match by any series whose value equals, else by host name
                lh = om_last(nodeom, "node_infiniband_port_data_received_bytes_total",
                             ['device="%s"' % dev, 'instance="%s:' % h])
                last = lh or None
                if last and last[1] == now and int(last[0]) != words * 4:
                    P(cid, "%s %s port_rcv_data*4 %d vs node_exporter %d" % (h, dev, words * 4, last[0]))
        # NIC tx pauses == switch port rx PFC (same counter seen from both ends)
    sw = os.path.join(b, "switches")
    topo_p = find(b, "topology.json")
    if os.path.isdir(sw) and topo_p:
        topo = json.load(open(topo_p))
        pfc = {}
        for s in os.listdir(sw):
            p = find(os.path.join(sw, s), "cmd/show-pfc-counters.txt")
            if not p:
                continue
            sec = None
            for line in read(p).splitlines():
                if line.strip().startswith("Port Rx"):
                    sec = "rx"
                elif line.strip().startswith("Port Tx"):
                    sec = "tx"
                elif line.strip() and not line.startswith("-") and sec:
                    cols = line.split()
                    pfc[(s, cols[0], sec)] = int(cols[4].replace(",", ""))
        for hh in topo["hosts"]:
            for n in hh["nics"]:
                p = find(os.path.join(b, "nodes", hh["name"]), "cmd/ethtool-S-%s.txt" % n["netdev"])
                if not p or (n["switch"], n["switch_port"], "rx") not in pfc:
                    continue
                m = dict(re.findall(r"^\s+(\w+): (\d+)$", read(p), re.M))
                if int(m.get("tx_prio3_pause", -1)) != pfc[(n["switch"], n["switch_port"], "rx")]:
                    P(cid, "%s %s tx pauses %s != %s/%s rx PFC3 %s" % (hh["name"], n["netdev"], m.get("tx_prio3_pause"),
                                                                     n["switch"], n["switch_port"], pfc[(n["switch"], n["switch_port"], "rx")]))
                if int(m.get("rx_prio3_pause", -1)) != pfc[(n["switch"], n["switch_port"], "tx")]:
                    P(cid, "%s %s rx pauses != switch tx PFC3" % (hh["name"], n["netdev"]))


def main():
    root = sys.argv[1]
    cases = sorted(d for d in os.listdir(root) if d.startswith("hz-"))
    for cid in cases:
        check_case(root, cid)
    counts = {}
    for cid in cases:
        try:
            rc = json.load(open(os.path.join(root, cid, "truth.json")))["root_cause"]
            counts[rc] = counts.get(rc, 0) + 1
        except Exception:
            pass
    for rc in sorted(CAUSES):
        need = 4 if rc == "healthy" else 2
        if counts.get(rc, 0) < need:
            problems.append("set: %s has %d cases (< %d)" % (rc, counts.get(rc, 0), need))
    if not 30 <= len(cases) <= 36:
        problems.append("set: %d cases" % len(cases))
    for p in problems:
        print(p)
    print("%d cases, %d problems" % (len(cases), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
