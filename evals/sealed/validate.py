#!/usr/bin/env python3
"""Check sealed-set cases against the bundle contract (shared/spec/bundle.md).

    python3 evals/sealed/validate.py DIR        # DIR holds <case>/bundle and <case>/truth.json

Checks, per case: every file parses as its format (JSON, OpenMetrics ending in `# EOF` with
contiguous families and ordered series, steps.csv, kernel logs in one of the named prefix styles,
ethtool, sysfs values, lspci link lines), gzip members carry mtime 0 and no name, incident.json
has the required fields, truth.json uses the spec's vocabulary and names a component that exists
in the bundle, and steps.csv obeys the physics of a synchronous job (within a step every rank's
duration is equal, no rank computes longer than its step, and the rank with the largest
compute_s waits the least). Exit 1 and one line per problem when anything fails.
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

ROOT_CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation", "thermal_throttle",
               "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault", "silent_data_corruption",
               "host_contention", "input_pipeline_stall", "nccl_misconfiguration", "healthy"}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf) (\d+(?:\.\d+)?)$')
KLINE = [
    re.compile(r"^\[\s*\d+\.\d{6}\] "),                                   # dmesg
    re.compile(r"^\[\s*\d+\.\d{6}\] \[\s*[TC]\d+\] "),                     # dmesg with CONFIG_PRINTK_CALLER
    re.compile(r"^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] "),  # dmesg -T
    re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: "),    # journalctl -k / syslog
    re.compile(r"^\d+,\d+,\d+,[-c+];"),                                    # /dev/kmsg
    re.compile(r"^\s+NVRM: "),                                             # continuation lines
]
SPEED = re.compile(r"^(Unknown|(2\.5|5(\.0)?|8(\.0)?|16(\.0)?|32(\.0)?|64(\.0)?) GT/s( PCIe)?)$")


class Problems(list):
    def add(self, case, msg):
        self.append(f"{case}: {msg}")


def read(path: Path, probs: Problems, case: str) -> str | None:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        if data[:2] != b"\x1f\x8b":
            probs.add(case, f"{path}: not gzip")
            return None
        if data[3] & 0x08:
            probs.add(case, f"{path}: gzip member carries a file name")
        if data[4:8] != b"\0\0\0\0":
            probs.add(case, f"{path}: gzip mtime is not 0")
        data = gzip.decompress(data)
    try:
        return data.decode()
    except UnicodeDecodeError:
        probs.add(case, f"{path}: not UTF-8 text")
        return None


def base_name(path: Path) -> str:
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def check_om(text: str, where: str, probs: Problems, case: str) -> None:
    lines = text.rstrip("\n").split("\n")
    if lines[-1] != "# EOF":
        probs.add(case, f"{where}: does not end with # EOF")
    fam = None
    seen_fams = set()
    last_ts: dict[str, float] = {}
    for ln in lines[:-1]:
        if ln.startswith("# TYPE ") or ln.startswith("# HELP "):
            name = ln.split()[2]
            if name != fam:
                if name in seen_fams:
                    probs.add(case, f"{where}: family {name} is not contiguous")
                    return
                fam = name
                seen_fams.add(name)
            continue
        if ln.startswith("#"):
            probs.add(case, f"{where}: unexpected comment {ln[:60]!r}")
            return
        m = SAMPLE.match(ln)
        if not m:
            probs.add(case, f"{where}: bad sample line {ln[:80]!r}")
            return
        if m.group(1) != fam:
            probs.add(case, f"{where}: sample {m.group(1)} outside its family block")
            return
        key = m.group(1) + (m.group(2) or "")
        ts = float(m.group(4))
        if ts < last_ts.get(key, -1):
            probs.add(case, f"{where}: series {key[:60]} goes back in time")
            return
        last_ts[key] = ts


def check_steps(text: str, where: str, probs: Problems, case: str) -> None:
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        probs.add(case, f"{where}: no rows")
        return
    need = ["step", "rank", "start_unix", "duration_s"]
    hdr = list(rows[0].keys())
    if hdr[:4] != need:
        probs.add(case, f"{where}: header starts {hdr[:4]}, want {need}")
        return
    has_c = "compute_s" in hdr
    groups = defaultdict(list)
    for r in rows:
        try:
            step, rank, start, dur = int(r["step"]), int(r["rank"]), float(r["start_unix"]), float(r["duration_s"])
            comp = float(r["compute_s"]) if has_c else None
        except (TypeError, ValueError):
            probs.add(case, f"{where}: non-numeric row {r}")
            return
        groups[(step, round(start))].append((rank, dur, comp))
    # a group split by the rounding boundary is merged back
    merged = defaultdict(list)
    keys = sorted(groups)
    prev = None
    for k in keys:
        if prev and prev[0] == k[0] and k[1] - prev[1] <= 1:
            merged[prev] += groups[k]
        else:
            merged[k] += groups[k]
            prev = k
    for (step, _), g in merged.items():
        ranks = [x[0] for x in g]
        if len(ranks) != len(set(ranks)):
            probs.add(case, f"{where}: step {step} lists a rank twice")
            return
        durs = sorted(x[1] for x in g)
        med = durs[len(durs) // 2]
        if durs[-1] - durs[0] > 0.002 + 0.01 * med:
            probs.add(case, f"{where}: step {step} durations differ across ranks ({durs[0]}..{durs[-1]})")
            return
        if has_c:
            if any(c > d + 1e-9 or c <= 0 for _, d, c in g):
                probs.add(case, f"{where}: step {step} has compute_s outside (0, duration_s]")
                return
            slow = max(g, key=lambda x: x[2])
            waits = [d - c for _, d, c in g]
            if slow[1] - slow[2] > min(waits) + 0.002:
                probs.add(case, f"{where}: step {step} slowest rank {slow[0]} does not wait the least")
                return


def check_file(path: Path, rel: str, text: str, probs: Problems, case: str) -> None:
    name = base_name(path)
    if name.endswith(".json"):
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            probs.add(case, f"{rel}: bad JSON ({e})")
    elif name.endswith(".om"):
        check_om(text, rel, probs, case)
    elif name == "steps.csv":
        check_steps(text, rel, probs, case)
    elif name == "dmesg.txt":
        for ln in text.splitlines():
            if not any(p.match(ln) for p in KLINE):
                probs.add(case, f"{rel}: unrecognised kernel log line {ln[:80]!r}")
                break
    elif name.startswith("ethtool-S-"):
        lines = text.splitlines()
        if lines[0] != "NIC statistics:" or not all(re.match(r"^\s+\w+: -?\d+$", ln) for ln in lines[1:]):
            probs.add(case, f"{rel}: not ethtool -S output")
    elif name.startswith("ethtool-I-show-fec-"):
        if not text.startswith("FEC parameters for ") or "Active FEC encoding:" not in text:
            probs.add(case, f"{rel}: not ethtool --show-fec output")
    elif name == "lspci-vv.txt":
        for ln in text.splitlines():
            if "LnkSta:" in ln and not re.search(r"LnkSta:\tSpeed [\d.]+GT/s \((ok|downgraded)\), Width x\d+ \((ok|downgraded)\)", ln):
                probs.add(case, f"{rel}: bad LnkSta line {ln!r}")
    elif "/sys/" in "/" + rel:
        v = text.strip()
        if not v:
            probs.add(case, f"{rel}: empty sysfs file")
        elif name.endswith("_link_speed") and not SPEED.match(v):
            probs.add(case, f"{rel}: bad link speed {v!r}")
        elif name.endswith("_link_width") or "/counters/" in rel or "/hw_counters/" in rel or name == "carrier_changes":
            if not v.isdigit():
                probs.add(case, f"{rel}: not an integer {v!r}")
        elif name.startswith("aer_dev_"):
            lines = v.splitlines()
            if not lines[-1].startswith("TOTAL_ERR_") or not all(re.match(r"^.+ \d+$", ln) for ln in lines):
                probs.add(case, f"{rel}: bad AER counters")
            else:
                tot = int(lines[-1].split()[-1])
                if tot != sum(int(ln.split()[-1]) for ln in lines[:-1]):
                    probs.add(case, f"{rel}: AER total does not add up")


def _stats(path: Path) -> dict[str, int]:
    text = gzip.decompress(path.read_bytes()).decode() if path.name.endswith(".gz") else path.read_text()
    if path.name.startswith("ethtool-S-"):
        return {k.strip(): int(v) for k, v in (ln.split(":") for ln in text.splitlines()[1:])}
    if "aer_dev_" in path.name:
        return {ln.rsplit(" ", 1)[0]: int(ln.rsplit(" ", 1)[1]) for ln in text.splitlines()}
    if path.name.startswith("ethtool-I-show-fec-"):
        return {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (\w+): (\d+)$", text, re.M)}
    v = text.strip()
    return {"": int(v)} if v.isdigit() else {}


def check_counters(bundle: Path, probs: Problems, case: str) -> None:
    """A counter snapshotted at "before" (window start) must not exceed its value at "now"."""
    nodes = bundle / "nodes"
    if not nodes.is_dir():
        return
    for host in sorted(p for p in nodes.iterdir() if p.is_dir()):
        before = host / "before"
        if not before.is_dir():
            continue
        for b in sorted(p for p in before.rglob("*") if p.is_file()):
            rel = b.relative_to(before)
            n = host / rel
            name = b.name
            counter = ("/counters/" in "/" + rel.as_posix() or "/hw_counters/" in "/" + rel.as_posix()
                       or name.startswith(("ethtool-S-", "ethtool-I-show-fec-", "aer_dev_")))
            if not counter:
                continue
            if not n.is_file():
                probs.add(case, f"{host.name}/before/{rel}: no counterpart at now")
                continue
            bs, ns = _stats(b), _stats(n)
            for k, v in bs.items():
                if k in ns and ns[k] < v:
                    probs.add(case, f"{host.name}/{rel}: counter {k or name} goes down from before to now ({v} -> {ns[k]})")


def component_exists(comp, topo: dict, bundle: Path) -> bool:
    if comp == "job":
        return True
    hosts = {h["name"]: h for h in topo.get("hosts", [])}
    switches = {s["name"]: s for s in topo.get("switches", [])}
    node_dirs = {p.name for p in (bundle / "nodes").iterdir()} if (bundle / "nodes").is_dir() else set()
    if comp in hosts or comp in switches or comp in node_dirs:
        return True
    head, _, part = comp.rpartition("/")
    if head in hosts:
        h = hosts[head]
        if part.startswith("gpu") and part[3:].isdigit():
            return any(g["index"] == int(part[3:]) for g in h.get("gpus", []))
        return any(n["ibdev"] == part for n in h.get("nics", []))
    if head in switches:
        s = switches[head]
        ports = {l["port"] for l in s.get("links", [])}
        ports |= {n.get("switch_port") for h in hosts.values() for n in h.get("nics", []) if n.get("switch") == head}
        return part in ports
    return False


def check_case(case_dir: Path, probs: Problems) -> None:
    case = case_dir.name
    bundle = case_dir / "bundle"
    if not (bundle / "incident.json").is_file():
        probs.add(case, "no bundle/incident.json")
        return
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        rel = path.relative_to(bundle).as_posix()
        text = read(path, probs, case)
        if text is not None:
            check_file(path, rel, text, probs, case)
    check_counters(bundle, probs, case)
    inc = json.loads((bundle / "incident.json").read_text())
    if inc.get("schema") != "forensic.bundle/v1":
        probs.add(case, "incident.json schema is not forensic.bundle/v1")
    for k in ("id", "title", "window", "job"):
        if k not in inc:
            probs.add(case, f"incident.json lacks {k}")
    w = inc.get("window", {})
    if not (re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", w.get("start", "")) and w.get("start", "") < w.get("end", "")):
        probs.add(case, "incident.json window is not an ordered ISO pair")
    try:
        truth = json.loads((case_dir / "truth.json").read_text())
    except (OSError, json.JSONDecodeError):
        probs.add(case, "truth.json missing or not JSON")
        return
    rc, comp = truth.get("root_cause"), truth.get("component")
    if rc not in ROOT_CAUSES:
        probs.add(case, f"root_cause {rc!r} is not in the vocabulary")
    if (rc == "healthy") != (comp is None):
        probs.add(case, "component must be null exactly when healthy")
    topo_p = bundle / "topology.json"
    topo = json.loads(topo_p.read_text()) if topo_p.is_file() else {}
    if comp is not None and not component_exists(comp, topo, bundle):
        probs.add(case, f"component {comp!r} does not exist in the bundle")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: validate.py DIR", file=sys.stderr)
        return 2
    root = Path(argv[0])
    cases = sorted(p.parent for p in root.rglob("truth.json"))
    if not cases:
        print(f"{root}: no cases (no truth.json found)", file=sys.stderr)
        return 2
    probs = Problems()
    for c in cases:
        check_case(c, probs)
    for p in probs:
        print(p)
    counts = defaultdict(int)
    for c in cases:
        counts[json.loads((c / "truth.json").read_text())["root_cause"]] += 1
    print(f"{len(cases)} cases, {len(probs)} problems; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
