"""run_cell: run a cell of the open notebook in the person's namespace, as they would, and see its outputs.

The cell runs in the kernel as the person's own run would (`KernelSession.run_cell`: their variables, the
history, the next execution count, autoreload and the plotting hooks), and its outputs and execution count
then replace the cell's in the open document, so they are in the view at once and saved with the notebook.
It asks first in every mode but yolo, showing the cell's code (`code_to_run`, which also refuses what
cannot run before anybody is asked); the code run is the code shown, or the call is refused. It is refused
where no front end has the notebook open (a headless run, VS Code, a console), for the running
`%%architect` cell (and any other), a cell being typed in, one queued or running, and a cell that is not
code. The kernel's stop button interrupts it, and the run with it.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field

from architect_nb.tools.base import BaseTool, ToolRefusedError, ToolResult
from architect_nb.tools.filesystem.fileio import TextFile
from architect_nb.tools.kernel.kernel_undo import kernel_snapshot
from architect_nb.tools.kernel.session import CellExecution, KernelSession, OwnNotebook
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.notebook_files.backend import DocumentError, DocumentState
from architect_nb.tools.notebook_files.cellops import CellOp, CellOpError
from architect_nb.tools.notebook_files.model import Notebook, NotebookError, cell_source
from architect_nb.tools.notebook_files.outputs import error_text, output_images, strip_ansi
from architect_nb.tools.search.scan import joined_text
from architect_nb.tools.state_snapshot import StateSnapshot
from architect_nb.tools.workspace import ToolArgs

__all__ = ["RunCellArgs", "RunCellTool"]

_TEXT_LIMIT = 8000
_MAX_IMAGES = 4


class RunCellArgs(ToolArgs):
    cell: str = Field(description="Cell id or 'index:N'.")


class _RefusedError(Exception):
    """The cell cannot be run; the message says why and what to do instead."""


class RunCellTool(BaseTool):
    name = "run_cell"
    description = "Run a notebook cell in the user's namespace as they would; its outputs replace the cell's."
    args_model = RunCellArgs
    sensitive = True
    runs_code = True

    def __init__(self, session: KernelSession, *, undo_budget: int | None = None) -> None:
        self.session = session
        self.undo_budget = undo_budget  # bytes for the copies undo restores (None: tied to free memory)
        self._shown: dict[str, tuple[str, str]] = {}  # the cell ref -> (id, source) the approval showed
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the cell the call names

    def _target(self, ref: str) -> tuple[OwnNotebook, DocumentState, dict[str, Any], int]:
        own = self.session.own_notebook()
        if isinstance(own, str):
            raise _RefusedError(f"{own}. Run code with run_python, or propose_cell for the user to run.")
        state = own.document.read()
        notebook = Notebook(shown=own.path, file=TextFile(text=""), data=state.data)
        try:
            index = notebook.find(ref)
        except NotebookError as exc:
            raise _RefusedError(str(exc)) from None
        cell = notebook.cells[index]
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        label = f"cell {index}"
        if cell.get("cell_type") != "code":
            raise _RefusedError(f"{label} is a {cell.get('cell_type')} cell; only code cells run.")
        if (cell_id is not None and cell_id == own.running_cell) or cell_source(cell).lstrip().startswith(
            "%%architect"
        ):
            raise _RefusedError(
                f"{label} is an %%architect cell (this run's own cell, or another run); it is never run by "
                "run_cell."
            )
        if cell_id is not None and cell_id == state.editing:
            raise _RefusedError(
                f"The user is typing in {label} right now, so it was not run. Ask them to leave the cell, or "
                "run another."
            )
        if cell_id is not None and cell_id in state.busy:
            raise _RefusedError(f"{label} is running or queued to run already; it was not run again.")
        if not cell_source(cell).strip():
            raise _RefusedError(f"{label} is empty; there is nothing to run.")
        return own, state, cell, index

    def code_to_run(self, kwargs: dict[str, Any]) -> str | None:
        """The cell's code, shown for approval and checked by the guardrails."""
        ref = str(kwargs.get("cell", ""))
        try:
            _own, _state, cell, _index = self._target(ref)
        except _RefusedError as exc:
            raise ToolRefusedError(str(exc)) from None
        except DocumentError as exc:
            raise ToolRefusedError(f"The notebook could not be read: {exc}") from None
        source = cell_source(cell)
        with self._lock:
            self._shown[ref] = (str(cell.get("id") or ""), source)
        return source

    def snapshot_state(self, kwargs: dict[str, Any]) -> StateSnapshot | None:
        """The person's variables the cell's code may change (the code the approval shows), kept for undo."""
        with self._lock:
            shown = self._shown.get(str(kwargs.get("cell", "")))
        if shown is None:
            return None
        return kernel_snapshot(self.session, shown[1], into_namespace=True, budget_bytes=self.undo_budget)

    # ------------------------------------------------------------------ running it

    def execute(self, **kwargs: Any) -> ToolResult:
        args = RunCellArgs.model_validate(kwargs)
        try:
            own, _state, cell, index = self._target(args.cell)
        except _RefusedError as exc:
            return ToolResult.fail(str(exc))
        except DocumentError as exc:
            return ToolResult.fail(f"The notebook could not be read: {exc}")
        source = cell_source(cell)
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        with self._lock:
            shown = self._shown.pop(args.cell, None)
        if shown is not None and (shown[0] != (cell_id or "") or shown[1] != source):
            return ToolResult.fail(
                f"cell {index} changed after it was shown for approval (the user edited it), so it was not "
                "run. Read it again; call run_cell again if it should run as it is now."
            )
        execution = self.session.run_cell(source, cell_id)
        where = self._write_back(own, cell_id, source, execution)
        return _result(index, execution, where)

    @staticmethod
    def _write_back(own: OwnNotebook, cell_id: str | None, source: str, execution: CellExecution) -> str:
        if cell_id is None:
            return " Its outputs could not be put in the notebook (the cell has no id)."
        op = CellOp.set_outputs(cell_id, execution.outputs, execution.execution_count, source)
        try:
            own.document.apply([op])
        except (DocumentError, CellOpError) as exc:
            return f" Its outputs could not be put in the notebook: {exc}"
        return " Its outputs are in the notebook now (saved when the user saves)."


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return strip_ansi(joined_text(output.get("text")))
    if kind == "error":
        return error_text(output)
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    assert isinstance(data, dict)
    text = joined_text(data.get("text/plain"))
    return strip_ansi(text) if text else f"({', '.join(sorted(data)) or 'empty output'})"


