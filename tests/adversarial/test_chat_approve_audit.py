"""A refused ``/approve`` (or ``/reject``) in chat is audited, as ``forensic approve``'s is.

Refused before any report exists, for a proposal that does not exist, and with no proposal named:
each is an audit line with outcome ``refused``, the reason, and the operating-system user.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

from forensic.harness import audit

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def test_refused_chat_decisions_are_audited(tmp_path: Path) -> None:
    env = {**os.environ, "FORENSIC_STATE_DIR": str(tmp_path), "USER": "mallory", "LOGNAME": "mallory"}
    script = "/approve rp-1 too early\nwhy is it slow?\n/approve rp-99\n/reject\n/approve rp-1 fine\n/approve rp-1 again\n/quit\n"
    done = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "chat", str(CASE), "--plain"],
        input=script,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    me = pwd.getpwuid(os.getuid()).pw_name
    audit.verify(tmp_path / "audit.jsonl")  # the refusals sit in the same intact chain
    entries = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    got = [(e["proposal_id"], e["decision"], e["outcome"], e["approver"]) for e in entries]
    assert got == [
        ("rp-1", "approve", "refused", me),
        ("rp-99", "approve", "refused", me),
        ("?", "reject", "refused", me),
        ("rp-1", "approve", "approved", me),
        ("rp-1", "approve", "refused", me),
    ], got
    reasons = [e["reason"] for e in entries if e["outcome"] == "refused"]
    assert (
        "nothing to decide yet" in reasons[0]
        and "no such proposal" in reasons[1]
        and "name a proposal" in reasons[2]
    )
    assert "rp-99 refused by" in done.stdout and "mallory" not in json.dumps(entries)
