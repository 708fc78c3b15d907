"""``forensic bench ...``: benchmarks that report ratios measured in one run."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._common import bench_app


@bench_app.command("detectors")
def bench_detectors(
    ranks: Annotated[int, typer.Option(help="Ranks in the synthetic job.", min=8)] = 16384,
    steps: Annotated[int, typer.Option(help="Steps in the synthetic job.", min=50)] = 10000,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Speed of the detector suite against a one-pass numpy floor and a pandas baseline."""
    from forensic.tools.detectors.bench import detector_benchmark, format_benchmark

    result = detector_benchmark(ranks=ranks, steps=steps, seed=seed)
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




@bench_app.command("parsers")
def bench_parsers(
    size_mb: Annotated[float, typer.Option(help="Input size per parser, MB.", min=0.1, max=4096)] = 250.0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Peak RSS over input size of each streaming parser, each in its own process (target <= 3x)."""
    from forensic.tools.parsers._bench import format_parser_benchmark, parser_benchmark

    result = parser_benchmark(size_mb=size_mb)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_parser_benchmark(result) + "\n")
