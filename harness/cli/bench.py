"""``forensic bench ...``: benchmarks that report ratios measured in one run."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._common import _fail, bench_app, require_extra


@bench_app.command("detectors")
def bench_detectors(
    ranks: Annotated[int, typer.Option(help="Ranks in the synthetic job.", min=8)] = 16384,
    steps: Annotated[int, typer.Option(help="Steps in the synthetic job.", min=50)] = 10000,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    seed: Annotated[int, typer.Option()] = 0,
    numba: Annotated[
        bool,
        typer.Option(
            "--numba/--no-numba", help="Use the compiled scan kernel when numba is installed (extra 'fast')."
        ),
    ] = True,
) -> None:
    """Speed of the detector suite against a one-pass numpy floor and a pandas baseline."""
    import importlib.util

    if importlib.util.find_spec("pandas") is None:
        _fail(
            2,
            "bench detectors measures a naive pandas baseline, and pandas is not installed: "
            "pip install 'forensic-harness[bench]'",
        )
    from forensic.tools.detectors import _fast
    from forensic.tools.detectors.bench import detector_benchmark, format_benchmark

    _fast.set_enabled(numba and _fast.enabled())
    try:
        result = detector_benchmark(ranks=ranks, steps=steps, seed=seed)
    except RuntimeError as exc:  # the pandas baseline's child process failed
        _fail(2, str(exc))
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_benchmark(result) + "\n")


@bench_app.command("detection")
def bench_detection(
    as_json: Annotated[bool, typer.Option("--json")] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Accuracy of the detectors on synthetic fleets with injected stragglers."""
    from forensic.tools.detectors.bench import detection_benchmark, format_benchmark

    result = detection_benchmark(seed=seed)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_benchmark(result) + "\n")


@bench_app.command("fleet")
def bench_fleet(
    hosts: Annotated[
        int, typer.Option(help="Hosts in the generated incident, one replay agent each.", min=2, max=256)
    ] = 64,
    cause: Annotated[
        str, typer.Option(help="Root cause injected by the generator (healthy: every tool reads every host).")
    ] = "healthy",
    seed: Annotated[int, typer.Option()] = 1,
    prometheus: Annotated[
        bool,
        typer.Option(
            "--prometheus/--no-prometheus",
            help="Serve metrics from a real Prometheus (needs the prometheus package).",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """A full investigation through replay agents on loopback vs the replay run of the same bundle."""
    from forensic.sandbox import ForensicError

    from ._common import _fail

    try:
        from forensic.evals.fleet_bench import fleet_benchmark, format_fleet_benchmark

        result = fleet_benchmark(hosts=hosts, cause=cause, seed=seed, prometheus=prometheus)
    except (ForensicError, ValueError) as exc:
        _fail(2, str(exc))
    sys.stdout.write(
        json.dumps(result, indent=2) + "\n" if as_json else format_fleet_benchmark(result) + "\n"
    )


@bench_app.command("triage")
def bench_triage(
    hosts: Annotated[
        str, typer.Option(help="Fleet sizes (hosts, one replay agent each), comma-separated.")
    ] = "64,256",
    seed: Annotated[int, typer.Option()] = 1,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Alert reaching Alertmanager -> verdict and notification from forensic serve on a live fleet, no bundles."""
    require_extra("serve", "forensic bench triage", "fastapi", "prometheus_client")
    from forensic.sandbox import ForensicError

    sizes = _host_sizes(hosts, 256)
    try:
        from forensic.evals.triage_bench import format_triage_benchmark, triage_benchmark

        result = triage_benchmark(sizes, seed=seed)
    except (ForensicError, RuntimeError, OSError) as exc:
        _fail(2, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    sys.stdout.write(
        json.dumps(result, indent=2) + "\n" if as_json else format_triage_benchmark(result) + "\n"
    )


@bench_app.command("recorder")
def bench_recorder(
    steps: Annotated[int, typer.Option(help="Steps to time per setup.", min=100)] = 20_000,
    step_ms: Annotated[
        float, typer.Option(help="The training step the overhead is compared with, ms.", min=1.0)
    ] = 100.0,
    params: Annotated[
        int, typer.Option(help="Model size (float32 parameters) for the checksum setup.", min=1)
    ] = 1_000_000,
    checksum_every: Annotated[int, typer.Option(help="Steps between parameter checksums.", min=1)] = 100,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Overhead of forensic.record per training step (target: under 1% of a 100 ms step)."""
    from forensic.record_bench import format_benchmark, recorder_benchmark

    result = recorder_benchmark(
        steps=steps, step_s=step_ms / 1000.0, params=params, checksum_every=checksum_every
    )
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_benchmark(result) + "\n")


@bench_app.command("parsers")
def bench_parsers(
    size_mb: Annotated[float, typer.Option(help="Input size per parser, MB.", min=0.1, max=4096)] = 250.0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Peak RSS over input size and MB/s (against a line-reading floor) of each parser a tool feeds a whole file to, each in its own process (targets: RSS <= 3x input; trainer_log >= 20 MB/s)."""
    from forensic.tools.parsers._bench import format_parser_benchmark, parser_benchmark

    try:
        result = parser_benchmark(size_mb=size_mb, progress=lambda m: sys.stderr.write(f"forensic: {m}\n"))
    except OSError as exc:
        _fail(2, f"bench parsers: cannot write the generated inputs: {exc}")
    sys.stdout.write(
        json.dumps(result, indent=2) + "\n" if as_json else format_parser_benchmark(result) + "\n"
    )


@bench_app.command("investigate")
def bench_investigate(
    hosts: Annotated[
        str, typer.Option(help="Fleet sizes (hosts of 8 GPUs), comma-separated.")
    ] = "64,256,1024,2048",
    causes: Annotated[
        str, typer.Option(help="Root causes investigated at every size, comma-separated.")
    ] = "pcie_downtrain,hbm_degradation,link_degradation",
    seed: Annotated[int, typer.Option()] = 1,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Wall time, peak RSS, files and bytes read and report size of one investigation per fleet size."""
    from forensic.evals.investigate_bench import format_investigate_benchmark, investigate_benchmark

    sizes = _host_sizes(hosts, 4096)
    try:
        result = investigate_benchmark(
            sizes,
            causes=[c.strip() for c in causes.split(",") if c.strip()],
            seed=seed,
            progress=lambda m: print(f"forensic: {m}", file=sys.stderr),
        )
    except (ValueError, RuntimeError) as exc:
        _fail(2, str(exc))
    sys.stdout.write(
        json.dumps(result, indent=2) + "\n" if as_json else format_investigate_benchmark(result) + "\n"
    )


def _host_sizes(hosts: str, most: int) -> list[int]:
    """``--hosts`` as fleet sizes: comma-separated integers from 2 to ``most``, or one line and exit 2."""
    try:
        sizes = [int(h) for h in hosts.split(",") if h.strip()]
    except ValueError:
        _fail(2, f"--hosts: expected comma-separated integers, got {hosts!r}")
    if not sizes or any(not 2 <= n <= most for n in sizes):
        _fail(2, f"--hosts: every size must be between 2 and {most} hosts, got {hosts!r}")
    return sizes
