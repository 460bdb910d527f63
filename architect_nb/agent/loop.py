"""`AgentLoop`: the model asks for tools, the engine runs them, the results go back, until the model is done.

Each step calls the model with the agent's tool schemas, runs every tool call through the `ExecutionEngine`,
and appends the results in the OpenAI message format. The run stops when the model answers without tool calls,
or on max steps, budget, timeout, abort, interrupt, a model error, a refusal or an internal error; every stop
ends in one `RunFinished` event with a plain status. A conversation longer than the model's context window is
compressed and sent again, once; a call to a tool the run does not offer is answered with the tools it does.
Everything the loop does is also an event, so the same stream drives the notebook's live view and becomes the
run's transcript. Hooks and quality gates join in at the run's edges
(`run_edges`); what a run leaves is `run_result.RunResult`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from architect_nb.agent.config import AgentConfig
from architect_nb.agent.confirming import EventedConfirmer
from architect_nb.agent.context import ContextBuilder, estimate_tokens
from architect_nb.agent.context_meter import ContextMeter
from architect_nb.agent.costs import CostTracker
from architect_nb.agent.events import (
    AgentEvent,
    CostUpdate,
    EventSink,
    ModelReply,
    ModelRequest,
    RunFinished,
    RunStarted,
    StepStarted,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallRequested,
    ToolResultEvent,
    Transcript,
    Warning,
)
from architect_nb.agent.inspector import RequestLog, reply_record
from architect_nb.agent.instructions import ProjectInstructions, system_prompt_with
from architect_nb.agent.llm import LLMClient, LLMError, LLMResponse, RunCancelledError, ToolCall
from architect_nb.agent.prompts import with_read_roots
from architect_nb.agent.run_edges import RunEdges
from architect_nb.agent.run_result import (
    RunResult,
    call_status,
    ran_sandboxed,
    relative,
    review_list,
    run_status,
    thread_info,
)
from architect_nb.agent.stepping import (
    SKIPPED,
    ModelPause,
    Pause,
    StepDecision,
    Stepper,
    ToolPause,
    check_arguments,
)
from architect_nb.agent.thread import Thread, ThreadError
from architect_nb.config.schema import CostsConfig
from architect_nb.execution.checkpoints.store import UndoReport
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.executor import HookEvent
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import ToolResult
from architect_nb.tools.commands.command_tool import as_command_tool
from architect_nb.tools.todo import checklist

__all__ = ["AgentLoop", "RunResult"]

log = get_logger(__name__)
_MAX_PARALLEL = 4
_RAW_SHOWN = 500  # characters of unreadable arguments quoted back to the model


class _ModelClientError(RuntimeError):
    """An exception raised inside the model client (not an `LLMError`): a bug, reported as one."""


@dataclass
class _Run:
    """One run as it goes: its conversation and how it is ending."""

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


class AgentLoop:
    """Drives one agent on one engine.

    Args:
        engine: Runs every tool call (sandbox, guardrails, hooks, confirmation).
        llm: The model client.
        agent: The agent's prompt, tools, confirmation mode and step limit.
        costs: Budget settings.
        on_event: Called with every event, on the loop's thread.
        context: Message-list builder (truncation and compression settings).
        timeout_s: Wall-clock limit for the run.
        record_to: Write the thread's runs (tasks and assistant turns) to this YAML file after each run, as a
            script that replays them run by run.
        startup_warnings: (category, message) pairs shown when each run starts: MCP servers left out, no OS
            sandbox here.
        mcp_manager: Owns the MCP connections whose tools are in the engine's registry; `close` stops them.
        instructions: The project's AGENTS.md and CLAUDE.md: the root's go into the system prompt, a
            subfolder's are told when a tool first touches it.
        stepper: Asked before each model call and each tool call (`agent.stepping`): step-through.
    """

    def __init__(
        self,
        engine: ExecutionEngine,
        llm: LLMClient,
        agent: AgentConfig,
        *,
        costs: CostsConfig | None = None,
        on_event: EventSink | None = None,
        context: ContextBuilder | None = None,
        timeout_s: float | None = None,
        record_to: Path | None = None,
        startup_warnings: Sequence[tuple[str, str]] = (),
        mcp_manager: Any = None,
        instructions: ProjectInstructions | None = None,
        stepper: Stepper | None = None,
    ) -> None:
        self.engine = engine
        self.llm = llm
        self.agent = agent
        costs = costs or CostsConfig()
        self.costs = CostTracker(
            budget_usd=costs.budget_usd, budget_tokens=costs.budget_tokens, warn_at_usd=costs.warn_at_usd
        )
        self.context = context or ContextBuilder()
        self.timeout_s = timeout_s
        self.record_to = record_to
        self.startup_warnings = tuple(startup_warnings)
        self.mcp_manager = mcp_manager
        self.instructions = instructions
        self.transcript = Transcript()
        self._sink = on_event
        self._cancel = threading.Event()
        self._cancel_reason: StopReason = "interrupted"
        self._edges = RunEdges(engine, self.emit, self.transcript.to_payload)
        self.thread: Thread | None = None  # the conversation of the current (or last) run
        self._images: bool | None = None  # whether the model accepts images (asked once)
        self.run_id = ""
        self.stepper = stepper
        self.forked: Thread | None = None  # the thread a "Fork here" while stepping made
        self._stopped_by = ""  # why a person stopped the run while stepping

    # ------------------------------------------------------------------ control

    def close(self) -> None:
        """Stop the MCP servers this loop started (if any)."""
        if self.mcp_manager is not None:
            self.mcp_manager.close()

    def cancel(self, reason: StopReason = "interrupted") -> None:
        """Stop the run at the next safe point (between chunks, before a tool call). Thread-safe."""
        self._cancel_reason = reason
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def emit(self, event: AgentEvent) -> None:
        self.transcript(event)
        if self._sink is not None:
            try:
                self._sink(event)
            except Exception:  # a broken renderer must not break the run
                log.exception("event_sink_failed", kind=event.kind)

    def undo(
        self, run_id: str | None = None, *, step: int | None = None, path: str | None = None
    ) -> UndoReport:
        """Put back what run `run_id` (default the last one) changed, as `%architect undo` does: every file,
        or with `step` what that step and the later ones changed, or with `path` that one file.

        A file changed since the run is a conflict, reported and left alone. Raises `CheckpointError` (or
        `AlreadyUndoneError`) when there is nothing left to undo.
        """
        return self.engine.checkpoints.undo(run_id or self.run_id, from_step=step, path=path)

    # ------------------------------------------------------------------ the run

    def run(self, task: str, *, thread: Thread | None = None) -> RunResult:
        """Run the agent on `task`. With `thread`, the run follows up on that conversation (the model sees
        its earlier tasks, answers, tool calls and results) and adds to it; without, it starts a new one.

        An empty `task` is allowed only for a thread forked in the middle of a run: the model carries on
        from that step. Raises `ThreadError` for a thread of another workspace.
        """
        run = self._begin(task, self._thread_for(task, thread))
        try:
            if run.stop == "completed":  # a session_start hook may have refused the task
                self._steps(run)
        except RunCancelledError:
            run.ends(self._cancel_reason, "The run was interrupted.")
        except LLMError as exc:
            stops: dict[str, StopReason] = {"script": "script_error", "refused": "refused"}
            stop = stops.get(exc.kind, "llm_error")
            run.ends(stop, str(exc))
            self._edges.notify(self.run_id, HookEvent.ON_ERROR, {"error": run.message})
        except Exception as exc:  # a bug: the run still ends with its summary, saying what broke
            log.exception("run_internal_error", run_id=self.run_id)
            cause = exc.__cause__ if isinstance(exc, _ModelClientError) and exc.__cause__ else exc
            where = "in the model client" if isinstance(exc, _ModelClientError) else "in the agent loop"
            run.ends("internal_error", f"Internal error {where}: {type(cause).__name__}: {cause}")
            self._edges.notify(self.run_id, HookEvent.ON_ERROR, {"error": run.message})
        finally:
            self.engine.end_run()
        self._edges.notify(self.run_id, HookEvent.SESSION_END, {"stop_reason": run.stop})
        return self._finish(run)

    def _thread_for(self, task: str, thread: Thread | None) -> Thread:
        workspace = str(self.engine.config.workspace.root)
        if thread is None:
            thread = Thread(name="main", workspace=workspace)
        elif thread.workspace != workspace:
            raise ThreadError(
                f"thread '{thread.name}' belongs to the workspace {thread.workspace}, not {workspace}"
            )
        if not task.strip() and not (thread.messages and thread.messages[-1].get("role") == "tool"):
            raise ThreadError("the task is empty; write what the agent should do")
        return thread

    def _begin(self, task: str, thread: Thread) -> _Run:
        """Start the run: the engine's run (its confirmer reports each question as an event), the opening
        messages, the RunStarted event, the start-up warnings and the session_start hooks."""
        confirmer = EventedConfirmer(self.engine.confirmer, self.emit)
        self.run_id = self.engine.start_run(confirmer=confirmer, transcript=self.transcript.to_payload)
        self.thread = thread
        schemas = self.engine.registry.get_schemas(self._allowed_tools())
        header = thread_info(thread)
        position = (thread.turns, len(thread.runs))
        told = self.instructions.at_start(thread.messages) if self.instructions is not None else []
        system = with_read_roots(
            system_prompt_with(self.agent.system_prompt, told), self.engine.config.workspace.read_roots
        )
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        messages += [dict(m) for m in thread.messages]  # compression rewrites these copies, not the thread
        earlier_end = len(messages)
        model = str(getattr(self.llm, "display_name", self.llm.model))
        task_message = thread.begin_run(
            run_id=self.run_id, task=default_redactor().redact(task), agent=self.agent.name, model=model
        )
        if task_message is not None:
            messages.append(dict(task_message))
        run = _Run(
            task=task,
            thread=thread,
            started=time.monotonic(),
            messages=messages,
            schemas=schemas,
            task_message=messages[-1] if task_message is not None else None,
            position=position,
            meter=ContextMeter(getattr(self.llm, "count_tokens", None)),
            earlier_end=earlier_end,
        )
        self.emit(
            RunStarted(
                run_id=self.run_id,
                task=task,
                agent=self.agent.name,
                model=model,
                mode=self.engine.policy.mode,
                dry_run=self.engine.dry_run,
                workspace=str(getattr(self.engine.hook_executor, "workspace_root", "") or ""),
                tools=tuple(s["function"]["name"] for s in schemas),
                thread=header,
                instructions=tuple(file.label() for file in told),
                todo=tuple(checklist(thread.todo).splitlines()),
            )
        )
        for category, warning in self.startup_warnings:
            self.emit(Warning(run_id=self.run_id, message=warning, category=category))
        self._instruction_problems()
        said, refused = self._edges.start(self.run_id, task, self.agent.name, follow_up=position[1] > 0)
        if said is not None:  # what session_start hooks said stays in the conversation
            messages.append({"role": "user", "content": said})
            thread.add(messages[-1:])
        if refused is not None:
            run.ends("aborted", refused)
        return run

    def _steps(self, run: _Run) -> None:
        """Model turns until the model is done or something stops the run."""
        while (reason := self._should_stop(run)) is None:
            run.steps += 1
            self.emit(StepStarted(run_id=self.run_id, step=run.steps))
            if not self._step(run):
                return
        run.ends(*reason)

    def _step(self, run: _Run) -> bool:
        """One model turn and the tools it asks for. False when the run is over."""
        messages, step = run.messages, run.steps
        self._compress(run)
        if (blocked := self._edges.llm_call_blocked(self.run_id, step)) is not None:
            run.ends("aborted", blocked)
            return False
        if self.stepper is not None and not self._model_pause(run):
            return False
        response = self._call_model(run)
        self._edges.notify(
            self.run_id, HookEvent.POST_LLM_CALL, {"step": step, "content": response.content or ""}
        )
        if (spent := self.costs.exceeded) is not None:
            run.ends("budget", f"Stopped: {spent}.")
            run.final_text = response.content or ""
            return False
        mark = len(messages)
        if not response.tool_calls:
            run.final_text = response.content or ""
            self.context.append_assistant(messages, response)
            run.thread.add(messages[mark:], step_done=True)
            feedback = self._edges.back_to_work(self.run_id, run.final_text)
            if feedback is None:
                return False
            messages.append({"role": "user", "content": feedback})
            run.thread.add(messages[mark + 1 :])
            return True
        offered = frozenset(schema["function"]["name"] for schema in run.schemas)
        run.edited = {}
        results = self._run_tools(response.tool_calls, step, offered, run)
        if run.edited:  # the conversation holds the calls that ran
            calls = [run.edited.get(call.id, call) for call in response.tool_calls]
            response = dataclasses.replace(response, tool_calls=calls)
        self.context.append_tool_results(
            messages,
            response.tool_calls,
            results,
            response.content,
            images=self._sees_images(),
            extras=response.extras,
        )
        self._nested_instructions(run, response.tool_calls)
        run.thread.add(messages[mark:], step_done=True)
        if self.engine.aborted:
            run.ends("aborted", self.engine.abort_reason or "The user aborted the run.")
            return False
        return True

    def _nested_instructions(self, run: _Run, calls: Sequence[ToolCall]) -> None:
        """A subfolder's AGENTS.md or CLAUDE.md, the first time a call touches a path in it: told to the model
        after the tool results, kept in the thread."""
        if self.instructions is None:
            return
        paths = [str(call.arguments["path"]) for call in calls if isinstance(call.arguments.get("path"), str)]
        files, note = self.instructions.for_paths(paths) if paths else ([], None)
        if note is not None:
            run.messages.append({"role": "user", "content": note})
            labels = ", ".join(file.label() for file in files)
            message = f"Read instructions {labels}."
            self.emit(Warning(run_id=self.run_id, message=message, category="instructions_read"))
        self._instruction_problems()

    def _instruction_problems(self) -> None:
        if self.instructions is None:
            return
        for problem in self.instructions.problems:
            self.emit(Warning(run_id=self.run_id, message=problem, category="instructions"))
        self.instructions.problems = []

    def _sees_images(self) -> bool:
        if self._images is None:
            try:
                self._images = bool(self.llm.supports_images())
            except Exception:  # an unknown model: describe images in words
                self._images = False
        return self._images

    def _allowed_tools(self) -> list[str] | None:
        allowed = self.agent.allowed_tools
        if allowed is None:
            return None
        from architect_nb.mcp import inject_mcp_tools

        # MCP tools discovered at start-up join an explicit list (the design document's v0.16.2 rule).
        return inject_mcp_tools(list(allowed), self.engine.registry)

    def _should_stop(self, run: _Run) -> tuple[StopReason, str] | None:
        if self._cancel.is_set():
            return self._cancel_reason, self._stopped_by or "The run was interrupted."
        if run.steps >= self.agent.max_steps:
            return "max_steps", f"Stopped after {run.steps} steps (the agent's max_steps)."
        if self.timeout_s is not None and time.monotonic() - run.started > self.timeout_s:
            return "timeout", f"Stopped: the run took longer than {self.timeout_s:g} s."
        return None

    def _call_model(self, run: _Run) -> LLMResponse:
        """The model's turn. A context window exceeded compresses the conversation and sends it once more."""
        try:
            response = self._complete(run)
        except LLMError as exc:
            if exc.kind != "context_window":
                raise
            if not self._compress(run, force=True):
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
        self._count(run.steps, response)
        return response

    def _complete(self, run: _Run) -> LLMResponse:
        step = run.steps

        def on_text(text: str) -> None:
            self.emit(TextDelta(run_id=self.run_id, step=step, text=text))

        def on_thinking(text: str) -> None:
            self.emit(ThinkingDelta(run_id=self.run_id, step=step, text=text))

        def on_notice(message: str) -> None:
            self.emit(Warning(run_id=self.run_id, message=message, category="model"))

        self._record_request(run)
        try:
            response = self.llm.complete(
                run.messages,
                run.schemas,
                on_text=on_text,
                on_thinking=on_thinking,
                on_notice=on_notice,
                should_stop=self._cancel.is_set,
                thread_position=run.position,
            )
        except (LLMError, RunCancelledError):
            raise
        except Exception as exc:
            raise _ModelClientError(str(exc)) from exc
        reply = reply_record(response)
        self.emit(
            ModelReply(
                run_id=self.run_id,
                step=step,
                content=reply["content"],
                tool_calls=tuple(reply["tool_calls"]),
                thinking=reply["thinking"],
                finish_reason=reply["finish_reason"],
                usage=reply["usage"],
            )
        )
        return response

    def _record_request(self, run: _Run) -> None:
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
        self.emit(ModelRequest(run_id=self.run_id, step=run.steps, request=request, parts=parts, meter=meter))

    def _count(self, step: int, response: LLMResponse) -> None:
        """The turn's tokens and cost: the budget's warnings, and a `CostUpdate`."""
        for warning in self.costs.add(response.usage):
            self.emit(Warning(run_id=self.run_id, message=warning, category="budget"))
            context = {"message": warning, "cost_usd": self.costs.cost_usd}
            self._edges.notify(self.run_id, HookEvent.BUDGET_WARNING, context)
        self.emit(
            CostUpdate(
                run_id=self.run_id,
                step=step,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
                cost_usd=response.usage.cost_usd,
                total_tokens=self.costs.total_tokens,
                total_cost_usd=self.costs.cost_usd,
                priced=self.costs.priced,
                cached_tokens=response.usage.cached_tokens,
                total_cached_tokens=self.costs.cached_tokens,
                reasoning_tokens=response.usage.reasoning_tokens,
                total_reasoning_tokens=self.costs.reasoning_tokens,
            )
        )

    def _compress(self, run: _Run, *, force: bool = False) -> bool:
        """Compress the conversation if it nears the model's window; `force` (the provider said it is over
        the window) to about 60% of its estimated size. Whether it was compressed."""
        window = run.window = self.llm.context_window()
        messages = run.messages
        if force:  # the estimate said it fits: aim below what was sent
            window = min(window, max(1, int(estimate_tokens(messages) * 0.6 / self.context.compress_at)))
        if not self.context.needs_compression(messages, window):
            return False
        self._edges.notify(self.run_id, HookEvent.CONTEXT_COMPRESS, {"messages": len(messages)})
        pinned = next((i for i, m in enumerate(messages) if m is run.task_message), 0)
        report = self.context.compress(messages, window, pinned=pinned)
        if report is not None:
            said = (
                f"Context compressed ({report.stage} {report.steps_affected} older step(s)): "
                f"~{report.tokens_before} → ~{report.tokens_after} tokens."
            )
            self.emit(Warning(run_id=self.run_id, message=said, category="context"))
            run.log.rewritten()
            run.compressed = said
            task_at = next((i for i, m in enumerate(messages) if m is run.task_message), None)
            run.earlier_end = task_at if task_at is not None else min(run.earlier_end, len(messages))
        return report is not None

    # ------------------------------------------------------------------ step-through

    def _ask(self, pause: Pause) -> StepDecision:
        assert self.stepper is not None
        decision = self.stepper.decide(pause)
        if decision.action not in pause.actions:
            raise ValueError(
                f"{decision.action!r} is not offered here; choose one of {', '.join(pause.actions)}"
            )
        return decision

    def _stop_stepping(self, run: _Run, decision: StepDecision, where: str) -> None:
        """Stop (or fork and stop) at a pause: the run ends before `where`, as aborted by the person."""
        step = run.steps
        if decision.action == "fork":
            done = step - 1  # the fork holds the conversation up to the end of the step before
            try:
                self.forked = run.thread.fork(self.run_id, done or None, name=f"{run.thread.name}-step{step}")
            except ThreadError:
                self.forked = run.thread.fork(self.run_id, None, name=f"{run.thread.name}-step{step}")
            at = f"{self.run_id}:{done}" if done else self.run_id
            self._stopped_by = (
                f"Forked at step {step}, {where}. `%%architect --fork {at}` carries on from there "
                "(add --model to try another model)."
            )
        else:
            self._stopped_by = f"Stopped while stepping, at step {step}, {where}. {decision.reason}".strip()
        self.emit(Warning(run_id=self.run_id, message=self._stopped_by, category="step"))
        self.cancel("aborted")

    def _model_pause(self, run: _Run) -> bool:
        """Ask before the model call; False when the run stops here."""
        last_call = max((i for i, m in enumerate(run.messages) if m.get("role") == "assistant"), default=-1)
        tools_after = [
            (i, m)
            for i, m in enumerate(run.messages[last_call + 1 :], last_call + 1)
            if m.get("role") == "tool"
        ]
        results = {str(m.get("tool_call_id")): str(m.get("content") or "") for _, m in tools_after}
        pause = ModelPause(
            step=run.steps,
            messages=tuple(run.messages),
            tools=tuple(run.schemas),
            results=results,
        )
        decision = self._ask(pause)
        if decision.action in ("fork", "stop"):
            self._stop_stepping(run, decision, "before the model call")
            run.ends("aborted", self._stopped_by)
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
                self.emit(
                    Warning(
                        run_id=self.run_id,
                        message=f"The result of call {call_id} was edited: the model reads the new text.",
                        category="step",
                    )
                )
        return True

    def _tool_pause(self, run: _Run, call: ToolCall) -> ToolCall | ToolResult:
        """Ask before a tool call: the call to run (maybe with edited arguments), or the result instead."""
        tool = self.engine.registry.get(call.name) if self.engine.registry.has_tool(call.name) else None
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
                return ToolResult.fail(SKIPPED, denied=True)
            if decision.action in ("fork", "stop"):
                self._stop_stepping(run, decision, f"before the call to {call.name}")
                return ToolResult.fail(f"Not run: {self._stopped_by}", skipped=True)
            problem = check_arguments(tool, decision.arguments) or ""
            if not problem:
                arguments = dict(decision.arguments or {})
                edited = dataclasses.replace(call, arguments=arguments, raw_arguments=json.dumps(arguments))
                run.edited[call.id] = edited
                self.emit(
                    Warning(
                        run_id=self.run_id,
                        message=f"The arguments of call {call.id} ({call.name}) were edited before it ran.",
                        category="step",
                    )
                )
                return edited

    # ------------------------------------------------------------------ tools

    def _run_tools(
        self, calls: Sequence[ToolCall], step: int, offered: frozenset[str], run: _Run
    ) -> list[ToolResult]:
        for call in calls:
            self.emit(
                ToolCallRequested(
                    run_id=self.run_id,
                    step=step,
                    call_id=call.id,
                    tool=call.name,
                    arguments=call.arguments,
                    raw_arguments=call.raw_arguments if call.parse_error else None,
                )
            )
        stepping = self.stepper is not None
        if not stepping and len(calls) > 1 and all(self._runs_unattended(c, offered) for c in calls):
            with ThreadPoolExecutor(max_workers=min(_MAX_PARALLEL, len(calls))) as pool:
                return list(pool.map(lambda call: self._run_one(call, step, offered), calls))
        results = []
        for call in calls:
            if self._cancel.is_set() or self.engine.aborted:
                why = "aborted" if self.engine.aborted else "interrupted"
                results.append(ToolResult.fail(f"Not run: the run was {why}.", skipped=True))
                continue
            if stepping and call.name in offered and not call.parse_error:
                paused = self._tool_pause(run, call)
                if isinstance(paused, ToolResult):
                    results.append(self._run_one(call, step, offered, instead=paused))
                else:
                    results.append(self._run_one(paused, step, offered))
                continue
            results.append(self._run_one(call, step, offered))
        return results

    def _runs_unattended(self, call: ToolCall, offered: frozenset[str]) -> bool:
        """Read-only tools that never ask anyone can run side by side."""
        if call.parse_error or call.name not in offered or not self.engine.registry.has_tool(call.name):
            return True
        tool = self.engine.registry.get(call.name)
        return (
            not tool.sensitive
            and not tool.mutates_files
            and as_command_tool(tool) is None
            and (self.engine.policy.mode != "confirm-all")
        )

    def _run_one(
        self, call: ToolCall, step: int, offered: frozenset[str], *, instead: ToolResult | None = None
    ) -> ToolResult:
        """Run one call (or report `instead` as its result: a call skipped while stepping)."""
        started = time.monotonic()
        if instead is not None:
            result = instead
        elif call.name not in offered:  # not offered to this run, even if registered (a plan agent's write)
            tools = ", ".join(sorted(offered)) or "none"
            name = f"named {call.name!r}" if call.name else "without a name"
            result = ToolResult.fail(f"There is no tool {name} in this run. The tools you can call: {tools}.")
        elif call.parse_error:
            sent = call.raw_arguments
            sent = sent if len(sent) <= _RAW_SHOWN else f"{sent[:_RAW_SHOWN]}... [{len(sent)} characters]"
            result = ToolResult.fail(
                f"The call to {call.name} was not run: {call.parse_error}. You sent: {sent}\n"
                f"Call {call.name} again with its arguments as one JSON object."
            )
        else:
            result = self.engine.execute_tool_call(call.name, call.arguments, step=step, tool_call_id=call.id)
        status = call_status(result)
        self.emit(
            ToolResultEvent(
                run_id=self.run_id,
                step=step,
                call_id=call.id,
                tool=call.name,
                status=status,
                success=result.success,
                output=result.output,
                error=result.error,
                diff=result.metadata.get("diff"),
                hooks=tuple(result.metadata.get("hooks", ())),
                duration_s=round(time.monotonic() - started, 4),
                images=tuple(result.metadata.get("images", ())),
                changed_files=tuple(result.metadata.get("changed_files", ())),
                sandboxed=ran_sandboxed(result),
            )
        )
        if status == "failed":  # a tool that broke, not a person's or a rule's refusal
            context = {"tool_name": call.name, "error": result.error or ""}
            self._edges.notify(self.run_id, HookEvent.ON_ERROR, context)
        return result

    # ------------------------------------------------------------------ the end

    def _finish(self, run: _Run) -> RunResult:
        root = self.engine.config.workspace.root
        files = sorted(relative(path, root) for path in self.engine.checkpoints.files(self.run_id))
        status = run_status(run.stop)
        message = run.message or ("Done." if run.stop == "completed" else run.stop)
        self.emit(
            RunFinished(
                run_id=self.run_id,
                status=status,
                stop_reason=run.stop,
                message=message,
                steps=run.steps,
                final_text=run.final_text,
                files_changed=tuple(files),
                total_tokens=self.costs.total_tokens,
                total_cost_usd=self.costs.cost_usd,
                duration_s=round(time.monotonic() - run.started, 3),
                undo_note=self.engine.checkpoints.coverage_note(self.run_id),
                changes=review_list(self.engine.checkpoints, self.run_id),
                total_cached_tokens=self.costs.cached_tokens,
                total_reasoning_tokens=self.costs.reasoning_tokens,
            )
        )
        run.thread.end_run(status=status, tokens=self.costs.total_tokens, cost_usd=self.costs.cost_usd)
        if self.record_to is not None:
            self._record(run.thread, self.record_to)
        return RunResult(
            run_id=self.run_id,
            status=status,
            stop_reason=run.stop,
            message=message,
            final_text=run.final_text,
            steps=run.steps,
            messages=run.messages,
            transcript=self.transcript,
            files_changed=files,
            total_tokens=self.costs.total_tokens,
            cost_usd=self.costs.cost_usd,
            thread=run.thread,
        )

    @staticmethod
    def _record(thread: Thread, path: Path) -> None:
        from architect_nb.agent.scripted import script_from_thread

        script = default_redactor().redact_data(script_from_thread(thread))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(script, sort_keys=False, allow_unicode=True), encoding="utf-8")
