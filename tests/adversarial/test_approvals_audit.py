"""Items 6, 7, 8: decisions count only through a completed approve, once per proposal per
command; the audit log is hash-chained, never follows a symlink, and records every refusal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from forensic.harness import audit
from forensic.harness.approvals import Decision
from forensic.harness.graph import Investigator
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command


def _waiting(make_bundle, tmp_path: Path, log: Path | None = None):
    saver = InMemorySaver()
    inv = Investigator(
        make_bundle("pcie_downtrain"), checkpointer=saver, audit_log=log or tmp_path / "audit.jsonl"
    )
    return inv, inv.run(thread_id="t", await_approval=True)


def _d(p: dict, decision: str = "approve") -> Decision:
    return Decision(
        proposal_id=p["id"],
        content_hash=p["content_hash"],
        decision=decision,
        approver="alice",
        authenticated=True,
    )


def test_approve_and_reject_of_one_proposal_in_one_command_count_once(make_bundle, tmp_path: Path) -> None:
    inv, report = _waiting(make_bundle, tmp_path)
    p = report["proposals"][0]
    updated, entries = inv.decide("t", [_d(p), _d(p, "reject"), _d(p)])
    assert updated["proposals"][0]["status"] == "approved"
    assert [e["outcome"] for e in entries] == ["approved", "refused", "refused"]
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert sum(json.loads(ln)["outcome"] == "approved" for ln in lines) == 1


def test_the_audit_chain_detects_an_edit(make_bundle, tmp_path: Path) -> None:
    inv, report = _waiting(make_bundle, tmp_path)
    inv.decide("t", [_d(report["proposals"][0]), _d(report["proposals"][0], "reject")])
    log = tmp_path / "audit.jsonl"
    n, head = audit.verify(log)
    assert n == 2
    lines = log.read_text().splitlines()
    lines[0] = lines[0].replace('"approved"', '"rejected"')
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(audit.AuditError, match="line 2"):
        audit.verify(log)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(min_value=2, max_value=12), data=st.data())
def test_any_edit_removal_or_swap_breaks_the_chain(tmp_path_factory, n: int, data) -> None:
    log = tmp_path_factory.mktemp("a") / "audit.jsonl"
    for i in range(n):
        audit.append(log, [{"i": i, "outcome": "refused"}])
    lines = log.read_bytes().splitlines(keepends=True)
    k = data.draw(st.integers(min_value=0, max_value=n - 2))
    how = data.draw(st.sampled_from(["edit", "drop", "swap"]))
    if how == "edit":
        lines[k] = lines[k].replace(b'"i": ', b'"i": 1')
    elif how == "drop":
        del lines[k]
    else:
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    log.write_bytes(b"".join(lines))
    with pytest.raises(audit.AuditError):
        audit.verify(log)


def test_the_audit_log_never_follows_a_symlink_or_writes_a_fifo(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    with pytest.raises(audit.AuditError, match="symlink"):
        audit.append(link, [{"x": 1}])
    assert target.read_text() == ""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(audit.AuditError, match="regular"):
        audit.append(fifo, [{"x": 1}])


def test_a_crashed_approve_does_not_count_on_a_later_resume(make_bundle, tmp_path: Path) -> None:
    bad = tmp_path / "audit.jsonl"
    bad.symlink_to(tmp_path / "nowhere")  # the gate's audit write fails: the approve crashes
    inv, report = _waiting(make_bundle, tmp_path, log=bad)
    p = report["proposals"][0]
    with pytest.raises(audit.AuditError, match="symlink"):
        inv.app.invoke(Command(resume=[_d(p).model_dump()]), inv.config("t"))
    resumed = inv.resume("t")
    assert all(q["status"] == "pending_approval" for q in resumed["proposals"])
