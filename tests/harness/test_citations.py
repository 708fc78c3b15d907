"""A claim stands only on evidence that exists, succeeded, concerns its component and carries its numbers."""

from __future__ import annotations

from forensic.harness.citations import check, numbers_in
from forensic.harness.models import Finding

REC = {
    "ev-1": {
        "id": "ev-1",
        "status": "ok",
        "summary": "8 PCIe links read",
        "covered": ["h1/gpu3", "h1"],
        "signals": [
            {
                "name": "pcie_degraded",
                "component": "h1/gpu3",
                "kind": "gpu",
                "detail": "h1/gpu3 PCIe link at 16 GT/s x8, capable of 32 GT/s x16",
                "values": {"cur_width": 8},
            }
        ],
        "data": {},
    },
    "ev-2": {"id": "ev-2", "status": "error", "summary": "failed", "covered": [], "signals": [], "data": {}},
    "ev-3": {
        "id": "ev-3",
        "status": "ok",
        "summary": "h2 fine",
        "covered": ["h2/gpu0"],
        "signals": [],
        "data": {},
    },
}


def test_valid_claim() -> None:
    f = check(
        Finding(claim="h1/gpu3 PCIe link at 16 GT/s x8, capable of 32 GT/s x16", evidence=["ev-1"]),
        REC,
        "h1/gpu3",
    )
    assert f.verified and f.problem is None


def test_missing_record() -> None:
    assert not check(Finding(claim="x", evidence=["ev-9"]), REC, "h1/gpu3").verified


def test_failed_record() -> None:
    f = check(Finding(claim="x", evidence=["ev-2"]), REC, "h1/gpu3")
    assert not f.verified and "did not succeed" in f.problem


def test_record_about_another_component() -> None:
    f = check(Finding(claim="link fine", evidence=["ev-3"]), REC, "h1/gpu3")
    assert not f.verified and "does not concern" in f.problem


def test_numbers_the_evidence_does_not_carry() -> None:
    f = check(Finding(claim="h1/gpu3 PCIe link at 16 GT/s x4", evidence=["ev-1"]), REC, "h1/gpu3")
    assert not f.verified and "does not carry" in f.problem


def test_no_citation() -> None:
    assert not check(Finding(claim="it is the GPU", evidence=[]), REC, "h1/gpu3").verified


def test_identifier_digits_are_not_claimed_numbers() -> None:
    assert numbers_in("gpu-a017/gpu3 mlx5_3 at 91 C and 1.5 s, x8") == {91.0, 1.5, 8.0}


def test_numbers_buried_in_bulk_data_do_not_count() -> None:
    rec = {
        "ev-5": {
            "id": "ev-5",
            "status": "ok",
            "summary": "16 links read",
            "covered": ["h1/gpu3"],
            "signals": [],
            "data": {"links": {"h1/gpu7": "x4"}},
        }
    }
    f = check(Finding(claim="h1/gpu3 PCIe link at x4", evidence=["ev-5"]), rec, "h1/gpu3")
    assert not f.verified


def test_numbers_of_another_components_signal_do_not_count() -> None:
    f = check(
        Finding(claim="h2/gpu0 PCIe link at 16 GT/s x8", evidence=["ev-1"]),
        {**REC, "ev-1": {**REC["ev-1"], "covered": ["h1/gpu3", "h1", "h2/gpu0"]}},
        "h2/gpu0",
    )
    assert not f.verified
