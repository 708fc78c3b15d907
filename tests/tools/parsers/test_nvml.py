import json

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers import (
    CLOCK_EVENT_REASONS,
    PciAddress,
    decode_clock_event_reasons,
    is_power,
    is_thermal,
    parse_nvml_json,
)
from hypothesis import given
from hypothesis import strategies as st

# The example from spec/bundle.md, verbatim.
BUNDLE_EXAMPLE = """{"driver_version": "550.90.07", "devices": [{
  "index": 3, "uuid": "GPU-...", "pci_bus_id": "00000000:9B:00.0", "name": "NVIDIA H100 80GB HBM3",
  "nvmlDeviceGetCurrPcieLinkGeneration": 5, "nvmlDeviceGetMaxPcieLinkGeneration": 5,
  "nvmlDeviceGetCurrPcieLinkWidth": 8, "nvmlDeviceGetMaxPcieLinkWidth": 16,
  "nvmlDeviceGetPcieReplayCounter": 0,
  "nvmlDeviceGetTemperature": 61, "nvmlDeviceGetPowerUsage": 512000, "nvmlDeviceGetEnforcedPowerLimit": 700000,
  "nvmlDeviceGetClockInfo": {"sm": 1980, "mem": 2619}, "nvmlDeviceGetMaxClockInfo": {"sm": 1980, "mem": 2619},
  "nvmlDeviceGetCurrentClocksEventReasons": 0,
  "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": 0, "uncorrected_volatile": 0},
  "nvmlDeviceGetRemappedRows": {"corrected": 0, "uncorrected": 0, "pending": false, "failure": false}
}], "events": [{"device": 3, "type": "XidCriticalError", "data": 79, "time": "2026-04-17T02:11:09Z"}]}"""


def test_bundle_example():
    snap = parse_nvml_json(BUNDLE_EXAMPLE)
    assert snap.driver_version == "550.90.07"
    assert snap.warnings == []
    [dev] = snap.devices
    assert dev.index == 3
    assert dev.name == "NVIDIA H100 80GB HBM3"
    assert dev.pci == PciAddress(bus=0x9B, device=0, function=0)
    assert (dev.pcie_gen_current, dev.pcie_gen_max) == (5, 5)
    assert (dev.pcie_width_current, dev.pcie_width_max) == (8, 16)
    assert dev.pcie_replay_counter == 0
    assert dev.temperature_c == 61
    assert dev.power_usage_mw == 512000 and dev.enforced_power_limit_mw == 700000
    assert (dev.clock_sm_mhz, dev.clock_mem_mhz) == (1980, 2619)
    assert (dev.max_clock_sm_mhz, dev.max_clock_mem_mhz) == (1980, 2619)
    assert dev.clocks_event_reasons == 0 and dev.clock_event_reason_names == []
    assert dev.ecc_corrected_volatile == 0 and dev.ecc_uncorrected_volatile == 0
    assert dev.ecc_corrected_aggregate is None
    assert dev.remapped_rows_pending is False and dev.remapped_rows_failure is False
    assert dev.lost is False and dev.error is None
    [event] = snap.events
    assert event.device == 3 and event.type == "XidCriticalError" and event.xid == 79
    assert event.time_unix == 1776391869.0  # 2026-04-17T02:11:09Z


def test_lost_device_and_deprecated_key():
    doc = {
        "devices": [
            {"index": 0, "pci_bus_id": "00000000:18:00.0", "nvmlDeviceGetCurrentClocksThrottleReasons": 0x48},
            {"index": 1, "pci_bus_id": "00000000:91:00.0", "error": "GPU is lost"},
        ]
    }
    snap = parse_nvml_json(json.dumps(doc))
    ok, lost = snap.devices
    assert ok.clocks_event_reasons == 0x48
    assert ok.clock_event_reason_names == ["hw_slowdown", "hw_thermal_slowdown"]
    assert lost.lost and lost.error == "GPU is lost"
    assert lost.pcie_width_current is None and lost.clock_sm_mhz is None
    assert snap.driver_version is None and snap.events == []


def test_all_keys_optional():
    snap = parse_nvml_json("{}")
    assert snap.devices == [] and snap.events == [] and snap.driver_version is None
    snap = parse_nvml_json('{"devices": [{}]}')
    assert snap.devices[0].index is None and snap.devices[0].pci is None


def test_clock_info_variants():
    doc = {
        "devices": [
            {"nvmlDeviceGetClockInfo": {"1": 1410, "2": 1593, "0": 1400}},  # keyed by NVML_CLOCK_* number
            {"nvmlDeviceGetClockInfo": 1755},  # bare number: the SM clock
            {"nvmlDeviceGetClockInfo": None},
            {"nvmlDeviceGetClockInfo": "N/A"},
        ]
    }
    snap = parse_nvml_json(json.dumps(doc))
    assert (snap.devices[0].clock_sm_mhz, snap.devices[0].clock_mem_mhz) == (1410, 1593)
    assert snap.devices[0].clock_graphics_mhz == 1400
    assert snap.devices[1].clock_sm_mhz == 1755
    assert snap.devices[2].clock_sm_mhz is None and snap.devices[3].clock_sm_mhz is None
    assert any("bare number" in w for w in snap.warnings)


