"""Questions to intents, deterministically: no model needed to hold a useful conversation.

A question maps to one :class:`Intent` over the failure graph and the incident's own names:

=============  =====================================================  ================================
kind           asked as                                               answered from
=============  =====================================================  ================================
``why``        why is it slow / what is wrong / root cause            the verdict, chain and findings
``slowest``    which rank/host/GPU is slowest / the straggler         job_steps evidence
``about``      what about gpu-b12 / is rank 27 ok / that host          signals on that part (tools run
                                                                      on it when nothing covered it)
``why_not``    why not the network / why not thermal / why not X      tests of that cause, and what
                                                                      refuted them
``changed``    what changed at 02:10                                  onsets and events near that time
``whether``    was there a cooling failure / is it the network?       the verdict if it is that cause,
                                                                      else that cause's tests and the
                                                                      readings they rest on
``todo``       what should we do / how do we fix it                    the proposals
``show``       show ev-4 / show rank 27's compute time                 one record, one rank's series
``help``       anything else                                          what can be asked
=============  =====================================================  ================================

Names are matched against the incident's own hosts, GPUs, NICs, switches and ranks, never guessed:
an unknown name is reported as unknown, not mapped to the nearest one. The words for causes
("network", "thermal", "ecc") come from the playbooks (each root cause's ``words``), so a new
root cause is one TOML file for chat too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

Kind = Literal["why", "slowest", "about", "why_not", "whether", "changed", "todo", "show", "help"]

_WHY = re.compile(
    r"\b(why|what(?:'s| is)? (?:wrong|happen\w*|going on)|root cause|slow(?:ed|er)? down|diagnos\w*|cause)\b"
)
_SLOWEST = re.compile(r"\b(slowest|straggl\w*|laggard|which (?:rank|host|gpu|node) is slow\w*|who is slow)\b")
_WHY_NOT = re.compile(
    r"\bwhy not\b|\bisn'?t it (?:the )?|\bnot (?:the )?(\w+)\?*$|\bwhat about (?:the )?(?:network|fabric)\b"
)
_CHANGED = re.compile(
    r"\b(?:what )?changed?\b.*?\b(?:at|around|near|after|since)\s+(\d{1,2}:\d{2}(?::\d{2})?)"
)
_TODO = re.compile(r"\b(what (?:should|do|can) (?:we|i) do|fix|remediat\w*|next steps?|what now|action)\b")
_SHOW = re.compile(r"\b(show|plot|print|display|give me|let me see)\b")
_EV = re.compile(r"\bev-(\d{1,6})\b")
_RANK = re.compile(r"\brank\s*#?(\d{1,7})\b")
# A yes-or-no question: "was there a cooling failure?", "is it the network?", "any memory errors?".
_WHETHER = re.compile(r"^(?:was|were|is|are|did|do|does|has|have|had|could|can|any)\b")
_ABOUT = re.compile(r"\b(what about|how about|is|are|check|look at|tell me about|status of|what else)\b")


class Intent(BaseModel):
    """What a question asks, resolved against the incident's names."""

    kind: Kind
    subject: str | None = Field(
        None, description="A component of the incident (host, host/gpuN, host/ibdev, switch) or 'rank N'."
    )
    causes: list[str] = Field(default_factory=list, description="Root causes a why-not question names.")
    time: str | None = Field(None, description="HH:MM[:SS] a what-changed question names.")
    evidence: str | None = Field(None, description="ev-N a show question names.")
    unknown: str | None = Field(None, description="A name the question used that the incident does not have.")


def _said(word: str, q: str) -> bool:
    """``word`` begins a word of ``q`` ("network" in "networking", not in "subnetwork")."""
    return re.search(rf"\b{re.escape(word)}\w*\b", q) is not None


def _causes_named(q: str, causes: Mapping[str, Sequence[str]]) -> list[str]:
    """The root causes ``q`` names, by their own name or by a word people use for them."""
    return [
        rc
        for rc, words in causes.items()
        if rc.replace("_", " ") in q or rc in q or any(_said(word, q) for word in words)
    ]


def _names(text: str) -> list[str]:
    """Tokens that look like component names (host names, host/gpuN, switch ports)."""
    return re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)?", text)


def resolve(token: str, components: dict[str, str]) -> str | None:
    """The component ``token`` names (case-insensitive; a host's short name matches its FQDN)."""
    t = token.strip(".,?!:;'\"").lower()
    if t in components:
        return components[t]
    short = {k.split(".", 1)[0]: v for k, v in components.items() if "/" not in k}
    return short.get(t)


def classify(
    question: str,
    components: dict[str, str],
    causes: Mapping[str, Sequence[str]],
    last_subject: str | None = None,
) -> Intent:
    """The intent of ``question``. ``components`` maps lower-cased names to the incident's components;
    ``causes`` maps each root cause to the words people use for it
    (:meth:`FailureGraph.vocabulary <forensic.harness.failure_graph.FailureGraph.vocabulary>`)."""
    q = " ".join(question.strip().lower().split())
    if not q:
        return Intent(kind="help")
    ev = _EV.search(q)
    rank = _RANK.search(q)
    named = [c for c in (resolve(tok, components) for tok in _names(q)) if c]
    subject = named[0] if named else (f"rank {rank.group(1)}" if rank else None)
    if subject is None and re.search(r"\b(that|this|the same) (host|node|gpu|nic|machine|one)\b", q):
        subject = last_subject

    if re.search(r"\b(approve|reject|execute|drain|cordon)\b", q):
        # A message never decides anything: answer with the proposals and how a person decides.
        return Intent(kind="todo")
    if _SHOW.search(q) and (ev or rank or subject):
        return Intent(kind="show", evidence=f"ev-{ev.group(1)}" if ev else None, subject=subject)
    if re.search(r"\bwhy not\b|\bisn'?t it\b|\brule[sd]? out\b", q):
        wanted = _causes_named(q, causes)
        if wanted or subject:
            return Intent(kind="why_not", causes=wanted, subject=subject)
    if subject is None and _WHETHER.search(q):
        # Through the playbooks' vocabulary: the words people use for a cause, then the causes' names.
        wanted = _causes_named(q, causes)
        if wanted:
            return Intent(kind="whether", causes=wanted)
    changed = _CHANGED.search(q)
    if changed:
        return Intent(kind="changed", time=changed.group(1))
    if _SLOWEST.search(q):
        return Intent(kind="slowest")
    if _TODO.search(q):
        return Intent(kind="todo")
    if subject is not None and (_ABOUT.search(q) or len(q.split()) <= 4):
        return Intent(kind="about", subject=subject)
    if re.search(r"\bwhat else\b", q) and last_subject:
        return Intent(kind="about", subject=last_subject)
    if _WHY.search(q) or re.search(r"\bslow|mfu|throughput|tokens?/s|regress", q):
        return Intent(kind="why")
    unknown = next((tok for tok in _names(q) if re.search(r"\d", tok) and "-" in tok), None)
    if unknown and _ABOUT.search(q):
        return Intent(kind="about", unknown=unknown)
    return Intent(kind="help")
