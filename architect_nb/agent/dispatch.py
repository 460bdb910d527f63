"""`ToolDispatch`: the tool calls of one model turn, through the engine, each ending in a result event.

Read-only calls that ask nobody run side by side; the others one by one, each after its step-through pause
when the run is stepped. A call the run does not offer, or whose arguments are not JSON, is answered without
the engine (`CallOutcome.INVALID`); a call after an abort or an interrupt is not run (`SKIPPED`). How each
call ended is its `ToolResult.outcome`; `on_error` hooks fire only for a tool that broke.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from architect_nb.agent.events import EventSink, ToolCallRequested, ToolResultEvent
from architect_nb.agent.models.model_reply import ToolCall
from architect_nb.agent.run_hooks import RunHooks
from architect_nb.agent.run_result import ran_sandboxed
from architect_nb.agent.run_state import RunState
from architect_nb.agent.step_through import StepThrough
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.executor import HookEvent
from architect_nb.tools.base import CallOutcome, ToolResult
from architect_nb.tools.commands.command_tool import as_command_tool

__all__ = ["ToolDispatch"]

_MAX_PARALLEL = 4
_RAW_SHOWN = 500  # characters of unreadable arguments quoted back to the model


class ToolDispatch:
    """Runs tool calls for one loop.

    Args:
        engine: Runs every call (sandbox, guardrails, hooks, confirmation).
        emit: The loop's event stream.
        edges: The hooks a call fires (on_error).
        cancelled: Whether the run was asked to stop (later calls are then not run).
        step_through: Asked before each call when the run is stepped.
    """

    def __init__(
        self,
        engine: ExecutionEngine,
        emit: EventSink,
        edges: RunHooks,
        cancelled: Callable[[], bool],
        step_through: StepThrough | None = None,
    ) -> None:
        self.engine = engine
        self.emit = emit
        self.edges = edges
        self.cancelled = cancelled
        self.step_through = step_through

    def run(self, run: RunState, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Every call of the model's turn, in order; their results, in the same order."""
        step, offered = run.steps, run.offered
        for call in calls:
            raw = call.raw_arguments if call.parse_error else None
            self.emit(
                ToolCallRequested(
                    run_id=run.run_id, step=step, call_id=call.id, tool=call.name, arguments=call.arguments,
                    raw_arguments=raw,
                )
            )  # fmt: skip
        stepped = self.step_through is not None
        if not stepped and len(calls) > 1 and all(self._runs_unattended(c, offered) for c in calls):
            with ThreadPoolExecutor(max_workers=min(_MAX_PARALLEL, len(calls))) as pool:
                return list(pool.map(lambda call: self._run_one(run, call), calls))
        results = []
        for call in calls:
            if self.cancelled() or self.engine.aborted:
                why = "aborted" if self.engine.aborted else "interrupted"
                results.append(ToolResult.refused(CallOutcome.SKIPPED, f"Not run: the run was {why}."))
                continue
            if self.step_through is not None and call.name in offered and not call.parse_error:
                paused = self.step_through.before_tool(run, call)
                if isinstance(paused, ToolResult):
                    results.append(self._run_one(run, call, instead=paused))
                else:
                    results.append(self._run_one(run, paused))
                continue
            results.append(self._run_one(run, call))
        return results

    def _runs_unattended(self, call: ToolCall, offered: frozenset[str]) -> bool:
        """Read-only tools that never ask anyone can run side by side."""
        registry = self.engine.registry
        if call.parse_error or call.name not in offered or not registry.has_tool(call.name):
            return True
        tool = registry.get(call.name)
        return (
            not tool.sensitive
            and not tool.mutates_files
            and as_command_tool(tool) is None
            and (self.engine.policy.mode != "confirm-all")
        )

    def _run_one(self, run: RunState, call: ToolCall, *, instead: ToolResult | None = None) -> ToolResult:
        """Run one call (or report `instead` as its result: a call skipped while stepping)."""
        started = time.monotonic()
        offered = run.offered
        if instead is not None:
            result = instead
        elif (withheld := self.engine.withheld(call.name)) is not None:  # the teaching policy's, said so
            result = ToolResult.refused(CallOutcome.BLOCKED, withheld)
        elif call.name not in offered:  # not offered to this run, even if registered (a plan agent's write)
            tools = ", ".join(sorted(offered)) or "none"
            name = f"named {call.name!r}" if call.name else "without a name"
            result = ToolResult.refused(
                CallOutcome.INVALID, f"There is no tool {name} in this run. The tools you can call: {tools}."
            )
        elif call.parse_error:
            sent = call.raw_arguments
            sent = sent if len(sent) <= _RAW_SHOWN else f"{sent[:_RAW_SHOWN]}... [{len(sent)} characters]"
            result = ToolResult.refused(
                CallOutcome.INVALID,
                f"The call to {call.name} was not run: {call.parse_error}. You sent: {sent}\n"
                f"Call {call.name} again with its arguments as one JSON object.",
            )
        else:
            result = self.engine.execute_tool_call(
                call.name, call.arguments, step=run.steps, tool_call_id=call.id
            )
        metadata = result.metadata
        self.emit(
            ToolResultEvent(
                run_id=run.run_id,
                step=run.steps,
                call_id=call.id,
                tool=call.name,
                status=result.outcome.value,
                success=result.success,
                output=result.output,
                error=result.error,
                diff=metadata.get("diff"),
                hooks=tuple(result.hook_results),
                duration_s=round(time.monotonic() - started, 4),
                images=tuple(metadata.get("images", ())),
                changed_files=tuple(result.changed_files),
                changed_state=tuple(dict(change) for change in result.changed_state),
                sandboxed=ran_sandboxed(result),
            )
        )
        if result.outcome.broke:  # a tool that broke, not a person's or a rule's refusal
            context = {"tool_name": call.name, "error": result.error or ""}
            self.edges.notify(run.run_id, HookEvent.ON_ERROR, context)
        return result
