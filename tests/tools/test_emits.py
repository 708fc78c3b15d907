"""A tool declares the signals it emits; emitting anything else is a bug that cannot reach belief."""

from __future__ import annotations

from typing import ClassVar

import pytest
from forensic.tools.base import Signal, Tool, ToolInput, ToolResult, register


class _Any(ToolInput):
    pass


class _Chatty(Tool):
    name = "chatty_test_tool"
    description = "test double"
    Input = _Any
    emits: ClassVar[frozenset[str]] = frozenset({"declared"})

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def run(self, ctx, args) -> ToolResult:  # noqa: ANN001
        return ToolResult(
            status="ok",
            summary="x",
            source=["a.txt"],
            signals=[Signal(name=n, component="h/gpu0", kind="gpu") for n in self.names],
        )


def test_declared_signals_pass_through() -> None:
    out = _Chatty(["declared"])(None, {})
    assert out.status == "ok" and [s.name for s in out.signals] == ["declared"]


def test_an_undeclared_signal_turns_the_call_into_an_error() -> None:
    out = _Chatty(["declared", "surprise"])(None, {})
    assert out.status == "error" and not out.signals
    assert "undeclared signals surprise" in out.summary and out.source == ["a.txt"]


def test_a_tool_without_a_declaration_cannot_register() -> None:
    class Silent(Tool):
        name = "silent_test_tool"
        description = "test double"

    with pytest.raises(ValueError, match="must declare the signals it emits"):
        register(Silent)
