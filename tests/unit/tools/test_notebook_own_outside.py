"""The run's own notebook when its file is not in the workspace (a kernel behind a Jupyter Kernel Gateway: the
notebook is on JupyterLab's side): the notebook tools reach it by its front end's path, through the open
document only, and nothing else outside the workspace.

The front end is `OpenNotebooks` (answering as the labextension does), holding `remote.ipynb` from a folder
next to the workspace, as JupyterLab's server names it. Behind it: the real tools, engine, confirmation,
checkpoints and undo; the kernel channel is tested in test_live_documents_kernel.py and the whole path behind
a real gateway in tests/browser/test_gateway_browser.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints import CheckpointError
from architect_nb.execution.confirmation.confirmers import ConfirmationRequest, ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.notebook.context import KernelFacts, context_note, find_notebook
from architect_nb.testing.open_notebooks import OpenDocument, OpenNotebooks
from architect_nb.tools.kernel.session import OwnNotebook, PlainKernel
from architect_nb.tools.notebook_files.backend import own_notebook_target
from tests.support.notebooks import write_v45

FRONT_PATH = "remote.ipynb"
RUNNING = "arch"


class _Kernel(PlainKernel):
    """A plain kernel session whose front end is `OpenNotebooks`, and whose run is in `own`."""

    def __init__(self, notebooks: OpenNotebooks, own: OwnNotebook | str) -> None:
        super().__init__({})
        self._notebooks = notebooks
        self.own = own

    @property
    def documents(self) -> Any:
        return self._notebooks

    def own_notebook(self) -> OwnNotebook | str:
        return self.own


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """JupyterLab's folder, outside the workspace, with the notebook the run is in."""
    folder = tmp_path / "lab-side"
    folder.mkdir()
    write_v45(folder / FRONT_PATH)
    return folder


@pytest.fixture
def front(lab: Path) -> tuple[OpenNotebooks, OpenDocument]:
    notebooks = OpenNotebooks()
    doc = notebooks.open(lab / FRONT_PATH, key=FRONT_PATH)
    running = {"cell_type": "code", "id": RUNNING, "metadata": {}, "outputs": [], "execution_count": None}
    doc.cells.append({**running, "source": "%%architect\nAdd a cell."})
    doc.busy.add(RUNNING)  # as the front end reports the running cell
    return notebooks, doc


def _own(notebooks: OpenNotebooks, file: Path | None) -> OwnNotebook:
    located = notebooks.locate(RUNNING)
    assert located is not None
    return OwnNotebook(document=located[0], path=FRONT_PATH, running_cell=RUNNING, file=file)


def _engine(workspace: Path, kernel: _Kernel, confirmer: Any = None, mode: str = "yolo") -> ExecutionEngine:
    config = load_config(
        overrides={"workspace.root": str(workspace), "workspace.allow_delete": True}, environ={}
    )
    return build_engine(config, mode=mode, confirmer=confirmer, kernel=kernel)


class _Recording(ScriptedConfirmer):
    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.asked: list[ConfirmationRequest] = []

    def confirm(self, request: ConfirmationRequest) -> Any:
        self.asked.append(request)
        return super().confirm(request)


