"""A refused ``/approve`` (or ``/reject``) in chat is audited, as ``forensic approve``'s is.

Refused before any report exists, for a proposal that does not exist, and with no proposal named:
each is an audit line with outcome ``refused``, the reason, and the operating-system user.
"""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

from forensic.harness import audit

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"


def test_refused_chat_decisions_are_audited(tmp_path: Path) -> None:
    script = "/approve rp-1 too early\nwhy is it slow?\n/approve rp-99\n/reject\n/approve rp-1 fine\n/approve rp-1 again\n/quit\n"
    done = cli.forensic_here(
        "chat",
        str(CASE),
        "--plain",
        state=tmp_path,
        env={"USER": "mallory", "LOGNAME": "mallory"},
        stdin=script,
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
