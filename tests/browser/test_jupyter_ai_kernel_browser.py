"""`@architect` in Jupyter AI's chat works on the kernel of a notebook the person attached, in chromium.

JupyterLab (from `.venv-jai`, as in test_jupyter_ai_browser.py) opens `analysis.ipynb` and runs its cells, so
its kernel is one JupyterLab started. A chat opens beside it; a cell of the notebook dragged into the chat's
input with the mouse attaches the notebook (Jupyter AI sends it as a `resource_link` of type
`application/x-ipynb+json`), and `@architect` is asked about `total`. The scripted model checks it was told
it is connected to that notebook's kernel, lists the kernel's variables (`total: int` must be among them),
runs `doubled = total * 2; print(doubled)` there, which asks in the chat first, and after Approve says the
result it got back. A second chat, in a folder with its own script, attaches the notebook with the input's
paperclip (a "file" attachment, no type: the `.ipynb` path tells it) and the agent is connected there too.
The notebook then shows nothing of the agent's code: its cells' prompts and outputs are as they were,
running them again counts on from where the person left off, and `doubled` is not among its names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser.test_jupyter_ai_browser import JAI_PYTHON, require_jupyter_ai
from tests.support.browser import (
    JUPYTER_AI_ARGS,
    jupyter_server,
    kernel_idle,
    open_chromium,
    run_all_cells,
    write_notebook,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

CELLS = ["prices = [3, 1, 2]", "total = sum(prices)\ntotal", "'doubled' in dir()"]
CODE = "doubled = total * 2\nprint(doubled)"
ANSWER = "Doubled: 12"
CONNECTED = "connected to the running kernel of the notebook analysis.ipynb"
LAB_ARGS = [
    "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to open the chat and run the cells
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    *JUPYTER_AI_ARGS,
]
TURNS = [
    {
        "expect": {"history_contains": [CONNECTED]},
        "content": "Let me look at the notebook's variables.",
        "tool_calls": [{"name": "list_variables", "arguments": {}}],
    },
    {
        "expect": {"tool_result_contains": ["total: int"]},
        "content": "I'll compute it in the kernel.",
        "tool_calls": [{"name": "run_python", "arguments": {"code": CODE}}],
    },
    {"expect": {"tool_result_contains": ["12"]}, "content": ANSWER},
]
# The paperclip's chat, in a folder of its own (so its own script): the agent was told it is connected.
PAPERCLIP_TURNS = [
    {"expect": {"history_contains": [CONNECTED]}, "content": "Connected through the paperclip."}
]


def notebook_cells(page: Any) -> list[dict[str, str]]:
    """Each cell's input prompt (`[1]:`) and outputs' text (no `Out[1]:`), as the browser shows them."""
    cells: list[dict[str, str]] = page.eval_on_selector_all(
        ".jp-Notebook .jp-CodeCell",
        """cells => cells.map(cell => ({
            prompt: (cell.querySelector('.jp-InputPrompt') || {}).innerText || '',
            output: [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText).join('\\n'),
        }))""",
    )
    return cells


def wait_for_prompts(page: Any, prompts: list[str]) -> None:
    page.wait_for_function(
        """expected => {
            const shown = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
                .map(p => p.innerText.trim());
            return JSON.stringify(shown) === JSON.stringify(expected);
        }""",
        arg=prompts,
        timeout=60_000,
    )


def open_beside(page: Any, path: str) -> Any:
    """Open the chat `path` right of the notebook; its input, once @architect can be mentioned there."""
    page.evaluate(
        "path => { void window.jupyterapp.commands.execute("
        "'docmanager:open', {path, options: {mode: 'split-right'}}); }",
        path,
    )
    inputs = page.locator(".jp-chat-input-container").first
    # The persona picker names @architect once Jupyter AI has loaded it for this chat: a message sent
    # before that reaches nobody.
    inputs.get_by_text("architect", exact=True).wait_for(timeout=120_000)
    return inputs


def send(page: Any, inputs: Any, text: str) -> None:
    box = inputs.locator("textarea").first
    box.click()
    box.fill(text)
    page.keyboard.press("Escape")  # close the mention list, so Enter sends
    box.press("Enter")


def drag_cell_into(page: Any, cell: Any, inputs: Any) -> None:
    """Drag the cell by its prompt onto the chat's input, with the mouse, as a person does (Lumino's drag)."""
    start, end = (
        cell.locator(".jp-InputPrompt").bounding_box(),
        inputs.locator("textarea").first.bounding_box(),
    )
    x, y = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 20, y + 20, steps=5)  # past the drag threshold
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=15)
    page.mouse.up()


def wait_or_fail(page: Any, target: Any, what: str, shots: Path, timeout: float) -> None:
    try:
        target.wait_for(timeout=timeout)
    except Exception:
        page.screenshot(path=str(shots / "failed.png"))
        chat = page.locator(".jp-chat-messages-container").first.inner_text()
        pytest.fail(f"{what} never came; the chat shows:\n{chat}\nscreenshots: {shots}")


def test_architect_runs_code_in_the_attached_notebooks_kernel_after_approve_and_the_notebook_shows_none(
    tmp_path: Path,
) -> None:
    require_jupyter_ai()
    root = tmp_path / "root"
    (root / "other").mkdir(parents=True)
    write_notebook(root, CELLS, name="analysis.ipynb")
    for folder, turns in ((root, TURNS), (root / "other", PAPERCLIP_TURNS)):
        script = tmp_path / f"script-{folder.name}.yaml"
        script.write_text(yaml.safe_dump({"turns": turns}))
        (folder / ".architect.yaml").write_text(yaml.safe_dump({"llm": {"model": f"scripted/{script}"}}))
    (root / "demo.chat").write_text("")
    (root / "other" / "paperclip.chat").write_text("")

    server = jupyter_server(tmp_path, root, module="jupyterlab", app_args=LAB_ARGS, python=JAI_PYTHON)
    with server as (url, shots), open_chromium(tmp_path / "profile", url, height=1000) as (page, _outside):
        # 1. The person opens the notebook and runs its cells: JupyterLab starts its kernel.
        page.goto(f"{url}/lab/tree/analysis.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell")
        kernel_idle(page)
        run_all_cells(page)
        wait_for_prompts(page, ["[1]:", "[2]:", "[3]:"])
        kernel_idle(page)
        before = notebook_cells(page)
        assert [cell["output"].strip() for cell in before] == ["", "6", "False"], before

        # 2. A chat beside it; a cell of the notebook dragged into its input attaches the notebook.
        inputs = open_beside(page, "demo.chat")
        drag_cell_into(page, page.locator(".jp-Notebook .jp-CodeCell").nth(1), inputs)
        inputs.get_by_text("analysis.ipynb: code cell").wait_for(timeout=10_000)  # the attachment's chip
        send(page, inputs, "@architect what is total doubled?")
        page.screenshot(path=str(shots / "1-sent.png"))

        # 3. list_variables ran in the kernel (the script checked total: int); run_python asks first.
        chat = page.locator(".jp-chat-messages-container").first
        approve = page.get_by_role("button", name="Approve", exact=True)
        wait_or_fail(page, approve, "the approval", shots, 120_000)
        page.screenshot(path=str(shots / "2-asks.png"))
        text = chat.inner_text()
        assert "Let me look at the notebook's variables." in text and "list_variables" in text, text
        assert "I'll compute it in the kernel." in text and "run_python" in text, text
        # The code being approved is shown (Jupyter AI shows an execute call's raw_input.command).
        assert "doubled = total * 2" in text, text
        assert page.get_by_role("button", name="Deny", exact=True).is_visible()
        # Code that runs in a kernel is never approved for the rest of the session.
        assert page.get_by_role("button", name="Approve all like this", exact=True).count() == 0
        approve.click()
        wait_or_fail(page, chat.get_by_text(ANSWER), "the answer", shots, 60_000)
        page.screenshot(path=str(shots / "3-answered.png"))

        # The paperclip's file dialog attaches the notebook too (as a "file": the .ipynb path tells it).
        page.locator(".lm-TabBar-tab", has_text="demo.chat").locator(".lm-TabBar-tabCloseIcon").click()
        inputs = open_beside(page, "other/paperclip.chat")
        inputs.locator(".jp-chat-attach-button").click()
        dialog = page.locator(".jp-Dialog")
        dialog.locator(".jp-DirListing-item", has_text="analysis.ipynb").click()
        dialog.get_by_role("button", name="Select", exact=True).click()
        dialog.wait_for(state="detached")
        inputs.get_by_text("analysis.ipynb").wait_for(timeout=10_000)
        send(page, inputs, "@architect are you connected?")
        answer = page.locator(".jp-chat-messages-container").first.get_by_text(
            "Connected through the paperclip."
        )
        wait_or_fail(page, answer, "the paperclip chat's answer", shots, 60_000)
        page.screenshot(path=str(shots / "4-paperclip.png"))

        # 4. The notebook shows nothing of it: same prompts and outputs, the count goes on from 3, and the
        # agent's `doubled` stayed in its run's scratch namespace.
        assert notebook_cells(page) == before
        page.locator(".lm-TabBar-tab", has_text="analysis.ipynb").click()  # the current widget again
        kernel_idle(page)
        run_all_cells(page)
        wait_for_prompts(page, ["[4]:", "[5]:", "[6]:"])
        after = notebook_cells(page)
        assert [cell["output"] for cell in after] == [cell["output"] for cell in before], after
        page.screenshot(path=str(shots / "5-notebook.png"))
        print(f"screenshots: {shots}")