@pytest.mark.parametrize("known_file", [True, False], ids=["file-seen-elsewhere", "file-unknown"])
def test_the_runs_own_notebook_outside_the_workspace_is_changed_in_its_front_end_after_asking(
    workspace: Path, lab: Path, front: tuple[OpenNotebooks, OpenDocument], known_file: bool
) -> None:
    notebooks, doc = front
    on_disk = (lab / FRONT_PATH).read_bytes()
    before = json.loads(json.dumps(doc.cells))
    confirmer = _Recording(["approve", "approve"])
    kernel = _Kernel(notebooks, _own(notebooks, lab / FRONT_PATH if known_file else None))
    engine = _engine(workspace, kernel, confirmer, mode="confirm-sensitive")
    code = doc.cells[1]["id"]

    read = engine.execute_tool_call("read_notebook", {"path": f"{FRONT_PATH}#1"})
    assert read.success, read.error
    assert "import math" in read.output and "[Open in JupyterLab:" in read.output
    assert confirmer.asked == []  # reading asks nothing

    inserted = engine.execute_tool_call(
        "insert_notebook_cell", {"path": FRONT_PATH, "after_cell_id": code, "source": "x = 1\n"}, step=1
    )
    assert inserted.success, inserted.error
    assert "Applied to the notebook open in JupyterLab; it is saved when the person saves." in inserted.output
    edited = engine.execute_tool_call(
        "edit_notebook_cell",
        {"path": FRONT_PATH, "cell_id": code, "old_str": "import math", "new_str": "import cmath"},
        step=2,
    )
    assert edited.success, edited.error
    # Each edit asked first, with its cell diff, as for any notebook edit.
    assert [r.tool_name for r in confirmer.asked] == ["insert_notebook_cell", "edit_notebook_cell"]
    assert confirmer.asked[0].preview is not None and "+x = 1" in confirmer.asked[0].preview
    assert confirmer.asked[1].preview is not None
    assert f"--- a/{FRONT_PATH} [cell 1 id={code} code]" in confirmer.asked[1].preview
    assert doc.source(code).startswith("import cmath") and doc.cells[2]["source"] == "x = 1\n"
    # Nothing was written: not the file on JupyterLab's side, and nothing in the workspace.
    assert (lab / FRONT_PATH).read_bytes() == on_disk
    assert not (workspace / FRONT_PATH).exists()

    # The running %%architect cell stays protected, as in any open notebook.
    refused = engine.execute_tool_call(
        "edit_notebook_cell",
        {"path": FRONT_PATH, "cell_id": RUNNING, "old_str": "Add", "new_str": "Delete"},
        step=3,
    )
    assert not refused.success and doc.source(RUNNING) == "%%architect\nAdd a cell."

    # Undo finds the notebook again in its front end by the run's cell, and puts the cells back there.
    report = engine.checkpoints.undo(engine.run_id, documents=notebooks)
    assert report.ok and report.restored == [FRONT_PATH], str(report)
    assert [c["id"] for c in doc.cells] == [c["id"] for c in before]
    assert [doc.source(c["id"]) for c in doc.cells] == ["".join(c["source"]) for c in before]
    assert (lab / FRONT_PATH).read_bytes() == on_disk and not (workspace / FRONT_PATH).exists()


def test_every_other_path_outside_the_workspace_is_still_refused(
    workspace: Path, lab: Path, front: tuple[OpenNotebooks, OpenDocument], tmp_path: Path
) -> None:
    notebooks, doc = front
    other = write_v45(lab / "other.ipynb")
    other_doc = notebooks.open(other, key="other.ipynb")  # open in the same front end, not the run's
    engine = _engine(workspace, _Kernel(notebooks, _own(notebooks, lab / FRONT_PATH)))
    os.symlink(lab / FRONT_PATH, workspace / "link.ipynb")
    escapes = [f"../lab-side/{FRONT_PATH}", str(lab / FRONT_PATH), "link.ipynb", "~/remote.ipynb"]
    for path in escapes:
        for tool, args in [
            ("read_notebook", {"path": path}),
            ("insert_notebook_cell", {"path": path, "source": "x = 1\n"}),
        ]:
            result = engine.execute_tool_call(tool, {**args})
            assert not result.success, (tool, path)
            assert "escapes the workspace" in str(result.error) or "'~'" in str(result.error), result.error
    for path in ("other.ipynb", "sub/remote.ipynb", "REMOTE.ipynb"):
        result = engine.execute_tool_call("insert_notebook_cell", {"path": path, "source": "x = 1\n"})
        assert not result.success and "does not exist" in str(result.error), (path, result.error)
    assert doc.applied == [] and other_doc.applied == []


