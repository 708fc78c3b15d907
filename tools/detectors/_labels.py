"""Labels for findings: column positions to rank ids and hosts, row positions to step numbers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Labels:
    """Maps column and row positions to rank ids, hosts and step numbers."""

    steps: np.ndarray | None = None
    ranks: np.ndarray | None = None
    #: Rank id to host; rank ids are ints, or strings in maps read from JSON.
    rank_host: dict[Any, str] | None = None

    def step(self, i: int | None) -> int | None:
        if i is None or i < 0 or self.steps is None or i >= len(self.steps):
            return None
        return int(self.steps[i])

    def rank(self, j: int | np.integer) -> int:
        return int(self.ranks[j]) if self.ranks is not None else int(j)

    def host(self, j: int | np.integer) -> str | None:
        if not self.rank_host:
            return None
        r = self.rank(j)
        h = self.rank_host.get(r)
        if h is None:
            h = self.rank_host.get(str(r))  # maps read from JSON carry string keys
        return None if h is None else str(h)


def finite(v: float, default: float = 0.0) -> float:
    return float(v) if v is not None and math.isfinite(v) else default
