"""``forensic agent``: bad input is one line and exit 2; a started agent serves a recorded host."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from forensic.sandbox import RemoteHost

from tests.conftest import HOSTS

TOKEN = "cli-agent-token-0123456789abcdef"


def forensic(*args: str, env_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"FORENSIC_STATE_DIR": str(env_dir), "PATH": "/usr/bin:/bin", "HOME": str(env_dir)},
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    f = tmp_path / "token"
    f.write_text(TOKEN + "\n")
    f.chmod(0o600)  # the agent refuses a token file others can read
    return f


@pytest.mark.parametrize(
    "args, message",
    [
        (["--token-file", "/nonexistent/token"], "cannot read"),
        (["--token-file", "{weak}"], "at least 16 characters"),
        (["--token-file", "{token}", "--listen", "nowhere"], "expected HOST:PORT"),
        (["--token-file", "{token}", "--replay", "{bundle}"], "--replay needs --host"),
        (["--token-file", "{token}", "--replay", "{bundle}", "--host", "no-such-host"], "no node data"),
        (["--token-file", "{token}", "--replay", "/nonexistent", "--host", "h"], "not a folder"),
        (
            [
                "--token-file",
                "{token}",
                "--listen",
                "127.0.0.1:0",
                "--tls-cert",
                "/nonexistent.pem",
                "--tls-key",
                "/x",
            ],
            "no such file",
        ),
    ],
)
def test_bad_agent_input_is_one_line_and_exit_2(
    args, message, make_bundle, token_file: Path, tmp_path: Path
) -> None:
    weak = tmp_path / "weak"
    weak.write_text("abc")
    weak.chmod(0o600)
    fill = {
        "{weak}": str(weak),
        "{token}": str(token_file),
        "{bundle}": str(make_bundle()) if "{bundle}" in args else "",
    }
    out = forensic("agent", *[fill.get(a, a) for a in args], env_dir=tmp_path)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_started_replay_agent_serves_its_host(make_bundle, token_file: Path, tmp_path: Path) -> None:
    bundle = make_bundle("pcie_downtrain")
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "agent",
            "--replay",
            str(bundle),
            "--host",
            HOSTS[1],
            "--listen",
            f"127.0.0.1:{port}",
            "--token-file",
            str(token_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        remote = RemoteHost(url, TOKEN)
        assert remote.name == HOSTS[1]
        assert remote.read("/sys/bus/pci/devices/0000:5d:00.0/current_link_width").strip() == "16"
        assert [d["nvmlDeviceGetCurrPcieLinkWidth"] for d in remote.nvml()["devices"]] == [16, 16, 8, 16]
        assert httpx.post(f"{url}/v1/read", json={"path": "/sys"}).status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=20)
