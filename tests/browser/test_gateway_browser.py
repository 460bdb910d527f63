"""A kernel behind a real Jupyter Kernel Gateway: JupyterLab runs with `--gateway-url`, in Debian's chromium.

The gateway (`jupyter kernelgateway`, the jupyter_websocket API) runs in the workspace folder, the kernel's
side, which holds the sample project, an `.architect.yaml` naming the scripted model, and the scripts.
JupyterLab runs on another folder, which holds only the notebook; its kernels start in the gateway. In the
browser the notebook's first cells show that the kernel is the gateway's child, started in the workspace.
Then an `%%architect` cell (no `--workspace`: the kernel finds it from where it started) asks before an edit
of the workspace, the live view shows the step while the buttons wait, Approve is clicked and the file on
the kernel's side changes; the agent runs a cell of the open notebook (`run_cell`, through the front end:
its new output shows in the view), then inserts a cell into it and edits that cell, each after Approve: the
notebook's file is on JupyterLab's side, not in the workspace, so the notebook tools reach this run's own
notebook by the path the outline gives it, through the front end (the view shows the new cell, nothing is
written on the kernel's side, and the person's save writes it on JupyterLab's side); `%architect undo` puts
the file and the notebook's cells back; a follow-up cell continues the thread on a model behind the gateway
client, with the key JupyterLab's environment sent along (`GatewayClient.allowed_envs`). Both servers stop by
themselves (terminate, bounded waits, then kill).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.agent import copy_sample_project, write_script
from tests.support.browser import (
    VENV_BIN,
    free_port,
    jupyter_server,
    open_chromium,
    require_tools,
    stop_process,
    wait_for_file,
    wait_for_server,
    write_notebook,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

GATEWAY = VENV_BIN / "jupyter-kernelgateway"
NOTEBOOK = "remote.ipynb"
MARKER = "ran on the gateway's kernel"
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}
LAB_ARGS = [
    "--LabApp.expose_app_in_browser=True",
    "--LabApp.news_url=None",
    "--LabApp.extension_manager=readonly",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
]
#: What the gateway gives its kernels from its own environment (only PATH otherwise, and HOME then comes from
#: the password database): the test's HOME and Jupyter folders, so checkpoints and threads stay in tmp_path.
KERNEL_SIDE_ENV = (
    "HOME,IPYTHONDIR,JUPYTER_CONFIG_DIR,JUPYTER_DATA_DIR,JUPYTER_RUNTIME_DIR,JUPYTER_PLATFORM_DIRS,"
    "PYDEVD_DISABLE_FILE_VALIDATION"
)
#: What JupyterLab's environment sends with each kernel start (`GatewayClient.allowed_envs`) and the gateway
#: lets through (`KG_ENV_WHITELIST`): a student's key and the proxy, as a hub sets them for the server.
FORWARDED = "LITELLM_PROXY_API_KEY,LITELLM_PROXY_API_BASE"
KEY = "sk-student-0001"
THROUGH = f"the notebook tools reach it through the front end, by path='{NOTEBOOK}'"
TASK = "Make cart totals floats."


def _require_gateway() -> None:
    if not GATEWAY.exists():
        message = "the gateway test needs jupyter-kernel-gateway (make setup installs the dev group)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@contextmanager
def kernel_gateway(folder: Path, home: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`jupyter kernelgateway` in `folder` on a free port; its URL and process. Stops within 20 s (then is
    killed), and the kernels it started with it."""
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "KG_ENV_PROCESS_WHITELIST": KERNEL_SIDE_ENV,
        "KG_ENV_WHITELIST": FORWARDED,
    }
    for name in ("PYTHONPATH", *FORWARDED.split(",")):  # the kernels get the key only from the request
        env.pop(name, None)
    log = folder.parent / "kernelgateway.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(GATEWAY),
                "--KernelGatewayApp.api=kernel_gateway.jupyter_websocket",
                "--KernelGatewayApp.ip=127.0.0.1",
                f"--KernelGatewayApp.port={port}",
                # JupyterLab lists the kernels (its /api/status asks); the gateway refuses that by default.
                "--JupyterWebsocketPersonality.list_kernels=True",
            ],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, proc, log, "the kernel gateway", timeout=60, path="/api/kernelspecs")
        yield url, proc
    finally:
        stop_process(proc)  # it shuts its kernels down on the way out


