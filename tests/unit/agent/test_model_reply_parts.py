"""The pieces a model turn is read with: provider extras, calls written as text, arguments, failures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from architect_nb.agent.models.model_failures import Failure, classify, explain, provider_words, retry_after
from architect_nb.agent.models.model_reply import LLMResponse, ToolCall, make_call
from architect_nb.agent.models.provider_extras import (
    call_extras,
    message_extras,
    redacted_message,
    thinking_text,
    without_extras,
)
from architect_nb.agent.models.retry_policy import MAX_WAIT_S, RetryPolicy
from architect_nb.agent.models.text_tool_calls import find_text_calls, split_thinking
from architect_nb.redaction import Redactor

BLOCK = {"type": "thinking", "thinking": "Read a.py first.", "signature": "c2lnbmVk"}


def test_message_extras_keep_what_the_provider_attached_and_drop_litellm_copies() -> None:
    message = {
        "role": "assistant",
        "content": "Reading.",
        "thinking_blocks": [BLOCK],
        "reasoning_content": "Read a.py first.",
        # LiteLLM's stream builder leaves the last fragment here; the whole blocks are at the top level.
        "provider_specific_fields": {"thinking_blocks": [{"signature": "c2ln"}], "citations": None, "x": 1},
    }
    extras = message_extras(message)
    assert extras == {
        "thinking_blocks": [BLOCK],
        "reasoning_content": "Read a.py first.",
        "provider_specific_fields": {"x": 1},
    }
    json.dumps(extras)  # plain JSON: saved with the thread
    assert message_extras({"role": "assistant", "content": "hi", "provider_specific_fields": None}) == {}


def test_call_extras_merge_the_call_and_function_fields() -> None:
    call = {
        "id": "c1",
        "function": {
            "name": "read",
            "arguments": "{}",
            "provider_specific_fields": {"thought_signature": "sig"},
        },
        "provider_specific_fields": {"other": "x", "empty": None},
    }
    assert call_extras(call) == {"provider_specific_fields": {"thought_signature": "sig", "other": "x"}}
    assert call_extras({"id": "c2", "function": {"name": "read"}}) == {}


def test_extras_go_back_in_the_messages_built_from_a_turn() -> None:
    call = make_call(
        "c1", "read_file", '{"path": "a.py"}', {"provider_specific_fields": {"thought_signature": "s"}}
    )
    turn = LLMResponse("Reading.", [call], extras={"thinking_blocks": [BLOCK]})
    message = turn.to_message()
    assert message["thinking_blocks"] == [BLOCK]
    assert message["tool_calls"][0]["provider_specific_fields"] == {"thought_signature": "s"}
    assert turn.thinking == "Read a.py first."
    assert without_extras(message) == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    }


def test_thinking_text_names_encrypted_thinking_and_falls_back_to_reasoning() -> None:
    assert thinking_text({"thinking_blocks": [BLOCK, {"type": "redacted_thinking", "data": "xyz"}]}) == (
        "Read a.py first.\n\n[thinking the provider keeps encrypted]"
    )
    assert thinking_text({"reasoning_content": "  plain  "}) == "plain"
    assert thinking_text({}) == ""


def test_a_message_saved_keeps_its_extras_only_if_redaction_leaves_them_alone() -> None:
    redactor = Redactor({"DEPLOY_TOKEN": "tok-1234567890"})
    clean = {"role": "assistant", "content": "tok-1234567890 was used", "thinking_blocks": [BLOCK]}
    saved = redacted_message(clean, redactor.redact_data)
    assert saved["content"] == "[REDACTED:DEPLOY_TOKEN] was used" and saved["thinking_blocks"] == [BLOCK]
    leaky = {**clean, "thinking_blocks": [{**BLOCK, "thinking": "the token is tok-1234567890"}]}
    saved = redacted_message(leaky, redactor.redact_data)
    assert "thinking_blocks" not in saved and "tok-1234567890" not in json.dumps(saved)


@pytest.mark.parametrize(
    ("raw", "arguments", "problem"),
    [
        ('{"path": "a.py"}', {"path": "a.py"}, None),
        ('"{\\"path\\": \\"a.py\\"}"', {"path": "a.py"}, None),  # encoded twice, as some local models send
        ("", {}, None),
        ('{"path": ', {}, "not valid JSON (Expecting value at character 9)"),
        ('["a.py"]', {}, "must be a JSON object of named arguments, not a JSON array"),
        ('"a.py"', {}, "not a JSON string"),
    ],
)
def test_arguments_are_read_or_refused_never_guessed(
    raw: str, arguments: dict[str, Any], problem: str | None
) -> None:
    call = make_call("c1", "read_file", raw)
    assert call.arguments == arguments and call.raw_arguments == raw
    assert (call.parse_error is None) if problem is None else (problem in (call.parse_error or ""))


def test_hermes_and_qwen_tool_calls_written_as_text() -> None:
    text = (
        "I'll read it.\n<tool_call>\n"
        '{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n'
        '<tool_call>{"name": "grep", "parameters": {"pattern": "x"}}</tool_call>'
    )
    rest, calls = find_text_calls(text)
    assert rest == "I'll read it."
    assert [(c.name, json.loads(c.arguments), c.problem) for c in calls] == [
        ("read_file", {"path": "a.py"}, None),
        ("grep", {"pattern": "x"}, None),
    ]


def test_qwen3_coder_calls_fenced_calls_and_broken_ones() -> None:
    coder = (
        "<tool_call>\n<function=edit_file>\n<parameter=path>\na.py\n</parameter>\n"
        "<parameter=count>\n2\n</parameter>\n</function>\n</tool_call>"
    )
    assert [(c.name, json.loads(c.arguments)) for c in find_text_calls(coder)[1]] == [
        ("edit_file", {"path": "a.py", "count": 2})
    ]
    fenced = (
        '<tool_call>```json\n{"name": "read_file", "arguments": "{\\"path\\": \\"b.py\\"}"}\n```</tool_call>'
    )
    assert [(c.name, c.arguments) for c in find_text_calls(fenced)[1]] == [("read_file", '{"path": "b.py"}')]
    cut = '<tool_call>{"name": "write_file", "arguments": {"path": "c.py", "content": "print('
    (call,) = find_text_calls(cut)[1]
    assert call.name == "write_file" and call.problem and "not valid JSON" in call.problem
    assert find_text_calls("no calls here") == ("no calls here", [])


def test_thinking_left_in_the_text_is_taken_out() -> None:
    assert split_thinking("<think>\nplan it\n</think>\n\nThe answer.") == ("plan it", "The answer.")
    assert split_thinking("planning, opened by the template</think>Answer") == (
        "planning, opened by the template",
        "Answer",
    )
    assert split_thinking("<think>cut off while thinking") == ("cut off while thinking", "")
    assert split_thinking("plain answer") == ("", "plain answer")


def test_provider_words_come_out_of_litellm_exception_text() -> None:
    body = '{"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}'
    text = f"litellm.RateLimitError: AnthropicException - {body}"
    assert provider_words(text) == "Slow down"
    assert provider_words("litellm.APIError: APIError: OpenAIException - Overloaded") == "Overloaded"
    assert provider_words(
        'GeminiException - {"error": {"code": 503, "message": "The model is overloaded."}}'
    ) == ("The model is overloaded.")


class _StatusError(Exception):
    def __init__(self, text: str, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(text)
        self.status_code = status
        self.litellm_response_headers = headers


class RateLimitError(_StatusError):
    pass


class InternalServerError(_StatusError):
    pass


def test_retry_after_is_read_wherever_the_provider_says_it() -> None:
    assert retry_after(RateLimitError("x", 429, {"retry-after": "7"})) == 7
    assert retry_after(RateLimitError("x", 429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after(RateLimitError('{"retryDelay": "3s"}', 429)) == 3
    assert retry_after(RateLimitError("Please try again in 20ms.", 429)) == pytest.approx(0.02)
    assert retry_after(RateLimitError("no hint", 429)) is None


def test_classify_tells_overloaded_from_other_server_errors() -> None:
    assert (
        classify(
            InternalServerError('{"error": {"type": "overloaded_error", "message": "Overloaded"}}', 500)
        ).kind
        == "overloaded"
    )
    assert classify(InternalServerError("boom", 500)).kind == "server"
    assert classify(RateLimitError("slow", 429, {"retry-after": "2"})) == Failure(
        "rate_limit", "RateLimitError", 429, "slow", 2.0
    )


def test_the_policy_honours_retry_after_and_stops_at_its_limits() -> None:
    policy = RetryPolicy(retries=2, timeout=60)
    assert policy.wait(Failure("rate_limit", "RateLimitError", 429, "slow", 3.0)) == 3.0
    assert "waiting 3.0 s as the provider asked before retry 1 of 2" in policy.notice(
        Failure("rate_limit", "RateLimitError", 429, "slow", 3.0), 3.0
    )
    assert policy.wait(Failure("rate_limit", "RateLimitError", 429, "slow", MAX_WAIT_S + 1)) is None
    assert policy.wait(Failure("auth", "AuthenticationError", 401, "bad key")) is None
    assert policy.wait(Failure("overloaded", "APIError", 529, "Overloaded")) is not None
    assert policy.wait(Failure("overloaded", "APIError", 529, "Overloaded")) is None  # two retries made
    once = RetryPolicy(retries=3, timeout=60)
    assert once.wait(Failure("cut_short", "APIConnectionError", None, "peer closed")) is not None
    assert once.wait(Failure("cut_short", "APIConnectionError", None, "peer closed")) is None  # once only
    long_wait = Failure("rate_limit", "RateLimitError", 429, "quota", 3600.0)
    assert "asks to wait 3600 s" in explain(long_wait, "m", timeout=60, retried=0, max_wait=MAX_WAIT_S)


def test_a_tool_call_message_carries_its_extras_first_and_its_own_fields_last() -> None:
    call = ToolCall("c1", "read", {"a": 1}, extras={"id": "spoofed", "provider_specific_fields": {"k": "v"}})
    message = call.to_message()
    assert message["id"] == "c1" and message["provider_specific_fields"] == {"k": "v"}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1000])
def test_live_text_shows_thinking_as_thinking_and_no_call_as_text(size: int) -> None:
    from architect_nb.agent.models.text_tool_calls import LiveText

    answer = (
        '<think>plan: read a.py</think>\nReading it.\n<tool_call>{"name": "read_file", '
        '"arguments": {"path": "a.py"}}</tool_call>\nThen I will say < and > freely.'
    )
    text: list[str] = []
    thought: list[str] = []
    live = LiveText(text.append, thought.append)
    for start in range(0, len(answer), size):  # the pieces a stream could bring
        live(answer[start : start + size])
    live.close()
    assert "".join(thought) == "plan: read a.py"
    assert "".join(text) == "\nReading it.\n\nThen I will say < and > freely."


def test_live_text_passes_an_ordinary_answer_through() -> None:
    from architect_nb.agent.models.text_tool_calls import LiveText

    text: list[str] = []
    live = LiveText(text.append, lambda _: pytest.fail("no thinking here"))
    for piece in ("  <b>bold</b> and <thin", "k about it>"):
        live(piece)
    live.close()
    assert "".join(text) == "  <b>bold</b> and <think about it>"
