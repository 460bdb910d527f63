"""The document channel in real kernels (current ipykernel and 6.x), front ends played over jupyter_client.

A front end with a notebook open (`live_frontend.DocumentFrontEnd`, answering as the labextension does) and
an `%%architect` cell that edits it: the open document changes and the file does not; `%architect undo` puts
the cells back through the front end, also after a kernel restart. Then what goes wrong: no front end, one
that does not answer, a notebook closed or renamed mid-call, a cell gone, a read-only notebook, two front
ends.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.agent import write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, kernel_params, loaded_front_end
from tests.support.live_frontend import DocumentFrontEnd
from tests.support.notebooks import write_v45

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _fresh_folders(root: Path) -> Path:
    """root/driver.ipynb and a workspace root/ws holding analysis.ipynb, as new; returns the workspace."""
    ws = root / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    ws.mkdir(parents=True)
    write_v45(root / "driver.ipynb")
    write_v45(ws / "analysis.ipynb")
    (ws / ".architect.yaml").write_text(yaml.safe_dump({"workspace": {"allow_delete": True}}))
    return ws


@contextlib.contextmanager
def _kernel_in(kernel_name: str, tmp: Path) -> Iterator[tuple[FrontEnd, Path]]:
    """A kernel started in tmp/root (the server's root) for root/driver.ipynb, architect_nb loaded."""
    root = tmp / "root"
    _fresh_folders(root)
    env = {"JPY_SESSION_NAME": str(root / "driver.ipynb")}
    with loaded_front_end(kernel_name, tmp, root, env) as player:
        yield player, root


@pytest.fixture(scope="module", params=kernel_params())
def module_kernel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FrontEnd, Path]]:
    """One kernel per ipykernel version for this module's tests (starting one and importing the agent costs
    seconds of CPU); each test takes it through `kernel`."""
    with _kernel_in(str(request.param), tmp_path_factory.mktemp(f"live-{request.param}")) as started:
        yield started


@pytest.fixture
def kernel(module_kernel: tuple[FrontEnd, Path]) -> tuple[FrontEnd, Path]:
    """The module's kernel as new (`FrontEnd.hand_over`: no names, session or front end of an earlier test),
    with root/driver.ipynb and a new workspace root/ws holding analysis.ipynb."""
    player, root = module_kernel
    player.hand_over()
    ws = _fresh_folders(root)
    player.run(f"%architect config workspace.root={ws} notebook.frontend_timeout=3")
    return player, root


@pytest.fixture(params=kernel_params())
def own_kernel(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FrontEnd, Path]]:
    """A kernel of the test's own, for a test that restarts it."""
    with _kernel_in(str(request.param), tmp_path) as (player, root):
        player.run(f"%architect config workspace.root={root / 'ws'} notebook.frontend_timeout=3")
        yield player, root


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[DocumentFrontEnd]:
    """A front end with driver.ipynb open, on the test's kernel (`kernel`, or `own_kernel`)."""
    started = "own_kernel" if "own_kernel" in request.fixturenames else "kernel"
    player, root = request.getfixturevalue(started)
    tab = DocumentFrontEnd(player.km, root, "driver.ipynb")
    try:
        _wait(lambda: tab.accepted, "the front end's comm to be accepted")
        yield tab
    finally:
        tab.close()


def _wait(predicate: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _run(
    player: FrontEnd, root: Path, calls: list[dict[str, Any]], *, timeout: float = 120
) -> list[dict[str, Any]]:
    """Run an %%architect cell (yolo) that makes `calls`, one per turn; returns their tool results."""
    model = write_script(
        root / "ws", [*({"tool_calls": [call]} for call in calls), {"content": "Done."}], name="live.yaml"
    )
    cell = player.run(
        f"%%architect --mode yolo --new --model {model}\nChange analysis.ipynb.", timeout=timeout
    )
    assert cell.status == "ok", player.describe()
    return [e for e in _payload(cell)["events"] if e["kind"] == "tool_result"]


def _payload(cell: Cell) -> dict[str, Any]:
    [payload] = cell.data(RUN_MIME)
    return dict(payload)


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {"path": "analysis.ipynb", **arguments}}


def _error(result: dict[str, Any]) -> str:
    assert result["success"] is False, result
    return str(result.get("error"))


def _ids(doc: Any) -> list[str]:
    return [c["id"] for c in doc.cells]


# --------------------------------------------------------------------------- edits through the front end


