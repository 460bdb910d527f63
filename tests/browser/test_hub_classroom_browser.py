"""A class on a real JupyterHub behind a real LiteLLM proxy: two students run `%%architect` cells in a
browser.

The hub (a local process spawner that needs no system users, the dummy authenticator, the npm
configurable-http-proxy from `make setup-proxy`) gives each student's server the environment
docs/classroom.md describes through `c.Spawner.environment`: the proxy's URL, the key, and the model, a
callable per user. Ada's model has a budget the proxy enforces in memory (a deployment's `max_budget`: the
proxy runs without a database, see docs/classroom.md), spent by her first cell; Bob's has none. Each logs in
through the hub's page, JupyterLab opens the class notebook, and the cells run: Ada's second cell says the
budget is spent, Bob's both answer.

The course's teaching policy is `explain`, set as an administrator sets it: a file holding only a `teaching:`
section, named to every student's server by `ARCHITECT_NB_SYSTEM_CONFIG` in `c.Spawner.environment`. The
agent still answers (and reads), so the cells above are unchanged; Bob's third `%%architect` cell, in yolo
mode, gets a model that tries `write_file`: the call is refused with the policy, the file and the teacher's
message, nothing is written in his home, the read that follows runs, and `%architect status` in each
student's notebook names the policy and the file. The hub, its proxy, the servers and the LiteLLM proxy each
stop within bounded time (then are killed).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.browser import VENV_BIN, free_port, open_chromium, require_tools, write_notebook
from tests.support.kernel import ROOT
from tests.support.litellm_proxy import MASTER, litellm_proxy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
]  # the LiteLLM proxy alone takes a minute or more to start

CHP = ROOT / "tests" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
ANSWER = "Hello from the model."
SPENT = "The gateway refuses to call capped: the budget is spent ("
TEACHER = "This week, ask the assistant to explain; write the code yourself."
SYSTEM_POLICY = f"teaching:\n  mode: explain\n  message: {TEACHER}\n"  # only what a system file may hold
NOTES = "def total(cart):\n    return 0  # TODO: add up the prices\n"
EXPLAINED = "Add each item's price to a running total; try it in total() yourself."
COMMON_CELLS = [
    "%load_ext architect_nb",
    "%%architect --mode yolo --new\nSay hello.",
    "%%architect --new\nAgain.",
]
# yolo asks nothing, so only the policy stands between the model's write and Bob's home.
WRITE_CELL = "%%architect --mode yolo --new\nWrite total() in answer.py for me."
CELLS = {
    "ada": [*COMMON_CELLS, "%architect status"],  # her budget is spent: a write cell would reach no model
    "bob": [*COMMON_CELLS, WRITE_CELL, "%architect status"],
}
HUB_CONFIG = """
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{folder}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/cookie_secret"
c.ConfigurableHTTPProxy.command = ["{chp}"]
c.ConfigurableHTTPProxy.pid_file = "{folder}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"  # SimpleLocalProcessSpawner: no system user per student
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/homes/{{username}}"
c.Spawner.cmd = ["{venv_bin}/jupyterhub-singleuser"]
c.Spawner.default_url = "/lab/tree/class.ipynb"
c.Spawner.args = ["--LabApp.expose_app_in_browser=True", "--allow-root"]  # CI runs as root
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180

MODELS = {{"ada": "litellm_proxy/capped", "bob": "litellm_proxy/gpt-4o-mini"}}


def model_of(spawner):
    return MODELS[spawner.user.name]


c.Spawner.environment = {{
    "LITELLM_PROXY_API_KEY": "{key}",
    "LITELLM_PROXY_API_BASE": "{proxy}",
    "ARCHITECT_MODEL": model_of,
    "ARCHITECT_NB_SYSTEM_CONFIG": "{system}",
    "PATH": "{venv_bin}:" + __import__("os").environ["PATH"],
    "JUPYTER_PLATFORM_DIRS": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}}
"""


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture(scope="module")
def system_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The administrator's file, outside every student's home."""
    path = tmp_path_factory.mktemp("etc") / "architect-nb.yaml"
    path.write_text(SYSTEM_POLICY)
    return path


@pytest.fixture(scope="module")
def hub(
    stub: OpenAIStubServer, system_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    require_tools()
    if not CHP.exists():
        message = "the hub test needs configurable-http-proxy: run `make setup-proxy` (make pytest does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("hub")
    with litellm_proxy(stub, folder) as proxy:
        for user, cells in CELLS.items():
            home = folder / "homes" / user
            home.mkdir(parents=True)
            write_notebook(home, cells, "class.ipynb")
            (home / "notes.py").write_text(NOTES)
        port = free_port()
        config = folder / "jupyterhub_config.py"
        config.write_text(
            HUB_CONFIG.format(
                port=port,
                hub_port=free_port(),
                folder=folder,
                chp=CHP,
                venv_bin=VENV_BIN,
                key=MASTER,
                proxy=proxy,
                system=system_file,
            )
        )
        log = folder / "jupyterhub.log"
        env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(config)],
                cwd=folder,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its proxy and the students' servers are in its group
            )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"jupyterhub exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/hub/api/", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"jupyterhub did not answer in 120 s:\n{log.read_text()[-3000:]}")
                    time.sleep(0.5)
            yield url, folder
        finally:
            proc.terminate()  # the hub stops the servers it spawned and its proxy
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            os.killpg(proc.pid, signal.SIGKILL) if _group_alive(proc.pid) else None


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


