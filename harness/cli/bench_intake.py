"""``forensic bench intake``: alerts per second into a real ``forensic serve`` on loopback."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ._common import _fail, bench_app, require_extra


@bench_app.command("intake")
def bench_intake(
    alerts: Annotated[
        int, typer.Option(help="Alerts to post, all from one simulated fault.", min=1)
    ] = 10_000,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once.", min=1, max=1024)] = 64,
    per_request: Annotated[
        int, typer.Option(help="Alerts per webhook (Alertmanager batches a group's alerts).", min=1)
    ] = 1,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="postgresql:// URL of a scratch database: run API "
            "processes on it instead of one server on a temp SQLite file.",
        ),
    ] = None,
    processes: Annotated[
        str, typer.Option("--processes", help="With --db: API process counts to compare, comma-separated.")
    ] = "1,2,4",
    faults: Annotated[
        int,
        typer.Option(
            "--faults",
            help="With --db: simulated faults the alerts come from "
            "(one investigation each; alerts of one fault are written in order).",
            min=1,
        ),
    ] = 1,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            help="With --db: run the process counts this many times, "
            "interleaved, and report medians (a shared machine's load drifts).",
            min=1,
            max=20,
        ),
    ] = 1,
) -> None:
    """Post alerts at full speed to a fresh server (own process, temp database) and count what stuck."""
    require_extra("serve", "forensic bench intake", "fastapi", "prometheus_client")
    if db is not None:
        _bench_pg(db, processes, alerts, concurrency, per_request, as_json, faults, repeat)
        return
    from forensic.harness.service.bench import format_result, run_intake_bench

    result = run_intake_bench(alerts=alerts, concurrency=concurrency, per_request=per_request)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_result(result) + "\n")


def _bench_pg(
    db: str,
    processes: str,
    alerts: int,
    concurrency: int,
    per_request: int,
    as_json: bool,
    faults: int,
    repeat: int = 1,
) -> None:
    from forensic.harness.service.pgbench import format_pg_result, run_pg_intake_bench
    from forensic.harness.service.schema import is_postgres_url
    from forensic.sandbox import ForensicError

    if not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL, not {db[:60]!r}")
    try:
        counts = [int(x) for x in processes.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or any(n < 1 or n > 32 for n in counts):
        _fail(2, f"--processes {processes!r}: expected comma-separated counts from 1 to 32, e.g. 1,2,4")
    try:
        result = run_pg_intake_bench(
            db,
            processes=counts,
            alerts=alerts,
            concurrency=concurrency,
            per_request=per_request,
            faults=faults,
            repeat=repeat,
        )
    except (ForensicError, RuntimeError) as exc:
        _fail(2, str(exc))
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_pg_result(result) + "\n")
