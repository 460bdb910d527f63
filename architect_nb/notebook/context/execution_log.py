"""What this kernel ran since architect_nb was loaded: each execution's count, the cell it came from, and its
error, kept by a `post_run_cell` hook.

IPython keeps the sources it ran (`In`) and the results (`Out`), but not which cell each came from, nor the
errors: `sys.last_value` holds only the last one. The notebook outline needs both: to tell a cell edited
since it ran (its source differs from what ran as its [n]), and, where no notebook can be read (nbclient,
papermill, a console), to show the errors of the cells that ran. An error is kept as the nbformat output a
front end would have shown, with its frames read once (no frame objects are kept alive).
"""

from __future__ import annotations

import traceback
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["Execution", "ExecutionLog", "current_log", "error_output", "install", "uninstall"]

_MAX_ENTRIES = 5000
_MAX_FRAMES = 8


@dataclass(frozen=True, slots=True)
class Execution:
    count: int
    cell_id: str | None
    error: dict[str, Any] | None  # an nbformat error output


def error_output(shell: Any, error: BaseException) -> dict[str, Any]:
    """`error` as an nbformat error output: its type, message and last frames, as IPython labels them."""
    frames = traceback.extract_tb(error.__traceback__)[-_MAX_FRAMES:]
    compiler = getattr(shell, "compile", None)
    entries = []
    for frame in frames:
        label = None
        format_name = getattr(compiler, "format_code_name", None)
        if callable(format_name):
            try:
                label = format_name(frame.filename)
            except Exception:  # an odd compiler: the file name will do
                label = None
        where = (
            f"{label[0]} {label[1]}, line {frame.lineno}"
            if label
            else f"File {frame.filename}:{frame.lineno}"
        )
        if not label and frame.name != "<module>":
            where += f", in {frame.name}"
        code = (frame.line or "").strip()
        entries.append(f"{where}\n----> {frame.lineno} {code}" if code else where)
    message = "".join(traceback.format_exception_only(type(error), error)).strip()
    return {
        "output_type": "error",
        "ename": type(error).__name__,
        "evalue": str(error)[:2000],
        "traceback": [*entries, message],
    }


class ExecutionLog:
    """The executions of one kernel, by count (the last `_MAX_ENTRIES`)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.entries: OrderedDict[int, Execution] = OrderedDict()

    def on_post_run_cell(self, result: Any) -> None:
        count = getattr(result, "execution_count", None)
        if not isinstance(count, int):
            return  # a silent run, or one not stored in the history
        info = getattr(result, "info", None)
        cell_id = getattr(info, "cell_id", None)
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        self.entries[count] = Execution(
            count=count,
            cell_id=cell_id if isinstance(cell_id, str) else None,
            error=error_output(self.shell, error) if isinstance(error, BaseException) else None,
        )
        while len(self.entries) > _MAX_ENTRIES:
            self.entries.popitem(last=False)

    def snapshot(self) -> dict[int, Execution]:
        return dict(self.entries)


_log: ExecutionLog | None = None


def install(shell: Any) -> ExecutionLog:
    global _log  # noqa: PLW0603 - one log per kernel process
    if _log is None or _log.shell is not shell:
        _log = ExecutionLog(shell)
    events = getattr(shell, "events", None)
    if events is not None and _log.on_post_run_cell not in events.callbacks.get("post_run_cell", []):
        events.register("post_run_cell", _log.on_post_run_cell)
    return _log


def uninstall(shell: Any) -> None:
    global _log  # noqa: PLW0603
    if _log is None:
        return
    events = getattr(shell, "events", None)
    if events is not None and _log.on_post_run_cell in events.callbacks.get("post_run_cell", []):
        events.unregister("post_run_cell", _log.on_post_run_cell)
    _log = None


def current_log() -> ExecutionLog | None:
    return _log
