"""Replica divergence: data-parallel replicas must agree.

A rank whose parameter checksum disagrees with its replica group, with no error anywhere, is the
signature of silent data corruption; a rank whose loss runs away from its step's is the same story
seen from the loss.
"""

from __future__ import annotations

import math

import numpy as np
from forensic.tools.detectors._labels import Labels as _Labels
from forensic.tools.detectors._scan import _REF_SAMPLE, _row_quartiles, _sample
from forensic.tools.detectors._stats import IQR_TO_SIGMA, binomial_critical_count, normal_sf
from forensic.tools.detectors.models import DivergentRank, ReplicaDivergence

__all__ = ["replica_divergence"]

_MIN_COUNT = 3


def _checksum_divergence(checksum: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Per rank: steps in the minority of their step's checksums, and the first such step."""
    s_n, r_n = checksum.shape
    flat = checksum.ravel()
    have = (flat != None) & (flat != "")  # noqa: E711 (elementwise on an object array)
    n_bad = np.zeros(r_n, dtype=np.int64)
    first = np.full(r_n, -1, dtype=np.int64)
    if not have.any():
        return n_bad, first, math.nan
    cell = np.flatnonzero(have)
    _, code = np.unique(flat[cell].astype(str), return_inverse=True)
    step = cell // r_n
    key = step * (int(code.max()) + 1) + code
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    cell_count = cnt[inv]
    modal = np.zeros(s_n, dtype=np.int64)
    np.maximum.at(modal, step, cell_count)
    # Replicas of one data-parallel group agree; with tensor/pipeline parallelism several groups
    # coexist, each large. A rank sharing its checksum with less than half the modal group is the
    # odd one out; when every checksum is unique there is nothing to compare against.
    odd = (modal[step] >= 2) & (cell_count * 2 < modal[step])
    rank = cell % r_n
    n_bad = np.bincount(rank[odd], minlength=r_n)
    first_bad = np.full(r_n, np.iinfo(np.int64).max)
    np.minimum.at(first_bad, rank[odd], step[odd])
    first = np.where(n_bad > 0, first_bad, -1)
    big = cell_count >= 2
    groups = np.zeros(s_n)
    if big.any():
        _, g_first = np.unique(key[big], return_index=True)
        groups = np.bincount(step[big][g_first], minlength=s_n).astype(np.float64)
    with_data = np.bincount(step, minlength=s_n) > 0
    return n_bad, first, float(np.median(groups[with_data])) if with_data.any() else math.nan


def _loss_divergence(
    loss: np.ndarray, alpha: float, cut_z: float = 6.0
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per rank: steps whose loss is far from its step's (or not finite while the others are).

    Each rank trains on its own micro-batch, so losses differ; a replica that diverged sits many
    robust sigmas away from its step's median, or reports inf. NaN means "not logged".
    """
    s_n, r_n = loss.shape
    k = np.zeros(r_n, dtype=np.int64)
    n = np.zeros(r_n, dtype=np.int64)
    first = np.full(r_n, -1, dtype=np.int64)
    rows = max(1, (4 << 20) // max(1, 8 * r_n))
    for i0 in range(0, s_n, rows):
        blk = np.asarray(loss[i0 : i0 + rows], dtype=np.float64)
        finite = np.where(np.isfinite(blk), blk, np.nan).astype(np.float32)
        q1, med, q3 = _row_quartiles(_sample(finite, _REF_SAMPLE))
        scale = np.maximum((q3 - q1) * IQR_TO_SIGMA, 1e-6 * np.abs(med) + 1e-12)[:, None]
        logged = ~np.isnan(blk)
        with np.errstate(invalid="ignore"):
            far = np.abs(blk - med[:, None]) > cut_z * scale
            odd = logged & np.isfinite(med)[:, None] & (~np.isfinite(blk) | far)
        n += logged.sum(axis=0)
        k += odd.sum(axis=0)
        hit = odd.any(axis=0) & (first < 0)
        first[hit] = i0 + odd[:, hit].argmax(axis=0)
    # A loss that is merely noisy should not count: the null rate is the fleet's own, pooled.
    p0 = max(2 * normal_sf(cut_z), float(k.sum()) / max(float(n.sum()), 1.0))
    crit = max(_MIN_COUNT, binomial_critical_count(int(n.max()) if n.size else 0, p0, alpha / max(r_n, 1)))
    return np.where(k >= crit, k, 0), first, crit


def _divergence(checksum, loss, lab: _Labels, alpha: float) -> ReplicaDivergence:
    flagged: list[DivergentRank] = []
    groups = None
    if checksum is not None:
        n_bad, first, groups = _checksum_divergence(np.asarray(checksum, dtype=object))
        for j in np.flatnonzero(n_bad):
            flagged.append(
                DivergentRank(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    kind="checksum",
                    first_index=int(first[j]),
                    first_step=lab.step(int(first[j])),
                    n_steps=int(n_bad[j]),
                )
            )
    if loss is not None:
        k, first, _ = _loss_divergence(loss, alpha)
        for j in np.flatnonzero(k):
            flagged.append(
                DivergentRank(
                    rank=lab.rank(j),
                    host=lab.host(j),
                    kind="loss",
                    first_index=int(first[j]),
                    first_step=lab.step(int(first[j])),
                    n_steps=int(k[j]),
                )
            )
    flagged.sort(key=lambda f: (f.first_index, f.rank, f.kind))
    groups = None if groups is None or not math.isfinite(groups) else groups
    return ReplicaDivergence(
        checksum_checked=checksum is not None,
        loss_checked=loss is not None,
        flagged=flagged,
        groups_per_step=groups,
    )


def replica_divergence(
    checksum: np.ndarray | None = None,
    loss: np.ndarray | None = None,
    *,
    steps: np.ndarray | None = None,
    ranks: np.ndarray | None = None,
    rank_host: dict[int, str] | None = None,
    alpha: float = 0.01,
) -> ReplicaDivergence:
    """Ranks whose replica disagrees with its peers, and the first step it did.

    ``checksum`` (S, R) object array of ``param_checksum`` strings (None = not logged): a rank
    whose checksum is shared by fewer than half as many ranks as the step's largest group is
    flagged (any such step: replicas must agree exactly). ``loss`` (S, R): a rank whose loss is
    more than 6 robust sigmas from its step's median (or not finite while the others are) on more
    steps than the pooled binomial null allows.
    """
    return _divergence(checksum, loss, _Labels(steps, ranks, rank_host), alpha)
