"""The run renderer and the approval prompt in Jupyter Notebook 7, driven in headless chromium by Playwright.

The test starts `jupyter notebook` (Notebook 7, the JupyterLab 4.6 line) on a temporary folder holding a
notebook and a copy of the sample project, opens `/notebooks/demo.ipynb`, runs an `%%architect` cell on the
scripted model in confirm-sensitive mode and clicks Approve in the widget prompt. Then it checks the file on
disk, that the cell finished, and that our labextension (not the HTML fallback) rendered the run with the
approved diff, in a page whose theme defines every `--jp-*` variable the extension's CSS uses. Last it clicks
the review list's "Revert all" (the run's undo), which must find the notebook's kernel through Notebook 7's
notebook tracker, and checks that the file is back. Screenshots are saved under the test's temporary folder
(the path is printed).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.browser import (
    assert_buttons_not_clipped,
    jupyter_server,
    kernel_idle,
    open_chromium,
    require_tools,
    run_all_cells,
    wait_for_file,
    write_notebook,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

STYLE = Path(__file__).resolve().parents[2] / "labextension" / "style" / "base.css"
APPROVED = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}


@pytest.fixture
def notebook7(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A running Notebook 7 on tmp/root; yields its URL, the workspace and the folder for artifacts."""
    require_tools(module="notebook")
    root = tmp_path / "root"
    root.mkdir()
    workspace = copy_sample_project(root / "project")
    model = write_script(
        workspace,
        [
            {"content": "I'll make the total a float.", "tool_calls": [APPROVED]},
            {"content": "Totals are **floats** now."},
        ],
    )
    cells = [
        "%load_ext architect_nb",
        f"%%architect --model {model} --mode confirm-sensitive --workspace {workspace}\n"
        "Make cart totals floats.",
    ]
    write_notebook(root, cells)
    app_args = ["--JupyterNotebookApp.expose_app_in_browser=True"]
    with jupyter_server(tmp_path, root, module="notebook", app_args=app_args) as (url, artifacts):
        yield url, workspace, artifacts


def test_approve_and_undo_in_notebook7(
    notebook7: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, workspace, artifacts = notebook7
    cart = workspace / "shop" / "cart.py"
    original = cart.read_bytes()
    started = time.monotonic()
    with open_chromium(artifacts.parent / "chromium-profile", url, height=1400) as (page, outside):
        page.goto(f"{url}/notebooks/demo.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        # Notebook 7's own shell, not JupyterLab's: the page is the notebook alone.
        assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
        kernel_idle(page)
        run_all_cells(page)

        approve = page.get_by_role("button", name="Approve", exact=True)
        approve.wait_for(state="visible", timeout=90_000)
        page.screenshot(path=str(artifacts / "1-approval-prompt.png"))
        assert_buttons_not_clipped(page)
        approve.click()
        wait_for_file(cart, "total = 0.0\n")

        # The cell finishes and its live view is replaced by the output our extension renders.
        run = page.locator(".anb-RunRenderer")
        expect(run).to_have_count(1, timeout=90_000)
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        expect(page.locator(".jp-CodeCell").nth(1).locator(".jp-InputPrompt")).to_have_text("[2]:")
        kernel_idle(page)
        approved = run.locator('details.anb-call[data-status="approved"]')
        expect(approved).to_have_count(1)
        expect(approved.locator(".anb-diff tr.anb-line-add .anb-code")).to_have_text("        total = 0.0")
        expect(approved.locator(".anb-diff tr.anb-line-del .anb-code")).to_have_text("        total = 0")
        expect(run.locator(".anb-markdown strong").last).to_have_text("floats")

        # Every JupyterLab theme variable our CSS reads is defined in Notebook 7's page too.
        names = sorted(set(re.findall(r"var\((--jp-[a-z0-9-]+)", STYLE.read_text())))
        undefined = run.evaluate(
            "(n, names) => names.filter(v => !getComputedStyle(n).getPropertyValue(v).trim())", names
        )
        assert undefined == [], f"undefined in Notebook 7: {undefined}"
        run.scroll_into_view_if_needed()
        run.screenshot(path=str(artifacts / "2-run.png"))

        # Undo from the rendered output: the extension finds this notebook's kernel through Notebook 7's
        # tracker and runs `%architect undo RUN` there (Revert all, with nothing kept or reverted yet).
        review = run.locator(".anb-review-title")
        undo = review.get_by_role("button", name="Revert all", exact=True)
        expect(undo).to_be_enabled()
        undo.click()
        done = review.locator(".anb-undo-done")
        expect(done).to_contain_text("Reverted", timeout=60_000)
        expect(done).to_contain_text("restored 1 file(s)")
        expect(review.locator(".anb-undo-error")).to_have_count(0)
        expect(run.locator('.anb-review-row[data-path="shop/cart.py"]')).to_have_attribute(
            "data-state", "reverted"
        )
        assert cart.read_bytes() == original
        run.locator(".anb-summary").screenshot(path=str(artifacts / "3-undone.png"))
        assert outside == []
    elapsed = time.monotonic() - started

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; the browser part took {elapsed:.1f} s")
