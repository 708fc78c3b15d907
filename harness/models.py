"""The report contract (``forensic.report/v1``, see spec/report.md) as pydantic models."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from forensic.tools.base import Signal, Status
from pydantic import BaseModel, Field, StringConstraints, ValidationInfo, field_validator

REPORT_SCHEMA = "forensic.report/v1"

#: A root cause id. The vocabulary is the loaded failure graph (``playbooks/root_causes/*.toml``),
#: not a list here: a new failure class is a new playbook file. Where a graph is at hand, validate
#: with ``context={"root_causes": graph.root_causes}`` and an id it does not define is refused.
RootCause = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
ReportStatus = Literal["confirmed", "probable", "inconclusive", "healthy"]
Risk = Literal["low", "medium", "high"]
ProposalStatus = Literal["pending_approval", "approved", "rejected", "executed", "failed"]


class EvidenceRecord(BaseModel):
    """One tool call, immutable once appended to the ledger."""

    id: str = Field(description="ev-N, in call order.")
    tool: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Validated arguments.")
    source: str = Field("", description="Main bundle-relative path read (first of sources).")
    sources: list[str] = Field(default_factory=list, description="Every bundle-relative path read.")
    status: Status = Field(description="ok, no_data or error.")
    summary: str = Field(description="What the call found, in one or two sentences.")
    signals: list[Signal] = Field(default_factory=list, description="Component-scoped findings.")
    covered: list[str] = Field(default_factory=list, description="Components the call examined.")
    data: dict[str, Any] = Field(default_factory=dict, description="Structured data.")
    unread: list[str] = Field(
        default_factory=list,
        description="Evidence the call could not read ('what: why'): never absence, and no healthy verdict rests on it.",
    )
    partial: list[str] = Field(
        default_factory=list,
        description="Evidence the call read only in part ('what: what was lost'); the readable part was used.",
    )
    omitted: dict[str, int] = Field(
        default_factory=dict,
        description="In a report: entries left out per field (covered, sources, signals, data.<key>) to bound its "
        "size; the checkpoint keeps the whole record (forensic evidence THREAD ev-N).",
    )


class Verdict(BaseModel):
    """The root cause named and how sure the investigator is."""

    root_cause: RootCause = Field(description="Root cause id from the loaded failure graph's vocabulary.")
    component: str | None = Field(description="Faulty component; null for healthy.")
    confidence: float = Field(ge=0.0, le=1.0, description="Posterior belief in this hypothesis.")

    @field_validator("root_cause")
    @classmethod
    def _in_vocabulary(cls, value: str, info: ValidationInfo) -> str:
        known = (info.context or {}).get("root_causes")
        if known is not None and value not in known:
            raise ValueError(
                f"unknown root cause {value!r}: the loaded playbooks define {', '.join(sorted(known))}"
            )
        return value


class Finding(BaseModel):
    """A claim and the evidence that supports it."""

    claim: str = Field(description="One sentence with the numbers.")
    evidence: list[str] = Field(description="Evidence ids cited.")
    subject: str | None = Field(
        None, description="Component the claim is about (the verdict's when unset; 'job' for job-wide facts)."
    )
    author: Literal["harness", "model"] = Field(
        "harness",
        description="Who wrote the claim: the harness from a signal, or a model (citations checked all the same).",
    )
    verified: bool = Field(True, description="Whether every citation checked out.")
    problem: str | None = Field(None, description="Why a citation failed, when it did.")


class Proposal(BaseModel):
    """A remediation a person must approve before anything happens."""

    id: str = Field(description="rp-N.")
    action: str = Field(description="Typed action: drain_node, cordon_node, reset_gpu, ...")
    target: str = Field(description="Host, device or port the action applies to.")
    reason: str = Field(description="Why, in one sentence.")
    risk: Risk = Field(description="Risk of the action.")
    blast_radius: str = Field("", description="What else the action affects.")
    rollback: str = Field("", description="How to undo it.")
    status: ProposalStatus = Field("pending_approval", description="Where it stands.")
    evidence: list[str] = Field(default_factory=list, description="Evidence ids behind it.")
    content_hash: str = Field("", description="sha256 of the proposal's content; approval binds to it.")


class BudgetReport(BaseModel):
    """Budget usage and limits."""

    tool_calls: int = 0
    tool_calls_limit: int = 40
    llm_tokens: int = 0
    llm_tokens_limit: int = 200_000
    cost_usd: float = 0.0
    cost_usd_limit: float = 1.0
    wall_s: float = 0.0
    wall_s_limit: float = 300.0


class OutsideWindow(BaseModel):
    """Evidence whose timestamps all lie outside the investigation's window."""

    what: str = Field(description="What was read, e.g. job/steps.csv.")
    first: float | None = Field(None, description="Its first timestamp, unix seconds.")
    last: float | None = Field(None, description="Its last timestamp, unix seconds.")
    stale: bool = Field(True, description="Too far from the window to be weighed (else read, and said).")
    detail: str = Field("", description="In words, and how it was weighed.")


