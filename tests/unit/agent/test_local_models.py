"""Local models: an Ollama model through `ollama_chat/` end to end, and tool calls a model writes as text.

Models served by Ollama, vLLM or llama.cpp without a tool parser for their template write the call into
their answer (Hermes / Qwen `<tool_call>` JSON, Qwen3-Coder's `<function=...>` form) and may leave their
`<think>` in the text; the run reads them as calls and thinking, and sends the calls back as calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from architect_nb.agent import LiteLLMClient
from architect_nb.config import LLMConfig
from architect_nb.notebook.output.render import RunOutput
from architect_nb.testing.ollama_server import OllamaStubServer
from architect_nb.testing.stub_server import Reply
from tests.support.provider_matrix import BY_NAME, KEY_ENV, config_for, project, run_agent

HERMES = (
    'I will read the cart.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "shop/cart.py"}}\n'
    "</tool_call>"
)
CODER = (
    "<tool_call>\n<function=grep>\n<parameter=pattern>\ntotal = \n</parameter>\n"
    "<parameter=path>\nshop\n</parameter>\n</function>\n</tool_call>"
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-stub-0123456789")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_an_ollama_model_writing_hermes_calls_runs_them(stream: bool, tmp_path: Path) -> None:
    provider = BY_NAME["ollama"]
    with provider.server() as server:
        server.queue(Reply.text(HERMES), Reply.text(CODER), Reply.text("The cart sums price times quantity."))
        run = run_agent(
            config_for(provider, server, project(tmp_path), stream=stream), "How is the total made?"
        )
    assert run.result.stop_reason == "completed", run.result.message
    assert [(e.tool, e.arguments) for e in run.of("tool_call")] == [
        ("read_file", {"path": "shop/cart.py"}),
        ("grep", {"pattern": "total = ", "path": "shop"}),
    ]
    assert [e.status for e in run.of("tool_result")] == ["ok", "ok"]
    # The calls went back as Ollama tool calls (arguments as objects: the server refuses strings), each with
    # its result; the text around them stays as what the model said.
    chats = [b for b in server.requests if "messages" in b]
    turn = [m for m in chats[1]["messages"] if m["role"] == "assistant"][-1]
    assert turn["content"] == "I will read the cart."
    assert turn["tool_calls"][0]["function"] == {"name": "read_file", "arguments": {"path": "shop/cart.py"}}
    assert chats[1]["messages"][-1]["role"] == "tool" and "class Cart" in chats[1]["messages"][-1]["content"]
    assert server.problems == [] and server.shown  # LiteLLM asked /api/show about the model
    text = repr(RunOutput.from_payload(run.loop.transcript.to_payload()))
    assert "I will read the cart." in text and "<tool_call>" not in text


def test_thinking_left_in_the_text_by_a_compatible_server_is_shown_as_thinking(tmp_path: Path) -> None:
    provider = BY_NAME["openai"]
    with provider.server() as server:
        server.queue(Reply.text("<think>\nThe user wants a one-word answer.\n</think>\n\nDone."))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Say done.")
    assert run.result.final_text == "Done."
    assert [t.strip() for t in run.thinking] == ["The user wants a one-word answer."]


def test_the_context_window_of_an_ollama_model_is_what_its_server_says(tmp_path: Path) -> None:
    with OllamaStubServer(context_length=32768) as server:
        client = LiteLLMClient(LLMConfig(model="ollama_chat/qwen3", api_base=server.url))
        assert client.context_window() == 32768
        assert server.shown == ["qwen3"]


@pytest.mark.parametrize(
    ("capabilities", "llm", "said"),
    [
        (("completion", "tools"), {"reasoning_effort": "medium"}, "Leave out --think"),
        (("completion", "thinking"), {}, "cannot call tools"),
    ],
    ids=["no-thinking", "no-tools"],
)
def test_an_ollama_model_that_cannot_do_what_is_asked_says_so(
    capabilities: tuple[str, ...], llm: dict[str, str], said: str, tmp_path: Path
) -> None:
    with OllamaStubServer(capabilities=capabilities) as server:
        run = run_agent(config_for(BY_NAME["ollama"], server, project(tmp_path), **llm), "Say done.")
    assert run.result.stop_reason == "llm_error" and said in run.result.message, run.result.message
    assert len([b for b in server.requests if "messages" in b]) == 1  # not retried


def test_arguments_the_server_sends_as_a_json_string_twice_encoded_are_read(tmp_path: Path) -> None:
    """Some OpenAI-compatible servers encode a local model's arguments twice ('"{\\"path\\": ...}"')."""
    provider = BY_NAME["openai-compatible"]
    with provider.server() as server:
        twice = json.dumps(json.dumps({"path": "shop/cart.py"}))
        server.queue(Reply.calls(("read_file", twice)), Reply.text("Read."))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Read the cart.")
    assert [e.status for e in run.of("tool_result")] == ["ok"], run.result.message
