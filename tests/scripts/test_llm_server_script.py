"""scripts/llm_server.sh: finds the project's Python and fails with one clear line, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llm_server.sh"


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def _one_line(out: subprocess.CompletedProcess, needle: str) -> None:
    assert out.returncode == 2, out
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in out.stderr, out.stderr


def test_a_bad_port_is_refused() -> None:
    _one_line(_run("http", env={}), "port must be a number")
    _one_line(_run("70000", env={}), "between 1 and 65535")


def test_a_missing_python_is_named() -> None:
    _one_line(_run(env={"PYTHON": "/nonexistent/python"}), "python not found")


def test_missing_packages_say_what_to_install_in_which_python(tmp_path: Path) -> None:
    # A Python without site-packages: the server package cannot be there.
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\nexec /usr/bin/python3 -I -S "$@"\n')
    fake.chmod(0o755)
    out = _run(env={"PYTHON": str(fake)})
    _one_line(out, "llama-cpp-python")
    assert "pip install" in out.stderr


def test_the_script_prefers_the_project_venv() -> None:
    text = SCRIPT.read_text()
    assert '"$root/.venv/bin/python"' in text and "python3}" not in text
