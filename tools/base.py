"""What a tool is: typed input, typed result, one evidence record per call, and a registry.

A tool reads evidence through the sandbox only, parses it, and returns *signals*: typed,
component-scoped findings (``pcie_degraded`` on ``gpu-a017/gpu3``) with the numbers behind them.
The planner reasons over signals; the report cites the evidence record that carries them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from forensic.sandbox import (
    HOST_NAME_MAX,
    HOST_NAME_PATTERN,
    Bundle,
    EvidenceSource,
    ForensicError,
    ToolArgumentError,
    open_source,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

Status = Literal["ok", "no_data", "error"]
ComponentKind = Literal["gpu", "nic", "host", "switch", "port", "job"]


class Signal(BaseModel):
    """One finding a tool makes about one component."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Signal name from the failure graph's vocabulary, e.g. pcie_degraded.")
    component: str = Field(
        description="Component it concerns: host, host/gpuN, host/ibdev, switch, switch/port or job."
    )
    kind: ComponentKind = Field(description="What kind of component it is.")
    detail: str = Field("", description="One human sentence with the numbers behind the signal.")
    values: dict[str, float | int | str | bool | None] = Field(
        default_factory=dict, description="The numbers behind the signal, for claims and citation checks."
    )


class ToolResult(BaseModel):
    """What one tool call found."""

    status: Status = Field(description="ok, no_data (nothing to read) or error.")
    summary: str = Field(description="One or two sentences a person can read.")
    source: list[str] = Field(default_factory=list, description="Bundle-relative paths read.")
    signals: list[Signal] = Field(default_factory=list, description="Component-scoped findings.")
    covered: list[str] = Field(
        default_factory=list,
        description="Components the call examined: a signal absent on a covered component is evidence of absence.",
    )
    data: dict[str, Any] = Field(default_factory=dict, description="Structured data behind the summary.")
    unread: list[str] = Field(
        default_factory=list,
        description="Evidence the call could not read, one 'what: why' each (a host refused, a file unreadable, "
        "a parser error). Never absence: a healthy verdict cannot rest on it.",
    )
    partial: list[str] = Field(
        default_factory=list,
        description="Evidence the call read only in part, one 'what: what was lost' each (a compressed file "
        "cut short whose readable part was parsed). What was read counts; what was lost is named.",
    )


class ToolInput(BaseModel):
    """Base for tool inputs: unknown fields are an error, so a model cannot smuggle arguments."""

    model_config = ConfigDict(extra="forbid")


class HostScope(ToolInput):
    """Input for tools that look at one host or at every host of the fleet."""

    host: str | None = Field(
        None,
        description="Host to examine; omit to scan every host of the bundle.",
        max_length=HOST_NAME_MAX,
        pattern=HOST_NAME_PATTERN,
    )


#: Peers a one-host call reads for comparison (:meth:`ToolContext.peers`).
PEER_SAMPLE = 64


