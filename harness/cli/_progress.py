"""Progress of a running investigation on stderr, fed by the graph's streamed steps.

One line per tool call (evidence id, tool, scope, status, what it found), and a spinner with the
elapsed time while a node works, so a model-planned run that thinks for minutes is not a blank
screen. Only for terminals: ``investigate`` passes no reporter with ``--json`` or when piped.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

#: What a person is told while each node works.
_WAITING = {
    "triage": "reading the incident",
    "hypothesize": "forming hypotheses",
    "choose_test": "choosing the next test",
    "assess": "updating beliefs",
    "conclude": "writing the verdict",
    "propose": "drafting remediations",
}


class Progress:
    """Feeds on :data:`forensic.harness.graph.OnStep` events; call :meth:`close` when done."""

    def __init__(self, console: Console, *, planner: str = "graph") -> None:
        self.con = console
        self.planner = planner
        self._status = console.status("", spinner="dots")
        self._live = False

    def _show(self, message: str) -> None:
        self._status.update(Text(message, style="dim"))
        if not self._live:
            self._status.start()
            self._live = True

    def __call__(self, node: str, phase: str, data: dict[str, Any]) -> None:
        if phase == "start":
            if node == "run_tool":
                call = data.get("pending") or {}
                host = (call.get("args") or {}).get("host") if isinstance(call.get("args"), dict) else None
                self._show(f"running {call.get('tool', '?')} on {host or 'the fleet'}")
            elif node == "choose_test" and self.planner != "graph":
                self._show(
                    f"the model ({self.planner}) is choosing the next test; a small local model can take minutes"
                )
            elif node in _WAITING:
                self._show(_WAITING[node])
            return
        if node == "run_tool" and data.get("records"):
            r = data["records"][-1]
            line = Text(f"  {r['id']}  {r['tool']}  {(r.get('args') or {}).get('host') or 'fleet'}  ")
            line.append(r["status"], style="green" if r["status"] == "ok" else "yellow")
            line.append(f"  {r['summary']}", style="dim")
            line.truncate(max(20, self.con.width), overflow="ellipsis")
            self.con.print(line, no_wrap=True, highlight=False)
        elif node == "choose_test" and data.get("stop_reason"):
            self.con.print(Text(f"  stop: {data['stop_reason']}", style="dim"), highlight=False)
        elif node == "conclude":
            rep = data.get("report") or {}
            self.con.print(Text(f"  concluded: {rep.get('status', '?')}", style="dim"), highlight=False)

    def close(self) -> None:
        if self._live:
            self._status.stop()
            self._live = False
