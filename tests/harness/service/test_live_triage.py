"""Live triage: with ``[fleet]`` and no bundle, an alert is investigated on the live fleet (replay
agents on loopback, a real Prometheus backfilled from the example); an alert that maps to nothing
is ``unmapped`` with its reason on the page and in a notification."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from forensic.evals.fleet_rig import FleetRig, prometheus_binaries
from forensic.harness.service.bench import fault_alert, free_port, webhook
from forensic.sandbox import Bundle

from tests import cli

from .conftest import EXAMPLE, JOB, auth
from .test_alert_path import _Receiver


def _receiver() -> tuple[ThreadingHTTPServer, str]:
    port = free_port()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    _Receiver.got = []
    return httpd, f"http://127.0.0.1:{port}/slack"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat().replace("+00:00", "Z")


def _wait(c, inv: str, done=("awaiting_approval", "concluded", "failed"), timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
        if d["status"] in done:
            return d
        time.sleep(0.2)
    raise AssertionError(f"{inv} still {d['status']}")


def _cli(*args: str, state: Path) -> subprocess.CompletedProcess:
    return cli.forensic_here(*args, state=state / "cli-state", env={"COLUMNS": "400"})


def _wait_for(pred, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not pred():
        time.sleep(0.1)


@pytest.mark.slow
def test_an_alert_without_a_bundle_is_investigated_on_the_live_fleet(app_client, tmp_path: Path) -> None:
    if prometheus_binaries() is None:
        pytest.skip("prometheus/promtool not installed")
    bundle = Bundle(EXAMPLE / "bundle")
    start, end = bundle.window
    assert start and end
    truth = json.loads((EXAMPLE / "truth.json").read_text())
    with FleetRig(bundle.root, tmp_path / "rig") as rig:
        c, _ = app_client(
            bundles=[],
            extra=(f'[fleet]\nfile = "{rig.fleet_file}"\nlookback_s = {end - start}\nwindow_after_s = 0\n'),
        )
        alert = fault_alert(1, job=JOB, t0=end)
        alert["startsAt"] = _iso(end)
        alert["annotations"] = {"summary": bundle.incident.title, "description": bundle.incident.reported}
        r = c.post("/api/v1/alerts", json=webhook([alert]), headers=auth("alertmanager"))
        assert r.status_code == 202, r.text
        inv = r.json()["opened"][0]
        done = _wait(c, inv)
        assert done["status"] == "awaiting_approval", done.get("error")
        # a person approves the live investigation's proposal (the fleet window is reopened for it)
        p = done["report"]["proposals"][0]
        ok = c.post(
            f"/api/v1/investigations/{inv}/proposals/{p['id']}/approve",
            headers=auth("ann"),
            json={"content_hash": p["content_hash"], "reason": "seen"},
        )
        assert ok.status_code == 200, ok.text
        # What it read is kept (after the verdict): downloadable, and investigated again (the agents
        # are gone) it gives the same verdict.
        _wait_for(
            lambda: bool(
                c.get(f"/api/v1/investigations/{inv}", headers=auth("vic"))
                .json()["report"]["evidence_source"]
                .get("archive")
            ),
            timeout_s=120,
        )
    kept = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()["report"]["evidence_source"][
        "archive"
    ]
    assert kept.endswith(f"archives/{inv}.tar.gz")
    got = c.get(f"/api/v1/investigations/{inv}/archive", headers=auth("vic"))
    assert got.status_code == 200 and got.content[:2] == b"\x1f\x8b"
    (tmp_path / "kept.tar.gz").write_bytes(got.content)
    again = _cli("investigate", str(tmp_path / "kept.tar.gz"), "--json", "--no-checkpoint", state=tmp_path)
    assert again.returncode == 0, again.stderr
    replayed = json.loads(again.stdout)
    assert (replayed["verdict"]["root_cause"], replayed["verdict"]["component"]) == (
        done["verdict"],
        done["component"],
    )
    assert replayed["evidence_source"]["origin"] == "archive"
    after = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert after["report"]["evidence_source"]["archive"] == kept  # a decision keeps it named
    assert (
        c.get(f"/api/v1/investigations/{inv}/heatmap", headers=auth("vic")).json().get("available")
        is not False
    )
    chat = c.post(
        "/api/v1/chat", headers=auth("vic"), json={"investigation": inv, "question": "why is it slow?"}
    )
    assert chat.status_code == 200 and chat.json()["claims"], chat.text  # answered from the kept evidence
    shown = _cli("show", inv, "--checkpoint", str(tmp_path / "serve.sqlite"), state=tmp_path)
    assert shown.returncode == 0 and f"kept as {kept}" in shown.stdout.replace("\n", ""), (
        shown.stdout + shown.stderr
    )
    assert (done["verdict"], done["component"]) == (truth["root_cause"], truth["component"])
    src = [e for e in done["events"] if e["kind"] == "evidence_source"]
    assert len(src) == 1 and src[0]["data"]["origin"] == "live" and src[0]["data"]["job"] == JOB
    assert src[0]["data"]["window"] == {"start": pytest.approx(start), "end": pytest.approx(end)}
    # it read the fleet, not a bundle: citations name agents and Prometheus queries
    sources = " ".join(str(e["source"]) for e in done["report"]["evidence"])
    assert "nodes/" not in sources and "metrics/" not in sources
    assert done["report"]["title"] == bundle.incident.title


def test_an_alert_mapping_to_nothing_says_why_on_the_page_and_in_a_notification(app_client) -> None:
    httpd, url = _receiver()
    try:
        c, _ = app_client(
            extra=f'[notify]\nslack_webhooks = ["{url}"]\n'
        )  # a bundle for JOB only, no [fleet]
        r = c.post(
            "/api/v1/alerts", json=webhook([fault_alert(1, job="other-job")]), headers=auth("alertmanager")
        )
        inv = r.json()["opened"][0]
        d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
        assert d["status"] == "unmapped"
        why = [e["data"]["reason"] for e in d["events"] if e["kind"] == "unmapped"]
        assert why and "no [fleet]" in why[0] and "other-job" in why[0]
        _wait_for(lambda: bool(_Receiver.got))
        assert (
            len(_Receiver.got) == 1
            and "NOT investigated" in _Receiver.got[0]["text"]
            and inv in _Receiver.got[0]["text"]
        )
        assert _Receiver.got[0]["forensic"]["reason"] == why[0]
    finally:
        httpd.shutdown()


def test_with_a_fleet_an_alert_without_a_job_label_is_unmapped_with_the_reason(
    app_client, tmp_path: Path
) -> None:
    (tmp_path / "agent-token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "agent-token"\n'
    )
    c, _ = app_client(bundles=[], extra=f'[fleet]\nfile = "{tmp_path / "fleet.toml"}"\n')
    a = fault_alert(1, job="x")
    del a["labels"]["training_job"]
    r = c.post("/api/v1/alerts", json=webhook([a]), headers=auth("alertmanager"))
    inv = r.json()["opened"][0]
    d = c.get(f"/api/v1/investigations/{inv}", headers=auth("vic")).json()
    assert d["status"] == "unmapped"
    assert any(
        "no job label" in e["data"]["reason"] and "training_job" in e["data"]["reason"]
        for e in d["events"]
        if e["kind"] == "unmapped"
    )
    # and one that names a job is queued for the live fleet
    r = c.post(
        "/api/v1/alerts",
        json=webhook(
            [
                fault_alert(2, job="llm-1", hosts=1)
                | {"labels": {"training_job": "llm-1", "Hostname": "gpu-q1"}}
            ]
        ),
        headers=auth("alertmanager"),
    )
    live = r.json()["opened"][0]
    assert c.get(f"/api/v1/investigations/{live}", headers=auth("vic")).json()["status"] != "unmapped"


def test_a_broken_fleet_file_stops_the_service_from_starting(tmp_path: Path) -> None:
    from forensic.harness.service import ConfigError, parse_config

    (tmp_path / "fleet.toml").write_text("[prometheus]\nurl = 'http://p:9090'\n")
    with pytest.raises(ConfigError, match=r"fleet\.file: .*agents: Field required"):
        parse_config(
            {"fleet": {"file": "fleet.toml"}, "users": [{"name": "a", "role": "viewer", "token_file": "t"}]},
            tmp_path,
        )


class _Store:
    """The three store calls LiveSources makes, in memory."""

    def __init__(self, alerts: list[dict]) -> None:
        self.alerts, self.events = alerts, []

    def alerts_of(self, inv_id: str) -> list[dict]:
        return self.alerts

    def events_after(self, inv_id: str, after: int) -> list[dict]:
        return self.events

    def add_event(self, inv_id: str, key: str, kind: str, data: dict) -> None:
        if not any(e["key"] == key for e in self.events):
            self.events.append({"key": key, "kind": kind, "data": data})


def test_the_window_job_and_title_come_from_the_alerts_and_are_recorded_once(tmp_path: Path) -> None:
    from forensic.harness.service import parse_config
    from forensic.harness.service.live import LIVE, LiveSources

    (tmp_path / "agent-token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "agent-token"\n'
    )
    cfg = parse_config(
        {
            "fleet": {"file": "fleet.toml", "lookback_s": 600, "window_after_s": 120},
            "users": [{"name": "a", "role": "viewer", "token_file": "t"}],
        },
        tmp_path,
    )
    alerts = [
        {
            "alertname": "StepTimeRegression",
            "starts_at": 10_000.0,
            "annotations": {"summary": "step time up 12%", "description": "MFU dropped on the panel"},
        },
        {"alertname": "XidErrors", "starts_at": 10_300.0, "annotations": {}},
    ]
    now = [20_000.0]
    live = LiveSources(cfg, _Store(alerts), clock=lambda: now[0])
    inv = {"id": "inv-1", "bundle": LIVE, "job": "llm-1", "first_at": 10_000.0}
    loc = json.loads(live.where(inv).removeprefix("fleet:"))
    # lookback before the first alert; window_after_s after the last one, as it is earlier than now
    assert (loc["until"] - loc["since"], loc["until"]) == (9_400.0, 10_420.0)
    assert loc["job"] == "llm-1" and loc["title"] == "step time up 12%"
    assert "MFU dropped on the panel" in loc["reported"] and "XidErrors" in loc["reported"]
    now[0] = 99_999.0  # a resumed run reopens the same window, not a new one
    assert json.loads(live.where(inv).removeprefix("fleet:")) == loc
    # a drill names the window's end
    drill = LiveSources(
        cfg,
        _Store([{**alerts[0], "annotations": {"forensic_window_end": "1970-01-01T01:00:00Z"}}]),
        clock=lambda: 50_000.0,
    )
    loc = json.loads(drill.where({**inv, "id": "inv-2"}).removeprefix("fleet:"))
    assert (loc["until"], loc["since"]) == (3600.0, 600.0)
    assert live.where({"id": "inv-3", "bundle": "/b/x"}) == "/b/x"  # a bundle stays a bundle
