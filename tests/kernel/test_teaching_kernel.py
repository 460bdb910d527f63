"""A course's teaching policy in a real kernel: the kernel starts with the administrator's file named in its
environment, as a hub's spawner sets it; each level is set where a course sets it (that file, the workspace's
`.architect.yaml`, the notebook's metadata read from the notebook's file, `%architect config`), and each mode
is seen in the cell. Then provenance: cells the agent wrote, saved again, edited by the student, reported."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, loaded_front_end

pytestmark = pytest.mark.slow

WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "answer.py", "content": "x = 1\n"}}]}
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]}


@pytest.fixture(scope="module")
def system_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("etc") / "architect-nb.yaml"


@pytest.fixture(scope="module")
def course_kernel(tmp_path_factory: pytest.TempPathFactory, system_file: Path) -> Iterator[FrontEnd]:
    """One kernel whose environment names the system file, as JupyterHub's spawner would."""
    tmp = tmp_path_factory.mktemp("teaching-kernel")
    with loaded_front_end("ipk7", tmp, tmp, {"ARCHITECT_NB_SYSTEM_CONFIG": str(system_file)}) as fe:
        yield fe


@pytest.fixture
def fe(course_kernel: FrontEnd, system_file: Path, tmp_path: Path) -> Iterator[FrontEnd]:
    fe = course_kernel.hand_over()
    system_file.write_text("")  # no system policy unless the test writes one
    ws = copy_sample_project(tmp_path / "ws")
    assert fe.run(f"%architect config workspace.root={ws}").status == "ok", fe.describe()
    yield fe
    fe.run("import os; os.environ.pop('JPY_SESSION_NAME', None)")  # the notebook file a test named


def _payload(cell: Cell) -> dict[str, Any]:
    [payload] = cell.data(RUN_MIME)
    return dict(payload)


def _results(cell: Cell) -> list[dict[str, Any]]:
    return [e for e in _payload(cell)["events"] if e["kind"] == "tool_result"]


def _run(fe: FrontEnd, ws: Path, turns: list[dict[str, Any]]) -> Cell:
    model = write_script(ws, turns)
    cell = fe.run(f"%%architect --mode yolo --model {model}\nHelp me with the cart", timeout=120)
    assert cell.status == "ok", fe.describe()
    return cell


