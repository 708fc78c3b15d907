"""``forensic serve``: the auto-triage service (Alertmanager webhooks in, investigations out)."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from forensic.sandbox import ForensicError
from rich.text import Text

from ._common import _fail, app, require_extra


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
    require_extra("serve", "forensic serve", "fastapi", "prometheus_client")
    import uvicorn
    from forensic.harness.service import ConfigError, load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.schema import is_postgres_url
    from forensic.harness.service.service import Service

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
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(svc),
            host=host,
            port=port,
            log_level=log_level,
            access_log=False,
            timeout_graceful_shutdown=5,
            use_colors=False,
        )
    )
    threading.Thread(target=_announce, args=(server, cfg, db, host, port, config), daemon=True).start()
    server.run()


def _announce(server: Any, cfg: Any, db: str | None, host: str, port: int, config: Path) -> None:
    """Once the socket listens (not before: a port in use would make it a lie), say where and what."""
    while not server.started:
        if server.should_exit:
            return
        time.sleep(0.05)
    try:
        port = server.servers[0].sockets[0].getsockname()[1]  # the port the OS chose for --port 0
    except (AttributeError, IndexError, OSError):
        pass
    from ._terminal import console

    con = console(highlight=False)
    for line in describe(cfg, db, host, port, config):
        con.print(Text(line), soft_wrap=True)  # one line each, whatever the width


def _redacted(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def describe(cfg: Any, db: str | None, host: str, port: int, config: Path) -> list[str]:
    """What ``forensic serve`` serves, in a few lines: where it listens, its state, its evidence
    (bundles, the live fleet), its executors, who may do what, and where notifications go."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    lines = [
        f"forensic serve ({config}): listening on {url}",
        f"  page {url}/ · API {url}/api/v1 (OpenAPI at /openapi.json) · webhook POST {url}/api/v1/alerts"
        " · /metrics · /healthz",
        "  state: " + (f"PostgreSQL {_redacted(db)}" if db else f"SQLite {cfg.database}"),
    ]
    bundles = cfg.evidence.bundles
    for b in bundles:
        scope = [f"job {b.job}"] if b.job else []
        scope += [f"hosts {', '.join(b.hosts[:4])}{' …' if len(b.hosts) > 4 else ''}"] if b.hosts else []
        lines.append(f"  bundle: {b.path}" + (f" (for {'; '.join(scope)})" if scope else " (every alert)"))
    if cfg.fleet is not None:
        lines.append(
            f"  fleet: {cfg.fleet.file}, live triage of alerts no bundle matches "
            f"(looking back {cfg.fleet.lookback_s:g} s)"
        )
    elif not bundles:
        lines.append("  evidence: none")
    else:
        lines.append("  fleet: none (alerts no bundle matches are kept, not investigated)")
    if cfg.executors is not None:
        try:
            from forensic.harness.executors import build_executors, load_config

            names = ", ".join(build_executors(load_config(cfg.executors))) or "none enabled"
        except ForensicError as exc:
            names = f"not usable: {exc}"
        lines.append(f"  executors: {cfg.executors} ({names}); approvers may Execute and Undo")
    else:
        lines.append("  executors: none (approved proposals are carried out by hand)")
    roles: dict[str, list[str]] = {}
    for u in cfg.users:
        roles.setdefault(u.role, []).append(u.name)
    lines.append(
        "  auth: bearer tokens from token files; "
        + "; ".join(f"{r}: {', '.join(names)}" for r, names in roles.items())
    )
    lines.append(
        f"  workers: {cfg.workers.count} (at most {cfg.workers.per_job} per job)"
        + (f" · notify: {len(cfg.notify.slack_webhooks)} webhook(s)" if cfg.notify.slack_webhooks else "")
    )
    return lines
