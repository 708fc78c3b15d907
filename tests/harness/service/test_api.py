"""The API end to end in process: approvals through the gate, roles, bad input, notifications."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from forensic.harness.service.bench import fault_alert, free_port, webhook

from .conftest import JOB, auth
from .test_alert_path import _Receiver

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def _open(c, **labels) -> str:
    a = fault_alert(1, job=JOB)
    a["labels"].update(labels)
    r = c.post("/api/v1/alerts", json=webhook([a]), headers=auth("alertmanager"))
    assert r.status_code == 202, r.text
    return r.json()["investigations"][0]


def _wait(c, inv: str, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
        if d["status"] not in ("queued", "running"):
            return d
        time.sleep(0.2)
    raise AssertionError(f"{inv} did not finish")


def test_investigation_concludes_and_approval_binds_hash_and_user(app_client) -> None:
    c, svc = app_client()
    inv = _open(c)
    d = _wait(c, inv)
    assert d["status"] == "awaiting_approval"
    assert (d["report"]["verdict"]["root_cause"], d["report"]["verdict"]["component"]) == (
        "pcie_downtrain",
        "gpu-e126/gpu0",
    )
    assert d["report"]["schema"] == "forensic.report/v1"
    kinds = {e["kind"] for e in d["events"]}
    assert {
        "alert",
        "hypotheses",
        "tool_call",
        "finding",
        "verdict",
        "proposals",
        "awaiting_approval",
    } <= kinds
    p = d["report"]["proposals"][0]
    url = f"/api/v1/investigations/{inv}/proposals/{p['id']}"
    # The event stream replays what happened and closes once the run is over.
    with c.stream("GET", f"/api/v1/investigations/{inv}/events", headers=auth("vic")) as s:
        text = "".join(s.iter_text())
    streamed = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert streamed[0] == "alert" and "tool_call" in streamed and streamed[-1] == "close"
    assert "event: verdict" in text and '"pcie_downtrain"' in text
    with c.stream(
        "GET", f"/api/v1/investigations/{inv}/events", headers={**auth("vic"), "Last-Event-ID": "3"}
    ) as s:
        later = "".join(s.iter_text())
    assert "id: 1\n" not in later and "id: 4\n" in later
    metrics = c.get("/metrics").text
    assert 'forensic_investigations{status="awaiting_approval"} 1.0' in metrics
    assert "forensic_investigation_duration_seconds_count 1.0" in metrics
    assert 'forensic_tool_calls_total{status="ok",tool="pcie_link"}' in metrics

    # A viewer may not decide, and a forged POST changes nothing.
    r = c.post(url + "/approve", json={"content_hash": p["content_hash"], "reason": "x"}, headers=auth("vic"))
    assert r.status_code == 403
    # A stale hash is refused (and audited).
    stale = "0" * 64
    r = c.post(url + "/approve", json={"content_hash": stale, "reason": "looks right"}, headers=auth("ann"))
    assert r.status_code == 409 and "hash" in r.json()["detail"]
    # The right hash, as ann.
    r = c.post(
        url + "/approve",
        json={"content_hash": p["content_hash"], "reason": "link at x8, drain it"},
        headers=auth("ann"),
    )
    assert r.status_code == 200, r.text
    assert r.json()["proposal"]["status"] == "approved" and r.json()["by"] == "ann"
    # Replayed: refused, nothing changes.
    r = c.post(
        url + "/approve", json={"content_hash": p["content_hash"], "reason": "again"}, headers=auth("ann")
    )
    assert r.status_code == 409 and "already approved" in r.json()["detail"]
    r = c.post(
        url + "/reject",
        json={"content_hash": p["content_hash"], "reason": "changed my mind"},
        headers=auth("root"),
    )
    assert r.status_code == 409
    # Unknown proposal.
    assert (
        c.post(
            f"/api/v1/investigations/{inv}/proposals/rp-99/approve",
            json={"content_hash": stale, "reason": "x"},
            headers=auth("ann"),
        ).status_code
        == 404
    )
    audit = c.get("/api/v1/audit", headers=auth("vic")).json()["entries"]
    outcomes = [(a["actor"], a["outcome"]) for a in reversed(audit)]
    assert outcomes[:2] == [("ann", "refused"), ("ann", "approved")]
    approved = next(a for a in audit if a["outcome"] == "approved")
    assert (
        approved["content_hash"] == p["content_hash"]
        and approved["detail"]["reason_given"] == "link at x8, drain it"
    )
    after = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()["report"]["proposals"]
    assert next(q for q in after if q["id"] == p["id"])["status"] == "approved"
    # The audit table refuses rewrites at the database level.
    import sqlite3

    con = sqlite3.connect(svc.cfg.database)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE audit SET actor='mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM audit")


def test_auth_and_roles(app_client) -> None:
    c, _ = app_client()
    body = webhook([fault_alert(1, job=JOB)])
    assert c.post("/api/v1/alerts", json=body).status_code == 401
    assert (
        c.post(
            "/api/v1/alerts", json=body, headers={"Authorization": "Bearer nope-nope-nope-nope"}
        ).status_code
        == 401
    )
    assert c.post("/api/v1/alerts", json=body, headers={"Authorization": "Basic abc"}).status_code == 401
    assert c.post("/api/v1/alerts", json=body, headers=auth("vic")).status_code == 403
    assert c.post("/api/v1/alerts", json=body, headers=auth("ann")).status_code == 403
    assert c.get("/api/v1/investigations", headers=auth("alertmanager")).status_code == 403
    assert c.get("/api/v1/audit", headers=auth("alertmanager")).status_code == 403
    assert c.get("/api/v1/investigations").status_code == 401
    assert c.get("/api/v1/dead-letters", headers=auth("ann")).status_code == 403
    assert c.get("/api/v1/investigations/inv-nope", headers=auth("vic")).status_code == 404
    assert c.get("/healthz").status_code == 200
    assert "forensic_alerts_received_total" in c.get("/metrics").text
    spec = c.get("/openapi.json").json()
    assert (
        "/api/v1/alerts" in spec["paths"]
        and "/api/v1/investigations/{inv_id}/proposals/{rp}/approve" in spec["paths"]
    )


@pytest.mark.parametrize(
    "body,status,why",
    [
        (b"{not json", 400, "not JSON"),
        (b"\xff\xfe\x00", 400, "not JSON"),
        (b"[]", 422, "not an Alertmanager"),
        (json.dumps({"version": "3", "alerts": []}).encode(), 422, "version"),
        (json.dumps({"alerts": []}).encode(), 422, "version"),
        (json.dumps({"version": "4"}).encode(), 422, "alerts"),
        (
            json.dumps(
                {"version": "4", "alerts": [{"status": "firing", "labels": {}, "startsAt": "yesterday"}]}
            ).encode(),
            422,
            "RFC 3339",
        ),
        (
            json.dumps(
                {
                    "version": "4",
                    "alerts": [{"status": "burning", "labels": {}, "startsAt": "2026-01-01T00:00:00Z"}],
                }
            ).encode(),
            422,
            "status",
        ),
        (
            json.dumps(
                {
                    "version": "4",
                    "alerts": [{"status": "firing", "labels": {"a": 1}, "startsAt": "2026-01-01T00:00:00Z"}],
                }
            ).encode(),
            422,
            "labels",
        ),
    ],
)
def test_malformed_webhooks_are_refused_and_dead_lettered(
    app_client, body: bytes, status: int, why: str
) -> None:
    c, svc = app_client()
    r = c.post(
        "/api/v1/alerts", content=body, headers={**auth("alertmanager"), "Content-Type": "application/json"}
    )
    assert r.status_code == status, r.text
    assert why in r.json()["detail"]
    dl = c.get("/api/v1/dead-letters", headers=auth("root")).json()["dead_letters"]
    assert len(dl) == 1 and dl[0]["status"] == status and dl[0]["bytes"] == len(body)
    assert c.get("/api/v1/investigations", headers=auth("vic")).json()["investigations"] == []
    assert 'forensic_webhooks_dead_lettered_total{status="%d"} 1.0' % status in c.get("/metrics").text


def test_oversized_body_is_413_and_recorded(app_client) -> None:
    c, svc = app_client(extra="max_body_bytes = 4096")
    big = webhook([fault_alert(i, job=JOB) for i in range(40)])
    r = c.post("/api/v1/alerts", json=big, headers=auth("alertmanager"))
    assert r.status_code == 413 and "cap" in r.json()["detail"]
    dl = c.get("/api/v1/dead-letters", headers=auth("root")).json()["dead_letters"]
    assert dl[0]["status"] == 413

    def chunked():  # no Content-Length: the cap is enforced while reading, and the prefix is kept
        yield b'{"version": "4", "alerts": ['
        for _ in range(10):
            yield b" " * 1000
        yield b"]}"

    r = c.post(
        "/api/v1/alerts",
        content=chunked(),
        headers={**auth("alertmanager"), "Content-Type": "application/json"},
    )
    assert r.status_code == 413
    dl = c.get("/api/v1/dead-letters", headers=auth("root")).json()["dead_letters"]
    assert len(dl) == 2 and dl[0]["status"] == 413 and dl[0]["bytes"] == 4096
    # A body that fits still goes in.
    assert (
        c.post(
            "/api/v1/alerts", json=webhook([fault_alert(1, job=JOB)]), headers=auth("alertmanager")
        ).status_code
        == 202
    )


def test_bad_decision_bodies(app_client) -> None:
    c, _ = app_client()
    inv = _open(c)
    _wait(c, inv)
    url = f"/api/v1/investigations/{inv}/proposals/rp-1/approve"
    for body in ({}, {"content_hash": "abc", "reason": "x"}, {"content_hash": "0" * 64, "reason": ""}):
        r = c.post(url, json=body, headers=auth("ann"))
        assert r.status_code == 422, r.text
    r = c.post(url, content=b"{oops", headers={**auth("ann"), "Content-Type": "application/json"})
    assert r.status_code == 422


def test_hostile_labels_are_stored_verbatim_and_the_page_forbids_inline_script(app_client) -> None:
    c, _ = app_client()
    inv = _open(c, note=HOSTILE, Hostname="gpu-e126")
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert d["alerts"][0]["labels"]["note"] == HOSTILE
    page = c.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "innerHTML" not in c.get("/static/app.js").text
    assert c.get("/static/../api.py").status_code == 404


def test_notification_receiver_down_then_up_gets_it_once(app_client) -> None:
    port = free_port()
    c, svc = app_client(extra=f'[notify]\nslack_webhooks = ["http://127.0.0.1:{port}/hook"]')
    inv = _open(c)
    d = _wait(c, inv)  # concluded although the receiver is down
    assert d["status"] == "awaiting_approval"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (
        svc.store.notifications() and svc.store.notifications()[0]["attempts"]
    ):
        time.sleep(0.1)
    assert svc.store.notifications()[0]["state"] == "pending" and svc.store.notifications()[0]["last_error"]
    _Receiver.got = []
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _Receiver)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _Receiver.got:
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        httpd.shutdown()
    assert len(_Receiver.got) == 1
    text = _Receiver.got[0]["text"]
    assert "pcie_downtrain" in text and "gpu-e126/gpu0" in text and f"#/investigations/{inv}" in text
    assert svc.store.notifications()[0]["state"] == "sent"


def test_unusable_evidence_fails_the_investigation_with_a_reason(app_client, tmp_path) -> None:
    (tmp_path / "not-a-bundle").mkdir()
    c, _ = app_client(bundles=[{"path": tmp_path / "not-a-bundle", "job": JOB}])
    inv = _open(c)
    d = _wait(c, inv)
    assert d["status"] == "failed" and "not an incident bundle" in d["error"]
    assert [e["data"] for e in d["events"] if e["kind"] == "end"] == [
        {"status": "failed", "error": d["error"]}
    ]
    for view in ("heatmap", "timeline"):
        r = c.get(f"/api/v1/investigations/{inv}/{view}", headers=auth("vic"))
        assert (
            r.status_code == 200
            and r.json()["available"] is False
            and "not an incident bundle" in r.json()["reason"]
        )


def test_chat_over_the_api_cites_evidence_persists_and_never_approves(app_client) -> None:
    c, svc = app_client()
    inv = _open(c)
    assert _wait(c, inv)["status"] == "awaiting_approval"
    r = c.post(
        "/api/v1/chat", json={"investigation": inv, "question": "why is it slow?"}, headers=auth("vic")
    )
    assert r.status_code == 200, r.text
    first = r.json()
    assert (
        "gpu-e126/gpu0" in first["text"][0]
        and first["claims"]
        and all(x["evidence"] for x in first["claims"])
    )
    assert {e for x in first["claims"] for e in x["evidence"]} <= set(
        first["records"]
    )  # every citation travels with it
    conv = first["conversation"]
    nudge = c.post(
        "/api/v1/chat",
        json={"investigation": inv, "question": "approve rp-1 please", "conversation": conv},
        headers=auth("ann"),
    ).json()
    assert nudge["intent"] == "todo" and "a message never approves" in nudge["answer"]
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert all(p["status"] == "pending_approval" for p in d["report"]["proposals"])
    follow = c.post(
        "/api/v1/chat",
        json={"investigation": inv, "question": "why not the network?", "conversation": conv},
        headers=auth("vic"),
    ).json()
    assert follow["intent"] == "why_not" and follow["conversation"] == conv
    # Persisted: the thread is in the service's checkpoint database with all three turns.
    state = svc.saver.get_tuple({"configurable": {"thread_id": conv}}).checkpoint["channel_values"]
    assert len(state["turns"]) == 3
    assert c.post("/api/v1/chat", json={"investigation": inv, "question": "hi"}).status_code == 401
    assert (
        c.post(
            "/api/v1/chat", json={"investigation": "inv-nope", "question": "hi"}, headers=auth("vic")
        ).status_code
        == 404
    )
    other = c.post(
        "/api/v1/chat",
        json={"investigation": inv, "question": "hi", "conversation": "chat-inv-x-1"},
        headers=auth("vic"),
    )
    assert other.status_code == 409
    assert (
        c.post(
            "/api/v1/chat", json={"investigation": inv, "question": "x" * 3000}, headers=auth("vic")
        ).status_code
        == 422
    )


class _Tickets(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict]] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        _Tickets.seen.append((self.headers["Idempotency-Key"], body))
        raw = json.dumps({"id": f"T-{len(_Tickets.seen)}"}).encode()
        self.send_response(201)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def test_an_approver_executes_an_approved_proposal_once(app_client, tmp_path) -> None:
    tickets = ThreadingHTTPServer(("127.0.0.1", 0), _Tickets)
    threading.Thread(target=tickets.serve_forever, daemon=True).start()
    _Tickets.seen = []
    (tmp_path / "executors.toml").write_text(
        f'[runbook]\nurl = "http://127.0.0.1:{tickets.server_address[1]}/t"\n'
    )
    try:
        plain, _ = app_client()
        inv0 = _open(plain)
        _wait(plain, inv0)
        refused = plain.post(
            f"/api/v1/investigations/{inv0}/proposals/rp-1/execute", json={}, headers=auth("ann")
        )
        assert refused.status_code == 409 and "executors" in refused.json()["detail"]
        # The page offers Execute only where it can work (an approver, executors configured).
        assert plain.get("/api/v1/me", headers=auth("ann")).json()["can_execute"] is False

        c, svc = app_client(extra=f'executors = "{tmp_path / "executors.toml"}"')
        assert c.get("/api/v1/me", headers=auth("ann")).json()["can_execute"] is True
        assert c.get("/api/v1/me", headers=auth("vic")).json()["can_execute"] is False
        inv = _open(c)
        d = _wait(c, inv)
        p = d["report"]["proposals"][0]
        url = f"/api/v1/investigations/{inv}/proposals/{p['id']}"
        assert c.post(url + "/execute", json={}, headers=auth("ann")).status_code == 409  # not approved yet
        assert (
            c.post(
                url + "/approve",
                json={"content_hash": p["content_hash"], "reason": "slot check"},
                headers=auth("ann"),
            ).status_code
            == 200
        )
        assert (
            c.post(url + "/execute", json={}, headers=auth("vic")).status_code == 403
        )  # viewers never execute
        dry = c.post(url + "/execute", json={"dry_run": True}, headers=auth("ann"))
        assert dry.status_code == 200 and dry.json()["state"] == "planned" and not _Tickets.seen
        done = c.post(url + "/execute", json={}, headers=auth("ann"))
        assert done.status_code == 200, done.text
        assert done.json()["state"] == "succeeded" and len(_Tickets.seen) == 1
        assert _Tickets.seen[0][1]["content_hash"] == p["content_hash"]
        # Who approved it and why reach the ticket, from the service's audit table.
        assert (_Tickets.seen[0][1]["approved_by"], _Tickets.seen[0][1]["approval_reason"]) == (
            "ann",
            "slot check",
        )
        again = c.post(url + "/execute", json={}, headers=auth("ann"))
        assert again.status_code == 409 and "already run" in again.json()["detail"]
        steps = [
            (e["actor"], e["action"], e["outcome"])
            for e in c.get("/api/v1/audit", headers=auth("vic")).json()["entries"]
            if e.get("proposal") == p["id"] and e.get("investigation") == inv
        ]
        assert ("ann", "execute", "succeeded") in steps and ("ann", "execute", "refused") in steps
    finally:
        tickets.shutdown()


def test_webhooks_have_one_route_that_answers_alike_at_the_root_and_under_a_prefix(tmp_path) -> None:
    """POST /api/v1/alerts is answered by its one route (nothing in front of the router shadows it),
    at the root and with the app mounted under a prefix: same statuses, bodies and headers."""
    from fastapi.testclient import TestClient
    from forensic.harness.service import load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.bench import write_config
    from forensic.harness.service.service import Service
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from .conftest import EXAMPLE, TOKENS

    svc = Service(
        load_config(write_config(tmp_path, port=0, tokens=TOKENS, bundles=[{"path": EXAMPLE, "job": JOB}]))
    )
    direct = create_app(svc, manage_lifecycle=False)
    assert list(direct.openapi()["paths"]["/api/v1/alerts"]) == ["post"]
    # Nothing in front of the router answers a webhook: the headers middleware only adds headers.
    from forensic.harness.service.api import SecurityHeaders
    from starlette.responses import PlainTextResponse

    gone = TestClient(SecurityHeaders(PlainTextResponse("no route", status_code=404))).post(
        "/api/v1/alerts", json=webhook([]), headers=auth("alertmanager")
    )
    assert gone.status_code == 404 and gone.text == "no route" and "content-security-policy" in gone.headers
    mounted = Starlette(routes=[Mount("/forensic", app=create_app(svc, manage_lifecycle=False))])
    svc.start()
    try:
        answers = []
        for client, prefix, i in ((TestClient(direct), "", 1), (TestClient(mounted), "/forensic", 2)):
            url = prefix + "/api/v1/alerts"
            a = fault_alert(i, job=f"other-{i}")
            ok = client.post(url, json=webhook([a]), headers=auth("alertmanager"))
            again = client.post(url, json=webhook([a]), headers=auth("alertmanager"))
            bad = client.post(url, content=b"{nope", headers=auth("alertmanager"))
            anon = client.post(url, json=webhook([a]))
            viewer = client.post(url, json=webhook([a]), headers=auth("vic"))
            assert ok.status_code == 202 and ok.headers["content-type"] == "application/json"
            assert (
                "content-security-policy" in ok.headers and anon.headers.get("www-authenticate") == "Bearer"
            )
            answers.append(
                (
                    (ok.json()["accepted"], len(ok.json()["opened"])),
                    (again.json()["duplicates"],),
                    (bad.status_code, "not JSON" in bad.json()["detail"]),
                    anon.status_code,
                    viewer.status_code,
                    "content-security-policy" in bad.headers,
                )
            )
        assert answers[0] == answers[1] == ((1, 1), (1,), (400, True), 401, 403, True)
        assert len(svc.store.dead_letters()) == 2  # the bad body, once per path
    finally:
        svc.stop()


def test_an_approver_undoes_an_execution_on_a_real_slurm(app_client, tmp_path, slurm) -> None:
    """Undo through the API: the gate and ledger of ``forensic execute --undo``, a reason, audited;
    the investigation shows the executed, then the undone state, whichever surface ran it."""
    from .conftest import slurm_executors

    executors = slurm_executors(tmp_path, slurm, "gpu-e126")
    c, svc = app_client(extra=f'executors = "{executors}"')
    inv = _open(c)
    d = _wait(c, inv)
    p = next(q for q in d["report"]["proposals"] if q["action"] == "drain_node")
    assert p["target"] == "gpu-e126" and p["execution"] == {"state": "not_executed"}
    url = f"/api/v1/investigations/{inv}/proposals/{p['id']}"
    nothing = c.post(url + "/undo", json={"reason": "too early"}, headers=auth("ann"))
    assert nothing.status_code == 409 and "has not been executed" in nothing.json()["detail"]
    ok = c.post(
        url + "/approve", json={"content_hash": p["content_hash"], "reason": "x8"}, headers=auth("ann")
    )
    assert ok.status_code == 200, ok.text
    done = c.post(url + "/execute", json={}, headers=auth("ann"))
    assert done.status_code == 200 and done.json()["state"] == "succeeded", done.text
    assert slurm.sinfo().split("|")[0].startswith("drain")

    shown = _wait(c, inv)["report"]["proposals"]
    ex = next(q for q in shown if q["id"] == p["id"])["execution"]
    assert ex["state"] == "succeeded" and ex["by"] == "ann" and ex["executor"] == "slurm"
    assert ex["undo"] == [f"scontrol update NodeName={slurm.node} State=RESUME"]
    assert "State=DRAIN" in ex["detail"]

    assert c.post(url + "/undo", json={"reason": "x"}, headers=auth("vic")).status_code == 403
    assert c.post(url + "/undo", json={}, headers=auth("ann")).status_code == 422  # a reason is required
    undone = c.post(url + "/undo", json={"reason": "the link retrained at x16"}, headers=auth("ann"))
    assert undone.status_code == 200 and undone.json()["state"] == "undone", undone.text
    assert "drain" not in slurm.sinfo().split("|")[0]
    again = c.post(url + "/undo", json={"reason": "again"}, headers=auth("ann"))
    assert again.status_code == 409 and "undone" in again.json()["detail"]
    assert c.post(url + "/execute", json={}, headers=auth("ann")).status_code == 409  # undone is final
    ex = next(q for q in _wait(c, inv)["report"]["proposals"] if q["id"] == p["id"])["execution"]
    assert ex["state"] == "undone" and ex["undo"] == []

    entries = c.get("/api/v1/audit", headers=auth("vic")).json()["entries"]
    steps = [(e["actor"], e["action"], e["outcome"]) for e in entries if e.get("proposal") == p["id"]]
    assert ("ann", "undo", "undone") in steps and ("ann", "undo", "refused") in steps
    assert ("ann", "verify", "verified") in steps
    undo_row = next(e for e in entries if (e["action"], e["outcome"]) == ("undo", "undone"))
    assert undo_row["detail"] == {
        "action": "drain_node",
        "target": "gpu-e126",
        "reason_given": "the link retrained at x16",
    }
    # Every execution step names what it acted on (the page's audit view reads these).
    for e in entries:
        if e["action"] in ("execute", "verify", "undo") and e["outcome"] != "refused":
            assert (e["detail"]["action"], e["detail"]["target"]) == ("drain_node", "gpu-e126"), e
