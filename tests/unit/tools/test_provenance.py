"""Provenance: the record a cell keeps of the lines the agent wrote, following the lines as the person edits
around and in them; written by the notebook tools on files and open documents (and put back by undo); and
`python -m architect_nb provenance` over a folder of submissions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.provenance.record import Author, ProvenanceError, compare, line_hash, stamped
from architect_nb.provenance.report import main, report_paths
from architect_nb.testing.open_notebooks import OpenNotebooks
from architect_nb.tools.kernel.session import PlainKernel

ADA = Author("run-ada-1", "gpt-4o-mini")
BOB = Author("run-2", "claude-haiku")


def _notebook(path: Path, sources: list[str]) -> list[str]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(notebook, path)
    return [cell.id for cell in notebook.cells]


def _cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["cells"])


def _record(cell: dict[str, Any]) -> Any:
    return cell["metadata"]["architect"]["provenance"]


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


# --------------------------------------------------------------------------- the record


def test_the_lines_are_followed_when_the_person_writes_around_and_in_them() -> None:
    record = stamped("import pandas as pd\n", "import pandas as pd\ndf = load()\ndf = clean(df)\n", None, ADA)
    assert compare("import pandas as pd\ndf = load()\ndf = clean(df)\n", record).agent_lines == [2, 3]
    # The person adds lines above and below: the agent's lines move, still theirs.
    moved = compare("# my notes\nimport pandas as pd\ndf = load()\ndf = clean(df)\nprint(df)\n", record)
    assert moved.agent_lines == [3, 4] and moved.changed == 0 and not moved.untouched
    # The person changes one of them: it is theirs now; the other stays the agent's.
    edited = compare("import pandas as pd\ndf = load('x.csv')\ndf = clean(df)\n", record)
    assert edited.agent_lines == [3] and edited.changed == 1 and edited.deleted == 0
    # And deletes the other.
    assert compare("import pandas as pd\ndf = load()\n", record).deleted == 1


def test_a_later_agent_edit_keeps_who_wrote_each_line() -> None:
    first = stamped(None, "a = 1\nb = 2\n", None, ADA)
    person = "a = 1\nb = 20\n"  # the person changed the agent's second line
    second = stamped(person, "a = 1\nb = 20\nc = 3\n", first, BOB)
    found = compare("a = 1\nb = 20\nc = 3\n", second)
    assert [(line.number, line.kind, line.run) for line in found.lines] == [
        (1, "agent", 0),
        (2, "person", None),
        (3, "agent", 1),
    ]
    assert [run["model"] for run in found.runs] == ["gpt-4o-mini", "claude-haiku"] and found.untouched


def test_no_text_of_the_cell_is_kept_only_hashes() -> None:
    record = stamped(None, "API_KEY = read_secret()\n", None, ADA)
    assert "API_KEY" not in json.dumps(record) and record["lines"] == [
        [line_hash("API_KEY = read_secret()"), 0]
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["x = 1", "y = 2", "", "# c", "z = x + y", "print(z)"]), max_size=12),
    st.lists(st.sampled_from(["x = 1", "y = 3", "", "w = 0", "print(z)"]), max_size=12),
)
def test_what_the_edit_wrote_is_the_agents_and_what_it_kept_is_not(
    before: list[str], after: list[str]
) -> None:
    old, new = "".join(f"{line}\n" for line in before), "".join(f"{line}\n" for line in after)
    found = compare(new, stamped(old, new, None, ADA))
    assert found.untouched and [line.number for line in found.lines] == list(range(1, len(after) + 1))
    for line in found.lines:  # a line the agent wrote is one the edit added, never a kept one
        if line.kind == "agent":
            assert line.run == 0


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ("a string", "not a mapping"),
        ({"v": 2, "runs": [], "lines": [], "hash": "0" * 16}, "unknown record version"),
        ({"v": 1, "runs": "x", "lines": [], "hash": "0" * 16}, "runs"),
        ({"v": 1, "runs": [{"run": 1}], "lines": [], "hash": "0" * 16}, "runs"),
        ({"v": 1, "runs": [], "lines": [["zzzzzzzz", None]], "hash": "0" * 16}, r"is not \[hash, run\]"),
        ({"v": 1, "runs": [], "lines": [["0123abcd", 5]], "hash": "0" * 16}, "names run 5"),
        ({"v": 1, "runs": [], "lines": [["0123abcd", True]], "hash": "0" * 16}, "names run True"),
        ({"v": 1, "runs": [], "lines": [], "hash": 3}, "hash is missing"),
        ({"v": 1, "runs": [], "lines": [[]] * 300_000, "hash": "0" * 16}, "not a list"),
    ],
)
def test_a_record_not_of_our_shape_is_never_trusted(record: Any, problem: str) -> None:
    with pytest.raises(ProvenanceError, match=problem):
        compare("x = 1\n", record)
    # An agent edit over it starts afresh: nothing before it counts as the agent's.
    assert compare("x = 1\ny = 2\n", stamped("x = 1\n", "x = 1\ny = 2\n", record, ADA)).agent_lines == [2]


# --------------------------------------------------------------------------- written by the tools


def _engine(workspace: Path, **overrides: Any) -> Any:
    config = load_config(
        overrides={"workspace.root": str(workspace), **overrides}, environ={}, search_from=workspace
    )
    return build_engine(config, mode="yolo")


def test_the_tools_record_what_they_write_and_it_survives_nbformat(tmp_path: Path) -> None:
    nb = tmp_path / "lesson.ipynb"
    [first] = _notebook(nb, ["import pandas as pd"])
    engine = _engine(tmp_path)
    engine.start_run(model="gpt-4o-mini", task="SECRET TASK TEXT")
    edit = {
        "path": "lesson.ipynb",
        "cell_id": first,
        "old_str": "import pandas as pd",
        "new_str": "import pandas as pd\ndf = pd.read_csv('d.csv')",
    }
    assert engine.execute_tool_call("edit_notebook_cell", edit).success
    assert engine.execute_tool_call(
        "insert_notebook_cell", {"path": "lesson.ipynb", "source": "df.head()\ndf.tail()"}
    ).success
    text = nb.read_text()
    assert "SECRET TASK TEXT" not in text
    nbformat.validate(nbformat.read(nb, as_version=4))
    nbformat.write(nbformat.read(nb, as_version=4), nb)  # saved again by nbformat, as JupyterLab does
    cells = _cells(nb)
    assert compare(_source(cells[0]), _record(cells[0])).agent_lines == [2]
    assert compare(_source(cells[1]), _record(cells[1])).agent_lines == [1, 2]
    assert _record(cells[1])["runs"] == [
        {"run": engine.run_id, "model": "gpt-4o-mini", "at": _record(cells[1])["runs"][0]["at"]}
    ]


def test_nothing_is_recorded_when_turned_off_unless_a_policy_requires_it(tmp_path: Path) -> None:
    nb = tmp_path / "n.ipynb"
    _notebook(nb, [])
    engine = _engine(tmp_path, **{"notebook.provenance": False})
    engine.start_run(model="m")
    assert engine.execute_tool_call("insert_notebook_cell", {"path": "n.ipynb", "source": "x = 1"}).success
    assert "architect" not in _cells(nb)[0]["metadata"]
    (tmp_path / ".architect.yaml").write_text("teaching:\n  require_provenance: true\n")
    engine = _engine(tmp_path, **{"notebook.provenance": False})
    engine.start_run(model="m")
    assert engine.execute_tool_call("insert_notebook_cell", {"path": "n.ipynb", "source": "y = 2"}).success
    assert _record(_cells(nb)[1])["runs"][0]["model"] == "m"


def test_an_open_documents_cells_get_the_record_and_undo_puts_it_back(tmp_path: Path) -> None:
    nb = tmp_path / "open.ipynb"
    [first] = _notebook(nb, ["x = 1"])
    notebooks = OpenNotebooks()
    doc = notebooks.open(nb)

    class _Kernel(PlainKernel):
        @property
        def documents(self) -> Any:
            return notebooks

    config = load_config(overrides={"workspace.root": str(tmp_path)}, environ={})
    engine = build_engine(config, mode="yolo", kernel=_Kernel({}))
    engine.start_run(model="m")
    edit = {"path": "open.ipynb", "cell_id": first, "old_str": "x = 1", "new_str": "x = 1\ny = 2"}
    result = engine.execute_tool_call("edit_notebook_cell", edit)
    assert result.success, result.error
    cell = doc.cells[0]
    assert compare(_source(cell), _record(cell)).agent_lines == [2]
    engine.checkpoints.undo(engine.run_id, documents=notebooks)
    [undone] = doc.cells
    assert _source(undone) == "x = 1" and "architect" not in undone["metadata"]


# --------------------------------------------------------------------------- the report


def _submissions(root: Path) -> Path:
    """nbgrader's layout: submitted/<student>/<assignment>/<notebook>, with what a folder really holds."""
    ada = root / "submitted" / "ada" / "ps1"
    ada.mkdir(parents=True)
    [cell] = _notebook(ada / "ps1.ipynb", ["x = 1"])
    engine = _engine(ada)
    engine.start_run(model="gpt-4o-mini")
    edit = {
        "path": "ps1.ipynb",
        "cell_id": cell,
        "old_str": "x = 1",
        "new_str": "x = 1\ny = x * 2\nz = y + 1",
    }
    assert engine.execute_tool_call("edit_notebook_cell", edit).success
    data = json.loads((ada / "ps1.ipynb").read_text())
    data["cells"][0]["source"] = ["x = 1\n", "y = x * 3\n", "z = y + 1"]  # Ada changed one agent line
    (ada / "ps1.ipynb").write_text(json.dumps(data))
    bob = root / "submitted" / "bob" / "ps1"
    bob.mkdir(parents=True)
    _notebook(bob / "ps1.ipynb", ["print('all mine')"])
    (bob / "data.csv").write_text("a,b\n1,2\n")
    (bob / "broken.ipynb").write_text("{not json")
    eve = root / "submitted" / "eve" / "ps1"
    eve.mkdir(parents=True)
    _notebook(eve / "ps1.ipynb", ["x = 1"])
    data = json.loads((eve / "ps1.ipynb").read_text())
    data["cells"][0]["metadata"] = {"architect": {"provenance": {"v": 1, "runs": [], "lines": "all mine"}}}
    (eve / "ps1.ipynb").write_text(json.dumps(data))
    return root


