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
    re.compile(
        r"\b(?:used to (?:do|be|take|run at)|was|were|expected|expect|normally|usually|should be|baseline(?: of| is)?|"
        r"yesterday|previously|before)\s{1,3}(?:at\s{1,2}|about\s{1,2}|~\s{0,1})?"
        + _NUM
        + r"\s{0,3}(?:/|per)\s{0,2}(?:step|iter(?:ation)?|it)\b",
        re.I,
    ),
    re.compile(
        r"\bstep[ _-]?time\s{0,3}(?:was|used to be|should be|is normally|is usually|of|baseline)\s{1,3}(?:about\s{1,2}|~\s{0,1})?"
        + _NUM,
        re.I,
    ),
    re.compile(
        r"\(\s{0,2}(?:was|expected|normally)\s{1,3}"
        + _NUM
        + r"\s{0,3}(?:/|per)\s{0,2}(?:step|iter(?:ation)?|it)\s{0,2}\)",
        re.I,
    ),
    # "step time is ~2.3 s (was ~1.6 s)": the level before, in brackets after the step time's own
    re.compile(
        r"\bstep[ _-]?times?\b[^!?;()\n]{0,40}\(\s{0,2}(?:was|previously|before|expected|normally|usually)"
        r"\s{1,3}(?:about\s{1,2}|~\s{0,1})?" + _NUM + r"\s{0,2}\)",
        re.I,
    ),
]
#: "Step time went from 2.06s to 2.60s", "step time 2.23s -> 2.56s", "step time up from 2.45s to
#: 2.71s", "(step 1.41s -> 1.82s)": a change the person saw, the first number the level before it.
_STEP_CHANGE = re.compile(
    r"\bstep(?:[ _-]?times?)?\s{1,3}(?:(?:went|has gone|jumped|rose|climbed|increased|grew|regressed|up)\s{1,3})?"
    r"(?:from\s{1,3})?(?:about\s{1,2}|~\s{0,1})?"
    + _NUM
    + r"\s{0,3}(?:->|→|=>|to)\s{0,3}(?:about\s{1,2}|~\s{0,1})?"
    r"\d{1,5}(?:\.\d{1,4})?\s{0,2}(?:ms|s|sec|secs|seconds?)\b",
    re.I,
)
_FROM_START = re.compile(
    r"\b(?:slow|sluggish|underperform\w{0,4}|low (?:mfu|throughput))\b.{0,40}\b(?:since (?:launch|the (?:start|launch|first step)|"
    r"it started|start(?:up)?|the job started|day one|the beginning)|from (?:the )?(?:start|launch|first step|the beginning)|"
    r"right from launch|ever since launch)\b|\bnever (?:reached|hit|got to)\b.{0,40}\b(?:expected|target|mfu|throughput)\b",
    re.I,
)


def expected_step_s(text: str) -> float | None:
    """The step time the text states as expected or past, in seconds; None when it states none."""
    for pat in (*_EXPECTED, _STEP_CHANGE):
        if m := pat.search(text or ""):
            value, unit = float(m.group(1)), m.group(2).lower()
            return value / 1000.0 if unit == "ms" else value
    return None


def states_change(text: str) -> bool:
    """The text states a change of step time ("went from 2.06s to 2.60s"): it had an onset, even
    where the recorded steps hold only the slower level."""
    return bool(_STEP_CHANGE.search(text or ""))


#: "3x slower than on the old cluster", "2.5 times slower", "steps take 2x longer", "40% slower
#: than before the weekend": how much longer a step is than at a level the text names, as a factor
#: or a percentage of step time (a drop of throughput, "tokens/s down 35%", is not read here).
_RATIO = re.compile(
    r"\b(\d{1,2}(?:\.\d{1,2})?)\s{0,1}(?:x|×|times)\s{1,3}(?:slower|longer)\b|"
    # "all-reduce time roughly 2.5x what it was last week": a time (not a rate) that many times its level
    r"\b(?:time|latency|duration)\b[^.!?;\n]{0,30}?\b(\d{1,2}(?:\.\d{1,2})?)\s{0,1}(?:x|×)\s{1,3}"
    r"(?:what it (?:was|used to be)|(?:the|its)\s{1,3}(?:usual|normal|baseline|expected|previous))\b|"
    r"\b(\d{1,3}(?:\.\d{1,2})?)\s{0,1}(?:%|percent)\s{1,3}(?:slower|longer)\b",
    re.I,
)


