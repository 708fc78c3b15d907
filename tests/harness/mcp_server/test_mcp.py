"""``forensic mcp`` driven by the MCP SDK's own client: in process, over stdio and over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from forensic.harness.budget import Limits
from forensic.harness.mcp_server import MAX_ARGUMENT_BYTES, build_server
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests import cli

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"
TRUTH = json.loads((EXAMPLE / "truth.json").read_text())


def _run(scenario, server: Any) -> Any:
    async def main() -> Any:
        async with Client(server) as client:
            return await scenario(client)

    return anyio.run(main)


async def _exercise(client: Client) -> dict[str, Any]:
    """What every transport must do: list, call three tools, read the evidence back."""
    names = {t.name: t for t in (await client.list_tools()).tools}
    pcie = await client.call_tool("pcie_link", {})
    steps = await client.call_tool("job_steps", {})
    report = (await client.call_tool("investigate", {})).structured_content
    evidence = json.loads((await client.read_resource("forensic://evidence/ev-1")).contents[0].text)
    graph = json.loads((await client.read_resource("forensic://failure-graph")).contents[0].text)
    return {
        "names": names,
        "pcie": pcie.structured_content,
        "steps": steps.structured_content,
        "report": report,
        "evidence": evidence,
        "graph": graph,
    }


def _check_exercise(out: dict[str, Any]) -> None:
    names = out["names"]
    assert {"pcie_link", "job_steps", "investigate", "chat", "metrics"} <= set(names)
    assert "approve" not in " ".join(names) and "reject" not in " ".join(names)
    assert all(t.annotations.read_only_hint and not t.annotations.destructive_hint for t in names.values())
    # The schema a client sees is the tool's own pydantic model.
    assert names["pcie_link"].input_schema["additionalProperties"] is False
    assert out["pcie"]["id"] == "ev-1" and out["pcie"]["status"] == "ok"
    assert out["steps"]["id"] == "ev-2" and out["steps"]["tool"] == "job_steps"
    assert out["evidence"]["tool"] == "pcie_link"
    report = out["report"]
    assert report["verdict"]["root_cause"] == TRUTH["root_cause"]
    assert report["verdict"]["component"] == TRUTH["component"]
    cited = {e for f in report["findings"] for e in f["evidence"]}
    assert cited and cited <= {e["id"] for e in report["evidence"]}
    assert all(p["status"] != "approved" for p in report["proposals"])
    assert TRUTH["root_cause"] in out["graph"]["root_causes"]


def test_in_process_tools_investigate_and_resources() -> None:
    _check_exercise(_run(_exercise, build_server(EXAMPLE)))


@pytest.mark.parametrize(
    ("name", "args", "fragment"),
    [
        ("no_such_tool", {}, "no tool named"),
        ("pcie_link", {"host": "../../etc"}, "host"),
        ("pcie_link", {"host": "/etc/passwd"}, "host"),
        ("kernel_log", {"host": "gpu-e126", "path": "../../truth.json"}, "path"),
        ("pcie_link", {"host": "h" * (MAX_ARGUMENT_BYTES + 10)}, "bytes"),
        ("investigate", {"tool_calls": -1}, "tool_calls"),
        ("investigate", {"approve": "rp-1"}, "unknown arguments"),
    ],
)
def test_hostile_calls_get_mcp_errors(name: str, args: dict, fragment: str) -> None:
    async def scenario(client: Client) -> tuple[str, int]:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(name, args)
        # The server is still there after the error.
        ok = await client.call_tool("job_steps", {})
        return caught.value.message, ok.structured_content["status"]

    message, status = _run(scenario, build_server(EXAMPLE))
    assert fragment in message
    assert status == "ok"


def test_unknown_and_escaping_resources_are_errors() -> None:
    async def scenario(client: Client) -> list[str]:
        out = []
        for uri in (
            "forensic://evidence/ev-9",
            "forensic://evidence/../../truth.json",
            "file:///etc/passwd",
            "forensic://investigations/inv-1",
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            out.append(caught.value.message)
        return out

    messages = _run(scenario, build_server(EXAMPLE))
    assert all("no evidence" in m or "unknown resource" in m or "no investigation" in m for m in messages)
    assert not any("root:" in m for m in messages)


def test_budget_is_per_session_and_exhaustion_is_an_error() -> None:
    async def scenario(client: Client) -> tuple[list[str], str, dict]:
        done = [(await client.call_tool("job_steps", {})).structured_content["id"] for _ in range(2)]
        with pytest.raises(MCPError) as caught:
            await client.call_tool("pcie_link", {})
        with pytest.raises(MCPError):
            await client.call_tool("investigate", {})
        budget = json.loads((await client.read_resource("forensic://budget")).contents[0].text)
        return done, caught.value.message, budget

    done, message, budget = _run(scenario, build_server(EXAMPLE, Limits(tool_calls=2)))
    assert done == ["ev-1", "ev-2"]
    assert "budget is spent" in message and "tool_calls" in message
    assert budget["tool_calls"] == 2 and budget["tool_calls_limit"] == 2


def test_investigate_is_charged_to_the_session_budget() -> None:
    async def scenario(client: Client) -> tuple[dict, dict]:
        report = (await client.call_tool("investigate", {"tool_calls": 3})).structured_content
        budget = json.loads((await client.read_resource("forensic://budget")).contents[0].text)
        return report, budget

    report, budget = _run(scenario, build_server(EXAMPLE))
    assert report["budget"]["tool_calls_limit"] <= 3
    assert budget["tool_calls"] == report["budget"]["tool_calls"] > 0


def test_stdio_through_the_sdk_client() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "forensic.harness.cli", "mcp", str(EXAMPLE)],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    _check_exercise(_run(_exercise, params))


@pytest.fixture()
def http_server(tmp_path: Path):
    with cli.mcp_over_http(EXAMPLE, "s3cret-token-0123456789", tmp_path) as url:
        yield url, "s3cret-token-0123456789"


def test_http_through_the_sdk_client(http_server) -> None:
    url, token = http_server
    transport = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)

    async def main() -> dict[str, Any]:
        from mcp.client.streamable_http import streamable_http_client

        async with transport, Client(streamable_http_client(url, http_client=transport)) as client:
            return await _exercise(client)

    _check_exercise(anyio.run(main))


def test_http_refuses_missing_or_wrong_token_and_huge_bodies(http_server) -> None:
    url, token = http_server
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert httpx.post(url, json=hello).status_code == 401
    assert httpx.post(url, json=hello, headers={"Authorization": "Bearer wrong"}).status_code == 401
    huge = httpx.post(
        url,
        content=b"x" * (1 << 20),
        headers={"Authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    assert huge.status_code == 413


def test_cli_refuses_bad_setups(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(cli.forensic_argv("mcp", *args), capture_output=True, text=True, timeout=60)

    assert run(str(tmp_path)).returncode == 2
    off_loopback = run(str(EXAMPLE), "--transport", "http", "--listen", "0.0.0.0:9")
    assert off_loopback.returncode == 2 and "token-file" in off_loopback.stderr
    assert run(str(EXAMPLE), "--transport", "carrier-pigeon").returncode == 2
    assert "Traceback" not in off_loopback.stderr


def test_chat_answers_with_citations_and_cannot_approve() -> None:
    async def scenario(client: Client) -> tuple[dict, dict, dict, dict]:
        first = (await client.call_tool("chat", {"question": "why is it slow?"})).structured_content
        nudge = (
            await client.call_tool("chat", {"question": "approve rp-1 now, it is fine"})
        ).structured_content
        follow = (await client.call_tool("chat", {"question": "why not the network?"})).structured_content
        budget = json.loads((await client.read_resource("forensic://budget")).contents[0].text)
        return first, nudge, follow, budget

    first, nudge, follow, budget = _run(scenario, build_server(EXAMPLE))
    assert TRUTH["component"] in first["text"][0] and first["claims"]
    assert all(c["evidence"] for c in first["claims"])
    assert nudge["intent"] in ("help", "todo") and "approved" not in nudge["answer"]
    assert follow["intent"] == "why_not" and follow["new_evidence"]
    assert budget["tool_calls"] >= len(follow["new_evidence"]) > 0


@pytest.mark.parametrize(
    "args", [{}, {"question": ""}, {"question": "x" * 3000}, {"question": "hi", "approve": "rp-1"}]
)
def test_chat_arguments_are_validated(args: dict) -> None:
    async def scenario(client: Client) -> str:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("chat", args)
        return caught.value.message

    assert "chat:" in _run(scenario, build_server(EXAMPLE))


def test_a_live_fleet_is_served_too_and_unreadable_hosts_are_not_health(tmp_path: Path) -> None:
    from forensic.sandbox.fleet import open_fleet

    (tmp_path / "token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://127.0.0.1:9/{host}"\ntoken_file = "token"\nhosts = ["h1", "h2"]\ntimeout_s = 2\n'
    )
    source = open_fleet(tmp_path / "fleet.toml", job="train", since="1h", until=None, title="", ranks=None)

    async def scenario(client: Client) -> dict:
        return (await client.call_tool("investigate", {})).structured_content

    report = _run(scenario, build_server(source))
    assert report["status"] != "healthy"
    assert "h1" in " ".join(report["notes"])
    refused = subprocess.run(
        cli.forensic_argv("mcp", str(EXAMPLE), "--fleet", str(tmp_path / "fleet.toml")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "not both" in refused.stderr
