"""ibstat, sysfs port state/rate, and IB counter deltas."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.infiniband import (
    IB_COUNTER_UNITS,
    IB_DATA_WORD_BYTES,
    ib_counter_deltas,
    parse_ib_port_state,
    parse_ib_rate,
    parse_ibstat,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# Reference §4.4, verbatim from https://github.com/NVIDIA/nccl/issues/1591.
IBSTAT_REAL = """\
CA 'mlx5_5'
        CA type: MT4129
        Number of ports: 1
        Firmware version: 28.41.1000
        Hardware version: 0
        Port 1:
                State: Active
                Physical state: LinkUp
                Rate: 400
                Link layer: InfiniBand
"""

# Full ibstat layout (GUID, LID and capability lines), two CAs, one RoCE port down.
IBSTAT_TWO = """\
CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.41.1000
\tHardware version: 0
\tNode GUID: 0x946dae0300a1b2c4
\tSystem image GUID: 0x946dae0300a1b2c4
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 17
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0x946dae0300a1b2c4
\t\tLink layer: InfiniBand
CA 'mlx5_bond_0'
\tCA type: MT4125
\tNumber of ports: 1
\tFirmware version: 22.39.1002
\tHardware version: 0
\tNode GUID: 0x1070fd0300112233
\tSystem image GUID: 0x1070fd0300112233
\tPort 1:
\t\tState: Down
\t\tPhysical state: Disabled
\t\tRate: 40
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x00010000
\t\tPort GUID: 0x1270fdfffe112233
\t\tLink layer: Ethernet
"""

# Reference §4.2: real counter values of mlx5_0 port 1 (leptonai/gpud testdata, H100/ConnectX-7).
COUNTERS_REAL = {
    "VL15_dropped": 0,
    "excessive_buffer_overrun_errors": 15,
    "link_downed": 0,
    "link_error_recovery": 0,
    "local_link_integrity_errors": 0,
    "port_rcv_data": 230539874932483,
    "port_rcv_errors": 14,
    "port_rcv_packets": 317548853677,
    "port_rcv_switch_relay_errors": 1,
    "port_xmit_data": 230442669431839,
    "port_xmit_discards": 0,
    "port_xmit_packets": 315487941081,
    "port_xmit_wait": 2489603687,
    "symbol_error": 0,
}


def test_real_ibstat():
    [ca] = parse_ibstat(IBSTAT_REAL)
    assert ca.name == "mlx5_5"
    assert ca.ca_type == "MT4129"
    assert ca.number_of_ports == 1
    assert ca.firmware_version == "28.41.1000"
    assert ca.hardware_version == "0"
    [port] = ca.ports
    assert port.number == 1
    assert port.state == "Active"
    assert port.physical_state == "LinkUp"
    assert port.rate_gbps == 400.0
    assert port.link_layer == "InfiniBand"
    assert port.is_active


def test_two_cas_with_guids_and_a_down_roce_port():
    ib, roce = parse_ibstat(IBSTAT_TWO)
    assert ib.node_guid == "0x946dae0300a1b2c4"
    assert ib.ports[0].base_lid == 17 and ib.ports[0].sm_lid == 1
    assert ib.ports[0].port_guid == "0x946dae0300a1b2c4"
    assert roce.name == "mlx5_bond_0"
    assert roce.ports[0].link_layer == "Ethernet"
    assert roce.ports[0].state == "Down" and not roce.ports[0].is_active


def test_ibstat_truncated_empty_and_unusable():
    [ca] = parse_ibstat(IBSTAT_REAL[: IBSTAT_REAL.index("Rate")])
    assert ca.ports[0].state == "Active" and ca.ports[0].rate_gbps is None
    assert parse_ibstat("") == []
    with pytest.raises(ParseError):
        parse_ibstat("ibpanic: [12345] main: stat of IB device 'mlx5_0' failed: No such file or directory\n")


def test_ibstat_binary_huge_and_hostile():
    assert parse_ibstat(IBSTAT_REAL.encode() + b"\x00\xff\n")[0].name == "mlx5_5"
    huge = IBSTAT_TWO * (10_000_000 // len(IBSTAT_TWO))
    cas = parse_ibstat(huge)
    assert len(cas) == 2 * (10_000_000 // len(IBSTAT_TWO))
    hostile = (
        "CA '"
        + "x" * 1_000_000
        + "'\n"
        + IBSTAT_REAL
        + "\tPort 1:"
        + " " * 60_000
        + "\n\t\tRate: "
        + "9" * 50_000
    )
    [ca] = parse_ibstat(hostile)
    assert ca.ports[0].rate_gbps == 400.0
    lying = "CA 'mlx5_9'\n\tPort 99999:\n\t\tState: Active\n\tNumber of ports: lots\n\t\tRate: fast\n"
    [ca] = parse_ibstat(lying)
    assert ca.ports == [] and ca.number_of_ports is None


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("400 Gb/sec (4X NDR)", 400.0),  # reference §4.2, sysfs rate
        ("400 Gb/sec (4X NDR)\n", 400.0),
        ("200 Gb/sec (4X HDR)", 200.0),
        ("2.5 Gb/sec (1X SDR)", 2.5),
        ("400", 400.0),  # ibstat
        ("56", 56.0),
    ],
)
def test_ib_rate(text, gbps):
    assert parse_ib_rate(text) == gbps


@pytest.mark.parametrize("text", ["", "fast", "Gb/sec", "400 Mb/sec", "1" * 100, "\x00"])
def test_ib_rate_unusable(text):
    with pytest.raises(ParseError):
        parse_ib_rate(text)


def test_ib_port_state():
    active = parse_ib_port_state("4: ACTIVE")  # reference §4.2
    assert (active.code, active.name, active.is_up) == (4, "ACTIVE", True)
    link = parse_ib_port_state("5: LinkUp\n")
    assert (link.code, link.name, link.is_up) == (5, "LinkUp", True)
    polling = parse_ib_port_state("2: Polling")
    assert not polling.is_up
    assert parse_ib_port_state("1: DOWN").code == 1
    assert parse_ib_port_state("Active").code is None
    assert parse_ib_port_state("7: Phy Test").name == "Phy Test"
    for bad in ("", "4:", ": ACTIVE", "4: " + "A" * 1000, "\x00\x01"):
        with pytest.raises(ParseError):
            parse_ib_port_state(bad)


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("4: ACTIVE\n", (4, "ACTIVE")),
        ("1: DOWN", (1, "DOWN")),
        ("5: LinkUp\n", (5, "LinkUp")),
        ("3: Disabled", (3, "Disabled")),
        ("ACTIVE", (None, "ACTIVE")),  # ibstat's bare word
        ("", None),
        (":", None),
        ("4:" + " " * 100_000, None),
    ],
)
def test_ib_port_state_sysfs_files(text, state):
    """The cases of the former ``sysfs.parse_ib_state``; unreadable text raises instead of giving None."""
    if state is None:
        with pytest.raises(ParseError):
            parse_ib_port_state(text)
    else:
        parsed = parse_ib_port_state(text)
        assert (parsed.code, parsed.name) == state


def test_counter_units_document_words_and_ticks():
    assert IB_COUNTER_UNITS["port_rcv_data"] == "4-byte words"
    assert IB_COUNTER_UNITS["port_xmit_data"] == "4-byte words"
    assert IB_COUNTER_UNITS["port_xmit_wait"] == "ticks"
    assert IB_DATA_WORD_BYTES == 4


def test_counter_deltas_rates_resets_and_units():
    now = dict(
        COUNTERS_REAL,
        port_rcv_data=COUNTERS_REAL["port_rcv_data"] + 1_000_000,
        port_xmit_wait=COUNTERS_REAL["port_xmit_wait"] + 500,
        symbol_error=0,
        port_rcv_errors=3,
    )
    deltas = ib_counter_deltas(COUNTERS_REAL, now, seconds=10.0)
    rcv = deltas["port_rcv_data"]
    assert rcv.delta == 1_000_000 and rcv.rate_per_s == 100_000.0 and not rcv.reset
    assert rcv.unit == "4-byte words"
    assert deltas["port_xmit_wait"].delta == 500 and deltas["port_xmit_wait"].unit == "ticks"
    assert deltas["port_rcv_errors"].reset and deltas["port_rcv_errors"].delta == 3
    assert deltas["symbol_error"].delta == 0 and deltas["symbol_error"].unit is None
    assert set(deltas) == set(COUNTERS_REAL)


def test_counter_deltas_without_window_and_missing_counters():
    deltas = ib_counter_deltas({"a": 1}, {"a": 3, "b": 4}, seconds=None)
    assert set(deltas) == {"a"} and deltas["a"].rate_per_s is None
    for seconds in (0.0, -5.0, float("nan"), float("inf")):
        assert ib_counter_deltas({"a": 1}, {"a": 3}, seconds)["a"].rate_per_s is None


def test_saturated_error_counter_is_flagged():
    deltas = ib_counter_deltas(
        {"symbol_error": 65535, "link_downed": 3}, {"symbol_error": 65535, "link_downed": 255}, 60
    )
    assert deltas["symbol_error"].delta == 0 and deltas["symbol_error"].saturated
    assert deltas["link_downed"].saturated
    wait = ib_counter_deltas({"port_xmit_wait": 2**32 - 1}, {"port_xmit_wait": 2**32 - 1}, 60)[
        "port_xmit_wait"
    ]
    assert wait.saturated and wait.delta == 0
    assert not ib_counter_deltas({"port_xmit_wait": 1}, {"port_xmit_wait": 2**40}, 60)[
        "port_xmit_wait"
    ].saturated


REAL_LINES = (IBSTAT_REAL + IBSTAT_TWO).splitlines()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=60)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    text = "\n".join(lines)
    for parse in (parse_ibstat, parse_ib_rate, parse_ib_port_state):
        try:
            parse(text)
        except ParseError:
            pass