class ToolContext:
    """What a tool may use: an evidence source (a bundle, a live fleet) and memoised derived facts."""

    def __init__(self, source: EvidenceSource | Bundle) -> None:
        self.source: EvidenceSource = open_source(source)
        self._memo: dict[str, Any] = {}
        #: Hosts the evidence so far names (host -> what named it): suspects for a sampled sweep.
        self.evidence_hosts: dict[str, str] = {}

    def note_evidence(self, records: list[dict[str, Any]]) -> None:
        """Take the hosts that earlier records' signals name (in ledger order) as suspects.

        The harness calls this before each tool call with the ledger, so a resumed investigation
        picks the same suspects as the uninterrupted one."""
        named: dict[str, str] = {}
        for r in records:
            if r.get("status") != "ok":
                continue
            for s in r.get("signals") or []:
                comp = s.get("component") if isinstance(s, dict) else None
                if not comp or s.get("kind") in ("job", "switch", "port"):
                    continue
                named.setdefault(comp.split("/", 1)[0], f"{s.get('name')} on {comp} ({r.get('id')})")
        self.evidence_hosts = named

    def memo(self, key: str, factory: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    def peers(self, hosts: list[str], k: int | None = None) -> list[str]:
        """``hosts`` plus a sample of the other hosts to compare them with.

        A one-host call judges its host against its peers; reading every peer makes the call cost
        grow with the fleet. The sample is up to ``k`` (:data:`PEER_SAMPLE`) other hosts spread
        evenly over the source's host order, the same for every call of an investigation; a fleet of
        at most ``len(hosts) + k`` hosts is read whole, exactly as before.
        """
        k = PEER_SAMPLE if k is None else k
        names = self.source.host_names()
        mine = set(hosts)
        others = [h for h in names if h not in mine]
        if len(others) > k:
            step = len(others) / k
            others = [others[int(i * step)] for i in range(k)]
        chosen = mine | set(others)
        return [h for h in names if h in chosen]

    def hosts(self, host: str | None) -> list[str]:
        """The hosts a call concerns; a named host must exist in the source."""
        names = self.source.host_names()
        if host is None:
            return names
        if host not in names:
            raise ToolArgumentError(f"unknown host {host!r}; the incident has {len(names)} hosts")
        return [host]


class Tool:
    """Base class of every tool. Subclasses set the class attributes and implement ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[ToolInput]] = HostScope
    cost: ClassVar[float] = 1.0
    #: Every signal name the tool can emit. The playbook loader checks each test against it, so
    #: a playbook cannot wait for a signal nothing produces; a call that emits anything else is
    #: a bug in the tool and becomes an ``error`` result rather than unchecked evidence.
    emits: ClassVar[frozenset[str]]

    # ``args`` is an instance of the subclass's own ``Input`` (``validate`` makes it one), so each
    # tool annotates it with that model; typed Any here so that the narrower override is allowed.
    def run(self, ctx: ToolContext, args: Any) -> ToolResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def validate(self, raw: dict[str, Any] | None) -> ToolInput:
        try:
            return self.Input.model_validate(raw or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            raise ToolArgumentError(f"{self.name}: {where}: {first['msg']}") from None

    def __call__(self, ctx: ToolContext, raw_args: dict[str, Any] | None = None) -> ToolResult:
        """Validate, run, and turn a failure into an ``error`` result.

        Invalid arguments raise ToolArgumentError instead: the caller answers them with a typed
        error the model can correct.
        """
        args = self.validate(raw_args)
        try:
            result = self.run(ctx, args)
        except ToolArgumentError:
            raise
        except ForensicError as exc:
            return ToolResult(status="error", summary=f"{self.name} failed: {exc}", unread=[str(exc)])
        if result.status == "error" and not result.unread:
            # A call that failed read nothing it was asked to: say what, so it is not taken for absence.
            result = result.model_copy(update={"unread": [result.summary]})
        if undeclared := sorted({s.name for s in result.signals} - self.emits):
            summary = f"{self.name} emitted undeclared signals {', '.join(undeclared)} (a bug in the tool)"
            return ToolResult(status="error", source=result.source, summary=summary, unread=[summary])
        return result

    @classmethod
    def schema(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "description": cls.description,
            "parameters": cls.Input.model_json_schema(),
            "emits": sorted(cls.emits),
        }


_REGISTRY: dict[str, Tool] = {}


def register(cls: type[Tool]) -> type[Tool]:
    """Class decorator: make a tool available by name."""
    if not isinstance(getattr(cls, "emits", None), frozenset):
        raise ValueError(f"tool {cls.name!r} must declare the signals it emits (emits = frozenset({{...}}))")
    if cls.name in _REGISTRY:
        raise ValueError(f"tool {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def get_tool(name: str) -> Tool:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ToolArgumentError(f"no tool named {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def all_tools() -> dict[str, Tool]:
    return dict(_REGISTRY)


def by_signal(signals: list[Signal], most: int = 4) -> str:
    """'pfc_origin on h1/mlx5_0; pfc_victim on h2/mlx5_0, h3/mlx5_0': what a call found, for its summary."""
    names = sorted({s.name for s in signals})
    return "; ".join(
        f"{n} on {', '.join(sorted({s.component for s in signals if s.name == n})[:most])}" for n in names
    )


def count(n: int, noun: str) -> str:
    """'1 host', '3 hosts': summaries are read by people."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def utc_text(t: float) -> str:
    """'2026-04-02T13:30:00Z': a Unix time as summaries print it."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def gpu_component(host: str, index: int) -> str:
    return f"{host}/gpu{index}"


def rank_component(ctx: ToolContext, rank: int) -> str | None:
    placement = ctx.source.rank_map().get(rank)
    return gpu_component(*placement) if placement else None
