"""The one driver of the investigation graph: start, advance, resume, decide, and the budgets.

Every surface runs the graph of :mod:`forensic.harness.graph` through here, so none of them
re-derives from a checkpoint where a thread stands or what may happen next:

- ``forensic investigate`` and the eval runner **start** a thread (:meth:`Driver.run`), chat and MCP
  through the same call with their own budgets (:func:`budget_left`);
- the service's worker pools **advance** a thread from wherever a checkpoint left it
  (:meth:`Driver.advance`): a new thread starts, an unfinished one continues, a finished one or one
  waiting at the approval gate is left as it is;
- ``forensic investigate --resume`` **resumes** as a person asks (:meth:`Driver.resume`): refused for
  another incident or other playbooks; a thread whose budget ran out continues when the new limits
  leave room in that budget;
- ``forensic approve``, the service's approvals and nothing else **decide** (:meth:`Driver.decide`):
  a person's decisions enter only as the resume value of the approval gate.

Where a thread stands (:meth:`Driver.position`):

``new``
    nothing saved.
``unfinished``
    saved with steps left, including a process killed between a step's writes and its
    checkpoint (no ``next`` but finished tasks: continuing applies those writes and goes on).
``waiting``
    at the approval gate with a report; only :meth:`Driver.decide` moves it on.
``finished``
    ended (concluded, or a budget ran out) with a report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from forensic.harness import approvals
from forensic.harness.budget import Limits, Usage, exhausted
from forensic.sandbox import EvidenceSource, ForensicError

if TYPE_CHECKING:
    from forensic.harness.graph import Investigator

#: Progress callback: (node name, "start" with the node's input state or "end" with its update).
OnStep = Callable[[str, str, dict[str, Any]], None]

Position = Literal["new", "unfinished", "waiting", "finished"]
Outcome = Literal["concluded", "awaiting_approval"]

#: The state's lists that grow by a reducer (:class:`forensic.harness.graph.State`).
APPEND_ONLY = frozenset({"records", "executed", "refused", "notes", "trace", "decisions"})


def budget_left(
    limits: Limits, usage: Usage, *, tool_calls: int | None = None, wall_s: float | None = None
) -> Limits:
    """The limits of a run nested in a session (an MCP session's investigation or conversation):
    what is left of each of the session's budgets, and no more than ``tool_calls`` and ``wall_s``
    when given. The caller checks first that something is left (:func:`exhausted`)."""
    calls = limits.tool_calls - usage.tool_calls
    wall = limits.wall_s - usage.wall_s
    return Limits(
        tool_calls=min(calls, tool_calls) if tool_calls is not None else calls,
        wall_s=min(wall, wall_s) if wall_s is not None else wall,
        llm_tokens=limits.llm_tokens - usage.llm_tokens,
        cost_usd=limits.cost_usd - usage.cost_usd,
    )


class Driver:
    """Drives one :class:`~forensic.harness.graph.Investigator`'s compiled graph."""

    def __init__(self, investigator: Investigator) -> None:
        self.inv = investigator

    # -- where a thread stands ------------------------------------------------------------------
    def snapshot(self, thread_id: str) -> Any:
        return self.inv.app.get_state(self.inv.config(thread_id))

    def values(self, thread_id: str) -> dict[str, Any]:
        """The thread's saved state ({} when nothing is saved)."""
        return dict(self.snapshot(thread_id).values or {})

    @staticmethod
    def _position(snapshot: Any) -> Position:
        if not snapshot.values and not snapshot.next:
            return "new"
        at_gate = "approval_gate" in (snapshot.next or ()) or any(
            t.name == "approval_gate" for t in snapshot.tasks
        )
        if at_gate and snapshot.values.get("report"):
            return "waiting"
        if snapshot.next or snapshot.tasks or not snapshot.values.get("report"):
            return "unfinished"
        return "finished"

    def position(self, thread_id: str) -> Position:
        return self._position(self.snapshot(thread_id))

    def outcome(self, thread_id: str) -> tuple[Outcome, dict[str, Any] | None]:
        """Whether the thread waits for a person or has concluded, and its report."""
        snap = self.snapshot(thread_id)
        status: Outcome = "awaiting_approval" if "approval_gate" in (snap.next or ()) else "concluded"
        return status, snap.values.get("report")

    # -- running ----------------------------------------------------------------------------------
    def _steps(self, inp: Any, cfg: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for ev in self.inv.app.stream(inp, cfg, stream_mode="tasks"):
            if "result" in ev:
                yield ev["name"], "end", ev.get("result") or {}
            else:
                yield ev["name"], "start", ev.get("input") or {}

    def _drive(self, inp: Any, cfg: dict[str, Any], on_step: OnStep | None) -> dict[str, Any]:
        """Run the graph to its next stop; with ``on_step``, report each node as it starts and ends."""
        if on_step is None:
            return self.inv.app.invoke(inp, cfg)
        if self.inv.app.checkpointer is not None:
            for node, phase, data in self._steps(inp, cfg):
                on_step(node, phase, data)
            return self.inv.app.get_state(cfg).values
        # Without a checkpointer there is no saved state to read back: keep the last full state.
        final: dict[str, Any] = {}
        for mode, ev in self.inv.app.stream(inp, cfg, stream_mode=["tasks", "values"]):
            if mode == "values":
                final = ev
            elif "result" in ev:
                on_step(ev["name"], "end", ev.get("result") or {})
            else:
                on_step(ev["name"], "start", ev.get("input") or {})
        return final

    def run(
        self, *, thread_id: str | None = None, await_approval: bool = False, on_step: OnStep | None = None
    ) -> dict[str, Any]:
        """Investigate to the end (or to the approval gate) and return the report dict.

        A thread id that already holds a checkpoint starts afresh: its lists are replaced, not
        appended to, so two investigations never share one ledger."""
        cfg = self.inv.config(thread_id)
        start: dict[str, Any] = dict(self.inv.initial_state(await_approval=await_approval))
        if self.inv.app.checkpointer is not None and self.inv.app.get_state(cfg).values:
            from langgraph.types import Overwrite

            start = {k: Overwrite(v) if k in APPEND_ONLY else v for k, v in start.items()}
            start["trace"] = Overwrite([])
        return self._drive(start, cfg, on_step)["report"]

    def advance(
        self, thread_id: str, *, await_approval: bool = False
    ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Take a thread on from wherever its checkpoint left it, one step at a time: (node, "start",
        input state) and (node, "end", update). A new thread starts; an unfinished one continues; a
        finished one, or one waiting at the approval gate, yields nothing. Closing the iterator
        stops the run after the step in progress; the checkpoint keeps everything before it."""
        cfg = self.inv.config(thread_id)
        where = self._position(self.inv.app.get_state(cfg))
        if where in ("waiting", "finished"):
            return
        start = self.inv.initial_state(await_approval=await_approval) if where == "new" else None
        yield from self._steps(start, cfg)

    def resume(self, thread_id: str, on_step: OnStep | None = None) -> dict[str, Any]:
        """Continue a checkpointed thread from whatever was saved, wherever a kill landed.

        A thread waiting at the approval gate is left waiting: a decision counts only through a
        completed :meth:`decide`, never through a resume (a crashed ``approve`` may have saved its
        value). A thread that ended because a budget ran out continues when this investigator's
        limits leave room in that budget; otherwise the report comes back unchanged with a note that
        says why it did not continue.
        """
        cfg = self.inv.config(thread_id)
        snapshot = self.inv.app.get_state(cfg)
        where = self._position(snapshot)
        if where == "new":
            raise ForensicError(f"no checkpoint for thread {thread_id!r} (nothing was saved; run it again)")
        if snapshot.values.get("bundle_path") and not _same_source(snapshot.values, self.inv.source):
            raise ForensicError(
                f"thread {thread_id!r} investigates {snapshot.values.get('incident_id')!r} at "
                f"{snapshot.values['bundle_path']}, not this bundle: refusing to mix two incidents"
            )
        self.check_playbooks(thread_id, snapshot.values)
        if where == "waiting":
            return snapshot.values["report"]
        if where == "unfinished":
            final = self._drive(None, cfg, on_step)
            if not final.get("report"):
                raise ForensicError(f"thread {thread_id!r} could not be finished from its checkpoint")
            return final["report"]
        values = snapshot.values
        why_not = self._why_not_continue(values)
        if why_not is not None:
            report = dict(values["report"])
            report["notes"] = [*report.get("notes", []), f"not continued: {why_not}"]
            return report
        # Back to the planner with the larger budget: as if the last assessment had just finished.
        self.inv.app.update_state(
            cfg,
            {
                "budget_exhausted": None,
                "stop_reason": None,
                "report": None,
                "pending": None,
                "limits": self.inv.limits.model_dump(),
            },
            as_node="assess",
        )
        return self._drive(None, cfg, on_step)["report"]

    def decide(
        self, thread_id: str, decisions: Sequence[approvals.Decision | dict[str, Any]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Hand a person's decisions to a thread waiting at the approval gate.

        Returns the updated report and the audit entries of these decisions (refusals included).
        """
        from langgraph.types import Command

        cfg = self.inv.config(thread_id)
        snapshot = self.inv.app.get_state(cfg)
        if "approval_gate" not in (snapshot.next or ()):
            raise ForensicError(f"thread {thread_id!r} is not waiting for an approval")
        self.check_playbooks(thread_id, snapshot.values)
        raw = [d.model_dump() if isinstance(d, approvals.Decision) else d for d in decisions]
        final = self.inv.app.invoke(Command(resume=raw), cfg)
        return final["report"], (final.get("decisions") or [])[-len(decisions) :]

    # -- refusals -----------------------------------------------------------------------------
    def check_playbooks(self, thread_id: str, values: dict[str, Any]) -> None:
        """Refuse to go on with a thread under other playbooks than the ones it was investigated with
        (its hypotheses and proposals name their root causes). Threads saved before this was
        recorded are not checked."""
        graph = self.inv.failure_graph
        saved = values.get("playbooks") or {}
        if not saved.get("digest") or saved["digest"] == graph.digest():
            return
        folder = saved.get("folder")
        where = f"the playbooks in {folder}" if folder else "the shipped playbooks"
        how = f"pass --playbooks {folder}" if folder else "leave out --playbooks"
        same_folder = folder == graph.folder
        raise ForensicError(
            f"thread {thread_id!r} was investigated with {where}"
            + (", which have changed since" if same_folder else "")
            + f"; to continue it, {'restore them' if same_folder else how}"
        )

    def _why_not_continue(self, values: dict[str, Any]) -> str | None:
        """None when a finished thread can go on under this investigator's limits, else why not."""
        spent = values.get("budget_exhausted")
        if not spent:
            return f"the investigation had finished ({values.get('stop_reason') or 'concluded'}); a larger budget changes nothing"
        usage = Usage.model_validate(values.get("usage") or {})
        limits = self.inv.limits
        left = exhausted(usage, limits)
        if left is not None:
            used = getattr(usage, left)
            return (
                f"the {left} budget ran out at {used:g} and the new limit {getattr(limits, left):g} leaves nothing more; "
                f"pass a larger --budget-{left.replace('_', '-').replace('llm-', '')}"
            )
        return None


def _same_source(values: dict[str, Any], source: EvidenceSource) -> bool:
    return (
        str(values.get("bundle_path")) == str(source.locator)
        and str(values.get("incident_id", source.incident.id)) == source.incident.id
    )
