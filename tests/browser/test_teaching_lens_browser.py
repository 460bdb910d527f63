"""Step-through, the inspector and the context meter in JupyterLab and Notebook 7, against the
OpenAI-compatible stub server, in headless chromium.

An `%%architect --step` cell runs on `openai/gpt-4o-mini` served by `OpenAIStubServer` (LiteLLM's real HTTP
path). The test answers each pause with the buttons: it checks that the run pauses before the first model
call (nothing was sent yet), edits the first call's arguments (the call that runs reads another file), opens
the inspector and compares its request JSON with the request the server received, reads the context meter in
the run header and compares its parts with LiteLLM's token counter on that request, and edits a tool result,
which is what the server receives in the next request. Once the run has ended, the extension's timeline
fetches the same request from the kernel when a step's "What the model saw" is opened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.agent import copy_sample_project
from tests.support.browser import (
    jupyter_server,
    kernel_idle,
    open_chromium,
    require_tools,
    run_all_cells,
    write_notebook,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

MODEL = "openai/gpt-4o-mini"
EDITED = "EDITED RESULT: the readme says nothing."
_APPS = {
    "jupyterlab": (["--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None"], "/lab/tree/demo.ipynb"),
    "notebook": (["--JupyterNotebookApp.expose_app_in_browser=True"], "/notebooks/demo.ipynb"),
}


@pytest.fixture(params=sorted(_APPS))
def app(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Path, OpenAIStubServer]]:
    module = request.param
    require_tools(module=module)
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0123456789")  # the server's environment, so the kernel's
    root = tmp_path / "root"
    root.mkdir()
    workspace = copy_sample_project(root / "project")
    with OpenAIStubServer() as server:
        (workspace / ".architect.yaml").write_text(
            f"llm:\n  model: {MODEL}\n  api_base: {server.url}\n  api_key_env: STUB_API_KEY\n"
        )
        server.queue(
            Reply.calls(("read_file", {"path": "README.md"})),
            Reply.calls(("read_file", {"path": "README.md"})),
            Reply.text("Done."),
        )
        cells = [
            "%load_ext architect_nb",
            f"%%architect --step --mode yolo --no-notebook --workspace {workspace}\nRead the readme twice.",
        ]
        write_notebook(root, cells)
        args, path = _APPS[module]
        with jupyter_server(tmp_path, root, module=module, app_args=args) as (url, artifacts):
            yield url, path, artifacts, server


def _pause(page: Any, text: str) -> Any:
    prompt = page.locator(".architect-nb-step").filter(has_text=text)
    prompt.wait_for(state="visible", timeout=90_000)
    return prompt


def _meter(page: Any) -> dict[str, int]:
    text = page.locator(".architect-nb-meter").last.inner_text()
    names = ("system prompt", "tool schemas", "earlier cells", "this run", "tool results")
    found = {name: re.search(rf"{name} ([0-9,]+)", text) for name in names}
    return {name: int(m.group(1).replace(",", "")) for name, m in found.items() if m is not None}


def test_step_edit_inspect_and_meter(app: tuple[str, str, Path, OpenAIStubServer]) -> None:
    from playwright.sync_api import expect

    url, path, artifacts, server = app
    module = "lab" if path.startswith("/lab") else "notebook7"
    with open_chromium(artifacts.parent / "chromium-profile", url, height=2000) as (page, outside):
        page.goto(url + path)
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        kernel_idle(page)
        run_all_cells(page)

        # 1. It pauses before the first model call: nothing has been sent.
        first = _pause(page, "Step 1: the model is about to be called")
        assert server.requests == []
        first.get_by_role("button", name="Show request").click()
        expect(first.locator(".architect-nb-inspector")).to_contain_text("Read the readme twice.")
        page.screenshot(path=str(artifacts / f"{module}-1-paused.png"))
        first.get_by_role("button", name="Continue", exact=True).click()

        # 2. Edited arguments: a number for a path is refused, then the edited call is the one that runs.
        call = _pause(page, "Step 1: about to run read_file")
        call.locator("textarea").fill('{"path": 42}')
        call.get_by_role("button", name="Edit arguments").click()
        call = _pause(page, "Input should be a valid string")
        call.locator("textarea").fill('{"path": "shop/cart.py"}')
        call.get_by_role("button", name="Edit arguments").click()
        second = _pause(page, "Step 2: the model is about to be called")
        expect(second.locator("textarea")).to_have_value(re.compile("A shopping cart with a flat discount"))
        assert len(server.requests) == 1
        second.get_by_role("button", name="Continue", exact=True).click()

        # 3. The inspector's request is the JSON the server received; the meter adds up to LiteLLM's count.
        call = _pause(page, "Step 2: about to run read_file")
        call.get_by_role("button", name="Show request").click()
        raw = call.locator(".architect-nb-request-json pre")
        expect(raw).to_have_count(1)
        shown = json.loads(raw.text_content() or "")
        received = server.requests[1]
        assert shown == {"messages": received["messages"], "tools": received["tools"]}
        sent = [m for m in shown["messages"] if m.get("tool_calls")]
        assert json.loads(sent[0]["tool_calls"][0]["function"]["arguments"]) == {"path": "shop/cart.py"}
        from architect_nb.agent.models.litellm_import import import_litellm

        counted = import_litellm().token_counter(
            model=MODEL, messages=received["messages"], tools=received["tools"]
        )
        parts = _meter(page)
        assert abs(sum(parts.values()) - counted) <= 0.1 * counted, (parts, counted)
        assert parts["tool results"] > 0 and parts["tool schemas"] > 0
        page.screenshot(path=str(artifacts / f"{module}-2-inspector.png"))
        call.get_by_role("button", name="Continue", exact=True).click()

        # 4. An edited result is what the server receives in the next request.
        third = _pause(page, "Step 3: the model is about to be called")
        third.locator("textarea").fill(EDITED)
        third.get_by_role("button", name="Edit result").click()
        expect(page.locator(".anb-RunRenderer")).to_have_count(1, timeout=90_000)
        kernel_idle(page)
        assert len(server.requests) == 3
        tool = [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]
        assert tool["content"] == EDITED
        expect(page.locator(".anb-RunRenderer .anb-summary .anb-badge").first).to_have_text("success")
        # 5. The finished run's timeline asks the kernel for a step's request when it is opened.
        block = page.locator('.anb-RunRenderer details.anb-step[data-step="2"] details.anb-model-call')
        expect(block).to_contain_text("the model got 4 messages (2 new)")
        block.locator("summary").first.click()
        raw = block.locator(".anb-inspect-json pre")
        expect(raw).to_have_count(1, timeout=30_000)
        assert json.loads(raw.text_content() or "") == {
            "messages": received["messages"],
            "tools": received["tools"],
        }
        page.screenshot(path=str(artifacts / f"{module}-3-done.png"))
        assert outside == []
