"""`AgentLoop`: the model asks for tools, the engine runs them, the results go back, until the model is done.

Each step calls the model with the agent's tool schemas, runs every tool call through the `ExecutionEngine`,
and appends the results in the OpenAI message format. The run stops when the model answers without tool calls,
or on max steps, budget, timeout, abort, interrupt or a model error; every stop ends in one `RunFinished`
event with a plain status. Everything the loop does is also an event, so the same stream drives the
notebook's live view and becomes the run's transcript.

Hooks join in at the run's edges: what `session_start` hooks say (Claude Code's SessionStart and
UserPromptSubmit among them) reaches the model with the task, a UserPromptSubmit hook can refuse the task,
and a Claude Code Stop hook that blocks sends the model back to work with its reason.
"""

from __future__ import annotations

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
from architect_nb.agent.context import ContextBuilder
from architect_nb.agent.costs import CostTracker
from architect_nb.agent.events import (
    AgentEvent,
    CostUpdate,
    EventSink,
    RunFinished,
    RunStarted,
    StepStarted,
    StopReason,
    TextDelta,
    ThreadInfo,
    ToolCallRequested,
    ToolResultEvent,
    Transcript,
    Warning,
)
from architect_nb.agent.llm import LLMClient, LLMError, LLMResponse, RunCancelledError, ToolCall
from architect_nb.agent.thread import Thread, ThreadError
from architect_nb.config.schema import CostsConfig
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.executor import HookDecision, HookEvent, HookResult
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import ToolResult

__all__ = ["AgentLoop", "RunResult"]

log = get_logger(__name__)
_MAX_PARALLEL = 4


