"""What the stub model servers share: canned replies, the record of requests, and one HTTP handler.

Each server (`openai_server`, `anthropic_server`, `gemini_server`, `ollama_server`) answers on 127.0.0.1 in
one provider's wire format, from a queue of `Reply`s that say what the model answers (text, thinking, tool
calls) or how the provider fails. A failure is named (`Reply.fail("overloaded")`) and each server words it
as its provider does: the status, the error body and the headers. Streams go out with chunked transfer
encoding, as the real APIs send them, so a stream `cut` short is a connection closed in the middle of its
body, and a `stall` is a stream that stops sending for a while.

A server also checks what comes back to it: what it signed (thinking blocks, thought signatures) or asked to
get back (reasoning), and the pairing of tool calls and results. What it refuses is answered with the
provider's own error; everything it finds is in `problems`, which a test expects empty. Nothing leaves the
machine.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

__all__ = ["Failure", "Reply", "StubHandler", "StubServer"]

Failure = Literal["rate_limit", "overloaded", "context_window", "refused"]


@dataclass(frozen=True)
class Reply:
    """One canned answer: what the model says, or how the provider fails.

    `tool_calls` are (name, arguments) pairs; arguments given as a string are sent as written (malformed
    ones included). `thinking` is what the model thought first, sent in the provider's form (signed where
    the provider signs it). `finish` is "length" (the answer stops at the output limit, in the middle of
    its last tool call when it has one) or "refusal" (the provider stops it, `content` being its words).
    """

    content: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any] | str], ...] = ()
    thinking: str | None = None
    status: int = 200
    error_body: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()  # sent with the reply, an error or an answer
    failure: Failure | None = None
    retry_after: float | None = None
    prompt_tokens: int = 11
    completion_tokens: int = 7
    reasoning_tokens: int = 0  # of completion_tokens, spent thinking (reported where the provider does)
    cached_tokens: int = 0  # of prompt_tokens, read from the prompt cache
    delay: float = 0.0  # seconds between streamed chunks, to watch a live view fill in
    stall: float = 0.0  # seconds the stream sends nothing, after its first chunk
    cut: bool = False  # the stream's connection closes half-way through its body
    finish: Literal["length", "refusal"] | None = None
    encrypted: bool = False  # the thinking comes encrypted (Anthropic's `redacted_thinking`), where it can

    @classmethod
    def text(cls, content: str, *, thinking: str | None = None) -> Reply:
        return cls(content=content, thinking=thinking)

    @classmethod
    def calls(
        cls, *calls: tuple[str, dict[str, Any] | str], content: str | None = None, thinking: str | None = None
    ) -> Reply:
        return cls(content=content, tool_calls=tuple(calls), thinking=thinking)

    @classmethod
    def error(cls, status: int, message: str = "stub error", retry_after: float | None = None) -> Reply:
        """An HTTP error with an OpenAI-style body (`fail` words it in each provider's own way)."""
        headers = (("retry-after", str(retry_after)),) if retry_after is not None else ()
        body = {"error": {"message": message, "type": "stub_error", "code": status}}
        return cls(status=status, error_body=body, headers=headers)

    @classmethod
    def fail(cls, failure: Failure, *, retry_after: float | None = None) -> Reply:
        """The provider failing as it does: rate limited (429), overloaded (529 or 503), the context window
        exceeded (400) or the request refused by its content policy."""
        return cls(failure=failure, retry_after=retry_after)

    @classmethod
    def refusal(cls, words: str) -> Reply:
        """A turn the provider stopped for its content policy, with what it said."""
        return cls(content=words, finish="refusal")

    def with_(self, **changes: Any) -> Reply:
        return replace(self, **changes)

    def output_tokens(self, limit: object) -> int:
        """The output tokens to report: for a turn cut at the length limit, the request's limit."""
        if self.finish == "length" and isinstance(limit, int) and limit > 0:
            return limit
        return self.completion_tokens


class StubServer:
    """The queue, the records and the lifecycle of a stub server; a subclass answers (`respond`)."""

    name = "stub"

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.request_times: list[float] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.problems: list[str] = []  # what the server found wrong in what came back to it
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"{self.name}-stub", daemon=True
        )

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The `api_base` a user would configure for this server."""
        return self.origin

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        drop_litellm_clients()

    def record(self, body: dict[str, Any], path: str) -> None:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.request_times.append(time.monotonic())

    def next_reply(self) -> Reply | None:
        """The next queued reply, or None when the queue is empty."""
        with self._lock:
            return self.replies.popleft() if self.replies else None

    def problem(self, text: str) -> str:
        with self._lock:
            self.problems.append(text)
        return text

    def wait(self, seconds: float) -> None:
        """Sleep in a handler, cut short when the server closes."""
        self._closing.wait(seconds)

    def _handler(self) -> type[StubHandler]:
        return type("Handler", (StubHandler,), {"stub": self})

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class StubHandler(BaseHTTPRequestHandler):
    """One HTTP request to a stub server: its JSON body is handed to the server's `respond`."""

    protocol_version = "HTTP/1.1"
    stub: StubServer  # set on the subclass each server makes

    def log_message(self, format: str, *args: Any) -> None:
        return

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout, a cancel)
            self.close_connection = True

    def do_POST(self) -> None:
        with self.stub._lock:
            self.stub.authorizations.append(self.headers.get("authorization"))
        length = int(self.headers.get("content-length") or 0)
        self.stub.respond(self, json.loads(self.rfile.read(length) or b"{}"))

    def send_json(
        self, status: int, payload: dict[str, Any], headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_stream(
        self,
        parts: list[bytes],
        *,
        content_type: str = "text/event-stream",
        delay: float = 0.0,
        stall: float = 0.0,
        cut: bool = False,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """A streamed body in chunked encoding, each part flushed as it goes (`delay` seconds apart). `stall`:
        nothing is sent for that long after the first part; `cut`: the connection closes after half of the
        parts, without the body's end."""
        self.send_response(200)
        self.send_header("content-type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        stop = max(1, len(parts) // 2) if cut else len(parts)
        for n, part in enumerate(parts[:stop]):
            if n and delay:
                time.sleep(delay)
            if n == 1 and stall:
                self.stub.wait(stall)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
        if cut:
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)  # SHUT_RDWR: the body ends without its last chunk
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_events(self, events: list[bytes], *, delay: float = 0.0) -> None:
        """A server-sent event stream (see `send_stream`)."""
        self.send_stream(events, delay=delay)


def drop_litellm_clients() -> None:
    """Close the HTTP clients LiteLLM cached for a server: their pooled sockets would otherwise stay open
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


def tool_pairing_problem(messages: list[dict[str, Any]]) -> str | None:
    """In OpenAI-shaped messages: a tool result whose id no earlier assistant call has, or a call without its
    result before the next assistant turn (both refused by OpenAI's API)."""
    pending: set[str] = set()
    for n, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            if pending:
                return f"messages.{n}: the tool calls {sorted(pending)} got no tool message before this turn"
            pending = {str(c.get("id")) for c in message.get("tool_calls") or ()}
        elif role == "tool":
            call = str(message.get("tool_call_id"))
            if call not in pending:
                return f"messages.{n}: a tool message answers {call!r}, which no preceding tool call has"
            pending.discard(call)
    return None
