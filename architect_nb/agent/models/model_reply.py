"""What one model turn gave back: `LLMResponse`, its `ToolCall`s and its `Usage`.

Besides the text, the calls and the tokens, a turn carries what the provider attached for itself (`extras`):
Claude's thinking blocks and their signatures, Gemini's thought signatures, a reasoning text, the
provider-specific fields LiteLLM exposes. They go back unchanged in the assistant message of the next
request (`to_message`), which is why the message is built from these objects and nothing else.

`message_text` reads a message of the conversation back as text: its content and its calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from architect_nb.agent.models.provider_extras import thinking_text

__all__ = ["LLMResponse", "ToolCall", "Usage", "make_call", "message_text"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for. `raw_arguments` is the text it sent; `parse_error` says why it is not a
    JSON object of arguments (the call is then not run and the model is told). `extras` is what the provider
    attached to the call (a Gemini thought signature, ...), sent back with it as it came."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    parse_error: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def to_message(self) -> dict[str, Any]:
        """The call in the assistant message. Unreadable arguments go back as `{}` (the tool result quotes
        them): LiteLLM cannot convert them for Anthropic or Gemini, whose calls carry JSON objects."""
        raw = (
            self.raw_arguments
            if self.raw_arguments and self.parse_error is None
            else json.dumps(self.arguments)
        )
        return {
            **self.extras,
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": raw},
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one model turn. `cached_tokens` of the `prompt_tokens` were read from the provider's prompt
    cache and `cache_write_tokens` written to it; both are priced at the provider's cached rates.
    `reasoning_tokens` of the `completion_tokens` were spent thinking: they are output, and priced as such."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = False
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One model turn. `finish_reason` is LiteLLM's (OpenAI's words): stop, tool_calls, length,
    content_filter. `extras` is what the provider attached to the message (thinking blocks, ...)."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def thinking(self) -> str:
        """The model's thinking as text, for people (not redacted: the views redact it)."""
        return thinking_text(self.extras)

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation (OpenAI format, with the extras)."""
        message: dict[str, Any] = {**self.extras, "role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


def make_call(call_id: str, name: str, raw: str, extras: Mapping[str, Any] | None = None) -> ToolCall:
    """A call from the arguments as the model wrote them: parsed, or with the reason they cannot be.

    A JSON string holding the object (arguments encoded twice, as some local models send them) is read as
    that object; anything else that is not an object is refused, never guessed."""
    extras = dict(extras or {})
    try:
        parsed = json.loads(raw) if raw.strip() else {}
        if isinstance(parsed, str) and parsed.strip().startswith("{"):
            parsed = json.loads(parsed)
    except json.JSONDecodeError as exc:
        why = f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        return ToolCall(call_id, name, {}, raw, why, extras)
    if not isinstance(parsed, dict):
        why = f"the arguments must be a JSON object of named arguments, not a JSON {_json_type(parsed)}"
        return ToolCall(call_id, name, {}, raw, why, extras)
    return ToolCall(call_id, name, parsed, raw, None, extras)


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text and its tool calls' names and arguments, for checks that search the history."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(p for p in parts if p)
