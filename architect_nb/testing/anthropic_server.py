"""A small server speaking Anthropic's Messages API on 127.0.0.1, with prompt caching as Anthropic does it.

It answers `POST /v1/messages` (JSON or SSE stream) from a queue of canned replies (`openai_server.Reply`:
text, tool calls, HTTP errors), records every request, and keeps a prompt cache: the request's tools, system
blocks and message blocks, in that order, are the prefix; a block with `cache_control` is a breakpoint.
As on Anthropic's side, at most four breakpoints are accepted, a prefix shorter than `min_cache_tokens` is
not cached, a breakpoint finds a cached prefix ending at it or up to 20 blocks before it, and every
breakpoint's prefix is written to the cache. The usage it reports splits the input as Anthropic does:
`cache_read_input_tokens`, `cache_creation_input_tokens` and the rest as `input_tokens` (about four
characters a token). Nothing leaves the machine.

    with AnthropicStubServer() as server:
        server.queue(Reply.calls(("read_file", {"path": "a.py"})), Reply.text("done"))
        litellm.completion(model="anthropic/claude-...", api_base=server.url, api_key="sk-ant-test", ...)
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from architect_nb.testing.openai_server import OpenAIStubServer, Reply, StubHandler

__all__ = ["AnthropicStubServer", "CacheUse", "Reply"]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
CACHE_SECONDS = 300.0


@dataclass(frozen=True)
class CacheUse:
    """How one request's input was billed."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    breakpoints: int


class AnthropicStubServer(OpenAIStubServer):
    """The OpenAI stub's queue, records and lifecycle, answering Anthropic's Messages API instead."""

    def __init__(self, *, min_cache_tokens: int = 1024) -> None:
        self.min_cache_tokens = min_cache_tokens
        self.cache_use: list[CacheUse] = []
        self._cache: dict[str, float] = {}  # prefix hash -> when it expires
        super().__init__()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # ------------------------------------------------------------------ the prompt cache

    def _bill(self, body: dict[str, Any]) -> CacheUse | str:
        """How the request's input is billed, with the cache updated; or why the request is refused."""
        blocks = _prefix_blocks(body)
        marks = [
            i for i, block in enumerate(blocks) if isinstance(block, dict) and block.get("cache_control")
        ]
        if len(marks) > MAX_BREAKPOINTS:
            found = len(marks)
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        tokens, hashes = [], []
        running, digest = 0, hashlib.sha256()
        for block in blocks:
            plain = (
                {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
            )
            text = json.dumps(plain, sort_keys=True, ensure_ascii=False)
            running += max(1, len(text) // 4)
            digest.update(text.encode())
            tokens.append(running)
            hashes.append(digest.hexdigest())
        now = time.monotonic()
        read = 0  # blocks read from the cache
        with self._lock:
            self._cache = {h: t for h, t in self._cache.items() if t > now}
            for mark in marks:
                for end in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                    if hashes[end] in self._cache:
                        read = max(read, end + 1)
                        break
            written = 0
            for mark in marks:
                if tokens[mark] >= self.min_cache_tokens:
                    self._cache[hashes[mark]] = now + CACHE_SECONDS
                    written = max(written, mark + 1)
        total = tokens[-1] if tokens else 0
        read_tokens = tokens[read - 1] if read else 0
        created = tokens[written - 1] - read_tokens if written > read else 0
        return CacheUse(total - read_tokens - created, read_tokens, created, len(marks))

    def _answer(self, body: dict[str, Any]) -> tuple[Reply, CacheUse | None]:
        bill = self._bill(body)
        with self._lock:
            self.requests.append(body)
            self.request_times.append(time.monotonic())
            if isinstance(bill, str):
                return Reply(status=400, error_body=_error(bill)), None
            self.cache_use.append(bill)
            if not self.replies:
                return Reply(status=500, error_body=_error("the stub server has no reply queued")), None
            return self.replies.popleft(), bill

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        """Answer one request with the next queued reply, as Anthropic's Messages API would."""
        reply, bill = self._answer(body)
        if reply.status != 200 or bill is None:
            handler.send_json(reply.status, reply.error_body)
            return
        message = _message(reply, body.get("model", "stub"), bill)
        if not body.get("stream"):
            handler.send_json(200, message)
            return
        handler.send_events(
            [
                f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                for name, data in _stream_events(message)
            ]
        )


def _error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _prefix_blocks(body: dict[str, Any]) -> list[Any]:
    """The request's cacheable prefix in Anthropic's order: tools, system, then each message's blocks."""
    blocks: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"role": message.get("role"), "type": "text", "text": content})
        else:
            blocks += [{"role": message.get("role"), **block} for block in content or []]
    return blocks


def _message(reply: Reply, model: str, bill: CacheUse) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] if reply.content else []
    for i, (name, args) in enumerate(reply.tool_calls):
        arguments = json.loads(args) if isinstance(args, str) else args
        content.append({"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": arguments})
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": bill.input_tokens,
            "cache_creation_input_tokens": bill.cache_creation_input_tokens,
            "cache_read_input_tokens": bill.cache_read_input_tokens,
            "output_tokens": reply.completion_tokens,
        },
    }


def _stream_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            text = block["text"]
            for at in range(0, len(text), 8):
                delta = {"type": "text_delta", "text": text[at : at + 8]}
                events.append(
                    ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                )
        else:
            head = {**block, "input": {}}
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": head},
                )
            )
            raw = json.dumps(block["input"])
            for at in range(0, len(raw), 6):  # the arguments arrive in fragments, as from Anthropic
                delta = {"type": "input_json_delta", "partial_json": raw[at : at + 6]}
                events.append(
                    ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                )
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
