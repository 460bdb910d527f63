"""The notebook context of `%%architect` runs in real kernels (current ipykernel and 6.x), on the
OpenAI-compatible test server: what the first request holds.

- VS Code's way: `__vsc_ipynb_file__` names the file; the outline has the failing cell, its traceback and
  the references resolved (by position and by execution count), no base64; a large notebook stays within
  the budget; `--no-notebook` leaves it out.
- Stale marks from what this kernel ran: edited after running, out of order, downstream of a re-run cell,
  a `del`, a star import.
- Headless (nbclient, papermill): the cells the kernel ran and the last error come from its history, and
  run_cell is refused there.
- A module the run changed is named as stale with the cells that import it; after `%architect reload` the
  next cell uses the new code (and with autoreload on, the note says so).
- run_cell on a notebook open in a front end (played over the document channel): it asks first and shows
  the cell, runs it in the person's namespace, its outputs and count land in the cell, and the counts stay
  in step with `In`; the running cell and a cell being typed in are refused.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from architect_nb.testing.notebook_run import PATIENT_OUTPUTS
from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.kernel import (
    RUN_MIME,
    Cell,
    FrontEnd,
    kernel_env,
    kernel_params,
    loaded_front_end,
    write_kernelspecs,
)
from tests.support.live_frontend import DocumentFrontEnd

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

RELOAD_MIME = "application/vnd.architect-nb.reload+json"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16).decode()
KEY = "sk-stub-0000"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as stub:
        yield stub


def _use_stub(player: FrontEnd, server: OpenAIStubServer, workspace: Path) -> None:
    player.run(f"import os; os.environ['STUB_API_KEY'] = {KEY!r}")
    setup = player.run(
        f"%architect config llm.api_base={server.url} llm.api_key_env=STUB_API_KEY llm.retries=0 "
        f"workspace.root={workspace}"
    )
    assert setup.status == "ok", setup.text()


@contextlib.contextmanager
def _kernel_in(kernel_name: str, tmp: Path) -> Iterator[tuple[FrontEnd, Path]]:
    """A kernel in tmp/ws, architect_nb loaded; yields it and the workspace."""
    ws = tmp / "ws"
    ws.mkdir()
    with loaded_front_end(kernel_name, tmp, ws, {"JPY_SESSION_NAME": str(ws / "nb.ipynb")}) as player:
        yield player, ws


def _on_the_stub(player: FrontEnd, ws: Path, server: OpenAIStubServer) -> tuple[FrontEnd, Path]:
    _use_stub(player, server, ws)
    server.requests.clear()
    server.replies.clear()  # what an interrupted run of another test left
    return player, ws


@pytest.fixture(scope="module", params=kernel_params())
def module_kernel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FrontEnd, Path]]:
    """One kernel per ipykernel version, for tests whose subject is not what the kernel ran before them."""
    with _kernel_in(str(request.param), tmp_path_factory.mktemp(f"context-{request.param}")) as started:
        yield started


@pytest.fixture
def kernel(module_kernel: tuple[FrontEnd, Path], server: OpenAIStubServer) -> tuple[FrontEnd, Path]:
    """The module's kernel as new (`FrontEnd.hand_over`), an empty workspace, on the stub model."""
    player, ws = module_kernel
    player.hand_over()
    for entry in ws.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return _on_the_stub(player, ws, server)


@pytest.fixture(params=kernel_params())
def own_kernel(
    request: pytest.FixtureRequest, tmp_path: Path, server: OpenAIStubServer
) -> Iterator[tuple[FrontEnd, Path]]:
    """A kernel of the test's own: for what a reset does not undo (what the kernel ran, its imported
    modules and extensions)."""
    with _kernel_in(str(request.param), tmp_path) as (player, ws):
        yield _on_the_stub(player, ws, server)


def _architect(player: FrontEnd, task: str, options: str = "--mode yolo", cell_id: str | None = None) -> Cell:
    cell = player.run(
        f"%%architect --model openai/stub --new {options}\n{task}", timeout=120, cell_id=cell_id
    )
    assert cell.status == "ok", player.describe()
    return cell


