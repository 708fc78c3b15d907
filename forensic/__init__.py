"""forensic: an autonomous investigator for GPU training fleets.

One import root for the whole project. The top-level folders of the checkout are mapped under it
by ``pyproject.toml`` (``package-dir``), so the layout stays as users know it while nothing is
installed as a bare ``harness``, ``tools``, ``sandbox`` or ``evals`` module:

- ``forensic.sandbox``: read-only access to evidence (the only code that touches the outside).
- ``forensic.tools``: typed tools and parsers over the sandbox.
- ``forensic.harness``: investigations and the surfaces that drive them (CLI, ...).
- ``forensic.playbooks``: the failure graph as data files.
- ``forensic.evals``: generators, runner and baselines; never imported by the runtime.
"""

__version__ = "0.2.0"