@dataclass
class Servers:
    url: str  # JupyterLab's
    workspace: Path  # on the kernel's side
    lab_root: Path  # JupyterLab's, with the notebook
    artifacts: Path
    gateway: subprocess.Popen[bytes]
    model: OpenAIStubServer  # the follow-up cell's model, behind the gateway client


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Servers]:
    """The gateway on the workspace (kernel's side) and JupyterLab on the notebook's folder (front end's)."""
    require_tools()
    _require_gateway()
    workspace = copy_sample_project(tmp_path / "kernel-side" / "project")
    first = write_script(
        workspace,
        [
            {
                # The notebook's outline came from the front end (its file is not in the workspace).
                "expect": {"history_contains": [MARKER, THROUGH]},
                "content": "I'll make the total a float.",
                "tool_calls": [EDIT],
            },
            {"tool_calls": [{"name": "run_cell", "arguments": {"cell": "cell-1"}}]},
            {
                "expect": {"tool_result_contains": [MARKER, "Its outputs are in the notebook now"]},
                "tool_calls": [
                    {
                        "name": "insert_notebook_cell",
                        "arguments": {"path": NOTEBOOK, "after_cell_id": "cell-1", "source": "x = 1\n"},
                    }
                ],
            },
            {
                # This run's own notebook, reached through the front end (its file is on JupyterLab's side).
                "expect": {"tool_result_contains": "Applied to the notebook open in JupyterLab"},
                "tool_calls": [
                    {
                        "name": "edit_notebook_cell",
                        "arguments": {
                            "path": NOTEBOOK,
                            "cell_id": "index:2",
                            "old_str": "x = 1",
                            "new_str": "x = 2",
                        },
                    }
                ],
            },
            {
                "expect": {"tool_result_contains": "Applied to the notebook open in JupyterLab"},
                "content": "Totals are floats now.",
            },
        ],
        name="first.yaml",
    )
    (workspace / ".architect.yaml").write_text(yaml.safe_dump({"llm": {"model": first}}))
    lab_root = tmp_path / "lab-side"
    lab_root.mkdir()
    write_notebook(
        lab_root,
        [
            "%load_ext architect_nb",
            f"import os\nprint({MARKER!r}, os.getcwd(), os.getppid(), os.environ.get('KERNEL_GATEWAY'))",
            f"%%architect --mode confirm-sensitive\n{TASK}",
            "%architect undo",
            "%%architect --model litellm_proxy/gpt-4o-mini\nAnd now?",
        ],
        NOTEBOOK,
    )
    with OpenAIStubServer() as model, kernel_gateway(workspace, tmp_path / "kernel-home") as (gateway, proc):
        monkeypatch.setenv("LITELLM_PROXY_API_KEY", KEY)  # JupyterLab's environment, as a hub sets it
        monkeypatch.setenv("LITELLM_PROXY_API_BASE", model.url)
        # A kernel start through the gateway waits on the gateway's own start of it: the client's default
        # 42 s request timeout is too short when two test workers share two cores.
        monkeypatch.setenv("KERNEL_LAUNCH_TIMEOUT", "120")
        args = [
            *LAB_ARGS,
            f"--gateway-url={gateway}",
            f"--GatewayClient.allowed_envs={FORWARDED}",
            "--GatewayClient.request_timeout=130",
        ]
        with jupyter_server(tmp_path, lab_root, module="jupyterlab", app_args=args) as (url, artifacts):
            yield Servers(url, workspace, lab_root, artifacts, proc, model)


_PANEL = f"""() => {{
    for (const w of window.jupyterapp.shell.widgets('main')) {{
        if (w.context && w.context.path === {NOTEBOOK!r}) {{ return w; }}
    }}
    return null;
}}"""


def _run_cell(page: Any, cell_id: str) -> None:
    """Run the cell with this id (where it is now: the agent inserts cells above some)."""
    page.evaluate(
        f"(id) => {{ const panel = ({_PANEL})(); const cells = panel.content.model.cells;"
        "let i = 0; while (i < cells.length && cells.get(i).id !== id) { i++; }"
        "panel.content.activeCellIndex = i;"
        "panel.content.mode = 'command'; void window.jupyterapp.commands.execute('notebook:run-cell'); }",
        cell_id,
    )


