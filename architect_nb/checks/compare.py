"""Comparing two runs of a notebook cell by cell (and their `compare:` variables).

Cells are matched by id; when the two sides share no id (a notebook from before nbformat 4.5, or one whose
ids were all regenerated), by their order among code cells. A cell only one side has is listed as added or
removed. A cell is unstable when it is marked (`"architect": {"unstable": true}` in its metadata, or the
tag `unstable`) or when two runs of the before side disagree on it (`stability`): what it shows then differs
without a change of code, so a difference there is reported apart and does not count.
"""

from __future__ import annotations

from typing import Any

from architect_nb.checks.outputs import CellOutputs, Item, cell_outputs
from architect_nb.checks.result import CheckResult, Difference
from architect_nb.checks.rules import Tolerance, compare_items

__all__ = ["compare_sides"]


def compare_sides(
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    notebook: str,
    tolerance: Tolerance,
    names: tuple[str, ...] = (),
    second_before: dict[str, Any] | None = None,
) -> CheckResult:
    result = CheckResult(notebook=notebook, seconds=0.0)
    sides = (("before", before), ("after", after), ("second before", second_before))
    failed = [f"on the {side} side, {run['failure']}" for side, run in sides if run and run.get("failure")]
    if failed:
        result.failure = "; ".join(failed)
        return result
    pairs, result.added, result.removed = _match(before["cells"], after["cells"])
    shaky = _unstable_cells(before, second_before, tolerance)
    warned: dict[str, None] = {}
    for b, a in pairs:
        where = _where(a)
        left, right = cell_outputs(b["outputs"]), cell_outputs(a["outputs"])
        for w in [*left.warnings, *right.warnings]:
            warned.setdefault(f"{where}: {w}", None)
        difference = _difference(where, left, right, tolerance)
        if difference is None:
            continue
        if b.get("unstable") or a.get("unstable") or _key(b) in shaky:
            result.unstable.append(difference)
        else:
            result.differences.append(difference)
    for i, name in enumerate(names):
        left = _compared(before, i)
        right = _compared(after, i)
        difference = _difference(f"variable {name}", left, right, tolerance)
        if difference is not None:
            result.differences.append(difference)
    result.warnings = list(warned)
    errors = [
        f"{_where(c)}: {item.show()}"
        for c in before["cells"]
        for item in cell_outputs(c["outputs"]).items
        if item.kind == "error"
    ]
    if errors:
        result.notes.append(
            "the notebook raises on the before side (" + "; ".join(errors[:3]) + "); the same error on "
            "both sides counts as the same output"
        )
    return result


def _match(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[str], list[str]]:
    ids_before = {c["id"]: c for c in before if c.get("id")}
    ids_after = {c["id"]: c for c in after if c.get("id")}
    if not set(ids_before) & set(ids_after):
        n = min(len(before), len(after))
        pairs = list(zip(before[:n], after[:n], strict=False))
        return pairs, [_where(c) for c in after[n:]], [_where(c) for c in before[n:]]
    pairs = [(ids_before[c["id"]], c) for c in after if c.get("id") in ids_before]
    added = [_where(c) for c in after if c.get("id") not in ids_before]
    removed = [_where(c) for c in before if c.get("id") not in ids_after]
    return pairs, added, removed


def _unstable_cells(before: dict[str, Any], second: dict[str, Any] | None, tolerance: Tolerance) -> set[str]:
    if second is None:
        return set()
    pairs, _, _ = _match(before["cells"], second["cells"])
    return {
        _key(b)
        for b, s in pairs
        if _difference("", cell_outputs(b["outputs"]), cell_outputs(s["outputs"]), tolerance) is not None
    }


def _difference(where: str, left: CellOutputs, right: CellOutputs, tol: Tolerance) -> Difference | None:
    for i, (x, y) in enumerate(zip(left.items, right.items, strict=False)):
        what = compare_items(x, y, tol)
        if what is not None:
            label = f"output {i + 1}: {what}" if len(left.items) > 1 else what
            return Difference(where=where, what=label, before=x.show(), after=y.show())
    if len(left.items) != len(right.items):
        n, m = len(left.items), len(right.items)
        extra = (left.items if n > m else right.items)[min(n, m)]
        side = "before" if n > m else "after"
        return Difference(
            where=where,
            what=f"{n} output(s) became {m}",
            before=extra.show() if side == "before" else "(nothing)",
            after=extra.show() if side == "after" else "(nothing)",
        )
    return None


def _compared(run: dict[str, Any], i: int) -> CellOutputs:
    shown = [
        o
        for o in run.get("compared", [])
        if o.get("output_type") in ("display_data", "execute_result", "error")
    ]
    found = cell_outputs(shown[i : i + 1]) if i < len(shown) else CellOutputs()
    if i >= len(shown):
        found.items.append(Item("text", "(not shown)"))
    return found


def _where(cell: dict[str, Any]) -> str:
    return f"cell {cell['index'] + 1}" + (f" ({cell['id']})" if cell.get("id") else "")


def _key(cell: dict[str, Any]) -> str:
    return str(cell.get("id") or cell["index"])
