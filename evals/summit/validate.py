#!/usr/bin/env python3
"""validate.py DIR: self-consistency checks of the summit set; prints the problems and their count."""
import csv
import gzip
import io
import json
import os
import re
import sys

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
problems = []


def bad(case, msg):
    problems.append("%s: %s" % (case, msg))


def read(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            data = open(p, "rb").read()
            if p.endswith(".gz"):
                try:
                    data = gzip.decompress(data)
                except Exception:
                    return None  # deliberately truncated
            return data.decode()
    return None


def last_samples(text):
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"(\w+)\{(.*)\} (\S+) (\d+)$", line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        out[(m.group(1), labels.get("hostname") or labels.get("Hostname") or labels.get("instance", "").split(":")[0],
             labels.get("gpu") or labels.get("device") or labels.get("ifName"))] = (float(m.group(3)), int(m.group(4)))
    return out


def check(root, case):
    b = os.path.join(root, case, "bundle")
    t = json.load(open(os.path.join(root, case, "truth.json")))
    if t.get("root_cause") not in CAUSES:
        bad(case, "bad root_cause")
    if (t["root_cause"] == "healthy") != (t["component"] is None):
        bad(case, "component/healthy mismatch")
    inc = json.load(open(os.path.join(b, "incident.json")))
    if inc.get("schema") != "forensic.bundle/v1":
        bad(case, "schema")
    for k in ("title", "reported"):
        low = inc[k].lower()
        comp = t["component"]
        if comp and comp != "job" and comp.lower() in low:
            bad(case, "%s names the component" % k)
        if t["root_cause"].replace("_", " ") in low:
            bad(case, "%s names the cause" % k)
    topo = json.load(open(os.path.join(b, "topology.json"))) if os.path.exists(os.path.join(b, "topology.json")) else None
    if topo and t["component"] and t["component"] != "job":
        hosts = {h["name"]: h for h in topo["hosts"]}
        sws = {s["name"]: s for s in topo["switches"]}
        head, _, tail = t["component"].partition("/")
        if head in hosts:
            if tail and not (tail.startswith("gpu") and int(tail[3:]) in [g["index"] for g in hosts[head]["gpus"]]) \
                    and tail not in [n["ibdev"] for n in hosts[head]["nics"]]:
                bad(case, "component part not in topology")
        elif head in sws:
            if tail and tail not in [l["port"] for l in sws[head]["links"]] and not any(
                    n["switch"] == head and n["switch_port"] == tail for h in hosts.values() for n in h["nics"]):
                bad(case, "switch port not in topology")
        else:
            bad(case, "component host/switch not in topology")
    if topo:
        nranks = len(topo["ranks"]) if "ranks" in topo else None
        if nranks and nranks != inc["job"]["ranks"]:
            bad(case, "rank count")
    # steps: synchronous job
    st = read(os.path.join(b, "job", "steps.csv"))
    if st:
        rows = list(csv.DictReader(io.StringIO(st)))
        by = {}
        for r in rows:
            try:
                by.setdefault((r["step"], int(float(r["start_unix"]))), []).append(r)
                if "compute_s" in r and r["compute_s"] and float(r["compute_s"]) > float(r["duration_s"]) + 1e-6:
                    bad(case, "compute_s > duration_s")
                    break
            except (ValueError, KeyError, TypeError, AttributeError):
                pass  # truncated last row
        for k, rs in by.items():
            ds = [float(r["duration_s"]) for r in rs if r.get("duration_s")]
            if ds and max(ds) - min(ds) > 0.01:
                bad(case, "unsynchronised durations at step %s" % k)
                break
    dc = read(os.path.join(b, "metrics", "dcgm.om"))
    dcl = last_samples(dc) if dc else {}
    ne = read(os.path.join(b, "metrics", "node.om"))
    nel = last_samples(ne) if ne else {}
    end = inc["window"]["end"]
    pfc = {}
    sd = os.path.join(b, "switches")
    if os.path.isdir(sd):
        for sw in os.listdir(sd):
            txt = read(os.path.join(sd, sw, "cmd", "show-pfc-counters.txt")) or ""
            mode = None
            for line in txt.splitlines():
                if "Port Rx" in line:
                    mode = "rx"
                elif "Port Tx" in line:
                    mode = "tx"
                elif line.strip().startswith("Ethernet"):
                    f = line.split()
                    pfc[(sw, f[0], mode)] = int(f[4].replace(",", ""))
    nd = os.path.join(b, "nodes")
    for h in sorted(os.listdir(nd)) if os.path.isdir(nd) else []:
        nv = os.path.join(nd, h, "nvml.json")
        smi = read(os.path.join(nd, h, "cmd", "nvidia-smi-q.txt")) or ""
        if os.path.exists(nv):
            d = json.load(open(nv))
            for dev in d["devices"]:
                if "error" in dev:
                    continue
                sbe = dev["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]
                k = ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", h, str(dev["index"]))
                if k in dcl and int(dcl[k][0]) != sbe:
                    bad(case, "%s gpu%d SBE nvml %d vs dcgm %d" % (h, dev["index"], sbe, dcl[k][0]))
                k = ("DCGM_FI_DEV_SM_CLOCK", h, str(dev["index"]))
                if k in dcl and int(dcl[k][0]) != dev["nvmlDeviceGetClockInfo"]["sm"]:
                    bad(case, "%s gpu%d clock nvml vs dcgm" % (h, dev["index"]))
                blk = smi.split("GPU " + dev["pci_bus_id"])
                if len(blk) > 1 and ("DRAM Correctable              : %d\n" % sbe) not in blk[1].split("\nGPU ")[0]:
                    bad(case, "%s gpu%d SBE nvml vs nvidia-smi" % (h, dev["index"]))
        ibroot = os.path.join(nd, h, "sys", "class", "infiniband")
        tp = {n["ibdev"]: n for hh in (topo or {"hosts": []})["hosts"] if hh["name"] == h for n in hh["nics"]}
        for dev in sorted(os.listdir(ibroot)) if os.path.isdir(ibroot) else []:
            x = int(read(os.path.join(ibroot, dev, "ports", "1", "counters", "port_xmit_data")))
            k = ("node_infiniband_port_data_transmitted_bytes_total", h, dev)
            if k in nel and int(nel[k][0]) != x * 4:
                bad(case, "%s %s xmit bytes sysfs vs node_exporter" % (h, dev))
            if dev in tp:
                eth = read(os.path.join(nd, h, "cmd", "ethtool-S-%s.txt" % tp[dev]["netdev"]))
                if eth:
                    vals = dict(re.findall(r"^\s+(\w+): (\d+)$", eth, re.M))
                    sk = (tp[dev]["switch"], tp[dev]["switch_port"])
                    if sk + ("rx",) in pfc and pfc[sk + ("rx",)] != int(vals["tx_prio3_pause"]):
                        bad(case, "%s %s tx pauses vs switch rx" % (h, dev))
                    if sk + ("tx",) in pfc and pfc[sk + ("tx",)] != int(vals["rx_prio3_pause"]):
                        bad(case, "%s %s rx pauses vs switch tx" % (h, dev))


def main():
    root = sys.argv[1]
    cases = sorted(x for x in os.listdir(root) if x.startswith("sm-"))
    causes = {}
    healthy = 0
    for c in cases:
        check(root, c)
        rc = json.load(open(os.path.join(root, c, "truth.json")))["root_cause"]
        causes[rc] = causes.get(rc, 0) + 1
    for rc in CAUSES - {"healthy"}:
        if causes.get(rc, 0) < 2:
            problems.append("class %s has %d cases" % (rc, causes.get(rc, 0)))
    if causes.get("healthy", 0) < 4:
        problems.append("fewer than 4 healthy controls")
    if not 30 <= len(cases) <= 36:
        problems.append("case count %d" % len(cases))
    for p in problems:
        print(p)
    print("%d cases, %d problems" % (len(cases), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
