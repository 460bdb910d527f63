"""Provenance marks and a notebook's teaching policy, in a real JupyterLab driven in Debian's headless
chromium by Playwright; one JupyterLab serves both tests.

`prov.ipynb`'s `%%architect` cell runs a scripted model (yolo) that inserts a cell of two lines and adds a
line to an existing cell. The extension marks exactly those three lines in the cells' editor gutters, as the
kernel's own reading of the records says (`provenance.record.compare`). Typing into one of them takes its
mark away and leaves the others; after a save and a reload the marks are where they were, and the file holds
the records. `exam.ipynb`'s metadata turns the agent off: its `%%architect` cell says the teacher's message
and where the policy comes from, and no run is shown, also with `copy.ipynb` open first, a copy of the same
template (the same cell ids) without that metadata, on a kernel of its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from architect_nb.provenance.record import compare, line_hash
from tests.browser.test_labextension_browser import LAB_ARGS
from tests.support.agent import write_script
from tests.support.browser import jupyter_server, open_chromium, require_tools, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROV = "project/prov.ipynb"
EXAM = "project/exam.ipynb"
COPY = "project/copy.ipynb"
EDITED = "data = [3, 1, 2]\ntotal = sum(data)"
ADDED_LINE = "biggest = max(data)"
INSERTED = "mean = total / len(data)\nprint(mean, biggest)"
EXAM_MESSAGE = "No assistant in this exam."
RUN_MIME = "application/vnd.architect-nb.run+json"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {"path": "prov.ipynb", **arguments}}


def _setup(root: Path) -> Path:
    workspace = root / "project"
    workspace.mkdir()
    model = write_script(
        workspace,
        [
            {"tool_calls": [_call("insert_notebook_cell", after_cell_id="cell-1", source=INSERTED)]},
            {
                "tool_calls": [
                    _call(
                        "edit_notebook_cell",
                        cell_id="cell-1",
                        old_str="total = sum(data)",
                        new_str=f"total = sum(data)\n{ADDED_LINE}",
                    )
                ]
            },
            {"expect": {"tool_result_contains": "Applied to the notebook open in"}, "content": "Added."},
        ],
        name="prov.yaml",
    )
    write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            EDITED,
            f"%%architect --mode yolo --model {model} --workspace {workspace}\nAdd the mean and the largest.",
        ],
        "prov.ipynb",
    )
    never = write_script(workspace, [{"content": "This run must never start."}], name="exam.yaml")
    exam = write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            f"%%architect --mode yolo --model {never} --workspace {workspace}\nSolve exercise 1.",
        ],
        "exam.ipynb",
    )
    data = json.loads(exam.read_text())
    for i, cell in enumerate(data["cells"]):
        cell["id"] = f"exam-{i}"
    # A copy of the same template: the same cell ids, and no teaching policy. The front end finds the
    # running cell's notebook by the cell's id, among the notebooks on the kernel that asks.
    (workspace / "copy.ipynb").write_text(json.dumps(data, indent=1))
    data["metadata"]["architect"] = {"teaching": {"mode": "off", "message": EXAM_MESSAGE}}
    exam.write_text(json.dumps(data, indent=1))
    return workspace


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """One JupyterLab on a folder with both notebooks: its URL, the workspace, the artifacts folder."""
    require_tools()
    tmp_path = tmp_path_factory.mktemp("provenance")
    root = tmp_path / "root"
    root.mkdir()
    workspace = _setup(root)
    with jupyter_server(tmp_path, root, module="jupyterlab", app_args=LAB_ARGS) as (url, artifacts):
        yield url, workspace, artifacts


# ------------------------------------------------------------------------------------------------ the page

_PANEL = """(path) => {
    for (const w of window.jupyterapp ? window.jupyterapp.shell.widgets('main') : []) {
        if (w.context && w.context.path === path) { return w; }
    }
    return null;
}"""

# The lines (1-based) of cell `index`'s editor beside which a mark is drawn, found by where they are on the
# page, with each mark's tooltip.
_MARKS = f"""([path, index]) => {{
    const panel = ({_PANEL})(path);
    const cell = panel && panel.content.widgets[index];
    if (!cell) {{ return null; }}
    const lines = Array.from(cell.node.querySelectorAll('.cm-content .cm-line'));
    const marks = Array.from(cell.node.querySelectorAll('.anb-provenance-gutter .anb-provenance-mark'));
    return marks.map(mark => {{
        const box = mark.getBoundingClientRect();
        const middle = box.top + box.height / 2;
        const line = lines.findIndex(l => {{
            const b = l.getBoundingClientRect();
            return middle >= b.top && middle < b.bottom;
        }});
        return [line + 1, box.height > 0 && box.width > 0, mark.title];
    }});
}}"""


def _ready(page: Any, path: str) -> None:
    page.wait_for_function(
        f"""(path) => {{
            const panel = ({_PANEL})(path);
            const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
            return !!k && k.status === 'idle' && panel.context.isReady;
        }}""",
        arg=path,
        timeout=90_000,
    )


def _marks(page: Any, path: str, index: int) -> list[tuple[int, bool, str]]:
    return [tuple(m) for m in page.evaluate(_MARKS, [path, index]) or []]


def _marked(page: Any, path: str, expected: dict[int, list[int]], timeout: float = 20) -> dict[int, Any]:
    """Wait until cell i's marks are on the lines `expected[i]` (all of them drawn), and return the marks."""
    deadline = time.monotonic() + timeout
    while True:
        found = {index: _marks(page, path, index) for index in expected}
        lines = {index: sorted(line for line, _, _ in marks) for index, marks in found.items()}
        if lines == expected and all(drawn for marks in found.values() for _, drawn, _ in marks):
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"the marks are on {found}, not on the lines {expected}")
        time.sleep(0.2)


