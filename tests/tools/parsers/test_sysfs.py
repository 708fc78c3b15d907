import pytest
from forensic.tools.parsers import (
    parse_aer_counters,
    parse_int_file,
    parse_link_speed,
    parse_link_width,
    pcie_generation,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "speed"),
    [
        ("32.0 GT/s PCIe\n", 32.0),
        ("2.5 GT/s PCIe", 2.5),
        ("5.0 GT/s PCIe", 5.0),
        ("64.0 GT/s PCIe", 64.0),
        ("32 GT/s\n", 32.0),  # kernels up to 5.6
        ("5 GT/s", 5.0),
        ("2.5 GT/s", 2.5),
        ("16GT/s", 16.0),  # lspci spelling
        ("Unknown\n", None),  # a lost device
        ("Unknown speed", None),
        ("", None),
        ("garbage", None),
        ("\x00\xff", None),
        ("9" * 1_000_000, None),
    ],
)
def test_link_speed(text, speed):
    assert parse_link_speed(text) == speed


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("16\n", 16),
        ("8", 8),
        ("1", 1),
        ("x16", 16),
        ("16x", 16),
        # A lost device reads config space as all ones: 63 (6-bit field) or 255. Never a link.
        ("63\n", None),
        ("255", None),
        ("0", None),
        ("3", None),
        ("", None),
        ("sixteen", None),
        ("-16", None),
        ("1" * 100_000, None),
    ],
)
def test_link_width(text, width):
    assert parse_link_width(text) == width


@pytest.mark.parametrize(
    ("speed", "generation"),
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
        (None, None),
        (3.0, None),
        (float("nan"), None),
    ],
)
def test_pcie_generation(speed, generation):
    assert pcie_generation(speed) == generation


def test_pcie_generation_from_sysfs_text():
    assert pcie_generation(parse_link_speed("32.0 GT/s PCIe")) == 5
    assert pcie_generation(parse_link_speed("8 GT/s")) == 3


AER_CORRECTABLE = """Receiver Error 2
Bad TLP 0
Bad DLLP 0
RELAY_NUM Rollover 0
Replay Timer Timeout 0
Advisory Non-Fatal 0
Corrected Internal Error 0
Header Log Overflow 0
TOTAL_ERR_COR 2
"""


def test_aer_counters_real_sample():
    counters = parse_aer_counters(AER_CORRECTABLE)
    assert counters["Receiver Error"] == 2
    assert counters["RELAY_NUM Rollover"] == 0
    assert counters["Replay Timer Timeout"] == 0
    assert counters["TOTAL_ERR_COR"] == 2
    assert len(counters) == 9


def test_aer_counters_fatal_names_and_junk():
    text = "Undefined 0\nSurprise Down Error 1\nTLP Prefix Blocked Error 0\nTOTAL_ERR_FATAL 1\nno count here\n\n5\nBad -1\n"
    counters = parse_aer_counters(text)
    assert counters == {
        "Undefined": 0,
        "Surprise Down Error": 1,
        "TLP Prefix Blocked Error": 0,
        "TOTAL_ERR_FATAL": 1,
    }


def test_aer_counters_truncated_and_empty():
    assert parse_aer_counters(AER_CORRECTABLE[:30]) == {"Receiver Error": 2, "Bad TLP": 0}
    assert parse_aer_counters("") == {}
    assert parse_aer_counters("x" * 2_000_000) == {}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("230539874932483\n", 230539874932483),
        ("0", 0),
        ("-1\n", -1),
        ("0x1f", 31),
        ("", None),
        ("N/A", None),
        ("1_000", None),
        ("12 34", None),
        ("9" * 10_000, None),
        ("\x00", None),
    ],
)
def test_int_file(text, value):
    assert parse_int_file(text) == value


@given(st.text(max_size=200))
def test_fuzz_never_raises(text):
    parse_link_speed(text)
    parse_link_width(text)
    parse_aer_counters(text)
    parse_int_file(text)
