"""Answers built from evidence: every claim cites records and is checked like a report finding.

An :class:`Answer` is prose for a person plus the claims behind it. Claims are
:class:`~forensic.harness.models.Finding` objects and go through the same citation check as the
report (:func:`forensic.harness.citations.check`); a claim that fails is dropped and the answer
says so. Where the ledger has nothing on what was asked, the :class:`Workspace` runs the tools that
would (through the same tool registry, sandbox and budget as the investigation) and the answer
says which evidence is new. Where no tool can say anything, the answer says so plainly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np
from forensic.harness import citations, ledger
from forensic.harness.budget import Limits, Usage, exhausted
from forensic.harness.failure_graph import FailureGraph, beliefs, host_of, observe
from forensic.harness.models import Finding
from forensic.sandbox import ForensicError, ToolArgumentError
from forensic.tools import get_tool
from pydantic import BaseModel, Field

from .intents import Intent

HELP = (
    "I can answer: why is it slow? · which rank/host/GPU is slowest? · what about <host|GPU|NIC|rank|switch>? · "
    "why not <the network|thermal|power|PCIe|memory|...|a part>? · was there a <cooling|power|memory|...> "
    "failure? · what changed at <HH:MM>? · "
    "what should we do? · show ev-N · show rank N's compute time"
)


class Answer(BaseModel):
    """One reply: text for a person, the checked claims behind it, what is new."""

    intent: str
    text: list[str] = Field(default_factory=list, description="Lines of prose (no claims).")
    claims: list[Finding] = Field(default_factory=list, description="Claims, each with its citations.")
    dropped: list[str] = Field(default_factory=list, description="Claims dropped because a citation failed.")
    new_evidence: list[str] = Field(default_factory=list, description="Evidence ids this answer added.")
    data: dict[str, Any] = Field(default_factory=dict, description="Numbers shown as data (series, records).")
    subject: str | None = None

    def render(self) -> str:
        lines = list(self.text)
        lines += [f"- {c.claim} [{', '.join(c.evidence)}]" for c in self.claims]
        if self.dropped:
            lines.append(f"({len(self.dropped)} claim(s) dropped: their citations did not check out)")
        if self.new_evidence:
            lines.append(f"New evidence: {', '.join(self.new_evidence)}")
        return "\n".join(lines)


def outside_hint(p: dict[str, Any]) -> str:
    """How to approve where this conversation cannot: a person decides elsewhere, by the full hash."""
    return f"a person approves {p['id']} with content hash {p['content_hash']} (a message never approves)"


def terminal_hint(p: dict[str, Any]) -> str:
    """How to approve in ``forensic chat``: the command is typed as shown, as yourself."""
    return f"/approve {p['id']} (type it here, as yourself; a message never approves)"


class Workspace:
    """What answers read (report, ledger, failure graph) and how they add evidence (budgeted tools)."""

    def __init__(
        self,
        *,
        ctx: Any,
        graph: FailureGraph,
        report: dict[str, Any],
        records: list[dict[str, Any]],
        usage: Usage,
        limits: Limits,
        rank_map: dict[int, tuple[str, int]],
        window: tuple[float | None, float | None],
        approve_hint: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.ctx, self.graph, self.report = ctx, graph, report
        self.records, self.usage, self.limits = list(records), usage, limits
        self.rank_map, self.window = rank_map, window
        self.approve_hint: Callable[[dict[str, Any]], str] = approve_hint or outside_hint
        self.new: list[str] = []

    # -- evidence ---------------------------------------------------------------------------
    def run(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """Run one tool under the budget; None when the budget is spent."""
        if exhausted(self.usage, self.limits):
            return None
        self.usage.tool_calls += 1
        t = get_tool(tool)
        try:
            result = t(self.ctx, args)
        except ToolArgumentError as exc:
            from forensic.tools.base import ToolResult

            result = ToolResult(status="error", summary=f"invalid call: {exc}")
        except ForensicError as exc:
            from forensic.tools.base import ToolResult

            result = ToolResult(status="error", summary=f"{tool} failed: {exc}")
        rec = ledger.make_record(len(self.records) + 1, tool, args, result)
        self.records = ledger.append(self.records, rec)
        self.new.append(rec.id)
        return self.records[-1]

    def ran(self, tool: str, host: str | None) -> bool:
        return any(
            r["tool"] == tool and r["status"] != "error" and r["args"].get("host") in (None, host)
            for r in self.records
        )

    def signals_on(self, component: str) -> list[tuple[str, dict[str, Any]]]:
        """(evidence id, signal) for signals on ``component`` (a host: on any of its parts)."""
        out = []
        for r in self.records:
            if r["status"] != "ok":
                continue
            for s in r.get("signals") or []:
                c = s["component"]
                if c == component or ("/" not in component and host_of(c) == component):
                    out.append((r["id"], s))
        return out

    def covering(self, component: str) -> list[dict[str, Any]]:
        """The records that read ``component``, by the same rule the citation check applies, so an
        answer never cites a record the check then refuses."""
        return [r for r in self.records if r["status"] == "ok" and citations.concerns(r, component)]

    def check(self, claims: list[Finding]) -> tuple[list[Finding], list[str]]:
        by_id = ledger.by_id(self.records)
        kept: list[Finding] = []
        dropped: list[str] = []
        for f in claims:
            checked = citations.check(f, by_id, f.subject)
            if checked.verified:
                kept.append(checked)
            else:
                dropped.append(f"{f.claim}: {checked.problem}")
        return kept, dropped

    def hypotheses(self) -> list[Any]:
        return beliefs(self.graph, observe(self.records))

    def component_of_rank(self, rank: int) -> str | None:
        placed = self.rank_map.get(rank)
        return f"{placed[0]}/gpu{placed[1]}" if placed else None


# -- one builder per intent ---------------------------------------------------------------------
def _cause_on(cause: str, component: str | None) -> str:
    """A cause as a person reads it: "no fault" for healthy, and the part only when there is one."""
    if cause == "healthy":
        return "no fault"
    return f"{cause} on {component}" if component else cause


def _files(source: str | list[str] | tuple[str, ...]) -> str:
    """Where it was read, as file names a person reads ('job/steps.csv.gz'), never a list's repr."""
    return source if isinstance(source, str) else ", ".join(str(s) for s in source) or "the evidence"