def _first_task(server: OpenAIStubServer) -> str:
    """The user message the run began with: the notebook context, then the task."""
    [user] = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1:]
    return str(user["content"])


def _code(source: str, count: int | None, outputs: list[Any] | None = None, cell_id: str = "") -> Any:
    cell = nbformat.v4.new_code_cell(source, execution_count=count)
    cell.outputs = outputs or []
    if cell_id:
        cell.id = cell_id
    return cell


def _error(player: FrontEnd, cell: Cell) -> Any:
    [output] = [o for o in cell.outputs if o["output_type"] == "error"]
    return nbformat.v4.new_output(
        "error", ename=output["ename"], evalue=output["evalue"], traceback=output["traceback"]
    )


def _count(cell: Cell) -> int:
    assert cell.reply is not None
    return int(cell.reply["execution_count"])


# --------------------------------------------------------------------------- VS Code: the file it names


def test_the_file_vs_code_names_gives_the_outline_with_the_failing_cell(
    kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    player, ws = kernel
    path = ws / "sub" / "analysis.ipynb"
    path.parent.mkdir()
    player.run(f"__vsc_ipynb_file__ = {str(path)!r}")
    first = player.run("import math\nprint('ready')")
    second = player.run("d = {'a': 1}")
    failing = player.run("d['b']")
    assert failing.status == "error"
    task = f"Fix the error above; compare cell 1 with [{_count(first)}]."
    image = nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        _code("import math\nprint('ready')", _count(first), [image]),
        _code("d = {'a': 1}", _count(second)),
        _code("d['b']", _count(failing), [_error(player, failing)]),
        _code(f"%%architect --model openai/stub --new --mode yolo\n{task}", None),
    ]
    path.write_text(nbformat.writes(notebook))
    server.queue(Reply.text("Done."))
    _architect(player, task)
    sent = _first_task(server)
    assert "sub/analysis.ipynb (the file as VS Code last saved it)" in sent, sent
    assert "This cell is cell 3" in sent
    assert f'"the error above" = cell 2 [{_count(failing)}]' in sent
    assert f'"cell 1" = cell 1 [{_count(second)}]' in sent
    assert f'"[{_count(first)}]" = cell 0 [{_count(first)}]' in sent
    assert f"cell 2 [{_count(failing)}], in full:\n    d['b']" in sent and "KeyError: 'b'" in sent
    assert f"Cell In[{_count(failing)}], line 1" in sent  # the traceback's last frame
    assert "1 image" in sent and PNG[:60] not in json.dumps(server.requests[0])
    assert sent.rstrip().endswith(task)

    server.requests.clear()
    server.queue(Reply.text("Done."))
    _architect(player, "Nothing to see.", "--mode yolo --no-notebook")
    assert "The notebook this %%architect cell" not in _first_task(server)


def test_the_outline_of_a_large_notebook_stays_within_its_budget(
    kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    player, ws = kernel
    path = ws / "big.ipynb"
    player.run(f"__vsc_ipynb_file__ = {str(path)!r}")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        _code(
            f"step_{i} = step_{i - 1} * 2  # a line of work\nprint(step_{i})",
            i,
            [nbformat.v4.new_output("stream", name="stdout", text=f"{i}\n" * 3)],
        )
        for i in range(1, 300)
    ]
    notebook.cells.append(
        _code("%%architect --model openai/stub --new --mode yolo\nWhat does this do?", None)
    )
    path.write_text(nbformat.writes(notebook))
    server.queue(Reply.text("Done."))
    _architect(player, "What does this do?")
    sent = _first_task(server)
    outline = sent[: sent.rindex("What does this do?")]
    assert (
        "big.ipynb" in outline
        and "300 cells" in outline
        and "not shown (read_notebook shows them)" in outline
    )
    assert len(outline) / 4 < 1500, len(outline)  # under the budget by any tokenizer's count of this text
    assert "cell 298 [299], in full:" in outline  # the cells just above come in full


