"""When "healthy" is earned, and how sure it may be.

No fault found is not the same as no fault. A ``healthy`` verdict needs positive evidence that the
job is fine or that its slowdown is explained:

- the steps show no regression (``steps_clean`` with per-rank compute, ``job_steady`` without), or
- the trainer explains the longer step itself (``job_reconfigured``: relaunched with more work per
  step while its work per GPU per second held), or the steps and the GPUs do (``gpu_work_held``: a
  relaunch after which the longer step is all compute on every rank alike while the GPUs stayed as
  busy at the same clock).

When the steps show a slowdown (``job_slowdown``), a hang (``job_hang``), or the incident's own
words report one (its title or ``reported`` text) and nothing above answers it, the verdict is
``inconclusive`` with the strongest fault candidates named: a low-confidence ``healthy`` would send
people away from a real problem.

Evidence that could not be read (a host whose name is refused, an unreadable file, a parser
error, an agent that is down) is never the absence of a fault: while any is left, ``healthy`` is
not earned, whatever else the steps show, and the report names what was not read.

Evidence read only in part (a compressed file cut short whose readable lines were parsed) is
named with what was lost. It withholds ``healthy`` too, unless complete per-rank step telemetry
over the window clears every rank (:func:`ranks_cleared`): each rank's own compute time shows no
part of the job slowed, so what the lost tail might have held did not touch it. Such a ``healthy``
is never stronger than a ``probable`` verdict: its confidence is capped at :data:`PARTIAL_CAP`
and its status reason names the file.

The confidence of an earned ``healthy`` reflects coverage: the share of fault classes whose tests
read evidence (and found nothing) against those no tool could test (their files were missing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from forensic.harness.failure_graph import FailureGraph, Observation
from forensic.sandbox import EvidenceSource
from forensic.tools._incident_text import expected_step_s, slow_from_start, stated_slowdown_ratio

# Share of the window the steps must span to clear the job (job_steps withholds job_steady and
# steps_clean below it), and to clear every rank when some evidence was read only in part.
from forensic.tools.job_steps import CLEAR_WINDOW_SHARE
from forensic.tools.metrics import DEEP_CLOCK_RATIO

#: Signals that show the job is fine (its steps did not regress).
FINE = ("steps_clean", "job_steady")
#: With no slowdown in the steps, ranks less late than this (per cent) are chip-to-chip spread: a
#: rank that late costs each step no more than that, no slowdown anyone reports.
MATERIAL_LATE_PCT = 5.0
#: With no slowdown in the steps, a rank late by at most this much (per cent) on a GPU at its
#: normal SW power cap is the chip spread under the cap (the clock bound the GPU tools use).
CAP_SPREAD_PCT = 100.0 * (1.0 / DEEP_CLOCK_RATIO - 1.0)
#: Late ranks at least this share of the job are a crowd, not a straggler: where the GPUs read
#: among them sit at the normal SW power cap, the rest of the crowd is the same population.
CROWD_SHARE = 0.2
#: Signals that explain a slowdown as the job's own doing.
EXPLAINED = ("job_reconfigured", "gpu_work_held")
#: Signals that show a symptom a healthy verdict would have to explain, and what it says (first match wins).
SYMPTOMS = {
    "job_hang": "the steps show the job hung and no tool explains it",
    "job_slowdown": "the steps show a slowdown and no tool explains it",
    "fleet_activity_drop": "every GPU's activity and the hosts' network traffic fell together and no tool explains it",
}
#: The most a ``healthy`` resting on partly read evidence may claim: a probable verdict's
#: strength, below the 0.9 at which the planner takes a confirmed leader as settled.
PARTIAL_CAP = 0.8
#: Words in an incident's title or report that say the job is slow (bounded, word-anchored).
_SLOW_WORDS = re.compile(
    r"\b(?:slow\w{0,4}|mfu|throughput|tokens?/s|samples/s|step[ -]?time|s/it|regress\w{0,5}|"
    r"drop(?:ped|s)?|degrad\w{0,5}|lower than|takes? longer|longer than|behind schedule)\b",
    re.I,
)


@dataclass
class HealthCheck:
    """Whether a ``healthy`` verdict is earned, why (not), and the coverage behind it."""

    earned: bool
    why: str
    tested: list[str] = field(default_factory=list)
    untestable: list[str] = field(default_factory=list)
    #: Earned although some evidence was read only in part (the steps clear every rank): the
    #: partly read entries, which cap the verdict at a probable's strength.
    partial: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        n = len(self.tested) + len(self.untestable)
        return len(self.tested) / n if n else 0.0


def slowdown_reported(text: str) -> bool:
    """The incident's own words say the job is slow (or state an expected step time)."""
    return (
        bool(_SLOW_WORDS.search(text or ""))
        or expected_step_s(text or "") is not None
        or slow_from_start(text or "")
    )


