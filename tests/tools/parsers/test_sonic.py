"""SONiC show pfcwd stats / show pfc counters / show interfaces counters."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.sonic import parse_interfaces_counters, parse_pfc_counters, parse_pfcwd_stats
from hypothesis import given, settings
from hypothesis import strategies as st

# Reference §4.5, verbatim from https://github.com/sonic-net/sonic-buildimage/issues/8483.
PFCWD_REAL = """\
      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP
-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------
Ethernet4:3   stormed                        1/0    0/41507426           0/0         0/41507426                0/0
"""

# Same tabulate layout, more rows and different widths (sonic-utilities pfcwd/main.py columns).
PFCWD_WIDE = """\
        QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP
-------------  -----------  -------------------------  ------------  ------------  -----------------  -----------------
  Ethernet0:3  operational                        2/2     120/5,000           0/0              0/100                0/0
  Ethernet0:4  operational                        0/0           0/0           0/0                0/0                0/0
Ethernet124:3          N/A                        3/2       0/12345        5/1000            0/12345             5/1000
"""

# sonic-utilities pfcstat layout (tabulate 'simple', thousands separators, N/A when SAI lacks a counter).
PFC_COUNTERS = """\
  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0  12,345       0       0       0       0
Ethernet4       0       0       0       0       0       0       0     N/A

  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0       7       0       0       0       0
Ethernet4       0       0       0  1,234,567       0       0       0       0
"""

# sonic-utilities tests/portstat_test.py (intf_counters_before_clear), verbatim rows.
IFACE_COUNTERS = """\
    IFACE    STATE    RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR    TX_OK        TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR
---------  -------  -------  ------------  ---------  --------  --------  --------  -------  ------------  ---------  --------  --------  --------
Ethernet0        D        8  2000.00 MB/s     64.00%        10       100       N/A       10  1500.00 MB/s     48.00%       N/A       N/A       N/A
Ethernet4      N/A        4   204.80 KB/s        N/A         0     1,000       N/A       40   204.85 KB/s        N/A       N/A       N/A       N/A
Ethernet8      N/A        6  1350.00 KB/s        N/A       100        10       N/A       60    13.37 MB/s        N/A       N/A       N/A       N/A
"""

IFACE_ALL = """\
    IFACE    STATE    RX_OK    RX_BPS    RX_PPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR    TX_OK    TX_BPS    TX_PPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR    TRIM    TRIM_TX    TRIM_DRP
