"""`ModelTurn`: the model's side of one step: the request, the streamed answer, and what it cost.

Before the call the request is recorded for the inspector with the context meter; the answer streams to the
event stream as text and thinking; a conversation over the model's window is compressed and sent once more;
the turn's tokens and cost are counted against the budget. The loop calls `take` once a step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from architect_nb.agent.code_hints import CodeBlockCutter, cut_code_blocks
from architect_nb.agent.conversation.context import ContextBuilder, estimate_tokens
from architect_nb.agent.conversation.inspector import reply_record
from architect_nb.agent.costs import CostTracker
from architect_nb.agent.events import (
    CostUpdate,
    EventSink,
    ModelReply,
    ModelRequest,
    RunWarning,
    TextDelta,
    ThinkingDelta,
)
from architect_nb.agent.models.client import LLMClient, LLMError, RunCancelledError
from architect_nb.agent.models.model_reply import LLMResponse
from architect_nb.agent.run_hooks import RunHooks
from architect_nb.agent.run_state import RunState
from architect_nb.execution.hooks.executor import HookEvent

__all__ = ["ModelClientError", "ModelTurn"]


class ModelClientError(RuntimeError):
    """An exception raised inside the model client (not an `LLMError`): a bug, reported as one."""


class ModelTurn:
    """The model turns of one loop's runs.

    Args:
        llm: The model client.
        context: How the conversation is kept within the model's window.
        costs: The loop's tokens, cost and budget.
        emit: The loop's event stream.
        edges: The hooks a turn fires (budget warnings, compression).
        cancelled: Whether the run was asked to stop (a stream stops between chunks).
        code_limit: Under a `hints` teaching policy, the longest code block shown (`code_hints`): longer
            ones are cut from the answer as it streams, and from the answer kept; None shows all.
    """

    def __init__(
        self,
        llm: LLMClient,
        context: ContextBuilder,
        costs: CostTracker,
        emit: EventSink,
        edges: RunHooks,
        cancelled: Callable[[], bool],
        code_limit: Callable[[], int | None] = lambda: None,
    ) -> None:
        self.llm = llm
        self.context = context
        self.costs = costs
        self.emit = emit
        self.edges = edges
        self.cancelled = cancelled
        self.code_limit = code_limit
        self._images: bool | None = None  # whether the model accepts images (asked once)

    def take(self, run: RunState) -> LLMResponse:
        """The model's turn. A context window exceeded compresses the conversation and sends it once more."""
        try:
            response = self._complete(run)
        except LLMError as exc:
            if exc.kind != "context_window":
                raise
            if not self.compress(run, force=True):
                raise LLMError(f"{exc} Nothing was left to compress; start a new thread (--new).") from exc
            try:
                response = self._complete(run)
            except LLMError as again:
                if again.kind != "context_window":
                    raise
                raise LLMError(
                    f"{again} It was compressed and sent again, and was still too long; start a new thread "
                    "(--new), or fork an earlier run."
                ) from again
        self._count(run, response)
        return response

    def sees_images(self) -> bool:
        """Whether the model accepts images (plots made by run_python are then sent to it)."""
        if self._images is None:
            try:
                self._images = bool(self.llm.supports_images())
            except Exception:  # an unknown model: describe images in words
                self._images = False
        return self._images

    def compress(self, run: RunState, *, force: bool = False) -> bool:
        """Compress the conversation if it nears the model's window; `force` (the provider said it is over
        the window) to about 60% of its estimated size. Whether it was compressed."""
        window = run.window = self.llm.context_window()
        messages = run.messages
        if force:  # the estimate said it fits: aim below what was sent
            window = min(window, max(1, int(estimate_tokens(messages) * 0.6 / self.context.compress_at)))
        if not self.context.needs_compression(messages, window):
            return False
        self.edges.notify(run.run_id, HookEvent.CONTEXT_COMPRESS, {"messages": len(messages)})
        pinned = next((i for i, m in enumerate(messages) if m is run.task_message), 0)
        report = self.context.compress(messages, window, pinned=pinned)
        if report is not None:
            said = (
                f"Context compressed ({report.stage} {report.steps_affected} older step(s)): "
                f"~{report.tokens_before} → ~{report.tokens_after} tokens."
            )
            self.emit(RunWarning(run_id=run.run_id, message=said, category="context"))
            run.log.rewritten()
            run.compressed = said
            task_at = next((i for i, m in enumerate(messages) if m is run.task_message), None)
            run.earlier_end = task_at if task_at is not None else min(run.earlier_end, len(messages))
        return report is not None

    def _complete(self, run: RunState) -> LLMResponse:
        step, run_id = run.steps, run.run_id
        limit = self.code_limit()
        text_cut = CodeBlockCutter(limit) if limit is not None else None
        thinking_cut = CodeBlockCutter(limit) if limit is not None else None

        def on_text(text: str) -> None:
            shown = text_cut.feed(text) if text_cut is not None else text
            if shown:
                self.emit(TextDelta(run_id=run_id, step=step, text=shown))

        def on_thinking(text: str) -> None:
            shown = thinking_cut.feed(text) if thinking_cut is not None else text
            if shown:
                self.emit(ThinkingDelta(run_id=run_id, step=step, text=shown))

        def on_notice(message: str) -> None:
            self.emit(RunWarning(run_id=run_id, message=message, category="model"))

        self._record_request(run)
        try:
            response = self.llm.complete(
                run.messages,
                run.schemas,
                on_text=on_text,
                on_thinking=on_thinking,
                on_notice=on_notice,
                should_stop=self.cancelled,
                thread_position=run.position,
            )
        except (LLMError, RunCancelledError):
            raise
        except Exception as exc:
            raise ModelClientError(str(exc)) from exc
        if text_cut is not None and thinking_cut is not None and limit is not None:
            for cutter, event in ((text_cut, TextDelta), (thinking_cut, ThinkingDelta)):
                if rest := cutter.finish():
                    self.emit(event(run_id=run_id, step=step, text=rest))
            if response.content:  # what the conversation, the thread and the record keep
                response = dataclasses.replace(response, content=cut_code_blocks(response.content, limit))
        reply = reply_record(response)
        if limit is not None and reply["thinking"]:  # the provider's own blocks (extras) stay as sent
            reply["thinking"] = cut_code_blocks(reply["thinking"], limit)
        self.emit(
            ModelReply(
                run_id=run_id,
                step=step,
                content=reply["content"],
                tool_calls=tuple(reply["tool_calls"]),
                thinking=reply["thinking"],
                finish_reason=reply["finish_reason"],
                usage=reply["usage"],
            )
        )
        return response

    def _record_request(self, run: RunState) -> None:
        """The request as sent, for the inspector (repeated parts once), with the context meter."""
        request, parts = run.log.record(run.messages, run.schemas)
        meter = run.meter.measure(
            run.messages,
            run.log.hashes,
            run.schemas,
            request["tools"],
            run.window or self.llm.context_window(),
            earlier_end=run.earlier_end,
            keep=request["keep"],
        )
        if run.compressed:
            meter["compressed"], run.compressed = run.compressed, ""
        self.emit(ModelRequest(run_id=run.run_id, step=run.steps, request=request, parts=parts, meter=meter))

    def _count(self, run: RunState, response: LLMResponse) -> None:
        """The turn's tokens and cost: the budget's warnings, and a `CostUpdate`."""
        for warning in self.costs.add(response.usage):
            self.emit(RunWarning(run_id=run.run_id, message=warning, category="budget"))
            context = {"message": warning, "cost_usd": self.costs.cost_usd}
            self.edges.notify(run.run_id, HookEvent.BUDGET_WARNING, context)
        usage = response.usage
        self.emit(
            CostUpdate(
                run_id=run.run_id,
                step=run.steps,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=usage.cost_usd,
                total_tokens=self.costs.total_tokens,
                total_cost_usd=self.costs.cost_usd,
                priced=self.costs.priced,
                cached_tokens=usage.cached_tokens,
                total_cached_tokens=self.costs.cached_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                total_reasoning_tokens=self.costs.reasoning_tokens,
            )
        )
