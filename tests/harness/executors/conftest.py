"""An approved investigation to execute, and a real Slurm (munged, slurmctld, slurmd) on this host."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from forensic.harness.approvals import Decision
from forensic.harness.graph import Investigator
from langgraph.checkpoint.sqlite import SqliteSaver

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"
APPROVAL_REASON = "x8 link confirmed; the spare node is free"


class Approved:
    """A checkpointed investigation of the example whose rp-1 (drain_node) a person approved."""

    def __init__(self, tmp: Path, approve: tuple[str, ...] = ("rp-1",), reject: tuple[str, ...] = ()) -> None:
        self.state_dir = tmp / "state"
        self.state_dir.mkdir()
        self.checkpoints = self.state_dir / "checkpoints.sqlite"
        self.audit = self.state_dir / "audit.jsonl"
        self.thread = "t-exec"
        saver = SqliteSaver(sqlite3.connect(str(self.checkpoints), check_same_thread=False))
        inv = Investigator(EXAMPLE, checkpointer=saver, audit_log=self.audit)
        report = inv.run(thread_id=self.thread, await_approval=True)
        by_id = {p["id"]: p for p in report["proposals"]}
        decisions = [
            Decision(
                proposal_id=pid,
                content_hash=by_id[pid]["content_hash"],
                decision="approve",
                approver="alice",
                authenticated=True,
                comment=APPROVAL_REASON,
            )
            for pid in approve
        ]
        decisions += [
            Decision(
                proposal_id=pid,
                content_hash=by_id[pid]["content_hash"],
                decision="reject",
                approver="alice",
                authenticated=True,
            )
            for pid in reject
        ]
        self.report, _ = inv.decide(self.thread, decisions)
        self.saver = saver

    def state(self) -> dict:
        return self.saver.get_tuple({"configurable": {"thread_id": self.thread}}).checkpoint["channel_values"]

    def proposal(self, pid: str) -> dict:
        return next(p for p in self.report["proposals"] if p["id"] == pid)


@pytest.fixture()
def approved(tmp_path: Path) -> Approved:
    return Approved(tmp_path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    """munged + slurmctld + slurmd in a temp folder, on free ports, one real node: this host."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.sock = root / "munge.sock"

    def start(self) -> None:
        r = self.root
        (r / "state").mkdir()
        (r / "spool").mkdir()
        key = r / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        ctld, slurmd = _free_port(), _free_port()
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=forensictest",
                    f"SlurmctldHost={self.node}(127.0.0.1)",
                    f"SlurmctldPort={ctld}",
                    f"SlurmdPort={slurmd}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    f"AuthInfo=socket={self.sock}",
                    "CredType=cred/munge",
                    f"StateSaveLocation={r}/state",
                    f"SlurmdSpoolDir={r}/spool",
                    f"SlurmctldPidFile={r}/slurmctld.pid",
                    f"SlurmdPidFile={r}/slurmd.pid",
                    f"SlurmctldLogFile={r}/slurmctld.log",
                    f"SlurmdLogFile={r}/slurmd.log",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/linear",
                    "SchedulerType=sched/builtin",
                    "ReturnToService=2",
                    "MpiDefault=none",
                    "JobCompType=jobcomp/none",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN",
                    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        subprocess.run(
            [
                "munged",
                "--force",
                f"--socket={self.sock}",
                f"--key-file={key}",
                f"--pid-file={r}/munged.pid",
                f"--log-file={r}/munged.log",
                f"--seed-file={r}/munge.seed",
            ],
            check=True,
            timeout=30,
        )
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True, timeout=30)
        subprocess.run(["slurmd", "-f", str(self.conf)], check=True, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = self.sinfo()
            if out and out.split("|")[0].rstrip("*") in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.5)
        raise RuntimeError(
            f"slurm did not come up: {self.sinfo()!r}\n{(r / 'slurmctld.log').read_text()[-2000:]}"
        )

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def sinfo(self) -> str:
        done = subprocess.run(
            ["sinfo", "-h", "-N", "-n", self.node, "-o", "%T|%E"],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=30,
        )
        return done.stdout.strip()

    def stop(self) -> None:
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.root / f"{name}.pid"
            try:
                os.kill(int(pid.read_text().strip()), 15)
            except (OSError, ValueError):
                pass


def slurm_available() -> bool:
    return all(shutil.which(b) for b in ("munged", "slurmctld", "slurmd", "sinfo", "scontrol"))


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory):
    if not slurm_available():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "Slurm (munge, slurmctld, slurmd, slurm-client) is not installed; .ci/run installs it"
            )
        pytest.skip("Slurm is not installed (apt-get install slurmctld slurmd munge slurm-client)")
    s = Slurm(tmp_path_factory.mktemp("slurm"))
    try:
        s.start()
        yield s
    finally:
        s.stop()
