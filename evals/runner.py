"""``forensic eval``: score the investigator (and the baselines) against evaluation incidents.

A case is a folder with ``bundle/`` and ``truth.json``. Cases below a folder named ``holdout``
form the held-out split and are reported on their own. Scoring is strict top-1: the root cause
and the component must both match (``exact``). A case whose investigation crashes counts as
wrong, carries an ``error`` and the run goes on.
"""

from __future__ import annotations

import json
import statistics
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from forensic.evals.calibration import calibration, wrong_confirmed
from forensic.harness.budget import Limits
from forensic.harness.citations import check
from forensic.harness.failure_graph import FailureGraph
from forensic.harness.models import Finding
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

EVAL_SCHEMA = "forensic.eval/v1"


def find_cases(root: Path) -> list[Path]:
    """Case folders under ``root`` (itself included), sorted by path."""
    if (root / "bundle").is_dir() and (root / "truth.json").is_file():
        return [root]
    return sorted(p.parent for p in root.rglob("truth.json") if (p.parent / "bundle").is_dir())


def split_of(case: Path, root: Path) -> str:
    return "holdout" if "holdout" in case.relative_to(root).parts or "holdout" in root.parts else "tuned"


def _truth(case: Path) -> dict[str, Any]:
    raw = json.loads((case / "truth.json").read_text())
    return {"root_cause": raw.get("root_cause"), "component": raw.get("component")}


def _verified(report: dict[str, Any]) -> tuple[int, int]:
    """(findings, findings whose citations verify), re-checked here independently of the harness."""
    records = {e["id"]: e for e in report.get("evidence", [])}
    dropped = sum(1 for n in report.get("notes", []) if n.startswith("finding dropped"))
    ok = sum(
        1
        for f in report.get("findings", [])
        if check(
            Finding.model_validate(f), records, f.get("subject") or report["verdict"].get("component")
        ).verified
    )
    return len(report.get("findings", [])) + dropped, ok


def run_case(
    case: Path,
    *,
    planner: str,
    limits: Limits,
    planner_kwargs: dict[str, Any] | None = None,
    graph: FailureGraph | None = None,
) -> dict[str, Any]:
    from forensic.harness.graph import Investigator

    expected = _truth(case)
    t0 = time.monotonic()
    out: dict[str, Any] = {"id": case.name, "expected": expected}
    try:
        report = Investigator(
            case / "bundle", planner=planner, planner_kwargs=planner_kwargs, limits=limits, graph=graph
        ).run()
    except Exception as exc:  # a crash is this case's result, not the run's end
        out.update(
            got={"root_cause": None, "component": None, "status": "error"},
            root_cause_ok=False,
            component_ok=False,
            top3_ok=False,
            tool_calls=0,
            wall_s=round(time.monotonic() - t0, 3),
            findings=0,
            findings_verified=0,
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(limit=4),
        )
        return out
    v = report["verdict"]
    got = {
        "root_cause": v["root_cause"],
        "component": v.get("component"),
        "status": report["status"],
        "confidence": v.get("confidence"),
    }
    ranked = [(v["root_cause"], v.get("component"))] + [
        (a["root_cause"], a.get("component")) for a in report.get("alternatives", [])
    ]
    findings, verified = _verified(report)
    out.update(
        got=got,
        root_cause_ok=got["root_cause"] == expected["root_cause"],
        component_ok=got["component"] == expected["component"],
        top3_ok=(expected["root_cause"], expected["component"]) in ranked[:3],
        tool_calls=report["budget"]["tool_calls"],
        wall_s=round(time.monotonic() - t0, 3),
        findings=findings,
        findings_verified=verified,
    )
    return out