_IDLE = (
    f"() => {{ const panel = ({_PANEL})();"
    "const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;"
    "return !!k && k.status === 'idle' && panel.context.isReady; }"
)
_STATE = (
    f"() => {{ const panel = ({_PANEL})(); const s = panel && panel.sessionContext;"
    "const k = s && s.session && s.session.kernel;"
    "return {panel: !!panel, ready: !!(panel && panel.context.isReady), kernel: k ? k.status : null,"
    "connection: k ? k.connectionStatus : null, dialogs: Array.from("
    "document.querySelectorAll('.jp-Dialog')).map(d => d.innerText)}; }"
)


def _wait_idle(page: Any, servers: Servers, timeout: float = 150_000, *, reload: bool = False) -> None:
    """Wait for the notebook's kernel, started in the gateway, to be idle; if it never comes, the kernel's
    state, any dialog and both servers' logs say why.

    At a kernel's start JupyterLab's server can open its websocket to the gateway twice within milliseconds
    (two "Connecting to kernel" lines; the gateway logs "Replacing stale connection"). The page's kernel then
    stays connected with its status "unknown", as no status reaches it, and a reconnect on the same client id
    did not bring the widgets' messages back (seen once). Before any cell has run (`reload`), a person
    reloads the page, which connects as a new client; so does this wait, once the status has been unknown
    for 30 s. Later it reconnects the kernel (a reload would drop the cells' outputs)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    reconnects = 0
    while True:
        try:
            page.wait_for_function(_IDLE, timeout=min(30_000, max(1, deadline - time.monotonic()) * 1000))
            return
        except PlaywrightTimeout:
            state = page.evaluate(_STATE)
            if time.monotonic() < deadline and state["kernel"] == "unknown" and reconnects < 3:
                reconnects += 1
                if reload:
                    print(f"the kernel's status stayed unknown for 30 s: page reload {reconnects}")
                    page.reload()
                    page.wait_for_selector(".jp-Notebook .jp-Cell")
                else:
                    print(f"the kernel's status stayed unknown for 30 s: reconnect {reconnects}")
                    page.evaluate(f"() => ({_PANEL})().sessionContext.session.kernel.reconnect()")
                continue
        logs = {
            name: path.read_text(errors="replace")[-4000:] if path.exists() else "(no log)"
            for name, path in (
                ("gateway", servers.workspace.parent / "kernelgateway.log"),
                ("jupyterlab", servers.artifacts.parent / "jupyter-jupyterlab.log"),
            )
        }
        raise AssertionError(
            f"the gateway's kernel was not idle in {timeout / 1000:.0f} s: {state}\n"
            + "\n".join(f"--- {name} log ---\n{text}" for name, text in logs.items())
        )


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _cell_with(page: Any, source: str) -> Any:
    """The cell whose input holds `source`, wherever it is now."""
    return page.locator(".jp-Notebook .jp-Cell").filter(has=page.locator(".jp-InputArea", has_text=source))


def _execution_count(page: Any, index: int) -> int:
    return int(page.evaluate(f"(i) => ({_PANEL})().content.model.cells.get(i).executionCount || 0", index))


def _sources(page: Any) -> list[str]:
    return [
        "".join(s) if isinstance(s, list) else str(s)
        for s in page.evaluate(f"() => ({_PANEL})().content.model.toJSON().cells.map(c => c.source)")
    ]


def test_a_kernel_behind_a_gateway_asks_edits_undoes_and_continues_its_thread(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import expect

    started = time.monotonic()
    cart = servers.workspace / "shop" / "cart.py"
    original = cart.read_text()
    servers.model.queue(Reply.text("Still in the same thread."))
    profile = servers.artifacts.parent / "chromium-profile"
    with open_chromium(profile, servers.url, height=1600) as (page, outside):
        page.goto(f"{servers.url}/lab/tree/{NOTEBOOK}")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        _wait_idle(page, servers, reload=True)

        # The kernel is the gateway's child, started in the workspace (not in JupyterLab's folder).
        _run_cell(page, "cell-0")
        _run_cell(page, "cell-1")
        expect(_cell(page, 1).locator(".jp-OutputArea-output")).to_contain_text(MARKER, timeout=60_000)
        words = _cell(page, 1).locator(".jp-OutputArea-output").inner_text().split()
        assert words[-3:] == [str(servers.workspace), str(servers.gateway.pid), "1"], words
        _wait_idle(page, servers)
        count = _execution_count(page, 1)
        before = _sources(page)
        inserted = [*before[:2], "x = 1\n", *before[2:]]
        on_lab_side = (servers.lab_root / NOTEBOOK).read_text()

        # The run asks before the edit; the live view shows the step while the buttons wait.
        _run_cell(page, "cell-2")
        architect = _cell_with(page, TASK)
        approve = architect.get_by_role("button", name="Approve", exact=True)
        approve.wait_for(state="visible", timeout=90_000)
        expect(architect).to_contain_text("I'll make the total a float.")
        expect(architect).to_contain_text("edit_file")
        page.screenshot(path=str(servers.artifacts / "1-approval-behind-the-gateway.png"))
        assert cart.read_text() == original
        approve.click()
        wait_for_file(cart, "total = 0.0\n")
        for call in ("run_cell", "insert_notebook_cell", "edit_notebook_cell"):  # each asks too
            approve = architect.get_by_role("button", name="Approve", exact=True)
            approve.wait_for(state="visible", timeout=60_000)
            if call != "run_cell":  # nothing reaches the open notebook before Approve
                expect(architect).to_contain_text(call)
                assert _sources(page) == (before if call == "insert_notebook_cell" else inserted)
            if call == "edit_notebook_cell":
                page.screenshot(path=str(servers.artifacts / "2-cell-inserted-behind-the-gateway.png"))
            approve.click()
            if call == "insert_notebook_cell":  # the view shows the new cell at once
                expect(_cell(page, 2)).to_contain_text("x = 1", timeout=30_000)
        run = architect.locator(".anb-RunRenderer")
        expect(run.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        page.screenshot(path=str(servers.artifacts / "3-done.png"))
        _wait_idle(page, servers)
        # run_cell ran cell 1 again and put its outputs in the open notebook, through the front end.
        assert _execution_count(page, 1) > count
        expect(_cell(page, 1).locator(".jp-OutputArea-output")).to_contain_text(MARKER)
        assert run.locator('details.anb-call[data-status="failed"]').count() == 0
        # The cell was inserted after cell 1 and then edited, in the open notebook: the view shows it, and
        # nothing was written on either side until the person saves (then on JupyterLab's).
        assert _sources(page) == [*before[:2], "x = 2\n", *before[2:]]
        expect(_cell(page, 2)).to_contain_text("x = 2")
        assert not (servers.workspace / NOTEBOOK).exists()
        assert (servers.lab_root / NOTEBOOK).read_text() == on_lab_side
        page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
        page.wait_for_function(f"() => !({_PANEL})().context.model.dirty", timeout=30_000)
        saved = json.loads((servers.lab_root / NOTEBOOK).read_text())
        assert ["".join(c["source"]) for c in saved["cells"]][2] == "x = 2\n"

        # %architect undo puts the file on the kernel's side back, and the notebook's cells in the view.
        _run_cell(page, "cell-3")
        expect(_cell_with(page, "%architect undo")).to_contain_text("restored 2 file(s)", timeout=60_000)
        assert cart.read_text() == original
        page.wait_for_function(f"() => ({_PANEL})().content.model.cells.length === 5", timeout=30_000)
        assert _sources(page) == before
        assert not (servers.workspace / NOTEBOOK).exists()

        # The follow-up cell continues the thread, through the gateway client with the key JupyterLab's
        # environment sent along with the kernel's start.
        _run_cell(page, "cell-4")
        follow_up = _cell_with(page, "And now?")
        expect(follow_up.locator(".anb-summary .anb-badge").first).to_have_text("success", timeout=90_000)
        expect(follow_up).to_contain_text("Still in the same thread.")
        page.screenshot(path=str(servers.artifacts / "4-follow-up.png"))
        assert outside == []
    assert servers.model.authorizations == [f"Bearer {KEY}"]
    conversation = str(servers.model.requests[0]["messages"])
    assert "Make cart totals floats." in conversation and "total = 0.0" in conversation
    with capsys.disabled():
        print(f"\nscreenshots: {servers.artifacts}; took {time.monotonic() - started:.1f} s")
