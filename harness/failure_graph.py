"""The failure graph, loaded from ``playbooks/`` (data, not code), and belief over hypotheses.

A hypothesis is a (root cause, component) pair. Its belief is a log-odds score: the root cause's
prior plus, for each of its tests, the test's weight when the signal was found on the component,
or its ``absent`` weight when the tool examined the component and did not find it. Scores across
hypotheses are turned into probabilities with a softmax, with ``healthy`` as one more hypothesis.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from forensic.sandbox import PlaybookError
from forensic.tools.base import ComponentKind, Signal
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

log = logging.getLogger(__name__)

#: The playbooks shipped with the package (package data of ``forensic.playbooks``).
PLAYBOOK_DIR = Path(str(resources.files("forensic.playbooks")))

Match = Literal["component", "host", "host_shared", "job", "any"]

#: A word people use for a cause in a question: lower case, matched as the start of a word
#: ("network" also matches "networking").
Word = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")]


class Test(BaseModel):
    """A discriminating test: which tool, which signal, how much each outcome moves belief."""

    tool: str = Field(description="Tool that produces the signal.")
    signal: str = Field(description="Signal name.")
    weight: float = Field(description="Log-likelihood ratio when the signal is found.")
    absent: float = Field(
        0.0, description="Log-likelihood ratio when the tool examined the component and did not find it."
    )
    match: Match = Field(
        "component",
        description="component: on the same component; host: anywhere on its host; host_shared: on its host but not "
        "on the component itself (a cause the host shares); job: a job-wide signal; any: anywhere.",
    )
    absent_void: list[str] = Field(
        default_factory=list,
        description="Signals that, found on the same component, void this test's absent weight. For a tool that "
        "reads one moment (an nvidia-smi or NVML snapshot at collection): a fault that comes and goes can be off at "
        "that moment, and the series over the window that show it outrank the snapshot that does not.",
    )
    sweep: bool = Field(
        True,
        description="Counts toward the value of a fleet-wide sweep of its tool (what the sweep can reveal anywhere). "
        "False for a test that only decides which level names a fault already found (the host or its GPU).",
    )


class Confirm(BaseModel):
    """Confirmation rule: each group needs one of its signals present on the component."""

    require: list[list[str]] = Field(default_factory=list, description="Groups that must each be met.")
    impact: list[list[str]] = Field(
        default_factory=list,
        description="Groups that show the fault matters to the job; unmet leaves the verdict probable.",
    )


class Remediation(BaseModel):
    """A remediation template; ``{host}`` and ``{component}`` are filled in from the verdict, and
    ``{origin_host}`` with a host outside the job that the evidence says drives the fault through the
    named part (a template whose target is then empty is not proposed)."""

    action: str = Field(description="Typed action name.")
    target: str = Field(description="Target template.")
    risk: Literal["low", "medium", "high"] = Field(description="Risk of the action.")
    reason: str = Field(description="Reason template.")
    blast_radius: str = Field("", description="What else the action affects.")
    rollback: str = Field("", description="How to undo it.")
    kinds: list[ComponentKind] = Field(
        default_factory=list,
        description="Kinds of verdict component it applies to (a switch port has no host to drain); empty: all.",
    )


class RootCauseSpec(BaseModel):
    """One root cause of the failure graph."""

    id: str = Field(
        pattern=r"^[a-z][a-z0-9_]*$",
        max_length=64,
        description="Root cause id; the file's name is a good choice.",
    )
    title: str = Field(description="What it means.")
    kinds: list[ComponentKind | Literal["none"]] = Field(description="Kinds of component it can blame.")
    mechanisms: list[str] = Field(description="Mechanisms it acts through (can-cause edges).")
    prior: float = Field(gt=0.0, lt=1.0, description="Prior probability.")
    tests: list[Test] = Field(default_factory=list, description="Discriminating tests.")
    confirm: Confirm = Field(default_factory=Confirm, description="Confirmation rule.")
    remediation: list[Remediation] = Field(default_factory=list, description="Remediation templates.")
    words: list[Word] = Field(
        default_factory=list,
        max_length=64,
        description="Words people use for this cause in a question ('why not the network?'): chat's why-not "
        "matching reads them, so a new cause needs no code. A word several causes share names them all.",
    )
    straggler_kinds: list[ComponentKind] = Field(
        default_factory=list,
        description="Kinds of part through which this cause slows a job only by making that part's ranks compute late "
        "(a throttled GPU, a starved host). Such a hypothesis cannot explain a slowdown in which its part "
        "does not straggle, or one far larger than its part's lateness, once per-rank compute times were read.",
    )


class NodeSpec(BaseModel):
    """A symptom or mechanism node."""

    description: str = Field(description="What it means.")
    signals: list[str] = Field(default_factory=list, description="Signals that evidence it.")
    symptoms: list[str] = Field(default_factory=list, description="Symptoms it can cause (mechanisms only).")


class FailureGraph(BaseModel):
    """Symptoms, mechanisms and root causes, with can-cause edges."""

    triage: list[str] = Field(description="Tools run before any hypothesis exists.")
    sweeps: list[str] = Field(description="Fleet-wide tools for when targeted tests are not enough.")
    host_tools: list[str] = Field(
        default_factory=list,
        description="Tools chat runs on a host it is asked about when no evidence covers that host yet.",
    )
    symptoms: dict[str, NodeSpec]
    mechanisms: dict[str, NodeSpec]
    root_causes: dict[str, RootCauseSpec]
    #: The playbook folder it was loaded from; None for the shipped playbooks.
    _folder: str | None = PrivateAttr(None)

    @property
    def folder(self) -> str | None:
        return self._folder

    def vocabulary(self) -> dict[str, list[str]]:
        """Root cause -> the words people use for it (its playbook's ``words``), the likelier
        (higher prior) causes first: chat names them in that order."""
        return {
            rc.id: list(rc.words) for rc in sorted(self.root_causes.values(), key=lambda r: (-r.prior, r.id))
        }

    def digest(self) -> str:
        """A short hash of the whole graph: a thread records it, so that it is continued with the same one."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def load_failure_graph(
    folder: Path | str = PLAYBOOK_DIR, *, emits: Mapping[str, frozenset[str]] | None = None
) -> FailureGraph:
    """Load and validate the failure graph; PlaybookError says which file is wrong and why.

    The playbooks are the vocabulary, checked against the tools: ``emits`` maps each tool name to
    the signals it declares (default: every registered tool's ``emits``). A test naming an
    unknown tool or a signal its tool never emits, or a rule or node waiting for a signal no tool
    emits, is refused with the file and line, so a playbook cannot silently wait forever.
    """
    folder = Path(folder)
    if emits is None:
        from forensic.tools import all_tools

        emits = {name: tool.emits for name, tool in all_tools().items()}
    texts: dict[str, tuple[Path, str]] = {}
    graph_path = folder / "graph.toml"
    try:
        text = graph_path.read_text()
        base = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PlaybookError(f"{graph_path}: {exc}") from None
    texts[""] = (graph_path, text)
    root_causes: dict[str, RootCauseSpec] = {}
    for path in sorted((folder / "root_causes").glob("*.toml")):
        try:
            text = path.read_text()
            spec = RootCauseSpec.model_validate(tomllib.loads(text))
        except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
            raise PlaybookError(f"{path}: {exc}") from None
        if spec.id in root_causes:
            raise PlaybookError(f"{path}: root cause {spec.id!r} defined twice")
        root_causes[spec.id] = spec
        texts[spec.id] = (path, text)
    try:
        graph = FailureGraph.model_validate({**base, "root_causes": root_causes})
    except ValidationError as exc:
        raise PlaybookError(f"{folder}: {exc}") from None
    for rc in graph.root_causes.values():
        for m in rc.mechanisms:
            if m not in graph.mechanisms:
                raise PlaybookError(f"root cause {rc.id}: unknown mechanism {m!r}")
    if "healthy" not in graph.root_causes:
        raise PlaybookError("the failure graph needs a 'healthy' root cause")
    _check_vocabulary(graph, emits, texts)
    if folder.resolve() != Path(PLAYBOOK_DIR).resolve():
        graph._folder = str(folder.resolve())
    log.info("failure graph loaded", extra={"folder": str(folder), "root_causes": len(graph.root_causes)})
    return graph


