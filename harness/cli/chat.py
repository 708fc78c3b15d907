"""``forensic chat``: a conversation about an incident, in the terminal or over stdin/stdout."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from forensic.harness.budget import Limits
from forensic.sandbox import ForensicError

from ._common import _checkpointer, _fail, _planner_kwargs, _playbooks, app, default_state_dir
from ._terminal import console


@app.command("chat")
def chat(
    bundle: Annotated[
        Path | None, typer.Argument(help="Incident bundle (or evaluation case). Omit with --resume.")
    ] = None,
    plain: Annotated[
        bool, typer.Option("--plain", help="One question per stdin line, answers on stdout (for scripts).")
    ] = False,
    resume: Annotated[str | None, typer.Option(help="Continue a conversation by its thread id.")] = None,
    planner: Annotated[str, typer.Option(help="graph (default, no model) or llm.")] = "graph",
    budget_tool_calls: Annotated[
        int, typer.Option(help="Tool calls for the whole conversation.", min=0)
    ] = 60,
    budget_wall_s: Annotated[
        float, typer.Option(help="Working seconds for the whole conversation.", min=0.001)
    ] = 600.0,
    plot_dir: Annotated[Path, typer.Option(help="Where /plot writes its PNGs.")] = Path("."),
    playbooks: Annotated[
        Path | None,
        typer.Option(
            help="Playbook folder (graph.toml + root_causes/*.toml) to use instead of the shipped one."
        ),
    ] = None,
    checkpoint: Annotated[
        Path | None, typer.Option(help="SQLite checkpoint file (default: state dir).")
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint (with --planner llm).")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="Model name (with --planner llm).")] = None,
    llm_api_key: Annotated[str | None, typer.Option(help="API key (with --planner llm).")] = None,
    fleet: Annotated[
        Path | None, typer.Option(help="Talk about a live fleet described by this fleet.toml.")
    ] = None,
    job: Annotated[str | None, typer.Option(help="With --fleet: the job.")] = None,
    since: Annotated[str, typer.Option(help="With --fleet: how far back the window starts.")] = "2h",
    server: Annotated[
        str | None, typer.Option(help="A running `forensic serve` (URL) that holds the conversation.")
    ] = None,
    investigation: Annotated[
        str | None, typer.Option(help="With --server: the investigation (inv-...).")
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option(help="With --server: file holding your bearer token.")
    ] = None,
) -> None:
    """Ask about an incident and follow up: every answer cites its evidence; /approve as yourself."""
    from forensic.harness.chat.terminal import run_interactive, run_plain
    from forensic.harness.conversation.answers import terminal_hint
    from forensic.harness.conversation.conversation import Conversation

    if server is not None:
        _chat_with_server(server, investigation, token_file, resume)
        return
    cp_path = checkpoint or default_state_dir() / "checkpoints.sqlite"
    saver = _checkpointer(cp_path)
    if resume:
        tup = saver.get_tuple({"configurable": {"thread_id": resume}})
        if tup is None or "turns" not in tup.checkpoint["channel_values"]:
            _fail(2, f"no conversation {resume!r} in {cp_path}")
        stored = tup.checkpoint["channel_values"].get("bundle_path")
        if (
            bundle is not None
            and Path(bundle).resolve() != Path(stored).resolve()
            and Path(bundle).resolve() / "bundle" != Path(stored).resolve()
        ):
            _fail(2, f"conversation {resume!r} is about {stored}, not {bundle}")
        bundle = Path(stored)
    if fleet is not None:
        if bundle is not None:
            _fail(2, "give an incident bundle or --fleet, not both")
        from ._fleet import open_live

        bundle = open_live(fleet, job, since, None, "", None)
    if bundle is None:
        _fail(2, "name an incident bundle, --fleet FILE --job NAME, or --resume a conversation")
    phrase = None
    kwargs = _planner_kwargs(planner, llm_base_url, llm_model, llm_api_key)
    if planner == "llm":
        from forensic.harness.conversation.phrasing import ModelPhraser

        phrase = ModelPhraser(**kwargs)
    try:
        conv = Conversation(
            bundle,
            checkpointer=saver,
            planner=planner,
            planner_kwargs=kwargs,
            graph=_playbooks(playbooks),
            limits=Limits(tool_calls=budget_tool_calls, wall_s=budget_wall_s),
            audit_log=default_state_dir() / "audit.jsonl",
            thread_id=resume,
            phrase=phrase,
            approve_hint=terminal_hint,
        )
        if plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
            run_plain(conv, sys.stdin, sys.stdout, plot_dir)
            sys.stderr.write(f"forensic: conversation {conv.thread_id}\n")
        else:
            run_interactive(conv, console(), plot_dir)
    except ForensicError as exc:
        _fail(2, str(exc))


def _chat_with_server(
    server: str, investigation: str | None, token_file: Path | None, resume: str | None
) -> None:
    """Questions from stdin (one per line) to the service's conversation; answers on stdout."""
    from forensic.harness.chat.remote import RemoteConversation

    if not investigation or token_file is None:
        _fail(2, "--server needs --investigation INV and --token-file FILE")
    try:
        token = token_file.read_text().strip()
    except OSError as exc:
        _fail(2, f"--token-file {token_file}: {exc.strerror or exc}")
    conv = RemoteConversation(server, token, investigation, conversation=resume)
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        if line in ("/quit", "/exit", "/q"):
            break
        if line.startswith("/"):
            sys.stdout.write(
                "over --server only questions are taken: approve on the page or with the approve endpoint\n"
            )
            continue
        try:
            ans = conv.ask(line)
        except ForensicError as exc:
            _fail(2, str(exc))
        sys.stdout.write(f"> {line}\n{ans.render()}\n\n")
        sys.stdout.flush()
    if conv.thread_id:
        sys.stderr.write(f"forensic: conversation {conv.thread_id} on {server}\n")
