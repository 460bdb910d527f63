"""Changes made to open notebooks through their front end, as undo records: their review diff and their undo.

A notebook tool that changed the document open in JupyterLab or Notebook 7 changed no file, so no snapshot
sees it. Its step records the change cell by cell instead (`StepRecord.document`): each cell edited (its
source before and after), inserted (the whole cell, and the cell it went after) or deleted (the whole cell,
outputs included, and where it was). Undo walks a run's records backwards and turns each into the operation
that reverses it, checked against the cells as they are now: a cell that holds what the run left is put back;
one already back as it was (the person pressed Ctrl+Z) is left; one changed since is a conflict, reported and
left alone. The person's own changes elsewhere stay. The operations go to the open document when a front end
claims the notebook, else to the file (it was closed since), written only where a cell changed.

The run's own notebook, changed through its front end because its file is not in the workspace (behind a
Jupyter Kernel Gateway), has records that say by which cell it is found (`locate_by`, the run's
`%%architect` cell): undo finds it by that cell in the front end, and never writes a file for it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.paths.validators import PathTraversalError, validate_path
from architect_nb.tools.filesystem.edit_file import write_edit
from architect_nb.tools.filesystem.fileio import FileAccessError
from architect_nb.tools.notebook_files.backend import DocumentBackend, DocumentError, LiveDocument
from architect_nb.tools.notebook_files.celldiff import cell_diff
from architect_nb.tools.notebook_files.cellops import CellOp, CellOpError, apply_ops, source_of
from architect_nb.tools.notebook_files.model import Notebook, NotebookError, load_notebook, validation_problem

__all__ = ["DocumentRevert", "inverse_ops", "revert_documents", "review_diff"]

_ERRORS = (DocumentError, CellOpError, NotebookError, FileAccessError, PathTraversalError, OSError)


@dataclass(slots=True)
class DocumentRevert:
    restored: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def review_diff(shown: str, changes: Sequence[dict[str, Any]]) -> str:
    """The cell diff sections of a notebook's recorded changes, in the order they were made."""
    parts = []
    for change in changes:
        index = int(change.get("index", 0))
        kind = change.get("kind")
        if kind == "edit":
            head = {"id": change.get("id"), "cell_type": change.get("cell_type")}
            before = (index, {**head, "source": change.get("before", "")})
            parts.append(cell_diff(shown, before, (index, {**head, "source": change.get("after", "")})))
        elif kind == "insert":
            parts.append(cell_diff(shown, None, (index, change.get("cell") or {})))
        elif kind == "delete":
            parts.append(cell_diff(shown, (index, change.get("cell") or {}), None))
    return "".join(parts)


def inverse_ops(
    cells: Sequence[dict[str, Any]], changes: Sequence[dict[str, Any]]
) -> tuple[list[CellOp], list[str]]:
    """The operations that undo `changes` (in the order they were made) on `cells` as they are now, and the
    cells left alone because they changed since (as 'cell id=X: why')."""
    current = list(cells)
    ops: list[CellOp] = []
    conflicts: list[str] = []
    left: set[str] = set()  # cells left alone: the run's earlier changes to them are left too, unsaid
    for change in reversed(changes):
        cell_id = str(change.get("id", ""))
        if cell_id in left:
            continue
        at = next((i for i, c in enumerate(current) if c.get("id") == cell_id), None)
        kind = change.get("kind")
        op: CellOp | None = None
        if kind == "edit":
            if at is None:
                conflicts.append(f"cell id={cell_id}: deleted since the run")
                left.add(cell_id)
                continue
            now = source_of(current[at])
            if now == change.get("before"):
                continue  # back already (the person's Ctrl+Z)
            if now != change.get("after"):
                conflicts.append(f"cell id={cell_id}: edited since the run")
                left.add(cell_id)
                continue
            architect = change.get("architect_before")  # the cell's provenance as it was, when it changed
            op = CellOp.edit(
                cell_id,
                str(change.get("before", "")),
                now,
                architect if isinstance(architect, dict) else None,
            )
        elif kind == "insert":
            if at is None:
                continue  # taken out already
            now = source_of(current[at])
            if now != source_of(change.get("cell") or {}):
                conflicts.append(f"cell id={cell_id}: edited since the run inserted it")
                left.add(cell_id)
                continue
            op = CellOp.delete(cell_id, now)
        elif kind == "delete":
            if at is not None:
                continue  # back already
            cell = dict(change.get("cell") or {})
            cell["source"] = source_of(cell)
            op = CellOp.insert(cell, _anchor(current, change))
        if op is not None:
            ops.append(op)
            current = apply_ops(current, [op])
    return ops, conflicts


