"""The watcher: follow jobs, run the detector, hand findings to intake as alerts.

A finding becomes one alert of Alertmanager's webhook (version 4), ``alertname="ForensicWatch"``,
with the job label, the host and GPU when it names one, the finding's numbers in its annotations
and a fingerprint made from the job, the subject and the step it was found at. It goes through
the same intake as any alert (the service's writer in ``forensic serve``, the webhook over HTTP
when standalone), so it is grouped with other alerts of the job or host, deduplicated by
fingerprint, mapped to evidence, investigated, notified and approved like one.

Exactly-once openings across restarts: the detector's state, the assembler's pending steps, the
follower's offsets and the alerts not yet accepted are saved together, atomically, after each poll
that changed anything (:class:`StateStore`). A watcher killed between handing an alert over and
saving reads the same rows again, finds the same finding at the same step and sends the same
fingerprint, which intake counts as a duplicate: no second investigation.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from forensic.harness.watch.follow import FolderFollower, StepAssembler, StepSource
from forensic.harness.watch.prom import PrometheusQuery, PrometheusSteps
from forensic.tools.detectors.watch import Finding, WatchConfig, WatchDetector

log = logging.getLogger("forensic.watch")

__all__ = ["ALERTNAME", "FileStateStore", "StateStore", "WatchedJob", "Watcher", "finding_alert", "jobs_in"]

ALERTNAME = "ForensicWatch"
_STATE_VERSION = 1


@dataclass(frozen=True)
class WatchedJob:
    """A job to follow: its name (the job label of its alerts) and where its steps are read: the
    folder its ranks write to, or a Prometheus query (``prometheus``; ``folder`` is then unused)."""

    name: str
    folder: Path | None = None
    prometheus: PrometheusQuery | None = None

    def where(self) -> str:
        return self.prometheus.where() if self.prometheus is not None else str(self.folder)

    def source(self, position: dict[str, Any] | None = None) -> StepSource:
        if self.prometheus is not None:
            return PrometheusSteps(self.prometheus, position)
        if self.folder is None:
            raise ValueError(f"job {self.name}: neither a folder nor a Prometheus query")
        return FolderFollower(self.folder, {str(k): int(v) for k, v in (position or {}).items()})


class StateStore(Protocol):
    """Where a watcher keeps each job's position and state between runs (one blob per job)."""

    def load(self, job: str) -> bytes | None: ...
    def save(self, job: str, data: bytes) -> None: ...


