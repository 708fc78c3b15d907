"""The real alert path: a replaying exporter -> Prometheus (rule) -> Alertmanager -> forensic serve
-> investigation with the example's verdict -> Slack-compatible notification.

Prometheus and Alertmanager are the Debian packages, started here on free loopback ports with
temporary configs and data folders (never the packaged services).
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import signal
import statistics
import subprocess
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from forensic.harness.service.bench import free_port

from .conftest import EXAMPLE, JOB, need_binary


def _step_times() -> list[float]:
    """The example job's step time (the slowest rank's duration) per step, in order."""
    by: dict[int, list[float]] = defaultdict(list)
    with gzip.open(EXAMPLE / "bundle" / "job" / "steps.csv.gz", "rt") as fh:
        for r in csv.DictReader(fh):
            by[int(r["step"])].append(float(r["duration_s"]))
    return [max(by[s]) for s in sorted(by)]


class _Exporter(BaseHTTPRequestHandler):
    """Replays the incident's step time as a gauge, one recorded step per 0.25 s of wall time."""

    steps: list[float] = []
    t0 = 0.0

    def do_GET(self) -> None:
        i = min(len(self.steps) - 1, int((time.monotonic() - self.t0) / 0.25))
        body = (
            "# HELP train_step_duration_seconds Step time of the job (slowest rank).\n"
            "# TYPE train_step_duration_seconds gauge\n"
            f'train_step_duration_seconds{{training_job="{JOB}"}} {self.steps[i]}\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a) -> None:
        pass


class _Receiver(BaseHTTPRequestHandler):
    got: list[dict] = []

    def do_POST(self) -> None:
        n = int(self.headers.get("content-length", 0))
        type(self).got.append(json.loads(self.rfile.read(n)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a) -> None:
        pass


def _serve(handler) -> tuple[ThreadingHTTPServer, int]:
    port = free_port()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, port


def _spawn(argv: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=open(log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _alerting(
    tmp_path: Path, srv, threshold: float, exporter_port: int, annotations: dict[str, str]
) -> tuple[subprocess.Popen, subprocess.Popen, Path, Path]:
    """A real Alertmanager that delivers to ``srv`` (``forensic serve``) and a real Prometheus that
    scrapes the exporter on ``exporter_port`` and fires StepTimeRegression, with ``annotations``,
    while the step time is above ``threshold``; both on free loopback ports, with their configs,
    data and logs under ``tmp_path``. Returns (alertmanager, prometheus, its folder, its folder)."""
    am_port = free_port()
    am_dir, prom_dir = tmp_path / "am", tmp_path / "prom"
    am_dir.mkdir()
    prom_dir.mkdir()
    (am_dir / "alertmanager.yml").write_text(f"""
route:
  receiver: forensic
  group_by: [alertname, training_job]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: forensic
    webhook_configs:
      - url: {srv.url}/api/v1/alerts
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials_file: {srv.folder / "alertmanager.token"}
""")
    # a JSON object is a YAML flow mapping: the annotations' text is quoted as it should be
    (prom_dir / "rules.yml").write_text(f"""
groups:
  - name: forensic
    interval: 1s
    rules:
      - alert: StepTimeRegression
        expr: train_step_duration_seconds > {threshold:.4f}
        labels: {{severity: page}}
        annotations: {json.dumps(annotations)}
""")
    (prom_dir / "prometheus.yml").write_text(f"""
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
rule_files: ["{prom_dir / "rules.yml"}"]
alerting:
  alertmanagers: [{{static_configs: [{{targets: ["127.0.0.1:{am_port}"]}}]}}]
scrape_configs:
  - job_name: replay
    static_configs: [{{targets: ["127.0.0.1:{exporter_port}"]}}]
""")
    am = _spawn(
        [
            need_binary("prometheus-alertmanager"),
            f"--config.file={am_dir / 'alertmanager.yml'}",
            f"--storage.path={am_dir / 'data'}",
            f"--web.listen-address=127.0.0.1:{am_port}",
            "--cluster.listen-address=",
        ],
        am_dir / "log",
    )
    prom = _spawn(
        [
            need_binary("prometheus"),
            f"--config.file={prom_dir / 'prometheus.yml'}",
            f"--storage.tsdb.path={prom_dir / 'data'}",
            f"--web.listen-address=127.0.0.1:{free_port()}",
        ],
        prom_dir / "log",
    )
    return am, prom, am_dir, prom_dir


@pytest.mark.slow
def test_prometheus_alertmanager_to_a_concluded_investigation(server, tmp_path: Path) -> None:
    need_binary("prometheus")
    need_binary("prometheus-alertmanager")
    steps = _step_times()
    threshold = statistics.median(steps[: len(steps) // 4]) * 1.05
    assert steps[0] < threshold < steps[-1], "the replay must cross the alert threshold"

    _Exporter.steps, _Exporter.t0 = steps, time.monotonic()
    _Receiver.got = []
    exporter, exporter_port = _serve(_Exporter)
    receiver, receiver_port = _serve(_Receiver)
    srv = server(extra=f'[notify]\nslack_webhooks = ["http://127.0.0.1:{receiver_port}/slack"]').start()
    annotations = {"summary": f"step time {{{{ $value }}}} s above {threshold:.2f} s"}
    am, prom, am_dir, prom_dir = _alerting(tmp_path, srv, threshold, exporter_port, annotations)
    try:
        deadline = time.monotonic() + 120
        invs: list[dict] = []
        while time.monotonic() < deadline:
            assert am.poll() is None, (am_dir / "log").read_text()[-2000:]
            assert prom.poll() is None, (prom_dir / "log").read_text()[-2000:]
            invs = srv.get("/api/v1/investigations").json()["investigations"]
            if invs:
                break
            time.sleep(0.5)
        assert invs, (
            "no webhook arrived; alertmanager log:\n"
            + (am_dir / "log").read_text()[-1500:]
            + "\nprometheus log:\n"
            + (prom_dir / "log").read_text()[-1500:]
        )
        done = srv.wait_status(invs[0]["id"])
        truth = json.loads((EXAMPLE / "truth.json").read_text())
        assert (done["verdict"], done["component"]) == (truth["root_cause"], truth["component"])
        assert done["job"] == JOB and done["alerts"][0]["labels"]["alertname"] == "StepTimeRegression"
        assert done["alerts"][0]["labels"]["job"] == "replay"  # Prometheus' scrape job, not the training job
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _Receiver.got:
            time.sleep(0.2)
        assert len(_Receiver.got) == 1
        assert truth["root_cause"] in _Receiver.got[0]["text"] and invs[0]["id"] in _Receiver.got[0]["text"]
        # Alertmanager keeps re-sending the group; still one investigation.
        time.sleep(3)
        assert len(srv.get("/api/v1/investigations").json()["investigations"]) == 1
    finally:
        _stop(prom)
        _stop(am)
        exporter.shutdown()
        receiver.shutdown()
