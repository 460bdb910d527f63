"""Run at start by every kernel and Jupyter server the tests start (`tests.support.kernel.TEST_SITE`, first on
their PYTHONPATH), and by the processes those start.

jsonschema imports rfc3987-syntax when it is installed (jupyter-events has it installed), and that module
builds an Earley grammar as it is imported: 1.5 s of CPU in a kernel's first notebook edit (nbformat's
validation; its import took 1.64 s with it, 0.10 s without) and 1.7 s in each Jupyter server's start, which
the suite pays in about a hundred processes (python-jsonschema/jsonschema#1428). It is marked as absent here,
so jsonschema goes without its `iri` format check, which neither notebook validation nor Jupyter's events
make. Nothing else changes.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]
