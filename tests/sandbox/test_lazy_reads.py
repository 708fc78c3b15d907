"""Gzip streams checked when read (lazily), and what an investigation opened, counted."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.sandbox import Bundle, CorruptInputError
from forensic.tools.base import ToolContext, get_tool


def _truncate_dmesg(bundle: Path, host: str = "node-a.example") -> None:
    dm = bundle / "nodes" / host / "cmd" / "dmesg.txt"
    data = gzip.compress(dm.read_bytes() * 50)
    dm.unlink()
    (dm.parent / "dmesg.txt.gz").write_bytes(data[: len(data) // 2])


def test_lazy_open_reads_no_stream_and_a_corrupt_one_costs_its_read(make_bundle) -> None:
    b = make_bundle(None)
    _truncate_dmesg(b)
    with pytest.raises(CorruptInputError, match="dmesg.txt.gz"):
        Bundle(b)  # eager, the default: refused at open
    lazy = Bundle(b, verify_gzip="lazy")
    assert lazy.fs.opened == {"incident.json": 1, "topology.json": 1}  # no stream decompressed at open
    with pytest.raises(CorruptInputError, match="dmesg.txt.gz"):
        lazy.fs.read_text("nodes/node-a.example/cmd/dmesg.txt")
    assert lazy.fs.read_text("nodes/node-b.example/cmd/dmesg.txt")  # the other files are untouched
    # The stream's readable part is parsed; the record names the file as read only in part.
    result = get_tool("kernel_log")(ToolContext(lazy), {"host": "node-a.example"})
    assert result.status == "ok" and not result.unread
    assert result.partial and "dmesg.txt.gz" in result.partial[0] and "lost" in result.partial[0]


@pytest.mark.parametrize("fault", ["pcie_downtrain", "pfc_pause_storm"])
def test_an_investigation_opens_no_file_twice(make_bundle, make_fabric_bundle, fault: str) -> None:
    made = make_bundle(fault) if fault == "pcie_downtrain" else make_fabric_bundle(fault)
    bundle = Bundle(made, verify_gzip="lazy")
    report = Investigator(bundle).run(thread_id="t")
    assert report["verdict"]["root_cause"] != "healthy"
    assert bundle.fs.opened, "the investigation read nothing"
    twice = {rel: n for rel, n in bundle.fs.opened.items() if n > 1}
    assert twice == {}
    assert bundle.fs.bytes_opened >= sum((bundle.root / rel).stat().st_size for rel in bundle.fs.opened)


def test_a_streamed_document_read_by_several_parsers_is_opened_once(make_bundle, monkeypatch) -> None:
    from forensic.sandbox.sources import Document

    bundle = Bundle(make_bundle("pcie_downtrain"), verify_gzip="lazy")
    fs = bundle.fs
    rel = "nodes/node-a.example/cmd/dmesg.txt"
    doc = Document(None, rel, opener=lambda: fs.iter_lines(rel))
    first, second = list(doc.lines()), list(doc.lines())
    assert first == second == fs.read_text(rel).splitlines() and len(first) > 1
    assert doc.text == "\n".join(first)
    assert fs.opened[fs.source_of(rel)] == 2  # the two reads above (the second one: read_text), not three

    monkeypatch.setattr(Document, "KEEP_CHARS", 10)  # too large to keep: streamed again, bounded memory
    big = Document(None, rel, opener=lambda: fs.iter_lines(rel))
    assert list(big.lines()) == first and list(big.lines()) == first
    assert fs.opened[fs.source_of(rel)] == 4
