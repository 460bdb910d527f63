"""A LiteLLM response (whole, or rebuilt from a stream) as an `LLMResponse`: text, calls, extras, tokens.

Every provider's answer arrives here in LiteLLM's OpenAI shape. What each adds is kept (`provider_extras`),
calls written as text by a local model are recognised (`text_tool_calls`), and the usage is read with the
cached and reasoning shares (the reasoning estimated from the thinking text where the provider does not
say). Pricing is the client's: it knows the model.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import Any

from architect_nb.agent.models.model_reply import LLMResponse, ToolCall, Usage, make_call
from architect_nb.agent.models.prompt_cache import cache_counts
from architect_nb.agent.models.provider_extras import call_extras, message_extras
from architect_nb.agent.models.text_tool_calls import find_text_calls, split_thinking

__all__ = ["parse_reply", "refusal_words", "usage_counts"]


def parse_reply(response: Any) -> LLMResponse:
    """The first choice of `response` (a LiteLLM `ModelResponse`), with its usage counted but not priced."""
    choice = response.choices[0]
    message = choice.message
    content: str | None = message.content if isinstance(message.content, str) else None
    extras = message_extras(message)
    calls = [
        make_call(
            getattr(c, "id", None) or f"call_{i}",
            getattr(c.function, "name", None) or "",
            getattr(c.function, "arguments", None) or "",
            call_extras(c),
        )
        for i, c in enumerate(message.tool_calls or [])
    ]
    if content and not extras.get("reasoning_content") and not extras.get("thinking_blocks"):
        thought, rest = split_thinking(content)
        if thought:
            extras["reasoning_content"], content = thought, rest or None
    if content and not calls:
        rest, found = find_text_calls(content)
        if found:
            content = rest or None
            turn = secrets.token_hex(4)  # ids unique across turns, as a provider's are
            calls = [
                _text_call(f"call_{turn}_{n}", c.name, c.arguments, c.problem) for n, c in enumerate(found)
            ]
    finish = str(choice.finish_reason or "stop")
    usage = usage_counts(getattr(response, "usage", None))
    reply = LLMResponse(content, calls, usage, finish, extras)
    return replace(reply, usage=replace(usage, reasoning_tokens=_thinking_tokens(usage, reply.thinking)))


def _thinking_tokens(usage: Usage, thinking: str) -> int:
    """The reasoning share of the output: as reported, else about four characters a token of the thinking
    text (Anthropic and Ollama do not report it apart), never more than the output."""
    reported = usage.reasoning_tokens or (max(1, len(thinking) // 4) if thinking else 0)
    return min(reported, usage.completion_tokens) if usage.completion_tokens else reported


def _text_call(call_id: str, name: str, arguments: str, problem: str | None) -> ToolCall:
    call = make_call(call_id, name, arguments)
    if problem is not None:
        return ToolCall(call.id, name, {}, arguments, problem)
    return call


def usage_counts(usage: Any) -> Usage:
    """The tokens of a LiteLLM usage object: input (with the cached share), output (with the reasoning
    share, which every provider counts and bills as output)."""
    read, written = cache_counts(usage)
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None)
    return Usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cached_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=reasoning if isinstance(reasoning, int) and reasoning > 0 else 0,
    )


def refusal_words(response: Any, reply: LLMResponse) -> str | None:
    """What the provider said when it refused to answer (OpenAI's `refusal`, the text of a turn stopped by a
    content filter), or None when the turn was not a refusal."""
    message = response.choices[0].message
    refusal = getattr(message, "refusal", None)
    if isinstance(refusal, str) and refusal.strip():
        return refusal.strip()
    if reply.finish_reason != "content_filter":
        return None
    if (reply.content or "").strip():
        return (reply.content or "").strip()
    blocked = sorted(
        {
            str(rating.get("category", "")).removeprefix("HARM_CATEGORY_").lower().replace("_", " ")
            for ratings in getattr(response, "vertex_ai_safety_ratings", None) or ()
            for rating in (ratings if isinstance(ratings, list) else [ratings])
            if isinstance(rating, dict) and rating.get("blocked")
        }
    )
    if blocked:
        return f"its safety filter blocked the answer ({', '.join(blocked)})"
    return "its content filter stopped the answer and gave no reason"
