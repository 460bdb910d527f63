"""run_cell on a session whose notebook is open in an in-process front end (`OpenNotebooks`), and
read_notebook's outputs on demand: whole tracebacks, images for the model, a range of cells."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from architect_nb.testing.open_notebooks import OpenNotebooks
from architect_nb.tools.base import ToolRefusedError
from architect_nb.tools.kernel.run_cell import RunCellTool
from architect_nb.tools.kernel.session import CellExecution, OwnNotebook, PlainKernel
from architect_nb.tools.notebook_files.backend import NotebookDocuments
from architect_nb.tools.notebook_files.notebook_tools import ReadNotebookTool

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
TRACEBACK = [f"frame {n}: a long line of the traceback\n" for n in range(60)] + ["KeyError: 'b'"]


def _notebook(path: Path) -> Path:
    cells = [
        {
            "cell_type": "code",
            "id": "data",
            "metadata": {},
            "execution_count": 1,
            "outputs": [],
            "source": "d = {}",
        },
        {
            "cell_type": "code",
            "id": "failing",
            "metadata": {},
            "execution_count": 2,
            "outputs": [
                {"output_type": "error", "ename": "KeyError", "evalue": "'b'", "traceback": TRACEBACK}
            ],
            "source": "d['b']",
        },
        {
            "cell_type": "code",
            "id": "plot",
            "metadata": {},
            "execution_count": 3,
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"image/png": PNG, "text/plain": "<Figure>"},
                }
            ],
            "source": "plot()",
        },
        {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": "# notes"},
        {
            "cell_type": "code",
            "id": "arch",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "%%architect\nfix",
        },
    ]
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    return path


class _Session(PlainKernel):
    """A kernel session whose notebook is open in `front`, and whose cells "run" by a given function."""

    def __init__(self, front: OpenNotebooks, path: Path) -> None:
        super().__init__({})
        self.front = front
        self.path = path
        self.ran: list[str] = []

    def own_notebook(self) -> OwnNotebook | str:
        located = self.front.locate("arch")
        if located is None:
            return "no front end has it open"
        return OwnNotebook(document=located[0], path=self.path.name, running_cell="arch")

    def run_cell(self, source: str, cell_id: str | None) -> CellExecution:
        self.ran.append(source)
        result = {
            "output_type": "execute_result",
            "execution_count": 7,
            "metadata": {},
            "data": {"text/plain": "0"},
        }
        return CellExecution(outputs=[result], execution_count=7)


@pytest.fixture
def open_nb(tmp_path: Path) -> tuple[_Session, Any]:
    path = _notebook(tmp_path / "nb.ipynb")
    front = OpenNotebooks("JupyterLab")
    doc = front.open(path, key=str(path))
    return _Session(front, path), doc


def test_run_cell_runs_the_cell_shown_and_writes_its_outputs_and_count_back(
    open_nb: tuple[_Session, Any],
) -> None:
    session, doc = open_nb
    tool = RunCellTool(session)
    assert tool.code_to_run({"cell": "failing"}) == "d['b']"
    result = tool.execute(cell="failing")
    assert result.success, result
    assert "cell 1 ran as [7]." in result.output and "[execute_result]\n0" in result.output
    assert session.ran == ["d['b']"]
    cell = next(c for c in doc.cells if c["id"] == "failing")
    assert cell["execution_count"] == 7 and cell["outputs"][0]["data"] == {"text/plain": "0"}


def test_run_cell_refuses_what_it_must_before_anybody_is_asked(open_nb: tuple[_Session, Any]) -> None:
    session, doc = open_nb
    tool = RunCellTool(session)
    doc.editing = "data"
    refusals = {
        "arch": "is an %%architect cell",
        "data": "The user is typing in cell 0",
        "notes": "is a markdown cell",
        "index:99": "out of range",
    }
    for ref, why in refusals.items():
        with pytest.raises(ToolRefusedError, match=why):
            tool.code_to_run({"cell": ref})
        result = tool.execute(cell=ref)
        assert not result.success and why in (result.error or "")
    assert session.ran == []
    headless = RunCellTool(PlainKernel({})).execute(cell="index:0")
    assert not headless.success and "none has this run's notebook open" in (headless.error or "")


def test_run_cell_refuses_a_cell_changed_since_it_was_shown(open_nb: tuple[_Session, Any]) -> None:
    session, doc = open_nb
    tool = RunCellTool(session)
    tool.code_to_run({"cell": "failing"})
    doc.type_into("failing", "import os\n")
    result = tool.execute(cell="failing")
    assert not result.success and "changed after it was shown for approval" in (result.error or "")
    assert session.ran == []


def test_read_notebook_shows_a_whole_traceback_images_and_a_range_of_cells(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb")
    tool = ReadNotebookTool(tmp_path, documents=NotebookDocuments())
    full = tool.execute(path="nb.ipynb", include_outputs=True)
    assert full.success
    assert "frame 0: a long line" in full.output and "frame 59: a long line" in full.output
    assert PNG not in full.output
    [image] = full.metadata["images"]
    assert image["data"] == PNG and image["alt"].startswith("cell 2")
    one = tool.execute(path="nb.ipynb#1", include_outputs=True)
    assert "d['b']" in one.output and "plot()" not in one.output and "d = {}" not in one.output
    assert "images" not in one.metadata
    span = tool.execute(path="nb.ipynb#1-2")
    assert "d['b']" in span.output and "plot()" in span.output and span.metadata["cells_shown"] == 2
    brief = tool.execute(path="nb.ipynb")
    assert "images" not in brief.metadata
    assert tool.target_paths({"path": "nb.ipynb#1"}) == [tmp_path.resolve() / "nb.ipynb"]