def _line(text: str, pattern: str, start: int = 0) -> int:
    """1-based number of the first line at or after line ``start`` (0-based) matching ``pattern``."""
    lines = text.splitlines()
    for i in range(start, len(lines)):
        if re.search(pattern, lines[i]):
            return i + 1
    return start + 1


def _check_vocabulary(
    graph: FailureGraph, emits: Mapping[str, frozenset[str]], texts: dict[str, tuple[Path, str]]
) -> None:
    known = ", ".join(sorted(emits))
    every = frozenset().union(*emits.values())
    graph_path, graph_text = texts[""]
    for key in ("triage", "sweeps", "host_tools"):
        for tool in getattr(graph, key):
            if tool not in emits:
                where = _line(graph_text, rf"^\s*{key}\s*=")
                raise PlaybookError(
                    f"{graph_path}:{where}: {key} names unknown tool {tool!r}; known: {known}"
                )
    for section in ("symptoms", "mechanisms"):
        for name, node in getattr(graph, section).items():
            for sig in node.signals:
                if sig not in every:
                    head = _line(graph_text, rf"^\s*\[{section}\.{re.escape(name)}\]") - 1
                    where = _line(graph_text, rf'["\']{re.escape(sig)}["\']', head)
                    raise PlaybookError(
                        f"{graph_path}:{where}: {section}.{name} lists signal {sig!r}, which no tool emits"
                    )
    for rc in graph.root_causes.values():
        path, text = texts[rc.id]
        heads = [i for i, line in enumerate(text.splitlines()) if line.strip() == "[[tests]]"]
        for n, test in enumerate(rc.tests):
            head = heads[n] if n < len(heads) else 0
            if test.tool not in emits:
                where = _line(text, r"^\s*tool\s*=", head)
                raise PlaybookError(
                    f"{path}:{where}: test of {rc.id} names unknown tool {test.tool!r}; known: {known}"
                )
            if test.signal not in emits[test.tool]:
                where = _line(text, r"^\s*signal\s*=", head)
                others = sorted(t for t, s in emits.items() if test.signal in s)
                hint = f" (emitted by {', '.join(others)})" if others else " (no tool emits it)"
                raise PlaybookError(
                    f"{path}:{where}: test of {rc.id} waits for signal {test.signal!r}, "
                    f"which tool {test.tool!r} never emits{hint}"
                )
        for group in (*rc.confirm.require, *rc.confirm.impact):
            for sig in group:
                if sig not in every:
                    head = _line(text, r"^\s*\[confirm\]") - 1
                    where = _line(text, rf'["\']{re.escape(sig)}["\']', head)
                    raise PlaybookError(
                        f"{path}:{where}: confirmation rule of {rc.id} needs signal {sig!r}, which no tool emits"
                    )


