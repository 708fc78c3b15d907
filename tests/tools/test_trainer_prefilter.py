"""Issue 16: the one-search prefilter of trainer-log lines skips no line any pattern matches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensic.tools import _trainer_log as tl

PATTERNS = [p for _, p in tl.INPUT_STALL + tl.STORAGE] + list(tl._CONFIG.values()) + [p for _, p in tl._RATE + tl._STEP_RATE] + [tl._STEP_TIME]


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:30])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_line_a_pattern_matches_passes_the_prefilter(pattern, data) -> None:
    line = data.draw(st.from_regex(pattern, fullmatch=False))
    line = line.replace("\n", " ").replace("\r", " ")[:4096]
    if pattern.search(line):
        assert tl._NEEDS.search(line), line


def test_prefilter_keeps_the_facts() -> None:
    lines = ["NCCL INFO Channel 00/32 :    0   1   2", "DataLoader worker (pid 1234) is killed by signal",
             "global_batch_size: 1024", "tokens/s: 12,345.5", "elapsed time per iteration (ms): 2100.5",
             "nfs: server filer01 not responding", "EIO on /data/shard", "[rank0] step 5 loss 2.1"] * 3
    t = tl.TrainerFacts()
    t.add_lines(lines)
    assert len(t.stalls) == 3 and len(t.storage) == 6 and t.configs == [{"global_batch_size": "1024"}]
    assert [v for _, _, v in t.rates] == [12345.5] * 3 and [v for _, v in t.step_time] == [2.1005] * 3
