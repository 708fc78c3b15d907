"""Every report says where its evidence came from (live or bundle, window, hosts read and not
read), and evidence outside the window is said and not weighed: a stale steps.csv read live must
not confirm a hang through another chain."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from forensic.evals.fleet_rig import FleetRig, prometheus_binaries
from forensic.harness.graph import Investigator
from forensic.sandbox import Bundle
from forensic.sandbox.fleet import open_fleet
from forensic.sandbox.memory import MemorySource
from forensic.tools import ToolContext, get_tool

EXAMPLE = Path(__file__).resolve().parents[2] / "evals" / "examples" / "pcie-x8-mfu-drop" / "bundle"


def test_a_bundle_report_says_where_its_evidence_came_from(tmp_path: Path) -> None:
    report = Investigator(EXAMPLE).run()
    ev = report["evidence_source"]
    b = Bundle(EXAMPLE)
    assert ev["origin"] == "bundle" and ev["where"] == str(b.root)
    assert (ev["window"]["start"], ev["window"]["end"]) == b.window
    assert "gpu-e126" in ev["hosts_read"] and ev["hosts_unreachable"] == [] and ev["outside_window"] == []
    # and the terminal report prints it
    out = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "investigate", str(EXAMPLE), "--no-checkpoint"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"FORENSIC_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )
    assert out.returncode == 0, out.stderr
    assert "evidence: bundle  window 2026-02-06 00:52:00Z to 2026-02-06 02:27:02Z" in out.stdout


def test_steps_that_end_before_the_window_are_not_weighed() -> None:
    src = MemorySource.from_bundle(Bundle(EXAMPLE))
    start, end = src.window
    assert start and end
    src.incident = src.incident.model_copy(
        update={"window": src.incident.window.model_copy(update={"start": end + 86400, "end": end + 90000})}
    )
    got = get_tool("job_steps")(ToolContext(src), {})
    assert got.status == "no_data" and "no step in the window" in got.summary
    assert got.data["outside_window"][0]["what"] == "job/steps.csv"
    assert got.data["outside_window"][0]["last"] < end


@pytest.mark.slow
def test_a_stale_live_run_is_not_confirmed_silently(tmp_path: Path) -> None:
    if prometheus_binaries() is None:
        pytest.skip("prometheus/promtool not installed")
    with FleetRig(EXAMPLE, tmp_path) as rig:
        # The window is the last two hours; the replayed job's steps and metrics are months old.
        src = open_fleet(rig.fleet_file, job="llm-70b-pretrain", since="2h", title="MFU down")
        report = Investigator(src).run()
    ev = report["evidence_source"]
    assert ev["origin"] == "live" and ev["where"].startswith("fleet:")
    assert [o["what"] for o in ev["outside_window"]] == ["job/steps.csv"]
    assert any("no step in the window" in n for n in report["notes"])
    # Before, the stale steps read as a hang: CONFIRMED 1.00 through collective_timeout, no note.
    assert report["status"] != "confirmed" and "collective_timeout" not in report["chain"]
    assert ev["hosts_read"] and ev["hosts_unreachable"] == []


def test_live_metric_series_that_stop_before_the_window_ends_are_said(tmp_path: Path) -> None:
    import numpy as np
    from forensic.harness.provenance import provenance
    from forensic.sandbox.fleet import FleetSource, load_fleet
    from forensic.sandbox.sources import MetricRead
    from forensic.tools.parsers.openmetrics import Series

    start, end = 1_000_000.0, 1_003_600.0

    def series(name: str, last: float) -> Series:
        ts = np.arange(start, last + 1, 60.0)
        return Series(
            name=name,
            labels={"Hostname": "h1", "gpu": "0"},
            timestamps=ts,
            values=np.ones_like(ts),
            family=name,
        )

    class Prom:  # the metric-source seam: one exporter stopped half-way, one kept going
        def series(self, name, labels=None, start=None, end=None) -> MetricRead:
            return MetricRead(series=[series(name, 1_001_800.0 if name == "DCGM_FI_DEV_GPU_TEMP" else end)])

    (tmp_path / "token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "token"\nhosts = ["h1"]\n'
    )
    src = FleetSource(load_fleet(tmp_path / "fleet.toml"), job="j", start=start, end=end, metrics=Prom())
    src.metrics.series("DCGM_FI_DEV_GPU_TEMP", None, start, end)
    src.metrics.series("DCGM_FI_DEV_POWER_USAGE", None, start, end)
    out = provenance(src, []).outside_window
    assert [o.what for o in out] == ["metric DCGM_FI_DEV_GPU_TEMP"]
    assert out[0].last == 1_001_800.0 and "stopped" in out[0].detail and out[0].stale is False
    # recorded evidence keeps no account of series read: nothing to say there
    assert provenance(MemorySource.from_bundle(Bundle(EXAMPLE)), []).outside_window == []
