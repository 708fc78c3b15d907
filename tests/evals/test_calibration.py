"""Calibration: a reliability table and the Brier score, computed from the cases' confidences."""

from __future__ import annotations

import json
from pathlib import Path

from forensic.evals.calibration import brier, calibration, reliability
from forensic.evals.runner import render_scoreboard, run_eval
from rich.console import Console

from tests.evals.test_runner import _case


def _c(conf: float | None, ok: bool, status: str = "probable") -> dict:
    return {"got": {"confidence": conf, "status": status}, "root_cause_ok": ok, "component_ok": ok}


def test_brier_and_buckets_from_known_cases() -> None:
    cases = [_c(0.95, True), _c(0.95, False, "confirmed"), _c(0.6, True), _c(1.0, True), _c(None, False)]
    # (0.05^2 + 0.95^2 + 0.4^2 + 0 + 0) / 5
    assert brier(cases) == round((0.0025 + 0.9025 + 0.16) / 5, 4)
    rows = {r["bucket"]: r for r in reliability(cases)}
    assert rows["[0.90, 0.97)"]["n"] == 2 and rows["[0.90, 0.97)"]["accuracy"] == 0.5
    assert rows["[0.97, 1.00]"]["n"] == 1 and rows["[0.97, 1.00]"]["accuracy"] == 1.0
    assert rows["[0.50, 0.70)"]["mean_confidence"] == 0.6
    assert rows["[0.00, 0.50)"]["accuracy"] == 0.0  # a crash counts as confidence 0, wrong
    assert calibration(cases)["wrong_confirmed"] == 1


def test_eval_reports_calibration_in_json_and_table(tmp_path: Path) -> None:
    _case(tmp_path, "case-a", "pcie_downtrain", "node-b.example/gpu2")
    _case(tmp_path, "case-b", None, None)
    result = run_eval(tmp_path, baselines=False)
    json.dumps(result)
    cal = result["calibration"]
    assert sum(r["n"] for r in cal["reliability"]) == 2
    assert 0.0 <= cal["brier"] <= 1.0
    assert all(isinstance(c["got"]["confidence"], float) for c in result["cases"])
    con = Console(width=160, record=True)
    render_scoreboard(result, con)
    text = con.export_text()
    assert "Brier score" in text and "confidence" in text and "wrong conf." in text