class FileStateStore:
    """One file per job in a folder, replaced atomically (write, fsync, rename)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _path(self, job: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in job)[:80]
        return self.folder / f"{safe}-{hashlib.sha256(job.encode()).hexdigest()[:12]}.npz"

    def load(self, job: str) -> bytes | None:
        try:
            return self._path(job).read_bytes()
        except FileNotFoundError:
            return None

    def save(self, job: str, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(job)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _describe(job: str, f: Finding) -> str:
    where = f"rank {f.rank}" if f.rank is not None else ""
    if f.host:
        where += f" on {f.host}" + (f" GPU {f.gpu}" if f.gpu is not None else "")
    what = {
        "rank_slowdown": f"{where} computes {f.effect:.1%} slower than its own baseline since step {f.onset_step}",
        "rank_slow_from_start": f"{where} computes {f.effect:.1%} slower than the job's typical rank since its start",
        "rank_stalls": f"{where} stalls intermittently ({f.evidence.get('stall_episodes')} stalls in "
        f"{f.evidence.get('over_steps')} steps, the fleet's rate is {f.evidence.get('fleet_episode_rate')})",
        "rank_stopped": f"{where} stopped reporting steps at step {f.onset_step} while its peers go on",
        "host_slowdown": f"host {f.host}: {len(f.ranks)} ranks compute {f.effect:.1%} slower than their baselines "
        f"since step {f.onset_step}",
        "job_slowdown": f"the whole job's step time is {f.effect:.1%} above its baseline since about step {f.onset_step}",
    }[f.kind]
    return f"{job}: {what.strip()}"


def finding_alert(
    job: str, f: Finding, *, job_label: str = "training_job", now: float | None = None
) -> dict[str, Any]:
    """The Alertmanager alert (webhook version 4) a finding is handed to intake as."""
    t = f.start_unix if math.isfinite(f.start_unix) else (now if now is not None else time.time())
    labels = {"alertname": ALERTNAME, job_label: job, "severity": "watch", "watch_kind": f.kind}
    if f.host:
        labels["Hostname"] = f.host
    if f.gpu is not None:
        labels["gpu"] = str(f.gpu)
    if f.rank is not None:
        labels["rank"] = str(f.rank)
    text = _describe(job, f)
    evidence = {
        "kind": f.kind,
        "step": f.step,
        "onset_step": f.onset_step,
        "effect": f.effect,
        **({"rank": f.rank} if f.rank is not None else {}),
        **({"ranks": f.ranks[:64]} if f.ranks else {}),
        **f.evidence,
    }
    key = f"{job}|{f.subject}|{f.kind}|{f.step}"
    return {
        "status": "firing",
        "labels": labels,
        "annotations": {
            "summary": text[:300],
            "description": f"{text}. No alert rule fired: found by forensic watch from the job's per-rank step times.",
            "forensic_window_end": _iso(t),
            "watch_evidence": json.dumps(evidence, sort_keys=True)[:4000],
        },
        "startsAt": _iso(t),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "",
        "fingerprint": hashlib.sha256(key.encode()).hexdigest()[:16],
    }


class _JobState:
    def __init__(self, job: WatchedJob, follower: StepSource) -> None:
        self.job = job
        self.follower = follower
        self.unread_since: float | None = None
        self.assembler = StepAssembler()
        self.detector: WatchDetector | None = None
        self.unsent: list[dict[str, Any]] = []
        self.steps = 0
        self.findings = 0
        self.dirty = False


class Watcher:
    """Follows ``jobs`` (a list, or a callable listing them now), hands alerts to ``sink``.

    ``sink(alerts)`` must return only once intake has accepted them (it raises otherwise; they
    are kept and handed over again on the next poll).
    """

    def __init__(
        self,
        jobs: list[WatchedJob] | Callable[[], list[WatchedJob]],
        sink: Callable[[list[dict[str, Any]]], None],
        store: StateStore,
        cfg: WatchConfig | None = None,
        *,
        job_label: str = "training_job",
        poll_s: float = 5.0,
        sources: Callable[[WatchedJob, dict[str, Any] | None], StepSource] | None = None,
    ) -> None:
        self._jobs = jobs
        self.sink = sink
        self.store = store
        self.cfg = cfg or WatchConfig()
        self.job_label = job_label
        self.poll_s = poll_s
        #: Opens a job's source at a saved position (tests hand a Prometheus double in here).
        self.sources = sources or (lambda job, position: job.source(position))
        self.state: dict[str, _JobState] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- one pass ------------------------------------------------------------------------------
    def poll_once(self) -> list[Finding]:
        found: list[Finding] = []
        jobs = self._jobs() if callable(self._jobs) else self._jobs
        for job in jobs:
            st = self.state.get(job.name) or self._resume(job)
            try:
                found += self._advance(st)
            except Exception:  # one job's bad data must not stop the others
                log.exception("watch: job %s", job.name)
        return found

    def _advance(self, st: _JobState) -> list[Finding]:
        rows = st.follower.poll()
        self._say_unread(st)
        if len(rows) or rows.placement:
            st.dirty = True
            st.assembler.add(rows)
            if st.assembler.restarted:  # a restart may come with another placement: read it again
                st.assembler.restarted = False
                st.follower.want_placement = True
        found: list[Finding] = []
        asm = st.assembler
        for step, start, dur, comp in asm.ready():
            det = st.detector
            if det is None or det.n_ranks != asm.n_ranks or asm.placement_changed:
                # first step, or a relaunch with another world size or placement: a new detector
                hosts, gpus = asm.placement()
                det = st.detector = WatchDetector(asm.n_ranks, self.cfg, hosts=hosts, gpus=gpus)
                asm.placement_changed = False
            if dur.shape[0] != det.n_ranks:
                continue
            new = det.update(step, start, dur, comp)
            st.steps += 1
            for f in new:
                log.warning("watch: %s", _describe(st.job.name, f))
                st.unsent.append(finding_alert(st.job.name, f, job_label=self.job_label))
            found += new
            st.findings += len(new)
        if st.unsent:
            st.dirty = True
            try:
                self.sink(list(st.unsent))
            except Exception as exc:
                log.warning("watch: %d alert(s) of %s not accepted yet: %s", len(st.unsent), st.job.name, exc)
            else:
                st.unsent = []
        if st.dirty:
            self.store.save(st.job.name, self._dump(st))
            st.dirty = False
        return found

    def _say_unread(self, st: _JobState) -> None:
        """A source that cannot be read is said once when it stops, and again when it recovers."""
        why = st.follower.unread
        if why and st.unread_since is None:
            st.unread_since = time.time()
            log.error("watch: job %s is not being watched: %s (%s)", st.job.name, why, st.job.where()[:200])
        elif not why and st.unread_since is not None:
            log.warning(
                "watch: job %s is read again after %.0f s", st.job.name, time.time() - st.unread_since
            )
            st.unread_since = None

    # -- state ---------------------------------------------------------------------------------
    def _dump(self, st: _JobState) -> bytes:
        asm_meta, arrays = st.assembler.to_state()
        meta = {
            "version": _STATE_VERSION,
            "job": st.job.name,
            "folder": st.job.where(),
            "offsets": st.follower.position(),
            "assembler": asm_meta,
            "unsent": st.unsent,
            "steps": st.steps,
            "findings": st.findings,
        }
        det = st.detector.to_bytes() if st.detector is not None else b""
        buf = io.BytesIO()
        named: dict[str, Any] = {
            "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            "detector": np.frombuffer(det, dtype=np.uint8),
            **arrays,
        }
        np.savez(buf, **named)
        return buf.getvalue()

    def _resume(self, job: WatchedJob) -> _JobState:
        data = self.store.load(job.name)
        if data:
            try:
                with np.load(io.BytesIO(data), allow_pickle=False) as z:
                    meta = json.loads(bytes(z["meta"]).decode())
                    det = bytes(z["detector"])
                    arrays = {k: z[k] for k in ("asm_last_seen", "asm_duration", "asm_compute")}
                if meta.get("version") != _STATE_VERSION or meta.get("folder") != job.where():
                    raise ValueError("another version, folder or query")
                asm = StepAssembler.from_state(meta["assembler"], arrays)
                detector = WatchDetector.from_bytes(det, self.cfg) if det else None
                st = _JobState(job, self.sources(job, meta["offsets"]))
            except Exception as exc:  # a state that does not load: start over, and say so
                log.warning("watch: state of %s not resumed (%s); following it from the start", job.name, exc)
            else:
                st.assembler = asm
                st.detector = detector
                st.unsent = [a for a in meta.get("unsent", []) if isinstance(a, dict)]
                st.steps, st.findings = int(meta.get("steps", 0)), int(meta.get("findings", 0))
                log.info("watch: %s resumed at step %s", job.name, asm.emitted)
                self.state[job.name] = st
                return st
        st = self.state[job.name] = _JobState(job, self.sources(job, None))
        return st

    # -- the loop ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="forensic-watch", daemon=True)
        self._thread.start()

    def run(self) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                self.poll_once()
            except Exception:
                log.exception("watch: poll failed")
            self._stop.wait(max(0.0, self.poll_s - (time.monotonic() - t0)))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def status(self) -> list[dict[str, Any]]:
        return [
            {
                "job": s.job.name,
                "folder": s.job.where(),
                # never silent: a source that cannot be read is not a healthy job
                "source": "unread" if s.follower.unread else "read",
                **({"unread": s.follower.unread} if s.follower.unread else {}),
                "ranks": s.detector.n_ranks if s.detector else 0,
                "steps": s.steps,
                "last_step": s.assembler.emitted,
                "findings": s.findings,
                "unsent": len(s.unsent),
            }
            for s in list(self.state.values())  # the API reads it while the watcher's thread polls
        ]


def jobs_in(folder: Path) -> list[WatchedJob]:
    """Every subfolder of ``folder`` holding step files is a job named after the subfolder."""
    out = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for e in entries:
        if e.is_dir(follow_symlinks=False) and FolderFollower(Path(e.path))._names():
            out.append(WatchedJob(e.name, Path(e.path)))
    return out
