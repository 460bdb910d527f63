"""A student's kernel behind a LiteLLM proxy, configured as a hub configures it: by environment variables.

One real kernel per test run: `%load_ext`, the warm-up, a `%%architect` cell with a tool call through the
gateway client, then a cell the proxy refuses for a spent budget; LiteLLM never enters the kernel.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.kernel import FrontEnd, front_end

pytestmark = pytest.mark.slow

KEY = "sk-student-ada-0123456789"
BUDGET = "Budget has been exceeded! Current cost: 0.0021, Max budget: 0.002"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as stub:
        yield stub


@pytest.fixture(scope="module")
def shared(
    server: OpenAIStubServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FrontEnd, Path]]:
    tmp = tmp_path_factory.mktemp("gateway")
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    env = {  # what c.Spawner.environment sets on a hub (docs/classroom.md)
        "ARCHITECT_MODEL": "litellm_proxy/gpt-4o-mini",
        "LITELLM_PROXY_API_BASE": server.url,
        "LITELLM_PROXY_API_KEY": KEY,
        "ARCHITECT_WARMUP": "1",  # users' default, which tests/support/kernel.py turns off for other kernels
    }
    with front_end("ipk7", tmp, ws, env) as fe:
        assert fe.run("%load_ext architect_nb").status == "ok"
        warmed = fe.run(  # what the warm-up imported, before any cell of the module's tests
            "import sys, json\nfrom architect_nb.notebook.warm_up import warm_up_thread\n"
            "warm_up_thread().join(60)\n"
            f"open({str(tmp / 'warmed.json')!r}, 'w').write(json.dumps(list(sys.modules)))"
        )
        assert warmed.status == "ok", fe.describe()
        yield fe, ws


@pytest.fixture
def kernel(shared: tuple[FrontEnd, Path]) -> tuple[FrontEnd, Path]:
    fe, ws = shared
    return fe.hand_over(), ws  # as new: no earlier test's names, config or runs


def modules(fe: FrontEnd) -> dict[str, bool]:
    code = (
        "import sys, json\n"
        "from architect_nb.notebook.warm_up import warm_up_thread\n"
        "warm_up_thread().join(60)\n"
        "print(json.dumps({m: m in sys.modules for m in ('litellm', 'httpx', 'architect_nb.agent.factory')}))"
    )
    cell = fe.run(code)
    return json.loads(cell.text().strip().splitlines()[-1])


def test_the_warm_up_loads_the_gateway_client_and_not_litellm(kernel: tuple[FrontEnd, Path]) -> None:
    fe, _ = kernel
    assert modules(fe) == {"litellm": False, "httpx": True, "architect_nb.agent.factory": True}


def test_a_cell_runs_through_the_gateway_with_the_students_key(
    kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    fe, ws = kernel
    server.queue(Reply.calls(("read_file", {"path": "notes.txt"})), Reply.text("The notes say hello."))
    cell = fe.run(f"%%architect --mode yolo --workspace {ws} --new\nWhat do the notes say?", timeout=120)
    assert cell.status == "ok" and "The notes say hello." in cell.text()
    assert server.authorizations[-2:] == [f"Bearer {KEY}"] * 2
    assert server.requests[-1]["model"] == "gpt-4o-mini"
    assert modules(fe)["litellm"] is False


def test_after_the_warm_up_a_first_cell_imports_none_of_the_notebook_layer(
    kernel: tuple[FrontEnd, Path], server: OpenAIStubServer
) -> None:
    """In a class, 30 first cells importing the live view, ipywidgets and the notebook context together on
    two cores kept each run from starting for seconds (benchmarks/classroom_load.py): the warm-up imports
    them (`warm_up.CELL_MODULES`), and this fails when a cell imports a module of ours it left out."""
    fe, ws = kernel
    server.queue(Reply.calls(("read_file", {"path": "notes.txt"})), Reply.text("The notes say hello."))
    assert (
        fe.run(f"%%architect --mode yolo --workspace {ws} --new\nWhat do the notes say?", timeout=120).status
        == "ok"
    )
    warmed = set(json.loads((ws.parent / "warmed.json").read_text()))
    cell = fe.run("import sys, json\nprint(json.dumps(sorted(sys.modules)))")
    imported = set(json.loads(cell.text().strip().splitlines()[-1])) - warmed
    assert sorted(m for m in imported if m.startswith(("architect_nb", "ipywidgets", "ahocorasick"))) == []


def test_a_spent_budget_says_so_in_the_cell(kernel: tuple[FrontEnd, Path], server: OpenAIStubServer) -> None:
    fe, ws = kernel
    body = {"error": {"message": BUDGET, "type": "budget_exceeded", "param": None, "code": "400"}}
    server.queue(Reply(status=400, error_body=body))
    cell = fe.run(f"%%architect --mode yolo --workspace {ws} --new\nAnything.", timeout=120)
    assert "The gateway refuses to call gpt-4o-mini: the budget is spent" in cell.text()
    assert BUDGET in cell.text()
