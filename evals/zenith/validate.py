#!/usr/bin/env python3
"""Self-consistency checks for the zenith set. Usage: validate.py DIR. Prints problems, then a count."""
import collections, csv, gzip, io, json, os, re, sys

CAUSES = ["pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"]
probs = []


def rd(p):
    if os.path.exists(p):
        return open(p, encoding="utf-8").read()
    if os.path.exists(p + ".gz"):
        return gzip.open(p + ".gz", "rt", encoding="utf-8").read()
    return None


def check(case, d):
    b = os.path.join(d, "bundle")
    P = lambda m: probs.append("%s: %s" % (case, m))
    inc = json.loads(rd(os.path.join(b, "incident.json")) or "null")
    if not inc or inc.get("schema") != "forensic.bundle/v1":
        P("incident.json missing or bad schema"); return None
    truth = json.load(open(os.path.join(d, "truth.json")))
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in CAUSES: P("bad root_cause %r" % rc)
    if (rc == "healthy") != (comp is None): P("component/healthy mismatch")
    topo = json.loads(rd(os.path.join(b, "topology.json")) or "null")
    if topo:
        hosts = {h["name"]: h for h in topo["hosts"]}
        sw = {s["name"] for s in topo["switches"]}
        if comp and comp != "job":
            head = comp.split("/")[0]
            if head not in hosts and head not in sw: P("component %s not in topology" % comp)
            if head in hosts and "/" in comp:
                part = comp.split("/")[1]
                ok = (part.startswith("gpu") and int(part[3:]) < len(hosts[head]["gpus"])) or any(n["ibdev"] == part for n in hosts[head]["nics"])
                if not ok: P("component part %s unknown" % comp)
        if rc in ("input_pipeline_stall", "nccl_misconfiguration") and comp != "job": P("job-wide cause must name job")
        for hn in hosts:
            if hn in (inc.get("title", "") + inc.get("reported", "")) and comp and comp.startswith(hn): P("text names the faulty host")
        for w in rc.split("_"):
            if len(w) > 5 and w in (inc.get("title", "") + inc.get("reported", "")).lower(): P("text names the cause word %s" % w)
    # steps: synchronous durations and compute <= duration
    st = rd(os.path.join(b, "job/steps.csv"))
    if st:
        by = collections.defaultdict(list)
        for r in csv.DictReader(io.StringIO(st)):
            by[(r["step"], r["start_unix"])].append(r)
        for k, rs in by.items():
            du = [float(r["duration_s"]) for r in rs]
            if max(du) / min(du) > 1.01: P("step %s durations not synchronous" % (k,))
            if "compute_s" in rs[0] and any(float(r["compute_s"]) > float(r["duration_s"]) for r in rs): P("compute_s > duration at %s" % (k,))
            if inc["job"]["ranks"] < len(rs): P("step %s has %d ranks, job says %d" % (k, len(rs), inc["job"]["ranks"]))
        if rc == "silent_data_corruption":
            bad = set()
            for rs in by.values():
                cnt = collections.Counter(r["param_checksum"] for r in rs)
                bad |= {r["rank"] for r in rs if cnt[r["param_checksum"]] == 1}
            if len(bad) != 1: P("sdc: expected one disagreeing rank, got %s" % sorted(bad))
    nodes = os.path.join(b, "nodes")
    swrx = {}
    if os.path.isdir(os.path.join(b, "switches")):
        for s in os.listdir(os.path.join(b, "switches")):
            t = rd(os.path.join(b, "switches", s, "cmd/show-pfc-counters.txt"))
            if t:
                rxpart = t.split("Port Tx")[0]
                for line in rxpart.splitlines():
                    f = line.split()
                    if len(f) == 9 and not f[0].startswith("-") and f[0] != "Port":
                        swrx[(s, f[0])] = int(f[4].replace(",", ""))
    for hn in sorted(os.listdir(nodes)) if os.path.isdir(nodes) else []:
        nd = os.path.join(nodes, hn)
        nv = rd(os.path.join(nd, "nvml.json")); smi = rd(os.path.join(nd, "cmd/nvidia-smi-q.txt"))
        nvj = json.loads(nv) if nv else None
        if nvj:
            for dv in nvj["devices"]:
                if "error" in dv: continue
                bdf = "0000:" + dv["pci_bus_id"][9:].lower()
                wsys = rd(os.path.join(nd, "sys/bus/pci/devices", bdf, "current_link_width"))
                if wsys and int(wsys) != dv["nvmlDeviceGetCurrPcieLinkWidth"]: P("%s gpu%d width sysfs/nvml disagree" % (hn, dv["index"]))
                if smi and "Bus Id                            : %s" % dv["pci_bus_id"] in smi:
                    blk = smi.split("GPU %s" % dv["pci_bus_id"])[1].split("\nGPU ")[0]
                    m = re.search(r"Replays Since Reset\s+: (\d+)", blk)
                    if m and int(m.group(1)) != dv["nvmlDeviceGetPcieReplayCounter"]: P("%s gpu%d replay smi/nvml disagree" % (hn, dv["index"]))
                    m = re.search(r"DRAM Correctable\s+: (\d+)", blk)
                    if m and int(m.group(1)) != dv["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]: P("%s gpu%d ECC smi/nvml disagree" % (hn, dv["index"]))
        if topo and hn in hosts:
            for n in hosts[hn]["nics"]:
                e = rd(os.path.join(nd, "cmd/ethtool-S-%s.txt" % n["netdev"]))
                if e and (n["switch"], n["switch_port"]) in swrx:
                    tx = int(re.search(r"tx_prio3_pause: (\d+)", e).group(1))
                    if tx != swrx[(n["switch"], n["switch_port"])]: P("%s %s tx pauses %d != switch rx %d" % (hn, n["ibdev"], tx, swrx[(n["switch"], n["switch_port"])]))
        for pre in ("", "before/"):
            pass
        if not os.path.exists(os.path.join(nd, "collected.json")): P("%s collected.json missing" % hn)
    return rc


def main():
    root = sys.argv[1]
    cnt = collections.Counter(); cases = sorted(os.listdir(root))
    for c in cases:
        rc = check(c, os.path.join(root, c))
        cnt[rc] += 1
    for k in CAUSES:
        need = 4 if k == "healthy" else 2
        if cnt[k] < need: probs.append("set: %s has %d cases (< %d)" % (k, cnt[k], need))
    if not (30 <= len(cases) <= 32): probs.append("set: %d cases" % len(cases))
    for p in probs: print(p)
    print("%d cases, %d problems" % (len(cases), len(probs)))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
