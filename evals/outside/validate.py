#!/usr/bin/env python3
"""Check the "outside" incidents against the bundle spec (forensic.bundle/v1).

    python3 evals/outside/validate.py DIR          # DIR as written by write_incidents.py --out DIR

Checks, per case: every file parses (JSON, CSV, OpenMetrics ending with ``# EOF``, gzip members);
the truth uses the spec's vocabulary and names a part that exists in the bundle; node and switch
folders name known hosts and switches; sysfs link values use the kernel's spellings; kernel log
lines carry one of the prefixes the spec names; ``ethtool -S`` starts with ``NIC statistics:``;
steps.csv obeys the physics of a synchronous job (durations equal across ranks within a step, the
slowest arrival has the largest ``compute_s`` and the shortest wait) and, where the truth is a
slowed GPU or host, that part holds the slowest rank at the end of the window.
Prints one line per problem and exits 1 if there is any. Stdlib only.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
          "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
          "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
JOB_CAUSES = {"input_pipeline_stall", "nccl_misconfiguration"}
SLOWS_OWN_RANK = {"thermal_throttle", "power_throttle", "pcie_downtrain", "hbm_degradation", "host_contention"}
SPEEDS = {"2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe",
          "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "Unknown"}
HOSTNAME = re.compile(r"^[A-Za-z0-9.-]+$")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf) ([0-9]+(?:\.[0-9]+)?)$')
DMESG = [re.compile(p) for p in (
    r"^\[ *\d+\.\d{6}\] (\[ *[TC]\d+\] )?\S",                           # dmesg, with or without caller id
    r"^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] \S",  # dmesg -T
    r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: \S",           # journalctl -k / syslog
    r"^\d,\d+,\d+,[-c+];\S",                                           # /dev/kmsg
    r"^ {8,}NVRM: ",                                                   # continuation of a multi-line NVRM message
)]


def read(p: Path) -> str:
    data = p.read_bytes()
    if p.name.endswith(".gz"):
        if data[3] & 0x08 or data[4:8] != b"\0\0\0\0":
            raise ValueError("gzip member carries a file name or an mtime")
        data = gzip.decompress(data)
    return data.decode()


def check_om(text: str) -> list[str]:
    bad = []
    lines = text.split("\n")
    if lines[-1] != "":
        bad.append("does not end with a newline")
    lines = lines[:-1] if lines[-1] == "" else lines
    if not lines or lines[-1] != "# EOF":
        bad.append("does not end with # EOF")
    typed = set()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
        elif line.startswith("# HELP "):
            continue
        else:
            m = SAMPLE.match(line)
            if not m:
                bad.append(f"line {i + 1} is not a sample: {line[:80]}")
                break
            if m.group(1) not in typed:
                bad.append(f"line {i + 1}: sample before its # TYPE: {m.group(1)}")
                break
    return bad


def check_steps(text: str, case: Path, truth: dict, topo: dict | None, inc: dict) -> list[str]:
    bad = []
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        return ["steps.csv has no rows"]
    head = list(rows[0].keys())
    if head[:4] != ["step", "rank", "start_unix", "duration_s"]:
        return [f"steps.csv header {head[:4]}"]
    groups = defaultdict(list)
    for r in rows:
        groups[(int(r["step"]), float(r["start_unix"]))].append(r)
    ranks = inc["job"]["ranks"]
    for key, rs in groups.items():
        d = [float(r["duration_s"]) for r in rs]
        if max(d) - min(d) > 0.002 * max(d):
            bad.append(f"step {key[0]}: durations differ across ranks ({min(d)}..{max(d)})")
            break
        if any(not 0 <= int(r["rank"]) < ranks for r in rs):
            bad.append(f"step {key[0]}: rank outside 0..{ranks - 1}")
            break
        if "compute_s" in rs[0]:
            comp = [float(r["compute_s"]) for r in rs]
            wait = [float(r["duration_s"]) - float(r["compute_s"]) for r in rs]
            if min(wait) < 0:
                bad.append(f"step {key[0]}: compute_s above duration_s")
                break
            if comp.index(max(comp)) != wait.index(min(wait)):
                bad.append(f"step {key[0]}: the slowest arrival does not have the shortest wait")
                break
    part = (truth.get("component") or "").partition("/")[2]
    if "compute_s" in head and truth["root_cause"] in SLOWS_OWN_RANK and topo and (not part or part.startswith("gpu")):
        placement = {r["rank"]: (r["host"], r["gpu"]) for r in topo.get("ranks", [])} or {
            i * 8 + g: (h["name"], g) for i, h in enumerate(topo["hosts"]) for g in range(8)}
        last = max(groups, key=lambda k: k[1])
        rs = groups[last]
        top = max(rs, key=lambda r: float(r["compute_s"]))
        host, gpu = placement[int(top["rank"])]
        comp = truth["component"]
        want_ok = (comp == host) if "/" not in comp else (comp == f"{host}/gpu{gpu}")
        if not want_ok:
            bad.append(f"slowest rank at the end ({top['rank']} on {host}/gpu{gpu}) is not in {comp}")
    return bad


def check_component(truth: dict, topo: dict | None) -> list[str]:
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in CAUSES:
        return [f"root_cause {rc!r} not in the vocabulary"]
    if rc == "healthy":
        return [] if comp is None else ["healthy with a component"]
    if rc in JOB_CAUSES:
        return [] if comp == "job" else [f"{rc} should name 'job', names {comp!r}"]
    if not comp or comp == "job":
        return [f"{rc} needs a component"]
    if topo is None:
        return ["no topology to check the component against"]
    hosts = {h["name"]: h for h in topo["hosts"]}
    switches = {s["name"]: s for s in topo.get("switches", [])}
    head, _, part = comp.partition("/")
    if head in hosts:
        h = hosts[head]
        if not part:
            return []
        if part.startswith("gpu") and part[3:].isdigit() and any(g["index"] == int(part[3:]) for g in h["gpus"]):
            return []
        if any(n["ibdev"] == part for n in h["nics"]):
            return []
        return [f"component part {part!r} not on host {head}"]
    if head in switches:
        ports = {l["port"] for l in switches[head]["links"]} | {n["switch_port"] for h in topo["hosts"] for n in h["nics"]
                                                              if n.get("switch") == head}
        if not part or part in ports:
            return []
        return [f"port {part!r} not on switch {head}"]
    return [f"component {comp!r} names no known host or switch"]


def check_case(case: Path) -> list[str]:
    bad: list[str] = []
    b = case / "bundle"
    try:
        truth = json.loads((case / "truth.json").read_text())
        inc = json.loads((b / "incident.json").read_text())
    except (OSError, ValueError) as e:
        return [f"truth/incident unreadable: {e}"]
    if inc.get("schema") != "forensic.bundle/v1":
        bad.append("incident.json schema")
    for k in ("id", "title", "window", "job"):
        if k not in inc:
            bad.append(f"incident.json lacks {k}")
    if inc["window"]["start"] >= inc["window"]["end"]:
        bad.append("window start >= end")
    topo = None
    tp = b / "topology.json"
    if tp.exists():
        topo = json.loads(tp.read_text())
        for h in topo["hosts"]:
            if not HOSTNAME.match(h["name"]):
                bad.append(f"host name {h['name']!r}")
    bad += check_component(truth, topo)
    host_names = {h["name"] for h in topo["hosts"]} if topo else set()
    sw_names = {s["name"] for s in topo.get("switches", [])} if topo else set()
    for f in sorted(p for p in b.rglob("*") if p.is_file()):
        rel = f.relative_to(b).as_posix()
        try:
            text = read(f)
        except Exception as e:  # noqa: BLE001 - report any unreadable file
            bad.append(f"{rel}: unreadable ({e})")
            continue
        name = rel[:-3] if rel.endswith(".gz") else rel
        parts = name.split("/")
        try:
            if name.endswith(".json"):
                json.loads(text)
            if name.startswith("metrics/") and name.endswith(".om"):
                bad += [f"{rel}: {m}" for m in check_om(text)]
            if name == "job/steps.csv":
                bad += [f"{rel}: {m}" for m in check_steps(text, case, truth, topo, inc)]
        except ValueError as e:
            bad.append(f"{rel}: does not parse ({e})")
        if parts[0] == "nodes" and topo and parts[1] not in host_names:
            bad.append(f"{rel}: host not in topology")
        if parts[0] == "switches" and topo and parts[1] not in sw_names:
            bad.append(f"{rel}: switch not in topology")
        leaf = parts[-1]
        if "/sys/" in name and leaf in ("current_link_speed", "max_link_speed") and text.strip() not in SPEEDS:
            bad.append(f"{rel}: link speed {text.strip()!r}")
        if "/sys/" in name and leaf in ("current_link_width", "max_link_width") and not text.strip().isdigit():
            bad.append(f"{rel}: link width {text.strip()!r}")
        if "/counters/" in name or "/hw_counters/" in name:
            if not text.strip().isdigit():
                bad.append(f"{rel}: counter {text.strip()!r}")
        if leaf == "dmesg.txt":
            for i, line in enumerate(text.splitlines()):
                if not any(p.match(line) for p in DMESG):
                    bad.append(f"{rel}: line {i + 1} has no known prefix: {line[:70]}")
                    break
        if leaf.startswith("ethtool-S-") and not text.startswith("NIC statistics:\n"):
            bad.append(f"{rel}: does not start with 'NIC statistics:'")
        if parts[0] == "job" and len(parts) > 2 and parts[1] == "logs" and not leaf.endswith(".log"):
            bad.append(f"{rel}: job log not named *.log")
    if "/" in (truth.get("component") or ""):
        host = truth["component"].split("/")[0]
        if host in host_names and not (b / "nodes" / host).exists() and truth["root_cause"] not in ("ecmp_hash_polarization",):
            bad.append(f"no node data for the faulty host {host}")
    return bad


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: validate.py DIR", file=sys.stderr)
        return 2
    root = Path(argv[0])
    cases = sorted(p.parent for p in root.rglob("truth.json"))
    if not cases:
        print(f"no cases under {root}", file=sys.stderr)
        return 2
    problems = 0
    causes = defaultdict(int)
    for case in cases:
        causes[json.loads((case / "truth.json").read_text())["root_cause"]] += 1
        for m in check_case(case):
            print(f"{case.name}: {m}")
            problems += 1
    missing = sorted(CAUSES - set(causes))
    if missing:
        print(f"root causes never used: {', '.join(missing)}")
        problems += 1
    if causes["healthy"] < 3:
        print("fewer than 3 healthy cases")
        problems += 1
    print(f"{len(cases)} cases, {problems} problems; " + ", ".join(f"{k} {v}" for k, v in sorted(causes.items())))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
