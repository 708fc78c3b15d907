"""Item 2: parsers stream (bounded buffers) and `forensic bench parsers` measures each one in its
own process."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from forensic.harness.cli import _register, app
from forensic.tools.parsers import parse_kernel_log, parse_nccl_log
from forensic.tools.parsers import nccl as nccl_mod
from forensic.tools.parsers import kernel_log as kernel_mod

_register()

_NCCL = "host-1:100:200 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0"
_XID = "[ 12.345678] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."


def test_parsers_consume_a_stream_of_lines_without_a_list() -> None:
    consumed = []

    def lines():
        for i in range(1000):
            consumed.append(i)
            yield _NCCL

    log = parse_nccl_log(lines())
    assert len(consumed) == 1000 and len(log.entries) == 1000


@settings(max_examples=10, deadline=None)
@given(n=st.integers(min_value=0, max_value=30_000))
def test_record_buffers_stay_bounded_whatever_the_size(n: int) -> None:
    log = parse_nccl_log(_NCCL for _ in range(n))
    assert len(log.entries) == min(n, nccl_mod.MAX_RECORDS)
    klog = parse_kernel_log(_XID for _ in range(n))
    assert len(klog.events) == min(n, kernel_mod.MAX_EVENTS)
    assert klog.line_count == n
    if n > kernel_mod.MAX_EVENTS:
        assert any("dropped" in w for w in klog.warnings)


def test_bench_parsers_reports_rss_per_input_mb_for_each_parser() -> None:
    res = CliRunner().invoke(app, ["bench", "parsers", "--size-mb", "1", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    names = [r["name"] for r in doc["parsers"]]
    assert names == ["nccl", "torch_log", "kernel_log", "openmetrics"]
    for r in doc["parsers"]:
        assert r["input_mb"] > 0.9 and r["peak_rss_mb"] > 0
        assert abs(r["rss_over_input"] - r["peak_rss_mb"] / r["input_mb"]) < 0.1
        assert r["found"] > 0  # the synthetic input is in the parser's format
