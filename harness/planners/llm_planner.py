"""A planner driven by a model on any OpenAI-compatible endpoint, inside the same guardrails.

The model proposes hypotheses, the next test and claims, as typed JSON. It can do nothing else:

- every tool call is checked before it runs (the tool exists, its arguments validate against the
  tool's input model, a named host is in the bundle); an invalid call is still handed to the
  harness, which records it as an ``error`` evidence record and counts it against the tool-call
  budget (a model must not probe for free), and the model is told what was wrong next turn;
- its claims are checked by the harness like any finding, and dropped when a citation fails;
- the verdict is the failure graph's, computed from the evidence: the model only chooses tests,
  and when it stops, the graph planner still runs any test it finds informative, so a model
  talked into stopping early (by a hostile log line, say) cannot starve the verdict of evidence;
- before each model call the prompt's token bound plus ``max_tokens`` must fit the token budget,
  and the worst-case cost the cost budget; what is charged is the usage the server reports.

When the model fails (endpoint errors after retries, timeouts, malformed output twice in a row,
asking again for a call that was refused, a budget too small for another call), the graph planner takes over for the rest of the run and a
note says why, so the report still has the graph planner's verdict.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from forensic.harness.llm.client import Allowance, ModelClient
from forensic.harness.llm.prompt import CauseInfo, ToolInfo, case_data, system_prompt, user_prompt
from forensic.harness.llm.reply import (
    ModelReply,
    ReplyError,
    clean_text,
    inert_args,
    parse_reply,
    reply_schema,
)
from forensic.harness.planners.base import Decision, PlannerView, Stop, ToolCall, call_key, register_planner
from forensic.harness.planners.graph_planner import GraphPlanner
from forensic.sandbox.errors import ModelError, ToolArgumentError
from forensic.tools import all_tools

from forensic.settings import get_settings

#: Completion tokens asked for when the budget allows (a reply is a few hundred).
DEFAULT_MAX_TOKENS = 1024
#: Fewer completion tokens than this cannot hold a reply: fall back instead of calling.
MIN_COMPLETION_TOKENS = 192
#: Case data in the prompt, in characters (= the token bound it adds); older evidence shrinks first.
DEFAULT_MAX_DATA_CHARS = 12_000
#: Working time kept back from a model call, so the harness' own steps still fit the budget.
WALL_MARGIN_S = 0.5
#: A model call needs at least this much working time to be worth starting.
MIN_CALL_S = 1.0
#: Calls in a row that were invalid or repeated before the model is given up on.
MAX_NO_PROGRESS = 3
#: Times the model may ask again for a call that was refused before it is given up on (the harness
#: answers such a call from the refusal without running it).
MAX_REFUSED_REPEATS = 2
#: Claims kept (the newest); each becomes a finding if its citations check out.
MAX_CLAIMS = 8
#: Notes about causes the model suggests outside the playbooks.
MAX_OFF_VOCABULARY_NOTES = 3


#: What a free-text cause looks like: a few words, not markup or a template placeholder.
_PHRASE = re.compile(r"[\w][\w .,/()'-]{2,79}")


class _GiveUp(Exception):
    """The model cannot be used for the rest of the run; the message says why."""


def _quote(value: Any, limit: int = 80) -> str:
    """A model-supplied value echoed back to it: JSON-quoted ASCII, short."""
    return json.dumps(clean_text(str(value), limit), ensure_ascii=True)


@register_planner
class LLMPlanner:
    """Model-driven planner; falls back to :class:`GraphPlanner` when the model fails."""

    name = "llm"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        client: ModelClient | None = None,
        max_tokens: int | None = None,
        max_data_chars: int | None = None,
        timeout_s: float | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        env = get_settings()
        self.client = client or ModelClient(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout_s=timeout_s or env.llm_timeout_s or 60.0,
        )
        self.max_tokens = int(max_tokens or env.llm_max_tokens or DEFAULT_MAX_TOKENS)
        self.max_data_chars = int(max_data_chars or env.llm_max_data_chars or DEFAULT_MAX_DATA_CHARS)
        self._clock = clock
        self._graph = GraphPlanner()
        self._fell_back: str | None = None
        self._handed_over = False
        self._notes: list[str] = []
        self._pending = {"llm_tokens": 0, "cost_usd": 0.0}
        self._claims: dict[str, dict[str, Any]] = {}
        self._hypotheses: list[dict[str, Any]] = []
        self._off_vocabulary: set[str] = set()
        self._feedback: list[str] = []
        self._no_progress = 0
        self._refused_repeats = 0
        self._turn = 0
        self._system: str | None = None
        self._schema: dict[str, Any] | None = None
        if not self.client.priced:
            self._notes.append(
                f"no price for model {self.client.model!r} in harness/llm/prices.toml: its calls are counted as 0 USD"
            )

    # -- the Planner protocol and the harness' optional hooks -------------------------------
    def decide(self, view: PlannerView) -> Decision:
        if self._fell_back is not None or self._handed_over:
            return self._graph.decide(view)
        if view.budget_left.get("tool_calls", 1.0) < 1:
            # No tool call could follow a model call: let the harness end the run as it would.
            return self._graph.decide(view)
        started = self._clock()
        try:
            reply = self._ask(view, started)
        except _GiveUp as exc:
            return self._fall_back(str(exc), view)
        self._absorb(reply, view)
        action = reply.action
        if action.kind == "stop":
            return self._model_stops(clean_text(action.reason, 200), view)
        call = ToolCall(
            tool=clean_text(action.tool, 64),
            args=inert_args(action.args),
            reason=clean_text(action.reason, 300),
        )
        problem, clean_args = self._check(call, view)
        refusal = next((r for r in view.refused if r.key == call_key(call.tool, clean_args)), None)
        if refusal is not None:
            self._refused_repeats += 1
            if self._refused_repeats >= MAX_REFUSED_REPEATS:
                return self._fall_back(
                    f"the model asked {self._refused_repeats} times again for a call that was refused "
                    f"({refusal.evidence}: {clean_text(refusal.reason, 200)})",
                    view,
                )
            problem = f"{call.tool} with these arguments was refused ({refusal.evidence}) and is not run again; choose another test"
        if problem is None:
            self._no_progress = 0
            return call.model_copy(update={"args": clean_args})
        self._feedback.append(problem)
        self._no_progress += 1
        if self._no_progress >= MAX_NO_PROGRESS:
            # This call still goes to the harness (and is counted); the graph planner takes the next.
            self._fell_back = f"the model made {MAX_NO_PROGRESS} calls in a row that were invalid or repeated"
            self._notes.append(f"llm planner fell back to the graph planner: {self._fell_back}")
        return call.model_copy(update={"args": clean_args})

    def drain_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def drain_usage(self) -> dict[str, float]:
        """Tokens and dollars charged since the last drain."""
        usage = {"llm_tokens": int(self._pending["llm_tokens"]), "cost_usd": float(self._pending["cost_usd"])}
        self._pending = {"llm_tokens": 0, "cost_usd": 0.0}
        return usage

    def claims(self) -> list[dict[str, Any]]:
        """What the model asserted, with its citations (the harness checks them)."""
        return [dict(c) for c in self._claims.values()]

    def hypotheses(self) -> list[dict[str, Any]]:
        """The model's latest hypotheses (advisory; the verdict is the failure graph's)."""
        return [dict(h) for h in self._hypotheses]

    def dump_state(self) -> dict[str, Any]:
        """What must survive a restart of the process, as JSON (the harness checkpoints it)."""
        return {
            "fell_back": self._fell_back,
            "handed_over": self._handed_over,
            "claims": self._claims,
            "hypotheses": self._hypotheses,
            "off_vocabulary": sorted(self._off_vocabulary),
            "feedback": self._feedback,
            "no_progress": self._no_progress,
            "refused_repeats": self._refused_repeats,
            "turn": self._turn,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from a checkpointed :meth:`dump_state`."""
        self._fell_back = state.get("fell_back")
        self._handed_over = bool(state.get("handed_over"))
        self._claims = dict(state.get("claims") or {})
        self._hypotheses = list(state.get("hypotheses") or [])
        self._off_vocabulary = set(state.get("off_vocabulary") or [])
        self._feedback = list(state.get("feedback") or [])
        self._no_progress = int(state.get("no_progress") or 0)
        self._refused_repeats = int(state.get("refused_repeats") or 0)
        self._turn = int(state.get("turn") or 0)

    @property
    def fallback_reason(self) -> str | None:
        """Why the graph planner took over, or None while the model plans."""
        return self._fell_back

    # -- talking to the model ---------------------------------------------------------------
    def _ask(self, view: PlannerView, started: float) -> ModelReply:
        """The model's next reply; a malformed one is sent back once with what was wrong."""
        for attempt in range(2):
            self._turn += 1
            messages = self._messages(view)
            completion = self._call(messages, view, started)
            try:
                reply = parse_reply(completion.text, completion.finish_reason)
            except ReplyError as exc:
                # The message may quote the model (a field name it made up): keep it short and plain.
                problem = clean_text(str(exc), 240)
                self._feedback.append(f"{problem}. Reply with exactly one JSON object in the format given.")
                if attempt == 1:
                    raise _GiveUp(f"the model's output was malformed twice in a row ({problem})") from None
                continue
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _call(self, messages: list[dict[str, str]], view: PlannerView, started: float) -> Any:
        """One model call that fits every budget, or _GiveUp."""
        tokens_left = int(view.budget_left.get("llm_tokens", 0.0)) - int(self._pending["llm_tokens"])
        # A hair below what is left, so float rounding in the harness' sums cannot tip it over.
        cost_left = float(view.budget_left.get("cost_usd", 0.0)) - float(self._pending["cost_usd"]) - 1e-9
        wall_left = float(view.budget_left.get("wall_s", 0.0)) - (self._clock() - started) - WALL_MARGIN_S
        bound = self.client.prompt_bound(messages, self._schema)
        max_tokens = min(self.max_tokens, tokens_left - bound)
        price = self.client.price
        prompt_cost = price.cost(bound, 0)
        if price.output > 0:
            max_tokens = min(max_tokens, int((cost_left - prompt_cost) * 1_000_000 / price.output))
        if max_tokens < MIN_COMPLETION_TOKENS or prompt_cost > cost_left:
            raise _GiveUp(
                f"the budget left ({max(0, tokens_left)} tokens, {max(0.0, cost_left):.4f} USD) is too small for "
                f"another model call (prompt up to {bound} tokens plus at least {MIN_COMPLETION_TOKENS} for the reply)"
            )
        if wall_left < MIN_CALL_S:
            raise _GiveUp(f"too little working time left for a model call ({max(0.0, wall_left):.1f} s)")
        before = self.client.tally.model_copy()
        try:
            completion = self.client.complete(
                messages,
                max_tokens=max_tokens,
                schema=self._schema,
                within_s=wall_left,
                allowance=Allowance(tokens=max(0, tokens_left), cost_usd=max(0.0, cost_left)),
            )
        except ModelError as exc:
            raise _GiveUp(f"model call failed: {clean_text(str(exc), 300)}") from None
        finally:
            self._pending["llm_tokens"] += self.client.tally.tokens - before.tokens
            self._pending["cost_usd"] += self.client.tally.cost_usd - before.cost_usd
        bound_now = self.client.prompt_bound(messages, self._schema)
        if completion.usage.prompt_tokens > bound_now or completion.usage.completion_tokens > max_tokens:
            # A server cannot count more than this: its accounting, and so our budget, cannot be trusted.
            raise _GiveUp(
                f"the endpoint reported {completion.usage.prompt_tokens}+{completion.usage.completion_tokens} tokens "
                f"for a call bounded at {bound_now}+{max_tokens}"
            )
        return completion

    def _messages(self, view: PlannerView) -> list[dict[str, str]]:
        if self._system is None:
            tools = all_tools()
            infos = [
                ToolInfo(name=n, description=t.description, params=t.schema()["parameters"], cost=t.cost)
                for n, t in sorted(tools.items())
            ]
            causes = [
                CauseInfo(id=rc.id, title=rc.title, kinds=[k for k in rc.kinds if k != "none"])
                for rc in view.graph.root_causes.values()
            ]
            self._system = system_prompt(infos, causes)
            self._schema = reply_schema({i.name: i.params for i in infos})
        beliefs = [
            {
                "root_cause": h.root_cause,
                "component": h.component,
                "p": round(h.probability, 3),
                "confirmed": h.confirmed,
            }
            for h in view.hypotheses[:5]
        ]
        data = case_data(
            incident=view.incident,
            hosts=view.hosts,
            beliefs=beliefs,
            records=view.records,
            previous=self._hypotheses,
            max_chars=self.max_data_chars,
        )
        feedback, self._feedback = self._feedback, []
        user = user_prompt(
            step=self._turn,
            tool_calls_left=int(view.budget_left.get("tool_calls", 0)),
            data=data,
            feedback=feedback,
        )
        return [{"role": "system", "content": self._system}, {"role": "user", "content": user}]

    # -- what the model said ------------------------------------------------------------------
    def _check(self, call: ToolCall, view: PlannerView) -> tuple[str | None, dict[str, Any]]:
        """(what is wrong with a call, in words the model can act on, or None; its validated args)."""
        tools = all_tools()
        tool = tools.get(call.tool)
        if tool is None:
            return (
                f"tool {_quote(call.tool)} does not exist; the tools are: {', '.join(sorted(tools))}",
                call.args,
            )
        try:
            args = tool.validate(call.args)
        except ToolArgumentError as exc:
            return f"invalid arguments for {call.tool}: {clean_text(str(exc), 300)}", call.args
        clean = args.model_dump(exclude_none=True)
        host = clean.get("host")
        if host is not None and host not in view.hosts:
            return f"{call.tool}: unknown host {_quote(host)}; name a host from the data or omit host", clean
        done = set(view.executed)
        if (call.tool, host) in done or (call.tool, None) in done:
            return (
                f"{call.tool}{' on ' + host if host else ''} already ran; its result is in the evidence",
                clean,
            )
        return None, clean

    def _absorb(self, reply: ModelReply, view: PlannerView) -> None:
        self._hypotheses = [
            {
                "root_cause": clean_text(h.root_cause, 80),
                "component": clean_text(h.component, 200) if h.component else None,
                "why": clean_text(h.why, 300),
            }
            for h in reply.hypotheses[:3]
        ]
        for h in self._hypotheses:
            rc = h["root_cause"]
            if rc in view.graph.root_causes or rc in self._off_vocabulary or not _PHRASE.fullmatch(rc):
                continue  # a cause is a short phrase: not a template placeholder a small model copied
            if len(self._off_vocabulary) < MAX_OFF_VOCABULARY_NOTES:
                self._off_vocabulary.add(rc)
                where = f" on {h['component']}" if h["component"] else ""
                self._notes.append(
                    f"the model suggests a cause outside the playbooks: {rc!r}{where} (not a verdict; for a person to judge)"
                )
        for c in reply.claims:
            text = clean_text(c.claim, 300)
            if not text:
                continue
            self._claims.pop(text, None)
            self._claims[text] = {"claim": text, "evidence": list(dict.fromkeys(c.evidence))}
        while len(self._claims) > MAX_CLAIMS:
            self._claims.pop(next(iter(self._claims)))

    def _model_stops(self, reason: str, view: PlannerView) -> Decision:
        graph_next = self._graph.decide(view)
        if isinstance(graph_next, Stop):
            return Stop(reason=f"the model stopped ({reason}) and no informative test is left")
        self._handed_over = True
        self._notes.append(
            "the model stopped; the graph planner ran the tests it still found informative before concluding"
        )
        return graph_next

    def _fall_back(self, why: str, view: PlannerView) -> Decision:
        self._fell_back = why
        self._notes.append(f"llm planner fell back to the graph planner: {why}")
        return self._graph.decide(view)