@lru_cache(maxsize=4)
def default_graph() -> FailureGraph:
    return load_failure_graph(PLAYBOOK_DIR)


# --- belief -----------------------------------------------------------------------------------


def host_of(component: str) -> str:
    return component.split("/", 1)[0]


class Observation(BaseModel):
    """What the ledger says, reduced to what belief needs."""

    signals: list[tuple[str, Signal]] = Field(
        default_factory=list, description="(tool, signal) pairs with their evidence id."
    )
    evidence_of: dict[str, list[str]] = Field(default_factory=dict, description="signal key -> evidence ids.")
    covered: dict[str, set[str]] = Field(default_factory=dict, description="tool -> components it examined.")
    ran: set[str] = Field(default_factory=set, description="Tools that ran successfully at least once.")
    unread: dict[str, list[str]] = Field(
        default_factory=dict,
        description="What the calls could not read ('what: why') -> evidence ids that met it.",
    )
    partial: dict[str, list[str]] = Field(
        default_factory=dict,
        description="What the calls read only in part ('what: what was lost') -> evidence ids that met it.",
    )


def observe(records: Iterable[dict]) -> Observation:
    """Reduce ledger records (as dicts) to signals and coverage."""
    obs = Observation()
    for rec in records:
        for what in rec.get("unread") or []:
            obs.unread.setdefault(what, []).append(rec["id"])
        for what in rec.get("partial") or []:
            obs.partial.setdefault(what, []).append(rec["id"])
        if rec["status"] == "error":
            continue
        tool = rec["tool"]
        # Only a tool that read something has examined anything: a ``no_data`` call must not
        # count as the absence of what it would have found (absence of evidence is not health).
        if rec["status"] == "ok":
            obs.ran.add(tool)
        cov = obs.covered.setdefault(tool, set())
        cov.update(rec.get("covered") or [])
        for raw in rec.get("signals") or []:
            sig = raw if isinstance(raw, Signal) else Signal.model_validate(raw)
            obs.signals.append((tool, sig))
            obs.evidence_of.setdefault(f"{sig.name}@{sig.component}", []).append(rec["id"])
    return obs


