"""`EventedConfirmer`: the person-facing confirmer, wrapped so each question and answer is also an event."""

from __future__ import annotations

from architect_nb.agent.events import ConfirmationAnswered, ConfirmationAsked, EventSink
from architect_nb.execution.confirmation.confirmers import (
    ConfirmationAnswer,
    ConfirmationRequest,
    Confirmer,
    TerminalConfirmer,
)

__all__ = ["EventedConfirmer"]


class EventedConfirmer:
    """Wraps the person-facing confirmer so each question and answer is also an event.

    The request names its run and the model's id for the call (`ConfirmationRequest.run_id`, `call_id`), so
    the events tie each question to the tool call it is about, with calls running side by side too.
    """

    def __init__(self, inner: Confirmer | None, emit: EventSink) -> None:
        self.inner = inner
        self.emit = emit

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        self.emit(
            ConfirmationAsked(
                run_id=request.run_id,
                call_id=request.call_id,
                tool=request.tool_name,
                arguments=dict(request.args),
                sensitivity=request.sensitivity,
                preview=request.preview,
                reasons=tuple(request.reasons),
            )
        )
        inner = self.inner if self.inner is not None else TerminalConfirmer()
        try:
            answer = ConfirmationAnswer.parse(inner.confirm(request))
        except Exception as exc:
            self._answered(request, "deny", f"nobody could be asked ({type(exc).__name__})")
            raise
        self._answered(request, str(answer.decision), answer.reason)
        return answer

    def _answered(self, request: ConfirmationRequest, decision: str, reason: str) -> None:
        self.emit(
            ConfirmationAnswered(
                run_id=request.run_id,
                call_id=request.call_id,
                tool=request.tool_name,
                decision=decision,
                reason=reason,
            )
        )
