"""The gateway client over HTTP against the local OpenAI-compatible server, as a LiteLLM proxy answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent import LiteLLMClient, LLMError
from architect_nb.agent.models.gateway import GatewayClient, uses_gateway
from architect_nb.agent.models.model_choice import model_client
from architect_nb.config import LLMConfig
from architect_nb.testing.openai_server import OpenAIStubServer, Reply

TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
]
USER = [{"role": "user", "content": "hi"}]
KEY = "sk-student-0123456789"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def server() -> Any:
    with OpenAIStubServer() as stub:
        yield stub


@pytest.fixture(autouse=True)
def _fresh(server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", KEY)
    server.replies.clear()
    server.requests.clear()
    server.authorizations.clear()
    server.request_times.clear()


def client(server: OpenAIStubServer, *, stream: bool = True, retries: int = 2, **more: Any) -> GatewayClient:
    config = LLMConfig(
        model="litellm_proxy/gpt-4o-mini", api_base=server.url, stream=stream, retries=retries, **more
    )
    made = model_client(config)
    assert isinstance(made, GatewayClient)
    return made


def proxy_error(status: int, message: str, kind: str) -> Reply:
    """An error as LiteLLM's proxy words it (`ProxyException`: message, type, param, code as a string)."""
    return Reply(
        status=status,
        error_body={"error": {"message": message, "type": kind, "param": None, "code": str(status)}},
    )


BUDGET = "Budget has been exceeded! Current cost: 0.0021, Max budget: 0.002"


def price_entry(name: str) -> dict[str, Any]:
    import litellm  # only to locate the list this test checks against; the client never imports it

    data = json.loads(
        (Path(litellm.__file__).parent / "model_prices_and_context_window_backup.json").read_text()
    )
    return data[name]


# --------------------------------------------------------------------------- choosing the client


def test_the_gateway_is_chosen_by_setting_or_by_the_proxy_prefix_and_litellm_stays_the_default() -> None:
    assert not uses_gateway(LLMConfig(model="openai/gpt-4o-mini"))
    assert uses_gateway(LLMConfig(model="litellm_proxy/gpt-4o-mini"))
    assert uses_gateway(LLMConfig(model="gpt-4o-mini", gateway=True))
    assert not uses_gateway(LLMConfig(model="litellm_proxy/gpt-4o-mini", gateway=False))
    assert not uses_gateway(LLMConfig(model="scripted/demo.yaml", gateway=True))  # a script runs in-process
    assert type(model_client(LLMConfig(model="openai/gpt-4o-mini"))) is LiteLLMClient


def test_a_gateway_without_a_url_says_which_setting_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_PROXY_API_BASE", raising=False)
    with pytest.raises(LLMError, match=r"set llm.api_base \(or LITELLM_PROXY_API_BASE\)"):
        model_client(LLMConfig(model="gpt-4o-mini", gateway=True))
    monkeypatch.setenv("LITELLM_PROXY_API_BASE", "http://127.0.0.1:9/v1/")
    made = model_client(LLMConfig(model="gpt-4o-mini", gateway=True))
    assert isinstance(made, GatewayClient) and made.base == "http://127.0.0.1:9/v1"


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize("stream", [True, False])
def test_tool_calls_text_and_usage_come_back_with_the_students_key(
    server: OpenAIStubServer, stream: bool
) -> None:
    args = {"path": "src/app.py", "nested": {"list": [1, 2, 3], "text": 'a "quoted" ünïcode'}}
    server.queue(Reply.calls(("read_file", args), ("list_files", {}), content="Reading two things."))
    chunks: list[str] = []
    response = client(server, stream=stream).complete(USER, TOOLS, on_text=chunks.append)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("read_file", args), ("list_files", {})]
    assert response.content == "Reading two things." == "".join(chunks)
    assert len(chunks) > 1 if stream else len(chunks) == 1
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 7)
    assert response.finish_reason == "tool_calls"
    sent = server.requests[-1]
    assert sent["model"] == "gpt-4o-mini"  # the proxy's name for it, without litellm_proxy/
    assert bool(sent.get("stream")) is stream and sent["tools"][0]["function"]["name"] == "read_file"
    assert server.authorizations[-1] == f"Bearer {KEY}"
    assert server.paths[-1] == "/v1/chat/completions"


def test_reasoning_streams_to_the_thinking_view_and_goes_back_with_the_turn() -> None:
    with OpenAIStubServer(reasoning_field="reasoning_content", require_reasoning_back=True) as stub:
        stub.queue(Reply.calls(("read_file", {"path": "a"}), thinking="Let me look at a first."))
        stub.queue(Reply.text("done"))
        thought: list[str] = []
        gateway = client(stub)
        first = gateway.complete(USER, TOOLS, on_thinking=thought.append)
        assert "".join(thought) == "Let me look at a first." == first.thinking
        result = {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "x"}
        second = gateway.complete([*USER, first.to_message(), result], TOOLS)
        assert second.content == "done" and stub.problems == [] and stub.reasoning_checked == 1


