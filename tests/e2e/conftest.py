"""End-to-end tests start real servers and take minutes: they run only when asked for by marker.

``python -m pytest -q`` (the README's command) skips them; ``python -m pytest -q -m llm`` (what
``.ci/run`` runs after installing the model server) runs them.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "llm" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="starts a local model server and takes minutes: run with -m llm")
    for item in items:
        if item.get_closest_marker("llm") is not None:
            item.add_marker(skip)
