"""Prompt caching over HTTP: cache markers for Claude models (checked by a server speaking Anthropic's
Messages API, which caches as Anthropic does), cached-token counts from OpenAI- and Anthropic-style usage,
priced at the cached rates, and the run's cost line saying how much the cache served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent import AgentLoop, LiteLLMClient, LLMError, resolve_agent
from architect_nb.agent.events import AgentEvent, CostUpdate, RunFinished
from architect_nb.agent.models.litellm_import import import_litellm
from architect_nb.agent.models.prompt_cache import needs_markers, with_markers
from architect_nb.config import LLMConfig, load_config
from architect_nb.execution.build import build_engine
from architect_nb.notebook.output.render import RunOutput, summary_html
from architect_nb.testing.anthropic_server import AnthropicStubServer
from architect_nb.testing.openai_server import OpenAIStubServer, Reply

CLAUDE = "anthropic/claude-sonnet-4-5"
MODULE = "".join(
    f"def helper_{n}(x):\n    return x * {n}  # part of a module worth caching\n" for n in range(60)
)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-0123456789")


def _run(tmp_path: Path, llm: LiteLLMClient, replies: int) -> tuple[Any, list[AgentEvent]]:
    (tmp_path / "mod.py").write_text(MODULE)
    config = load_config(overrides={"workspace.root": str(tmp_path)}, environ={})
    events: list[AgentEvent] = []
    loop = AgentLoop(
        build_engine(config, mode="yolo"), llm, resolve_agent("build", config), on_event=events.append
    )
    return loop.run("Read mod.py a few times, then say done."), events


def _claude(server: AnthropicStubServer, *, markers: bool = True, stream: bool = True) -> LiteLLMClient:
    config = LLMConfig(model=CLAUDE, api_base=server.url, api_key_env="STUB_API_KEY", stream=stream)
    return LiteLLMClient(config, cache_markers=markers)


def _breakpoints(body: dict[str, Any]) -> list[str]:
    """Where the request's cache_control markers are: 'tools', 'system', or 'message N'."""
    found = ["tools" for tool in body.get("tools", []) if tool.get("cache_control")]
    found += ["system" for block in body.get("system", []) if block.get("cache_control")]
    for n, message in enumerate(body["messages"]):
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        found += [
            f"message {n}" for block in blocks if isinstance(block, dict) and block.get("cache_control")
        ]
    return found


@pytest.mark.parametrize("stream", [True, False])
def test_claude_requests_mark_the_stable_prefix_and_read_it_from_the_cache(
    tmp_path: Path, stream: bool
) -> None:
    steps = 5
    with AnthropicStubServer() as server:
        server.queue(
            *[Reply.calls(("read_file", {"path": "mod.py"}), content=f"Step {i}.") for i in range(steps)]
        )
        server.queue(Reply.text("done"))
        result, events = _run(tmp_path, _claude(server, stream=stream), steps + 1)
    assert result.status == "success", result.message
    assert len(server.requests) == steps + 1
    for n, body in enumerate(server.requests):
        marks = _breakpoints(body)
        last = f"message {len(body['messages']) - 1}"
        assert "system" in marks and last in marks and len(marks) <= 4, (n, marks)
        assert all(not block.get("cache_control") for block in body["tools"])
    first, *later = server.cache_use
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
    # From the second request on, everything up to the previous request's end comes from the cache.
    for use in later:
        assert use.cache_read_input_tokens > 0 and use.input_tokens < 100, use
    costs = [e for e in events if isinstance(e, CostUpdate)]
    assert [c.cached_tokens for c in costs] == [u.cache_read_input_tokens for u in server.cache_use]
    finished = next(e for e in events if isinstance(e, RunFinished))
    cached = sum(u.cache_read_input_tokens for u in server.cache_use)
    assert finished.total_cached_tokens == cached == costs[-1].total_cached_tokens > 0
    # Priced as LiteLLM prices the cached rates: reads at a tenth of the input price, writes at 1.25x.
    litellm = import_litellm()
    expected = 0.0
    for use, cost in zip(server.cache_use, costs, strict=True):
        prompt = use.input_tokens + use.cache_read_input_tokens + use.cache_creation_input_tokens
        assert cost.prompt_tokens == prompt
        expected += sum(
            litellm.cost_per_token(
                model=CLAUDE,
                prompt_tokens=prompt,
                completion_tokens=cost.completion_tokens,
                cache_read_input_tokens=use.cache_read_input_tokens,
                cache_creation_input_tokens=use.cache_creation_input_tokens,
            )
        )
    assert finished.total_cost_usd == pytest.approx(expected)
    html = RunOutput.from_payload(result.transcript.to_payload()).html()
    assert f"{finished.total_tokens:,} tokens, {cached:,} cached" in html


