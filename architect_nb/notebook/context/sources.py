"""Where the notebook of an `%%architect` run is read from, best first.

1. The document open in JupyterLab or Notebook 7 with this package's extension, found by the running cell's
   id (`locate` on the document channel): unsaved typing included, with the cells edited since they ran and
   the cell the person had selected.
2. The file, where the kernel can know it: VS Code sets `__vsc_ipynb_file__`; a Jupyter server that started
   the kernel for a notebook sets `JPY_SESSION_NAME`. It is the notebook as last saved.
3. The kernel's own history: the cells it ran (`In`), their results (`Out`) and errors (the execution log).
   That is all a headless run (nbclient, papermill) or a console has.

A cell is edited since it ran when the front end says so, or when what ran as its [n] in this kernel differs
from its source now (`KernelFacts.inputs`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from architect_nb.notebook.context.kernel_facts import KernelFacts
from architect_nb.notebook.context.view import CellView, NotebookView, cells_of
from architect_nb.tools.notebook_files.backend import LiveDocument, own_notebook_target

__all__ = ["Found", "Locator", "find_notebook"]

_MAX_FILE_BYTES = 50 * 1024 * 1024


class Locator(Protocol):
    """Finds the open document holding a cell (the document channel, or `OpenNotebooks` in tests)."""

    def locate(self, cell_id: str) -> tuple[LiveDocument, Path | None] | None: ...


@dataclass(frozen=True, slots=True)
class Found:
    view: NotebookView
    live: LiveDocument | None = None  # the open document, when it came from one
    file: Path | None = None  # the notebook's file, when known
    metadata: Any = None  # the notebook's own metadata (its teaching policy), from a document or a file


def _shown(path: Path | None, root: Path) -> tuple[str | None, bool]:
    """The path as read_notebook takes it (relative to the workspace), and whether it is inside it."""
    if path is None:
        return None, False
    real = Path(os.path.realpath(path))
    try:
        return real.relative_to(Path(os.path.realpath(root))).as_posix(), True
    except ValueError:
        return str(real), False


def _kernel_edited(cells: Iterable[CellView], facts: KernelFacts) -> set[str]:
    """Cells whose [n] ran here as other code than their source now, by the execution log's cell ids."""
    edited = set()
    for cell in cells:
        if cell.id is None or cell.count is None or not 0 < cell.count < len(facts.inputs):
            continue
        if facts.ran_as(cell.count, cell.id) and facts.inputs[cell.count].strip() != cell.source.strip():
            edited.add(cell.id)
    return edited


def _with_own_count(cells: tuple[CellView, ...], own: int | None, facts: KernelFacts) -> tuple[CellView, ...]:
    if own is None or facts.count is None:
        return cells
    return tuple(replace(cell, count=facts.count) if cell.index == own else cell for cell in cells)


def _from_document(facts: KernelFacts, root: Path, locator: Locator) -> tuple[Found | None, str | None]:
    if facts.cell_id is None:
        return None, None
    try:
        located = locator.locate(facts.cell_id)
        if located is None:
            return None, None
        live, file = located
        state = live.read(running=facts.cell_id)
    except Exception as exc:  # a front end that fails or does not answer: the file is read instead
        return None, f"The open notebook could not be read ({str(exc)[:200]}), so the saved file was."
    plain = cells_of(state.data)
    edited = set(state.dirty or ()) | _kernel_edited(plain, facts)
    cells = cells_of(state.data, frozenset(edited))
    shown, inside = _shown(file, root)
    # Its file elsewhere (behind a gateway: on JupyterLab's side): the notebook tools reach it through the
    # front end by the front end's path, unless a workspace file is at that path.
    front_end = not inside and own_notebook_target(live.path, file, root) is not None
    if front_end:
        shown = live.path
    own = next((c.index for c in cells if c.id == facts.cell_id), None)
    view = NotebookView(
        origin="open",
        cells=_with_own_count(cells, own, facts),
        own=own,
        path=shown,
        where=f"open in {live.where}",
        readable=inside or front_end,
        through_front_end=front_end,
        selected=next((c.index for c in cells if state.selected and c.id == state.selected), None),
        editing=next((c.index for c in cells if state.editing and c.id == state.editing), None),
    )
    return Found(view, live, file, state.data.get("metadata")), None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        if not path.is_file() or path.stat().st_size > _MAX_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("cells"), list) else None


