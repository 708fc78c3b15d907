"""The failure graph is data: every root cause of the spec, valid tests, and belief that moves the right way."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from forensic.harness.failure_graph import PLAYBOOK_DIR, beliefs, default_graph, load_failure_graph, observe
from forensic.sandbox import PlaybookError

SPEC_ROOT_CAUSES = {
    "pcie_downtrain",
    "pfc_pause_storm",
    "ecmp_hash_polarization",
    "link_degradation",
    "thermal_throttle",
    "power_throttle",
    "hbm_degradation",
    "gpu_fell_off_bus",
    "nvlink_fault",
    "silent_data_corruption",
    "host_contention",
    "input_pipeline_stall",
    "nccl_misconfiguration",
    "healthy",
}


def test_every_root_cause_of_the_spec_is_in_the_graph() -> None:
    g = default_graph()
    assert set(g.root_causes) == SPEC_ROOT_CAUSES
    for rc in g.root_causes.values():
        assert rc.remediation, rc.id
        if rc.id != "healthy":
            assert rc.tests and rc.confirm.require and rc.mechanisms, rc.id
            # every confirmation signal is one some test of this root cause looks for
            tested = {t.signal for t in rc.tests}
            assert all(any(s in tested for s in group) for group in rc.confirm.require), rc.id


def test_mechanisms_lead_to_symptoms() -> None:
    g = default_graph()
    for m in g.mechanisms.values():
        assert m.symptoms and all(s in g.symptoms for s in m.symptoms)


def test_a_broken_playbook_is_a_clear_error(tmp_path: Path) -> None:
    shutil.copytree(PLAYBOOK_DIR, tmp_path / "pb")
    (tmp_path / "pb" / "root_causes" / "pcie_downtrain.toml").write_text('id = "pcie_downtrain"\nprior = 7\n')
    with pytest.raises(PlaybookError, match="pcie_downtrain.toml"):
        load_failure_graph(tmp_path / "pb")


def test_a_new_failure_class_is_a_new_file(tmp_path: Path) -> None:
    shutil.copytree(PLAYBOOK_DIR, tmp_path / "pb")
    (tmp_path / "pb" / "root_causes" / "fan_failure.toml").write_text(
        'id = "fan_failure"\ntitle = "fan"\nkinds = ["gpu"]\nmechanisms = ["clock_reduction"]\nprior = 0.01\n'
        '[[tests]]\ntool = "gpu_health"\nsignal = "gpu_hot"\nweight = 2.0\n[confirm]\nrequire = [["gpu_hot"]]\n'
    )
    assert "fan_failure" in load_failure_graph(tmp_path / "pb").root_causes


def _rec(i: int, tool: str, signals: list[dict], covered: list[str]) -> dict:
    return {"id": f"ev-{i}", "tool": tool, "status": "ok", "signals": signals, "covered": covered}


def test_belief_prefers_the_cause_whose_discriminating_signal_is_present() -> None:
    g = default_graph()
    comp = "h/gpu1"
    straggler = {"name": "straggler", "component": comp, "kind": "gpu", "detail": "", "values": {}}
    degraded = {"name": "pcie_degraded", "component": comp, "kind": "gpu", "detail": "", "values": {}}
    recs = [
        _rec(1, "job_steps", [straggler], [comp]),
        _rec(2, "pcie_link", [degraded], [comp]),
        _rec(3, "gpu_health", [], [comp]),
    ]
    hyps = beliefs(g, observe(recs))
    assert (hyps[0].root_cause, hyps[0].component, hyps[0].confirmed) == ("pcie_downtrain", comp, True)
    thermal = next(h for h in hyps if h.root_cause == "thermal_throttle")
    assert thermal.probability < 0.05  # gpu_health looked at it and saw no thermal bits


def test_no_signal_means_healthy_leads() -> None:
    hyps = beliefs(default_graph(), observe([_rec(1, "gpu_health", [], ["h/gpu0"])]))
    assert hyps[0].root_cause == "healthy"