def test_without_markers_nothing_is_cached_and_the_run_costs_more(tmp_path: Path) -> None:
    totals = {}
    for markers in (True, False):
        folder = tmp_path / str(markers)
        folder.mkdir()
        with AnthropicStubServer() as server:
            server.queue(
                *[Reply.calls(("read_file", {"path": "mod.py"})) for _ in range(6)], Reply.text("done")
            )
            result, _ = _run(folder, _claude(server, markers=markers), 7)
        assert result.status == "success"
        totals[markers] = result.cost_usd
        if not markers:
            assert all(_breakpoints(body) == [] for body in server.requests)
            assert all(u.cache_read_input_tokens == 0 for u in server.cache_use)
    assert totals[True] < totals[False] * 0.6


def test_the_anthropic_server_refuses_more_than_four_markers() -> None:
    marker = {"type": "ephemeral"}
    messages = [{"role": "user", "content": f"part {n}", "cache_control": marker} for n in range(5)]
    config = LLMConfig(model=CLAUDE, api_key_env="STUB_API_KEY", stream=False, retries=0)
    with AnthropicStubServer() as server:
        server.queue(Reply.text("never sent"))
        client = LiteLLMClient(config.model_copy(update={"api_base": server.url}), cache_markers=False)
        with pytest.raises(LLMError, match="maximum of 4 blocks with cache_control"):
            client.complete(messages, [])


@pytest.mark.parametrize("stream", [True, False])
def test_openai_cached_tokens_are_read_and_priced_at_the_cached_rate(stream: bool) -> None:
    model = "openai/gpt-4o-mini"
    config = LLMConfig(model=model, api_key_env="STUB_API_KEY", stream=stream)
    with OpenAIStubServer() as server:
        server.queue(Reply(content="hi", prompt_tokens=12_400, completion_tokens=10, cached_tokens=9_800))
        client = LiteLLMClient(config.model_copy(update={"api_base": server.url}))
        response = client.complete([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], [])
    usage = response.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.cache_write_tokens) == (12_400, 9_800, 0)
    # gpt-4o-mini: $0.15 per million input tokens, half that when cached; $0.60 per million output tokens.
    assert usage.cost_usd == pytest.approx(2_600 * 0.15e-6 + 9_800 * 0.075e-6 + 10 * 0.6e-6)
    assert all(_breakpoints_openai(body) == 0 for body in server.requests)  # OpenAI caches on its own


def _breakpoints_openai(body: dict[str, Any]) -> int:
    return json.dumps(body).count("cache_control")


def test_markers_are_added_to_copies_and_only_where_providers_need_them() -> None:
    messages = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "tool", "tool_call_id": "1", "content": "result"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "2"}]},
        {"role": "tool", "tool_call_id": "2", "content": "result 2"},
    ]
    before = json.dumps(messages)
    marked = with_markers(messages)
    assert json.dumps(messages) == before
    assert [i for i, m in enumerate(marked) if "cache_control" in m] == [0, 3, 5]
    assert marked[1] is messages[1] and marked[3] is not messages[3]
    assert with_markers([]) == []
    for model, needs in [
        (CLAUDE, True),
        ("claude-3-5-haiku-latest", True),
        ("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("vertex_ai/claude-sonnet-4-5", True),
        ("openrouter/anthropic/claude-sonnet-4.5", True),
        ("gpt-4o-mini", False),
        ("openai/gpt-4.1", False),
        ("bedrock/amazon.nova-pro-v1:0", False),
        ("ollama/qwen2.5-coder", False),
        ("scripted/quickstart.yaml", False),
    ]:
        assert needs_markers(model) is needs, model


def test_the_cost_line_says_how_many_tokens_were_cached() -> None:
    finished = {"status": "success", "steps": 3, "total_tokens": 12_400, "total_cached_tokens": 9_800}
    assert "12,400 tokens, 9,800 cached" in summary_html(finished)
    assert "12,400 tokens ·" in summary_html({**finished, "total_cached_tokens": 0})
