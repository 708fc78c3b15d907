#!/usr/bin/env python3
"""Self-consistency checks of a generated rehearsal set: python3 validate.py DIR  (prints N problems)."""
import gzip, json, os, re, sys, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES  # noqa: E402

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
problems = []


def P(case, msg):
    problems.append("%s: %s" % (case, msg))


def read(path):
    """Text of a bundle file, plain or .gz; None when missing; 'UNREADABLE' when it cannot be decoded."""
    if os.path.exists(path):
        return open(path, encoding="utf-8").read()
    if os.path.exists(path + ".gz"):
        try:
            return gzip.open(path + ".gz", "rt", encoding="utf-8").read()
        except (EOFError, OSError, zlib.error):
            return "UNREADABLE"
    return None


def om_series(text):
    """name -> {labels string -> [(t, value)]}"""
    out = {}
    if not text or text == "UNREADABLE":
        return out
    for ln in text.splitlines():
        if not ln or ln[0] == "#":
            continue
        m = re.match(r'([A-Za-z_:][\w:]*)\{(.*)\} (\S+) (\d+)$', ln)
        if not m:
            continue
        out.setdefault(m.group(1), {}).setdefault(m.group(2), []).append((int(m.group(4)), float(m.group(3))))
    return out


def lab(s, k):
    m = re.search(r'(?:^|,)%s="([^"]*)"' % k, s)
    return m.group(1) if m else None


