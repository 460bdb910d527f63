"""Notebook checks: a notebook run before and after a change, in two fresh kernels at once, and its outputs
compared by meaning, cell by cell (docs/notebook-check.md).

- `api`: `compare_notebook_runs(notebook, before=DIR, after=DIR, ...)`, the check.
- `sides` and `side`: each side's run, in a process and kernel of its own, with timeouts that never hang.
- `kernel_helper`: the code each kernel runs first, so DataFrames and arrays arrive as values.
- `outputs`, `normalise`, `rules`: what a cell showed, what is taken out, and when two outputs are the same.
- `compare`: cells matched and compared; unstable cells apart. `result`: `CheckResult` and its report.
- `cli`: `python -m architect_nb check NOTEBOOK --before DIR --after DIR`.

In the tools layer: it runs notebooks and compares them, and knows nothing of runs, agents or the notebook
front end (the gate and the magic materialise the before side and call it). It depends on no other package of
`architect_nb` (nbclient, nbformat and pillow are imported when a check runs).
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.checks.api import compare_notebook_runs
    from architect_nb.checks.result import CheckResult, Difference

__all__ = ["CheckResult", "Difference", "compare_notebook_runs"]

__getattr__ = lazy_exports(
    __name__,
    {"CheckResult": ".result", "Difference": ".result", "compare_notebook_runs": ".api"},
)
