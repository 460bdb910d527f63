"""A server speaking OpenAI's Chat Completions API on 127.0.0.1, as OpenAI and compatible servers answer it.

`POST /v1/chat/completions`, as one JSON body or as a stream of `chat.completion.chunk` events ending in
`data: [DONE]` (with `stream_options.include_usage`, a last chunk with no choices carries the usage). The
usage reports cached input (`prompt_tokens_details.cached_tokens`) and reasoning output
(`completion_tokens_details.reasoning_tokens`), as OpenAI's reasoning models do; `reasoning_effort` is
recorded with the request. With `reasoning_field`, the server is an OpenAI-compatible one that returns the
model's reasoning text (vLLM and DeepSeek's `reasoning_content`), and with `require_reasoning_back` it
refuses, as DeepSeek's thinking mode does, a tool-call turn whose reasoning does not come back with it.

Failures in OpenAI's words: 429 `rate_limit_exceeded` ("Please try again in 20ms", and `retry-after` when the
reply has one), 503 "The server is overloaded", 400 `context_length_exceeded`, 400
`content_policy_violation`; a turn cut at `max_tokens` ends with `finish_reason: "length"`, its last tool
call's arguments cut in half; a refusal comes as the message's `refusal`.

    with OpenAIStubServer() as server:
        server.queue(Reply.fail("rate_limit", retry_after=0), Reply.calls(("read_file", {"path": "a.py"})))
        litellm.completion(model="openai/stub", api_base=server.url, api_key="sk-test", messages=...)
"""

from __future__ import annotations

import json
import time
from typing import Any

from architect_nb.testing.stub_server import (
    Reply,
    StubHandler,
    StubServer,
    drop_litellm_clients,
    tool_pairing_problem,
)

__all__ = ["OpenAIStubServer", "Reply", "StubHandler", "drop_litellm_clients"]