def _likelihood(p: float) -> str:
    """A hypothesis' probability in words a person acts on, with the number."""
    if p < 0.001:
        return "ruled out by what was examined (probability under 0.1%)"
    word = "unlikely" if p < 0.2 else "possible" if p < 0.5 else "likely"
    return f"{word} (probability {p:.0%})"


def _claim(text: str, ev: str | list[str], subject: str | None) -> Finding:
    return Finding(claim=text, evidence=[ev] if isinstance(ev, str) else ev, subject=subject)


def answer_why(ws: Workspace, intent: Intent) -> Answer:
    r = ws.report
    v = r["verdict"]
    if r["status"] == "inconclusive":
        # Out of budget or of readable evidence: never "no fault found" (absence is not health).
        leading = ", ".join(
            _cause_on(h["root_cause"], h.get("component")) for h in (r.get("leading") or [])[:3]
        )
        why = "; ".join((r.get("notes") or [])[:2]) or "the evidence ran out before a verdict"
        head = f"Inconclusive: {why}." + (f" Leading: {leading}." if leading else "")
        if r.get("untested"):
            head += f" Not tested: {', '.join(r['untested'][:5])}."
    elif v["root_cause"] == "healthy":
        head = f"No fault found ({r['status']}, confidence {v['confidence']:.2f})."
    else:
        head = f"{v['root_cause']} on {v['component']} ({r['status']}, confidence {v['confidence']:.2f})."
    text = [head, "Chain: " + " → ".join(r.get("chain") or [])]
    claims = [Finding.model_validate(f) for f in r.get("findings") or []]
    alts = [
        a
        for a in r.get("alternatives") or []
        if a["root_cause"] != v["root_cause"] or a["component"] != v["component"]
    ]
    if alts:
        text.append(
            "Runner-up: "
            + ", ".join(
                f"{_cause_on(a['root_cause'], a['component'])} ({a['confidence']:.2f})" for a in alts[:2]
            )
            + ". Ask 'why not …?' for what rules them out."
        )
    return Answer(intent="why", text=text, claims=claims, subject=v.get("component"))


