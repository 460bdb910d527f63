"""A server speaking Anthropic's Messages API on 127.0.0.1: extended thinking, streaming events, caching.

It answers `POST /v1/messages` as one JSON message or as its event stream (`message_start`,
`content_block_start` / `_delta` / `_stop` for each block, `message_delta` with the stop reason and usage,
`message_stop`). A reply's `thinking` comes first as a `thinking` block signed by the server (in the stream:
`thinking_delta` events, then a `signature_delta`), or `encrypted` as a `redacted_thinking` block; text and
`tool_use` blocks follow. Usage splits the input
as Anthropic does (`input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`: see
`anthropic_cache`) and counts thinking inside `output_tokens`.

What comes back is checked as Anthropic checks it: a thinking block whose signature does not match its text
is refused (400 "Invalid `signature` in `thinking` block"), and with `thinking` enabled, a final assistant
turn with tool use that does not start with its thinking block is refused (400 "Expected `thinking` or
`redacted_thinking`, but found `tool_use`"); `max_tokens` must exceed `thinking.budget_tokens`. A turn of
the server's that comes back without the thinking it had is also noted in `problems` (Anthropic lets
earlier turns drop it; this server wants it all back).

Failures in Anthropic's words: 429 `rate_limit_error` with `retry-after`, 529 `overloaded_error`, 400
"prompt is too long: N tokens > 200000 maximum"; `stop_reason: "max_tokens"` cuts the last `tool_use`
block's input half-way (in a non-streamed message, its last argument is left out: an assumption, the
reference does not show that body); a refusal is `stop_reason: "refusal"` with the text said so far.

    with AnthropicStubServer() as server:
        server.queue(Reply.calls(("read_file", {"path": "a.py"}), thinking="First a.py."), Reply.text("ok"))
        litellm.completion(model="anthropic/claude-...", api_base=server.url, api_key="sk-ant-test", ...)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any

from architect_nb.testing.anthropic_cache import CacheUse, PromptCache
from architect_nb.testing.stub_server import Reply, StubHandler, StubServer

__all__ = ["AnthropicStubServer", "CacheUse", "Reply"]

_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_NO_THINKING = (
    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
    f"{_DOCS}"
)


class AnthropicStubServer(StubServer):
    """The Messages API, with a prompt cache (`min_cache_tokens`) and signed thinking."""

    name = "anthropic"

    def __init__(self, *, min_cache_tokens: int = 1024) -> None:
        self.cache = PromptCache(min_cache_tokens=min_cache_tokens)
        self.cache_use: list[CacheUse] = []
        self.thinking_checked = 0  # signed thinking blocks that came back intact
        self._key = secrets.token_bytes(16)
        self._thought: dict[str, str] = {}  # tool_use id or answer text -> the thinking of its turn
        self._encrypted: dict[str, str] = {}  # a redacted_thinking block's data -> the thinking it hides
        self._tool_uses = 0
        super().__init__()

    @property
    def min_cache_tokens(self) -> int:
        return self.cache.min_cache_tokens

    def sign(self, thinking: str) -> str:
        return base64.b64encode(hmac.new(self._key, thinking.encode(), hashlib.sha256).digest() * 3).decode()

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        """Answer one request with the next queued reply, as Anthropic's Messages API would."""
        self.record(body, handler.path)
        refused = self._check(body)
        if refused is not None:
            handler.send_json(400, _error("invalid_request_error", refused))
            return
        bill = self.cache.bill(body)
        if isinstance(bill, str):
            handler.send_json(400, _error("invalid_request_error", bill))
            return
        with self._lock:
            self.cache_use.append(bill)
        reply = self.next_reply()
        if reply is None:
            handler.send_json(500, _error("api_error", "the stub server has no reply queued"))
            return
        if reply.failure is not None or reply.status != 200:
            status, error, headers = _failure(reply, bill)
            handler.send_json(status, error, headers)
            return
        reply = reply.with_(completion_tokens=reply.output_tokens(body.get("max_tokens")))
        message, whole = self._message(reply, str(body.get("model", "stub")), bill)
        if not body.get("stream"):
            handler.send_json(200, message)
            return
        events = [
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in _events(message, whole)
        ]
        handler.send_stream(events, delay=reply.delay, stall=reply.stall, cut=reply.cut)

    # ------------------------------------------------------------------ what comes back

    def _check(self, body: dict[str, Any]) -> str | None:
        """Why Anthropic would refuse the request's thinking, or None. Counts the blocks that came back."""
        thinking = body.get("thinking") or {}
        enabled = thinking.get("type") == "enabled"
        if enabled and int(body.get("max_tokens") or 0) <= int(thinking.get("budget_tokens") or 0):
            return self.problem("`max_tokens` must be greater than `thinking.budget_tokens`")
        messages = list(body.get("messages") or [])
        for n, message in enumerate(messages):
            if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            blocks = message["content"]
            for j, block in enumerate(blocks):
                if block.get("type") == "redacted_thinking":
                    if str(block.get("data")) not in self._encrypted:
                        return self.problem(
                            f"messages.{n}.content.{j}: Invalid `data` in `redacted_thinking` block"
                        )
                    self.thinking_checked += 1
                if block.get("type") != "thinking":
                    continue
                if not hmac.compare_digest(
                    str(block.get("signature", "")), self.sign(str(block.get("thinking")))
                ):
                    return self.problem(f"messages.{n}.content.{j}: Invalid `signature` in `thinking` block")
                self.thinking_checked += 1
            self._check_kept(n, blocks)
        last = _last_assistant(messages)
        if enabled and last is not None:
            n, blocks = last
            first = blocks[0].get("type") if blocks else "text"
            if any(b.get("type") == "tool_use" for b in blocks) and first not in (
                "thinking",
                "redacted_thinking",
            ):
                return self.problem(_NO_THINKING.format(n=n, found=first))
        return None

    def _check_kept(self, n: int, blocks: list[dict[str, Any]]) -> None:
        keys = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        keys += [str(b.get("text")) for b in blocks if b.get("type") == "text"]
        had = next((self._thought[k] for k in keys if k in self._thought), None)
        back = [b.get("thinking") for b in blocks if b.get("type") == "thinking"]
        back += [
            self._encrypted.get(str(b.get("data"))) for b in blocks if b.get("type") == "redacted_thinking"
        ]
        if had is not None and had not in back:
            self.problem(f"messages.{n}: this turn's thinking did not come back")

    # ------------------------------------------------------------------ answers

    def _message(
        self, reply: Reply, model: str, bill: CacheUse
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The message, and for one cut at the length limit the whole input of its last tool use."""
        content: list[dict[str, Any]] = []
        if (
            reply.thinking and reply.encrypted
        ):  # the model's thinking, encrypted by Anthropic's safety systems
            data = self.sign(f"redacted:{reply.thinking}")
            self._encrypted[data] = reply.thinking
            content.append({"type": "redacted_thinking", "data": data})
        elif reply.thinking:
            content.append(
                {"type": "thinking", "thinking": reply.thinking, "signature": self.sign(reply.thinking)}
            )
        if reply.content:
            content.append({"type": "text", "text": reply.content})
        for name, args in reply.tool_calls:
            arguments = json.loads(args) if isinstance(args, str) else args
            with self._lock:
                self._tool_uses += 1
                call_id = f"toolu_{self._tool_uses:04d}"
            content.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        if reply.thinking:
            keys = [b["id"] for b in content if b["type"] == "tool_use"] + [reply.content or ""]
            self._thought.update(dict.fromkeys(keys, reply.thinking))
        whole = None
        if reply.finish == "length" and content and content[-1]["type"] == "tool_use":
            whole = dict(content[-1]["input"])
            content[-1] = {**content[-1], "input": dict(list(whole.items())[:-1])}
        stop = "tool_use" if reply.tool_calls else "end_turn"
        stop = {"length": "max_tokens", "refusal": "refusal"}.get(reply.finish or "", stop)
        message = {
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": bill.input_tokens,
                "cache_creation_input_tokens": bill.cache_creation_input_tokens,
                "cache_read_input_tokens": bill.cache_read_input_tokens,
                "output_tokens": reply.completion_tokens,
            },
        }
        return message, whole


def _last_assistant(messages: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]] | None:
    """The final assistant turn of an ongoing tool use (the request ends with its results), or None."""
    if not messages or messages[-1].get("role") != "user":
        return None
    for n in range(len(messages) - 1, -1, -1):
        if messages[n].get("role") == "assistant":
            content = messages[n].get("content")
            return (n, content) if isinstance(content, list) else None
    return None


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _failure(reply: Reply, bill: CacheUse) -> tuple[int, dict[str, Any], tuple[tuple[str, str], ...]]:
    after = (("retry-after", f"{reply.retry_after:g}"),) if reply.retry_after is not None else ()
    if reply.failure == "rate_limit":
        message = (
            "This request would exceed the rate limit for your organization of 50,000 input tokens per "
            "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the "
            "response headers for current usage. Please reduce the prompt length or the maximum tokens "
            "requested, or try again later."
        )
        return 429, _error("rate_limit_error", message), after
    if reply.failure == "overloaded":
        return 529, _error("overloaded_error", "Overloaded"), after
    if reply.failure == "context_window":
        used = bill.input_tokens + bill.cache_read_input_tokens + bill.cache_creation_input_tokens
        return (
            400,
            _error(
                "invalid_request_error", f"prompt is too long: {max(used, 200_001)} tokens > 200000 maximum"
            ),
            (),
        )
    if reply.failure == "refused":
        return 400, _error("invalid_request_error", "Output blocked by content filtering policy"), ()
    return (
        reply.status,
        _error("api_error", str(reply.error_body.get("error", {}).get("message", "error"))),
        reply.headers,
    )


def _events(message: dict[str, Any], whole: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """The message as Anthropic streams it; `whole`: the complete input of a tool use cut at the limit."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]

    def delta(index: int, body: dict[str, Any]) -> None:
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body}))

    def begin(index: int, block: dict[str, Any]) -> None:
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )

    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            begin(index, {"type": "thinking", "thinking": "", "signature": ""})
            text = block["thinking"]
            for at in range(0, len(text), 9):
                delta(index, {"type": "thinking_delta", "thinking": text[at : at + 9]})
            delta(index, {"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "redacted_thinking":  # sent whole in its start event, as Anthropic does
            begin(index, block)
        elif block["type"] == "text":
            begin(index, {"type": "text", "text": ""})
            text = block["text"]
            for at in range(0, len(text), 8):
                delta(index, {"type": "text_delta", "text": text[at : at + 8]})
        else:
            begin(index, {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
            last = index == len(message["content"]) - 1
            raw = json.dumps(whole if whole is not None and last else block["input"])
            if whole is not None and last:
                raw = raw[: len(raw) // 2]  # the limit fell in the middle of the arguments
            for at in range(0, len(raw), 6):  # the arguments arrive in fragments, as from Anthropic
                delta(index, {"type": "input_json_delta", "partial_json": raw[at : at + 6]})
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    end = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
