"""`ContextBuilder`: the conversation sent to the model, kept within its context window.

Everything entering the conversation is redacted first (tool results, hook output, the model's own text and
arguments), so no secret is sent to the model or saved with a thread. What the provider attached to an answer
(thinking blocks and their signatures, thought signatures: `provider_extras`) is the exception: it is signed,
so it goes back exactly as it came, to the model that wrote it; a thread on disk holds it only if redaction
leaves it unchanged. Long tool results are then cut (head and tail kept) before they enter the conversation.
When the conversation nears the window, older steps are compressed in two stages: first their tool outputs
are trimmed, then the oldest steps are replaced by a short summary of what they did. A step (an assistant
message with its thinking and tool calls, and its tool messages) is always kept or dropped whole, so the
OpenAI pairing of calls and results stays valid and a thinking block never loses the calls it signed. In a
thread, the earlier runs' messages are steps like any other; only the current run's task is pinned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from architect_nb.agent.models.model_reply import LLMResponse, ToolCall
from architect_nb.agent.models.token_estimate import estimate_tokens, message_chars
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import ToolResult

__all__ = ["CompressionReport", "ContextBuilder", "estimate_tokens"]

Message = dict[str, Any]
TRIMMED_OUTPUT_CHARS = 300
MAX_IMAGES = 4  # images sent to the model per tool result
# The scripted model counts the steps a summary stands for, so keep this wording in step with it.
SUMMARY_HEADER = "[Summary of {n} earlier steps, compressed to save context]"


def cut_middle(text: str, limit: int, hint: str = "") -> str:
    """`text` with its middle replaced by a marker if it is longer than `limit` characters."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    dropped = len(text) - len(head) - len(tail)
    return f"{head}\n[... {dropped} characters cut{hint} ...]\n{tail}"


@dataclass(frozen=True)
class CompressionReport:
    stage: str  # "trimmed" or "summarized"
    tokens_before: int
    tokens_after: int
    steps_affected: int


