"""Cell operations: the changes the notebook tools (and an undo) make to a notebook, by cell id.

An edit replaces one cell's source, an insert puts a whole cell after another (named by id, or at the top),
a delete takes one cell out, and `outputs` sets a code cell's outputs and execution count (run_cell ran it in
the kernel). Edits and deletes carry the source they were computed from (`expect`), so a
cell that changed since it was read is refused rather than overwritten. The same operations, as JSON, go to a
JupyterLab or Notebook 7 front end for the notebook open there (`labextension/src/livecells.ts` applies them
to the document model); `apply_ops` applies them to a notebook's JSON, for a notebook on disk.

Every check runs before anything changes, so a refused list of operations changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CellOp", "CellOpError", "apply_ops", "check_ops", "with_architect"]

OpKind = Literal["edit", "insert", "delete", "outputs"]


class CellOpError(ValueError):
    """An operation that cannot be applied. `code` says why, as the front end says it too: 'gone' (no such
    cell), 'changed' (since it was read), 'typing', 'running', 'taken' (the new id) or 'anchor' (the cell to
    insert after is gone). The message says what to do next."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class CellOp:
    """One change to a notebook's cells.

    Attributes:
        op: 'edit', 'insert', 'delete' or 'outputs'.
        cell_id: The cell edited, deleted or given outputs; for an insert, the new cell's id.
        source: An edit's new source.
        expect: The source an edit or delete was computed from (for `outputs`: the source that ran).
        after: An insert's place: after the cell with this id; None puts it first.
        cell: An insert's whole cell (nbformat JSON, with its id).
        architect: An edit's new `metadata["architect"]` for the cell (its provenance record,
            `provenance.record`); `{}` takes the key out, None leaves the metadata as it is.
    """

    op: OpKind
    cell_id: str
    source: str | None = None
    expect: str | None = None
    after: str | None = None
    cell: dict[str, Any] | None = None
    outputs: tuple[dict[str, Any], ...] | None = None
    execution_count: int | None = None
    architect: dict[str, Any] | None = None

    @classmethod
    def edit(cls, cell_id: str, source: str, expect: str, architect: dict[str, Any] | None = None) -> CellOp:
        return cls("edit", cell_id, source=source, expect=expect, architect=architect)

    @classmethod
    def insert(cls, cell: dict[str, Any], after: str | None) -> CellOp:
        return cls("insert", str(cell["id"]), after=after, cell=cell)

    @classmethod
    def delete(cls, cell_id: str, expect: str) -> CellOp:
        return cls("delete", cell_id, expect=expect)

    @classmethod
    def set_outputs(
        cls, cell_id: str, outputs: Sequence[dict[str, Any]], execution_count: int | None, expect: str
    ) -> CellOp:
        return cls("outputs", cell_id, expect=expect, outputs=tuple(outputs), execution_count=execution_count)

    def to_json(self) -> dict[str, Any]:
        if self.op == "outputs":
            return {
                "op": "outputs",
                "id": self.cell_id,
                "outputs": list(self.outputs or ()),
                "execution_count": self.execution_count,
                "expect": self.expect,
            }
        if self.op == "edit":
            edit = {"op": "edit", "id": self.cell_id, "source": self.source, "expect": self.expect}
            return edit if self.architect is None else {**edit, "architect": self.architect}
        if self.op == "delete":
            return {"op": "delete", "id": self.cell_id, "expect": self.expect}
        return {"op": "insert", "after": self.after, "cell": self.cell}


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def check_ops(
    cells: Sequence[dict[str, Any]],
    ops: Iterable[CellOp],
    *,
    editing: str | None = None,
    busy: Iterable[str] = (),
) -> None:
    """Raise `CellOpError` for the first operation that cannot be applied to `cells` in order (later ones
    see the earlier ones' effect); `editing` is the cell the person is typing in, `busy` cells running."""
    ids = [c.get("id") for c in cells]
    sources = {c.get("id"): source_of(c) for c in cells}
    protected = set(busy)
    for op in ops:
        if op.op == "insert":
            if op.cell_id in ids:
                raise CellOpError("taken", f"A cell with id '{op.cell_id}' exists already; nothing changed.")
            if op.after is not None and op.after not in ids:
                raise CellOpError(
                    "anchor",
                    f"Cell '{op.after}', after which the new cell goes, is no longer in the notebook; "
                    "nothing changed. Call read_notebook again, then retry.",
                )
            ids.insert(0 if op.after is None else ids.index(op.after) + 1, op.cell_id)
            sources[op.cell_id] = source_of(op.cell or {})
            continue
        if op.cell_id not in ids:
            raise CellOpError(
                "gone",
                f"Cell '{op.cell_id}' is no longer in the notebook (deleted, or the notebook was reloaded); "
                "nothing changed. Call read_notebook again and use the ids it shows.",
            )
        if op.cell_id == editing:
            raise CellOpError(
                "typing",
                f"The person is typing in cell '{op.cell_id}' right now, so it was left alone; nothing "
                "changed. Change another cell, or ask them to leave that cell and try again.",
            )
        if op.cell_id in protected:
            raise CellOpError(
                "running",
                f"Cell '{op.cell_id}' is running or queued to run (the running %%architect cell is never "
                "changed); nothing changed. Leave it, or change it after it has run.",
            )
        if op.expect is not None and sources[op.cell_id] != op.expect:
            raise CellOpError(
                "changed",
                f"Cell '{op.cell_id}' changed since it was read (the person edited it); nothing changed. "
                "Call read_notebook again, then retry.",
            )
        if op.op == "delete":
            ids.remove(op.cell_id)
        elif op.op == "edit":
            sources[op.cell_id] = op.source or ""


def apply_ops(cells: Sequence[dict[str, Any]], ops: Sequence[CellOp]) -> list[dict[str, Any]]:
    """The cells with `ops` applied (after `check_ops` passes); the input is left as it was. A source is
    stored as the cell stored it: one string, or a list of lines as nbformat writes."""
    check_ops(cells, ops)
    out = list(cells)
    for op in ops:
        if op.op == "insert":
            assert op.cell is not None
            at = 0 if op.after is None else _index(out, op.after) + 1
            out.insert(at, copy.deepcopy(op.cell))
            continue
        at = _index(out, op.cell_id)
        if op.op == "delete":
            del out[at]
            continue
        if op.op == "outputs":
            changed = dict(out[at])
            changed["outputs"] = copy.deepcopy(list(op.outputs or ()))
            changed["execution_count"] = op.execution_count
            out[at] = changed
            continue
        changed = dict(out[at])
        text = op.source or ""
        changed["source"] = text if isinstance(out[at].get("source"), str) else text.splitlines(True)
        if op.architect is not None:
            changed["metadata"] = with_architect(changed.get("metadata"), op.architect)
        out[at] = changed
    return out


def with_architect(metadata: Any, architect: dict[str, Any]) -> dict[str, Any]:
    """A cell's metadata with `architect` as its "architect" entry (`{}`: without one)."""
    out = dict(metadata) if isinstance(metadata, dict) else {}
    if architect:
        out["architect"] = copy.deepcopy(architect)
    else:
        out.pop("architect", None)
    return out


def _index(cells: Sequence[dict[str, Any]], cell_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c.get("id") == cell_id)
