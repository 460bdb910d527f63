"""Notebook edits on files laid out as other tools (and people) write them: edit, insert and delete change
only the bytes of that cell's span (an edit, only its source value) or the block between two cells, whatever
the layout: compact one-line JSON, short arrays on one line, upper-case \\u001B escapes, hand-edited
whitespace, ASCII with or without escapes, CRLF, two-space indents with unsorted keys. Each file is made here
from one notebook; the result must also parse to exactly the intended notebook and pass nbformat's checks."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellTool,
    EditNotebookCellTool,
    InsertNotebookCellTool,
)
from tests.support.notebooks import KERNEL, rich_cells


def base_notebook() -> dict[str, Any]:
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(KERNEL), cells=rich_cells())
    nb.cells[2].metadata["tags"] = ["remove-cell"]
    data: dict[str, Any] = json.loads(nbformat.writes(nb))
    return data


def nbformat_text(nb: dict[str, Any]) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def short_arrays(value: Any, level: int = 0) -> str:
    """Indent 1, sorted keys, but arrays of short scalars on one line, as some documentation projects keep."""
    pad, end = " " * (level + 1), " " * level
    if isinstance(value, dict) and value:
        items = [f"{pad}{json.dumps(k)}: {short_arrays(v, level + 1)}" for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list) and value:
        if all(not isinstance(v, (dict, list)) for v in value):
            one = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
            if len(one) <= 60:
                return one
        return "[\n" + ",\n".join(pad + short_arrays(v, level + 1) for v in value) + "\n" + end + "]"
    return json.dumps(value, ensure_ascii=False)


def hand_edited(nb: dict[str, Any]) -> str:
    """nbformat's layout after a person's edits: a trailing space, a blank line between two cells, a missing
    space after a colon."""
    text = nbformat_text(nb)
    text = text.replace('"nbformat": 4,\n', '"nbformat": 4, \n')
    first_end = text.index("\n  },\n") + len("\n  },\n")
    text = text[:first_end] + "\n" + text[first_end:]
    return text.replace('"cell_type": "raw"', '"cell_type":"raw"')


def vscode_like(nb: dict[str, Any]) -> str:
    """Two-space indent, keys in an editor's own order (not sorted), no final newline."""
    order = ["cell_type", "id", "metadata", "source", "execution_count", "outputs"]
    cells = [{k: cell[k] for k in order if k in cell} for cell in nb["cells"]]
    ordered = {
        "cells": cells,
        "metadata": nb["metadata"],
        "nbformat": 4,
        "nbformat_minor": nb["nbformat_minor"],
    }
    return json.dumps(ordered, indent=2, ensure_ascii=False)


def ascii_plain(nb: dict[str, Any]) -> str:
    """An ASCII-only notebook with no escapes at all (nothing non-ASCII in it)."""
    text = nbformat_text(nb).replace("Áreas — análisis", "Areas - analysis")
    assert text.isascii()
    return text


LAYOUTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "nbformat": nbformat_text,
    "compact": json.dumps,
    "minified": lambda nb: json.dumps(nb, separators=(",", ":"), ensure_ascii=False),
    "short-arrays": lambda nb: short_arrays(nb) + "\n",
    "upper-escapes": lambda nb: nbformat_text(nb).replace("\\u001b", "\\u001B"),
    "hand-edited": hand_edited,
    "ascii-escaped": lambda nb: json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=True) + "\n",
    "ascii-plain": ascii_plain,
    "crlf": lambda nb: nbformat_text(nb).replace("\n", "\r\n"),
    "vscode": vscode_like,
}


# ---------------------------------------------------------------------------- where the bytes of a cell are

_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    while text[pos] in " \t\r\n":
        pos += 1
    return pos


def _items(text: str, start: int) -> list[tuple[int, int, Any]]:
    """(start, end, key) of each item of the container at `start` (key None in an array)."""
    closing = "}" if text[start] == "{" else "]"
    items, pos = [], _skip(text, start + 1)
    while text[pos] != closing:
        key = None
        if closing == "}":
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, _skip(text, pos) + 1)
        value_start = pos
        _, pos = _DECODER.raw_decode(text, pos)
        items.append((value_start, pos, key))
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return items


def cell_spans(text: str) -> tuple[int, int, list[tuple[int, int]]]:
    """The cells array's '[' and ']' offsets and each cell's (start, end) in `text`."""
    (start, end, _) = next(item for item in _items(text, _skip(text, 0)) if item[2] == "cells")
    return start, end - 1, [(s, e) for s, e, _ in _items(text, start)]


