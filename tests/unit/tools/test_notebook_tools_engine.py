"""The notebook tools go through the engine like any tool: the approval shows the cell diff, dry-run writes
nothing, guardrails see the notebook, undo restores it, and both renderers show cell headers, never JSON."""

from __future__ import annotations

import json
from pathlib import Path

from architect_nb.notebook.output.render import diff_html
from architect_nb.tools.base import BaseTool
from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellTool,
    EditNotebookCellTool,
    InsertNotebookCellTool,
    ReadNotebookTool,
)
from tests.support.engine import make_engine
from tests.support.notebooks import write_v45

EDIT = {"path": "analysis.ipynb", "cell_id": "index:4", "old_str": "side = 3", "new_str": "side = 4"}


def tools(root: Path) -> list[BaseTool]:
    return [
        ReadNotebookTool(root),
        EditNotebookCellTool(root),
        InsertNotebookCellTool(root),
        DeleteNotebookCellTool(root, allow_delete=True),
    ]


def test_approval_shows_the_cell_diff_and_undo_restores_the_notebook(workspace: Path) -> None:
    path = write_v45(workspace / "analysis.ipynb")
    before = path.read_bytes()
    cell_id = json.loads(before)["cells"][4]["id"]
    engine, confirmer = make_engine(
        workspace,
        mode="confirm-sensitive",
        answers=["approve", "approve", "approve"],
        extra_tools=tools(workspace),
    )
    assert engine.execute_tool_call("read_notebook", {"path": "analysis.ipynb"}).success
    assert confirmer.requests == []  # reading is not sensitive
    result = engine.execute_tool_call("edit_notebook_cell", EDIT)
    assert result.success, result.error
    [request] = confirmer.requests
    header = f"analysis.ipynb [cell 4 id={cell_id} code]"
    assert request.preview == f"--- a/{header}\n+++ b/{header}\n@@ -1,2 +1,2 @@\n-side = 3\n+side = 4\n " + (
        'print("square", side * side)\n\\ No newline at end of file\n'
    )
    assert result.metadata["diff"] == request.preview
    engine.execute_tool_call("insert_notebook_cell", {"path": "analysis.ipynb", "source": "side"})
    engine.execute_tool_call("delete_notebook_cell", {"path": "analysis.ipynb", "cell_id": "index:0"})
    assert len(confirmer.requests) == 3 and "+++ /dev/null" in (confirmer.requests[2].preview or "")
    assert engine.checkpoints.files(engine.run_id) == [path]
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok, report.errors
    assert path.read_bytes() == before


def test_dry_run_shows_the_cell_diff_and_writes_nothing(workspace: Path) -> None:
    path = write_v45(workspace / "analysis.ipynb")
    before = path.read_bytes()
    engine, _ = make_engine(workspace, dry_run=True, extra_tools=tools(workspace))
    result = engine.execute_tool_call("edit_notebook_cell", EDIT)
    assert result.success and "+side = 4" in result.output and '"source"' not in result.output
    assert path.read_bytes() == before


def test_guardrails_protect_notebooks_and_count_cell_lines(workspace: Path) -> None:
    path = write_v45(workspace / "analysis.ipynb")
    before = path.read_bytes()
    engine, _ = make_engine(
        workspace, guardrails={"protected_files": ["*.ipynb"]}, extra_tools=tools(workspace)
    )
    blocked = engine.execute_tool_call("edit_notebook_cell", EDIT)
    assert not blocked.success and "protected" in (blocked.error or "").lower()
    assert path.read_bytes() == before


def test_renderers_show_cell_headers(workspace: Path) -> None:
    path = write_v45(workspace / "analysis.ipynb")
    diff = EditNotebookCellTool(workspace).execute(**EDIT).metadata["diff"]
    cell_id = json.loads(path.read_bytes())["cells"][4]["id"]
    html = diff_html(diff)
    assert f"--- a/analysis.ipynb [cell 4 id={cell_id} code]" in html and "+side = 4" in html
    # The labextension's parser (diffparse.ts) takes each header after 'a/' / 'b/' up to a tab as the
    # section's name; a cell header has no tab, so the section is named "analysis.ipynb [cell 4 id=… code]".
    header = diff.splitlines()[1]
    assert header.startswith("+++ b/") and "\t" not in header
