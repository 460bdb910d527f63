"""`NotebookView`: the notebook an `%%architect` run is in, as one of its sources saw it (`sources.py`).

Cells are numbered from 0, as the notebook tools and search number them (`index:N`, `cell N`); `count` is the
execution count `[n]` the person sees beside a code cell. The view does not know where it came from beyond
`origin` and `where`, so the outline, the stale marks and the references read every source the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CellView", "NotebookView", "Origin", "cells_of"]

#: open: the document open in a front end (unsaved typing included); file: the file as last saved;
#: history: the kernel's own record of what it ran (no notebook could be read).
Origin = Literal["open", "file", "history"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CellView:
    index: int
    kind: str  # code, markdown or raw
    source: str
    id: str | None = None
    count: int | None = None  # the execution count shown beside it
    outputs: tuple[Mapping[str, Any], ...] = ()
    edited: bool = False  # its source changed since it ran (its outputs are from other code)
    positioned: bool = True  # False: an execution from the kernel's history, not a cell of a notebook

    @property
    def label(self) -> str:
        """`cell 4 [7]`: how the outline, the references and the agent name it (`[7]` for an execution)."""
        if not self.positioned:
            return f"[{self.count}]"
        return f"cell {self.index}" + (f" [{self.count}]" if self.count is not None else "")

    @property
    def is_architect(self) -> bool:
        return self.source.lstrip().startswith("%%architect")

    @property
    def has_error(self) -> bool:
        return any(output.get("output_type") == "error" for output in self.outputs)


@dataclass(frozen=True, slots=True, kw_only=True)
class NotebookView:
    origin: Origin
    cells: tuple[CellView, ...]
    own: int | None = None  # the running %%architect cell's index
    path: str | None = None  # as the person and read_notebook name it (workspace-relative when inside it)
    where: str = ""  # "open in JupyterLab", "the file as last saved", "the kernel's history"
    readable: bool = True  # read_notebook can read it (inside the workspace, or through the front end)
    through_front_end: bool = False  # outside the workspace: the notebook tools reach it in the front end
    selected: int | None = None  # the cell the person had selected when the run started
    editing: int | None = None  # the cell the person is typing in
    notes: tuple[str, ...] = field(default=())  # what the source could not tell (said to the model)

    def find_id(self, cell_id: str | None) -> int | None:
        if not cell_id:
            return None
        return next((cell.index for cell in self.cells if cell.id == cell_id), None)

    def by_count(self, count: int) -> list[CellView]:
        return [cell for cell in self.cells if cell.count == count]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def cells_of(data: Mapping[str, Any], edited_ids: frozenset[str] = frozenset()) -> tuple[CellView, ...]:
    """The cells of notebook JSON `data`; those whose id is in `edited_ids` marked edited since they ran."""
    raw = data.get("cells")
    cells: list[CellView] = []
    for index, cell in enumerate(raw if isinstance(raw, Sequence) else ()):
        if not isinstance(cell, Mapping):
            continue
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        count = cell.get("execution_count")
        outputs = cell.get("outputs")
        cells.append(
            CellView(
                index=index,
                kind=str(cell.get("cell_type") or "code"),
                source=_text(cell.get("source")),
                id=cell_id,
                count=count if isinstance(count, int) and not isinstance(count, bool) else None,
                outputs=tuple(o for o in outputs if isinstance(o, Mapping))
                if isinstance(outputs, list)
                else (),
                edited=cell_id is not None and cell_id in edited_ids,
            )
        )
    return tuple(cells)
