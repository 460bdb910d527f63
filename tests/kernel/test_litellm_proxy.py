"""The gateway client against a real LiteLLM proxy (`litellm --config`, from `make setup-proxy`'s venv) in
front of the local OpenAI-compatible server, and two students' kernels behind it.

The proxy runs without a database: Prisma, through which it keeps virtual keys and their budgets in Postgres,
downloads its engines when it starts, which cannot happen here. So the students share the master key, and the
budget is the one the proxy enforces in memory: a deployment's `max_budget`. One student's model has a budget
of a millionth of a dollar, spent by the first call; the other's has none. One proxy for the file (it takes
a minute or more to start on a busy machine); it is stopped within 20 s (then killed) at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.agent import LLMError
from architect_nb.agent.models.gateway import GatewayClient
from architect_nb.config import LLMConfig
from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.kernel import FrontEnd, front_end
from tests.support.litellm_proxy import MASTER, litellm_proxy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
]  # the LiteLLM proxy alone takes a minute or more to start

TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
]
USER = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(stub: OpenAIStubServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with litellm_proxy(stub, tmp_path_factory.mktemp("proxy")) as url:
        yield url


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", MASTER)


def client(proxy: str, model: str = "gpt-4o-mini", *, stream: bool = True) -> GatewayClient:
    return GatewayClient(LLMConfig(model=f"litellm_proxy/{model}", api_base=proxy, stream=stream, retries=0))


@pytest.mark.parametrize("stream", [True, False])
def test_a_turn_with_a_tool_call_goes_through_the_real_proxy(
    proxy: str, stub: OpenAIStubServer, stream: bool
) -> None:
    stub.queue(Reply.calls(("read_file", {"path": "a.py"}), content="Reading."))
    texts: list[str] = []
    response = client(proxy, stream=stream).complete(USER, TOOLS, on_text=texts.append)
    assert response.content == "Reading." == "".join(texts)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("read_file", {"path": "a.py"})]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 7)
    assert response.usage.priced and response.usage.cost_usd > 0
    assert stub.requests[-1]["model"] == "gpt-4o-mini" and stub.authorizations[-1] == "Bearer sk-upstream"


def test_a_model_the_proxy_does_not_serve_is_named(proxy: str) -> None:
    with pytest.raises(
        LLMError, match=r"Unknown model 'gpt-5' \(400: .*Invalid model name passed in model=gpt-5"
    ):
        client(proxy, "gpt-5").complete(USER, [])


def student(tmp: Path, proxy: str, model: str) -> Iterator[FrontEnd]:
    """A student's kernel with the environment the hub's c.Spawner.environment gives it."""
    ws = tmp / model
    ws.mkdir()
    env = {
        "ARCHITECT_MODEL": f"litellm_proxy/{model}",
        "LITELLM_PROXY_API_BASE": proxy,
        "LITELLM_PROXY_API_KEY": MASTER,
    }
    with front_end("ipk7", tmp, ws, env) as fe:
        assert fe.run("%load_ext architect_nb").status == "ok"
        yield fe


def test_one_students_budget_runs_out_and_the_cell_says_so_the_other_is_unaffected(
    proxy: str, stub: OpenAIStubServer, tmp_path: Path
) -> None:
    capped, free = student(tmp_path, proxy, "capped"), student(tmp_path, proxy, "gpt-4o-mini")
    ada, bob = next(capped), next(free)
    try:
        cells = []
        for fe in (ada, bob, ada, bob):
            seen = len(stub.requests)
            stub.queue(Reply.text("Hello from the model."))
            cell = fe.run("%%architect --mode yolo --new\nSay hello.", timeout=120)
            cells.append((cell.text(), len(stub.requests) - seen))
        (ada_1, ada_sent_1), (bob_1, _), (ada_2, ada_sent_2), (bob_2, bob_sent_2) = cells
        assert "Hello from the model." in ada_1 and ada_sent_1 == 1
        assert "The gateway refuses to call capped: the budget is spent (" in ada_2 and ada_sent_2 == 0
        assert "Exceeded budget for deployment model_name: capped" in ada_2
        assert "Hello from the model." in bob_1 and "Hello from the model." in bob_2 and bob_sent_2 == 1
        spent = ada.run("import sys; print('litellm' in sys.modules)").text().strip().splitlines()[-1]
        assert spent == "False"
    finally:
        stub.replies.clear()
        for kernel in (capped, free):
            kernel.close()
