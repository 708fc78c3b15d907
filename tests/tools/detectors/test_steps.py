"""load_steps_csv: the reading rules of spec/bundle.md, and input that is not a steps table."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.detectors.steps import StepTable, load_steps_csv
from hypothesis import given, settings
from hypothesis import strategies as st

HEADER = "step,rank,start_unix,duration_s,compute_s"


def _rows(steps=range(4), ranks=range(3), t0=1000.0, period=2.0):
    out = []
    for i, s in enumerate(steps):
        for r in ranks:
            out.append(f"{s},{r},{t0 + i * period + 0.001 * r:.3f},1.5,{1.0 + 0.01 * r:.4f}")
    return out


def _csv(rows, header=HEADER):
    return "\n".join([header, *rows]) + "\n"


def test_basic_shapes_and_dtypes():
    t = load_steps_csv(_csv(_rows()))
    assert isinstance(t, StepTable)
    assert t.steps.tolist() == [0, 1, 2, 3] and t.steps.dtype == np.int64
    assert t.ranks.tolist() == [0, 1, 2] and t.ranks.dtype == np.int64
    assert t.duration.shape == (4, 3) and t.duration.dtype == np.float32
    assert t.compute.dtype == np.float32 and t.compute[0].tolist() == pytest.approx([1.0, 1.01, 1.02])
    assert t.start.dtype == np.float64 and t.start[0] == pytest.approx(1000.001)
    assert t.loss is None and t.grad_norm is None and t.checksum is None
    assert t.rows_read == 12 and t.rows_skipped == 0 and t.warnings == []


def test_rows_in_any_order_give_the_same_table():
    rows = _rows(steps=range(20), ranks=range(5))
    ref = load_steps_csv(_csv(rows))
    random.Random(3).shuffle(rows)
    got = load_steps_csv(_csv(rows))
    np.testing.assert_array_equal(got.steps, ref.steps)
    np.testing.assert_array_equal(got.duration, ref.duration)
    np.testing.assert_array_equal(got.compute, ref.compute)


def test_columns_by_name_in_any_order_and_extra_columns_ignored():
    text = "rank,host_note,compute_s,step,duration_s,start_unix,mystery\n0,a,0.9,7,1.2,50,x\n1,b,0.8,7,1.2,50,y\n"
    t = load_steps_csv(text)
    assert t.steps.tolist() == [7] and t.ranks.tolist() == [0, 1]
    assert t.compute[0].tolist() == pytest.approx([0.9, 0.8])


def test_header_and_rows_that_disagree_on_trailing_columns_are_read_by_position():
    """A header naming a trailing column twice (every row one field short), or rows holding a value
    the header does not name: the named columns are read by position, with a warning, instead of
    every row being refused."""
    rows = _rows(steps=range(10), ranks=range(4))
    ref = load_steps_csv(_csv(rows))
    short = load_steps_csv(_csv([r + ",262144" for r in rows], header=HEADER + ",tokens,tokens"))
    longer = load_steps_csv(_csv([r + ",x,y" for r in rows], header=HEADER + ",tokens"))
    for got in (short, longer):
        np.testing.assert_array_equal(got.duration, ref.duration)
        np.testing.assert_array_equal(got.compute, ref.compute)
        assert got.rows_skipped == 0 and any("read by the header's positions" in w for w in got.warnings)
    # a named optional column past the rows' end is left out, said so
    no_loss = load_steps_csv(_csv(rows, header=HEADER + ",loss"))
    assert no_loss.loss is None and any("loss left out" in w for w in no_loss.warnings)
    # a required column past the rows' end: the rows stay refused, as before
    with pytest.raises(ParseError, match="no usable rows"):
        load_steps_csv(_csv([",".join(r.split(",")[:3]) for r in rows]))
    # a few odd rows in a well-formed table are still just skipped
    mixed = load_steps_csv(_csv(rows[:-2] + [rows[-2] + ",9", rows[-1] + ",9"]))
    assert mixed.rows_skipped == 2 and mixed.rows_read == len(rows) - 2


def test_header_is_case_and_space_insensitive_with_bom_and_crlf():
    text = "\ufeff Step , RANK,start_unix, duration_s\r\n0,0,1,2\r\n0,1,1,2\r\n"
    t = load_steps_csv(text)
    assert t.duration.shape == (1, 2) and t.compute is None


def test_rerun_of_a_step_keeps_the_later_row():
    rows = _rows(steps=range(5), ranks=range(2))
    # the job crashed after step 4 and resumed from step 3: rows for 3 and 4 are logged again, later
    rows += ["3,0,5000.0,9.0,8.0", "3,1,5000.0,9.0,8.5", "4,0,5010.0,9.0,8.0", "4,1,5010.0,9.0,8.5"]
    t = load_steps_csv(_csv(rows))
    assert t.steps.tolist() == [0, 1, 2, 3, 4]
    assert t.duration[3].tolist() == [9.0, 9.0] and t.compute[4].tolist() == [8.0, 8.5]
    assert t.start[3] == 5000.0
    assert t.rows_rerun == 4
    assert any("rerun" in w for w in t.warnings)


def test_steps_are_ordered_by_start_time_not_by_number():
    text = _csv(["30,0,100,1,1", "10,0,300,1,1", "20,0,200,1,1", "20,1,201,1,1"])
    t = load_steps_csv(text)
    assert t.steps.tolist() == [30, 20, 10]
    assert t.start.tolist() == pytest.approx([100, 200.5, 300])
    assert any("start_unix" in w for w in t.warnings)


def test_non_contiguous_steps_and_restart_gap():
    rows = _rows(steps=range(0, 100, 10), ranks=range(2))
    rows += [f"{s},{r},{99999 + s},1.5,1.0" for s in (200, 210) for r in range(2)]  # restart gap
    t = load_steps_csv(_csv(rows))
    assert t.steps.tolist() == list(range(0, 100, 10)) + [200, 210]
    assert np.all(np.diff(t.start) > 0)


def test_missing_ranks_are_nan():
    rows = [r for r in _rows(steps=range(3), ranks=range(3)) if not r.startswith("1,2,")]
    t = load_steps_csv(_csv(rows))
    assert np.isnan(t.duration[1, 2]) and np.isnan(t.compute[1, 2])
    assert np.isfinite(t.duration[0]).all()
    assert any("not logged" in w for w in t.warnings)


def test_bad_rows_are_skipped_and_counted():
    rows = _rows(steps=range(3), ranks=range(2))
    rows += [
        "3,0,abc,1.5,1.0",
        "3,1,1006.0",
        "x,y,z,w,v",
        "3,-1,1006,1,1",
        "3,0,1006,nan,1",
        "4,0,1008,1.5,1.0,extra",
    ]
    t = load_steps_csv(_csv(rows))
    assert t.rows_skipped == 6
    assert t.steps.tolist() == [0, 1, 2]
    assert t.warnings


def test_optional_field_empty_is_missing_not_bad():
    t = load_steps_csv(_csv(["0,0,1,2,", "0,1,1,2,0.5"]))
    assert t.rows_skipped == 0 and np.isnan(t.compute[0, 0]) and t.compute[0, 1] == 0.5


def test_negative_compute_is_left_missing():
    t = load_steps_csv(_csv(["0,0,1,2,-1", "0,1,1,2,0.5"]))
    assert np.isnan(t.compute[0, 0])


def test_truncated_last_line_is_tolerated():
    text = _csv(_rows(steps=range(3), ranks=range(2))) + "3,0,1006.0,1."
    t = load_steps_csv(text)
    assert t.steps.tolist() == [0, 1, 2]
    assert t.rows_skipped == 1
    assert any("truncated" in w for w in t.warnings)


def test_all_optional_columns():
    text = (
        "step,rank,start_unix,duration_s,compute_s,loss,grad_norm,param_checksum\n"
        "0,0,1,2,1.5,2.31,0.9,abc\n0,1,1,2,1.4,2.29,0.8,abc\n1,0,3,2,1.5,2.2,0.9,\n1,1,3,2,1.4,inf,0.8,abd\n"
    )
    t = load_steps_csv(text)
    assert t.loss[0].tolist() == pytest.approx([2.31, 2.29]) and np.isinf(t.loss[1, 1])
    assert t.grad_norm.shape == (2, 2)
    assert t.checksum.dtype == object
    assert t.checksum.tolist() == [["abc", "abc"], [None, "abd"]]


def test_quoted_fields():
    text = '"step","rank","start_unix","duration_s","param_checksum"\n0,0,1,2,"a,b"\n0,1,1,2,"a,b"\n'
    t = load_steps_csv(text)
    assert t.checksum.tolist() == [["a,b", "a,b"]]


def test_bytes_input_is_decoded():
    t = load_steps_csv(_csv(_rows()).encode())
    assert t.duration.shape == (4, 3)


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        ("   \n\n  \n", "empty"),
        (HEADER + "\n", "no data rows"),
        ("0,0,1,2,3\n1,0,2,2,3\n", "header"),
        ("time,value\n1,2\n", "header"),
        ("step,rank,start_unix,duration_s\n\x00\x01\x02", "binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "UTF-8|binary"),
        (b"\xff\xfe\xfa\xfb" * 10, "UTF-8"),
        (gzip.compress(b"step,rank,start_unix,duration_s\n0,0,1,2\n"), "gzip"),
        (HEADER + "\nfoo,bar\nbaz\n", "no usable rows"),
        (12345, "text"),
    ],
)
def test_unusable_input_raises_parse_error(text, match):
    with pytest.raises(ParseError, match=match):
        load_steps_csv(text)


def test_too_sparse_table_is_refused():
    # every row a new step and a new rank: a dense table would need n^2 cells
    rows = [f"{i},{i},{i},1" for i in range(3000)]
    with pytest.raises(ParseError, match="sparse"):
        load_steps_csv("step,rank,start_unix,duration_s\n" + "\n".join(rows))


def test_huge_rank_ids_and_very_long_garbage_line():
    rows = ["0,1000000000000,1,2,1", "0,7,1,2,1", "x" * 1_000_000, "1,7,3,2,1", "1,1000000000000,3,2,1"]
    t = load_steps_csv(_csv(rows))
    assert t.ranks.tolist() == [7, 1_000_000_000_000]
    assert t.rows_skipped == 1


def test_many_bad_rows_keep_warnings_short():
    rows = _rows(steps=range(2), ranks=range(2)) + ["garbage"] * 500 + [f"{i},0,abc,1,1" for i in range(500)]
    t = load_steps_csv(_csv(rows))
    assert t.rows_skipped == 1000
    assert len(t.warnings) <= 21


def test_large_table_parses():
    s_n, r_n = 400, 256  # ~100k rows
    rng = np.random.default_rng(0)
    comp = rng.uniform(0.9, 1.1, (s_n, r_n))
    lines = [HEADER + ",loss"]
    for s in range(s_n):
        for r in range(r_n):
            lines.append(f"{s},{r},{1e9 + 2 * s:.3f},1.5,{comp[s, r]:.6f},2.5")
    t = load_steps_csv("\n".join(lines))
    assert t.compute.shape == (s_n, r_n)
    np.testing.assert_allclose(t.compute, comp, rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    perm_seed=st.integers(0, 10_000),
    drop=st.sets(st.integers(0, 29), max_size=5),
    dup=st.sets(st.integers(0, 29), max_size=5),
)
def test_shuffles_drops_and_reruns_property(perm_seed, drop, dup):
    base = []
    for s in range(10):
        for r in range(3):
            base.append((s, r, 100.0 + 10 * s, 1.0 + s, 0.5 + r))
    rows = [b for i, b in enumerate(base) if i not in drop]
    # a rerun (later start) replaces the value; the median start of the step may move with it
    reruns = [(b[0], b[1], b[2] + 5.0, 99.0, 99.0) for i, b in enumerate(base) if i in dup and i not in drop]
    allrows = rows + reruns
    random.Random(perm_seed).shuffle(allrows)
    t = load_steps_csv(_csv([f"{a},{b},{c},{d},{e}" for a, b, c, d, e in allrows]))
    kept = {(b[0], b[1]): b for b in rows}
    kept.update({(b[0], b[1]): b for b in reruns})
    assert t.rows_rerun == len(reruns)
    assert np.all(np.diff(t.start) >= 0)
    for (s, r), b in kept.items():
        i = t.steps.tolist().index(s)
        j = t.ranks.tolist().index(r)
        assert t.duration[i, j] == b[3]
    assert int(np.isfinite(t.duration).sum()) == len(kept)


def test_from_arrays_checks_shapes():
    d = np.ones((5, 3), dtype=np.float32)
    t = StepTable.from_arrays(d, d * 0.5)
    assert t.n_steps == 5 and t.n_ranks == 3 and t.start.shape == (5,)
    with pytest.raises(ValueError, match="compute"):
        StepTable.from_arrays(d, np.ones((5, 4), dtype=np.float32))