def _anchor(cells: Sequence[dict[str, Any]], change: dict[str, Any]) -> str | None:
    """Where a deleted cell goes back: after the cell it followed (None: first), else at its old position."""
    after = change.get("after_id")
    ids = [c.get("id") for c in cells]
    if not isinstance(after, str) or after in ids:
        return after if isinstance(after, str) else None
    position = min(int(change.get("index", 0)), len(cells))
    previous = ids[position - 1] if position > 0 else None
    return previous if isinstance(previous, str) else None


def revert_documents(
    workspace: Path, changes: Sequence[tuple[str, dict[str, Any]]], documents: DocumentBackend | None
) -> DocumentRevert:
    """Undo `changes` ((path, cell record), in the order made): in each notebook's open document if a front
    end claims it, else in its file. Each notebook is changed all at once or not at all."""
    report = DocumentRevert()
    by_path: dict[str, list[dict[str, Any]]] = {}
    for path, change in changes:
        by_path.setdefault(path, []).append(change)
    for path, records in by_path.items():
        try:
            target = validate_path(path, workspace)
            by_cell = next((r["locate_by"] for r in records if isinstance(r.get("locate_by"), str)), None)
            if by_cell is not None:
                live: LiveDocument | None = _own_document(target, path, by_cell, documents)
            else:
                live = documents.open_document(target) if documents is not None else None
            if live is not None:
                ops, conflicts = inverse_ops(live.read().data.get("cells", []), records)
                if ops:
                    live.apply(ops)
            else:
                notebook = load_notebook(target, path, for_edit=True)
                ops, conflicts = inverse_ops(notebook.cells, records)
                if ops:
                    _write(target, notebook, ops)
        except _ERRORS as exc:
            report.errors.append(f"{path}: {str(exc) if not isinstance(exc, OSError) else exc.strerror}")
            continue
        if ops:
            report.restored.append(path)
        report.conflicts += [f"{path} [{conflict}]" for conflict in conflicts]
    return report


def _own_document(target: Path, path: str, cell_id: str, documents: DocumentBackend | None) -> LiveDocument:
    """The run's own notebook, outside the workspace, found again in its front end by the run's cell."""
    if os.path.lexists(target):
        raise DocumentError(
            "a file of the workspace has that path now, and the run changed the notebook open in the front "
            "end (its file is not in the workspace), not that file; nothing was put back"
        )
    located = documents.locate(cell_id) if documents is not None else None
    if located is None:
        raise DocumentError(
            "no front end has it open now with the run's %%architect cell in it (its file is not in the "
            "workspace, so it is changed only through the front end); open it, then run the undo again"
        )
    return located[0]


def _write(target: Path, notebook: Notebook, ops: Sequence[CellOp]) -> None:
    """Apply `ops` to the file one at a time, so each rewrites only its cell's bytes; then write once."""
    step = notebook
    for op in ops:
        data = {**step.data, "cells": apply_ops(step.cells, [op])}
        text, _note = step.render(data)
        step = Notebook(shown=step.shown, file=dataclasses.replace(step.file, text=text), data=data)
    problem = validation_problem(step.data)
    if problem is not None:
        raise NotebookError(f"putting its cells back would leave an invalid notebook ({problem}); unchanged")
    write_edit(target, notebook.shown, notebook.file, step.file.text)
