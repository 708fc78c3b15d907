"""Where a report's evidence came from: live or recorded, the window, the hosts read and not read,
and evidence whose timestamps lie outside the window: a steps file (said, and when stale not
weighed: the tool that found it returns ``no_data`` with an ``outside_window`` entry in its
data), and, on a live fleet, metric series that stop well before the window ends (an exporter
that stopped: said, so that the absence of a later sample is not read as health)."""

from __future__ import annotations

import re
import time
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


#: A live series whose last sample is this long before the window's end (and at least
#: ``STOPPED_SHARE`` of the window) has stopped: several scrape intervals, not one late scrape.
STOPPED_S = 600.0
STOPPED_SHARE = 0.10


def stopped_series(series: list[Any], window: tuple[float | None, float | None]) -> list[OutsideWindow]:
    """Per metric name: series read whose samples stop well before the window ends."""
    start, end = window
    if start is None or end is None or not series:
        return []
    cut = end - max(STOPPED_S, STOPPED_SHARE * (end - start))
    by_name: dict[str, list[float]] = {}
    for s in series:
        ts = [float(t) for t in s.timestamps if t == t]
        if ts and start <= max(ts) < cut:
            by_name.setdefault(s.name, []).append(max(ts))
    out = []
    for name, lasts in sorted(by_name.items()):
        last = max(lasts)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last))
        out.append(
            OutsideWindow(
                what=f"metric {name}",
                last=last,
                stale=False,
                detail=(
                    f"metric {name}: {len(lasts)} series stop before the window ends (last sample {when}): "
                    "an exporter that stopped; nothing is known of them after that"
                ),
            )
        )
    return out


def provenance(
    source: EvidenceSource, records: list[dict[str, Any]], archive: str | None = None
) -> EvidenceOrigin:
    start, end = source.window
    unreadable = source.unreadable_hosts()
    read = [h for h in hosts_cited(records, set(source.host_names())) if h not in unreadable]
    outside = outside_window(records) + stopped_series(source.metrics_read(), (start, end))
    return EvidenceOrigin(
        origin=source.origin,
        where=source.locator,
        window={"start": start, "end": end},
        hosts_read=read,
        hosts_unreachable=sorted(unreadable),
        outside_window=outside,
        archive=archive,
    )


__all__ = ["hosts_cited", "outside_window", "provenance"]
