"""Calibration: does a confidence of 0.8 mean right four times in five?

Two measures over the investigator's cases, each case being (confidence of its verdict, whether
the verdict was exactly right):

- a reliability table: cases grouped in confidence buckets (``[0.0, 0.5)``, ``[0.5, 0.7)``,
  ``[0.7, 0.9)``, ``[0.9, 0.97)``, ``[0.97, 1.0]``), with each bucket's mean confidence and its
  accuracy; a calibrated investigator has the two close in every bucket;
- the Brier score: the mean of ``(confidence - correct)^2`` (0 is perfect; always answering with
  confidence 0.5 scores 0.25).

A case that crashed counts as confidence 0 and wrong. The status is kept apart: a wrong verdict
that says ``confirmed`` is the costly kind, and ``wrong_confirmed`` counts them.
"""

from __future__ import annotations

from typing import Any

#: Lower edges of the confidence buckets; the last bucket includes 1.0.
BUCKETS = (0.0, 0.5, 0.7, 0.9, 0.97)


def _pairs(cases: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    out = []
    for c in cases:
        conf = c.get("got", {}).get("confidence")
        out.append(
            (
                float(conf) if isinstance(conf, int | float) else 0.0,
                bool(c["root_cause_ok"] and c["component_ok"]),
            )
        )
    return out


def brier(cases: list[dict[str, Any]]) -> float | None:
    pairs = _pairs(cases)
    if not pairs:
        return None
    return round(sum((p - float(ok)) ** 2 for p, ok in pairs) / len(pairs), 4)


def reliability(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per non-empty bucket: its range, n, mean confidence and accuracy."""
    rows = []
    pairs = _pairs(cases)
    for i, lo in enumerate(BUCKETS):
        hi = BUCKETS[i + 1] if i + 1 < len(BUCKETS) else 1.0
        last = i + 1 == len(BUCKETS)
        inside = [(p, ok) for p, ok in pairs if lo <= p < hi or (last and p == 1.0)]
        if not inside:
            continue
        rows.append(
            {
                "bucket": f"[{lo:.2f}, {hi:.2f}{']' if last else ')'}",
                "lo": lo,
                "hi": hi,
                "n": len(inside),
                "mean_confidence": round(sum(p for p, _ in inside) / len(inside), 4),
                "accuracy": round(sum(ok for _, ok in inside) / len(inside), 4),
            }
        )
    return rows


def wrong_confirmed(cases: list[dict[str, Any]]) -> int:
    return sum(
        1
        for c in cases
        if c.get("got", {}).get("status") == "confirmed" and not (c["root_cause_ok"] and c["component_ok"])
    )


def calibration(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``calibration`` block of the eval document."""
    return {
        "brier": brier(cases),
        "reliability": reliability(cases),
        "wrong_confirmed": wrong_confirmed(cases),
    }
