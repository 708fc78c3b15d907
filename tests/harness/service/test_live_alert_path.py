"""Auto-triage on a live fleet, end to end with real parts and no recorded bundle in the service:

replay agents on loopback serve the example's hosts and a real Prometheus (backfilled with
promtool) its metrics (the fleet); a second real Prometheus scrapes a replaying step-time exporter
and its rule fires; the real Alertmanager delivers to ``forensic serve`` configured with ``[fleet]``
and no bundles; the verdict equals the replay's; a notification reaches a Slack-compatible
receiver; an approver approves in Chromium; the Slurm executor drains the node in the real
slurmctld; the alert resolves and the resolution is recorded. Under CI=true nothing here skips.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from pathlib import Path

import pytest
from forensic.evals.fleet_rig import FleetRig
from forensic.sandbox import Bundle

from tests import cli
from tests.harness.executors.conftest import slurm  # noqa: F401  (the real Slurm fixture)

from .conftest import EXAMPLE, need_binary
from .test_alert_path import _alerting, _Exporter, _Receiver, _serve, _step_times, _stop
from .test_browser import _browser, _playwright, _sign_in


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _replay_verdict(tmp_path: Path) -> dict:
    done = cli.forensic_here(
        "investigate", str(EXAMPLE / "bundle"), "--json", "--no-checkpoint", state=tmp_path / "cli-state"
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["verdict"]


@pytest.mark.slow
def test_alert_to_live_verdict_to_slurm_drain(server, slurm, tmp_path: Path) -> None:  # noqa: F811
    need_binary("prometheus")
    need_binary("prometheus-alertmanager")
    need_binary("promtool")
    sync_playwright = _playwright()
    bundle = Bundle(EXAMPLE / "bundle")
    start, end = bundle.window
    assert start and end
    replay = _replay_verdict(tmp_path)
    steps = _step_times()
    threshold = statistics.median(steps[: len(steps) // 4]) * 1.05
    _Exporter.steps, _Exporter.t0 = steps, time.monotonic()
    _Receiver.got = []
    exporter, exporter_port = _serve(_Exporter)
    receiver, receiver_port = _serve(_Receiver)
    (tmp_path / "executors.toml").write_text(
        f'[slurm]\nslurm_conf = "{slurm.conf}"\nnodes = {{ "gpu-e126" = "{slurm.node}" }}\n'
    )
    procs: list[subprocess.Popen] = []
    try:
        with FleetRig(bundle.root, tmp_path / "rig") as rig:
            srv = server(
                bundles=[],
                extra=(
                    f'executors = "{tmp_path / "executors.toml"}"\n'
                    f'[notify]\nslack_webhooks = ["http://127.0.0.1:{receiver_port}/slack"]\n'
                    f'[fleet]\nfile = "{rig.fleet_file}"\nlookback_s = {end - start}\n'
                ),
            ).start()
            annotations = {"summary": bundle.incident.title, "forensic_window_end": _iso(end)}
            # The replayed data is from the recorded incident: the rule names the window's end.
            am, prom, am_dir, _ = _alerting(tmp_path, srv, threshold, exporter_port, annotations)
            procs += [am, prom]
            deadline = time.monotonic() + 120
            invs: list[dict] = []
            while time.monotonic() < deadline and not invs:
                assert all(p.poll() is None for p in procs), (am_dir / "log").read_text()[-1500:]
                invs = srv.get("/api/v1/investigations").json()["investigations"]
                time.sleep(0.5)
            assert invs, "no webhook arrived; alertmanager log:\n" + (am_dir / "log").read_text()[-1500:]
            inv = invs[0]["id"]
            done = srv.wait_status(inv, timeout_s=180)
            assert done["status"] == "awaiting_approval", (done.get("error"), srv.log()[-2000:])
            # the live verdict is the replay's, read from the fleet (no bundle is configured)
            assert (done["verdict"], done["component"]) == (replay["root_cause"], replay["component"])
            origin = done["report"]["evidence_source"]
            assert (
                origin["origin"] == "live"
                and origin["hosts_unreachable"] == []
                and "gpu-e126" in origin["hosts_read"]
            )
            deadline = time.monotonic() + 120  # what it read is kept once the verdict is out
            while time.monotonic() < deadline and not origin.get("archive"):
                time.sleep(0.5)
                origin = srv.get(f"/api/v1/investigations/{inv}").json()["report"]["evidence_source"]
            assert origin.get("archive") and Path(origin["archive"]).is_file()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not _Receiver.got:
                time.sleep(0.2)
            assert (
                _Receiver.got
                and inv in _Receiver.got[0]["text"]
                and replay["root_cause"] in _Receiver.got[0]["text"]
            )

            with sync_playwright() as pw:  # an approver approves in the page
                ctx = _browser(pw, tmp_path / "profile-ann")
                page = ctx.pages[0] if ctx.pages else ctx.new_page()
                _sign_in(page, srv.url, "ann")
                page.goto(f"{srv.url}/#/investigations/{inv}")
                page.wait_for_selector("#provenance")
                assert (
                    "live evidence" in page.inner_text("#provenance")
                    and page.locator("#archive").count() == 1
                )
                card = page.locator("#proposals .proposal[data-id='rp-1']")
                card.locator("input.reason").fill("x8 link on gpu-e126; drain it")
                card.locator("button.approve").click()
                page.wait_for_function(
                    "document.querySelector(\"#proposals .proposal[data-id='rp-1']\").textContent.includes('approved')"
                )
                ctx.close()
            p = next(
                q
                for q in srv.get(f"/api/v1/investigations/{inv}").json()["report"]["proposals"]
                if q["id"] == "rp-1"
            )
            assert p["status"] == "approved" and p["action"] == "drain_node" and p["target"] == "gpu-e126"
            ran = srv.post(f"/api/v1/investigations/{inv}/proposals/rp-1/execute", "ann", json={})
            assert ran.status_code == 200 and ran.json()["state"] == "succeeded", ran.text
            state, reason = slurm.sinfo().split("|")
            assert state.startswith("drain") and inv in reason

            _Exporter.steps = [steps[0]]  # the step time is back to normal: the alert resolves
            deadline = time.monotonic() + 60
            resolved = 0
            while time.monotonic() < deadline and not resolved:
                resolved = srv.get(f"/api/v1/investigations/{inv}").json()["resolved_count"]
                time.sleep(0.5)
            assert resolved == 1
            audit = [
                (a["actor"], a["action"], a["outcome"]) for a in srv.get("/api/v1/audit").json()["entries"]
            ]
            assert ("ann", "approve", "approved") in audit and ("ann", "execute", "succeeded") in audit
    finally:
        for proc in procs:
            _stop(proc)
        exporter.shutdown()
        receiver.shutdown()
        subprocess.run(
            ["scontrol", "update", f"nodename={slurm.node}", "state=resume"],
            env=slurm.env(),
            timeout=30,
            check=False,
            capture_output=True,
        )
