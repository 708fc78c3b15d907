"""The service under hostile input and hostile timing.

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
# ruff: noqa: F811 - the service's fixtures (app_client, server) are imported, then named as parameters

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from forensic.harness.service.bench import fault_alert, webhook
from forensic.harness.service.intake import parse_payload
from forensic.harness.service.store import SqliteStore

from tests.harness.service.conftest import JOB, TOKENS, Server, app_client, auth, server  # noqa: F401 - fixtures, used by name


# -- both stores --------------------------------------------------------------------------------
@pytest.fixture
def cluster(pg_cluster):
    return pg_cluster


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path: Path):
    if request.param == "sqlite":
        s: Any = SqliteStore(tmp_path / "s.sqlite")
    else:
        from forensic.harness.service.store import PostgresStore

        s = PostgresStore(
            request.getfixturevalue("cluster").fresh_db(f"item16_{os.getpid()}_{time.monotonic_ns()}")
        )
    yield s
    s.close()


# -- item 6: one serve per SQLite file ----------------------------------------------------------
def _serve_again(srv: Server, port: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "serve",
            "--config",
            str(srv.config),
            "--port",
            str(port),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_item6_second_serve_on_one_sqlite_file_is_refused_and_resets_nothing(server) -> None:
    srv = server(extra="[workers]\ncount = 1\nstep_pause_s = 3.0").start()
    inv = srv.post("/api/v1/alerts", "alertmanager", json=webhook([fault_alert(0, job=JOB)])).json()[
        "opened"
    ][0]
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
    status, runs, owner = con.execute(
        "SELECT status, runs, owner FROM investigations WHERE id=?", (inv,)
    ).fetchone()
    con.close()
    assert runs == 1 and (status != "running" or owner), (status, runs, owner)
    assert srv.get("/healthz").status_code == 200
    # Once the first stops, the file is free again.
    srv.stop()
    again = Server(srv.folder)
    again.config = srv.config
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "forensic.harness.cli",
                "serve",
                "--config",
                str(srv.config),
                "--port",
                str(again.port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        again.proc = proc
        from forensic.harness.service.bench import wait_healthy

        wait_healthy(again.port, proc)
    finally:
        again.stop()


# -- item 7: parse with limits ------------------------------------------------------------------
HOSTILE_BODIES = {
    "nested 100,000 deep": b'{"version": "4", "alerts": [], "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "nested 200 deep": b'{"version": "4", "alerts": [], "x": ' + b"[" * 200 + b"]" * 200 + b"}",
    "5,000-digit integer": b'{"version": "4", "truncatedAlerts": ' + b"9" * 5000 + b', "alerts": []}',
    "300-digit integer": b'{"version": "4", "truncatedAlerts": ' + b"9" * 300 + b', "alerts": []}',
    "5,000-digit integer in an alert": json.dumps(webhook([fault_alert(0, job=JOB)]))
    .replace('"status": "firing"', '"n": ' + "1" * 5000 + ', "status": "firing"', 1)
    .encode(),
}


@pytest.mark.parametrize("name", list(HOSTILE_BODIES))
def test_item7_hostile_json_is_a_one_line_400_and_a_dead_letter(app_client, name: str) -> None:
    c, _ = app_client()
    body = HOSTILE_BODIES[name]
    r = c.post(
        "/api/v1/alerts", content=body, headers={**auth("alertmanager"), "Content-Type": "application/json"}
    )
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "\n" not in detail and len(detail) < 300 and ("deep" in detail or "digits" in detail), detail
    dl = c.get("/api/v1/dead-letters", headers=auth("root")).json()["dead_letters"]
    assert len(dl) == 1 and dl[0]["status"] == 400 and dl[0]["bytes"] == len(body)
    # The service is fine afterwards.
    assert (
        c.post(
            "/api/v1/alerts", json=webhook([fault_alert(1, job=JOB)]), headers=auth("alertmanager")
        ).status_code
        == 202
    )


def test_item7_parse_payload_refuses_with_intake_errors_only() -> None:
    from forensic.harness.service.intake import IntakeError

    for body in HOSTILE_BODIES.values():
        with pytest.raises(IntakeError):
            parse_payload(body, ["training_job"])
    # Ordinary numbers still parse.
    ok = webhook([fault_alert(0, job=JOB)])
    ok["truncatedAlerts"] = 12345678901234567890
    parse_payload(json.dumps(ok).encode(), ["training_job"])


@pytest.mark.parametrize(
    "last_id", ["9" * 5000, "9" * 40, "99999999999999999999", "-1", "abc", "\u00b2", "1 2"]
)
def test_item7_hostile_last_event_id_is_a_one_line_400(app_client, last_id: str) -> None:
    c, _ = app_client(extra="[workers]\ncount = 1")
    inv = c.post(
        "/api/v1/alerts", json=webhook([fault_alert(0, job="other-job")]), headers=auth("alertmanager")
    ).json()["opened"][0]
    r = c.get(
        f"/api/v1/investigations/{inv}/events", headers={**auth("vic"), "Last-Event-ID": last_id.encode()}
    )
    assert r.status_code == 400, r.text
    assert "Last-Event-ID" in r.json()["detail"] and "\n" not in r.json()["detail"]


# -- item 13: dead letters capped, expiring, paged ----------------------------------------------
def test_item13_dead_letters_are_capped_and_paged(app_client) -> None:
    c, svc = app_client(extra="[dead_letters]\nkeep = 5\nkeep_days = 1")
    for i in range(8):
        assert (
            c.post(
                "/api/v1/alerts",
                content=b"{not json %d" % i,
                headers={**auth("alertmanager"), "Content-Type": "application/json"},
            ).status_code
            == 400
        )
    pages, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 2}
        if cursor is not None:
            params["cursor"] = cursor
        d = c.get("/api/v1/dead-letters", params=params, headers=auth("root")).json()
        pages.append(d["dead_letters"])
        cursor = d["next_cursor"]
        if cursor is None:
            break
    ids = [x["id"] for p in pages for x in p]
    assert [len(p) for p in pages] == [2, 2, 1] and ids == sorted(ids, reverse=True) and len(set(ids)) == 5
    assert d["total"] == 5
    # The five kept are the newest: the first three bodies are gone.
    kept = sqlite3.connect(svc.cfg.database).execute("SELECT body FROM dead_letters ORDER BY id").fetchall()
    assert [bytes(b) for (b,) in kept] == [b"{not json %d" % i for i in range(3, 8)]
    assert c.get("/api/v1/dead-letters", params={"cursor": "x"}, headers=auth("root")).status_code == 422
    assert c.get("/api/v1/dead-letters", params={"limit": 0}, headers=auth("root")).status_code == 422


def test_item13_dead_letter_cap_and_retention_in_both_stores(store) -> None:
    for i in range(6):
        store.dead_letter("am", 400, f"bad {i}", b"x%d" % i, keep=4, keep_s=3600)
    first = store.dead_letters(limit=3)
    assert [d["reason"] for d in first] == ["bad 5", "bad 4", "bad 3"]
    rest = store.dead_letters(limit=3, before=first[-1]["id"])
    assert [d["reason"] for d in rest] == ["bad 2"]
    assert store.dead_letter_count() == 4
    # Older than the retention: gone at the next write.
    store.dead_letter("am", 400, "new", b"y", keep=4, keep_s=0.0)
    assert [d["reason"] for d in store.dead_letters(limit=10)] == ["new"]


@pytest.mark.slow
def test_item13_the_page_pages_through_dead_letters_in_chromium(server, tmp_path: Path) -> None:
    from tests.harness.service.test_browser import _browser, _playwright, _sign_in

    sync_playwright = _playwright()
    srv = server().start()
    for i in range(60):
        assert (
            srv.post(
                "/api/v1/alerts",
                "alertmanager",
                content=b"<b>not json %d" % i,
                headers={"Content-Type": "application/json"},
            ).status_code
            == 400
        )
    with sync_playwright() as pw:
        ctx = _browser(pw, tmp_path / "profile")
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        _sign_in(page, srv.url, "root")
        page.click("#nav-dead")
        page.wait_for_selector("#dead-letters tbody tr[data-id]")
        assert page.locator("h1").inner_text() == "Dead letters (60)"
        first = page.locator("#dead-letters tbody tr[data-id]").evaluate_all(
            "rs => rs.map(r => r.dataset.id)"
        )
        page.click("#dl-older")
        page.wait_for_selector("#dl-newest")
        second = page.locator("#dead-letters tbody tr[data-id]").evaluate_all(
            "rs => rs.map(r => r.dataset.id)"
        )
        ids = [int(x) for x in first + second]
        assert (
            (len(first), len(second)) == (50, 10) and ids == sorted(ids, reverse=True) and len(set(ids)) == 60
        )
        assert page.locator("#dl-older").count() == 0
        ctx.close()
        # Not for a viewer: no link, and the API refuses.
        ctx = _browser(pw, tmp_path / "profile-vic")
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        _sign_in(page, srv.url, "vic")
        assert page.locator("#nav-dead").is_hidden()
        ctx.close()
    assert srv.get("/api/v1/dead-letters", "vic").status_code == 403


# -- item 14: tokens re-read when their file changes --------------------------------------------
def test_item14_a_token_revoked_in_its_file_stops_working_without_a_restart(
    app_client, tmp_path: Path
) -> None:
    c, _ = app_client()
    assert c.get("/api/v1/me", headers=auth("ann")).status_code == 200
    new = "tok-approver-REPLACED09abcdef"  # same length: a change of mtime alone must be seen
    assert len(new) == len(TOKENS["ann"][1])
    (tmp_path / "ann.token").write_text(new + "\n")
    assert c.get("/api/v1/me", headers=auth("ann")).status_code == 401
    assert c.get("/api/v1/me", headers={"Authorization": f"Bearer {new}"}).json()["name"] == "ann"
    # Deleting the file revokes the user; the others are untouched.
    (tmp_path / "ann.token").unlink()
    assert c.get("/api/v1/me", headers={"Authorization": f"Bearer {new}"}).status_code == 401
    assert c.get("/api/v1/me", headers=auth("vic")).status_code == 200
    # A token too short (or another user's) in a file disables that user, not the service.
    (tmp_path / "vic.token").write_text("short\n")
    assert c.get("/api/v1/me", headers=auth("vic")).status_code == 401
    assert c.get("/api/v1/me", headers={"Authorization": "Bearer short"}).status_code == 401
    (tmp_path / "vic.token").write_text(TOKENS["root"][1] + "\n")
    assert c.get("/api/v1/me", headers=auth("root")).status_code == 401
    (tmp_path / "vic.token").write_text(TOKENS["vic"][1] + "\n")
    assert c.get("/api/v1/me", headers=auth("root")).json()["name"] == "root"
    assert c.get("/api/v1/me", headers=auth("vic")).json()["name"] == "vic"


def test_item14_sighup_rereads_the_tokens_and_keeps_serving(server) -> None:
    import signal

    srv = server().start()
    assert srv.get("/api/v1/me", "vic").status_code == 200
    (srv.folder / "vic.token").write_text("tok-viewer-ROTATED-0123456789\n")
    assert srv.proc is not None
    os.kill(srv.proc.pid, signal.SIGHUP)
    time.sleep(0.5)
    assert srv.proc.poll() is None, srv.log()[-2000:]
    assert srv.get("/api/v1/me", "vic").status_code == 401
    assert srv.get("/api/v1/me", "root").status_code == 200


# -- item 15: no external assets; true alert counts ---------------------------------------------
def test_item15_no_page_loads_an_external_asset(app_client) -> None:
    c, _ = app_client()
    assert c.get("/docs").status_code == 404 and c.get("/redoc").status_code == 404
    assert "/api/v1/alerts" in c.get("/openapi.json").json()["paths"]
    for path in ("/", "/static/app.js", "/static/app.css"):
        text = c.get(path).text
        assert "//cdn" not in text and "https://" not in text, path


def test_item15_an_investigation_says_its_true_alert_count_and_how_many_are_shown(app_client) -> None:
    c, svc = app_client(extra="[workers]\ncount = 1")
    alerts = [fault_alert(i, job="storm-job", hosts=64) for i in range(1200)]
    for i in range(0, 1200, 400):
        assert (
            c.post(
                "/api/v1/alerts", json=webhook(alerts[i : i + 400]), headers=auth("alertmanager")
            ).status_code
            == 202
        )
    inv = svc.store.investigations(limit=10)[0]["id"]
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert (
        d["alert_count"] == 1200
        and d["alerts_total"] == 1200
        and len(d["alerts"]) == d["alerts_shown"] == 1000
    )
    js = c.get("/static/app.js").text
    assert "alerts_total" in js and "shown" in js


@pytest.mark.slow
def test_item15_the_page_says_the_true_alert_count_in_chromium(server, tmp_path: Path) -> None:
    from tests.harness.service.test_browser import _browser, _playwright, _sign_in

    sync_playwright = _playwright()
    srv = server().start()
    alerts = [fault_alert(i, job="storm-job", hosts=64) for i in range(1200)]  # unmapped: listed, not run
    inv = srv.post("/api/v1/alerts", "alertmanager", json=webhook(alerts)).json()["opened"][0]
    with sync_playwright() as pw:
        ctx = _browser(pw, tmp_path / "profile")
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        _sign_in(page, srv.url, "vic")
        page.goto(f"{srv.url}/#/investigations/{inv}")
        page.wait_for_selector("#alerts tbody tr")
        heading = page.locator("section.card:has(#alerts) h2").inner_text()
        assert heading == "Alerts grouped here (1,200; the first 1,000 shown)", heading
        assert page.locator("#alerts tbody tr").count() == 1000
        ctx.close()


# -- item 16: out-of-order deliveries; distinct resolved alerts ---------------------------------
def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat().replace("+00:00", "Z")


def _deliver(store: Any, *alerts: dict[str, Any]) -> None:
    text, p = parse_payload(json.dumps(webhook(list(alerts))).encode(), ["training_job"])
    store.ingest([("am", text, p)], window_s=3600, resolve_bundle=lambda job, hosts: Path("/bundle"))


def _alert(fp: str, status: str, starts: float, ends: float | None = None) -> dict[str, Any]:
    a = fault_alert(0, job="j16")
    a.update(
        fingerprint=fp,
        status=status,
        startsAt=_iso(starts),
        endsAt=_iso(ends) if ends else "0001-01-01T00:00:00Z",
    )
    return a


def test_item16_late_deliveries_never_move_state_backwards_and_flaps_count_once(store) -> None:
    t0 = time.time() - 600
    _deliver(store, _alert("a", "firing", t0))
    _deliver(store, _alert("a", "resolved", t0, t0 + 60))
    _deliver(store, _alert("a", "firing", t0))  # late: the firing notice sent before the resolution
    inv = store.investigations(limit=10)[0]
    status = {a["fingerprint"]: a["status"] for a in store.alerts_of(inv["id"])}
    assert status == {"a": "resolved"} and inv["resolved_count"] == 1
    # A real re-fire (started after the resolution), then a second resolution: one alert resolved.
    _deliver(store, _alert("a", "firing", t0 + 120))
    assert store.investigations(limit=10)[0]["resolved_count"] == 0
    _deliver(store, _alert("a", "resolved", t0 + 120, t0 + 180))
    _deliver(store, _alert("a", "resolved", t0 + 120, t0 + 180))  # a repeat changes nothing
    _deliver(store, _alert("b", "firing", t0 + 10), _alert("c", "resolved", t0 + 20, t0 + 30))
    _deliver(store, _alert("b", "resolved", t0 + 10, t0 + 200))
    _deliver(store, _alert("a", "firing", t0 + 120))  # late again, after the flap
    inv = store.investigations(limit=10)[0]
    status = {a["fingerprint"]: a["status"] for a in store.alerts_of(inv["id"])}
    assert status == {"a": "resolved", "b": "resolved", "c": "resolved"}
    assert (inv["alert_count"], inv["resolved_count"]) == (3, 3)
    # A late resolution of an older episode does not end a newer one.
    _deliver(store, _alert("b", "firing", t0 + 300))
    _deliver(store, _alert("b", "resolved", t0 + 10, t0 + 200))
    inv = store.investigations(limit=10)[0]
    assert {a["fingerprint"]: a["status"] for a in store.alerts_of(inv["id"])}["b"] == "firing"
    assert inv["resolved_count"] == 2
