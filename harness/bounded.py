"""Bounded evidence records for the report: the rows that matter, and how many were left out.

A tool call on a 2,048-host fleet examines 16,384 GPUs; listing every one of them (or every
per-rank row of its data) in the report would make the report grow with the fleet. The ledger in
the checkpoint keeps every record whole (``forensic evidence THREAD ev-N`` prints it); the report
keeps, per record:

- ``covered``, ``sources`` and ``unread``: the entries that concern a component the verdict, an alternative
  or a signal names (and its host), then the first ones up to :data:`MAX_LIST`;
- ``signals``: the job-wide ones (a slowdown, a hang: few, and what a claim about the job cites),
  then those on the components that matter, then the rest up to :data:`MAX_LIST`;
- ``data``: every list, and every mapping, longer than :data:`MAX_LIST` (at any depth) cut the
  same way, rows (or keys) that mention a component that matters kept first;

and ``omitted`` says, per field (``data.<key>`` for data), how many entries were left out.
Small records are unchanged, so small incidents' reports are byte for byte what they were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

#: Entries kept per list in a report's evidence record.
MAX_LIST = 64


def _host(component: str) -> str:
    return component.split("/", 1)[0]


def keep_set(components: Iterable[str | None]) -> set[str]:
    """The components that matter and their hosts."""
    out: set[str] = set()
    for c in components:
        if c and c != "job":  # job-wide facts: every record is about the job
            out.add(c)
            out.add(_host(c))
    return out


def _mentions(item: Any, keep: set[str]) -> bool:
    if isinstance(item, str):
        # a component ("host/gpu3"), or a path naming a host among its parts ("nodes/host/...")
        return (
            item in keep or not keep.isdisjoint(item.split("/")) or any(k in item for k in keep if "/" in k)
        )
    if isinstance(item, dict):
        for key in ("component", "host", "name", "gpu", "link", "switch"):
            v = item.get(key)
            if isinstance(v, str) and (v in keep or _host(v) in keep):
                return True
        return False
    try:
        text = json.dumps(item, default=str)
    except (TypeError, ValueError):
        return False
    return any(k in text for k in keep)


def _cut(items: list[Any], keep: set[str], limit: int, also: set[str] | None = None) -> tuple[list[Any], int]:
    """Up to ``limit`` items in their order: those about ``keep`` first, then about ``also``, then the rest."""
    if len(items) <= limit:
        return items, 0
    chosen: set[int] = set()
    for tier in (keep, also or set(), None):
        for i, x in enumerate(items):
            if len(chosen) >= limit:
                break
            if i not in chosen and (tier is None or (tier and _mentions(x, tier))):
                chosen.add(i)
    return [items[i] for i in sorted(chosen)], len(items) - len(chosen)


def _cut_data(
    value: Any, keep: set[str], limit: int, path: str, omitted: dict[str, int], also: set[str] | None = None
) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        if len(items) > limit:  # keyed by component (host, GPU, NIC): the same cut as a list
            kept_keys, dropped = _cut([k for k, _ in items], keep, limit, also)
            omitted[path] = omitted.get(path, 0) + dropped
            items = [(k, value[k]) for k in kept_keys]
        return {k: _cut_data(v, keep, limit, f"{path}.{k}", omitted, also) for k, v in items}
    if isinstance(value, list):
        kept, dropped = _cut(value, keep, limit, also)
        if dropped:
            omitted[path] = omitted.get(path, 0) + dropped
        return [_cut_data(v, keep, limit, path, omitted, also) for v in kept]
    return value


def _job_wide(sig: Any) -> bool:
    return isinstance(sig, dict) and (sig.get("component") == "job" or sig.get("kind") == "job")


def bound_record(
    rec: dict[str, Any], components: Iterable[str | None], limit: int = MAX_LIST
) -> dict[str, Any]:
    """``rec`` with its long lists cut to ``limit`` entries and ``omitted`` counting what was left
    out; ``rec`` itself is not changed. Kept first: entries about ``components`` (the verdict, the
    alternatives, the findings' subjects), then about the record's own signals, then the first ones."""
    keep = keep_set(components)
    also = keep_set(s.get("component") for s in rec.get("signals") or [] if isinstance(s, dict)) - keep
    omitted: dict[str, int] = {}
    out = dict(rec)
    for field in ("covered", "sources", "signals", "unread", "partial"):
        items = rec.get(field)
        if isinstance(items, list):
            out[field], dropped = _cut(items, keep, limit, also)
            if field == "signals" and dropped:
                # A job-wide signal concerns every claim about the job, and a claim about the job
                # names no part to keep it by: among 102 stragglers it was cut, and the slowdown's
                # numbers with it, so the report's own finding no longer verified against it.
                whole = [s for s in items if _job_wide(s)]
                rest, dropped = _cut(
                    [s for s in items if not _job_wide(s)], keep, max(limit - len(whole), 0), also
                )
                chosen = {id(r) for r in rest}
                out[field] = [s for s in items if _job_wide(s) or id(s) in chosen]
            if dropped:
                omitted[field] = dropped
    if isinstance(rec.get("data"), dict):
        out["data"] = _cut_data(rec["data"], keep, limit, "data", omitted, also)
    if omitted:
        out["omitted"] = {**(rec.get("omitted") or {}), **omitted}
    return out
