"""The final screen of a real terminal (tmux, 80x24 and 120x40): the verdict line and every
approve command are on it after ``forensic investigate`` of each example.

Needs tmux (``apt-get install -y tmux``; ``.ci/run`` installs it). Skipped where it is missing,
except under CI=true, where a missing tmux fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forensic.harness.render import approve_commands, headline

EXAMPLES = Path(__file__).resolve().parents[3] / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir())


@pytest.fixture
def tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed (CI=true): apt-get install -y tmux")
        pytest.skip("tmux is not installed")
    return path


class Terminal:
    """A private tmux server (its own socket) running one bash at a fixed size."""

    def __init__(self, tmux: str, tmp: Path, cols: int, rows: int) -> None:
        self.tmux, self.sock, self.runs = tmux, str(tmp / "tmux.sock"), 0
        bindir = tmp / "bin"
        bindir.mkdir(exist_ok=True)
        wrapper = bindir / "forensic"
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m forensic.harness.cli "$@"\n')
        wrapper.chmod(0o755)
        env = {
            "PATH": f"{bindir}:/usr/bin:/bin",
            "HOME": str(tmp),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "FORENSIC_STATE_DIR": str(tmp / "state"),
            "PS1": "$ ",
        }
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(cols),
            "-y",
            str(rows),
            "bash --norc --noprofile",
            env=env,
        )
        self._tmux("set-option", "-t", "t", "status", "off")

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        return subprocess.run(
            [self.tmux, "-S", self.sock, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
            env=env or {"PATH": "/usr/bin:/bin"},
        ).stdout

    def run(self, command: str, timeout: float = 180.0) -> str:
        """Type ``command`` on a cleared screen, wait for it to finish, return the joined screen."""
        self.runs += 1
        marker = f"__done{self.runs}_rc="  # unique per run: the previous screen must not count
        self._tmux("send-keys", "-t", "t", f"clear; {command}; echo {marker}$?", "Enter")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(rf"^{marker}\d+$", screen, re.M):
                return screen
            time.sleep(0.5)
        raise AssertionError(f"{command!r} did not finish; screen:\n{self.screen()}")

    def screen(self) -> str:
        # -J joins lines the terminal wrapped, so a long command reads as the one line it is.
        return self._tmux("capture-pane", "-p", "-J", "-t", "t")

    def close(self) -> None:
        subprocess.run([self.tmux, "-S", self.sock, "kill-server"], capture_output=True, timeout=30)


@pytest.mark.parametrize("cols,rows", [(80, 24), (120, 40)])
def test_the_final_screen_holds_the_verdict_and_the_approve_commands(
    tmux: str, tmp_path: Path, cols: int, rows: int
) -> None:
    term = Terminal(tmux, tmp_path, cols, rows)
    try:
        for case in CASES:
            screen = term.run(f"forensic investigate {EXAMPLES / case} --thread {case}")
            assert re.search(r"^__done\d+_rc=0$", screen, re.M), screen
            lines = screen.splitlines()
            assert len(lines) <= rows
            report = saved_report(tmp_path, case)
            verdict = headline(report)
            assert any(line.strip() == verdict for line in lines), (
                f"{case} at {cols}x{rows}: no verdict line\n{screen}"
            )
            cmds = approve_commands(report, case)
            assert bool(cmds) == (report["status"] in ("confirmed", "probable")), case
            for cmd in cmds:
                assert cmd in lines, f"{case} at {cols}x{rows}: {cmd} not on the final screen\n{screen}"
    finally:
        term.close()


def saved_report(tmp: Path, thread: str) -> dict:
    """The report the run checkpointed: what the screen should show."""
    from forensic.harness.cli._common import _checkpointer
    from forensic.harness.threads import latest_values

    got = latest_values(_checkpointer(tmp / "state" / "checkpoints.sqlite"), thread)
    assert got is not None and got[0].get("report"), thread
    return got[0]["report"]


def test_a_rerun_on_a_terminal_asks_to_reuse_the_waiting_thread(tmux: str, tmp_path: Path) -> None:
    term = Terminal(tmux, tmp_path, 120, 40)
    try:
        bundle = EXAMPLES / "pcie-x8-mfu-drop"
        assert re.search(r"^__done1_rc=0$", term.run(f"forensic investigate {bundle} --thread first"), re.M)
        term._tmux(
            "send-keys", "-t", "t", f"clear; forensic investigate {bundle}; echo __asked_rc=$?", "Enter"
        )
        for _ in range(240):
            if "show it instead of starting another?" in term.screen():
                break
            time.sleep(0.5)
        else:
            raise AssertionError(term.screen())
        term._tmux("send-keys", "-t", "t", "y", "Enter")
        for _ in range(240):
            screen = term.screen()
            if re.search(r"^__asked_rc=\d+$", screen, re.M):
                break
            time.sleep(0.5)
        assert re.search(r"^__asked_rc=0$", screen, re.M), screen
        assert "forensic approve first --approve rp-1=" in screen
    finally:
        term.close()
