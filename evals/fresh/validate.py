#!/usr/bin/env python3
"""Validate a folder of evaluation incidents written by write_incidents.py.

Checks every case against the bundle contract and basic physics; prints each problem and
exits 1 if there is any.  Standard library only.
"""
import calendar
import collections
import csv
import gzip
import io
import json
import os
import re
import sys
import time

ROOT_CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
               "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
               "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
# which component kinds each root cause may name (TRUTH.md)
KINDS = {"pcie_downtrain": {"gpu", "nic"}, "pfc_pause_storm": {"nic", "switchport"},
         "ecmp_hash_polarization": {"switch"}, "link_degradation": {"nic", "switchport"},
         "thermal_throttle": {"gpu", "host"}, "power_throttle": {"gpu", "host"}, "hbm_degradation": {"gpu"},
         "gpu_fell_off_bus": {"gpu"}, "nvlink_fault": {"gpu"}, "silent_data_corruption": {"gpu"},
         "host_contention": {"host"}, "input_pipeline_stall": {"job"}, "nccl_misconfiguration": {"job"},
         "healthy": {None}}
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9.-]+$")
MON = {m: i + 1 for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])}
COUNTER_FAMS = re.compile(r"(_total|_COUNTER|_VIOLATION|_VOL_TOTAL|REMAPPED_ROWS|Octets|Discards)$")


def parse_iso(s):
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


class V:
    def __init__(self):
        self.problems = []
        self.truncated = []

    def err(self, case, msg):
        self.problems.append("%s: %s" % (case, msg))


def read(path, v=None, case=None, allow_trunc=False):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except Exception:
            if allow_trunc:
                if v is not None:
                    v.truncated.append(path)
                return None
            raise
    return data.decode()


def component_kind(comp, topo, rc):
    if comp is None:
        return None, True
    if comp == "job":
        return "job", True
    hosts = {h["name"]: h for h in topo.get("hosts", [])}
    switches = {s["name"]: s for s in topo.get("switches", [])}
    if comp in hosts:
        return "host", True
    if comp in switches:
        return "switch", True
    if "/" in comp:
        a, b = comp.rsplit("/", 1)
        if a in hosts:
            m = re.match(r"^gpu(\d+)$", b)
            if m:
                return "gpu", any(g["index"] == int(m.group(1)) for g in hosts[a]["gpus"])
            return "nic", any(n["ibdev"] == b for n in hosts[a]["nics"])
        if a in switches:
            ports = {l["port"] for l in switches[a].get("links", [])}
            for h in hosts.values():
                for n in h["nics"]:
                    if n.get("switch") == a:
                        ports.add(n.get("switch_port"))
            return "switchport", b in ports
    return "unknown", False


