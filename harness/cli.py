"""The ``forensic`` command line.

Exit codes: 0 when an investigation ran to a verdict of any status, 2 for unusable input (one
line on stderr saying why), 1 for an internal error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from harness.budget import Limits
from sandbox import BundleError, ForensicError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="An autonomous investigator for GPU training fleets.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: speed and accuracy of the detectors.")
app.add_typer(bench_app, name="bench")

err = Console(stderr=True)


def _fail(code: int, message: str) -> None:
    # Plain write, not rich: one line, never wrapped, whatever the terminal width.
    sys.stderr.write(f"forensic: {' '.join(message.split())}\n")
    raise typer.Exit(code)


def default_state_dir() -> Path:
    base = os.environ.get("FORENSIC_STATE_DIR") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "forensic"
    )
    return Path(base)


def _checkpointer(path: Path | None):
    """A SQLite checkpointer at ``path`` (None: an in-memory one)."""
    if path is None:
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))


@app.command()
def investigate(
    bundle: Annotated[Path, typer.Argument(help="Incident bundle folder (or an evaluation case holding bundle/).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the forensic.report/v1 JSON document.")] = False,
    budget_tool_calls: Annotated[int, typer.Option(help="Hard limit on tool calls.", min=0)] = 40,
    budget_wall_s: Annotated[float, typer.Option(help="Hard limit on working time, seconds.", min=0.001)] = 300.0,
    budget_tokens: Annotated[int, typer.Option(help="Hard limit on model tokens.", min=0)] = 200_000,
    budget_cost_usd: Annotated[float, typer.Option(help="Hard limit on model cost, USD.", min=0.0)] = 1.0,
    planner: Annotated[str, typer.Option(help="graph (default, no model) or llm.")] = "graph",
    checkpoint: Annotated[Optional[Path], typer.Option(help="SQLite checkpoint file (default: state dir).")] = None,
    no_checkpoint: Annotated[bool, typer.Option("--no-checkpoint", help="Keep checkpoints in memory only.")] = False,
    thread: Annotated[Optional[str], typer.Option(help="Thread id for this run (default: generated).")] = None,
    resume: Annotated[Optional[str], typer.Option(help="Resume a checkpointed thread by id.")] = None,
    llm_base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint (env FORENSIC_LLM_BASE_URL).")] = None,
    llm_model: Annotated[Optional[str], typer.Option(help="Model name (env FORENSIC_LLM_MODEL).")] = None,
    llm_api_key: Annotated[Optional[str], typer.Option(help="API key (env FORENSIC_LLM_API_KEY).")] = None,
) -> None:
    """Investigate a recorded incident and print a verdict with cited evidence."""
    from harness.graph import Investigator
    from harness.render import render_report

    limits = Limits(tool_calls=budget_tool_calls, wall_s=budget_wall_s, llm_tokens=budget_tokens, cost_usd=budget_cost_usd)
    cp_path = None if no_checkpoint else (checkpoint or default_state_dir() / "checkpoints.sqlite")
    thread_id = resume or thread or None
    try:
        inv = Investigator(bundle, planner=planner, planner_kwargs=_planner_kwargs(planner, llm_base_url, llm_model, llm_api_key),
                           limits=limits, checkpointer=_checkpointer(cp_path), audit_log=default_state_dir() / "audit.jsonl")
        cfg = inv.config(thread_id)
        thread_id = cfg["configurable"]["thread_id"]
        # With a durable checkpoint the run waits at the approval gate, so that a person can
        # approve a proposal later with `forensic approve`; in memory there is no later.
        report = inv.resume(resume) if resume else inv.run(thread_id=thread_id, await_approval=cp_path is not None)
    except BundleError as exc:
        _fail(2, str(exc))
    except ForensicError as exc:
        _fail(2, str(exc))
    report["thread"] = thread_id
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        render_report(report, Console())
        pending = [p for p in report.get("proposals", []) if p["status"] == "pending_approval"]
        if pending and cp_path is not None:
            p = pending[0]
            sys.stdout.write(f"to approve: forensic approve {thread_id} --approve {p['id']}={p['content_hash']}\n")


@app.command()
def approve(
    thread: Annotated[str, typer.Argument(help="Thread id of an investigation waiting for approval.")],
    approve_: Annotated[list[str], typer.Option("--approve", help="PROPOSAL_ID=CONTENT_HASH to approve (repeatable).")] = [],
    reject: Annotated[list[str], typer.Option("--reject", help="PROPOSAL_ID=CONTENT_HASH to reject (repeatable).")] = [],
    comment: Annotated[str, typer.Option(help="Why, recorded in the audit log.")] = "",
    checkpoint: Annotated[Optional[Path], typer.Option(help="SQLite checkpoint file (default: state dir).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the updated report JSON.")] = False,
) -> None:
    """Approve or reject remediation proposals of a checkpointed investigation, as yourself.

    Each decision names the proposal and the hash of its content, so what is approved is exactly
    what was shown. The approver is the operating-system user running this command; every
    decision, counted or refused, is appended to the audit log in the state dir.
    """
    import getpass

    from harness.approvals import Decision
    from harness.graph import Investigator

    decisions = []
    for verdict, items in (("approve", approve_), ("reject", reject)):
        for item in items:
            pid, sep, digest = item.partition("=")
            if not sep or not pid or not digest:
                _fail(2, f"--{verdict} {item!r}: expected PROPOSAL_ID=CONTENT_HASH")
            decisions.append(Decision(proposal_id=pid, content_hash=digest, decision=verdict,  # type: ignore[arg-type]
                                      approver=getpass.getuser(), authenticated=True, comment=comment))
    if not decisions:
        _fail(2, "nothing to decide: pass --approve or --reject")
    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    if not cp_path.is_file():
        _fail(2, f"no checkpoint file at {cp_path}")
    saver = _checkpointer(cp_path)
    tup = saver.get_tuple({"configurable": {"thread_id": thread}})
    if tup is None:
        _fail(2, f"no checkpoint for thread {thread!r}")
    bundle = tup.checkpoint["channel_values"].get("bundle_path")
    try:
        inv = Investigator(bundle, checkpointer=saver, audit_log=default_state_dir() / "audit.jsonl")
        report, audit = inv.decide(thread, decisions)
    except ForensicError as exc:
        _fail(2, str(exc))
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    con = Console()
    for p in report["proposals"]:
        con.print(f"{p['id']} {p['action']} {p['target']}: [bold]{p['status']}[/]", highlight=False)
    for a in audit:
        if a["outcome"] == "refused":
            con.print(f"[red]refused[/] {a['decision']} {a['proposal_id']}: {a['reason']}", highlight=False)


def _planner_kwargs(planner: str, base_url: str | None, model: str | None, api_key: str | None) -> dict:
    """Model settings for model-driven planners; flags win over the FORENSIC_LLM_* environment."""
    if planner == "graph":
        return {}
    return {k: v for k, v in {"base_url": base_url, "model": model, "api_key": api_key}.items() if v is not None}


@app.command("eval")
def evaluate(
    directory: Annotated[Path, typer.Argument(help="Folder of evaluation cases (<case>/bundle + <case>/truth.json).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the forensic.eval/v1 JSON document.")] = False,
    repeat: Annotated[int, typer.Option(help="Run each case N times (for planners that are not deterministic).", min=1)] = 1,
    planner: Annotated[str, typer.Option(help="graph (default) or llm.")] = "graph",
    budget_tool_calls: Annotated[int, typer.Option(help="Hard limit on tool calls per case.", min=0)] = 40,
    baselines: Annotated[bool, typer.Option(help="Also score the baseline rules in the same run.")] = True,
) -> None:
    """Score the investigator against evaluation incidents."""
    from evals.runner import render_scoreboard, run_eval

    if not directory.is_dir():
        _fail(2, f"{directory}: not a folder")
    result = run_eval(directory, planner=planner, repeat=repeat, limits=Limits(tool_calls=budget_tool_calls),
                      planner_kwargs=_planner_kwargs(planner, None, None, None),
                      baselines=baselines, progress=not as_json and sys.stderr.isatty())
    if not result["cases"]:
        _fail(2, f"{directory}: no evaluation cases (folders with bundle/ and truth.json)")
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        # A scoreboard is wide; when piped, rich would squeeze it into 80 columns.
        render_scoreboard(result, Console() if sys.stdout.isatty() else Console(width=120))


@app.command("tools")
def list_tools(as_json: Annotated[bool, typer.Option("--json", help="Print the tools' JSON schemas.")] = False) -> None:
    """List the investigator's tools and their arguments."""
    from tools import all_tools

    schemas = [t.schema() for t in all_tools().values()]
    if as_json:
        sys.stdout.write(json.dumps(schemas, indent=2) + "\n")
        return
    con = Console()
    for s in schemas:
        con.print(f"[bold]{s['name']}[/]  {s['description']}")


@bench_app.command("detectors")
def bench_detectors(
    ranks: Annotated[int, typer.Option(help="Ranks in the synthetic job.", min=8)] = 16384,
    steps: Annotated[int, typer.Option(help="Steps in the synthetic job.", min=50)] = 10000,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Speed of the detector suite against a one-pass numpy floor and a pandas baseline."""
    from tools.detectors.bench import detector_benchmark, format_benchmark

    result = detector_benchmark(ranks=ranks, steps=steps, seed=seed)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_benchmark(result) + "\n")


@bench_app.command("detection")
def bench_detection(
    as_json: Annotated[bool, typer.Option("--json")] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Accuracy of the detectors on synthetic fleets with injected stragglers."""
    from tools.detectors.bench import detection_benchmark, format_benchmark

    result = detection_benchmark(seed=seed)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if as_json else format_benchmark(result) + "\n")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("forensic: interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
