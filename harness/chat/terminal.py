"""The terminal side of a conversation: rich rendering with commands, or plain lines for scripts.

Untrusted text (names and summaries from a bundle, the model's answers) reaches rich as escaped
markup, never as markup; the streams and console the CLI hands in clean it of terminal controls
(``forensic.harness.cli._terminal``), the one place that does so for every command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from forensic.harness.approvals import Decision
from forensic.harness.conversation import Answer, Conversation
from forensic.harness.identity import OsIdentity
from forensic.sandbox import ForensicError
from rich.console import Console
from rich.markup import escape

COMMANDS = (
    "/evidence [all|ev-N [--json]]",
    "/report",
    "/approve rp-N",
    "/reject rp-N",
    "/plot rank-heatmap",
    "/plot timeline HOST",
    "/help",
    "/quit",
)


def os_user() -> str:
    """The approver: the operating-system user, never USER or LOGNAME."""
    return OsIdentity().current().name


def render_answer(ans: Answer, con: Console) -> None:
    for line in ans.text:
        con.print(escape(line), highlight=False)
    for c in ans.claims:
        con.print(f"  • {escape(c.claim)} [cyan]\\[{escape(', '.join(c.evidence))}][/]", highlight=False)
    if ans.dropped:
        con.print(f"  [yellow]{len(ans.dropped)} claim(s) dropped: their citations did not check out[/]")
    if ans.new_evidence:
        con.print(f"  [green]new evidence:[/] {', '.join(ans.new_evidence)}", highlight=False)


def command(conv: Conversation, line: str, out: Any, plot_dir: Path) -> bool:
    """Run one /command; return False on /quit. ``out`` has ``write(str)``."""
    parts = line.split()
    cmd, args = parts[0].lower(), parts[1:]
    if cmd in ("/quit", "/exit", "/q"):
        return False
    if cmd == "/help":
        out.write("commands: " + " · ".join(COMMANDS) + "\n")
    elif cmd == "/report":
        report = conv.report
        out.write(json.dumps(report, indent=2) + "\n" if report else "no report yet: ask a question first\n")
    elif cmd == "/evidence":
        out.write("\n".join(evidence_lines(conv, args)) + "\n")
    elif cmd in ("/approve", "/reject"):
        # Every decision typed here is on the record, counted or refused, as forensic approve's are.
        report = conv.report or {}
        prop = next((p for p in report.get("proposals") or [] if args and p["id"] == args[0]), None)
        verdict = "approve" if cmd == "/approve" else "reject"
        decision = Decision(
            proposal_id=args[0][:64] if args else "?",
            content_hash=prop["content_hash"] if prop else "",
            decision=verdict,
            approver=os_user(),
            authenticated=True,
            comment=" ".join(args[1:])[:2000],
        )
        try:
            entries = (
                conv.decide([decision]) if args else [conv.refuse(decision, f"name a proposal: {cmd} rp-N")]
            )
        except ForensicError as exc:
            entries = [conv.refuse(decision, str(exc))]
        for entry in entries:
            extra = f": {entry['reason']}" if entry.get("reason") else ""
            out.write(
                f"{entry['proposal_id']} {entry['outcome']} by {entry['approver']}{extra}\n"
            )  # the stream cleaner shows controls as text
    elif cmd == "/plot" and args:
        try:
            from forensic.harness.plots import plot as draw
        except ImportError as exc:  # a node agent's install leaves the pictures out
            out.write(f"cannot draw: {exc.name} is not installed: pip install 'forensic-harness[plot]'\n")
            return True

        kind = args[0]
        target = plot_dir / f"{conv.thread_id}-{kind}.png"
        try:
            draw(kind, conv.report or {}, conv.inv.source, target, host=args[1] if len(args) > 1 else None)
        except (ForensicError, ValueError, KeyError) as exc:
            out.write(f"cannot draw {kind}: {exc}\n")
            return True
        out.write(f"{target}\n")
    else:
        out.write("unknown command; commands: " + " · ".join(COMMANDS) + "\n")
    return True


def _scope(rec: dict[str, Any]) -> str:
    args = rec.get("args") or {}
    return str(args.get("host") or args.get("component") or args.get("switch") or "fleet")


def _one_line(rec: dict[str, Any], width: int = 110) -> str:
    summary = " ".join(str(rec.get("summary") or "").split())
    if len(summary) > width:
        summary = summary[: width - 1] + "…"
    return f"  {rec['id']:<6} {rec['tool']:<15} {_scope(rec):<18} {rec.get('status', '?'):<8} {summary}"


def _cited(conv: Conversation) -> list[str]:
    """Records the report's findings and this conversation's answers cite, in ledger order."""
    state = conv.state()
    ids = {e for f in (state.get("report") or {}).get("findings") or [] for e in f.get("evidence") or []}
    for turn in state.get("turns") or []:
        for c in (turn.get("answer") or {}).get("claims") or []:
            ids.update(c.get("evidence") or [])
    return [r["id"] for r in conv.records if r["id"] in ids]


def evidence_lines(conv: Conversation, args: list[str]) -> list[str]:
    """``/evidence``: a summary (records per tool and per host, the cited ones one line each);
    ``/evidence all``: every record, one line each; ``/evidence ev-N``: one record in words;
    ``/evidence ev-N --json``: the raw record."""
    records = conv.records
    if not records:
        return ["no evidence yet: ask a question first"]
    if args and args[0].lower() != "all":
        rec = next((r for r in records if r["id"] == args[0]), None)
        if rec is None:
            return [f"no evidence {args[0]} (this conversation has ev-1 to {records[-1]['id']})"]
        if "--json" in args[1:]:
            return [json.dumps(rec, indent=2)]
        lines = [
            f"{rec['id']} · {rec['tool']} · {_scope(rec)} · {rec.get('status')}",
            f"  {rec.get('summary') or ''}",
        ]
        for s in (rec.get("signals") or [])[:20]:
            lines.append(
                f"  - {s.get('name', '').replace('_', ' ')} on {s.get('component')}"
                + (f": {s['detail']}" if s.get("detail") else "")
            )
        if len(rec.get("signals") or []) > 20:
            lines.append(f"  … {len(rec['signals']) - 20} more signals")
        sources = rec.get("sources") or ([rec["source"]] if rec.get("source") else [])
        if sources:
            lines.append(
                "  read: "
                + ", ".join(sources[:8])
                + (f" and {len(sources) - 8} more" if len(sources) > 8 else "")
            )
        lines.append(f"  (/evidence {rec['id']} --json for the raw record, its data included)")
        return lines
    if args:
        return [f"{len(records)} evidence records:", *(_one_line(r) for r in records)]
    tools: dict[str, int] = {}
    scopes: dict[str, int] = {}
    for r in records:
        tools[r["tool"]] = tools.get(r["tool"], 0) + 1
        scopes[_scope(r)] = scopes.get(_scope(r), 0) + 1
    failed = [r["id"] for r in records if r.get("status") != "ok"]
    cited = _cited(conv)
    by_id = {r["id"]: r for r in records}
    lines = [
        f"{len(records)} evidence records ({len(records) - len(failed)} ok"
        + (f"; no data or failed: {', '.join(failed)}" if failed else "")
        + ")",
        "  per tool: " + ", ".join(f"{t} {n}" for t, n in tools.items()),
        "  per host: "
        + ", ".join(f"{h} {n}" for h, n in sorted(scopes.items(), key=lambda x: (x[0] != "fleet", x[0]))),
        f"cited ({len(cited)}):" if cited else "cited: none yet",
        *(_one_line(by_id[e]) for e in cited),
        "/evidence all lists every record; /evidence ev-N shows one (--json for the raw record)",
    ]
    return lines


def run_plain(conv: Conversation, stdin: TextIO, stdout: TextIO, plot_dir: Path) -> None:
    """One question (or /command) per line in, answers out; nothing but the answers on stdout."""
    for raw in stdin:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("/"):
            if not command(conv, line, stdout, plot_dir):
                break
            continue
        stdout.write(f"> {line}\n{conv.ask(line).render()}\n\n")
        stdout.flush()


def run_interactive(conv: Conversation, con: Console, plot_dir: Path) -> None:
    """A conversation at a terminal, with history (readline) and the steps shown while tools run."""
    try:
        import readline  # noqa: F401  (arrow keys and history for input())
    except ImportError:
        pass
    con.print(
        f"[bold]forensic chat[/] · {escape(conv.inv.source.incident.title or conv.inv.source.incident.id)}"
        f"\nthread {conv.thread_id} · ask a question, or /help",
        highlight=False,
    )
    while True:
        try:
            line = input("? ").strip()
        except (EOFError, KeyboardInterrupt):
            con.print()
            break
        if not line:
            continue
        if line.startswith("/"):
            if not command(conv, line, _ConsoleOut(con), plot_dir):
                break
            continue
        with con.status("investigating…" if conv.report is None else "looking…"):
            ans = conv.ask(line)
        render_answer(ans, con)
    con.print(f"resume with: forensic chat --resume {conv.thread_id}", highlight=False)


class _ConsoleOut:
    def __init__(self, con: Console) -> None:
        self.con = con

    def write(self, text: str) -> None:
        self.con.print(escape(text.rstrip("\n")), highlight=False)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()