def source_span(text: str, cell_start: int) -> tuple[int, int]:
    start, end, _ = [item for item in _items(text, cell_start) if item[2] == "source"][-1]
    return start, end


def keys_of(text: str, index: int) -> list[str]:
    cells = next(value for key, value in json.loads(text, object_pairs_hook=list) if key == "cells")
    return [key for key, _ in cells[index]]


def changed_within(before: str, after: str, lo: int, hi: int) -> bool:
    """Whether `after` is `before` with only characters in [lo, hi) replaced (by anything)."""
    p = 0
    while p < min(len(before), len(after)) and before[p] == after[p]:
        p += 1
    s = 0
    while s < min(len(before), len(after)) and before[-1 - s] == after[-1 - s]:
        s += 1
    return p >= lo and len(before) - s <= hi and len(after) - len(before) + hi - lo >= 0


# ------------------------------------------------------------------------------------------------ the tests


@pytest.fixture(params=list(LAYOUTS))
def laid_out(request: pytest.FixtureRequest, workspace: Path) -> tuple[Path, str]:
    text = LAYOUTS[request.param](base_notebook())
    path = workspace / "nb.ipynb"
    path.write_bytes(text.encode())
    return path, text


def read(path: Path) -> str:
    after = path.read_bytes().decode()
    nbformat.validate(nbformat.reads(after, as_version=nbformat.NO_CONVERT))
    return after


def test_edit_rewrites_only_that_cells_source(laid_out: tuple[Path, str], workspace: Path) -> None:
    path, before = laid_out
    result = EditNotebookCellTool(workspace).execute(
        path="nb.ipynb",
        cell_id="index:1",
        old_str="    return math.pi * r ** 2",
        new_str='    """The area: π r²."""\n    return math.pi * r * r',
    )
    assert result.success, result.error
    assert "standard layout" not in result.output
    after = read(path)
    expected = json.loads(before)
    source = "".join(expected["cells"][1]["source"]).replace(
        "    return math.pi * r ** 2", '    """The area: π r²."""\n    return math.pi * r * r'
    )
    expected["cells"][1]["source"] = source.splitlines(True)
    assert json.loads(after) == expected
    _, _, cells = cell_spans(before)
    assert changed_within(before, after, *source_span(before, cells[1][0]))


def test_edit_of_a_one_line_source_keeps_it_on_one_line(laid_out: tuple[Path, str], workspace: Path) -> None:
    path, before = laid_out
    result = EditNotebookCellTool(workspace).execute(
        path="nb.ipynb", cell_id="index:4", old_str="side = 3", new_str="side = 4"
    )
    assert result.success, result.error
    after = read(path)
    start, end = source_span(before, cell_spans(before)[2][4][0])
    assert changed_within(before, after, start, end)
    assert before[start:end].replace('"side = 3', '"side = 4') == after[start:end]  # same layout exactly


@pytest.mark.parametrize(
    ("where", "position"), [({"after_cell_id": "index:1"}, 2), ({}, 5), ({"index": 0}, 0)]
)
def test_insert_writes_one_block_between_two_cells(
    laid_out: tuple[Path, str], workspace: Path, where: dict[str, Any], position: int
) -> None:
    path, before = laid_out
    source = "# Notes é\nprint(area(3))\n"
    result = InsertNotebookCellTool(workspace).execute(path="nb.ipynb", source=source, **where)
    assert result.success, result.error
    after = read(path)
    new = json.loads(after)["cells"][position]
    expected = json.loads(before)
    expected["cells"].insert(
        position,
        {
            "cell_type": "code",
            "execution_count": None,
            "id": new["id"],
            "metadata": {},
            "outputs": [],
            "source": source.splitlines(True),
        },
    )
    assert json.loads(after) == expected
    open_at, close_at, cells = cell_spans(before)
    lo = cells[position - 1][1] if position else open_at + 1
    hi = cells[position][0] if position < len(cells) else close_at
    assert changed_within(before, after, lo, hi)
    assert keys_of(after, position) == keys_of(before, 1)  # in the key order of the file's code cells
    if "\\u00c1reas" in before:  # "Áreas" escaped: the file escapes non-ASCII text
        assert after.isascii() and "\\u00e9" in after  # so the new cell does too
    else:
        assert "# Notes é" in after  # raw UTF-8, as Jupyter, VS Code and Colab write it


