"""Uplink balance: the busiest uplink against the colder half of a switch's uplinks, so that two
uplinks, or half of them hot, read as the imbalance they are; one slow or idle uplink does not."""

from __future__ import annotations

import pytest
from forensic.tools.fabric import _imbalance

from tests.tools.test_fabric_onset import _switch_om
from tests.tools.test_fabric_tools import by_name, run

G = 1e9 / 8  # bytes/s in one Gb/s


def test_two_uplinks_one_hot() -> None:
    sig = _imbalance("sw-a", {"Ethernet256": 84.6 * G, "Ethernet264": 3.5 * G}, "t")
    assert sig is not None and sig.component == "sw-a"
    assert "Ethernet256 alone carries 96% of the traffic of 2 uplinks" in sig.detail
    assert "top two" not in sig.detail


def test_half_the_uplinks_hot() -> None:
    rates = {"p1": 134 * G, "p2": 9 * G, "p3": 133 * G, "p4": 9.5 * G}
    sig = _imbalance("leaf-x", rates, "t")
    assert sig is not None
    assert sig.values["hot_uplinks"] == 2 and sig.values["uplinks"] == 4
    assert "2 of 4 uplinks (p1, p3)" in sig.detail


@pytest.mark.parametrize(
    ("rates", "hot"),
    [
        # a polarized hash can leave the other uplinks with nothing at all: every flow that reached
        # this tier took the same branch at the one below
        ({"a": 120 * G, "b": 2e3, "c": 0.0, "d": 1e4}, 1),
        ({"a": 90 * G, "b": 88 * G, "c": 0.0, "d": 0.0}, 2),  # half of them idle: not a drain
        ({f"e{i}": (60 * G if i < 2 else 5e3) for i in range(8)}, 2),
        ({"a": 130 * G, "b": 0.0, "c": 0.0}, 1),
    ],
)
def test_idle_uplinks_beside_few_busy_ones_are_the_hash(rates: dict[str, float], hot: int) -> None:
    sig = _imbalance("leaf-z", rates, "t")
    assert sig is not None and sig.values["uplinks"] == len(rates)
    assert sig.values["hot_uplinks"] == hot


@pytest.mark.parametrize(
    "rates",
    [
        {"a": 71 * G, "b": 70 * G, "c": 72 * G, "d": 69 * G},  # evenly spread
        {"a": 71 * G, "b": 70 * G, "c": 72 * G, "d": 14 * G},  # one slow uplink of four
        {"a": 71 * G, "b": 70 * G, "c": 15 * G},  # one slow uplink of three
        {"a": 95 * G, "b": 94 * G, "c": 96 * G, "d": 2e3},  # one drained (keepalives only)
        {"a": 140 * G, "b": 2e3},  # two uplinks, one drained: nothing left to compare
        {"a": 50 * G, "b": 31 * G},  # two uplinks within the ratio
    ],
)
def test_no_imbalance(rates: dict[str, float]) -> None:
    assert _imbalance("leaf-y", rates, "t") is None


def test_half_the_uplinks_turning_hot_late_in_the_window_is_found(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    # balanced at 10 Gb/s, then two of four uplinks at 18 Gb/s and two at 2 for the last three
    # intervals: their median (10) sits between the groups, the colder half reads 2
    _switch_om(root, lambda k, i: (18e9 if i in (1, 3) else 2e9) if k >= 7 else 10e9)
    res = run(root, "fabric")
    assert by_name(res, "switch_uplink_imbalance") == ["leaf-1"]
    assert "18.0 Gb/s vs 2.0 Gb/s on the colder half" in res.signals[0].detail
