"""``investigate --resume`` keeps the thread's own budget unless new limits are
given, and prints the limits in force.

A thread started with ``--budget-tool-calls 2 --budget-wall-s 100`` that ran out of tool calls is
not silently continued under the default 40 calls and 300 s; with ``--budget-tool-calls 6`` it
continues with 6 calls and still 100 s.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def _investigate(state: Path, *args: str) -> subprocess.CompletedProcess:
    return cli.forensic_here("investigate", str(CASE), "--json", *args, state=state)


def test_resume_keeps_the_threads_budget_and_says_which_limits_hold(tmp_path: Path) -> None:
    first = _investigate(tmp_path, "--thread", "t", "--budget-tool-calls", "2", "--budget-wall-s", "100")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["budget"]["tool_calls_limit"] == 2

    again = _investigate(tmp_path, "--resume", "t")
    assert again.returncode == 0, again.stderr
    budget = json.loads(again.stdout)["budget"]
    assert (budget["tool_calls"], budget["tool_calls_limit"], budget["wall_s_limit"]) == (2, 2, 100.0), budget
    assert "limits in force: 2 tool calls, 100 s" in again.stderr and "the thread's own" in again.stderr, (
        again.stderr
    )
    assert "not continued" in again.stderr

    more = _investigate(tmp_path, "--resume", "t", "--budget-tool-calls", "6")
    assert more.returncode == 0, more.stderr
    budget = json.loads(more.stdout)["budget"]
    assert budget["tool_calls_limit"] == 6 and budget["wall_s_limit"] == 100.0 and budget["tool_calls"] > 2, (
        budget
    )
    assert "limits in force: 6 tool calls, 100 s" in more.stderr and "--budget-tool-calls" in more.stderr, (
        more.stderr
    )