def test_the_report_over_a_folder_of_submissions(tmp_path: Path) -> None:
    report = report_paths([_submissions(tmp_path / "course"), tmp_path / "missing"])
    by_student = {n.student: n for n in report.notebooks}
    assert set(by_student) == {"ada", "bob", "eve"}
    [ada] = by_student["ada"].cells
    assert ada.agent_lines == [3] and ada.changed == 1 and by_student["ada"].assignment == "ps1"
    assert by_student["bob"].cells == [] and by_student["bob"].cells_total == 1
    [eve] = by_student["eve"].cells
    assert eve.malformed and eve.agent_lines == []
    reasons = {Path(item["path"]).name: item["reason"] for item in report.skipped}
    assert reasons == {
        "data.csv": "not a notebook",
        "broken.ipynb": "not valid JSON",
        "missing": "no such file or folder",
    }


def test_the_command_prints_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = _submissions(tmp_path / "course")
    assert main([str(course)]) == 0
    text = capsys.readouterr().out
    assert (
        "(student ada, ps1): 1 of 1 cell(s) with agent lines; 1 agent line(s) as the agent wrote them, "
        "1 changed since" in text
    )
    assert "agent (gpt-4o-mini) wrote lines 3 of 3; 1 changed, 0 deleted since" in text
    assert "provenance malformed (its lines are not a list); not trusted" in text
    assert "skipped " in text and "data.csv: not a notebook" in text
    done = subprocess.run(
        [sys.executable, "-m", "architect_nb", "provenance", "--json", str(course)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    data = json.loads(done.stdout)
    ada = next(n for n in data["notebooks"] if n["student"] == "ada")
    assert (
        ada["agent_lines"] == 1
        and ada["changed"] == 1
        and ada["cells"][0]["runs"][0]["model"] == "gpt-4o-mini"
    )
    assert (
        subprocess.run(
            [sys.executable, "-m", "architect_nb", "nothing"], capture_output=True, timeout=60, check=False
        ).returncode
        == 2
    )


def test_the_runs_record_says_which_lines_of_each_file_it_wrote(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("def clean(df):\n    return df\n")
    (tmp_path / "data.bin").write_bytes(b"\x00\x01" * 100)
    engine = _engine(tmp_path)
    run = engine.start_run(model="gpt-4o-mini")
    edit = {"path": "clean.py", "old_str": "    return df", "new_str": "    df = df.dropna()\n    return df"}
    assert engine.execute_tool_call("edit_file", edit).success
    assert engine.execute_tool_call("write_file", {"path": "new.py", "content": "a = 1\nb = 2\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "data.bin", "content": "now text\n"}).success
    engine.end_run()
    records = engine.checkpoints.provenance(run)
    assert compare(
        "def clean(df):\n    df = df.dropna()\n    return df\n", records["clean.py"]
    ).agent_lines == [2]
    assert compare("a = 1\nb = 2\n", records["new.py"]).agent_lines == [1, 2]
    assert "data.bin" in records and compare("now text\n", records["data.bin"]).agent_lines == [1]
    assert records["new.py"]["runs"][0] == {
        "run": run,
        "model": "gpt-4o-mini",
        "at": records["new.py"]["runs"][0]["at"],
    }
    # Kept with the run on disk, for a new kernel: the manifest holds the same, and no text of the files.
    files = engine.checkpoints.on_disk
    assert files is not None
    manifest = (files.directory / run / "manifest.json").read_text()
    assert json.loads(manifest)["provenance"] == records and "dropna" not in manifest


def test_a_run_that_wrote_no_file_makes_no_snapshot_store_at_its_end(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("read me\n")
    engine = _engine(tmp_path)
    run = engine.start_run(model="m")
    assert engine.execute_tool_call("read_file", {"path": "notes.txt"}).success
    engine.end_run()
    assert engine.checkpoints.provenance(run) == {}
    assert not engine.checkpoints.shadow.git_dir.exists()  # the property names the store, making nothing
