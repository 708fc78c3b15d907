"""The transformations do what they say: the source is untouched, renames leave no old name, and
a kernel log in another style holds the same events at the same times (as the parser reads it)."""

from __future__ import annotations

import hashlib
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from forensic.tools.kernel_log import log_read_at, log_year
from forensic.tools.parsers.kernel_log import parse_kernel_log

from tests.metamorphic.transforms import (
    TRANSFORMS,
    _read,
    find,
    load_json,
    read_dmesg,
    transformed,
    write_dmesg,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir())
BY_NAME = {t.name: t for t in TRANSFORMS}


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_no_transformation_writes_its_source(tmp_path: Path) -> None:
    src = EXAMPLES / "gpu-fell-off-bus-hang" / "bundle"
    before = _digest(src)
    for i, t in enumerate(TRANSFORMS):
        transformed(t, src, tmp_path / str(i))
    assert _digest(src) == before


@pytest.mark.parametrize("name", ["hosts-fqdn", "hosts-ip", "rdma-devices", "switches"])
def test_a_rename_leaves_no_old_name(tmp_path: Path, name: str) -> None:
    src = EXAMPLES / "power-brake-straggler" / "bundle"
    renames = transformed(BY_NAME[name], src, tmp_path / "b")
    assert renames and len(set(renames.values())) == len(renames)
    old = re.compile(
        r"(?<![A-Za-z0-9_.-])(" + "|".join(map(re.escape, renames)) + r")(?![A-Za-z0-9_-]|\.[a-z0-9]+-)"
    )
    for p in (tmp_path / "b").rglob("*"):
        rel = str(p.relative_to(tmp_path / "b"))
        assert not old.search(rel), rel
        if p.is_file():
            assert not old.search(_read(p)), rel


def _events(text: str, collected: dict, year: int | None, end: float) -> list[tuple]:
    """Events as the kernel_log tool reads them."""
    log = parse_kernel_log(
        text, boot_unix=collected.get("boot"), year=year, not_after=log_read_at((None, end), collected)
    )
    return [
        (
            e.kind,
            e.xid,
            str(e.pci) if e.pci else None,
            None if e.time_unix is None else math.floor(e.time_unix),
        )
        for e in log.events
    ]


@pytest.mark.parametrize("style", ["plain", "kmsg", "ctime", "journalctl"])
@pytest.mark.parametrize("case", CASES)
def test_a_kernel_log_in_another_style_reads_the_same(tmp_path: Path, case: str, style: str) -> None:
    src = EXAMPLES / case / "bundle"
    dst = tmp_path / "b"
    transformed(BY_NAME[f"dmesg-{style}"], src, dst)
    win = load_json(src, "incident.json")["window"]
    start, end = (datetime.fromisoformat(win[k].replace("Z", "+00:00")).timestamp() for k in ("start", "end"))
    year = log_year((start, end))
    compared = 0
    for node in sorted((src / "nodes").iterdir()):
        a, b = find(node, "cmd", "dmesg.txt"), find(dst / "nodes" / node.name, "cmd", "dmesg.txt")
        if a is None or b is None:
            continue
        meta_a, meta_b = (
            load_json(node, "collected.json"),
            load_json(dst / "nodes" / node.name, "collected.json"),
        )
        want, got = _events(_read(a), meta_a, year, end), _events(_read(b), meta_b, year, end)
        # A style that prints whole seconds may move an event to the second before.
        assert [w[:3] for w in want] == [g[:3] for g in got], node.name
        for w, g in zip(want, got, strict=True):
            if w[3] is not None:
                assert g[3] is not None and abs(w[3] - g[3]) <= 1, (node.name, w, g)
        compared += 1
    assert compared


def test_read_and_write_dmesg_round_trip() -> None:
    boot = datetime(2026, 3, 10, 0, 0, 0, tzinfo=UTC).timestamp()
    text = "[ 5821.004113] NVRM: Xid (PCI:0000:1b:00): 79, GPU has fallen off the bus.\n    continued\n"
    lines = read_dmesg(text, window_end=boot + 86400)
    assert lines[0].uptime == pytest.approx(5821.004113) and lines[1].uptime is None
    for style in ("kmsg", "ctime", "journalctl"):
        again = read_dmesg(write_dmesg(lines, style, boot=boot, host="h1"), window_end=boot + 86400)
        assert [kl.text for kl in again] == [kl.text for kl in lines]
        t = again[0].wall if again[0].wall is not None else boot + again[0].uptime
        assert abs(t - (boot + 5821.004113)) < 1
