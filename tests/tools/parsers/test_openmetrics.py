import math

import numpy as np
import pytest
from forensic.tools.parsers import counter_increase, is_counter_like, parse_openmetrics, series_host
from hypothesis import given
from hypothesis import strategies as st

# Real scrape lines, verbatim from dcgm-exporter issue 512 and PR 736 (reference 3.3).
DCGM_512 = """DCGM_FI_DEV_MEMORY_TEMP{gpu="1",UUID="GPU-********",pci_bus_id="00000000:40:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="***h100-007",DCGM_FI_DRIVER_VERSION="535.129.03",container="ollama",namespace="***",pod="ollama-76f687f4cd-xcvvp"} 42
DCGM_FI_DEV_MEMORY_TEMP{gpu="0",UUID="GPU-********",pci_bus_id="00000000:1A:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="***h100-007",DCGM_FI_DRIVER_VERSION="535.129.03"} 43
"""
DCGM_736 = """# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in °C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-fc60126e-514d-3522-2828-c5daa8e99d85",pci_bus_id="00000000:B1:00.0",device="nvidia1",modelName="NVIDIA RTX 2000 Ada Generation",hostname="dcgm-exporter-wwwjh"} 44
"""


def test_real_dcgm_lines_without_timestamps():
    metrics = parse_openmetrics(DCGM_512)
    series = metrics.select("DCGM_FI_DEV_MEMORY_TEMP")
    assert len(series) == 2
    gpu1 = metrics.select("DCGM_FI_DEV_MEMORY_TEMP", gpu="1")[0]
    assert gpu1.labels["pod"] == "ollama-76f687f4cd-xcvvp"
    assert gpu1.labels["pci_bus_id"] == "00000000:40:00.0"
    assert gpu1.values.tolist() == [42.0]
    assert math.isnan(gpu1.timestamps[0])  # no timestamp printed: kept as NaN
    assert gpu1.host == "***h100-007"
    assert gpu1.type == "unknown"
    gpu0 = metrics.select("DCGM_FI_DEV_MEMORY_TEMP", GPU_I_PROFILE="3g.40gb")
    assert [s.labels["gpu"] for s in gpu0] == ["0"]
    assert metrics.select("DCGM_FI_DEV_MEMORY_TEMP", gpu="7") == []
    assert metrics.select("nothing") == []


def test_real_dcgm_with_help_and_lowercase_hostname():
    metrics = parse_openmetrics(DCGM_736)
    family = metrics.families["DCGM_FI_DEV_GPU_TEMP"]
    assert family.type == "gauge" and family.help == "GPU temperature (in °C)."
    [series] = metrics.select("DCGM_FI_DEV_GPU_TEMP", hostname="dcgm-exporter-wwwjh")
    assert series.values.tolist() == [44.0]
    assert series.host == "dcgm-exporter-wwwjh"
    assert series.type == "gauge" and series.family == "DCGM_FI_DEV_GPU_TEMP"


BUNDLE_STYLE = """# HELP node_infiniband_port_data_received_bytes_total Number of data octets received on all links
# TYPE node_infiniband_port_data_received_bytes_total counter
node_infiniband_port_data_received_bytes_total{device="mlx5_0",port="1",instance="gpu-a017:9100"} 300 1776391890
node_infiniband_port_data_received_bytes_total{device="mlx5_0",port="1",instance="gpu-a017:9100"} 100 1776391860
node_infiniband_port_data_received_bytes_total{port="1",device="mlx5_0",instance="gpu-a017:9100"} 200 1776391875
# TYPE ifHCInOctets unknown
ifHCInOctets{instance="leaf-03",ifName="Ethernet12"} 5e3 1776391860
ifHCInOctets{instance="leaf-03",ifName="Ethernet12"} 6e3 1776391875.5
# TYPE requests counter
# UNIT requests requests
requests_total 7 1776391860
requests_created 1776000000 1776391860
some_unknown_family{a="b"} +Inf 1776391860
some_unknown_family{a="b"} NaN 1776391875
# EOF
"""


