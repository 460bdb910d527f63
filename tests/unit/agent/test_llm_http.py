"""LiteLLM's real HTTP path against a local OpenAI-compatible server: streaming, tool calls, retries."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from architect_nb.agent import AgentLoop, LiteLLMClient, LLMError, resolve_agent
from architect_nb.agent.config import READ_ONLY_TOOLS
from architect_nb.config import LLMConfig, load_config
from architect_nb.execution.build import build_engine
from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.agent import copy_sample_project

# Slow, left out of `make test-unit`: LiteLLM over HTTP against a local server, with real retries.
pytestmark = pytest.mark.slow

TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
]
USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> OpenAIStubServer:
    with OpenAIStubServer() as stub:
        yield stub


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0123456789")


def client(server: OpenAIStubServer, *, stream: bool, retries: int = 2) -> LiteLLMClient:
    config = LLMConfig(
        model="openai/stub-model",
        api_base=server.url,
        api_key_env="STUB_API_KEY",
        stream=stream,
        retries=retries,
    )
    return LiteLLMClient(config)


@pytest.mark.parametrize("stream", [True, False])
def test_tool_calls_are_assembled(server: OpenAIStubServer, stream: bool) -> None:
    args = {"path": "src/app.py", "nested": {"list": [1, 2, 3], "text": 'a "quoted" ünïcode'}}
    server.queue(Reply.calls(("read_file", args), ("list_files", {}), content="Reading two things."))
    chunks: list[str] = []
    response = client(server, stream=stream).complete(USER, TOOLS, on_text=chunks.append)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("read_file", args), ("list_files", {})]
    assert response.content == "Reading two things." == "".join(chunks)
    if stream:
        assert len(chunks) > 1  # text arrived in pieces
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 7)
    sent = server.requests[-1]
    assert bool(sent.get("stream")) is stream and sent["tools"][0]["function"]["name"] == "read_file"


@pytest.mark.parametrize("stream", [True, False])
def test_rate_limit_is_retried_with_backoff(server: OpenAIStubServer, stream: bool) -> None:
    server.queue(Reply.error(429, "slow down", retry_after=0.3), Reply.text("after the wait"))
    response = client(server, stream=stream).complete(USER, [])
    assert response.content == "after the wait"
    assert len(server.requests) == 2
    assert server.request_times[1] - server.request_times[0] >= 0.3  # Retry-After was honoured


def test_server_errors_exhaust_retries(server: OpenAIStubServer) -> None:
    server.queue(*[Reply.error(500, "boom")] * 3)
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"InternalServerError.*boom"):
        client(server, stream=True, retries=2).complete(USER, [])
    assert len(server.requests) == 3 and time.monotonic() - started >= 0.5  # two backoffs


def test_auth_error_is_not_retried_and_says_so(server: OpenAIStubServer) -> None:
    server.queue(Reply.error(401, "invalid api key"))
    with pytest.raises(LLMError, match="refused the API key"):
        client(server, stream=False).complete(USER, [])
    assert len(server.requests) == 1


def test_missing_key_variable(server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STUB_API_KEY")
    with pytest.raises(LLMError, match="STUB_API_KEY is not set"):
        client(server, stream=False).complete(USER, [])
    assert server.requests == []


@pytest.mark.parametrize("stream", [True, False])
def test_no_key_at_all_names_the_variable_and_is_not_retried(
    server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """LiteLLM reports a missing OpenAI key as a server error; retrying it only made the person wait."""
    from architect_nb.agent.models import llm

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    waits: list[float] = []
    monkeypatch.setattr(llm, "_sleep", lambda delay, should_stop: waits.append(delay))
    config = LLMConfig(model="openai/stub-model", api_base=server.url, stream=stream, retries=3)
    with pytest.raises(LLMError) as raised:
        LiteLLMClient(config).complete(USER, [])
    message = str(raised.value)
    assert message.startswith("No API key for openai/stub-model: set OPENAI_API_KEY"), message
    assert "%env OPENAI_API_KEY=..." in message and "--model scripted/" in message
    assert waits == [] and server.requests == []


def test_cancel_while_waiting_to_retry(server: OpenAIStubServer) -> None:
    from architect_nb.agent.models.llm import RunCancelledError, import_litellm

    import_litellm()  # its seconds of import are not the wait being timed
    server.queue(Reply.error(429, retry_after=30))
    started = time.monotonic()

    with pytest.raises(RunCancelledError):
        client(server, stream=False).complete(USER, [], should_stop=lambda: time.monotonic() - started > 0.2)
    assert time.monotonic() - started < 2


def test_agent_run_over_http(server: OpenAIStubServer, tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "p")
    server.queue(Reply.calls(("read_file", {"path": "shop/cart.py"})), Reply.text("It is a cart."))
    config = load_config(
        overrides={
            "workspace.root": str(project),
            "llm": {"model": "openai/stub", "api_base": server.url, "api_key_env": "STUB_API_KEY"},
        },
        environ={},
    )
    engine = build_engine(config, mode="yolo")
    loop = AgentLoop(engine, LiteLLMClient(config.llm), resolve_agent("plan"))
    result = loop.run("What is this?")
    assert (result.stop_reason, result.final_text) == ("completed", "It is a cart."), result.message
    second = server.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "class Cart" in second[-1]["content"]
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == set(READ_ONLY_TOOLS)


@pytest.mark.parametrize("stream", [True, False])
def test_arguments_that_are_not_a_json_object_go_back_to_the_model(
    server: OpenAIStubServer, tmp_path: Path, stream: bool
) -> None:
    """Broken arguments (cut off, not an object) become failed results; nothing runs, the run goes on."""
    project = copy_sample_project(tmp_path / "p")
    cart = project / "shop" / "cart.py"
    before = cart.read_bytes()
    server.queue(
        Reply.calls(
            ("edit_file", '{"path": "shop/cart.py", "old_str": "total = 0\\n", "new_str": '),
            ("write_file", '["shop/cart.py", ""]'),
        ),
        Reply.text("I will send valid arguments next time."),
    )
    config = load_config(
        overrides={
            "workspace.root": str(project),
            "llm": {"model": "openai/stub", "api_base": server.url, "api_key_env": "STUB_API_KEY"},
            "llm.stream": stream,
        },
        environ={},
    )
    loop = AgentLoop(build_engine(config, mode="yolo"), LiteLLMClient(config.llm), resolve_agent("build"))
    result = loop.run("Make totals floats")
    assert result.stop_reason == "completed", result.message
    assert cart.read_bytes() == before
    tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_1"]
    assert "not valid JSON" in tool_messages[0]["content"]
    assert "must be a JSON object" in tool_messages[1]["content"]
    results = [e for e in loop.transcript.events if e.kind == "tool_result"]
    assert [r.status for r in results] == ["invalid", "invalid"]
