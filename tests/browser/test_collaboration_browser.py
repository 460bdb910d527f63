"""Real-time collaboration: the agent edits a notebook two people have open, under each document server:
jupyter-collaboration 5, and jupyter-server-documents 0.3.3 (Jupyter AI 3's, which also runs cells on the
server).

One JupyterLab from `.venv-collab` (`make setup-collab`) or `.venv-docs` (`make setup-documents`), with our
server extension as the wheel enables it, where collaboration is on, and two people in two
Chromium contexts (two clients of the shared document). Ada runs an `%%architect` cell on the scripted model
in `shared.ipynb`; Bob has the same notebook open. The agent inserts, deletes and makes 50 edits in one cell
while Bob types 500 characters into the cell beside it and, between its edits, 100 into the agent's own
cell. Both views, the file the collaboration server saves, and both views after a reload hold every character
and every edit. Then Bob changes two cells the agent wrote, and `%architect undo` reverts the rest and leaves
those, naming them. Last, Ada's
tab closes in the middle of a run: the run goes on through Bob's, and the file is never written behind the
shared document.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import write_script
from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS, jupyter_server, require_tools, write_notebook
from tests.support.notebook_page import Notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

_ROOT = Path(__file__).resolve().parents[2]
#: The document servers: jupyter-collaboration 5, and jupyter-server-documents (Jupyter AI 3's), each in the
#: side venv its `make` target builds.
SERVERS = {
    "collaboration": (_ROOT / ".venv-collab" / "bin" / "python", "setup-collab"),
    "server-documents": (_ROOT / ".venv-docs" / "bin" / "python", "setup-documents"),
}
PATH = "shared.ipynb"
EDITS = 50
LINES = "".join(f"v{n:02} = 0\n" for n in range(EDITS))
NEIGHBOUR = "# Bob's notes\n"
BOB_NEIGHBOUR = "b" * 500  # letters only: the editor closes brackets and quotes by itself
BOB_IN_AGENTS_CELL = "c" * 100
RUN_BY_THE_AGENT = "print('run by the agent', 6 * 7)\n"
#: The outputs of the cell `_ID_` in the page, as JSON.
_OUTPUTS_OF = "return JSON.stringify(panel.content.model.toJSON().cells.find(c => c.id === '_ID_').outputs);"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": {"path": PATH, **arguments}}]}


def _stress_script(workspace: Path) -> str:
    edits = [
        _call("edit_notebook_cell", cell_id="cell-3", old_str=f"v{n:02} = 0", new_str=f"v{n:02} = 1")
        for n in range(EDITS)
    ]
    turns = [
        _call("read_notebook"),
        _call("insert_notebook_cell", after_cell_id="cell-2", source="inserted = True\n"),
        _call("delete_notebook_cell", cell_id="cell-4"),
        *edits,
        {
            "tool_calls": [{"name": "run_cell", "arguments": {"cell": "cell-5"}}]
        },  # outputs into the shared doc
        {"content": "Done."},
    ]
    return write_script(workspace, turns, name="stress.yaml")


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    with serving(request.param, tmp_path) as started:
        yield started


@pytest.fixture
def documents_server(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    with serving("server-documents", tmp_path) as started:
        yield started


@contextmanager
def serving(which: str, tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """JupyterLab under the document server `which`: its URL, the workspace, a folder for screenshots."""
    require_tools()
    python, target = SERVERS[which]
    if not python.exists():
        message = f"this test needs {python.parents[1].name}: run `make {target}` (make pytest does)"
        pytest.fail(message) if __import__("os").environ.get("CI") else pytest.skip(message)
    root = tmp_path / "root"
    workspace = root / "project"
    workspace.mkdir(parents=True)
    (workspace / ".architect.yaml").write_text("workspace: {allow_delete: true}\n")
    args = [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with jupyter_server(
        tmp_path, root, module="jupyterlab", app_args=args, python=python, our_labextensions=True
    ) as (url, artifacts):
        yield url, workspace, artifacts


@contextmanager
def two_people(url: str) -> Iterator[tuple[Any, Any]]:
    """Ada's and Bob's pages: two browser contexts, so two clients of the shared documents."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            pages = []
            for _ in range(2):
                context = browser.new_context(viewport={"width": 1100, "height": 1400})
                page = context.new_page()
                page.set_default_timeout(60_000)
                pages.append(page)
            yield pages[0], pages[1]
        finally:
            browser.close()


