"""`RunState`: one run of the agent loop as it goes: its conversation, its counters and how it is ending.

Everything that belongs to one run lives here, not on the loop, so the loop's collaborators (the model turn,
the tool dispatch, step-through) take the run they work on as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from architect_nb.agent.conversation.context_meter import ContextMeter
from architect_nb.agent.conversation.inspector import RequestLog
from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.events import StopReason
from architect_nb.agent.models.model_reply import ToolCall

__all__ = ["RunState"]


@dataclass
class RunState:
    """One run as it goes: its conversation and how it is ending."""

    run_id: str
    task: str
    thread: Thread
    started: float
    messages: list[dict[str, Any]]
    schemas: list[dict[str, Any]]
    task_message: dict[str, Any] | None  # never compressed away
    position: tuple[int, int]  # (assistant turns, runs) the thread held before this run
    steps: int = 0
    stop: StopReason = "completed"
    message: str = ""
    final_text: str = ""
    log: RequestLog = field(default_factory=RequestLog)  # each request, for the inspector
    meter: ContextMeter = field(default_factory=ContextMeter)
    earlier_end: int = 1  # messages[1:earlier_end] are earlier cells' conversation
    compressed: str = ""  # what compression just did, for the next request's meter
    window: int = 0  # the model's context window, as the step's compression check read it
    edited: dict[str, ToolCall] = field(default_factory=dict)  # calls whose arguments a person edited

    def ends(self, stop: StopReason, message: str) -> None:
        self.stop, self.message = stop, message

    @property
    def offered(self) -> frozenset[str]:
        """The tools this run offers the model."""
        return frozenset(schema["function"]["name"] for schema in self.schemas)