def _cells(page: Any, path: str) -> list[dict[str, Any]]:
    return list(page.evaluate(f"(path) => ({_PANEL})(path).context.model.toJSON().cells", path))


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else str(cell["source"])


def _save(page: Any, path: str) -> None:
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function(f"(path) => !({_PANEL})(path).context.model.dirty", arg=path, timeout=30_000)


def _agent_lines(cell: dict[str, Any]) -> list[int]:
    """The lines of a cell the kernel counts as the agent's, from the cell's record."""
    return compare(_source(cell), cell["metadata"]["architect"]["provenance"]).agent_lines


# ------------------------------------------------------------------------------------------------ the tests


def test_the_agents_lines_are_marked_and_lose_the_mark_when_typed_in(
    lab: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, workspace, artifacts = lab
    with open_chromium(artifacts.parent / "chromium-profile-prov", url, height=1400) as (page, outside):
        page.goto(f"{url}/lab/tree/{PROV}")
        _ready(page, PROV)
        page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        run = page.locator(".anb-RunRenderer").first
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=120_000)

        cells = _cells(page, PROV)
        assert [_source(c) for c in cells[1:3]] == [f"{EDITED}\n{ADDED_LINE}", INSERTED]
        assert _agent_lines(cells[1]) == [3] and _agent_lines(cells[2]) == [1, 2]

        # The agent's three lines are marked, and nothing else: not the edited cell's first two lines,
        # not the cells it did not touch.
        found = _marked(page, PROV, {0: [], 1: [3], 2: [1, 2], 3: []})
        title = found[2][0][2]
        assert title.startswith("Written by the agent (run ") and title.endswith("); unchanged since"), title
        run_id = cells[2]["metadata"]["architect"]["provenance"]["runs"][0]["run"]
        assert run_id[:8] in title
        page.screenshot(path=str(artifacts / "prov-1-marked.png"))

        # The person changes the inserted cell's first line: its mark goes, the others stay.
        panel = page.evaluate(f"(path) => ({_PANEL})(path).id", PROV)
        page.locator(f"#{panel} .jp-Cell").nth(2).locator(".cm-line").first.click()
        page.keyboard.press("End")
        page.keyboard.type(" * 1.0")
        _marked(page, PROV, {1: [3], 2: [2]})
        page.keyboard.press("Escape")
        time.sleep(0.5)  # past the recompute after typing: the marks stay as they are
        _marked(page, PROV, {0: [], 1: [3], 2: [2], 3: []}, timeout=5)
        page.screenshot(path=str(artifacts / "prov-2-typed.png"))

        # Saved, the file holds the records (the agent's, as it left the cells) and the person's change.
        _save(page, PROV)
        saved = json.loads((workspace / "prov.ipynb").read_text())["cells"]
        assert _source(saved[2]) == INSERTED.replace("len(data)", "len(data) * 1.0")
        inserted = saved[2]["metadata"]["architect"]["provenance"]
        assert inserted["v"] == 1 and inserted["runs"][0]["run"] == run_id
        assert inserted["lines"] == [[line_hash(line), 0] for line in INSERTED.splitlines()]
        edited = saved[1]["metadata"]["architect"]["provenance"]
        assert edited["lines"] == [
            [line_hash(line), who]
            for line, who in zip([*EDITED.splitlines(), ADDED_LINE], [None, None, 0], strict=True)
        ]
        assert "architect" not in saved[0]["metadata"] and "architect" not in saved[3]["metadata"]
        assert _agent_lines(saved[1]) == [3] and _agent_lines(saved[2]) == [2]

        # Reloaded, the marks are back on the same lines.
        page.reload()
        _ready(page, PROV)
        _marked(page, PROV, {0: [], 1: [3], 2: [2], 3: []}, timeout=30)
        page.screenshot(path=str(artifacts / "prov-3-reloaded.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}")


def test_a_notebook_whose_metadata_turns_the_agent_off(lab: tuple[str, Path, Path]) -> None:
    from playwright.sync_api import expect

    url, _, artifacts = lab
    with open_chromium(artifacts.parent / "chromium-profile-exam", url, height=1400) as (page, outside):
        # The copy first, on its kernel; then the exam, on another, in the same page.
        page.goto(f"{url}/lab/tree/{COPY}")
        _ready(page, COPY)
        page.evaluate(
            "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", EXAM
        )
        _ready(page, EXAM)
        kernels = page.evaluate(
            f"(paths) => paths.map(p => ({_PANEL})(p).sessionContext.session.kernel.id)", [COPY, EXAM]
        )
        assert kernels[0] != kernels[1], kernels
        panel = page.evaluate(f"(path) => ({_PANEL})(path).id", EXAM)
        page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", panel)
        page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        output = page.locator(f"#{panel} .jp-Cell").nth(1).locator(".jp-OutputArea")
        expect(output).to_contain_text(EXAM_MESSAGE, timeout=90_000)
        _ready(page, EXAM)
        said = output.inner_text()
        page.screenshot(path=str(artifacts / "exam-off.png"))
        # Who set it: the notebook's own metadata, by name.
        assert (
            "(teaching policy 'off', set by the notebook exam.ipynb's metadata (architect.teaching))" in said
        ), said
        # No run: nothing rendered, and no run among the outputs.
        expect(page.locator(f"#{panel} .anb-RunRenderer")).to_have_count(0)
        outputs = _cells(page, EXAM)[1]["outputs"]
        assert all(RUN_MIME not in output.get("data", {}) for output in outputs), outputs
        # The copy, which shares its cell ids, is untouched.
        assert [c["outputs"] for c in _cells(page, COPY)] == [[], []]
        assert outside == []
