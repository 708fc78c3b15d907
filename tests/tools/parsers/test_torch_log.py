"""PyTorch ProcessGroupNCCL watchdog lines, every torch era."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.torch_log import parse_torch_log
from hypothesis import given, settings
from hypothesis import strategies as st

# Reference §6.4, verbatim: torch ~2.6/2.7 (ArcticTraining#219, OpenRLHF#1126). The dump-signal line
# keeps its double space ("from  rank 6"), the missing space in "460630.This" and its trailing space.
TORCH_27 = (
    "[rank7]:[E901 05:20:03.123992144 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=460631, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
    "[rank7]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, last completed work: 460630\n"
    "[rank7]:[E901 05:20:03.124080696 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.\n"
    "[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued NCCL work: 460631, last completed NCCL work: 460630.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. \n"
    "[rank2]:[E901 05:20:03.118963441 ProcessGroupNCCL.cpp:1536] [PG ID 0 PG GUID 0(default_pg) Rank 2] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1\n"
    "[rank3]:[E626 16:48:25.440250129 ProcessGroupNCCL.cpp:684] [Rank 3] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
    "[rank3]:[E626 16:48:25.440271515 ProcessGroupNCCL.cpp:698] [Rank 3] To avoid data inconsistency, we are taking the entire process down.\n"
)

# Reference §6.4, verbatim: torch ~2.4/2.5 (LlamaFactory#7396, #6269).
TORCH_25 = """\
[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.
[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.
[rank0]:[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 0] Timeout at NCCL work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.
"""

# Reference §6.4, verbatim terminal lines (open-r1#620, accelerate#2174).
TERMINAL = """\
[rank1]:[E424 01:17:25.031948957 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):
terminate called after throwing an instance of 'c10::DistBackendError'
terminate called after throwing an instance of 'std::runtime_error'
"""

# Older torch (<= 1.13): no Numel fields (the WorkNCCL text is verbatim from OFA-Sys/OFA#271; the
# prefix follows the old "[E ProcessGroupNCCL.cpp:N]" glog form quoted in the reference).
TORCH_113 = """\
[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806423 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:916] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806500 milliseconds before timing out.
"""

# A fleet-wide stall at SeqNum 460631: rank 6 timed out first (and says so from its own log).
LOCAL_DUMP = (
    "[rank6]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
    "Received a dump signal due to a collective timeout from this local rank and we will try our best to dump "
    "the debug info. Last enqueued NCCL work: 460631, last completed NCCL work: 460629.This is most likely caused "
    "by incorrect usages of collectives\n"
)


def test_torch_27_sequence():
    log = parse_torch_log(TORCH_27)
    [timeout] = log.timeouts
    assert (timeout.rank, timeout.seq, timeout.op_type) == (7, 460631, "ALLREDUCE")
    assert (timeout.numel_in, timeout.numel_out, timeout.timeout_ms, timeout.ran_for_ms) == (
        1,
        1,
        600000,
        600020,
    )
    assert timeout.terminal is False and timeout.line_no == 1
    assert timeout.stamp is not None
    assert (timeout.stamp.severity, timeout.stamp.month, timeout.stamp.day) == ("E", 9, 1)
    assert (timeout.stamp.time, timeout.stamp.source) == ("05:20:03.123992144", "ProcessGroupNCCL.cpp:632")
    [status] = log.work_status
    assert (status.kind, status.rank, status.pg, status.seq) == ("failure_detected", 7, "0", 460631)
    assert (status.last_enqueued, status.last_completed) == (460631, 460630)
    [dump] = log.dump_signals
    assert (dump.rank, dump.source_rank, dump.from_local_rank) == (2, 6, False)
    assert (dump.last_enqueued, dump.last_completed) == (460631, 460630)
    assert [(t.rank, t.kind) for t in log.terminal] == [(3, "ops_failed"), (3, "taking_down")]
    assert log.stuck_seqnums() == {460631: {7}}
    assert log.dump_signal_sources() == {6}
    assert log.last_completed_by_rank() == {7: 460630, 2: 460630}
    assert log.process_groups() == {"0"}
    assert log.warnings == []


def test_torch_25_variants():
    log = parse_torch_log(TORCH_25)
    [timeout] = log.timeouts
    assert (timeout.seq, timeout.numel_in, timeout.ran_for_ms) == (1580, 466119168, 600060)
    exception, timeout_at = log.work_status
    assert (
        exception.kind,
        exception.pg,
        exception.seq,
        exception.last_enqueued,
        exception.last_completed,
    ) == ("exception_detected", "1", 1580, 1582, 1579)
    assert (timeout_at.kind, timeout_at.seq, timeout_at.last_enqueued, timeout_at.last_completed) == (
        "timeout_at",
        7753,
        7755,
        7752,
    )
    assert timeout_at.stamp is not None and (timeout_at.stamp.month, timeout_at.stamp.day) == (12, 6)
    assert log.stuck_seqnums() == {1580: {0}, 7753: {0}}
    assert log.stuck_seqnums(pg="1") == {1580: {0}, 7753: {0}}
    assert log.last_completed_by_rank() == {0: 7752}


def test_terminal_lines():
    log = parse_torch_log(TERMINAL)
    [timeout] = log.timeouts
    assert (timeout.rank, timeout.seq, timeout.op_type, timeout.timeout_ms, timeout.terminal) == (
        1,
        4,
        "BROADCAST",
        1800000,
        True,
    )
    kinds = [(t.kind, t.detail, t.rank) for t in log.terminal]
    assert kinds == [
        ("watchdog_terminated", None, 1),
        ("terminate_called", "c10::DistBackendError", None),
        ("terminate_called", "std::runtime_error", None),
    ]


def test_old_torch_without_numel_and_rank_prefix():
    log = parse_torch_log(TORCH_113)
    first, second = log.timeouts
    assert (first.rank, first.seq, first.numel_in, first.timeout_ms, first.ran_for_ms) == (
        3,
        469508,
        None,
        1800000,
        1806423,
    )
    assert (
        first.stamp is not None
        and first.stamp.month is None
        and first.stamp.source == "ProcessGroupNCCL.cpp:737"
    )
    assert second.rank == 2 and second.terminal
    assert log.stuck_seqnums() == {469508: {2, 3}}
    assert [t.kind for t in log.terminal] == ["watchdog_terminated"]


def test_dump_from_this_local_rank_and_fleet_summary():
    text = TORCH_27 + LOCAL_DUMP + TORCH_27.replace("[rank7]", "[rank5]").replace("Rank 7]", "Rank 5]")
    log = parse_torch_log(text)
    local = [d for d in log.dump_signals if d.from_local_rank]
    assert [(d.rank, d.source_rank) for d in local] == [(6, 6)]
    assert log.dump_signal_sources() == {6}
    assert log.stuck_seqnums() == {460631: {5, 7}}
    done = log.last_completed_by_rank()
    assert done[6] == 460629 and done[5] == done[7] == 460630
    assert min(done, key=done.get) == 6


def test_empty_unrelated_truncated_binary():
    empty = parse_torch_log("")
    assert empty.timeouts == [] and empty.stuck_seqnums() == {} and empty.dump_signal_sources() == set()
    assert parse_torch_log("epoch 3 loss 1.2\nwatchdog is a dog\n").timeouts == []
    cut = parse_torch_log(TORCH_27[:150])
    [timeout] = cut.timeouts
    assert timeout.seq == 460631 and timeout.timeout_ms is None and timeout.ran_for_ms is None
    binary = parse_torch_log(b"\x00\xff\xfe" + TORCH_25.encode() + b"\x00" * 100)
    assert len(binary.timeouts) == 1
    with pytest.raises(ParseError):
        parse_torch_log(42)  # type: ignore[arg-type]


def test_huge_and_hostile():
    huge = parse_torch_log(TORCH_27 * (10_000_000 // len(TORCH_27)))
    assert len(huge.timeouts) == 10_000_000 // len(TORCH_27)
    assert huge.stuck_seqnums() == {460631: {7}}
    long_line = "[rank1]: Watchdog caught collective operation timeout " + "x" * 1_000_000 + "\n" + TORCH_25
    log = parse_torch_log(long_line)
    assert log.warnings and len(log.timeouts) == 1
    bait = "\n".join(
        [
            "[rank" + "1" * 60_000 + "]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)",
            "Watchdog caught collective operation timeout: " + "SeqNum=" * 8_000,
            "Received a dump signal " + "from " * 10_000 + "rank 1",
            "[E" + "1" * 30_000 + " watchdog",
            "[PG " * 15_000 + "watchdog",
            "Rank " * 12_000 + "] watchdog",
            "last completed work: " + "-" * 50_000 + " watchdog",
        ]
    )
    log = parse_torch_log(bait)
    assert all(t.rank is None or t.rank < 10_000_000 for t in log.timeouts)
    lying = (
        "[rank3]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12345678901234567890, "
        "OpType=ALLREDUCE, Timeout(ms)=abc) ran for lots milliseconds\n"
        "[rank3]: failure detected by watchdog at work sequence id: x PG status: last completed work: 5\n"
        "[rank4]: Received a dump signal due to a collective timeout from  rank nobody\n"
    )
    log = parse_torch_log(lying)
    [timeout] = log.timeouts
    assert timeout.seq is None and timeout.timeout_ms is None and timeout.ran_for_ms is None
    assert log.work_status == []
    assert log.dump_signal_sources() == set()


REAL_LINES = (TORCH_27 + TORCH_25 + TERMINAL + TORCH_113 + LOCAL_DUMP).splitlines()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=80)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    try:
        log = parse_torch_log("\n".join(lines))
    except ParseError:
        return
    log.stuck_seqnums()
    log.dump_signal_sources()
    log.last_completed_by_rank()
    log.process_groups()
