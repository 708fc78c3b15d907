"""``forensic serve``: the auto-triage service (Alertmanager webhooks in, investigations out)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, app


@app.command()
def serve(
    config: Annotated[Path, typer.Option("--config", "-c", help="serve.toml (see docs/service.md).")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=0, max=65535)] = 8080,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
) -> None:
    """Run the service: intake, investigations, approvals, the page, /metrics."""
    import uvicorn

    from forensic.harness.service import ConfigError, load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.service import Service

    try:
        cfg = load_config(config)
        svc = Service(cfg)
    except ConfigError as exc:
        _fail(2, str(exc))
    uvicorn.run(create_app(svc), host=host, port=port, log_level=log_level, access_log=False,
                timeout_graceful_shutdown=5)
