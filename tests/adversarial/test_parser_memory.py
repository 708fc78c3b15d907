"""Parsers stream (bounded buffers) and `forensic bench parsers` measures each one in its
own process."""

from __future__ import annotations

import json

from forensic.harness.cli import _register, app
from forensic.tools.parsers import _bench as bench_mod
from forensic.tools.parsers import kernel_log as kernel_mod
from forensic.tools.parsers import nccl as nccl_mod
from forensic.tools.parsers import parse_kernel_log, parse_nccl_log
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

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


def test_bench_parsers_reports_rss_per_input_mb_for_each_parser(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # generated inputs are cached, not committed
    res = CliRunner().invoke(app, ["bench", "parsers", "--size-mb", "1", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    names = [r["name"] for r in doc["parsers"]]
    assert names == ["nccl", "torch_log", "trainer_log", "kernel_log", "openmetrics", "steps_csv"]
    for r in doc["parsers"]:
        assert r["input_mb"] > 0.9 and r["peak_rss_mb"] > 0
        # The ratio is the whole peak over the input: the baseline is shown, never subtracted.
        assert abs(r["rss_over_input"] - r["peak_rss_mb"] / r["input_mb"]) < 0.1
        assert 0 < r["baseline_rss_mb"] <= r["peak_rss_mb"]
        assert abs(r["parse_rss_mb"] - (r["peak_rss_mb"] - r["baseline_rss_mb"])) < 0.2
        assert r["found"] > 0  # the synthetic input is in the parser's format
    cached = sorted(p.name for p in (tmp_path / "forensic" / "bench" / "parsers").iterdir())
    # The trainer scan reads the same generated job logs as the NCCL parser.
    assert cached == [f"{n}-1mb-v{bench_mod.INPUT_VERSION}.txt" for n in sorted(set(names) - {"trainer_log"})]


def test_openmetrics_keeps_no_per_sample_objects() -> None:
    """A high-cardinality text: the parsed set holds its samples in shared arrays, and building
    it costs well under 3x the text (tracemalloc: Python and numpy allocations of the parse)."""
    import tracemalloc

    from forensic.tools.parsers import parse_openmetrics

    lines = [
        f'DCGM_FI_DEV_GPU_TEMP{{Hostname="gpu{h:05d}",gpu="{g}",UUID="GPU-{h:08x}-{g:04x}"}} {40 + t} {1700000000 + 15 * t}'
        for h in range(400)
        for g in range(8)
        for t in range(4)
    ]
    size = sum(len(line) + 1 for line in lines)
    tracemalloc.start()
    ms = parse_openmetrics(iter(lines))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert ms.series_count == 3200 and ms.samples == 12800
    assert peak < 3 * size, (peak, size)
    [one] = ms.select("DCGM_FI_DEV_GPU_TEMP", Hostname="gpu00007", gpu="3")
    assert one.values.tolist() == [40.0, 41.0, 42.0, 43.0] and not one.values.flags.writeable


def test_text_is_split_lazily_not_into_a_list() -> None:
    from forensic.tools.parsers._text import plain_lines

    lines = plain_lines("a\nb\n")
    assert not isinstance(lines, list) and list(lines) == ["a", "b", ""]


_TIMEOUT = (
    "[rank{r}]:[E0507 07:28:10.449682235 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum={s}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
    "ran for 600027 milliseconds before timing out."
)
_COMPLETION = "host-{h}:100:200 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.{h}<1234> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.{h} hca mlx5_{h}"


@settings(max_examples=6, deadline=None)
@given(n=st.integers(min_value=0, max_value=25_000))
def test_torch_events_are_capped_but_every_one_counts(n: int) -> None:
    from forensic.tools.parsers import parse_torch_log
    from forensic.tools.parsers import torch_log as torch_mod

    log = parse_torch_log(_TIMEOUT.format(r=i % 64, s=1000 + i % 3) for i in range(n))
    assert len(log.timeouts) == min(n, torch_mod.MAX_RECORDS)
    assert log.timeout_count == n
    # Per-rank facts cover every line, also those past the cap (ranks 0..63 on 3 seqnums).
    expected = {1000 + k: {i % 64 for i in range(n) if i % 3 == k} for k in range(3)}
    assert log.stuck_seqnums() == {s: r for s, r in expected.items() if r}
    if n > torch_mod.MAX_RECORDS:
        assert any("dropped" in w for w in log.warnings)


def test_nccl_completion_errors_are_capped_but_counted_per_place() -> None:
    n = nccl_mod.MAX_RECORDS + 2_500
    log = parse_nccl_log(_COMPLETION.format(h=i % 5) for i in range(n))
    assert len(log.completion_errors) == nccl_mod.MAX_RECORDS
    places = log.completion_places()
    assert sum(places.values()) == n and set(places) == {f"host-{h}/mlx5_{h}" for h in range(5)}
    assert any("completion errors past" in w for w in log.warnings)


def test_a_storm_of_one_kernel_event_kind_never_hides_another() -> None:
    """Per-kind caps: 25,000 AER lines before an XID 79 still leave the XID 79 in the parse."""
    aer = "[ 100.000001] pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0"
    lines = [aer] * 25_000 + [_XID]
    klog = parse_kernel_log(iter(lines))
    assert any(e.kind == "xid" and e.xid == 79 for e in klog.events)
    assert len(klog.events) <= kernel_mod.MAX_EVENTS + 1
    assert any("per-log cap" in w for w in klog.warnings)


def test_a_capped_kernel_log_says_so_in_its_evidence_record(make_bundle) -> None:
    """A log past the cap is not silently complete: the tool's record and summary say it was capped,
    and the fault after the storm is still found."""
    from forensic.sandbox import Bundle
    from forensic.tools import ToolContext, get_tool

    root = make_bundle("gpu_fell_off_bus")
    dmesg = next(root.glob("nodes/node-b.example/cmd/dmesg.txt"))
    storm = "".join(
        f"[ {100 + i / 1e6:.6f}] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics Exception\n"
        for i in range(kernel_mod.MAX_EVENTS + 50)
    )
    dmesg.write_text(storm + dmesg.read_text())
    res = get_tool("kernel_log")(ToolContext(Bundle(root)), {})
    assert "xid_fell_off_bus" in {s.name for s in res.signals}
    assert res.data["capped"] and "per-log cap" in res.data["capped"][0]
    assert "capped" in res.summary


def test_a_capped_job_log_says_so_and_still_counts_every_timeout(make_fabric_bundle) -> None:
    from forensic.sandbox import Bundle
    from forensic.tools import ToolContext, get_tool
    from forensic.tools.parsers import torch_log as torch_mod

    root = make_fabric_bundle(None)
    n = torch_mod.MAX_RECORDS + 300
    storm = "".join(_TIMEOUT.format(r=i % 8, s=77) + "\n" for i in range(n))
    (root / "job" / "logs" / "rank0.log").write_text(
        storm + (root / "job" / "logs" / "rank0.log").read_text()
    )
    res = get_tool("job_logs")(ToolContext(Bundle(root)), {})
    assert res.data["capped"] and "per-log cap" in res.data["capped"][0]
    assert "capped" in res.summary
    timeouts = [s for s in res.signals if s.name == "collective_timeout"]
    assert timeouts and timeouts[0].values["timeouts"] >= n, timeouts  # every timeout, also past the cap


def test_steps_csv_is_not_split_whole_and_stays_near_its_size(monkeypatch) -> None:
    """steps.csv is read in blocks into preallocated columns: with small blocks (so many are read),
    what the parse allocates stays under 3x the text (the old whole-text split list cost 7x)."""
    import tracemalloc

    from forensic.tools.detectors import steps as steps_mod

    text = "step,rank,start_unix,duration_s,compute_s\n" + "".join(
        f"{s},{r},{1700000000 + s * 0.55 + r * 1e-4:.4f},{0.5 + (s * 7 + r * 13) % 97 / 1000:.4f},0.4\n"
        for s in range(100)
        for r in range(512)
    )
    monkeypatch.setattr(steps_mod, "_BLOCK_LINES", 2_000)
    tracemalloc.start()
    table = steps_mod.load_steps_csv(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert table.duration.shape == (100, 512) and table.rows_read == 51_200
    assert peak < 3 * len(text), peak / len(text)