class Hypothesis(BaseModel):
    """A (root cause, component) pair and where belief in it stands."""

    root_cause: str
    component: str | None
    kind: str
    score: float = Field(description="Log-odds.")
    probability: float = 0.0
    support: list[str] = Field(default_factory=list, description="Signal keys found for it.")
    confirmed: bool = False
    impact_shown: bool = False
    required_met: bool = Field(
        False, description="The confirmation rule's required signals are present (the fault exists)."
    )
    unexplained: list[str] = Field(
        default_factory=list,
        description="Other faults the evidence shows (root cause@component) that this hypothesis does not explain "
        "and no test has ruled out; while any remain, the verdict cannot be confirmed.",
    )


def _matches(test: Test, sig: Signal, component: str | None) -> bool:
    if test.match == "any":
        return True
    if test.match == "job":
        return sig.kind == "job"
    if component is None:
        return False
    if test.match == "host":
        return host_of(sig.component) == host_of(component)
    if test.match == "host_shared":
        return host_of(sig.component) == host_of(component) and sig.component != component
    return sig.component == component


def _covered(test: Test, obs: Observation, component: str | None) -> bool:
    cov = obs.covered.get(test.tool, set())
    if test.match in ("job", "any") or component is None:
        return test.tool in obs.ran
    if test.match in ("host", "host_shared"):
        return host_of(component) in {host_of(c) for c in cov}
    return component in cov


