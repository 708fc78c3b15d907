"""``forensic bench triage``: from an alert reaching Alertmanager to the verdict and to the
notification, with the service reading a live fleet and no recorded bundle.

Per size: a generated incident of that many hosts is served as a live fleet on loopback (one
replay agent per host in a few processes, a real Prometheus backfilled with promtool); a real
Alertmanager routes to ``forensic serve`` (its own process) configured with ``[fleet]`` and no
bundles, and notifying a local Slack-compatible receiver. The clock starts when the alert is
posted to Alertmanager's API and stops when the investigation has a verdict (its status leaves
queued/running) and when the receiver has the notification. Set-up (generation, backfill, agents,
start of every process) is not timed. Alertmanager's ``group_wait`` is 0 s here; in production it
adds its own wait (30 s in the documented route).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from forensic.harness.service.bench import stop_process

#: Targets of the issue: alert -> verdict at 64 and at 256 hosts, seconds.
TARGETS_S = {64: 30.0, 256: 60.0}
CAUSE = "pcie_downtrain"


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class _Receiver(BaseHTTPRequestHandler):
    got: list[tuple[float, dict]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        n = int(self.headers.get("content-length", 0))
        type(self).got.append((time.monotonic(), json.loads(self.rfile.read(n) or b"{}")))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _wait_http(url: str, proc: subprocess.Popen, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode})")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not become ready in {timeout_s:g} s")


def triage_once(hosts: int, *, seed: int = 1, workdir: Path) -> dict[str, Any]:
    """One size: set up, post one alert to Alertmanager, time the verdict and the notification."""
    from forensic.evals.fleet_rig import FleetRig, RigError, free_port
    from forensic.evals.generator.incident import IncidentSpec, generate
    from forensic.harness.graph import Investigator
    from forensic.harness.service.bench import start_server, wait_healthy, write_config
    from forensic.sandbox import Bundle

    am_bin = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if am_bin is None:
        raise RigError("Alertmanager is not installed (Debian: apt-get install prometheus-alertmanager)")
    generate(IncidentSpec(case="bench-triage", cause=CAUSE, seed=seed, hosts=hosts), workdir)
    bundle = Bundle(workdir / "bench-triage" / "bundle")
    replay = Investigator(bundle).run(thread_id="bench-replay")
    start, end = bundle.window
    assert start is not None and end is not None
    job = bundle.incident.job.name or "job"
    _Receiver.got = []
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    procs: list[subprocess.Popen] = []
    try:
        with FleetRig(bundle.root, workdir / "rig") as rig:
            port = free_port()
            webhook_token = secrets.token_hex(16)
            tokens = {"alertmanager": ("webhook", webhook_token), "bench": ("viewer", secrets.token_hex(16))}
            serve_dir = workdir / "serve"
            serve_dir.mkdir()
            config = write_config(
                serve_dir,
                port=port,
                tokens=tokens,
                bundles=[],
                extra=(
                    f'[notify]\nslack_webhooks = ["http://127.0.0.1:{receiver.server_address[1]}/slack"]\n'
                    f'[fleet]\nfile = "{rig.fleet_file}"\nlookback_s = {end - start}\n'
                ),
            )
            server = start_server(config, port, serve_dir / "server.log")
            procs.append(server)
            wait_healthy(port, server)
            am_port = free_port()
            am_dir = workdir / "am"
            am_dir.mkdir()
            (am_dir / "alertmanager.yml").write_text(
                "route:\n  receiver: forensic\n  group_by: [alertname, training_job]\n  group_wait: 0s\n"
                "  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n  - name: forensic\n    webhook_configs:\n"
                f"      - url: http://127.0.0.1:{port}/api/v1/alerts\n        send_resolved: true\n        http_config:\n"
                f"          authorization:\n            type: Bearer\n            credentials_file: {serve_dir / 'alertmanager.token'}\n"
            )
            log = open(am_dir / "log", "wb")  # noqa: SIM115 - closed with the process
            procs.append(
                subprocess.Popen(
                    [
                        am_bin,
                        f"--config.file={am_dir / 'alertmanager.yml'}",
                        f"--storage.path={am_dir / 'data'}",
                        f"--web.listen-address=127.0.0.1:{am_port}",
                        "--cluster.listen-address=",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )
            _wait_http(f"http://127.0.0.1:{am_port}/-/ready", procs[-1], "alertmanager")
            viewer = {"Authorization": f"Bearer {tokens['bench'][1]}"}
            alert = [
                {
                    "labels": {"alertname": "StepTimeRegression", "training_job": job, "severity": "page"},
                    "annotations": {"summary": bundle.incident.title, "forensic_window_end": _iso(end)},
                    "startsAt": _iso(time.time()),
                }
            ]
            t0 = time.monotonic()
            r = httpx.post(f"http://127.0.0.1:{am_port}/api/v2/alerts", json=alert, timeout=10)
            r.raise_for_status()
            inv: dict[str, Any] | None = None
            verdict_at = None
            deadline = t0 + 600
            while time.monotonic() < deadline:
                rows = httpx.get(
                    f"http://127.0.0.1:{port}/api/v1/investigations", headers=viewer, timeout=10
                ).json()["investigations"]
                if rows and rows[0]["status"] not in ("queued", "running"):
                    verdict_at = time.monotonic()
                    inv = httpx.get(
                        f"http://127.0.0.1:{port}/api/v1/investigations/{rows[0]['id']}",
                        headers=viewer,
                        timeout=10,
                    ).json()
                    break
                time.sleep(0.05)
            while time.monotonic() < deadline and not _Receiver.got:
                time.sleep(0.05)
            notified_at = _Receiver.got[0][0] if _Receiver.got else None
    finally:
        for p in procs:
            stop_process(p)
        receiver.shutdown()
    report = (inv or {}).get("report") or {}
    origin = report.get("evidence_source") or {}
    live = report.get("verdict") or {}
    return {
        "hosts": hosts,
        "alert_to_verdict_s": round(verdict_at - t0, 2) if verdict_at else None,
        "alert_to_notification_s": round(notified_at - t0, 2) if notified_at else None,
        "verdict_matches_replay": (live.get("root_cause"), live.get("component"))
        == (replay["verdict"]["root_cause"], replay["verdict"]["component"]),
        "bundles_used": 0 if origin.get("origin") == "live" else 1,
        "notified": notified_at is not None,
        "status": (inv or {}).get("status"),
        "verdict": [live.get("root_cause"), live.get("component")],
        "replay_verdict": [replay["verdict"]["root_cause"], replay["verdict"]["component"]],
        "target_s": TARGETS_S.get(hosts),
        "hosts_read": len(origin.get("hosts_read") or []),
    }


def triage_benchmark(sizes: list[int], *, seed: int = 1) -> dict[str, Any]:
    out = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="forensic-bench-triage-") as tmp:
            out.append(triage_once(n, seed=seed, workdir=Path(tmp)))
    return {"cause": CAUSE, "seed": seed, "cores": os.cpu_count(), "sizes": out}


def format_triage_benchmark(r: dict[str, Any]) -> str:
    lines = [f"alert -> verdict on a live fleet (no bundles), cause {r['cause']}, {r['cores']} cores"]
    for s in r["sizes"]:
        ok = (
            ""
            if s["target_s"] is None or s["alert_to_verdict_s"] is None
            else (
                " (within target)"
                if s["alert_to_verdict_s"] <= s["target_s"]
                else f" (OVER the {s['target_s']:g} s target)"
            )
        )
        lines.append(
            f"  {s['hosts']:>5} hosts: verdict {s['alert_to_verdict_s']} s{ok}, notification {s['alert_to_notification_s']} s, "
            f"same verdict as replay: {s['verdict_matches_replay']}, bundles used: {s['bundles_used']}"
        )
    return "\n".join(lines)


__all__ = ["TARGETS_S", "format_triage_benchmark", "triage_benchmark", "triage_once"]