def test_a_workspace_file_at_that_path_wins(
    workspace: Path, lab: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    mine = write_v45(workspace / FRONT_PATH)
    engine = _engine(workspace, _Kernel(notebooks, _own(notebooks, lab / FRONT_PATH)))
    code = doc.cells[1]["id"]
    read = engine.execute_tool_call("read_notebook", {"path": FRONT_PATH})
    assert read.success and "[Open in" not in read.output and RUNNING not in read.output
    edited = engine.execute_tool_call(
        "edit_notebook_cell",
        {"path": FRONT_PATH, "cell_id": "index:1", "old_str": "import math", "new_str": "import cmath"},
    )
    assert edited.success, edited.error
    assert "import cmath" in mine.read_text() and "Applied to the notebook open" not in edited.output
    assert doc.applied == [] and doc.source(code).startswith("import math")
    assert own_notebook_target(FRONT_PATH, lab / FRONT_PATH, workspace) is None


def test_an_own_notebook_in_the_workspace_is_named_by_its_workspace_path_only(
    workspace: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    inside = workspace / "sub" / FRONT_PATH  # JupyterLab's root is the workspace's sub/
    engine = _engine(workspace, _Kernel(notebooks, _own(notebooks, inside)))
    result = engine.execute_tool_call("insert_notebook_cell", {"path": FRONT_PATH, "source": "x = 1\n"})
    assert not result.success and "does not exist" in str(result.error)
    # And with no notebook located for the run (no front end), the path is just a missing file.
    engine = _engine(workspace, _Kernel(notebooks, "no front end has this run's notebook open"))
    result = engine.execute_tool_call("read_notebook", {"path": FRONT_PATH})
    assert not result.success and "does not exist" in str(result.error)
    assert doc.applied == []


def test_when_no_front_end_has_it_open_the_tools_and_undo_say_so(
    workspace: Path, lab: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    engine = _engine(workspace, _Kernel(notebooks, _own(notebooks, lab / FRONT_PATH)))
    inserted = engine.execute_tool_call("insert_notebook_cell", {"path": FRONT_PATH, "source": "x = 1\n"})
    assert inserted.success, inserted.error
    notebooks.close(doc)
    result = engine.execute_tool_call("read_notebook", {"path": FRONT_PATH})
    assert not result.success
    assert str(result.error) == (
        f"'{FRONT_PATH}' is this run's notebook, whose file is not in the workspace, so the notebook tools "
        "reach it only in its front end, and JupyterLab no longer has it open or did not answer; nothing "
        "was changed."
    )
    with pytest.raises(CheckpointError, match="no front end has it open now with the run's %%architect cell"):
        engine.checkpoints.undo(engine.run_id, documents=notebooks)
    assert not (workspace / FRONT_PATH).exists()


def test_the_outline_says_the_notebook_tools_reach_it_through_the_front_end(
    workspace: Path, lab: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, _doc = front

    class Gateway:  # the front end's server root is not on the kernel's side: the file is unknown
        def locate(self, cell_id: str) -> Any:
            located = notebooks.locate(cell_id)
            return (located[0], None) if located is not None else None

    found = find_notebook(KernelFacts(cell_id=RUNNING, count=3), workspace, Gateway())
    assert found.view.path == FRONT_PATH and found.view.readable and found.view.through_front_end
    text = context_note(found.view, "add a cell", 1500)
    assert (
        f"Its file is outside the workspace, so the notebook tools reach it through the front end, by "
        f"path='{FRONT_PATH}'"
    ) in text
    assert "cannot read it" not in text and f"read_notebook(path='{FRONT_PATH}#N'" in text

    write_v45(workspace / FRONT_PATH)  # a workspace file of that name: the tools would take it instead
    found = find_notebook(KernelFacts(cell_id=RUNNING, count=3), workspace, Gateway())
    assert not found.view.readable and not found.view.through_front_end
    assert "It is outside the workspace, so read_notebook cannot read it." in context_note(
        found.view, "x", 1500
    )
