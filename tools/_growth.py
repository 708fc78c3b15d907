"""Which parts' error counters grew inside the window far beyond their peers' (numpy, one pass).

An error counter counts since the driver loaded or the port was cleared, so its value says when
nothing happened: a GPU with 40,000 correctable ECC errors from last month and none since is
sound today, and hundreds of such old, static counts sit in any large fleet. What marks a fault
in the window is **growth inside it** (two or more readings: a metric series, or the window-start
snapshot and ``now``) on one part, far beyond what its peers grew over the same window.

:func:`outliers` takes every part's growth of one counter family at once and returns the parts
that stand out. A part stands out when its growth is

- at least the family's floor (:class:`Family.floor`: a few corrected bits are noise), and
- above ``PEER_FACTOR`` times the peers' median growth (busy links correct errors all the time;
  one link correcting ten times more is the one to look at), and
- above the peers' median by ``z`` robust standard deviations (MAD), with ``z`` set for the number
  of parts compared (Bonferroni at :data:`FALSE_ALARM` for the fleet: at 16,384 parts a 3.5 cut
  would flag healthy ones).

Parts with a single reading have no growth (NaN) and are never judged; they are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

#: Expected false alarms per family over the whole fleet (sets the robust-z cut by the part count).
FALSE_ALARM = 0.01
#: Growth must exceed this many times the peers' median growth.
PEER_FACTOR = 10.0
#: The robust-z cut never drops below this (few parts).
MIN_Z = 3.5


@dataclass(frozen=True)
class Family:
    """A family of error counters of one kind of part, judged together."""

    #: Signal emitted for a part whose growth stands out.
    signal: str
    #: Kind of part (``gpu`` or ``nic``).
    kind: str
    #: What the counters count, for the finding's sentence.
    what: str
    #: The least growth in the window that can count (below it: noise).
    floor: float


@dataclass(frozen=True)
class Outlier:
    """One part whose growth stands out, with the numbers behind it."""

    index: int
    growth: float
    peer_median: float
    cut: float


def z_cut(n: int) -> float:
    """Robust-z cut for ``n`` parts compared at once (Bonferroni at :data:`FALSE_ALARM`)."""
    if n <= 1:
        return MIN_Z
    return max(MIN_Z, NormalDist().inv_cdf(1.0 - FALSE_ALARM / n))


def outliers(growth: np.ndarray, floor: float) -> tuple[list[Outlier], float, int]:
    """The parts whose ``growth`` (NaN: not judged) stands out from the others', the peers'
    median growth, and how many parts were judged."""
    g = np.asarray(growth, dtype=float)
    ok = np.isfinite(g)
    n = int(ok.sum())
    if n == 0:
        return [], 0.0, 0
    vals = g[ok]
    med = float(np.median(vals))
    mad = 1.4826 * float(np.median(np.abs(vals - med)))
    cut = max(floor, PEER_FACTOR * med, med + z_cut(n) * mad)
    hit = np.flatnonzero(ok & (g >= cut) & (g > med))
    return [Outlier(int(i), float(g[i]), med, cut) for i in hit], med, n


def snapshot_growth(now: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Growth from a window-start reading to ``now``; a drop is a reset (counted from zero);
    NaN where either reading is missing."""
    now, before = np.asarray(now, dtype=float), np.asarray(before, dtype=float)
    with np.errstate(invalid="ignore"):
        grown = np.where(now >= before, now - before, now)
    return np.where(np.isfinite(now) & np.isfinite(before), grown, np.nan)


__all__ = ["FALSE_ALARM", "Family", "Outlier", "PEER_FACTOR", "outliers", "snapshot_growth", "z_cut"]
