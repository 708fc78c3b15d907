"""A thread is continued (resumed, decided on) with the playbooks it was investigated with.

Its hypotheses, verdict and proposals name root causes of those playbooks: `forensic approve` and
`forensic investigate --resume` load the thread's own playbook folder when none is given, and
refuse, in one line, to go on under different ones.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.harness.failure_graph import PLAYBOOK_DIR, default_graph, load_failure_graph
from forensic.harness.graph import Investigator
from forensic.sandbox import ForensicError

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop" / "bundle"


def _copy(tmp_path: Path, name: str, prior: str | None = None) -> Path:
    pb = tmp_path / name
    shutil.copytree(PLAYBOOK_DIR, pb, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    if prior is not None:  # other playbooks: the same classes with another prior for one of them
        f = pb / "root_causes" / "pcie_downtrain.toml"
        f.write_text(f.read_text().replace("\nprior = ", f"\nprior = {prior}  # was ", 1))
    return pb


def _cli(*args: str, state: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={"FORENSIC_STATE_DIR": str(state), "PATH": "/usr/bin:/bin", "HOME": str(state)},
    )


def test_a_graph_knows_its_folder_and_its_content() -> None:
    shipped = default_graph()
    assert shipped.folder is None


def test_the_same_content_is_the_same_playbooks(tmp_path: Path) -> None:
    copy = load_failure_graph(_copy(tmp_path, "same"))
    assert copy.folder == str((tmp_path / "same").resolve())
    assert copy.digest() == default_graph().digest()
    assert load_failure_graph(_copy(tmp_path, "other", prior="0.2")).digest() != copy.digest()


def test_deciding_under_other_playbooks_is_refused(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    mine = load_failure_graph(_copy(tmp_path, "mine", prior="0.2"))
    first = Investigator(CASE, graph=mine, checkpointer=saver)
    cfg = first.config()
    report = first.run(thread_id=cfg["configurable"]["thread_id"], await_approval=True)
    thread = cfg["configurable"]["thread_id"]
    p = report["proposals"][0]
    decision = {
        "proposal_id": p["id"],
        "content_hash": p["content_hash"],
        "decision": "approve",
        "approver": "tester",
        "authenticated": True,
    }
    with pytest.raises(ForensicError, match="investigated with the playbooks in .*mine.*pass --playbooks"):
        Investigator(CASE, checkpointer=saver).decide(thread, [decision])
    with pytest.raises(ForensicError, match="playbooks"):
        Investigator(CASE, checkpointer=saver).resume(thread)
    again = Investigator(CASE, graph=load_failure_graph(tmp_path / "mine"), checkpointer=saver)
    decided, audit = again.decide(thread, [decision])
    assert audit[0]["outcome"] != "refused"
    assert next(q for q in decided["proposals"] if q["id"] == p["id"])["status"] == "approved"


def test_approve_and_resume_use_the_threads_own_playbooks(tmp_path: Path) -> None:
    pb = _copy(tmp_path, "mine", prior="0.2")
    cp = tmp_path / "cp.sqlite"
    run = _cli(
        "investigate",
        str(CASE),
        "--playbooks",
        str(pb),
        "--checkpoint",
        str(cp),
        "--thread",
        "t-1",
        "--json",
        "--new",
        state=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    p = json.loads(run.stdout)["proposals"][0]
    # no --playbooks: the thread's folder is loaded
    resumed = _cli(
        "investigate", str(CASE), "--resume", "t-1", "--checkpoint", str(cp), "--json", state=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    # other playbooks: one line, exit 2
    other = _copy(tmp_path, "other", prior="0.3")
    refused = _cli(
        "investigate",
        str(CASE),
        "--resume",
        "t-1",
        "--checkpoint",
        str(cp),
        "--playbooks",
        str(other),
        state=tmp_path,
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert "was investigated with the playbooks in" in refused.stderr
    ok = _cli(
        "approve",
        "t-1",
        "--approve",
        f"{p['id']}={p['content_hash']}",
        "--checkpoint",
        str(cp),
        "--json",
        state=tmp_path,
    )
    assert ok.returncode == 0, ok.stderr
    assert next(q for q in json.loads(ok.stdout)["proposals"] if q["id"] == p["id"])["status"] == "approved"
    # the folder is gone: a clear line, not a traceback
    shutil.rmtree(pb)
    gone = _cli("investigate", str(CASE), "--resume", "t-1", "--checkpoint", str(cp), state=tmp_path)
    assert gone.returncode == 2 and "which is gone" in gone.stderr and "Traceback" not in gone.stderr
