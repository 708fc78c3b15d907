"""Evidence read only in part: a compressed kernel log cut short is parsed up to where it breaks,
named with what was lost, and withholds ``healthy`` unless complete per-rank step telemetry over
the window clears every rank; evidence not read at all keeps the run inconclusive.

The bundles are the unit fleet of tests/conftest.py (a healthy job with per-rank compute times)
with one host's ``dmesg.txt`` replaced by a gzip stream cut part way."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.harness.health import PARTIAL_CAP
from forensic.sandbox import Bundle, ConfinedFS, CorruptInputError, TruncatedStreamError
from forensic.tools import ToolContext
from forensic.tools.kernel_log import read_kernel_log

from tests.conftest import BUS, HOSTS, build_bundle

_BOOT_LINES = [
    f"[   {i}.000001] pci 0000:{BUS[i % 4]}:00.0: enabling device (0000 -> 0003)" for i in range(400)
]


def _truncate_dmesg(root: Path, host: str, lines: list[str], keep: float = 0.6) -> Path:
    """Replace ``host``'s dmesg with a gzip stream of ``lines`` cut after ``keep`` of its bytes."""
    plain = root / f"nodes/{host}/cmd/dmesg.txt"
    plain.unlink()
    data = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
    gz = plain.with_name("dmesg.txt.gz")
    gz.write_bytes(data[: int(len(data) * keep)])
    return gz


def _healthy(tmp_path: Path, **kw) -> Path:
    root = build_bundle(tmp_path / "b", None, **kw)
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = "Job restarted overnight; confirm it is healthy now"
    (root / "incident.json").write_text(json.dumps(inc))
    return root


def test_a_truncated_stream_hands_on_its_readable_part(tmp_path: Path) -> None:
    root = _healthy(tmp_path)
    _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    fs = ConfinedFS(root)
    with pytest.raises(TruncatedStreamError) as info:
        fs.read_text(f"nodes/{HOSTS[1]}/cmd/dmesg.txt")
    assert isinstance(info.value, CorruptInputError)  # every caller that caught it before still does
    text = info.value.readable.decode()
    assert text.startswith(_BOOT_LINES[0]) and 0 < text.count("\n") < len(_BOOT_LINES)


def test_the_kernel_log_parses_the_complete_lines_before_the_break(tmp_path: Path) -> None:
    """An XID inside the readable part is found; the line the stream broke in is dropped (a cut
    line can misread: ``Xid ...: 79`` cut to ``7``)."""
    root = _healthy(tmp_path)
    up = 86400 * 3 + 1800  # inside the window (boot is three days before it)
    xid = f"[{up:.6f}] NVRM: Xid (PCI:0000:{BUS[2]}:00): 79, pid=1, name=python3, GPU has fallen off the bus."
    _truncate_dmesg(root, HOSTS[1], [*_BOOT_LINES[:50], xid, *_BOOT_LINES[50:]], keep=0.5)
    got = read_kernel_log(ToolContext(Bundle(root, verify_gzip="lazy")), HOSTS[1])
    assert got is not None and got.lost and "complete lines" in got.lost
    assert any(e.xid == 79 for e in got.log.events)


def test_a_healthy_control_with_a_truncated_log_is_healthy_when_every_rank_is_cleared(tmp_path: Path) -> None:
    root = _healthy(tmp_path)
    _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["notes"])
    assert report["verdict"]["root_cause"] == "healthy"
    # never stronger than a probable verdict, and the reason names the partly read file
    assert report["verdict"]["confidence"] <= PARTIAL_CAP
    assert report["status_reason"].startswith("healthy, at most probable")
    assert f"nodes/{HOSTS[1]}/cmd/dmesg.txt.gz" in report["status_reason"]
    partly = [u for u in report["unread"] if "partly read" in u]
    assert partly and "lost" in partly[0] and HOSTS[1] in partly[0]
    assert any(n.startswith("partly read (1)") for n in report["notes"])
    assert not report["proposals"] or all(p["action"] == "open_ticket" for p in report["proposals"])


def test_without_per_rank_compute_times_a_partly_read_log_keeps_the_run_inconclusive(tmp_path: Path) -> None:
    root = _healthy(tmp_path, compute=False)
    _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert "read only in part" in report["status_reason"], report["status_reason"]


def test_steps_missing_a_rank_do_not_clear_every_rank(tmp_path: Path) -> None:
    root = _healthy(tmp_path)
    _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    steps = root / "job/steps.csv"
    rows = list(csv.reader(steps.open()))
    steps.write_text("\n".join(",".join(r) for r in rows if r[1] != "7") + "\n")  # rank 7 never logged
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert "read only in part" in report["status_reason"]


def test_steps_that_cover_only_part_of_the_window_do_not_clear_every_rank(tmp_path: Path) -> None:
    root = _healthy(tmp_path, n_steps=40)  # 40 logged steps 45 s apart: half an hour of a 90-minute window
    _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"


def test_a_log_unreadable_from_its_first_byte_keeps_the_run_inconclusive(tmp_path: Path) -> None:
    root = _healthy(tmp_path)
    gz = _truncate_dmesg(root, HOSTS[1], _BOOT_LINES)
    gz.write_bytes(gz.read_bytes()[:12])  # the gzip header and nothing that decompresses
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert report["status_reason"].startswith("not healthy: evidence could not be read")
    assert any("dmesg.txt.gz" in u and "partly read" not in u for u in report["unread"])


def test_a_readable_part_that_is_not_a_kernel_log_is_unread_not_partial(tmp_path: Path) -> None:
    root = _healthy(tmp_path)
    _truncate_dmesg(root, HOSTS[1], [f"garbage record {i} with no kernel prefix" for i in range(400)])
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert not any("partly read" in u for u in report["unread"])


def test_a_fault_found_elsewhere_still_leads_with_a_partly_read_log(tmp_path: Path) -> None:
    root = build_bundle(tmp_path / "b", "pcie_downtrain")
    _truncate_dmesg(root, HOSTS[0], _BOOT_LINES)
    report = Investigator(root).run()
    assert report["verdict"]["root_cause"] == "pcie_downtrain"
    assert report["verdict"]["component"] == f"{HOSTS[1]}/gpu2"
    assert report["status"] in ("confirmed", "probable")
