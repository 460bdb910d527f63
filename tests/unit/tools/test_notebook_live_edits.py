"""The notebook tools on a notebook open in a front end: its open document is read and changed, not the file.

The front end is `OpenNotebooks` (the package's in-process stand-in, answering as the labextension does; the
kernel channel and the labextension themselves are tested in test_live_documents_kernel.py, the labextension's
jest tests and the browser tests). Behind it: the real tools, engine, checkpoints and undo.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent import create_loop
from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints.document_steps import inverse_ops
from architect_nb.execution.confirmation.confirmers import ConfirmationRequest, ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.notebook.questions.approval import ApprovalPrompt
from architect_nb.redaction import default_redactor
from architect_nb.testing.open_notebooks import OpenDocument, OpenNotebooks
from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from architect_nb.tools.kernel.session import PlainKernel
from architect_nb.tools.notebook_files.backend import DocumentError, NotebookDocuments
from architect_nb.tools.notebook_files.cellops import CellOp, CellOpError, apply_ops, check_ops, source_of
from architect_nb.tools.notebook_files.notebook_tools import (
    DeleteNotebookCellTool,
    EditNotebookCellTool,
    InsertNotebookCellTool,
    ReadNotebookTool,
)
from tests.support.notebooks import write_v45


class _Kernel(PlainKernel):
    """A plain kernel session whose front end is `OpenNotebooks`."""

    def __init__(self, notebooks: Any) -> None:
        super().__init__({})
        self._notebooks = notebooks

    @property
    def documents(self) -> Any:
        return self._notebooks


@pytest.fixture
def nb(workspace: Path) -> Path:
    return write_v45(workspace / "analysis.ipynb")


@pytest.fixture
def front(nb: Path) -> tuple[OpenNotebooks, OpenDocument]:
    notebooks = OpenNotebooks()
    return notebooks, notebooks.open(nb)


def _engine(workspace: Path, notebooks: Any, confirmer: Any = None, mode: str = "yolo") -> ExecutionEngine:
    config = load_config(
        overrides={"workspace.root": str(workspace), "workspace.allow_delete": True}, environ={}
    )
    return build_engine(config, mode=mode, confirmer=confirmer, kernel=_Kernel(notebooks))


def _ids(doc: OpenDocument) -> list[str]:
    return [c["id"] for c in doc.cells]


def _tools(workspace: Path, notebooks: Any) -> dict[str, Any]:
    shared = NotebookDocuments(notebooks)
    return {
        "read": ReadNotebookTool(workspace, documents=shared),
        "edit": EditNotebookCellTool(workspace, shared),
        "insert": InsertNotebookCellTool(workspace, shared),
        "delete": DeleteNotebookCellTool(workspace, True, shared),
    }


# --------------------------------------------------------------------------- the open document, not the file


def test_read_shows_the_open_document_with_unsaved_typing_and_who_is_typing(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    code = doc.cells[1]["id"]
    doc.type_into(code, "# typed, not saved\n")
    doc.editing = code
    result = _tools(workspace, notebooks)["read"].execute(path="analysis.ipynb")
    assert result.success, result.error
    assert "1 | # typed, not saved" in result.output
    assert "[Open in JupyterLab: this is the notebook as shown there, unsaved edits included" in result.output
    assert f"The person is typing in cell id={code}: leave it alone." in result.output
    assert result.metadata["open_in"] == "JupyterLab"


def test_edits_go_to_the_open_document_and_never_touch_the_file(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    on_disk = nb.read_bytes()
    tools = _tools(workspace, notebooks)
    md, code = doc.cells[0]["id"], doc.cells[1]["id"]
    typed = doc.cells[3]["id"]
    doc.type_into(typed, "# mine\n")

    edited = tools["edit"].execute(
        path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import cmath"
    )
    assert edited.success, edited.error
    assert "Applied to the notebook open in JupyterLab; it is saved when the person saves." in edited.output
    assert f"--- a/analysis.ipynb [cell 1 id={code} code]" in edited.output
    inserted = tools["insert"].execute(path="analysis.ipynb", after_cell_id=md, source="x = 1\n")
    assert inserted.success, inserted.error
    new_id = _ids(doc)[1]
    deleted = tools["delete"].execute(path="analysis.ipynb", cell_id=doc.cells[3]["id"])
    assert deleted.success, deleted.error

    assert nb.read_bytes() == on_disk
    assert doc.source(code).startswith("import cmath")
    assert doc.source(new_id) == "x = 1\n" and doc.cells[1]["cell_type"] == "code"
    assert doc.source(typed).startswith("# mine\n")  # the person's unsaved typing is still there
    assert edited.metadata["document_change"]["cells"][0]["before"].startswith("import math")
    assert [len(ops) for ops in doc.applied] == [1, 1, 1]
    # The outputs of the edited cell are kept, as when the person edits it.
    assert doc.cells[2]["outputs"] == json.loads(on_disk)["cells"][1]["outputs"]


def test_a_cell_the_person_types_in_or_that_runs_is_left_alone(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    tools = _tools(workspace, notebooks)
    code = doc.cells[1]["id"]
    doc.editing = code
    tools["edit"].busy_wait_s = 0.5  # the person stays in the cell for longer than the tool waits
    typing = tools["edit"].execute(
        path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os"
    )
    assert not typing.success
    assert f"The person is typing in cell '{code}' right now, so it was left alone" in str(typing.error)
    doc.editing = None
    doc.busy.add(code)
    running = tools["delete"].execute(path="analysis.ipynb", cell_id=code)
    assert not running.success and "is running or queued to run" in str(running.error)
    assert doc.applied == []


def test_an_edit_lands_on_its_cell_by_id_even_after_the_person_moved_cells(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    tools = _tools(workspace, notebooks)
    read = tools["read"].execute(path="analysis.ipynb")
    target = doc.cells[3]["id"]
    assert f"[cell 3 id={target}" in read.output
    doc.data["cells"] = [doc.cells[3], *doc.cells[:3], *doc.cells[4:]]  # the person moved it to the top
    doc.data["cells"].insert(0, {"cell_type": "markdown", "id": "new-md", "metadata": {}, "source": "# hi"})
    old = doc.source(target).splitlines()[0]
    result = tools["edit"].execute(path="analysis.ipynb", cell_id=target, old_str=old, new_str=old + "  # ok")
    assert result.success, result.error
    assert doc.source(target).startswith(old + "  # ok") and doc.cells[1]["id"] == target


def test_a_cell_changed_between_read_and_apply_is_edited_as_it_is_now_keeping_the_typing(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    """A collaborator (or the person) typed into the cell after the tool read it: the front end refuses the
    change computed from the old text, and the tool plans the same edit again on the cell as it is now."""
    notebooks, doc = front
    code = doc.cells[1]["id"]
    racing = _typing_before_apply(notebooks, doc, code, "# just typed\n", times=1)
    tool = EditNotebookCellTool(workspace, NotebookDocuments(_Front(racing, doc)))
    result = tool.execute(path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os")
    assert result.success, result.error
    assert doc.source(code).startswith("# just typed\nimport os")
    assert len(doc.applied) == 1  # the refused change changed nothing


def test_a_cell_that_keeps_changing_is_refused_in_the_end_and_never_overwritten(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    code = doc.cells[1]["id"]
    racing = _typing_before_apply(notebooks, doc, code, "#")  # before every try
    tool = EditNotebookCellTool(workspace, NotebookDocuments(_Front(racing, doc)))
    tool.busy_wait_s = 0.5
    result = tool.execute(path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os")
    assert not result.success
    assert "changed since it was read (the person edited it); nothing changed" in str(result.error)
    assert doc.source(code).lstrip("#").startswith("import math") and doc.source(code).startswith("##")
    assert doc.applied == []


def test_an_edit_waits_for_the_person_to_leave_the_cell(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    code = doc.cells[1]["id"]
    doc.editing = code
    reads: list[int] = []

    class Leaving(OpenNotebooks):
        def answer(self, request: dict[str, Any]) -> dict[str, Any]:
            if request.get("type") == "read":
                reads.append(1)
                if len(reads) == 3:  # the person presses Escape while the tool waits
                    doc.editing = None
            return notebooks.answer(request)

    tool = EditNotebookCellTool(workspace, NotebookDocuments(_Front(Leaving(), doc)))
    result = tool.execute(path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os")
    assert result.success, result.error
    assert doc.source(code).startswith("import os") and len(reads) == 3


def test_a_delete_is_never_retried_over_a_change(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    """Deleting a cell someone typed into after it was read would delete their typing: refused at once."""
    notebooks, doc = front
    code = doc.cells[1]["id"]
    racing = _typing_before_apply(notebooks, doc, code, "# just typed\n")
    tool = DeleteNotebookCellTool(workspace, True, NotebookDocuments(_Front(racing, doc)))
    result = tool.execute(path="analysis.ipynb", cell_id=code)
    assert not result.success and "changed since it was read" in str(result.error)
    assert doc.source(code) == "# just typed\n" + "import math" + doc.source(code).split("import math", 1)[1]
    assert doc.applied == []


def _typing_before_apply(
    notebooks: OpenNotebooks, doc: OpenDocument, cell_id: str, text: str, *, times: int = 10**6
) -> OpenNotebooks:
    """The front end, where someone types `text` into the cell just before each of the first `times` changes
    arrives (after the tool read the cell)."""
    typed: list[int] = []

    class Racing(OpenNotebooks):
        def answer(self, request: dict[str, Any]) -> dict[str, Any]:
            if request.get("type") == "apply" and len(typed) < times:
                doc.type_into(cell_id, text)
                typed.append(1)
            return notebooks.answer(request)

    return Racing()


class _Front:
    """`OpenNotebooks.open_document` for one document, answered by `answers`."""

    def __init__(self, answers: OpenNotebooks, doc: OpenDocument) -> None:
        from architect_nb.testing.open_notebooks import _Live

        self.live = _Live(answers, doc)

    def open_document(self, path: Path) -> Any:
        return self.live

    def unavailable(self) -> str | None:
        return None


def test_closed_renamed_read_only_and_gone_cells_fail_clearly_and_change_nothing(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    on_disk = nb.read_bytes()
    code = doc.cells[1]["id"]
    tools = _tools(workspace, notebooks)
    live = _Front(notebooks, doc)
    shared = NotebookDocuments(live)

    doc.read_only = True
    result = tools["delete"].execute(path="analysis.ipynb", cell_id=code)
    assert not result.success and "is read-only (open in JupyterLab, which cannot save it)" in str(
        result.error
    )
    doc.read_only = False

    gone = tools["edit"].execute(path="analysis.ipynb", cell_id="no-such-id", old_str="a", new_str="b")
    assert not gone.success and "No cell of 'analysis.ipynb' has id 'no-such-id'" in str(gone.error)

    doc.path = workspace / "renamed.ipynb"
    renamed = EditNotebookCellTool(workspace, shared).execute(
        path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os"
    )
    assert not renamed.success and "was renamed to" in str(renamed.error)
    doc.path = nb
    notebooks.close(doc)
    closed = EditNotebookCellTool(workspace, shared).execute(
        path="analysis.ipynb", cell_id=code, old_str="import math", new_str="import os"
    )
    assert not closed.success and "was closed in JupyterLab" in str(closed.error)
    assert nb.read_bytes() == on_disk and doc.applied == []


def test_a_front_end_that_cannot_be_reached_fails_the_call_and_the_file_is_not_written(
    workspace: Path, nb: Path
) -> None:
    class Unreachable:
        def open_document(self, path: Path) -> Any:
            raise DocumentError("JupyterLab did not answer within 10 s; nothing was changed. Retry the call.")

        def unavailable(self) -> str | None:
            return None

    on_disk = nb.read_bytes()
    tool = DeleteNotebookCellTool(workspace, True, NotebookDocuments(Unreachable()))
    result = tool.execute(path="analysis.ipynb", cell_id="index:1")
    assert not result.success and "did not answer within 10 s" in str(result.error)
    assert nb.read_bytes() == on_disk


def test_the_path_check_stays_for_an_open_notebook(workspace: Path, nb: Path) -> None:
    outside = OpenNotebooks()
    (workspace.parent / "outside" / "x.ipynb").write_text((workspace / "analysis.ipynb").read_text())
    outside.open(workspace.parent / "outside" / "x.ipynb")
    result = _tools(workspace, outside)["read"].execute(path="../outside/x.ipynb")
    assert not result.success and "escapes the workspace" in str(result.error)


# ------------------------------------------------------------------------- the file, when nobody has it open


def test_not_open_means_the_file_and_a_file_changed_since_it_was_read_is_not_overwritten(
    workspace: Path, nb: Path
) -> None:
    tools = _tools(workspace, OpenNotebooks())  # a front end, but the notebook is not open in it
    assert tools["read"].execute(path="analysis.ipynb").success
    first = tools["edit"].execute(
        path="analysis.ipynb", cell_id="index:1", old_str="import math", new_str="import os"
    )
    assert first.success and "Applied to" not in first.output
    assert "import os" in nb.read_text()
    again = tools["insert"].execute(path="analysis.ipynb", source="y = 2\n")  # its own write is known
    assert again.success, again.error

    data = json.loads(nb.read_text())  # someone else saves the notebook
    data["cells"][0]["source"] = "# saved by the person\n"
    nb.write_text(json.dumps(data, indent=1) + "\n")
    stale = tools["delete"].execute(path="analysis.ipynb", cell_id="index:1")
    assert not stale.success
    assert "changed on disk since you last read it" in str(stale.error) and "read_notebook" in str(
        stale.error
    )
    assert "# saved by the person" in nb.read_text() and len(json.loads(nb.read_text())["cells"]) == 6
    assert tools["read"].execute(path="analysis.ipynb").success  # re-read: the edit goes through
    assert tools["delete"].execute(path="analysis.ipynb", cell_id="index:1").success


# --------------------------------------------------------------------------- approval, checkpoints, undo


def test_the_approval_shows_the_cell_diff_of_the_open_document(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    code = doc.cells[1]["id"]
    doc.type_into(code, "# unsaved line\n")
    asked: list[ConfirmationRequest] = []

    class Recording(ScriptedConfirmer):
        def confirm(self, request: ConfirmationRequest) -> Any:
            asked.append(request)
            return super().confirm(request)

    engine = _engine(workspace, notebooks, Recording(["approve"]), mode="confirm-sensitive")
    result = engine.execute_tool_call(
        "edit_notebook_cell",
        {"path": "analysis.ipynb", "cell_id": code, "old_str": "# unsaved line\n", "new_str": ""},
    )
    assert result.success, result.error
    [request] = asked
    assert request.preview is not None
    assert f"--- a/analysis.ipynb [cell 1 id={code} code]" in request.preview
    assert "-# unsaved line" in request.preview  # only the open document has that line


def test_secrets_read_from_an_open_document_are_redacted_like_those_read_from_a_file(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key typed (unsaved) into the open notebook, and the same key in a notebook on disk: the model
    receives neither, over real HTTP, and the approval prompt's cell diff shows neither."""
    notebooks, doc = front
    env_key, file_key = "live-" + uuid.uuid4().hex, "tok-" + uuid.uuid4().hex
    monkeypatch.setenv("SERVICE_API_KEY", env_key)
    monkeypatch.setenv("STUB_API_KEY", "stub-key-for-the-local-server")
    (workspace / ".env").write_text(f"FOLDER_TOKEN={file_key}\n")  # a sensitive file's value
    line = f"key = '{env_key}'  # and {file_key}\n"
    code = doc.cells[1]["id"]
    doc.type_into(code, line)  # only in the open document
    on_disk = write_v45(workspace / "on_disk.ipynb")
    saved = json.loads(on_disk.read_text())
    saved["cells"][1]["source"] = line + "".join(saved["cells"][1]["source"])
    on_disk.write_text(json.dumps(saved))
    prompts: list[str] = []

    class Recording(ScriptedConfirmer):
        def confirm(self, request: ConfirmationRequest) -> Any:
            assert request.preview is not None and env_key in request.preview  # raw until it is shown
            prompts.append(ApprovalPrompt(request).question.value)
            return super().confirm(request)

    def edit(path: str, cell_id: str) -> tuple[str, dict[str, Any]]:
        return "edit_notebook_cell", {
            "path": path,
            "cell_id": cell_id,
            "old_str": "import math",
            "new_str": "import os",
        }

    config = load_config(
        overrides={
            "workspace.root": str(workspace),
            "llm.api_base": "",
            "llm.api_key_env": "STUB_API_KEY",
            "llm.retries": 0,
            "guardrails.sensitive_files": [".env"],
        },
        environ={},
    )
    try:
        default_redactor().refresh()
        with OpenAIStubServer() as server:
            config.llm.api_base = server.url
            server.queue(
                Reply.calls(
                    ("read_notebook", {"path": "analysis.ipynb"}),
                    ("read_notebook", {"path": "on_disk.ipynb"}),
                ),
                Reply.calls(edit("analysis.ipynb", code), edit("on_disk.ipynb", saved["cells"][1]["id"])),
                Reply.text("Done."),
            )
            confirmer = Recording(["approve"] * 2)
            loop = create_loop(
                config, model="openai/stub-model", mode="confirm-sensitive", confirmer=confirmer,
                kernel=_Kernel(notebooks),
            )  # fmt: skip
            result = loop.run("Read both notebooks and switch them to os.")
    finally:
        monkeypatch.delenv("SERVICE_API_KEY")
        default_redactor().refresh()
    assert result.status == "success", result
    assert doc.source(code).startswith(line + "import os\n")  # the open document holds the key, edited
    sent = json.dumps(server.requests)
    assert env_key not in sent and file_key not in sent
    results = [m["content"] for r in server.requests for m in r["messages"] if m["role"] == "tool"]
    live_read, disk_read = results[0], results[1]
    assert "[Open in JupyterLab" in live_read and "[Open in" not in disk_read
    shown = "key = '[REDACTED:SERVICE_API_KEY]'  # and [REDACTED:.env:FOLDER_TOKEN]"
    assert shown in live_read, live_read
    assert shown in disk_read, disk_read
    assert len(prompts) == 2
    for prompt in prompts:
        assert env_key not in prompt and file_key not in prompt
        assert "[REDACTED:SERVICE_API_KEY]" in prompt and "[REDACTED:.env:FOLDER_TOKEN]" in prompt


