"""The trainer-log prefilter skips no line a pattern matches: each group's words are in every line
its patterns match, and the block search hands every such line to the patterns once."""

from __future__ import annotations

import pytest
from forensic.tools import _trainer_log as tl
from hypothesis import given, settings
from hypothesis import strategies as st

GATES = [(p, gate) for _, p, gate in tl._STALL + tl._STORE + tl._CONFIGS + tl._RATES] + [
    (tl._ROUTINE, tl._ROUTINE_WORDS)
]
GROUPS = (
    [(p, tl._STALL_ANY) for _, p in tl.INPUT_STALL]
    + [(p, tl._STORAGE_ANY) for _, p in tl.STORAGE]
    + [(p, tl._CONFIG_ANY) for p in tl._CONFIG.values()]
    + [(p, tl._RATE_ANY) for _, p in tl._RATE]
    + [(p, tl._STEP_ANY) for _, p in tl._STEP_RATE]
    + [(tl._STEP_TIME, tl._STEP_ANY)]
)


@pytest.mark.parametrize("pattern,group", GROUPS, ids=lambda p: p.pattern[:30])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_line_a_pattern_matches_passes_its_groups_prefilter(pattern, group, data) -> None:
    line = data.draw(st.from_regex(pattern, fullmatch=False))
    line = line.replace("\n", " ").replace("\r", " ")[:4096]
    if pattern.search(line):
        assert group.search(tl._fold(line)), line
        assert tl._NEEDS.search(tl._fold(line)), line


@pytest.mark.parametrize("pattern,gate", GATES, ids=lambda p: p.pattern[:30] if hasattr(p, "pattern") else "")
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_line_a_pattern_matches_holds_one_of_its_own_words(pattern, gate, data) -> None:
    line = data.draw(st.from_regex(pattern, fullmatch=False))
    line = line.replace("\n", " ").replace("\r", " ")[:4096]
    if pattern.search(line):
        assert any(w in tl._fold(line) for w in gate), line


def test_prefilter_keeps_the_facts() -> None:
    lines = [
        "NCCL INFO Channel 00/32 :    0   1   2",
        "DataLoader worker (pid 1234) is killed by signal",
        "global_batch_size: 1024",
        "tokens/s: 12,345.5",
        "elapsed time per iteration (ms): 2100.5",
        "nfs: server filer01 not responding",
        "EIO on /data/shard",
        "[rank0] step 5 loss 2.1",
    ] * 3
    t = tl.TrainerFacts()
    t.add_lines(lines)
    assert len(t.stalls) == 3 and len(t.storage) == 6 and t.configs == [{"global_batch_size": "1024"}]
    assert [v for _, _, v in t.rates] == [12345.5] * 3 and [v for _, v in t.step_time] == [2.1005] * 3


def test_the_block_search_reads_each_matching_line_once_whatever_its_case_or_place() -> None:
    # Lines that case folding lengthens (ß -> ss) before a match must not shift which line is read.
    filler = ["straße " * 30, "NCCL INFO nothing here", ""]
    lines = []
    for i in range(1500):  # several blocks
        lines.append(filler[i % 3])
        if i % 7 == 0:
            lines.append(f"ELAPSED TIME PER ITERATION (MS): {1000 + i}")
    t = tl.TrainerFacts()
    t.add_lines(iter(lines))
    want = [(1000 + i) / 1000.0 for i in range(1500) if i % 7 == 0]
    assert [v for _, v in t.step_time] == want
