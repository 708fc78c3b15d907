"""The eval runner: strict top-1 scoring, splits, baselines, and a crash that does not stop the run."""

from __future__ import annotations

import json
from pathlib import Path

from forensic.evals.runner import find_cases, run_eval

from tests.conftest import build_bundle


def _case(root: Path, name: str, fault: str | None, component: str | None) -> None:
    build_bundle(root / name / "bundle", fault)
    (root / name / "truth.json").write_text(
        json.dumps({"root_cause": fault or "healthy", "component": component})
    )


def test_scoring_splits_and_baselines(tmp_path: Path) -> None:
    _case(tmp_path, "case-a", "pcie_downtrain", "node-b.example/gpu2")
    _case(tmp_path, "case-b", None, None)
    _case(tmp_path / "holdout", "case-c", "thermal_throttle", "node-b.example/gpu2")
    _case(
        tmp_path, "case-d", "thermal_throttle", "node-a.example/gpu0"
    )  # a wrong truth: must score as a miss
    result = run_eval(tmp_path)
    assert result["schema"] == "forensic.eval/v1"
    by_id = {c["id"]: c for c in result["cases"]}
    assert by_id["case-a"]["root_cause_ok"] and by_id["case-a"]["component_ok"]
    assert by_id["case-d"]["root_cause_ok"] and not by_id["case-d"]["component_ok"]
    assert by_id["case-c"]["split"] == "holdout"
    s = result["summary"]
    assert s["n"] == 4 and s["exact_accuracy"] == 0.75 and s["healthy_false_alarm_rate"] == 0.0
    assert s["citation_validity"] == 1.0
    assert result["splits"]["holdout"]["n"] == 1 and result["splits"]["tuned"]["n"] == 3
    assert set(result["baselines"]) == {"fleet_average", "signatures"}
    # the signature rules blame the first link below its max: the idle spare's power-saving generation
    assert result["baselines"]["signatures"]["summary"]["n"] == 4


def test_a_crashing_case_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    _case(tmp_path, "case-a", "hbm_degradation", "node-b.example/gpu2")
    (tmp_path / "case-z" / "bundle").mkdir(parents=True)
    (tmp_path / "case-z" / "bundle" / "incident.json").write_text("{broken")
    (tmp_path / "case-z" / "truth.json").write_text('{"root_cause": "healthy", "component": null}')
    result = run_eval(tmp_path, baselines=False)
    by_id = {c["id"]: c for c in result["cases"]}
    assert "error" in by_id["case-z"] and not by_id["case-z"]["root_cause_ok"]
    assert by_id["case-a"]["root_cause_ok"]
    assert result["summary"]["errors"] == 1


def test_find_cases_accepts_a_single_case(tmp_path: Path) -> None:
    _case(tmp_path, "only", None, None)
    assert find_cases(tmp_path / "only") == [tmp_path / "only"]
