"""Prometheus metrics of one service instance (its own registry, so tests can run several)."""

from __future__ import annotations

from typing import Any

from forensic.harness.service.store import STATUSES
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily


class Metrics:
    def __init__(self, store: Any) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.alerts_received = Counter(
            "forensic_alerts_received", "Alerts received in accepted webhooks.", registry=r
        )
        self.alerts_grouped = Counter(
            "forensic_alerts_grouped", "New alerts added to an existing investigation.", registry=r
        )
        self.alerts_duplicate = Counter(
            "forensic_alerts_duplicate", "Alerts already known by fingerprint.", registry=r
        )
        self.dead_lettered = Counter(
            "forensic_webhooks_dead_lettered", "Request bodies refused and kept.", ["status"], registry=r
        )
        self.investigations_opened = Counter(
            "forensic_investigations_opened", "Investigations opened by intake.", registry=r
        )
        self.duration = Histogram(
            "forensic_investigation_duration_seconds",
            "Time from claim to conclusion.",
            buckets=(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900),
            registry=r,
        )
        self.tool_calls = Counter(
            "forensic_tool_calls", "Tool calls made by investigations.", ["tool", "status"], registry=r
        )
        r.register(_ByStatus(store))


class _ByStatus:
    def __init__(self, store: Any) -> None:
        self.store = store

    def collect(self):
        g = GaugeMetricFamily("forensic_investigations", "Investigations by status.", labels=["status"])
        counts = self.store.counts()
        for s in STATUSES:
            g.add_metric([s], counts.get(s, 0))
        yield g
