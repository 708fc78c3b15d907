"""``forensic agent``: serve this node (or one recorded host) read-only over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, app, err


@app.command("agent")
def agent(
    token_file: Annotated[
        Path, typer.Option("--token-file", help="File holding the bearer token clients must send.")
    ],
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "127.0.0.1:9401",
    replay: Annotated[
        Path | None, typer.Option(help="Serve one host of this recorded bundle instead of this machine.")
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(help="With --replay: the host to serve. Live: the name to report (default: hostname)."),
    ] = None,
    tls_cert: Annotated[Path | None, typer.Option("--tls-cert", help="PEM certificate: serve HTTPS.")] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")] = None,
) -> None:
    """Answer read, list, run (allowlisted argv) and NVML requests for one node; never writes.

    Exit codes: 2 when it cannot start (one line on stderr says why: the token file, the address,
    the TLS files, the bind); otherwise it serves until SIGINT (exit 130) or SIGTERM (ends by the
    signal, after the requests in flight).
    """
    from forensic.harness.node_agent import check_tls, serve
    from forensic.sandbox import ForensicError
    from forensic.sandbox.agent import live_agent, parse_listen, read_token_file, replay_agent

    cert, key = (str(tls_cert) if tls_cert else None), (str(tls_key) if tls_key else None)
    try:
        token = read_token_file(token_file, private=True)
        parse_listen(listen)
        check_tls(cert, key)
        if replay is not None:
            if not host:
                _fail(2, "--replay needs --host NAME (the recorded host to serve)")
            served = replay_agent(replay, host, token)
        else:
            served = live_agent(token, name=host)
        # Said once the port is bound and the TLS files loaded: "serving" is then true.
        serve(
            served,
            listen,
            ssl_certfile=cert,
            ssl_keyfile=key,
            on_ready=lambda url: err.print(
                f"forensic agent: serving {served.mode} host {served.name} on {url}",
                soft_wrap=True,
                markup=False,
                highlight=False,
            ),
        )
    except ForensicError as exc:
        _fail(2, str(exc))
    except OSError as exc:
        _fail(2, f"cannot serve on {listen}: {exc.strerror or exc}")
