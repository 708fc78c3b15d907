"""Live triage: an alert that maps to no recorded bundle is investigated on the live fleet.

At intake an alert's evidence source is decided (:func:`map_evidence`): the first
``[[evidence.bundles]]`` entry that matches, else the live fleet of ``[fleet]`` when the alert
names a job, else none, and then the investigation is ``unmapped`` with the reason said on the
page and in a notification (:func:`unmapped_reason`, :func:`unmapped_summary`).

When a worker first runs a live investigation, :class:`LiveSources` turns its alerts into an
incident description: the job (from the job label), the window (``lookback_s`` before the first
alert's ``startsAt`` up to now, or ``window_after_s`` after the last alert if that is earlier),
or ``lookback_s`` before an alert's ``forensic_window_end`` annotation when one names it),
the title and description from the annotations (they shape triage as a bundle's incident title
does). The result is a fleet locator, recorded once as the investigation's ``evidence_source``
event, so a resumed run reopens exactly the same window.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forensic.harness.service.config import ServeConfig
from forensic.sandbox.fleet import fleet_locator, valid_job_name

#: The ``bundle`` column of an investigation that reads the live fleet of ``[fleet]``.
LIVE = "live:fleet"
#: Event kinds: where a live run's evidence comes from; why an investigation was not opened;
#: where what a live run read is kept.
SOURCE_EVENT = "evidence_source"
UNMAPPED_EVENT = "unmapped"
ARCHIVE_EVENT = "evidence_archive"
#: An alert annotation naming the window's end (drills replaying recorded data; rules whose
#: alert starts well after the fault). The window is then ``lookback_s`` up to it.
WINDOW_END_ANNOTATION = "forensic_window_end"


def map_evidence(cfg: ServeConfig, job: str | None, hosts: list[str]) -> Path | str | None:
    """A recorded bundle matching the alert, else :data:`LIVE` when a fleet can read its job, else None."""
    for m in cfg.evidence.bundles:
        if m.job and job == m.job:
            return m.path
        if any(fnmatch.fnmatchcase(h, g) for h in hosts for g in m.hosts):
            return m.path
    if cfg.fleet is not None and job and valid_job_name(job):
        return LIVE
    return None


def unmapped_reason(cfg: ServeConfig, job: str | None, hosts: list[str]) -> str:
    """Why :func:`map_evidence` found no source for this alert, in one line."""
    labels = ", ".join(cfg.grouping.job_labels)
    if cfg.fleet is None:
        what = f"job {job!r}" if job else "no job label"
        where = f"hosts {', '.join(hosts)}" if hosts else "no host label"
        return (
            f"no [[evidence.bundles]] entry matches ({what}; {where}) and serve.toml has no [fleet] "
            "to investigate it live"
        )
    if not job:
        return f"the alert has no job label (looked for {labels}), so there is no job to investigate live"
    return f"the job label {job[:80]!r} is not a valid job name (letters, digits, '.', '_', '-')"


def unmapped_summary(inv: dict[str, Any], reason: str, public_url: str) -> dict[str, Any]:
    """The notification of an alert nobody will investigate: a person must look at it."""
    link = (
        f"{public_url.rstrip('/')}/#/investigations/{inv['id']}"
        if public_url
        else f"/#/investigations/{inv['id']}"
    )
    text = f"forensic: {inv['id']} ({inv.get('job') or 'no job'}) NOT investigated: {reason}. {link}"
    return {
        "text": text,
        "forensic": {"investigation": inv["id"], "status": "unmapped", "reason": reason, "url": link},
    }


def _title(alerts: list[dict[str, Any]]) -> tuple[str, str]:
    """(title, reported) from the alerts' annotations, as a bundle's incident.json would say them."""
    first = alerts[0] if alerts else {}
    ann = first.get("annotations") or {}
    title = ann.get("summary") or ann.get("title") or first.get("alertname") or ""
    seen: list[str] = []
    for a in alerts[:20]:
        an = a.get("annotations") or {}
        for text in (a.get("alertname") or "", an.get("summary") or "", an.get("description") or ""):
            if text and text not in seen:
                seen.append(text)
    return title[:300], "; ".join(seen)[:2000]


def _window_end(alert: dict[str, Any]) -> float | None:
    """The ``forensic_window_end`` annotation (unix seconds or RFC 3339), when an alert has one."""
    from forensic.sandbox import parse_time

    raw = (alert.get("annotations") or {}).get(WINDOW_END_ANNOTATION)
    t = parse_time(raw) if raw else None
    return float(t) if t is not None and t > 0 else None


class LiveSources:
    """What a worker opens for an investigation: its bundle, or the live fleet's locator."""

    def __init__(self, cfg: ServeConfig, store: Any, *, clock: Callable[[], float] = time.time) -> None:
        self.cfg = cfg
        self.store = store
        self.clock = clock

    def where(self, inv: dict[str, Any]) -> str:
        if inv.get("bundle") != LIVE:
            return inv["bundle"]
        recorded = self._recorded(inv["id"])
        if recorded:
            return recorded
        if self.cfg.fleet is None:
            from forensic.harness.service.config import ConfigError

            raise ConfigError("this investigation reads the live fleet, but serve.toml no longer has [fleet]")
        fleet = self.cfg.fleet
        alerts = [a for a in self.store.alerts_of(inv["id"]) if a.get("starts_at") is not None]
        starts = [float(a["starts_at"]) for a in alerts] or [float(inv.get("first_at") or self.clock())]
        start = min(starts) - fleet.lookback_s
        end = min(self.clock(), max(starts) + fleet.window_after_s)
        named = [t for a in alerts if (t := _window_end(a)) is not None]
        if named:  # a drill on recorded data (or a rule that knows better) names the window's end
            end = min(named)
            start = end - fleet.lookback_s
        if end <= start:  # an alert from the future (clock skew): read the lookback up to it
            end = start + max(fleet.lookback_s, 60.0)
        title, reported = _title(alerts)
        locator = fleet_locator(
            fleet.file, job=inv["job"], since=end - start, until=end, title=title, reported=reported
        )
        self.store.add_event(
            inv["id"],
            "source",
            SOURCE_EVENT,
            {
                "origin": "live",
                "locator": locator,
                "job": inv["job"],
                "window": {"start": start, "end": end},
                "fleet": str(fleet.file),
            },
        )
        # Two runs racing here record one locator (the event key is unique): both use that one.
        return self._recorded(inv["id"]) or locator

    def archive_dir(self) -> Path:
        return Path(self.cfg.database).resolve().parent / "archives"

    def keep(self, inv: dict[str, Any], investigator: Any) -> None:
        """After a live run has recorded its conclusion: what its tools read (the hosts they read,
        the job's steps and logs, the metric series they read), written as the bundle archive
        ``forensic collect`` writes, beside the service database. It appears complete or not at
        all; the API names it in the report (:meth:`with_archive`). A failure is logged and an
        event, never a failed investigation."""
        source = investigator.source
        if source.origin != "live" or self.archive_of(inv) is not None:
            return
        from forensic.harness.collect import collect_source
        from forensic.harness.provenance import hosts_cited
        from forensic.sandbox import ForensicError

        out = self.archive_dir() / f"{inv['id']}.tar.gz"
        try:
            records = investigator.driver.values(inv["thread_id"]).get("records") or []
            hosts = [
                h
                for h in hosts_cited(records, set(source.host_names()))
                if h not in source.unreadable_hosts()
            ]
            out.parent.mkdir(parents=True, exist_ok=True)
            collect_source(source, out, hosts=hosts, series=source.metrics_read())
        except (ForensicError, OSError) as exc:
            self.store.add_event(inv["id"], "archive", ARCHIVE_EVENT, {"error": str(exc)[:300]})
            return
        self.store.add_event(
            inv["id"], "archive", ARCHIVE_EVENT, {"path": str(out), "bytes": out.stat().st_size}
        )

    def with_archive(self, inv: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any] | None:
        """The report naming its kept archive, once there is one."""
        kept = self.archive_of(inv)
        if report is None or kept is None or not isinstance(report.get("evidence_source"), dict):
            return report
        return {**report, "evidence_source": {**report["evidence_source"], "archive": str(kept)}}

    def archive_of(self, inv: dict[str, Any]) -> Path | None:
        """The kept archive of an investigation, when there is one (only ever under archive_dir)."""
        path = self.archive_dir() / f"{inv['id']}.tar.gz"
        return path if path.is_file() else None

    def _recorded(self, inv_id: str) -> str | None:
        for e in self.store.events_after(inv_id, 0):
            if e["kind"] == SOURCE_EVENT and isinstance(e["data"], dict) and e["data"].get("locator"):
                return str(e["data"]["locator"])
        return None


__all__ = [
    "ARCHIVE_EVENT",
    "LIVE",
    "LiveSources",
    "SOURCE_EVENT",
    "UNMAPPED_EVENT",
    "map_evidence",
    "unmapped_reason",
    "unmapped_summary",
]