class ContextBuilder:
    """Builds and maintains the message list of one run.

    Args:
        max_tool_result_chars: Longer tool results are cut in the middle.
        keep_recent_steps: Steps never compressed, counted from the end.
        compress_at: Compress when the estimate passes this fraction of the context window.
    """

    def __init__(
        self, *, max_tool_result_chars: int = 20_000, keep_recent_steps: int = 3, compress_at: float = 0.75
    ) -> None:
        self.max_tool_result_chars = max_tool_result_chars
        self.keep_recent_steps = keep_recent_steps
        self.compress_at = compress_at
        # The last list measured, its length, its last message and its size in characters: a run's list only
        # grows between two steps, so the next estimate measures the new messages alone.
        self._measured: tuple[Sequence[Message], int, Message | None, int] | None = None

    def estimate(self, messages: Sequence[Message]) -> int:
        """`estimate_tokens(messages)`, measuring only the messages appended since the last call on the same
        list (a run's working list grows by a step at a time; compression resets the count)."""
        memo = self._measured
        if memo is not None and memo[0] is messages and 0 < memo[1] <= len(messages):
            if messages[memo[1] - 1] is memo[2]:
                chars = memo[3] + message_chars(messages[memo[1] :])
            else:
                chars = message_chars(messages)
        else:
            chars = message_chars(messages)
        self._measured = (messages, len(messages), messages[-1] if messages else None, chars)
        return chars // 4

    def start(self, system_prompt: str, task: str) -> list[Message]:
        return [{"role": "system", "content": system_prompt}, {"role": "user", "content": task}]

    def append_assistant(self, messages: list[Message], response: LLMResponse) -> None:
        """A final answer (no tool calls), redacted like everything the conversation holds but its extras."""
        text = default_redactor().redact(response.content or "")
        messages.append({**response.extras, "role": "assistant", "content": text})

    def append_tool_results(
        self,
        messages: list[Message],
        tool_calls: Sequence[ToolCall],
        results: Sequence[ToolResult],
        content: str | None = None,
        *,
        images: bool = False,
        extras: Mapping[str, Any] | None = None,
    ) -> None:
        """The assistant's tool calls and one `tool` message per result, in the OpenAI format. `extras` is
        what the provider attached to the answer (its thinking blocks, ...); the calls carry their own.

        With `images` (the model accepts them), the images results carry (plots from run_python) follow in
        one user message, since tool messages hold text only; otherwise their text descriptions suffice."""
        redactor = default_redactor()
        calls = []
        for call in tool_calls:
            message = call.to_message()
            message["function"] = redactor.redact_data(message["function"])
            calls.append(message)
        messages.append(
            {
                **(extras or {}),
                "role": "assistant",
                "content": redactor.redact(content) if content else content,
                "tool_calls": calls,
            }
        )
        parts: list[dict[str, Any]] = []
        for call, result in zip(tool_calls, results, strict=True):
            # Redacted before the cut (so no fragment of a secret is left) and before the model sees it.
            text = cut_middle(
                redactor.redact(result.to_model_text()),
                self.max_tool_result_chars,
                "; ask for a narrower range to see them",
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            for image in result.metadata.get("images", ())[:MAX_IMAGES] if images else ():
                parts.append({"type": "text", "text": f"An image from {call.name} ({image.get('alt', '')}):"})
                url = f"data:{image.get('mime', 'image/png')};base64,{image.get('data', '')}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
        if parts:
            messages.append({"role": "user", "content": parts})

    # ------------------------------------------------------------------ compression

    def needs_compression(self, messages: Sequence[Message], window_tokens: int) -> bool:
        return self.estimate(messages) > window_tokens * self.compress_at

    def compress(
        self, messages: list[Message], window_tokens: int, *, pinned: int = 1
    ) -> CompressionReport | None:
        """Shrink `messages` in place if they near the window. Returns what was done, or None.

        Stages, each tried only if the previous one was not enough: trim the tool outputs of old steps,
        summarize the old steps, trim the tool outputs of recent steps except the latest. The system prompt
        and the message at index `pinned` (the current run's task) are never trimmed or summarized; a
        summary never spans the pinned message, so the steps on either side of it are summarized apart.
        """
        if not self.needs_compression(messages, window_tokens):
            return None
        self._measured = None  # every stage below rewrites messages in place: measure them afresh
        before = estimate_tokens(messages)
        steps = self._steps(messages, pinned)
        old, recent = steps[: -self.keep_recent_steps or None], steps[-self.keep_recent_steps :]
        if self.keep_recent_steps == 0:
            old, recent = steps, []
        trimmed = self._trim(messages, old)
        self._measured = None
        if not self.needs_compression(messages, window_tokens):
            return CompressionReport("trimmed", before, estimate_tokens(messages), trimmed)
        stage = "trimmed"
        groups = [[s for s in old if s[1] <= pinned], [s for s in old if s[0] > pinned]]
        for group in reversed(groups):  # the later group first, so the earlier one's indexes hold
            if len(group) > 1 or (group and not _is_summary(messages[group[0][0]])):
                first, last = group[0][0], group[-1][1]
                summary = self._summarize(messages[first:last])
                messages[first:last] = [{"role": "user", "content": summary}]
                shift = last - first - 1
                recent = [(a - shift, b - shift) if a >= last else (a, b) for a, b in recent]
                stage = "summarized"
        self._measured = None
        if self.needs_compression(messages, window_tokens):
            trimmed += self._trim(messages, recent[:-1])
            self._measured = None
        if stage == "trimmed" and not trimmed:
            return None
        return CompressionReport(stage, before, estimate_tokens(messages), len(old) or trimmed)

    @staticmethod
    def _trim(messages: list[Message], steps: Sequence[tuple[int, int]]) -> int:
        trimmed = 0
        for start, end in steps:
            for message in messages[start:end]:
                content = message.get("content")
                if (
                    message["role"] == "tool"
                    and isinstance(content, str)
                    and len(content) > TRIMMED_OUTPUT_CHARS
                ):
                    message["content"] = content[:TRIMMED_OUTPUT_CHARS] + "\n[... trimmed to save context]"
                    trimmed += 1
        return trimmed

    @staticmethod
    def _steps(messages: Sequence[Message], pinned: int = 1) -> list[tuple[int, int]]:
        """(start, end) index ranges of the steps after the system prompt, leaving out message `pinned`."""
        steps: list[tuple[int, int]] = []
        i = 1
        while i < len(messages):
            if i == pinned:
                i += 1
                continue
            j = i + 1
            while j < len(messages) and messages[j]["role"] == "tool" and j != pinned:
                j += 1
            steps.append((i, j))
            i = j
        return steps

    @staticmethod
    def _summarize(old: Sequence[Message]) -> str:
        n_steps = 0
        lines: list[str] = []
        results = {m.get("tool_call_id"): str(m.get("content") or "") for m in old if m["role"] == "tool"}
        for message in old:
            content = str(message.get("content") or "")
            if _is_summary(message):
                header, _, body = content.partition("\n")
                n_steps += _summary_steps(header)
                lines.extend(body.splitlines())
                continue
            if message["role"] == "user":
                lines.append(f"- user: {content[:200]}")
                continue
            if message["role"] != "assistant":
                continue
            n_steps += 1
            if content:
                lines.append(f"- you said: {content[:200]}")
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                outcome = results.get(call.get("id"), "")
                status = "failed" if outcome.startswith("Error:") else "ok"
                first_line = outcome.strip().splitlines()[0][:120] if outcome.strip() else ""
                lines.append(
                    f"- {function.get('name')}({str(function.get('arguments'))[:160]}) "
                    f"-> {status}: {first_line}"
                )
        return "\n".join([SUMMARY_HEADER.format(n=n_steps), *lines])


def _is_summary(message: Message) -> bool:
    return message["role"] == "user" and str(message.get("content") or "").startswith(SUMMARY_HEADER[:12])


def _summary_steps(header: str) -> int:
    words = header.split()
    return int(words[2]) if len(words) > 2 and words[2].isdigit() else 0
