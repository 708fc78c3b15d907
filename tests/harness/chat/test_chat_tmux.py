"""The interactive chat in a real terminal (tmux): type a question, see the answer and its citations."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=30).stdout


def _wait_for(session: str, needle: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if needle in screen:
            return screen
        time.sleep(0.5)
    raise AssertionError(f"{needle!r} never appeared; screen:\n{screen}")


@pytest.fixture()
def tmux_session(tmp_path: Path):
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed; .ci/run installs it")
        pytest.skip("tmux is not installed")
    name = f"chat-{uuid.uuid4().hex[:8]}"
    cmd = (
        f"FORENSIC_STATE_DIR={tmp_path} {sys.executable} -m forensic.harness.cli chat {CASE} "
        f"--plot-dir {tmp_path}"
    )
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", cmd], check=True, timeout=30
    )
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, timeout=30)


def test_interactive_answer_and_citations_on_screen(tmux_session: str) -> None:
    _wait_for(tmux_session, "ask a question")
    _tmux("send-keys", "-t", tmux_session, "why is it slow?", "Enter")
    screen = _wait_for(tmux_session, "Chain:")
    assert "pcie_downtrain on gpu-e126/gpu0" in screen
    assert "[ev-3]" in screen or "[ev-1]" in screen
    _tmux("send-keys", "-t", tmux_session, "what about gpu-e127?", "Enter")
    screen = _wait_for(tmux_session, "gpu-e127 ")
    _tmux("send-keys", "-t", tmux_session, "/quit", "Enter")
    screen = _wait_for(tmux_session, "resume with: forensic chat --resume")
