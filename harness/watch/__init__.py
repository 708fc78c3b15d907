"""Watch: follow live jobs, run the streaming detectors, open investigations through intake.

``forensic watch`` (standalone) and ``[watch]`` in serve.toml (inside ``forensic serve``) run the
same :class:`Watcher`: it follows each job's step files (:mod:`.follow`) or its per-rank series in
Prometheus (:mod:`.prom`), both behind :class:`~.follow.StepSource`, runs a
:class:`~forensic.tools.detectors.watch.WatchDetector` per job, and hands each finding to intake
as an alert (:func:`finding_alert`). It never decides a verdict: investigations do. docs/watch.md.
"""

from forensic.harness.watch.follow import FolderFollower, Row, StepAssembler, StepSource
from forensic.harness.watch.prom import PrometheusQuery, PrometheusSteps
from forensic.harness.watch.watcher import (
    ALERTNAME,
    FileStateStore,
    StateStore,
    WatchedJob,
    Watcher,
    finding_alert,
    jobs_in,
)

__all__ = [
    "ALERTNAME",
    "FileStateStore",
    "FolderFollower",
    "PrometheusQuery",
    "PrometheusSteps",
    "Row",
    "StateStore",
    "StepAssembler",
    "StepSource",
    "WatchedJob",
    "Watcher",
    "finding_alert",
    "jobs_in",
]
