"""The node agent (``forensic agent``): hostile requests and a start-up that says why.

Item 7 (agent part): deeply nested JSON, 5,000-digit integers and huge request heads get a one-line
  4xx, never a 500 with a traceback; the agent goes on serving.
Item 18: ``X-Forwarded-For`` from loopback does not name the rate-limit bucket (no proxy headers).
Item 19: start-up: a missing ``--token-file`` is named; the real bound port is printed, and only
  after the bind and the TLS files loaded; a taken port or a bad certificate is one line and exit 2
  (not uvicorn's exit 3); a group- or world-readable token file is refused with the ``chmod`` fix.

Real agents: :class:`AgentServer` on 127.0.0.1 for the requests, ``forensic agent`` processes for
the start-up.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from forensic.harness.node_agent import AgentServer
from forensic.sandbox.agent import AgentLimits, replay_agent

from tests.conftest import HOSTS

TOKEN = "adversarial-agent-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def server(make_bundle):
    with AgentServer(replay_agent(make_bundle("pcie_downtrain"), HOSTS[0], TOKEN)) as srv:
        yield srv


# -- item 7: bounded parsing ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"[" * 8000 + b"]" * 8000, "nests"),
        (b'{"path": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nests"),
        (b'{"path": ' + b"9" * 5000 + b"}", "digits"),
        (b'{"path": "/sys", "x": -' + b"9" * 5000 + b"}", "digits"),
    ],
)
def test_hostile_json_is_a_one_line_422_and_the_agent_goes_on(
    server: AgentServer, body: bytes, fragment: str
) -> None:
    r = httpx.post(f"{server.url}/v1/read", content=body, headers=AUTH)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert (
        error["type"] == "ToolArgumentError" and fragment in error["message"] and "\n" not in error["message"]
    )
    assert httpx.get(f"{server.url}/v1/info", headers=AUTH).status_code == 200


@pytest.mark.parametrize("headers", [{"X-Big": "a" * 100_000}, {f"X-H{i}": "a" for i in range(3000)}])
def test_a_huge_request_head_is_refused_before_any_work(server: AgentServer, headers: dict[str, str]) -> None:
    r = httpx.get(f"{server.url}/v1/info", headers={**AUTH, **headers})
    assert r.status_code in (400, 431), r.status_code
    assert len(r.text.strip().splitlines()) <= 1 and "Traceback" not in r.text
    assert httpx.get(f"{server.url}/v1/info", headers=AUTH).status_code == 200


def test_a_head_sent_slowly_is_cut_off_at_the_cap(server: AgentServer) -> None:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /v1/info HTTP/1.1\r\nHost: agent\r\n")
        try:
            for i in range(64):  # 64 x 1 KiB, never the blank line that ends the head
                sock.sendall(b"X-Pad-%d: " % i + b"a" * 1000 + b"\r\n")
                time.sleep(0.005)
        except OSError:
            pass  # the agent may hang up before the client stops sending
        answer = sock.recv(4096)
    assert answer.split(b" ", 2)[1] in (b"400", b"431"), answer[:100]


# -- item 18: no proxy headers ----------------------------------------------------------------------
def test_spoofed_forwarded_for_values_share_one_rate_limit_bucket(make_bundle) -> None:
    agent = replay_agent(
        make_bundle("pcie_downtrain"), HOSTS[0], TOKEN, limits=AgentLimits(rate_per_s=0.01, rate_burst=3)
    )
    with AgentServer(agent) as srv, httpx.Client(base_url=srv.url, headers=AUTH) as client:
        codes = [
            client.get(
                "/v1/info",
                headers={
                    "X-Forwarded-For": f"10.0.0.{i}",
                    "Forwarded": f"for=10.0.1.{i}",
                    "X-Real-IP": f"10.0.2.{i}",
                },
            ).status_code
            for i in range(6)
        ]
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429, 429], codes


# -- item 19: start-up ------------------------------------------------------------------------------
def _forensic(*args: str) -> list[str]:
    return [sys.executable, "-m", "forensic.harness.cli", *args]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FORENSIC_STATE_DIR": str(tmp_path / "state"), "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    f = tmp_path / "token"
    f.write_text(TOKEN + "\n")
    f.chmod(0o600)
    return f


def _refused(tmp_path: Path, *args: str) -> str:
    out = subprocess.run(
        _forensic("agent", *args),
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
    )
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr and "serving" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    return out.stderr


def test_a_missing_token_file_option_is_named(tmp_path: Path) -> None:
    assert re.search(r"[Mm]issing option.*--token-file", _refused(tmp_path, "--listen", "127.0.0.1:0"))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_token_file_others_can_read_is_refused_with_the_fix(
    tmp_path: Path, token_file: Path, mode: int
) -> None:
    token_file.chmod(mode)
    message = _refused(tmp_path, "--token-file", str(token_file), "--listen", "127.0.0.1:0")
    assert f"{mode:04o}" in message and f"chmod 600 {token_file}" in message


def test_a_taken_port_is_one_line_and_exit_2(tmp_path: Path, token_file: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        message = _refused(tmp_path, "--token-file", str(token_file), "--listen", f"127.0.0.1:{port}")
    assert f"127.0.0.1:{port}" in message and "in use" in message


def test_an_unloadable_certificate_is_one_line_and_exit_2(tmp_path: Path, token_file: Path) -> None:
    pem = tmp_path / "garbage.pem"
    pem.write_text("not a certificate\n")
    message = _refused(
        tmp_path,
        "--token-file",
        str(token_file),
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        str(pem),
        "--tls-key",
        str(pem),
    )
    assert "--tls-cert" in message


def test_port_0_prints_the_real_port_after_the_bind_and_it_answers(
    tmp_path: Path, token_file: Path, make_bundle
) -> None:
    proc = subprocess.Popen(
        _forensic(
            "agent",
            "--token-file",
            str(token_file),
            "--listen",
            "127.0.0.1:0",
            "--replay",
            str(make_bundle("pcie_downtrain")),
            "--host",
            HOSTS[0],
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"serving replay host \S+ on http://127\.0\.0\.1:(\d+)$", line.strip())
        assert found, line
        port = int(found.group(1))
        assert port != 0
        # Printed after the bind: the port answers at once, no retry loop needed.
        r = httpx.get(f"http://127.0.0.1:{port}/v1/info", headers=AUTH, timeout=10)
        assert r.status_code == 200 and r.json()["name"] == HOSTS[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
    # uvicorn finishes what is in flight, then ends by the signal's default action (systemd: a clean stop).
    assert rc == -signal.SIGTERM, rc