#: The rate the job reaches as a share of a level the text names: "at half the expected
#: throughput", "a third of last week's tokens/s", "60% of baseline throughput", or the level as a
#: multiple of the rate ("last week's run did 2x this", "used to do twice that"). A step takes as
#: many times longer as the rate fell short (same work per step: a reconfigured job is told apart
#: by the trainer's own rates, not here).
_FRACTION = {"half": 2.0, "a third": 3.0, "one third": 3.0, "a quarter": 4.0, "one quarter": 4.0}
_RATE = r"(?:throughput|tokens?/s(?:ec)?|samples?/s(?:ec)?|speed|mfu|rate|tflops?|it/s)"
_LEVEL_WORD = (
    r"(?:expected|usual|normal|planned|baseline|benchmark(?:ed)?|reference|target|previous|nominal|"
    r"(?:last|previous)\s{1,3}(?:week|month|run|night|time)(?:'s)?|(?:yesterday|the old \w{1,20})(?:'s)?)"
)
_SHORTFALL = re.compile(
    r"\b(half|a third|one third|a quarter|one quarter)\s{1,3}(?:of\s{1,3})?(?:the\s{1,3}|our\s{1,3}|its\s{1,3})?"
    + _LEVEL_WORD
    + r"\s{1,3}"
    + _RATE
    + r"\b|"
    r"\b(\d{1,2}(?:\.\d{1,2})?)\s{0,1}(?:%|percent)\s{1,3}of\s{1,3}(?:the\s{1,3}|our\s{1,3}|its\s{1,3})?"
    + _LEVEL_WORD
    + r"(?:\s{1,3}"
    + _RATE
    + r")?\b|"
    r"\b(?:did|does|do|got|gets|ran at|runs at|reached|hit|was|were|used to (?:do|get|run at|reach))\s{1,3}"
    r"(?:(\d(?:\.\d{1,2})?)\s{0,1}(?:x|×|times)|(twice|double|three times))\s{1,3}"
    r"(?:this|that|what we (?:see|get)|(?:the|our|its)\s{1,3}(?:current\s{1,3})?"
    + _RATE
    + r"|as (?:fast|much))\b",
    re.I,
)
_WORD_FACTOR = {"twice": 2.0, "double": 2.0, "three times": 3.0}


def stated_slowdown_ratio(text: str) -> float | None:
    """How many times longer the text says a step is (``3x slower`` -> 3.0, ``40% slower`` -> 1.4,
    ``half the expected throughput`` -> 2.0, ``last week's run did 2x this`` -> 2.0); None when it
    states no such factor, or one that is not a slowdown."""
    if m := _RATIO.search(text or ""):
        factor = m.group(1) or m.group(2)
        ratio = float(factor) if factor else 1.0 + float(m.group(3)) / 100.0
        return ratio if ratio > 1.0 else None
    if m := _SHORTFALL.search(text or ""):
        if m.group(1):
            ratio = _FRACTION[re.sub(r"\s+", " ", m.group(1).lower())]
        elif m.group(2):
            share = float(m.group(2))
            ratio = 100.0 / share if share > 0 else 0.0
        elif m.group(3):
            ratio = float(m.group(3))
        else:
            ratio = _WORD_FACTOR[re.sub(r"\s+", " ", m.group(4).lower())]
        return round(ratio, 4) if ratio > 1.0 else None
    return None


