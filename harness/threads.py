"""The investigations a checkpointer holds: one summary per thread, newest first.

Read from the latest checkpoint of each thread, so listing needs neither the bundles nor the
planner. A thread is ``waiting`` when its report has proposals pending a decision at the approval
gate, ``unfinished`` when it stopped before a report (resume it), ``done`` otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from forensic.times import parse_time


class ThreadSummary(BaseModel):
    """One investigation, as ``forensic list`` shows it."""

    thread: str = Field(description="Thread id.")
    incident: str = Field(description="Incident id.")
    bundle: str = Field(description="Bundle folder the thread investigates.")
    state: Literal["waiting", "unfinished", "done"] = Field(description="Where the thread stands.")
    status: str | None = Field(None, description="Report status, once there is a report.")
    verdict: str | None = Field(None, description="root_cause[ on component], once there is a report.")
    pending: int = Field(0, description="Proposals waiting for a decision.")
    title: str = Field("", description="The incident's title, once there is a report.")
    updated: datetime = Field(description="Time of the latest checkpoint (UTC).")


def _thread_ids(saver: Any) -> list[str]:
    conn = getattr(saver, "conn", None)
    if conn is not None:  # SqliteSaver: one cheap query instead of decoding every checkpoint
        return [row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    seen: list[str] = []
    for tup in saver.list(None):
        tid = tup.config["configurable"]["thread_id"]
        if tid not in seen:
            seen.append(tid)
    return seen


def latest_values(saver: Any, thread: str) -> tuple[dict[str, Any], datetime] | None:
    """The state and time of a thread's latest checkpoint, or None when there is none."""
    tup = saver.get_tuple({"configurable": {"thread_id": thread}})
    if tup is None:
        return None
    ts = tup.checkpoint.get("ts")
    t = parse_time(ts)
    when = datetime.fromtimestamp(t, UTC) if t is not None else datetime.now(UTC)
    return dict(tup.checkpoint.get("channel_values") or {}), when


def thread_playbooks(thread: str, values: dict[str, Any]):
    """The failure graph a thread was investigated with, when that was another playbook folder
    (None: the shipped one, or a thread saved before threads recorded it). A folder that is gone or
    no longer loads is a PlaybookError that names the thread."""
    from pathlib import Path

    from forensic.harness.failure_graph import load_failure_graph
    from forensic.sandbox import PlaybookError

    folder = (values.get("playbooks") or {}).get("folder")
    if not folder:
        return None
    where = f"thread {thread!r} was investigated with the playbooks in {folder}"
    if not Path(folder).is_dir():
        raise PlaybookError(f"{where}, which is gone; pass --playbooks with the same playbooks")
    try:
        return load_failure_graph(folder)
    except PlaybookError as exc:
        raise PlaybookError(f"{where}, which cannot be loaded now: {exc}") from None


def summarize(thread: str, values: dict[str, Any], when: datetime) -> ThreadSummary:
    report = values.get("report")
    pending = 0
    status = verdict = None
    if report:
        pending = sum(1 for p in report.get("proposals") or [] if p.get("status") == "pending_approval")
        status = report.get("status")
        v = report.get("verdict") or {}
        verdict = (v.get("root_cause") or "?") + (f" on {v['component']}" if v.get("component") else "")
        if status == "inconclusive":
            lead = (report.get("leading") or [None])[0]
            verdict = f"leading {lead['root_cause']}" if lead else "nothing supported"
    state = (
        "unfinished" if not report else ("waiting" if pending and values.get("await_approval") else "done")
    )
    return ThreadSummary(
        thread=thread,
        incident=values.get("incident_id") or "?",
        bundle=values.get("bundle_path") or "",
        state=state,
        status=status,
        verdict=verdict,
        pending=pending,
        updated=when,
        title=str((report or {}).get("title") or ""),
    )


def list_threads(saver: Any) -> list[ThreadSummary]:
    """Every thread the checkpointer holds, newest first."""
    out = []
    for tid in _thread_ids(saver):
        got = latest_values(saver, tid)
        if got is not None:
            out.append(summarize(tid, *got))
    return sorted(out, key=lambda t: t.updated, reverse=True)


def age(when: datetime, now: datetime | None = None) -> str:
    """How long ago, in the largest unit that is at least one: 42s, 5m, 3h, 2d."""
    secs = max(0.0, ((now or datetime.now(UTC)) - when).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit}"
    return f"{int(secs)}s"
