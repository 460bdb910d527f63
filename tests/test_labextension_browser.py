"""The run renderer in a real JupyterLab, driven in Debian's headless chromium by Playwright.

The test starts `jupyter lab` on a temporary folder holding a notebook and a copy of the sample project, runs
an `%%architect` cell on the scripted model in confirm-sensitive mode, clicks Approve for the first edit and
Deny (with a reason) for the second, and then checks the file on disk, that the cell finished, and what the
labextension rendered: the approved diff, the hook result, the denial. Last it clicks the renderer's
"Undo this run", which runs `%architect undo RUN` in the notebook's kernel, and checks that the file is back;
restarts the kernel and undoes the other run from its checkpoints saved on disk; then saves and reloads the
notebook, checks that both buttons come back with no widget error, and that a second undo is refused.
Screenshots are saved under the test's temporary folder (the path is printed) in the light and the dark theme.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from agent_helpers import copy_sample_project, write_script
from browser_support import (
    assert_buttons_not_clipped,
    jupyter_server,
    kernel_idle,
    open_chromium,
    require_tools,
    run_all_cells,
    wait_for_file,
    write_notebook,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

APPROVED = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}
DENIED = {
    "name": "edit_file",
    "arguments": {
        "path": "shop/cart.py",
        "old_str": "def total_with_discount",
        "new_str": "def discounted_total",
    },
}
HOOK = {"name": "py-compile", "command": "python -m compileall -q shop", "matcher": "edit_file"}
DENY_REASON = "keep the public API stable"


def _write_notebook(root: Path, workspace: Path) -> Path:
    model = write_script(
        workspace,
        [
            {"content": "I'll make the total a float.", "tool_calls": [APPROVED]},
            {"content": "And I'll rename the discount method.", "tool_calls": [DENIED]},
            {"content": "Totals are **floats** now; the rename was *denied*, so the API is unchanged."},
        ],
    )
    body = "".join(f"def f{i}(x: int) -> int:\n    return x + {i}\n\n" for i in range(1700))
    long_model = write_script(
        workspace,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "shop/generated.py", "content": body}}
                ]
            },
            {"content": "Wrote 5,100 lines."},
        ],
        name="long.yaml",
    )
    (workspace / ".architect.yaml").write_text(yaml.safe_dump({"hooks": {"post_tool_use": [HOOK]}}))
    cells = [
        "%load_ext architect_nb",
        f"%%architect --model {model} --mode confirm-sensitive --workspace {workspace}\n"
        "Make cart totals floats, and rename total_with_discount to discounted_total.",
        f"%%architect --model {long_model} --mode yolo --workspace {workspace}\nGenerate 1,700 functions.",
    ]
    return write_notebook(root, cells)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A running `jupyter lab` on tmp/root; yields its URL, the workspace and the folder for artifacts."""
    require_tools()
    root = tmp_path / "root"
    root.mkdir()
    workspace = copy_sample_project(root / "project")
    _write_notebook(root, workspace)
    lab_args = [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with jupyter_server(tmp_path, root, module="jupyterlab", app_args=lab_args) as (url, artifacts):
        yield url, workspace, artifacts


def test_approve_and_deny_in_jupyterlab_and_the_rendered_timeline(
    lab: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, workspace, artifacts = lab
    cart = workspace / "shop" / "cart.py"
    original = cart.read_bytes()
    # The renderer (and this JupyterLab setup) must need nothing from the network: `outside` stays empty.
    with open_chromium(artifacts.parent / "chromium-profile", url) as (page, outside):
        page.goto(f"{url}/lab/tree/demo.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        kernel_idle(page)
        run_all_cells(page)

        # The first question: the edit, with its diff; click Approve.
        approve = page.get_by_role("button", name="Approve", exact=True)
        approve.wait_for(state="visible", timeout=90_000)
        page.screenshot(path=str(artifacts / "1-approval-prompt.png"))
        assert_buttons_not_clipped(page)
        approve.click()
        source = wait_for_file(cart, "total = 0.0\n")

        # The second question: the rename; type a reason and click Deny.
        deny = page.get_by_role("button", name="Deny", exact=True)
        deny.wait_for(state="visible")
        page.get_by_placeholder("Reason (optional; sent to the model with Deny)").fill(DENY_REASON)
        deny.click()

        # The cell finishes and its live view is replaced by the static output our extension renders.
        run = page.locator(".anb-RunRenderer").first
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        cell = page.locator(".jp-CodeCell").nth(1)
        expect(cell.locator(".jp-InputPrompt")).to_have_text("[2]:")
        kernel_idle(page)
        source = cart.read_text()
        assert "total = 0.0\n" in source and "def total_with_discount" in source

        approved = run.locator('details.anb-call[data-status="approved"]')
        expect(approved).to_have_count(1)
        expect(approved.locator(".anb-diff tr.anb-line-add .anb-code")).to_have_text("        total = 0.0")
        expect(approved.locator(".anb-diff tr.anb-line-del .anb-code")).to_have_text("        total = 0")
        expect(approved.locator(".anb-more-bar")).to_be_hidden()  # an 11-line diff needs no "show more"
        hook = approved.locator("details.anb-hook")
        expect(hook.locator(".anb-hook-name")).to_have_text("py-compile")
        expect(hook.locator("summary .anb-badge")).to_have_text("passed")

        denied = run.locator('details.anb-call[data-status="denied"]')
        expect(denied.locator("summary .anb-badge")).to_have_text("denied")
        expect(denied.locator(".anb-answer")).to_have_text(f"Answer: denied — {DENY_REASON}")
        expect(run.locator(".anb-markdown strong").last).to_have_text("floats")

        run.scroll_into_view_if_needed()
        run.screenshot(path=str(artifacts / "2-timeline-light.png"))
        approved.get_by_role("button", name="Side by side").click()
        expect(approved.locator("table.anb-diff-split")).to_have_count(1)
        approved.screenshot(path=str(artifacts / "3-diff-side-by-side.png"))

        # The third cell writes a 5,100-line file unasked: its diff renders 400 rows, then all on demand.
        long_run = page.locator(".anb-RunRenderer").nth(1)
        expect(long_run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        rows = long_run.locator(".anb-diff tbody tr")
        expect(rows).to_have_count(400)
        expect(long_run.locator(".anb-diff-stats")).to_have_text("+5100 −0 in 1 file")
        started = time.monotonic()
        long_run.get_by_role("button", name="Show all (4,702 hidden)").click()
        expect(rows).to_have_count(5102)
        shown_all_s = time.monotonic() - started
        assert shown_all_s < 10, f"showing all 5,102 rows took {shown_all_s:.1f} s"
        assert page.evaluate("() => 1 + 1") == 2  # the page still answers

        # The dark theme: the same output, recoloured through JupyterLab's CSS variables.
        light_bg = run.locator(".anb-summary").evaluate("n => getComputedStyle(n).backgroundColor")
        dark = {"theme": "JupyterLab Dark"}
        page.evaluate("t => window.jupyterapp.commands.execute('apputils:change-theme', t)", dark)
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        page.wait_for_timeout(500)
        dark_bg = run.locator(".anb-summary").evaluate("n => getComputedStyle(n).backgroundColor")
        assert dark_bg != light_bg
        run.screenshot(path=str(artifacts / "4-timeline-dark.png"))

        # Undo the first run from its rendered output: the labextension runs `%architect undo RUN` in this
        # notebook's kernel and shows the kernel's report in place of the button.
        kernel_idle(page)
        undo = run.locator(".anb-summary").get_by_role("button", name="Undo this run", exact=True)
        expect(undo).to_be_enabled()
        undo.click()
        done = run.locator(".anb-summary .anb-undo-done")
        expect(done).to_contain_text("Undone", timeout=60_000)
        expect(done).to_contain_text("restored 1 file(s)")
        expect(run.locator(".anb-undo-error")).to_be_hidden()
        assert cart.read_bytes() == original
        expect(long_run.get_by_role("button", name="Undo this run", exact=True)).to_be_enabled()
        run.locator(".anb-summary").screenshot(path=str(artifacts / "5-undone-dark.png"))

        # After a kernel restart the kernel has no run in memory, but its checkpoints were saved on disk
        # (with the workspace it was made in): undo still works, and removes the file the run created.
        generated = workspace / "shop" / "generated.py"
        assert generated.exists()
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
        kernel_idle(page)
        long_undo = long_run.get_by_role("button", name="Undo this run", exact=True)
        long_undo.click()
        long_done = long_run.locator(".anb-summary .anb-undo-done")
        expect(long_done).to_contain_text("Undone", timeout=60_000)
        expect(long_done).to_contain_text("removed 1 created file(s)")
        assert not generated.exists()
        long_run.locator(".anb-summary").screenshot(path=str(artifacts / "6-undone-after-restart-dark.png"))

        # Saved and reopened, the notebook has no widget left to fail; the buttons come back, enabled.
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
        )
        page.reload()
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        kernel_idle(page)
        reopened = page.locator(".anb-RunRenderer")
        expect(reopened).to_have_count(2)
        for index in range(2):
            expect(
                reopened.nth(index).get_by_role("button", name="Undo this run", exact=True)
            ).to_be_enabled()
        expect(page.get_by_text("Error displaying widget")).to_have_count(0)
        # The button does not remember the undo; the kernel does, and refuses a second one.
        again = reopened.nth(0).get_by_role("button", name="Undo this run", exact=True)
        again.click()
        refused = reopened.nth(0).locator(".anb-undo-error")
        expect(refused).to_contain_text("already undone", timeout=60_000)
        expect(again).to_be_enabled()
        assert cart.read_bytes() == original
        reopened.nth(0).locator(".anb-summary").screenshot(path=str(artifacts / "7-undo-refused-dark.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; all 5,102 rows of the long diff shown in {shown_all_s:.2f} s")