#: A state that lasts ("all day", "since yesterday", "degraded"): a shortfall only where it is said of
#: the job or its speed, within the same sentence ("slow all day", "job degraded"). Said of anything
#: else ("power-cap alerts fire all day", "the DCGM exporter is degraded", "PCIe degraded alert") it
#: says nothing of the job.
_DURATION = r"\b(?:all day|since (?:yesterday|last (?:week|night)))\b"
#: Words that say the degraded thing is the job or its speed (the same sentence, near the word).
_JOB_BEFORE = re.compile(
    r"\b(?:slow\w{0,4}|sluggish|lagg\w{0,3}|behind|mfu|throughput|tokens?/s|samples/s|step[ -]?times?|s/it|perf\w{0,9}|"
    r"job|run|training)\b[^.!?;\n]{0,30}$",
    re.I,
)
_JOB_AFTER = re.compile(
    r"^[^.!?;\n]{0,20}?\b(?:slow\w{0,4}|mfu|throughput|tokens?/s|step[ -]?times?|perf\w{0,9})\b", re.I
)
#: A shortfall against a level rather than a change: "40% below plan", "below baseline", "slower
#: than the same config on the old allocation", "much slower than yesterday's", "lower than expected", "slow all day"; and "degraded"
#: when it is the job that is (:func:`degraded_job`).
_LEVEL = re.compile(
    r"\b(?:below|under|short of)\s{1,3}(?:the\s{1,3}|our\s{1,3})?(?:plan(?:ned)?|baseline|target|expect\w{0,7}|forecast|budget|spec)\b|"
    r"\b(?:slower|lower|worse|less)\s{1,3}than\s{1,3}(?:the\s{1,3}|on\s{1,3}the\s{1,3})?(?:same\s{1,3}(?:config\w{0,8}|job|run|model|recipe|code)|"
    r"old\s{1,3}\w{1,20}|previous\s{1,3}\w{1,20}|(?:yesterday|last\s{1,3}(?:week|night|month|run|time))(?:'s)?|other\s{1,3}(?:clusters?|allocations?|pools?)|plan(?:ned)?|expect\w{0,6}|baseline|usual|normal)\b|"
    r"\b(?:slow\w{0,4}|sluggish|lagg\w{0,3}|behind|mfu|throughput|tokens?/s|samples/s|step[ -]?times?|s/it|perf\w{0,9}|"
    r"job|run|training)\b[^.!?;\n]{0,30}?"
    + _DURATION
    + r"|"
    + _DURATION
    + r"[^.!?;\n]{0,20}?\b(?:slow\w{0,4}|mfu|throughput|tokens?/s|step[ -]?times?|perf\w{0,9})\b",
    re.I,
)
_DEGRADED = re.compile(r"\bdegraded\b", re.I)
#: Parts and alert words that "degraded" may qualify instead of the job: "PCIe degraded alert",
#: "link degraded", "NIC port degraded", "degraded link". Such a text reports a device state (an
#: alert's name), not a job below its level.
_DEVICE_WORD = re.compile(
    r"^(?:pcie?|pci-?e|links?|lanes?|width|gen\d?|generation|nics?|hcas?|ports?|gpus?|nvlinks?|cables?|"
    r"optics?|transceivers?|fans?|psus?|supply|disks?|drives?|raid|arrays?|volumes?|dimms?|ecc|alerts?|alarms?|"
    r"state|mode|status|warnings?|health|ib|infiniband|roce|ethernet|bmc|sensors?)$",
    re.I,
)


def degraded_job(text: str) -> bool:
    """The text says the job or its speed is "degraded": a job or speed word in the same sentence
    near it, and no part or alert word as what is degraded within three words before it or the
    word after it ("PCIe degraded alert", "degraded link" are a device's state, not the job's)."""
    for m in _DEGRADED.finditer(text or ""):
        before = re.findall(r"[\w-]+", text[max(0, m.start() - 60) : m.start()])[-3:]
        after = re.findall(r"[\w-]+", text[m.end() : m.end() + 40])[:1]
        if any(_DEVICE_WORD.match(w) for w in (*before, *after)):
            continue
        if _JOB_BEFORE.search(text[max(0, m.start() - 200) : m.start()]) or _JOB_AFTER.search(
            text[m.end() :]
        ):
            return True
    return False