def check_case(root, cid, case):
    b = os.path.join(root, cid, "bundle")
    try:
        truth = json.load(open(os.path.join(root, cid, "truth.json")))
    except Exception as e:
        P(cid, "truth.json unreadable: %s" % e); return
    inc = read(os.path.join(b, "incident.json"))
    if inc is None:
        P(cid, "incident.json missing"); return
    inc = json.loads(inc)
    for k in ("schema", "id", "title", "window", "job"):
        if k not in inc:
            P(cid, "incident.json lacks %s" % k)
    if inc.get("schema") != "forensic.bundle/v1":
        P(cid, "schema")
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in CAUSES:
        P(cid, "bad root_cause %r" % rc)
    if (rc == "healthy") != (comp is None):
        P(cid, "component/healthy mismatch")
    topo = json.loads(read(os.path.join(b, "topology.json")))
    hosts = {h["name"]: h for h in topo["hosts"]}
    sws = {s["name"]: s for s in topo["switches"]}
    text = (inc.get("title", "") + " " + inc.get("reported", "")).lower()
    if comp and comp != "job":
        if comp.lower() in text:
            P(cid, "title/reported names the faulty part")
        head, _, tail = comp.partition("/")
        if head in hosts:
            h = hosts[head]
            if tail and not (re.fullmatch(r"gpu\d+", tail) and any(g["index"] == int(tail[3:]) for g in h["gpus"])) \
                    and not any(n["ibdev"] == tail for n in h["nics"]):
                P(cid, "component part %s not on host" % comp)
        elif head in sws:
            ports = {l["port"] for l in sws[head]["links"]}
            for h in topo["hosts"]:
                ports |= {n["switch_port"] for n in h["nics"] if n["switch"] == head}
            if tail and tail not in ports:
                P(cid, "switch port %s unknown" % comp)
        else:
            P(cid, "component %s not in topology" % comp)
    if rc and rc != "healthy" and rc.replace("_", " ") in text:
        P(cid, "title/reported names the cause")
    # ranks resolve to hosts and GPUs
    for r in topo.get("ranks", []):
        if r["host"] not in hosts:
            P(cid, "rank %d on unknown host" % r["rank"])
    # steps: synchronous job, one duration per step across ranks
    st = read(os.path.join(b, "job", "steps.csv"))
    if st and st != "UNREADABLE":
        rows = [l.split(",") for l in st.strip().splitlines()[1:]]
        groups = {}
        for r in rows:
            groups.setdefault((r[0], round(float(r[2]) / 5)), []).append(float(r[3]))
        for k, ds in groups.items():
            if len(ds) > 1 and max(ds) / min(ds) > 1.02:
                P(cid, "step %s durations differ across ranks" % (k[0],)); break
        hdr = st.split("\n", 1)[0].split(",")
        if "compute_s" in hdr:
            i = hdr.index("compute_s")
            for r in rows[:5000]:
                if float(r[i]) > float(r[3]) + 1e-6:
                    P(cid, "compute_s above duration_s"); break
    # per-node consistency
    dcgm = om_series(read(os.path.join(b, "metrics", "dcgm.om")))
    node = om_series(read(os.path.join(b, "metrics", "node.om")))
    snmp = om_series(read(os.path.join(b, "metrics", "switch.om")))
    ndir = os.path.join(b, "nodes")
    sw_pfc = {}
    for sn in sws:
        t = read(os.path.join(b, "switches", sn, "cmd", "show-pfc-counters.txt"))
        if t:
            mode = None
            for ln in t.splitlines():
                if "Port Rx" in ln:
                    mode = "rx"
                elif "Port Tx" in ln:
                    mode = "tx"
                elif ln.strip().startswith("Ethernet"):
                    f = ln.split()
                    sw_pfc[(sn, f[0], mode)] = int(f[4].replace(",", ""))
    for hn in sorted(os.listdir(ndir)) if os.path.isdir(ndir) else []:
        if hn not in hosts:
            P(cid, "node folder %s not in topology" % hn); continue
        hd = os.path.join(ndir, hn)
        nv = read(os.path.join(hd, "nvml.json"))
        smi = read(os.path.join(hd, "cmd", "nvidia-smi-q.txt"))
        if nv:
            nv = json.loads(nv)
            for d in nv["devices"]:
                if "error" in d:
                    bus = d["pci_bus_id"]
                    sp = read(os.path.join(hd, "sys", "bus", "pci", "devices", "0000:" + bus[9:].lower(), "current_link_speed"))
                    if sp is not None and sp.strip() != "Unknown":
                        P(cid, "%s lost GPU with a link speed" % hn)
                    continue
                if smi and "Bus Id                            : %s" % d["pci_bus_id"] in smi:
                    blk = smi.split("GPU %s" % d["pci_bus_id"], 1)[1].split("\nGPU ", 1)[0]
                    m = re.search(r"Replays Since Reset\s+: (\d+)", blk)
                    if not m or int(m.group(1)) != d["nvmlDeviceGetPcieReplayCounter"]:
                        P(cid, "%s gpu%d replay nvml vs smi" % (hn, d["index"]))
                    m = re.search(r"DRAM Correctable\s+: (\d+)", blk)
                    if not m or int(m.group(1)) != d["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"]:
                        P(cid, "%s gpu%d ECC nvml vs smi" % (hn, d["index"]))
                    m = re.search(r"\n        SM\s+: (\d+) MHz", blk)
                    if not m or int(m.group(1)) != d["nvmlDeviceGetClockInfo"]["sm"]:
                        P(cid, "%s gpu%d clock nvml vs smi" % (hn, d["index"]))
                    lw = re.search(r"Link Width\n\s+Max\s+: (\d+)x\n\s+Current\s+: (\d+)x", blk)
                    if not lw or int(lw.group(2)) != d["nvmlDeviceGetCurrPcieLinkWidth"]:
                        P(cid, "%s gpu%d width nvml vs smi" % (hn, d["index"]))
                sysw = read(os.path.join(hd, "sys", "bus", "pci", "devices", "0000:" + d["pci_bus_id"][9:].lower(), "current_link_width"))
                if sysw is not None and int(sysw) != d["nvmlDeviceGetCurrPcieLinkWidth"]:
                    P(cid, "%s gpu%d width nvml vs sysfs" % (hn, d["index"]))
                for fam, key in (("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", lambda d: d["nvmlDeviceGetPcieReplayCounter"]),
                                 ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", lambda d: d["nvmlDeviceGetTotalEccErrors"]["corrected_volatile"])):
                    for ls, pts in dcgm.get(fam, {}).items():
                        if (lab(ls, "hostname") or lab(ls, "Hostname")) == hn and lab(ls, "gpu") == str(d["index"]):
                            if int(pts[-1][1]) != key(d):
                                P(cid, "%s gpu%d %s last sample vs nvml" % (hn, d["index"], fam))
        for n in hosts[hn]["nics"]:
            cd = os.path.join(hd, "sys", "class", "infiniband", n["ibdev"], "ports", "1", "counters")
            bd = os.path.join(hd, "before", "sys", "class", "infiniband", n["ibdev"], "ports", "1", "counters")
            now = read(os.path.join(cd, "port_xmit_data")); bef = read(os.path.join(bd, "port_xmit_data"))
            if now is None or bef is None:
                continue
            dx = int(now) - int(bef)
            if dx < 0:
                P(cid, "%s %s counter went backwards" % (hn, n["ibdev"]))
            for ls, pts in node.get("node_infiniband_port_data_transmitted_bytes_total", {}).items():
                if lab(ls, "instance").split(":")[0] == hn and lab(ls, "device") == n["ibdev"]:
                    if int(pts[-1][1]) != int(now) * 4:
                        P(cid, "%s %s node_exporter vs sysfs" % (hn, n["ibdev"]))
            for ls, pts in snmp.get("ifHCInOctets", {}).items():
                if lab(ls, "instance") == n["switch"] and lab(ls, "ifName") == n["switch_port"]:
                    t0 = inc_t0(inc)
                    first = next(v for t, v in pts if t >= t0)
                    if abs((pts[-1][1] - first) - dx * 4) > 4:
                        P(cid, "%s %s switch in-octets vs NIC tx" % (hn, n["ibdev"]))
            if n["link_layer"] == "Ethernet":
                e1 = read(os.path.join(hd, "cmd", "ethtool-S-%s.txt" % n["netdev"]))
                e0 = read(os.path.join(hd, "before", "cmd", "ethtool-S-%s.txt" % n["netdev"]))
                if e1 and e0:
                    def g(t, k):
                        return int(re.search(r"\n\s+%s: (\d+)" % k, t).group(1))
                    txd = g(e1, "tx_prio3_pause") - g(e0, "tx_prio3_pause")
                    rxd = g(e1, "rx_prio3_pause") - g(e0, "rx_prio3_pause")
                    rxp = sw_pfc.get((n["switch"], n["switch_port"], "rx"))
                    txp = sw_pfc.get((n["switch"], n["switch_port"], "tx"))
                    if rxp is not None and rxp < txd:
                        P(cid, "%s %s NIC tx pauses exceed switch port rx" % (hn, n["ibdev"]))
                    if txp is not None and txp and txp != rxd:
                        P(cid, "%s %s NIC rx pauses != switch port tx" % (hn, n["ibdev"]))
                    if int(read(os.path.join(cd, "port_xmit_data"))) * 4 != g(e1, "tx_vport_rdma_unicast_bytes"):
                        P(cid, "%s %s ethtool vs sysfs bytes" % (hn, n["ibdev"]))
    # switch links symmetric
    for s in topo["switches"]:
        for l in s["links"]:
            peer = sws.get(l["peer"])
            if not peer or not any(x["peer"] == s["name"] and x["port"] == l["peer_port"] for x in peer["links"]):
                P(cid, "asymmetric link %s/%s" % (s["name"], l["port"]))
            if (s["name"], l["port"], "tx") in sw_pfc and (l["peer"], l["peer_port"], "rx") in sw_pfc:
                if sw_pfc[(s["name"], l["port"], "tx")] != sw_pfc[(l["peer"], l["peer_port"], "rx")]:
                    P(cid, "pauses sent by %s/%s != received by %s/%s" % (s["name"], l["port"], l["peer"], l["peer_port"]))
    # declared unreadable files really are, others are readable
    for rel in case.truncate:
        if read(os.path.join(b, rel)) != "UNREADABLE":
            P(cid, "%s should be unreadable" % rel)


def inc_t0(inc):
    import calendar, time
    return calendar.timegm(time.strptime(inc["window"]["start"], "%Y-%m-%dT%H:%M:%SZ"))


def main():
    root = sys.argv[1]
    counts = {}
    for cid, fn in CASES:
        if not os.path.isdir(os.path.join(root, cid)):
            P(cid, "case folder missing"); continue
        case = fn()
        check_case(root, cid, case)
        counts[case.truth[0]] = counts.get(case.truth[0], 0) + 1
    for rc in sorted(CAUSES):
        need = 4 if rc == "healthy" else 2
        if counts.get(rc, 0) < need:
            problems.append("set: %s has %d cases (< %d)" % (rc, counts.get(rc, 0), need))
    for p in problems:
        print(p)
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
