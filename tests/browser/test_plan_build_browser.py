"""Plan, approve, build in a real JupyterLab (Debian's chromium, Playwright), on the OpenAI-compatible server.

A `--agent plan` cell runs; its plan comes with **Build this plan** and **Edit plan**. The person clicks
Build this plan in the browser: the same cell goes on with a build run in the same thread, and the request
the server receives for it holds the approved plan (pinned as the build's task) and its todo list.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.browser import jupyter_server, open_chromium, require_tools, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PLAN = "1. Make f return 2 in mod.py\n2. Run the tests"
CELLS = ["%load_ext architect_nb", "%%architect --agent plan --no-notebook\nPlan: make f return 2."]

_PANEL = """(path) => {
    for (const w of window.jupyterapp.shell.widgets('main')) {
        if (w.context && w.context.path === path) { return w; }
    }
    return null;
}"""


@pytest.fixture
def lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Path, Path, OpenAIStubServer]]:
    require_tools(module="jupyterlab")
    root = tmp_path / "root"
    root.mkdir()
    (root / "mod.py").write_text("def f():\n    return 1\n")
    write_notebook(root, CELLS, name="plan.ipynb")
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0000")
    with OpenAIStubServer() as stub:
        llm = {"model": "openai/stub", "api_base": stub.url, "api_key_env": "STUB_API_KEY", "retries": 0}
        (root / ".architect.yaml").write_text(yaml.safe_dump({"llm": llm}))
        args = [
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.extension_manager=readonly",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        with jupyter_server(tmp_path, root, module="jupyterlab", app_args=args) as (url, artifacts):
            yield url, root, artifacts, stub


def _wait(page: Any, body: str, timeout: float = 90_000) -> None:
    page.wait_for_function(
        f"([arg]) => {{ const panel = ({_PANEL})('plan.ipynb'); {body} }}", arg=[None], timeout=timeout
    )


def test_a_plan_approved_in_the_browser_is_built_in_the_same_thread(
    lab: tuple[str, Path, Path, OpenAIStubServer], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    url, root, artifacts, stub = lab
    started = time.monotonic()
    stub.queue(
        Reply.calls(("read_file", {"path": "mod.py"})),
        Reply.text(PLAN),
        Reply.calls(("edit_file", {"path": "mod.py", "old_str": "return 1", "new_str": "return 2"})),
        Reply.text("Built: f returns 2."),
    )
    with open_chromium(artifacts.parent / "chromium-profile", url, height=1400) as (page, outside):
        page.goto(f"{url}/lab/tree/plan.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _wait(
            page,
            "const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;"
            "return !!k && k.status === 'idle' && panel.context.isReady;",
        )
        page.evaluate(
            f"() => {{ const panel = ({_PANEL})('plan.ipynb'); panel.content.activeCellIndex = 0;"
            "panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
        )
        build = page.get_by_role("button", name="Build this plan", exact=True)
        build.wait_for(state="visible", timeout=120_000)
        expect(page.get_by_role("button", name="Edit plan", exact=True)).to_be_visible()
        expect(page.locator(".widget-vbox").filter(has=build).last).to_contain_text(
            "Make f return 2 in mod.py"
        )
        page.screenshot(path=str(artifacts / "1-plan-offered.png"))
        assert len(stub.requests) == 2  # nothing is built before the click
        build.click()
        # The build asks before its edit, in the same cell; approve it.
        approve = page.get_by_role("button", name="Approve", exact=True)
        approve.wait_for(state="visible", timeout=120_000)
        approve.click()
        _wait(page, "return panel.sessionContext.session.kernel.status === 'idle';", timeout=120_000)
        page.screenshot(path=str(artifacts / "2-built.png"))
        assert (root / "mod.py").read_text() == "def f():\n    return 2\n"
        # The build's first request holds the plan run's conversation and the approved plan as its task.
        build_request = stub.requests[2]["messages"]
        task = [m["content"] for m in build_request if m["role"] == "user"][-1]
        assert "[Approved plan]\n" + PLAN in task and "[Todo]\n[ ] Make f return 2 in mod.py" in task
        assert any(m["role"] == "assistant" and m.get("content") == PLAN for m in build_request)
        assert "You are a careful software engineer" in build_request[0]["content"]  # the build agent
        run_outputs = page.locator(".jp-CodeCell").nth(1).locator(".anb-RunRenderer")
        expect(run_outputs).to_have_count(2, timeout=30_000)  # the plan run and the build run, one cell
        assert outside == []
    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; took {time.monotonic() - started:.1f} s")
