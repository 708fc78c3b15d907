"""From the evidence ledger and the final beliefs to the ``forensic.report/v1`` document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensic.harness import citations
from forensic.harness.bounded import bound_record
from forensic.harness.budget import Usage
from forensic.harness.failure_graph import (
    FailureGraph,
    Hypothesis,
    Observation,
    RootCauseSpec,
    _covered,
    beliefs,
    host_of,
    observe,
)
from forensic.harness.health import (
    EXPLAINED,
    MATERIAL_LATE_PCT,
    PARTIAL_CAP,
    SYMPTOMS,
    check_healthy,
    noise,
    partial_evidence,
    ranks_cleared,
    unread_evidence,
)
from forensic.harness.ledger import by_id
from forensic.harness.models import BudgetReport, EvidenceRecord, Finding, Report, Verdict
from forensic.harness.provenance import provenance

if TYPE_CHECKING:
    from forensic.harness.graph import Investigator, State
    from forensic.harness.planners import PlannerView
    from forensic.sandbox import EvidenceSource

#: Symptoms in the order they are preferred when several are seen: a hang outranks a slowdown.
_SYMPTOM_ORDER = ("collective_timeout", "loss_anomaly", "mfu_drop")
_KEYWORDS = {
    "collective_timeout": ("hang", "hung", "timeout", "timed out", "stuck", "watchdog", "crash"),
    "loss_anomaly": ("loss", "diverg", "nan", "checksum", "mismatch"),
    "mfu_drop": ("mfu", "slow", "throughput", "step time", "tokens/s", "regress", "drop"),
}


def symptom_of(graph: FailureGraph, view: PlannerView, source: EvidenceSource) -> str:
    """The presenting symptom: from the job's own signals first, else from how it was reported."""
    seen = {s.name for _, s in view.observation.signals}
    for name in _SYMPTOM_ORDER:
        if seen & set(graph.symptoms[name].signals):
            return name
    text = f"{source.incident.title} {source.incident.reported}".lower()
    for name in _SYMPTOM_ORDER:
        if any(k in text for k in _KEYWORDS[name]):
            return name
    return "alert"


def _mechanism(graph: FailureGraph, h: Hypothesis) -> str | None:
    rc = graph.root_causes[h.root_cause]
    found = {key.split("@", 1)[0] for key in h.support}
    for m in rc.mechanisms:
        if found & set(graph.mechanisms[m].signals):
            return m
    return rc.mechanisms[0] if rc.mechanisms else None


def _findings(h: Hypothesis, records: list[dict[str, Any]]) -> list[Finding]:
    """One finding per supporting signal, citing every record that carries it."""
    out: list[Finding] = []
    for key in h.support:
        name, component = key.split("@", 1)
        ids, detail = [], ""
        for rec in records:
            for sig in rec.get("signals") or []:
                if sig["name"] == name and sig["component"] == component and rec["status"] == "ok":
                    ids.append(rec["id"])
                    detail = detail or sig.get("detail") or f"{name} on {component}"
        if ids:
            out.append(
                Finding(
                    claim=detail,
                    subject=component,
                    evidence=sorted(set(ids), key=lambda e: int(e.split("-")[1])),
                )
            )
    return out


def _symptom_findings(
    graph: FailureGraph, symptom: str, records: list[dict[str, Any]], have: list[Finding]
) -> list[Finding]:
    """The job-wide evidence of the symptom the verdict explains (the watchdog timeouts, the job
    that stopped logging, the slowdown), cited beside the cause, so a report shows both ends of
    its chain. Only job-scoped signals: the cause's own findings already name the part."""
    spec = graph.symptoms.get(symptom)
    if spec is None:
        return []
    seen = {f.claim for f in have}
    out: list[Finding] = []
    for name in spec.signals:
        for rec in records:
            if rec["status"] != "ok":
                continue
            for sig in rec.get("signals") or []:
                claim = sig.get("detail") or ""
                if sig["name"] == name and sig["component"] == "job" and claim and claim not in seen:
                    seen.add(claim)
                    out.append(Finding(claim=claim, subject="job", evidence=[rec["id"]]))
    return out[:3]


