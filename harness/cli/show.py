"""``forensic show``: the report of a checkpointed investigation, without running anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from ._common import _fail, _thread_values, app
from ._terminal import console, terminal_safe


@app.command()
def show(
    thread: Annotated[str, typer.Argument(help="Thread id (see forensic list).")],
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the forensic.report/v1 JSON document.")
    ] = False,
    full: Annotated[bool, typer.Option("--full", help="Every evidence summary and note.")] = False,
) -> None:
    """Print a checkpointed investigation's report, with approve commands for what is pending."""
    from forensic.harness.render import render_report
    from forensic.harness.threads import summarize

    values, when, cp_path = _thread_values(thread, checkpoint)
    report = values.get("report")
    if not report:
        _fail(
            2,
            f"thread {thread!r} stopped before its report; continue it with "
            f"forensic investigate {values.get('bundle_path', 'BUNDLE')} --resume {thread}",
        )
    report = {**report, "thread": thread}
    kept = (
        cp_path.parent / "archives" / f"{thread}.tar.gz"
    )  # where forensic serve keeps a live run's evidence
    origin = report.get("evidence_source")
    if isinstance(origin, dict) and origin.get("origin") == "live" and kept.is_file():
        report["evidence_source"] = {**origin, "archive": str(kept)}
    from forensic.harness.executors import ExecutionError, SqliteLedger, annotate

    try:  # what `forensic execute` or the service did with the approved proposals
        executions = SqliteLedger(cp_path).for_thread(thread)
    except ExecutionError as exc:
        _fail(2, str(exc))
    if executions:
        report = annotate(report, executions)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    waiting = summarize(thread, values, when).state == "waiting"
    spark = None
    from forensic.harness.series import spark_for
    from forensic.sandbox import Bundle, ForensicError

    try:
        con = console()
        spark = spark_for(report, Bundle(values["bundle_path"]), width=max(10, min(60, con.width - 30)))
    except (ForensicError, KeyError, OSError):
        con = console()  # the bundle moved or went: the report stands without its sparkline
    # Cleaned before layout as well as by the console: rich then measures the text it prints.
    render_report(terminal_safe(report), con, full=full, thread=thread if waiting else None, spark=spark)
    for p in report.get("proposals") or []:
        ex = p.get("execution")
        if ex and ex["state"] != "not_executed":
            con.print(
                Text.assemble(
                    f"{p['id']} {p['action']} {p['target']}: executed by {ex['executor']} as {ex['by']}: ",
                    (ex["state"], "bold"),
                    f" ({ex['detail']})",
                ),
                highlight=False,
            )
