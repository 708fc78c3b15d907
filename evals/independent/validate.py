#!/usr/bin/env python3
"""Self-checks for evals/independent/holdout (formats and physics). Reads only the holdout folder."""
from __future__ import annotations

import csv
import gzip
import io
import json
import re
import statistics
import sys
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

HOLD = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "holdout"
ROOT_CAUSES = {"pcie_downtrain", "pfc_pause_storm", "ecmp_hash_polarization", "link_degradation",
               "thermal_throttle", "power_throttle", "hbm_degradation", "gpu_fell_off_bus", "nvlink_fault",
               "silent_data_corruption", "host_contention", "input_pipeline_stall", "nccl_misconfiguration",
               "healthy"}
NAME_RE = re.compile(r"^[A-Za-z0-9.\-]+$")
SAMPLE_RE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(?:[A-Za-z_][A-Za-z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? '
                       r'(-?[0-9.eE+\-]+|NaN|\+Inf|-Inf) ([0-9]+(?:\.[0-9]+)?)$')
errors = []


def err(case, msg):
    errors.append(f"{case}: {msg}")


def read(p: Path) -> str:
    data = p.read_bytes()
    if p.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode()


def iso(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def check_om(case, p, text):
    if not text.endswith("# EOF\n"):
        err(case, f"{p.name}: does not end with # EOF")
    seen = set()
    cur = None
    nsamp = 0
    for ln in text.splitlines():
        if ln == "# EOF":
            continue
        if ln.startswith("# TYPE "):
            _, _, name, typ = ln.split(" ", 3)
            if typ not in ("counter", "gauge", "unknown", "histogram", "summary", "info", "stateset", "gaugehistogram"):
                err(case, f"{p.name}: bad TYPE {typ}")
            if name in seen:
                err(case, f"{p.name}: family {name} not contiguous")
            seen.add(name)
            cur = name
            continue
        if ln.startswith("# HELP "):
            continue
        m = SAMPLE_RE.match(ln)
        if not m:
            err(case, f"{p.name}: bad sample line {ln[:120]}")
            continue
        nm = m.group(1)
        if not (nm == cur or nm.startswith(cur + "_")):
            err(case, f"{p.name}: sample {nm} outside its family {cur}")
        nsamp += 1
    return nsamp


def load_steps(case, b):
    for nm in ("job/steps.csv", "job/steps.csv.gz"):
        p = b / nm
        if p.exists():
            return list(csv.DictReader(io.StringIO(read(p))))
    return None


def physics(case, rows, ranks_map, w0, w1):
    """Group rows into step instances (same step, close start), check barrier physics."""
    groups = defaultdict(list)
    for r in rows:
        key = (int(r["step"]), round(float(r["start_unix"]) / 5.0))
        groups[key].append(r)
    merged = defaultdict(list)
    for (step, bucket), rs in groups.items():
        merged[(step, min(float(x["start_unix"]) for x in rs) // 30)].extend(rs)
    spreads = []
    slow_counts = defaultdict(int)
    inwin = 0
    for key, rs in merged.items():
        d = [float(x["duration_s"]) for x in rs]
        st = [float(x["start_unix"]) for x in rs]
        if max(st) - min(st) > 0.05:
            err(case, f"step {key}: start spread {max(st) - min(st):.3f}s")
        med = statistics.median(d)
        spreads.append((max(d) - min(d)) / med)
        if "compute_s" in rs[0] and rs[0]["compute_s"]:
            c = [float(x["compute_s"]) for x in rs]
            for x, cc, dd in zip(rs, c, d):
                if cc > dd + 1e-6:
                    err(case, f"step {key} rank {x['rank']}: compute {cc} > duration {dd}")
            imax = max(range(len(rs)), key=lambda i: c[i])
            waits = [dd - cc for cc, dd in zip(c, d)]
            imin = min(range(len(rs)), key=lambda i: waits[i])
            second = sorted(c)[-2] if len(c) > 1 else 0.0
            if imax != imin and c[imax] - second > 0.01:
                err(case, f"step {key}: largest compute rank {rs[imax]['rank']} != shortest wait rank {rs[imin]['rank']}")
            if w0 <= min(st) <= w1:
                inwin += 1
                if c[imax] - second > 0.01:
                    slow_counts[int(rs[imax]["rank"])] += 1
    if max(spreads) > 0.01:
        err(case, f"durations spread up to {max(spreads) * 100:.2f}% within a step")
    out = f"{len(merged)} step instances, max duration spread {max(spreads) * 100:.2f}%"
    if slow_counts:
        top = sorted(slow_counts.items(), key=lambda kv: -kv[1])[:3]
        desc = ", ".join(f"rank {r}@{ranks_map.get(r, '?')} x{n}/{inwin}" for r, n in top)
        out += f"; most-often-slowest in window: {desc}"
    return out


def ranks_map(b, inc):
    topo_p = b / "topology.json"
    if not topo_p.exists():
        return {}
    topo = json.loads(topo_p.read_text())
    if "ranks" in topo:
        return {r["rank"]: f"{r['host']}/gpu{r['gpu']}" for r in topo["ranks"]}
    gpn = inc["job"]["gpus_per_node"]
    hosts = [h["name"] for h in topo["hosts"]]
    return {r: f"{hosts[r // gpn]}/gpu{r % gpn}" for r in range(inc["job"]["ranks"])}


def main():
    cases = sorted(p for p in HOLD.iterdir() if p.is_dir())
    total_bytes = 0
    for cd in cases:
        case = cd.name
        b = cd / "bundle"
        truth = json.loads((cd / "truth.json").read_text())
        if truth["root_cause"] not in ROOT_CAUSES:
            err(case, f"bad root cause {truth['root_cause']}")
        inc = json.loads((b / "incident.json").read_text())
        for k in ("schema", "id", "title", "window", "job"):
            if k not in inc:
                err(case, f"incident.json lacks {k}")
        if inc["schema"] != "forensic.bundle/v1":
            err(case, "schema")
        w0, w1 = iso(inc["window"]["start"]), iso(inc["window"]["end"])
        if not w0 < w1:
            err(case, "window")
        # every file parses
        nfiles = 0
        nsamples = 0
        for p in sorted(b.rglob("*")):
            if not p.is_file():
                continue
            nfiles += 1
            total_bytes += p.stat().st_size
            try:
                text = read(p)
            except Exception as e:  # noqa: BLE001
                err(case, f"{p}: unreadable {e}")
                continue
            base = p.name[:-3] if p.name.endswith(".gz") else p.name
            if base.endswith(".json"):
                try:
                    json.loads(text)
                except Exception as e:  # noqa: BLE001
                    err(case, f"{p}: bad json {e}")
            if base.endswith(".om"):
                nsamples += check_om(case, p, text)
        # names and components
        hosts = {}
        topo_p = b / "topology.json"
        node_hosts = {p.name for p in (b / "nodes").iterdir()} if (b / "nodes").exists() else set()
        switches = {p.name for p in (b / "switches").iterdir()} if (b / "switches").exists() else set()
        if topo_p.exists():
            topo = json.loads(topo_p.read_text())
            for h in topo["hosts"]:
                hosts[h["name"]] = h
            for s in topo.get("switches", []):
                switches.add(s["name"])
            nr = len(topo["ranks"]) if "ranks" in topo else None
            if nr is not None and nr != inc["job"]["ranks"]:
                err(case, f"topology ranks {nr} != incident {inc['job']['ranks']}")
        for hn in set(hosts) | node_hosts:
            if not NAME_RE.match(hn):
                err(case, f"bad host name {hn}")
        comp = truth["component"]
        if truth["root_cause"] == "healthy":
            if comp is not None:
                err(case, "healthy with component")
        elif comp == "job":
            pass
        elif "/" in comp:
            hn, part = comp.split("/", 1)
            if hn not in hosts and hn not in node_hosts:
                err(case, f"component host {hn} unknown")
            if hn in hosts:
                if part.startswith("gpu"):
                    if int(part[3:]) not in [g["index"] for g in hosts[hn]["gpus"]]:
                        err(case, f"no {part} on {hn}")
                elif part not in [n["ibdev"] for n in hosts[hn]["nics"]]:
                    err(case, f"no {part} on {hn}")
        elif comp not in hosts and comp not in node_hosts and comp not in switches:
            err(case, f"component {comp} unknown")
        # collected.json times
        for hn in node_hosts:
            cj = b / "nodes" / hn / "collected.json"
            if cj.exists():
                c = json.loads(cj.read_text())
                if not (w0 - 3600 <= c["before"] < c["now"] <= w1 + 3600):
                    err(case, f"{hn}: collected times off window")
                if "boot" in c and c["boot"] > c["before"]:
                    err(case, f"{hn}: boot after before")
        rows = load_steps(case, b)
        phys = "no steps"
        if rows is not None:
            phys = physics(case, rows, ranks_map(b, inc), w0, w1)
            nr = len({r["rank"] for r in rows})
            if nr != inc["job"]["ranks"]:
                err(case, f"steps ranks {nr} != {inc['job']['ranks']}")
        print(f"{case}: {truth['root_cause']:<24} {str(comp):<28} files={nfiles:<5} om_samples={nsamples:<6} {phys}")
    print(f"total file bytes: {total_bytes}")
    if errors:
        print("\nERRORS:")
        for e in errors[:80]:
            print("  " + e)
        print(f"{len(errors)} errors")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
