"""``forensic bench parsers``: peak memory of each parser the investigator feeds a whole file to.

Each parser runs in its own fresh Python process (so one parser's peak is not another's) and is fed
its input the way its tool feeds it: job logs (NCCL, torch) and OpenMetrics files as a stream of
lines (:meth:`ConfinedFS.iter_lines`), the kernel log and ``steps.csv`` as the whole text
(``read_text``, as ``node.run(["dmesg"])`` and ``Document.text`` give them). The process reports
its peak RSS (``getrusage`` ``ru_maxrss``) twice: after its imports, before the input is opened
(the baseline: interpreter, numpy, pydantic, the parser modules), and after the parse with the
result still held. ``rss_over_input`` is the whole peak, baseline included, over the input size:
nothing is subtracted. ``parse_rss_mb`` (peak minus baseline) is shown beside it. The target is
at most 3x the input.

Speed is reported beside memory: MB/s of the parse, and of a floor measured in the same process
on the same file, one ``for line in fs.iter_lines(...)`` pass that does nothing with the lines;
``speed_over_floor`` is their ratio, which says more than MB/s on a busy machine. The trainer-log
scan (``trainer_log``: :class:`forensic.tools._trainer_log.TrainerFacts` over the job logs, as
``job_logs`` feeds it) has a speed target too, :data:`SPEED_TARGETS`.

Inputs are synthetic but in the real formats, generated once per size and kept under
``~/.cache/forensic/bench/parsers`` (not in git): job logs and dmesg built from the committed
example bundles' lines with their numbers varied, a high-cardinality OpenMetrics file (one series
per host x GPU x metric, each with a handful of samples) and a steps.csv of 4,096 ranks.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: Peak RSS over input size that counts as bounded.
TARGET = 3.0
PARSERS = ("nccl", "torch_log", "trainer_log", "kernel_log", "openmetrics", "steps_csv")
#: MB/s a parser must reach where it has a target: at 20 MB/s a 200 MB job log costs 10 s of the
#: default 300 s working-time budget.
SPEED_TARGETS = {"trainer_log": 20.0}
#: Inputs shared between parsers (the trainer scan reads the same job logs as the NCCL parser).
_SAME_INPUT = {"trainer_log": "nccl"}
_EXAMPLES = Path(__file__).resolve().parents[2] / "evals" / "examples"
#: Part of each cached input's name: bump it when :func:`make_input` changes, so no stale input is measured.
INPUT_VERSION = 1


def cache_dir() -> Path:
    """Where generated inputs are kept: ``$XDG_CACHE_HOME/forensic/bench/parsers`` (default ``~/.cache``)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "forensic" / "bench" / "parsers"


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
            metrics = (
                "DCGM_FI_DEV_GPU_UTIL",
                "DCGM_FI_DEV_SM_CLOCK",
                "DCGM_FI_DEV_GPU_TEMP",
                "DCGM_FI_DEV_POWER_USAGE",
            )
            for m in metrics:
                out.write(f"# TYPE {m} gauge\n")
            i = 0
            while written < target:
                host, gpu, metric = i // 32, i % 8, metrics[(i // 8) % 4]
                for t in range(4):
                    line = (
                        f'{metric}{{Hostname="gpu{host:06d}.dc.internal",gpu="{gpu}",'
                        f'UUID="GPU-{host:08x}-{gpu:04x}"}} {50 + (i + t) % 50}.5 {1700000000 + 15 * t}\n'
                    )
                    out.write(line)
                    written += len(line)
                i += 1
            out.write("# EOF\n")
            return path.stat().st_size
        if name == "steps_csv":
            out.write("step,rank,start_unix,duration_s,compute_s\n")
            ranks, step = 4096, 0
            while written < target:
                rows = []
                for rank in range(ranks):
                    dur = 0.5 + ((step * 7 + rank * 13) % 97) / 1000.0
                    rows.append(
                        f"{step},{rank},{1700000000 + step * 0.55 + rank * 1e-4:.4f},{dur:.4f},{dur * 0.8:.4f}\n"
                    )
                block = "".join(rows)
                out.write(block)
                written += len(block)
                step += 1
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


