"""Step-through: the run pauses before each model call and each tool call, and a person decides.

The loop asks its `Stepper` (`AgentLoop(stepper=...)`, `%%architect --step`) at two points:

- before a model call (`ModelPause`): Continue; Edit result (replace what the previous step's tool calls
  returned, so the model sees the edited text next); Fork here; Stop;
- before a tool call (`ToolPause`): Continue; Edit arguments (checked against the tool's schema; invalid
  ones are refused and the pause asked again); Skip (the call is not run, and the model is told it was
  skipped); Fork here; Stop.

Fork here stops the run at the end of the previous step and leaves `AgentLoop.forked`, a new thread from that
point (in a notebook, `%%architect --fork RUN:STEP` carries on from it, with another model if you like).
`Stepper` is one method; `StepScript` answers from a list (what notebook 03 and 05 use), and the notebook's
buttons are `notebook.questions.stepping.WidgetStepper`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "ModelPause",
    "Pause",
    "StepAction",
    "StepDecision",
    "StepScript",
    "Stepper",
    "ToolPause",
    "check_arguments",
]

StepAction = Literal["continue", "edit_arguments", "edit_result", "skip", "fork", "stop"]
#: What each pause offers.
MODEL_ACTIONS: tuple[StepAction, ...] = ("continue", "edit_result", "fork", "stop")
TOOL_ACTIONS: tuple[StepAction, ...] = ("continue", "edit_arguments", "skip", "fork", "stop")
SKIPPED = "Skipped: the person stepping through the run chose not to run this call."


@dataclass(frozen=True)
class StepDecision:
    """What to do at a pause. `arguments` for edit_arguments; `results` (call id → the text the model sees)
    for edit_result; `reason` for a stop nobody chose (a headless run), said where the run ends."""

    action: StepAction = "continue"
    arguments: dict[str, Any] | None = None
    results: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @classmethod
    def go(cls) -> StepDecision:
        return cls("continue")

    @classmethod
    def edit_arguments(cls, arguments: Mapping[str, Any]) -> StepDecision:
        return cls("edit_arguments", arguments=dict(arguments))

    @classmethod
    def edit_result(cls, results: Mapping[str, str]) -> StepDecision:
        return cls("edit_result", results=dict(results))

    @classmethod
    def skip(cls) -> StepDecision:
        return cls("skip")

    @classmethod
    def fork(cls) -> StepDecision:
        return cls("fork")

    @classmethod
    def stop(cls, reason: str = "") -> StepDecision:
        return cls("stop", reason=reason)


@dataclass(frozen=True)
class ModelPause:
    """Before the model is called at `step`: the request it will get, and the tool results it will read
    first (call id → text), which `edit_result` may replace. `problem` says why a pause is asked again."""

    step: int
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    results: dict[str, str]
    problem: str = ""
    kind: Literal["model"] = "model"

    @property
    def actions(self) -> tuple[StepAction, ...]:
        return MODEL_ACTIONS if self.results else tuple(a for a in MODEL_ACTIONS if a != "edit_result")


@dataclass(frozen=True)
class ToolPause:
    """Before the tool call `call_id` of `step` runs, with the arguments the model wrote."""

    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]
    schema: Mapping[str, Any] | None
    problem: str = ""
    kind: Literal["tool"] = "tool"

    @property
    def actions(self) -> tuple[StepAction, ...]:
        return TOOL_ACTIONS


Pause = ModelPause | ToolPause


class Stepper(Protocol):
    """Decides at each pause. Called on the loop's thread; may block until a person answers."""

    def decide(self, pause: Pause) -> StepDecision: ...


class StepScript:
    """A stepper answering from a list (then Continue), or from a function of the pause; it keeps every
    pause it saw in `pauses`, for a notebook to show what the model was about to get."""

    def __init__(
        self,
        decisions: Iterable[StepDecision] | Callable[[Pause], StepDecision | None] = (),
    ) -> None:
        self._decide = decisions if callable(decisions) else None
        self._queue = [] if callable(decisions) else list(decisions)
        self.pauses: list[Pause] = []

    def decide(self, pause: Pause) -> StepDecision:
        self.pauses.append(pause)
        if self._decide is not None:
            return self._decide(pause) or StepDecision.go()
        return self._queue.pop(0) if self._queue else StepDecision.go()


def check_arguments(tool: Any, arguments: object) -> str | None:
    """Why `arguments` do not fit `tool`'s schema (one sentence), or None when they do."""
    if not isinstance(arguments, dict):
        return "The arguments must be a JSON object of named arguments."
    if tool is None:
        return "There is no such tool in this run."
    from pydantic import ValidationError

    from architect_nb.tools.base import format_validation_error

    try:
        tool.validate_args(arguments)
    except ValidationError as exc:
        return format_validation_error(tool.name, exc)
    except Exception as exc:  # a tool whose validation itself broke: refuse, never run it unchecked
        return f"The arguments could not be checked: {type(exc).__name__}: {exc}"
    return None


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments typed as JSON: (the object, None), or (None, why not)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"That is not valid JSON ({exc.msg} at character {exc.pos})."
    if not isinstance(value, dict):
        return None, "The arguments must be a JSON object of named arguments."
    return value, None
