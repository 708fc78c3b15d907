"""``forensic bench intake``: alerts per second into a real ``forensic serve`` on loopback."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._common import bench_app


@bench_app.command("intake")
def bench_intake(
    alerts: Annotated[int, typer.Option(help="Alerts to post, all from one simulated fault.", min=1)] = 10_000,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once.", min=1, max=1024)] = 64,
    per_request: Annotated[int, typer.Option(help="Alerts per webhook (Alertmanager batches a group's alerts).", min=1)] = 1,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Post alerts at full speed to a fresh server (own process, temp database) and count what stuck."""
    from forensic.harness.service.bench import format_result, run_intake_bench

    result = run_intake_bench(alerts=alerts, concurrency=concurrency, per_request=per_request)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_result(result) + "\n")