def answer_slowest(ws: Workspace, intent: Intent) -> Answer:
    steps = [r for r in ws.records if r["tool"] == "job_steps" and r["status"] == "ok"]
    if not steps:
        rec = ws.run("job_steps", {})
        steps = [rec] if rec and rec["status"] == "ok" else []
    if not steps:
        return Answer(
            intent="slowest",
            text=["No evidence for that: the job's per-rank step timings could not be read."],
        )
    rec = steps[-1]
    slow = [s for s in rec.get("signals") or [] if s["name"] in ("straggler", "host_straggler", "slow_host")]
    if not slow:
        return Answer(
            intent="slowest",
            text=["No rank stands out: the step timings show no straggler."],
            claims=[_claim(rec["summary"], rec["id"], "job")],
        )
    claims = [
        _claim(s.get("detail") or f"{s['name']} on {s['component']}", rec["id"], s["component"])
        for s in slow[:5]
    ]
    return Answer(
        intent="slowest",
        text=[f"Slowest: {slow[0]['component']}."],
        claims=claims,
        subject=slow[0]["component"],
    )


def _ensure_host_coverage(ws: Workspace, host: str) -> None:
    if host not in ws.ctx.hosts(None):
        return
    for tool in ws.graph.host_tools:  # the playbooks' graph.toml names them
        if not ws.ran(tool, host):
            ws.run(tool, {"host": host})


def answer_about(ws: Workspace, intent: Intent) -> Answer:
    if intent.unknown or intent.subject is None:
        name = intent.unknown or "that"
        return Answer(
            intent="about", text=[f"No evidence for {name}: this incident has no part by that name."]
        )
    subject = intent.subject
    if subject.startswith("rank "):
        comp = ws.component_of_rank(int(subject.split()[1]))
        if comp is None:
            return Answer(
                intent="about", text=[f"No evidence for {subject}: the incident does not place it on a GPU."]
            )
        subject = comp
    host = host_of(subject)
    if not ws.signals_on(subject):
        _ensure_host_coverage(ws, host)
    found = ws.signals_on(subject)
    v = ws.report["verdict"]
    if found:
        claims = [
            _claim(s.get("detail") or f"{s['name']} on {s['component']}", ev, s["component"])
            for ev, s in found[:8]
        ]
        blamed = v.get("component") and (v["component"] == subject or host_of(v["component"]) == subject)
        lead = (
            f"{subject} holds the fault the verdict names ({v['root_cause']})."
            if blamed
            else f"{subject}: {len(found)} finding(s); not the part the verdict names ({v.get('component') or 'none'})."
        )
        return Answer(intent="about", text=[lead], claims=claims, subject=subject)
    cover = ws.covering(subject)
    if not cover:
        return Answer(
            intent="about",
            subject=subject,
            text=[f"No evidence for {subject}: no tool could read it, so I cannot say it is healthy."],
        )
    claims = [
        _claim(f"{r['tool']} examined {subject} and found nothing abnormal", r["id"], subject)
        for r in cover[:6]
    ]
    return Answer(
        intent="about",
        text=[f"{subject} looks healthy: nothing abnormal in {len(cover)} record(s)."],
        claims=claims,
        subject=subject,
    )


