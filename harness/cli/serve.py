"""``forensic serve``: the auto-triage service (Alertmanager webhooks in, investigations out)."""

from __future__ import annotations

import signal
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
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="postgresql:// URL: state in PostgreSQL, shared with other "
            "`forensic serve` and `forensic worker` processes (docs/scaling.md).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Investigation threads in this process (default: \\[workers] count); 0 runs the API alone.",
            min=0,
            max=64,
        ),
    ] = None,
) -> None:
    """Run the service: intake, investigations, approvals, the page, /metrics."""
    import uvicorn
    from forensic.harness.service import ConfigError, load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.schema import is_postgres_url
    from forensic.harness.service.service import Service
    from forensic.sandbox import ForensicError

    if db is not None and not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL, not {db[:60]!r} (SQLite is serve.toml's database)")
    try:
        cfg = load_config(config)
        if workers is not None:
            cfg.workers.count = workers
        svc = Service(cfg, db=db)
    except (ConfigError, ForensicError) as exc:
        _fail(2, str(exc))
    # SIGHUP re-reads the token files (they are also re-read when one changes); without this
    # handler it would end the process.
    signal.signal(signal.SIGHUP, lambda *_: svc.tokens.reload_soon())
    # use_colors=False: its colours are escape sequences, which the CLI's output cleaner shows as text.
    uvicorn.run(
        create_app(svc),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
        use_colors=False,
    )
