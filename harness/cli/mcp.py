"""``forensic mcp``: serve one incident's tools and investigations to MCP clients."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from forensic.harness.budget import Limits
from forensic.sandbox import ForensicError

from ._common import _fail, app


@app.command("mcp")
def mcp_command(
    bundle: Annotated[
        Path | None, typer.Argument(help="Incident bundle (folder, archive, or evaluation case).")
    ] = None,
    transport: Annotated[str, typer.Option(help="stdio (the client starts this command) or http.")] = "stdio",
    listen: Annotated[str, typer.Option(help="HOST:PORT for --transport http.")] = "127.0.0.1:8765",
    token_file: Annotated[
        Path | None,
        typer.Option(
            help="File holding a bearer token every HTTP request must carry (required off loopback)."
        ),
    ] = None,
    budget_tool_calls: Annotated[int, typer.Option(help="Tool calls per MCP session.", min=0)] = 40,
    budget_wall_s: Annotated[float, typer.Option(help="Working seconds per MCP session.", min=0.001)] = 300.0,
    fleet: Annotated[
        Path | None, typer.Option(help="Serve a live fleet described by this fleet.toml instead.")
    ] = None,
    job: Annotated[str | None, typer.Option(help="With --fleet: the job.")] = None,
    since: Annotated[str, typer.Option(help="With --fleet: how far back the window starts.")] = "2h",
) -> None:
    """Serve the read-only tools, `investigate` and the evidence over the Model Context Protocol."""
    try:
        from forensic.harness.mcp_server import build_server, serve_http, serve_stdio
    except ModuleNotFoundError as exc:
        _fail(
            2, f"forensic mcp needs the MCP SDK ({exc.name} is missing): pip install 'forensic-harness[mcp]'"
        )
    if transport not in ("stdio", "http"):
        _fail(2, f"--transport {transport!r}: expected stdio or http")
    if (bundle is None) == (fleet is None):
        _fail(2, "give an incident bundle, or --fleet FILE --job NAME (not both)")
    token = None
    host, sep, port = listen.rpartition(":")  # used by --transport http only
    if transport == "http":
        if not sep or not port.isdigit() or not host:
            _fail(2, f"--listen {listen!r}: expected HOST:PORT")
        if token_file is not None:
            from forensic.sandbox.agent import read_token_file

            try:  # the agent's rule: one word of at least 16 characters
                token = read_token_file(token_file)
            except ForensicError as exc:
                _fail(2, str(exc))
        elif host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
            _fail(2, f"--listen {listen}: off loopback a --token-file is required")
    source: object = bundle
    if fleet is not None:
        from ._fleet import open_live

        source = open_live(fleet, job, since, None, "", None)
    try:
        server = build_server(source, Limits(tool_calls=budget_tool_calls, wall_s=budget_wall_s))
    except ForensicError as exc:
        _fail(2, str(exc))
    if transport == "stdio":
        from ._terminal import program_stdout

        with program_stdout():  # JSON-RPC for the client that started us, not text for a person
            serve_stdio(server)
        return
    serve_http(server, host.strip("[]"), int(port), token)