def answer_why_not(ws: Workspace, intent: Intent) -> Answer:
    v = ws.report["verdict"]
    if not intent.causes and intent.subject:
        return _why_not_part(ws, intent.subject)
    text, claims = [], []
    for rc in intent.causes[:4]:
        spec = ws.graph.root_causes.get(rc)
        if spec is None:
            continue
        for test in spec.tests:  # run the tests nobody ran yet: an untested cause is not ruled out
            if test.weight > 0 and not any(r["tool"] == test.tool for r in ws.records):
                ws.run(test.tool, {})  # once: a tool that found no data is not asked again
        hyps = [h for h in ws.hypotheses() if h.root_cause == rc]
        best = max(hyps, key=lambda h: h.probability, default=None)
        if rc == v["root_cause"]:
            text.append(
                f"It is {rc}: that is the verdict ({v['component']}, confidence {v['confidence']:.2f})."
            )
            claims += [Finding.model_validate(f) for f in ws.report.get("findings") or []][:3]
            continue
        found, looked = [], []
        for test in spec.tests:
            if test.weight <= 0:
                continue
            recs = [r for r in ws.records if r["tool"] == test.tool and r["status"] == "ok"]
            hits = [(r["id"], s) for r in recs for s in r.get("signals") or [] if s["name"] == test.signal]
            if hits:
                found += hits
            elif recs:
                looked.append((test.signal, recs[-1]))
        p = best.probability if best else 0.0
        text.append(
            f"{rc}: {_likelihood(p)}, against the verdict {_cause_on(v['root_cause'], v.get('component'))} "
            f"at {v['confidence']:.2f}."
        )
        for signal, rec in looked[:4]:
            claims.append(
                _claim(
                    f"{rec['tool']} looked for {signal.replace('_', ' ')} and found none", rec["id"], "job"
                )
            )
        for ev, s in found[:3]:
            claims.append(
                _claim(
                    f"but {s.get('detail') or s['name']} (weighed, not enough to lead)", ev, s["component"]
                )
            )
        if not looked and not found:
            text.append(f"No evidence either way for {rc}: its tests could not be run or read.")
    if not text:
        return Answer(intent="why_not", text=["No evidence for that: I do not know that cause. " + HELP])
    return Answer(intent="why_not", text=text, claims=claims)


def answer_whether(ws: Workspace, intent: Intent) -> Answer:
    """'Was there a cooling failure?': yes with the verdict's findings when it is that cause; else what
    the cause's tests found (the why-not answer) and the readings they rest on, each cited."""
    r = ws.report
    v = r["verdict"]
    if v["root_cause"] in intent.causes and r["status"] != "inconclusive":
        why = answer_why(ws, intent)
        head = f"Yes: {_cause_on(v['root_cause'], v.get('component'))} ({r['status']}, confidence {v['confidence']:.2f})."
        return why.model_copy(update={"intent": "whether", "text": [head, *why.text[1:]]})
    inner = answer_why_not(ws, Intent(kind="why_not", causes=intent.causes))
    best = {
        rc: max((h.probability for h in ws.hypotheses() if h.root_cause == rc), default=0.0)
        for rc in intent.causes
    }
    names = " or ".join(rc.replace("_", " ") for rc in intent.causes[:4])
    if r["status"] == "inconclusive":
        head = (
            f"Not settled: the investigation is inconclusive; for {names}, this is what the evidence holds."
        )
    elif max(best.values(), default=0.0) < 0.2:
        head = f"No: the evidence shows no {names}."
    else:
        head = f"Possibly: {names} is weighed but does not lead."
    # The readings the cause's tests rest on (temperatures, throttle reasons, fans where recorded), as
    # each tool summarised what it read.
    tools = list(
        dict.fromkeys(
            t.tool
            for rc in intent.causes
            if (spec := ws.graph.root_causes.get(rc)) is not None
            for t in spec.tests
            if t.weight > 0
        )
    )
    readings = []
    for tool in tools:
        rec = next((x for x in reversed(ws.records) if x["tool"] == tool and x["status"] == "ok"), None)
        if rec is not None and rec.get("summary"):
            readings.append(_claim(f"{tool} read: {rec['summary']}", rec["id"], "job"))
    return Answer(intent="whether", text=[head, *inner.text], claims=[*readings[:4], *inner.claims])


