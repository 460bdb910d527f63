"""What the agent cannot trust in a notebook: cells edited since they ran, run out of order, never run, or
downstream of a cell that changed or ran again since.

Order comes from execution counts: a cell that ran after a cell below it (a re-run, or cells run bottom-up)
is out of order. Downstream comes from the names each cell defines and uses (`names.py`), read as the
notebook reads top to bottom: a cell whose name comes from a cell that ran again (or deleted it) after it
ran holds results of the old value; so does one whose name comes from a cell edited since it ran, or never
run (running that one will change it); and a cell that ran after such a cell and took names from it is
stale through it. A `from m import *` cell defines names nobody can list: it is
called out, since what it changes is unknown.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from architect_nb.notebook.context.names import CellNames, cell_names
from architect_nb.notebook.context.view import CellView, NotebookView

__all__ = ["Marks", "stale_marks"]

_MAX_REASONS = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Marks:
    edited: bool = False
    never_run: bool = False
    out_of_order: bool = False  # it ran after a cell below it ran
    stale: tuple[str, ...] = ()  # why its results may be out of date: "df changed by cell 7 [12]"
    star: tuple[str, ...] = ()  # modules it star-imports: the names it defines are unknown
    unparsed: bool = False  # not readable as Python: its names are unknown

    @property
    def any(self) -> bool:
        return bool(self.edited or self.never_run or self.out_of_order or self.stale or self.star)

    def words(self) -> list[str]:
        words = []
        if self.edited:
            words.append("edited since it ran")
        if self.never_run:
            words.append("never run")
        if self.out_of_order:
            words.append("ran after cells below it")
        if self.stale:
            words.append("stale: " + "; ".join(self.stale))
        if self.star:
            words.append(f"from {', '.join(self.star)} import *: its names are unknown")
        return words


def _considered(cell: CellView) -> bool:
    return cell.kind == "code" and not cell.is_architect


def _provider_problem(cell: CellView, name: str, provider: CellView, deleted: bool) -> str | None:
    """Why `cell`'s value of `name`, which `provider` gives it, may be out of date; None if it is not."""
    assert cell.count is not None
    if provider.count is None:
        return f"{name} from {provider.label}, which has not run" if provider.source.strip() else None
    if provider.count > cell.count:
        return f"{name} {'deleted' if deleted else 'changed'} by {provider.label} since"
    if provider.edited and not deleted:
        return f"{name} from {provider.label}, edited since it ran"
    return None


def stale_marks(view: NotebookView) -> dict[int, Marks]:
    """The marks of every code cell that has any, by index.

    A name a cell uses comes from the nearest cell above that defines (or deletes) it, as when the notebook
    runs top to bottom; for a name no cell above defines, from the cell below that ran last before it.
    """
    cells = [cell for cell in view.cells if _considered(cell)]
    names: dict[int, CellNames] = {cell.index: cell_names(cell.source) for cell in cells}
    reasons: dict[int, list[str]] = {}
    depends: dict[int, set[int]] = {}  # cell index -> the cells that give it names
    below: dict[str, list[CellView]] = {}
    for cell in cells:
        for name in names[cell.index].defines | names[cell.index].deletes:
            below.setdefault(name, []).append(cell)

    last: dict[str, tuple[CellView, bool]] = {}
    for cell in cells:
        cn = names[cell.index]
        if cell.count is not None:
            for name in sorted(cn.uses):
                found = last.get(name)
                if found is None:
                    later = [c for c in below.get(name, ()) if c.index > cell.index and c.count is not None]
                    found = (max(later, key=lambda c: c.count or 0), False) if later else None
                if found is None or found[0].index == cell.index:
                    continue
                depends.setdefault(cell.index, set()).add(found[0].index)
                problem = _provider_problem(cell, name, *found)
                if problem is not None and problem not in reasons.setdefault(cell.index, []):
                    reasons[cell.index].append(problem)
        for name in cn.defines:
            last[name] = (cell, False)
        for name in cn.deletes:
            last[name] = (cell, True)

    by_index = {cell.index: cell for cell in cells}
    queue: deque[int] = deque(index for index, why in reasons.items() if why)
    while queue:  # stale through a stale cell: it ran after that cell and took names from it
        source = by_index[queue.popleft()]
        for index, providers in depends.items():
            cell = by_index[index]
            if source.index not in providers or cell.count is None or source.count is None:
                continue
            if cell.count > source.count and not reasons.get(index):
                reasons[index] = [f"uses {source.label}, which is stale"]
                queue.append(index)

    later_low: dict[int, int] = {}  # the lowest count among the cells below each cell
    lowest: int | None = None
    for cell in reversed(cells):
        if cell.count is None:
            continue
        if lowest is not None:
            later_low[cell.index] = lowest
        lowest = cell.count if lowest is None else min(lowest, cell.count)

    marks: dict[int, Marks] = {}
    for cell in cells:
        cn = names[cell.index]
        mark = Marks(
            edited=cell.edited,
            never_run=cell.count is None and bool(cell.source.strip()),
            out_of_order=cell.count is not None and later_low.get(cell.index, cell.count) < cell.count,
            stale=tuple(reasons.get(cell.index, ())[:_MAX_REASONS]),
            star=cn.star_imports,
            unparsed=not cn.parsed,
        )
        if mark.any or mark.unparsed:
            marks[cell.index] = mark
    return marks
