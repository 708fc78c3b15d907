"""The service under hostile input and hostile timing (issue 25's service items).

- Item 6: a second ``forensic serve`` on one SQLite file is refused (one line, exit 2) before it
  touches state, even when it would then fail to bind; the first keeps its running investigation.
- Item 7: deeply nested JSON, 5,000-digit integers and a huge ``Last-Event-ID`` get a one-line
  400, never a 500; a refused webhook body is kept whole as a dead letter.
- Item 13: dead letters are capped and expire, and the API pages through them (limit, cursor).
- Item 14: a token revoked or replaced in its file stops (or starts) working without a restart.
- Item 15: no page loads an external asset (no ``/docs``); an investigation with more alerts than
  are listed says its true count and how many are shown.
- Item 16: a late delivery with an older timestamp never moves an alert's state backwards, and
  ``resolved_count`` counts distinct alerts resolved, not flaps; SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.store import SqliteStore
from tests.harness.service.conftest import JOB, TOKENS, Server, auth
from tests.harness.service.conftest import app_client, server  # noqa: F401 - fixtures, used by name
from tests.harness.service.pgcluster import Cluster


# -- item 6: one serve per SQLite file ----------------------------------------------------------
def _serve_again(srv: Server, port: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forensic.harness.cli", "serve", "--config", str(srv.config),
                           "--port", str(port)], capture_output=True, text=True, timeout=120)


def test_item6_second_serve_on_one_sqlite_file_is_refused_and_resets_nothing(server) -> None:
    srv = server(extra="[workers]\ncount = 1\nstep_pause_s = 3.0").start()
    inv = srv.post("/api/v1/alerts", "alertmanager", json=webhook([fault_alert(0, job=JOB)])).json()["opened"][0]
    srv.wait_status(inv, done=("running",))
    db = srv.folder / "serve.sqlite"
    # Same port (it would fail to bind only after its start-up) and another port (it would serve).
    for port in (srv.port, srv.port + 1 if srv.port < 65535 else srv.port - 1):
        res = _serve_again(srv, port)
        assert res.returncode == 2, res.stderr
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
        assert "another forensic serve" in lines[0] and str(db) in lines[0]
    time.sleep(1.5)  # time enough for the first process to re-claim a run the second had reset
    con = sqlite3.connect(db)
    status, runs, owner = con.execute("SELECT status, runs, owner FROM investigations WHERE id=?", (inv,)).fetchone()
    con.close()
    assert runs == 1 and (status != "running" or owner), (status, runs, owner)
    assert srv.get("/healthz").status_code == 200
    # Once the first stops, the file is free again.
    srv.stop()
    again = Server(srv.folder)
    again.config = srv.config
    try:
        proc = subprocess.Popen([sys.executable, "-m", "forensic.harness.cli", "serve", "--config", str(srv.config),
                                 "--port", str(again.port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        again.proc = proc
        from forensic.harness.service.bench import wait_healthy

        wait_healthy(again.port, proc)
    finally:
        again.stop()