def check_case(v, cdir, case):
    b = os.path.join(cdir, "bundle")
    tp = os.path.join(cdir, "truth.json")
    if not os.path.isfile(os.path.join(b, "incident.json")):
        v.err(case, "missing bundle/incident.json")
        return
    if not os.path.isfile(tp):
        v.err(case, "missing truth.json")
        return
    files = []
    for dp, dn, fn in os.walk(b):
        for f in fn:
            files.append(os.path.relpath(os.path.join(dp, f), b))
    files.sort()
    # JSON
    parsed = {}
    for rel in files:
        if rel.endswith(".json") or rel.endswith(".json.gz"):
            try:
                parsed[rel] = json.loads(read(os.path.join(b, rel)))
            except Exception as e:
                v.err(case, "JSON does not parse: %s (%s)" % (rel, e))
    inc = parsed.get("incident.json", {})
    truth = json.load(open(tp))
    if inc.get("schema") != "forensic.bundle/v1":
        v.err(case, "incident.json schema")
    if inc.get("id") != case:
        v.err(case, "incident id %r != case" % inc.get("id"))
    try:
        ws, we = parse_iso(inc["window"]["start"]), parse_iso(inc["window"]["end"])
        assert ws < we
    except Exception:
        v.err(case, "bad window")
        return
    job = inc.get("job", {})
    for k in ("name", "ranks", "gpus_per_node"):
        if k not in job:
            v.err(case, "job.%s missing" % k)
    # truth
    rc, comp = truth.get("root_cause"), truth.get("component")
    if set(truth) != {"root_cause", "component"}:
        v.err(case, "truth.json keys %s" % sorted(truth))
    if rc not in ROOT_CAUSES:
        v.err(case, "root_cause %r not in vocabulary" % rc)
        return
    topo = parsed.get("topology.json")
    if topo is None:
        v.err(case, "topology.json missing (this set always ships one)")
        return
    kind, exists = component_kind(comp, topo, rc)
    if kind not in KINDS[rc]:
        v.err(case, "component %r (kind %s) not allowed for %s" % (comp, kind, rc))
    if not exists:
        v.err(case, "component %r does not exist in the bundle" % comp)
    hosts = {h["name"]: h for h in topo["hosts"]}
    for hn in hosts:
        if not HOSTNAME_RE.match(hn):
            v.err(case, "bad host name %r" % hn)
    gpn = job.get("gpus_per_node")
    for h in topo["hosts"]:
        if len(h["gpus"]) not in (4, 8):
            v.err(case, "host %s has %d GPUs" % (h["name"], len(h["gpus"])))
    ranks = topo.get("ranks")
    if ranks is not None:
        if len(ranks) != job.get("ranks"):
            v.err(case, "ranks in topology %d != job.ranks %s" % (len(ranks), job.get("ranks")))
        for r in ranks:
            if r["host"] not in hosts:
                v.err(case, "rank %s on unknown host" % r["rank"])
    # culprit host must have no unreadable files (absence of evidence is never the evidence)
    culprit_host = None
    if comp and comp != "job":
        a = comp.split("/")[0]
        if a in hosts:
            culprit_host = a
    # nodes
    node_dirs = sorted({f.split("/")[1] for f in files if f.startswith("nodes/")})
    if not node_dirs:
        v.err(case, "no nodes/ data")
    for hn in node_dirs:
        if hn not in hosts:
            v.err(case, "nodes/%s not in topology" % hn)
        cj = parsed.get("nodes/%s/collected.json" % hn)
        if cj:
            if not (cj.get("before", 0) <= cj.get("now", 0)):
                v.err(case, "%s collected before > now" % hn)
            if "boot" in cj and cj["boot"] >= cj["before"]:
                v.err(case, "%s boot after before" % hn)
            if abs(cj.get("before", ws) - ws) > 600 or abs(cj.get("now", we) - we) > 600:
                v.err(case, "%s snapshots not around the window" % hn)
    # gz readability
    for rel in files:
        if rel.endswith(".gz"):
            allowed = rel.startswith("nodes/") and "/cmd/" in rel and rel.split("/")[1] != culprit_host
            try:
                read(os.path.join(b, rel))
            except Exception:
                if allowed:
                    v.truncated.append(case + "/" + rel)
                else:
                    v.err(case, "unreadable gzip %s" % rel)
        if culprit_host and rel.startswith("nodes/%s/" % culprit_host) and os.path.getsize(os.path.join(b, rel)) == 0:
            v.err(case, "empty file on the culprit host: %s" % rel)
    # counters before -> now
    for rel in files:
        parts = rel.split("/")
        if len(parts) > 3 and parts[0] == "nodes" and parts[2] == "before":
            now_rel = "/".join(parts[:2] + parts[3:])
            if now_rel not in files:
                v.err(case, "before file without a now file: %s" % rel)
                continue
            bt = read(os.path.join(b, rel))
            nt = read(os.path.join(b, now_rel))
            bv, nv = kv_numbers(bt), kv_numbers(nt)
            for k, x in bv.items():
                if k in nv and nv[k] < x:
                    v.err(case, "counter decreased %s [%s] %d -> %d" % (now_rel, k, x, nv[k]))
    # steps
    sp = [f for f in files if f in ("job/steps.csv", "job/steps.csv.gz")]
    if not sp:
        v.err(case, "no steps table")
    for rel in sp:
        check_steps(v, case, read(os.path.join(b, rel)), ws, we, job)
    # metrics
    for rel in files:
        if rel.startswith("metrics/") and (rel.endswith(".om") or rel.endswith(".om.gz")):
            check_om(v, case, rel, read(os.path.join(b, rel)), ws, we, hosts, topo)
    # dmesg wall times
    for hn in node_dirs:
        for rel in ("nodes/%s/cmd/dmesg.txt" % hn, "nodes/%s/cmd/dmesg.txt.gz" % hn):
            if rel in files:
                try:
                    txt = read(os.path.join(b, rel))
                except Exception:
                    continue
                cj = parsed.get("nodes/%s/collected.json" % hn, {})
                check_dmesg(v, case, rel, txt, cj, ws, we)
    # nvml vs topology
    for hn in node_dirs:
        nv = parsed.get("nodes/%s/nvml.json" % hn)
        if nv and hn in hosts:
            tg = {g["index"]: g for g in hosts[hn]["gpus"]}
            for d in nv.get("devices", []):
                g = tg.get(d.get("index"))
                if g is None or g["pci_bus_id"] != d.get("pci_bus_id") or g["uuid"] != d.get("uuid"):
                    v.err(case, "nvml device %s on %s disagrees with topology" % (d.get("index"), hn))
    # logs
    if not any(f.startswith("job/logs/") and f.endswith(".log") for f in files):
        v.err(case, "no job logs")


