"""What a provider attaches goes back to it unchanged, over HTTP through LiteLLM, on each provider's wire.

For Anthropic (signed thinking blocks), Gemini (thought signatures), OpenAI (reasoning tokens only), an
OpenAI-compatible server that wants its `reasoning_content` back (as DeepSeek does) and Ollama (`thinking`),
a three-step tool run with thinking on passes while the server checks every request it gets; the thinking is
shown, counted and priced; and it comes back in a follow-up run, in a thread saved and loaded from disk, in a
fork, and after the conversation was compressed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent import AgentLoop, LiteLLMClient, resolve_agent
from architect_nb.agent.conversation.context import ContextBuilder
from architect_nb.agent.conversation.thread_store import ThreadStore
from architect_nb.agent.models.litellm_import import import_litellm
from architect_nb.execution.build import build_engine
from architect_nb.notebook.output.render import RunOutput
from architect_nb.redaction import default_redactor
from architect_nb.testing.anthropic_server import AnthropicStubServer
from architect_nb.testing.stub_server import Reply
from tests.support.provider_matrix import (
    EDIT,
    KEY_ENV,
    PROVIDERS,
    THOUGHTS,
    Provider,
    config_for,
    project,
    run_agent,
    three_steps,
)

# Slow, left out of `make test-unit`: LiteLLM over HTTP against local provider servers, several steps per run.
pytestmark = pytest.mark.slow

IDS = [p.name for p in PROVIDERS]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-stub-0123456789")


def _asked_to_think(provider: Provider, body: dict[str, Any]) -> bool:
    """Whether the request carries the thinking setting, in the provider's own words."""
    if provider.name == "anthropic":
        return body.get("thinking") == {"type": "enabled", "budget_tokens": 2048}
    if provider.name == "gemini":
        return bool(body.get("generationConfig", {}).get("thinkingConfig", {}).get("includeThoughts"))
    if provider.name == "ollama":
        return body.get("think") is True
    return body.get("reasoning_effort") == provider.thinking["reasoning_effort"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_three_step_tool_run_with_thinking(provider: Provider, stream: bool, tmp_path: Path) -> None:
    root = project(tmp_path)
    with provider.server() as server:
        server.queue(*three_steps(completion_tokens=40, reasoning_tokens=12))
        config = config_for(provider, server, root, stream=stream, **provider.thinking)
        run = run_agent(config, "Make Cart.total() return a float for an empty cart.")
    assert run.result.stop_reason == "completed", run.result.message
    assert run.result.final_text == "Done: Cart.total() now starts from 0.0."
    assert "total = 0.0" in (root / "shop" / "cart.py").read_text()
    assert [(e.tool, e.status) for e in run.of("tool_result")] == [
        ("read_file", "ok"),
        ("edit_file", "ok"),
        ("grep", "ok"),
    ]
    assert server.problems == []
    assert all(
        _asked_to_think(provider, body)
        for body in server.requests
        if body.get("messages") or body.get("contents")
    )
    if provider.shows_thinking:
        assert run.thinking == list(THOUGHTS)  # shown, one view per step
        # Each request sends back every earlier turn's thinking: 1 + 2 + 3 turns, checked by the server.
        assert provider.checked(server) == 6
    else:
        assert run.thinking == []
    # Thinking tokens are counted (reported by the server, or estimated from the text where it says none) ...
    costs = run.of("cost")
    assert len(costs) == 4 and all(0 < c.reasoning_tokens <= c.completion_tokens for c in costs)
    finished = run.of("run_finished")[0]
    assert finished.total_reasoning_tokens == sum(c.reasoning_tokens for c in costs) > 0
    # ... and priced as output: the cost is LiteLLM's price of all the output tokens, thinking included.
    if provider.name in ("anthropic", "gemini", "openai"):
        litellm = import_litellm()
        written = [u.cache_creation_input_tokens for u in getattr(server, "cache_use", ())] or [0] * 4
        for cost, write in zip(costs, written, strict=True):
            expected = sum(
                litellm.cost_per_token(
                    model=provider.model,
                    prompt_tokens=cost.prompt_tokens,
                    completion_tokens=cost.completion_tokens,
                    cache_read_input_tokens=cost.cached_tokens,
                    cache_creation_input_tokens=write,
                )
            )
            assert cost.priced and cost.cost_usd == pytest.approx(expected) and cost.cost_usd > 0


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_thread_saved_loaded_and_forked_sends_the_extras_back(provider: Provider, tmp_path: Path) -> None:
    root = project(tmp_path)
    store = ThreadStore(tmp_path / "threads")
    with provider.server() as server:
        config = config_for(provider, server, root, **provider.thinking)
        server.queue(*three_steps(completion_tokens=40))
        first = run_agent(config, "Make Cart.total() return a float.")
        assert first.result.stop_reason == "completed", first.result.message
        thread = first.result.thread
        store.save(thread)
        saved = [
            json.loads(line)
            for line in (tmp_path / "threads" / f"{thread.id}.jsonl").read_text().splitlines()
        ]
        said = [
            m
            for line in saved
            if line["kind"] == "messages"
            for m in line["messages"]
            if m["role"] == "assistant"
        ]
        _assert_extras_saved(provider, said)

        loaded = store.load(thread.id)
        assert loaded.messages == thread.messages  # the extras survive the disk unchanged
        before = provider.checked(server)
        server.queue(Reply.text("It returns 0.0 for an empty cart.", thinking="Nothing to change this time."))
        follow_up = run_agent(config, "What does total() return now?", thread=loaded)
        assert follow_up.result.stop_reason == "completed", follow_up.result.message
        if provider.shows_thinking:  # the four earlier turns came back, each with what it had
            assert provider.checked(server) - before == 4

        fork = loaded.fork(first.result.run_id, 2, name="what-if")
        before = provider.checked(server)
        server.queue(Reply.text("Forked: done after the edit.", thinking="The fork carries on after step 2."))
        carried = run_agent(config, "", thread=fork)
        assert carried.result.stop_reason == "completed", carried.result.message
        if provider.shows_thinking:  # the fork's two turns
            assert provider.checked(server) - before == 2
    assert server.problems == []


def _assert_extras_saved(provider: Provider, said: list[dict[str, Any]]) -> None:
    """The thread file holds what the provider attached to each turn."""
    assert len(said) == 4
    if provider.name == "anthropic":
        blocks = [m["thinking_blocks"][0] for m in said]
        assert [b["thinking"] for b in blocks] == list(THOUGHTS) and all(b["signature"] for b in blocks)
    elif provider.name == "gemini":
        signatures = [m["tool_calls"][0]["provider_specific_fields"]["thought_signature"] for m in said[:3]]
        assert len(set(signatures)) == 3
        assert said[3]["provider_specific_fields"]["thought_signatures"]  # the final answer's text was signed
    elif provider.name in ("openai-compatible", "ollama"):
        assert [m["reasoning_content"] for m in said] == list(THOUGHTS)
    else:
        assert all(not {"thinking_blocks", "reasoning_content"} & m.keys() for m in said)


def test_compression_never_parts_a_thinking_block_from_its_calls(tmp_path: Path) -> None:
    """With a small window, old steps are summarized while the run goes on; Anthropic's server refuses any
    request whose last tool-use turn lost its thinking, and checks every signature that comes back."""
    root = project(tmp_path)
    (root / "big.txt").write_text("".join(f"line {n}: {'x' * 60}\n" for n in range(300)))
    with AnthropicStubServer() as server:
        steps = [
            Reply.calls(("read_file", {"path": "big.txt"}), thinking=f"Reading it again, pass {n}.")
            for n in range(6)
        ]
        server.queue(*steps, Reply.text("Read it six times.", thinking="That is enough."))
        config = config_for(PROVIDERS[0], server, root, thinking=2048)
        engine = build_engine(config, mode="yolo")
        llm = LiteLLMClient(config.llm, context_window=9000)
        context = ContextBuilder(keep_recent_steps=2)
        loop = AgentLoop(engine, llm, resolve_agent("build", config), context=context)
        result = loop.run("Read big.txt six times.")
    assert result.stop_reason == "completed", result.message
    warnings = [e.message for e in loop.transcript.events if e.kind == "warning"]
    assert any(w.startswith("Context compressed (summarized") for w in warnings), warnings
    assert server.problems == []
    last = server.requests[-1]["messages"]
    assert any("[Summary of" in str(m["content"]) for m in last)  # older steps were summarized away
    kept = [m for m in last if m["role"] == "assistant"]
    assert kept and all(m["content"][0]["type"] == "thinking" for m in kept)
    assert server.thinking_checked >= 6


def test_a_secret_in_the_thinking_is_shown_redacted_and_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signed block goes back as it came (the model wrote it); the cell's HTML shows it redacted, and the
    thread file keeps that turn without its thinking rather than with a broken signature."""
    secret = "tok-77f1e2d3c4b5a697"
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    default_redactor().refresh()
    try:
        root = project(tmp_path)
        with AnthropicStubServer() as server:
            thought = f"The deploy token is {secret}; I must not print it. Reading the cart."
            server.queue(
                Reply.calls(("read_file", {"path": "shop/cart.py"}), thinking=thought),
                Reply.text("Read it.", thinking="Done reading."),
            )
            config = config_for(PROVIDERS[0], server, root, thinking=2048)
            run = run_agent(config, "Read the cart.")
        assert run.result.stop_reason == "completed", run.result.message
        assert server.problems == [] and server.thinking_checked == 1  # it went back intact and verified
        html = RunOutput.from_payload(run.loop.transcript.to_payload()).html()
        assert secret not in html and "[REDACTED:DEPLOY_TOKEN]" in html
        assert "<details" in html and "Thinking (" in html
        store = ThreadStore(tmp_path / "threads")
        store.save(run.result.thread)
        text = (tmp_path / "threads" / f"{run.result.thread.id}.jsonl").read_text()
        assert secret not in text
        loaded = store.load(run.result.thread.id)
        first, second = [m for m in loaded.messages if m["role"] == "assistant"]
        assert "thinking_blocks" not in first and second["thinking_blocks"][0]["thinking"] == "Done reading."
    finally:
        monkeypatch.delenv("DEPLOY_TOKEN")
        default_redactor().refresh()


def test_the_edit_call_arguments_reach_the_tool_unchanged_everywhere() -> None:
    """The fixture's edit must match the sample project, or the runs above would not edit anything."""
    cart = Path(__file__).resolve().parents[3] / "notebooks" / "sample_project" / "shop" / "cart.py"
    assert cart.read_text().count(EDIT["old_str"]) == 1


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_encrypted_thinking_goes_back_as_it_came(stream: bool, tmp_path: Path) -> None:
    """Claude's `redacted_thinking` (thinking its safety systems encrypted) is opaque: it goes back whole."""
    root = project(tmp_path)
    with AnthropicStubServer() as server:
        hidden = Reply.calls(("read_file", {"path": "shop/cart.py"}), thinking="kept from view").with_(
            encrypted=True
        )
        server.queue(hidden, Reply.text("Read it.", thinking="Done."))
        run = run_agent(
            config_for(PROVIDERS[0], server, root, stream=stream, thinking=2048), "Read the cart."
        )
    assert run.result.stop_reason == "completed", run.result.message
    assert server.problems == [] and server.thinking_checked == 1
    first = next(m for m in run.result.messages if m["role"] == "assistant")
    assert [b["type"] for b in first["thinking_blocks"]] == ["redacted_thinking"]
    assert run.thinking == ["[thinking the provider keeps encrypted]", "Done."]  # said, never shown
