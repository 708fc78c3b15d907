"""Metrics from a Prometheus HTTP API (``/api/v1/query_range``), behind the metric-source protocol.

A query is one instant-vector selector, ``NAME{label="value",...}``, evaluated over the asked
range. The step is chosen from the range: at least ``min_step_s`` (about the scrape interval),
and coarse enough that a series stays under Prometheus' 11,000 points per query.

Failures never raise: connection errors, timeouts, 429 and 5xx answers are retried (tenacity,
honouring ``retry-after``), and what still fails comes back as ``MetricRead.unavailable`` with
the reason, so the metrics tool reports ``no_data`` and the investigation goes on. Label values
and names are escaped, never pasted: a label value cannot change the query.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import numpy as np
from forensic.sandbox.sources import MetricRead
from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

#: Prometheus refuses a query_range that would return more points than this per series.
MAX_POINTS = 11_000
#: Answers from 429 and 5xx are worth another attempt; 4xx otherwise means the query is wrong.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: A response body larger than this is refused (a metric query of one incident is far smaller).
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
#: Range asked when the incident has no window bound: the last hour.
DEFAULT_RANGE_S = 3600.0

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class _Transient(Exception):
    """A failure worth retrying; carries the server's retry-after when it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Failed(Exception):
    """A failure that another attempt will not fix."""


def choose_step(start: float, end: float, min_step_s: float) -> float:
    """Seconds between points: the scrape-like minimum, or coarser when the range is long."""
    span = max(end - start, 0.0)
    return float(max(min_step_s, math.ceil(span / (MAX_POINTS - 1)) if span else min_step_s))


def selector(name: str, labels: Mapping[str, str] | None = None) -> str:
    """``name{k="v",...}`` with values escaped; a name or label key that is not valid is refused."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a Prometheus metric name")
    parts = []
    for key, value in sorted((labels or {}).items()):
        if not _LABEL.fullmatch(key):
            raise ValueError(f"{key!r} is not a Prometheus label name")
        escaped = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        parts.append(f'{key}="{escaped}"')
    return name + ("{" + ",".join(parts) + "}" if parts else "")


class _Wait:
    """The server's retry-after when it gives one (capped), else jittered exponential."""

    def __init__(self, max_s: float) -> None:
        self._max = max_s
        self._fallback = wait_random_exponential(multiplier=0.25, max=max_s)

    def __call__(self, state: Any) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self._max)
        return self._fallback(state)


class PrometheusMetrics:
    """A metric source over one Prometheus (or Thanos, Mimir, VictoriaMetrics: the same API)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout_s: float = 10.0,
        attempts: int = 3,
        min_step_s: float = 15.0,
        max_wait_s: float = 4.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.attempts = max(1, attempts)
        self.min_step_s = min_step_s
        self._clock = clock
        self._sleep = sleep
        self._wait = _Wait(max_wait_s)
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout_s, transport=transport, follow_redirects=False
        )
        #: Once Prometheus has failed past every retry, later queries say so at once instead of
        #: each waiting out its own timeouts.
        self._down: str | None = None

    def close(self) -> None:
        self._client.close()

    def series(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> MetricRead:
        if self._down:
            return MetricRead(unavailable=self._down)
        try:
            query = selector(name, labels)
        except ValueError as exc:
            return MetricRead(unavailable=f"no query for {name}: {exc}")
        end = self._clock() if end is None else end
        start = end - DEFAULT_RANGE_S if start is None else start
        out, down = self._range(query, start, end, choose_step(start, end, self.min_step_s), name)
        if down:
            self._down = out.unavailable
        return out

    def query_range(self, query: str, start: float, end: float, step: float) -> MetricRead:
        """Any PromQL expression evaluated at ``start``, ``start + step``, ... up to ``end``.

        Unlike :meth:`series` a failure here is not remembered: a long-running reader (the
        watcher) asks again on its next poll, and the next answer counts on its own.
        """
        return self._range(query, start, end, step, "")[0]

    def _range(self, query: str, start: float, end: float, step: float, name: str) -> tuple[MetricRead, bool]:
        """The answer, and whether Prometheus failed past every retry (down, not merely refusing)."""
        from forensic.openmetrics import Series

        params = {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        citation = f"prometheus:{self.url}/api/v1/query_range?query={query}"
        try:
            data = self._get("/api/v1/query_range", params)
        except _Failed as exc:
            return MetricRead(unavailable=f"Prometheus at {self.url}: {exc}"), False
        except (_Transient, RetryError) as exc:
            cause = exc.last_attempt.exception() if isinstance(exc, RetryError) else exc
            why = f"Prometheus at {self.url} did not answer after {self.attempts} attempts: {cause}"
            return MetricRead(unavailable=why), True
        out = MetricRead(sources=[citation])
        try:
            for item in _matrix(data):
                metric = dict(item.get("metric") or {})
                sample_name = str(metric.pop("__name__", name))
                ts, vs = _points(item.get("values") or [])
                out.series.append(
                    Series(
                        name=sample_name,
                        labels={str(k): str(v) for k, v in metric.items()},
                        timestamps=ts,
                        values=vs,
                        family=sample_name,
                    )
                )
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            why = f"Prometheus at {self.url} answered {query} with an unusable result ({exc})"
            return MetricRead(unavailable=why), False
        if not out.series:
            out.sources = []
        return out, False

    # -- HTTP ----------------------------------------------------------------------------------
    def _get(self, path: str, params: dict[str, str]) -> Any:
        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=self._wait,
            sleep=self._sleep,
            retry=retry_if_exception(lambda e: isinstance(e, _Transient)),
            reraise=False,
        )
        return retrying(self._get_once, path, params)

    def _get_once(self, path: str, params: dict[str, str]) -> Any:
        try:
            with self._client.stream("GET", path, params=params) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise _Failed(f"answer larger than {MAX_RESPONSE_BYTES} bytes")
        except httpx.TimeoutException as exc:
            raise _Transient(f"timed out after {self.timeout_s:g} s ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise _Transient(f"unreachable ({type(exc).__name__}: {exc})") from None
        status = response.status_code
        if status in RETRY_STATUSES or status >= 500:
            raise _Transient(f"HTTP {status}", _retry_after(response))
        try:
            doc = httpx.Response(status, content=bytes(body)).json()
        except ValueError:
            raise _Failed(f"HTTP {status} with a body that is not JSON") from None
        if not isinstance(doc, dict):
            raise _Failed(f"HTTP {status} with JSON that is not the API's envelope")
        if doc.get("status") != "success":
            raise _Failed(f"{doc.get('errorType', f'HTTP {status}')}: {str(doc.get('error', ''))[:200]}")
        return doc.get("data")


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _matrix(data: Any) -> list[dict[str, Any]]:
    if (
        not isinstance(data, dict)
        or data.get("resultType") != "matrix"
        or not isinstance(data.get("result"), list)
    ):
        raise ValueError("not a range-query matrix")
    return [item for item in data["result"] if isinstance(item, dict)]


def _points(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    # Prometheus prints values as strings ("NaN", "+Inf" included) so float() reads every one.
    ts = np.fromiter((float(p[0]) for p in values), dtype=np.float64, count=len(values))
    vs = np.fromiter((float(p[1]) for p in values), dtype=np.float64, count=len(values))
    order = np.argsort(ts, kind="stable")
    return ts[order], vs[order]


__all__ = ["MAX_POINTS", "PrometheusMetrics", "choose_step", "selector"]