class OpenAIStubServer(StubServer):
    """Args:
    reasoning_field: Return the model's thinking in this message field (`reasoning_content`), as an
        OpenAI-compatible server does; None for OpenAI, which only counts reasoning tokens.
    require_reasoning_back: Refuse (400) a request whose tool-call turns lack the reasoning sent with them.
    """

    name = "openai"

    def __init__(self, *, reasoning_field: str | None = None, require_reasoning_back: bool = False) -> None:
        self.reasoning_field = reasoning_field
        self.require_reasoning_back = require_reasoning_back
        self.reasoning_checked = 0  # turns whose reasoning came back as sent
        self._reasoning: dict[str, str] = {}  # tool call id (or "text:" answer) -> the reasoning sent with it
        self._calls = 0
        super().__init__()

    @property
    def url(self) -> str:
        return f"{self.origin}/v1"

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        """Answer one request with the next queued reply, as the Chat Completions API would."""
        self.record(body, handler.path)
        refused = self._check(body)
        reply = self.next_reply() or Reply.error(500, "the stub server has no reply queued")
        if refused is not None:
            reply = Reply(status=400, error_body=_error(refused, "invalid_request_error"))
        model = str(body.get("model", "stub"))
        status, error, headers = _failure(reply)
        if status != 200:
            handler.send_json(status, error, headers)
            return
        calls = self._tool_calls(reply)
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        reply = reply.with_(completion_tokens=reply.output_tokens(limit))
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = _stream_chunks(reply, calls, model, include_usage, self.reasoning_field)
            events = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
            handler.send_stream(
                events, delay=reply.delay, stall=reply.stall, cut=reply.cut, headers=reply.headers
            )
        else:
            handler.send_json(200, _completion(reply, calls, model, self.reasoning_field), reply.headers)

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        for name, args in reply.tool_calls:
            call_id = f"call_{self._calls}"
            self._calls += 1
            raw = args if isinstance(args, str) else json.dumps(args)
            calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}})
            if self.reasoning_field and reply.thinking:
                self._reasoning[call_id] = reply.thinking
        if self.reasoning_field and reply.thinking and not calls and reply.content:
            self._reasoning[f"text:{reply.content}"] = reply.thinking
        if reply.finish == "length" and calls:
            raw = calls[-1]["function"]["arguments"]
            calls[-1]["function"]["arguments"] = raw[: max(1, len(raw) // 2)]
        return calls

    def _check(self, body: dict[str, Any]) -> str | None:
        """Why the request is refused (a tool result without its call, a reasoning not sent back), or None."""
        messages = list(body.get("messages") or [])
        if (pairing := tool_pairing_problem(messages)) is not None:
            return self.problem(pairing)
        for n, message in enumerate(messages):
            keys = [str(c.get("id")) for c in message.get("tool_calls") or () if isinstance(c, dict)]
            keys = keys or [f"text:{message.get('content')}"]
            sent = next((self._reasoning[k] for k in keys if k in self._reasoning), None)
            if message.get("role") != "assistant" or sent is None:
                continue
            back = message.get("reasoning_content", message.get("reasoning"))
            if back == sent:
                self.reasoning_checked += 1
            elif self.require_reasoning_back:
                said = "The reasoning_content in the thinking mode must be passed back to the API."
                return self.problem(f"messages.{n}: {said}")
            else:
                self.problem(f"messages.{n}: the reasoning sent with this turn did not come back")
        return None


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _failure(reply: Reply) -> tuple[int, dict[str, Any], tuple[tuple[str, str], ...]]:
    """The status, error body and headers of a failing reply, in OpenAI's words (200 if it does not fail)."""
    after = (("retry-after", f"{reply.retry_after:g}"),) if reply.retry_after is not None else ()
    if reply.failure == "rate_limit":
        wait = f"{reply.retry_after:g}s" if reply.retry_after is not None else "20ms"
        message = (
            "Rate limit reached for gpt-4o in organization org-stub on requests per min (RPM): Limit 3, "
            f"Used 3, Requested 1. Please try again in {wait}."
        )
        return 429, _error(message, "requests", "rate_limit_exceeded"), after
    if reply.failure == "overloaded":
        message = "The server is overloaded or not ready yet."
        return 503, _error(message, "server_error", "server_overloaded"), after
    if reply.failure == "context_window":
        message = (
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 "
            "tokens. Please reduce the length of the messages."
        )
        return 400, _error(message, "invalid_request_error", "context_length_exceeded"), ()
    if reply.failure == "refused":
        message = "Your request was rejected as a result of our safety system."
        return 400, _error(message, "invalid_request_error", "content_policy_violation"), ()
    return reply.status, reply.error_body, reply.headers


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reply.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _finish_reason(reply: Reply, calls: list[dict[str, Any]]) -> str:
    if reply.finish == "length":
        return "length"
    return "tool_calls" if calls else "stop"


def _content(reply: Reply) -> str | None:
    text = reply.content
    if reply.finish == "length" and text and not reply.tool_calls:
        return text[: max(1, len(text) // 2)]
    return None if reply.finish == "refusal" else text


def _completion(
    reply: Reply, calls: list[dict[str, Any]], model: str, reasoning_field: str | None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": _content(reply), "refusal": None}
    if reply.finish == "refusal":
        message["refusal"] = reply.content
    if calls:
        message["tool_calls"] = calls
    if reasoning_field and reply.thinking:
        message[reasoning_field] = reply.thinking
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply, calls)}],
        "usage": _usage(reply),
    }


def _stream_chunks(
    reply: Reply, calls: list[dict[str, Any]], model: str, include_usage: bool, reasoning_field: str | None
) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reasoning_field and reply.thinking:
        thought = reply.thinking
        chunks += [chunk({reasoning_field: thought[i : i + 7]}) for i in range(0, len(thought), 7)]
    if reply.finish == "refusal":
        chunks.append(chunk({"refusal": reply.content}))
    text = _content(reply) or ""
    chunks += [chunk({"content": text[i : i + 5]}) for i in range(0, len(text), 5)]
    for index, call in enumerate(calls):
        raw = call["function"]["arguments"]
        head = {"index": index, "id": call["id"], "type": "function"}
        chunks.append(
            chunk({"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]})
        )
        for start in range(0, len(raw), 4):  # arguments arrive in fragments, as from real providers
            piece = {"index": index, "function": {"arguments": raw[start : start + 4]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    chunks.append(chunk({}, _finish_reason(reply, calls)))
    if include_usage:
        usage_chunk = chunk({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = _usage(reply)
        chunks.append(usage_chunk)
    return chunks
