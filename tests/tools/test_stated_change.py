"""A change of step time stated in the incident's words ("went from 2.06s to 2.60s", "2.23s ->
2.56s", "up from 2.45s to 2.71s"): the first number is the level before, and the change had an
onset, so steps that hold only the slower level are slow against it but not slow since launch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools._incident_text import expected_step_s, states_change

from tests import job_incidents as ji
from tests.conftest import build_bundle


@pytest.mark.parametrize(
    "text,before",
    [
        ("Step time went from 2.06s to 2.60s. Host collectors were down", 2.06),
        ("Fabric rollout overnight. Step time 2.23s -> 2.56s. Nothing flagged.", 2.23),
        ("Step time up from 2.45s to 2.71s. One host has AER.", 2.45),
        ("All ranks slowed together (step 1.41s -> 1.82s).", 1.41),
        ("step_time jumped from 900 ms to 1.3 s after the upgrade", 0.9),
        ("checkpoint save went from 30s to 90s", None),
        ("steps 100 -> 200 took 5s", None),
        ("step 1.2 -> 1.5", None),
    ],
)
def test_a_stated_change_names_the_level_before(text: str, before: float | None) -> None:
    assert expected_step_s(text) == before
    assert states_change(text) is (before is not None)


@pytest.mark.parametrize(
    "data", [b"", b"step " * 20000, b"step time went from " + b"9" * 50000, bytes(range(256)) * 40]
)
def test_stated_change_meets_hostile_text(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    assert states_change(text) in (True, False)
    expected_step_s(text)


@pytest.mark.parametrize(
    ("fleet", "wording"),
    [
        ("dc", "Step time went from {b:.2f}s to {s:.2f}s. Host collectors were down."),
        ("ip", "Rollout overnight. Step time {b:.2f}s -> {s:.2f}s."),
        ("short", "Step time up from {b:.2f}s to {s:.2f}s. One host has PCIe AER messages."),
    ],
)
def test_steps_holding_only_the_slow_level_are_slow_but_not_since_launch(
    tmp_path: Path, fleet, wording
) -> None:
    root = tmp_path / "b"
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    ji._rename(root, ji.FLEETS[fleet])
    ji._incident(root, "Job slower", wording.format(b=2.0, s=2.6))
    ji._steps(root, extra=0.6, onset=None, compute=fleet != "ip")
    res = get_tool("job_steps")(ToolContext(Bundle(root)), {})
    names = {s.name for s in res.signals}
    assert "job_slowdown" in names, res.summary
    assert "slowdown_since_launch" not in names
    slow = next(s for s in res.signals if s.name == "job_slowdown")
    assert slow.values["expected_s"] == 2.0 and slow.values["where"] == "before_steps"
    # The same steps against an expectation stated without a change stay "slow since launch".
    inc = json.loads((root / "incident.json").read_text())
    inc["reported"] = "It used to do 2.0 s per step."
    (root / "incident.json").write_text(json.dumps(inc))
    res = get_tool("job_steps")(ToolContext(Bundle(root)), {})
    assert "slowdown_since_launch" in {s.name for s in res.signals}


@pytest.mark.parametrize(
    "text,before",
    [
        ("Since the job restarted, step time is ~2.3 s (was ~1.6 s). NCCL tests not run yet.", 1.6),
        ("step time now 1.9s (previously 1.25s)", 1.25),
        ("Step time is 2.3 s (eval every 400 steps)", None),
    ],
)
def test_a_level_in_brackets_after_the_step_time_is_the_level_before(text: str, before: float | None) -> None:
    assert expected_step_s(text) == before


@pytest.mark.parametrize(
    "text,ratio",
    [
        ("After the reboots, all-reduce time roughly 2.5x what it was last week", 2.5),
        ("step time is 2x the usual", 2.0),
        ("throughput is 2x what it was", None),  # a rate that many times is no slowdown
        ("the 2x what it was figure came from a dashboard", None),
    ],
)
def test_a_time_that_many_times_its_level_is_a_stated_slowdown(text: str, ratio: float | None) -> None:
    from forensic.tools._incident_text import stated_slowdown_ratio

    assert stated_slowdown_ratio(text) == ratio