# --------------------------------------------------------------------------- what is stale


def test_stale_marks_from_what_this_kernel_ran(
    own_kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    player, ws = own_kernel
    path = ws / "stale.ipynb"
    player.run(f"__vsc_ipynb_file__ = {str(path)!r}")
    x1 = player.run("x = 1")
    y = player.run("y = x + 1")
    x2 = player.run("x = 1")  # cell 0 again, after cell 1: out of order, and cell 1 is downstream
    made = player.run("tmp = 5")
    used = player.run("print(tmp)")
    deleted = player.run("del tmp")  # cell 3, run after cell 4 below it, which used tmp
    star = player.run("from os.path import *")
    assert all(c.status == "ok" for c in (x1, y, x2, made, used, deleted, star)), player.describe()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        _code("x = 1", _count(x2)),
        _code("y = x + 2", _count(y)),  # edited after it ran (it ran as "y = x + 1")
        _code("tmp = 5", _count(made)),
        _code("del tmp", _count(deleted)),
        _code("print(tmp)", _count(used)),
        _code("from os.path import *", _count(star)),
        _code("%%architect --model openai/stub --new --mode yolo\nWhat can I trust?", None),
    ]
    path.write_text(nbformat.writes(notebook))
    server.queue(Reply.text("Done."))
    _architect(player, "What can I trust?")
    sent = _first_task(server)
    assert f"cell 0 [{_count(x2)}] {{ran after cells below it}}" in sent, sent
    assert (
        f"cell 1 [{_count(y)}] {{edited since it ran; stale: x changed by cell 0 [{_count(x2)}] since}}"
        in sent
    )
    assert f"cell 3 [{_count(deleted)}] {{ran after cells below it}}" in sent
    assert f"cell 4 [{_count(used)}] {{stale: tmp deleted by cell 3 [{_count(deleted)}] since}}" in sent
    assert "from os.path import *: its names are unknown" in sent
    assert "do not trust those outputs" in sent


# --------------------------------------------------------------------------- headless


def _headless(
    tmp: Path, ws: Path, kernel: str, server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch
) -> list[Any]:
    server.requests.clear()
    server.replies.clear()  # what an earlier test's interrupted run left unasked
    write_kernelspecs(tmp / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp / "jupyter"))
    for key, value in kernel_env({"STUB_API_KEY": KEY}).items():
        monkeypatch.setenv(key, value)
    return [
        "%load_ext architect_nb",
        f"%architect config llm.api_base={server.url} llm.api_key_env=STUB_API_KEY llm.retries=0 "
        f"workspace.root={ws}",
        "x = 1",
        "x / 0",
        "%%architect --model openai/stub --mode yolo\nWhy did the cell above fail? Run it again.",
        "print('after the agent')",
    ]


def _check_headless(server: OpenAIStubServer, nb: Any) -> None:
    sent = _first_task(server)
    assert "No notebook could be read for this %%architect cell (the kernel's history)" in sent, sent
    assert "[4], in full:\n    x / 0" in sent and "ZeroDivisionError: division by zero" in sent
    assert "This cell is [5]." in sent and '"the cell above" = [4]' in sent
    tool = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "run_cell runs cells of the notebook open in JupyterLab or Notebook 7" in tool
    assert "after the agent" in json.dumps(nb.cells[-1].outputs)


@pytest.mark.parametrize("kernel", [p.values[0] for p in kernel_params()])
def test_under_nbclient_the_cells_and_the_last_error_come_from_the_kernel(
    kernel: str, tmp_path: Path, server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbclient import NotebookClient

    from tests.support.kernel import available_kernels

    if kernel not in available_kernels():
        pytest.skip("no .venv-ipk6: run `make setup-ipk6`")
    ws = tmp_path / "ws"
    ws.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in _headless(tmp_path, ws, kernel, server, monkeypatch)]
    server.queue(Reply.calls(("run_cell", {"cell": "index:3"})), Reply.text("It divides by zero."))
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name=f"architect-{kernel}",
        allow_errors=True,
        resources={"metadata": {"path": str(ws)}},
        **PATIENT_OUTPUTS,
    )
    asyncio.run(client.async_execute())
    _check_headless(server, nb)


