"""`StepThrough`: the loop's collaborator for `--step`: it asks the `Stepper` before each model call and each
tool call, and carries out the answer (edited arguments or results, a skip, a fork, a stop).

The pauses and the answers are `agent.stepping`'s; this module is what the loop does with them, so the loop
itself only asks "may the model go on?" and "what runs instead of this call?".
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from architect_nb.agent.conversation.thread import Thread, ThreadError
from architect_nb.agent.events import EventSink, RunWarning, StopReason
from architect_nb.agent.models.model_reply import ToolCall
from architect_nb.agent.run_state import RunState
from architect_nb.agent.stepping import (
    SKIPPED,
    ModelPause,
    Pause,
    StepDecision,
    Stepper,
    ToolPause,
    check_arguments,
)
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import CallOutcome, ToolResult
from architect_nb.tools.registry import ToolRegistry

__all__ = ["StepThrough"]


class StepThrough:
    """Step-through for one loop.

    Args:
        stepper: Who is asked at each pause (the notebook's buttons, a script).
        registry: Where edited arguments are checked against the tool's schema.
        emit: The loop's event stream.
        stop_run: Stops the run at the next safe point, with this reason.
    """

    def __init__(
        self,
        stepper: Stepper,
        registry: ToolRegistry,
        emit: EventSink,
        stop_run: Callable[[StopReason], None],
    ) -> None:
        self.stepper = stepper
        self.registry = registry
        self.emit = emit
        self.stop_run = stop_run
        self.stopped_by = ""  # why the person stopped the run
        self.forked: Thread | None = None  # the thread a "Fork here" made

    def before_model(self, run: RunState) -> bool:
        """Ask before the model call; False when the run stops here."""
        last_call = max((i for i, m in enumerate(run.messages) if m.get("role") == "assistant"), default=-1)
        tools_after = [
            (i, m)
            for i, m in enumerate(run.messages[last_call + 1 :], last_call + 1)
            if m.get("role") == "tool"
        ]
        results = {str(m.get("tool_call_id")): str(m.get("content") or "") for _, m in tools_after}
        pause = ModelPause(
            step=run.steps, messages=tuple(run.messages), tools=tuple(run.schemas), results=results
        )
        decision = self._ask(pause)
        if decision.action in ("fork", "stop"):
            self._stop(run, decision, "before the model call")
            run.ends("aborted", self.stopped_by)
            return False
        if decision.action == "edit_result":
            redact = default_redactor().redact
            edits = {k: redact(v) for k, v in decision.results.items() if k in results}
            for _, message in tools_after:
                if (call_id := str(message.get("tool_call_id"))) in edits:
                    message["content"] = edits[call_id]
            for message in run.thread.messages[last_call - len(run.messages) :]:
                if message.get("role") == "tool" and str(message.get("tool_call_id")) in edits:
                    message["content"] = edits[str(message.get("tool_call_id"))]
            run.log.rewritten()
            for call_id in edits:
                said = f"The result of call {call_id} was edited: the model reads the new text."
                self.emit(RunWarning(run_id=run.run_id, message=said, category="step"))
        return True

    def before_tool(self, run: RunState, call: ToolCall) -> ToolCall | ToolResult:
        """Ask before a tool call: the call to run (maybe with edited arguments), or the result instead."""
        tool = self.registry.get(call.name) if self.registry.has_tool(call.name) else None
        schema = next((s for s in run.schemas if s["function"]["name"] == call.name), None)
        problem = ""
        while True:
            pause = ToolPause(
                step=run.steps,
                call_id=call.id,
                tool=call.name,
                arguments=dict(call.arguments),
                schema=schema,
                problem=problem,
            )
            decision = self._ask(pause)
            if decision.action == "continue":
                return call
            if decision.action == "skip":
                return ToolResult.refused(CallOutcome.SKIPPED, SKIPPED)
            if decision.action in ("fork", "stop"):
                self._stop(run, decision, f"before the call to {call.name}")
                return ToolResult.refused(CallOutcome.SKIPPED, f"Not run: {self.stopped_by}")
            problem = check_arguments(tool, decision.arguments) or ""
            if not problem:
                arguments = dict(decision.arguments or {})
                edited = dataclasses.replace(call, arguments=arguments, raw_arguments=json.dumps(arguments))
                run.edited[call.id] = edited
                said = f"The arguments of call {call.id} ({call.name}) were edited before it ran."
                self.emit(RunWarning(run_id=run.run_id, message=said, category="step"))
                return edited

    def _ask(self, pause: Pause) -> StepDecision:
        decision = self.stepper.decide(pause)
        if decision.action not in pause.actions:
            raise ValueError(
                f"{decision.action!r} is not offered here; choose one of {', '.join(pause.actions)}"
            )
        return decision

    def _stop(self, run: RunState, decision: StepDecision, where: str) -> None:
        """Stop (or fork and stop) at a pause: the run ends before `where`, as aborted by the person."""
        step = run.steps
        if decision.action == "fork":
            done = step - 1  # the fork holds the conversation up to the end of the step before
            name = f"{run.thread.name}-step{step}"
            try:
                self.forked = run.thread.fork(run.run_id, done or None, name=name)
            except ThreadError:
                self.forked = run.thread.fork(run.run_id, None, name=name)
            at = f"{run.run_id}:{done}" if done else run.run_id
            self.stopped_by = (
                f"Forked at step {step}, {where}. `%%architect --fork {at}` carries on from there "
                "(add --model to try another model)."
            )
        else:
            self.stopped_by = f"Stopped while stepping, at step {step}, {where}. {decision.reason}".strip()
        self.emit(RunWarning(run_id=run.run_id, message=self.stopped_by, category="step"))
        self.stop_run("aborted")
