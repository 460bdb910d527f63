"""Notebook checks: a quality gate (`notebook: PATH`) that passes when the notebook gives the same results on
the workspace as it was before the run and as it is now (`architect_nb.checks`).

The before side is written into a temporary folder by the engine (`write_before`, from the run's first
snapshots); both sides run at once in fresh kernels. A difference, or a side that could not finish, fails the
gate, and the report (redacted) goes back to the model so it can keep fixing.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from architect_nb.config.schema import QualityGateConfig
from architect_nb.execution.gates.gate_result import QualityGateResult

__all__ = ["run_notebook_gate"]


def run_notebook_gate(
    gate: QualityGateConfig, workspace_root: Path, write_before: Callable[[Path], list[str]] | None
) -> QualityGateResult:
    from architect_nb.checks import compare_notebook_runs

    started = time.perf_counter()

    def result(passed: bool, output: str) -> QualityGateResult:
        return QualityGateResult.judged(gate, started, passed, output)

    if write_before is None:
        return result(False, "a notebook check needs the run's snapshots: run it from the agent's engine")
    notebook = Path(gate.notebook or "")
    if notebook.is_absolute() or ".." in notebook.parts:
        return result(False, f"{gate.notebook}: a notebook check names a notebook inside the workspace")
    with tempfile.TemporaryDirectory(prefix="architect-before-") as folder:
        before = Path(folder) / workspace_root.name
        try:
            notes = write_before(before)
        except Exception as exc:  # the gate reports; the agent loop never sees an exception
            return result(False, f"the workspace before the run could not be written: {exc}")
        checked = compare_notebook_runs(
            notebook,
            before=before,
            after=workspace_root,
            compare=gate.compare,
            stability=gate.stability,
            cell_timeout=float(gate.timeout),
            timeout=float(gate.timeout),
        )
    checked.notes += notes
    return result(checked.same, checked.brief())  # the model reads the gate's output's last 2,000 characters
