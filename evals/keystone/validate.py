#!/usr/bin/env python3
"""Self-consistency checks for a generated keystone set: python3 evals/keystone/validate.py DIR

Prints each problem and the count; 0 problems is the target. Standard library only.
"""
import csv
import gzip
import io
import json
import os
import re
import sys
from collections import Counter, defaultdict

CAUSES = ["pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"]
# what each case was built to lose (everything else must be present and readable)
INTENDED = {
    "ks-04": {"no_nodes"},
    "ks-11": {"garbage:nodes/*/cmd/dmesg.txt.gz"},
    "ks-17": {"missing:nvidia-smi-q", "truncated:metrics/dcgm.om.gz"},
    "ks-22": {"truncated:metrics/node.om.gz"},
    "ks-25": {"missing:job/steps.csv"},
}
# words that would name the cause in a title / reported text
NAMES = {
    "pcie_downtrain": ["downtrain", "pcie", "gen3", "x4"], "pfc_pause_storm": ["pfc", "pause"],
    "ecmp_hash_polarization": ["ecmp", "hash", "polariz", "uplink"], "link_degradation": ["symbol", "fec", "flap", "cable"],
    "thermal_throttle": ["thermal", "temperature", "fan", "cooling"], "power_throttle": ["power", "psu"],
    "hbm_degradation": ["hbm", "ecc", "remap", "memory error"], "gpu_fell_off_bus": ["fallen", "off the bus", "xid 79"],
    "nvlink_fault": ["nvlink"], "silent_data_corruption": ["silent", "corrupt"],
    "host_contention": ["cpu", "contention", "memory pressure"], "input_pipeline_stall": ["dataloader", "input", "storage"],
    "nccl_misconfiguration": ["nccl_", "misconfig", "ib_hca"], "healthy": [],
}

problems = []


def bad(case, msg):
    problems.append("%s: %s" % (case, msg))


def read(path):
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
    elif os.path.exists(path + ".gz"):
        with open(path + ".gz", "rb") as f:
            raw = f.read()
        try:
            data = gzip.decompress(raw)
        except Exception:
            return None
    else:
        return None
    return data.decode(errors="replace")


def parse_om(text):
    """{(name, frozenset(labels)): [(t, v)]}"""
    out = defaultdict(list)
    if not text:
        return out
    rx = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+) (\d+)$')
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = rx.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        out[(m.group(1), tuple(sorted(labels.items())))].append((int(m.group(4)), float(m.group(3))))
    return out


def series(om, name, host=None, **want):
    for (n, labs), pts in om.items():
        if n != name:
            continue
        d = dict(labs)
        if host is not None and d.get("Hostname", d.get("hostname")) != host:
            continue
        if all(d.get(k) == v for k, v in want.items()):
            return pts
    return None


def at(pts, t):
    v = None
    for tt, vv in pts or []:
        if tt <= t:
            v = vv
    return v


