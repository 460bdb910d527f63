"""The model client seam: what the agent loop needs from a model (`LLMClient`), and how a call fails.

`LiteLLMClient` (`llm`) and `GatewayClient` (`gateway`) implement it; `create_loop(config, llm=...)` takes any
object that does, such as the scripted model `architect_nb.testing.scripted_model` builds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from architect_nb.agent.models.model_reply import LLMResponse

__all__ = ["LLMClient", "LLMError", "RunCancelledError"]


class LLMError(RuntimeError):
    """The model could not be called. The message says what to do (set a key, fix the model name, ...).

    `kind` is "script" when a scripted run left its script, "context_window" when the conversation is longer
    than the model's window, "refused" when the provider refused to answer, otherwise "llm".
    """

    def __init__(self, message: str, kind: str = "llm") -> None:
        super().__init__(message)
        self.kind = kind


class RunCancelledError(RuntimeError):
    """The run was cancelled while waiting for the model."""


class LLMClient(Protocol):
    """What the agent loop needs from a model: `LiteLLMClient`, or `GatewayClient` behind a gateway."""

    model: str

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        """One model turn. `on_text` and `on_thinking` get the answer and the thinking as they arrive,
        `on_notice` what the person should know meanwhile (a wait before a retry). `thread_position` is
        (assistant turns, runs) the thread held before this run, so the scripted model answers a follow-up
        run from the first turn of its own script."""
        ...

    def context_window(self) -> int: ...

    def supports_images(self) -> bool:
        """Whether the model accepts images (plots made by run_python are then sent to it)."""
        ...
