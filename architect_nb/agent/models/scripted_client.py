"""The scripted model (`scripted/<script.yaml>`) replayed in the kernel's own process, without LiteLLM.

Every demo, tutorial and notebook test runs on the scripted model, and LiteLLM takes seconds of CPU and
hundreds of megabytes to import: a script needs none of it. `ScriptedClient` is `LiteLLMClient` with another
way to make one attempt (as `GatewayClient` is), so a scripted turn goes through the same turn as a real
model's: the request, the live text with its thinking, the reply read by `reply_parsing`, the usage. A
script's `price_as` model is priced, and its limits looked up, in LiteLLM's bundled price list read without
importing LiteLLM (`price_list`); the context meter counts at four characters a token, as the scripted
model bills.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from architect_nb.agent.models.client import LLMError, RunCancelledError
from architect_nb.agent.models.gateway_wire import answer
from architect_nb.agent.models.llm import SCRIPTED_PREFIX, LiteLLMClient
from architect_nb.agent.models.model_reply import Usage
from architect_nb.agent.models.price_list import ListedModel, model_entry, price
from architect_nb.agent.models.retry_policy import RetryPolicy
from architect_nb.agent.models.scripted import Script, load_script, next_reply, resolve_script_path
from architect_nb.agent.models.text_tool_calls import LiveText
from architect_nb.config.schema import LLMConfig

__all__ = ["ScriptedClient"]

_CHUNK_CHARS = 12  # the text arrives in small pieces, as a real model's stream does


class ScriptedClient(ListedModel, LiteLLMClient):
    """The model that replays a script's turns (`docs/scripted-model.md`)."""

    def __init__(
        self, config: LLMConfig, *, workspace: Path | None = None, context_window: int | None = None
    ) -> None:
        if not config.model.startswith(SCRIPTED_PREFIX):
            raise ValueError(f"not a scripted model: {config.model!r}")
        super().__init__(config, workspace=workspace, context_window=context_window)
        self.path = resolve_script_path(config.model[len(SCRIPTED_PREFIX) :], workspace)
        self.model = f"{SCRIPTED_PREFIX}{self.path}"  # `display_name` keeps what the person wrote
        self._loaded: tuple[float, Script] | None = None
        self._price_as = self._script().price_as  # a malformed script is said before the run starts

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        thread_position: tuple[int, int],
    ) -> dict[str, Any]:
        """What the script is asked with: a script answers as written, so no thinking or length is tuned."""
        turns_before, run_index = thread_position
        return {
            "messages": list(messages),
            "tools": list(tools),
            "turns_before": turns_before,
            "run_index": run_index,
        }

    def _retry_or_raise(
        self,
        backend: Any,
        exc: Exception,
        policy: RetryPolicy,
        on_notice: Callable[[str], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        """A script is never asked twice: the run has left it, or it cannot be read; the error says which."""
        text = str(exc)
        said = text if text.startswith("Scripted model") else f"Scripted model failed: {text}"
        raise LLMError(said, kind="script") from exc

    def _backend(self) -> None:
        """Nothing to reach: the script is read in the attempt, where a failure is the script's error."""
        return None

    def _script(self) -> Script:
        """The script, read again when its file changed since the last turn (a person editing it)."""
        mtime = self.path.stat().st_mtime if self.path.exists() else -1.0
        if self._loaded is None or self._loaded[0] != mtime:
            self._loaded = (mtime, load_script(self.path))
        return self._loaded[1]

    def _call(
        self,
        backend: None,
        kwargs: dict[str, Any],
        on_text: Callable[[str], None],
        on_thinking: Callable[[str], None],
        should_stop: Callable[[], bool] | None,
    ) -> Any:
        reply = next_reply(
            self._script(),
            kwargs["messages"],
            source=self.path.name,
            tools=kwargs["tools"],
            turns_before=kwargs["turns_before"],
            run_index=kwargs["run_index"],
        )
        if reply.thinking:
            on_thinking(reply.thinking)
        live = LiveText(on_text, on_thinking)
        text = reply.content or ""
        step = _CHUNK_CHARS if self.config.stream else max(1, len(text))
        for start in range(0, len(text), step):
            if should_stop is not None and should_stop():
                raise RunCancelledError("cancelled while the model was answering")
            live(text[start : start + step])
        live.close()
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        finish = "tool_calls" if reply.tool_calls else "stop"
        usage = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
        return answer(
            {
                "model": f"{SCRIPTED_PREFIX}{self.path.name}",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    # ------------------------------------------------------------------ prices and limits

    def _entry(self) -> dict[str, Any] | None:
        return model_entry(self._price_as) if self._price_as else None

    def _price(self, usage: Usage, backend: Any = None) -> Usage:
        return price(usage, self._entry())