def test_bundle_style_families_sorting_and_merge():
    metrics = parse_openmetrics(BUNDLE_STYLE)
    assert metrics.warnings == []
    [ib] = metrics.select("node_infiniband_port_data_received_bytes_total", device="mlx5_0", port="1")
    # label order differs on one line: still one series, sorted by time
    assert ib.timestamps.tolist() == [1776391860.0, 1776391875.0, 1776391890.0]
    assert ib.values.tolist() == [100.0, 200.0, 300.0]
    assert ib.timestamps.dtype == np.float64 and ib.values.dtype == np.float64
    assert ib.type == "counter"
    assert ib.host == "gpu-a017"
    [port] = metrics.select("ifHCInOctets", ifName="Ethernet12")
    assert port.values.tolist() == [5000.0, 6000.0] and port.timestamps[1] == 1776391875.5
    assert port.host == "leaf-03"
    [total] = metrics.select("requests_total")
    assert total.family == "requests" and total.type == "counter"
    assert metrics.families["requests"].unit == "requests"
    [created] = metrics.select("requests_created")
    assert created.family == "requests"
    [unknown] = metrics.select("some_unknown_family")
    assert unknown.values[0] == math.inf and math.isnan(unknown.values[1])
    assert metrics.names()[0] == "node_infiniband_port_data_received_bytes_total"
    assert metrics.samples == 9 and metrics.skipped_lines == 0


def test_escaped_label_values():
    text = (
        'm{path="C:\\\\dir",msg="say \\"hi\\", {ok}",nl="a\\nb",empty=""} 1 10\n'
        'm{a="}"} 2 10\n'
        'm{a="x"} 3 10 # {trace_id="abc}"} 0.5 10\n'
    )
    metrics = parse_openmetrics(text)
    assert metrics.skipped_lines == 0
    first = metrics.select("m", empty="")[0]
    assert first.labels == {"path": "C:\\dir", "msg": 'say "hi", {ok}', "nl": "a\nb", "empty": ""}
    assert metrics.select("m", a="}")[0].values.tolist() == [2.0]
    exemplar = metrics.select("m", a="x")[0]
    assert exemplar.values.tolist() == [3.0] and exemplar.timestamps.tolist() == [10.0]


def test_prometheus_millisecond_timestamps_and_untyped():
    metrics = parse_openmetrics('# TYPE up untyped\nup{instance="10.0.0.5:9100"} 1 1776391860000\n')
    [up] = metrics.select("up")
    assert up.timestamps.tolist() == [1776391860.0]
    assert up.type == "unknown"
    assert up.host == "10.0.0.5"
    assert any("milliseconds" in w for w in metrics.warnings)


def test_samples_after_eof_are_kept_with_a_warning():
    metrics = parse_openmetrics("a 1 1\n# EOF\na 2 2\n# EOF\n")
    assert metrics.select("a")[0].values.tolist() == [1.0, 2.0]
    assert any("EOF" in w for w in metrics.warnings)


@pytest.mark.parametrize(
    "line",
    [
        'm{a="1" 1 2',  # never closes
        "m{a=1} 1 2",  # unquoted value
        'm{a="1"} one 2',
        'm{a="1"} 1 two',
        'm{a="1"} 1 inf',  # a timestamp must be finite
        'm{a="1"}',
        "1m 1 2",
        'm{a="1"}x 1',
        "m 1_000 2",
        '{a="1"} 1',
    ],
)
def test_bad_lines_are_skipped(line):
    metrics = parse_openmetrics(f"good 1 1\n{line}\ngood 2 2\n")
    assert metrics.skipped_lines == 1
    assert metrics.select("good")[0].values.tolist() == [1.0, 2.0]


