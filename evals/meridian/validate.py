#!/usr/bin/env python3
"""Consistency checks over a generated meridian set: validate.py DIR. Prints problems, then their count."""
import collections
import gzip
import json
import os
import re
import sys

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
BANNED = {
    "pcie_downtrain": ["pcie", "downtrain", "link width", "gen1", "x8", "x4"],
    "pfc_pause_storm": ["pause", "pfc", "storm"],
    "ecmp_hash_polarization": ["ecmp", "hash", "polariz", "uplink"],
    "link_degradation": ["symbol", "flap", "link degrad", "cable", "crc"],
    "thermal_throttle": ["thermal", "throttl", "overheat", "fan", "cooling", "temperature"],
    "power_throttle": ["power", "throttl", "psu", "brake"],
    "hbm_degradation": ["ecc", "hbm", "row remap", "memory error"],
    "gpu_fell_off_bus": ["fell off", "fallen", "xid 79", "lost"],
    "nvlink_fault": ["nvlink", "crc"],
    "silent_data_corruption": ["corrupt", "sdc", "checksum"],
    "host_contention": ["contention", "cpu", "memory pressure", "swap", "scanner"],
    "input_pipeline_stall": ["dataloader", "input pipeline", "storage", "data loading"],
    "nccl_misconfiguration": ["nccl_", "misconfig", "hca"],
    "healthy": [],
}
_OLD = ["pcie", "pause", "pfc", "ecmp", "hash", "polariz", "thermal", "throttl", "power cap", "hbm", "ecc", "row remap",
          "fell off", "fallen", "nvlink", "corrupt", "contention", "dataloader", "input pipeline", "nccl_", "misconfig",
          "downtrain", "link degrad", "xid 79", "overheat", "psu"]
problems = []


def P(cid, msg):
    problems.append("%s: %s" % (cid, msg))


def rd(path):
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read().decode()
    if os.path.exists(path + ".gz"):
        try:
            with gzip.open(path + ".gz") as f:
                return f.read().decode()
        except Exception:  # noqa: BLE001  (a recorded unreadable file is allowed)
            return None
    return None


def om_last(text):
    """(name, frozenset(labels)) -> (last ts, last value)."""
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = re.match(r'([A-Za-z_:][\w:]*)\{(.*)\} (\S+) (\d+)$', line)
        if not m:
            raise ValueError("bad sample line: " + line[:80])
        labs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        key = (m.group(1), tuple(sorted(labs.items())))
        out[key] = (int(m.group(4)), float(m.group(3)))
    return out


