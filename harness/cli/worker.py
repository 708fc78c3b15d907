"""``forensic worker``: claim and run investigations from a PostgreSQL database shared with ``forensic serve``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, app


@app.command()
def worker(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="serve.toml: budgets, \\[workers] per_job and lease_s.")
    ],
    db: Annotated[
        str, typer.Option("--db", help="postgresql://user@host/dbname shared with `forensic serve --db`.")
    ],
    count: Annotated[
        int | None,
        typer.Option(
            "--count",
            help="Investigations this process runs at once (default: \\[workers] count).",
            min=1,
            max=64,
        ),
    ] = None,
) -> None:
    """Run investigations claimed from PostgreSQL until stopped (SIGTERM): no API, no page."""
    from forensic.harness.service import ConfigError, load_config
    from forensic.harness.service.pgworker import run_worker
    from forensic.harness.service.schema import is_postgres_url
    from forensic.sandbox import ForensicError

    if not is_postgres_url(db):
        _fail(2, f"--db must be a postgresql:// URL, not {db[:60]!r}")
    try:
        cfg = load_config(config)
        run_worker(cfg, db, count=count or cfg.workers.count)
    except (ConfigError, ForensicError) as exc:
        _fail(2, str(exc))