def test_undo_puts_the_open_documents_cells_back_and_keeps_the_persons_edits(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    engine = _engine(workspace, notebooks)
    on_disk = nb.read_bytes()
    before = json.loads(json.dumps(doc.cells))
    md, code, third, fourth = (doc.cells[i]["id"] for i in range(4))
    doc.type_into(md, "# typed\n")
    calls = [
        (
            "insert_notebook_cell",
            {"path": "analysis.ipynb", "after_cell_id": md, "source": "import cleaning\n"},
        ),
        ("delete_notebook_cell", {"path": "analysis.ipynb", "cell_id": third}),
        (
            "edit_notebook_cell",
            {"path": "analysis.ipynb", "cell_id": code, "old_str": "import math", "new_str": "import cmath"},
        ),
        (
            "edit_notebook_cell",
            {"path": "analysis.ipynb", "cell_id": fourth, "old_str": "bad", "new_str": "worse"},
        ),
    ]
    for step, (tool, args) in enumerate(calls, 1):
        result = engine.execute_tool_call(tool, args, step=step)
        assert result.success, result.error
        assert result.changed_files == ["analysis.ipynb"]
        assert "document_change" not in result.metadata
    run = engine.run_id
    assert [p.name for p in engine.checkpoints.files(run)] == ["analysis.ipynb"]
    [review] = engine.checkpoints.review(run)
    assert review.path == "analysis.ipynb" and review.diff.count("--- ") == 4
    assert "+import cmath" in review.diff and "+++ /dev/null" in review.diff

    # The person reverts the first edit (their Ctrl+Z), and edits the fourth cell the agent changed.
    cell = next(c for c in doc.cells if c["id"] == code)
    cell["source"] = before[1]["source"]
    fourth_cell = next(c for c in doc.cells if c["id"] == fourth)
    fourth_cell["source"] = "# the person's\n" + "".join(fourth_cell["source"])

    report = engine.checkpoints.undo(run, documents=notebooks)
    assert report.restored == ["analysis.ipynb"]
    assert report.conflicts == [f"analysis.ipynb [cell id={fourth}: edited since the run]"]
    assert _ids(doc) == [c["id"] for c in before]
    assert doc.source(md) == "# typed\n" + "".join(before[0]["source"])  # the person's typing stays
    assert doc.cells[2] == {**before[2], "source": "".join(before[2]["source"])}  # back with its outputs
    assert nb.read_bytes() == on_disk  # and the file was never written
    assert len(doc.applied) == 5  # four calls, then one all-at-once undo


def test_undo_of_a_notebook_closed_since_puts_the_cells_back_in_its_file(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    notebooks, doc = front
    engine = _engine(workspace, notebooks)
    original = json.loads(nb.read_text())
    code = doc.cells[1]["id"]
    for tool, args in [
        (
            "edit_notebook_cell",
            {"path": "analysis.ipynb", "cell_id": code, "old_str": "import math", "new_str": "import os"},
        ),
        ("delete_notebook_cell", {"path": "analysis.ipynb", "cell_id": doc.cells[3]["id"]}),
    ]:
        assert engine.execute_tool_call(tool, args).success
    notebooks.save(doc, nb)  # the person saves and closes it
    notebooks.close(doc)
    saved = nb.read_text()
    report = engine.checkpoints.undo(engine.run_id, documents=notebooks)
    assert report.ok and report.restored == ["analysis.ipynb"], str(report)
    back = json.loads(nb.read_text())
    assert [c["id"] for c in back["cells"]] == [c["id"] for c in original["cells"]]
    assert "".join(back["cells"][1]["source"]) == "".join(original["cells"][1]["source"])
    assert back["cells"][3]["outputs"] == original["cells"][3]["outputs"]
    assert nb.read_text() != saved


def test_a_run_undone_twice_is_refused_and_a_front_end_failure_leaves_it_to_retry(
    workspace: Path, nb: Path, front: tuple[OpenNotebooks, OpenDocument]
) -> None:
    from architect_nb.execution.checkpoints.store import AlreadyUndoneError, CheckpointError

    notebooks, doc = front
    engine = _engine(workspace, notebooks)
    code = doc.cells[1]["id"]
    args = {"path": "analysis.ipynb", "cell_id": code, "old_str": "import math", "new_str": "import os"}
    assert engine.execute_tool_call("edit_notebook_cell", args).success

    class Failing:
        def open_document(self, path: Path) -> Any:
            raise DocumentError("JupyterLab did not answer within 10 s")

        def unavailable(self) -> str | None:
            return None

    with pytest.raises(CheckpointError, match=r"did not answer within 10 s.*can be run again"):
        engine.checkpoints.undo(engine.run_id, documents=Failing())
    assert doc.source(code).startswith("import os")
    report = engine.checkpoints.undo(engine.run_id, documents=notebooks)
    assert report.ok and doc.source(code).startswith("import math")
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id, documents=notebooks)


# --------------------------------------------------------------------------- the operations themselves


def _cells(*sources: str) -> list[dict[str, Any]]:
    return [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": s} for i, s in enumerate(sources)]


def test_cell_operations_are_checked_before_anything_changes() -> None:
    cells = _cells("a\n", "b\n")
    ops = [CellOp.edit("c0", "A\n", "a\n"), CellOp.delete("c1", "wrong\n")]
    with pytest.raises(CellOpError) as refused:
        apply_ops(cells, ops)
    assert refused.value.code == "changed"
    assert cells == _cells("a\n", "b\n")
    for op, code in [
        (CellOp.insert({"id": "c0", "cell_type": "code"}, None), "taken"),
        (CellOp.insert({"id": "n", "cell_type": "code"}, "gone"), "anchor"),
        (CellOp.delete("gone", ""), "gone"),
    ]:
        with pytest.raises(CellOpError) as error:
            check_ops(cells, [op])
        assert error.value.code == code


def test_inverse_operations_follow_the_cells_as_they_are_now() -> None:
    cells = _cells("a\n", "b\n", "c\n")
    changes = [
        {"kind": "insert", "id": "n", "index": 1, "after_id": "c0", "cell": _cells("new\n")[0] | {"id": "n"}},
        {"kind": "edit", "id": "c1", "index": 2, "cell_type": "code", "before": "b\n", "after": "B\n"},
        {"kind": "delete", "id": "c2", "index": 3, "after_id": "c1", "cell": cells[2]},
    ]
    after = apply_ops(
        cells,
        [
            CellOp.insert(changes[0]["cell"], "c0"),
            CellOp.edit("c1", "B\n", "b\n"),
            CellOp.delete("c2", "c\n"),
        ],
    )
    ops, conflicts = inverse_ops(after, changes)
    assert conflicts == []
    assert apply_ops(after, ops) == [{**c, "source": c["source"]} for c in cells]
    # The person deleted the cell the deleted one followed: it goes back where it was.
    moved = [c for c in after if c["id"] != "c1"]
    ops, conflicts = inverse_ops(moved, changes)
    assert conflicts == ["cell id=c1: deleted since the run"]
    assert [c["id"] for c in apply_ops(moved, ops)] == ["c0", "c2"]


def test_a_cell_someone_typed_into_between_the_runs_edits_is_left_alone_and_named_once() -> None:
    """A collaborator typed into the cell between the agent's edits, and after the last: every one of the
    run's edits to it is left (each would undo part of their typing with it), and the cell is named once."""
    cells = _cells("v0 = 0\nv1 = 0\n", "other\n")
    changes = [
        {"kind": "edit", "id": "c0", "index": 0, "before": "v0 = 0\nv1 = 0\n", "after": "v0 = 1\nv1 = 0\n"},
        {
            "kind": "edit",
            "id": "c0",
            "index": 0,
            "before": "v0 = 1\nv1 = 0\ncc",
            "after": "v0 = 1\nv1 = 1\ncc",
        },
        {"kind": "edit", "id": "c1", "index": 1, "before": "other\n", "after": "OTHER\n"},
    ]
    now = [{**cells[0], "source": "v0 = 1\nv1 = 1\ncccc"}, {**cells[1], "source": "OTHER\n"}]
    ops, conflicts = inverse_ops(now, changes)
    assert conflicts == ["cell id=c0: edited since the run"]
    assert [source_of(c) for c in apply_ops(now, ops)] == ["v0 = 1\nv1 = 1\ncccc", "other\n"]