def check_case(root, cid):
    b = os.path.join(root, cid, "bundle")
    truth = json.load(open(os.path.join(root, cid, "truth.json")))
    if truth["root_cause"] not in CAUSES:
        P(cid, "bad root cause")
    if (truth["root_cause"] == "healthy") != (truth["component"] is None):
        P(cid, "component/healthy mismatch")
    inc = json.loads(rd(os.path.join(b, "incident.json")))
    for k in ("schema", "id", "title", "window", "job"):
        if k not in inc:
            P(cid, "incident.json lacks " + k)
    txt = (inc["title"] + " " + inc.get("reported", "")).lower()
    for w in BANNED[truth["root_cause"]]:
        if w in txt:
            P(cid, "title/reported names '%s'" % w)
    from datetime import datetime
    t0 = int(datetime.strptime(inc["window"]["start"], "%Y-%m-%dT%H:%M:%SZ").timestamp())
    t1 = int(datetime.strptime(inc["window"]["end"], "%Y-%m-%dT%H:%M:%SZ").timestamp())
    import calendar
    t0 = calendar.timegm(datetime.strptime(inc["window"]["start"], "%Y-%m-%dT%H:%M:%SZ").timetuple())
    t1 = calendar.timegm(datetime.strptime(inc["window"]["end"], "%Y-%m-%dT%H:%M:%SZ").timetuple())
    topo = rd(os.path.join(b, "topology.json"))
    hosts = set()
    if topo:
        topo = json.loads(topo)
        hosts = {h["name"] for h in topo["hosts"]}
        comp = truth["component"]
        if comp and comp != "job":
            head = comp.split("/")[0]
            sws = {s["name"] for s in topo["switches"]}
            if head not in hosts and head not in sws:
                P(cid, "component %s not in topology" % comp)
            if head in hosts and "/" in comp:
                h = next(x for x in topo["hosts"] if x["name"] == head)
                part = comp.split("/")[1]
                ok = any(part == "gpu%d" % g["index"] for g in h["gpus"]) or any(part == n["ibdev"] for n in h["nics"])
                if not ok:
                    P(cid, "component part %s missing" % comp)
        nr = len(topo.get("ranks", [])) or sum(len(h["gpus"]) for h in topo["hosts"] if True)
    # steps: synchronous durations, compute <= duration, checksums
    st = rd(os.path.join(b, "job", "steps.csv"))
    if st:
        lines = st.strip().split("\n")
        hdr = lines[0].split(",")
        by = collections.defaultdict(list)
        for ln in lines[1:]:
            f = ln.split(",")
            if len(f) != len(hdr):
                continue  # a truncated last row is allowed (recorded truncation)
            by[(f[0], f[2][:8])].append(dict(zip(hdr, f)))
        for k, rows in by.items():
            ds = [float(r["duration_s"]) for r in rows]
            if max(ds) - min(ds) > 0.01:
                P(cid, "step %s durations not synchronous" % k[0])
                break
            if "compute_s" in hdr:
                for r in rows:
                    if float(r["compute_s"]) > float(r["duration_s"]) + 1e-3:
                        P(cid, "compute > duration at step %s" % k[0])
                        break
            if "param_checksum" in hdr:
                cs = collections.Counter(r["param_checksum"] for r in rows)
                if len(cs) > 2 or (len(cs) == 2 and min(cs.values()) != 1):
                    P(cid, "checksum pattern at step %s" % k[0])
    # metrics parse and cross-source agreement
    mets = {}
    for fn in sorted(os.listdir(os.path.join(b, "metrics"))) if os.path.isdir(os.path.join(b, "metrics")) else []:
        t = rd(os.path.join(b, "metrics", fn[:-3] if fn.endswith(".gz") else fn))
        if not t.rstrip().endswith("# EOF"):
            P(cid, "%s lacks # EOF" % fn)
        mets.update(om_last(t))
    dcgm_replay = {}
    dcgm_sbe = {}
    for (name, labs), (ts, v) in mets.items():
        d = dict(labs)
        host = d.get("hostname") or d.get("Hostname")
        if name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" and ts == t1:
            dcgm_replay[(host, int(d["gpu"]))] = int(v)
        if name == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL" and ts == t1:
            dcgm_sbe[(host, int(d["gpu"]))] = int(v)
    ibrx = {}
    for (name, labs), (ts, v) in mets.items():
        if name == "node_infiniband_port_data_received_bytes_total" and ts == t1:
            d = dict(labs)
            ibrx[(d["instance"].split(":")[0], d["device"])] = int(v)
    ndir = os.path.join(b, "nodes")
    nic_pause = {}
    for h in sorted(os.listdir(ndir)) if os.path.isdir(ndir) else []:
        hd = os.path.join(ndir, h)
        if hosts and h not in hosts:
            P(cid, "node %s not in topology" % h)
        nv = rd(os.path.join(hd, "nvml.json"))
        smi = rd(os.path.join(hd, "cmd", "nvidia-smi-q.txt"))
        if nv:
            nv = json.loads(nv)
            for d in nv["devices"]:
                if "error" in d:
                    continue
                rp = d["nvmlDeviceGetPcieReplayCounter"]
                if (h, d["index"]) in dcgm_replay and dcgm_replay[(h, d["index"])] != rp:
                    P(cid, "%s gpu%d replay nvml %d vs dcgm %d" % (h, d["index"], rp, dcgm_replay[(h, d["index"])]))
                sbe = d["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]
                if (h, d["index"]) in dcgm_sbe and dcgm_sbe[(h, d["index"])] != sbe:
                    P(cid, "%s gpu%d sbe nvml vs dcgm" % (h, d["index"]))
                if smi and ("Bus Id                            : %s" % d["pci_bus_id"]) not in smi:
                    P(cid, "%s gpu%d missing in nvidia-smi" % (h, d["index"]))
        # sysfs counters now >= before, and node_exporter agrees at t1
        ib = os.path.join(hd, "sys", "class", "infiniband")
        for dev in sorted(os.listdir(ib)) if os.path.isdir(ib) else []:
            cdir = os.path.join(ib, dev, "ports", "1", "counters")
            for cn in sorted(os.listdir(cdir)):
                now = int(rd(os.path.join(cdir, cn)))
                bf = rd(os.path.join(hd, "before", "sys", "class", "infiniband", dev, "ports", "1", "counters", cn))
                if bf is not None and int(bf) > now:
                    P(cid, "%s %s %s decreased" % (h, dev, cn))
            rx = int(rd(os.path.join(cdir, "port_rcv_data")))
            for inst in (h,):
                if (inst, dev) in ibrx and ibrx[(inst, dev)] != rx * 4:
                    P(cid, "%s %s rx bytes sysfs*4 %d vs node_exporter %d" % (h, dev, rx * 4, ibrx[(inst, dev)]))
        cmdd = os.path.join(hd, "cmd")
        for fn in sorted(os.listdir(cmdd)) if os.path.isdir(cmdd) else []:
            if fn.startswith("ethtool-S-"):
                t = rd(os.path.join(cmdd, fn))
                if not t.startswith("NIC statistics:\n"):
                    P(cid, fn + " header")
                vals = dict(re.findall(r"^\s+(\w+): (\d+)$", t, re.M))
                nic_pause[(h, fn[10:-4])] = (int(vals["tx_prio3_pause"]), int(vals["rx_prio3_pause"]))
        # dmesg uptime sanity
        dm = rd(os.path.join(cmdd, "dmesg.txt"))
        if dm:
            for ln in dm.splitlines():
                m = re.match(r"\[\s*(-?[\d.]+)\]", ln)
                if m and float(m.group(1)) < 0:
                    P(cid, "%s dmesg negative uptime" % h)
                    break
                m = re.match(r"\d+,\d+,(-?\d+),", ln)
                if m and int(m.group(1)) < 0:
                    P(cid, "%s kmsg negative usec" % h)
                    break
    # NIC pauses == switch port PFC3 counters
    if topo:
        pf = {}
        for sw in topo["switches"]:
            t = rd(os.path.join(b, "switches", sw["name"], "cmd", "show-pfc-counters.txt"))
            if not t:
                continue
            part = t.split("\n\n")
            for blk, key in ((part[0], "rx"), (part[1], "tx")):
                for ln in blk.splitlines()[2:]:
                    f = ln.split()
                    pf[(sw["name"], f[0], key)] = int(f[4].replace(",", ""))
        for hh in topo["hosts"]:
            for n in hh["nics"]:
                k = (hh["name"], n["netdev"])
                if k in nic_pause and (n["switch"], n["switch_port"], "rx") in pf:
                    tx, rx = nic_pause[k]
                    if pf[(n["switch"], n["switch_port"], "rx")] != tx or pf[(n["switch"], n["switch_port"], "tx")] != rx:
                        P(cid, "%s %s pauses differ from %s %s" % (k + (n["switch"], n["switch_port"])))
    return truth


def main():
    root = sys.argv[1]
    cases = sorted(d for d in os.listdir(root) if d.startswith("mr-"))
    classes = collections.Counter()
    for cid in cases:
        try:
            tr = check_case(root, cid)
            classes[tr["root_cause"]] += 1
        except Exception as e:  # noqa: BLE001
            P(cid, "exception %r" % (e,))
    if not 30 <= len(cases) <= 36:
        problems.append("case count %d" % len(cases))
    for c in CAUSES:
        need = 4 if c == "healthy" else 2
        if classes[c] < need:
            problems.append("class %s has %d cases" % (c, classes[c]))
    for p in problems:
        print(p)
    print("%d cases, %d problems" % (len(cases), len(problems)))
    print(" ".join("%s=%d" % kv for kv in sorted(classes.items())))


if __name__ == "__main__":
    main()