@pytest.mark.parametrize("index", [3, 4, 0])
def test_delete_takes_out_one_cell_and_one_separator(
    laid_out: tuple[Path, str], workspace: Path, index: int
) -> None:
    path, before = laid_out
    result = DeleteNotebookCellTool(workspace, allow_delete=True).execute(
        path="nb.ipynb", cell_id=f"index:{index}"
    )
    assert result.success, result.error
    after = read(path)
    expected = json.loads(before)
    del expected["cells"][index]
    assert json.loads(after) == expected
    open_at, close_at, cells = cell_spans(before)
    lo = cells[index - 1][1] if index else open_at + 1
    hi = cells[index + 1][0] if index + 1 < len(cells) else close_at
    assert changed_within(before, after, lo, hi)
    assert (
        len(after) < len(before) - (cells[index][1] - cells[index][0]) + 8
    )  # the cell and its separator only


def test_a_hand_edited_cell_keeps_its_own_bytes(workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    before = hand_edited(base_notebook())
    path.write_text(before)
    result = EditNotebookCellTool(workspace).execute(
        path="nb.ipynb", cell_id="index:2", old_str="left alone", new_str="kept as it is"
    )
    assert result.success, result.error
    after = path.read_text()
    assert after == before.replace('"raw text, left alone\\n"', '"raw text, kept as it is\\n"')
    assert '"cell_type":"raw"' in after and '"nbformat": 4, \n' in after and "},\n\n  {" in after


def test_upper_case_escapes_stay_upper_case(workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(LAYOUTS["upper-escapes"](base_notebook()))
    result = EditNotebookCellTool(workspace).execute(
        path="nb.ipynb", cell_id="index:4", old_str="side = 3", new_str="side = 3  # \x1b[1mbold\x1b[0m"
    )
    assert result.success, result.error
    after = path.read_text()
    assert "\\u001b" not in after and after.count("\\u001B") == 4  # two in the traceback, two new ones


def test_a_notebook_whose_sources_are_strings_gets_a_string_source(workspace: Path) -> None:
    nb = base_notebook()
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"])
    path = workspace / "nb.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    result = InsertNotebookCellTool(workspace).execute(path="nb.ipynb", index=1, source="a = 1\nb = 2\n")
    assert result.success, result.error
    assert json.loads(path.read_text())["cells"][1]["source"] == "a = 1\nb = 2\n"


# --------------------------------------------------------------------------------------- any text, any layout

_TEXT = st.text(alphabet=st.sampled_from(list('ab "\\/\n\t\x1bé€😀{}[],:')), max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    layout=st.sampled_from(list(LAYOUTS)),
    sources=st.lists(_TEXT, min_size=1, max_size=4),
    new=_TEXT,
    op=st.sampled_from(["edit", "insert", "delete"]),
    index=st.integers(0, 10),
)
def test_any_source_in_any_layout(
    workspace: Path, layout: str, sources: list[str], new: str, op: str, index: int
) -> None:
    nb = base_notebook()
    nb["cells"] = nb["cells"][:2] + [
        {"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": (s + "#END").splitlines(True)}
        for i, s in enumerate(sources)
    ]
    before = nbformat_text(nb) if layout == "ascii-plain" else LAYOUTS[layout](nb)
    path = workspace / "fuzz.ipynb"
    path.write_bytes(before.encode())
    k = index % len(nb["cells"])
    expected = json.loads(before)
    if op == "edit":
        old = "".join(expected["cells"][k]["source"])
        args = {"cell_id": f"index:{k}", "old_str": old, "new_str": new + "!"}
        result = EditNotebookCellTool(workspace).execute(path="fuzz.ipynb", **args)
        if not old or not result.success:
            assert path.read_text(encoding="utf-8") == before
            return
        expected["cells"][k]["source"] = (new + "!").splitlines(True)
        lo, hi = source_span(before, cell_spans(before)[2][k][0])
    elif op == "insert":
        result = InsertNotebookCellTool(workspace).execute(
            path="fuzz.ipynb", index=k, cell_type="raw", source=new
        )
        assert result.success, result.error
        cell = json.loads(path.read_text(encoding="utf-8"))["cells"][k]
        expected["cells"].insert(
            k, {"cell_type": "raw", "id": cell["id"], "metadata": {}, "source": new.splitlines(True)}
        )
        open_at, _, cells = cell_spans(before)
        lo, hi = (cells[k - 1][1] if k else open_at + 1), cells[k][0]
    else:
        result = DeleteNotebookCellTool(workspace, allow_delete=True).execute(
            path="fuzz.ipynb", cell_id=f"index:{k}"
        )
        assert result.success, result.error
        del expected["cells"][k]
        open_at, close_at, cells = cell_spans(before)
        lo = cells[k - 1][1] if k else open_at + 1
        hi = cells[k + 1][0] if k + 1 < len(cells) else close_at
    after = read(path)
    assert json.loads(after) == expected
    assert changed_within(before, after, lo, hi), (layout, op, k)
