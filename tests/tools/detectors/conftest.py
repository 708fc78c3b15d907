"""Every detector test runs twice: on the numpy route and on the compiled kernel (``_fast``).

The kernel normally runs only on large arrays (``_fast.MIN_ELEMENTS``); here the threshold is
lowered to 0 so that the small test arrays take it too. Without numba the compiled run is
skipped, except under CI (CI=true), where numba is part of the test extra and its absence fails.
"""

from __future__ import annotations

import os

import pytest
from forensic.tools.detectors import _fast


@pytest.fixture(autouse=True, params=["numpy", "numba"])
def scan_route(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setitem(_fast._state, "enabled", False)
        return "numpy"
    monkeypatch.setitem(_fast._state, "enabled", True)
    if not _fast.available():
        if os.environ.get("CI") == "true":
            pytest.fail(f"numba is missing under CI: {_fast._state['error']}")
        pytest.skip("numba is not installed (pip install 'forensic-harness[fast]')")
    monkeypatch.setattr(_fast, "MIN_ELEMENTS", 0)
    return "numba"
