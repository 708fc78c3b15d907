"""The whole job slower at once, seen in the fleet's own series (``fleet_activity``), and steps that
stop being recorded before the window ends (``job_steps``): a cut-off record is read in part, not a
hang, and steps over a small part of the window do not clear the job. End to end on incidents
written in tests/fleet_activity_incidents.py, asserting verdict, component and status."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

from tests import fleet_activity_incidents as fa
from tests.cli import investigate


def _run(root: Path, tool: str):
    return get_tool(tool)(ToolContext(Bundle(root)), {})


@pytest.mark.parametrize(
    ("fleet", "activity", "ending", "decoy"),
    [
        ("dc", "gpu_util", "cut", False),
        ("ip", "sm_active", "stops", True),
        ("short", "gpu_util", "none", True),
    ],
)
def test_a_fleet_wide_drop_with_a_quiet_network_is_found(
    tmp_path: Path, fleet, activity, ending, decoy
) -> None:
    b = fa.fleet_incident(
        tmp_path / "b", kind="input_stall", fleet=fleet, activity=activity, ending=ending, decoy=decoy
    )
    res = _run(b, "fleet_activity")
    names = {s.name for s in res.signals}
    assert names == {"fleet_activity_drop", "activity_drop_network_quiet", "activity_drop_mid_run"}, (
        res.summary
    )
    drop = next(s for s in res.signals if s.name == "fleet_activity_drop")
    # The decoy GPU idles all window: it is not one of the job's GPUs, so it neither counts nor blocks.
    assert drop.values["gpus_busy"] == (7 if decoy else 8)
    assert drop.values["activity_ratio"] < 0.6 and drop.values["nic_ratio"] < 0.6
    assert abs(drop.values["onset_unix"] - fa.ONSET) <= 2 * fa.SCRAPE


def test_waits_that_rise_with_the_drop_are_no_quiet_network(tmp_path: Path) -> None:
    b = fa.fleet_incident(tmp_path / "b", kind="fabric", fleet="ip", activity="sm_active", ending="cut")
    res = _run(b, "fleet_activity")
    names = {s.name for s in res.signals}
    assert "fleet_activity_drop" in names and "activity_drop_network_quiet" not in names
    assert "transmit waits rose" in res.summary


@pytest.mark.parametrize("kind", ["steady", "hang"])
def test_no_drop_where_the_job_held_or_hung(tmp_path: Path, kind: str) -> None:
    b = fa.fleet_incident(tmp_path / "b", kind=kind, fleet="dc", activity="gpu_util", ending="stops")
    assert not _run(b, "fleet_activity").signals


@pytest.mark.parametrize("ending", ["cut", "stops"])
def test_steps_that_stop_while_the_job_runs_on_are_partial_not_a_hang(tmp_path: Path, ending: str) -> None:
    b = fa.fleet_incident(
        tmp_path / "b", kind="input_stall", fleet="short", activity="gpu_util", ending=ending
    )
    res = _run(b, "job_steps")
    names = {s.name for s in res.signals}
    assert "job_hang" not in names
    # Fifteen steady minutes of a ninety-minute window clear nothing.
    assert not names & {"job_steady", "steps_clean"}
    assert res.partial and "job/steps.csv" in res.partial[0]
    assert res.covered == []


def test_steps_that_stop_while_the_fabric_falls_silent_are_a_hang(tmp_path: Path) -> None:
    b = fa.fleet_incident(tmp_path / "b", kind="hang", fleet="ip", activity="sm_active", ending="stops")
    res = _run(b, "job_steps")
    assert "job_hang" in {s.name for s in res.signals}
    assert not res.partial


@pytest.mark.parametrize(
    "dcgm",
    [
        b"",
        b"\x00\xff" * 500,
        b'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="x"} NaN 1776390000\n' * 50,
        b'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="x"} 100 1776390000\n' * 5000,
    ],
)
def test_fleet_activity_meets_hostile_series(tmp_path: Path, dcgm: bytes) -> None:
    b = fa.fleet_incident(tmp_path / "b", kind="input_stall", fleet="dc", activity="gpu_util", ending="cut")
    (b / "metrics" / "dcgm.om.gz").write_bytes(gzip.compress(dcgm))
    res = _run(b, "fleet_activity")
    assert res.status in ("ok", "no_data") and not res.signals


@pytest.mark.parametrize(
    ("fleet", "activity", "ending", "decoy"),
    [
        ("dc", "gpu_util", "cut", False),
        ("ip", "sm_active", "stops", True),
        ("short", "gpu_util", "none", False),
    ],
)
def test_a_job_wide_drop_with_a_quiet_network_is_a_probable_input_stall(
    tmp_path: Path, fleet, activity, ending, decoy
) -> None:
    b = fa.fleet_incident(
        tmp_path / "b", kind="input_stall", fleet=fleet, activity=activity, ending=ending, decoy=decoy
    )
    rep = investigate(str(b), state=tmp_path / "s", timeout=180)
    assert rep["verdict"]["root_cause"] == "input_pipeline_stall", rep["status_reason"]
    assert rep["verdict"]["component"] == "job"
    # It rests on exclusion: never confirmed by the drop alone.
    assert rep["status"] == "probable", rep["status_reason"]


def test_a_job_wide_drop_the_fabric_waits_on_is_not_an_input_stall(tmp_path: Path) -> None:
    b = fa.fleet_incident(tmp_path / "b", kind="fabric", fleet="short", activity="sm_active", ending="cut")
    rep = investigate(str(b), state=tmp_path / "s", timeout=180)
    assert rep["status"] == "inconclusive", rep["status_reason"]
    assert rep["verdict"]["root_cause"] != "healthy"


def test_a_steady_job_with_quiet_series_stays_healthy(tmp_path: Path) -> None:
    b = fa.fleet_incident(
        tmp_path / "b", kind="steady", fleet="ip", activity="gpu_util", ending="stops", decoy=True
    )
    rep = investigate(str(b), state=tmp_path / "s", timeout=180)
    assert rep["status"] == "healthy", rep["status_reason"]
    assert rep["verdict"]["component"] is None