@dataclass
class RunResult:
    """The outcome of one run."""

    run_id: str
    status: str
    stop_reason: StopReason
    message: str
    final_text: str
    steps: int
    messages: list[dict[str, Any]]
    transcript: Transcript
    files_changed: list[str] = field(default_factory=list)
    total_tokens: int = 0
    cost_usd: float = 0.0
    thread: Thread | None = None  # pass it to the next `run` to follow up on this one


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
        self.transcript = Transcript()
        self._sink = on_event
        self._cancel = threading.Event()
        self._cancel_reason: StopReason = "interrupted"
        self._current = threading.local()
        self.thread: Thread | None = None  # the conversation of the current (or last) run
        self._turns_before = self._run_index = 0  # where this run starts in its thread
        self._task_message: dict[str, Any] | None = None  # never compressed away
        self._images: bool | None = None  # whether the model accepts images (asked once)
        self.run_id = ""
        self._stop_hook_active = False  # a Stop hook already sent the model back to work in this run
        # (category, message), shown when each run starts: MCP servers left out, no OS sandbox here.
        self.startup_warnings: list[tuple[str, str]] = []
        self.mcp_manager: Any = None  # owns MCP connections when the config names servers

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

    # ------------------------------------------------------------------ the run

    def run(self, task: str, *, thread: Thread | None = None) -> RunResult:
        """Run the agent on `task`. With `thread`, the run follows up on that conversation (the model sees
        its earlier tasks, answers, tool calls and results) and adds to it; without, it starts a new one.

        An empty `task` is allowed only for a thread forked in the middle of a run: the model carries on
        from that step. Raises `ThreadError` for a thread of another workspace.
        """
        workspace = str(self.engine.config.workspace.root)
        if thread is None:
            thread = Thread(name="main", workspace=workspace)
        elif thread.workspace != workspace:
            raise ThreadError(
                f"thread '{thread.name}' belongs to the workspace {thread.workspace}, not {workspace}"
            )
        if not task.strip() and not (thread.messages and thread.messages[-1].get("role") == "tool"):
            raise ThreadError("the task is empty; write what the agent should do")
        self.run_id = self.engine.start_run()
        self.thread = thread
        started = time.monotonic()
        tools = self._allowed_tools()
        schemas = self.engine.registry.get_schemas(tools)
        original_confirmer = self.engine.confirmer
        self.engine.confirmer = EventedConfirmer(original_confirmer, self.emit, self.run_id, self._current)
        header = _thread_info(thread)
        self._turns_before, self._run_index = thread.turns, len(thread.runs)
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.agent.system_prompt}]
        messages += [dict(m) for m in thread.messages]  # compression rewrites these copies, not the thread
        model = str(getattr(self.llm, "display_name", self.llm.model))
        task_message = thread.begin_run(
            run_id=self.run_id, task=default_redactor().redact(task), agent=self.agent.name, model=model
        )
        if task_message is not None:
            messages.append(dict(task_message))
        self._task_message = messages[-1] if task_message is not None else None
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
            )
        )
        for category, warning in self.startup_warnings:
            self.emit(Warning(run_id=self.run_id, message=warning, category=category))
        self._bind_hooks()
        steps = 0
        final_text = ""
        stop: StopReason = "completed"
        message = ""
        before = len(messages)
        refused = self._session_start(task, messages)
        thread.add(messages[before:])  # what session_start hooks said stays in the conversation
        if refused is not None:
            stop, message = "aborted", refused
        self._stop_hook_active = False
        try:
            while refused is None:
                if (reason := self._should_stop(steps, started)) is not None:
                    stop, message = reason
                    break
                steps += 1
                self.emit(StepStarted(run_id=self.run_id, step=steps))
                self._compress(messages)
                if (blocked := self._pre_llm_blocked(steps)) is not None:
                    stop, message = "aborted", blocked
                    break
                response = self._call_model(messages, schemas, steps)
                self._notify(HookEvent.POST_LLM_CALL, {"step": steps, "content": response.content or ""})
                if (spent := self.costs.exceeded) is not None:
                    stop, message = "budget", f"Stopped: {spent}."
                    final_text = response.content or ""
                    break
                mark = len(messages)
                if not response.tool_calls:
                    final_text = response.content or ""
                    self.context.append_assistant(messages, response)
                    thread.add(messages[mark:], step_done=True)
                    if self._quality_gates_failed(messages) or self._stop_hook_continues(
                        final_text, messages
                    ):
                        thread.add(messages[mark + 1 :])
                        continue
                    break
                results = self._run_tools(response.tool_calls, steps)
                self.context.append_tool_results(
                    messages, response.tool_calls, results, response.content, images=self._sees_images()
                )
                thread.add(messages[mark:], step_done=True)
                if self.engine.aborted:
                    stop, message = "aborted", self.engine.abort_reason or "The user aborted the run."
                    break
        except RunCancelledError:
            stop, message = self._cancel_reason, "The run was interrupted."
        except LLMError as exc:
            stop = "script_error" if exc.kind == "script" else "llm_error"
            message = str(exc)
            self._notify(HookEvent.ON_ERROR, {"error": message})
        finally:
            self.engine.confirmer = original_confirmer
        self._notify(HookEvent.SESSION_END, {"stop_reason": stop})
        return self._finish(task, stop, message, final_text, steps, messages, started)

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

    def _should_stop(self, steps: int, started: float) -> tuple[StopReason, str] | None:
        if self._cancel.is_set():
            return self._cancel_reason, "The run was interrupted."
        if steps >= self.agent.max_steps:
            return "max_steps", f"Stopped after {steps} steps (the agent's max_steps)."
        if self.timeout_s is not None and time.monotonic() - started > self.timeout_s:
            return "timeout", f"Stopped: the run took longer than {self.timeout_s:g} s."
        return None

    def _call_model(
        self, messages: list[dict[str, Any]], schemas: Sequence[dict[str, Any]], step: int
    ) -> LLMResponse:
        def on_text(text: str) -> None:
            self.emit(TextDelta(run_id=self.run_id, step=step, text=text))

        response = self.llm.complete(
            messages,
            schemas,
            on_text=on_text,
            should_stop=self._cancel.is_set,
            thread_position=(self._turns_before, self._run_index),
        )
        for warning in self.costs.add(response.usage):
            self.emit(Warning(run_id=self.run_id, message=warning, category="budget"))
            self._notify(HookEvent.BUDGET_WARNING, {"message": warning, "cost_usd": self.costs.cost_usd})
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
            )
        )
        return response

    # ------------------------------------------------------------------ tools

    def _run_tools(self, calls: Sequence[ToolCall], step: int) -> list[ToolResult]:
        self.engine.step = step  # which step changed which files, for rewind
        for call in calls:
            self.emit(
                ToolCallRequested(
                    run_id=self.run_id, step=step, call_id=call.id, tool=call.name, arguments=call.arguments
                )
            )
        if len(calls) > 1 and all(self._runs_unattended(call) for call in calls):
            with ThreadPoolExecutor(max_workers=min(_MAX_PARALLEL, len(calls))) as pool:
                return list(pool.map(lambda call: self._run_one(call, step), calls))
        results = []
        for call in calls:
            if self._cancel.is_set() or self.engine.aborted:
                why = "aborted" if self.engine.aborted else "interrupted"
                results.append(ToolResult.fail(f"Not run: the run was {why}.", skipped=True))
                continue
            results.append(self._run_one(call, step))
        return results

    def _runs_unattended(self, call: ToolCall) -> bool:
        """Read-only tools that never ask anyone can run side by side."""
        if call.parse_error or not self.engine.registry.has_tool(call.name):
            return True
        tool = self.engine.registry.get(call.name)
        return (
            not tool.sensitive
            and not tool.mutates_files
            and call.name != "run_command"
            and (self.engine.policy.mode != "confirm-all")
        )

    def _run_one(self, call: ToolCall, step: int) -> ToolResult:
        started = time.monotonic()
        if call.parse_error:
            result = ToolResult.fail(
                f"The call to {call.name} was not run: {call.parse_error}. Send valid JSON."
            )
        else:
            self._current.call_id = call.id
            try:
                result = self.engine.execute_tool_call(call.name, call.arguments)
            finally:
                self._current.call_id = ""
        self.emit(
            ToolResultEvent(
                run_id=self.run_id,
                step=step,
                call_id=call.id,
                tool=call.name,
                status=_status(result),
                success=result.success,
                output=result.output,
                error=result.error,
                diff=result.metadata.get("diff"),
                hooks=tuple(result.metadata.get("hooks", ())),
                duration_s=round(time.monotonic() - started, 4),
                images=tuple(result.metadata.get("images", ())),
                changed_files=tuple(result.metadata.get("changed_files", ())),
                sandboxed=_sandboxed(result),
            )
        )
        if _status(result) == "failed":  # a tool that broke, not a person's or a rule's refusal
            self._notify(HookEvent.ON_ERROR, {"tool_name": call.name, "error": result.error or ""})
        return result

    # ------------------------------------------------------------------ hooks, gates, compression

    def _notify(self, event: HookEvent, context: dict[str, Any]) -> list[HookResult]:
        """Run the hooks of `event`; their failures become warnings. Returns what they decided."""
        hooks = self.engine.hook_executor
        if hooks is None or not hooks.has_hooks(event):
            return []
        try:
            results = hooks.run_event(event, {"run_id": self.run_id, **context})
        except Exception:
            log.exception("hook_event_failed", hook_event=str(event))
            return []
        for r in results:
            if r.warning:
                self.emit(Warning(run_id=self.run_id, message=r.report() or str(r.warning), category="hook"))
        return results

    def _bind_hooks(self) -> None:
        """Claude-style hooks read the run's transcript (`transcript_path`): this loop's, and its problems."""
        hooks = self.engine.hook_executor
        if hooks is not None and hooks.transcript is not None:
            hooks.transcript.source = lambda _run_id: self.transcript.to_payload()
        settings = self.engine.claude_settings
        for problem in settings.unreadable if settings is not None else ():
            said = f"Claude Code settings: {problem}"
            self.emit(Warning(run_id=self.run_id, message=said, category="hook"))

    def _session_start(self, task: str, messages: list[dict[str, Any]]) -> str | None:
        """session_start hooks: what they say joins the task; why a hook refused the task, or None."""
        source = "resume" if self._run_index else "startup"  # a follow-up cell continues its thread
        results = self._notify(
            HookEvent.SESSION_START, {"task": task, "agent": self.agent.name, "source": source}
        )
        for r in results:
            if r.decision is HookDecision.BLOCK:  # only Claude Code's UserPromptSubmit hooks can
                return f"The hook {r.name} refused the task: {r.reason}"
        said = [f"[Hook {r.name}]\n{r.additional_context}" for r in results if r.additional_context]
        if said:
            messages.append({"role": "user", "content": "\n\n".join(said)})
        return None

    def _stop_hook_continues(self, final_text: str, messages: list[dict[str, Any]]) -> bool:
        """agent_complete hooks, when the model says it is done; a Claude Code Stop hook that blocks sends it
        back to work with its reason (it is told `stop_hook_active` the next time, as in Claude Code)."""
        context = {"final_text": final_text, "stop_hook_active": self._stop_hook_active}
        for r in self._notify(HookEvent.AGENT_COMPLETE, context):
            if r.decision is HookDecision.BLOCK:
                self._stop_hook_active = True
                said = f"Stop hook {r.name}: {r.reason}"
                self.emit(Warning(run_id=self.run_id, message=said, category="hook"))
                messages.append({"role": "user", "content": f"[Stop hook {r.name}]\n{r.reason}"})
                return True
        return False

    def _pre_llm_blocked(self, step: int) -> str | None:
        hooks = self.engine.hook_executor
        if hooks is None or not hooks.has_hooks(HookEvent.PRE_LLM_CALL):
            return None
        for r in hooks.run_event(HookEvent.PRE_LLM_CALL, {"run_id": self.run_id, "step": step}):
            if r.decision == HookDecision.BLOCK:
                return f"A pre_llm_call hook ({r.name}) stopped the run: {r.reason}"
        return None

    def _quality_gates_failed(self, messages: list[dict[str, Any]]) -> bool:
        """Run the quality gates; a failed required gate goes back to the model as feedback."""
        results = self.engine.run_quality_gates()
        failed = [r for r in results if r.required and not r.passed]
        for r in results:
            if not r.passed:
                self.emit(
                    Warning(
                        run_id=self.run_id, message=f"Quality gate {r.name} failed.", category="quality_gate"
                    )
                )
        if not failed:
            return False
        redact = default_redactor().redact
        report = "\n\n".join(f"Quality gate '{r.name}' failed:\n{redact(r.output)[-2000:]}" for r in failed)
        messages.append({"role": "user", "content": f"{report}\n\nFix these before you finish."})
        return True

    def _compress(self, messages: list[dict[str, Any]]) -> None:
        window = self.llm.context_window()
        if not self.context.needs_compression(messages, window):
            return
        self._notify(HookEvent.CONTEXT_COMPRESS, {"messages": len(messages)})
        pinned = next((i for i, m in enumerate(messages) if m is self._task_message), 0)
        report = self.context.compress(messages, window, pinned=pinned)
        if report is not None:
            self.emit(
                Warning(
                    run_id=self.run_id,
                    message=(
                        f"Context compressed ({report.stage} {report.steps_affected} older step(s)): "
                        f"~{report.tokens_before} → ~{report.tokens_after} tokens."
                    ),
                    category="context",
                )
            )

    # ------------------------------------------------------------------ the end

    def _finish(
        self,
        task: str,
        stop: StopReason,
        message: str,
        final_text: str,
        steps: int,
        messages: list[dict[str, Any]],
        started: float,
    ) -> RunResult:
        files = sorted(self._rel(path) for path in self.engine.checkpoints.files(self.run_id))
        status = (
            "success"
            if stop == "completed"
            else ("partial" if stop in ("max_steps", "budget", "timeout") else "failed")
        )
        if not message:
            message = "Done." if stop == "completed" else stop
        self.emit(
            RunFinished(
                run_id=self.run_id,
                status=status,  # type: ignore[arg-type]
                stop_reason=stop,
                message=message,
                steps=steps,
                final_text=final_text,
                files_changed=tuple(files),
                total_tokens=self.costs.total_tokens,
                total_cost_usd=self.costs.cost_usd,
                duration_s=round(time.monotonic() - started, 3),
                undo_note=self.engine.checkpoints.coverage_note(self.run_id),
                changes=_review(self.engine, self.run_id),
                total_cached_tokens=self.costs.cached_tokens,
            )
        )
        assert self.thread is not None
        self.thread.end_run(status=status, tokens=self.costs.total_tokens, cost_usd=self.costs.cost_usd)
        if self.record_to is not None:
            self._record(self.thread)
        return RunResult(
            run_id=self.run_id,
            status=status,
            stop_reason=stop,
            message=message,
            final_text=final_text,
            steps=steps,
            messages=messages,
            transcript=self.transcript,
            files_changed=files,
            total_tokens=self.costs.total_tokens,
            cost_usd=self.costs.cost_usd,
            thread=self.thread,
        )

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.engine.config.workspace.root).as_posix()
        except ValueError:
            return str(path)

    def _record(self, thread: Thread) -> None:
        from architect_nb.agent.scripted import script_from_thread

        script = default_redactor().redact_data(script_from_thread(thread))
        assert self.record_to is not None
        self.record_to.parent.mkdir(parents=True, exist_ok=True)
        self.record_to.write_text(
            yaml.safe_dump(script, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )


_REVIEW_FILES = 200
_REVIEW_DIFF_LINES = 400


def _review(engine: ExecutionEngine, run_id: str) -> tuple[dict[str, str], ...]:
    """Each file the run changed with its diff, for the review list (capped: the run record is saved)."""
    try:
        changes = engine.checkpoints.review(run_id)
    except Exception:  # the review is an extra; the run's record must still be written
        log.exception("review_failed", run_id=run_id)
        return ()
    out = []
    for change in changes[:_REVIEW_FILES]:
        lines = change.diff.splitlines(keepends=True)
        diff = "".join(lines[:_REVIEW_DIFF_LINES])
        if len(lines) > _REVIEW_DIFF_LINES:
            diff += f"[... {len(lines) - _REVIEW_DIFF_LINES} more lines: %architect review {run_id}]\n"
        out.append({"path": change.path, "status": change.status, "diff": diff})
    return tuple(out)


def _thread_info(thread: Thread) -> ThreadInfo:
    """What the run header says about the conversation it continues, before the run adds to it."""
    last = thread.last_run
    fork = thread.forked_from
    just_forked = fork is not None and last is not None and last.run_id == fork.run_id
    return ThreadInfo(
        name=thread.name,
        id=thread.id,
        follows_run=last.run_id if last is not None and not just_forked else None,
        forked_from=fork.describe() if just_forked and fork is not None else None,
        runs=len(thread.runs),
        turns=thread.turns,
        context_tokens=thread.context_tokens(),
        cost_usd=round(thread.cost_usd, 6),
    )


def _status(result: ToolResult) -> str:
    meta = result.metadata
    for key, status in (
        ("aborted", "aborted"),
        ("denied", "denied"),
        ("guardrail", "blocked"),
        ("blocked", "blocked"),
        ("dry_run", "dry_run"),
    ):
        if meta.get(key):
            return status
    return "ok" if result.success else "failed"


def _sandboxed(result: ToolResult) -> bool | None:
    """Whether a command ran in the OS sandbox; None when nothing ran or the tool is not a command."""
    value = result.metadata.get("sandboxed")
    return value if isinstance(value, bool) and "exit_code" in result.metadata else None
