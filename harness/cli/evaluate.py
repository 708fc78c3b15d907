"""``forensic eval``: score the investigator against evaluation incidents."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from forensic.harness.budget import Limits

from ._common import _fail, _planner_kwargs, _playbooks, app
from ._terminal import console


@app.command("eval")
def evaluate(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Folder of evaluation cases (<case>/bundle + <case>/truth.json), or the name of a generated set "
            "(incidents, independent), which is regenerated and verified on first use."
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the forensic.eval/v1 JSON document.")
    ] = False,
    repeat: Annotated[
        int, typer.Option(help="Run each case N times (for planners that are not deterministic).", min=1)
    ] = 1,
    planner: Annotated[str, typer.Option(help="graph (default) or llm.")] = "graph",
    budget_tool_calls: Annotated[int, typer.Option(help="Hard limit on tool calls per case.", min=0)] = 40,
    baselines: Annotated[bool, typer.Option(help="Also score the baseline rules in the same run.")] = True,
    playbooks: Annotated[
        Path | None,
        typer.Option(
            help="Playbook folder (graph.toml + root_causes/*.toml) to use instead of the shipped one."
        ),
    ] = None,
) -> None:
    """Score the investigator against evaluation incidents."""
    from forensic.evals.runner import render_scoreboard, run_eval
    from forensic.evals.sets import BUILDERS, EVALS, EvalSetError, ensure_set

    # A generated set is named, or its generator's folder given (`evals/blind` holds the
    # generator, not the cases): either way the cases are the ones generated and verified.
    generator = directory.exists() and directory.resolve().parent == EVALS
    name = directory.name if generator else str(directory).removeprefix("evals/")
    if name in BUILDERS and (generator or not directory.exists()):
        try:
            directory = ensure_set(
                name,
                progress=lambda m: print(f"forensic: {m}", file=sys.stderr),
            )
        except EvalSetError as exc:
            _fail(2, str(exc))
    if directory.is_file():
        directory = _unpack(directory)
    if not directory.is_dir():
        _fail(2, f"{directory}: not a folder")
    graph = _playbooks(playbooks)
    result = run_eval(
        directory,
        planner=planner,
        repeat=repeat,
        limits=Limits(tool_calls=budget_tool_calls),
        planner_kwargs=_planner_kwargs(planner, None, None, None),
        baselines=baselines,
        progress=not as_json and sys.stderr.isatty(),
        graph=graph,
    )
    if not result["cases"]:
        _fail(2, f"{directory}: no evaluation cases (folders with bundle/ and truth.json)")
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        # A scoreboard is wide; when piped, rich would squeeze it into 80 columns.
        render_scoreboard(result, console() if sys.stdout.isatty() else console(width=120))


def _unpack(archive: Path) -> Path:
    """A folder of cases shipped as an archive, unpacked under the sandbox's archive rules."""
    import atexit
    import shutil

    from forensic.sandbox import ForensicError
    from forensic.sandbox.archive import bundle_root, extract_archive

    try:
        folder = extract_archive(archive)
    except ForensicError as exc:
        _fail(2, str(exc))
    atexit.register(shutil.rmtree, folder, True)
    return bundle_root(folder)
