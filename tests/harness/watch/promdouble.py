"""A Prometheus HTTP API double at the transport seam (``httpx.MockTransport``).

It holds scraped samples (per series: labels, sample times, values) and answers
``/api/v1/query_range`` the way Prometheus evaluates an instant selector over a range: at
``start``, ``start + step``, ... up to ``end``, each series' newest sample at or before the
evaluation time and no older than the lookback delta, values printed as strings. The query text
is recorded, not interpreted (the double serves one job's series). ``fail`` scripts answers that
are not a matrix; the requests asked are kept to check positions.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import numpy as np
from forensic.sandbox.prometheus import PrometheusMetrics

#: Prometheus' default ``--query.lookback-delta``.
LOOKBACK_S = 300.0


class PromDouble:
    def __init__(self, lookback_s: float = LOOKBACK_S) -> None:
        self.series: list[tuple[dict[str, str], np.ndarray, np.ndarray]] = []
        self.lookback_s = lookback_s
        self.asked: list[tuple[str, float, float, float]] = []
        self.fail: Callable[[httpx.Request], httpx.Response] | None = None

    def add(self, labels: dict[str, str], times, values) -> None:
        self.series.append((labels, np.asarray(times, float), np.asarray(values, float)))

    def handler(self, request: httpx.Request) -> httpx.Response:
        p = request.url.params
        start, end, step = float(p["start"]), float(p["end"]), float(p["step"])
        self.asked.append((p["query"], start, end, step))
        if self.fail is not None:
            return self.fail(request)
        grid = start + step * np.arange(int(np.floor((end - start) / step + 1e-9)) + 1)
        result = []
        for labels, ts, vs in self.series:
            i = np.searchsorted(ts, grid, side="right") - 1
            ok = (i >= 0) & (grid - ts[np.maximum(i, 0)] < self.lookback_s)
            if ok.any():
                values = [[float(t), _fmt(vs[j])] for t, j in zip(grid[ok], i[ok], strict=True)]
                result.append(
                    {"metric": {"__name__": "forensic_step_compute_seconds", **labels}, "values": values}
                )
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "matrix", "result": result}}
        )

    def client(self) -> PrometheusMetrics:
        return PrometheusMetrics(
            "http://prom.test:9090", transport=httpx.MockTransport(self.handler), sleep=lambda s: None
        )


def _fmt(v: float) -> str:
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))
