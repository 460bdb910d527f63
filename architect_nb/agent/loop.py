"""`AgentLoop`: the model asks for tools, the engine runs them, the results go back, until the model is done.

Each step calls the model with the agent's tool schemas, runs every tool call through the `ExecutionEngine`,
and appends the results in the OpenAI message format. The run stops when the model answers without tool calls,
or on max steps, budget, timeout, abort, interrupt or a model error; every stop ends in one `RunFinished`
event with a plain status. Everything the loop does is also an event, so the same stream drives the
notebook's live view and becomes the run's transcript.
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
    ToolCallRequested,
    ToolResultEvent,
    Transcript,
    Warning,
)
from architect_nb.agent.llm import LLMClient, LLMError, LLMResponse, RunCancelledError, ToolCall
from architect_nb.config.schema import CostsConfig
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks import HookDecision, HookEvent
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
        record_to: Write the run's assistant turns to this YAML file as a replayable script.
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
        self.run_id = ""
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

    def run(self, task: str) -> RunResult:
        self.run_id = self.engine.start_run()
        started = time.monotonic()
        tools = self._allowed_tools()
        schemas = self.engine.registry.get_schemas(tools)
        original_confirmer = self.engine.confirmer
        self.engine.confirmer = EventedConfirmer(original_confirmer, self.emit, self.run_id, self._current)
        self.emit(
            RunStarted(
                run_id=self.run_id,
                task=task,
                agent=self.agent.name,
                model=str(getattr(self.llm, "display_name", self.llm.model)),
                mode=self.engine.policy.mode,
                dry_run=self.engine.dry_run,
                workspace=str(getattr(self.engine.hook_executor, "workspace_root", "") or ""),
                tools=tuple(s["function"]["name"] for s in schemas),
            )
        )
        for category, warning in self.startup_warnings:
            self.emit(Warning(run_id=self.run_id, message=warning, category=category))
        self._notify(HookEvent.SESSION_START, {"task": task, "agent": self.agent.name})
        messages = self.context.start(self.agent.system_prompt, task)
        steps = 0
        final_text = ""
        stop: StopReason = "completed"
        message = ""
        try:
            while True:
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
                if not response.tool_calls:
                    final_text = response.content or ""
                    self.context.append_assistant(messages, response)
                    if self._quality_gates_failed(messages):
                        continue
                    break
                results = self._run_tools(response.tool_calls, steps)
                self.context.append_tool_results(messages, response.tool_calls, results, response.content)
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
        if stop == "completed":
            self._notify(HookEvent.AGENT_COMPLETE, {"final_text": final_text})
        self._notify(HookEvent.SESSION_END, {"stop_reason": stop})
        return self._finish(task, stop, message, final_text, steps, messages, started)

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

        response = self.llm.complete(messages, schemas, on_text=on_text, should_stop=self._cancel.is_set)
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
            )
        )
        return response

    # ------------------------------------------------------------------ tools

    def _run_tools(self, calls: Sequence[ToolCall], step: int) -> list[ToolResult]:
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
                sandboxed=_sandboxed(result),
            )
        )
        if _status(result) == "failed":  # a tool that broke, not a person's or a rule's refusal
            self._notify(HookEvent.ON_ERROR, {"tool_name": call.name, "error": result.error or ""})
        return result

    # ------------------------------------------------------------------ hooks, gates, compression

    def _notify(self, event: HookEvent, context: dict[str, Any]) -> None:
        hooks = self.engine.hook_executor
        if hooks is None or not hooks.has_hooks(event):
            return
        try:
            results = hooks.run_event(event, {"run_id": self.run_id, **context})
        except Exception:
            log.exception("hook_event_failed", hook_event=str(event))
            return
        for r in results:
            if r.warning:
                self.emit(Warning(run_id=self.run_id, message=r.report() or str(r.warning), category="hook"))

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
        report = "\n\n".join(f"Quality gate '{r.name}' failed:\n{r.output[-2000:]}" for r in failed)
        messages.append({"role": "user", "content": f"{report}\n\nFix these before you finish."})
        return True

    def _compress(self, messages: list[dict[str, Any]]) -> None:
        window = self.llm.context_window()
        if not self.context.needs_compression(messages, window):
            return
        self._notify(HookEvent.CONTEXT_COMPRESS, {"messages": len(messages)})
        report = self.context.compress(messages, window)
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
        commands_ran = any(
            r.tool == "run_command" and r.success for r in self.engine.audit.records(self.run_id)
        )
        note = "Files changed by run_command are not tracked by undo." if commands_ran else ""
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
                untracked_changes_note=note,
            )
        )
        if self.record_to is not None:
            self._record(messages)
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
        )

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.engine.config.workspace.root).as_posix()
        except ValueError:
            return str(path)

    def _record(self, messages: list[dict[str, Any]]) -> None:
        from architect_nb.testing.scripted import script_from_messages

        script = default_redactor().redact_data(script_from_messages(messages))
        assert self.record_to is not None
        self.record_to.parent.mkdir(parents=True, exist_ok=True)
        self.record_to.write_text(
            yaml.safe_dump(script, sort_keys=False, allow_unicode=True), encoding="utf-8"
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
