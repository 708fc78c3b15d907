"""Watch: follow live jobs, run the streaming detectors, open investigations through intake.

``forensic watch`` (standalone) and ``[watch]`` in serve.toml (inside ``forensic serve``) run the
same :class:`Watcher`: it follows each job's step files (:mod:`.follow`), runs a
:class:`~forensic.tools.detectors.watch.WatchDetector` per job, and hands each finding to intake
as an alert (:func:`finding_alert`). It never decides a verdict: investigations do. docs/watch.md.
"""

from forensic.harness.watch.follow import FolderFollower, Row, StepAssembler
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
    "Row",
    "StateStore",
    "StepAssembler",
    "WatchedJob",
    "Watcher",
    "finding_alert",
    "jobs_in",
]
