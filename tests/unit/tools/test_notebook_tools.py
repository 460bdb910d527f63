"""The notebook tools on real notebooks made with nbformat (4.5 with ids, 4.4 without): each edit is checked
against what nbformat itself writes for the same change, so only the edited cell differs, byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellTool,
    EditNotebookCellTool,
    InsertNotebookCellTool,
    ReadNotebookTool,
)
from tests.support.notebooks import PNG_B64, nbformat_rewrite, write_v44, write_v45


@pytest.fixture(params=["4.5", "4.4"])
def notebook(request: pytest.FixtureRequest, workspace: Path) -> Path:
    path = workspace / "analysis.ipynb"
    return write_v45(path) if request.param == "4.5" else write_v44(path)


def cell_ref(path: Path, index: int) -> str:
    """The id the model would use: the cell id in 4.5, 'index:N' in 4.4."""
    cell = json.loads(path.read_text())["cells"][index]
    return str(cell.get("id", f"index:{index}"))


def changed_lines(before: bytes, after: bytes) -> int:
    import difflib

    diff = difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(), n=0, lineterm="")
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


# --------------------------------------------------------------------------- read_notebook


def test_outline_shows_cells_kernel_and_summarized_outputs(notebook: Path, workspace: Path) -> None:
    result = ReadNotebookTool(workspace).execute(path="analysis.ipynb")
    assert result.success, result.error
    text = result.output
    minor = json.loads(notebook.read_text())["nbformat_minor"]
    assert text.splitlines()[0] == (
        f"analysis.ipynb: nbformat 4.{minor}, kernel python3 (Python 3 (ipykernel)), "
        "language python 3.11.7; 5 cells, numbered from 0."
    )
    ids = [c.get("id") for c in json.loads(notebook.read_text())["cells"]]
    label = (
        (lambda i, kind: f"[cell {i} id={ids[i]} {kind}") if minor == 5 else (lambda i, k: f"[cell {i} {k}")
    )
    assert label(0, "markdown") + "]" in text
    assert label(1, "code") + ", In [1]]" in text
    assert label(2, "raw") + "]" in text
    assert "1 | # Áreas — análisis" in text
    assert "4 |     return math.pi * r ** 2" in text
    assert "outputs: stream stdout (1 line, 24 bytes); display_data image/png (" in text
    assert "error ValueError: bad input" in text
    assert PNG_B64[:40] not in text and "<b>42</b>" not in text and "area 12.56" not in text
    assert result.metadata["cells"] == 5


def test_outline_with_outputs_shows_text_never_base64(notebook: Path, workspace: Path) -> None:
    text = ReadNotebookTool(workspace).execute(path="analysis.ipynb", include_outputs=True).output
    assert "[output 0] stream stdout (1 line, 24 bytes):\n    | area 12.566370614359172" in text
    assert "    | <Figure size 640x480>" in text
    assert "    | 42" in text
    assert "    | ValueError: bad input" in text and "\x1b[" not in text
    assert PNG_B64[:40] not in text and "<b>42</b>" not in text


def test_outline_of_a_huge_notebook_stops_at_a_cell_and_says_how_to_go_on(workspace: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x{i} = {i}\n" * 50) for i in range(40)])
    nbformat.write(nb, workspace / "big.ipynb")
    result = ReadNotebookTool(workspace, max_chars=5000).execute(path="big.ipynb")
    assert result.success
    shown = result.metadata["cells_shown"]
    assert 0 < shown < 40
    assert f"[... cells {shown}-39 not shown" in result.output and "'index:N'" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("just text\n", "is not valid JSON"),
        ('{"a": 1}', "is not a Jupyter notebook"),
        ('{"cells": [], "nbformat": 3}', "only nbformat 4 is supported"),
        ('{"cells": [{"source": "x"}], "nbformat": 4}', "Cell 0 of 'x.ipynb' is malformed"),
    ],
)
def test_what_is_not_a_notebook_is_refused(workspace: Path, content: str, message: str) -> None:
    (workspace / "x.ipynb").write_text(content)
    for tool, extra in [
        (ReadNotebookTool(workspace), {}),
        (EditNotebookCellTool(workspace), {"cell_id": "0", "old_str": "x", "new_str": "y"}),
    ]:
        result = tool.execute(path="x.ipynb", **extra)
        assert not result.success and message in (result.error or ""), result.error
    assert (workspace / "x.ipynb").read_text() == content


# --------------------------------------------------------------------------- edit_notebook_cell


def test_edit_changes_only_that_cell_byte_for_byte(notebook: Path, workspace: Path) -> None:
    before = notebook.read_bytes()
    tool = EditNotebookCellTool(workspace)
    args = {
        "path": "analysis.ipynb",
        "cell_id": cell_ref(notebook, 1),
        "old_str": "    return math.pi * r ** 2",
        "new_str": '    """The area of a circle."""\n    return math.pi * r * r',
    }
    preview = tool.preview(**args)
    assert notebook.read_bytes() == before  # a preview writes nothing
    result = tool.execute(**args)
    assert result.success, result.error
    after = notebook.read_bytes()

    def change(nb: Any) -> None:
        nb.cells[1].source = nb.cells[1].source.replace(args["old_str"], args["new_str"])

    assert after == nbformat_rewrite(before, change)  # outputs, ids, metadata, layout: all as nbformat's
    assert changed_lines(before, after) == 3
    header = (
        f"analysis.ipynb [cell 1{' id=' + args['cell_id'] if 'index' not in args['cell_id'] else ''} code]"
    )
    assert result.metadata["diff"] == preview
    assert preview is not None and preview.startswith(f"--- a/{header}\n+++ b/{header}\n@@ -1,6 +1,7 @@\n")
    assert "-    return math.pi * r ** 2\n+" in preview and '"cells"' not in preview
    assert result.output.startswith(f"Edited {header[16:-1]} of analysis.ipynb at line 4 (+2 -1 lines).")


@pytest.mark.parametrize("index", [0, 2])
def test_edit_markdown_and_raw_cells(notebook: Path, workspace: Path, index: int) -> None:
    before = notebook.read_bytes()
    old, new = ("Circles", "Discs") if index == 0 else ("left alone", "kept as is")
    result = EditNotebookCellTool(workspace).execute(
        path="analysis.ipynb", cell_id=f"index:{index}", old_str=old, new_str=new
    )
    assert result.success, result.error

    def change(nb: Any) -> None:
        nb.cells[index].source = nb.cells[index].source.replace(old, new)

    assert notebook.read_bytes() == nbformat_rewrite(before, change)
    assert changed_lines(before, notebook.read_bytes()) == 2


@pytest.mark.parametrize("ref", ["index:4", "4", "-1", "#4", "INDEX: 4", "cell 4"])
def test_cells_are_named_by_index_too(notebook: Path, workspace: Path, ref: str) -> None:
    result = EditNotebookCellTool(workspace).execute(
        path="analysis.ipynb", cell_id=ref, old_str="side = 3", new_str="side = 4"
    )
    assert result.success, result.error
    assert json.loads(notebook.read_text())["cells"][4]["source"][0] == "side = 4\n"


def test_edit_errors_are_edit_files(notebook: Path, workspace: Path) -> None:
    tool = EditNotebookCellTool(workspace)
    before = notebook.read_bytes()
    ref = cell_ref(notebook, 1)
    missing = tool.execute(path="analysis.ipynb", cell_id=ref, old_str="retrun math.pi", new_str="x")
    assert "old_str was not found in 'analysis.ipynb [cell 1" in (missing.error or "")
    assert "4 |     return math.pi * r ** 2" in (missing.error or "")  # the closest lines, numbered
    twice = tool.execute(path="analysis.ipynb", cell_id=ref, old_str="r", new_str="x")
    assert re.search(
        r"old_str occurs \d+ times in 'analysis\.ipynb \[cell 1.*at lines 1, ", twice.error or ""
    )
    elsewhere = tool.execute(path="analysis.ipynb", cell_id="index:0", old_str="math.pi", new_str="x")
    assert "not found" in (elsewhere.error or "")  # the text exists, but in another cell
    unknown = tool.execute(path="analysis.ipynb", cell_id="nope", old_str="a", new_str="b")
    assert "No cell of 'analysis.ipynb' has id 'nope'" in (unknown.error or "")
    assert "'index:N' (0-based)" in (unknown.error or "")
    out_of_range = tool.execute(path="analysis.ipynb", cell_id="index:9", old_str="a", new_str="b")
    assert out_of_range.error == "Cell index 9 is out of range: 'analysis.ipynb' has 5 cells (0-4)."
    assert notebook.read_bytes() == before


def test_loose_match_as_edit_file(workspace: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1   \ny = 2")])
    nbformat.write(nb, workspace / "n.ipynb")
    result = EditNotebookCellTool(workspace).execute(
        path="n.ipynb", cell_id="0", old_str="x = 1\ny = 2", new_str="x = 3\ny = 4"
    )
    assert result.success and "Loose match" in result.output
    assert json.loads((workspace / "n.ipynb").read_text())["cells"][0]["source"] == ["x = 3\n", "y = 4"]


def test_an_invalid_result_is_refused_and_the_file_untouched(workspace: Path) -> None:
    nb = json.loads(json.dumps(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1")])))
    del nb["cells"][0]["outputs"]  # nbformat requires outputs on a code cell
    path = workspace / "broken.ipynb"
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    before = path.read_bytes()
    result = EditNotebookCellTool(workspace).execute(
        path="broken.ipynb", cell_id="0", old_str="a = 1", new_str="a = 2"
    )
    assert not result.success
    assert "would leave 'broken.ipynb' an invalid notebook" in (result.error or "")
    assert "'outputs' is a required property" in (result.error or "")
    assert "already invalid" in (result.error or "")
    assert path.read_bytes() == before


def test_a_foreign_layout_is_kept(workspace: Path) -> None:
    """A notebook written with indent 2 and unsorted keys (as some editors do) keeps its layout."""
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"language_info": {"name": "python"}},
        "cells": [
            {
                "id": "a1",
                "cell_type": "code",
                "source": "a = 1\nb = 2\n",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            },
            {"id": "b2", "cell_type": "markdown", "source": "Ünïcode \\u escapes: \u00e9", "metadata": {}},
        ],
    }
    path = workspace / "vs.ipynb"
    path.write_text(json.dumps(nb, indent=2, ensure_ascii=False))  # no final newline either
    before = path.read_bytes()
    result = EditNotebookCellTool(workspace).execute(
        path="vs.ipynb", cell_id="a1", old_str="b = 2", new_str="b = 3"
    )
    assert result.success and "standard layout" not in result.output
    nb["cells"][0]["source"] = "a = 1\nb = 3\n"  # a string source stays a string
    assert path.read_bytes() == json.dumps(nb, indent=2, ensure_ascii=False).encode()
    assert changed_lines(before, path.read_bytes()) == 2


def test_crlf_line_ends_are_kept(notebook: Path, workspace: Path) -> None:
    crlf = notebook.read_bytes().replace(b"\n", b"\r\n")
    notebook.write_bytes(crlf)
    result = EditNotebookCellTool(workspace).execute(
        path="analysis.ipynb", cell_id="index:4", old_str="side = 3", new_str="side = 4"
    )
    assert result.success and "standard layout" not in result.output
    assert notebook.read_bytes() == crlf.replace(b'"side = 3\\n"', b'"side = 4\\n"')


def test_hand_made_whitespace_is_kept(workspace: Path) -> None:
    path = workspace / "odd.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1")])
    path.write_text(json.dumps(nb, indent=1, sort_keys=True).replace('"a = 1"', '"a = 1"   '))
    before = path.read_text()
    result = EditNotebookCellTool(workspace).execute(
        path="odd.ipynb", cell_id="0", old_str="a = 1", new_str="a = 2"
    )
    assert result.success and "standard layout" not in result.output
    assert path.read_text() == before.replace('"a = 1"   ', '"a = 2"   ')


def test_a_layout_that_cannot_be_kept_is_said(workspace: Path) -> None:
    """A first cell has no neighbour to take a layout from: the file is written whole, and the result says
    so."""
    path = workspace / "empty.ipynb"
    nb = nbformat.v4.new_notebook()
    path.write_text(json.dumps(nb, indent=1, sort_keys=True).replace('"cells": []', '"cells":   [ ]'))
    result = InsertNotebookCellTool(workspace).execute(path="empty.ipynb", source="a = 1")
    assert result.success and "git diff` shows formatting changes too" in result.output
    assert nbformat.validate(nbformat.read(path, as_version=4)) is None
    assert json.loads(path.read_text())["cells"][0]["source"] == ["a = 1"]


def test_read_only_and_escaping_paths_are_refused(notebook: Path, workspace: Path) -> None:
    notebook.chmod(0o444)
    try:
        result = EditNotebookCellTool(workspace).execute(
            path="analysis.ipynb", cell_id="index:4", old_str="side", new_str="s"
        )
        assert result.error == "'analysis.ipynb' is read-only; it is left unchanged."
    finally:
        notebook.chmod(0o644)
    escaped = ReadNotebookTool(workspace).execute(path="../analysis.ipynb")
    assert not escaped.success


# --------------------------------------------------------------------------- insert_notebook_cell


def test_insert_after_a_cell_with_a_fresh_id_only_in_45(notebook: Path, workspace: Path) -> None:
    before = notebook.read_bytes()
    tool = InsertNotebookCellTool(workspace)
    args = {"path": "analysis.ipynb", "after_cell_id": cell_ref(notebook, 1), "source": "area(3)\n"}
    preview = tool.preview(**args)
    result = tool.execute(**args)
    assert result.success, result.error
    cells = json.loads(notebook.read_text())["cells"]
    new = cells[2]
    is45 = json.loads(before)["nbformat_minor"] == 5
    if is45:
        assert re.fullmatch(r"[0-9a-f]{8}", new["id"]) and len({c["id"] for c in cells}) == 6
    else:
        assert "id" not in new

    def change(nb: Any) -> None:
        cell = nbformat.v4.new_code_cell("area(3)\n")
        if is45:
            cell.id = new["id"]
        else:
            del cell["id"]
        nb.cells.insert(2, cell)

    assert notebook.read_bytes() == nbformat_rewrite(before, change)
    assert result.metadata["diff"] == preview  # the preview names the same id the write gives
    label = f"cell 2 id={new['id']} code" if is45 else "cell 2 code"
    assert preview == f"--- /dev/null\n+++ b/analysis.ipynb [{label}]\n@@ -0,0 +1 @@\n+area(3)\n"


@pytest.mark.parametrize(
    ("args", "position"), [({"index": 0}, 0), ({}, 5), ({"index": 5}, 5), ({"after_cell_id": "index:-1"}, 5)]
)
def test_insert_positions(notebook: Path, workspace: Path, args: dict[str, Any], position: int) -> None:
    result = InsertNotebookCellTool(workspace).execute(
        path="analysis.ipynb", cell_type="markdown", source="## Notes", **args
    )
    assert result.success, result.error
    cell = json.loads(notebook.read_text())["cells"][position]
    assert (cell["cell_type"], cell["source"]) == ("markdown", ["## Notes"])
    assert "outputs" not in cell and "execution_count" not in cell


def test_insert_refuses_bad_positions(notebook: Path, workspace: Path) -> None:
    tool = InsertNotebookCellTool(workspace)
    before = notebook.read_bytes()
    both = tool.execute(path="analysis.ipynb", after_cell_id="index:0", index=1, source="x")
    assert both.error == "Give after_cell_id or index, not both."
    far = tool.execute(path="analysis.ipynb", index=9, source="x")
    assert far.error == "index 9 is out of range: give 0 to 5 ('analysis.ipynb' has 5 cells)."
    kind = tool.execute(path="analysis.ipynb", cell_type="sql", source="x")
    assert not kind.success and "cell_type" in (kind.error or "")
    assert notebook.read_bytes() == before


# --------------------------------------------------------------------------- delete_notebook_cell


def test_delete_follows_allow_delete(notebook: Path, workspace: Path) -> None:
    before = notebook.read_bytes()
    ref = cell_ref(notebook, 3)
    denied = DeleteNotebookCellTool(workspace).execute(path="analysis.ipynb", cell_id=ref)
    assert "workspace.allow_delete is false" in (denied.error or "")
    assert notebook.read_bytes() == before
    result = DeleteNotebookCellTool(workspace, allow_delete=True).execute(path="analysis.ipynb", cell_id=ref)
    assert result.success, result.error

    def change(nb: Any) -> None:
        del nb.cells[3]

    assert notebook.read_bytes() == nbformat_rewrite(before, change)
    label = f"cell 3 id={ref} code" if "index" not in ref else "cell 3 code"
    assert result.metadata["diff"] == (
        f"--- a/analysis.ipynb [{label}]\n+++ /dev/null\n@@ -1 +0,0 @@\n"
        "-raise ValueError('bad input')\n\\ No newline at end of file\n"
    )


def test_edit_tools_are_sensitive_and_checkpointed() -> None:
    for tool in (EditNotebookCellTool, InsertNotebookCellTool, DeleteNotebookCellTool):
        assert tool.sensitive and tool.mutates_files
    assert not ReadNotebookTool.sensitive and not ReadNotebookTool.mutates_files
