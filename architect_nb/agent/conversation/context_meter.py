"""The context meter: what fills the model's window at each step, by part.

The parts are the system prompt, the tool schemas, the earlier cells' conversation (the thread's messages
from before this run), this run's messages (its task, the model's turns, notes) and this run's tool results.
Each message is counted once (by its content hash, so a message compression left alone is not counted again)
with the model's own counter when there is one (LiteLLM's `token_counter`), else at four characters a token.
The schemas are counted once a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from architect_nb.agent.models.token_estimate import estimate_request_tokens

__all__ = ["PARTS", "ContextMeter", "Counter", "estimate_request_tokens"]

#: The parts, in the order the header shows them.
PARTS = ("system", "tools", "earlier", "messages", "tool_results")

#: Tokens of `messages` and `tools` (either may be empty), as the model's provider would count them.
Counter = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], int]


class ContextMeter:
    """Counts one run's requests by part.

    Args:
        counter: The model's token counter; None counts at four characters a token.
    """

    def __init__(self, counter: Counter | None = None) -> None:
        self.counter = counter or estimate_request_tokens
        self._tokens: dict[str, int] = {}
        self._tools: tuple[str, int] | None = None
        self._overhead: int | None = None
        self._sums = dict.fromkeys(PARTS, 0)  # the messages' parts counted so far
        self._counted = 0  # messages in `_sums`

    def _count(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> int:
        try:
            return int(self.counter(messages, tools))
        except Exception:  # a counter that cannot read this content: estimate it
            return estimate_request_tokens(messages, tools)

    def measure(
        self,
        messages: Sequence[Mapping[str, Any]],
        hashes: Sequence[str],
        tools: Sequence[Mapping[str, Any]],
        tools_hash: str,
        window: int,
        *,
        earlier_end: int = 1,
        keep: int = 0,
    ) -> dict[str, Any]:
        """The parts of one request (`hashes` are its messages' content hashes, from the `RequestLog`);
        `messages[1:earlier_end]` are the earlier cells' conversation. `keep` messages are unchanged since the
        previous request: when those are all it had, only the new ones are counted, so a step costs the
        same at step 400 as at step 4."""
        if self._overhead is None:  # what the counter adds to any request (the reply's priming)
            self._overhead = max(0, self._count([], []))
        if self._tools is None or self._tools[0] != tools_hash:
            self._tools = (tools_hash, max(0, self._count([], tools) - self._overhead) if tools else 0)
        if keep != self._counted or keep > len(messages):  # rewritten (compression, an edit): all again
            self._sums, self._counted = dict.fromkeys(PARTS, 0), 0
        sums = self._sums
        start = self._counted
        for index in range(start, len(messages)):
            message, digest = messages[index], hashes[index]
            tokens = self._tokens.get(digest)
            if tokens is None:
                tokens = max(0, self._count([message], []) - self._overhead)
                self._tokens[digest] = tokens
            if index == 0 and message.get("role") == "system":
                part = "system"
            elif index < earlier_end:
                part = "earlier"
            elif message.get("role") == "tool":
                part = "tool_results"
            else:
                part = "messages"
            sums[part] += tokens
        self._counted = len(messages)
        parts = {**sums, "tools": self._tools[1]}
        total = sum(parts.values()) + self._overhead
        return {"parts": parts, "total": total, "window": window}
