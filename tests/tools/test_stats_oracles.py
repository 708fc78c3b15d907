"""The detectors' statistics and the OpenMetrics parser against independent implementations
(scipy and prometheus_client), used here as test-only oracles: the project's own versions exist
for speed and bounded memory, and these tests say they compute the same thing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from forensic.tools.detectors._stats import mann_whitney_z, normal_ppf
from forensic.tools.parsers.openmetrics import parse_openmetrics
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from scipy import stats


def test_normal_ppf_equals_scipy_across_the_range() -> None:
    p = np.concatenate(
        [np.logspace(-300, -1, 2000), np.linspace(0.01, 0.99, 2001), 1 - np.logspace(-16, -1, 500)]
    )
    got, want = normal_ppf(p), stats.norm.ppf(p)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@given(st.floats(min_value=1e-300, max_value=1 - 1e-16, exclude_max=True))
def test_normal_ppf_inverts_the_normal_cdf(p: float) -> None:
    assert normal_ppf(np.array([p]))[0] == pytest.approx(stats.norm.ppf(p), rel=1e-12, abs=1e-12)


def _scipy_z(base: np.ndarray, late: np.ndarray) -> float:
    """z of U for ``late > base`` from scipy's asymptotic test, tie-corrected, no continuity."""
    res = stats.mannwhitneyu(late, base, alternative="greater", method="asymptotic", use_continuity=False)
    return float(stats.norm.isf(res.pvalue))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=2, max_size=60),
    st.lists(st.integers(0, 30), min_size=2, max_size=60),
    st.floats(0.5, 3.0),
)
def test_mann_whitney_z_equals_scipy_with_ties(base: list[int], late: list[int], scale: float) -> None:
    a, b = np.array(base, dtype=float) * scale, np.array(late, dtype=float) * scale
    if np.unique(np.concatenate([a, b])).size < 2:
        assert mann_whitney_z(a, b) == 0.0  # every value tied: no evidence either way
        return
    want = _scipy_z(a, b)
    if not math.isfinite(want):  # beyond what scipy's p-value can represent
        return
    assert mann_whitney_z(a, b) == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_mann_whitney_z_on_step_times_with_a_late_shift() -> None:
    rng = np.random.default_rng(7)
    base = rng.lognormal(0.0, 0.05, 400)
    late = rng.lognormal(0.03, 0.05, 300)
    late[::17] = np.nan  # missing steps are left out, as scipy never sees them
    z = mann_whitney_z(base, late)
    assert z > 4 and z == pytest.approx(_scipy_z(base, late[np.isfinite(late)]), rel=1e-9)


_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: not n.endswith(("_total", "_created", "_info", "_count", "_sum", "_bucket"))
)
_LABEL = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,10}", fullmatch=True)
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from('\\"\n'), max_size=20
)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        _NAME,
        st.lists(
            st.tuples(st.dictionaries(_LABEL, _TEXT, max_size=3), st.floats(-1e12, 1e12, allow_nan=False)),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_openmetrics_samples_equal_prometheus_client(families: dict) -> None:
    lines, t = [], 1_776_390_000.0
    for name, samples in families.items():
        lines.append(f"# TYPE {name} gauge")
        seen = set()
        for k, (labels, value) in enumerate(samples):
            key = tuple(sorted(labels.items()))
            if key in seen:  # one sample per series here: the oracle refuses repeats without time order
                continue
            seen.add(key)
            text = ",".join(f'{n}="{_escape(v)}"' for n, v in sorted(labels.items()))
            lines.append(
                f"{name}{{{text}}} {value!r} {t + k:.3f}" if text else f"{name} {value!r} {t + k:.3f}"
            )
    doc = "\n".join(lines) + "\n# EOF\n"
    want = sorted(
        (s.name, tuple(sorted(s.labels.items())), s.value, float(s.timestamp))
        for fam in text_string_to_metric_families(doc)
        for s in fam.samples
    )
    ours = parse_openmetrics(doc)
    got = sorted(
        (s.name, tuple(sorted(s.labels.items())), float(v), float(ts))
        for s in ours.series
        for ts, v in zip(s.timestamps, s.values, strict=True)
    )
    assert got == want
    assert ours.skipped_lines == 0
