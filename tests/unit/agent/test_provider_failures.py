"""Every way a provider fails, played by its own server in its own words, and how the run handles it.

Each case must leave a clear line in the cell (a warning, a failed call, the summary) and tell the model
what it needs: rate limits and overload are waited out (honouring `retry-after`, cancellable), a context
window exceeded is compressed and sent again, a refusal stops with the provider's words, a stalled stream
times out per `llm.timeout`, a stream cut short is asked again once, an answer cut at the length limit in
the middle of a call is asked again with more room, malformed arguments and unknown tools go back to the
model with what was wrong.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.events import AgentEvent, RunWarning
from architect_nb.notebook.output.render import RunOutput
from architect_nb.testing.stub_server import Reply
from tests.support.provider_matrix import (
    BY_NAME,
    EDIT,
    KEY_ENV,
    PROVIDERS,
    Provider,
    config_for,
    project,
    run_agent,
)

# Slow, left out of `make test-unit`: LiteLLM over HTTP against local provider servers; the retry waits
# and stalled streams are real time.
pytestmark = pytest.mark.slow

IDS = [p.name for p in PROVIDERS]
READ = ("read_file", {"path": "shop/cart.py"})


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-stub-0123456789")


def _warnings(events: list[AgentEvent]) -> list[str]:
    return [e.message for e in events if isinstance(e, RunWarning)]


def _said_to_model(body: dict[str, Any]) -> str:
    """Everything a request sends, as text (tool results included, in whatever shape the provider has)."""
    return json.dumps(body, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- waiting


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_rate_limit_is_waited_out_as_the_provider_asks(provider: Provider, tmp_path: Path) -> None:
    with provider.server() as server:
        server.queue(Reply.fail("rate_limit", retry_after=0.6), Reply.text("Done."))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Say done.")
    assert run.result.stop_reason == "completed", run.result.message
    gap = server.request_times[1] - server.request_times[0]
    (wait,) = [w for w in _warnings(run.events) if "rate limiting" in w]
    if provider.name == "ollama":  # Ollama says no time: exponential backoff
        assert "waiting" in wait and gap >= 0.3
    else:  # OpenAI's header and "try again in", Anthropic's header, Gemini's RetryInfo
        assert "waiting 0.6 s as the provider asked before retry 1 of 2" in wait, wait
        assert gap >= 0.6
    assert "Interrupt the cell to stop waiting." in wait


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_an_overloaded_provider_is_waited_out(provider: Provider, tmp_path: Path) -> None:
    with provider.server() as server:
        server.queue(Reply.fail("overloaded"), Reply.text("Done."))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Say done.")
    assert run.result.stop_reason == "completed", run.result.message
    (wait,) = [w for w in _warnings(run.events) if "overloaded" in w]
    status = {"anthropic": "529", "ollama": "503"}.get(provider.name, "503")
    assert "The provider is overloaded" in wait and status in wait, wait


def test_an_overload_that_lasts_says_so_after_the_retries(tmp_path: Path) -> None:
    provider = BY_NAME["anthropic"]
    with provider.server() as server:
        server.queue(*[Reply.fail("overloaded")] * 3)
        run = run_agent(config_for(provider, server, project(tmp_path), retries=2), "Say done.")
    assert run.result.stop_reason == "llm_error" and len(server.requests) == 3
    assert run.result.message.startswith("The provider of anthropic/claude-sonnet-4-5 is overloaded (")
    assert "after 2 retries" in run.result.message


@pytest.mark.parametrize("provider", [BY_NAME["anthropic"], BY_NAME["gemini"]], ids=["anthropic", "gemini"])
def test_the_wait_can_be_cancelled(provider: Provider, tmp_path: Path) -> None:
    with provider.server() as server:
        server.queue(Reply.fail("rate_limit", retry_after=30))
        config = config_for(provider, server, project(tmp_path))
        from architect_nb.agent import create_loop
        from architect_nb.agent.models.litellm_import import import_litellm

        import_litellm()  # its seconds of import are not the wait being timed
        events: list[AgentEvent] = []
        loop = create_loop(config, mode="yolo", on_event=events.append)
        timer = threading.Timer(0.5, loop.cancel)  # the person interrupts the cell while it waits
        started = time.monotonic()
        timer.start()
        result = loop.run("Say done.")
        timer.cancel()
    assert result.stop_reason == "interrupted" and time.monotonic() - started < 3
    assert any("waiting 30.0 s" in w for w in _warnings(events))


def test_a_wait_longer_than_architect_waits_fails_at_once(tmp_path: Path) -> None:
    provider = BY_NAME["openai"]
    with provider.server() as server:
        server.queue(Reply.fail("rate_limit", retry_after=3600))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Say done.")
    assert run.result.stop_reason == "llm_error" and len(server.requests) == 1
    assert "asks to wait 3600 s" in run.result.message and "try again later" in run.result.message


# ---------------------------------------------------------------------------------------------- context


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_context_window_exceeded_is_compressed_and_sent_again(provider: Provider, tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "big.txt").write_text("".join(f"line {n}: {'y' * 70}\n" for n in range(250)))
    reads = [Reply.calls(("read_file", {"path": "big.txt"}), thinking=f"Pass {n}.") for n in range(5)]
    with provider.server() as server:
        server.queue(
            *reads, Reply.fail("context_window"), Reply.text("Read it five times.", thinking="Done.")
        )
        run = run_agent(config_for(provider, server, root, **provider.thinking), "Read big.txt five times.")
    assert run.result.stop_reason == "completed", run.result.message
    assert any(w.startswith("Context compressed") for w in _warnings(run.events)), _warnings(run.events)
    refused, resent = server.requests[-2], server.requests[-1]
    assert len(_said_to_model(resent)) < 0.7 * len(_said_to_model(refused))
    assert server.problems == []  # the compressed conversation still pairs calls, results and thinking


def test_a_context_still_too_long_after_compressing_says_so(tmp_path: Path) -> None:
    provider = BY_NAME["openai"]
    root = project(tmp_path)
    (root / "big.txt").write_text("z" * 20_000)
    with provider.server() as server:
        reads = [Reply.calls(("read_file", {"path": "big.txt"}))] * 5
        server.queue(*reads, Reply.fail("context_window"), Reply.fail("context_window"))
        run = run_agent(config_for(provider, server, root), "Read big.txt five times.")
    assert run.result.stop_reason == "llm_error"
    message = run.result.message
    assert message.startswith(
        "The conversation is longer than openai/o4-mini's context window (400: This model's"
    )
    assert "compressed and sent again, and was still too long" in message


# ---------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("name", "reply", "words"),
    [
        ("anthropic", Reply.refusal("I can't help with that request."), "I can't help with that request."),
        (
            "openai",
            Reply.refusal("I'm sorry, I can't assist with that."),
            "I'm sorry, I can't assist with that.",
        ),
        ("openai", Reply.fail("refused"), "Your request was rejected as a result of our safety system."),
        ("openai-compatible", Reply.refusal("I won't do that."), "I won't do that."),
        ("gemini", Reply.refusal("Blocked."), "its content filter stopped the answer and gave no reason"),
        ("gemini", Reply.fail("refused"), "its content filter stopped the answer and gave no reason"),
    ],
    ids=[
        "anthropic-stop-reason",
        "openai-refusal-field",
        "openai-400",
        "compatible-refusal-field",
        "gemini-safety",
        "gemini-prompt-blocked",
    ],
)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_refusal_stops_with_the_providers_words(
    name: str, reply: Reply, words: str, stream: bool, tmp_path: Path
) -> None:
    if stream and reply.finish == "refusal" and name.startswith("openai"):
        pytest.skip("LiteLLM 1.110.2 drops the `refusal` delta of an OpenAI stream: the turn arrives empty")
    provider = BY_NAME[name]
    with provider.server() as server:
        server.queue(reply)
        run = run_agent(config_for(provider, server, project(tmp_path), stream=stream), "Do something bad.")
    assert run.result.stop_reason == "refused" and run.result.status == "failed"
    assert run.result.message == f"The provider refused to answer: {words}"
    assert len(server.requests) == 1  # not retried
    text = repr(RunOutput.from_payload(run.loop.transcript.to_payload()))
    assert f"failed: The provider refused to answer: {words} (stop reason: refused)" in text


# ---------------------------------------------------------------------------------------------- streams


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_stalled_stream_times_out_per_llm_timeout(provider: Provider, tmp_path: Path) -> None:
    with provider.server() as server:
        server.queue(Reply.text("Done, at last.").with_(stall=4), Reply.text("Done."))
        run = run_agent(config_for(provider, server, project(tmp_path), timeout=1, retries=1), "Say done.")
    assert run.result.stop_reason == "completed", run.result.message
    assert run.result.final_text == "Done."
    (wait,) = [w for w in _warnings(run.events) if "sent nothing" in w]
    assert wait.startswith("The model sent nothing for 1 s (llm.timeout); waiting"), wait
    assert 1 <= server.request_times[1] - server.request_times[0] < 3.5


def test_a_stream_that_keeps_stalling_says_so(tmp_path: Path) -> None:
    provider = BY_NAME["anthropic"]
    with provider.server() as server:
        server.queue(Reply.text("x").with_(stall=4), Reply.text("x").with_(stall=4))
        run = run_agent(config_for(provider, server, project(tmp_path), timeout=1, retries=1), "Say done.")
    assert run.result.stop_reason == "llm_error"
    assert run.result.message.startswith(
        "The model anthropic/claude-sonnet-4-5 sent nothing for 1 s (llm.timeout) after 1 retry; raise "
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_a_stream_cut_short_is_asked_again_once(provider: Provider, tmp_path: Path) -> None:
    answer = "Done: nothing needed changing in the cart."
    with provider.server() as server:
        server.queue(
            Reply.text(answer, thinking="Short.").with_(cut=True), Reply.text(answer, thinking="Short.")
        )
        run = run_agent(
            config_for(provider, server, project(tmp_path), **provider.thinking), "Check the cart."
        )
    assert run.result.stop_reason == "completed", run.result.message
    assert run.result.final_text == answer and len(server.requests) == 2
    assert any(w.startswith("The model's answer stopped before its end") for w in _warnings(run.events)), (
        _warnings(run.events)
    )
    shown = [e["text"] for e in run.loop.transcript.to_list() if e["kind"] == "text_delta"]
    assert "".join(shown) == answer  # what the cut answer had shown is not shown twice


def test_a_stream_cut_short_twice_says_so(tmp_path: Path) -> None:
    provider = BY_NAME["ollama"]
    with provider.server() as server:
        server.queue(
            Reply.text("Done, I think.").with_(cut=True), Reply.text("Done, I think.").with_(cut=True)
        )
        run = run_agent(config_for(provider, server, project(tmp_path)), "Say done.")
    assert run.result.stop_reason == "llm_error" and len(server.requests) == 2
    assert "stopped before its end after 1 retry (the connection closed early" in run.result.message


# ---------------------------------------------------------------------------------------------- length


def _max_tokens(provider: Provider, body: dict[str, Any]) -> int | None:
    if provider.name == "gemini":
        config = body.get("generationConfig", {})
        return config.get("maxOutputTokens", config.get("max_output_tokens"))
    if provider.name == "ollama":
        return body.get("options", {}).get("num_predict")
    return body.get("max_tokens") or body.get("max_completion_tokens")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_an_answer_cut_at_the_length_limit_mid_call_is_asked_again_with_more_room(
    provider: Provider, stream: bool, tmp_path: Path
) -> None:
    root = project(tmp_path)
    edit = Reply.calls(("edit_file", EDIT), thinking="Start the total from 0.0.").with_(
        completion_tokens=3000
    )
    with provider.server() as server:
        server.queue(edit.with_(finish="length"), edit, Reply.text("Done.", thinking="Edited."))
        run = run_agent(
            config_for(provider, server, root, stream=stream, **provider.thinking), "Fix the total."
        )
    assert run.result.stop_reason == "completed", run.result.message
    assert [(e.tool, e.status) for e in run.of("tool_result")] == [("edit_file", "ok")]
    assert "total = 0.0" in (root / "shop" / "cart.py").read_text()
    (notice,) = [w for w in _warnings(run.events) if "length limit" in w]
    assert "; asking again with room for " in notice, notice
    chats = [body for body in server.requests if "messages" in body or "contents" in body]
    first, again = (_max_tokens(provider, body) for body in chats[:2])
    assert again is not None and again > (first or 0) and again >= 6000
    # Both answers were billed: the cut one (its limit's worth) and the whole one.
    assert run.of("cost")[0].completion_tokens == (first or 3000) + 3000


@pytest.mark.parametrize("provider", [BY_NAME["anthropic"], BY_NAME["openai"]], ids=["anthropic", "openai"])
def test_an_answer_cut_mid_call_twice_tells_the_model_and_the_cell(
    provider: Provider, tmp_path: Path
) -> None:
    root = project(tmp_path)
    cut = Reply.calls(("edit_file", EDIT)).with_(completion_tokens=3000, finish="length")
    with provider.server() as server:
        server.queue(cut, cut, Reply.text("I will send smaller edits."))
        run = run_agent(config_for(provider, server, root, max_tokens=4096), "Fix the total.")
    assert run.result.stop_reason == "completed", run.result.message
    assert [_max_tokens(provider, b) for b in server.requests[:2]] == [
        4096,
        8192,
    ]  # asked again with twice the room
    assert "total = 0\n" in (root / "shop" / "cart.py").read_text()  # the cut call did not run
    (result,) = run.of("tool_result")
    assert result.status == "invalid" and "cut off at the length limit in the middle of this call" in (
        result.error or ""
    )
    assert "cut off at the length limit in the middle of this call" in _said_to_model(server.requests[-1])
    assert any("again; that call was not run" in w for w in _warnings(run.events))


# ---------------------------------------------------------------------------------------------- calls


@pytest.mark.parametrize("name", ["openai", "openai-compatible", "ollama"])
def test_malformed_arguments_are_sent_back_and_shown_raw(name: str, tmp_path: Path) -> None:
    provider = BY_NAME[name]
    root = project(tmp_path)
    broken = '{"path": "shop/cart.py", "old_str": "total = 0", "new_str": '
    if (
        name == "ollama"
    ):  # Ollama's API sends arguments as objects: a model writing its call as text breaks them
        first = Reply.text(f'<tool_call>{{"name": "edit_file", "arguments": {broken}</tool_call>')
    else:
        first = Reply.calls(("edit_file", broken))
    with provider.server() as server:
        server.queue(first, Reply.text("I will send valid JSON."))
        run = run_agent(config_for(provider, server, root), "Fix the total.")
    assert run.result.stop_reason == "completed", run.result.message
    (call,) = run.of("tool_call")
    (result,) = run.of("tool_result")
    assert result.status == "invalid" and "not valid JSON" in (result.error or "")
    told = _said_to_model(server.requests[-1])
    assert (
        "was not run: " in told
        and "not valid JSON" in told
        and "again with its arguments as one JSON object" in told
    )
    assert call.raw_arguments and broken.split('"new_str"', maxsplit=1)[0].strip() in call.raw_arguments
    html = RunOutput.from_payload(run.loop.transcript.to_payload()).html()
    assert (
        "The arguments as the model sent them" in html
        and "&quot;old_str&quot;: &quot;total = 0&quot;" in html
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=IDS)
def test_an_unknown_tool_is_answered_with_the_tools_there_are(provider: Provider, tmp_path: Path) -> None:
    with provider.server() as server:
        server.queue(Reply.calls(("deploy_to_production", {"env": "prod"})), Reply.text("I will not deploy."))
        run = run_agent(config_for(provider, server, project(tmp_path)), "Deploy it.")
    assert run.result.stop_reason == "completed", run.result.message
    (result,) = run.of("tool_result")
    assert result.status == "invalid"
    assert (result.error or "").startswith("There is no tool named 'deploy_to_production' in this run.")
    assert "The tools you can call: " in (result.error or "") and "read_file" in (result.error or "")
    assert "The tools you can call" in _said_to_model(server.requests[-1])


def test_a_tool_the_agent_is_not_offered_is_refused_even_if_registered(tmp_path: Path) -> None:
    """A plan agent is offered the read-only tools; a call to write_file must not write."""
    provider = BY_NAME["openai"]
    root = project(tmp_path)
    with provider.server() as server:
        server.queue(Reply.calls(("write_file", {"path": "new.py", "content": "x"})), Reply.text("Planned."))
        run = run_agent(config_for(provider, server, root), "Plan it.", agent="plan")
    assert not (root / "new.py").exists()
    (result,) = run.of("tool_result")
    assert "no tool named 'write_file' in this run" in (result.error or "")
    assert "grep, list_files, read_file" in (result.error or "")
