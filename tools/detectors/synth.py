"""Synthetic data-parallel fleets with known stragglers, for tests and benchmarks.

The noise model is what a healthy fleet shows: a job-level step time that drifts (shared by all
ranks), a small static per-rank offset (hardware variation), per-step jitter shared by a rack and
by a host, independent per-rank noise, and rare large hiccups spread over everyone (GC pauses, OS
noise: the diffuse tail). Ranks sit 8 per host and 32 hosts per rack. Injected stragglers multiply
a rank's compute by (1 + slowdown) from their onset (``persistent``, ``from_start``) or on a random
fraction of steps (``intermittent``). Arrays are generated in step chunks, in float32, in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

RANKS_PER_HOST = 8
HOSTS_PER_RACK = 32

Kind = Literal["persistent", "from_start", "intermittent"]


@dataclass(frozen=True)
class Injected:
    """One injected straggler (the truth a detector should find)."""

    rank: int
    kind: Kind
    slowdown: float
    """Fractional slowdown of its compute (0.05 = 5% slower) while slow."""
    onset: int
    """First slow step (position in time order)."""
    fraction: float = 1.0
    """Fraction of steps after the onset that are slow (intermittent < 1)."""


@dataclass(frozen=True)
class Noise:
    """Standard deviations, as fractions of the step's compute time."""

    rank: float = 0.01
    rack: float = 0.005
    host: float = 0.003
    static: float = 0.002
    tail_prob: float = 1e-3
    tail_max: float = 0.3
    drift: float = 0.003


@dataclass
class Fleet:
    """A synthetic steps table as arrays, with its truth."""

    compute: np.ndarray
    duration: np.ndarray
    start: np.ndarray
    step_time: np.ndarray
    truth: list[Injected] = field(default_factory=list)

    @property
    def rank_host(self) -> dict[int, str]:
        """Rank id -> host name, 8 ranks per host."""
        r = self.compute.shape[1]
        return {j: f"gpu-{j // RANKS_PER_HOST:04d}" for j in range(r)}


def fill_compute(
    out: np.ndarray,
    rng: np.random.Generator,
    truth: Sequence[Injected] = (),
    noise: Noise = Noise(),
    base_s: float = 1.0,
    chunk: int = 256,
) -> np.ndarray:
    """Fill ``out`` (S, R) float32 with per-rank compute seconds, chunk by chunk; returns it."""
    s_n, r_n = out.shape
    host = np.arange(r_n) // RANKS_PER_HOST
    rack = host // HOSTS_PER_RACK
    n_host, n_rack = int(host[-1]) + 1, int(rack[-1]) + 1
    static = np.asarray(1.0 + noise.static * rng.standard_normal(r_n), dtype=np.float32)
    phase = rng.uniform(0, 2 * np.pi)
    level = base_s * (1.0 + noise.drift * np.sin(2 * np.pi * np.arange(s_n) / 500.0 + phase))
    slow_masks = {}
    for inj in truth:
        m = np.zeros(s_n, dtype=bool)
        m[inj.onset :] = True
        if inj.fraction < 1.0:
            m &= rng.random(s_n) < inj.fraction
        slow_masks[inj.rank] = (m, inj.slowdown)
    for i0 in range(0, s_n, chunk):
        i1 = min(s_n, i0 + chunk)
        blk = out[i0:i1]
        rng.standard_normal(out=blk, dtype=np.float32)
        blk *= np.float32(noise.rank)
        n = i1 - i0
        blk += (noise.rack * rng.standard_normal((n, n_rack))).astype(np.float32)[:, rack]
        blk += (noise.host * rng.standard_normal((n, n_host))).astype(np.float32)[:, host]
        if noise.tail_prob > 0:
            k = rng.binomial(n * r_n, noise.tail_prob)
            if k:
                cells = rng.integers(0, n * r_n, size=k)
                blk.reshape(-1)[cells] += rng.uniform(0.05, noise.tail_max, size=k).astype(np.float32)
        blk += np.float32(1.0)
        blk *= static
        blk *= level[i0:i1, None].astype(np.float32)
        for r, (m, sd) in slow_masks.items():
            blk[m[i0:i1], r] *= np.float32(1.0 + sd)
    return out


def make_fleet(
    ranks: int,
    steps: int,
    seed: int = 0,
    truth: Sequence[Injected] = (),
    noise: Noise = Noise(),
    comm_s: float = 0.25,
    gap_s: float = 0.02,
) -> Fleet:
    """A whole fleet: compute, duration (step time plus per-rank jitter), start times."""
    rng = np.random.default_rng(seed)
    compute = fill_compute(np.empty((steps, ranks), dtype=np.float32), rng, list(truth), noise)
    # Every rank leaves the barrier together: its duration is the step time, give or take timer noise.
    step_time = compute.max(axis=1).astype(np.float64) + comm_s * (1 + 0.02 * rng.standard_normal(steps))
    duration = (step_time[:, None] * (1 + 1e-4 * rng.standard_normal((steps, ranks)))).astype(np.float32)
    gaps = gap_s + np.abs(0.005 * rng.standard_normal(steps))
    start = 1.7e9 + np.concatenate(([0.0], np.cumsum(step_time + gaps)[:-1]))
    return Fleet(compute=compute, duration=duration, start=start, step_time=step_time, truth=list(truth))


def random_stragglers(
    rng: np.random.Generator,
    ranks: int,
    steps: int,
    n_persistent: int = 4,
    n_from_start: int = 2,
    n_intermittent: int = 2,
    slowdown: tuple[float, float] = (0.01, 0.10),
) -> list[Injected]:
    """Distinct random ranks with the three kinds of slowdown, 1-10% by default."""
    total = n_persistent + n_from_start + n_intermittent
    who = rng.choice(ranks, size=total, replace=False)
    out: list[Injected] = []
    for i, r in enumerate(who):
        sd = float(rng.uniform(*slowdown))
        if i < n_persistent:
            out.append(
                Injected(int(r), "persistent", sd, int(rng.integers(int(0.3 * steps), int(0.7 * steps))))
            )
        elif i < n_persistent + n_from_start:
            out.append(Injected(int(r), "from_start", sd, 0))
        else:
            out.append(Injected(int(r), "intermittent", sd, 0, float(rng.uniform(0.1, 0.3))))
    return out
