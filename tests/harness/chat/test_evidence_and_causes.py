"""`/evidence` summarises instead of dumping JSON, and a yes-or-no question about a cause ("was
there a cooling failure?") is answered from the evidence, through chat --plain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "evals" / "examples"


def _plain(case: Path, lines: list[str], state: Path) -> list[str]:
    """The answers of chat --plain, one block per question or command."""
    done = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "chat", str(case), "--plain"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env={**os.environ, "FORENSIC_STATE_DIR": str(state)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_evidence_is_a_summary_with_a_way_to_see_all(tmp_path: Path) -> None:
    out = _plain(
        EXAMPLES / "healthy-control",
        [
            "why is it slow?",
            "/evidence",
            "/evidence all",
            "/evidence ev-2",
            "/evidence ev-2 --json",
            "/evidence ev-99",
        ],
        tmp_path,
    )
    found = re.search(r"^(\d+) evidence records \(", out, re.M)
    assert found, out
    n, summary = int(found.group(1)), out[found.start() :]
    assert n >= 10
    head = summary[: summary.index("/evidence all lists every record")]
    assert len(head.splitlines()) < n + 6, "a summary, not every record's JSON"
    per_tool = re.search(r"^  per tool: (.*)$", head, re.M)
    assert per_tool and {"job_steps 1", "gpu_health 1"} <= set(per_tool.group(1).split(", ")), head
    assert "per host: fleet " in head
    assert "no data or failed: " in head  # this example has tools that found no data
    # The cited records, one line each: those the answer and the report's findings cite.
    cited = re.findall(r"^  (ev-\d+) ", head[head.index("cited (") :], re.M)
    answer = out[: found.start()]
    assert cited and set(cited) == set(re.findall(r"\[(ev-\d+)\]", answer))
    # /evidence all: every record, one line each.
    listing = out[out.index(f"{n} evidence records:") :]
    assert [f"ev-{i}" for i in range(1, n + 1)] == re.findall(r"^  (ev-\d+) ", listing, re.M)[:n]
    # One record in words, then raw with --json.
    second = re.search(r"^  ev-2\s+(\w+)", listing, re.M)
    assert second, listing
    tool = second.group(1)
    assert f"ev-2 · {tool} · fleet · ok" in out and "(/evidence ev-2 --json for the raw record" in out
    raw = out[out.index('{\n  "id": "ev-2"') :]
    assert json.loads(raw[: raw.index("\n}\n") + 2])["tool"] == tool
    assert "no evidence ev-99 (this conversation has ev-1 to " in out
    assert '"data": {' not in out[: out.index('{\n  "id": "ev-2"')], "no raw JSON unless asked"


def test_was_there_a_cooling_failure_is_answered_from_the_evidence(tmp_path: Path) -> None:
    hot = _plain(EXAMPLES / "thermal-throttle-straggler", ["was there a cooling failure?"], tmp_path / "a")
    assert "I can answer" not in hot  # not the help menu
    assert re.search(r"^Yes: thermal_throttle on \S+/gpu\d+ \(confirmed", hot, re.M), hot
    assert re.search(r"^- .*\b\d+ C\b.*\[ev-\d+\]$", hot, re.M), "a temperature reading, cited"
    assert "throttle" in hot

    cool = _plain(
        EXAMPLES / "healthy-control", ["was there a cooling failure?", "any memory errors?"], tmp_path / "b"
    )
    assert "I can answer" not in cool
    assert "No: the evidence shows no thermal throttle." in cool
    # The readings the thermal tests rest on, as the tools read them, each cited.
    assert re.search(r"^- gpu_health read: .*no throttling.*\[ev-\d+\]$", cool, re.M), cool
    assert re.search(r"^- gpu_health looked for thermal slowdown and found none \[ev-\d+\]$", cool, re.M)
    assert "No: the evidence shows no hbm degradation." in cool
