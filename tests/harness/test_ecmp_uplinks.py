"""ECMP polarization is named on the switch whose own uplinks are unbalanced, never on a spine
(or core) whose cables down to the polarized switch carry its traffic back, nor on one whose
downlinks differ because the job sits unevenly over the leaves (``tests/ecmp_incidents.py``:
2 and 3 tiers, parallel cables, tiers named by the spec's words, by ``T0``/``T1``/``T2``, by
words nobody agreed on or not at all, cables listed on either end, snmp series or a SONiC
snapshot, three naming styles, two uplinks or more, one hot uplink or half of them hot). A
drained spine, whose cables carry only keepalives, is routing, not hashing: no imbalance."""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.harness.graph import Investigator

from tests.ecmp_incidents import CASES, CONTROLS, EcmpCase, write_ecmp


def _imbalanced(report: dict) -> set[str]:
    return {
        s["component"]
        for e in report["evidence"]
        if e["tool"] == "fabric"
        for s in e.get("signals") or []
        if s["name"] == "switch_uplink_imbalance"
    }


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_polarization_is_named_on_the_switch_whose_uplinks_are_unbalanced(
    tmp_path: Path, case: EcmpCase
) -> None:
    root = tmp_path / case.name
    truth = write_ecmp(root, case)
    report = Investigator(root).run()
    v = report["verdict"]
    assert (v["root_cause"], v["component"]) == (truth["root_cause"], truth["component"]), report[
        "status_reason"
    ]
    assert report["status"] == "confirmed", report["status_reason"]
    # the spine (or core) that carries the traffic back down the same cables is no suspect
    assert _imbalanced(report) == {truth["component"]}


@pytest.mark.parametrize("case", CONTROLS, ids=lambda c: c.name)
def test_a_job_placed_unevenly_makes_spine_downlinks_unequal_and_that_is_no_fault(
    tmp_path: Path, case: EcmpCase
) -> None:
    root = tmp_path / case.name
    write_ecmp(root, case)
    report = Investigator(root).run()
    assert report["status"] == "healthy" and report["verdict"]["root_cause"] == "healthy", report[
        "status_reason"
    ]
    assert not _imbalanced(report)