def test_wrong_types_become_none_with_warnings():
    doc = {
        "driver_version": 550,
        "devices": [
            {
                "index": "2",
                "pci_bus_id": "not-an-address",
                "nvmlDeviceGetTemperature": True,
                "nvmlDeviceGetPowerUsage": "lots",
                "nvmlDeviceGetCurrPcieLinkWidth": 16.0,
                "nvmlDeviceGetPcieReplayCounter": float("nan"),
                "nvmlDeviceGetTotalEccErrors": 5,
                "nvmlDeviceGetRemappedRows": [1, 2, True, False],
                "nvmlDeviceGetCurrentClocksEventReasons": "0x0000000000000004",
                "nvmlDeviceGetFieldValues": {"94": 3},
            },
            "junk",
        ],
        "events": [
            {"type": 8, "data": 48, "time": 1776391869.5},
            {"type": "nvmlEventTypeClock", "time": "yesterday"},
            7,
        ],
    }
    snap = parse_nvml_json(json.dumps(doc))
    [dev] = snap.devices
    assert snap.driver_version == "550"
    assert dev.index == 2
    assert dev.pci is None and dev.pci_bus_id == "not-an-address"
    assert dev.temperature_c is None and dev.power_usage_mw is None
    assert dev.pcie_width_current == 16
    assert dev.pcie_replay_counter is None
    assert dev.ecc_corrected_volatile is None
    assert (dev.remapped_rows_corrected, dev.remapped_rows_uncorrected) == (1, 2)
    assert dev.remapped_rows_pending is True
    assert dev.clocks_event_reasons == 4 and is_power(dev.clocks_event_reasons)
    assert dev.extra == {"nvmlDeviceGetFieldValues": {"94": 3}}
    first, second = snap.events
    assert first.type == "XidCriticalError" and first.xid == 48 and first.time_unix == 1776391869.5
    assert second.type == "Clock" and second.time_unix is None and second.xid is None
    assert len(snap.warnings) >= 6


def test_naive_and_offset_times():
    snap = parse_nvml_json(
        '{"events": [{"time": "2026-04-17T02:11:09"}, {"time": "2026-04-17T04:11:09+02:00"}]}'
    )
    assert [e.time_unix for e in snap.events] == [1776391869.0, 1776391869.0]


@pytest.mark.parametrize(
    "text", ["", "   ", "{", '{"devices": [', "not json", "[]", '"string"', "null", "\x00\x01", "[" * 100_000]
)
def test_unusable_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_nvml_json(text)


def test_truncated_example_raises_parse_error():
    with pytest.raises(ParseError):
        parse_nvml_json(BUNDLE_EXAMPLE[: len(BUNDLE_EXAMPLE) // 2])


def test_huge_document():
    device = json.loads(BUNDLE_EXAMPLE)["devices"][0]
    doc = {"devices": [device] * 20_000, "events": [{"device": 1, "type": "Clock", "data": 1}] * 20_000}
    snap = parse_nvml_json(json.dumps(doc))
    assert len(snap.devices) == 20_000 and len(snap.events) == 20_000


def test_digit_bomb():
    with pytest.raises(ParseError):
        parse_nvml_json('{"driver_version": ' + "9" * 100_000 + "}")


def test_clock_event_reason_table():
    assert CLOCK_EVENT_REASONS[0x1] == "gpu_idle"
    assert CLOCK_EVENT_REASONS[0x4] == "sw_power_cap"
    assert CLOCK_EVENT_REASONS[0x8] == "hw_slowdown"
    assert CLOCK_EVENT_REASONS[0x20] == "sw_thermal_slowdown"
    assert CLOCK_EVENT_REASONS[0x40] == "hw_thermal_slowdown"
    assert CLOCK_EVENT_REASONS[0x80] == "hw_power_brake_slowdown"
    assert decode_clock_event_reasons(0) == []
    assert decode_clock_event_reasons(0x1 | 0x4) == ["gpu_idle", "sw_power_cap"]
    assert decode_clock_event_reasons(0x800) == ["bit_0x800"]
    assert len(decode_clock_event_reasons(-1)) == 64  # masked to 64 bits, never unbounded


def test_thermal_and_power():
    assert is_thermal(0x20) and is_thermal(0x40) and not is_thermal(0x8) and not is_thermal(0x4)
    assert is_power(0x4) and is_power(0x80) and not is_power(0x40) and not is_power(0x1)
    assert not is_thermal(0) and not is_power(0)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=40), children, max_size=4)
    ),
    max_leaves=30,
)
_device_keys = st.sampled_from(
    [
        "index",
        "pci_bus_id",
        "error",
        "nvmlDeviceGetClockInfo",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetTotalEccErrors",
        "nvmlDeviceGetRemappedRows",
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetPcieReplayCounter",
    ]
)


@given(
    st.dictionaries(_device_keys, _json, max_size=9),
    st.lists(st.dictionaries(st.text(max_size=8), _json), max_size=3),
)
def test_fuzz_structured(device, events):
    snap = parse_nvml_json(json.dumps({"devices": [device], "events": events}))
    assert len(snap.devices) == 1


@given(st.text(max_size=200))
def test_fuzz_text_only_parse_error(text):
    try:
        parse_nvml_json(text)
    except ParseError:
        pass
