"""Opening is openat-style (O_NOFOLLOW per component, checked after opening):
nothing outside the bundle is opened, not by the gzip check, not by a symlink swapped mid-read;
FIFOs and devices are never read, and an optional topology.json that is one is ignored."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from forensic.sandbox import Bundle, ConfinedFS, SandboxError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _opened_outside(root: Path, fn) -> list[str]:
    """Paths outside ``root`` that ``fn`` opened, seen by an audit hook (not by trusting code)."""
    seen: list[str] = []
    active = [True]

    def hook(event, args):
        if active[0] and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            p = os.fsdecode(args[0])
            if p.startswith("/") and not p.startswith(str(root)) and "outside" in p:
                seen.append(p)

    sys.addaudithook(hook)
    try:
        fn()
    finally:
        active[0] = False
    return seen


def test_a_gz_symlink_out_of_the_bundle_is_never_opened(make_bundle, tmp_path: Path) -> None:
    root = make_bundle(None)
    secret = tmp_path / "outside.gz"
    secret.write_bytes(b"SE")  # not gzip: the old check's error quoted these two bytes
    (root / "nodes" / "leak.txt.gz").symlink_to(secret)
    opened = _opened_outside(root, lambda: Bundle(root))
    assert opened == []
    with pytest.raises(SandboxError):
        Bundle(root).fs.read_text("nodes/leak.txt")


def test_an_optional_topology_that_is_a_fifo_is_ignored(make_bundle) -> None:
    root = make_bundle(None)
    (root / "topology.json").unlink(missing_ok=True)
    os.mkfifo(root / "topology.json")
    b = Bundle(root)  # does not block, does not fail
    assert b.topology is None and "topology.json" in b.topology_error


def test_a_folder_as_topology_is_ignored(make_bundle) -> None:
    root = make_bundle(None)
    (root / "topology.json").unlink(missing_ok=True)
    (root / "topology.json").mkdir()
    assert Bundle(root).topology is None


def test_a_symlink_swapped_during_reads_is_never_followed_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.txt").write_text("inside")
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET")
    link = root / "f.txt"
    link.symlink_to("inside.txt")
    stop = threading.Event()

    def swap() -> None:
        tmp = root / "f.tmp"
        targets = [str(outside), "inside.txt"]
        i = 0
        while not stop.is_set():
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(targets[i % 2])
            os.replace(tmp, link)
            i += 1

    t = threading.Thread(target=swap, daemon=True)
    t.start()
    fs = ConfinedFS(root)
    got = set()
    try:
        for _ in range(3000):
            try:
                got.add(fs.read_text("f.txt"))
            except SandboxError:
                got.add("refused")
    finally:
        stop.set()
        t.join(5)
    assert "SECRET" not in got
    assert "inside" in got


_NAME = st.sampled_from(["a", "b", "c", "..", ".", "f.txt"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    targets=st.lists(st.lists(_NAME, min_size=1, max_size=5), min_size=1, max_size=4),
    absolute=st.booleans(),
    path=st.lists(_NAME.filter(lambda n: n != ".."), min_size=1, max_size=4),
)
def test_no_symlink_maze_reaches_outside(tmp_path_factory, targets, absolute, path) -> None:
    base = tmp_path_factory.mktemp("maze")
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (base / "f.txt").write_text("SECRET")
    (root / "a" / "f.txt").write_text("inside")
    for i, parts in enumerate(targets):
        target = "/".join(parts)
        where = root / ("a" if i % 2 else "a/b") / ["c", "b2", "l", "m"][i]
        if not where.exists() and not where.is_symlink():
            where.symlink_to(str(base) + "/" + target if absolute else target)
    fs = ConfinedFS(root)
    for rel in ("/".join(path), "a/" + "/".join(path), "a/b/" + "/".join(path)):
        try:
            text = fs.read_text(rel)
        except SandboxError:
            continue
        assert text != "SECRET"
