"""A server speaking Ollama's API on 127.0.0.1: `/api/chat` with tools and thinking, and `/api/show`.

`POST /api/chat` answers with one JSON object, or with a stream of them, one per line (NDJSON), the last
with `done: true`, its `done_reason` and the counts (`prompt_eval_count`, `eval_count`). A reply's thinking
comes in the message's `thinking` field when the request asks for it (`think: true`); tool calls as
`message.tool_calls` whose `arguments` are JSON objects, not strings; a model that writes its call as
Hermes/Qwen `<tool_call>` text does so in `content` (give it as the reply's content). `POST /api/show`
describes the model: its template, `model_info` with the context length, and its `capabilities`.

What comes back is checked as Ollama reads it: an assistant tool call whose arguments are not an object is
refused (400, Go's JSON error), `think` for a model without the `thinking` capability and `tools` for one
without `tools` are refused with Ollama's words; thinking the server sent that does not come back in the
turn's `thinking` is noted in `problems` (Ollama does not require it; its templates for Qwen 3 and
gpt-oss read it).

Failures in Ollama's words (`{"error": "..."}`): 503 "server busy" (its queue is full), 429 for a hosted
model's rate limit, and 400 "the input length exceeds the context length" for an overlong prompt (Ollama
truncates by default; this is the error when truncation is off, an assumption of this server); a turn cut
at `num_predict` ends with `done_reason: "length"`. Ollama has no content-policy refusal.

    with OllamaStubServer() as server:
        server.queue(Reply.calls(("read_file", {"path": "a.py"}), thinking="a.py first"), Reply.text("ok"))
        litellm.completion(model="ollama_chat/qwen3", api_base=server.url, messages=..., tools=...)
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from architect_nb.testing.stub_server import Reply, StubHandler, StubServer

__all__ = ["OllamaStubServer", "Reply"]

_TEMPLATE = (
    "{{- if .Tools }}<|im_start|>system\n# Tools\n<tools>{{ range .Tools }}{{ . }}{{ end }}</tools>\n"
    "For each function call, return a json object within <tool_call></tool_call> XML tags.<|im_end|>{{ end }}"
)


class OllamaStubServer(StubServer):
    """Args:
    capabilities: What `/api/show` says the model can do (Ollama refuses `think` and `tools` without them).
    context_length: The model's context window, as `/api/show` reports it.
    """

    name = "ollama"

    def __init__(
        self,
        *,
        capabilities: Sequence[str] = ("completion", "tools", "thinking"),
        context_length: int = 40960,
    ) -> None:
        self.capabilities = tuple(capabilities)
        self.context_length = context_length
        self.thinking_checked = 0  # turns whose thinking came back as sent
        self.shown: list[str] = []  # the models `/api/show` was asked about (not in `requests`)
        self._thought: dict[
            str, set[str]
        ] = {}  # a turn's key (its calls, or its text) -> thinking sent with it
        super().__init__()

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        if handler.path.startswith("/api/show"):  # LiteLLM asks it for the model's window and tools
            with self._lock:
                self.shown.append(str(body.get("model") or body.get("name") or ""))
            handler.send_json(200, self._show(str(body.get("model") or body.get("name") or "")))
            return
        if not handler.path.startswith("/api/chat"):
            handler.send_json(404, {"error": f"404 page not found: {handler.path}"})
            return
        self.record(body, handler.path)
        model = str(body.get("model", "stub"))
        if (refused := self._check(body, model)) is not None:
            handler.send_json(400, {"error": refused})
            return
        reply = self.next_reply() or Reply(
            status=500, error_body={"error": "the stub server has no reply queued"}
        )
        if reply.failure is not None or reply.status != 200:
            handler.send_json(*_failure(reply))
            return
        reply = reply.with_(
            completion_tokens=reply.output_tokens((body.get("options") or {}).get("num_predict"))
        )
        thinking = reply.thinking if body.get("think") else None
        message = self._message(reply, thinking)
        if body.get("stream", True):
            lines = [json.dumps(line).encode() + b"\n" for line in _lines(message, reply, model)]
            handler.send_stream(
                lines,
                content_type="application/x-ndjson",
                delay=reply.delay,
                stall=reply.stall,
                cut=reply.cut,
            )
        else:
            handler.send_json(200, {**_head(model), "message": message, **_done(reply)})

    def _show(self, model: str) -> dict[str, Any]:
        family = model.split(":", 1)[0].rsplit("/", 1)[-1] or "qwen3"
        return {
            "modelfile": f"FROM {model}",
            "parameters": "temperature 0.6",
            "template": _TEMPLATE if "tools" in self.capabilities else "{{ .Prompt }}",
            "details": {
                "format": "gguf",
                "family": family,
                "parameter_size": "8.2B",
                "quantization_level": "Q4_K_M",
            },
            "model_info": {"general.architecture": family, f"{family}.context_length": self.context_length},
            "capabilities": list(self.capabilities),
        }

    def _check(self, body: dict[str, Any], model: str) -> str | None:
        if body.get("think") and "thinking" not in self.capabilities:
            return self.problem(f'"{model}" does not support thinking')
        if body.get("tools") and "tools" not in self.capabilities:
            return self.problem(f"registry.ollama.ai/library/{model}:latest does not support tools")
        for message in body.get("messages") or []:
            if message.get("role") != "assistant":
                continue
            calls = message.get("tool_calls") or []
            for call in calls:
                arguments = (call.get("function") or {}).get("arguments")
                if not isinstance(arguments, dict):
                    return self.problem(
                        "json: cannot unmarshal string into Go struct field ToolCallFunction.messages."
                        "tool_calls.function.arguments of type api.ToolCallFunctionArguments"
                    )
            sent = self._thought.get(_turn_key(message.get("content"), calls))
            if sent is None:
                continue
            if message.get("thinking") in sent:
                self.thinking_checked += 1
            else:
                self.problem("a turn's thinking did not come back in its `thinking` field")
        return None

    def _message(self, reply: Reply, thinking: str | None) -> dict[str, Any]:
        content = reply.content or ""
        calls = [
            {"function": {"name": name, "arguments": json.loads(args) if isinstance(args, str) else args}}
            for name, args in reply.tool_calls
        ]
        if reply.finish == "length":
            content, calls = content[: len(content) // 2], []  # the limit fell before the call was whole
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thinking:
            message["thinking"] = thinking
            with self._lock:
                self._thought.setdefault(_turn_key(content, calls), set()).add(thinking)
        if calls:
            message["tool_calls"] = calls
        return message


def _turn_key(content: object, calls: list[dict[str, Any]]) -> str:
    names = [(c.get("function") or {}).get("name") for c in calls]
    args = [(c.get("function") or {}).get("arguments") for c in calls]
    return json.dumps([str(content or "").strip() if not calls else "", names, args], sort_keys=True)


def _failure(reply: Reply) -> tuple[int, dict[str, Any], tuple[tuple[str, str], ...]]:
    if reply.failure == "overloaded":  # Ollama says no time to wait
        return 503, {"error": "server busy, please try again.  maximum pending requests exceeded"}, ()
    if reply.failure == "rate_limit":
        return 429, {"error": "you have reached your hourly usage limit, please try again later"}, ()
    if reply.failure == "context_window":
        return 400, {"error": "the input length exceeds the context length"}, ()
    error = reply.error_body.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return reply.status, {"error": str(message or "error")}, reply.headers


def _head(model: str) -> dict[str, Any]:
    return {"model": model, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())}


def _done(reply: Reply) -> dict[str, Any]:
    return {
        "done": True,
        "done_reason": "length" if reply.finish == "length" else "stop",
        "total_duration": 1_200_000_000,
        "load_duration": 20_000_000,
        "prompt_eval_count": reply.prompt_tokens,
        "prompt_eval_duration": 300_000_000,
        "eval_count": reply.completion_tokens,
        "eval_duration": 880_000_000,
    }


def _lines(message: dict[str, Any], reply: Reply, model: str) -> list[dict[str, Any]]:
    """The message as Ollama streams it: thinking, then text, in pieces; the calls whole; then the end."""
    head = _head(model)
    lines: list[dict[str, Any]] = []
    thinking = str(message.get("thinking") or "")
    for at in range(0, len(thinking), 10):
        piece = {"role": "assistant", "content": "", "thinking": thinking[at : at + 10]}
        lines.append({**head, "message": piece, "done": False})
    content = str(message.get("content") or "")
    for at in range(0, len(content), 6):
        lines.append(
            {**head, "message": {"role": "assistant", "content": content[at : at + 6]}, "done": False}
        )
    if message.get("tool_calls"):
        calls = {"role": "assistant", "content": "", "tool_calls": message["tool_calls"]}
        lines.append({**head, "message": calls, "done": False})
    lines.append({**head, "message": {"role": "assistant", "content": ""}, **_done(reply)})
    return lines
