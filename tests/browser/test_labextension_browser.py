"""The run renderer in a real JupyterLab, driven in Debian's headless chromium by Playwright.

The test starts `jupyter lab` on a temporary folder holding a notebook and a copy of the sample project, runs
an `%%architect` cell on the scripted model in confirm-sensitive mode, clicks Approve for the first edit and
Deny (with a reason) for the second, and then checks the file on disk, that the cell finished, and what the
labextension rendered: the approved diff, the hook result, the denial. Last it clicks the review list's
"Revert all" (with nothing kept, the run's undo: `%architect undo RUN` in the notebook's kernel), and checks
that the file is back; restarts the kernel and undoes the other run from its checkpoints saved on disk; then
saves and reloads the notebook, checks that both buttons come back with no widget error, and that a second
undo is refused.

A second test reviews a run that changed files with an edit, a command and a new file over three steps:
Revert on one file, Keep on another, then "Rewind to before this step" on the last step, each checked on disk.
Screenshots are saved under the test's temporary folder (the path is printed) in the light and the dark theme.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

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


LAB_ARGS = [
    "--LabApp.expose_app_in_browser=True",
    "--LabApp.news_url=None",
    "--LabApp.extension_manager=readonly",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
]


@contextmanager
def _lab(
    tmp_path: Path, write: Callable[[Path, Path], Path], *, warm_up: bool = False
) -> Iterator[tuple[str, Path, Path]]:
    """A running `jupyter lab` on tmp/root with the notebook `write` makes; its URL, the workspace and the
    folder for artifacts. `warm_up`: the kernel imports LiteLLM after `%load_ext`, as users' kernels do."""
    require_tools()
    root = tmp_path / "root"
    root.mkdir()
    workspace = copy_sample_project(root / "project")
    write(root, workspace)
    server = jupyter_server(tmp_path, root, module="jupyterlab", app_args=LAB_ARGS, warm_up=warm_up)
    with server as (url, artifacts):
        yield url, workspace, artifacts


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    # The approvals with the warm-up importing in the kernel's background, as in a user's kernel.
    with _lab(tmp_path, _write_notebook, warm_up=True) as running:
        yield running


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

        # Undo the first run from its review list: with nothing kept or reverted, Revert all runs
        # `%architect undo RUN` in this notebook's kernel and shows the kernel's report instead of the button.
        kernel_idle(page)
        undo = run.locator(".anb-review-title").get_by_role("button", name="Revert all", exact=True)
        expect(undo).to_be_enabled()
        undo.click()
        done = run.locator(".anb-review-title .anb-undo-done")
        expect(done).to_contain_text("Reverted", timeout=60_000)
        expect(done).to_contain_text("restored 1 file(s)")
        expect(run.locator(".anb-review-title .anb-undo-error")).to_have_count(0)
        expect(run.locator(".anb-review-row")).to_have_attribute("data-state", "reverted")
        assert cart.read_bytes() == original
        expect(long_run.get_by_role("button", name="Revert all", exact=True)).to_be_enabled()
        run.locator(".anb-summary").screenshot(path=str(artifacts / "5-undone-dark.png"))

        # After a kernel restart the kernel has no run in memory, but its checkpoints were saved on disk
        # (with the workspace it was made in): undo still works, and removes the file the run created.
        generated = workspace / "shop" / "generated.py"
        assert generated.exists()
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
        kernel_idle(page)
        long_undo = long_run.get_by_role("button", name="Revert all", exact=True)
        long_undo.click()
        long_done = long_run.locator(".anb-review-title .anb-undo-done")
        expect(long_done).to_contain_text("Reverted", timeout=60_000)
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
            expect(reopened.nth(index).get_by_role("button", name="Revert all", exact=True)).to_be_enabled()
        expect(page.get_by_text("Error displaying widget")).to_have_count(0)
        # The button does not remember the undo; the kernel does, and refuses a second one.
        again = reopened.nth(0).get_by_role("button", name="Revert all", exact=True)
        again.click()
        refused = reopened.nth(0).locator(".anb-review-title .anb-undo-error")
        expect(refused).to_contain_text("already undone", timeout=60_000)
        expect(again).to_be_enabled()
        assert cart.read_bytes() == original
        reopened.nth(0).locator(".anb-summary").screenshot(path=str(artifacts / "7-undo-refused-dark.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; all 5,102 rows of the long diff shown in {shown_all_s:.2f} s")


# The review test's run: cart.py edited at step 1, README.md changed by a command at step 2, a new module
# written at step 3.
REVIEW_TURNS: list[dict[str, Any]] = [
    {"content": "I'll make the total a float.", "tool_calls": [APPROVED]},
    {
        "content": "And note it in the readme.",
        "tool_calls": [
            {
                "name": "run_command",
                "arguments": {"command": "printf '\\nTotals are floats.\\n' >> README.md"},
            }
        ],
    },
    {
        "tool_calls": [
            {
                "name": "write_file",
                "arguments": {
                    "path": "shop/rounding.py",
                    "content": "def cents(x: float) -> float:\n    return round(x, 2)\n",
                },
            }
        ]
    },
    {"content": "Done: floats, a readme line and a rounding helper."},
]


def _write_review_notebook(root: Path, workspace: Path) -> Path:
    model = write_script(workspace, REVIEW_TURNS)
    cells = [
        "%load_ext architect_nb",
        f"%%architect --model {model} --mode yolo --workspace {workspace}\nFloats, a readme line, cents().",
    ]
    return write_notebook(root, cells)


@pytest.fixture
def review_lab(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    with _lab(tmp_path, _write_review_notebook) as running:
        yield running


def test_review_revert_one_keep_another_and_rewind_a_step(
    review_lab: tuple[str, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, workspace, artifacts = review_lab
    cart, readme, rounding = (
        workspace / "shop" / "cart.py",
        workspace / "README.md",
        workspace / "shop" / "rounding.py",
    )
    cart_before, readme_before = cart.read_bytes(), readme.read_bytes()
    with open_chromium(artifacts.parent / "chromium-profile", url) as (page, outside):
        page.goto(f"{url}/lab/tree/demo.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        kernel_idle(page)
        run_all_cells(page)
        run = page.locator(".anb-RunRenderer").first
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        kernel_idle(page)
        readme_after = readme.read_bytes()
        assert (
            readme_after == readme_before + b"\nTotals are floats.\n" and b"total = 0.0" in cart.read_bytes()
        )
        assert rounding.exists()

        # Each step that changed files lists them, with its rewind.
        for step, files in ((1, ["shop/cart.py"]), (2, ["README.md"]), (3, ["shop/rounding.py"])):
            card = run.locator(f'details.anb-step[data-step="{step}"] .anb-step-files')
            expect(card.locator("code")).to_have_text(files)
            expect(card.get_by_role("button", name="Rewind to before this step")).to_be_enabled()
        rows = run.locator(".anb-review-row")
        expect(rows.locator(".anb-review-path")).to_have_text(
            ["shop/cart.py", "README.md", "shop/rounding.py"]
        )
        expect(rows.locator(".anb-review-head > .anb-badge:first-child")).to_have_text(
            ["modified", "modified", "added"]
        )
        cart_row = run.locator('.anb-review-row[data-path="shop/cart.py"]')
        readme_row = run.locator('.anb-review-row[data-path="README.md"]')
        rounding_row = run.locator('.anb-review-row[data-path="shop/rounding.py"]')
        expect(readme_row.locator(".anb-diff tr.anb-line-add .anb-code").last).to_have_text(
            "Totals are floats."
        )
        run.locator(".anb-summary").screenshot(path=str(artifacts / "1-review.png"))

        # Keep the readme (nothing runs), revert cart.py (only it goes back).
        readme_row.get_by_role("button", name="Keep", exact=True).click()
        expect(readme_row).to_have_attribute("data-state", "kept")
        cart_row.get_by_role("button", name="Revert", exact=True).click()
        expect(cart_row.locator(".anb-undo-done")).to_contain_text("restored 1 file(s)", timeout=60_000)
        expect(cart_row).to_have_attribute("data-state", "reverted")
        assert cart.read_bytes() == cart_before
        assert readme.read_bytes() == readme_after
        assert rounding.exists()

        # Rewind to before step 3: the new module goes, the kept readme stays as the run left it.
        kernel_idle(page)
        step3 = run.locator('details.anb-step[data-step="3"] .anb-step-files')
        step3.get_by_role("button", name="Rewind to before this step").click()
        expect(step3.locator(".anb-undo-done")).to_contain_text("Rewound", timeout=60_000)
        expect(step3.locator(".anb-undo-done")).to_contain_text("removed 1 created file(s)")
        assert not rounding.exists()
        assert readme.read_bytes() == readme_after and cart.read_bytes() == cart_before
        expect(rounding_row).to_have_attribute("data-state", "reverted")
        expect(readme_row).to_have_attribute("data-state", "kept")
        # Nothing is left for Revert all: one file kept, the others reverted.
        expect(run.locator(".anb-review-title").get_by_role("button", name="Revert all")).to_be_disabled()
        for error in run.locator(".anb-undo-error").all():  # no button reported a problem
            expect(error).to_be_hidden()
        run.locator(".anb-summary").screenshot(path=str(artifacts / "2-reverted-kept-rewound.png"))
        assert outside == []

    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}")
