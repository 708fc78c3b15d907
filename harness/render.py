"""A readable report for people (rich). The JSON document is the contract; this is a view of it.

Laid out for a busy terminal: the details come first and what a person acts on comes last, so
that at 80x24 the final screen holds the verdict, the chain and the approve commands. Every
wrapped line hangs under its label (rich grids wrap at spaces, so host names are never split),
and the approve commands are printed unwrapped so they copy and paste whole.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

_STATUS_STYLE = {
    "confirmed": "bold red",
    "probable": "bold yellow",
    "inconclusive": "bold magenta",
    "healthy": "bold green",
}


def _grid() -> Table:
    """Two columns, label and text: wrapped text hangs under its first line."""
    g = Table.grid(padding=(0, 1), pad_edge=False)
    g.add_column(no_wrap=True, style="bold")
    g.add_column(overflow="fold")
    return g


def _hyp(v: dict[str, Any]) -> str:
    return (
        v["root_cause"]
        + (f" on {v['component']}" if v.get("component") else "")
        + f" ({v['confidence']:.2f})"
    )


def verdict_text(report: dict[str, Any]) -> str:
    """The verdict in a few words for one line of a list or a message: 'confirmed: pcie_downtrain on
    gpu-e126/gpu0', 'healthy: no fault found', 'inconclusive: leading nvlink_fault on h/gpu1'."""
    v, status = report.get("verdict") or {}, report.get("status") or "unknown"
    if status == "healthy" or v.get("root_cause") == "healthy":
        return f"{status}: no fault found" if status != "healthy" else "healthy: no fault found"
    if status == "inconclusive":
        lead = (report.get("leading") or [None])[0]
        return "inconclusive" + (
            f": leading {lead['root_cause']}" + (f" on {lead['component']}" if lead.get("component") else "")
            if lead
            else ": no fault hypothesis has support yet"
        )
    return f"{status}: {v.get('root_cause') or '?'}" + (f" on {v['component']}" if v.get("component") else "")


def headline(report: dict[str, Any]) -> str:
    """The verdict line, as plain text. An inconclusive run never reads as healthy: it names the
    fault hypotheses still open, or says that nothing was tested."""
    v, status = report["verdict"], report["status"]
    if status == "inconclusive":
        leading = report.get("leading") or []
        unexplained = (report.get("status_reason") or "").startswith("inconclusive: nothing found explains")
        lead = "INCONCLUSIVE  nothing found explains the symptom;" if unexplained else "INCONCLUSIVE "
        if leading:
            return f"{lead} leading: {_hyp(leading[0])}"
        return "INCONCLUSIVE  no fault hypothesis has support yet"
    if status == "healthy":
        return f"HEALTHY  no fault found  (confidence {v['confidence']:.2f})"
    head = f"{status.upper()}  {v['root_cause']}"
    if v.get("component"):
        head += f" on {v['component']}"
    head += f"  (confidence {v['confidence']:.2f})"
    # Status is the confirmation rule, confidence the probability against the other hypotheses:
    # where they could read as contradicting each other, the same line says why.
    reason = report.get("status_reason") or ""
    if reason and ((status == "confirmed" and v["confidence"] < 0.5) or status == "probable"):
        head += f"  {reason}"
    return head


def approve_commands(report: dict[str, Any], thread: str) -> list[str]:
    """One ``forensic approve`` command per proposal still waiting for a decision."""
    return [
        f"forensic approve {thread} --approve {p['id']}={p['content_hash']}"
        for p in report.get("proposals") or []
        if p["status"] == "pending_approval"
    ]


def _evidence(report: dict[str, Any], con: Console, full: bool) -> None:
    if not report["evidence"]:
        return
    con.print("[bold]Evidence[/]" + ("" if full else "  [dim](--full for every summary)[/]"))
    if full:
        g = _grid()
        for e in report["evidence"]:
            g.add_row(
                f"  {e['id']}",
                Text(f"{e['tool']} {e['args'].get('host') or 'fleet'} {e['status']}: {e['summary']}"),
            )
        con.print(g)
        return
    for e in report["evidence"]:
        line = Text(f"  {e['id']}  {e['tool']}  {e['args'].get('host') or 'fleet'}  {e['status']}  ")
        line.append(e["summary"], style="dim")
        line.truncate(con.width, overflow="ellipsis")
        con.print(line, no_wrap=True)


def _findings(report: dict[str, Any], con: Console) -> None:
    if not report["findings"]:
        return
    con.print("[bold]Findings[/]")
    g = _grid()
    for f in report["findings"]:
        t = Text(f["claim"] + "  ")
        t.append(f"[{', '.join(f['evidence'])}]", style="dim")
        g.add_row("  -", t)
    con.print(g)


def _sparkline(spark: tuple[str, str, str, str] | None, con: Console) -> None:
    if not spark:
        return
    label, rank_line, median_line, caption = spark
    g = _grid()
    g.add_row(f"  {label}", Text(rank_line, style="red"))
    g.add_row("  median", Text(median_line))
    g.add_row("", Text(caption, style="dim"))
    con.print("[bold]Step time[/]")
    con.print(g)


