"""The notebook context, "Fix with architect" and run_cell in a real JupyterLab and Notebook 7 (Debian's
chromium, Playwright), on the OpenAI-compatible test server.

A notebook makes a plot, holds a secret and has a cell that fails with a KeyError. The person types a line
into an earlier cell without saving, then clicks "Fix with architect" under the error: an `%%architect`
cell is inserted below, naming the failing cell. Run, the first request the server receives holds the
outline with the failing cell's number, source and traceback and the typed line, with the secret redacted
and no base64. The model edits the failing cell and calls run_cell on it: the approval shows the cell,
and once approved the cell's error output is replaced by its new output and count in the view, and, saved,
in the file. Screenshots are saved under the test's temporary folder (the path is printed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.browser import jupyter_server, open_chromium, require_tools, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SECRET = "zq7-notreal-8080-secret-value"
TYPED = "# typed by the person, not saved"
CELLS = [
    "%load_ext architect_nb",
    f"token = {SECRET!r}\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    "d = {'a': 1}\nd['b']",
]

_PANEL = """(path) => {
    for (const w of window.jupyterapp.shell.widgets('main')) {
        if (w.context && w.context.path === path) { return w; }
    }
    return null;
}"""


@pytest.fixture(params=["jupyterlab", "notebook"])
def frontend(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Path, Path, OpenAIStubServer]]:
    module = str(request.param)
    require_tools(module=module)
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root, CELLS, name="analysis.ipynb")
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0000")
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", SECRET)  # what the redaction knows as a secret
    with OpenAIStubServer() as stub:
        config = {
            "llm": {"model": "openai/stub", "api_base": stub.url, "api_key_env": "STUB_API_KEY", "retries": 0}
        }
        (root / ".architect.yaml").write_text(yaml.safe_dump(config))
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
            yield module, url, root, artifacts, stub


def _eval(page: Any, body: str, arg: Any = None) -> Any:
    return page.evaluate(f"([arg]) => {{ const panel = ({_PANEL})('analysis.ipynb'); {body} }}", [arg])


def _wait(page: Any, body: str, timeout: float = 90_000) -> None:
    page.wait_for_function(
        f"([arg]) => {{ const panel = ({_PANEL})('analysis.ipynb'); {body} }}", arg=[None], timeout=timeout
    )


def _cells(page: Any) -> list[dict[str, Any]]:
    return list(_eval(page, "return panel.context.model.toJSON().cells;"))


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def _approve(page: Any, tool: str, artifacts: Path, name: str) -> str:
    """Wait for the prompt asking to run `tool`, screenshot it, click its Approve; returns its text."""
    approve = page.get_by_role("button", name="Approve", exact=True)
    prompt = page.locator(".widget-vbox").filter(has_text=f"Run {tool}?").filter(has=approve).last
    prompt.wait_for(state="visible", timeout=90_000)
    text = prompt.inner_text()
    page.screenshot(path=str(artifacts / f"{name}.png"))
    prompt.get_by_role("button", name="Approve", exact=True).click()
    return str(text)


def test_fix_with_architect_the_context_and_run_cell(
    frontend: tuple[str, str, Path, Path, OpenAIStubServer], capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    module, url, root, artifacts, stub = frontend
    started = time.monotonic()
    with open_chromium(artifacts.parent / "chromium-profile", url, height=1600) as (page, outside):
        page.goto(f"{url}/{'lab/tree' if module == 'jupyterlab' else 'notebooks'}/analysis.ipynb")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _wait(
            page,
            "const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;"
            "return !!k && k.status === 'idle' && panel.context.isReady;",
        )
        assert page.evaluate("() => window.jupyterapp.commands.hasCommand('architect-nb:ask')")
        _eval(
            page,
            "panel.content.activeCellIndex = 0; panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-all-cells');",
        )
        fix = page.locator(".anb-fix-button")
        expect(fix).to_have_count(1, timeout=90_000)  # one error output, one button
        # The kernel's idle status can reach the page before the cell's execute_reply, which sets its count.
        _wait(
            page,
            "const k = panel.sessionContext.session.kernel; const cell = panel.content.model.cells.get(2);"
            "return k.status === 'idle' && typeof cell.executionCount === 'number';",
        )
        failing_count = _cells(page)[2]["execution_count"]
        assert isinstance(failing_count, int)

        # The person types into cell 1 without saving, then asks for a fix from the error.
        panel = _eval(page, "return panel.id;")
        page.locator(f"#{panel} .jp-Cell").nth(1).locator(".cm-content").click()
        page.keyboard.press("Control+Home")
        page.keyboard.type(TYPED + "\n")
        page.keyboard.press("Escape")
        fix.click()
        cells = _cells(page)
        task = f"Fix the error in cell 2 [{failing_count}] (KeyError: 'b')."
        assert _source(cells[3]) == f"%%architect\n{task}", cells[3]
        page.screenshot(path=str(artifacts / "1-fix-cell-inserted.png"))

        fixed = "d = {'a': 1}\nd.get('b', 0)"
        stub.queue(
            Reply.calls(
                (
                    "edit_notebook_cell",
                    {
                        "path": "analysis.ipynb",
                        "cell_id": "cell-2",
                        "old_str": "d['b']",
                        "new_str": "d.get('b', 0)",
                    },
                )
            ),
            Reply.calls(("run_cell", {"cell": "cell-2"})),
            Reply.text("Cell 2 uses `d.get` now and returns 0."),
        )
        page.keyboard.press("Escape")
        _eval(
            page,
            "panel.content.activeCellIndex = 3; panel.content.mode = 'command';"
            "void window.jupyterapp.commands.execute('notebook:run-cell');",
        )
        _approve(page, "edit_notebook_cell", artifacts, "2-approve-edit")
        shown = _approve(page, "run_cell", artifacts, "3-approve-run-cell")
        assert "run_cell" in shown and "d.get('b', 0)" in shown, shown

        # The first request: the outline, the failing cell and traceback, the typed line; no secret or base64.
        first = stub.requests[0]
        user = [m["content"] for m in first["messages"] if m["role"] == "user"][-1]
        assert "analysis.ipynb (open in " in user, user
        assert f"cell 2 [{failing_count}], in full:\n    d = {{'a': 1}}\n    d['b']" in user, user
        assert f"Cell In[{failing_count}], line 2" in user and "KeyError: 'b'" in user
        assert f'"cell 2 [{failing_count}]" = cell 2 [{failing_count}]' in user
        assert TYPED in user and "{edited since it ran}" in user
        assert "1 image" in user
        sent = json.dumps(first)
        assert SECRET not in sent and "[REDACTED:FAKE_SERVICE_API_KEY]" in user
        assert "iVBOR" not in sent  # a PNG's base64 starts so
        assert user.rstrip().endswith(task)

        # run_cell replaced the error with the new output and count, in the view.
        run = page.locator(f"#{panel} .anb-RunRenderer")
        expect(run).to_have_count(1, timeout=120_000)
        expect(page.locator(".anb-fix-button")).to_have_count(0)
        cell_two = page.locator(f"#{panel} .jp-CodeCell").nth(2)
        expect(cell_two.locator(".jp-OutputArea-output")).to_have_text("0")
        new_count = _cells(page)[2]["execution_count"]
        assert isinstance(new_count, int) and new_count > failing_count
        expect(cell_two.locator(".jp-InputPrompt")).to_have_text(f"[{new_count}]:")
        tool = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "tool"][-1]
        assert f"cell 2 ran as [{new_count}]" in tool and "[execute_result]\n0" in tool, tool
        _wait(page, "return panel.sessionContext.session.kernel.status === 'idle';")
        page.screenshot(path=str(artifacts / "4-after-run-cell.png"))

        # Saved as the person saves, the file has it too (and the typed line).
        page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
        _wait(page, "return !panel.context.model.dirty;", timeout=30_000)
        saved = json.loads((root / "analysis.ipynb").read_text())["cells"]
        assert _source(saved[2]) == fixed
        assert [o["output_type"] for o in saved[2]["outputs"]] == ["execute_result"]
        assert "".join(saved[2]["outputs"][0]["data"]["text/plain"]) == "0"
        assert saved[2]["execution_count"] == new_count
        assert _source(saved[1]).startswith(TYPED)
        assert outside == []
    with capsys.disabled():
        print(f"\nscreenshots: {artifacts}; {module} took {time.monotonic() - started:.1f} s")
