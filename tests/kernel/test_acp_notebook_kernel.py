"""The ACP agent connects the kernel of the notebook a prompt attaches, as Jupyter AI attaches the open one.

A real Jupyter server (with a token) runs `analysis.ipynb`'s kernel, started through its sessions API as
JupyterLab starts it, and the person's cells have run there. The SDK's client talks to a real
`architect-nb-acp` over stdio, and the prompt carries the notebook as Jupyter AI sends it: a `resource_link`
to the file, of type `application/x-ipynb+json`. The scripted model lists the kernel's variables, runs code
there after an approval, and the person's namespace, execution count and history are untouched; a cancel
interrupts code the agent runs there and the kernel lives on; a notebook without a kernel, and a prompt
without a notebook, leave the kernel tools out and the model is told why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml
from acp import text_block
from acp.schema import ResourceContentBlock
from jupyter_client.blocking.client import BlockingKernelClient

from tests.support.acp_client import AgentThread, Recorded
from tests.support.browser import free_port, stop_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOKEN = "acp-kernel-test-token"
NOTEBOOK = "application/x-ipynb+json"  # Jupyter AI's type for an attached notebook
CELLS = ["prices = [3, 1, 2]", "total = sum(prices)", "print(total)"]
DOUBLE = "doubled = total * 2\nprint(doubled)"
CONNECTED = "connected to the running kernel of the notebook "
NO_KERNEL = "the user attached the notebook idle.ipynb, but it has no running kernel"


class Server:
    def __init__(self, url: str, root: Path, runtime: Path) -> None:
        self.url, self.root, self.runtime = url, root, runtime

    def api(self, path: str, body: dict[str, Any] | None = None, method: str = "GET") -> Any:
        request = urllib.request.Request(
            f"{self.url}/{path}",
            method=method if body is None else "POST",
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("jupyter")
    root, runtime = base / "root", base / "runtime"
    root.mkdir()
    port = free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_PLATFORM_DIRS": "1"}
    env.pop("PYTHONPATH", None)
    log = (base / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={port}",
         "--ip=127.0.0.1", f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={TOKEN}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    started = Server(f"http://127.0.0.1:{port}", root, runtime)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                started.api("api/status")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (base / "server.log").read_text()
                time.sleep(0.3)
        yield started
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture(scope="module")
def agent(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentThread]:
    os.environ["JUPYTER_RUNTIME_DIR"] = str(server.runtime)  # the agent finds the server's info there
    try:
        started = AgentThread(tmp_path_factory.mktemp("acp-agent"))
    finally:
        del os.environ["JUPYTER_RUNTIME_DIR"]
    yield started
    started.close()


def notebook_with_kernel(server: Server, name: str) -> tuple[Path, BlockingKernelClient, str]:
    """`name` in the server's root, with a kernel started as JupyterLab starts it, and its cells run there
    (by a client of our own, as the notebook's front end would). Returns the path, the client and the
    kernel's id."""
    path = server.root / name
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbformat.write(notebook, path)
    session = server.api("api/sessions", {"path": name, "type": "notebook", "name": name,
                                          "kernel": {"name": "python3"}})  # fmt: skip
    kernel_id = session["kernel"]["id"]
    client = BlockingKernelClient()
    client.load_connection_file(str(server.runtime / f"kernel-{kernel_id}.json"))
    # No heartbeat: a client not made by a KernelManager calls the kernel dead after one heartbeat missed by
    # a second, which a loaded CI machine misses while the kernel starts; kernel_info is retried to the bound.
    client.start_channels(hb=False)
    client.wait_for_ready(timeout=60)
    for cell in CELLS:
        reply = client.execute_interactive(cell, timeout=60, output_hook=lambda _msg: None)
        assert reply["content"]["status"] == "ok"
    return path, client, kernel_id


def workspace(root: Path, turns: list[dict[str, Any]]) -> Path:
    folder = root / "ws"
    folder.mkdir(parents=True)
    script = root / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    (folder / ".architect.yaml").write_text(yaml.safe_dump({"llm": {"model": f"scripted/{script}"}}))
    return folder


def ask(
    agent: AgentThread, cwd: Path, text: str, answers: list[Any], notebook: Path | None
) -> tuple[str, Recorded, str]:
    """A new session in `cwd`, one prompt (the notebook attached as Jupyter AI attaches it); returns the stop
    reason, the record and the session id."""

    async def send(conn: Any) -> tuple[str, str]:
        session_id = str((await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id)
        agent.client.session(session_id, answers)
        blocks: list[Any] = [text_block(text)]
        if notebook is not None:
            link = ResourceContentBlock(
                type="resource_link", uri=notebook.as_uri(), name=notebook.name, mime_type=NOTEBOOK
            )
            blocks.append(link)
        reply = await conn.prompt(session_id=session_id, prompt=blocks)
        await agent.client.session(session_id).quiet()
        return str(reply.stop_reason), session_id

    stop, session_id = agent.call(send, timeout=120)
    return stop, agent.client.session(session_id), session_id


def kernel_state(client: BlockingKernelClient) -> dict[str, Any]:
    """The person's names and the next execution count, read with a silent request of our own."""
    msg_id = client.execute("", silent=True, user_expressions={
        "names": "sorted(k for k in get_ipython().user_ns if not k.startswith('_'))",
        "count": "get_ipython().execution_count"})  # fmt: skip
    while True:
        reply = client.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            found = reply["content"]["user_expressions"]
            return {key: eval(value["data"]["text/plain"]) for key, value in found.items()}


def test_the_attached_notebooks_kernel_runs_the_kernel_tools_after_an_approval(
    server: Server, agent: AgentThread, tmp_path: Path
) -> None:
    notebook, client, _kernel = notebook_with_kernel(server, "analysis.ipynb")
    try:
        before = kernel_state(client)
        cwd = workspace(tmp_path, [
            {"expect": {"history_contains": [CONNECTED + "analysis.ipynb"]},
             "tool_calls": [{"name": "list_variables", "arguments": {}}]},
            {"expect": {"tool_result_contains": ["prices: list", "total: int"]},
             "tool_calls": [{"name": "run_python", "arguments": {"code": DOUBLE}}]},
            {"expect": {"tool_result_contains": ["[stdout]\n12"]}, "content": "The total doubled is 12."},
        ])  # fmt: skip
        stop, record, _session = ask(agent, cwd, "What is the total, doubled?", ["approve"], notebook)

        assert stop == "end_turn" and "The total doubled is 12." in record.text(), record.text()
        [(question, _options)] = record.questions  # run_python asked; list_variables did not
        assert question.raw_input == {"code": DOUBLE, "command": DOUBLE}  # command: what editors show
        after = kernel_state(client)
        # The agent's name stayed in its scratch namespace; no cell ran as far as the notebook can tell.
        assert after == before and "doubled" not in after["names"] and "total" in after["names"]
    finally:
        client.stop_channels()


def test_what_run_python_did_to_the_notebooks_variables_is_put_back_by_undo(
    server: Server, agent: AgentThread, tmp_path: Path
) -> None:
    """The snapshot is kept in the notebook's kernel; `/undo`, after the run's connection closed, reaches it
    again and restores the list in place."""
    notebook, client, _kernel = notebook_with_kernel(server, "undo.ipynb")
    try:
        cwd = workspace(tmp_path, [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": "prices.append(100)"}}]},
            {"expect": {"tool_result_contains": ["prices: mutated"]}, "content": "Appended."},
        ])  # fmt: skip
        stop, record, session_id = ask(agent, cwd, "Append 100 to prices.", ["approve"], notebook)
        assert stop == "end_turn" and "Appended." in record.text(), record.text()
        assert _value(client, "prices") == [3, 1, 2, 100]

        async def undo(conn: Any) -> str:
            reply = await conn.prompt(session_id=session_id, prompt=[text_block("/undo")])
            await agent.client.session(session_id).quiet()
            return str(reply.stop_reason)

        assert agent.call(undo, timeout=120) == "end_turn"
        assert "Your variables restored: prices" in record.text(), record.text()
        assert _value(client, "prices") == [3, 1, 2]
    finally:
        client.stop_channels()


def _value(client: BlockingKernelClient, expression: str) -> Any:
    msg_id = client.execute("", silent=True, user_expressions={"v": expression})
    while True:
        reply = client.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            return eval(reply["content"]["user_expressions"]["v"]["data"]["text/plain"])


def test_a_cancel_interrupts_the_code_the_agent_runs_in_the_kernel_and_the_kernel_lives(
    server: Server, agent: AgentThread, tmp_path: Path
) -> None:
    notebook, client, _kernel = notebook_with_kernel(server, "slow.ipynb")
    try:
        cwd = workspace(tmp_path, [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": "import time\ntime.sleep(60)"}}]},
            {"content": "stopped"},
        ])  # fmt: skip

        async def run_and_cancel(conn: Any) -> tuple[str, float]:
            import asyncio

            session_id = str((await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id)
            agent.client.session(session_id, ["approve"])
            blocks = [text_block("sleep"), ResourceContentBlock(type="resource_link", uri=notebook.as_uri(),
                                                                name="slow.ipynb")]  # fmt: skip
            prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=blocks))
            record = agent.client.session(session_id)
            deadline = time.monotonic() + 60
            while not record.questions:
                assert time.monotonic() < deadline and not prompt.done(), record.dump()
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # approved: the code is sleeping in the kernel now
            cancelled_at = time.monotonic()
            await conn.cancel(session_id=session_id)
            reply = await asyncio.wait_for(prompt, 10)
            return str(reply.stop_reason), time.monotonic() - cancelled_at

        stop, took = agent.call(run_and_cancel, timeout=120)
        assert stop == "cancelled" and took < 2.0, (stop, took)
        started = time.monotonic()
        state = kernel_state(client)  # the kernel was interrupted, not killed: it answers at once
        assert time.monotonic() - started < 5 and "total" in state["names"]
    finally:
        client.stop_channels()


def test_without_a_kernel_or_a_notebook_the_kernel_tools_are_left_out_and_the_model_hears_why(
    server: Server, agent: AgentThread, tmp_path: Path
) -> None:
    idle = server.root / "idle.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), idle)
    first = workspace(tmp_path / "a", [
        {"expect": {"history_contains": [NO_KERNEL]},
         "tool_calls": [{"name": "list_variables", "arguments": {}}]},
        {"expect": {"tool_result_contains": ["There is no tool named 'list_variables' in this run"]},
         "content": "No kernel here."},
    ])  # fmt: skip
    stop, record, _ = ask(agent, first, "List the variables.", [], idle)
    assert stop == "end_turn" and "No kernel here." in record.text(), record.text()

    second = workspace(tmp_path / "b", [
        {"expect": {"history_contains": ["not connected to a notebook kernel"]}, "content": "Use a cell."},
    ])  # fmt: skip
    stop, record, _ = ask(agent, second, "List the variables.", [], None)
    assert stop == "end_turn" and "Use a cell." in record.text(), record.text()


def test_a_call_waits_for_the_persons_running_cell_and_a_cancel_never_interrupts_that_cell(
    server: Server,
) -> None:
    from architect_nb.acp.notebook_kernel import connect_notebook_kernel, jupyter_servers

    notebook, client, _kernel = notebook_with_kernel(server, "busy.ipynb")
    try:
        kernel = connect_notebook_kernel(notebook, jupyter_servers(server.runtime))
        assert not isinstance(kernel, str), kernel
        assert kernel.notebook == "busy.ipynb"
        cell = client.execute("import time; time.sleep(3); finished = True")  # the person's own cell
        time.sleep(0.3)
        kernel.interrupt_own()  # none of ours runs there now: the person's cell is left alone
        started = time.monotonic()
        result = kernel.call("r", "list_variables", {}, str(server.root), timeout=5.0)
        assert result.success and "finished: bool" in result.output, result  # it ran after the cell
        assert time.monotonic() - started > 2
        reply = client.get_shell_msg(timeout=10)
        assert reply["parent_header"]["msg_id"] == cell and reply["content"]["status"] == "ok"
        kernel.close()
        closed = kernel.call("r", "list_variables", {}, str(server.root), timeout=5.0)
        assert not closed.success and "not connected" in (closed.error or "")
    finally:
        client.stop_channels()
