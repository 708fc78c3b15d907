"""The same incident in another presentation the bundle spec allows gets the same verdict.

Every example case is investigated as recorded and after each transformation of
``transforms.py``. Root cause and component (through the transformation's renames) must match
the untransformed run's, and the status must not get stronger. A lossy transformation (it drops
optional files) may weaken the status; a status other than ``inconclusive`` must still name the
same fault, so a dropped source never turns into evidence of health or of another fault.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from forensic.harness.graph import Investigator
from langgraph.checkpoint.memory import InMemorySaver

from tests.metamorphic.transforms import TRANSFORMS, Transform, map_component, transformed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir() and (p / "truth.json").is_file())

# How much a status claims: a transformed run may claim less, never more.
STRENGTH = {"inconclusive": 0, "probable": 1, "confirmed": 2, "healthy": 2}

# Transformations that change a verdict today, with why (each is a reading gap).
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def _verdict(bundle: Path) -> dict[str, Any]:
    report = Investigator(bundle, checkpointer=InMemorySaver()).run()
    v = report["verdict"]
    return {"root_cause": v["root_cause"], "component": v.get("component"), "status": report["status"]}


@functools.cache
def _baseline(case: str) -> dict[str, Any]:
    return _verdict(EXAMPLES / case / "bundle")


def test_there_are_cases_and_transformations() -> None:
    assert len(CASES) >= 6 and len(TRANSFORMS) >= 15


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for t in TRANSFORMS:
            reason = KNOWN_GAPS.get((case, t.name))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(case, t, id=f"{case}-{t.name}", marks=marks))
    return out


@pytest.mark.parametrize(("case", "t"), _params())
def test_same_incident_same_verdict(tmp_path: Path, case: str, t: Transform) -> None:
    base = _baseline(case)
    renames = transformed(t, EXAMPLES / case / "bundle", tmp_path / "bundle")
    got = _verdict(tmp_path / "bundle")
    want = {"root_cause": base["root_cause"], "component": map_component(base["component"], renames)}
    assert STRENGTH[got["status"]] <= STRENGTH[base["status"]], (base, got)
    if t.lossy and got["status"] == "inconclusive":
        return
    assert {k: got[k] for k in want} == want, (base, got)
