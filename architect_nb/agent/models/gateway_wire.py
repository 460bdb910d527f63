"""The OpenAI Chat Completions wire as a gateway speaks it, read without LiteLLM: answers, streams, errors.

`answer` turns a JSON completion into the shape `reply_parsing` reads (attributes, as LiteLLM's
`ModelResponse` has them); `StreamedAnswer` rebuilds one from `chat.completion.chunk` events (text, reasoning,
thinking blocks and tool calls arriving in fragments, usage in the last chunk), as LiteLLM's
`stream_chunk_builder` does. `http_error` names a failed request as the classifier (`model_failures`) knows
failures: by the class names LiteLLM and the OpenAI SDK give them, with the status, the body and the headers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

__all__ = [
    "APIConnectionError",
    "GatewayError",
    "StreamedAnswer",
    "Timeout",
    "answer",
    "http_error",
]

_STRUCTURE = frozenset({"role", "content", "tool_calls", "function_call"})


class GatewayError(Exception):
    """A request the gateway answered with an error status. `response` has the headers (`retry-after`)."""

    def __init__(self, message: str, status_code: int, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.response = SimpleNamespace(headers=dict(headers))


# Named as LiteLLM's and the OpenAI SDK's exceptions are: the classifier reads the names with the status.
class BadRequestError(GatewayError): ...


class AuthenticationError(GatewayError): ...


class PermissionDeniedError(GatewayError): ...


class NotFoundError(GatewayError): ...


class RateLimitError(GatewayError): ...


class InternalServerError(GatewayError): ...


class ServiceUnavailableError(GatewayError): ...


class APIError(GatewayError): ...


class APIConnectionError(Exception):
    """The gateway could not be reached, or its stream broke off."""


class Timeout(Exception):  # noqa: N818 - LiteLLM's name, which the classifier knows
    """The gateway sent nothing for `llm.timeout` seconds."""


_BY_STATUS: dict[int, type[GatewayError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}


def http_error(status: int, body: str, headers: Mapping[str, str]) -> GatewayError:
    """The exception for a response with an error `status` (its body holds the gateway's words)."""
    kind = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return kind(f"Gateway error {status}: {body.strip()[:2000]}", status, headers)


def answer(data: Mapping[str, Any]) -> SimpleNamespace:
    """A JSON completion as `reply_parsing` reads it. What is not the message's structure (reasoning,
    thinking blocks, provider fields) stays plain JSON, to go back to the model unchanged."""
    choices = [
        SimpleNamespace(
            index=c.get("index", 0), finish_reason=c.get("finish_reason"), message=_message(c.get("message"))
        )
        for c in data.get("choices") or ()
        if isinstance(c, Mapping)
    ]
    return SimpleNamespace(choices=choices, usage=_usage(data.get("usage")), model=data.get("model"))


def _message(raw: Any) -> SimpleNamespace:
    raw = raw if isinstance(raw, Mapping) else {}
    calls = [
        SimpleNamespace(
            id=c.get("id"),
            type="function",
            function=SimpleNamespace(**{k: v for k, v in (c.get("function") or {}).items()}),
            **{k: v for k, v in c.items() if k not in ("id", "type", "function")},
        )
        for c in raw.get("tool_calls") or ()
        if isinstance(c, Mapping)
    ]
    extra = {k: v for k, v in raw.items() if k not in _STRUCTURE}
    extra.setdefault("refusal", None)
    return SimpleNamespace(
        role=raw.get("role", "assistant"), content=raw.get("content"), tool_calls=calls or None, **extra
    )


def _usage(raw: Any) -> SimpleNamespace | None:
    if not isinstance(raw, Mapping):
        return None
    fields = {k: SimpleNamespace(**v) if isinstance(v, Mapping) else v for k, v in raw.items()}
    return SimpleNamespace(**fields)


class StreamedAnswer:
    """The answer of a stream, rebuilt chunk by chunk (`add`), then whole (`result`)."""

    def __init__(self) -> None:
        self.content = ""
        self.reasoning = ""
        self.refusal = ""
        self.calls: dict[int, dict[str, Any]] = {}
        self.blocks: list[dict[str, Any]] = []
        self.fields: dict[str, Any] = {}
        self.finish: str | None = None
        self.usage: Any = None
        self.model: str | None = None
        self.chunks = 0

    def add(self, chunk: Mapping[str, Any]) -> tuple[str, str]:
        """Take one chunk in; return the (text, reasoning) it added, for the live view."""
        self.chunks += 1
        self.model = self.model or chunk.get("model")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        choices = chunk.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], Mapping) else {}
        self.finish = choice.get("finish_reason") or self.finish
        delta = choice.get("delta") or {}
        content = delta.get("content")
        text = content if isinstance(content, str) else ""
        thought = delta.get("reasoning_content", delta.get("reasoning"))
        thought = thought if isinstance(thought, str) else ""
        self.content += text
        self.reasoning += thought
        if isinstance(delta.get("refusal"), str):
            self.refusal += delta["refusal"]
        for call in delta.get("tool_calls") or ():
            self._call_piece(call)
        for block in delta.get("thinking_blocks") or ():
            self._block_piece(block)
        if isinstance(delta.get("provider_specific_fields"), Mapping):
            self.fields.update(delta["provider_specific_fields"])
        return text, thought

    def _call_piece(self, piece: Mapping[str, Any]) -> None:
        index = piece.get("index", len(self.calls))
        call = self.calls.setdefault(index, {"id": None, "name": "", "arguments": "", "fields": {}})
        call["id"] = call["id"] or piece.get("id")
        function = piece.get("function") or {}
        call["name"] += function.get("name") or ""
        call["arguments"] += function.get("arguments") or ""
        if isinstance(piece.get("provider_specific_fields"), Mapping):
            call["fields"].update(piece["provider_specific_fields"])

    def _block_piece(self, piece: Mapping[str, Any]) -> None:
        """A thinking block's fragment: text and signature add to the open block; a redacted one is whole."""
        if piece.get("type") == "redacted_thinking" or not self.blocks or self.blocks[-1].get("signature"):
            if piece.get("type") == "redacted_thinking" or piece.get("thinking") or piece.get("signature"):
                self.blocks.append({"type": piece.get("type", "thinking"), **dict(piece)})
            return
        last = self.blocks[-1]
        last["thinking"] = str(last.get("thinking") or "") + str(piece.get("thinking") or "")
        if piece.get("signature"):
            last["signature"] = piece["signature"]

    def result(self) -> SimpleNamespace:
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.refusal:
            message["refusal"] = self.refusal
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.blocks:
            message["thinking_blocks"] = self.blocks
        if self.fields:
            message["provider_specific_fields"] = self.fields
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                    **({"provider_specific_fields": c["fields"]} if c["fields"] else {}),
                }
                for _, c in sorted(self.calls.items())
            ]
        data = {
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        }
        return answer(data)


def event_data(line: str) -> dict[str, Any] | None:
    """The JSON of one server-sent event line (`data: {...}`); None for other lines and the `[DONE]` mark."""
    if not line.startswith("data:"):
        return None
    payload = line[5:].strip()
    if not payload or payload == "[DONE]":
        return None
    data = json.loads(payload)
    return data if isinstance(data, dict) else None
