"""Evaluation-incident generator for forensic.

Writes ``<case>/bundle/...`` (the layout and formats of ``spec/bundle.md``) and ``<case>/truth.json``
from a seed: a fleet of 8-GPU hosts running a synchronous job, one injected root cause (or none),
benign decoys, and every file printed the way the real tool prints it.

Public API::

    from forensic.evals.generator import IncidentSpec, generate, build_suite, CAUSES
    generate(IncidentSpec(case="case-001", cause="thermal_throttle", seed=7, hosts=16), "out/")
"""

from __future__ import annotations

from .faults import CAUSES
from .incident import IncidentSpec, build, generate
from .suite import EXAMPLES, HOLDOUT, INCIDENTS, build_suite

__all__ = ["CAUSES", "IncidentSpec", "build", "generate", "build_suite", "EXAMPLES", "INCIDENTS", "HOLDOUT"]
