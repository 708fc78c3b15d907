"""``forensic bench recorder``: what the step recorder costs a training step.

The recorder runs in the training loop, so its cost is paid by every rank every step. This
measures it directly: the time of ``with rec.step(i) as s: s.compute_done()`` around an empty
step (real files, flushed every row), amortised parameter checksums of a model of
``params`` floats every ``checksum_every`` steps, and the Prometheus textfile; and states it as a
share of a ``step_s`` step (target: under 1% of 100 ms).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from forensic.record import StepRecorder

TARGET_PCT = 1.0


def _per_step(steps: int, **kw: Any) -> float:
    with tempfile.TemporaryDirectory(prefix="forensic-bench-") as d:
        rec = StepRecorder(Path(d) / "steps", cuda=False, rank=0, host="bench", **kw)
        t0 = time.perf_counter()
        for i in range(steps):
            with rec.step(i) as s:
                s.compute_done()
                s.loss = 1.0
        elapsed = time.perf_counter() - t0
        rec.close()
    return elapsed / steps


def recorder_benchmark(
    steps: int = 20_000, step_s: float = 0.1, params: int = 1_000_000, checksum_every: int = 100
) -> dict[str, Any]:
    """Per-step cost of the recorder in three setups, and the worst as a share of ``step_s``."""
    model = [np.ones(params, dtype=np.float32)]
    with tempfile.TemporaryDirectory(prefix="forensic-bench-prom-") as prom:
        setups = {
            "csv": _per_step(steps),
            "csv+textfile": _per_step(steps, textfile_dir=prom),
            "csv+checksum": _per_step(
                max(checksum_every * 5, steps // 4), model=model, checksum_every=checksum_every
            ),
        }
    worst = max(setups.values())
    pct = 100.0 * worst / step_s
    return {
        "steps": steps,
        "step_s": step_s,
        "params": params,
        "checksum_every": checksum_every,
        "per_step_us": {k: round(v * 1e6, 2) for k, v in setups.items()},
        "overhead_pct": round(pct, 4),
        "target_pct": TARGET_PCT,
        "ok": pct < TARGET_PCT,
    }


def format_benchmark(r: dict[str, Any]) -> str:
    lines = [f"step recorder overhead against a {r['step_s'] * 1000:g} ms step:"]
    for k, v in r["per_step_us"].items():
        lines.append(f"  {k:<14} {v:>9.2f} us/step  ({100 * v / 1e6 / r['step_s']:.4f}%)")
    lines.append(
        f"worst: {r['overhead_pct']:.4f}% (target < {r['target_pct']:g}%): {'OK' if r['ok'] else 'OVER TARGET'}"
    )
    return "\n".join(lines)