def _open(page: Any, url: str) -> Notebook:
    page.goto(f"{url}/lab/tree/project/{PATH}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    notebook = Notebook(page, f"project/{PATH}")
    notebook.ready()
    return notebook


#: The sources of the notebook at _PATH_ in the page, as one string (for `wait_for_function`).
_PANEL_OF_BOB = (
    "(Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context && w.context.path === '_PATH_')"
    ".context.model.toJSON().cells.map(c => Array.isArray(c.source) ? c.source.join('') : c.source).join())"
)


def _saved_as(workspace: Path, cells: dict[str, str], timeout: float = 90) -> dict[str, str]:
    """The notebook's file once it holds `cells` (the server saves a second or so after the last change)."""
    deadline = time.monotonic() + timeout
    while (on_disk := _on_disk(workspace)) != cells and time.monotonic() < deadline:
        time.sleep(0.3)
    assert on_disk == cells
    return cells


def _on_disk(workspace: Path) -> dict[str, str] | None:
    """The file's cells, or None while the server is writing it: Jupyter's "atomic" save truncates the file
    and writes it in place (the copy beside it is only a backup), so a read can find it empty or cut short."""
    try:
        data = json.loads((workspace / PATH).read_text())
    except json.JSONDecodeError:
        return None
    return {
        c["id"]: "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in data["cells"]
    }


def _assert_succeeded(notebook: Notebook, nth: int) -> None:
    """The nth run in the notebook ended, and every call of it succeeded (else their messages)."""
    from playwright.sync_api import expect

    badge = notebook.run_output(nth).locator(".anb-summary .anb-badge").first
    expect(badge).to_have_text(re.compile("success|partial|failed|error"), timeout=180_000)
    failed = notebook.run_output(nth).locator('details.anb-call[data-status="failed"]')
    problems = [failed.nth(n).inner_text() for n in range(failed.count())]
    assert badge.inner_text() == "success" and not problems, "\n\n".join(problems)


def test_the_agent_edits_a_shared_notebook_and_nothing_is_lost(
    server: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, workspace, artifacts = server
    script = _stress_script(workspace)
    write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            f"%%architect --mode yolo --max-steps 60 --model {script} --workspace {workspace}\nTidy it.",
            NEIGHBOUR,
            LINES,
            "# a scratch cell\n",
            RUN_BY_THE_AGENT,
        ],
        PATH,
    )
    with two_people(url) as (ada_page, bob_page):
        ada, bob = _open(ada_page, url), _open(bob_page, url)
        assert ada.eval("return panel.context.model.collaborative === true;"), "collaboration is not on"

        ada.run_cell(0)
        ada.wait("return panel.content.model.cells.get(0).executionCount !== null;")  # loaded: then the run
        ada.ready()
        ada.run_cell(1)
        ada.run_output(0).wait_for(timeout=120_000)  # the run's view: it started
        # Bob types while the agent works: into the cell beside the agent's, then into the agent's own cell.
        bob.activate()
        bob.editor(2).click()
        bob_page.keyboard.press("Control+End")
        bob_page.keyboard.type(BOB_NEIGHBOUR, delay=5)
        bob_page.keyboard.press("Escape")
        for _ in range(len(BOB_IN_AGENTS_CELL) // 2):
            bob.editor([cell_id for cell_id, _ in bob.cells()].index("cell-3")).click()  # it moves
            bob_page.keyboard.press("Control+End")
            bob_page.keyboard.type("cc", delay=5)
            bob_page.keyboard.press("Escape")
            time.sleep(0.05)

        _assert_succeeded(ada, 0)
        for person in (ada, bob):  # the run's view, redrawn in place: no stale copy of it left in the cell
            assert person.eval("return panel.content.model.cells.get(1).outputs.length;") == 1
            ran = json.loads(person.eval(_OUTPUTS_OF.replace("_ID_", "cell-5")))  # run_cell's outputs
            assert [o.get("text") for o in ran] == ["run by the agent 42\n"], ran
        ada_page.screenshot(path=str(artifacts / "1-ada.png"))
        bob_page.screenshot(path=str(artifacts / "1-bob.png"))
        for person in (ada, bob):
            cells = dict(person.cells())
            assert list(cells)[:3] == ["cell-0", "cell-1", "cell-2"] and "cell-4" not in cells
            inserted = [i for i, s in cells.items() if s == "inserted = True\n"]
            assert len(inserted) == 1 and list(cells).index(inserted[0]) == 3, cells
            assert cells["cell-2"] == NEIGHBOUR + BOB_NEIGHBOUR  # not a character lost
            agents = cells["cell-3"]
            assert agents.count("c") == len(BOB_IN_AGENTS_CELL), agents
            assert all(f"v{n:02} = 1" in agents for n in range(EDITS)), agents  # not an edit lost

        # The collaboration server saves the shared document by itself: the file becomes what both see. (Not a
        # Ctrl+S here: under load JupyterLab's own save can race that autosave and ask "File Changed".)
        saved = _saved_as(workspace, dict(bob.cells()))
        on_disk = json.loads((workspace / PATH).read_text())
        assert "run by the agent 42" in json.dumps(next(c for c in on_disk["cells"] if c["id"] == "cell-5"))
        assert ada_page.locator(".jp-Dialog").count() == 0 and bob_page.locator(".jp-Dialog").count() == 0
        for page in (ada_page, bob_page):
            page.reload()
            page.wait_for_selector(".jp-Notebook .jp-Cell")
        ada, bob = Notebook(ada_page, f"project/{PATH}"), Notebook(bob_page, f"project/{PATH}")
        ada.ready()
        bob.ready()
        assert dict(ada.cells()) == dict(bob.cells()) == saved
        assert ada_page.locator(".jp-Dialog").count() == 0 and bob_page.locator(".jp-Dialog").count() == 0

        # ---- Bob changes two of the cells the agent wrote; undo reverts the rest and names those two.
        inserted = next(i for i, source in saved.items() if source == "inserted = True\n")
        for cell_id in (inserted, "cell-3"):
            bob.editor([i for i, _ in bob.cells()].index(cell_id)).click()
            bob_page.keyboard.press("Control+End")
            bob_page.keyboard.type("dd", delay=5)
            bob_page.keyboard.press("Escape")
        edited = dict(bob.cells())
        ada.run_new_cell("%architect undo")
        ada_page.wait_for_function(
            "() => document.body.innerText.includes('Left alone, because they changed since the run')",
            timeout=60_000,
        )
        said = ada_page.locator("body").inner_text()
        assert f"cell id={inserted}: edited since the run inserted it" in said, said
        assert "cell id=cell-3: edited since the run" in said, said
        for person in (ada, bob):
            cells = dict(person.cells())
            assert cells["cell-4"] == "# a scratch cell\n"  # the agent's delete is undone
            assert cells[inserted] == edited[inserted] and cells["cell-3"] == edited["cell-3"]  # Bob's stay
            assert cells["cell-2"] == NEIGHBOUR + BOB_NEIGHBOUR
        ada_page.screenshot(path=str(artifacts / "2-undone.png"))

        # ---- Ada's tab closes in the middle of a run: it goes on through Bob's, and says it did.
        second = write_script(
            workspace,
            [
                _call("edit_notebook_cell", cell_id="cell-3", old_str="v00 = 1", new_str="v00 = 2"),
                {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 6"}}]},
                _call("edit_notebook_cell", cell_id="cell-3", old_str="v01 = 1", new_str="v01 = 2"),
                {"content": "Second."},
            ],
            name="second.yaml",
        )
        ada.run_new_cell(f"%%architect --mode yolo --new --model {second} --workspace {workspace}\nAgain.")
        bob_page.wait_for_function(
            f"() => {_PANEL_OF_BOB}.includes('v00 = 2')".replace("_PATH_", f"project/{PATH}"), timeout=60_000
        )
        ada_page.context.close()  # the tab that started the run, while it sleeps
        bob_page.wait_for_function(
            f"() => {_PANEL_OF_BOB}.includes('v01 = 2')".replace("_PATH_", f"project/{PATH}"), timeout=90_000
        )
        bob.run_new_cell(
            "from architect_nb.notebook.state import get_session\n"
            "run = get_session().history[-1]\n"
            "print('RUN', run.status, ['Applied to the notebook open in' in e['output'] "
            "for e in run.payload['events'] if e['kind'] == 'tool_result' and 'edit' in e['tool']])"
        )
        bob_page.wait_for_function("() => document.body.innerText.includes('RUN ')", timeout=60_000)
        said = bob_page.locator("body").inner_text()
        assert "RUN success [True, True]" in said, said  # both edits went to the shared document
        bob_page.screenshot(path=str(artifacts / "3-bob-after-ada-left.png"))

    with capsys.disabled():
        print(f"\nscreenshots (collaboration): {artifacts}")


def test_under_server_documents_an_approval_nobody_can_see_gets_its_default_soon(
    documents_server: tuple[str, Path, Path],
) -> None:
    """Its pages render no widgets (jupyter-server-documents#297): the buttons never show, so the question is
    denied after the headless grace, saying why, instead of waiting out the 5-minute approval timeout."""
    from playwright.sync_api import expect

    url, workspace, artifacts = documents_server
    script = write_script(
        workspace,
        [
            _call("insert_notebook_cell", after_cell_id="cell-2", source="asked = True\n"),
            {"content": "Done."},
        ],
        name="ask.yaml",
    )
    write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            f"%%architect --mode confirm-all --model {script} --workspace {workspace}\nAsk.",
            "x = 1\n",
        ],
        PATH,
    )
    with two_people(url) as (ada_page, _bob_page):
        ada = _open(ada_page, url)
        ada.run_cell(0)
        ada.wait("return panel.content.model.cells.get(0).executionCount !== null;")
        started = time.monotonic()
        ada.run_cell(1)
        badge = ada.run_output(0).locator(".anb-summary .anb-badge").first
        expect(badge).to_have_text(re.compile("success|partial|failed|error"), timeout=150_000)  # ended
        waited = time.monotonic() - started
        said = ada.run_output(0).inner_text()
        ada_page.screenshot(path=str(artifacts / "asked.png"))
        assert "did not show the buttons" in said and "jupyter-server-documents" in said, said
        assert "asked = True" not in dict(ada.cells()).values()  # denied: nothing inserted
        assert waited < 150, f"the run took {waited:.0f} s"  # the approval timeout is 300 s
