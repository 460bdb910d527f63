"""An answer cut off at the model's length limit: how much more room to ask for, or what to do when cut again.

A turn that stops at its output limit in the middle of a tool call (or before it said a word, while it was
thinking) is asked again once with twice the room it used, within the model's own output limit. Cut again,
or with no more room to give, its last call (the one the limit fell in) is not run, and the model is told to
send it in smaller pieces; the cell says so either way. Both answers are billed, so their usage adds up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from architect_nb.agent.models.model_reply import LLMResponse, Usage

__all__ = ["added", "cut_where", "more_room_for", "told_cut"]

_MIN_ROOM = 4096
_SMALLER = (
    "your answer was cut off at the length limit in the middle of this call, so it was not run; send it "
    "again in smaller pieces (for a long file: write part of it, then add the rest with edit_file)"
)


def more_room_for(kwargs: Mapping[str, Any], response: LLMResponse, limit: int | None) -> int | None:
    """A larger `max_tokens` for an answer cut off at its limit (twice what it used, within the model's
    output `limit`), or None when there is no more room to give."""
    used = max(response.usage.completion_tokens, int(kwargs.get("max_tokens") or 0))
    room = max(2 * used, _MIN_ROOM)
    if limit:
        room = min(room, limit)
    return room if room > used else None


def cut_where(response: LLMResponse) -> str:
    if response.tool_calls:
        call = response.tool_calls[-1].name
        return f"The model's answer was cut off at its length limit in the middle of a call to {call}"
    return "The model's answer was cut off at its length limit before it said anything (while it thought)"


def told_cut(response: LLMResponse, *, retried: bool) -> tuple[LLMResponse, str]:
    """An answer cut at the length limit for good, and what the cell says about it: its cut call is not run
    (the model is told why); a text answer cut short stands as it is."""
    if not response.tool_calls and response.content:
        return response, "The model's answer was cut off at its length limit (llm.max_tokens)."
    again = " again" if retried else " (it had all the room the model has)"
    if not response.tool_calls:
        return response, f"{cut_where(response)}{again}, with nothing said; raise llm.max_tokens."
    said = (
        f"{cut_where(response)}{again}; that call was not run, and the model is told to send it in smaller "
        "pieces (or raise llm.max_tokens)."
    )
    last = len(response.tool_calls) - 1
    calls = [
        dataclasses.replace(call, arguments={}, parse_error=_SMALLER)
        if n == last or call.parse_error
        else call
        for n, call in enumerate(response.tool_calls)
    ]
    return dataclasses.replace(response, tool_calls=calls), said


def added(a: Usage, b: Usage) -> Usage:
    """The tokens of two answers together (unpriced: the sum is priced once)."""
    return Usage(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        completion_tokens=a.completion_tokens + b.completion_tokens,
        cached_tokens=a.cached_tokens + b.cached_tokens,
        cache_write_tokens=a.cache_write_tokens + b.cache_write_tokens,
        reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
    )