def _proposals(report: dict[str, Any], con: Console) -> None:
    if not report.get("proposals"):
        return
    con.print("[bold]Proposed remediations[/] (nothing runs without a person's approval)")
    for p in report["proposals"]:
        con.print(
            Text.assemble(
                "  ",
                (p["id"], "bold"),
                " ",
                (p["action"], "bold"),
                f" {p['target']}  risk={p['risk']}  ",
                (p["status"], "yellow" if p["status"] == "pending_approval" else "bold"),
            )
        )
        g = _grid()
        g.add_row("      why", Text(p["reason"]))
        if p.get("blast_radius"):
            g.add_row("      blast radius", Text(p["blast_radius"]))
        if p.get("rollback"):
            g.add_row("      rollback", Text(p["rollback"]))
        con.print(g)


def _verdict(report: dict[str, Any], con: Console) -> None:
    status = report["status"]
    g = _grid()
    sub = f"{report['incident']}: {report.get('title', '')}".rstrip(": ")
    if report.get("chain") and not (status == "inconclusive" and report["chain"][-1] == "healthy"):
        g.add_row("Chain", Text("  ->  ".join(report["chain"])))
    if status == "inconclusive":
        leading = report.get("leading") or []
        if leading:
            g.add_row("Leading", Text(", ".join(_hyp(v) for v in leading)))
        why = next(
            (n for n in report.get("notes") or [] if n.startswith(("budget exhausted", "no evidence"))), ""
        )
        if why:
            g.add_row("Why", Text(why.split(";")[0]))
        if report.get("untested"):
            g.add_row("Not tested", Text(", ".join(report["untested"])))
    elif report.get("alternatives"):
        g.add_row("Alternatives", Text(", ".join(_hyp(a) for a in report["alternatives"])))
    con.rule("[bold]forensic[/]", style="dim")
    # soft_wrap: the verdict line is never cut by rich; a narrow terminal wraps it, whole.
    con.print(Text(headline(report), style=_STATUS_STYLE.get(status, "bold")), soft_wrap=True)
    con.print(Text(sub, style="dim"))
    con.print(g)


def evidence_line(report: dict[str, Any]) -> str:
    """Where the evidence came from, in one line ('' for reports written before it was recorded)."""
    ev = report.get("evidence_source")
    if not isinstance(ev, dict):
        return ""
    w = ev.get("window") or {}

    def utc(t: Any) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(t)) if isinstance(t, (int, float)) else "?"

    parts = [
        f"evidence: {ev.get('origin')}",
        f"window {utc(w.get('start'))} to {utc(w.get('end'))}",
        f"{len(ev.get('hosts_read') or [])} host(s) read",
    ]
    if ev.get("hosts_unreachable"):
        parts.append(
            "unreachable: "
            + ", ".join(ev["hosts_unreachable"][:10])
            + (f" (+{len(ev['hosts_unreachable']) - 10})" if len(ev["hosts_unreachable"]) > 10 else "")
        )
    if ev.get("outside_window"):
        parts.append(
            "outside the window, not weighed: " + ", ".join(o.get("what", "?") for o in ev["outside_window"])
        )
    if ev.get("archive"):
        parts.append(f"kept as {ev['archive']}")
    return "  ".join(parts)


def render_report(
    report: dict[str, Any],
    con: Console,
    *,
    full: bool = False,
    thread: str | None = None,
    spark: tuple[str, str, str, str] | None = None,
) -> None:
    """Print the report: details first, then the verdict, then what to run to approve.

    ``full`` prints every evidence summary and every note; ``thread`` (a checkpointed thread
    waiting at its approval gate) adds one approve command per pending proposal; ``spark`` is
    (label, rank sparkline, median sparkline, caption) from :mod:`forensic.harness.series`.
    """
    _evidence(report, con, full)
    _findings(report, con)
    _sparkline(spark, con)
    _proposals(report, con)
    notes = report.get("notes") or []
    # The verdict box says why an inconclusive run stopped; the compact view does not repeat it.
    rest = notes if full else [n for n in notes if not n.startswith(("budget exhausted", "no evidence"))]
    for note in rest[: None if full else 3]:
        con.print(Text(f"note: {note}", style="dim"))
    if len(rest) > 3 and not full:
        con.print(Text(f"({len(rest) - 3} more notes with --full)", style="dim"))
    origin = evidence_line(report)
    if origin:
        con.print(Text(origin, style="dim"))
    b = report["budget"]
    con.print(
        Text(
            f"planner={report['planner']}  tool calls {b['tool_calls']}/{b['tool_calls_limit']}  "
            f"wall {b['wall_s']:.2f}/{b['wall_s_limit']:g} s  tokens {b['llm_tokens']}/{b['llm_tokens_limit']}",
            style="dim",
        )
    )
    _verdict(report, con)
    cmds = approve_commands(report, thread) if thread else []
    if cmds:
        con.print("[bold]To approve[/] (one command per proposal; --reject ID=HASH to reject):")
        for cmd in cmds:
            # soft_wrap: the terminal wraps, so a copied command stays one line.
            con.print(cmd, soft_wrap=True, highlight=False, markup=False)