def _file_edited(cells: tuple[CellView, ...], facts: KernelFacts) -> set[str]:
    """Edited since run, for a file: by the log's cell ids, or, when it has none (VS Code), by the counts, if
    the file's counts are this kernel's (some cell's source is what ran as its [n])."""
    edited = _kernel_edited(cells, facts)
    inputs = facts.inputs
    ran = [c for c in cells if c.count is not None and 0 < c.count < len(inputs) and c.id is not None]
    if any(facts.ran_as(c.count, c.id) is not None for c in ran):
        return edited
    if any(inputs[c.count].strip() == c.source.strip() for c in ran if c.count is not None):
        edited |= {c.id for c in ran if c.id and c.count and inputs[c.count].strip() != c.source.strip()}
    return edited


def _from_file(facts: KernelFacts, root: Path) -> Found | None:
    candidates = [(facts.vscode_file, "the file as VS Code last saved it"), (facts.session_file, "")]
    for name, where in candidates:
        if not name:
            continue
        path = Path(name if os.path.isabs(name) else os.path.join(facts.cwd, name))
        if path.suffix != ".ipynb":
            continue
        data = _read_json(path)
        if data is None:
            continue
        plain = cells_of(data)
        cells = cells_of(data, frozenset(_file_edited(plain, facts)))
        own = next((c.index for c in cells if facts.cell_id and c.id == facts.cell_id), None)
        if own is None and facts.raw_cell.strip():
            same = [c.index for c in cells if c.source.strip() == facts.raw_cell.strip()]
            own = same[-1] if same else None
        notes = (
            ()
            if own is not None
            else ("This cell is not in the file as saved (typed since the last save?).",)
        )
        shown, inside = _shown(path, root)
        view = NotebookView(
            origin="file",
            cells=_with_own_count(cells, own, facts),
            own=own,
            path=shown,
            where=where or "the file as last saved",
            readable=inside,
            notes=notes,
        )
        return Found(view, None, path, data.get("metadata"))
    return None


def _from_history(facts: KernelFacts) -> Found:
    cells: list[CellView] = []
    own = None
    last = facts.count if facts.count is not None else len(facts.inputs) - 1
    for count in range(1, last + 1):
        source = (
            facts.raw_cell
            if count == facts.count
            else (facts.inputs[count] if count < len(facts.inputs) else "")
        )
        if not source.strip():
            continue
        outputs: list[dict[str, Any]] = []
        if count in facts.results:
            outputs.append(facts.results[count])
        execution = facts.executions.get(count)
        if execution is not None and execution.error is not None:
            outputs.append(execution.error)
        if count == facts.count:
            own = len(cells)
        cells.append(
            CellView(
                index=len(cells),
                kind="code",
                source=source,
                count=count,
                outputs=tuple(outputs),
                positioned=False,
            )
        )
    notes: list[str] = []
    logged = {e.error.get("evalue") for e in facts.executions.values() if e.error is not None}
    if facts.last_error is not None and facts.last_error.get("evalue") not in logged:
        error = facts.last_error
        notes.append(f"The kernel's last error: {error.get('ename')}: {str(error.get('evalue'))[:200]}.")
    view = NotebookView(
        origin="history",
        cells=tuple(cells),
        own=own,
        where="the kernel's history",
        readable=False,
        notes=tuple(notes),
    )
    return Found(view)


def find_notebook(facts: KernelFacts, root: Path, locator: Locator | None = None) -> Found:
    """The notebook the run is in, from the best source there is (see the module's docstring)."""
    note = None
    if locator is not None:
        found, note = _from_document(facts, root, locator)
        if found is not None:
            return found
    found = _from_file(facts, root)
    if found is None:
        found = _from_history(facts)
    if note:
        found = replace(found, view=replace(found.view, notes=(*found.view.notes, note)))
    return found
