"""``forensic investigate``: a recorded incident to a verdict."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from forensic.harness.budget import Limits
from forensic.sandbox import BundleError, EvidenceSource, ForensicError

from ._common import _checkpointer, _fail, _planner_kwargs, _playbooks, app, default_state_dir, err
from ._terminal import console


@app.command()
def investigate(
    ctx: typer.Context,
    bundle: Annotated[
        Path | None,
        typer.Argument(
            help="Incident bundle folder (or an evaluation case holding bundle/); omit with --fleet."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the forensic.report/v1 JSON document.")
    ] = False,
    budget_tool_calls: Annotated[
        int, typer.Option(help="Hard limit on tool calls (with --resume: default the thread's own).", min=0)
    ] = 40,
    budget_wall_s: Annotated[
        float,
        typer.Option(
            help="Hard limit on working time, seconds (with --resume: default the thread's own).", min=0.001
        ),
    ] = 300.0,
    budget_tokens: Annotated[int, typer.Option(help="Hard limit on model tokens.", min=0)] = 200_000,
    budget_cost_usd: Annotated[float, typer.Option(help="Hard limit on model cost, USD.", min=0.0)] = 1.0,
    planner: Annotated[str, typer.Option(help="graph (default, no model) or llm.")] = "graph",
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    no_checkpoint: Annotated[
        bool, typer.Option("--no-checkpoint", help="Keep checkpoints in memory only.")
    ] = False,
    thread: Annotated[str | None, typer.Option(help="Thread id for this run (default: generated).")] = None,
    resume: Annotated[str | None, typer.Option(help="Resume a checkpointed thread by id.")] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (env FORENSIC_LLM_BASE_URL).")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name (env FORENSIC_LLM_MODEL).")] = None,
    llm_api_key: Annotated[str | None, typer.Option(help="API key (env FORENSIC_LLM_API_KEY).")] = None,
    playbooks: Annotated[
        Path | None,
        typer.Option(
            help="Playbook folder (graph.toml + root_causes/*.toml) to use instead of the shipped one."
        ),
    ] = None,
    fleet: Annotated[
        Path | None, typer.Option(help="Read a live fleet described by this fleet.toml instead of a bundle.")
    ] = None,
    job: Annotated[str | None, typer.Option(help="With --fleet: the job to investigate.")] = None,
    since: Annotated[
        str, typer.Option(help="With --fleet: how far back the window starts (2h, 90m, 1h30m).")
    ] = "2h",
    until: Annotated[
        str | None, typer.Option(help="With --fleet: window end, ISO 8601 or unix seconds (default: now).")
    ] = None,
    title: Annotated[
        str, typer.Option(help="With --fleet: the symptom in one line (it shapes triage).")
    ] = "",
    ranks: Annotated[
        int | None, typer.Option(help="With --fleet: ranks of the job when topology has no placement.", min=1)
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Every evidence summary and note (default: what fits a screen).")
    ] = False,
    reuse: Annotated[
        bool | None,
        typer.Option(
            "--reuse/--new",
            help="When a thread of this incident waits for approval: show it (--reuse) or start another "
            "(--new). Default: ask on a terminal, else start another and say so.",
        ),
    ] = None,
) -> None:
    """Investigate a recorded incident (or, with --fleet, a live one) and print a verdict with cited evidence."""
    import sqlite3

    from forensic.harness.graph import Investigator
    from forensic.harness.render import render_report
    from pydantic import ValidationError

    from ._terminal import terminal_safe

    try:
        limits = Limits(
            tool_calls=budget_tool_calls,
            wall_s=budget_wall_s,
            llm_tokens=budget_tokens,
            cost_usd=budget_cost_usd,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        _fail(2, f"--budget-{str(first['loc'][0]).replace('_', '-')}: {first['msg']}")
    cp_path = None if no_checkpoint else (checkpoint or default_state_dir() / "checkpoints.sqlite")
    thread_id = resume or thread or None
    graph = _playbooks(playbooks)
    if (bundle is None) == (fleet is None):
        _fail(2, "give an incident bundle, or --fleet FILE --job NAME (not both)")
    source: EvidenceSource | Path | None = bundle
    interactive = sys.stdout.isatty() and not as_json
    progress = None
    in_force = ""
    try:
        saver = _checkpointer(cp_path)
        if fleet is not None:
            from ._fleet import open_live

            source = open_live(fleet, job, since, until, title, ranks)
        elif not resume and not thread and bundle is not None and cp_path is not None and cp_path.is_file():
            waiting = _waiting_thread(saver, bundle)
            if waiting is not None and _reuse(waiting, reuse, interactive and sys.stdin.isatty()):
                resume = thread_id = waiting
        if resume and playbooks is None:
            graph = _thread_playbooks(saver, resume)
        if resume:
            limits, in_force = _resume_limits(ctx, saver, resume, limits)
        assert source is not None  # a bundle or a fleet, checked above
        inv = Investigator(
            source,
            planner=planner,
            planner_kwargs=_planner_kwargs(planner, llm_base_url, llm_model, llm_api_key),
            graph=graph,
            limits=limits,
            checkpointer=saver,
            audit_log=default_state_dir() / "audit.jsonl",
        )
        cfg = inv.config(thread_id)
        thread_id = cfg["configurable"]["thread_id"]
        if interactive and sys.stderr.isatty():
            from ._progress import Progress

            progress = Progress(err, planner=inv.planner.name)
        # With a durable checkpoint the run waits at the approval gate, so that a person can
        # approve a proposal later with `forensic approve`; in memory there is no later.
        report = (
            inv.resume(resume, on_step=progress)
            if resume
            else inv.run(thread_id=thread_id, await_approval=cp_path is not None, on_step=progress)
        )
    except BundleError as exc:
        _fail(2, str(exc))
    except ForensicError as exc:
        _fail(2, str(exc))
    except (OSError, sqlite3.Error) as exc:
        # The state dir is a file, unwritable, or the disk is full: nothing to investigate into.
        _fail(2, f"cannot use the state dir or checkpoint {cp_path}: {exc}")
    finally:
        if progress is not None:
            progress.close()
    report["thread"] = thread_id
    if in_force:  # after the run: a refusal above stays one line
        sys.stderr.write(f"forensic: {in_force}\n")
    for note in report.get("notes") or []:
        if note.startswith("not continued: "):
            sys.stderr.write(f"forensic: {note}\n")
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    from forensic.harness.series import spark_for

    con = console()
    # Cleaned before layout as well as by the console: rich then measures the text it prints.
    render_report(
        terminal_safe(report),
        con,
        full=full,
        thread=thread_id if cp_path is not None else None,
        spark=spark_for(report, inv.source, width=max(10, min(60, con.width - 30))),
    )


#: Limits field -> the option that sets it.
_BUDGET_OPTIONS = {
    "tool_calls": "budget_tool_calls",
    "wall_s": "budget_wall_s",
    "llm_tokens": "budget_tokens",
    "cost_usd": "budget_cost_usd",
}


def _resume_limits(ctx: typer.Context, saver: Any, thread: str, given: Limits) -> tuple[Limits, str]:
    """The thread's own limits, with those given on this command line instead, and the line that says so.

    A resumed thread keeps the budget it was started with: the option defaults would otherwise
    replace it silently (5 tool calls becoming 40).
    """
    from forensic.harness.threads import latest_values
    from pydantic import ValidationError

    got = latest_values(saver, thread)
    saved = (got[0].get("limits") if got else None) or {}
    named = {
        field: option
        for field, option in _BUDGET_OPTIONS.items()
        if (src := ctx.get_parameter_source(option)) is not None and src.name != "DEFAULT"
    }
    try:
        limits = Limits.model_validate(
            {
                **(saved if isinstance(saved, dict) else {}),
                **{field: getattr(given, field) for field in named},
            }
        )
    except ValidationError as exc:
        _fail(
            2,
            f"thread {thread!r} holds limits that are not valid ({exc.errors()[0]['msg']}); pass all four --budget-* options",
        )
    flags = ", ".join("--" + option.replace("_", "-") for option in named.values())
    own = "the thread's own" if saved else "the defaults (the thread saved none)"
    whence = f"{flags} as given, the rest {own}" if named else own
    return limits, (
        f"limits in force: {limits.tool_calls} tool calls, {limits.wall_s:g} s, {limits.llm_tokens} tokens, "
        f"${limits.cost_usd:g} ({whence})"
    )


def _thread_playbooks(saver, thread: str):
    """The failure graph a thread was investigated with (``threads.thread_playbooks``); exit 2 when
    its folder is gone or no longer loads."""
    from forensic.harness.threads import latest_values, thread_playbooks
    from forensic.sandbox import PlaybookError

    got = latest_values(saver, thread)
    try:
        return thread_playbooks(thread, got[0] if got else {})
    except PlaybookError as exc:
        _fail(2, str(exc))


def _waiting_thread(saver, bundle: Path) -> str | None:
    """The newest thread of the same bundle still waiting for approval, if any."""
    from forensic.harness.threads import list_threads

    try:
        here = {bundle.resolve(), (bundle / "bundle").resolve()}  # an evaluation case holds bundle/
        return next(
            (
                t.thread
                for t in list_threads(saver)
                if t.state == "waiting" and t.bundle and Path(t.bundle).resolve() in here
            ),
            None,
        )
    except Exception:  # a damaged checkpoint file must not stop a new investigation
        return None


def _reuse(waiting: str, choice: bool | None, can_ask: bool) -> bool:
    if choice is not None:
        return choice
    if can_ask:
        return typer.confirm(
            f"thread {waiting} of this incident is waiting for approval; show it instead of starting another?",
            default=True,
            err=True,
        )
    sys.stderr.write(
        f"forensic: thread {waiting} of this incident is still waiting for approval "
        f"(forensic show {waiting}); starting another (--reuse shows it instead)\n"
    )
    return False
