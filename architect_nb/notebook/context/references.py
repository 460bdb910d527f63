"""What a task means by "this cell", "the cell above", "the error above", "cell 5", "[12]", "the selected
cell" or "the last error": each phrase found in the task, and the cells it names in a `NotebookView`.

Cells are numbered from 0, as the notebook tools number them, which is also how the agent names them back;
a person counting from 1 may mean the cell before, so a bare "cell N" says which cell that would be, unless
the task pins it with its execution count ("cell 4 [7]", as the extension's buttons write it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from architect_nb.notebook.context.view import CellView, NotebookView

__all__ = ["Reference", "resolve_references"]

_FLAGS = re.IGNORECASE
_THIS = re.compile(r"\bthis (?:%%architect )?cell\b|\besta celda\b", _FLAGS)
_ERROR_ABOVE = re.compile(
    r"\b(?:the |that )?(?:error|exception|traceback|failure)s? (?:just )?above\b|\bel error de arriba\b",
    _FLAGS,
)
_ABOVE = re.compile(
    r"\b(?:the )?(?:cell|code|output) (?:just )?above\b|\b(?:the )?previous cell\b|\bthe cell before\b"
    r"|\bla celda (?:de )?(?:arriba|anterior)\b",
    _FLAGS,
)
_BELOW = re.compile(
    r"\b(?:the )?(?:cell|code) (?:just )?below\b|\b(?:the )?next cell\b|\bla celda de abajo\b", _FLAGS
)
_SELECTED = re.compile(r"\b(?:the )?selected cells?\b|\bla celda seleccionada\b", _FLAGS)
_LAST_ERROR = re.compile(
    r"\b(?:the )?(?:last|latest|most recent) (?:error|exception|traceback)\b|\bel último error\b", _FLAGS
)
_CELL_NUMBER = re.compile(
    r"\b(?:cells?|celdas?)\s*#?(\d{1,5})(?:\s*(?:-|–|to|a)\s*#?(\d{1,5}))?(\s*\[(\d{1,6})\])?", _FLAGS
)
_COUNT = re.compile(r"(?:(?<=[\s(\"'])|^|\bIn\s?|\bOut\s?)\[(\d{1,6})\](?!\s*[=:])", _FLAGS)
_MAX_RANGE = 20


@dataclass(frozen=True, slots=True)
class Reference:
    phrase: str  # as the task wrote it
    cells: tuple[int, ...]  # the cells it names, by index (none: it names no cell of the notebook now)
    note: str = ""  # what the model should know about it


def _nearest(view: NotebookView, start: int, step: int, keep: Callable[[CellView], bool]) -> CellView | None:
    index = start + step
    while 0 <= index < len(view.cells):
        cell = view.cells[index]
        if keep(cell):
            return cell
        index += step
    return None


def _not_empty(cell: CellView) -> bool:
    return bool(cell.source.strip())


def _count_cells(view: NotebookView, count: int) -> Reference:
    phrase = f"[{count}]"
    found = view.by_count(count)
    if not found:
        return Reference(phrase, (), f"no cell shows [{count}] now (it ran again, or ran in another session)")
    note = "" if len(found) == 1 else f"{len(found)} cells show [{count}]"
    return Reference(phrase, tuple(cell.index for cell in found), note)


def _numbered(view: NotebookView, match: re.Match[str]) -> Reference:
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    phrase = match.group(0).strip()
    if view.origin == "history":  # no notebook: "cell 5" can only be what ran as [5]
        return _count_cells(view, first)
    if last < first or last - first > _MAX_RANGE:
        return Reference(phrase, (), "not a range of cells the outline can name")
    cells = tuple(i for i in range(first, last + 1) if i < len(view.cells))
    if not cells:
        return Reference(phrase, (), f"the notebook has {len(view.cells)} cells, numbered from 0")
    pinned = match.group(4)
    if pinned is not None and any(view.cells[i].count == int(pinned) for i in cells):
        return Reference(phrase, cells)
    if pinned is not None:
        return Reference(phrase, cells, f"cell {first} does not show [{pinned}] now: it ran again or moved")
    before = first - 1
    if first == last and before >= 0:
        return Reference(
            phrase, cells, f"counted from 0; a person counting from 1 means {view.cells[before].label}"
        )
    return Reference(phrase, cells)


def resolve_references(task: str, view: NotebookView) -> list[Reference]:
    """The references to cells in `task`, in the order found, each phrase once."""
    found: dict[str, Reference] = {}
    own = view.own

    def add(reference: Reference) -> None:
        found.setdefault(reference.phrase.lower(), reference)

    def relative(pattern: re.Pattern[str], step: int, keep: Callable[[CellView], bool]) -> None:
        for match in pattern.finditer(task):
            if own is None:
                add(Reference(match.group(0), (), "where this cell is in the notebook is not known"))
                continue
            cell = _nearest(view, own, step, keep)
            add(Reference(match.group(0), (cell.index,) if cell else (), "" if cell else "there is none"))

    for match in _THIS.finditer(task):
        add(
            Reference(match.group(0), (own,) if own is not None else (), "" if own is not None else "unknown")
        )
    relative(_ERROR_ABOVE, -1, lambda cell: cell.has_error)
    relative(_ABOVE, -1, _not_empty)
    relative(_BELOW, 1, _not_empty)
    for match in _SELECTED.finditer(task):
        if view.selected is not None:
            add(Reference(match.group(0), (view.selected,)))
        else:
            add(Reference(match.group(0), (), "the front end did not say which cell was selected"))
    for match in _LAST_ERROR.finditer(task):
        failed = [cell for cell in view.cells if cell.has_error]
        latest = max(failed, key=lambda cell: (cell.count or 0, cell.index)) if failed else None
        add(
            Reference(
                match.group(0), (latest.index,) if latest else (), "" if latest else "no cell shows an error"
            )
        )
    for match in _CELL_NUMBER.finditer(task):
        add(_numbered(view, match))
    pinned_counts = {m.group(4) for m in _CELL_NUMBER.finditer(task) if m.group(4)}
    for match in _COUNT.finditer(task):
        if match.group(1) not in pinned_counts:
            add(_count_cells(view, int(match.group(1))))
    return list(found.values())
