"""A corrupt or truncated checkpoint file or execution ledger is one line on
stderr and exit 2 in ``list``, ``show``, ``plot``, ``chat``, ``execute`` (and ``--undo``) and
``approve``, never a traceback; and nothing is written over the damaged file.

Each command meets a checkpoint file truncated mid-way and a file of random bytes; ``show`` and
``execute`` also meet a corrupt separate executions file of an earlier release.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def _cli(state: Path, *args: str) -> subprocess.CompletedProcess:
    return cli.forensic_here(*args, state=state)


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real checkpoint file: two investigations waiting for approval (threads t1, t2)."""
    state = tmp_path_factory.mktemp("good")
    for thread in ("t1", "t2"):
        done = _cli(state, "investigate", str(CASE), "--thread", thread)
        assert done.returncode == 0, done.stderr
    return state / "checkpoints.sqlite"


def _damaged(good: Path, folder: Path, kind: str) -> Path:
    folder.mkdir()
    bad = folder / "checkpoints.sqlite"
    if kind == "truncated":
        data = good.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    else:
        bad.write_bytes(random.Random(25).randbytes(64 * 1024))
    return bad


COMMANDS = {
    "list": lambda cp: ["list", "--checkpoint", str(cp)],
    "show": lambda cp: ["show", "t1", "--checkpoint", str(cp)],
    "show-json": lambda cp: ["show", "t1", "--json", "--checkpoint", str(cp)],
    "plot": lambda cp: [
        "plot",
        "t1",
        "rank-heatmap",
        "--checkpoint",
        str(cp),
        "--out",
        str(cp.parent / "p.png"),
    ],
    "chat": lambda cp: ["chat", "--resume", "t1", "--plain", "--checkpoint", str(cp)],
    "execute": lambda cp: ["execute", "t1", "rp-1", "--checkpoint", str(cp)],
    "undo": lambda cp: ["execute", "t1", "rp-1", "--undo", "--checkpoint", str(cp)],
    "approve": lambda cp: ["approve", "t1", "--approve", f"rp-1={'0' * 64}", "--checkpoint", str(cp)],
}


@pytest.mark.parametrize("kind", ["truncated", "random"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_damaged_checkpoint_file_is_one_line_and_exit_2(
    good: Path, tmp_path: Path, kind: str, command: str
) -> None:
    bad = _damaged(good, tmp_path / "state", kind)
    before = hashlib.sha256(bad.read_bytes()).hexdigest()
    out = _cli(tmp_path / "state", *COMMANDS[command](bad))
    assert out.returncode == 2, (out.returncode, out.stdout[-500:], out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr and "Error:" not in out.stderr, out.stderr
    assert str(bad) in lines[0] and "cannot be read" in lines[0], lines[0]
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == before  # loses nothing: the file is as it was


@pytest.mark.parametrize("kind", ["truncated", "random"])
@pytest.mark.parametrize("command", ["show", "execute", "undo"])
def test_a_damaged_executions_file_is_one_line_and_exit_2(
    good: Path, tmp_path: Path, kind: str, command: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(good, state / "checkpoints.sqlite")
    legacy = _damaged(good, tmp_path / "legacy", kind)
    shutil.move(legacy, state / "executions.sqlite")
    out = _cli(state, *COMMANDS[command](state / "checkpoints.sqlite"))
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert "executions.sqlite" in lines[0], lines[0]