def _why_not_part(ws: Workspace, subject: str) -> Answer:
    if subject.startswith("rank "):
        subject = ws.component_of_rank(int(subject.split()[1])) or subject
    inner = answer_about(ws, Intent(kind="about", subject=subject))
    hyps = [
        h
        for h in ws.hypotheses()
        if h.component and (h.component == subject or host_of(h.component) == subject)
    ]
    best = max(hyps, key=lambda h: h.probability, default=None)
    lead = (
        f"Best hypothesis on {subject}: {_cause_on(best.root_cause, None)}, {_likelihood(best.probability)}."
        if best
        else f"No hypothesis names {subject}."
    )
    return inner.model_copy(update={"intent": "why_not", "text": [lead, *inner.text]})


def _hhmm_to_unix(hhmm: str, window: tuple[float | None, float | None]) -> float | None:
    start = window[0]
    if start is None:
        return None
    parts = [int(p) for p in hhmm.split(":")]
    day = datetime.fromtimestamp(start, tz=UTC)
    t = day.replace(hour=parts[0] % 24, minute=parts[1] % 60, second=parts[2] % 60 if len(parts) > 2 else 0)
    ts = t.timestamp()
    return ts + 86400 if window[1] is not None and ts < start - 43200 else ts


_TIME_KEYS = re.compile(r"(unix|time|onset|first|since|at)$")


def answer_changed(ws: Workspace, intent: Intent) -> Answer:
    at = _hhmm_to_unix(intent.time or "", ws.window)
    if at is None:
        return Answer(
            intent="changed", text=["No evidence for that: the incident has no window to place the time in."]
        )
    near = []
    for r in ws.records:
        if r["status"] != "ok":
            continue
        for s in r.get("signals") or []:
            for k, val in (s.get("values") or {}).items():
                if (
                    _TIME_KEYS.search(k)
                    and isinstance(val, (int, float))
                    and val > 1e9
                    and abs(val - at) <= 900
                ):
                    near.append((abs(val - at), r["id"], s))
                    break
    if not near:
        return Answer(
            intent="changed",
            text=[
                f"Nothing recorded changed within 15 minutes of {intent.time} UTC "
                "(no onset or event in the evidence carries a time near it)."
            ],
        )
    near.sort(key=lambda x: x[0])
    claims = [
        _claim(s.get("detail") or f"{s['name']} on {s['component']}", ev, s["component"])
        for _, ev, s in near[:6]
    ]
    return Answer(intent="changed", text=[f"Near {intent.time} UTC:"], claims=claims)


def answer_todo(ws: Workspace, intent: Intent) -> Answer:
    props = ws.report.get("proposals") or []
    if not props:
        return Answer(
            intent="todo",
            text=[
                "Nothing to do from this evidence: no remediation is proposed "
                f"(status {ws.report['status']})."
            ],
        )
    text = []
    for p in props:
        text.append(f"{p['id']} {p['action']} {p['target']} [{p['status']}] risk {p['risk']}: {p['reason']}")
        if p.get("blast_radius"):
            text.append(f"    blast radius: {p['blast_radius']}")
        if p.get("rollback"):
            text.append(f"    rollback: {p['rollback']}")
        if p["status"] == "pending_approval":
            text.append(f"    to approve: {ws.approve_hint(p)}")
    return Answer(intent="todo", text=text)


