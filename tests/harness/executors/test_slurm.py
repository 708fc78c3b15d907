"""Approved drain_node proposals carried out on a real Slurm, and every refusal the gate makes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from forensic.harness.executors import (
    ExecutionError,
    ExecutionGate,
    ExecutorsConfig,
    SlurmExecutor,
    SqliteLedger,
    annotate,
)
from forensic.harness.executors.config import SlurmConfig

from .conftest import Approved


def _gate(
    approved: Approved, slurm=None, *, node: str | None = None, clock=time.time, max_age: float = 3600
) -> ExecutionGate:
    host = approved.proposal("rp-1")["target"]
    slurm_cfg = None
    if slurm is not None:
        slurm_cfg = SlurmConfig(slurm_conf=slurm.conf, nodes={host: node or slurm.node})
    cfg = ExecutorsConfig.model_validate(
        {"approvals": {"max_age_s": max_age}, **({"slurm": slurm_cfg.model_dump()} if slurm_cfg else {})}
    )
    return ExecutionGate(
        cfg, ledger=SqliteLedger(approved.checkpoints), audit_log=approved.audit, clock=clock
    )


def _audit(approved: Approved) -> list[dict]:
    return [json.loads(line) for line in approved.audit.read_text().splitlines()]


def test_drain_verify_and_undo_on_a_real_slurm(approved: Approved, slurm) -> None:
    gate = _gate(approved, slurm)
    assert approved.proposal("rp-1")["action"] == "drain_node"
    out = gate.execute(approved.thread, approved.state(), "rp-1")
    assert out["state"] == "succeeded", out
    state, reason = slurm.sinfo().split("|")
    assert state.startswith("drain") and reason == f"forensic {approved.thread} rp-1"
    steps = [(e["decision"], e["outcome"]) for e in _audit(approved) if e["proposal_id"] == "rp-1"]
    assert ("execute", "planned") in steps and ("execute", "started") in steps
    assert ("execute", "succeeded") in steps and ("verify", "verified") in steps
    annotated = annotate(approved.report, gate.ledger.for_thread(approved.thread))
    assert [p["execution"]["state"] for p in annotated["proposals"]][:1] == ["succeeded"]

    undone = gate.undo(approved.thread, approved.state(), "rp-1")
    assert undone["state"] == "undone"
    assert "drain" not in slurm.sinfo().split("|")[0]
    assert ("undo", "undone") in [(e["decision"], e["outcome"]) for e in _audit(approved)]


def test_already_executed_does_not_run_twice(approved: Approved, slurm) -> None:
    gate = _gate(approved, slurm)
    gate.execute(approved.thread, approved.state(), "rp-1")
    with pytest.raises(ExecutionError, match="already run"):
        gate.execute(approved.thread, approved.state(), "rp-1")
    gate.undo(approved.thread, approved.state(), "rp-1")
    with pytest.raises(ExecutionError, match="already run"):  # undone is final too: approve again to redo
        gate.execute(approved.thread, approved.state(), "rp-1")


def test_two_concurrent_executions_exactly_one_runs(approved: Approved, slurm) -> None:
    results: list[str] = []

    def go() -> None:
        gate = _gate(approved, slurm)  # each with its own store connection, as two processes would
        try:
            results.append(gate.execute(approved.thread, approved.state(), "rp-1")["state"])
        except ExecutionError as exc:
            results.append(f"refused: {exc}")

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.split(":")[0] for r in results) == ["refused", "succeeded"], results
    started = [e for e in _audit(approved) if e["outcome"] == "started"]
    assert len(started) == 1
    _gate(approved, slurm).undo(approved.thread, approved.state(), "rp-1")


def test_slurm_down_is_a_clear_error_and_can_be_retried(approved: Approved, tmp_path: Path) -> None:
    dead = tmp_path / "slurm.conf"
    dead.write_text(
        "ClusterName=x\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\nAuthType=auth/munge\n"
        f"AuthInfo=socket={tmp_path}/no.sock\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n"
    )
    host = approved.proposal("rp-1")["target"]
    cfg = ExecutorsConfig.model_validate(
        {"slurm": {"slurm_conf": str(dead), "nodes": {host: "n1"}, "timeout_s": 20}}
    )
    gate = ExecutionGate(cfg, ledger=SqliteLedger(approved.checkpoints), audit_log=approved.audit)
    if not SlurmExecutor(cfg.slurm).config.scontrol:
        pytest.skip("no scontrol")
    with pytest.raises(ExecutionError) as caught:
        gate.execute(approved.thread, approved.state(), "rp-1")
    assert "scontrol update" in str(caught.value) or "not installed" in str(caught.value)
    assert gate.ledger.get(approved.thread, "rp-1")["state"] == "failed"
    assert ("execute", "failed") in [(e["decision"], e["outcome"]) for e in _audit(approved)]
    with pytest.raises(ExecutionError):  # a failed run may be retried (and fails again, cleanly)
        gate.execute(approved.thread, approved.state(), "rp-1")


def test_unapproved_rejected_changed_expired_and_unknown_are_refused(tmp_path: Path) -> None:
    a = Approved(tmp_path, approve=("rp-1",), reject=("rp-2",))
    cfg = {
        "slurm": {"nodes": {a.proposal("rp-1")["target"]: "n1"}},
        "runbook": {"url": "http://127.0.0.1:9/never"},
    }
    gate = ExecutionGate(
        ExecutorsConfig.model_validate(cfg), ledger=SqliteLedger(a.checkpoints), audit_log=a.audit
    )
    with pytest.raises(ExecutionError, match="rejected, not approved"):
        gate.execute(a.thread, a.state(), "rp-2")
    with pytest.raises(ExecutionError, match="no such proposal"):
        gate.execute(a.thread, a.state(), "rp-9")

    state = a.state()
    changed = json.loads(json.dumps(state))
    changed["report"]["proposals"][0]["target"] = "some-other-host"  # content no longer matches its hash
    with pytest.raises(ExecutionError, match="changed since it was approved"):
        gate.execute(a.thread, changed, "rp-1")

    forged = json.loads(json.dumps(state))
    forged["decisions"] = []  # status says approved, but the gate never recorded an approval
    with pytest.raises(ExecutionError, match="no approval of this exact content"):
        gate.execute(a.thread, forged, "rp-1")

    later = ExecutionGate(
        ExecutorsConfig.model_validate({**cfg, "approvals": {"max_age_s": 60}}),
        ledger=SqliteLedger(a.checkpoints),
        audit_log=a.audit,
        clock=lambda: time.time() + 3600,
    )
    with pytest.raises(ExecutionError, match="expire"):
        later.execute(a.thread, a.state(), "rp-1")
    refused = [e for e in _audit(a) if e["outcome"] == "refused" and e["decision"] == "execute"]
    assert len(refused) == 5


def test_pending_proposal_is_refused(tmp_path: Path) -> None:
    a = Approved(tmp_path, approve=("rp-1",))
    gate = ExecutionGate(
        ExecutorsConfig.model_validate({"runbook": {"url": "http://127.0.0.1:9/"}}),
        ledger=SqliteLedger(a.checkpoints),
        audit_log=a.audit,
    )
    pending = [p["id"] for p in a.report["proposals"] if p["status"] == "pending_approval"]
    assert pending
    with pytest.raises(ExecutionError, match="pending_approval, not approved"):
        gate.execute(a.thread, a.state(), pending[0])


def test_a_host_that_does_not_map_is_refused(approved: Approved) -> None:
    gate = ExecutionGate(
        ExecutorsConfig.model_validate({"slurm": {"nodes": {"someone-else": "n1"}}}),
        ledger=SqliteLedger(approved.checkpoints),
        audit_log=approved.audit,
    )
    with pytest.raises(ExecutionError, match="does not map to a node"):
        gate.execute(approved.thread, approved.state(), "rp-1")


@pytest.mark.parametrize("bad", ["n1; reboot", "n1 State=DOWN", "../n1", "", "n" * 300, "$(id)"])
def test_hostile_node_names_never_reach_scontrol(bad: str, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="node name|String should"):
        SlurmConfig.model_validate({"nodes": {"h": bad}}).node_for("h")
    pattern = SlurmConfig.model_validate({"node_pattern": "{host}"})
    with pytest.raises(ExecutionError):
        pattern.node_for(bad)


def test_cli_dry_run_execute_and_refusal(approved: Approved, slurm, tmp_path: Path) -> None:
    cfg = tmp_path / "executors.toml"
    cfg.write_text(
        f'[slurm]\nslurm_conf = "{slurm.conf}"\nnodes = {{ "{approved.proposal("rp-1")["target"]}" = "{slurm.node}" }}\n'
    )
    env = {
        **slurm.env(),
        "FORENSIC_STATE_DIR": str(approved.state_dir),
        "USER": "mallory",
        "LOGNAME": "mallory",
    }

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "forensic.harness.cli",
                "execute",
                approved.thread,
                *args,
                "--config",
                str(cfg),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    dry = cli("rp-1", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would run: scontrol update" in dry.stdout and "drain" not in slurm.sinfo().split("|")[0]
    done = cli("rp-1")
    assert done.returncode == 0, done.stderr
    assert "verified" in done.stdout and slurm.sinfo().startswith("drain")
    again = cli("rp-1")
    assert again.returncode == 2 and "already run" in again.stderr and "Traceback" not in again.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "show", approved.thread, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    states = {p["id"]: p["execution"]["state"] for p in json.loads(shown.stdout)["proposals"]}
    assert states["rp-1"] == "succeeded" and set(states.values()) <= {"succeeded", "not_executed"}
    undo = cli("rp-1", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert "drain" not in slurm.sinfo().split("|")[0]
    who = {e["approver"] for e in _audit(approved) if e["decision"] in ("execute", "undo", "dry-run")}
    assert who and "mallory" not in who  # the OS user, never the environment


def test_the_cli_prints_each_scontrol_line_once(approved: Approved, slurm, tmp_path: Path) -> None:
    """One execution, one `scontrol` line on the screen (the result repeated the step it ran); the
    undo likewise."""
    host = approved.proposal("rp-1")["target"]
    cfg = tmp_path / "executors.toml"
    cfg.write_text(f'[slurm]\nslurm_conf = "{slurm.conf}"\n\n[slurm.nodes]\n"{host}" = "{slurm.node}"\n')

    def cli(*extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "forensic.harness.cli", "execute", approved.thread, "rp-1"]
            + ["--checkpoint", str(approved.checkpoints), "--config", str(cfg), *extra],
            capture_output=True,
            text=True,
            env={**os.environ, "FORENSIC_STATE_DIR": str(approved.state_dir), "COLUMNS": "200"},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    ran = cli()
    assert ran.count("scontrol update") == 1, ran
    assert f"NodeName={slurm.node} State=DRAIN" in ran and "rp-1: succeeded" in ran
    undone = cli("--undo")
    assert undone.count("scontrol update") == 1 and "State=RESUME" in undone and "rp-1: undone" in undone, (
        undone
    )
