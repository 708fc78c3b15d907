"""The live event stream wakes when the store says an investigation changed, not on a timer.

The stream's fallback re-check is set to an hour here, so an event reaches the client only if the
wake-up works: in-process on SQLite, and through PostgreSQL's LISTEN/NOTIFY when another process's
store (here a second store object, which has no in-process hook) writes the event.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from forensic.harness.service import load_config
from forensic.harness.service.api import create_app
from forensic.harness.service.bench import fault_alert, webhook, write_config
from forensic.harness.service.routes import investigations
from forensic.harness.service.service import Service
from forensic.harness.service.store import PostgresStore

from .conftest import EXAMPLE, JOB, TOKENS, auth


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_stream_wakes_on_a_change_and_closes_when_the_run_stops(
    kind: str, request, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(investigations, "RECHECK_S", 3600.0)
    url = request.getfixturevalue("pg_cluster").fresh_db("stream") if kind == "postgresql" else None
    # No evidence for the job: the investigation is unmapped and no worker runs it; the test plays the worker.
    cfg = load_config(write_config(tmp_path, port=0, tokens=TOKENS, bundles=[{"path": EXAMPLE, "job": JOB}]))
    svc = Service(cfg, db=url)
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        r = c.post(
            "/api/v1/alerts", json=webhook([fault_alert(1, job="no-evidence")]), headers=auth("alertmanager")
        )
        inv = r.json()["investigations"][0]
        svc.store.set_report(inv, {}, "running")  # as if a worker elsewhere were running it
        writer = PostgresStore(url) if url else svc.store
        lines: list[str] = []

        def read() -> None:
            with c.stream("GET", f"/api/v1/investigations/{inv}/events", headers=auth("vic")) as s:
                lines.extend(s.iter_lines())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 30
        while svc.signals.following() == 0 or not any(line.startswith("event: alert") for line in lines):
            assert time.monotonic() < deadline and reader.is_alive(), lines
            time.sleep(0.05)
        writer.add_event(inv, "late-1", "finding", {"signal": "from elsewhere"})
        writer.set_report(inv, {}, "concluded")
        reader.join(timeout=60)
        assert not reader.is_alive(), lines  # it woke, read the event, saw the stop and closed
        events = [line[7:] for line in lines if line.startswith("event: ")]
        assert events == ["alert", "unmapped", "finding", "close"], lines
        assert 'data: {"status": "concluded"}' in lines
        if url:
            writer.close()
