"""What the person who opened the incident already told us, extracted deterministically.

Titles and ``reported`` texts carry the expected numbers and the onset in words: "used to do
0.9 s per step", "was 1.2s/it", "slow since launch", "since the job started". A job that is slow
from its first step shows no onset in its own telemetry; "no regression" then is not evidence of
health, and the stated expectation is the baseline to compare with. Only explicit forms are read
(a number with a time unit next to "per step"/"step time"/"s/it", after a word that marks it as
the past or the expectation); anything vaguer is ignored.
"""

from __future__ import annotations

import re

_NUM = r"(\d{1,5}(?:\.\d{1,4})?)\s{0,2}(ms|s|sec|secs|seconds?)\b"
#: "used to do 0.9 s per step", "was 0.9s/step", "expected 900 ms per step", "normally 1.1 s/it",
#: "step time (was|used to be|should be) 0.9 s", "baseline 0.9 s per step"
_EXPECTED = [
    re.compile(r"\b(?:used to (?:do|be|take|run at)|was|were|expected|expect|normally|usually|should be|baseline(?: of| is)?|"
               r"yesterday|previously|before)\s{1,3}(?:at\s{1,2}|about\s{1,2}|~\s{0,1})?" + _NUM +
               r"\s{0,3}(?:/|per)\s{0,2}(?:step|iter(?:ation)?|it)\b", re.I),
    re.compile(r"\bstep[ _-]?time\s{0,3}(?:was|used to be|should be|is normally|is usually|of|baseline)\s{1,3}(?:about\s{1,2}|~\s{0,1})?" + _NUM, re.I),
    re.compile(r"\(\s{0,2}(?:was|expected|normally)\s{1,3}" + _NUM + r"\s{0,3}(?:/|per)\s{0,2}(?:step|iter(?:ation)?|it)\s{0,2}\)", re.I),
]
_FROM_START = re.compile(
    r"\b(?:slow|sluggish|underperform\w{0,4}|low (?:mfu|throughput))\b.{0,40}\b(?:since (?:launch|the (?:start|launch|first step)|"
    r"it started|start(?:up)?|the job started|day one|the beginning)|from (?:the )?(?:start|launch|first step|the beginning)|"
    r"right from launch|ever since launch)\b|\bnever (?:reached|hit|got to)\b.{0,40}\b(?:expected|target|mfu|throughput)\b", re.I)


def expected_step_s(text: str) -> float | None:
    """The step time the text states as expected or past, in seconds; None when it states none."""
    for pat in _EXPECTED:
        if m := pat.search(text or ""):
            value, unit = float(m.group(1)), m.group(2).lower()
            return value / 1000.0 if unit == "ms" else value
    return None


def slow_from_start(text: str) -> bool:
    """The text says the job has been slow since it started (no onset to find)."""
    return bool(_FROM_START.search(text or ""))


#: "relaunched with the long-context recipe", "restarted with global batch 1536", "resubmitted with a
#: larger batch", "new data mix since the restart", "seq len 4096 -> 8192": the job was changed on
#: purpose so that a step does more work (or runs on another layout). Bounded, word-anchored.
_CHANGE = (r"(?:(?:larger|bigger|higher|longer|increased|doubled|new|different|another)\s{1,3}(?:global\s{1,3})?"
           r"(?:batch|seq(?:uence)?|context|data[ _-]?(?:mix|mixture|blend|set)|dataset|recipe|parallel\w{0,6}|layout|"
           r"(?:tp|pp|dp|tensor|pipeline)\b)|long[ -]context|"
           r"(?:global[ _-]batch(?:[ _-]size)?|seq(?:uence)?[ _-]len(?:gth)?|context[ _-]length|micro[ _-]batch(?:[ _-]size)?|"
           r"data[ _-]?mix|tensor[ _-]parallel\w{0,6}|pipeline[ _-]parallel\w{0,6})\s{0,3}(?:(?:from\s{1,3})?\d[\d,k]{0,9}\s{0,3})?(?:to|->|→)\s{0,3}\d)")
_RECONFIGURED = re.compile(
    r"\b(?:re-?launch\w{0,3}|re-?start\w{0,3}|re-?submit\w{0,5}|resum\w{1,3}|re-?queued|switched|moved|changed)\b.{0,80}?\b" + _CHANGE
    + r"|\b" + _CHANGE + r".{0,80}?\b(?:re-?launch\w{0,3}|re-?start\w{0,3}|re-?submit\w{0,5}|resum\w{1,3})\b", re.I)


def stated_reconfiguration(text: str) -> str | None:
    """The words where the text says the job was relaunched with more work per step or another
    layout (a claim: it explains a longer step only when the trainer's work per second held)."""
    m = _RECONFIGURED.search(text or "")
    return m.group(0).strip() if m else None