def kv_numbers(text):
    out = {}
    lines = text.strip().splitlines()
    if len(lines) == 1 and re.match(r"^-?\d+$", lines[0].strip()):
        return {"": int(lines[0])}
    for i, l in enumerate(lines):
        m = re.match(r"^\s*(.+?)[:\s]\s*(-?\d+)$", l)
        if m:
            out["%s#%d" % (m.group(1).strip(), i)] = int(m.group(2))
    return out


def check_steps(v, case, text, ws, we, job):
    rd = csv.DictReader(io.StringIO(text))
    hdr = rd.fieldnames or []
    if hdr[:4] != ["step", "rank", "start_unix", "duration_s"]:
        v.err(case, "steps header %s" % hdr)
        return
    groups = collections.defaultdict(list)
    nr = 0
    for r in rd:
        nr += 1
        groups[(int(r["step"]), r["start_unix"])].append(r)
        rk = int(r["rank"])
        if not 0 <= rk < job.get("ranks", 10 ** 9):
            v.err(case, "rank %d out of range" % rk)
            return
    if nr == 0:
        v.err(case, "steps table empty")
        return
    bad = 0
    for (step, st), rs in groups.items():
        durs = {r["duration_s"] for r in rs}
        if len(durs) != 1:
            bad += 1
            continue
        d = float(rs[0]["duration_s"])
        if "compute_s" in hdr:
            mc = max(float(r["compute_s"]) for r in rs)
            if d + 1e-9 < mc:
                v.err(case, "step %d duration %.4f < max compute %.4f" % (step, d, mc))
        t = float(st)
        if t < ws - 3 * 3600 or t + d > we + 60:
            v.err(case, "step %d at %.0f outside the window" % (step, t))
    if bad:
        v.err(case, "%d steps with differing durations across ranks" % bad)
    starts = sorted(float(k[1]) for k in groups)
    if starts and starts[-1] < ws:
        v.err(case, "no steps inside the window")