def cached_input(name: str, size_mb: float) -> Path:
    """The generated input for ``name`` at ``size_mb``, made once and kept in :func:`cache_dir`."""
    name = _SAME_INPUT.get(name, name)
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{size_mb:g}mb-v{INPUT_VERSION}.txt"
    if not path.is_file():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            make_input(name, tmp, size_mb)
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
    return path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure_one(name: str, path: Path) -> dict[str, Any]:
    """Parse ``path`` with parser ``name`` in this process, fed as its tool feeds it; peak RSS
    before and after, and how much it found (the result is still held when the peak is read)."""
    from forensic.sandbox import ConfinedFS
    from forensic.tools._trainer_log import TrainerFacts
    from forensic.tools.detectors.steps import load_steps_csv
    from forensic.tools.parsers.kernel_log import parse_kernel_log
    from forensic.tools.parsers.nccl import parse_nccl_log
    from forensic.tools.parsers.openmetrics import parse_openmetrics
    from forensic.tools.parsers.step_files import merge_step_files
    from forensic.tools.parsers.torch_log import parse_torch_log

    fs = ConfinedFS(path.parent)
    t0 = time.perf_counter()
    for _line in fs.iter_lines(path.name):  # the floor: every line read, nothing done with it
        pass
    floor_s = time.perf_counter() - t0
    baseline = _peak_mb()
    t0 = time.perf_counter()
    if name == "nccl":  # job_logs: doc.lines()
        result: Any = parse_nccl_log(fs.iter_lines(path.name))
        found = len(result.entries)
    elif name == "torch_log":  # job_logs: doc.lines()
        result = parse_torch_log(fs.iter_lines(path.name))
        found = len(result.timeouts) + len(result.work_status)
    elif name == "trainer_log":  # job_logs: trainer.add_lines(doc.lines())
        result = TrainerFacts()
        result.add_lines(fs.iter_lines(path.name))
        found = (
            len(result.rates)
            + len(result.step_time)
            + result.stall_lines
            + result.storage_lines
            + len(result.configs)
        )
    elif name == "kernel_log":  # kernel_log: node.run(["dmesg"]), the whole text
        text = fs.read_text(path.name)
        result = parse_kernel_log(text)
        found = len(result.events)
    elif name == "openmetrics":  # OpenMetricsFiles: bundle.fs.iter_lines
        result = parse_openmetrics(fs.iter_lines(path.name))
        found = result.series_count
    elif name == "steps_csv":  # job_steps: load_steps_csv(merge_step_files([(source, doc.text)]))
        text = fs.read_text(path.name)
        result = load_steps_csv(merge_step_files([(path.name, text)]))
        found = int(result.ranks.size)
    else:
        raise ValueError(f"unknown parser {name!r}; expected one of {', '.join(PARSERS)}")
    parse_s = time.perf_counter() - t0
    return {
        "name": name,
        "found": found,
        "peak_rss_mb": _peak_mb(),
        "baseline_rss_mb": baseline,
        "parse_s": parse_s,
        "floor_s": floor_s,
    }


def parser_benchmark(
    size_mb: float = 250.0, parsers: tuple[str, ...] = PARSERS, progress: Any = None
) -> dict[str, Any]:
    """Peak RSS / input MB for each parser, each measured in a fresh subprocess."""
    rows: list[dict[str, Any]] = []
    for name in parsers:
        if progress is not None:
            progress(f"bench parsers: {name} on {size_mb:g} MB")
        path = cached_input(name, size_mb)
        size = path.stat().st_size
        proc = subprocess.run(
            [sys.executable, "-m", "forensic.tools.parsers._bench", name, str(path)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        if proc.returncode != 0:
            rows.append(
                {
                    "name": name,
                    "input_mb": round(size / 2**20, 1),
                    "error": proc.stderr.strip().splitlines()[-1:],
                }
            )
            continue
        got = json.loads(proc.stdout)
        # The ratio is of the numbers shown, so a reader can check it from the row itself.
        input_mb, peak_mb = round(size / 2**20, 1), round(got["peak_rss_mb"], 1)
        baseline = round(got["baseline_rss_mb"], 1)
        mb_s, floor_mb_s = size / 2**20 / max(got["parse_s"], 1e-9), size / 2**20 / max(got["floor_s"], 1e-9)
        rows.append(
            {
                "name": name,
                "input_mb": input_mb,
                "peak_rss_mb": peak_mb,
                "rss_over_input": round(peak_mb / input_mb, 2),
                "baseline_rss_mb": baseline,
                "parse_rss_mb": round(peak_mb - baseline, 1),
                "found": got["found"],
                "mb_per_s": round(mb_s, 1),
                "floor_mb_per_s": round(floor_mb_s, 1),
                "speed_over_floor": round(mb_s / floor_mb_s, 3),
                **({"speed_target_mb_per_s": SPEED_TARGETS[name]} if name in SPEED_TARGETS else {}),
            }
        )
    ok = all(
        "rss_over_input" in r
        and r["rss_over_input"] <= TARGET
        and r["mb_per_s"] >= r.get("speed_target_mb_per_s", 0.0)
        for r in rows
    )
    return {
        "parsers": rows,
        "target": TARGET,
        "ok": ok,
        "note": (
            "peak RSS (getrusage ru_maxrss) of a fresh process per parser, interpreter and imports "
            "included; baseline = the same process after its imports, before the input is opened"
        ),
    }


def format_parser_benchmark(result: dict[str, Any]) -> str:
    out = []
    for r in result["parsers"]:
        if "error" in r:
            out.append(f"  {r['name']:<12} failed: {r['error']}")
            continue
        verdict = "ok" if r["rss_over_input"] <= result["target"] else "over target"
        speed = f"{r['mb_per_s']:.1f} MB/s, {r['speed_over_floor']:.3f}x a line pass ({r['floor_mb_per_s']:.0f} MB/s)"
        if "speed_target_mb_per_s" in r:
            speed += (
                f" (target >= {r['speed_target_mb_per_s']:g} MB/s: "
                f"{'ok' if r['mb_per_s'] >= r['speed_target_mb_per_s'] else 'below target'})"
            )
        out.append(
            f"  {r['name']:<12} {r['input_mb']:>7.1f} MB in  peak RSS {r['peak_rss_mb']:>7.1f} MB  "
            f"{r['rss_over_input']:.2f}x input (target <= {result['target']:g}: {verdict})  "
            f"baseline {r['baseline_rss_mb']:.1f} MB, parse +{r['parse_rss_mb']:.1f} MB  {speed}"
        )
    out.append(f"  ({result['note']})")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(json.dumps(measure_one(sys.argv[1], Path(sys.argv[2]))) + "\n")