def _notebook(path: Path, teaching: Any) -> Path:
    """A notebook file whose metadata sets `teaching`, as a teacher distributes an assignment."""
    notebook = {
        "cells": [],
        "metadata": {"architect": {"teaching": teaching}, "kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))
    return path


def test_explain_from_the_system_file_refuses_writes_and_lets_the_agent_read(
    fe: FrontEnd, system_file: Path, tmp_path: Path
) -> None:
    system_file.write_text("teaching:\n  mode: explain\n  message: Write it yourself; ask me why.\n")
    ws = tmp_path / "ws"
    status = fe.run("%architect status").text()
    assert f"teaching policy: explain (set by the system file {system_file}:1)" in status, status
    offered, _, withheld = (
        status.partition("tools: ")[2].splitlines()[0].partition(" (withheld by the teaching")
    )
    assert "read_file" in offered and "write_file" not in offered and "write_file" in withheld, status

    cell = _run(fe, ws, [WRITE, READ, {"content": "Here is why."}])
    written, read = _results(cell)
    assert written["status"] == "blocked" and read["status"] == "ok"
    assert f"teaching policy 'explain' (set by the system file {system_file}:1)" in written["error"]
    assert "The teacher says: Write it yourself; ask me why." in written["error"]
    assert not (ws / "answer.py").exists()
    assert "write_file" not in _payload(cell)["events"][0]["tools"]  # not even offered


def test_no_lower_level_loosens_the_system_policy(fe: FrontEnd, system_file: Path, tmp_path: Path) -> None:
    system_file.write_text("teaching:\n  mode: explain\n")
    ws = tmp_path / "ws"
    (ws / ".architect.yaml").write_text("teaching:\n  mode: full\n")
    said = fe.run("%architect config teaching.mode=full").text()
    assert "The teaching policy that holds: explain (set by the system file" in said, said
    notebook = _notebook(tmp_path / "lesson.ipynb", {"mode": "full"})
    assert fe.run(f"import os; os.environ['JPY_SESSION_NAME'] = {str(notebook)!r}").status == "ok"

    cell = _run(fe, ws, [WRITE, {"content": "done"}])
    [written] = _results(cell)
    assert written["status"] == "blocked" and "set by the system file" in written["error"]
    assert not (ws / "answer.py").exists()


def test_hints_from_the_workspace_cut_a_long_code_block_from_the_cell(fe: FrontEnd, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".architect.yaml").write_text("teaching:\n  mode: hints\n  code_lines: 2\n")
    fe.run("%architect config workspace.root=" + str(ws))  # read the file again
    solution = (
        "Try a loop.\n```python\ntotal = 0\nfor item in cart:\n    total += item.price\n```\nWhat then?"
    )
    cell = _run(fe, ws, [{"content": solution}])
    shown = cell.data("text/html")[0]
    assert "A code block of 3 lines was cut" in shown and "total += item.price" not in shown
    assert "Try a loop." in shown and "What then?" in shown
    assert "total += item.price" not in json.dumps(_payload(cell))


def test_off_in_the_notebooks_metadata_refuses_at_once_with_the_teachers_message(
    fe: FrontEnd, tmp_path: Path
) -> None:
    notebook = _notebook(tmp_path / "exam.ipynb", {"mode": "off", "message": "No assistant in the exam."})
    assert fe.run(f"import os; os.environ['JPY_SESSION_NAME'] = {str(notebook)!r}").status == "ok"
    cell = _run(fe, tmp_path / "ws", [WRITE, {"content": "never"}])
    text = cell.text() + "".join(cell.data("text/html"))
    assert "No assistant in the exam." in text and f"the notebook {notebook}" in text, text
    assert cell.data(RUN_MIME) == [] and not (tmp_path / "ws" / "answer.py").exists()
    history = fe.run("%architect history").text().lower()
    assert "no runs" in history


def test_a_malformed_notebook_policy_is_named_and_holds_as_off(fe: FrontEnd, tmp_path: Path) -> None:
    notebook = _notebook(tmp_path / "edited.ipynb", {"mode": "full", "tools": "everything"})
    assert fe.run(f"import os; os.environ['JPY_SESSION_NAME'] = {str(notebook)!r}").status == "ok"
    cell = _run(fe, tmp_path / "ws", [WRITE, {"content": "never"}])
    text = cell.text() + "".join(cell.data("text/html"))
    assert "cannot be read" in text and "teaching.tools" in text, text
    assert not (tmp_path / "ws" / "answer.py").exists()


def test_off_in_the_system_file_refuses_before_any_run(
    fe: FrontEnd, system_file: Path, tmp_path: Path
) -> None:
    system_file.write_text("teaching:\n  mode: off\n  message: The assistant opens after the deadline.\n")
    cell = _run(fe, tmp_path / "ws", [WRITE])
    text = cell.text() + "".join(cell.data("text/html"))
    assert "The assistant opens after the deadline." in text and "set by the system file" in text, text
    assert cell.data(RUN_MIME) == []


def test_provenance_round_trip_run_save_reload_edit_report(fe: FrontEnd, tmp_path: Path) -> None:
    """The agent writes cells of a notebook in the workspace from a real kernel; the notebook is saved again
    by nbformat (as a front end saves it), one agent line is edited by the student, and the report says so."""
    ws = tmp_path / "ws"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import pandas as pd")]
    nbformat.write(notebook, ws / "homework.ipynb")
    cell_id = notebook.cells[0].id
    edit = {"path": "homework.ipynb", "cell_id": cell_id, "old_str": "import pandas as pd"}
    edit["new_str"] = "import pandas as pd\ndf = pd.read_csv('grades.csv')"
    insert = {"path": "homework.ipynb", "source": "mean = df['grade'].mean()\nprint(mean)"}
    cell = _run(
        fe,
        ws,
        [
            {"tool_calls": [{"name": "edit_notebook_cell", "arguments": edit}]},
            {"tool_calls": [{"name": "insert_notebook_cell", "arguments": insert}]},
            {"content": "Done."},
        ],
    )
    assert [r["status"] for r in _results(cell)] == ["ok", "ok"]
    run_id = _payload(cell)["events"][0]["run_id"]

    saved = nbformat.read(ws / "homework.ipynb", as_version=4)  # reloaded, then saved as a front end would
    saved.cells[1].source = "mean = df['grade'].median()\nprint(mean)"  # the student changes an agent line
    nbformat.write(saved, ws / "homework.ipynb")

    done = subprocess.run(
        [sys.executable, "-m", "architect_nb", "provenance", "--json", str(ws / "homework.ipynb")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    [report] = json.loads(done.stdout)["notebooks"]
    first, second = report["cells"]
    assert first["agent_lines"] == [2] and first["untouched"] and first["runs"][0]["run"] == run_id
    assert second["agent_lines"] == [2] and second["changed"] == 1 and not second["untouched"]
    assert "Help me with the cart" not in (ws / "homework.ipynb").read_text()  # the prompt is never kept