---------  -------  -------  --------  --------  ---------  --------  --------  --------  -------  --------  --------  ---------  --------  --------  --------  ------  ---------  ----------
Ethernet0        U      100  0.00 B/s    0.00/s      0.00%         0         0         0        0  0.00 B/s    1.50/s      0.00%         0       100         0     100         50          50
"""


def test_real_pfcwd_stats():
    [queue] = parse_pfcwd_stats(PFCWD_REAL)
    assert (queue.port, queue.queue, queue.status) == ("Ethernet4", 3, "stormed")
    assert (queue.storm_detected, queue.storm_restored) == (1, 0)
    assert (queue.tx_ok, queue.tx_drop) == (0, 41507426)
    assert (queue.rx_ok, queue.rx_drop) == (0, 0)
    assert (queue.tx_last_ok, queue.tx_last_drop) == (0, 41507426)
    assert (queue.rx_last_ok, queue.rx_last_drop) == (0, 0)
    assert queue.line_no == 3


def test_pfcwd_other_widths_commas_and_na_status():
    rows = parse_pfcwd_stats(PFCWD_WIDE)
    assert [(r.port, r.queue, r.status) for r in rows] == [
        ("Ethernet0", 3, "operational"),
        ("Ethernet0", 4, "operational"),
        ("Ethernet124", 3, "unknown"),
    ]
    assert rows[0].tx_drop == 5000 and rows[0].tx_last_drop == 100
    assert rows[2].storm_detected == 3 and rows[2].rx_drop == 1000


def test_pfcwd_single_spaced_row_still_reads():
    text = (
        PFCWD_REAL.splitlines()[0]
        + "\n"
        + PFCWD_REAL.splitlines()[1]
        + "\nEthernet8:3 stormed 4/3 1/2 3/4 5/6 7/8\n"
    )
    [row] = parse_pfcwd_stats(text)
    assert row.port == "Ethernet8" and row.rx_last_drop == 8


def test_pfcwd_empty_header_only_truncated_and_unusable():
    assert parse_pfcwd_stats("") == []
    assert parse_pfcwd_stats("\n".join(PFCWD_REAL.splitlines()[:2])) == []
    assert parse_pfcwd_stats(PFCWD_REAL[:-20]) == []  # last row cut: columns no longer line up
    with pytest.raises(ParseError):
        parse_pfcwd_stats(PFC_COUNTERS)
    with pytest.raises(ParseError):
        parse_pfcwd_stats("Error: PFC watchdog is not supported on this platform\n")


def test_pfcwd_lying_rows():
    header = "\n".join(PFCWD_REAL.splitlines()[:2])
    lies = [
        "Ethernet4   stormed   1/0   0/0   0/0   0/0   0/0",  # no queue
        ":3   stormed   1/0   0/0   0/0   0/0   0/0",  # no port
        "Ethernet4:x   hacked   a/b   -1/2   1e9/0   0/0   99999999999999999999999/0",
    ]
    rows = parse_pfcwd_stats(header + "\n" + "\n".join(lies) + "\n")
    [row] = rows
    assert row.queue is None and row.status == "unknown"
    assert row.storm_detected is None and row.tx_ok is None and row.rx_ok is None and row.rx_last_ok is None


def test_real_layout_pfc_counters():
    counters = parse_pfc_counters(PFC_COUNTERS)
    assert counters.rx["Ethernet0"] == [0, 0, 0, 12345, 0, 0, 0, 0]
    assert counters.rx["Ethernet4"][7] is None
    assert counters.tx["Ethernet0"][3] == 7
    assert counters.tx["Ethernet4"][3] == 1234567
    assert counters.warnings == []


def test_pfc_counters_with_cache_note_and_truncation():
    text = "Last cached time was 2026-04-17 02:11:09.123456\n" + PFC_COUNTERS.replace(
        "\n\n", "\nLast cached time was 2026-04-17 02:11:09.123456\n"
    )
    counters = parse_pfc_counters(text)
    assert set(counters.rx) == set(counters.tx) == {"Ethernet0", "Ethernet4"}
    assert counters.warnings == []
    cut = parse_pfc_counters(PFC_COUNTERS[: PFC_COUNTERS.index("  Port Tx")])
    assert cut.tx == {} and cut.rx["Ethernet0"][3] == 12345
    half_row = parse_pfc_counters(PFC_COUNTERS[:-30])
    assert "Ethernet4" not in half_row.tx and half_row.warnings


def test_pfc_counters_empty_and_unusable():
    empty = parse_pfc_counters("")
    assert empty.rx == {} and empty.tx == {}
    with pytest.raises(ParseError):
        parse_pfc_counters(PFCWD_REAL)


def test_interfaces_counters_upstream_fixture():
    table = parse_interfaces_counters(IFACE_COUNTERS)
    e0, e4, e8 = table.interfaces
    assert (e0.iface, e0.state, e0.rx_ok, e0.rx_err, e0.rx_drp, e0.rx_ovr) == (
        "Ethernet0",
        "down",
        8,
        10,
        100,
        None,
    )
    assert e0.rx_bps == pytest.approx(2000.00e6) and e0.rx_util_pct == pytest.approx(64.0)
    assert e0.tx_bps == pytest.approx(1500.00e6) and e0.tx_util_pct == pytest.approx(48.0)
    assert e0.tx_drp is None
    assert e4.state == "unknown" and e4.rx_drp == 1000 and e4.rx_bps == pytest.approx(204.80e3)
    assert e4.rx_util_pct is None
    assert e8.tx_bps == pytest.approx(13.37e6) and e8.tx_ok == 60
    assert table.warnings == []


def test_interfaces_counters_all_columns():
    [row] = parse_interfaces_counters(IFACE_ALL).interfaces
    assert row.state == "up" and row.rx_pps == 0.0 and row.tx_pps == 1.5 and row.tx_drp == 100
    assert row.extra == {"TRIM": "100", "TRIM_TX": "50", "TRIM_DRP": "50"}


def test_interfaces_counters_bad_rows_empty_and_unusable():
    text = IFACE_COUNTERS + "Ethernet12  U  1\n"
    table = parse_interfaces_counters(text)
    assert len(table.interfaces) == 3 and table.warnings
    assert parse_interfaces_counters("").interfaces == []
    with pytest.raises(ParseError):
        parse_interfaces_counters("% Error: command not found\n")


def test_binary_huge_and_hostile_inputs():
    assert parse_pfcwd_stats(PFCWD_REAL.encode() + b"\x00\xff\xfe")[0].tx_drop == 41507426
    huge = PFC_COUNTERS * (10_000_000 // len(PFC_COUNTERS))
    assert parse_pfc_counters(huge).rx["Ethernet0"][3] == 12345
    table = parse_interfaces_counters(IFACE_COUNTERS + ("Ethernet0  " * 100_000 + "\n") * 3)
    assert len(table.interfaces) == 3
    bait = "-" * 70_000 + "\n" + " -" * 30_000 + "\n" + "  " * 30_000 + "x\n" + "a b " * 15_000 + "\n"
    for parse in (parse_pfcwd_stats, parse_pfc_counters, parse_interfaces_counters):
        with pytest.raises(ParseError):
            parse(bait)
    many_bad = IFACE_COUNTERS + "bad row\n" * 10_000
    assert len(parse_interfaces_counters(many_bad).warnings) <= 21


REAL_LINES = (PFCWD_REAL + PFCWD_WIDE + PFC_COUNTERS + IFACE_COUNTERS + IFACE_ALL).splitlines()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=60)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    text = "\n".join(lines)
    for parse in (parse_pfcwd_stats, parse_pfc_counters, parse_interfaces_counters):
        try:
            parse(text)
        except ParseError:
            pass
