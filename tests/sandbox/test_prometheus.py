"""The Prometheus metric source against scripted HTTP answers (httpx.MockTransport)."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
from forensic.sandbox.prometheus import MAX_POINTS, PrometheusMetrics, choose_step, selector


def _matrix(*series: tuple[dict, list]) -> dict:
    return {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [{"metric": m, "values": [[t, str(v)] for t, v in pts]} for m, pts in series],
        },
    }


def _source(handler, **kw) -> tuple[PrometheusMetrics, list[httpx.Request], list[float]]:
    seen: list[httpx.Request] = []
    slept: list[float] = []

    def wrapped(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    src = PrometheusMetrics(
        "http://prom.test:9090/",
        transport=httpx.MockTransport(wrapped),
        sleep=slept.append,
        clock=lambda: 10_000.0,
        **kw,
    )
    return src, seen, slept


def test_query_range_is_parsed_into_series_with_labels_times_and_values() -> None:
    body = _matrix(
        (
            {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "3", "Hostname": "h1"},
            [(120, 61), (60, "NaN"), (180, "+Inf")],
        )
    )
    src, seen, _ = _source(lambda r: httpx.Response(200, json=body))
    got = src.series("DCGM_FI_DEV_GPU_TEMP", {"Hostname": "h1"}, 0.0, 3600.0)
    assert got.unavailable is None and len(got.series) == 1
    s = got.series[0]
    assert s.name == "DCGM_FI_DEV_GPU_TEMP" and s.labels == {"gpu": "3", "Hostname": "h1"}
    assert s.timestamps.tolist() == [60.0, 120.0, 180.0]  # sorted
    assert np.isnan(s.values[0]) and s.values[1] == 61.0 and np.isinf(s.values[2])
    q = seen[0].url.params
    assert seen[0].url.path == "/api/v1/query_range"
    assert q["query"] == 'DCGM_FI_DEV_GPU_TEMP{Hostname="h1"}'
    assert (float(q["start"]), float(q["end"]), float(q["step"])) == (0.0, 3600.0, 15.0)
    assert got.sources == [
        'prometheus:http://prom.test:9090/api/v1/query_range?query=DCGM_FI_DEV_GPU_TEMP{Hostname="h1"}'
    ]


def test_step_follows_the_window_and_stays_under_the_point_limit() -> None:
    assert choose_step(0, 3600, 15) == 15
    week = 7 * 86400
    step = choose_step(0, week, 15)
    assert step > 15 and week / step < MAX_POINTS
    # an open range asks for the last hour before "now"
    src, seen, _ = _source(lambda r: httpx.Response(200, json=_matrix()))
    src.series("up")
    assert float(seen[0].url.params["end"]) == 10_000.0 and float(seen[0].url.params["start"]) == 6_400.0


def test_label_values_are_escaped_and_bad_names_refused() -> None:
    assert selector("m", {"a": 'x"} or vector(1) #'}) == 'm{a="x\\"} or vector(1) #"}'
    with pytest.raises(ValueError):
        selector("m or vector(1)")
    src, seen, _ = _source(lambda r: httpx.Response(200, json=_matrix()))
    got = src.series("up", {"bad-label": "x"})
    assert got.unavailable and "label" in got.unavailable and seen == []


def test_5xx_and_429_are_retried_then_succeed() -> None:
    answers = [
        httpx.Response(503),
        httpx.Response(429, headers={"retry-after": "1"}),
        httpx.Response(200, json=_matrix(({"__name__": "up"}, [(1, 1)]))),
    ]
    src, seen, slept = _source(lambda r: answers.pop(0))
    got = src.series("up", None, 0, 60)
    assert len(got.series) == 1 and len(seen) == 3
    assert slept[1] == 1.0  # the server's retry-after


@pytest.mark.parametrize("failure", ["refused", "timeout", "garbage", "error-envelope", "500"])
def test_prometheus_down_slow_or_garbage_gives_a_reason_never_an_exception(failure: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if failure == "refused":
            raise httpx.ConnectError("connection refused", request=request)
        if failure == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if failure == "garbage":
            return httpx.Response(200, content=b"<html>not the API</html>")
        if failure == "error-envelope":
            return httpx.Response(
                400, json={"status": "error", "errorType": "bad_data", "error": "parse error"}
            )
        return httpx.Response(500)

    src, seen, _ = _source(handler, attempts=2)
    got = src.series("up", None, 0, 60)
    assert got.series == [] and got.unavailable
    assert "prom.test" in got.unavailable
    if failure in ("refused", "timeout", "500"):
        assert len(seen) == 2  # retried once
        # Down: later queries do not wait out the timeouts again.
        again = src.series("other", None, 0, 60)
        assert again.unavailable and len(seen) == 2
    else:
        assert len(seen) == 1  # not worth a retry


def test_a_result_that_is_not_a_matrix_is_unavailable() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": []}}
    src, _, _ = _source(lambda r: httpx.Response(200, content=json.dumps(body).encode()))
    assert "unusable" in (src.series("up", None, 0, 60).unavailable or "")