def test_under_papermill_the_cells_and_the_last_error_come_from_the_kernel(
    tmp_path: Path, server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    papermill = pytest.importorskip(
        "papermill", reason="papermill is in the dev group: make setup installs it"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in _headless(tmp_path, ws, "ipk7", server, monkeypatch)]
    nb.cells[3].metadata["tags"] = ["raises-exception"]  # papermill goes on past a cell tagged so
    source, output = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    source.write_text(nbformat.writes(nb))
    server.queue(Reply.calls(("run_cell", {"cell": "index:3"})), Reply.text("It divides by zero."))
    # It runs on past the tagged cell, then reports its error, as papermill does; the output is written.
    with pytest.raises(papermill.PapermillExecutionError, match="ZeroDivisionError"):
        papermill.execute_notebook(
            str(source), str(output), kernel_name="architect-ipk7", cwd=str(ws), progress_bar=False
        )
    _check_headless(server, nbformat.read(output, as_version=4))


# --------------------------------------------------------------------------- modules the run changed


def test_a_module_the_run_changed_is_named_and_reloaded(
    own_kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    player, ws = own_kernel
    (ws / "mymod.py").write_text("def answer():\n    return 1\n")
    player.run(f"import sys; sys.path.insert(0, {str(ws)!r})")
    imported = player.run("from mymod import answer")
    assert player.run("answer()").data("text/plain") == ["1"]
    new = "def answer():\n    return 2\n"
    server.queue(Reply.calls(("write_file", {"path": "mymod.py", "content": new})), Reply.text("Changed it."))
    cell = _architect(player, "Make answer() return 2.")
    [note] = cell.data(RELOAD_MIME)
    assert [m["name"] for m in note["modules"]] == ["mymod"]
    assert f"[{_count(imported)}]" in note["modules"][0]["cells"]  # the cell that imports it
    assert "%architect reload" in note["text"] and note["autoreload"] is None
    assert player.run("answer()").data("text/plain") == ["1"]  # the old code, until reloaded
    reload = player.run("%architect reload")
    assert "Reloaded mymod" in reload.text() and "answer" in reload.text(), reload.text()
    assert player.run("answer()").data("text/plain") == ["2"]

    player.run("%load_ext autoreload\n%autoreload 2")
    newer = "def answer():\n    return 3\n"
    server.queue(
        Reply.calls(("write_file", {"path": "mymod.py", "content": newer})), Reply.text("Changed it.")
    )
    [note] = _architect(player, "Make answer() return 3.").data(RELOAD_MIME)
    assert "autoreload is on" in str(note["autoreload"])
    time.sleep(1.1)  # autoreload compares modification times, to the second on some file systems
    assert player.run("import mymod; mymod.answer()").data("text/plain") == ["3"]


# --------------------------------------------------------------------------- run_cell


@pytest.fixture
def open_notebook(kernel: tuple[FrontEnd, Path]) -> Iterator[tuple[FrontEnd, Path, DocumentFrontEnd]]:
    player, ws = kernel
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        _code("d = {'a': 1}", None, cell_id="data"),
        _code("d['b']", None, cell_id="failing"),
        _code("%%architect", None, cell_id="arch"),
    ]
    (ws / "nb.ipynb").write_text(nbformat.writes(notebook))
    tab = DocumentFrontEnd(player.km, ws, "nb.ipynb")
    deadline = time.monotonic() + 30
    while not tab.accepted:
        assert time.monotonic() < deadline, "the front end's comm was not accepted"
        time.sleep(0.02)
    try:
        yield player, ws, tab
    finally:
        tab.close()


def test_run_cell_asks_then_runs_the_cell_where_the_person_would_and_writes_its_outputs_back(
    open_notebook: tuple[FrontEnd, Path, DocumentFrontEnd], server: OpenAIStubServer
) -> None:
    player, ws, tab = open_notebook
    doc = tab.open(ws / "nb.ipynb")
    ran = player.run("d = {'a': 1}", cell_id="data")
    failing = player.run("d['b']", cell_id="failing")
    for cell, run in (
        ("data", ran),
        ("failing", failing),
    ):  # the front end shows what ran, as JupyterLab does
        shown = next(c for c in doc.cells if c["id"] == cell)
        shown["execution_count"] = _count(run)
    next(c for c in doc.cells if c["id"] == "failing")["outputs"] = [dict(_error(player, failing))]
    doc.cells[1]["source"] = "d.get('b', 0)"  # the person fixed it, and has not run it yet
    doc.editing = "data"
    task = "Run the fixed cell."
    doc.cells[2]["source"] = f"%%architect --model openai/stub --new --mode confirm-sensitive\n{task}"
    server.queue(
        Reply.calls(("run_cell", {"cell": "index:2"})),  # this cell: refused
        Reply.calls(("run_cell", {"cell": "data"})),  # being typed in: refused
        Reply.calls(("run_cell", {"cell": "failing"})),
        Reply.text("It returns 0 now."),
    )
    cell = player.execute(f"%%architect --model openai/stub --new --mode confirm-sensitive\n{task}", "arch")
    approve = player.wait_for_button("Approve", timeout=90)
    shown = re.sub(r"<[^>]+>", "", json.dumps([c.state for c in player.comms.values() if c.open]))
    assert "The code that would run in your kernel" in shown and "d.get(" in shown, (
        "the approval shows the cell"
    )
    player.click(approve.comm_id)
    player.wait(lambda: cell.finished, 120, "the run to finish")
    assert cell.status == "ok", player.describe()
    architect_count = int(cell.reply["execution_count"]) if cell.reply else 0

    tools = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "is an %%architect cell" in tools[0]
    assert "The user is typing in cell 0" in tools[1]
    assert "cell 1 ran as [" in tools[2] and "[execute_result]\n0" in tools[2], tools[2]
    fixed = next(c for c in doc.cells if c["id"] == "failing")
    assert fixed["outputs"][0]["output_type"] == "execute_result"
    assert fixed["outputs"][0]["data"]["text/plain"] == "0"
    count = fixed["execution_count"]
    assert (
        count == _count(failing) + 2
    )  # the %%architect cell held the next count; this one took the one after
    assert architect_count == count + 1  # the %%architect cell takes the count after the cells it ran
    history = player.run(f"In[{count}], In[{architect_count}].startswith('%%architect')")
    assert history.data("text/plain") == ["(\"d.get('b', 0)\", True)"], history.text()
    assert _count(history) == architect_count + 1  # the next cell goes on from there


def test_what_a_cell_run_cell_ran_did_to_the_variables_is_undone(
    open_notebook: tuple[FrontEnd, Path, DocumentFrontEnd], server: OpenAIStubServer
) -> None:
    player, ws, tab = open_notebook
    doc = tab.open(ws / "nb.ipynb")
    player.run("d = {'a': 1}", cell_id="data")
    doc.cells[1]["source"] = "d['b'] = 2\nextra = 5"
    task = "Run the second cell."
    doc.cells[2]["source"] = f"%%architect --model openai/stub --new --mode yolo\n{task}"
    server.queue(Reply.calls(("run_cell", {"cell": "failing"})), Reply.text("Ran it."))
    cell = player.run(
        f"%%architect --model openai/stub --new --mode yolo\n{task}", cell_id="arch", timeout=120
    )
    assert cell.status == "ok", player.describe()
    [payload] = cell.data(RUN_MIME)
    [result] = [e for e in payload["events"] if e["kind"] == "tool_result" and e["tool"] == "run_cell"]
    assert {c["name"]: c["kind"] for c in result["changed_state"]} == {"d": "mutated", "extra": "added"}
    assert player.run("print(d, extra)").text().strip() == "{'a': 1, 'b': 2} 5"
    report = player.run("%architect undo").text()
    assert "Your variables restored: d" in report and "Removed the variables the run created: extra" in report
    assert player.run("print(d, 'extra' in dir())").text().strip() == "{'a': 1} False"


def test_where_the_server_runs_cells_the_front_end_names_the_running_cell(
    open_notebook: tuple[FrontEnd, Path, DocumentFrontEnd], server: OpenAIStubServer
) -> None:
    """jupyter-server-documents runs cells itself: the execute request has no cell id. The kernel asks the
    front ends which running cell has its source, and run_cell (which needs the run's own cell) works."""
    player, ws, tab = open_notebook
    tab.outputs = "server"  # its page's server runs cells (PageConfig serverSideExecution)
    tab.connect()
    player.wait(lambda: tab.accepted, 30, "the front end's comm to be accepted again")
    doc = tab.open(ws / "nb.ipynb")
    doc.cells[0]["source"] = "d = {'a': 41}"
    source = "%%architect --model openai/stub --new --mode yolo\nRun the first cell."
    doc.cells[2]["source"] = source
    doc.busy.add("arch")  # the server marks the cell it runs as running in the shared document
    server.queue(Reply.calls(("run_cell", {"cell": "data"})), Reply.text("Ran it."))
    cell = player.run(source, timeout=120)  # as the server sends it: no cell id
    assert cell.status == "ok", player.describe()
    [payload] = cell.data(RUN_MIME)
    [result] = [e for e in payload["events"] if e["kind"] == "tool_result" and e["tool"] == "run_cell"]
    assert result["success"], result
    assert "cell 0 ran as [" in result["output"], result["output"]
    assert next(c for c in doc.cells if c["id"] == "data")["execution_count"] is not None
    assert [r["source"] for r in tab.requests if r.get("type") == "running"] == [source]
    assert player.run("print(d)").text().strip() == "{'a': 41}"


def test_architect_fix_puts_a_cell_below_for_the_last_error(kernel: tuple[FrontEnd, Path]) -> None:
    player, _ws = kernel
    assert "No cell has failed" in player.run("%architect fix").text()
    failing = player.run("d = {}\nd['b']")
    fix = player.run("%architect fix")
    assert fix.status == "ok" and "An %%architect cell asking to fix it is below" in fix.text()
    assert fix.reply is not None
    [payload] = [p for p in fix.reply["payload"] if p.get("source") == "set_next_input"]
    assert payload["text"] == f"%%architect\nFix the error of [{_count(failing)}] (KeyError: 'b')."
    assert payload["replace"] is False


def test_the_stop_button_interrupts_a_cell_run_cell_runs(
    open_notebook: tuple[FrontEnd, Path, DocumentFrontEnd], server: OpenAIStubServer
) -> None:
    player, ws, tab = open_notebook
    doc = tab.open(ws / "nb.ipynb")
    doc.cells[0]["source"] = "import time\ntime.sleep(60)"
    doc.cells[2]["source"] = "%%architect --model openai/stub --new --mode yolo\nRun the first cell."
    server.queue(Reply.calls(("run_cell", {"cell": "data"})), Reply.text("Done."))
    cell = player.execute("%%architect --model openai/stub --new --mode yolo\nRun the first cell.", "arch")
    player.wait(lambda: bool(server.requests), 60, "the model to be asked")
    time.sleep(1.5)  # the cell is sleeping in the kernel now
    started = time.monotonic()
    player.interrupt()
    player.wait(lambda: cell.finished, 30, "the interrupted run to end")
    assert time.monotonic() - started < 10
    assert cell.status == "error" and "RunInterruptedError" in json.dumps(cell.reply), player.describe()
    after = player.run_past_abort("1 + 1")
    assert after.status == "ok" and after.data("text/plain") == ["2"]
