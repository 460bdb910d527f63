"""`@architect` in Jupyter AI's chat, in headless chromium: it answers, an edit asks, and Approve applies it.

The server runs from `.venv-jai` (`make setup-jupyter-ai`: Jupyter AI 3.2 and jupyter-ai-acp-client 0.3.3 on
the main venv's JupyterLab, reaching architect-nb through a .pth), so the persona is found through its entry
point as a user's install finds it, and starts the real `architect-nb-acp` with the chat's folder as the
workspace. That folder's `.architect.yaml` names the scripted model. The test writes a mention in a new
chat, waits for the permission buttons under the edit's diff, checks nothing changed yet, clicks Approve and
waits for the file and for the agent's last words. Screenshots go under the test's temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.support.browser import (
    JUPYTER_AI_ARGS,
    jupyter_server,
    open_chromium,
    require_tools,
    wait_for_file,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

JAI_PYTHON = Path(__file__).resolve().parents[2] / ".venv-jai" / "bin" / "python"
APP = "def total(items):\n    return 1\n"
EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "old_str": "return 1", "new_str": "return 2"}}


def require_jupyter_ai() -> None:
    require_tools()
    if not JAI_PYTHON.exists():
        message = (
            "the Jupyter AI browser test needs .venv-jai: run `make setup-jupyter-ai` (make pytest does)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_architect_answers_in_the_chat_asks_before_an_edit_and_approve_applies_it(tmp_path: Path) -> None:
    require_jupyter_ai()
    root = tmp_path / "root"
    root.mkdir()
    (root / "app.py").write_text(APP)
    script = tmp_path / "script.yaml"
    turns = [
        {
            "content": "I'll make total() return 2.",
            "tool_calls": [EDIT],
        },
        {"content": "Done: total() returns 2 now."},
    ]
    script.write_text(yaml.safe_dump({"turns": turns}))
    (root / ".architect.yaml").write_text(yaml.safe_dump({"llm": {"model": f"scripted/{script}"}}))
    (root / "demo.chat").write_text("")

    server = jupyter_server(tmp_path, root, module="jupyterlab", app_args=JUPYTER_AI_ARGS, python=JAI_PYTHON)
    with server as (url, shots), open_chromium(tmp_path / "profile", url, height=1000) as (page, _outside):
        page.goto(f"{url}/lab/tree/demo.chat")
        inputs = page.locator(".jp-chat-input-container, [class*='chat-input-container']").first
        # The persona picker under the input names @architect once Jupyter AI has loaded it for this chat:
        # a message sent before that reaches nobody.
        inputs.get_by_text("architect", exact=True).wait_for(timeout=120_000)
        box = inputs.locator("textarea").first
        box.click()
        box.fill("@architect make total return 2")
        page.keyboard.press("Escape")  # close the mention list, so Enter sends
        box.press("Enter")

        approve = page.get_by_role("button", name="Approve", exact=True)
        approve.wait_for(timeout=120_000)
        page.screenshot(path=str(shots / "asks.png"))
        chat = page.locator(".jp-chat-messages-container, [class*='chat-messages']").first
        text = chat.inner_text()
        assert "I'll make total() return 2." in text  # @architect answered in the chat
        assert "return 1" in text and "return 2" in text  # the diff is shown with the question
        for label in ("Approve all like this", "Deny"):
            assert page.get_by_role("button", name=label, exact=True).is_visible()
        assert (root / "app.py").read_text() == APP  # nothing changed before the click

        approve.click()
        wait_for_file(root / "app.py", "return 2", timeout=60)
        page.get_by_text("Done: total() returns 2 now.").wait_for(timeout=60_000)
        page.screenshot(path=str(shots / "approved.png"))
        print(f"screenshots: {shots}")
