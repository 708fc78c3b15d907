"""The committed incidents, scored as `forensic eval` scores them: the bars the issues set.

These are regression tests on accuracy, not timing: the investigator must stay right on every
example, keep its margins on the tuned and held-out splits, raise no false alarm on a healthy
control, cite only evidence that checks out, and beat both baselines by a wide margin.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.evals.runner import find_cases, run_case, run_eval
from forensic.evals.sets import ensure_set
from forensic.harness.budget import Limits

EVALS = Path(__file__).resolve().parents[2] / "evals"


@pytest.mark.parametrize("case", find_cases(EVALS / "examples"), ids=lambda p: p.name)
def test_every_example_is_named_exactly(case: Path) -> None:
    r = run_case(case, planner="graph", limits=Limits())
    assert r["root_cause_ok"] and r["component_ok"], r["got"]
    assert r["findings"] == r["findings_verified"] > 0


@pytest.fixture(scope="module")
def incidents() -> dict:
    return run_eval(ensure_set("incidents"))


def test_tuned_and_held_out_accuracy(incidents: dict) -> None:
    tuned, holdout = incidents["splits"]["tuned"], incidents["splits"]["holdout"]
    assert tuned["n"] >= 30 and holdout["n"] >= 10
    assert tuned["exact_accuracy"] >= 0.9
    assert holdout["exact_accuracy"] >= 0.85
    s = incidents["summary"]
    assert s["healthy_false_alarm_rate"] == 0.0
    assert s["citation_validity"] == 1.0
    assert s["median_tool_calls"] <= 15
    assert s["errors"] == 0


def test_reasoning_beats_the_baselines(incidents: dict) -> None:
    ours = incidents["summary"]["exact_accuracy"]
    for name, b in incidents["baselines"].items():
        assert ours - b["summary"]["exact_accuracy"] >= 0.30, name


def test_every_root_cause_is_covered(incidents: dict) -> None:
    classes = {c["expected"]["root_cause"] for c in incidents["cases"]}
    assert len(classes) == 14


def test_independent_held_out_set() -> None:
    """Incidents written from the spec alone by someone who never saw the investigator."""
    r = run_eval(ensure_set("independent"), baselines=False)
    assert r["summary"]["n"] >= 14
    assert r["summary"]["exact_accuracy"] >= 0.85
    assert r["summary"]["healthy_false_alarm_rate"] == 0.0
