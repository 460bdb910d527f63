"""The notebook outline an `%%architect` run starts with, kept within a token budget however long the
notebook is.

Every cell gets a line: its number and execution count, its marks, its first line and its outputs in brief.
The cells just above the running one, and those the task names, come in full (source, and outputs with a
DataFrame's head and an error's last frames). When that is over the budget, whole cells farthest from the
running cell are left out first, as ranges read_notebook can show ("cells 10-59: not shown"); cells with an
error or a mark, and Markdown headings, are kept longer. Tokens are estimated from characters, on the safe
side for code (`CHARS_PER_TOKEN`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from architect_nb.notebook.context.references import Reference
from architect_nb.notebook.context.staleness import Marks
from architect_nb.notebook.context.view import CellView, NotebookView
from architect_nb.tools.notebook_files.outputs import error_frames, outputs_brief

__all__ = ["CHARS_PER_TOKEN", "OutlineParts", "render_outline"]

#: An outline of code runs 2.8-3.5 characters per token (gpt-4o's tokenizer); 2.8 keeps it within budget.
CHARS_PER_TOKEN = 2.8
ABOVE_IN_FULL = 3
_FIRST_LINE = 72
_BRIEF = 60
_FULL_LINES = (30, 12, 5)  # lines of a cell shown in full, tried in turn until the outline fits
_FULL_WIDTH = 160


@dataclass(frozen=True, slots=True)
class OutlineParts:
    """What the outline shows besides the view: the marks, the references and the budget."""

    marks: dict[int, Marks]
    references: Sequence[Reference] = ()
    budget_tokens: int = 1500


def _first_line(cell: CellView) -> tuple[str, int]:
    lines = cell.source.strip("\n").split("\n")
    first = next((line.strip() for line in lines if line.strip()), "")
    if len(first) > _FIRST_LINE:
        first = first[: _FIRST_LINE - 1] + "…"
    return first, len([line for line in lines if line.strip()])


def _marks_text(mark: Marks | None) -> str:
    words = mark.words() if mark is not None else []
    return " {" + "; ".join(words) + "}" if words else ""


def _head(view: NotebookView, cell: CellView, marks: dict[int, Marks]) -> str:
    kind = "" if cell.kind == "code" else f" {'md' if cell.kind == 'markdown' else cell.kind}"
    own = " (this cell)" if cell.index == view.own else ""
    return f"{cell.label}{kind}{own}{_marks_text(marks.get(cell.index))}"


def _line(view: NotebookView, cell: CellView, marks: dict[int, Marks]) -> str:
    if cell.index == view.own:
        return f"{_head(view, cell, marks)}: %%architect (the task)"
    first, count = _first_line(cell)
    more = f" (+{count - 1} lines)" if count > 1 else ""
    text = f"{_head(view, cell, marks)}: {first or '(empty)'}{more}"
    briefs = outputs_brief(cell.outputs, width=_BRIEF)
    if briefs:
        text += " → " + briefs[0] + (f" (+{len(briefs) - 1} more)" if len(briefs) > 1 else "")
    return text


def _full(view: NotebookView, cell: CellView, marks: dict[int, Marks], max_lines: int) -> str:
    lines = cell.source.rstrip("\n").split("\n")
    shown = [f"    {line[:_FULL_WIDTH]}" for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"    [... {len(lines) - max_lines} more lines]")
    parts = [f"{_head(view, cell, marks)}, in full:", *shown]
    for output in cell.outputs:
        if output.get("output_type") == "error":
            frames = error_frames(dict(output), last=3)
            parts.extend(f"    at {frame[:_FULL_WIDTH]}" for frame in frames)
    for brief in outputs_brief(cell.outputs, width=_FULL_WIDTH, head_lines=5 if max_lines > 5 else 2):
        parts.append(f"  → {brief}")
    return "\n".join(parts)


def _in_full(view: NotebookView, parts: OutlineParts) -> set[int]:
    chosen = {cell for reference in parts.references for cell in reference.cells}
    if view.selected is not None:
        chosen.add(view.selected)
    if view.own is not None:
        above = [c.index for c in view.cells[: view.own] if c.source.strip() and not c.is_architect]
        chosen.update(above[-ABOVE_IN_FULL:])
    chosen.discard(view.own if view.own is not None else -1)
    return chosen


def _keep_order(view: NotebookView, marks: dict[int, Marks], full: set[int]) -> list[int]:
    """The cells not shown in full, those to leave out first at the front."""
    anchor = view.own if view.own is not None else len(view.cells) - 1

    def weight(cell: CellView) -> float:
        distance = abs(cell.index - anchor) + 1.0
        if cell.has_error or cell.index in marks:
            distance /= 4
        elif cell.kind == "markdown" and cell.source.lstrip().startswith("#"):
            distance /= 2
        return distance

    rest = [cell for cell in view.cells if cell.index not in full and cell.index != view.own]
    return [cell.index for cell in sorted(rest, key=weight, reverse=True)]


def _header(view: NotebookView) -> list[str]:
    n = len(view.cells)
    where = f" ({view.where})" if view.where else ""
    name = view.path or "this notebook"
    if view.origin == "history":
        lines = [
            f"No notebook could be read for this %%architect cell ({view.where}): below are the {n} cells "
            "this kernel ran, by execution count [n]. Name them to the person that way, e.g. [7]."
        ]
    else:
        lines = [
            f"The notebook this %%architect cell runs in: {name}{where}; {n} cell{'s' if n != 1 else ''}, "
            "numbered from 0 as the notebook tools number them ('index:N'); [n] is the execution count the "
            "person sees beside a cell. Name cells to the person the same way (cell N [n])."
        ]
    if not view.readable and view.origin != "history":
        lines.append("It is outside the workspace, so read_notebook cannot read it.")
    if view.through_front_end:
        lines.append(
            f"Its file is outside the workspace, so the notebook tools reach it through the front end, by "
            f"path='{name}': they read and change the open notebook, and the person's save writes it."
        )
    if view.readable:
        lines.append(
            f"read_notebook(path='{name}#N', include_outputs=true) shows cell N's outputs in full "
            "(tracebacks, images); '#N-M' a range."
        )
    if view.own is not None:
        lines.append(f"This cell is {view.cells[view.own].label}.")
    else:
        lines.append("Where this cell is in it is not known.")
    if view.selected is not None and view.selected != view.own:
        lines.append(f"The person had {view.cells[view.selected].label} selected.")
    if view.editing is not None:
        lines.append(f"The person is typing in {view.cells[view.editing].label}: leave it alone.")
    lines.extend(view.notes)
    return lines


def _references(view: NotebookView, references: Sequence[Reference]) -> list[str]:
    if not references:
        return []
    said = []
    for reference in references:
        names = ", ".join(view.cells[i].label for i in reference.cells) or "no cell"
        note = f" ({reference.note})" if reference.note else ""
        said.append(f'"{reference.phrase}" = {names}{note}')
    return ["In the task: " + "; ".join(said) + "."]


_TRUST = {
    "open": "Sources and outputs are as the front end shows them now, unsaved typing included.",
    "file": "Sources and outputs are the file as last saved: typing since then is not in it.",
    "history": "They are the sources as they ran, with results and errors; what they printed is not kept.",
}


def _legend(view: NotebookView, marks: dict[int, Marks]) -> list[str]:
    lines = [_TRUST[view.origin]]
    if any(mark.any for mark in marks.values()):
        lines.append(
            "Cells marked {...} may not match the kernel: their outputs can be from other code, or their "
            "names changed since; do not trust those outputs without re-running or checking them "
            "(list_variables, inspect_variable)."
        )
    return lines


def _render(
    view: NotebookView, parts: OutlineParts, full: dict[int, str], lines: dict[int, str], left_out: set[int]
) -> str:
    out = [*_header(view), *_references(view, parts.references)]
    index = 0
    cells = view.cells
    while index < len(cells):
        if index in left_out:
            end = index
            while end + 1 < len(cells) and end + 1 in left_out:
                end += 1
            span = f"cell {index}" if end == index else f"cells {index}-{end}"
            out.append(f"{span}: not shown (read_notebook shows them)")
            index = end + 1
            continue
        out.append(full[index] if index in full else lines[index])
        index += 1
    out.extend(_legend(view, parts.marks))
    return "\n".join(out)


def render_outline(view: NotebookView, parts: OutlineParts) -> str:
    """The outline of `view`, within `parts.budget_tokens` (estimated) as far as the header allows."""
    budget = int(parts.budget_tokens * CHARS_PER_TOKEN)
    marks = parts.marks
    chosen = _in_full(view, parts)
    lines = {cell.index: _line(view, cell, marks) for cell in view.cells}
    order = _keep_order(view, marks, chosen)
    text = ""
    for max_lines in _FULL_LINES:
        full = {i: _full(view, view.cells[i], marks, max_lines) for i in sorted(chosen)}
        text = _render(view, parts, full, lines, set())
        if len(text) <= budget:
            return text
        # Leave out the fewest cells that bring it within budget (the count is found by halving).
        low, high = 1, len(order)
        best: str | None = None
        while low <= high:
            middle = (low + high) // 2
            candidate = _render(view, parts, full, lines, set(order[:middle]))
            if len(candidate) <= budget:
                best, high = candidate, middle - 1
            else:
                low = middle + 1
        if best is not None and (max_lines == _FULL_LINES[-1] or len(order) - (low - 1) >= len(order) // 4):
            return best
        text = best or _render(view, parts, full, lines, set(order))
    return text