class EvidenceOrigin(BaseModel):
    """Where the evidence of a report came from."""

    origin: str = Field(
        description="live (agents and Prometheus), bundle, or archive (a bundle as one file)."
    )
    where: str = Field("", description="The bundle or archive path, or the live fleet's locator.")
    window: dict[str, float | None] = Field(default_factory=dict, description="start and end, unix seconds.")
    hosts_read: list[str] = Field(default_factory=list, description="Hosts whose evidence some tool read.")
    hosts_unreachable: list[str] = Field(
        default_factory=list, description="Hosts that could not be read (why: notes)."
    )
    outside_window: list[OutsideWindow] = Field(
        default_factory=list, description="Evidence outside the window, not weighed."
    )
    archive: str | None = Field(None, description="Where what a live run read is kept as a bundle archive.")


class Report(BaseModel):
    """What ``forensic investigate --json`` prints."""

    schema_: str = Field(REPORT_SCHEMA, alias="schema", serialization_alias="schema")
    incident: str = Field(description="Incident id.")
    status: ReportStatus = Field(description="confirmed, probable, inconclusive or healthy.")
    verdict: Verdict
    alternatives: list[Verdict] = Field(default_factory=list, description="Next-best hypotheses.")
    chain: list[str] = Field(default_factory=list, description="symptom -> mechanism -> root cause.")
    findings: list[Finding] = Field(default_factory=list)
    evidence: list[EvidenceRecord] = Field(default_factory=list)
    proposals: list[Proposal] = Field(default_factory=list)
    budget: BudgetReport = Field(default_factory=BudgetReport)
    planner: str = Field("graph", description="Planner that produced the verdict.")
    notes: list[str] = Field(
        default_factory=list, description="What is missing, fallbacks, dropped findings."
    )
    title: str = Field("", description="Incident title.")
    leading: list[Verdict] = Field(
        default_factory=list,
        description="Inconclusive only: the leading fault hypotheses (never healthy), best first.",
    )
    untested: list[str] = Field(
        default_factory=list,
        description="Inconclusive only: the leading hypotheses' tests not run yet, as tool or tool@host.",
    )
    unread: list[str] = Field(
        default_factory=list,
        description="Evidence that could not be read (a host refused, a file unreadable, a parser error), each with the "
        "evidence ids that met it; any makes a healthy verdict inconclusive. Entries saying 'partly read' were read "
        "in part (a compressed file cut short): they name what was lost, and withhold healthy unless complete "
        "per-rank step telemetry clears every rank.",
    )
    status_reason: str = Field(
        "",
        description="Why the status is what it is, in one sentence. Status says whether the playbook's confirmation "
        "rule is met; confidence is the verdict's probability against the other hypotheses. Where the two "
        "could read as contradicting (confirmed below 0.5, probable at 0.8 or more) this says why.",
    )
    evidence_source: EvidenceOrigin | None = Field(
        None, description="Where the evidence came from (live or bundle, window, hosts)."
    )

    model_config = {"populate_by_name": True}

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
