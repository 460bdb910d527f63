"""`KernelFacts`: what the kernel knows about the running `%%architect` cell and what ran before it, taken on
the kernel's main thread as the cell starts (the agent's worker must not touch IPython's state).

The running cell's id comes with JupyterLab's and Notebook 7's execute request; its execution count and
source from IPython; the notebook's file from VS Code (`__vsc_ipynb_file__`) or from the Jupyter server that
started the kernel (`JPY_SESSION_NAME`); what ran from `In`, `Out` and the execution log.
"""

from __future__ import annotations

import os
import reprlib
import sys
from dataclasses import dataclass, field
from typing import Any

from architect_nb.notebook.context.execution_log import Execution, current_log, error_output

__all__ = ["KernelFacts", "gather_facts", "running_count"]

_RESULTS_KEPT = 60  # results of the last executions, described for the kernel's-history outline
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 300
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 12


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelFacts:
    cell_id: str | None = None
    count: int | None = None  # the running cell's execution count
    raw_cell: str = ""  # the running cell as typed ("%%architect ...\n<task>")
    inputs: tuple[str, ...] = ()  # In, raw: index n is what ran as [n]
    results: dict[int, dict[str, Any]] = field(default_factory=dict)  # [n] -> execute_result output
    executions: dict[int, Execution] = field(default_factory=dict)  # [n] -> cell id and error
    last_error: dict[str, Any] | None = None  # sys.last_value as an error output (maybe from before the log)
    vscode_file: str | None = None
    session_file: str | None = None
    cwd: str = ""

    def ran_as(self, count: int | None, cell_id: str | None) -> bool | None:
        """Whether the cell with `cell_id` is what ran as [count] here: True, False, or None (unknown)."""
        if count is None:
            return None
        execution = self.executions.get(count)
        if execution is None or execution.cell_id is None or cell_id is None:
            return None
        return execution.cell_id == cell_id


def _result(value: Any) -> dict[str, Any]:
    """An `Out` value as the execute_result a front end would show, briefly (a DataFrame's head and shape)."""
    data: dict[str, Any]
    shape = getattr(value, "shape", None)
    if all(hasattr(value, attr) for attr in ("head", "columns", "dtypes")) and isinstance(shape, tuple):
        try:
            head = value.head().to_string()
        except Exception:  # a frame-like object that cannot print its head
            head = ""
        data = {"text/plain": f"{head}\n\n[{shape[0]} rows x {shape[1]} columns]"}
    else:
        try:
            data = {"text/plain": _SHORT.repr(value)}
        except Exception as exc:
            data = {"text/plain": f"<{type(value).__name__}: repr failed ({type(exc).__name__})>"}
    return {"output_type": "execute_result", "data": data, "metadata": {}}


def running_count(shell: Any) -> int | None:
    """The running cell's execution count: where IPython stored it in the history as it started (IPython 9
    moves `execution_count` on as a cell starts, earlier versions as it ends)."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if isinstance(raw, list) and len(raw) > 1:
        return len(raw) - 1
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def gather_facts(shell: Any, cell_id: str | None, raw_cell: str) -> KernelFacts:
    """The facts of the running cell; call on the kernel's main thread."""
    if shell is None:
        return KernelFacts(cell_id=cell_id, raw_cell=raw_cell, cwd=os.getcwd())
    history = getattr(shell, "history_manager", None)
    inputs = tuple(str(line) for line in (getattr(history, "input_hist_raw", None) or ()))
    outputs = shell.user_ns.get("Out")
    results: dict[int, dict[str, Any]] = {}
    if isinstance(outputs, dict):
        for count in sorted(k for k in outputs if isinstance(k, int))[-_RESULTS_KEPT:]:
            results[count] = _result(outputs[count])
    log = current_log()
    last = getattr(sys, "last_value", None)
    vscode = shell.user_ns.get("__vsc_ipynb_file__")
    return KernelFacts(
        cell_id=cell_id,
        count=running_count(shell),
        raw_cell=raw_cell,
        inputs=inputs,
        results=results,
        executions=log.snapshot() if log is not None else {},
        last_error=error_output(shell, last) if isinstance(last, BaseException) else None,
        vscode_file=vscode if isinstance(vscode, str) and vscode else None,
        session_file=os.environ.get("JPY_SESSION_NAME") or None,
        cwd=os.getcwd(),
    )
