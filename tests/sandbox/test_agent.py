"""The node agent and RemoteHost: the same Host seam over HTTP, and nothing more.

Real uvicorn servers on 127.0.0.1 (free ports, stopped by each test); an audit hook proves that
hostile requests open nothing outside what the served host may read and start no process.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from forensic.harness.node_agent import AgentServer
from forensic.sandbox import (
    Bundle,
    Host,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
    RemoteHost,
    RemoteHostError,
    ToolArgumentError,
)
from forensic.sandbox.agent import (
    Agent,
    AgentConfigError,
    AgentLimits,
    live_agent,
    read_token_file,
    replay_agent,
)

from tests.conftest import HOSTS, build_bundle

TOKEN = "t0ken-for-tests-0123456789abcdef"
HOST = HOSTS[0]


# -- watching the process -------------------------------------------------------------------------
_WATCH: dict[str, list[tuple[str, str]]] = {}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    events = _WATCH.get("events")
    if events is None:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        p = args[0]
        events.append(("open", os.fsdecode(p) if not isinstance(p, int) else str(p)))
    elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"):
        events.append((event, repr(args)[:200]))


sys.addaudithook(_audit)


class Watch:
    def __enter__(self) -> list[tuple[str, str]]:
        _WATCH["events"] = []
        return _WATCH["events"]

    def __exit__(self, *exc: Any) -> None:
        _WATCH.pop("events", None)


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    root = build_bundle(tmp_path / "case" / "bundle", "pcie_downtrain")
    (tmp_path / "case" / "truth.json").write_text('{"root_cause": "SECRET"}')
    (tmp_path / "secret.txt").write_text("SECRET")
    node = root / "nodes" / HOST
    (node / "sys" / "evil").symlink_to(tmp_path / "secret.txt")
    (node / "sys" / "evil_dir").symlink_to(tmp_path / "case")
    (node / "before" / "sys" / "class" / "net" / "ibp1s0").mkdir(parents=True)
    (node / "before" / "sys" / "class" / "net" / "ibp1s0" / "carrier_changes").write_text("3\n")
    (node / "cmd" / "ethtool-S-ibp1s0.txt").write_text("NIC statistics:\n     rx_prio3_pause: 5\n")
    (node / "cmd" / "big.txt").write_text("x")
    return root


@pytest.fixture
def replay_server(bundle: Path):
    with AgentServer(replay_agent(bundle, HOST, TOKEN)) as srv:
        yield srv


def raw(
    srv: AgentServer, op: str, body: Any = None, *, token: str | None = TOKEN, **kw: Any
) -> httpx.Response:
    headers: dict[str, Any] = {"Authorization": f"Bearer {token}".encode()} if token is not None else {}
    headers.update(kw.pop("headers", {}))
    if op == "info":
        return httpx.get(f"{srv.url}/v1/info", headers=headers, timeout=10)
    return httpx.post(f"{srv.url}/v1/{op}", json=body, headers=headers, timeout=10, **kw)


# -- the seam -------------------------------------------------------------------------------------
def test_a_remote_host_answers_exactly_what_the_local_host_answers(
    bundle: Path, replay_server: AgentServer
) -> None:
    local = Bundle(bundle).host(HOST)
    remote = RemoteHost(replay_server.url, TOKEN)
    assert isinstance(remote, Host) and remote.name == HOST
    dev = "/sys/bus/pci/devices/0000:18:00.0"
    assert remote.read(f"{dev}/current_link_width") == local.read(f"{dev}/current_link_width")
    assert remote.list(dev) == local.list(dev) and "max_link_width" in remote.list(dev)
    assert remote.list("/sys/nope") == [] and remote.exists(dev) and not remote.exists("/sys/nope")
    assert remote.run(["dmesg"]) == local.run(["dmesg"])
    assert remote.run(["ethtool", "-S", "ibp1s0"]).startswith("NIC statistics:")
    assert remote.nvml() == local.nvml()
    assert remote.has_command(["dmesg"]) and not remote.has_command(["ibstat"])
    with pytest.raises(NotFoundError):
        remote.read("/sys/nope")
    with pytest.raises(NotFoundError):
        remote.run(["ibstat"])
    before = RemoteHost(replay_server.url, TOKEN, snapshot="before")
    assert before.read("/sys/class/net/ibp1s0/carrier_changes") == "3\n"
    assert before.nvml() is None


def test_a_live_agent_serves_this_machine_and_has_no_history() -> None:
    with AgentServer(live_agent(TOKEN, name="this-node")) as srv:
        remote = RemoteHost(srv.url, TOKEN)
        assert remote.name == "this-node"
        if os.path.isdir("/sys/class/net"):
            assert "lo" in remote.list("/sys/class/net")
        with pytest.raises(NotFoundError, match="no 'before' snapshot"):
            RemoteHost(srv.url, TOKEN, name="this-node", snapshot="before").list("/sys")
        assert remote.has_command(["dmesg"]) == (
            shutil.which("dmesg", path="/usr/sbin:/usr/bin:/sbin:/bin") is not None
        )


# -- authentication -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "token", [None, "x", "wrong-token-0123456789abcdef", TOKEN[:-1], TOKEN + "x", "t\u00f6ken"]
)
def test_no_token_or_a_wrong_token_gets_401_and_reads_nothing(
    replay_server: AgentServer, token: str | None
) -> None:
    with Watch() as events:
        r = raw(
            replay_server,
            "read",
            {"path": "/sys/bus/pci/devices/0000:18:00.0/current_link_width"},
            token=token,
        )
        r2 = raw(replay_server, "info", token=token)
        r3 = raw(replay_server, "nope", {}, token=token)
    assert r.status_code == r2.status_code == r3.status_code == 401
    assert r.json()["error"]["type"] == "Unauthorized" and "16" not in r.text
    assert r.headers["www-authenticate"] == "Bearer"
    assert not [e for e in events if e[0] == "open" and "/nodes/" in e[1]]


def test_a_wrong_scheme_is_refused_and_health_needs_no_token(replay_server: AgentServer) -> None:
    r = httpx.post(f"{replay_server.url}/v1/info", headers={"Authorization": f"Basic {TOKEN}"})
    assert r.status_code == 401
    assert httpx.get(f"{replay_server.url}/v1/health").json() == {"ok": True}


def test_remote_host_with_a_wrong_token_is_a_remote_host_error(replay_server: AgentServer) -> None:
    with pytest.raises(RemoteHostError, match="401"):
        RemoteHost(replay_server.url, "wrong-token-0123456789abcdef")


# -- confinement ----------------------------------------------------------------------------------
ESCAPES = [
    "../../truth.json",
    "/sys/../../../truth.json",
    "/sys/bus/../../../../secret.txt",
    "sys/\x00/x",
    "/sys/evil",
    "/sys/evil_dir/truth.json",
    "..",
    "/sys/" + "../" * 40 + "etc/passwd",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_replay_paths_that_escape_are_refused_and_nothing_outside_is_opened(
    bundle: Path, replay_server: AgentServer, path: str
) -> None:
    remote = RemoteHost(replay_server.url, TOKEN)
    remote.read("/sys/bus/pci/devices/0000:18:00.0/max_link_width")  # warm: imports done before watching
    with Watch() as events:
        r = raw(replay_server, "read", {"path": path})
        with pytest.raises(PathEscapeError):
            remote.read(path)
        with pytest.raises(PathEscapeError):
            remote.list(path)
        assert remote.exists(path) is False
        remote.read("/sys/bus/pci/devices/0000:18:00.0/max_link_width")  # the watch does see reads
    assert r.status_code == 403 and r.json()["error"]["type"] == "PathEscapeError"
    # The sandbox walks paths openat-style, one component at a time relative to its parent's
    # descriptor, so the audit hook sees names as well as whole paths: judge both.
    opened = [p for kind, p in events if kind == "open"]
    assert [p for p in opened if p.endswith("max_link_width")]
    # Whole paths: the bundle root (the descriptor the walk starts from) and below, never above.
    assert not [p for p in opened if str(bundle.parent) in p and not p.startswith(str(bundle.resolve()))], (
        opened
    )
    assert not [p for p in opened if os.path.basename(p) in ("truth.json", "secret.txt", "passwd")], opened
    assert not [p for p in opened if p.startswith("/etc")]
    assert "SECRET" not in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/etc/shadow",
        "/proc/self/environ",
        "/sys/../etc/passwd",
        "/proc/pressure/../self/environ",
        "/sys/class\x00/../../etc/passwd",
        "/root/.ssh/id_rsa",
    ],
)
def test_live_paths_off_the_allowlist_are_refused_and_never_opened(path: str) -> None:
    with AgentServer(live_agent(TOKEN, name="n")) as srv:
        remote = RemoteHost(srv.url, TOKEN)
        remote.list("/sys")
        with Watch() as events:
            r = raw(srv, "read", {"path": path})
            with pytest.raises(PathEscapeError):
                remote.read(path)
    assert r.status_code == 403
    opened = [p for kind, p in events if kind == "open"]
    assert not [p for p in opened if p.startswith(("/etc", "/proc/self", "/root"))], opened


INJECTIONS = [
    ["ethtool", "-S", "eth0; reboot"],
    ["ethtool", "-S", "../../etc/passwd"],
    ["ethtool", "-S", ".."],
    ["ethtool", "-S", "e" * 300],
    ["ethtool", "-S", "eth0", "extra"],
    ["ethtool", "-S", "$(reboot)"],
    ["ethtool", "-S", "-s eth0 speed 10"],
    ["sh", "-c", "id"],
    ["nvidia-smi", "-r"],
    ["dmesg", "-C"],
    ["rm", "-rf", "/"],
    ["cat", "/etc/shadow"],
    ["dmesg\x00", "-C"],
    ["x"] * 50,
]


@pytest.mark.parametrize("argv", INJECTIONS)
def test_argv_off_the_allowlist_is_refused_and_nothing_starts(argv: list[str]) -> None:
    with AgentServer(live_agent(TOKEN, name="n")) as srv:
        remote = RemoteHost(srv.url, TOKEN)
        remote.list("/sys")
        with Watch() as events:
            r = raw(srv, "run", {"argv": argv})
            with pytest.raises(NotAllowedError):
                remote.run(argv)
            with pytest.raises(NotAllowedError):
                remote.has_command(argv)
    assert r.status_code == 403 and r.json()["error"]["type"] == "NotAllowedError"
    assert not [e for e in events if e[0] != "open"], events


@pytest.mark.parametrize(
    "body",
    [
        {"argv": "dmesg"},
        {"argv": []},
        {"argv": [1, 2]},
        {"path": 7},
        {"path": ""},
        {"path": "/sys", "snapshot": "yesterday"},
    ],
)
def test_malformed_requests_are_typed_422(replay_server: AgentServer, body: dict[str, Any]) -> None:
    op = "run" if "argv" in body else "read"
    r = raw(replay_server, op, body)
    assert r.status_code == 422 and r.json()["error"]["type"] == "ToolArgumentError"


def test_bodies_that_are_not_json_objects_are_422(replay_server: AgentServer) -> None:
    for content in (b"not json", b"[1,2]", b"\xff\xfe"):
        r = httpx.post(
            f"{replay_server.url}/v1/read", content=content, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert r.status_code == 422


def test_unknown_operations_are_404(replay_server: AgentServer) -> None:
    assert raw(replay_server, "write", {"path": "/sys/x", "data": "1"}).status_code == 404
    assert (
        httpx.put(f"{replay_server.url}/v1/read", headers={"Authorization": f"Bearer {TOKEN}"}).status_code
        == 404
    )


# -- sizes and slow clients -----------------------------------------------------------------------
def test_an_oversized_request_is_413_before_it_is_read(replay_server: AgentServer) -> None:
    r = raw(replay_server, "read", {"path": "/sys/" + "a" * 40_000})
    assert r.status_code == 413 and r.json()["error"]["type"] == "RequestTooLarge"
    r = raw(replay_server, "read", {"path": "/sys/" + "a" * 2000})  # fits the body cap, not the path cap
    assert r.status_code == 422


def test_an_oversized_chunked_request_is_413(replay_server: AgentServer) -> None:
    def chunks():
        for _ in range(40):
            yield b" " * 1024

    r = httpx.post(
        f"{replay_server.url}/v1/read", content=chunks(), headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert r.status_code == 413


def test_a_large_output_is_cut_at_the_agent_cap_and_says_so(bundle: Path) -> None:
    (bundle / "nodes" / HOST / "cmd" / "dmesg.txt").write_text("line\n" * 10_000)
    agent = replay_agent(bundle, HOST, TOKEN, limits=AgentLimits(max_response_text=1000))
    with AgentServer(agent) as srv:
        body = raw(srv, "run", {"argv": ["dmesg"]}).json()
        assert body["truncated"] is True and len(body["text"]) == 1000
        assert len(RemoteHost(srv.url, TOKEN).run(["dmesg"])) == 1000


def test_an_answer_past_the_client_cap_is_a_remote_host_error(
    bundle: Path, replay_server: AgentServer
) -> None:
    (bundle / "nodes" / HOST / "cmd" / "dmesg.txt").write_text("line\n" * 10_000)
    remote = RemoteHost(replay_server.url, TOKEN, max_response_bytes=4096)
    with pytest.raises(RemoteHostError, match="larger than 4096"):
        remote.run(["dmesg"])


def test_a_slow_client_is_cut_off_with_408(bundle: Path) -> None:
    agent = replay_agent(bundle, HOST, TOKEN, limits=AgentLimits(body_timeout_s=0.3))
    with AgentServer(agent) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(
                b"POST /v1/read HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + TOKEN.encode() + b'\r\nContent-Length: 100\r\n\r\n{"pa'
            )
            reply = s.recv(4096).decode()
        assert reply.startswith("HTTP/1.1 408")
        # and the agent still serves everyone else
        assert RemoteHost(srv.url, TOKEN).name == HOST


def test_a_client_over_its_rate_gets_429_with_retry_after(bundle: Path) -> None:
    agent = replay_agent(bundle, HOST, TOKEN, limits=AgentLimits(rate_per_s=0.01, rate_burst=3))
    with AgentServer(agent) as srv:
        codes = [raw(srv, "info").status_code for _ in range(3)]
        r = raw(srv, "info")
        assert codes == [200, 200, 200] and r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        slept: list[float] = []
        with pytest.raises(RemoteHostError, match="HTTP 429"):
            RemoteHost(srv.url, TOKEN, name=HOST, sleep=slept.append).read("/sys/x")
        assert len(slept) == 2 and all(s <= 5.0 for s in slept)
        assert (
            raw(srv, "info", token="guess-0123456789abcdefgh").status_code == 429
        )  # guessing is limited too


# -- faults: down, slow, garbage ------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_agent_that_is_down_is_a_remote_host_error_after_retries() -> None:
    slept: list[float] = []
    with pytest.raises(RemoteHostError, match="unreachable.*after 3 attempts"):
        RemoteHost(f"http://127.0.0.1:{_free_port()}", TOKEN, sleep=slept.append)
    assert len(slept) == 2


class _SlowHost:
    name = "slow"

    def __init__(self) -> None:
        self.release = threading.Event()

    def read(self, path: str) -> str:
        self.release.wait(10)
        return "late"

    def list(self, path: str) -> list[str]:
        return []

    def exists(self, path: str) -> bool:
        return False

    def run(self, argv):  # pragma: no cover - not asked
        return ""

    def nvml(self):
        return None


def test_a_slow_agent_costs_one_timeout_and_no_retry() -> None:
    slow = _SlowHost()
    with AgentServer(Agent({"now": slow}, token=TOKEN, mode="replay")) as srv:
        remote = RemoteHost(srv.url, TOKEN, name="slow", timeout_s=0.3)
        try:
            with pytest.raises(RemoteHostError, match="no answer within 0.3 s"):
                remote.read("/sys/x")
        finally:
            slow.release.set()
        assert remote.list("/sys") == []


def _scripted(*answers: tuple[int, bytes | str]) -> tuple[httpx.MockTransport, list[str]]:
    seen: list[str] = []
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        status, body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(status, content=body.encode() if isinstance(body, str) else body)

    return httpx.MockTransport(handler), seen


@pytest.mark.parametrize(
    "body",
    ["<html>oops</html>", "[1]", '{"text": 5}', '{"entries": "a"}', "", '{"nvml": 3}', '{"exists": "yes"}'],
)
def test_garbage_from_an_agent_is_a_remote_host_error(body: str) -> None:
    transport, _ = _scripted((200, body))
    remote = RemoteHost("http://agent", TOKEN, name="h", transport=transport)
    calls = {
        "[1]": remote.read,
        '{"text": 5}': remote.read,
        '{"entries": "a"}': remote.list,
        '{"nvml": 3}': lambda _: remote.nvml(),
        '{"exists": "yes"}': remote.exists,
    }
    with pytest.raises(RemoteHostError, match="garbage"):
        calls.get(body, remote.read)("/sys/x")


def test_5xx_is_retried_then_succeeds_but_4xx_is_not_retried() -> None:
    transport, seen = _scripted((503, "busy"), (502, "busy"), (200, '{"text": "ok", "truncated": false}'))
    slept: list[float] = []
    assert (
        RemoteHost("http://agent", TOKEN, name="h", transport=transport, sleep=slept.append).read("/sys/x")
        == "ok"
    )
    assert len(seen) == 3 and len(slept) == 2
    transport, seen = _scripted((403, json.dumps({"error": {"type": "PathEscapeError", "message": "no"}})))
    with pytest.raises(PathEscapeError):
        RemoteHost("http://agent", TOKEN, name="h", transport=transport, sleep=slept.append).read("/etc/x")
    assert len(seen) == 1


def test_an_unknown_error_type_from_an_agent_is_not_trusted_as_a_class() -> None:
    body = json.dumps({"error": {"type": "SystemExit", "message": "bye"}})
    transport, _ = _scripted((418, body))
    with pytest.raises(RemoteHostError, match="HTTP 418: bye"):
        RemoteHost("http://agent", TOKEN, name="h", transport=transport).read("/sys/x")


def test_typed_errors_cross_the_wire(replay_server: AgentServer) -> None:
    remote = RemoteHost(replay_server.url, TOKEN)
    with pytest.raises(ToolArgumentError):
        remote._call("POST", "read", {"path": ""})


# -- TLS ------------------------------------------------------------------------------------------
def test_tls_serves_https_to_a_client_that_trusts_the_certificate(bundle: Path, tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("openssl is missing in CI")
        pytest.skip("openssl not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    with AgentServer(replay_agent(bundle, HOST, TOKEN), ssl_certfile=str(cert), ssl_keyfile=str(key)) as srv:
        assert srv.url.startswith("https://")
        assert RemoteHost(srv.url, TOKEN, verify=str(cert)).name == HOST
        with pytest.raises(RemoteHostError):
            RemoteHost(srv.url, TOKEN, attempts=1)  # an untrusted certificate is refused, not ignored
        with pytest.raises(RemoteHostError):
            RemoteHost(srv.url.replace("https", "http"), TOKEN, attempts=1)


# -- configuration --------------------------------------------------------------------------------
def test_token_files_must_hold_a_strong_token(tmp_path: Path) -> None:
    f = tmp_path / "token"
    f.write_text(f"  {TOKEN}\n")
    assert read_token_file(f) == TOKEN
    for bad in ("short", "two words here and more", ""):
        f.write_text(bad)
        with pytest.raises(AgentConfigError):
            read_token_file(f)
    with pytest.raises(AgentConfigError, match="cannot read"):
        read_token_file(tmp_path / "missing")
    with pytest.raises(AgentConfigError):
        Agent({"now": None}, token="short", mode="live")
