"""Threads in real kernels (current ipykernel and 6.x): follow-up cells, `--new`, named threads, forks,
resume after a restart and undo inside a thread.

The model is the local OpenAI-compatible test server, reached by LiteLLM over HTTP from the kernel, so each
test checks what the model was really sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, front_end, kernel_params

pytestmark = pytest.mark.slow

READ_CART = ("read_file", {"path": "shop/cart.py"})


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as stub:
        yield stub


@pytest.fixture(scope="module", params=kernel_params())
def kernel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, server: OpenAIStubServer
) -> Iterator[FrontEnd]:
    tmp = tmp_path_factory.mktemp(f"threads-{request.param}")
    with front_end(str(request.param), tmp, tmp) as player:
        assert player.run("%load_ext architect_nb").status == "ok", player.describe()
        _use_stub(player, server)
        yield player


def _use_stub(player: FrontEnd, server: OpenAIStubServer) -> None:
    player.run("import os; os.environ['STUB_API_KEY'] = 'sk-stub-0000'")
    setup = player.run(
        f"%architect config llm.api_base={server.url} llm.api_key_env=STUB_API_KEY llm.retries=0"
    )
    assert setup.status == "ok", setup.text()


@pytest.fixture
def ws(kernel: FrontEnd, tmp_path: Path, server: OpenAIStubServer) -> Path:
    root = copy_sample_project(tmp_path / "ws")
    kernel.hand_over()  # as new: no earlier test's names, config, runs or threads
    _use_stub(kernel, server)
    assert kernel.run(f"%architect config workspace.root={root}").status == "ok", kernel.describe()
    server.requests.clear()
    return root


def _cell(fe: FrontEnd, options: str, task: str) -> dict[str, Any]:
    """Run a cell on the stub model; its run payload, with the plain-text rendering under "plain"."""
    cell = fe.run(f"%%architect --model openai/stub --mode yolo {options}\n{task}", timeout=90)
    assert cell.status == "ok", fe.describe()
    return _payload(cell)


def _payload(cell: Cell) -> dict[str, Any]:
    [payload] = cell.data(RUN_MIME)
    return {**payload, "plain": cell.data("text/plain")[0]}


def _header(payload: dict[str, Any]) -> dict[str, Any]:
    started = payload["events"][0]
    assert started["kind"] == "run_started"
    return dict(started["thread"])


def _sent(server: OpenAIStubServer) -> str:
    """Everything the last request to the model held, as text."""
    return json.dumps(server.requests[-1]["messages"])


def test_follow_ups_new_threads_and_named_threads(
    kernel: FrontEnd, ws: Path, server: OpenAIStubServer
) -> None:
    server.queue(Reply.calls(READ_CART), Reply.text("total() adds price times quantity."))
    first = _cell(kernel, "", "What does Cart.total do?")
    assert _header(first)["follows_run"] is None and "new thread `main" in first_text(first)

    # A follow-up cell: the model gets the first cell's task, its answer and the tool result.
    server.queue(Reply.text("It returns an int for an empty cart."))
    second = _cell(kernel, "", "And for an empty cart?")
    sent = _sent(server)
    assert "What does Cart.total do?" in sent and "def total" in sent and "adds price times quantity" in sent
    header = _header(second)
    assert header["follows_run"] == first["run_id"] and header["runs"] == 1 and header["turns"] == 2
    assert header["context_tokens"] > 0
    assert f"continues run {first['run_id']}, thread `main" in first_text(second)

    # --new: a fresh conversation.
    server.queue(Reply.text("Fresh."))
    fresh = _cell(kernel, "--new", "Start over: list the files.")
    assert "What does Cart.total do?" not in _sent(server)
    assert _header(fresh)["follows_run"] is None

    # Two named threads, interleaved, never mix.
    server.queue(Reply.text("A1"), Reply.text("B1"), Reply.text("A2"))
    _cell(kernel, "--thread alpha", "Task for alpha")
    _cell(kernel, "--thread beta", "Task for beta")
    _cell(kernel, "--thread alpha", "Alpha again")
    sent = _sent(server)
    assert "Task for alpha" in sent and "A1" in sent and "Task for beta" not in sent and "B1" not in sent

    listing = kernel.run("%architect threads").text()
    for name in ("alpha", "beta"):
        assert name in listing
    assert "* alpha" in listing  # the current thread
    bad = kernel.run("%%architect --new --thread alpha\nx")
    assert "--new starts a fresh thread and --thread names one" in bad.text()


def test_fork_at_a_step_hands_over_to_the_live_model(
    kernel: FrontEnd, ws: Path, server: OpenAIStubServer
) -> None:
    """A scripted prefix, then the live model takes over from a chosen step: the teacher's replay."""
    edit = {
        "name": "edit_file",
        "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
    }
    script = write_script(
        ws,
        [
            {
                "content": "Reading first.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}],
            },
            {"tool_calls": [edit]},
            {"content": "Done."},
        ],
    )
    cell = kernel.run(
        f"%%architect --model {script} --mode yolo --thread prefix\nMake totals floats", timeout=90
    )
    run_id = _payload(cell)["run_id"]
    server.queue(Reply.text("From here I would edit total()."))
    forked = kernel.run(f"%%architect --model openai/stub --fork {run_id}:1 --thread live\n", timeout=90)
    assert forked.status == "ok", kernel.describe()
    messages = server.requests[-1]["messages"]
    assert messages[-1]["role"] == "tool" and "def total" in messages[-1]["content"]
    assert "edit_file" not in json.dumps(messages[1:])  # step 2 is not in the fork (the prompt names it)
    header = _header(_payload(forked))
    assert header["name"] == "live" and header["forked_from"] == f"step 1 of run {run_id} (thread 'prefix')"
    assert f"forked from step 1 of run {run_id}" in first_text(_payload(forked))
    past = kernel.run(f"%%architect --model openai/stub --fork {run_id}:9\nx")
    assert f"run {run_id} has 3 steps; fork at a step from 1 to 3" in past.text()
    unknown = kernel.run("%%architect --model openai/stub --fork 0000000000ff\nx")
    assert "no run '0000000000ff' in this kernel's threads or the saved ones" in unknown.text()


