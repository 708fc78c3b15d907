"""``forensic mcp --transport http``: one session per client, and a real token.

Item 5: two HTTP clients of one server each get their own session (budget, evidence ledger,
  reports): one's tool calls never appear in the other's ledger or budget; sessions are bounded in
  number and expire when idle.
Item 20: the HTTP token must be one word of at least 16 characters, like the agent's and the
  service's; a 1-character token is refused at start, in one line, exit 2.

A real ``forensic mcp`` process on loopback, driven by the MCP SDK's own client.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx
import pytest
from forensic.harness.budget import Limits
from forensic.harness.mcp_server import server as mcp_server
from forensic.harness.service.bench import free_port
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"
TOKEN = "mcp-http-token-0123456789abcdef"


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with cli.mcp_over_http(EXAMPLE, TOKEN, tmp_path) as u:
        yield u


def _budget(raw: Any) -> dict[str, Any]:
    return json.loads(raw.contents[0].text)


# -- item 5 -----------------------------------------------------------------------------------------
def test_two_http_clients_do_not_share_a_ledger_or_a_budget(url: str) -> None:
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> dict[str, Any]:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx.AsyncClient(headers=auth, timeout=60) as ha,
            httpx.AsyncClient(headers=auth, timeout=60) as hb,
            Client(streamable_http_client(url, http_client=ha)) as a,
            Client(streamable_http_client(url, http_client=hb)) as b,
        ):
            a1 = (await a.call_tool("job_steps", {})).structured_content
            a2 = (await a.call_tool("job_steps", {})).structured_content
            b1 = (await b.call_tool("pcie_link", {})).structured_content
            with pytest.raises(MCPError) as not_b:
                await b.read_resource("forensic://evidence/ev-2")  # a's second call
            a_ev1 = json.loads((await a.read_resource("forensic://evidence/ev-1")).contents[0].text)
            return {
                "ids": [a1["id"], a2["id"], b1["id"]],
                "not_b": not_b.value.message,
                "a_ev1": a_ev1["tool"],
                "a": _budget(await a.read_resource("forensic://budget")),
                "b": _budget(await b.read_resource("forensic://budget")),
                "b_resources": [r.name for r in (await b.list_resources()).resources],
            }

    out = anyio.run(main)
    assert out["ids"] == ["ev-1", "ev-2", "ev-1"]
    assert "no evidence" in out["not_b"] and out["a_ev1"] == "job_steps"
    assert out["a"]["tool_calls"] == 2 and out["b"]["tool_calls"] == 1
    assert [n for n in out["b_resources"] if n.startswith("ev-")] == ["ev-1"]


def test_a_sessionless_request_is_told_which_versions_are_served(url: str) -> None:
    # The 2026-07-28 revision has no sessions: serving it would put every such client in one.
    r = httpx.post(
        url,
        headers={
            "Authorization": f"Bearer {TOKEN}",
            "MCP-Protocol-Version": "2026-07-28",
            "Accept": "application/json, text/event-stream",
        },
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "job_steps", "arguments": {}},
        },
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert (
        error["code"] == -32022
        and "2026-07-28" not in error["data"]["supported"]
        and error["data"]["supported"]
    )


def test_open_sessions_are_bounded(url: str) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=30) as client:
        ids = [
            client.post(url, json=hello).headers.get("mcp-session-id") for _ in range(mcp_server.MAX_SESSIONS)
        ]
        one_more = client.post(url, json=hello)
    assert all(ids) and len(set(ids)) == mcp_server.MAX_SESSIONS
    assert one_more.status_code == 503 and "mcp-session-id" not in one_more.headers


class _Ctx(SimpleNamespace):
    """What the SDK hands a handler, reduced to the part sessions are keyed on."""


def _ctx(session_id: str | None) -> _Ctx:
    return _Ctx(request=SimpleNamespace(headers={"mcp-session-id": session_id} if session_id else {}))


def test_sessions_are_bounded_and_expire_when_idle() -> None:
    now = [0.0]
    sessions = mcp_server._Sessions(
        EXAMPLE, Limits(wall_s=10), max_sessions=2, idle_s=60.0, clock=lambda: now[0]
    )
    first = sessions.get(_ctx("s1"))
    assert sessions.get(_ctx("s1")) is first and sessions.get(_ctx("s2")) is not first
    now[0] = 30.0
    sessions.get(_ctx("s1"))  # used again: s2 is now the least recently used
    sessions.get(_ctx("s3"))
    assert sessions.get(_ctx("s1")) is first and len(sessions) == 2
    now[0] = 100.0  # s1 and s3 unused for 70 s: the transport's 60 s plus the 10 s one call may run
    assert sessions.get(_ctx("s1")) is first
    now[0] = 170.5
    fresh = sessions.get(_ctx("s1"))
    assert fresh is not first and len(sessions) == 1


def test_an_http_request_without_a_session_id_gets_no_shared_session() -> None:
    sessions = mcp_server._Sessions(EXAMPLE, Limits())
    with pytest.raises(MCPError, match="Mcp-Session-Id"):
        sessions.get(_ctx(None))
    assert sessions.get(SimpleNamespace(request=None)) is sessions.get(
        SimpleNamespace(request=None)
    )  # stdio: one


# -- item 20 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["x", "fifteen-chars-1", "two words but long enough"])
def test_a_weak_http_token_is_refused_at_start(tmp_path: Path, token: str) -> None:
    f = tmp_path / "token"
    f.write_text(token + "\n")
    out = subprocess.run(
        cli.mcp_http_argv(EXAMPLE, free_port(), f),
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2, out.stderr
    assert "at least 16 characters" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
