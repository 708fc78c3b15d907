"""A report shows both ends of its chain: the cause on its part, and the job-wide evidence of the
symptom it explains; the step chart says what it shows, including for a job that stopped."""

from __future__ import annotations

from pathlib import Path

from forensic.harness.graph import Investigator

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
HANG = ROOT / "evals" / "examples" / "gpu-fell-off-bus-hang"
PCIE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def test_a_hang_report_cites_the_watchdog_and_the_stopped_steps_beside_the_lost_gpu() -> None:
    report = Investigator(HANG).run()
    assert report["verdict"]["root_cause"] == "gpu_fell_off_bus"
    claims = [f["claim"] for f in report["findings"]]
    assert any("cannot be read by NVML" in c for c in claims)
    assert any("watchdog timeouts" in c for c in claims)
    assert any("logged no step" in c for c in claims)
    assert all(f["evidence"] for f in report["findings"])
    assert not any(n.startswith("finding dropped") for n in report["notes"])


def test_a_healthy_report_gets_no_symptom_findings() -> None:
    report = Investigator(ROOT / "evals" / "examples" / "healthy-control").run()
    assert report["verdict"]["root_cause"] == "healthy"
    assert not any(f.get("subject") == "job" and "slow" in f["claim"] for f in report["findings"])


def _readable(case: Path, tmp_path: Path) -> str:
    done = cli.forensic_here("investigate", str(case), state=tmp_path, env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_the_step_chart_of_a_stopped_job_says_the_steps_ended(tmp_path: Path) -> None:
    out = _readable(HANG, tmp_path)
    assert "steps end here: the job logged no step" in out and "+0%" not in out


def test_the_step_chart_of_a_straggler_names_what_the_percentage_measures(tmp_path: Path) -> None:
    out = _readable(PCIE, tmp_path)
    assert "rank 0 +17% against the median over its last quarter of steps" in out


# -- status and confidence read together --------------------------------------------------------
from forensic.harness.failure_graph import Hypothesis, load_failure_graph  # noqa: E402
from forensic.harness.models import Verdict  # noqa: E402
from forensic.harness.render import headline  # noqa: E402
from forensic.harness.report import _status_reason  # noqa: E402


def _hyp(**kw) -> Hypothesis:
    base = dict(root_cause="pcie_downtrain", component="h1/gpu0", kind="gpu", score=5.0, probability=0.99)
    return Hypothesis(**{**base, **kw})


def test_a_probable_verdict_at_high_confidence_says_what_confirmation_lacks() -> None:
    graph = load_failure_graph()
    no_rule = _status_reason(graph, "probable", _hyp(support=["straggler@h1/gpu0"]), 0.99, [], [])
    assert no_rule.startswith("not confirmed: none of ") and "h1/gpu0" in no_rule
    required = graph.root_causes["pcie_downtrain"].confirm.require[0]
    met = [f"{required[0]}@h1/gpu0"]
    no_tie = _status_reason(graph, "probable", _hyp(support=met, required_met=True), 0.99, [], [])
    assert "no evidence ties it to the job's symptom" in no_tie
    other = _status_reason(
        graph,
        "probable",
        _hyp(support=met, required_met=True, impact_shown=True, unexplained=["thermal_throttle@h2/gpu1"]),
        0.99,
        [],
        [],
    )
    assert "also shows thermal_throttle@h2/gpu1" in other
    report = {
        "status": "probable",
        "verdict": {"root_cause": "pcie_downtrain", "component": "h1/gpu0", "confidence": 1.0},
        "status_reason": no_tie,
    }
    assert headline(report).endswith(no_tie)  # the same line


def test_a_confirmed_verdict_below_one_half_names_what_else_fits() -> None:
    graph = load_failure_graph()
    alt = [Verdict(root_cause="thermal_throttle", component="h1/gpu0", confidence=0.33)]
    why = _status_reason(graph, "confirmed", _hyp(probability=0.37), 0.37, alt, [])
    assert (
        why.startswith("its confirmation rule is met")
        and "thermal_throttle on h1/gpu0 fits the same evidence (0.33)" in why
    )
    line = headline(
        {
            "status": "confirmed",
            "status_reason": why,
            "verdict": {"root_cause": "pcie_downtrain", "component": "h1/gpu0", "confidence": 0.37},
        }
    )
    assert "(confidence 0.37)" in line and "fits the same evidence" in line
    high = headline(
        {
            "status": "confirmed",
            "status_reason": "its confirmation rule is met",
            "verdict": {"root_cause": "pcie_downtrain", "component": "h1/gpu0", "confidence": 0.97},
        }
    )
    assert high.endswith("(confidence 0.97)")


def test_every_report_says_why_its_status(make_bundle) -> None:
    for fault in (None, "pcie_downtrain"):
        report = Investigator(make_bundle(fault)).run()
        assert report["status_reason"], report["status"]
    from forensic.harness.budget import Limits

    spent = Investigator(make_bundle("pcie_downtrain"), limits=Limits(tool_calls=1)).run()
    assert spent["status"] == "inconclusive" and spent["status_reason"].startswith("budget exhausted")
