"""Straggler and slowdown detectors over per-rank, per-step timings (``job/steps.csv``).

Public API::

    load_steps_csv(text) -> StepTable                 read job/steps.csv (reading rules of the spec)
    analyze(table, rank_host=None) -> StepAnalysis    the whole suite
    barrier_tax, tax_attribution, peer_outliers, change_points, spikes,
    uniform_slowdown, replica_divergence              the detectors, on (steps, ranks) arrays
    StreamingDetectors(n_ranks, baseline_steps)       the same, one step at a time
    detector_benchmark, detection_benchmark, format_benchmark

Modules: ``steps`` (reader), ``core`` (per-rank detectors, barrier tax, the suite; re-exports
the other two detectors), ``slowdown`` (job level), ``divergence`` (replicas), ``stream``,
``models`` (results), ``bench``, ``synth`` (synthetic fleets with known stragglers). Underscored
modules are internals: ``_scan`` (the one fused pass), ``_stats``, ``_labels``.
"""

from forensic.tools.detectors.bench import detection_benchmark, detector_benchmark, format_benchmark
from forensic.tools.detectors.core import (
    analyze,
    barrier_tax,
    change_points,
    peer_outliers,
    spikes,
    tax_attribution,
)
from forensic.tools.detectors.divergence import replica_divergence
from forensic.tools.detectors.models import (
    BarrierTax,
    ChangeFlag,
    ChangePoints,
    DivergentRank,
    HostShare,
    PeerFlag,
    PeerOutliers,
    RankShare,
    ReplicaDivergence,
    SpikeFlag,
    Spikes,
    StepAnalysis,
    Straggler,
    StreamSnapshot,
    TaxAttribution,
    UniformSlowdown,
)
from forensic.tools.detectors.slowdown import uniform_slowdown
from forensic.tools.detectors.steps import StepTable, load_steps_csv
from forensic.tools.detectors.stream import StreamingDetectors

__all__ = [
    "BarrierTax",
    "ChangeFlag",
    "ChangePoints",
    "DivergentRank",
    "HostShare",
    "PeerFlag",
    "PeerOutliers",
    "RankShare",
    "ReplicaDivergence",
    "SpikeFlag",
    "Spikes",
    "StepAnalysis",
    "StepTable",
    "Straggler",
    "StreamSnapshot",
    "StreamingDetectors",
    "TaxAttribution",
    "UniformSlowdown",
    "analyze",
    "barrier_tax",
    "change_points",
    "detection_benchmark",
    "detector_benchmark",
    "format_benchmark",
    "load_steps_csv",
    "peer_outliers",
    "replica_divergence",
    "spikes",
    "tax_attribution",
    "uniform_slowdown",
]