def summarize(cases: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(cases)
    if not n:
        return {"n": 0}
    exact = [c["root_cause_ok"] and c["component_ok"] for c in cases]
    healthy = [c for c in cases if c["expected"]["root_cause"] == "healthy"]
    findings = sum(c["findings"] for c in cases)
    return {
        "n": n,
        "root_cause_accuracy": round(sum(c["root_cause_ok"] for c in cases) / n, 4),
        "exact_accuracy": round(sum(exact) / n, 4),
        "top3_accuracy": round(sum(c["top3_ok"] for c in cases) / n, 4),
        "healthy_false_alarm_rate": round(
            sum(c["got"]["root_cause"] != "healthy" for c in healthy) / len(healthy), 4
        )
        if healthy
        else 0.0,
        "citation_validity": round(sum(c["findings_verified"] for c in cases) / findings, 4)
        if findings
        else 1.0,
        "median_tool_calls": statistics.median(c["tool_calls"] for c in cases),
        "median_wall_s": round(statistics.median(c["wall_s"] for c in cases), 3),
        "errors": sum(1 for c in cases if c.get("error")),
        "wrong_confirmed": wrong_confirmed(cases),
    }


def per_class(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by: dict[str, list[bool]] = defaultdict(list)
    for c in cases:
        by[c["expected"]["root_cause"]].append(c["root_cause_ok"] and c["component_ok"])
    return {k: {"n": len(v), "exact_accuracy": round(sum(v) / len(v), 4)} for k, v in sorted(by.items())}


def confusion(cases: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        out[c["expected"]["root_cause"]][c["got"]["root_cause"] or "error"] += 1
    return {k: dict(v) for k, v in sorted(out.items())}


def run_eval(
    root: Path,
    *,
    planner: str = "graph",
    repeat: int = 1,
    limits: Limits | None = None,
    baselines: bool = True,
    progress: bool = False,
    planner_kwargs: dict[str, Any] | None = None,
    graph: FailureGraph | None = None,
) -> dict[str, Any]:
    """Score every case under ``root``; ``graph`` is the failure graph to investigate with (default: the shipped playbooks)."""
    from forensic.evals.baselines import BASELINES, score_baseline

    limits = limits or Limits()
    case_dirs = find_cases(root)
    results: list[dict[str, Any]] = []
    with Progress(disable=not progress, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("investigating", total=len(case_dirs) * repeat)
        for case in case_dirs:
            for attempt in range(repeat):
                r = run_case(case, planner=planner, limits=limits, planner_kwargs=planner_kwargs, graph=graph)
                r["split"] = split_of(case, root)
                if repeat > 1:
                    r["attempt"] = attempt + 1
                results.append(r)
                bar.advance(task)
    splits = {
        s: summarize([c for c in results if c["split"] == s])
        for s in ("tuned", "holdout")
        if any(c["split"] == s for c in results)
    }
    out: dict[str, Any] = {
        "schema": EVAL_SCHEMA,
        "planner": planner,
        "cases": results,
        "summary": summarize(results),
        "splits": splits,
        "per_root_cause": per_class(results),
        "confusion": confusion(results),
        "calibration": calibration(results),
    }
    if baselines:
        out["baselines"] = {}
        for name in BASELINES:
            scored = [score_baseline(name, case, split_of(case, root)) for case in case_dirs]
            out["baselines"][name] = {
                "summary": summarize(scored),
                "splits": {
                    s: summarize([c for c in scored if c["split"] == s])
                    for s in ("tuned", "holdout")
                    if any(c["split"] == s for c in scored)
                },
            }
    return out


def render_scoreboard(result: dict[str, Any], con: Console) -> None:
    s = result["summary"]
    t = Table(title=f"forensic eval ({result['planner']} planner)")
    for col in (
        "who",
        "split",
        "n",
        "exact",
        "cause",
        "top3",
        "false alarm",
        "cites",
        "wrong conf.",
        "calls",
        "secs",
    ):
        t.add_column(col, justify="right" if col not in ("who", "split") else "left", no_wrap=True)

    def row(who: str, split: str, x: dict[str, Any]) -> None:
        t.add_row(
            who,
            split,
            str(x["n"]),
            f"{x['exact_accuracy']:.2f}",
            f"{x['root_cause_accuracy']:.2f}",
            f"{x['top3_accuracy']:.2f}",
            f"{x['healthy_false_alarm_rate']:.2f}",
            f"{x['citation_validity']:.2f}",
            str(x.get("wrong_confirmed", 0)),
            f"{x['median_tool_calls']:g}",
            f"{x['median_wall_s']:.2f}",
        )

    row("forensic", "all", s)
    for name, x in result.get("splits", {}).items():
        row("forensic", name, x)
    for name, b in result.get("baselines", {}).items():
        for split, x in b.get("splits", {}).items():
            row(name, split, x)
    con.print(t)
    pc = Table(title="Exact accuracy per root cause")
    pc.add_column("root cause")
    pc.add_column("n", justify="right")
    pc.add_column("exact", justify="right")
    pc.add_column("confused with")
    for rc, x in result["per_root_cause"].items():
        wrong = {k: v for k, v in result["confusion"].get(rc, {}).items() if k != rc}
        pc.add_row(
            rc, str(x["n"]), f"{x['exact_accuracy']:.2f}", ", ".join(f"{k} x{v}" for k, v in wrong.items())
        )
    con.print(pc)
    if cal := result.get("calibration"):
        rt = Table(
            title=f"Calibration: confidence -> accuracy (Brier score {cal['brier']:.4f}; lower is better)"
        )
        for col in ("confidence", "n", "mean confidence", "accuracy"):
            rt.add_column(col, justify="left" if col == "confidence" else "right")
        for r in cal["reliability"]:
            rt.add_row(r["bucket"], str(r["n"]), f"{r['mean_confidence']:.3f}", f"{r['accuracy']:.3f}")
        con.print(rt)
    for c in result["cases"]:
        if c.get("error"):
            con.print(f"[red]error[/] {c['id']}: {c['error']}", highlight=False)
        elif not (c["root_cause_ok"] and c["component_ok"]):
            con.print(
                f"[yellow]miss[/] {c['id']}: expected {c['expected']['root_cause']} {c['expected']['component']}, "
                f"got {c['got']['root_cause']} {c['got']['component']} ({c['got']['status']})",
                highlight=False,
            )