ALL_RAN = """(count) => {
    const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const session = widget && widget.sessionContext && widget.sessionContext.session;
    if (!session || !session.kernel || session.kernel.status !== 'idle') return false;
    const cells = Array.from(widget.content.model.cells);
    return cells.length === count && cells.every(c => c.type !== 'code' || c.executionCount !== null);
}"""
CALLS = """(cell) => Array.from(cell.querySelectorAll('details.anb-call'))
    .map(d => [d.querySelector('.anb-tool').textContent, d.dataset.status])"""


class Seen(NamedTuple):
    """What a student's browser shows: each cell's text, and each cell's tool calls as (tool, status)."""

    cells: list[str]
    calls: list[list[tuple[str, str]]]

    @property
    def text(self) -> str:
        return "\n".join(self.cells)


def student_runs_the_notebook(url: str, folder: Path, user: str) -> Seen:
    """Log in as `user` through the hub's page, run the class notebook, and return what it shows."""
    with open_chromium(folder / f"chromium-{user}", url, height=1600) as (page, _):
        page.goto(f"{url}/hub/login")
        page.fill("#username_input", user)
        page.fill("#password_input", "any")
        page.click("#login_submit")
        page.wait_for_url(f"**/user/{user}/lab/**", timeout=180_000)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        page.wait_for_function(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " const s = w && w.sessionContext && w.sessionContext.session;"
            " return !!(s && s.kernel && s.kernel.status === 'idle'); }",
            timeout=120_000,
        )
        page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        page.wait_for_function(ALL_RAN, arg=len(CELLS[user]), timeout=180_000)
        page.screenshot(path=str(folder / f"{user}.png"))
        seen = Seen([], [])
        cells = page.locator(".jp-Notebook .jp-Cell")
        for n in range(cells.count()):
            cell = cells.nth(n)
            cell.scroll_into_view_if_needed()  # cells out of view may be skipped (content-visibility)
            seen.cells.append(str(cell.inner_text()))
            seen.calls.append([(tool, status) for tool, status in cell.evaluate(CALLS)])
        return seen


def _tools(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or ()}


def test_one_students_budget_runs_out_in_the_browser_and_the_other_student_is_unaffected(
    hub: tuple[str, Path], stub: OpenAIStubServer, system_file: Path
) -> None:
    url, folder = hub
    stub.queue(
        *[Reply.text(ANSWER)] * 3,
        Reply.calls(("write_file", {"path": "answer.py", "content": "def total(cart):\n    return 42\n"})),
        Reply.calls(("read_file", {"path": "notes.py"})),
        Reply.text(EXPLAINED),
    )
    ada = student_runs_the_notebook(url, folder, "ada")
    after_ada = len(stub.requests)
    bob = student_runs_the_notebook(url, folder, "bob")
    assert after_ada == 1 and len(stub.requests) == 6  # Ada's second cell never reached the model
    assert ANSWER in ada.text and SPENT in ada.text
    assert "Exceeded budget for deployment model_name: capped" in ada.text
    assert bob.text.count(ANSWER) >= 2 and "budget is spent" not in bob.text
    assert [r["model"] for r in stub.requests] == ["gpt-4o-mini"] * 6

    # The system file's policy holds in both students' kernels, which the hub started with it named.
    holds = f"teaching policy: explain (set by the system file {system_file}:1)"
    assert holds in ada.cells[-1] and holds in bob.cells[-1], (ada.cells[-1], bob.cells[-1])
    for request in stub.requests:  # every turn is told the policy, and offered no writing tool
        assert f"Teaching policy 'explain' (set by the system file {system_file}:1)" in json.dumps(
            request["messages"][0]
        )
        assert "read_file" in _tools(request) and "write_file" not in _tools(request)

    # Bob's write is refused, in words naming the policy, the file and the teacher; the read after it runs.
    n = CELLS["bob"].index(WRITE_CELL)
    written = bob.cells[n]
    assert bob.calls[n] == [("write_file", "blocked"), ("read_file", "ran")], bob.calls
    assert not any(ada.calls) and not any(calls for i, calls in enumerate(bob.calls) if i != n)
    assert f"teaching policy 'explain' (set by the system file {system_file}:1)" in written, written
    assert f"The teacher says: {TEACHER}" in written and EXPLAINED in written, written
    assert not (folder / "homes" / "bob" / "answer.py").exists()
    assert "return 0  # TODO" in json.dumps(stub.requests[-1]["messages"])  # the read came from his home
