"""The one time grammar (forensic.times.parse_time) on every odd input it meets in the field."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forensic.times import MAX_TIME_TEXT, parse_time

NOON = datetime(2024, 5, 1, 12, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2024-05-01T12:00:00Z", NOON),
        ("2024-05-01t12:00:00z", NOON),  # RFC 3339 allows lower case
        ("2024-05-01 12:00:00Z", NOON),
        ("  2024-05-01T12:00:00Z\n", NOON),
        ("2024-05-01T14:00:00+02:00", NOON),
        ("2024-05-01T07:30:00-04:30", NOON),
        ("2024-05-01T12:00:00+0000", NOON),
        ("2024-05-01T12:00:00.250Z", NOON + 0.25),
        ("2024-05-01T12:00:00,5Z", NOON + 0.5),
        ("2024-05-01T12:00:00.123456789Z", NOON + 0.123456),  # past microseconds dropped
        ("2024-05-01T12:00:00", NOON),  # no zone: UTC, as the bundle spec says
        ("2024-05-01", NOON - 12 * 3600),
        ("1714564800", NOON),
        ("1714564800.5", NOON + 0.5),
    ],
)
def test_times_forensic_meets(text: str, expected: float) -> None:
    assert parse_time(text) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("value", [NOON, int(NOON), 0, -1.5])
def test_numbers_are_unix_seconds(value: float) -> None:
    assert parse_time(value) == float(value)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        "",
        "   ",
        "yesterday",
        "2024-13-01T00:00:00Z",
        "2024-02-30T00:00:00Z",
        "2024-05-01T25:00:00Z",
        "2024-05-01T12:00:00+25:00",
        "2024-W18-3",  # a week date: ISO, but not a calendar date
        "20240501T120000Z",  # the compact form
        "2024-05-01T12:00:00ZZ",
        "2024-05-01T12:00:00Z; DROP TABLE",
        "nan",
        "inf",
        "1e309",
        float("nan"),
        float("inf"),
        -float("inf"),
        "2024-05-01T12:00:00Z" + " " * MAX_TIME_TEXT,  # longer than any time
        "9" * 10_000,
        "\x00\x01\xff",
        b"2024-05-01T12:00:00Z",
        ["2024-05-01T12:00:00Z"],
        {"t": 1},
    ],
)
def test_what_is_not_a_time_is_none(value: object) -> None:
    assert parse_time(value) is None


def test_alertmanager_times_name_their_zone_and_numbers_are_not_rfc3339() -> None:
    strict = {"numbers": False, "naive_utc": False}
    assert parse_time("2024-05-01T12:00:00Z", **strict) == NOON
    assert parse_time("2024-05-01T12:00:00", **strict) is None
    assert parse_time("1714564800", **strict) is None
    # Alertmanager's "no end" is year 1: a time, before the epoch
    assert parse_time("0001-01-01T00:00:00Z", **strict) < 0


def test_the_edges_of_the_calendar_do_not_raise() -> None:
    assert parse_time("0001-01-01T00:00:00+01:00") < 0
    assert parse_time("9999-12-31T23:59:59-23:59") > 0


@given(st.one_of(st.text(max_size=80), st.floats(), st.integers(), st.binary(max_size=40), st.none()))
def test_any_input_is_a_finite_number_or_none(value: object) -> None:
    t = parse_time(value)
    assert t is None or (isinstance(t, float) and math.isfinite(t))


@given(st.datetimes(timezones=st.just(UTC)))
def test_what_isoformat_writes_reads_back(when: datetime) -> None:
    assert parse_time(when.isoformat()) == pytest.approx(when.timestamp(), abs=1e-6)