def check_om(v, case, rel, text, ws, we, hosts, topo):
    lines = text.rstrip("\n").split("\n")
    if lines[-1] != "# EOF":
        v.err(case, "%s does not end with # EOF" % rel)
    series = collections.OrderedDict()
    seen_fam = set()
    cur = None
    switches = {s["name"] for s in topo.get("switches", [])}
    for l in lines:
        if l.startswith("# TYPE "):
            fam = l.split()[2]
            if fam in seen_fam:
                v.err(case, "%s family %s split" % (rel, fam))
            seen_fam.add(fam)
            cur = fam
            continue
        if l.startswith("#") or not l:
            continue
        m = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+) (\S+)$", l)
        if not m:
            v.err(case, "%s bad sample line %r" % (rel, l[:80]))
            return
        name, labs, val, ts = m.groups()
        if not name.startswith(cur):
            v.err(case, "%s sample %s outside its family" % (rel, name))
        t = float(ts)
        if t < ws - 2 * 3600 or t > we + 600:
            v.err(case, "%s sample at %.0f outside the window" % (rel, t))
            return
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labs))
        host = lab.get("Hostname") or lab.get("hostname") or lab.get("instance", "").split(":")[0]
        if host not in hosts and host not in switches:
            v.err(case, "%s series for unknown host %r" % (rel, host))
            return
        series.setdefault((name, labs), []).append((t, float(val)))
    for (name, labs), pts in series.items():
        if COUNTER_FAMS.search(name):
            for (t0, a), (t1, b) in zip(pts, pts[1:]):
                if b < a:
                    v.err(case, "%s counter %s{%s} decreased at %.0f" % (rel, name, labs[:60], t1))
                    break
        ts = [p[0] for p in pts]
        if ts != sorted(ts):
            v.err(case, "%s series %s not time-ordered" % (rel, name))


def check_dmesg(v, case, rel, txt, cj, ws, we):
    boot = cj.get("boot")
    year = time.gmtime(ws).tm_year
    for l in txt.splitlines():
        t = None
        m = re.match(r"^\[\s*(\d+)\.(\d+)\]", l)
        m2 = re.match(r"^\[(\w{3}) (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})\]", l)
        m3 = re.match(r"^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) \S+ kernel: ", l)
        m4 = re.match(r"^(\d+),(\d+),(\d+),[^;]*;", l)
        if m2:
            t = calendar.timegm((int(m2.group(7)), MON[m2.group(2)], int(m2.group(3)), int(m2.group(4)), int(m2.group(5)), int(m2.group(6))))
        elif m3:
            t = calendar.timegm((year, MON[m3.group(1)], int(m3.group(2)), int(m3.group(3)), int(m3.group(4)), int(m3.group(5))))
        elif m:
            if boot is not None:
                t = boot + int(m.group(1))
        elif m4:
            if boot is not None:
                t = boot + int(m4.group(3)) / 1e6
        else:
            v.err(case, "%s unrecognised line %r" % (rel, l[:60]))
            return
        if t is not None and t > we + 60:
            v.err(case, "%s line after the window end: %r" % (rel, l[:60]))
            return


def main():
    if len(sys.argv) != 2:
        print("usage: validate.py DIR", file=sys.stderr)
        sys.exit(2)
    d = sys.argv[1]
    v = V()
    cases = sorted(x for x in os.listdir(d) if os.path.isdir(os.path.join(d, x)))
    counts = collections.Counter()
    for cs in cases:
        check_case(v, os.path.join(d, cs), cs)
        try:
            counts[json.load(open(os.path.join(d, cs, "truth.json")))["root_cause"]] += 1
        except Exception:
            pass
    if len(cases) < 24:
        v.problems.append("only %d cases" % len(cases))
    for rc in ROOT_CAUSES:
        if rc != "healthy" and counts[rc] < 1:
            v.problems.append("root cause %s not covered" % rc)
    if counts["healthy"] < 4:
        v.problems.append("fewer than 4 healthy controls")
    print("%d cases; root causes: %s" % (len(cases), ", ".join("%s=%d" % kv for kv in sorted(counts.items()))))
    print("intentionally unreadable files (allowed, never on the culprit host): %d" % len(v.truncated))
    for p in v.problems:
        print("PROBLEM " + p)
    if v.problems:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
