"""Citation checks: a claim stands only on evidence that exists, succeeded, concerns the claimed
component, and carries the numbers the claim states."""

from __future__ import annotations

import json
import re
from typing import Any

from forensic.harness.models import Finding

# A number on its own (or a PCIe width such as x8), not the digits inside an identifier such as
# gpu3, mlx5_3 or a017.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])x?([-+]?\d+(?:\.\d+)?)(?![A-Za-z0-9_])")


def numbers_in(text: str) -> set[float]:
    out = set()
    for m in _NUMBER.finditer(text):
        try:
            out.add(round(float(m.group(1)), 6))
        except ValueError:
            continue
    return out


def _record_text(rec: dict[str, Any], component: str | None) -> str:
    """What a record says about ``component``: its summary and the signals on that component (or
    job-wide ones). The bulk ``data`` is left out: a number found somewhere in a large table is not
    a number the record states about the claim's subject."""
    parts = [rec.get("summary", "")]
    for sig in rec.get("signals") or []:
        if reads(sig, component):
            parts.append(sig.get("detail", ""))
            parts.append(json.dumps(sig.get("values", {})))
    return "\n".join(parts)


def reads(sig: dict[str, Any], component: str | None) -> bool:
    """Whether a claim about ``component`` may take its numbers from ``sig``: a signal on that part
    or its host, or a job-wide one; a claim about the job (or none) reads every signal."""
    return (
        component in (None, "job")
        or sig.get("component") in (component, component.split("/", 1)[0])
        or sig.get("kind") == "job"
    )


def concerns(rec: dict[str, Any], component: str | None) -> bool:
    """Whether ``rec`` read ``component``: it covered it, or its host; a claim about a whole host
    (no ``/`` in the name) is also concerned by a record that covered any part of that host."""
    if component in (None, "job"):
        return True
    host = component.split("/", 1)[0]
    covered = rec.get("covered") or []
    if component in covered or host in covered:
        return True
    if "/" not in component and any(c.split("/", 1)[0] == host for c in covered):
        return True
    return any(s.get("component") in (component, host) for s in rec.get("signals") or [])


def check(finding: Finding, records: dict[str, dict[str, Any]], component: str | None) -> Finding:
    """Return the finding with ``verified`` and ``problem`` set."""
    if not finding.evidence:
        return finding.model_copy(update={"verified": False, "problem": "cites no evidence"})
    texts = []
    for ev in finding.evidence:
        rec = records.get(ev)
        if rec is None:
            return finding.model_copy(update={"verified": False, "problem": f"{ev} does not exist"})
        if rec.get("status") != "ok":
            return finding.model_copy(
                update={"verified": False, "problem": f"{ev} did not succeed ({rec.get('status')})"}
            )
        if not concerns(rec, component):
            return finding.model_copy(
                update={"verified": False, "problem": f"{ev} does not concern {component}"}
            )
        texts.append(_record_text(rec, component))
    carried = numbers_in("\n".join(texts))
    missing = sorted(n for n in numbers_in(finding.claim) if n not in carried)
    if missing:
        shown = ", ".join(f"{n:g}" for n in missing[:3])
        return finding.model_copy(
            update={"verified": False, "problem": f"the cited evidence does not carry {shown}"}
        )
    return finding.model_copy(update={"verified": True, "problem": None})
