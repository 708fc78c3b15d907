"""Per-rank step files (job/steps*.csv) merge on read into the same table as one steps.csv."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pytest
from forensic.sandbox import Bundle, ParseError
from forensic.tools import ToolContext, get_tool
from forensic.tools.parsers.step_files import merge_step_files, step_file_names


def run_job_steps(bundle: Path):
    return get_tool("job_steps")(ToolContext(Bundle(bundle)), {})


def split_per_rank(
    bundle: Path, *, shuffle_columns: bool = True, drop_compute_for: int | None = None
) -> None:
    """Rewrite job/steps.csv as one file per rank (some gzip-compressed, columns in other orders)."""
    src = bundle / "job" / "steps.csv"
    rows = list(csv.DictReader(io.StringIO(src.read_text())))
    src.unlink()
    for rank in sorted({r["rank"] for r in rows}, key=int):
        cols = list(rows[0])
        if shuffle_columns and int(rank) % 2:
            cols = cols[::-1] + ["host"]
        if drop_compute_for == int(rank):
            cols.remove("compute_s")
        text = (
            ",".join(cols)
            + "\n"
            + "".join(",".join(r.get(c, "h") for c in cols) + "\n" for r in rows if r["rank"] == rank)
        )
        name = bundle / "job" / f"steps-rank{int(rank):05d}.csv"
        if int(rank) == 3:
            (name.parent / (name.name + ".gz")).write_bytes(gzip.compress(text.encode()))
        else:
            name.write_text(text)


def test_per_rank_files_find_the_same_straggler_as_one_file(make_bundle) -> None:
    whole = run_job_steps(make_bundle("pcie_downtrain"))
    bundle = make_bundle("pcie_downtrain")
    split_per_rank(bundle)
    merged = run_job_steps(bundle)
    assert merged.status == whole.status == "ok"
    assert (
        merged.data["n_ranks"] == whole.data["n_ranks"] == 8
        and merged.data["n_steps"] == whole.data["n_steps"]
    )
    assert [(s.name, s.component) for s in merged.signals] == [(s.name, s.component) for s in whole.signals]
    assert any(s.name == "straggler" and s.component == "node-b.example/gpu2" for s in merged.signals)
    assert len(merged.source) == 8 and "job/steps-rank00003.csv.gz" in merged.source


def test_one_file_without_compute_drops_compute_for_all(make_bundle) -> None:
    bundle = make_bundle("pcie_downtrain")
    split_per_rank(bundle, drop_compute_for=5)
    res = run_job_steps(bundle)
    assert res.status == "ok" and res.data["has_compute"] is False


def test_a_file_without_a_header_is_an_error_naming_it(make_bundle) -> None:
    bundle = make_bundle("pcie_downtrain")
    split_per_rank(bundle)
    (bundle / "job" / "steps-rank00009.csv").write_text("garbage,without,header\n1,2,3\n")
    res = run_job_steps(bundle)
    assert res.status == "error" and "steps-rank00009.csv" in res.summary


def test_steps_csv_wins_over_per_rank_files_and_other_names_are_ignored() -> None:
    assert step_file_names(["steps.csv", "steps-rank00001.csv"]) == ["steps.csv"]
    assert step_file_names(["steps-rank1.csv", "steps-rank0.csv", "logs", "notes.txt"]) == [
        "steps-rank0.csv",
        "steps-rank1.csv",
    ]
    assert step_file_names(["logs"]) == []


def test_a_torn_last_line_is_skipped() -> None:
    a = "step,rank,start_unix,duration_s\n0,0,1.0,0.5\n1,0,2.0,0.5\n"
    b = "rank,step,duration_s,start_unix\n1,0,0.5,1.0\n1,1,0.5\n"
    merged = merge_step_files([("a", a), ("b", b)])
    assert merged.splitlines() == [
        "step,rank,start_unix,duration_s",
        "0,0,1.0,0.5",
        "1,0,2.0,0.5",
        "0,1,1.0,0.5",
    ]
    with pytest.raises(ParseError, match="c.csv"):
        merge_step_files([("a", a), ("c.csv", "x,y\n")])
