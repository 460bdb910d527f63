"""Notebook tools: read_notebook, edit_notebook_cell, insert_notebook_cell and delete_notebook_cell.

They read and change `.ipynb` files by cell, so the model never handles raw notebook JSON. Edits keep the
file's layout, the cell ids and every untouched output byte for byte, are validated with `nbformat` before
the atomic write (an invalid result is refused, the file untouched), and are shown as cell-level diffs
(`celldiff`). Cells are named by id or by 'index:N' (0-based), since nbformat 4.4 notebooks have no ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from architect_nb.execution.validators import PathTraversalError, visible
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.diffs import count_changes
from architect_nb.tools.filesystem.edit_file import EditError, plan_edit
from architect_nb.tools.filesystem.fileio import FileAccessError
from architect_nb.tools.notebook_files.celldiff import cell_diff
from architect_nb.tools.notebook_files.model import (
    Notebook,
    NotebookError,
    cell_label,
    cell_source,
    load_notebook,
    new_cell,
    save_notebook,
    set_source,
)
from architect_nb.tools.notebook_files.outline import outline
from architect_nb.tools.workspace import PATH_HELP, ToolArgs, WorkspaceTool

__all__ = [
    "DeleteNotebookCellArgs",
    "DeleteNotebookCellTool",
    "EditNotebookCellArgs",
    "EditNotebookCellTool",
    "InsertNotebookCellArgs",
    "InsertNotebookCellTool",
    "ReadNotebookArgs",
    "ReadNotebookTool",
]

DEFAULT_OUTLINE_CHARS = 256 * 1024
_NB_PATH = PATH_HELP
_CELL = "Cell id, or 'index:N' (0-based)."
_ERRORS = (PathTraversalError, FileAccessError, NotebookError, EditError)


class ReadNotebookArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    include_outputs: bool = Field(False, description="Show outputs' text, not only their types.")


class EditNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    cell_id: str = Field(description=_CELL)
    old_str: str = Field(description="Exact text to replace; must occur once in the cell.")
    new_str: str = Field(description="Replacement text.")


class InsertNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    after_cell_id: str = Field("", description="Insert after this cell (id or 'index:N').")
    index: int = Field(-1, description="Or the new cell's position: 0 first, -1 last.")
    cell_type: Literal["code", "markdown", "raw"] = Field("code", description="Cell type.")
    source: str = Field(description="Cell source.")


class DeleteNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    cell_id: str = Field(description=_CELL)


class ReadNotebookTool(WorkspaceTool):
    name = "read_notebook"
    description = (
        "Outline a .ipynb notebook: kernel, each cell's index, id, type and numbered source, outputs "
        "summarized. Use it, not read_file, on notebooks."
    )
    args_model = ReadNotebookArgs

    def __init__(self, workspace_root: Path, max_chars: int = DEFAULT_OUTLINE_CHARS) -> None:
        super().__init__(workspace_root)
        self.max_chars = max_chars

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ReadNotebookArgs.model_validate(kwargs)
        try:
            target = self.resolve(args.path)
            shown = self.rel(target)
            notebook = load_notebook(target, shown)
        except _ERRORS as exc:
            return ToolResult.fail(str(exc))
        text, cells_shown = outline(notebook, args.include_outputs, self.max_chars)
        return ToolResult.ok(
            text,
            path=shown,
            cells=len(notebook.cells),
            cells_shown=cells_shown,
            nbformat="{}.{}".format(*notebook.version),
        )


class _CellEditTool(WorkspaceTool):
    """The three editing tools: plan the change as new JSON plus a cell diff, then preview or write it."""

    sensitive = True
    mutates_files = True

    def _change(
        self, notebook: Notebook, args: Any
    ) -> tuple[dict[str, Any], str, str]:  # (new data, diff, summary)
        raise NotImplementedError

    def _plan(self, kwargs: dict[str, Any]) -> tuple[Path, Notebook, dict[str, Any], str, str]:
        args = self.args_model.model_validate(kwargs)
        target = self.resolve(args.path)  # type: ignore[attr-defined]
        notebook = load_notebook(target, self.rel(target), for_edit=True)
        data, diff, summary = self._change(notebook, args)
        return target, notebook, data, diff, summary

    def preview(self, **kwargs: Any) -> str | None:
        return self._plan(kwargs)[3]

    def execute(self, **kwargs: Any) -> ToolResult:
        try:
            target, notebook, data, diff, summary = self._plan(kwargs)
            note = save_notebook(target, notebook, data)
        except _ERRORS as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(
                f"Could not write '{visible(str(kwargs.get('path')))}': {exc.strerror or exc}."
            )
        added, removed = count_changes(diff)
        return ToolResult.ok(
            f"{summary} (+{added} -{removed} lines).{note}\n{diff}", path=notebook.shown, diff=diff
        )


def _with_cells(notebook: Notebook, cells: list[dict[str, Any]]) -> dict[str, Any]:
    data = dict(notebook.data)
    data["cells"] = cells
    return data


class EditNotebookCellTool(_CellEditTool):
    name = "edit_notebook_cell"
    description = (
        "Replace one unique piece of text in one notebook cell, as edit_file does; returns the cell diff."
    )
    args_model = EditNotebookCellArgs

    def _change(self, notebook: Notebook, args: Any) -> tuple[dict[str, Any], str, str]:
        index = notebook.find(args.cell_id)
        cell = notebook.cells[index]
        label = cell_label(index, cell)
        plan = plan_edit(cell_source(cell), args.old_str, args.new_str, f"{notebook.shown} [{label}]")
        changed = set_source(cell, plan.new_text)
        cells = list(notebook.cells)
        cells[index] = changed
        diff = cell_diff(notebook.shown, (index, cell), (index, changed))
        summary = f"Edited {label} of {notebook.shown} at line {plan.line}"
        if plan.loose_note:
            summary = f"{plan.loose_note} {summary}"
        return _with_cells(notebook, cells), diff, summary


class InsertNotebookCellTool(_CellEditTool):
    name = "insert_notebook_cell"
    description = "Insert a cell into a .ipynb notebook; returns the cell diff."
    args_model = InsertNotebookCellArgs

    def _change(self, notebook: Notebook, args: Any) -> tuple[dict[str, Any], str, str]:
        n = len(notebook.cells)
        if args.after_cell_id and args.index != -1:
            raise NotebookError("Give after_cell_id or index, not both.")
        if args.after_cell_id:
            position = notebook.find(args.after_cell_id) + 1
        elif args.index != -1:
            if not 0 <= args.index <= n:
                raise NotebookError(
                    f"index {args.index} is out of range: give 0 to {n} ('{notebook.shown}' has {n} cells)."
                )
            position = args.index
        else:
            position = n
        seed = f"{notebook.file.text}\x00{position}\x00{args.cell_type}\x00{args.source}"
        cell = new_cell(notebook, args.cell_type, args.source, seed, position)
        cells = list(notebook.cells)
        cells.insert(position, cell)
        diff = cell_diff(notebook.shown, None, (position, cell))
        return (
            _with_cells(notebook, cells),
            diff,
            f"Inserted {cell_label(position, cell)} into {notebook.shown}",
        )


class DeleteNotebookCellTool(_CellEditTool):
    name = "delete_notebook_cell"
    description = "Delete one notebook cell. Only works if the workspace allows deletion."
    args_model = DeleteNotebookCellArgs

    def __init__(self, workspace_root: Path, allow_delete: bool = False) -> None:
        super().__init__(workspace_root)
        self.allow_delete = allow_delete

    def _change(self, notebook: Notebook, args: Any) -> tuple[dict[str, Any], str, str]:
        if not self.allow_delete:
            raise NotebookError(
                "Deleting is disabled in this workspace (workspace.allow_delete is false). Leave the cell, "
                "empty it with edit_notebook_cell, or ask the user to enable deletion."
            )
        index = notebook.find(args.cell_id)
        cell = notebook.cells[index]
        cells = list(notebook.cells)
        del cells[index]
        diff = cell_diff(notebook.shown, (index, cell), None)
        return _with_cells(notebook, cells), diff, f"Deleted {cell_label(index, cell)} from {notebook.shown}"
