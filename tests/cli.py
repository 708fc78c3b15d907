"""The ``forensic`` command run as a person runs it: a fresh Python process, its state and home
under a test's folder, and no environment but PATH and what the test names, so that settings of
the machine running the tests (FORENSIC_*, a user's config) cannot reach the run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from forensic.harness.service.bench import free_port

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


def forensic_here(
    *args: str,
    state: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``forensic ARGS`` in the environment the tests run in, with ``FORENSIC_STATE_DIR`` set to
    ``state`` and ``env`` on top; its input is ``stdin``, else nothing (/dev/null)."""
    return subprocess.run(
        forensic_argv(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        cwd=cwd,
        env={**os.environ, "FORENSIC_STATE_DIR": str(state), **(env or {})},
    )


def investigate(*args: str, state: Path, timeout: float = 300) -> dict[str, Any]:
    """The JSON report of ``forensic investigate ARGS --json --no-checkpoint``, which must succeed."""
    out = forensic("investigate", *args, "--json", "--no-checkpoint", state=state, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def mcp_http_argv(source: Path, port: int, token_file: Path) -> list[str]:
    """``forensic mcp SOURCE`` over HTTP on a loopback port, with the token in ``token_file``."""
    return forensic_argv(
        "mcp",
        str(source),
        "--transport",
        "http",
        "--listen",
        f"127.0.0.1:{port}",
        "--token-file",
        str(token_file),
    )


@contextmanager
def mcp_over_http(source: Path, token: str, folder: Path) -> Iterator[str]:
    """A running ``forensic mcp SOURCE --transport http`` on a free loopback port that takes
    ``token`` (written to a file in ``folder``); yields its URL and stops it on exit."""
    port = free_port()
    token_file = folder / "token"
    token_file.write_text(token + "\n")
    proc = subprocess.Popen(
        mcp_http_argv(source, port, token_file),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.stderr is not None
                if proc.poll() is not None:
                    raise AssertionError(proc.stderr.read().decode()) from None
                assert time.monotonic() < deadline, "forensic mcp did not start"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
