"""The agent edits the open notebook, in a real JupyterLab and Notebook 7 (Debian's chromium, Playwright).

`analysis.ipynb` is open, and the person has typed into one of its cells without saving. An `%%architect` cell
in another notebook (`driver.ipynb`; in Notebook 7 another browser tab) inserts a cell into it, deletes one
and edits a third, on the scripted model. The open view shows the changes at once, the typed line is still
there, saving shows no "File Changed" dialog and the file then holds both; Ctrl+Z in the edited cell reverts
the agent's edit and `%architect undo` the rest. Then an `%%architect` cell in `analysis.ipynb` itself does
the same to its other cells, is refused when it tries to change itself, and is saved and undone the same way.
Last, the notebook open in two tabs: the agent's edit is refused (two copies), and goes through once one
is closed.
Screenshots are saved under the test's temporary folder (the path is printed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.agent import copy_sample_project, write_script
from tests.support.browser import jupyter_server, open_chromium, require_tools, write_notebook
from tests.support.notebook_page import Notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

TYPED = "# typed by the person, not saved\n"
TARGET = "project/analysis.ipynb"
ANALYSIS = [
    "data = [3, 1, 2]",
    "total = sum(data)",
    "cleaned = [x for x in data if x > 1]",
    "print('old cleaning')",
    "result = max(data)",
    "# a scratch cell",
    "%load_ext architect_nb",
    None,  # the %%architect cell of the same notebook (run 2)
]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {"path": "analysis.ipynb", **arguments}}


def _setup(root: Path) -> Path:
    workspace = copy_sample_project(root / "project")
    (workspace / ".architect.yaml").write_text(yaml.safe_dump({"workspace": {"allow_delete": True}}))
    from_driver = write_script(
        workspace,
        [
            {"tool_calls": [_call("read_notebook")]},
            {
                # The agent reads the notebook as it is shown: the person's unsaved line is in it.
                "expect": {"tool_result_contains": TYPED.strip()},
                "tool_calls": [
                    _call("insert_notebook_cell", after_cell_id="cell-0", source="import statistics\n")
                ],
            },
            {"tool_calls": [_call("delete_notebook_cell", cell_id="cell-3")]},
            {"tool_calls": [_call("edit_notebook_cell", cell_id="cell-2", old_str="x > 1", new_str="x > 0")]},
            {"expect": {"tool_result_contains": "Applied to the notebook open in"}, "content": "Cleaned up."},
        ],
        name="driver.yaml",
    )
    in_itself = write_script(
        workspace,
        [
            {"tool_calls": [_call("edit_notebook_cell", cell_id="cell-7", old_str="Tidy", new_str="Mess")]},
            {
                "expect": {"tool_result_contains": "is running or queued to run"},
                "tool_calls": [
                    _call("insert_notebook_cell", after_cell_id="cell-4", source="print(result)\n")
                ],
            },
            {"tool_calls": [_call("delete_notebook_cell", cell_id="cell-5")]},
            {
                "tool_calls": [
                    _call("edit_notebook_cell", cell_id="cell-4", old_str="max(data)", new_str="min(data)")
                ]
            },
            {"content": "Tidied."},
        ],
        name="itself.yaml",
    )
    sources = list(ANALYSIS)
    sources[7] = f"%%architect --mode yolo --model {in_itself} --workspace {workspace}\nTidy this notebook."
    write_notebook(workspace, sources, "analysis.ipynb")
    write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            f"%%architect --mode yolo --model {from_driver} --workspace {workspace}\nTidy analysis.ipynb.",
        ],
        "driver.ipynb",
    )
    return workspace


@pytest.fixture(params=["jupyterlab", "notebook"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, Path, Path]]:
    """A running JupyterLab or Notebook 7; yields the app, its URL, the workspace and the artifacts folder."""
    module = str(request.param)
    require_tools(module=module)
    root = tmp_path / "root"
    root.mkdir()
    workspace = _setup(root)
    if module == "jupyterlab":
        args = [
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.extension_manager=readonly",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
    else:
        args = ["--JupyterNotebookApp.expose_app_in_browser=True"]
    with jupyter_server(tmp_path, root, module=module, app_args=args) as (url, artifacts):
        yield module, url, workspace, artifacts


# ------------------------------------------------------------------------------------------------ the pages


def _on_disk(workspace: Path) -> list[tuple[str, str]]:
    data = json.loads((workspace / "analysis.ipynb").read_text())
    return [
        (c["id"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        for c in data["cells"]
    ]


def _ids(cells: list[tuple[str, str]]) -> list[str]:
    return [cell_id for cell_id, _ in cells]


# ------------------------------------------------------------------------------------------------ the test


def test_the_agent_edits_the_open_notebook(
    server: tuple[str, str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    module, url, workspace, artifacts = server
    with open_chromium(artifacts.parent / "chromium-profile", url, height=1400) as (page, outside):
        if module == "jupyterlab":
            page.goto(f"{url}/lab/tree/{TARGET}")
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            page.evaluate(
                "() => window.jupyterapp.commands.execute('docmanager:open', {path: 'project/driver.ipynb'})"
            )
            analysis, driver = Notebook(page, TARGET), Notebook(page, "project/driver.ipynb")
        else:
            page.goto(f"{url}/notebooks/{TARGET}")
            other = page.context.new_page()
            other.goto(f"{url}/notebooks/project/driver.ipynb")
            analysis, driver = Notebook(page, TARGET), Notebook(other, "project/driver.ipynb")
        analysis.ready()
        driver.ready()
        original = analysis.cells()

        # The person types a line into cell 1 and does not save.
        analysis.type_into(1, TYPED)
        assert analysis.source("cell-1") == TYPED + ANALYSIS[1]
        assert analysis.eval("return panel.context.model.dirty;")

        # ---- 1. an %%architect cell in another notebook edits this one
        driver.run_from(0)
        expect(driver.run_output(0).locator(".anb-summary .anb-badge").first).to_have_text(
            "success", timeout=120_000
        )
        cells = analysis.cells()
        new_id = _ids(cells)[1]
        assert _ids(cells) == ["cell-0", new_id, "cell-1", "cell-2", "cell-4", "cell-5", "cell-6", "cell-7"]
        assert dict(cells)[new_id] == "import statistics\n"
        assert dict(cells)["cell-2"] == ANALYSIS[2].replace("x > 1", "x > 0")
        assert dict(cells)["cell-1"] == TYPED + ANALYSIS[1]  # the typed line survived
        analysis.activate()
        shown = analysis.shown()
        assert "import statistics" in shown and "x > 0" in shown and "old cleaning" not in shown
        assert TYPED.strip() in shown
        page.screenshot(path=str(artifacts / "1-edited-from-another-notebook.png"))
        analysis.save_without_dialog(artifacts, "1")
        assert _on_disk(workspace) == cells  # the file holds the person's line and the agent's changes

        # Ctrl+Z in the edited cell reverts the agent's edit; %architect undo reverts the rest.
        analysis.undo_in_cell("cell-2")
        assert analysis.source("cell-2") == ANALYSIS[2]
        driver.run_new_cell("%architect undo")
        driver.page.wait_for_function(
            "() => document.body.innerText.includes('restored 1 file(s)')", timeout=60_000
        )
        cells = analysis.cells()
        assert _ids(cells) == _ids(original)
        assert dict(cells) == {**dict(original), "cell-1": TYPED + ANALYSIS[1]}
        analysis.save_without_dialog(artifacts, "2")
        assert _on_disk(workspace) == cells

        # ---- 2. an %%architect cell in this notebook edits its other cells, never itself
        analysis.run_from(6)
        expect(analysis.run_output(0).locator(".anb-summary .anb-badge").first).to_have_text(
            "success", timeout=120_000
        )
        cells = analysis.cells()
        added = _ids(cells)[5]
        assert _ids(cells) == [*_ids(original)[:5], added, "cell-6", "cell-7"]
        assert dict(cells)[added] == "print(result)\n"
        assert dict(cells)["cell-4"] == "result = min(data)"
        assert dict(cells)["cell-7"] == dict(original)["cell-7"]  # the running cell was left alone
        assert dict(cells)["cell-1"] == TYPED + ANALYSIS[1]
        shown = analysis.shown()
        assert "print(result)" in shown and "min(data)" in shown and "a scratch cell" not in shown
        refused = analysis.run_output(0).locator('details.anb-call[data-status="failed"]')
        expect(refused).to_have_count(1)
        page.screenshot(path=str(artifacts / "2-edited-by-itself.png"))
        analysis.save_without_dialog(artifacts, "3")
        assert _on_disk(workspace) == [(i, s) for i, s in cells]

        analysis.undo_in_cell("cell-4")
        assert analysis.source("cell-4") == ANALYSIS[4]
        analysis.run_new_cell("%architect undo")
        analysis.page.wait_for_function(
            "() => document.body.innerText.includes('restored 1 file(s)')", timeout=60_000
        )
        cells = analysis.cells()
        assert _ids(cells)[:8] == _ids(original)
        assert dict(cells)["cell-4"] == ANALYSIS[4] and dict(cells)["cell-5"] == ANALYSIS[5]
        assert dict(cells)["cell-1"] == TYPED + ANALYSIS[1]
        analysis.save_without_dialog(artifacts, "4")
        assert _on_disk(workspace)[:8] == cells[:8]
        page.screenshot(path=str(artifacts / "3-undone.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots ({module}): {artifacts}")


def test_a_notebook_open_in_two_tabs_is_not_edited_twice(
    server: tuple[str, str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """analysis.ipynb open in two browser tabs (no real-time collaboration: two copies of the document). The
    agent's insert is refused, neither copy changes; once the second tab is closed it goes through, once."""
    from playwright.sync_api import expect

    module, url, workspace, artifacts = server
    refused = write_script(
        workspace,
        [
            {
                "tool_calls": [
                    _call("insert_notebook_cell", after_cell_id="cell-0", source="import statistics\n")
                ]
            },
            {
                "expect": {"tool_result_contains": "open in 2 front ends that do not share"},
                "content": "Refused.",
            },
        ],
        name="twice.yaml",
    )
    applied = write_script(
        workspace,
        [
            {
                "tool_calls": [
                    _call("insert_notebook_cell", after_cell_id="cell-0", source="import statistics\n")
                ]
            },
            {"expect": {"tool_result_contains": "Applied to the notebook open in"}, "content": "Inserted."},
        ],
        name="once.yaml",
    )
    write_notebook(
        workspace,
        [
            "%load_ext architect_nb",
            f"%%architect --mode yolo --new --model {refused} --workspace {workspace}\nAdd an import.",
            f"%%architect --mode yolo --new --model {applied} --workspace {workspace}\nAdd an import.",
        ],
        "tabs.ipynb",
    )
    on_disk = (workspace / "analysis.ipynb").read_bytes()
    with open_chromium(artifacts.parent / "chromium-profile", url, height=1400) as (page, outside):
        app = "lab/tree" if module == "jupyterlab" else "notebooks"
        page.goto(f"{url}/{app}/{TARGET}")
        first = Notebook(page, TARGET)
        first.ready()
        second_page = page.context.new_page()
        second_page.goto(f"{url}/{app}/{TARGET}")
        second = Notebook(second_page, TARGET)
        second.ready()
        if module == "jupyterlab":
            page.bring_to_front()
            page.evaluate(
                "() => window.jupyterapp.commands.execute('docmanager:open', {path: 'project/tabs.ipynb'})"
            )
            driver = Notebook(page, "project/tabs.ipynb")
        else:
            driver = Notebook(page.context.new_page(), "project/tabs.ipynb")
            driver.page.goto(f"{url}/notebooks/project/tabs.ipynb")
        driver.ready()
        original = first.cells()
        assert second.cells() == original

        driver.run_cell(0)
        driver.run_cell(1)
        run = driver.run_output(0)
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=120_000)
        expect(run.locator('details.anb-call[data-status="failed"]')).to_have_count(1)
        assert first.cells() == original and second.cells() == original  # no copy of the edit anywhere
        driver.page.screenshot(path=str(artifacts / "tabs-1-refused.png"))

        second_page.close()
        driver.run_cell(2)
        expect(driver.run_output(1).locator(".anb-summary .anb-badge").first).to_have_text(
            "success", timeout=120_000
        )
        cells = first.cells()
        assert [source for _, source in cells].count("import statistics\n") == 1
        assert len(cells) == len(original) + 1
        assert (workspace / "analysis.ipynb").read_bytes() == on_disk
        first.save_without_dialog(artifacts, "tabs")
        assert _on_disk(workspace) == cells
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots ({module}): {artifacts}")
