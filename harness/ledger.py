"""The evidence ledger: an append-only list of tool-call records, ``ev-1``, ``ev-2``, ..."""

from __future__ import annotations

from typing import Any

from forensic.harness.models import EvidenceRecord
from forensic.tools.base import ToolResult


def make_record(index: int, tool: str, args: dict[str, Any], result: ToolResult) -> EvidenceRecord:
    """The record for the ``index``-th call (1-based): ids follow call order and never change."""
    return EvidenceRecord(
        id=f"ev-{index}",
        tool=tool,
        args=args,
        source=result.source[0] if result.source else "",
        sources=result.source,
        status=result.status,
        summary=result.summary,
        signals=result.signals,
        covered=result.covered,
        data=result.data,
        unread=result.unread,
        partial=result.partial,
    )


def append(records: list[dict[str, Any]], record: EvidenceRecord) -> list[dict[str, Any]]:
    """A new list with ``record`` appended; earlier records are never touched."""
    return [*records, *added(records, record)]


def added(records: list[dict[str, Any]], record: EvidenceRecord) -> list[dict[str, Any]]:
    """The update that appends ``record`` to ``records`` through the graph state's reducer: a list
    of that one record, after the same check as :func:`append`."""
    if any(r["id"] == record.id for r in records):
        raise ValueError(f"evidence id {record.id} already in the ledger")
    return [record.model_dump(mode="json")]


def by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}
