"""Where a report's evidence came from: live or recorded, the window, the hosts read and not read,
and evidence whose timestamps lie outside the window (said, and not weighed: the tool that found
it returns ``no_data`` with an ``outside_window`` entry in its data)."""

from __future__ import annotations

import re
from typing import Any

from forensic.harness.models import EvidenceOrigin, OutsideWindow
from forensic.sandbox import EvidenceSource

# A citation names its host: "nodes/H/..." in a bundle, "H:path", "H$ argv", "H@before:..." live.
_CITED_HOST = re.compile(r"^(?:nodes/([^/]+)/|([A-Za-z0-9][A-Za-z0-9._-]*)(?:@before)?[:$])")


def hosts_cited(records: list[dict[str, Any]], known: set[str]) -> list[str]:
    """Hosts whose evidence some record read: its host argument or a citation naming the host."""
    out: set[str] = set()
    for r in records:
        host = (r.get("args") or {}).get("host")
        if isinstance(host, str) and host in known and r.get("status") != "error":
            out.add(host)
        for src in r.get("sources") or ([r["source"]] if r.get("source") else []):
            m = _CITED_HOST.match(str(src))
            name = m and (m.group(1) or m.group(2))
            if name and name in known:
                out.add(name)
    return sorted(out)


def outside_window(records: list[dict[str, Any]]) -> list[OutsideWindow]:
    """Each piece of evidence outside the window once (several tools read one steps.csv)."""
    out: dict[str, OutsideWindow] = {}
    for r in records:
        for o in (r.get("data") or {}).get("outside_window") or []:
            if isinstance(o, dict) and o.get("what") not in out:
                out[str(o.get("what"))] = OutsideWindow.model_validate(o)
    return list(out.values())


def provenance(source: EvidenceSource, records: list[dict[str, Any]], archive: str | None = None) -> EvidenceOrigin:
    start, end = source.window
    unreadable = source.unreadable_hosts()
    read = [h for h in hosts_cited(records, set(source.host_names())) if h not in unreadable]
    return EvidenceOrigin(origin=source.origin, where=source.locator, window={"start": start, "end": end},
                          hosts_read=read, hosts_unreachable=sorted(unreadable), outside_window=outside_window(records),
                          archive=archive)


__all__ = ["hosts_cited", "outside_window", "provenance"]
