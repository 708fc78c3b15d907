"""The harness: investigations as LangGraph state graphs, with budgets, citations and approvals."""

from forensic.harness.budget import Limits, Usage
from forensic.harness.failure_graph import FailureGraph, default_graph, load_failure_graph
from forensic.harness.models import EvidenceRecord, Finding, Proposal, Report, Verdict

__all__ = [
    "EvidenceRecord",
    "FailureGraph",
    "Finding",
    "Limits",
    "Proposal",
    "Report",
    "Usage",
    "Verdict",
    "default_graph",
    "load_failure_graph",
]
