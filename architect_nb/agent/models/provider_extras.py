"""What a provider attaches to its answer for itself, kept so it goes back unchanged on the next turn.

LiteLLM hands these over on the assistant message and on each tool call, beside the text and the calls:

- `thinking_blocks`: Claude's extended thinking, each block with the signature that proves it is the
  model's own (or a `redacted_thinking` block holding it encrypted). Anthropic refuses a tool-use turn whose
  thinking does not come back with it, or comes back changed.
- `reasoning_content`: the thinking as plain text (DeepSeek and Ollama want it back; others ignore it).
- `provider_specific_fields`: what else the provider said, e.g. Gemini's `thought_signatures` on the message
  and a `thought_signature` on each function call, which Gemini 3 requires back on the next turn.

`message_extras` and `call_extras` take them from a LiteLLM message or tool call as plain JSON (so they are
saved with a thread), leaving out empty values and the copies LiteLLM makes of the top-level fields inside
`provider_specific_fields` (when streaming, that copy is only the last fragment). They are signed or opaque,
so they are never redacted in the conversation: the model wrote them and they go back to the model that
wrote them. `redacted_message` is for writing to disk, where everything is redacted: a message whose extras
would change is saved without them rather than with a broken signature. `thinking_text` is the thinking for
people, whom the views show it to redacted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "CALL_KEYS",
    "MESSAGE_KEYS",
    "call_extras",
    "message_extras",
    "redacted_message",
    "thinking_text",
    "without_extras",
]

MESSAGE_KEYS = ("thinking_blocks", "reasoning_content", "provider_specific_fields")
CALL_KEYS = ("provider_specific_fields",)
REDACTED_THINKING = "[thinking the provider keeps encrypted]"


def message_extras(message: Any) -> dict[str, Any]:
    """The extras of a LiteLLM assistant message (a `Message` or a dict), as plain JSON."""
    extras: dict[str, Any] = {}
    for key in MESSAGE_KEYS:
        value = _plain(_get(message, key))
        if key == "provider_specific_fields" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in MESSAGE_KEYS and not _empty(v)}
        if not _empty(value):
            extras[key] = value
    return extras


def call_extras(call: Any) -> dict[str, Any]:
    """The extras of one LiteLLM tool call: its provider-specific fields, and those LiteLLM put on its
    `function` (merged: LiteLLM reads a thought signature from either place)."""
    fields: dict[str, Any] = {}
    on_function = _get(_get(call, "function"), "provider_specific_fields")
    for source in (on_function, _get(call, "provider_specific_fields")):
        value = _plain(source)
        if isinstance(value, dict):
            fields.update({k: v for k, v in value.items() if not _empty(v)})
    return {"provider_specific_fields": fields} if fields else {}


def thinking_text(extras: Mapping[str, Any]) -> str:
    """The model's thinking in words: its thinking blocks, else its reasoning text; "" when it had none."""
    blocks = extras.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        parts = []
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "redacted_thinking":
                parts.append(REDACTED_THINKING)
            elif str(block.get("thinking") or "").strip():
                parts.append(str(block["thinking"]).strip())
        if parts:
            return "\n\n".join(parts)
    reasoning = extras.get("reasoning_content")
    return reasoning.strip() if isinstance(reasoning, str) else ""


def without_extras(message: Mapping[str, Any]) -> dict[str, Any]:
    """`message` without its extras, nor those of its tool calls."""
    out = {k: v for k, v in message.items() if k not in MESSAGE_KEYS}
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {k: v for k, v in call.items() if k not in CALL_KEYS} if isinstance(call, Mapping) else call
            for call in calls
        ]
    return out


def redacted_message(message: Mapping[str, Any], redact_data: Callable[[Any], Any]) -> dict[str, Any]:
    """`message` redacted for saving. Redaction that would change its extras (a secret in a thinking block)
    drops them instead: a changed block fails its signature, a missing one only costs that turn's thinking."""
    out = redact_data(dict(message))
    if not isinstance(out, dict):
        return dict(message)
    if _extras_of(out) != _extras_of(message):
        return without_extras(out)
    return out


def _extras_of(message: Mapping[str, Any]) -> tuple[Any, ...]:
    calls = message.get("tool_calls")
    per_call = [{k: call.get(k) for k in CALL_KEYS} for call in calls or () if isinstance(call, Mapping)]
    return ({k: message.get(k) for k in MESSAGE_KEYS}, per_call)


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _plain(value: Any) -> Any:
    """`value` as plain JSON data: Pydantic models and mappings as dicts, sequences as lists."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)
