"""Undo of what the agent's code did to the person's variables, in a real JupyterLab driven in Debian's
headless chromium by Playwright.

The notebook makes a DataFrame `df` (and `alias`, a second name for it); an `%%architect` cell on the scripted
model, with `kernel.write_namespace` on, runs `run_python` with code that adds a column to `df` and binds
`items`. The step's card must say so ("Your variables: df mutated (...), items added (...)") and the review
must list the variables as "Your variables (kernel)". Clicking the review's "Revert all" (with nothing kept,
the run's undo: `%architect undo RUN` in the notebook's kernel) must put `df` back and remove `items`, as a
cell run before and after the undo prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser.test_labextension_browser import _lab
from tests.support.agent import write_script
from tests.support.browser import kernel_idle, open_chromium, run_all_cells, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

CODE = 'df["c"] = df["a"] * 2\nitems = [1]'
CHECK = "print(df.columns.tolist(), 'items' in dir())"


def _write_notebook(root: Path, workspace: Path) -> Path:
    model = write_script(
        workspace,
        [
            {
                "content": "A column c, twice a, and a list.",
                "tool_calls": [{"name": "run_python", "arguments": {"code": CODE}}],
            },
            {"content": "`df` has a column `c` now, and `items` is a list."},
        ],
    )
    (workspace / ".architect.yaml").write_text(yaml.safe_dump({"kernel": {"write_namespace": True}}))
    cells = [
        "%load_ext architect_nb\n"
        "import pandas\n"
        'df = pandas.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})\n'
        "alias = df",
        f"%%architect --model {model} --mode yolo --workspace {workspace}\nAdd c = 2a to df, and a list.",
        CHECK,
    ]
    return write_notebook(root, cells)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    with _lab(tmp_path, _write_notebook) as running:
        yield running


def _run_cell(page: Any, index: int) -> None:
    """Run the notebook's cell `index` again (not awaited: the command settles when the cell has run)."""
    page.evaluate(
        """index => {
            const notebook = window.jupyterapp.shell.currentWidget.content;
            notebook.activeCellIndex = index;
            void window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def test_the_step_card_lists_the_variables_and_revert_all_puts_them_back(
    lab: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, _, artifacts = lab
    with open_chromium(artifacts.parent / "chromium-profile", url) as (page, outside):
        page.goto(f"{url}/lab/tree/demo.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        kernel_idle(page)
        run_all_cells(page)

        run = page.locator(".anb-RunRenderer").first
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        check = page.locator(".jp-CodeCell").nth(2)
        printed = check.locator(".jp-OutputArea-output")
        expect(printed).to_have_text("['a', 'b', 'c'] True", timeout=60_000)
        kernel_idle(page)

        # The step's card says which variables the call changed, seen without opening the call.
        step = run.locator('details.anb-step[data-step="1"]')
        line = step.locator(".anb-call-variables")
        expect(line).to_be_visible()
        expect(line).to_contain_text("Your variables: ")
        expect(line.locator("code")).to_have_count(2)
        expect(line.locator("code").nth(0)).to_contain_text("df mutated (DataFrame 3×2")
        expect(line.locator("code").nth(1)).to_have_text("items added (list, len 1)")
        expect(step.locator("summary .anb-step-changed").first).to_have_text("2 variables changed")
        expect(step.get_by_role("button", name="Rewind to before this step")).to_be_enabled()

        # The review lists the variables by name, their lines as text, with a Revert of their own.
        title = run.locator(".anb-review-title")
        expect(title.locator(".anb-section-title")).to_have_text("Review: your variables changed")
        kernel_row = run.locator('.anb-review-row[data-path="/kernel"]')
        expect(kernel_row.locator(".anb-review-path")).to_have_text("Your variables (kernel)")
        expect(kernel_row.locator("pre")).to_contain_text("items: added, list, len 1")
        expect(kernel_row.get_by_role("button", name="Revert", exact=True)).to_be_enabled()
        run.screenshot(path=str(artifacts / "1-variables-changed.png"))

        # Revert all, with nothing kept: the run's undo, in this notebook's kernel.
        revert_all = title.get_by_role("button", name="Revert all", exact=True)
        expect(revert_all).to_be_enabled()
        revert_all.click()
        done = title.locator(".anb-undo-done")
        expect(done).to_contain_text("Reverted", timeout=60_000)
        report = done.inner_text()
        expect(title.locator(".anb-undo-error")).to_have_count(0)
        expect(kernel_row).to_have_attribute("data-state", "reverted")
        kernel_idle(page)

        _run_cell(page, 2)
        expect(printed).to_have_text("['a', 'b'] False", timeout=60_000)
        run.locator(".anb-summary").screenshot(path=str(artifacts / "2-variables-reverted.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; the undo said: {report}")
