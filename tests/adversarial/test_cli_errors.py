"""Items 11, 12, 13: one line and exit 2 instead of a traceback; nothing raw on a terminal;
valid JSON whatever the budget flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.cli import _register, app
from forensic.harness.cli._terminal import terminal_safe
from typer.testing import CliRunner

_register()
runner = CliRunner()


def _run(*args: str, env: dict | None = None):
    return runner.invoke(app, list(args), env=env)


def _one_line_exit_2(res) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"id": "x", "job": {"ranks": ' + "9" * 5000 + "}}",
    ],
)
def test_hostile_incident_json_exits_2(make_bundle, tmp_path: Path, text: str) -> None:
    root = make_bundle(None)
    (root / "incident.json").write_text(text)
    _one_line_exit_2(_run("investigate", str(root), "--no-checkpoint"))


@pytest.mark.parametrize(
    "flag,value", [("--budget-wall-s", "inf"), ("--budget-tool-calls", "100000000000000000000")]
)
def test_absurd_budgets_exit_2(make_bundle, flag: str, value: str) -> None:
    _one_line_exit_2(_run("investigate", str(make_bundle(None)), "--no-checkpoint", flag, value))


def test_a_state_dir_that_is_a_file_exits_2(make_bundle, tmp_path: Path) -> None:
    f = tmp_path / "state"
    f.write_text("")
    _one_line_exit_2(_run("investigate", str(make_bundle(None)), env={"FORENSIC_STATE_DIR": str(f)}))
    _one_line_exit_2(_run("investigate", str(make_bundle(None)), "--checkpoint", str(f / "cp.sqlite")))


def test_an_overlong_comment_exits_2_and_is_not_a_traceback(tmp_path: Path) -> None:
    res = _run(
        "approve",
        "t",
        "--approve",
        "rp-1=abc",
        "--comment",
        "x" * 2001,
        env={"FORENSIC_STATE_DIR": str(tmp_path)},
    )
    _one_line_exit_2(res)


def test_approve_of_a_missing_thread_is_refused_and_audited(tmp_path: Path) -> None:
    from forensic.harness import audit

    res = _run("approve", "nope", "--approve", "rp-1=abc", env={"FORENSIC_STATE_DIR": str(tmp_path)})
    _one_line_exit_2(res)
    lines, _ = audit.verify(tmp_path / "audit.jsonl")
    assert lines == 1
    entry = json.loads((tmp_path / "audit.jsonl").read_text())
    assert entry["outcome"] == "refused" and "no checkpoint" in entry["reason"]


def test_escape_sequences_from_a_bundle_never_reach_the_terminal(make_bundle) -> None:
    root = make_bundle("pcie_downtrain")
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = "MFU drop \x1b]0;owned\x07\x1b[2J\x9b31m"
    (root / "incident.json").write_text(json.dumps(inc))
    res = _run("investigate", str(root), "--no-checkpoint")
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x07" not in res.output and "\x9b" not in res.output


def test_terminal_safe_keeps_text_and_shows_controls_as_escapes() -> None:
    assert terminal_safe({"a\x1b": ["x\x00y\n\tz", 3]}) == {"a\\u001b": ["x\\u0000y\n\tz", 3]}