def coverage(graph: FailureGraph, obs: Observation) -> tuple[list[str], list[str]]:
    """(fault classes whose direct evidence was read, classes no tool could test).

    A class is tested when a tool that looks for the fault itself (a signal its confirmation rule
    requires) read something; the job's steps alone say where time went, not that a part is sound.
    """
    tested: list[str] = []
    untestable: list[str] = []
    for rc in graph.root_causes.values():
        if rc.id == "healthy" or not rc.tests:
            continue
        required = {sig for group in rc.confirm.require for sig in group}
        direct = [t for t in rc.tests if t.weight > 0 and (t.signal in required or not required)]
        (tested if any(t.tool in obs.ran for t in direct or rc.tests) else untestable).append(rc.id)
    return sorted(tested), sorted(untestable)


def ranks_cleared(records: Sequence[dict], window: tuple[float | None, float | None]) -> str | None:
    """Why the job's per-rank step telemetry clears every rank over the window, or None when it
    does not: the last ``job_steps`` call read per-rank compute times, found no straggler and no
    slowdown (``steps_clean``), holds every rank of the job, spans the window (at least
    :data:`CLEAR_WINDOW_SHARE` of it), and was itself read whole."""
    rec = next(
        (r for r in reversed(records) if r.get("tool") == "job_steps" and r.get("status") == "ok"), None
    )
    if rec is None or rec.get("partial") or rec.get("unread"):
        return None
    data = rec.get("data") or {}
    if not data.get("has_compute") or not any(
        s.get("name") == "steps_clean" for s in rec.get("signals") or [] if isinstance(s, dict)
    ):
        return None
    ranks, expected = data.get("n_ranks") or 0, data.get("ranks_expected")
    if expected and ranks < expected:
        return None
    start, end = window
    span = data.get("span_unix")
    if start is not None and end is not None and end > start:
        if not span:
            return None
        inside = max(0.0, min(end, span[1]) - max(start, span[0]))
        if inside < CLEAR_WINDOW_SHARE * (end - start):
            return None
    return f"per-rank compute times of all {ranks} ranks over the window show no late rank and no slowdown [{rec['id']}]"


def check_healthy(
    graph: FailureGraph,
    obs: Observation,
    incident_text: str,
    unread: Sequence[str] = (),
    partial: Sequence[str] = (),
    cleared: str | None = None,
    records: Sequence[dict] = (),
) -> HealthCheck:
    """Is a ``healthy`` verdict earned by the evidence in ``obs``, given what the incident reports?
    ``unread``: what could not be read (:func:`unread_evidence`); any of it means not earned.
    ``partial``: what was read only in part (:func:`partial_evidence`); it means not earned unless
    ``cleared`` (:func:`ranks_cleared`) says the per-rank steps clear every rank. ``records``: the
    evidence records, whose GPU readings say which late ranks sit at the normal SW power cap."""
    names = {s.name for _, s in obs.signals if s.kind == "job"}
    tested, untestable = coverage(graph, obs)
    if unread:
        more = f" and {len(unread) - 1} more" if len(unread) > 1 else ""
        return HealthCheck(
            False,
            f"evidence could not be read ({unread[0]}{more}), so no fault there is ruled out",
            tested,
            untestable,
        )
    if partial and cleared is None:
        more = f" and {len(partial) - 1} more" if len(partial) > 1 else ""
        return HealthCheck(
            False,
            f"evidence was read only in part ({partial[0]}{more}), and no complete per-rank step "
            "telemetry over the window clears every rank",
            tested,
            untestable,
        )
    if partial:
        got = check_healthy(graph, obs, incident_text, records=records)
        got.partial = list(partial)
        if got.earned:
            got.why += f"; {cleared}, so what was lost did not slow any rank"
        return got
    if names & set(EXPLAINED):
        return HealthCheck(
            True,
            "the longer step is the job's own doing: its work per second held, per GPU",
            tested,
            untestable,
        )
    for symptom, why in SYMPTOMS.items():
        if symptom in names:
            return HealthCheck(False, why, tested, untestable)
    if names & set(FINE):
        return HealthCheck(True, "the steps show no regression", tested, untestable)
    if (spread := _only_spread(obs)) is not None:
        return HealthCheck(
            True,
            f"the steps show no regression, and the late ranks compute at most {spread:.1f}% late "
            "(chip-to-chip spread, no slowdown)",
            tested,
            untestable,
        )
    # A job said to be slow from its start, or short of a level the text names, has no onset for
    # the steps to miss: its pace all along is the question, so the cap's lateness does not answer it.
    if (
        not slow_from_start(incident_text)
        and stated_slowdown_ratio(incident_text) is None
        and expected_step_s(incident_text) is None
        and (capped := _capped_late(obs, records)) is not None
    ):
        return HealthCheck(True, f"the steps show no regression, and {capped}", tested, untestable)
    if slowdown_reported(incident_text):
        return HealthCheck(
            False,
            "the incident reports a slowdown, and no evidence shows the job is fine or explains it",
            tested,
            untestable,
        )
    if not tested:
        return HealthCheck(False, "no fault class could be tested", tested, untestable)
    return HealthCheck(True, "no symptom reported or shown, and no fault found", tested, untestable)


