"""The Prometheus step source: rows from range answers, positions with no gap and no duplicate
across polls and restarts, and failures that keep the watcher running and say the job is unread.
Against :class:`PromDouble` (Prometheus' range evaluation at the HTTP transport); the real
Prometheus is in ``test_prom_live.py``."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import numpy as np
import pytest
from forensic.harness.service.config import Watch
from forensic.harness.watch import FileStateStore, WatchedJob, Watcher
from forensic.harness.watch.prom import PrometheusQuery, PrometheusSteps, job_query
from forensic.tools.detectors.watch import WatchConfig

from tests.harness.service.conftest import app_client  # noqa: F401  (the in-process service fixture)

from .promdouble import PromDouble
from .recorded import synthetic_steps

RES = 10.0
T0 = 1_750_000_000.0  # a multiple of RES: the first scrape lands 2 s after an evaluation time


def _query(**kw) -> PrometheusQuery:
    base = {"lag_s": 0.0, "lookback_s": 0.0, "resolution_s": RES}
    return PrometheusQuery(
        "http://prom.test:9090", 'forensic_step_compute_seconds{exported_job="j"}', **(base | kw)
    )


def _scraped(
    double: PromDouble, n: int, ranks: int, *, seed: int = 3, slow: dict | None = None, slow_from: int = 0
):
    """``n`` scrapes, 10 s apart, of each rank's compute-time gauge (rank, host, GPU labels)."""
    comp = np.array([s[3] for s in synthetic_steps(n, ranks, seed=seed, slow=slow, slow_from=slow_from)])
    times = T0 + 2.0 + RES * np.arange(n)
    for r in range(ranks):
        double.add(
            {"exported_job": "j", "rank": str(r), "host": f"gpu-{r // 8}", "gpu": str(r % 8)},
            times,
            comp[:, r],
        )
    return times, comp


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_rows_are_the_ranks_values_at_each_evaluation_with_hosts_and_gpus() -> None:
    d = PromDouble()
    times, comp = _scraped(d, 6, 16)
    clock = _Clock(T0 + 60)
    src = PrometheusSteps(_query(lookback_s=60.0), client=d.client(), clock=clock)
    b = src.poll()
    # evaluations T0 .. T0+60: the first (T0) precedes every scrape, so 6 evaluations have data
    assert sorted(set(b.step.tolist())) == [int(T0 / RES) + i for i in range(1, 7)]
    assert len(b) == 6 * 16 and src.unread is None
    at = (b.rank == 11) & (b.step == int(T0 / RES) + 3)
    assert b.compute[at][0] == pytest.approx(comp[2, 11]) and b.duration[at][0] == b.compute[at][0]
    assert b.start[at][0] == T0 + 30
    assert b.placement[11] == ("gpu-1", 3) and src.want_placement is False
    assert d.asked[0][1:] == (T0, T0 + 60, RES)
    assert len(src.poll()) == 0 and len(d.asked) == 1  # nothing ripe: Prometheus is not asked


def test_no_evaluation_is_missed_or_read_twice_across_polls_catch_up_and_a_restart(tmp_path: Path) -> None:
    d = PromDouble()
    times, _ = _scraped(d, 300, 16)
    clock = _Clock(T0 + 5)
    q = _query(lag_s=15.0, lookback_s=0.0, max_points=40)

    def opened(job: WatchedJob, position):
        return PrometheusSteps(job.prometheus, position, client=d.client(), clock=clock)

    job = WatchedJob("j", prometheus=q)
    store = FileStateStore(tmp_path)
    w = Watcher([job], lambda a: None, store, WatchConfig(), poll_s=0, sources=opened)
    for dt in (40, 7, 3, 33, 1000):  # irregular polls, the last far behind (read in parts)
        clock.t += dt
        w.poll_once()
    assert w.state["j"].follower.behind
    w = Watcher([job], lambda a: None, store, WatchConfig(), poll_s=0, sources=opened)  # restarted
    clock.t = times[-1] + 15
    for _ in range(20):
        w.poll_once()
    asked = [(s, e) for _, s, e, _ in d.asked]
    assert all(nxt[0] == prev[1] + RES for prev, nxt in zip(asked, asked[1:], strict=False)), asked
    assert asked[-1][1] == np.floor(times[-1] / RES) * RES  # read up to the last scrape
    st = w.state["j"]
    # every evaluation with a scrape before it is one step, counted once across the restart
    evaluations = int((asked[-1][1] - asked[0][0]) / RES) + 1
    assert st.steps + len(st.assembler.pending) == evaluations == 297
    assert st.assembler.emitted + len(st.assembler.pending) == int(asked[-1][1] / RES)


