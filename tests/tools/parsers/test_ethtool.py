"""ethtool -S parsing and the PFC summary over a before/now pair."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.ethtool import PfcSummary, counter_deltas, parse_ethtool_stats, pfc_summary
from hypothesis import given, settings
from hypothesis import strategies as st

# Shape per reference §4.1 ("NIC statistics:" then 5-space-indented name: value); counter names are
# the mlx5 names the kernel documentation lists there.
BEFORE = """\
NIC statistics:
     rx_packets: 1000
     tx_packets: 2000
     rx_prio3_pause: 100
     rx_prio3_pause_duration: 5000
     rx_prio3_pause_transition: 50
     tx_prio3_pause: 10
     tx_prio3_pause_duration: 800
     rx_prio0_pause: 0
     tx_prio0_pause: 0
     tx_pause_storm_warning_events: 0
     tx_pause_storm_error_events: 0
     rx_discards_phy: 7
     rx_out_of_buffer: 3
     tx_discards_phy: 0
     link_down_events_phy: 1
     rx_symbol_err_phy: 0
     rx_crc_errors_phy: 0
     rx_pcs_symbol_err_phy: 0
     outbound_pci_stalled_rd: 0
     outbound_pci_stalled_wr: 5
     outbound_pci_stalled_rd_events: 0
     outbound_pci_stalled_wr_events: 2
"""

NOW = """\
NIC statistics:
     rx_packets: 1500
     tx_packets: 2600
     rx_prio3_pause: 100
     rx_prio3_pause_duration: 5000
     rx_prio3_pause_transition: 50
     tx_prio3_pause: 90010
     tx_prio3_pause_duration: 4500800
     rx_prio0_pause: 0
     tx_prio0_pause: 0
     tx_pause_storm_warning_events: 3
     tx_pause_storm_error_events: 1
     rx_discards_phy: 4007
     rx_out_of_buffer: 3
     tx_discards_phy: 0
     link_down_events_phy: 1
     rx_symbol_err_phy: 0
     rx_crc_errors_phy: 0
     rx_pcs_symbol_err_phy: 0
     outbound_pci_stalled_rd: 0
     outbound_pci_stalled_wr: 905
     outbound_pci_stalled_rd_events: 0
     outbound_pci_stalled_wr_events: 42
"""


def test_parses_header_and_indented_counters():
    stats = parse_ethtool_stats(NOW)
    assert stats["tx_prio3_pause"] == 90010
    assert stats["tx_prio3_pause_duration"] == 4500800
    assert stats["rx_discards_phy"] == 4007
    assert "NIC statistics" not in stats
    assert len(stats) == 22


def test_tolerates_missing_header_tabs_crlf_and_odd_spacing():
    text = "rx_prio3_pause:12\r\n\ttx_prio3_pause :  7\r\n   rx_discards_phy:\t3  \n"
    assert parse_ethtool_stats(text) == {"rx_prio3_pause": 12, "tx_prio3_pause": 7, "rx_discards_phy": 3}


def test_skips_non_integer_values_and_junk_lines():
    text = "NIC statistics:\n     rx_packets: 12\n     ch0_arm: yes\n     rx_bytes: 1.5\n     neg: -3\nrandom junk\n"
    assert parse_ethtool_stats(text) == {"rx_packets": 12}


def test_empty_and_header_only_are_no_evidence():
    assert parse_ethtool_stats("") == {}
    assert parse_ethtool_stats("   \n\n") == {}
    assert parse_ethtool_stats("NIC statistics:\n") == {}


def test_error_output_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_ethtool_stats("Cannot get stats strings information: Operation not supported\n")


def test_truncated_file_keeps_complete_lines():
    stats = parse_ethtool_stats(NOW[: NOW.index("rx_discards_phy") + 8])
    assert stats["tx_pause_storm_error_events"] == 1
    assert "rx_discards_phy" not in stats


def test_binary_and_bytes_input():
    assert parse_ethtool_stats(b"NIC statistics:\n     rx_packets: 5\n\x00\xff\xfe\n") == {"rx_packets": 5}
    assert parse_ethtool_stats("NIC statistics:\n\x00\x00\x00: 1\n rx_x\x00y: 2\n") == {}
    with pytest.raises(ParseError):
        parse_ethtool_stats(None)  # type: ignore[arg-type]


def test_huge_input_and_long_lines():
    huge = NOW * (10_000_000 // len(NOW))
    assert parse_ethtool_stats(huge)["tx_prio3_pause"] == 90010
    long_line = "rx_prio3_pause: " + "9" * 1_000_000 + "\n     rx_packets: 1\n"
    assert parse_ethtool_stats(long_line) == {"rx_packets": 1}
    # More digits than a u64 can hold is a lie, not a counter.
    assert parse_ethtool_stats("NIC statistics:\n     x: " + "1" * 21 + "\n") == {}


def test_hostile_lines_that_mimic_the_format():
    text = "NIC statistics:\n" + ":" * 60_000 + "\n" + "a:" * 30_000 + "1\n" + " " * 60_000 + ": 1\n"
    assert parse_ethtool_stats(text) == {}


def test_counter_deltas_with_reset_and_missing_counters():
    before = {"a": 10, "b": 100, "gone": 5}
    now = {"a": 15, "b": 4, "new": 9}
    assert counter_deltas(before, now) == {"a": 5, "b": 4}


def test_pfc_summary_infers_lossless_priority_and_direction_counters():
    summary = pfc_summary(counter_deltas(parse_ethtool_stats(BEFORE), parse_ethtool_stats(NOW)))
    assert isinstance(summary, PfcSummary)
    assert summary.lossless_priority == 3
    assert summary.priority_inferred is True
    assert summary.lossless is not None
    assert summary.lossless.tx_pause == 90000
    assert summary.lossless.tx_pause_duration_us == 4500000
    assert summary.lossless.rx_pause == 0
    assert summary.lossless.rx_pause_transition == 0
    assert summary.tx_pause_storm_warning_events == 3
    assert summary.tx_pause_storm_error_events == 1
    assert summary.rx_discards_phy == 4000
    assert summary.rx_out_of_buffer == 0
    assert summary.link_down_events_phy == 0
    assert summary.outbound_pci_stalled == {
        "outbound_pci_stalled_rd": 0,
        "outbound_pci_stalled_rd_events": 0,
        "outbound_pci_stalled_wr": 900,
        "outbound_pci_stalled_wr_events": 40,
    }
    assert set(summary.priorities) == {0, 3}
    assert summary.warnings == []


def test_pfc_summary_given_priority_and_missing_counters():
    summary = pfc_summary({"rx_prio4_pause": 7}, priority=3)
    assert summary.lossless_priority == 3 and summary.priority_inferred is False
    assert summary.lossless is None
    assert summary.rx_discards_phy is None
    assert any("priority 3" in w for w in summary.warnings)
    with pytest.raises(ValueError):
        pfc_summary({}, priority=9)


def test_pfc_summary_without_pause_activity_or_with_a_tie():
    quiet = pfc_summary({"rx_prio3_pause": 0, "tx_prio3_pause": 0})
    assert quiet.lossless_priority is None and quiet.lossless is None
    tie = pfc_summary({"rx_prio3_pause": 5, "tx_prio4_pause": 5})
    assert tie.lossless_priority == 3
    assert tie.warnings


REAL_LINES = [line for line in (BEFORE + NOW).splitlines()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=80)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    text = "\n".join(lines)
    try:
        stats = parse_ethtool_stats(text)
    except ParseError:
        return
    pfc_summary(counter_deltas(stats, stats))
