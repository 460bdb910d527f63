"""Prompt caching: the markers some providers need, and the cached share of the input a response reports.

Each step resends the system prompt, the tool schemas and the whole conversation. Providers cache a long
prefix they have seen (OpenAI, DeepSeek and Gemini on their own) and bill it at a fraction of the price;
Anthropic's Claude models (directly, or through Bedrock, Vertex AI or OpenRouter) cache only up to blocks
marked with `cache_control`. For those, `with_markers` marks three places: the system prompt (Anthropic puts
the tools before it, so both are cached), the newest message (written to the cache for the next step), and
the last message of the previous request (read from the cache this step). A marker on a message is moved by
LiteLLM onto its last content block; the messages are copied, never changed in place.

`cache_counts` reads how many input tokens came from the cache and how many were written to it, from the
usage LiteLLM returns: OpenAI's `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`
and `cache_creation_input_tokens`. LiteLLM counts both inside `prompt_tokens` and prices them at the
provider's cached rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MARKER", "cache_counts", "needs_markers", "with_markers"]

MARKER: Mapping[str, str] = {"type": "ephemeral"}
_ROUTERS = ("bedrock/", "vertex_ai/", "openrouter/")
_MARKABLE = frozenset({"system", "user", "tool"})


def needs_markers(model: str) -> bool:
    """Whether `model` (a LiteLLM model string) caches only what `cache_control` marks: Claude models."""
    name = model.lower()
    if name.startswith(("anthropic/", "claude")):
        return True
    return name.startswith(_ROUTERS) and "claude" in name


def with_markers(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`messages` (OpenAI format) with `cache_control` on the system prompt, the newest message and the end
    of the previous request; only those three messages are copied."""
    out: list[dict[str, Any]] = [m if isinstance(m, dict) else dict(m) for m in messages]
    if not out:
        return out
    marks = {len(out) - 1}
    if out[0].get("role") == "system":
        marks.add(0)
    last_assistant = next((i for i in range(len(out) - 1, -1, -1) if out[i].get("role") == "assistant"), None)
    if last_assistant is not None and last_assistant > 0:
        marks.add(last_assistant - 1)
    for index in marks:
        if out[index].get("role") in _MARKABLE and out[index].get("content"):
            out[index] = {**out[index], "cache_control": dict(MARKER)}
    return out


def cache_counts(usage: Any) -> tuple[int, int]:
    """(input tokens read from the cache, input tokens written to it) in a LiteLLM usage object."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = _int(getattr(details, "cached_tokens", 0)) or _int(getattr(usage, "cache_read_input_tokens", 0))
    written = _int(getattr(usage, "cache_creation_input_tokens", 0)) or _int(
        getattr(details, "cache_creation_tokens", 0)
    )
    return read, written


def _int(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0
