"""The ``forensic`` command run as a person runs it: a fresh Python process, its state and home
under a test's folder, and no environment but PATH and what the test names, so that settings of
the machine running the tests (FORENSIC_*, a user's config) cannot reach the run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PATH = "/usr/bin:/bin"


def forensic_argv(*args: str) -> list[str]:
    """The command line of ``forensic ARGS`` under this interpreter."""
    return [sys.executable, "-m", "forensic.harness.cli", *args]


def forensic(
    *args: str,
    state: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
    path: str = PATH,
) -> subprocess.CompletedProcess:
    """``forensic ARGS`` with ``FORENSIC_STATE_DIR`` and ``HOME`` set to ``state``; ``env`` adds to
    (or overrides) that bare environment."""
    return subprocess.run(
        forensic_argv(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        cwd=cwd,
        env={"FORENSIC_STATE_DIR": str(state), "PATH": path, "HOME": str(state), **(env or {})},
    )


def investigate(*args: str, state: Path, timeout: float = 300) -> dict[str, Any]:
    """The JSON report of ``forensic investigate ARGS --json --no-checkpoint``, which must succeed."""
    out = forensic("investigate", *args, "--json", "--no-checkpoint", state=state, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)