def test_an_unreachable_prometheus_is_said_once_the_job_is_unread_and_the_same_range_asked_again(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    d = PromDouble()
    _scraped(d, 60, 16)
    clock = _Clock(T0 + 300)

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    d.fail = refused
    src = PrometheusSteps(_query(lookback_s=300.0), client=d.client(), clock=clock)
    w = Watcher(
        [WatchedJob("j", prometheus=src.q)],
        lambda a: None,
        FileStateStore(tmp_path),
        poll_s=0,
        sources=lambda j, p: src,
    )
    with caplog.at_level(logging.INFO, logger="forensic.watch"):
        for _ in range(3):
            w.poll_once()
        (status,) = w.status()
        assert status["source"] == "unread" and "did not answer" in status["unread"] and status["steps"] == 0
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "not being watched" in errors[0].getMessage()
        assert {s for _, s, _, _ in d.asked} == {T0}  # retried from where it stood, never past it
        d.fail = None
        w.poll_once()
    (status,) = w.status()
    assert status["source"] == "read" and "unread" not in status and status["steps"] > 0
    assert d.asked[-1][1] == T0 and any("read again" in r.getMessage() for r in caplog.records)


def _answer(status: int, body: bytes | str, ctype: str = "application/json"):
    return lambda request: httpx.Response(
        status, content=body if isinstance(body, bytes) else body.encode(), headers={"content-type": ctype}
    )


@pytest.mark.parametrize(
    "reply",
    [
        _answer(200, "<html>login</html>", "text/html"),
        _answer(200, "[1, 2, 3]"),
        _answer(200, '{"status": "success", "data": {"resultType": "matr'),  # truncated
        _answer(200, b"\xff\xfe\x00garbage\x00"),
        _answer(400, '{"status": "error", "errorType": "bad_data", "error": "parse error at char 9"}'),
        _answer(200, '{"status": "success", "data": {"resultType": "vector", "result": []}}'),
        _answer(
            200,
            '{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"rank": "0"}, "values": [["x", "y"]]}]}}',
        ),
        _answer(
            200,
            '{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"rank": "0"}, "values": [[1]]}]}}',
        ),
        _answer(
            200,
            '{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"rank": "0"}, "values": "abc"}]}}',
        ),
        _answer(503, "overloaded"),
    ],
)
def test_answers_that_are_not_a_range_matrix_leave_the_position_and_say_why(reply) -> None:
    d = PromDouble()
    d.fail = reply
    src = PrometheusSteps(_query(lookback_s=100.0), client=d.client(), clock=_Clock(T0 + 100))
    assert len(src.poll()) == 0
    assert src.unread and "Prometheus at http://prom.test:9090" in src.unread
    assert src.next is None and src.position()["next"] is None  # the same range is asked next time
    d.fail = None
    assert len(src.poll()) == 0 and src.unread and "no series" in src.unread
    assert src.next == T0 + 110  # an empty answer has nothing to miss: the position moves


def test_series_without_a_usable_rank_or_value_are_skipped_counted_and_never_read_as_healthy() -> None:
    d = PromDouble()
    t = [T0 + 2, T0 + 12]
    for labels in ({}, {"rank": "-1"}, {"rank": "²"}, {"rank": "1e3"}, {"rank": "99999999"}, {"rank": " 3 "}):
        d.add({"host": "h", **labels}, t, [1.0, 1.0])
    src = PrometheusSteps(_query(lookback_s=20.0), client=d.client(), clock=_Clock(T0 + 20))
    b = src.poll()
    assert b.rank.tolist() == [3, 3] and src.bad_lines == 5 and src.unread is None
    d.series = [s for s in d.series if s[0].get("rank") != " 3 "]
    d.add({"rank": "7"}, t, [float("nan"), float("inf")])
    d.add({"rank": "8"}, t, [-1.0, 2.0])
    src.next = None
    b = src.poll()
    assert b.rank.tolist() == [8] and b.compute.tolist() == [2.0]
    d.series = [s for s in d.series if s[0].get("rank") not in ("7", "8")]
    src.next = None
    assert len(src.poll()) == 0 and "none usable" in (src.unread or "") and "'rank'" in src.unread


def test_without_a_rank_label_each_host_gpu_pair_keeps_its_rank_across_a_restart() -> None:
    d = PromDouble()
    t = [T0 + 2]
    for host, gpu in (("b", "1"), ("a", "0"), ("b", "0")):
        d.add({"node": host, "dev": gpu}, t, [1.0])
    q = _query(rank_label="", host_label="node", gpu_label="dev", lookback_s=10.0)
    src = PrometheusSteps(q, client=d.client(), clock=_Clock(T0 + 10))
    b = src.poll()
    first = {b.placement[int(r)]: int(r) for r in b.rank}
    assert sorted(first.values()) == [0, 1, 2]
    d.series.reverse()  # another order, and a new GPU
    d.add({"node": "c", "dev": "5"}, [T0 + 12], [1.0])
    d.series = [
        (labels, ts + 10, vs) if labels["node"] != "c" else (labels, ts, vs) for labels, ts, vs in d.series
    ]
    again = PrometheusSteps(q, src.position(), client=d.client(), clock=_Clock(T0 + 20))
    b = again.poll()
    assert again.keys["b|1"] == first[("b", 1)] and again.keys["a|0"] == first[("a", 0)]
    assert again.keys["c|5"] == 3 and sorted(set(b.rank.tolist())) == [0, 1, 2, 3]


def test_the_job_name_cannot_change_the_query() -> None:
    assert (
        job_query('m{exported_job="$job"}', 'x"} or vector(1) #') == 'm{exported_job="x\\"} or vector(1) #"}'
    )
    assert job_query('m{job="$job"}', "a\\b\nc") == 'm{job="a\\\\b\\nc"}'


def test_a_rank_slower_in_the_series_is_found_and_a_healthy_jobs_series_opens_nothing(tmp_path: Path) -> None:
    sick, well = PromDouble(), PromDouble()
    times, _ = _scraped(sick, 220, 16, seed=4, slow={5: 1.10}, slow_from=120)
    _scraped(well, 220, 16, seed=6)
    clock = _Clock(times[-1] + 10)
    doubles = {"sick": sick, "well": well}
    got: list[dict] = []

    def opened(job: WatchedJob, position):
        return PrometheusSteps(job.prometheus, position, client=doubles[job.name].client(), clock=clock)

    jobs = [WatchedJob(n, prometheus=_query(lookback_s=3000.0, max_points=100)) for n in ("well", "sick")]
    w = Watcher(jobs, got.extend, FileStateStore(tmp_path), WatchConfig(), poll_s=0, sources=opened)
    for _ in range(4):
        w.poll_once()
    assert {s["job"]: s["steps"] for s in w.status()} == {"well": 220, "sick": 220}
    assert {a["labels"]["training_job"] for a in got} == {"sick"}
    ranks = [a for a in got if a["labels"].get("watch_kind") in ("rank_slowdown", "host_slowdown")]
    assert [(a["labels"].get("rank"), a["labels"]["Hostname"]) for a in ranks][:1] == [("5", "gpu-0")]


def test_watch_config_names_prometheus_jobs_alone() -> None:
    w = Watch.model_validate({"prometheus": {"url": "http://p:9090", "jobs": ["a", 'b"c']}})
    (qa, qb) = w.prometheus.queries()
    assert qa.query == 'forensic_step_compute_seconds{exported_job="a"}' and qb.query.endswith('"b\\"c"}')
    with pytest.raises(ValueError, match="watch.prometheus"):
        Watch.model_validate({})
    with pytest.raises(ValueError):
        Watch.model_validate({"prometheus": {"url": "http://p:9090", "jobs": []}})


def test_a_service_whose_prometheus_is_down_keeps_watching_and_says_the_job_is_unread(
    app_client,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    from forensic.harness.service.bench import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    c, svc = app_client(
        extra=f'[watch]\npoll_s = 0.05\n[watch.prometheus]\nurl = "{url}"\njobs = ["llm-x"]\n'
    )
    svc.watcher.stop()  # polled here, not by its thread, so the test reads a settled state
    with caplog.at_level(logging.ERROR, logger="forensic.watch"):
        for _ in range(2):
            svc.watcher.poll_once()
    (job,) = c.get("/api/v1/watch", headers=_viewer()).json()["jobs"]
    assert job["job"] == "llm-x" and job["source"] == "unread" and "did not answer" in job["unread"]
    assert job["steps"] == 0 and url in job["folder"]
    assert [r.getMessage() for r in caplog.records if "llm-x" in r.getMessage()][:1] != []
    assert c.get("/api/v1/watch").status_code == 401


def _viewer() -> dict[str, str]:
    from tests.harness.service.conftest import auth

    return auth("ann")


def test_an_answer_too_large_is_refused_unread_and_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import forensic.sandbox.prometheus as prom

    d = PromDouble()
    _scraped(d, 30, 64)
    monkeypatch.setattr(prom, "MAX_RESPONSE_BYTES", 4096)  # the real cap is 256 MB
    src = PrometheusSteps(_query(lookback_s=300.0), client=d.client(), clock=_Clock(T0 + 300))
    assert len(src.poll()) == 0 and "larger than 4096 bytes" in (src.unread or "") and src.next is None
    monkeypatch.setattr(prom, "MAX_RESPONSE_BYTES", 256 << 20)
    assert len(src.poll()) == 30 * 64 and src.unread is None and src.next == T0 + 310
