"""``forensic bench parsers``: peak memory of each streaming parser on a large input.

Each parser runs in its own Python process (so one parser's peak is not another's), reads its
input through :meth:`ConfinedFS.iter_lines` as the tools do, and reports the process's peak RSS
(``getrusage``: interpreter and imports included, so small inputs look worse than they are)
over the input size. The target is at most 3x the input.

Inputs are synthetic but in the real formats, built from the committed example bundles' lines
(job logs, dmesg) with their numbers varied, and a high-cardinality OpenMetrics file (one
series per host x GPU x metric, each with a handful of samples).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Peak RSS over input size that counts as bounded.
TARGET = 3.0
PARSERS = ("nccl", "torch_log", "kernel_log", "openmetrics")
_EXAMPLES = Path(__file__).resolve().parents[2] / "evals" / "examples"


def _example_lines(pattern: str) -> list[str]:
    lines: list[str] = []
    for path in sorted(_EXAMPLES.glob(pattern)):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            lines.extend(line.rstrip("\n") for line in fh)
    return [line for line in lines if line.strip()] or ["(no example lines)"]


def make_input(name: str, path: Path, size_mb: float) -> int:
    """Write a synthetic input of about ``size_mb`` MB for parser ``name``; returns its bytes."""
    target = int(size_mb * 1024 * 1024)
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        if name == "openmetrics":
            metrics = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")
            for m in metrics:
                out.write(f"# TYPE {m} gauge\n")
            i = 0
            while written < target:
                host, gpu, metric = i // 32, i % 8, metrics[(i // 8) % 4]
                for t in range(4):
                    line = (f'{metric}{{Hostname="gpu{host:06d}.dc.internal",gpu="{gpu}",'
                            f'UUID="GPU-{host:08x}-{gpu:04x}"}} {50 + (i + t) % 50}.5 {1700000000 + 15 * t}\n')
                    out.write(line)
                    written += len(line)
                i += 1
            out.write("# EOF\n")
            return path.stat().st_size
        pattern = "*/bundle/nodes/*/cmd/dmesg.txt*" if name == "kernel_log" else "*/bundle/job/logs/*.log*"
        lines = _example_lines(pattern)
        n = 0
        while written < target:
            line = lines[n % len(lines)].replace("SeqNum=", f"SeqNum={n % 997}") + "\n"
            out.write(line)
            written += len(line)
            n += 1
    return path.stat().st_size


def measure_one(name: str, path: Path) -> dict[str, Any]:
    """Parse ``path`` with parser ``name`` in this process; its peak RSS and what it found."""
    from forensic.sandbox import ConfinedFS
    from forensic.tools.parsers.kernel_log import parse_kernel_log
    from forensic.tools.parsers.nccl import parse_nccl_log
    from forensic.tools.parsers.openmetrics import parse_openmetrics
    from forensic.tools.parsers.torch_log import parse_torch_log

    fs = ConfinedFS(path.parent)
    lines = fs.iter_lines(path.name)
    if name == "nccl":
        found = len(parse_nccl_log(lines).entries)
    elif name == "torch_log":
        found = len(parse_torch_log(lines).timeouts)
    elif name == "kernel_log":
        found = len(parse_kernel_log(lines).events)
    else:
        found = len(parse_openmetrics(lines).series)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"name": name, "found": found, "peak_rss_mb": peak_kb / 1024}


def parser_benchmark(size_mb: float = 250.0, parsers: tuple[str, ...] = PARSERS,
                     workdir: Path | None = None) -> dict[str, Any]:
    """Peak RSS / input MB for each parser, each measured in a fresh subprocess."""
    rows = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for name in parsers:
            path = Path(tmp) / f"{name}.txt"
            size = make_input(name, path, size_mb)
            proc = subprocess.run([sys.executable, "-m", "forensic.tools.parsers._bench", name, str(path)],
                                  capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
            path.unlink()
            if proc.returncode != 0:
                rows.append({"name": name, "input_mb": size / 2**20, "error": proc.stderr.strip().splitlines()[-1:]})
                continue
            got = json.loads(proc.stdout)
            # The ratio is of the numbers shown, so a reader can check it from the row itself.
            input_mb, peak_mb = round(size / 2**20, 1), round(got["peak_rss_mb"], 1)
            rows.append({"name": name, "input_mb": input_mb, "peak_rss_mb": peak_mb,
                         "rss_over_input": round(peak_mb / input_mb, 2), "found": got["found"]})
    ok = all("rss_over_input" in r and r["rss_over_input"] <= TARGET for r in rows)
    return {"parsers": rows, "target": TARGET, "ok": ok,
            "note": "peak RSS of a fresh process per parser (getrusage), interpreter and imports included"}


def format_parser_benchmark(result: dict[str, Any]) -> str:
    out = []
    for r in result["parsers"]:
        if "error" in r:
            out.append(f"  {r['name']:<12} failed: {r['error']}")
            continue
        verdict = "ok" if r["rss_over_input"] <= result["target"] else "over target"
        out.append(f"  {r['name']:<12} {r['input_mb']:>7.1f} MB in  peak RSS {r['peak_rss_mb']:>7.1f} MB  "
                   f"{r['rss_over_input']:.2f}x input (target <= {result['target']:g}: {verdict})")
    out.append(f"  ({result['note']})")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(json.dumps(measure_one(sys.argv[1], Path(sys.argv[2]))) + "\n")