def test_empty_binary_truncated():
    assert parse_openmetrics("").series == []
    assert parse_openmetrics("\x00\x01\ufffd\n\ufffd{}").series == []
    truncated = BUNDLE_STYLE[: BUNDLE_STYLE.index("ifHCInOctets") + 30]
    metrics = parse_openmetrics(truncated)
    assert len(metrics.select("node_infiniband_port_data_received_bytes_total")[0]) == 3


def test_hostile_lines_finish():
    quotes = "m{" + 'a="\\"' * 12_000 + "\n"  # quotes that never close
    braces = "m{" + 'a="}",' * 10_000 + "\n"
    long_line = "m " + "1" * 2_000_000 + "\n"
    many_labels = "m{" + ",".join(f'l{i}="v"' for i in range(5_000)) + "} 1 1\n"
    metrics = parse_openmetrics(quotes + braces + long_line + many_labels + "ok 1 1\n")
    assert metrics.select("ok")[0].values.tolist() == [1.0]
    assert len(metrics.select("m")[0].labels) == 5_000
    assert len(metrics.warnings) <= 21


def test_many_lines_linear():
    lines = [
        f'DCGM_FI_DEV_SM_CLOCK{{gpu="{g}",UUID="GPU-{g}",Hostname="h{g // 8}"}} {1980 - (i % 7)} {1776391860 + 15 * i}'
        for i in range(2_000)
        for g in range(64)
    ]
    metrics = parse_openmetrics("\n".join(reversed(lines)))
    assert metrics.samples == 128_000
    series = metrics.select("DCGM_FI_DEV_SM_CLOCK", gpu="5")
    assert len(series) == 1 and len(series[0]) == 2_000
    assert bool(np.all(np.diff(series[0].timestamps) > 0))
    assert series[0].host == "h0"


@pytest.mark.parametrize(
    ("labels", "host"),
    [
        ({"Hostname": "gpu-a017", "instance": "x:1"}, "gpu-a017"),
        ({"hostname": "gpu1018.dc3.internal"}, "gpu1018.dc3.internal"),
        ({"instance": "10-90-43-147:9400"}, "10-90-43-147"),
        ({"instance": "leaf-03"}, "leaf-03"),
        ({"instance": "[fe80::1]:9100"}, "fe80::1"),
        ({"instance": "fe80::1"}, "fe80::1"),
        ({"Hostname": "", "instance": "h:1"}, "h"),
        ({}, None),
    ],
)
def test_series_host(labels, host):
    assert series_host(labels) == host


def test_counter_like_and_increase():
    assert is_counter_like([0, 5, 5, 9])
    assert is_counter_like([3, 3, 3])  # a counter that did not move
    assert is_counter_like([100, 150, 200, 4, 60, 80, 90, 100, 120, 130, 140])  # one reset
    assert not is_counter_like([61, 63, 60, 64, 59, 66])  # a temperature
    assert not is_counter_like([5, -1, 6])
    assert not is_counter_like([1])
    assert not is_counter_like([])
    assert is_counter_like([0, float("nan"), 2, float("inf"), 3])
    assert counter_increase([100, 150, 200, 4, 60]) == 100 + 4 + 56
    assert counter_increase(np.array([1.0, 1.0, 2.0])) == 1.0
    assert counter_increase([0, float("nan"), 10]) == 10
    assert math.isnan(counter_increase([5]))
    assert math.isnan(counter_increase([]))


_label_value = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(
    st.dictionaries(st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,6}", fullmatch=True), _label_value, max_size=4),
    st.floats(allow_nan=False),
    st.integers(min_value=0, max_value=2_000_000_000),
)
def test_fuzz_round_trip(labels, value, stamp):
    def escape(v):
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    text = "m{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + f"}} {value!r} {stamp}\n"
    metrics = parse_openmetrics(text)
    [series] = metrics.select("m")
    assert series.labels == labels
    assert series.values[0] == value and series.timestamps[0] == stamp


@given(st.text(max_size=300))
def test_fuzz_never_raises(text):
    parse_openmetrics(text)
