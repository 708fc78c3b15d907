"""``forensic bench investigate``: what one investigation costs as the fleet grows.

For each size, an incident is generated with :mod:`forensic.evals.generator` (cached by cause, size
and seed under the evals cache folder, so a size is generated once) and investigated in its own
process, which reports its wall time, peak RSS, the files it opened and their stored bytes, how many
files it opened more than once, and the size of its report. The growth exponent between two sizes
is ``log(wall_b / wall_a) / log(hosts_b / hosts_a)``: 1 means the cost grows with the fleet, 0 that
it does not grow at all.

    forensic bench investigate --hosts 64,256,1024,2048
    python -m forensic.evals.investigate_bench --one CASE_DIR   # one run, JSON on stdout
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

#: Root causes investigated at every size; --causes overrides.
CAUSES = ("pcie_downtrain", "hbm_degradation", "link_degradation")
#: Bars a 16,384-rank investigation must stay under (docs/fleet-scale.md).
TARGET_WALL_S = 15.0
TARGET_RSS_MB = 2048.0
TARGET_EXPONENT = 0.8
TARGET_REPORT_KB = 256.0


def bench_cache() -> Path:
    from forensic.evals.sets import cache_root

    return cache_root() / "bench-investigate"


def incident(hosts: int, cause: str, seed: int, *, progress: Callable[[str], None] | None = None) -> Path:
    """The case folder of a generated incident (``<case>/bundle`` + ``truth.json``), made once."""
    from forensic.evals.generator.incident import IncidentSpec, generate

    name = f"{cause}-h{hosts}-s{seed}"
    root = bench_cache()
    case = root / name
    if (case / ".complete").is_file():
        return case
    if progress:
        progress(f"generating a {hosts}-host {cause} incident (seed {seed}) into {case} (once)")
    tmp = root / f".{name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        generate(IncidentSpec(case=name, cause=cause, seed=seed, hosts=hosts), tmp)
        (tmp / name / ".complete").write_text("ok\n")
        shutil.rmtree(case, ignore_errors=True)
        (tmp / name).rename(case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return case


def investigate_once(case: Path) -> dict[str, Any]:
    """Open and investigate ``case`` in this process; what it cost and what it concluded."""
    from forensic.harness.graph import Investigator
    from forensic.sandbox import Bundle

    t0 = time.perf_counter()
    bundle = Bundle(case, verify_gzip="lazy")  # as the Investigator opens a bundle path
    open_s = time.perf_counter() - t0
    report = Investigator(bundle).run(thread_id="bench")
    total_s = time.perf_counter() - t0
    fs = bundle.fs
    v = report["verdict"]
    sweeps = [s for e in report.get("evidence", []) if (s := (e.get("data") or {}).get("sweep"))]
    return {
        # The most hosts one sampled sweep read, of how many (suspects plus a fixed sample).
        "sweep_hosts_read": max((s["hosts_read"] for s in sweeps), default=None),
        "sweep_hosts_total": max((s["hosts_total"] for s in sweeps), default=None),
        "open_s": round(open_s, 3),
        "investigate_s": round(total_s, 3),
        "verdict": [v["root_cause"], v.get("component")],
        "status": report["status"],
        "tool_calls": report["budget"]["tool_calls"],
        "files_read": len(fs.opened),
        "files_read_twice": sum(1 for n in fs.opened.values() if n > 1),
        "bytes_read": fs.bytes_opened,
        "report_kb": round(len(json.dumps(report).encode()) / 1024, 1),
        "peak_rss_mb": own_peak_rss_mb(),
    }


def own_peak_rss_mb() -> float:
    """This process's own peak resident memory, in MB.

    ``ru_maxrss`` survives ``execve`` (getrusage(2)), so in a child started by a parent that had
    generated a large incident it reports the parent's peak; ``VmHWM`` belongs to this process's
    address space, which ``execve`` made new. ``ru_maxrss`` only where /proc is not there."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_in_process(case: Path) -> dict[str, Any]:
    """:func:`investigate_once` in a fresh interpreter; ``wall_s`` includes its start and imports."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "forensic.evals.investigate_bench", "--one", str(case)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(f"investigating {case.name} failed: {done.stderr.strip()[-800:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(wall, 3)
    return out


def exponent(a: dict[str, Any], b: dict[str, Any], key: str = "wall_s") -> float | None:
    if a["hosts"] == b["hosts"] or a[key] <= 0 or b[key] <= 0:
        return None
    return round(math.log(b[key] / a[key]) / math.log(b["hosts"] / a["hosts"]), 3)


def investigate_benchmark(
    sizes: Sequence[int],
    *,
    causes: Sequence[str] = CAUSES,
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every cause at every size, each run in its own process. A size's row holds the worst run
    (largest wall time, RSS and report; correct only when every cause was); the exponent is taken
    over those worst-case wall times, and per cause in ``by_cause``."""
    from forensic.evals.generator.faults import CAUSES as KNOWN

    if not sizes or not causes:
        raise ValueError("give at least one size and one cause")
    for c in causes:
        if c not in KNOWN:
            raise ValueError(f"unknown cause {c!r}; one of {', '.join(sorted(KNOWN))}")
    rows = []
    load_before = _load()
    for hosts in sizes:
        runs = []
        for cause in causes:
            case = incident(hosts, cause, seed, progress=progress)
            truth = json.loads((case / "truth.json").read_text())
            if progress:
                progress(f"investigating {hosts} hosts ({hosts * 8} GPUs, {cause})")
            got = run_in_process(case)
            expected = [truth.get("root_cause"), truth.get("component")]
            runs.append({"cause": cause, **got, "expected": expected, "correct": got["verdict"] == expected})
        rows.append(
            {
                "hosts": hosts,
                "gpus": hosts * 8,
                "wall_s": max(r["wall_s"] for r in runs),
                "investigate_s": max(r["investigate_s"] for r in runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "files_read": max(r["files_read"] for r in runs),
                "files_read_twice": max(r["files_read_twice"] for r in runs),
                "bytes_read": max(r["bytes_read"] for r in runs),
                "report_kb": max(r["report_kb"] for r in runs),
                "correct": all(r["correct"] for r in runs),
                "runs": runs,
            }
        )
    base = next((r for r in rows if r["hosts"] >= 256), rows[0])
    last = rows[-1]
    pairs = [{"from": a["hosts"], "to": b["hosts"], "exponent": exponent(a, b)} for a, b in pairwise(rows)]
    by_cause = {}
    for k, cause in enumerate(causes):
        a = {"hosts": base["hosts"], "wall_s": base["runs"][k]["wall_s"]}
        b = {"hosts": last["hosts"], "wall_s": last["runs"][k]["wall_s"]}
        by_cause[cause] = exponent(a, b)
    exp = exponent(base, last)
    big = max(rows, key=lambda r: r["hosts"])
    return {
        "sizes": rows,
        "exponent": exp,
        "exponent_between": [base["hosts"], last["hosts"]],
        "exponents": pairs,
        "by_cause": by_cause,
        "causes": list(causes),
        "seed": seed,
        # 1-minute load average of the machine before and after (the bench is sensitive to it).
        "load_avg": {"before": load_before, "after": _load(), "cpus": os.cpu_count()},
        "targets": {
            "wall_s": TARGET_WALL_S,
            "peak_rss_mb": TARGET_RSS_MB,
            "exponent": TARGET_EXPONENT,
            "report_kb": TARGET_REPORT_KB,
        },
        "met": {
            "wall_s": big["wall_s"] <= TARGET_WALL_S,
            "peak_rss_mb": big["peak_rss_mb"] <= TARGET_RSS_MB,
            "exponent": exp is None or exp <= TARGET_EXPONENT,
            "report_kb": all(r["report_kb"] <= TARGET_REPORT_KB for r in rows),
            "correct": all(r["correct"] for r in rows),
        },
    }


def format_investigate_benchmark(r: dict[str, Any]) -> str:
    head = (
        f"{'hosts':>6} {'GPUs':>6} {'cause':<18} {'wall s':>7} {'inv s':>6} {'RSS MB':>7} {'files':>6} "
        f"{'MB read':>8} {'twice':>5} {'swept':>9} {'report KB':>9}  verdict"
    )
    lines = [head]
    for row in r["sizes"]:
        for s in row["runs"]:
            lines.append(
                f"{row['hosts']:>6} {row['gpus']:>6} {s['cause']:<18} {s['wall_s']:>7.2f} {s['investigate_s']:>6.2f} "
                f"{s['peak_rss_mb']:>7.0f} {s['files_read']:>6} {s['bytes_read'] / 1e6:>8.1f} "
                f"{s['files_read_twice']:>5} {_swept(s):>9} {s['report_kb']:>9.1f}  "
                f"{'right' if s['correct'] else 'WRONG'} {s['verdict'][0]} {s['verdict'][1] or ''}"
            )
    for p in r["exponents"]:
        lines.append(
            f"growth exponent of the worst wall time {p['from']} -> {p['to']} hosts: {p['exponent']}"
        )
    lines.append("per cause, " + ", ".join(f"{c}: {e}" for c, e in r["by_cause"].items()))
    if r["exponent"] is not None:
        lines.append(
            f"growth exponent {r['exponent_between'][0]} -> {r['exponent_between'][1]} hosts: {r['exponent']} "
            f"(target <= {r['targets']['exponent']})"
        )
    if r.get("load_avg"):
        la = r["load_avg"]
        lines.append(
            f"machine load (1-minute average) before {la['before']}, after {la['after']}, on {la['cpus']} CPUs"
        )
    missed = [k for k, ok in r["met"].items() if not ok]
    lines.append("every bar met" if not missed else "bars missed: " + ", ".join(missed))
    return "\n".join(lines)


def _swept(run: dict[str, Any]) -> str:
    """'65/2048': the most hosts a sampled sweep read, of the fleet; '-' when no sweep sampled."""
    return f"{run['sweep_hosts_read']}/{run['sweep_hosts_total']}" if run.get("sweep_hosts_read") else "-"


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--one":
        sys.stdout.write(json.dumps(investigate_once(Path(args[1]))) + "\n")
        return 0
    sys.stderr.write("usage: python -m forensic.evals.investigate_bench --one CASE_DIR\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