def test_an_open_notebook_is_edited_in_the_front_end_and_undone_there(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    on_disk = nb.read_bytes()
    doc = browser.open(nb)
    original = json.loads(json.dumps(doc.cells))
    md, code, raw = _ids(doc)[:3]
    doc.type_into(md, "# typed, not saved\n")
    results = _run(
        player,
        root,
        [
            _call("read_notebook"),
            _call("insert_notebook_cell", after_cell_id=md, source="import cleaning\n"),
            _call("delete_notebook_cell", cell_id=raw),
            _call("edit_notebook_cell", cell_id=code, old_str="import math", new_str="import cmath"),
        ],
    )
    assert all(r["success"] for r in results), results
    assert "# typed, not saved" in results[0]["output"]
    assert "Applied to the notebook open in JupyterLab" in results[3]["output"]
    assert nb.read_bytes() == on_disk
    assert len(_ids(doc)) == len(original) and raw not in _ids(doc)
    assert doc.source(code).startswith("import cmath") and doc.source(md).startswith("# typed, not saved\n")
    assert [req["type"] for req in browser.requests].count("apply") == 3

    undo = player.run("%architect undo", timeout=60)
    assert undo.status == "ok" and "restored 1 file(s)" in undo.text(), player.describe()
    assert _ids(doc) == [c["id"] for c in original]
    assert doc.source(code) == "".join(original[1]["source"])
    assert doc.source(md) == "# typed, not saved\n" + "".join(original[0]["source"])
    assert nb.read_bytes() == on_disk


def test_a_notebook_nobody_has_open_is_the_file(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    browser.open(root / "driver.ipynb")  # the front end has another notebook open, not this one
    started = time.monotonic()
    [result] = _run(
        player,
        root,
        [_call("edit_notebook_cell", cell_id="index:1", old_str="import math", new_str="import os")],
    )
    assert result["success"], result
    assert "Applied to" not in result["output"] and "import os" in nb.read_text()
    assert [r["type"] for r in browser.requests] == ["claim", "claim"]  # preview and write each asked once
    assert time.monotonic() - started < 60


def test_without_any_front_end_the_file_is_edited_at_once(kernel: tuple[FrontEnd, Path]) -> None:
    player, root = kernel
    player.run("%architect config notebook.frontend_timeout=600")  # a wait would show as a test timeout
    [result] = _run(player, root, [_call("delete_notebook_cell", cell_id="index:2")], timeout=60)
    assert result["success"], result
    assert len(json.loads((root / "ws" / "analysis.ipynb").read_text())["cells"]) == 4


def test_the_runs_own_notebook_outside_the_workspace_is_changed_through_the_front_end_only(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    """driver.ipynb, the notebook the %%architect cell runs in, is in the server's root, outside the workspace
    (root/ws): the notebook tools reach it by the front end's path through the open document, as behind a
    Jupyter Kernel Gateway; other paths outside stay refused, and undo puts its cells back there."""
    player, root = kernel
    driver = root / "driver.ipynb"
    on_disk = driver.read_bytes()
    doc = browser.open(driver)
    before = [c["id"] for c in doc.cells]
    model = write_script(
        root / "ws",
        [
            {"tool_calls": [{"name": "read_notebook", "arguments": {"path": "../driver.ipynb"}}]},
            {"tool_calls": [{"name": "read_notebook", "arguments": {"path": str(driver)}}]},
            {
                "tool_calls": [
                    {
                        "name": "insert_notebook_cell",
                        "arguments": {
                            "path": "driver.ipynb",
                            "after_cell_id": before[0],
                            "source": "x = 1\n",
                        },
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "edit_notebook_cell",
                        "arguments": {
                            "path": "driver.ipynb",
                            "cell_id": "arch",
                            "old_str": "Add",
                            "new_str": "Del",
                        },
                    }
                ]
            },
            {"content": "Done."},
        ],
        name="own.yaml",
    )
    source = f"%%architect --mode yolo --new --model {model}\nAdd a cell."
    running = {"cell_type": "code", "id": "arch", "metadata": {}, "outputs": [], "execution_count": None}
    doc.cells.append({**running, "source": source})
    cell = player.run(source, timeout=120, cell_id="arch")
    assert cell.status == "ok", player.describe()
    results = [e for e in _payload(cell)["events"] if e["kind"] == "tool_result"]
    assert "escapes the workspace" in _error(results[0]) and "escapes the workspace" in _error(results[1])
    assert results[2]["success"], results[2]
    assert "Applied to the notebook open in JupyterLab" in results[2]["output"]
    assert "the running %%architect cell is never" in _error(results[3])  # its own cell
    assert doc.source(_ids(doc)[1]) == "x = 1\n" and doc.source("arch") == source
    assert driver.read_bytes() == on_disk and not (root / "ws" / "driver.ipynb").exists()

    undo = player.run("%architect undo", timeout=60)
    assert undo.status == "ok" and "restored 1 file(s)" in undo.text(), player.describe()
    assert _ids(doc) == [*before, "arch"]
    assert driver.read_bytes() == on_disk and not (root / "ws" / "driver.ipynb").exists()


# --------------------------------------------------------------------------- what goes wrong


def test_a_front_end_that_does_not_answer_fails_the_call_and_comes_back(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    on_disk = nb.read_bytes()
    doc = browser.open(nb)
    browser.silent = True  # the tab froze, or is reloading
    edit = _call("edit_notebook_cell", cell_id=doc.cells[1]["id"], old_str="import math", new_str="import os")
    [result] = _run(player, root, [edit])
    assert "did not answer within 3 s" in _error(result) and "nothing was changed" in _error(result)
    assert nb.read_bytes() == on_disk and doc.applied == []  # never written behind the open editor
    # The kernel dropped it; the front end opens a new comm at once and the next call goes through.
    _wait(lambda: browser.opened >= 2 and browser.accepted, "the front end to come back")
    browser.silent = False
    [result] = _run(player, root, [edit])
    assert result["success"], result
    assert doc.source(doc.cells[1]["id"]).startswith("import os") and nb.read_bytes() == on_disk


def test_a_notebook_closed_or_renamed_mid_call_fails_clearly_and_changes_nothing(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    on_disk = nb.read_bytes()
    doc = browser.open(nb)
    code = doc.cells[1]["id"]

    def rename_on_apply(request: dict[str, Any]) -> None:
        if request["type"] == "apply":
            doc.path = Path("ws/renamed.ipynb")

    browser.before_answer = rename_on_apply
    edit = _call("edit_notebook_cell", cell_id=code, old_str="import math", new_str="import os")
    [renamed] = _run(player, root, [edit])
    assert "was renamed to 'ws/renamed.ipynb'" in _error(renamed)

    doc.path = Path("ws/analysis.ipynb")
    browser.before_answer = lambda request: (
        browser.notebooks.close(doc) if request["type"] == "apply" else None
    )
    [closed] = _run(player, root, [edit])
    assert "was closed in JupyterLab" in _error(closed)
    assert doc.applied == [] and nb.read_bytes() == on_disk


def test_a_cell_gone_a_cell_being_typed_in_and_a_read_only_notebook_are_refused(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    on_disk = nb.read_bytes()
    doc = browser.open(nb)
    code, raw = doc.cells[1]["id"], doc.cells[2]["id"]
    doc.editing = code

    def delete_raw_on_apply(request: dict[str, Any]) -> None:
        if request["type"] == "apply" and request["ops"][0].get("id") == raw:
            doc.data["cells"] = [c for c in doc.cells if c["id"] != raw]  # the person deleted it meanwhile

    browser.before_answer = delete_raw_on_apply
    results = _run(
        player,
        root,
        [
            _call("edit_notebook_cell", cell_id="no-such-id", old_str="a", new_str="b"),
            _call("edit_notebook_cell", cell_id=code, old_str="import math", new_str="import os"),
            _call("delete_notebook_cell", cell_id=raw),
        ],
    )
    assert "No cell of 'analysis.ipynb' has id 'no-such-id'" in _error(results[0])
    assert f"The person is typing in cell '{code}' right now" in _error(results[1])
    assert f"Cell '{raw}' is no longer in the notebook" in _error(results[2])
    doc.read_only = True
    [read_only] = _run(player, root, [_call("insert_notebook_cell", source="x = 1\n")])
    assert "is read-only (open in JupyterLab, which cannot save it)" in _error(read_only)
    assert doc.applied == [] and nb.read_bytes() == on_disk


def test_where_the_server_writes_outputs_the_view_is_redrawn_without_display_updates(
    kernel: tuple[FrontEnd, Path],
) -> None:
    """jupyter-server-documents runs cells on the server and appends each display update as a new output. A
    front end that says so gets the run's view redrawn as clear-and-display: the cell keeps one output."""
    player, root = kernel
    tab = DocumentFrontEnd(player.km, root, "driver.ipynb", outputs="server")
    try:
        _wait(lambda: tab.accepted, "the front end's comm to be accepted")
        tab.open(root / "ws" / "analysis.ipynb")
        results = _run(player, root, [_call("read_notebook"), _call("read_notebook"), _call("read_notebook")])
        assert [r["success"] for r in results] == [True, True, True]
        cell = player.order[-1]
        sent = [kind for _, kind, parent in player.iopub_log if parent == cell.msg_id]
        assert "update_display_data" not in sent, sent
        assert sent.count("clear_output") >= 3, sent  # a redraw per call at least
        [output] = cell.outputs
        assert RUN_MIME in output["data"]  # the run's record replaced the live view, in place
    finally:
        tab.close()


def test_two_front_ends_with_the_notebook_open(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    first = browser.open(nb)
    other = DocumentFrontEnd(player.km, root, "driver.ipynb")
    try:
        _wait(lambda: other.accepted, "the second front end")
        second = other.open(nb)
        insert = _call("insert_notebook_cell", source="x = 1\n")
        [refused] = _run(player, root, [insert])
        assert "is open in 2 front ends that do not share their edits" in _error(refused)
        assert first.applied == [] and second.applied == []
        # With real-time collaboration they share one document: one of them applies, the other sees it.
        browser.notebooks.shared = other.notebooks.shared = True
        [result] = _run(player, root, [insert])
        assert result["success"], result
        assert len(first.applied) + len(second.applied) == 1
    finally:
        other.close()


def test_a_collaborators_tab_closed_mid_run_leaves_the_edit_to_the_tab_still_open(
    kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    """Real-time collaboration: two tabs share the document; one is closed without closing its comm. The
    call does not fail: that tab is dropped when it does not answer, and the other applies the edit; the
    file is never written behind the shared document. (The edit's preview asks first and drops the tab, so
    this holds end to end even without the second claim; the unit test of `DocumentChannel.open_document`,
    `test_a_claim_goes_through_the_tab_still_open_...`, is the one that needs it.)"""
    player, root = kernel
    nb = root / "ws" / "analysis.ipynb"
    on_disk = nb.read_bytes()
    staying = browser.open(nb)
    other = DocumentFrontEnd(player.km, root, "driver.ipynb", shared=True)
    browser.notebooks.shared = True
    try:
        _wait(lambda: other.accepted, "the second front end")
        other.open(nb)
        other.vanish()
        edit = _call(
            "edit_notebook_cell", cell_id=staying.cells[1]["id"], old_str="import math", new_str="import os"
        )
        [result] = _run(player, root, [edit])
        assert result["success"], result
        assert staying.source(staying.cells[1]["id"]).startswith("import os") and len(staying.applied) == 1
        assert nb.read_bytes() == on_disk
    finally:
        browser.notebooks.shared = False
        other.close()


# ------------------------------------------------------------------------- kernel restarts, synchronous undo


def test_after_a_kernel_restart_undo_puts_the_cells_back_through_the_front_end(
    own_kernel: tuple[FrontEnd, Path], browser: DocumentFrontEnd
) -> None:
    player, root = own_kernel
    nb = root / "ws" / "analysis.ipynb"
    doc = browser.open(nb)
    before = json.loads(json.dumps(doc.cells))
    [result] = _run(player, root, [_call("delete_notebook_cell", cell_id=doc.cells[3]["id"])])
    assert result["success"], result
    run_id = _run_id(player)

    player.km.restart_kernel(now=True)
    player.kc.wait_for_ready(timeout=60)
    browser.restarted()  # refused: the new kernel has no architect_nb yet
    # In a synchronous cell the front end cannot answer: the undo is refused, nothing changes.
    sync = player.run(
        f"%load_ext architect_nb\nget_ipython().run_line_magic('architect', 'undo {run_id}')", timeout=60
    )
    assert "run the same `%architect` command again in a cell of its own" in sync.text(), player.describe()
    _wait(lambda: browser.accepted, "the front end to reconnect after the hello")
    assert len(doc.cells) == len(before) - 1
    undo = player.run(f"%architect undo {run_id}", timeout=60)
    assert "restored 1 file(s)" in undo.text(), player.describe()
    assert _ids(doc) == [c["id"] for c in before]
    assert doc.cells[3]["outputs"] == before[3]["outputs"]


def _run_id(player: FrontEnd) -> str:
    history = player.run("%architect history").text().strip().splitlines()
    return history[-1].split()[0]
