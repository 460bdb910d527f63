"""A scripted-model refactor: the agent moves a function out of a notebook into a module and replaces its cell
with an import. The notebook runs under nbclient before and after, with the same result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from architect_nb.agent.events import AgentEvent, ConfirmationAsked, ToolResultEvent
from architect_nb.testing.notebook_run import PATIENT_OUTPUTS
from tests.support.agent import make_loop, write_script
from tests.support.kernel import kernel_env, write_kernelspecs

pytestmark = pytest.mark.slow

FUNCTION = '''def summarize(values):
    """Count, mean and spread of a list of numbers."""
    total = sum(values)
    mean = total / len(values)
    return {"n": len(values), "mean": mean, "spread": max(values) - min(values)}'''


def make_notebook(path: Path) -> None:
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# Sales summary"),
        v4.new_code_cell(FUNCTION),
        v4.new_code_cell('sales = [3, 5, 10, 22]\nprint("summary:", summarize(sales))'),
    ]
    for cell, cell_id in zip(cells, ["intro", "helper", "report"], strict=True):
        cell.id = cell_id
    nb = v4.new_notebook(
        cells=cells,
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, path)


def run_notebook(path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Execute a copy of the notebook in a real kernel, in its folder; return each code cell's stdout."""
    write_kernelspecs(tmp / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp / "jupyter"))
    for key, value in kernel_env().items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=60,
        kernel_name="architect-ipk7",
        resources={"metadata": {"path": str(path.parent)}},
        **PATIENT_OUTPUTS,
    )
    # asyncio.run closes its loop; client.execute() would leave one open for a later test's GC to complain of.
    asyncio.run(client.async_execute())
    return [
        "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        for cell in nb.cells
        if cell.cell_type == "code"
    ]


def test_agent_moves_a_function_into_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notebook = project / "sales.ipynb"
    make_notebook(notebook)
    before_run = run_notebook(notebook, tmp_path, monkeypatch)
    assert before_run[1] == "summary: {'n': 4, 'mean': 10.0, 'spread': 19}\n"
    original = json.loads(notebook.read_text())

    model = write_script(
        project,
        [
            {
                "content": "Let me look at the notebook.",
                "tool_calls": [{"name": "read_notebook", "arguments": {"path": "sales.ipynb"}}],
            },
            {
                "expect": {"tool_result_contains": "[cell 1 id=helper code]"},
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "sales_stats.py", "content": FUNCTION + "\n"},
                    }
                ],
            },
            {
                "tool_calls": [
                    {
                        "name": "edit_notebook_cell",
                        "arguments": {
                            "path": "sales.ipynb",
                            "cell_id": "helper",
                            "old_str": FUNCTION,
                            "new_str": "from sales_stats import summarize",
                        },
                    }
                ]
            },
            {
                "expect": {"tool_result_contains": "Edited cell 1 id=helper code of sales.ipynb"},
                "tool_calls": [{"name": "grep", "arguments": {"pattern": "summarize"}}],
            },
            {
                "expect": {"tool_result_contains": "sales.ipynb [cell 1, line 1]: from sales_stats import"},
                "content": "summarize now lives in sales_stats.py; the notebook imports it.",
            },
        ],
    )
    events: list[AgentEvent] = []
    loop = make_loop(project, model, answers=["approve", "approve"], events=events)
    result = loop.run("Move summarize out of sales.ipynb into a module and import it there.")
    assert (result.status, result.stop_reason) == ("success", "completed"), result.message
    assert sorted(result.files_changed) == ["sales.ipynb", "sales_stats.py"]

    # Only the helper cell changed; ids, metadata and the other cells are as they were.
    edited = json.loads(notebook.read_text())
    assert edited["cells"][1]["source"] == ["from sales_stats import summarize"]
    for key in ("metadata", "nbformat", "nbformat_minor"):
        assert edited[key] == original[key]
    assert [c["id"] for c in edited["cells"]] == ["intro", "helper", "report"]
    assert edited["cells"][0] == original["cells"][0] and edited["cells"][2] == original["cells"][2]

    # The person approved a cell diff, and the run shows one: never notebook JSON.
    asked = [e for e in events if isinstance(e, ConfirmationAsked)]
    cell_preview = asked[1].preview or ""
    assert cell_preview.startswith("--- a/sales.ipynb [cell 1 id=helper code]\n+++ b/sales.ipynb [cell 1")
    assert "+from sales_stats import summarize" in cell_preview and '"source"' not in cell_preview
    edit_event = next(e for e in events if isinstance(e, ToolResultEvent) and e.tool == "edit_notebook_cell")
    assert edit_event.status == "ok"

    assert run_notebook(notebook, tmp_path, monkeypatch) == before_run
