"""Per-rank step times from the fleet's Prometheus, as a step source of the watcher.

A PromQL query (``$job`` stands for the job's name, escaped as a string) returns one series per
rank: the recorder's ``forensic_step_compute_seconds`` gauge, say, or a histogram's
``rate(..._sum[1m]) / rate(..._count[1m])``. The series are read with range queries at a fixed
resolution whose evaluation times are multiples of it: evaluation ``t`` becomes watch step
``t / resolution``, the value both the rank's compute time and its duration (the detector takes
the job's step time as the median over ranks). The position is the next evaluation time not yet
read; it is saved with the job's state, so a restarted watcher asks exactly from there: no gap,
no evaluation read twice.

Which series is which rank: the ``rank_label`` when the config names one (its value must be a
whole number), else each distinct (``host_label``, ``gpu_label``) pair gets the next free rank,
in the order first seen, kept with the position. Hosts and GPUs come from the same labels.

What fails never stops the watcher and never reads as healthy: an unreachable Prometheus, an
error answer or a body that is not a range-query matrix leaves the position where it was and
sets :attr:`PrometheusSteps.unread` to the reason (asked again on the next poll); an answer with
no usable series moves on (there is nothing to miss) but is unread as well.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from forensic.harness.watch.follow import MAX_RANKS, Batch

log = logging.getLogger("forensic.watch")

__all__ = ["PrometheusQuery", "PrometheusSteps", "job_query"]


@dataclass(frozen=True)
class PrometheusQuery:
    """Where and how to read one job's per-rank step times (``[watch.prometheus]``)."""

    url: str
    query: str
    rank_label: str = "rank"
    host_label: str = "host"
    gpu_label: str = "gpu"
    resolution_s: float = 15.0
    lag_s: float = 30.0
    lookback_s: float = 3600.0
    max_points: int = 120
    token: str | None = None
    timeout_s: float = 10.0

    def where(self) -> str:
        """What the saved position belongs to: another URL, query, resolution or labels starts over."""
        labels = f"{self.rank_label},{self.host_label},{self.gpu_label}"
        return f"prometheus {self.url} {self.resolution_s:g} {labels} {self.query}"


def job_query(template: str, job: str) -> str:
    """``template`` with ``$job`` replaced by the job's name escaped for a PromQL string."""
    escaped = job.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return template.replace("$job", escaped)


class PrometheusSteps:
    """A step source over one Prometheus range query (the same seam as ``FolderFollower``)."""

    def __init__(
        self,
        q: PrometheusQuery,
        position: dict[str, Any] | None = None,
        *,
        client: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from forensic.sandbox.prometheus import PrometheusMetrics

        self.q = q
        self.res = float(q.resolution_s)
        self._clock = clock
        self.client = client or PrometheusMetrics(q.url, token=q.token, timeout_s=q.timeout_s)
        pos = position or {}
        nxt = pos.get("next")
        self.next: float | None = float(nxt) if isinstance(nxt, int | float) and math.isfinite(nxt) else None
        keys = pos.get("keys") or {}
        self.keys: dict[str, int] = (
            {str(k): int(v) for k, v in keys.items()} if isinstance(keys, dict) else {}
        )
        self.want_placement = True
        self.bad_lines = 0  # series skipped: no usable rank
        self.unread: str | None = None
        self.polls = 0
        self.behind = False  # the last poll stopped at max_points short of the newest evaluation
        self.samples = 0

    def position(self) -> dict[str, Any]:
        return {"next": self.next, "keys": self.keys}

    def poll(self) -> Batch:
        res = self.res
        last = math.floor((self._clock() - self.q.lag_s) / res) * res  # the newest evaluation ripe to read
        start = self.next if self.next is not None else last - math.floor(self.q.lookback_s / res) * res
        if start > last:
            return Batch.empty()
        end = min(last, start + (self.q.max_points - 1) * res)
        self.polls += 1
        got = self.client.query_range(self.q.query, start, end, res)
        if got.unavailable:  # the position stays: the same range is asked again next poll
            self.unread, self.behind = got.unavailable, False
            return Batch.empty()
        batch, why = self._rows(got.series)
        self.next, self.behind = end + res, end < last
        self.unread = why
        return batch

    def _rows(self, series: list[Any]) -> tuple[Batch, str | None]:
        parts: list[Batch] = []
        placement: dict[int, tuple[str, int | None]] = {}
        bad = 0
        rl, hl, gl = self.q.rank_label, self.q.host_label, self.q.gpu_label
        for s in series:
            rank = self._rank(s.labels)
            if rank is None:
                bad += 1
                continue
            host = s.labels.get(hl, "").strip() if hl else ""
            gpu = s.labels.get(gl, "").strip() if gl else ""
            if host and host.isprintable():
                placement[rank] = (
                    host[:253],
                    int(gpu) if gpu.isascii() and gpu.isdigit() and len(gpu) < 5 else None,
                )
            ts = np.asarray(s.timestamps, dtype=np.float64)
            vs = np.asarray(s.values, dtype=np.float64)
            n = ts.size
            parts.append(
                Batch(np.rint(ts / self.res).astype(np.int64), np.full(n, rank, np.int64), ts, vs, vs.copy())
            )
        batch = Batch.concat(parts)
        ok = batch.valid()
        if not ok.all():
            bad += int((~ok).sum())
            batch = batch.take(ok)
        self.bad_lines += bad
        self.samples += len(batch)
        if self.want_placement and placement:
            batch.placement = placement
            self.want_placement = False
        else:
            batch.placement = {}
        if not series:
            return batch, "the query matched no series (is the job running, and are the labels right?)"
        if not len(batch):
            label = f"the label {rl!r}" if rl else f"the labels {hl!r} and {gl!r}"
            return batch, f"{len(series)} series, none usable (each needs {label} naming its rank)"
        return batch, None

    def _rank(self, labels: dict[str, str]) -> int | None:
        if self.q.rank_label:
            v = labels.get(self.q.rank_label, "").strip()
            if not (v.isascii() and v.isdigit()) or len(v) > 7 or int(v) >= MAX_RANKS:
                return None
            return int(v)
        key = f"{labels.get(self.q.host_label, '')}|{labels.get(self.q.gpu_label, '')}"
        if key == "|":
            return None
        rank = self.keys.get(key)
        if rank is None:
            if len(self.keys) >= MAX_RANKS:
                return None
            rank = self.keys[key] = len(self.keys)
        return rank