def score(rc: RootCauseSpec, component: str | None, obs: Observation) -> Hypothesis:
    logit = math.log(rc.prior / (1.0 - rc.prior))
    support: list[str] = []
    present: set[str] = set()
    for test in rc.tests:
        found = [
            s
            for tool, s in obs.signals
            if tool == test.tool and s.name == test.signal and _matches(test, s, component)
        ]
        if found:
            logit += test.weight
            if test.weight > 0:
                support.extend(f"{s.name}@{s.component}" for s in found)
            present.add(test.signal)
        elif _covered(test, obs, component) and not (
            test.absent_void
            and component is not None
            and any(s.component == component and s.name in test.absent_void for _, s in obs.signals)
        ):
            logit += test.absent
    # Confirmation looks at every tool: the same fact seen by another tool still counts.
    names_on = {s.name for _, s in obs.signals if component is not None and s.component == component}
    names_on |= {s.name for _, s in obs.signals if s.kind == "job"}
    names_on |= present
    required = all(any(n in names_on for n in group) for group in rc.confirm.require)
    # The symptom may show on the part's host (its ranks straggle together): a tie, not a guess.
    tied = names_on | {
        s.name
        for _, s in obs.signals
        if component is not None and s.kind == "host" and s.component == host_of(component)
    }
    impact = all(any(n in tied for n in group) for group in rc.confirm.impact)
    kind = rc.kinds[0] if rc.kinds else "none"
    if component is not None and component != "job" and "/" not in component and "host" in rc.kinds:
        kind = "host"
    required = required and bool(rc.confirm.require)
    # Confirmed needs the fault (require) and its tie to the symptom (impact): a real fault that
    # nothing ties to the job's trouble stays probable.
    return Hypothesis(
        root_cause=rc.id,
        component=component,
        kind=kind,
        score=logit,
        support=sorted(set(support)),
        confirmed=required and impact,
        impact_shown=impact,
        required_met=required,
    )


def candidates(graph: FailureGraph, obs: Observation) -> list[tuple[str, str | None]]:
    """Hypotheses worth scoring: every component where a supporting signal of the right kind was found."""
    out: set[tuple[str, str | None]] = set()
    for rc in graph.root_causes.values():
        if "none" in rc.kinds:
            out.add((rc.id, None))
            continue
        if "job" in rc.kinds:
            out.add((rc.id, "job"))
            continue
        positive = {(t.tool, t.signal, t.match) for t in rc.tests if t.weight > 0}
        for tool, sig in obs.signals:
            for t_tool, t_sig, match in positive:
                if tool != t_tool or sig.name != t_sig:
                    continue
                if sig.kind in rc.kinds:
                    out.add((rc.id, sig.component))
                elif match == "host" and "host" in rc.kinds:
                    out.add((rc.id, host_of(sig.component)))
    return sorted(out, key=lambda x: (x[0], x[1] or ""))


def beliefs(graph: FailureGraph, obs: Observation) -> list[Hypothesis]:
    """Every candidate hypothesis with its probability, best first."""
    hyps = [score(graph.root_causes[rc], comp, obs) for rc, comp in candidates(graph, obs)]
    top = max(h.score for h in hyps)
    z = sum(math.exp(h.score - top) for h in hyps)
    for h in hyps:
        h.probability = math.exp(h.score - top) / z
    hyps.sort(key=lambda h: (-h.score, h.root_cause, h.component or ""))
    if hyps and hyps[0].root_cause != "healthy":
        hyps[0].unexplained = unexplained(graph, hyps[0], hyps[1:])
        if hyps[0].unexplained:
            hyps[0].confirmed = False
    return hyps


def unexplained(graph: FailureGraph, top: Hypothesis, others: Iterable[Hypothesis]) -> list[str]:
    """Faults shown by the evidence that ``top`` does not explain and that nothing rules out.

    Another hypothesis counts when its own confirmation rule is met (the evidence shows that fault
    in the window) on a different part, its supporting signals are not all ``top``'s own, and it is
    not ruled out: a fault with an impact rule is ruled out when no tie to the symptom was found; a
    fault without one (an XID burst, say) is never ruled out by silence. Two faults in one incident
    leave the verdict ``probable``, which is what an expert would say until the second is explained.
    """
    out: list[str] = []
    mine = set(top.support)
    for h in others:
        if h.root_cause == "healthy" or not h.required_met or h.component == top.component:
            continue
        if top.component and h.component and h.component.startswith(top.component + "/"):
            continue  # a part inside the named one (a GPU of the named host): the verdict covers it
        if set(h.support) <= mine:
            continue
        if graph.root_causes[h.root_cause].confirm.impact and not h.impact_shown:
            continue
        out.append(f"{h.root_cause}@{h.component}")
    return out