def test_the_proxys_cost_header_prices_the_turn(server: OpenAIStubServer) -> None:
    server.queue(Reply.text("priced by the proxy").with_(headers=(("x-litellm-response-cost", "0.00042"),)))
    usage = client(server, stream=False).complete(USER, []).usage
    assert usage.priced and usage.cost_usd == pytest.approx(0.00042)


def test_without_the_header_the_price_list_prices_the_turn(server: OpenAIStubServer) -> None:
    server.queue(Reply.text("streamed").with_(prompt_tokens=1000, completion_tokens=500, cached_tokens=400))
    usage = client(server).complete(USER, []).usage
    entry = price_entry("gpt-4o-mini")
    expected = (
        600 * entry["input_cost_per_token"]
        + 400 * entry["cache_read_input_token_cost"]
        + 500 * entry["output_cost_per_token"]
    )
    assert usage.priced and usage.cost_usd == pytest.approx(expected) and usage.cached_tokens == 400


def test_an_unknown_model_is_unpriced_and_gets_the_default_window(server: OpenAIStubServer) -> None:
    server.queue(Reply.text("hi"))
    gateway = client(server).__class__(
        LLMConfig(model="class-model-of-our-own", gateway=True, api_base=server.url)
    )
    assert not gateway.complete(USER, []).usage.priced
    assert gateway.context_window() == 128_000 and not gateway.supports_images()
    known = client(server)
    assert known.context_window() == price_entry("gpt-4o-mini")["max_input_tokens"]
    assert known.supports_images()


# --------------------------------------------------------------------------- the proxy's refusals


@pytest.mark.parametrize("status", [400, 422, 429])
def test_a_spent_budget_is_one_sentence_and_not_retried(server: OpenAIStubServer, status: int) -> None:
    server.queue(proxy_error(status, BUDGET, "budget_exceeded"), Reply.text("never reached"))
    with pytest.raises(LLMError) as raised:
        client(server).complete(USER, [])
    message = str(raised.value)
    assert message.startswith("The gateway refuses to call gpt-4o-mini: the budget is spent")
    assert BUDGET in message and "raise the budget" in message and "\n" not in message
    assert len(server.requests) == 1


def test_an_invalid_key_names_the_variable_and_is_not_retried(server: OpenAIStubServer) -> None:
    said = "Authentication Error, Invalid proxy server token passed. Received API Key = sk-...6789"
    server.queue(proxy_error(401, said, "auth_error"))
    with pytest.raises(LLMError) as raised:
        client(server).complete(USER, [])
    assert str(raised.value) == (
        f"The gateway {server.url} refused the key in LITELLM_PROXY_API_KEY (401: {said}); "
        "check that the key is set and still valid."
    )
    assert len(server.requests) == 1