def _result(index: int, execution: CellExecution, where: str) -> ToolResult:
    parts = []
    for output in execution.outputs:
        text = _output_text(output).rstrip()
        if len(text) > _TEXT_LIMIT:
            text = (
                text[: _TEXT_LIMIT // 2]
                + f"\n[... {len(text) - _TEXT_LIMIT} characters cut ...]\n"
                + text[-_TEXT_LIMIT // 2 :]
            )
        kind = output.get("output_type")
        parts.append(f"[{kind if kind != 'stream' else output.get('name', 'stdout')}]\n{text}")
    ran = (
        f"cell {index} ran as [{execution.execution_count}]."
        if execution.execution_count
        else f"cell {index} ran."
    )
    body = "\n".join(parts) or "(no output)"
    images = output_images(execution.outputs, f"cell {index}")[:_MAX_IMAGES]
    meta: ToolMetadata = {"images": images} if images else {}
    if execution.interrupted:
        meta["interrupted"] = True
        return ToolResult.fail(
            f"The user interrupted {ran[:-1]} (the kernel's stop button).{where}", body, **meta
        )
    if execution.error is not None:
        return ToolResult.fail(f"{ran[:-1]} and raised {execution.error}.{where}", body, **meta)
    return ToolResult.ok(f"{ran}{where}\n{body}", **meta)