def _steps_with_compute(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last job_steps record that read per-rank compute times (without them no rank can be
    told apart, so nothing can be said about which part straggles)."""
    for rec in reversed(records):
        if (
            rec["tool"] == "job_steps"
            and rec["status"] == "ok"
            and (rec.get("data") or {}).get("has_compute")
        ):
            return rec
    return None


class _Judge:
    """:func:`cannot_explain` for many hypotheses of one ledger: what every judgement reads (the
    parts' kinds as the tools said them, the steps record, its slowdown and late ranks, which
    symptom each cause cannot reach) is found once, not once per hypothesis (a large job's
    inconclusive report judges hundreds of per-GPU hypotheses)."""

    def __init__(self, graph: FailureGraph, records: list[dict[str, Any]], symptom: str) -> None:
        self.graph, self.records, self.symptom = graph, records, symptom
        self._kinds: dict[str, str] | None = None
        self._reach: dict[str, str | None] = {}
        self._judged: dict[tuple[str, str | None, str, tuple[str, ...]], str | None] = {}
        self.steps = _steps_with_compute(records)
        sigs = list((self.steps or {}).get("signals") or [])
        self.slow = next((s for s in sigs if s["name"] == "job_slowdown"), None)
        self.late = [
            (s["component"], float((s.get("values") or {}).get("slowdown_pct") or 0.0))
            for s in sigs
            if s["name"] == "straggler"
        ]

    def kind(self, h: Hypothesis) -> str:
        """The kind of part a hypothesis names, as the tools that saw it said (a root cause that
        can blame a GPU or a NIC names one or the other); the hypothesis' own kind otherwise."""
        if self._kinds is None:
            self._kinds = {}
            for rec in self.records:
                for sig in rec.get("signals") or []:
                    if sig.get("kind") and sig.get("component"):
                        self._kinds.setdefault(sig["component"], str(sig["kind"]))
        return self._kinds.get(h.component or "", h.kind)

    def out_of_reach(self, spec: RootCauseSpec, what: str) -> str | None:
        if spec.id not in self._reach:
            self._reach[spec.id] = _symptom_out_of_reach(
                self.graph, spec, "{what}", self.records, self.symptom
            )
        why = self._reach[spec.id]
        return why.replace("{what}", what, 1) if why is not None else None

    def __call__(self, h: Hypothesis) -> str | None:
        # A report asks of one hypothesis several times (its share, the headline, the leading list).
        key = (h.root_cause, h.component, h.kind, tuple(h.support))
        if key not in self._judged:
            self._judged[key] = self._judge(h)
        return self._judged[key]

    def _judge(self, h: Hypothesis) -> str | None:
        spec = self.graph.root_causes.get(h.root_cause)
        # A hypothesis whose only evidence is its part's lateness is held to the same rule whatever
        # its cause: the lateness is all that ties it to the slowdown, so it must be the size of it.
        lateness_only = bool(h.support) and all(k.split("@", 1)[0] == "straggler" for k in h.support)
        if spec is None or not (spec.straggler_kinds or lateness_only) or not h.component:
            return None
        kind = self.kind(h)
        if kind not in spec.straggler_kinds and not lateness_only:
            return None
        what = f"{h.root_cause} on {h.component}"
        if (why := self.out_of_reach(spec, what)) is not None:
            return why
        rec, slow, late = self.steps, self.slow, self.late
        if rec is None:
            return None
        if self.symptom != "mfu_drop" and slow is None:
            return None
        part, host = h.component, host_of(h.component)
        if not late:
            return (
                f"{what} cannot explain the slowdown: per-rank compute times show no late rank [{rec['id']}], "
                f"and a {kind} that slowed the job would make its ranks compute late"
            )
        mine = [pct for comp, pct in late if comp == part or (kind == "host" and host_of(comp) == host)]
        if not mine:
            elsewhere = sorted({host_of(c) for c, _ in late})
            return (
                f"{what} cannot explain the slowdown: the ranks that compute late are on {', '.join(elsewhere[:3])}"
                f"{' …' if len(elsewhere) > 3 else ''}, not on {part} [{rec['id']}]"
            )
        ratio = float((slow.get("values") or {}).get("ratio") or 0.0) if slow else 0.0
        if ratio > 1.0 and max(mine) / 100.0 < EXPLAINED_SHARE * (ratio - 1.0):
            return (
                f"{what} cannot explain the slowdown's size: its ranks compute {max(mine):.1f}% late, "
                f"against a step period up {100 * (ratio - 1):.0f}% [{rec['id']}]"
            )
        if ratio <= 1.0 and max(mine) < MATERIAL_LATE_PCT:
            # No slowdown measured in the steps, so the one reported is what must be explained: a rank
            # this little late costs each step no more than that, which is no slowdown anyone reports.
            return (
                f"{what} cannot explain the slowdown: its ranks compute only {max(mine):.1f}% late "
                f"(chip-to-chip spread), and the steps show no regression for it to account for [{rec['id']}]"
            )
        return None


def cannot_explain(
    graph: FailureGraph, h: Hypothesis, records: list[dict[str, Any]], symptom: str
) -> str | None:
    """Why ``h`` cannot account for the job's slowdown, or None when it can (or nothing says).

    A cause that slows a job only through its part's ranks computing late (``straggler_kinds``)
    explains a slowdown only if that part straggles, and by about as much as the job slowed: one
    GPU 3% late cannot make every step 2x longer, and a per-GPU anomaly cannot explain a job-wide
    slowdown in which no rank is late. With no slowdown measured in the steps, a part only a few
    per cent late cannot explain the one reported; and such a cause cannot explain replicas that
    disagree or a hang that the job's own telemetry shows."""
    return _Judge(graph, records, symptom)(h)


def explained_shares(
    graph: FailureGraph,
    hyps: list[Hypothesis],
    records: list[dict[str, Any]],
    symptom: str,
    judge: _Judge | None = None,
) -> dict[int, float]:
    """Each hypothesis' probability among those that can explain the symptom (keyed by ``id``):
    the ones :func:`cannot_explain` sets aside get 0, the others share what is left. This is the
    confidence the report states. The failure graph scores each hypothesis on its own signals;
    whether a part 2% late can be the cause of a job 75% slower is a judgement across them, and
    without it 500 such per-GPU hypotheses of a large job took 96% of the belief from the one
    cause that explains the slowdown, which then read "probable at 0.04". When nothing can
    explain the symptom, the plain posterior stands."""
    judge = judge or _Judge(graph, records, symptom)
    aside = {id(h) for h in hyps if h.root_cause != "healthy" and judge(h) is not None}
    # "Healthy" cannot explain a slowdown or a hang the steps show and nothing explains (the rule
    # that withholds a healthy verdict, harness.health): it takes no share either.
    names = {s.get("name") for r in records if r.get("status") == "ok" for s in r.get("signals") or []}
    if names & set(SYMPTOMS) and not names & set(EXPLAINED):
        aside |= {id(h) for h in hyps if h.root_cause == "healthy"}
    total = sum(h.probability for h in hyps if id(h) not in aside)
    if not aside or total <= 0:
        return {id(h): h.probability for h in hyps}
    return {id(h): 0.0 if id(h) in aside else h.probability / total for h in hyps}


#: The most an inconclusive report's confidence may say: even odds (the verdict is not established).
INCONCLUSIVE_CAP = 0.5
#: The least a ``probable`` verdict may say when its playbook's required evidence was not found:
#: below it the leader is a guess among look-alikes, and the status says so (inconclusive).
PROBABLE_FLOOR = 0.25
#: A part whose ranks are late by less than this share of the job's slowdown cannot be its cause.
EXPLAINED_SHARE = 0.25


def _symptom_out_of_reach(
    graph: FailureGraph, spec: RootCauseSpec, what: str, records: list[dict[str, Any]], symptom: str
) -> str | None:
    """Why a cause that acts only by slowing its part's ranks cannot explain a symptom of another
    kind that the job's own telemetry shows (replicas that disagree, a hang); None otherwise. A
    symptom taken only from the report's words is not enough: the words may also mean a slowdown."""
    reach = {sym for m in spec.mechanisms for sym in graph.mechanisms[m].symptoms}
    shown = graph.symptoms.get(symptom)
    if symptom in reach or shown is None or not shown.signals:
        return None
    seen = next(
        (
            rec
            for rec in records
            if rec["status"] == "ok" and any(sig["name"] in shown.signals for sig in rec.get("signals") or [])
        ),
        None,
    )
    if seen is None:
        return None
    return (
        f"{what} cannot explain the {symptom.replace('_', ' ')} [{seen['id']}]: it only slows its part's "
        f"ranks ({', '.join(m.replace('_', ' ') for m in spec.mechanisms)})"
    )


def _explaining(judge: _Judge, hyps: list[Hypothesis], notes: list[str]) -> Hypothesis | None:
    """The best fault hypothesis with support that can explain the symptom; a note for each
    stronger one that cannot (so the report says what was set aside and why)."""
    for h in hyps:
        if h.root_cause == "healthy" or not h.support:
            continue
        why = judge(h)
        if why is None:
            return h
        if why not in notes:
            notes.append(why)
    return None


def _why_low(confidence: float, alternatives: list[Verdict]) -> str:
    """For a fault verdict below one half, what holds the rest of the belief, said beside the
    status so that "confirmed at 0.37" or "probable at 0.30" reads as what it is: the best of
    several hypotheses that fit, not a contradiction."""
    if confidence >= 0.5:
        return ""
    a = next((a for a in alternatives if a.confidence > 0), None)
    if a is None:
        return f"; confidence {confidence:.2f}: the rest of the belief is spread over many hypotheses"
    return (
        f"; confidence {confidence:.2f} because {a.root_cause}"
        f"{' on ' + a.component if a.component else ''} fits the same evidence ({a.confidence:.2f})"
    )


def _status_reason(
    graph: FailureGraph,
    status: str,
    top: Hypothesis,
    confidence: float,
    alternatives: list[Verdict],
    notes: list[str],
) -> str:
    """One sentence on why the status is what it is, naming what would change it."""
    found = {key.split("@", 1)[0] for key in top.support}
    if status == "confirmed":
        return "its confirmation rule is met" + _why_low(confidence, alternatives)
    if status == "probable":
        rule = graph.root_causes[top.root_cause].confirm
        unmet = [g for g in rule.require if not found & set(g)]
        if unmet:
            why = f"not confirmed: none of {' or '.join(s.replace('_', ' ') for s in unmet[0])} was found on {top.component or 'the job'}"
        elif top.unexplained:
            why = f"not confirmed: the evidence also shows {', '.join(top.unexplained[:2])}, which this does not explain"
        elif not top.impact_shown:
            why = "not confirmed: the fault is present, but no evidence ties it to the job's symptom"
        else:
            # Its rule is met, yet it did not lead on its own score: the note that made it lead says so.
            why = next(
                (
                    f"not confirmed: {n}"
                    for n in notes
                    if " leads: its playbook's confirmation rule is met" in n
                ),
                "not confirmed by its playbook's rule",
            )
        return why + _why_low(confidence, alternatives)
    if status == "inconclusive":
        for first in (
            "budget exhausted",
            "no evidence",
            "not healthy",
            "inconclusive:",
        ):  # the decisive reason first
            if (n := next((n for n in notes if n.startswith(first)), None)) is not None:
                return n
        return "no hypothesis is established"
    return next(
        (n for n in notes if n.startswith("healthy, at most probable:")),
        next((n for n in notes if n.startswith("healthy:")), "no fault found in the evidence read"),
    )


def _bounded(
    records: list[dict[str, Any]], components: list[str | None], findings: list[Finding], default: str | None
) -> list[dict[str, Any]]:
    """The report's records, bounded (``bound_record``), such that every finding still verifies
    against them: whoever reads the report (a person, the eval) re-checks its citations there, not
    in the checkpoint. A record cut so far that a finding citing it no longer verifies keeps every
    signal the check reads for that finding's subject."""
    out = [bound_record(r, components) for r in records]
    by = {r["id"]: r for r in out}
    whole = by_id(records)
    for f in findings:
        subject = f.subject or default
        if citations.check(f, by, subject).verified:
            continue
        for ev in f.evidence:
            if ev in by and ev in whole and by[ev] is not whole[ev]:
                full = whole[ev].get("signals") or []
                kept = {id(x) for x in by[ev].get("signals") or []}
                need = {id(x) for x in full if citations.reads(x, subject)}
                by[ev]["signals"] = [x for x in full if id(x) in kept | need]
                left = len(full) - len(by[ev]["signals"])
                omitted = {k: v for k, v in (by[ev].get("omitted") or {}).items() if k != "signals"}
                by[ev]["omitted"] = {**omitted, **({"signals": left} if left else {})}
    return out


def _healthy_findings(records: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(claim=r["summary"], evidence=[r["id"]]) for r in records if r["status"] == "ok"]


#: How many fault hypotheses an inconclusive report names.
LEADING = 3
#: How many pieces of unread evidence the report lists (the note names the first few of them).
UNREAD_LISTED = 50
UNREAD_IN_NOTE = 3


def _untested(graph: FailureGraph, obs: Observation, leading: list[Hypothesis]) -> list[str]:
    """The discriminating tests of the leading hypotheses that no tool call has covered yet."""
    out: list[str] = []
    for h in leading:
        for t in graph.root_causes[h.root_cause].tests:
            if _covered(t, obs, h.component):
                continue
            scoped = t.match in ("component", "host") and h.component not in (None, "job")
            name = f"{t.tool}@{host_of(h.component)}" if scoped and h.component is not None else t.tool
            if name not in out:
                out.append(name)
    return out


def build_report(inv: Investigator, state: State) -> Report:
    records = state.get("records") or []
    graph = inv.failure_graph
    obs = observe(records)
    hyps = beliefs(graph, obs)
    top = hyps[0]
    view_symptom = state.get("symptom") or "alert"
    # Confidence is stated among the hypotheses that can explain the symptom (explained_shares).
    judge = _Judge(graph, records, view_symptom)
    share = explained_shares(graph, hyps, records, view_symptom, judge)

    def conf(h: Hypothesis) -> float:
        return round(share.get(id(h), h.probability), 4)

    notes = list(state.get("notes") or [])
    # The source may learn of problems during the run (a host whose agent stopped answering).
    notes.extend(n for n in inv.source.notes() if n not in notes)
    exhausted = state.get("budget_exhausted")
    # Never "read, nothing found": what could not be read is named, and no healthy verdict rests on it.
    unread = unread_evidence(inv.source, obs)
    # Read in part (a compressed file cut short): named with what was lost; it withholds healthy
    # unless the per-rank steps clear every rank, and then caps it (harness.health).
    partial = partial_evidence(obs)

    unearned: str | None = None
    set_aside = len(notes)
    if top.root_cause == "healthy":
        health = check_healthy(
            graph,
            obs,
            f"{inv.source.incident.title} {inv.source.incident.reported}",
            unread,
            partial,
            ranks_cleared(records, inv.source.window) if partial else None,
            records,
        )
        faults = [h for h in hyps if h.root_cause != "healthy"]
        # With nothing read at all the rule below (absence of evidence) says inconclusive already.
        if health.earned or not faults or (not health.tested and not unread):
            status = "healthy"
            # Confidence reflects coverage: classes no tool could test are not ruled out.
            verdict = Verdict(
                root_cause="healthy", component=None, confidence=round(conf(top) * health.coverage, 4)
            )
            chain = [view_symptom, "healthy"]
            findings = _healthy_findings(records)
            seen = noise(records) if health.earned else []
            notes.append(
                f"healthy: {health.why}; {len(health.tested)} fault classes tested with readable evidence"
                + (f", not testable here: {', '.join(health.untestable)}" if health.untestable else "")
                + (f"; seen and not a fault: {'; '.join(seen)}" if seen else "")
            )
            if health.partial and health.earned:
                # Never stronger than a probable verdict: what was lost was not read.
                verdict.confidence = round(min(verdict.confidence, PARTIAL_CAP), 4)
                notes.append(
                    f"healthy, at most probable: {health.partial[0]}"
                    + (f" and {len(health.partial) - 1} more" if len(health.partial) > 1 else "")
                    + "; the per-rank steps clear every rank, but what was lost is not ruled out"
                )
        else:
            # Healthy must be earned: name the strongest fault candidate, inconclusive, not a weak "healthy".
            unearned = health.why
            top = _explaining(judge, faults, notes) or faults[0]
            verdict = Verdict(root_cause=top.root_cause, component=top.component, confidence=conf(top))
            chain = (
                [view_symptom, m, top.root_cause]
                if (m := _mechanism(graph, top))
                else [view_symptom, top.root_cause]
            )
            findings = _findings(top, records) or _healthy_findings(records)
            status = "inconclusive"
            notes.append(f"not healthy: {unearned}; the strongest candidates are listed, none is established")
    else:
        displaced = None
        if judge(top):
            # The headline must explain the symptom: an anomaly that cannot does not lead. The
            # strongest cause that can is named, never as confirmed (it did not lead on its own
            # score). Unless its own playbook's required evidence is present on its part, nothing
            # established explains the symptom: the run is inconclusive and says why.
            displaced = top
            top = _explaining(judge, hyps, notes) or top
            if top is displaced or not (top.confirmed or top.required_met):
                unearned = "nothing found explains the symptom"
        outranked = None
        if unearned is None and not top.impact_shown and top.unexplained:
            # The leader is not tied to the symptom and leaves a fault unexplained that is, by its
            # own playbook's rule (present and tied): that fault leads. Probable, never confirmed:
            # its probability was measured against the leader it displaces.
            outranked = top
            top = next(
                (
                    h
                    for h in hyps
                    if h.confirmed
                    and f"{h.root_cause}@{h.component}" in outranked.unexplained
                    and judge(h) is None
                ),
                top,
            )
        status = "confirmed" if top.confirmed and outranked is None and displaced is None else "probable"
        if displaced is not None and unearned is None:
            notes.append(
                f"{top.root_cause} on {top.component} leads: "
                f"{'its playbook' + chr(39) + 's confirmation rule is met' if top.confirmed else 'its required evidence is present'} "
                f"and it explains the symptom, while {displaced.root_cause} on {displaced.component}, which scored "
                "higher, cannot; probable, not confirmed"
            )
        if outranked is not None and top is not outranked:
            notes.append(
                f"{top.root_cause} on {top.component} leads: its playbook's confirmation rule is met, while "
                f"{outranked.root_cause} on {outranked.component} (p={outranked.probability:.2f}) is not tied to it "
                "and does not explain it; probable, not confirmed"
            )
        verdict = Verdict(root_cause=top.root_cause, component=top.component, confidence=conf(top))
        chain = (
            [view_symptom, m, top.root_cause]
            if (m := _mechanism(graph, top))
            else [view_symptom, top.root_cause]
        )
        findings = _findings(top, records)
        if top.required_met and not top.impact_shown:
            notes.append(
                f"{top.root_cause} is present on {top.component}, but no evidence ties it to the job's symptom: probable, not confirmed"
            )
        if top.unexplained:
            notes.append(
                f"not confirmed: the evidence also shows {', '.join(top.unexplained)}, which this verdict does not explain"
            )
    if status == "probable" and not top.required_met and verdict.confidence < PROBABLE_FLOOR:
        # Status and confidence must read alike: a probable at a few per cent, with none of the
        # evidence its own playbook requires, is not more likely than not; it is a lead to check.
        status = "inconclusive"
        notes.append(
            f"inconclusive: {top.root_cause} on {top.component} leads at {verdict.confidence:.2f}, "
            "without the evidence its playbook requires; it is a lead, not a finding"
        )
    if unearned == "nothing found explains the symptom":
        status = "inconclusive"
        notes.insert(set_aside, "inconclusive: nothing found explains the symptom; no part is blamed for it")
    if exhausted:
        status = "inconclusive"
        notes.append(
            f"budget exhausted ({exhausted}) before the investigation could finish; the verdict is the best hypothesis so far"
        )
    elif status == "healthy" and not any(
        r["status"] == "ok" and (r.get("covered") or r.get("signals")) for r in records
    ):
        # Absence of evidence is not health: with nothing read, "healthy" is only the prior.
        status = "inconclusive"
        notes.append("no evidence could be read: nothing supports a verdict")
        verdict.confidence = round(min(verdict.confidence, graph.root_causes["healthy"].prior), 4)

    if status == "inconclusive":
        # Not established: never stated as more likely than not, whatever share of the belief the
        # best candidate holds among those left (status and confidence must read alike).
        verdict.confidence = round(min(verdict.confidence, INCONCLUSIVE_CAP), 4)

    if verdict.root_cause != "healthy":
        findings += _symptom_findings(graph, view_symptom, records, findings)
    # A model planner may add its own claims; they face the same citation check as ours.
    ours = {f.claim for f in findings}  # a claim that repeats one of ours adds nothing
    findings += [
        f.model_copy(update={"author": "model"})
        for f in (Finding.model_validate(c) for c in inv.planner.claims())
        if f.claim not in ours
    ]
    ledger_by_id = by_id(records)
    checked = [citations.check(f, ledger_by_id, f.subject or verdict.component) for f in findings]
    for f in checked:
        if not f.verified:
            notes.append(f"finding dropped: {f.claim!r}: {f.problem}")
    findings = [f for f in checked if f.verified]

    alternatives = [
        Verdict(root_cause=h.root_cause, component=h.component, confidence=conf(h))
        for h in hyps
        if h is not top and h.probability >= 0.001
    ][:3]
    if verdict.root_cause != "healthy" and not any(a.root_cause == "healthy" for a in alternatives):
        healthy = next((h for h in hyps if h.root_cause == "healthy"), None)
        if healthy and healthy.probability >= 0.001:
            alternatives = alternatives[:2] + [
                Verdict(root_cause="healthy", component=None, confidence=conf(healthy))
            ]
    leading: list[Hypothesis] = []
    if status == "inconclusive":
        # An exhausted budget (or an unearned "healthy") is no evidence of health: name the faults still in play.
        # The verdict's hypothesis first: it may not be the most probable one when a stronger
        # anomaly could not explain the symptom.
        leading = [top] if top.root_cause != "healthy" else []
        for h in hyps:  # the set-aside are in the notes
            if len(leading) >= LEADING:
                break
            if h.root_cause != "healthy" and h is not top and judge(h) is None:
                leading.append(h)
    if unread:
        shown = "; ".join(unread[:UNREAD_IN_NOTE]) + (
            f"; and {len(unread) - UNREAD_IN_NOTE} more" if len(unread) > UNREAD_IN_NOTE else ""
        )
        notes.append(f"could not read ({len(unread)}): {shown}")
    if partial:
        shown = "; ".join(partial[:UNREAD_IN_NOTE]) + (
            f"; and {len(partial) - UNREAD_IN_NOTE} more" if len(partial) > UNREAD_IN_NOTE else ""
        )
        notes.append(f"partly read ({len(partial)}): {shown}")
    origin = provenance(inv.source, records)
    for o in origin.outside_window:
        if o.detail and o.detail not in notes:
            notes.append(o.detail)
    missing = [r for r in records if r["status"] == "no_data"]
    if missing:
        notes.append(
            "no data for: "
            + ", ".join(
                f"{r['tool']}{'@' + r['args']['host'] if r['args'].get('host') else ''}" for r in missing
            )
        )
    usage = Usage.model_validate(state.get("usage") or {})
    lim = inv.limits
    return Report(
        incident=inv.source.incident.id,
        title=inv.source.incident.title,
        status=status,
        verdict=verdict,
        alternatives=alternatives,
        chain=chain,
        findings=findings,
        # Bounded: the rows about the verdict, the alternatives and the signals; the checkpoint
        # keeps every record whole (forensic evidence THREAD ev-N).
        evidence=[
            EvidenceRecord.model_validate(r)
            for r in _bounded(
                records,
                [
                    verdict.component,
                    *(f.subject for f in findings),
                    *(a.component for a in alternatives),
                    *(h.component for h in leading),
                ],
                findings,
                verdict.component,
            )
        ],
        budget=BudgetReport(
            tool_calls=usage.tool_calls,
            tool_calls_limit=lim.tool_calls,
            llm_tokens=usage.llm_tokens,
            llm_tokens_limit=lim.llm_tokens,
            cost_usd=round(usage.cost_usd, 6),
            cost_usd_limit=lim.cost_usd,
            wall_s=round(usage.wall_s, 3),
            wall_s_limit=lim.wall_s,
        ),
        planner=state.get("planner") or inv.planner.name,
        notes=notes,
        leading=[
            Verdict(root_cause=h.root_cause, component=h.component, confidence=conf(h)) for h in leading
        ],
        untested=_untested(graph, obs, leading),
        unread=[*unread, *partial][:UNREAD_LISTED],
        status_reason=_status_reason(graph, status, top, verdict.confidence, alternatives, notes),
        evidence_source=origin,
    )
