"""`AgentLoop`: the model asks for tools, the engine runs them, the results go back, until the model is done.

Each step calls the model with the agent's tool schemas, runs every tool call through the `ExecutionEngine`,
and appends the results in the OpenAI message format. The run stops when the model answers without tool calls,
or on max steps, budget, timeout, abort, interrupt, a model error, a refusal or an internal error; every stop
ends in one `RunFinished` event with a plain status. A conversation longer than the model's context window is
compressed and sent again, once; a call to a tool the run does not offer is answered with the tools it does.
Everything the loop does is also an event, so the same stream drives the notebook's live view and becomes the
run's transcript.

The loop is the run's lifecycle; its collaborators do the rest, each on the `RunState` it is handed:
`ModelTurn` (the request, streaming, retries, compression, counting), `ToolDispatch` (the calls, through the
engine), `StepThrough` (the `--step` pauses), `RunHooks` (hooks and quality gates at the run's edges). What
a run leaves is `run_result.RunResult`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from architect_nb.agent.config import AgentConfig
from architect_nb.agent.confirming import EventedConfirmer
from architect_nb.agent.conversation.context import ContextBuilder
from architect_nb.agent.conversation.context_meter import ContextMeter
from architect_nb.agent.conversation.instructions import ProjectInstructions, system_prompt_with
from architect_nb.agent.conversation.recording import record_thread
from architect_nb.agent.conversation.thread import Thread, ThreadError
from architect_nb.agent.costs import CostTracker
from architect_nb.agent.dispatch import ToolDispatch
from architect_nb.agent.events import (
    AgentEvent,
    EventSink,
    RunStarted,
    RunWarning,
    StepStarted,
    StopReason,
    Transcript,
)
from architect_nb.agent.model_turn import ModelClientError, ModelTurn
from architect_nb.agent.models.client import LLMClient, LLMError, RunCancelledError
from architect_nb.agent.models.model_reply import ToolCall
from architect_nb.agent.run_hooks import RunHooks
from architect_nb.agent.run_result import RunResult, run_finished, thread_info
from architect_nb.agent.run_state import RunState
from architect_nb.agent.step_through import StepThrough
from architect_nb.agent.stepping import Stepper
from architect_nb.config.schema import CostsConfig
from architect_nb.config.teaching_policy import PolicyLevel, TeachingOffError
from architect_nb.execution.checkpoints.store import UndoReport
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.executor import HookEvent
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor
from architect_nb.tools.todo import checklist

__all__ = ["AgentLoop", "RunResult"]

log = get_logger(__name__)


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
            budget_usd=_least(costs.budget_usd, engine.teaching.budget_usd),
            budget_tokens=costs.budget_tokens,
            warn_at_usd=costs.warn_at_usd,
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
        self._deadline: float | None = None  # the current run's time limit (`timeout_s`), monotonic
        self._hooks = RunHooks(engine, self.emit, self.transcript.to_payload)
        self.thread: Thread | None = None  # the conversation of the current (or last) run
        self.run_id = ""  # the current (or last) run's
        self.stepper = stepper
        self._turn = ModelTurn(
            llm, self.context, self.costs, self.emit, self._hooks, self._model_must_stop, self._code_limit
        )
        self._step_through = (
            StepThrough(stepper, engine.registry, self.emit, self.cancel) if stepper is not None else None
        )
        self._dispatch = ToolDispatch(engine, self.emit, self._hooks, self._cancel.is_set, self._step_through)

    def tighten(self, level: PolicyLevel | None) -> None:
        """Add a teaching policy level before the run starts (the notebook's, once it is read): it can only
        make the rules stricter. Raises `TeachingOffError` when the policy now turns the agent off."""
        policy = self.engine.tighten(level)
        self.costs.budget_usd = _least(self.costs.budget_usd, policy.budget_usd)
        if policy.mode == "off":
            raise TeachingOffError(policy.off_message())

    def _code_limit(self) -> int | None:
        teaching = self.engine.teaching
        return teaching.code_lines if teaching.mode == "hints" else None

    @property
    def forked(self) -> Thread | None:
        """The thread a "Fork here" made while stepping, if one did."""
        return self._step_through.forked if self._step_through is not None else None

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
        self._deadline = run.started + self.timeout_s if self.timeout_s is not None else None
        try:
            if run.stop == "completed":  # a session_start hook may have refused the task
                self._steps(run)
        except RunCancelledError:
            run.ends(self._cancel_reason, self._stop_words("The run was interrupted."))
        except LLMError as exc:
            stops: dict[str, StopReason] = {"script": "script_error", "refused": "refused"}
            stop = stops.get(exc.kind, "llm_error")
            run.ends(stop, str(exc))
            self._hooks.notify(self.run_id, HookEvent.ON_ERROR, {"error": run.message})
        except Exception as exc:  # a bug: the run still ends with its summary, saying what broke
            log.exception("run_internal_error", run_id=self.run_id)
            cause = exc.__cause__ if isinstance(exc, ModelClientError) and exc.__cause__ else exc
            where = "in the model client" if isinstance(exc, ModelClientError) else "in the agent loop"
            run.ends("internal_error", f"Internal error {where}: {type(cause).__name__}: {cause}")
            self._hooks.notify(self.run_id, HookEvent.ON_ERROR, {"error": run.message})
        finally:
            self.engine.end_run()
        self._hooks.notify(self.run_id, HookEvent.SESSION_END, {"stop_reason": run.stop})
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

    def _begin(self, task: str, thread: Thread) -> RunState:
        """Start the run: the engine's run (its confirmer reports each question as an event), the opening
        messages, the RunStarted event, the start-up warnings and the session_start hooks."""
        confirmer = EventedConfirmer(self.engine.confirmer, self.emit)
        redacted = default_redactor().redact(task)  # what is saved of the task: the run's record, the thread
        model = str(getattr(self.llm, "display_name", self.llm.model))
        self.run_id = self.engine.start_run(
            confirmer=confirmer, transcript=self.transcript.to_payload, task=redacted, model=model
        )
        self.thread = thread
        schemas = self.engine.registry.get_schemas(self._allowed_tools())
        header = thread_info(thread)
        position = (thread.turns, len(thread.runs))
        told = self.instructions.at_start(thread.messages) if self.instructions is not None else []
        system = system_prompt_with(self.agent.system_prompt, told)
        if (rules := self.engine.teaching.prompt_note()) is not None:
            system = f"{system}\n\n{rules}"
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        messages += [dict(m) for m in thread.messages]  # compression rewrites these copies, not the thread
        earlier_end = len(messages)
        task_message = thread.begin_run(run_id=self.run_id, task=redacted, agent=self.agent.name, model=model)
        if task_message is not None:
            messages.append(dict(task_message))
        run = RunState(
            run_id=self.run_id,
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
            self.emit(RunWarning(run_id=self.run_id, message=warning, category=category))
        self._instruction_problems()
        said, refused = self._hooks.start(self.run_id, task, self.agent.name, follow_up=position[1] > 0)
        if said is not None:  # what session_start hooks said stays in the conversation
            messages.append({"role": "user", "content": said})
            thread.add(messages[-1:])
        if refused is not None:
            run.ends("aborted", refused)
        return run

    def _steps(self, run: RunState) -> None:
        """Model turns until the model is done or something stops the run."""
        while (reason := self._should_stop(run)) is None:
            run.steps += 1
            self.emit(StepStarted(run_id=self.run_id, step=run.steps))
            if not self._step(run):
                return
        run.ends(*reason)

    def _step(self, run: RunState) -> bool:
        """One model turn and the tools it asks for. False when the run is over."""
        messages, step = run.messages, run.steps
        self._turn.compress(run)
        if (blocked := self._hooks.llm_call_blocked(self.run_id, step)) is not None:
            run.ends("aborted", blocked)
            return False
        if self._step_through is not None and not self._step_through.before_model(run):
            return False
        response = self._turn.take(run)
        self._hooks.notify(
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
            feedback = self._hooks.back_to_work(self.run_id, run.final_text)
            if feedback is None:
                return False
            messages.append({"role": "user", "content": feedback})
            run.thread.add(messages[mark + 1 :])
            return True
        run.edited = {}
        results = self._dispatch.run(run, response.tool_calls)
        if run.edited:  # the conversation holds the calls that ran
            calls = [run.edited.get(call.id, call) for call in response.tool_calls]
            response = dataclasses.replace(response, tool_calls=calls)
        self.context.append_tool_results(
            messages,
            response.tool_calls,
            results,
            response.content,
            images=self._turn.sees_images(),
            extras=response.extras,
        )
        self._nested_instructions(run, response.tool_calls)
        run.thread.add(messages[mark:], step_done=True)
        if self.engine.aborted:
            run.ends("aborted", self.engine.abort_reason or "The user aborted the run.")
            return False
        return True

    def _nested_instructions(self, run: RunState, calls: Sequence[ToolCall]) -> None:
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
            self.emit(RunWarning(run_id=self.run_id, message=message, category="instructions_read"))
        self._instruction_problems()

    def _instruction_problems(self) -> None:
        if self.instructions is None:
            return
        for problem in self.instructions.problems:
            self.emit(RunWarning(run_id=self.run_id, message=problem, category="instructions"))
        self.instructions.problems = []

    def _allowed_tools(self) -> list[str] | None:
        allowed: list[str] | None = None
        if self.agent.allowed_tools is not None:
            from architect_nb.mcp import inject_mcp_tools

            # MCP tools discovered at start-up join an explicit list (the design document's v0.16.2 rule).
            allowed = inject_mcp_tools(list(self.agent.allowed_tools), self.engine.registry)
        teaching = self.engine.teaching
        if teaching.writes and teaching.tools is None:
            return allowed
        registry = self.engine.registry
        names = allowed if allowed is not None else [tool.name for tool in registry.list_all()]
        return [name for name in names if registry.has_tool(name) and self.engine.offers(registry.get(name))]

    def _model_must_stop(self) -> bool:
        """Whether a model call in progress must stop: the run was cancelled, or its time is up (a call that
        waits on a busy gateway, however often, ends at the run's time limit)."""
        if self._cancel.is_set():
            return True
        if self._deadline is not None and time.monotonic() > self._deadline:
            self.cancel("timeout")
            return True
        return False

    def _stop_words(self, otherwise: str) -> str:
        if self._cancel_reason == "timeout":
            return f"Stopped: the run took longer than {self.timeout_s or 0:g} s."
        return otherwise

    def _should_stop(self, run: RunState) -> tuple[StopReason, str] | None:
        if self._cancel.is_set():
            stopped_by = self._step_through.stopped_by if self._step_through is not None else ""
            return self._cancel_reason, self._stop_words(stopped_by or "The run was interrupted.")
        if run.steps >= self.agent.max_steps:
            return "max_steps", f"Stopped after {run.steps} steps (the agent's max_steps)."
        if self.timeout_s is not None and time.monotonic() - run.started > self.timeout_s:
            return "timeout", f"Stopped: the run took longer than {self.timeout_s:g} s."
        return None

    # ------------------------------------------------------------------ the end

    def _finish(self, run: RunState) -> RunResult:
        finished = run_finished(run, self.engine.checkpoints, self.engine.config.workspace.root, self.costs)
        self.emit(finished)
        run.thread.end_run(
            status=finished.status, tokens=self.costs.total_tokens, cost_usd=self.costs.cost_usd
        )
        if self.record_to is not None:
            record_thread(run.thread, self.record_to)
        return RunResult.of(run, finished, self.transcript)


def _least(*budgets: float | None) -> float | None:
    return min((b for b in budgets if b is not None), default=None)