def test_no_key_at_all_says_none_was_sent(server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_PROXY_API_KEY")
    server.queue(proxy_error(401, "Authentication Error, No api key passed in.", "auth_error"))
    with pytest.raises(LLMError, match=r"refused the call \(no key was sent\)"):
        client(server).complete(USER, [])
    assert server.authorizations[-1] is None


def test_a_key_from_another_variable(server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLASS_KEY", "sk-other")
    server.queue(Reply.text("ok"))
    client(server, api_key_env="CLASS_KEY").complete(USER, [])
    assert server.authorizations[-1] == "Bearer sk-other"


def test_a_model_the_key_may_not_use_says_so(server: OpenAIStubServer) -> None:
    said = "key not allowed to access model. This key can only access models=['gpt-4o']. Tried to access x"
    server.queue(proxy_error(401, said, "key_model_access_denied"))
    with pytest.raises(LLMError, match=r"does not let your key use gpt-4o-mini .*pick a model it allows"):
        client(server).complete(USER, [])


def test_a_rate_limit_is_the_class_gateway_busy_and_waited_out(server: OpenAIStubServer) -> None:
    """More 429s than `llm.retries` allows are waited out (tests/unit/agent/test_gateway_busy.py has more)."""
    limit = proxy_error(429, "Max parallel request limit reached. Hit limit for api_key: sk-...6789.", "None")
    server.queue(*[limit.with_(headers=(("retry-after", "0.05"),))] * 3, Reply.text("after the wait"))
    notices: list[str] = []
    assert client(server, retries=1).complete(USER, [], on_notice=notices.append).content == "after the wait"
    assert len(notices) == 3 and len(server.requests) == 4
    assert notices[0].startswith("The class gateway is busy (429: Max parallel request limit reached.")
    assert "(retry 3)" in notices[2] and notices[2].endswith("Interrupt the cell to stop waiting.")


def test_a_gateway_asking_to_wait_longer_than_architect_waits_is_told_at_once(
    server: OpenAIStubServer,
) -> None:
    server.queue(proxy_error(429, "Daily limit reached.", "None").with_(headers=(("retry-after", "3600"),)))
    with pytest.raises(LLMError) as raised:
        client(server).complete(USER, [])
    assert str(raised.value).startswith("The provider asks to wait 3600 s before calling gpt-4o-mini again")
    assert len(server.requests) == 1


def test_the_runs_of_a_kernel_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx loads the whole CA bundle for each client by default: 50 ms of CPU a run, 30 times in a class."""
    import certifi

    from architect_nb.agent.models.gateway import _tls

    first = _tls()
    assert _tls() is first
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())  # a CA setting changed in the kernel is followed
    assert _tls() is not first and _tls() is _tls()


def test_a_stream_cut_short_is_asked_again(server: OpenAIStubServer) -> None:
    server.queue(Reply.text("a long answer that breaks").with_(cut=True), Reply.text("whole"))
    notices: list[str] = []
    assert client(server).complete(USER, [], on_notice=notices.append).content == "whole"
    assert len(server.requests) == 2 and "asking again" in notices[0]


def test_a_gateway_that_is_down_is_retried_then_named() -> None:
    gateway = GatewayClient(LLMConfig(model="m", gateway=True, api_base="http://127.0.0.1:9/v1", retries=1))
    with pytest.raises(LLMError, match=r"could not be reached"):
        gateway.complete(USER, [])


def test_a_length_cut_mid_call_is_asked_again_with_more_room(server: OpenAIStubServer) -> None:
    server.queue(
        Reply.calls(("read_file", {"path": "a" * 40})).with_(finish="length"),
        Reply.calls(("read_file", {"path": "a" * 40})),
    )
    response = client(server, max_tokens=100).complete(USER, TOOLS)
    assert response.tool_calls[0].arguments == {"path": "a" * 40}
    assert server.requests[1]["max_tokens"] > server.requests[0]["max_tokens"] == 100


# --------------------------------------------------------------------------- no LiteLLM


def test_a_whole_run_through_the_gateway_never_imports_litellm(
    server: OpenAIStubServer, tmp_path: Path
) -> None:
    """In a fresh interpreter, as in a student's kernel: a run with a tool call, then `sys.modules`."""
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / ".architect.yaml").write_text(
        f"llm:\n  model: litellm_proxy/gpt-4o-mini\n  api_base: {server.url}\n"
    )
    server.queue(Reply.calls(("read_file", {"path": "notes.txt"})), Reply.text("It says hello."))
    program = textwrap.dedent(
        """
        import sys
        from pathlib import Path

        from architect_nb.agent import create_loop
        from architect_nb.config import load_config

        loop = create_loop(load_config(search_from=Path(sys.argv[1])), mode="yolo")
        result = loop.run("What is in notes.txt?")
        print(result.status, result.final_text, type(loop.llm).__name__)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "litellm"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status_line, modules = done.stdout.strip().splitlines()[-2:]
    assert status_line.split()[-1] == "GatewayClient" and "It says hello." in status_line
    assert modules == "[]"
    assert server.requests[-1]["messages"][-1]["role"] == "tool"


def test_a_stream_of_thinking_blocks_and_provider_fields_is_rebuilt_as_sent() -> None:
    """What a LiteLLM proxy streams for Claude (signed thinking, a redacted block) and Gemini (signatures)."""
    from architect_nb.agent.models.gateway_wire import StreamedAnswer
    from architect_nb.agent.models.reply_parsing import parse_reply

    def delta(**fields: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}

    streamed = StreamedAnswer()
    for chunk in (
        delta(thinking_blocks=[{"type": "thinking", "thinking": "First, "}]),
        delta(thinking_blocks=[{"type": "thinking", "thinking": "look."}]),
        delta(thinking_blocks=[{"type": "thinking", "signature": "sig-1"}]),
        delta(thinking_blocks=[{"type": "redacted_thinking", "data": "opaque"}]),
        delta(provider_specific_fields={"thought_signatures": ["ts-1"]}),
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "read_", "arguments": '{"pa'}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "file", "arguments": 'th": "a"}'}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}},
    ):
        streamed.add(chunk)
    reply = parse_reply(streamed.result())
    assert reply.extras["thinking_blocks"] == [
        {"type": "thinking", "thinking": "First, look.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    assert reply.extras["provider_specific_fields"] == {"thought_signatures": ["ts-1"]}
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c1", "read_file", {"path": "a"})]
    assert (reply.finish_reason, reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        "tool_calls",
        5,
        3,
    )
