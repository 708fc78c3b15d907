"""The OpenMetrics parser, re-exported: it lives in :mod:`forensic.openmetrics`, below the sandbox,
whose metric sources (bundle files, Prometheus) hand its ``Series`` to the tools."""

from forensic.openmetrics import (
    MetricFamily,
    MetricSet,
    MetricType,
    Series,
    counter_increase,
    is_counter_like,
    parse_openmetrics,
    series_host,
)

__all__ = [
    "MetricFamily",
    "MetricSet",
    "MetricType",
    "Series",
    "counter_increase",
    "is_counter_like",
    "parse_openmetrics",
    "series_host",
]
