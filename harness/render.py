"""A readable report for people (rich). The JSON document is the contract; this is a view of it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

_STATUS_STYLE = {"confirmed": "bold red", "probable": "bold yellow", "inconclusive": "bold magenta", "healthy": "bold green"}


def render_report(report: dict[str, Any], con: Console) -> None:
    v = report["verdict"]
    status = report["status"]
    head = f"[{_STATUS_STYLE.get(status, 'bold')}]{status.upper()}[/]  {v['root_cause']}"
    if v.get("component"):
        head += f" on [bold]{v['component']}[/]"
    head += f"  (confidence {v['confidence']:.2f})"
    sub = f"{report['incident']}: {report.get('title', '')}".rstrip(": ")
    con.print(Panel(f"{head}\n[dim]{sub}[/]", title="forensic", expand=False))
    if report.get("chain"):
        con.print("[bold]Chain[/]  " + "  ->  ".join(report["chain"]))
    if report["findings"]:
        con.print("[bold]Findings[/]")
        for f in report["findings"]:
            con.print(f"  - {f['claim']}  [dim]\\[{', '.join(f['evidence'])}][/]", highlight=False)
    if report.get("alternatives"):
        alts = ", ".join(f"{a['root_cause']}" + (f" on {a['component']}" if a.get("component") else "") + f" ({a['confidence']:.2f})"
                         for a in report["alternatives"])
        con.print(f"[bold]Alternatives[/]  {alts}", highlight=False)
    table = Table(title="Evidence", show_lines=False, expand=False)
    for col in ("id", "tool", "scope", "status", "summary"):
        table.add_column(col, overflow="fold")
    for e in report["evidence"]:
        table.add_row(e["id"], e["tool"], e["args"].get("host") or "fleet", e["status"], e["summary"])
    con.print(table)
    if report.get("proposals"):
        con.print("[bold]Proposed remediations[/] (nothing runs without a person's approval)")
        for p in report["proposals"]:
            con.print(f"  {p['id']} [bold]{p['action']}[/] {p['target']}  risk={p['risk']}  {p['status']}\n      {p['reason']}", highlight=False)
    for note in report.get("notes") or []:
        con.print(f"[dim]note: {note}[/]", highlight=False)
    b = report["budget"]
    con.print(f"[dim]planner={report['planner']}  tool calls {b['tool_calls']}/{b['tool_calls_limit']}  "
              f"wall {b['wall_s']:.2f}/{b['wall_s_limit']:g} s  tokens {b['llm_tokens']}/{b['llm_tokens_limit']}[/]")