def _only_spread(obs: Observation) -> float | None:
    """The most late rank's lateness (per cent) when the steps were read with per-rank compute
    times, show no slowdown or hang, and every late rank is immaterially late; None otherwise."""
    steps = [s for tool, s in obs.signals if tool == "job_steps"]
    late = [float(s.values.get("slowdown_pct") or 0.0) for s in steps if s.name == "straggler"]
    if not late or any(s.name not in ("straggler", "host_stragglers") for s in steps):
        return None
    return max(late) if max(late) < MATERIAL_LATE_PCT else None


def normal_capped(records: Sequence[dict]) -> tuple[dict[str, float], set[str], list[str]]:
    """(GPU -> its clock as a share of its peers' for the GPUs read at their normal SW power cap,
    GPUs whose clocks were read, the ids of the records that read a capped one), over every
    ``gpu_health`` and ``metrics`` call that succeeded. A GPU that one reading shows capped and
    another does not is not counted as capped."""
    capped: dict[str, float] = {}
    uncapped: set[str] = set()
    ids: list[str] = []
    for r in records:
        if r.get("status") != "ok" or r.get("tool") not in ("gpu_health", "metrics"):
            continue
        data = r.get("data") or {}
        these: dict[str, float] = {}
        if r["tool"] == "gpu_health":
            got_gpus = data.get("gpus")
            gpus: dict = got_gpus if isinstance(got_gpus, dict) else {}
            peer = data.get("peer_median_sm_mhz")
            read = {c for c, g in gpus.items() if isinstance(g, dict) and g.get("sm_mhz") is not None}
            for c, g in gpus.items():
                if isinstance(g, dict) and g.get("normal_cap") and peer:
                    these[c] = float(g["sm_mhz"]) / float(peer)
        else:
            got = data.get("normal_cap")
            these = {c: float(v) for c, v in got.items()} if isinstance(got, dict) else {}
            read = set(r.get("covered") or [])
        for c, ratio in these.items():
            capped[c] = min(ratio, capped.get(c, ratio))
        uncapped |= read - set(these)
        if these:
            ids.append(r["id"])
    return {c: v for c, v in capped.items() if c not in uncapped}, set(capped) | uncapped, ids


def _capped_late(obs: Observation, records: Sequence[dict]) -> str | None:
    """Why the late ranks are the fleet at its normal SW power cap, or None.

    Busy GPUs at the default power limit clock a few per cent apart; where many sit at the cap,
    their ranks compute that much late from the job's first step, and the job's pace was always
    theirs: no regression and no fault. It holds when the steps were read with per-rank compute
    times and show no slowdown or hang, at least one late GPU was read at the normal cap, no late
    GPU was read anywhere else, and no rank is later than the deepest capped clock accounts for
    (the size of the symptom must follow from the cause). A late rank whose GPU was not read, or
    whose GPU is only guessed (no topology places the ranks), is counted with the capped ones only
    in a crowd (at least :data:`CROWD_SHARE` of the ranks late alike): one GPU or host late alone
    is a straggler to explain by its own reading."""
    steps = [s for tool, s in obs.signals if tool == "job_steps"]
    if not steps or any(s.name not in ("straggler", "host_stragglers") for s in steps):
        return None
    rec = _latest(records, "job_steps")
    data = (rec or {}).get("data") or {}
    if rec is None or not data.get("has_compute"):
        return None
    late = [s for s in steps if s.name == "straggler"]
    capped, read, ids = normal_capped(records)
    if not late or not capped:
        return None
    # The signals name only the placed ranks; the steps' own list holds the latest of all.
    listed = [
        100.0 * float(x.get("lateness") or 0.0) for x in data.get("stragglers") or [] if isinstance(x, dict)
    ]
    worst = max([float(s.values.get("slowdown_pct") or 0.0) for s in late] + listed)
    # Compute time goes as 1/clock: the deepest capped clock bounds the lateness the cap explains.
    explained = 100.0 * (1.0 / min(capped.values()) - 1.0)
    if worst > min(explained + 1.0, CAP_SPREAD_PCT):
        return None
    n_late = int(data.get("n_stragglers") or len(late))
    crowd = bool(data.get("n_ranks")) and n_late >= CROWD_SHARE * float(data["n_ranks"])
    trusted = data.get("placement") != "guessed"
    hosts_capped = {c.split("/", 1)[0] for c in capped}
    shown = 0
    for s in steps:
        comp = s.component or ""
        if s.name == "host_stragglers":
            if not (crowd and comp in hosts_capped):
                return None
        elif comp in capped:
            shown += 1
        elif not crowd or (trusted and comp in read):
            return None
    if not shown and not (crowd and not trusted):
        return None
    return (
        f"the {n_late} late rank{'s' if n_late != 1 else ''} compute at most {worst:.1f}% late, as GPUs "
        f"at their normal SW power cap do ({len(capped)} read there, clocks down to "
        f"{100 * min(capped.values()):.0f}% of their peers'): chip spread under the cap, the job's pace "
        f"all along, no fault [{', '.join([rec['id'], *ids][:4])}]"
    )