def check_case(root, cid):
    b = os.path.join(root, cid, "bundle")
    intended = INTENDED.get(cid, set())
    try:
        inc = json.load(open(os.path.join(b, "incident.json")))
        truth = json.load(open(os.path.join(root, cid, "truth.json")))
    except Exception as e:
        bad(cid, "unreadable incident/truth: %s" % e)
        return None
    if inc.get("schema") != "forensic.bundle/v1" or inc.get("id") != cid:
        bad(cid, "schema/id")
    for k in ("window", "job", "title", "reported"):
        if k not in inc:
            bad(cid, "incident.json lacks " + k)
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in CAUSES:
        bad(cid, "root_cause not in vocabulary: %r" % rc)
    if (rc == "healthy") != (comp is None):
        bad(cid, "component must be null exactly for healthy")
    topo_t = read(os.path.join(b, "topology.json"))
    topo = json.loads(topo_t) if topo_t else {"hosts": [], "switches": []}
    hosts = {h["name"]: h for h in topo["hosts"]}
    switches = {s["name"]: s for s in topo.get("switches", [])}
    # component names an existing part
    if comp and comp != "job":
        parts = comp.split("/")
        if parts[0] in hosts:
            h = hosts[parts[0]]
            if len(parts) == 2:
                ok = any("gpu%d" % g["index"] == parts[1] for g in h["gpus"]) or any(n["ibdev"] == parts[1] for n in h["nics"])
                if not ok:
                    bad(cid, "component part %s not on host" % comp)
        elif parts[0] in switches:
            if len(parts) == 2:
                known = set(l["port"] for l in switches[parts[0]]["links"])
                known |= set(n["switch_port"] for h in topo["hosts"] for n in h["nics"] if n["switch"] == parts[0])
                pfc = read(os.path.join(b, "switches", parts[0], "cmd", "show-pfc-counters.txt")) or ""
                if parts[1] not in known and parts[1] not in _pfc(pfc)[0]:
                    bad(cid, "switch port %s unknown" % comp)
        else:
            bad(cid, "component %s names no known part" % comp)
    if rc in ("input_pipeline_stall", "nccl_misconfiguration") and comp != "job":
        bad(cid, "job-level cause must name job")
    # titles do not name the cause or the part
    text = (inc.get("title", "") + " " + inc.get("reported", "")).lower()
    for w in NAMES.get(rc, []):
        if w in text:
            bad(cid, "title/reported names the cause (%r)" % w)
    if comp and comp != "job":
        if comp.split("/")[0].lower() in text:
            bad(cid, "title/reported names the faulty host/switch")
    # required / readable files
    steps = read(os.path.join(b, "job", "steps.csv"))
    if steps is None and "missing:job/steps.csv" not in intended:
        bad(cid, "steps.csv missing")
    nodes_dir = os.path.join(b, "nodes")
    if not os.path.isdir(nodes_dir) and "no_nodes" not in intended:
        bad(cid, "no node data")
    # metrics end with # EOF unless intended truncated
    metrics = {}
    for fn in sorted(os.listdir(os.path.join(b, "metrics"))):
        t = read(os.path.join(b, "metrics", fn[:-3] if fn.endswith(".gz") else fn))
        if t is None:
            bad(cid, "metrics %s unreadable" % fn)
            continue
        if not t.rstrip().endswith("# EOF") and ("truncated:metrics/" + fn) not in intended:
            bad(cid, "metrics %s lacks # EOF" % fn)
        metrics[fn.split(".")[0]] = parse_om(t)
    # steps: synchronous durations; compute <= duration
    if steps:
        rows = list(csv.DictReader(io.StringIO(steps)))
        by = defaultdict(list)
        for r in rows:
            by[(r["step"], r["start_unix"][:7])].append(r)
        nr = inc["job"]["ranks"]
        spread = 0
        for k, rs in by.items():
            ds = [float(r["duration_s"]) for r in rs]
            if max(ds) - min(ds) > 0.01 * max(ds) + 0.01:
                spread += 1
            if "compute_s" in rs[0]:
                for r in rs:
                    if float(r["compute_s"]) > float(r["duration_s"]) + 1e-6:
                        bad(cid, "compute_s > duration_s at step %s rank %s" % (r["step"], r["rank"]))
                        break
        if spread:
            bad(cid, "%d steps with unequal durations across ranks" % spread)
        ranks = set(int(r["rank"]) for r in rows)
        if len(ranks) != nr:
            bad(cid, "steps.csv has %d ranks, incident says %d" % (len(ranks), nr))
    # node-level cross-source checks
    node_om = metrics.get("node", {})
    dcgm = metrics.get("dcgm", {})
    if os.path.isdir(nodes_dir):
        for hn in sorted(os.listdir(nodes_dir)):
            hd = os.path.join(nodes_dir, hn)
            if hn not in hosts:
                bad(cid, "node folder %s not in topology" % hn)
                continue
            col = json.load(open(os.path.join(hd, "collected.json")))
            now = col["now"]
            nv = read(os.path.join(hd, "nvml.json"))
            smi = read(os.path.join(hd, "cmd", "nvidia-smi-q.txt"))
            if nv is None:
                bad(cid, "%s: nvml.json missing" % hn)
            else:
                nvj = json.loads(nv)
                for d in nvj["devices"]:
                    if "error" in d:
                        sp = os.path.join(hd, "sys", "bus", "pci", "devices", "0000:%s" % d["pci_bus_id"][9:].lower(), "current_link_speed")
                        if read(sp) and read(sp).strip() != "Unknown":
                            bad(cid, "%s gpu%d lost in NVML but sysfs link readable" % (hn, d["index"]))
                        continue
                    if smi is not None:
                        blk = smi.split("GPU " + d["pci_bus_id"])
                        if len(blk) < 2:
                            bad(cid, "%s gpu%d missing in nvidia-smi -q" % (hn, d["index"]))
                        else:
                            m = re.search(r"\n        SM\s+: (\d+) MHz", blk[1])
                            if not m or int(m.group(1)) != d["nvmlDeviceGetClockInfo"]["sm"]:
                                bad(cid, "%s gpu%d SM clock differs nvml/smi" % (hn, d["index"]))
                            m = re.search(r"Replays Since Reset\s+: (\d+)", blk[1])
                            if not m or int(m.group(1)) != d["nvmlDeviceGetPcieReplayCounter"]:
                                bad(cid, "%s gpu%d replay differs nvml/smi" % (hn, d["index"]))
                    s = series(dcgm, "DCGM_FI_DEV_SM_CLOCK", host=hn, gpu=str(d["index"]), pci_bus_id=d["pci_bus_id"])
                    if s and at(s, now) is not None and int(at(s, now)) != d["nvmlDeviceGetClockInfo"]["sm"]:
                        bad(cid, "%s gpu%d SM clock differs nvml/dcgm" % (hn, d["index"]))
                    s = series(dcgm, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", host=hn, gpu=str(d["index"]), pci_bus_id=d["pci_bus_id"])
                    if s and at(s, now) is not None and int(at(s, now)) != d["nvmlDeviceGetPcieReplayCounter"]:
                        bad(cid, "%s gpu%d replay differs nvml/dcgm" % (hn, d["index"]))
            for n in hosts[hn]["nics"]:
                base = os.path.join(hd, "sys", "class", "infiniband", n["ibdev"], "ports", "1", "counters")
                v = read(os.path.join(base, "port_rcv_data"))
                if v is None:
                    bad(cid, "%s %s lacks port_rcv_data" % (hn, n["ibdev"]))
                    continue
                bv = read(os.path.join(hd, "before", "sys", "class", "infiniband", n["ibdev"], "ports", "1", "counters", "port_rcv_data"))
                if bv is not None and int(bv) > int(v):
                    bad(cid, "%s %s counter went backwards" % (hn, n["ibdev"]))
                for (name, labs), pts in node_om.items():
                    d = dict(labs)
                    if name == "node_infiniband_port_data_received_bytes_total" and d.get("device") == n["ibdev"] and \
                            d.get("instance", "").split(":")[0] in (hn, _ip(hn)):
                        mv = at(pts, now)
                        if mv is not None and int(mv) != int(v) * 4:
                            bad(cid, "%s %s port_rcv_data*4 != node_exporter" % (hn, n["ibdev"]))
                if n["link_layer"] == "Ethernet":
                    eth = read(os.path.join(hd, "cmd", "ethtool-S-%s.txt" % n["netdev"]))
                    if eth is None:
                        bad(cid, "%s ethtool -S %s missing" % (hn, n["netdev"]))
                        continue
                    tx = int(re.search(r"tx_prio3_pause: (\d+)", eth).group(1))
                    rx = int(re.search(r"rx_prio3_pause: (\d+)", eth).group(1))
                    pfc = read(os.path.join(b, "switches", n["switch"], "cmd", "show-pfc-counters.txt"))
                    if pfc:
                        rxs, txs = _pfc(pfc)
                        if rxs.get(n["switch_port"]) != tx or txs.get(n["switch_port"]) != rx:
                            bad(cid, "%s %s pauses differ from %s/%s" % (hn, n["ibdev"], n["switch"], n["switch_port"]))
    # switch-to-switch: one end's transmitted pauses are the other's received
    for sn, s in switches.items():
        pfc = read(os.path.join(b, "switches", sn, "cmd", "show-pfc-counters.txt"))
        if not pfc:
            continue
        rxs, txs = _pfc(pfc)
        for l in s["links"]:
            other = read(os.path.join(b, "switches", l["peer"], "cmd", "show-pfc-counters.txt"))
            if not other:
                continue
            orx, otx = _pfc(other)
            if txs.get(l["port"]) != orx.get(l["peer_port"]):
                bad(cid, "%s/%s tx pauses != %s/%s rx" % (sn, l["port"], l["peer"], l["peer_port"]))
    return inc, truth, len(hosts)


def _ip(hn):
    if re.match(r"^\d+-\d+-\d+-\d+$", hn):
        return hn.replace("-", ".")
    return hn


def _pfc(text):
    rx, tx = {}, {}
    cur = None
    for line in text.splitlines():
        if "Port Rx" in line:
            cur = rx
        elif "Port Tx" in line:
            cur = tx
        elif line.strip() and not line.startswith("-") and cur is not None:
            parts = line.split()
            cur[parts[0]] = int(parts[4].replace(",", ""))
    return rx, tx


def main():
    root = sys.argv[1]
    cases = sorted(d for d in os.listdir(root) if d.startswith("ks-"))
    counts = Counter()
    biggest = 0
    for cid in cases:
        r = check_case(root, cid)
        if r:
            counts[r[1]["root_cause"]] += 1
            biggest = max(biggest, r[2])
    if not (30 <= len(cases) <= 36):
        bad("set", "%d cases (want 30-36)" % len(cases))
    for c in CAUSES:
        need = 4 if c == "healthy" else 2
        if counts[c] < need:
            bad("set", "%s has %d cases (want >= %d)" % (c, counts[c], need))
    if biggest < 256:
        bad("set", "no incident with >= 256 hosts")
    for p in problems:
        print(p)
    print("%d cases, largest %d hosts; per class: %s" % (len(cases), biggest, dict(sorted(counts.items()))))
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
