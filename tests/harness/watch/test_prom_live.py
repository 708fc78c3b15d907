"""``forensic watch`` reading a real Prometheus: two jobs' per-rank compute-time gauges (16 ranks,
a scrape every 10 s, the recorder's ``forensic_step_compute_seconds`` as a textfile collector
exports it, job in ``exported_job``) are backfilled with promtool into a real Prometheus on a free
port. In one job rank 5 computes 10% slower from its 120th scrape; the other is healthy. The
standalone CLI prints an alert for the slow rank only, and ``forensic serve`` with
``[watch.prometheus]`` opens one investigation for it and none for the healthy job."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from forensic.harness.service.bench import free_port
from forensic.harness.watch import ALERTNAME

from tests.harness.service.conftest import need_binary, server  # noqa: F401  (the real server fixture)

from .recorded import synthetic_steps
from .test_cli_watch import _cli

RANKS, SCRAPES, SLOW_FROM = 16, 220, 120
QUERY = 'forensic_step_compute_seconds{exported_job="$job"}'


def _openmetrics(end: float) -> str:
    lines = ["# TYPE forensic_step_compute_seconds gauge"]
    times = end - 10.0 * np.arange(SCRAPES)[::-1]
    for job, seed, slow in (("llm-well", 6, None), ("llm-sick", 4, {5: 1.10})):
        comp = np.array(
            [s[3] for s in synthetic_steps(SCRAPES, RANKS, seed=seed, slow=slow, slow_from=SLOW_FROM)]
        )
        for r in range(RANKS):
            labels = f'exported_job="{job}",rank="{r}",host="gpu-{r // 8}",gpu="{r % 8}",instance="gpu-{r // 8}:9100"'
            lines += [
                f"forensic_step_compute_seconds{{{labels}}} {comp[i, r]:.6f} {t:.3f}"
                for i, t in enumerate(times)
            ]
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory):
    prom, tool = need_binary("prometheus"), need_binary("promtool")
    d = tmp_path_factory.mktemp("prom")
    (d / "steps.om").write_text(_openmetrics(time.time() - 60.0))  # every scrape older than the 30 s lag
    done = subprocess.run(
        [tool, "tsdb", "create-blocks-from", "openmetrics", str(d / "steps.om"), str(d / "data")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-1000:]
    (d / "prometheus.yml").write_text("global:\n  scrape_interval: 10s\nscrape_configs: []\n")
    port = free_port()
    log = open(d / "log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            prom,
            f"--config.file={d / 'prometheus.yml'}",
            f"--storage.tsdb.path={d / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            # a series ends 30 s after its last scrape (3 scrapes), not 5 minutes later
            "--query.lookback-delta=30s",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, (d / "log").read_text()[-1500:]
            try:
                if httpx.get(f"{url}/-/ready", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError("prometheus did not become ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_watch_once_reads_prometheus_and_prints_only_the_slow_rank(prometheus: str, tmp_path: Path) -> None:
    args = ("watch", "--prometheus", prometheus, "--query", QUERY, "--job", "llm-well", "--job", "llm-sick")
    args += ("--resolution-s", "10", "--state", str(tmp_path / "st"), "--once")
    done = _cli(*args, tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    alerts = [json.loads(line) for line in done.stdout.splitlines()]
    assert alerts and {a["labels"]["alertname"] for a in alerts} == {ALERTNAME}
    assert {a["labels"]["training_job"] for a in alerts} == {"llm-sick"}
    ranks = [a for a in alerts if a["labels"]["watch_kind"] == "rank_slowdown"]
    assert [(a["labels"]["rank"], a["labels"]["Hostname"], a["labels"]["gpu"]) for a in ranks] == [
        ("5", "gpu-0", "5")
    ]
    status = {j["job"]: j for j in json.loads(done.stderr.strip().splitlines()[-1])["jobs"]}
    # every scrape was read (in parts of 120 evaluations), and both sources say they were read
    assert all(j["source"] == "read" and j["steps"] >= SCRAPES for j in status.values()), status
    again = _cli(*args, tmp=tmp_path)  # resumed from the saved position: nothing read twice
    assert again.returncode == 0 and again.stdout == ""


@pytest.mark.slow
def test_serve_with_watch_prometheus_opens_the_slow_job_and_not_the_healthy_one(
    prometheus: str,
    server,  # noqa: F811
    tmp_path: Path,
) -> None:
    srv = server(
        extra=(
            "[watch]\npoll_s = 0.2\n[watch.prometheus]\n"
            f'url = "{prometheus}"\nquery = \'{QUERY}\'\njobs = ["llm-well", "llm-sick"]\nresolution_s = 10\n'
        )
    ).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until both jobs' series have been read to their end
        jobs = {j["job"]: j for j in srv.get("/api/v1/watch", "ann").json()["jobs"]}
        if len(jobs) == 2 and min(j["steps"] for j in jobs.values()) >= SCRAPES:
            break
        time.sleep(0.3)
    else:
        raise AssertionError(f"the watcher did not read the series: {jobs}; " + srv.log()[-2000:])
    # Read to the end; a poll after the recorded series end finds no series and says so (a job
    # whose telemetry stopped is unread, never quiet), and nothing else may make a source unread.
    for j in jobs.values():
        assert j["source"] == "read" or "matched no series" in j["unread"], j
    assert list((tmp_path / "watch").glob("*.npz")), "the positions are kept beside the database"
    assert srv.get("/api/v1/investigations?job=llm-well").json()["investigations"] == []
    (inv,) = srv.get("/api/v1/investigations?job=llm-sick").json()["investigations"]
    alerts = srv.get(f"/api/v1/investigations/{inv['id']}").json()["alerts"]
    assert {a["alertname"] for a in alerts} == {ALERTNAME}
    ranks = [a for a in alerts if a["labels"].get("watch_kind") == "rank_slowdown"]
    assert [(a["labels"]["rank"], a["labels"]["Hostname"]) for a in ranks] == [("5", "gpu-0")]
    found = json.loads(ranks[0]["annotations"]["watch_evidence"])
    assert found["onset_step"] >= found["step"] - 60  # found within 60 evaluations of its onset
