"""`EventedConfirmer`: the person-facing confirmer, wrapped so each question and answer is also an event."""

from __future__ import annotations

import threading

from architect_nb.agent.events import ConfirmationAnswered, ConfirmationAsked, EventSink
from architect_nb.execution.confirmation.confirmers import (
    ConfirmationAnswer,
    ConfirmationRequest,
    Confirmer,
    TerminalConfirmer,
)

__all__ = ["EventedConfirmer"]


class EventedConfirmer:
    """Wraps the person-facing confirmer so each question and answer is also an event."""

    def __init__(
        self, inner: Confirmer | None, emit: EventSink, run_id: str, current: threading.local
    ) -> None:
        self.inner = inner
        self.emit = emit
        self.run_id = run_id
        self.current = current  # the model's id for the call this thread is running

    def _call_id(self, request: ConfirmationRequest) -> str:
        return str(getattr(self.current, "call_id", "") or request.call_id)

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        self.emit(
            ConfirmationAsked(
                run_id=self.run_id,
                call_id=self._call_id(request),
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
            self.emit(
                ConfirmationAnswered(
                    run_id=self.run_id,
                    call_id=self._call_id(request),
                    tool=request.tool_name,
                    decision="deny",
                    reason=f"nobody could be asked ({type(exc).__name__})",
                )
            )
            raise
        self.emit(
            ConfirmationAnswered(
                run_id=self.run_id,
                call_id=self._call_id(request),
                tool=request.tool_name,
                decision=str(answer.decision),
                reason=answer.reason,
            )
        )
        return answer
