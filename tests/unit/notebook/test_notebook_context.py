"""The notebook outline an `%%architect` run starts with, read from plain notebook JSON: names, stale marks,
references, outputs in brief, and the budget on large notebooks."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from architect_nb.notebook.context import KernelFacts, NotebookView, context_note, find_notebook
from architect_nb.notebook.context.execution_log import Execution
from architect_nb.notebook.context.names import cell_names
from architect_nb.notebook.context.outline import CHARS_PER_TOKEN
from architect_nb.notebook.context.references import resolve_references
from architect_nb.notebook.context.staleness import stale_marks
from architect_nb.notebook.context.view import CellView, cells_of
from architect_nb.testing.open_notebooks import OpenNotebooks

KEY_ERROR = {
    "output_type": "error",
    "ename": "KeyError",
    "evalue": "'amont'",
    "traceback": [
        "\x1b[0;31m-------------------------------------------------------------------\x1b[0m",
        "\x1b[0;31mKeyError\x1b[0m                        Traceback (most recent call last)",
        "File \x1b[0;32m~/venv/pandas/core/indexes/base.py:3812\x1b[0m, in "
        "\x1b[0;36mIndex.get_loc\x1b[0;34m(self, key)\x1b[0m\n\x1b[1;32m   3811\x1b[0m try:\n"
        "\x1b[0;32m-> 3812\x1b[0m     return self._engine.get_loc(casted_key)\n",
        "Cell \x1b[0;32mIn[4], line 1\x1b[0m\n\x1b[0;32m----> 1\x1b[0m "
        "df[\x1b[38;5;124m'amont'\x1b[39m].sum()\n",
        "\x1b[0;31mKeyError\x1b[0m: 'amont'",
    ],
}
FRAME = {
    "output_type": "execute_result",
    "execution_count": 2,
    "metadata": {},
    "data": {
        "text/plain": "   amount region\n0     1.0  north\n1     2.5  south\n\n[1000 rows x 2 columns]",
        "text/html": '<table class="dataframe"></table><p>1000 rows × 2 columns</p>',
    },
}
PNG = base64.b64encode(b"\x89PNG fake image bytes" * 500).decode()
IMAGE = {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG, "text/plain": "<Figure>"}}


def code(
    source: str, count: int | None, *outputs: dict[str, Any], cell_id: str | None = None
) -> dict[str, Any]:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": count, "outputs": list(outputs)}
    return {**cell, "source": source, **({"id": cell_id} if cell_id else {})}


def notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    for n, cell in enumerate(cells):
        cell.setdefault("id", f"c{n}")
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}


def view_of(
    data: dict[str, Any], own: str | None = None, edited: frozenset[str] = frozenset()
) -> NotebookView:
    cells = cells_of(data, edited)
    index = next((c.index for c in cells if c.id == own), None)
    return NotebookView(
        origin="open", cells=cells, own=index, path="analysis.ipynb", where="open in JupyterLab"
    )


def analysis() -> dict[str, Any]:
    return notebook(
        {"cell_type": "markdown", "metadata": {}, "source": "# Sales"},
        code("import pandas as pd\ndf = pd.read_csv('sales.csv')", 1),
        code("df.head()", 2, FRAME),
        code("df.plot()", 3, IMAGE),
        code("df['amont'].sum()", 4, KEY_ERROR),
        code("%%architect\nfix the error above", None, cell_id="arch"),
    )


# ---------------------------------------------------------------------- names


def test_names_read_assignments_imports_defs_del_mutation_and_magics() -> None:
    names = cell_names(
        "import numpy as np\nfrom shop.cart import total as t\nx = np.ones(3) + y\n"
        "def f(a):\n    return a + scale\nclass K: pass\ndel old\ndf['c'] = 1\n%time f(x)\nfiles = !ls"
    )
    assert names.defines >= {"np", "t", "x", "f", "K", "df", "files"}
    assert names.uses == {"y", "scale", "old", "df"}
    assert names.deletes == {"old"}
    assert "shop.cart" in names.imports and "numpy" in names.imports
    assert cell_names("from helpers import *").star_imports == ("helpers",)
    assert cell_names("%%bash\nls").cell_magic == "bash"
    assert not cell_names("def broken(:\n").parsed


# ---------------------------------------------------------------------- staleness


def _marks(*cells: tuple[str, int | None], edited: frozenset[int] = frozenset()) -> dict[int, Any]:
    view = NotebookView(
        origin="open",
        cells=tuple(
            CellView(index=i, kind="code", source=s, count=c, edited=i in edited)
            for i, (s, c) in enumerate(cells)
        ),
    )
    return stale_marks(view)


def test_edited_never_run_and_out_of_order_are_marked() -> None:
    marks = _marks(("x = 1", 1), ("y = x + 1", 2), ("print(y)", None), edited=frozenset({1}))
    assert marks[1].edited and "edited since it ran" in marks[1].words()
    assert marks[2].never_run
    reran = _marks(("x = 1", 4), ("y = x + 1", 2), ("z = 3", 3))
    assert reran[0].out_of_order and reran[0].words() == ["ran after cells below it"]
    assert not reran[1].out_of_order and 2 not in reran


def test_cells_downstream_of_a_re_run_cell_are_stale_and_others_are_not() -> None:
    marks = _marks(
        ("import pandas as pd\ndf = pd.DataFrame({'a': [1]})", 5),  # re-run after the cells below
        ("total = df.a.sum()", 2),
        ("double = total * 2", 3),
        ("other = 7", 4),
    )
    assert marks[1].stale == ("df changed by cell 0 [5] since",)
    assert marks[2].stale == ("uses cell 1 [2], which is stale",)
    assert 3 not in marks or not marks[3].stale
    # Run top to bottom, a later redefinition is not staleness.
    clean = _marks(("x = 1", 1), ("y = x", 2), ("x = 5", 3))
    assert all(not mark.stale for mark in clean.values())


def test_a_del_since_and_an_edited_provider_make_a_cell_stale() -> None:
    marks = _marks(("x = 1", 1), ("del x", 3), ("print(x)", 2))
    assert marks[2].stale == ("x deleted by cell 1 [3] since",)
    edited = _marks(("x = 1", 1), ("y = x", 2), edited=frozenset({0}))
    assert edited[1].stale == ("x from cell 0 [1], edited since it ran",)


def test_star_imports_are_called_out_as_unknown() -> None:
    marks = _marks(("from helpers import *", 1), ("value = clean(raw)", 2))
    assert marks[0].star == ("helpers",)
    assert "from helpers import *: its names are unknown" in marks[0].words()


# ---------------------------------------------------------------------- references


def test_references_by_position_count_selection_and_relative_words() -> None:
    data = analysis()
    view = view_of(data, own="arch")
    refs = {
        r.phrase.lower(): r
        for r in resolve_references("fix the error above in this cell, see cell 2 and [3]", view)
    }
    assert refs["the error above"].cells == (4,)
    assert refs["this cell"].cells == (5,)
    assert refs["cell 2"].cells == (2,) and "a person counting from 1 means cell 1 [1]" in refs["cell 2"].note
    assert refs["[3]"].cells == (3,)
    pinned = resolve_references("Fix the error in cell 4 [4] (KeyError).", view)
    assert [(r.phrase, r.cells, r.note) for r in pinned] == [("cell 4 [4]", (4,), "")]
    missing = resolve_references("what did [99] print?", view)
    assert missing[0].cells == () and "no cell shows [99]" in missing[0].note
    assert resolve_references("x[0] = 1", view) == []


def test_the_selected_cell_is_the_one_the_front_end_reported() -> None:
    cells = cells_of(analysis())
    view = NotebookView(origin="open", cells=cells, own=5, selected=2)
    [ref] = resolve_references("explain the selected cell", view)
    assert ref.cells == (2,)
    note = context_note(view, "explain the selected cell", 1500)
    assert "The person had cell 2 [2] selected." in note
    assert "cell 2 [2], in full:" in note


# ---------------------------------------------------------------------- the outline


def test_the_outline_names_the_notebook_its_cell_and_the_failing_cell_in_full() -> None:
    text = context_note(view_of(analysis(), own="arch"), "fix the error above", 1500)
    assert "analysis.ipynb (open in JupyterLab)" in text and "This cell is cell 5." in text
    assert '"the error above" = cell 4 [4]' in text
    assert "cell 4 [4], in full:\n    df['amont'].sum()" in text
    assert "at Cell In[4], line 1: df['amont'].sum()" in text and "KeyError: 'amont'" in text
    assert "cell 2 [2], in full:" in text and "DataFrame 1000×2" in text and "0     1.0  north" in text
    assert "cell 3 [3], in full:" in text and "1 image" in text
    assert "cell 0 md: # Sales" in text
    assert PNG[:40] not in text and "\x1b[" not in text


def test_the_outline_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.redaction import default_redactor

    secret = "sk-live-notreal-0123456789abcdef"
    monkeypatch.setenv("SERVICE_API_KEY", secret)
    default_redactor().refresh()
    try:
        data = notebook(code(f"key = '{secret}'", 1), code("%%architect\nuse the key", None, cell_id="arch"))
        text = context_note(view_of(data, own="arch"), "use the key", 1500)
    finally:
        monkeypatch.delenv("SERVICE_API_KEY")
        default_redactor().refresh()
    assert secret not in text and "[REDACTED:SERVICE_API_KEY]" in text


def big_notebook(n: int) -> dict[str, Any]:
    cells: list[dict[str, Any]] = []
    for i in range(n):
        if i % 10 == 0:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": f"## Step {i // 10}\nNotes."})
            continue
        assign = f"frame_{i} = frame_{i - 1}.assign(col_{i}=lambda d: d['amount'] * {i})"
        source = f"{assign}\nfrac_{i} = frame_{i}.mean()"
        output = (
            IMAGE
            if i % 7 == 0
            else FRAME
            if i % 5 == 0
            else {"output_type": "stream", "name": "stdout", "text": f"step {i}\n"}
        )
        cells.append(code(source, i, output))
    cells.append(code("frame_x['amont']", n + 1, KEY_ERROR))
    cells.append(code("%%architect\nfix the error above", None, cell_id="arch"))
    return notebook(*cells)


@pytest.mark.parametrize("cells", [100, 500])
def test_the_outline_stays_within_its_budget_on_large_notebooks(cells: int) -> None:
    data = big_notebook(cells)
    text = context_note(view_of(data, own="arch"), "fix the error above", 1500)
    assert len(text) <= 1500 * CHARS_PER_TOKEN
    assert "frame_x['amont']" in text and "KeyError: 'amont'" in text  # the failing cell, in full
    assert "not shown (read_notebook shows them)" in text  # far cells are left out as ranges
    assert "## Step" in text  # headings are kept longer
    assert f"{len(data['cells'])} cells" in text


# ---------------------------------------------------------------------- sources


def test_the_open_document_wins_with_unsaved_typing_and_edited_cells(tmp_path: Path) -> None:
    path = tmp_path / "analysis.ipynb"
    path.write_text(json.dumps(analysis()))
    front = OpenNotebooks("JupyterLab")
    doc = front.open(path, key=str(path))
    doc.type_into("c4", "# typed, not saved\n")
    doc.edited = {"c4"}
    doc.selected["arch"] = "c2"
    found = find_notebook(KernelFacts(cell_id="arch", count=9), tmp_path, front)
    assert found.view.origin == "open" and found.live is not None
    assert found.view.path == "analysis.ipynb" and found.view.own == 5 and found.view.selected == 2
    text = context_note(found.view, "fix the error above", 1500)
    assert "# typed, not saved" in text and "{edited since it ran}" in text
    assert "This cell is cell 5 [9]." in text


def test_the_file_vs_code_names_is_read_when_no_front_end_has_it(tmp_path: Path) -> None:
    path = tmp_path / "nb" / "analysis.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(analysis()))
    raw = "%%architect\nfix the error above"
    facts = KernelFacts(count=7, raw_cell=raw, vscode_file=str(path), cwd=str(tmp_path))
    found = find_notebook(facts, tmp_path, OpenNotebooks())
    assert found.view.origin == "file" and found.view.path == "nb/analysis.ipynb" and found.view.own == 5
    assert "the file as VS Code last saved it" in context_note(found.view, "fix it", 1500)
    outside = find_notebook(facts, tmp_path / "nb" / "elsewhere", None)
    assert not outside.view.readable and os.path.isabs(outside.view.path or "")


def test_the_kernels_history_is_all_a_headless_run_has() -> None:
    error = {
        "output_type": "error",
        "ename": "ZeroDivisionError",
        "evalue": "division by zero",
        "traceback": [],
    }
    facts = KernelFacts(
        count=4,
        raw_cell="%%architect\nwhy did the last cell fail?",
        inputs=("", "%load_ext architect_nb", "x = 1", "x / 0", "%%architect\nwhy did the last cell fail?"),
        results={2: {"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {}}},
        executions={3: Execution(count=3, cell_id=None, error=error)},
    )
    found = find_notebook(facts, Path("/nonexistent"), None)
    assert found.view.origin == "history"
    text = context_note(found.view, "why did [3] fail?", 1500)
    assert "below are the 4 cells this kernel ran" in text
    assert "[3], in full:\n    x / 0" in text and "ZeroDivisionError: division by zero" in text
    assert '"[3]" = [3]' in text


def test_the_file_the_jupyter_server_names_is_read_without_the_extension(tmp_path: Path) -> None:
    path = tmp_path / "analysis.ipynb"
    path.write_text(json.dumps(analysis()))
    facts = KernelFacts(cell_id="arch", count=7, session_file=str(path), cwd=str(tmp_path))
    found = find_notebook(facts, tmp_path, OpenNotebooks())  # a front end without it open
    assert found.view.origin == "file" and found.view.own == 5  # found by the cell's id
    assert "(the file as last saved)" in context_note(found.view, "fix it", 1500)


def test_a_threads_earlier_outlines_are_left_out_once_a_newer_one_comes() -> None:
    from architect_nb.notebook.context.opening_note import EARLIER_OUTLINE, forget_outlines

    outline = context_note(view_of(analysis(), own="arch"), "fix it", 1500)
    messages = [
        {"role": "user", "content": f"Files went back: a.py.\n\n{outline}\n\nfix it"},
        {"role": "assistant", "content": outline},  # only what the person side said is rewritten
        {"role": "user", "content": "No outline here.\n\nJust text."},
    ]
    assert forget_outlines(messages) == 1
    assert messages[0]["content"] == f"Files went back: a.py.\n\n{EARLIER_OUTLINE}\n\nfix it"
    assert messages[1]["content"] == outline and messages[2]["content"] == "No outline here.\n\nJust text."
    assert "\n\n" not in outline  # one paragraph, so it can be told apart
