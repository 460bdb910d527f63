"""A small OpenAI-compatible chat server on 127.0.0.1, for testing the real HTTP path of LiteLLM.

It answers `POST /v1/chat/completions` from a queue of canned replies: text, tool calls (streamed as SSE with
the arguments split across deltas, or as one JSON body), or HTTP errors such as 429 and 500, with usage that
may report cached prompt tokens (`prompt_tokens_details.cached_tokens`). It records every request it
receives. Nothing leaves the machine.

    with OpenAIStubServer() as server:
        server.queue(Reply.error(429, retry_after=0), Reply.tool_calls(("read_file", {"path": "a.py"})))
        litellm.completion(model="openai/stub", api_base=server.url, api_key="sk-test", messages=...)
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["OpenAIStubServer", "Reply", "StubHandler"]


@dataclass(frozen=True)
class Reply:
    """One canned answer."""

    content: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any] | str], ...] = ()  # a str is sent as raw arguments
    status: int = 200
    error_body: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    prompt_tokens: int = 11
    completion_tokens: int = 7
    delay: float = 0.0  # seconds between streamed chunks, to watch a live view fill in
    cached_tokens: int = 0  # of prompt_tokens, reported as read from the prompt cache (as OpenAI does)

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(content=content)

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any] | str], content: str | None = None) -> Reply:
        return cls(content=content, tool_calls=tuple(calls))

    @classmethod
    def error(cls, status: int, message: str = "stub error", retry_after: float | None = None) -> Reply:
        headers = (("retry-after", str(retry_after)),) if retry_after is not None else ()
        body = {"error": {"message": message, "type": "stub_error", "code": status}}
        return cls(status=status, error_body=body, headers=headers)


class OpenAIStubServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        _drop_litellm_clients()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.request_times.append(time.monotonic())
            if not self.replies:
                return Reply.error(500, "the stub server has no reply queued")
            return self.replies.popleft()

    def _handler(self) -> type[StubHandler]:
        return type("Handler", (StubHandler,), {"stub": self})

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        """Answer one request with the next queued reply, as OpenAI's chat completions API would."""
        reply = self._next(body)
        model = body.get("model", "stub")
        if reply.status != 200:
            handler.send_json(reply.status, reply.error_body, reply.headers)
        elif body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = [
                f"data: {json.dumps(c)}\n\n".encode() for c in _stream_chunks(reply, model, include_usage)
            ]
            handler.send_events([*events, b"data: [DONE]\n\n"], delay=reply.delay)
        else:
            handler.send_json(200, _completion(reply, model))


class StubHandler(BaseHTTPRequestHandler):
    """One HTTP request to a stub server: its JSON body is handed to the server's `respond`."""

    protocol_version = "HTTP/1.1"
    stub: OpenAIStubServer  # set on the subclass each server makes

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.stub.respond(self, json.loads(self.rfile.read(length) or b"{}"))

    def send_json(
        self, status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: list[bytes], *, delay: float = 0.0) -> None:
        """A server-sent event stream, each event flushed as it goes (`delay` seconds apart), then closed."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for n, event in enumerate(events):
            if delay and n:
                time.sleep(delay)
            self.wfile.write(event)
            self.wfile.flush()
        self.close_connection = True


def _usage(reply: Reply) -> dict[str, Any]:
    total = reply.prompt_tokens + reply.completion_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": total,
    }
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def _tool_call_list(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.tool_calls)
    ]


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = _tool_call_list(reply)
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
        ],
        "usage": _usage(reply),
    }


def _stream_chunks(reply: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    text = reply.content or ""
    chunks += [chunk({"content": text[i : i + 5]}) for i in range(0, len(text), 5)]
    for index, call in enumerate(_tool_call_list(reply)):
        raw = call["function"]["arguments"]
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"]},
        }
        chunks.append(chunk({"tool_calls": [{**head, "function": {**head["function"], "arguments": ""}}]}))
        for start in range(0, len(raw), 4):  # arguments arrive in fragments, as from real providers
            piece = {"index": index, "function": {"arguments": raw[start : start + 4]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if include_usage:
        usage_chunk = chunk({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = _usage(reply)
        chunks.append(usage_chunk)
    return chunks


def _drop_litellm_clients() -> None:
    """Close the HTTP clients LiteLLM cached for this server: their pooled sockets would otherwise stay open
    until the interpreter exits (and be reported then as unclosed)."""
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cache is None:
        return
    for client in list(getattr(cache, "cache_dict", {}).values()):
        close = getattr(client, "close", None)
        if callable(close) and not inspect.iscoroutinefunction(close):
            with contextlib.suppress(Exception):
                close()
    with contextlib.suppress(Exception):
        cache.flush_cache()