#: A time the text gives for the onset ("since 11:05", "after the 01:53 restart", "since the
#: maintenance"): the window should hold the change.
_ONSET = re.compile(
    r"\b(?:since|after|from|at|around)\s{1,3}(?:~\s{0,1}|about\s{1,3}|around\s{1,3}|the\s{1,3})?\d{1,2}[:h]\d{2}\b|"
    r"\b(?:since|after)\s{1,3}the\s{1,3}(?:\d{1,2}:\d{2}\s{1,3})?(?:restart|maintenance|upgrade|reboot|update|deploy\w{0,4}|"
    r"migration|failover|rollout|change)\b|\bsince\s{1,3}this\s{1,3}(?:morning|afternoon|evening)\b",
    re.I,
)


#: A yes/no question asks, it does not state: "Is the job degraded?", "Are we below plan?", "Did
#: throughput drop?". A question that opens with a question word ("Why is the job slow since
#: launch?") takes the slowness as given, and still counts.
_YES_NO = re.compile(
    r"(?:^|(?<=[.!?;\n]))[ \t]{0,4}(?:[\w-]{1,30}\s{0,2}:\s{0,2})?(?:is|isn't|are|aren't|was|wasn't|were|do|does|did|has|have|"
    r"had|can|could|should|would|will|may|might|am)\b[^.!?;\n]{0,200}\?",
    re.I,
)


def stated(text: str) -> str:
    """The text without its yes/no questions: what the person states, not what they ask."""
    return _YES_NO.sub(" ", text or "")


def slow_from_start(text: str) -> bool:
    """The text says the job has been slow since it started, or short of a level (a plan, a
    baseline, another allocation) with no onset named: there is no onset to find in the window, so
    "no regression" inside it is not evidence of health. A yes/no question ("Is the job degraded?")
    states nothing (:func:`stated`)."""
    text = stated(text)
    return bool(_FROM_START.search(text)) or (
        (bool(_LEVEL.search(text)) or degraded_job(text)) and not _ONSET.search(text)
    )


#: "relaunched with the long-context recipe", "restarted with global batch 1536", "resubmitted with a
#: larger batch", "new data mix since the restart", "seq len 4096 -> 8192": the job was changed on
#: purpose so that a step does more work (or runs on another layout). Bounded, word-anchored.
_CHANGE = (
    r"(?:(?:larger|bigger|higher|longer|increased|doubled|new|different|another)\s{1,3}(?:global\s{1,3})?"
    r"(?:batch|seq(?:uence)?|context|data[ _-]?(?:mix|mixture|blend|set)|dataset|recipe|parallel\w{0,6}|layout|"
    r"(?:tp|pp|dp|tensor|pipeline)\b)|long[ -]context|"
    r"(?:global[ _-]batch(?:[ _-]size)?|seq(?:uence)?[ _-]len(?:gth)?|context[ _-]length|micro[ _-]batch(?:[ _-]size)?|"
    r"data[ _-]?mix|tensor[ _-]parallel\w{0,6}|pipeline[ _-]parallel\w{0,6})\s{0,3}(?:(?:from\s{1,3})?\d[\d,k]{0,9}\s{0,3})?(?:to|->|→)\s{0,3}\d)"
)
_RECONFIGURED = re.compile(
    r"\b(?:re-?launch\w{0,3}|re-?start\w{0,3}|re-?submit\w{0,5}|resum\w{1,3}|re-?queued|switched|moved|changed)\b.{0,80}?\b"
    + _CHANGE
    + r"|\b"
    + _CHANGE
    + r".{0,80}?\b(?:re-?launch\w{0,3}|re-?start\w{0,3}|re-?submit\w{0,5}|resum\w{1,3})\b",
    re.I,
)


def stated_reconfiguration(text: str) -> str | None:
    """The words where the text says the job was relaunched with more work per step or another
    layout (a claim: it explains a longer step only when the trainer's work per second held)."""
    m = _RECONFIGURED.search(text or "")
    return m.group(0).strip() if m else None
