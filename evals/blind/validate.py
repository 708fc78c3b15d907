#!/usr/bin/env python3
"""Check blind incidents against the bundle contract: ``python3 validate.py DIR [DIR ...]``.

DIR is a set (folders holding ``<case>/bundle`` + ``<case>/truth.json``) or one case. Checks:
every file parses as its format (gzip members with mtime 0 and no name), OpenMetrics ends with
``# EOF`` and keeps families contiguous and timestamps rising, every truth component exists in
the bundle, and the physics of ``steps.csv``: in a synchronous job the durations of one step are
equal across ranks, and the rank with the largest ``compute_s`` waits the least.
Exit status 1 and one line per problem when anything is wrong. Stdlib only.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT_CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
               "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
               "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}
SPEEDS = {"2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe",
          "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "Unknown"}
HOST_RE = re.compile(r"^[A-Za-z0-9.-]+$")
SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? '
                       r'(-?[0-9.eE+-]+|NaN|\+Inf|-Inf) ([0-9]+(?:\.[0-9]+)?)$')
DMESG_RES = [re.compile(r"^\[\s*\d+\.\d{6}\] (\[ *[TC]\d+\] )?"),                 # dmesg, PRINTK_CALLER
             re.compile(r"^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] "),  # dmesg -T
             re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: "),       # journalctl -k
             re.compile(r"^\d+,\d+,\d+,[-c+];"),                                         # /dev/kmsg
             re.compile(r"^\s+\S")]                                                       # continuation line


class Problems(list):
    def add(self, case: str, msg: str) -> None:
        self.append(f"{case}: {msg}")


def read(path: Path, probs: Problems, case: str) -> str | None:
    data = path.read_bytes()
    if path.suffix == ".gz":
        if data[:2] != b"\x1f\x8b":
            probs.add(case, f"{path.name}: not gzip")
            return None
        flags, mtime = data[3], int.from_bytes(data[4:8], "little")
        if mtime != 0 or flags & 0x08:
            probs.add(case, f"{path.name}: gzip member has an mtime or a file name")
        data = gzip.decompress(data)
    try:
        return data.decode()
    except UnicodeDecodeError:
        probs.add(case, f"{path}: not UTF-8")
        return None


def check_om(text: str, name: str, probs: Problems, case: str) -> dict:
    lines = text.rstrip("\n").split("\n")
    if lines[-1] != "# EOF":
        probs.add(case, f"{name}: does not end with # EOF")
    seen_fam, cur = set(), None
    last_ts: dict[str, float] = {}
    series: dict[str, list] = defaultdict(list)
    for i, line in enumerate(lines[:-1], start=1):
        if line.startswith("# TYPE ") or line.startswith("# HELP "):
            fam = line.split()[2]
            if line.startswith("# HELP ") and fam in seen_fam and fam != cur:
                probs.add(case, f"{name}:{i}: family {fam} is not contiguous")
            seen_fam.add(fam)
            cur = fam
            continue
        if line.startswith("#"):
            probs.add(case, f"{name}:{i}: unexpected comment {line[:40]!r}")
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            probs.add(case, f"{name}:{i}: not an OpenMetrics sample: {line[:80]!r}")
            continue
        sname, labels, value, ts = m.groups()
        if cur is None or not (sname == cur or sname.startswith(cur + "_")):
            probs.add(case, f"{name}:{i}: sample {sname} outside its family ({cur})")
        key = sname + (labels or "")
        t = float(ts)
        if key in last_ts and t <= last_ts[key]:
            probs.add(case, f"{name}:{i}: timestamps do not rise for {key[:60]}")
        last_ts[key] = t
        series[key].append((t, float(value)))
    return series


def check_steps(text: str, probs: Problems, case: str) -> None:
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        probs.add(case, "steps.csv: no rows")
        return
    need = ["step", "rank", "start_unix", "duration_s"]
    if list(rows[0].keys())[:4] != need:
        probs.add(case, f"steps.csv: header starts {list(rows[0].keys())[:4]}")
        return
    by = defaultdict(list)
    for r in rows:
        by[int(r["step"])].append(r)
    bad_dur = bad_wait = 0
    groups = 0
    for step, rs in by.items():
        rs.sort(key=lambda r: float(r["start_unix"]))
        # a resumed job may log a step number again: split runs of the same step by start time
        runs, cur = [], [rs[0]]
        for r in rs[1:]:
            if float(r["start_unix"]) - float(cur[-1]["start_unix"]) > 1.0:
                runs.append(cur)
                cur = [r]
            else:
                cur.append(r)
        runs.append(cur)
        for run in runs:
            groups += 1
            if len({r["rank"] for r in run}) != len(run):
                probs.add(case, f"steps.csv: step {step} has a rank twice at one start")
            d = [float(r["duration_s"]) for r in run]
            if max(d) - min(d) > max(0.01, 0.01 * max(d)):
                bad_dur += 1
            if "compute_s" in run[0] and run[0]["compute_s"] not in ("", None):
                c = [float(r["compute_s"]) for r in run]
                w = [a - b for a, b in zip(d, c)]
                if min(w) < 0:
                    probs.add(case, f"steps.csv: step {step}: compute_s larger than duration_s")
                k = max(range(len(c)), key=c.__getitem__)
                if w[k] > min(w) + 0.005:
                    bad_wait += 1
    if bad_dur:
        probs.add(case, f"steps.csv: {bad_dur}/{groups} steps have unequal durations across ranks")
    if bad_wait:
        probs.add(case, f"steps.csv: {bad_wait}/{groups} steps where the slowest rank does not wait least")


def check_case(case_dir: Path, probs: Problems) -> None:
    case = case_dir.name
    b = case_dir / "bundle"
    truth = json.loads((case_dir / "truth.json").read_text())
    if truth.get("root_cause") not in ROOT_CAUSES:
        probs.add(case, f"truth: unknown root cause {truth.get('root_cause')}")
    inc_p = b / "incident.json"
    if not inc_p.is_file():
        probs.add(case, "no incident.json")
        return
    inc = json.loads(inc_p.read_text())
    for k in ("schema", "id", "title", "window", "job"):
        if k not in inc:
            probs.add(case, f"incident.json: no {k}")
    if inc.get("schema") != "forensic.bundle/v1":
        probs.add(case, "incident.json: schema")
    w0 = datetime.strptime(inc["window"]["start"], "%Y-%m-%dT%H:%M:%SZ")
    w1 = datetime.strptime(inc["window"]["end"], "%Y-%m-%dT%H:%M:%SZ")
    if w1 <= w0:
        probs.add(case, "incident.json: empty window")
    topo = {}
    for f in sorted(b.rglob("*")):
        if not f.is_file():
            continue
        rel = f.relative_to(b).as_posix()
        text = read(f, probs, case)
        if text is None:
            continue
        base = rel[:-3] if rel.endswith(".gz") else rel
        try:
            if base.endswith(".json"):
                obj = json.loads(text)
                if base == "topology.json":
                    topo = obj
            elif base.endswith(".om"):
                check_om(text, rel, probs, case)
            elif base == "job/steps.csv":
                check_steps(text, probs, case)
            elif base.endswith("cmd/dmesg.txt"):
                for i, line in enumerate(text.splitlines(), 1):
                    if not any(r.match(line) for r in DMESG_RES):
                        probs.add(case, f"{rel}:{i}: no known kernel log prefix: {line[:60]!r}")
                        break
            elif "/cmd/ethtool-S-" in base:
                if not text.startswith("NIC statistics:\n") or not all(
                        re.match(r"^     [a-z0-9_]+: \d+$", l) for l in text.splitlines()[1:]):
                    probs.add(case, f"{rel}: not ethtool -S output")
            elif base.endswith("_link_speed"):
                if text.strip() not in SPEEDS:
                    probs.add(case, f"{rel}: bad link speed {text.strip()!r}")
            elif base.endswith("_link_width") or "/counters/" in base or "/hw_counters/" in base \
                    or base.endswith("carrier_changes"):
                int(text.strip())
            elif base.endswith(("aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal")):
                last = text.strip().splitlines()[-1]
                if not re.match(r"^TOTAL_ERR_(COR|FATAL|NONFATAL) \d+$", last):
                    probs.add(case, f"{rel}: AER file does not end with a TOTAL line")
            elif base.endswith(("pressure-cpu.txt", "pressure-memory.txt", "pressure-io.txt")):
                for l in text.splitlines():
                    if not re.match(r"^(some|full) avg10=\d+\.\d\d avg60=\d+\.\d\d avg300=\d+\.\d\d total=\d+$", l):
                        probs.add(case, f"{rel}: bad PSI line {l!r}")
            elif base.endswith("ipmitool-sel-elist.txt"):
                for l in text.splitlines():
                    if len(l.split(" | ")) != 6:
                        probs.add(case, f"{rel}: bad SEL line {l!r}")
        except (ValueError, json.JSONDecodeError) as e:
            probs.add(case, f"{rel}: does not parse ({e})")
    # names
    hosts = {h["name"]: h for h in topo.get("hosts", [])}
    for name in hosts:
        if not HOST_RE.match(name):
            probs.add(case, f"topology: host name {name!r}")
    nodes = {p.name for p in (b / "nodes").iterdir()} if (b / "nodes").is_dir() else set()
    # truth component exists
    comp = truth.get("component")
    rc = truth.get("root_cause")
    if rc == "healthy":
        if comp is not None:
            probs.add(case, "truth: healthy with a component")
    elif comp == "job":
        pass
    elif comp is None:
        probs.add(case, "truth: fault without a component")
    else:
        switches = {s["name"]: s for s in topo.get("switches", [])}
        head, _, tail = comp.partition("/")
        if head in hosts:
            if head not in nodes:
                probs.add(case, f"truth: host {head} has no node data")
            if tail.startswith("gpu"):
                if int(tail[3:]) not in {g["index"] for g in hosts[head]["gpus"]}:
                    probs.add(case, f"truth: {comp} not in topology")
            elif tail:
                if tail not in {n["ibdev"] for n in hosts[head]["nics"]}:
                    probs.add(case, f"truth: {comp} not in topology")
        elif head in switches:
            if tail:
                ports = {l["port"] for l in switches[head]["links"]}
                ports |= {n.get("switch_port") for h in hosts.values() for n in h["nics"] if n.get("switch") == head}
                if tail not in ports:
                    probs.add(case, f"truth: {comp}: no such port")
        else:
            probs.add(case, f"truth: {comp} names nothing in the bundle")
    for r in topo.get("ranks", []):
        if r["host"] not in hosts:
            probs.add(case, f"topology: rank {r['rank']} on unknown host")


def main(argv=None) -> int:
    args = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    if not args:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    probs = Problems()
    n = 0
    for a in args:
        cases = [a] if (a / "truth.json").is_file() else sorted(p.parent for p in a.rglob("truth.json"))
        for c in cases:
            check_case(c, probs)
            n += 1
    for p in probs:
        print(p)
    print(f"{n} cases, {len(probs)} problems", file=sys.stderr)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
