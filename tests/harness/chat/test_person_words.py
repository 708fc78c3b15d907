"""Person-facing text holds no internal words: every example bundle through investigate, show, list
and chat --plain, and none of the identifiers, placeholders or Python reprs people tripped on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(p for p in (ROOT / "evals" / "examples").iterdir() if (p / "bundle").is_dir())

#: What a person must never read, each seen in a real session before it was written for people.
INTERNAL = {
    "signal identifiers tacked on a summary": re.compile(r"; signals: "),
    "a Python list or dict repr": re.compile(r"\[\s*'|\{\s*'|\['|\{'"),
    "a status repeated as the verdict": re.compile(r"\bhealthy healthy\b"),
    "a raw belief": re.compile(r"\bbelief \d"),
    "a placeholder for no component": re.compile(r"\bon -(?:[\s.,;)]|$)", re.M),
    "a probability to three places": re.compile(r"\bat 0\.\d{3}\b"),
}

QUESTIONS = [
    "why is it slow?",
    "which rank is the slowest?",
    "what about rank 0?",
    "show rank 0's compute time",
    "why not the network?",
    "why not rank 1?",
    "was there a cooling failure?",
    "is it the power?",
    "what changed at 01:42?",
    "what should we do?",
    "/evidence",
    "/evidence all",
    "/evidence ev-1",
]


def _cli(*args: str, state: Path, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "FORENSIC_STATE_DIR": str(state), "COLUMNS": "200"},
        timeout=600,
    )
    assert done.returncode in (0, 1), (args, done.stderr[-2000:])  # 1: a verdict that is not healthy
    return done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("case", EXAMPLES, ids=lambda p: p.name)
def test_no_internal_words_reach_a_person(case: Path, tmp_path: Path) -> None:
    thread = f"words-{case.name}"
    texts = {
        "investigate": _cli("investigate", str(case), "--thread", thread, state=tmp_path),
        "show": _cli("show", thread, "--full", state=tmp_path),
        "list": _cli("list", state=tmp_path),
        "chat --plain": _cli("chat", str(case), "--plain", state=tmp_path, stdin="\n".join(QUESTIONS) + "\n"),
    }
    assert "Chain" in texts["show"] and texts["chat --plain"].count("> ") >= 10  # they said something
    assert "evidence records" in texts["chat --plain"]
    for where, text in texts.items():
        for what, pattern in INTERNAL.items():
            hit = pattern.search(text)
            assert hit is None, (
                f"{case.name}, {where}: {what}: {text[max(0, hit.start() - 80) : hit.end() + 80]!r}"
            )
