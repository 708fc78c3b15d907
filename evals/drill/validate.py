#!/usr/bin/env python3
"""Check the drill set's own consistency: python3 validate.py DIR.  Prints problems and their count."""
import gzip, json, os, re, sys, csv, io

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
from write_incidents import build  # noqa: E402

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
P = []


def bad(cid, msg):
    P.append("%s: %s" % (cid, msg))


def rd(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            b = open(p, "rb").read()
            return (gzip.decompress(b) if p.endswith(".gz") else b).decode()
    return None


def om_last(text, fam, match, t):
    """value of the sample of family fam whose labels contain all of match, at time t"""
    for line in text.splitlines():
        if line.startswith(fam + "{") and line.endswith(" %d" % t) and all(m in line for m in match):
            return float(line.rsplit(" ", 2)[1])
    return None


def smi_field(block, name):
    m = re.search(r"^\s+%s\s+: (.*)$" % re.escape(name), block, re.M)
    return m.group(1).strip() if m else None


def check_case(d, cid, C):
    b = os.path.join(d, "bundle")
    inc = json.load(open(os.path.join(b, "incident.json")))
    if inc.get("schema") != "forensic.bundle/v1":
        bad(cid, "schema")
    for k in ("window", "job", "title"):
        if k not in inc:
            bad(cid, "incident.json lacks " + k)
    tr = json.load(open(os.path.join(d, "truth.json")))
    if tr["root_cause"] not in CAUSES:
        bad(cid, "root cause not in vocabulary")
    if (tr["root_cause"] == "healthy") != (tr["component"] is None):
        bad(cid, "healthy iff component null")
    # every intended gap is there; every other compressed file reads
    for m in C.missing:
        if os.path.exists(os.path.join(b, m)) or os.path.exists(os.path.join(b, m + ".gz")):
            bad(cid, "meant to be missing: " + m)
    trunc = set()
    for t in C.truncate:
        trunc.add(os.path.join(b, t))
        trunc.add(os.path.join(b, t + ".gz"))
    for root, _, files in os.walk(b):
        for f in files:
            p = os.path.join(root, f)
            if f.endswith(".gz") and p not in trunc:
                try:
                    gzip.decompress(open(p, "rb").read())
                except Exception as e:
                    bad(cid, "unreadable %s (%s)" % (p, e))
    topo = None
    if os.path.exists(os.path.join(b, "topology.json")):
        topo = json.load(open(os.path.join(b, "topology.json")))
        hosts = {h["name"]: h for h in topo["hosts"]}
        comp = tr["component"]
        if comp and comp != "job":
            parts = comp.split("/")
            if parts[0] in hosts:
                if len(parts) == 2:
                    h = hosts[parts[0]]
                    ok = (parts[1].startswith("gpu") and any("gpu%d" % g["index"] == parts[1] for g in h["gpus"])) or \
                         any(n["ibdev"] == parts[1] for n in h["nics"])
                    if not ok:
                        bad(cid, "component part not in topology")
            else:
                sws = {s["name"] for s in topo["switches"]}
                ports = {(n["switch"], n["switch_port"]) for h in topo["hosts"] for n in h["nics"]}
                ports |= {(s["name"], l["port"]) for s in topo["switches"] for l in s["links"]}
                if parts[0] not in sws or (len(parts) == 2 and tuple(parts) not in ports):
                    bad(cid, "component switch/port not in topology")
        if topo.get("ranks") and len(topo["ranks"]) != inc["job"]["ranks"]:
            bad(cid, "rank count differs from incident.json")
    # metrics
    dcgm = rd(os.path.join(b, "metrics", C.dcgm["file"])) if C.dcgm["families"] else None
    node = rd(os.path.join(b, "metrics", C.node_metrics["file"])) if C.node_metrics["on"] else None
    for txt, nm in ((dcgm, "dcgm"), (node, "node")):
        if txt is not None and not txt.rstrip().endswith("# EOF"):
            bad(cid, nm + " metrics lack # EOF")
    now = C.E
    # nodes
    nd = os.path.join(b, "nodes")
    for h in sorted(os.listdir(nd)) if os.path.isdir(nd) else []:
        hp = os.path.join(nd, h)
        if not os.path.exists(os.path.join(hp, "collected.json")):
            bad(cid, h + " lacks collected.json")
        nv = os.path.join(hp, "nvml.json")
        smi = rd(os.path.join(hp, "cmd", "nvidia-smi-q.txt"))
        if os.path.exists(nv):
            nvml = json.load(open(nv))
            for dv in nvml["devices"]:
                sysp = os.path.join(hp, "sys/bus/pci/devices/0000:%s" % dv["pci_bus_id"][9:].lower())
                spd = open(os.path.join(sysp, "current_link_speed")).read().strip()
                if "error" in dv:
                    if spd != "Unknown":
                        bad(cid, "%s gpu%d lost in NVML but sysfs speed %s" % (h, dv["index"], spd))
                    continue
                gen = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5}[spd.split()[0].replace(".0", "")]
                if gen != dv["nvmlDeviceGetCurrPcieLinkGeneration"]:
                    bad(cid, "%s gpu%d sysfs gen %d vs NVML %d" % (h, dv["index"], gen, dv["nvmlDeviceGetCurrPcieLinkGeneration"]))
                if smi:
                    blk = smi.split("GPU %s" % dv["pci_bus_id"])[1].split("\nGPU ")[0]
                    if int(smi_field(blk, "Replays Since Reset")) != dv["nvmlDeviceGetPcieReplayCounter"]:
                        bad(cid, "%s gpu%d replay smi vs nvml" % (h, dv["index"]))
                    if int(smi_field(blk, "DRAM Correctable")) != dv["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]:
                        bad(cid, "%s gpu%d ECC smi vs nvml" % (h, dv["index"]))
                    if int(smi_field(blk, "SM").split()[0]) != dv["nvmlDeviceGetClockInfo"]["sm"]:
                        bad(cid, "%s gpu%d clock smi vs nvml" % (h, dv["index"]))
                if dcgm:
                    lab = ['gpu="%d"' % dv["index"], '"%s"' % h]
                    for fam, v in (("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", dv["nvmlDeviceGetPcieReplayCounter"]),
                                   ("DCGM_FI_DEV_SM_CLOCK", dv["nvmlDeviceGetClockInfo"]["sm"]),
                                   ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", dv["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"])):
                        got = om_last(dcgm, fam, lab, now)
                        if got is not None and got != v:
                            bad(cid, "%s gpu%d %s dcgm %s vs nvml %s" % (h, dv["index"], fam, got, v))
        ibd = os.path.join(hp, "sys/class/infiniband")
        for dev in sorted(os.listdir(ibd)) if os.path.isdir(ibd) else []:
            cdir = os.path.join(ibd, dev, "ports/1/counters")
            rcv = int(open(os.path.join(cdir, "port_rcv_data")).read()) * 4
            err = int(open(os.path.join(cdir, "port_rcv_errors")).read())
            if node:
                got = om_last(node, "node_infiniband_port_data_received_bytes_total", ['device="%s"' % dev, h], now)
                if got is not None and abs(got - rcv) > 4:
                    bad(cid, "%s %s rx bytes sysfs %d vs node_exporter %d" % (h, dev, rcv, got))
                got = om_last(node, "node_infiniband_port_errors_received_total", ['device="%s"' % dev, h], now)
                if got is not None and got != err:
                    bad(cid, "%s %s rcv errors sysfs vs node_exporter" % (h, dev))
    # PFC: a NIC's transmitted pauses are its switch port's received pauses
    if topo:
        for sw in sorted(os.listdir(os.path.join(b, "switches"))) if os.path.isdir(os.path.join(b, "switches")) else []:
            pfc = rd(os.path.join(b, "switches", sw, "cmd", "show-pfc-counters.txt"))
            if not pfc:
                continue
            rx = {}
            sec = None
            for line in pfc.splitlines():
                if "Port Rx" in line:
                    sec = "rx"
                elif "Port Tx" in line:
                    sec = "tx"
                elif line.strip().startswith("Ethernet") or re.match(r"\s*\S+\s+\d", line):
                    f = line.split()
                    if sec:
                        rx[(sec, f[0])] = int(f[4].replace(",", ""))
            for hh in topo["hosts"]:
                for n in hh["nics"]:
                    if n["switch"] != sw:
                        continue
                    et = rd(os.path.join(b, "nodes", hh["name"], "cmd", "ethtool-S-%s.txt" % n["netdev"]))
                    if not et:
                        continue
                    tx = int(re.search(r"tx_prio3_pause: (\d+)", et).group(1))
                    rp = int(re.search(r"rx_prio3_pause: (\d+)", et).group(1))
                    if rx.get(("rx", n["switch_port"])) != tx or rx.get(("tx", n["switch_port"])) != rp:
                        bad(cid, "PFC %s/%s vs %s %s" % (sw, n["switch_port"], hh["name"], n["ibdev"]))
    # steps
    st = rd(os.path.join(b, "job", "steps.csv"))
    if st:
        rows = list(csv.DictReader(io.StringIO(st)))
        by = {}
        for r in rows:
            by.setdefault((r["step"], r["start_unix"]), []).append(r)
            if "compute_s" in r and float(r["compute_s"]) > float(r["duration_s"]):
                bad(cid, "compute_s > duration_s")
        for k, rs in by.items():
            if len({r["duration_s"] for r in rs}) != 1:
                bad(cid, "durations differ within step %s" % (k,))
                break


def main():
    d = sys.argv[1]
    built = {}
    for i, fn in enumerate(cases.CASES):
        built["dr-%02d" % (i + 1)] = build(i, fn)
    ids = sorted(x for x in os.listdir(d) if x.startswith("dr-"))
    if len(ids) != len(built):
        bad("set", "%d cases on disk, %d defined" % (len(ids), len(built)))
    counts = {}
    for cid in ids:
        tr = json.load(open(os.path.join(d, cid, "truth.json")))
        counts[tr["root_cause"]] = counts.get(tr["root_cause"], 0) + 1
        try:
            check_case(os.path.join(d, cid), cid, built[cid])
        except Exception as e:
            bad(cid, "check crashed: %r" % e)
    for c in CAUSES - {"healthy"}:
        if counts.get(c, 0) < 2:
            bad("set", "%s has %d cases" % (c, counts.get(c, 0)))
    if counts.get("healthy", 0) < 4:
        bad("set", "fewer than 4 healthy controls")
    if not 30 <= len(ids) <= 36:
        bad("set", "case count %d" % len(ids))
    for p in P:
        print(p)
    print("%d problems" % len(P))
    return 1 if P else 0


if __name__ == "__main__":
    sys.exit(main())