#: A GPU at least this warm (C), below gpu_health's hot mark and with no clock-event reason set, is
#: worth naming as noise in a healthy report: a reader who sees it in a dashboard will ask.
WARM_C = 80.0


def _latest(records: Sequence[dict], tool: str) -> dict | None:
    return next((r for r in reversed(records) if r.get("tool") == tool and r.get("status") == "ok"), None)


def noise(records: Sequence[dict]) -> list[str]:
    """What the evidence shows that looks like a fault and is not, one reason each with the record
    that shows it, for a healthy report to say why each is no fault:

    - devices at a low PCIe generation while idle (NVML and sysfs lower it to save power), on a
      spare host or an idle device, at full width;
    - a warm GPU with no clock-event reason set (it is not slowed);
    - correctable AER on a part whose PCIe link kept its full width (the link layer retried and
      recovered; a link that is failing trains down or logs uncorrectable errors).
    """
    from forensic.tools.gpu_health import HOT_C

    out: list[str] = []
    pcie = _latest(records, "pcie_link")
    links = ((pcie or {}).get("data") or {}).get("links") or {}
    idle = ((pcie or {}).get("data") or {}).get("idle_low_generation") or []
    if pcie and idle:
        out.append(
            f"{len(idle)} idle device{'s' if len(idle) != 1 else ''} at a low PCIe generation "
            f"({', '.join(idle[:2])}{' …' if len(idle) > 2 else ''}): power saving, not a fault [{pcie['id']}]"
        )
    gpu = _latest(records, "gpu_health")
    gpus = ((gpu or {}).get("data") or {}).get("gpus") or {}
    warm = [
        f"{comp} at {g['temp_c']:g} C"
        for comp, g in gpus.items()
        if isinstance(g, dict)
        and g.get("temp_c") is not None
        and WARM_C <= g["temp_c"] < HOT_C
        and not g.get("reasons")
    ]
    if gpu and warm:
        out.append(
            f"warm but not throttled, no clock-event reason set: {', '.join(warm[:3])}"
            f"{' …' if len(warm) > 3 else ''} [{gpu['id']}]"
        )
    kern = _latest(records, "kernel_log")
    aer = ((kern or {}).get("data") or {}).get("correctable_aer") or {}
    full = [
        f"{comp} ({n})"
        for comp, n in sorted(aer.items())
        if (links.get(comp) or {}).get("full_width") is True
    ]
    if kern and full:
        out.append(
            f"a few correctable AER on full-width links, corrected by the link layer: {', '.join(full[:3])}"
            f"{' …' if len(full) > 3 else ''} [{kern['id']}{', ' + pcie['id'] if pcie else ''}]"
        )
    return out


def partial_evidence(obs: Observation) -> list[str]:
    """Everything read only in part, one line each with what was lost and the evidence ids."""
    return [f"{what} ({', '.join(ids)})" for what, ids in obs.partial.items()]


def unread_evidence(source: EvidenceSource, obs: Observation) -> list[str]:
    """Everything the investigation could not read, one line each, with the evidence ids that met
    it (``ev-2, ev-3``): the hosts the source cannot read first (what the calls met on such a host
    is said once, on its line), then the rest of what the calls met."""
    hosts = source.unreadable_hosts()
    met: dict[str, list[str]] = {name: [] for name in hosts}
    rest: list[str] = []
    for what, ids in obs.unread.items():
        host = what.split(": ", 1)[0]
        if host in met:
            met[host].extend(i for i in ids if i not in met[host])
        else:
            rest.append(f"{what} ({', '.join(ids)})")
    return [
        f"host {name}: {why}" + (f" ({', '.join(met[name])})" if met[name] else "")
        for name, why in hosts.items()
    ] + rest
