"""Live equals replay: every example incident served as a live fleet on loopback (one replay agent
per host, a real Prometheus backfilled from the bundle's OpenMetrics files with promtool, a
generated fleet file) and investigated with ``forensic investigate --fleet``: same verdict and
component as the replay run. And the faults a live fleet has: agents down, slow or answering
garbage, Prometheus down.

Needs the Debian package ``prometheus`` (``.ci/run`` installs it). Without it the tests skip, and
fail under CI=true.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.evals.fleet_rig import FleetRig, free_port, prometheus_binaries
from forensic.sandbox import Bundle
from forensic.sandbox.fleet import FleetSource, open_fleet
from forensic.tools import ToolContext, get_tool

EXAMPLES = Path(__file__).resolve().parents[2] / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir())

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _prometheus_installed() -> None:
    if prometheus_binaries() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus/promtool are not installed, and CI=true: .ci/run must install them")
        pytest.skip("prometheus/promtool not installed (apt-get install prometheus)")


def _forensic(*args: str, timeout: float = 300) -> dict:
    env = {
        **os.environ,
        "FORENSIC_STATE_DIR": os.environ.get("FORENSIC_STATE_DIR", "/tmp/forensic-test-state"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "investigate", *args, "--json", "--no-checkpoint"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("case", CASES)
def test_live_fleet_gives_the_replay_verdict(case: str, tmp_path: Path) -> None:
    bundle = EXAMPLES / case / "bundle"
    replay = _forensic(str(bundle))
    with FleetRig(bundle, tmp_path) as rig:
        assert rig.prometheus_url and len(rig.fleet_file.read_text()) > 0
        live = _forensic(*rig.investigate_args())
    assert live["verdict"]["root_cause"] == replay["verdict"]["root_cause"]
    assert live["verdict"]["component"] == replay["verdict"]["component"]
    assert live["status"] == replay["status"]
    assert not any("could not be read" in n for n in live["notes"]), live["notes"]
    # it really read the fleet: citations name hosts and Prometheus queries, never bundle files
    sources = " ".join(str(r["source"]) for r in live["evidence"])
    assert "nodes/" not in sources and "metrics/" not in sources


def _live(rig: FleetRig, bundle: Bundle) -> FleetSource:
    """The rig's fleet read as the bundle's incident: its job, window, title and ranks."""
    start, end = bundle.window
    return open_fleet(
        rig.fleet_file,
        job=bundle.incident.job.name,
        since=end - start,
        until=end,
        title=bundle.incident.title,
        ranks=bundle.incident.job.ranks,
    )


def test_metrics_come_from_prometheus(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "thermal-throttle-straggler" / "bundle")
    replay = get_tool("metrics")(ToolContext(bundle), {})
    with FleetRig(bundle.root, tmp_path) as rig:
        src = _live(rig, bundle)
        live = get_tool("metrics")(ToolContext(src), {})
    assert live.status == replay.status == "ok"
    assert live.data["gpus"] == replay.data["gpus"]
    assert {(s.name, s.component) for s in live.signals} == {(s.name, s.component) for s in replay.signals}
    assert all(x.startswith("prometheus:http://127.0.0.1:") for x in live.source)


def test_agents_down_slow_or_garbage_and_prometheus_down_cost_only_their_evidence(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    culprit = "gpu-e126"
    others = [h for h in bundle.host_names() if h != culprit]
    faults = {others[0]: "down", others[1]: "slow", others[2]: "garbage"}
    dead_prometheus = f"http://127.0.0.1:{free_port()}"
    with FleetRig(
        bundle.root, tmp_path, faults=faults, agent_timeout_s=2.0, prometheus_url=dead_prometheus
    ) as rig:
        live = _forensic(*rig.investigate_args())
        src = _live(rig, bundle)
        metrics = get_tool("metrics")(ToolContext(src), {})
    # the investigation concludes, on the same culprit
    assert (live["verdict"]["root_cause"], live["verdict"]["component"]) == (
        "pcie_downtrain",
        f"{culprit}/gpu0",
    )
    # the report names exactly the hosts that could not be read
    unreadable = " ".join(n for n in live["notes"] if "could not be read" in n)
    assert all(h in unreadable for h in faults), live["notes"]
    assert culprit not in unreadable and not any(h in unreadable for h in others[3:])
    # Prometheus down: the metrics tool has no data, and says why
    assert metrics.status == "no_data"
    assert "127.0.0.1" in metrics.summary and (
        "did not answer" in metrics.summary or "unreachable" in metrics.summary
    )