def answer_show(ws: Workspace, intent: Intent) -> Answer:
    if intent.evidence:
        rec = ledger.by_id(ws.records).get(intent.evidence)
        if rec is None:
            return Answer(
                intent="show",
                text=[f"No evidence {intent.evidence}: the ledger has ev-1 … ev-{len(ws.records)}."],
            )
        lines = [f"{rec['id']} {rec['tool']} {rec['args']} [{rec['status']}]", rec["summary"]]
        lines += [
            f"  {s['name']} on {s['component']}: {s.get('detail', '')}" for s in rec.get("signals") or []
        ]
        if rec.get("sources"):
            lines.append(
                "  read: " + ", ".join(rec["sources"][:6]) + (" …" if len(rec["sources"]) > 6 else "")
            )
        return Answer(intent="show", text=lines, data={"record": rec})
    if intent.subject and intent.subject.startswith("rank "):
        return _show_rank(ws, int(intent.subject.split()[1]))
    return answer_about(ws, intent.model_copy(update={"kind": "about"}))


def sparkline(values: np.ndarray, lo: float, hi: float) -> str:
    bars = "▁▂▃▄▅▆▇█"
    if not np.isfinite(values).any() or hi <= lo:
        return ""
    scaled = np.clip((np.nan_to_num(values, nan=lo) - lo) / (hi - lo), 0, 1)
    return "".join(bars[int(round(x * (len(bars) - 1)))] for x in scaled)


def _show_rank(ws: Workspace, rank: int) -> Answer:
    from forensic.tools.job_steps import load_table

    try:
        got = load_table(ws.ctx)
    except ForensicError as exc:
        return Answer(
            intent="show", text=[f"No evidence for rank {rank}: the step timings are unusable ({exc})."]
        )
    if got is None:
        return Answer(
            intent="show", text=[f"No evidence for rank {rank}: the incident has no per-rank step timings."]
        )
    table, source = got
    idx = np.searchsorted(table.ranks, rank)
    if idx >= len(table.ranks) or table.ranks[idx] != rank:
        return Answer(intent="show", text=[f"No evidence for rank {rank}: it logged no steps."])
    series = table.compute if table.compute is not None else table.duration
    what = "compute time" if table.compute is not None else "step time (no compute time recorded)"
    mine = series[:, idx].astype(float)
    med = np.nanmedian(series.astype(float), axis=1)
    n = min(60, len(mine))
    step = max(1, len(mine) // n)
    lo = float(np.nanmin([np.nanmin(mine), np.nanmin(med)]))
    hi = float(np.nanmax([np.nanmax(mine), np.nanmax(med)]))
    comp = ws.component_of_rank(rank)
    text = [
        f"rank {rank}{' (' + comp + ')' if comp else ''} {what} per step, from {_files(source)}:",
        f"  rank {rank}: {sparkline(mine[::step], lo, hi)}  last {mine[-1]:.3f} s",
        f"  median: {sparkline(med[::step], lo, hi)}  last {med[-1]:.3f} s",
    ]
    return Answer(
        intent="show",
        text=text,
        subject=comp,
        data={
            "rank": rank,
            "source": source,
            "series": [round(x, 4) for x in mine[::step].tolist()],
            "median": [round(x, 4) for x in med[::step].tolist()],
        },
    )


BUILDERS: dict[str, Callable[[Workspace, Intent], Answer]] = {
    "why": answer_why,
    "slowest": answer_slowest,
    "about": answer_about,
    "why_not": answer_why_not,
    "whether": answer_whether,
    "changed": answer_changed,
    "todo": answer_todo,
    "show": answer_show,
    "help": lambda ws, intent: Answer(intent="help", text=[HELP]),
}


def build_answer(ws: Workspace, intent: Intent) -> Answer:
    """The answer to ``intent``, its claims checked; evidence the answer added is named."""
    ans = BUILDERS[intent.kind](ws, intent)
    unique = list({(c.claim, tuple(c.evidence)): c for c in ans.claims}.values())
    kept, dropped = ws.check(unique)
    return ans.model_copy(
        update={"claims": kept, "dropped": ans.dropped + dropped, "new_evidence": list(ws.new)}
    )