def test_a_thread_resumes_after_a_restart(
    kernel: FrontEnd, ws: Path, server: OpenAIStubServer, tmp_path: Path
) -> None:
    server.queue(Reply.calls(READ_CART), Reply.text("Read it."))
    _cell(kernel, "--thread refactor", "Remember the word PAPAYA.")
    with front_end("ipk7", tmp_path / "restarted", tmp_path) as fresh:
        assert fresh.run("%load_ext architect_nb").status == "ok"
        _use_stub(fresh, server)
        fresh.run(f"%architect config workspace.root={ws}")
        assert "refactor" in fresh.run("%architect threads").text()
        server.queue(Reply.text("PAPAYA."))
        resumed = _cell(fresh, "--thread refactor", "Which word?")
        sent = _sent(server)
        assert "Remember the word PAPAYA." in sent and "def total" in sent
        assert _header(resumed)["runs"] == 1
        # The same name in another workspace is a clear error, and nothing is lost.
        other = copy_sample_project(tmp_path / "other")
        wrong = fresh.run(f"%%architect --model openai/stub --workspace {other} --thread refactor\nx")
        assert f"thread 'refactor' belongs to the workspace {ws}" in wrong.text()


def test_undo_inside_a_thread_tells_the_model(kernel: FrontEnd, ws: Path, server: OpenAIStubServer) -> None:
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    server.queue(
        Reply.calls(
            ("edit_file", {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"})
        ),
        Reply.text("Made it a float."),
    )
    edited = _cell(kernel, "--thread undo-test", "Make totals floats")
    assert "total = 0.0" in cart.read_text()
    undo = kernel.run(f"%architect undo {edited['run_id']}")
    assert "restored 1 file(s)" in undo.text() and cart.read_text() == before
    server.queue(Reply.text("Understood."))
    _cell(kernel, "--thread undo-test", "What is the state now?")
    messages = server.requests[-1]["messages"]
    assert "Make totals floats" in json.dumps(messages)  # the undone run's messages stay
    last = messages[-1]["content"]
    assert f"the user undid run {edited['run_id']}" in last and "shop/cart.py" in last
    assert last.endswith("What is the state now?")
    # Told once: the next turn does not repeat it.
    server.queue(Reply.text("ok"))
    _cell(kernel, "--thread undo-test", "Thanks.")
    last = server.requests[-1]["messages"][-1]["content"]  # the notebook's outline, then the task
    assert last.endswith("\n\nThanks.") and "the user undid run" not in last


def first_text(payload: dict[str, Any]) -> str:
    """The run's plain-text rendering, as VS Code and a CI log show it."""
    return str(payload["plain"])
