"""Notebook tools: read_notebook, edit_notebook_cell, insert_notebook_cell and delete_notebook_cell.

They read and change notebooks by cell, so the model never handles raw notebook JSON. A notebook open in a
JupyterLab or Notebook 7 front end is read and changed there, through its document model (`backend`); any
other is a file. The run's own notebook, when its file is not in the workspace (behind a Jupyter Kernel
Gateway it is on JupyterLab's side), is reached by its front end's path through that document only.
Edits of a file keep its layout, the cell ids and every untouched output byte for byte, are validated with
`nbformat` before the atomic write (an invalid result is refused, the file untouched). Both are shown as
cell-level diffs (`celldiff`). Cells are named by id or by 'index:N' (0-based), since nbformat 4.4 notebooks
have no ids; an open document's changes go by id, so they land on the right cell even when the person added or
moved cells meanwhile. Outputs of an edited cell are kept, as when a person edits it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from architect_nb.paths.validators import PathTraversalError, visible
from architect_nb.provenance.record import METADATA_KEY, stamped
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.diffs import count_changes
from architect_nb.tools.filesystem.edit_file import EditError, plan_edit
from architect_nb.tools.filesystem.fileio import FileAccessError
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.notebook_files.backend import DocumentError, Loaded, NotebookDocuments
from architect_nb.tools.notebook_files.celldiff import cell_diff
from architect_nb.tools.notebook_files.cellops import CellOp, CellOpError, check_ops, with_architect
from architect_nb.tools.notebook_files.model import (
    Notebook,
    NotebookError,
    cell_label,
    cell_source,
    new_cell,
    save_notebook,
    set_source,
)
from architect_nb.tools.notebook_files.outline import outline
from architect_nb.tools.notebook_files.outputs import output_images
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
MAX_IMAGES = 4  # the images read_notebook hands a model that accepts them, as run_python's plots
#: `nb.ipynb#7` or `nb.ipynb#3-9`: only those cells (the notebook outline tells the model of this form; it
#: costs no schema tokens).
_CELLS = re.compile(r"^(?P<path>.+\.ipynb)#(?P<first>\d{1,6})(?:-(?P<last>\d{1,6}))?$", re.IGNORECASE)
_NB_PATH = PATH_HELP
_CELL = "Cell id or 'index:N' (0-based)."
_BUSY_TICK_S = 0.2  # between tries at an open document the person is typing in
_ERRORS = (PathTraversalError, FileAccessError, NotebookError, EditError, DocumentError, CellOpError)


class ReadNotebookArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    include_outputs: bool = Field(False, description="Outputs in full: text, tracebacks, images.")


class EditNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    cell_id: str = Field(description=_CELL)
    old_str: str = Field(description="Exact text to replace, once in the cell.")
    new_str: str = Field(description="Replacement text.")


class InsertNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    after_cell_id: str = Field("", description="After this cell (id or 'index:N').")
    index: int = Field(-1, description="Or the new cell's position: 0 first, -1 last.")
    cell_type: Literal["code", "markdown", "raw"] = Field("code", description="Cell type.")
    source: str = Field(description="Cell source.")


class DeleteNotebookCellArgs(ToolArgs):
    path: str = Field(description=_NB_PATH)
    cell_id: str = Field(description=_CELL)


class _NotebookTool(WorkspaceTool):
    """A notebook tool: reads and changes notebooks through `documents` (open documents, else files)."""

    def __init__(self, workspace_root: Path, documents: NotebookDocuments | None = None) -> None:
        super().__init__(workspace_root)
        self.documents = documents if documents is not None else NotebookDocuments()

    def _load(self, path: str, *, for_edit: bool = False) -> tuple[Path, Loaded]:
        target = self.resolve(path)
        return target, self.documents.load(target, self.rel(target), self.workspace_root, for_edit=for_edit)


class ReadNotebookTool(_NotebookTool):
    name = "read_notebook"
    reads_only = True
    description = (
        "Read a .ipynb notebook by cell (index, id, type, numbered source, outputs in brief); not read_file."
    )
    args_model = ReadNotebookArgs

    def __init__(
        self,
        workspace_root: Path,
        max_chars: int = DEFAULT_OUTLINE_CHARS,
        documents: NotebookDocuments | None = None,
    ) -> None:
        super().__init__(workspace_root, documents)
        self.max_chars = max_chars

    def _selection(self, path: str) -> tuple[str, range | None]:
        """`path` and the cells it selects with a `#N` or `#N-M` suffix (unless a file is named so)."""
        match = _CELLS.match(path)
        if match is None:
            return path, None
        try:
            if self.resolve(path).exists():
                return path, None
        except PathTraversalError:
            pass
        first = int(match.group("first"))
        last = int(match.group("last") or first)
        return match.group("path"), range(first, max(first, last) + 1)

    def target_paths(self, args: dict[str, Any]) -> list[Path]:
        path = args.get("path")
        if isinstance(path, str):
            args = {**args, "path": self._selection(path)[0]}
        return super().target_paths(args)

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ReadNotebookArgs.model_validate(kwargs)
        elsewhere = self.run_in_read_root(args.model_dump())
        if elsewhere is not None:
            return elsewhere
        path, cells = self._selection(args.path)
        try:
            _target, loaded = self._load(path)
        except _ERRORS as exc:
            return ToolResult.fail(str(exc))
        notebook = loaded.notebook
        text, cells_shown = outline(notebook, args.include_outputs, self.max_chars, cells)
        metadata: ToolMetadata = {
            "path": notebook.shown,
            "cells": len(notebook.cells),
            "cells_shown": cells_shown,
            "nbformat": "{}.{}".format(*notebook.version),
        }
        if loaded.live is not None and loaded.state is not None:
            text += "\n" + _open_note(loaded)
            metadata["open_in"] = loaded.live.where
        if args.include_outputs:
            wanted = cells if cells is not None else range(len(notebook.cells))
            images = [
                image
                for index in wanted
                if index < len(notebook.cells)
                for image in output_images(notebook.cells[index].get("outputs") or (), f"cell {index}")
            ]
            if images:
                metadata["images"] = images[:MAX_IMAGES]
                if len(images) > MAX_IMAGES:
                    text += (
                        f"\n[{len(images)} images; the first {MAX_IMAGES} come as images. Read fewer cells "
                        f"('{notebook.shown}#N-M') to see others.]"
                    )
        return ToolResult.ok(text, **metadata)


def _open_note(loaded: Loaded) -> str:
    assert loaded.live is not None and loaded.state is not None
    note = (
        f"[Open in {loaded.live.where}: this is the notebook as shown there, unsaved edits included; changes "
        "go to the open notebook."
    )
    if loaded.state.editing is not None:
        note += f" The person is typing in cell id={loaded.state.editing}: leave it alone."
    return note + "]"


@dataclass(slots=True)
class _Change:
    """One tool call's change: the new notebook JSON, its cell diff and summary, the same change as cell
    operations (for an open document), and as cell records (for undo)."""

    data: dict[str, Any]
    diff: str
    summary: str
    ops: list[CellOp]
    cells: list[dict[str, Any]]


class _CellEditTool(_NotebookTool):
    """The three editing tools: plan the change, then preview it, or apply it to the open document or file."""

    sensitive = True
    mutates_files = True

    def _change(self, notebook: Notebook, args: Any) -> _Change:
        raise NotImplementedError

    def _stamp(self, before: str | None, after: str, architect: dict[str, Any]) -> dict[str, Any] | None:
        """The cell's new `metadata["architect"]`, with who wrote which of its lines (`provenance.record`);
        None when nothing is recorded (no run, or provenance turned off)."""
        author = self.documents.authorship.author()
        if author is None:
            return None
        record = stamped(before, after, architect.get(METADATA_KEY), author)
        return {**architect, METADATA_KEY: record}

    def _plan(self, kwargs: dict[str, Any]) -> tuple[Path, Loaded, _Change]:
        args = self.args_model.model_validate(kwargs)
        target, loaded = self._load(args.path, for_edit=True)  # type: ignore[attr-defined]
        change = self._change(loaded.notebook, args)
        if loaded.state is not None:  # refused here already, before asking anybody to approve it
            check_ops(loaded.notebook.cells, change.ops, editing=loaded.state.editing, busy=loaded.state.busy)
        return target, loaded, change

    def preview(self, **kwargs: Any) -> str | None:
        return self._plan(kwargs)[2].diff

    #: Refusals of an open document that pass (`CellOpError` codes): the person typing in the cell, or a
    #: collaborator's edit since it was read. The call then reads the notebook again and retries, for up to
    #: `busy_wait_s` seconds. A delete is never retried over a change: it would delete what was just typed.
    waits_for: frozenset[str] = frozenset()
    busy_wait_s = 5.0

    def execute(self, **kwargs: Any) -> ToolResult:
        deadline = time.monotonic() + self.busy_wait_s
        while True:
            try:
                return self._execute_once(kwargs)
            except CellOpError as exc:  # only those it `waits_for` come here
                if time.monotonic() >= deadline:
                    return ToolResult.fail(str(exc))
                time.sleep(_BUSY_TICK_S)

    def _execute_once(self, kwargs: dict[str, Any]) -> ToolResult:
        metadata: ToolMetadata = {}
        try:
            target, loaded, change = self._plan(kwargs)
            shown = loaded.notebook.shown
            if loaded.live is None:
                note = save_notebook(target, loaded.notebook, change.data)
                self.documents.remember(target, shown)
            else:
                where = loaded.live.where
                loaded.live.apply(change.ops)
                note = f" Applied to the notebook open in {where}; it is saved when the person saves."
                cells = change.cells
                if loaded.own_cell is not None:  # outside the workspace: undo finds it by the run's cell
                    cells = [{**record, "locate_by": loaded.own_cell} for record in cells]
                metadata["document_change"] = {"path": shown, "where": where, "cells": cells}
        except _ERRORS as exc:
            if isinstance(exc, CellOpError) and exc.code in self.waits_for:  # only from an open document
                raise
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(
                f"Could not write '{visible(str(kwargs.get('path')))}': {exc.strerror or exc}."
            )
        added, removed = count_changes(change.diff)
        metadata.update({"path": shown, "diff": change.diff})
        text = f"{change.summary} (+{added} -{removed} lines).{note}\n{change.diff}"
        return ToolResult.ok(text, **metadata)


class EditNotebookCellTool(_CellEditTool):
    name = "edit_notebook_cell"
    description = "Replace unique text in one notebook cell, as edit_file does; returns the cell diff."
    args_model = EditNotebookCellArgs
    waits_for = frozenset({"typing", "changed"})  # the edit is planned again on the cell as it is now

    def _change(self, notebook: Notebook, args: Any) -> _Change:
        index = notebook.find(args.cell_id)
        cell = notebook.cells[index]
        label = cell_label(index, cell)
        before = cell_source(cell)
        plan = plan_edit(before, args.old_str, args.new_str, f"{notebook.shown} [{label}]")
        changed = set_source(cell, plan.new_text)
        architect_before = _architect(cell)
        architect = self._stamp(before, plan.new_text, architect_before)
        if architect is not None:
            changed["metadata"] = with_architect(cell.get("metadata"), architect)
        cells = list(notebook.cells)
        cells[index] = changed
        diff = cell_diff(notebook.shown, (index, cell), (index, changed))
        summary = f"Edited {label} of {notebook.shown} at line {plan.line}"
        if plan.loose_note:
            summary = f"{plan.loose_note} {summary}"
        cell_id = _id(cell)
        record = {
            "kind": "edit",
            "id": cell_id,
            "index": index,
            "cell_type": cell.get("cell_type"),
            "before": before,
            "after": plan.new_text,
        }
        if architect is not None:  # undo puts the cell's record back as it was
            record["architect_before"] = architect_before
        ops = [CellOp.edit(cell_id, plan.new_text, before, architect)]
        return _Change(_with_cells(notebook, cells), diff, summary, ops, [record])


class InsertNotebookCellTool(_CellEditTool):
    name = "insert_notebook_cell"
    description = "Insert a notebook cell; returns the cell diff."
    args_model = InsertNotebookCellArgs

    def _change(self, notebook: Notebook, args: Any) -> _Change:
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
        architect = self._stamp(None, args.source, {})
        if architect is not None:
            cell["metadata"] = with_architect(cell.get("metadata"), architect)
        cells = list(notebook.cells)
        cells.insert(position, cell)
        diff = cell_diff(notebook.shown, None, (position, cell))
        after = _id(notebook.cells[position - 1]) if position > 0 else None
        whole = {**cell, "source": cell_source(cell)}
        record = {"kind": "insert", "id": _id(cell), "index": position, "after_id": after, "cell": whole}
        return _Change(
            _with_cells(notebook, cells),
            diff,
            f"Inserted {cell_label(position, cell)} into {notebook.shown}",
            [CellOp.insert(whole, after)] if "id" in cell else [],
            [record],
        )


class DeleteNotebookCellTool(_CellEditTool):
    name = "delete_notebook_cell"
    description = "Delete one notebook cell, if the workspace allows deletion."
    args_model = DeleteNotebookCellArgs
    waits_for = frozenset({"typing"})

    def __init__(
        self, workspace_root: Path, allow_delete: bool = False, documents: NotebookDocuments | None = None
    ) -> None:
        super().__init__(workspace_root, documents)
        self.allow_delete = allow_delete

    def _change(self, notebook: Notebook, args: Any) -> _Change:
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
        cell_id = _id(cell)
        after = _id(notebook.cells[index - 1]) if index > 0 else None
        record = {"kind": "delete", "id": cell_id, "index": index, "after_id": after, "cell": cell}
        return _Change(
            _with_cells(notebook, cells),
            diff,
            f"Deleted {cell_label(index, cell)} from {notebook.shown}",
            [CellOp.delete(cell_id, cell_source(cell))],
            [record],
        )


def _with_cells(notebook: Notebook, cells: list[dict[str, Any]]) -> dict[str, Any]:
    data = dict(notebook.data)
    data["cells"] = cells
    return data


def _id(cell: dict[str, Any]) -> str:
    """A cell's id ('' in nbformat 4.4 files, which have none; an open document's cells always have one)."""
    cell_id = cell.get("id")
    return cell_id if isinstance(cell_id, str) else ""


def _architect(cell: dict[str, Any]) -> dict[str, Any]:
    """The cell's `metadata["architect"]` as it is ({} when it has none or it is not a mapping)."""
    metadata = cell.get("metadata")
    architect = metadata.get("architect") if isinstance(metadata, dict) else None
    return dict(architect) if isinstance(architect, dict) else {}
