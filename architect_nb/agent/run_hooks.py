"""The run's edges: the hooks that join in around the model's turns, and the quality gates at the end.

What `session_start` hooks say (Claude Code's SessionStart and UserPromptSubmit among them) reaches the model
with the task, and a UserPromptSubmit hook can refuse the task; a `pre_llm_call` hook can stop the run; when
the model says it is done, a failed required quality gate or a Claude Code Stop hook that blocks sends it
back to work. A hook that fails only warns: its problem is a `RunWarning` event, never an exception.
"""

from __future__ import annotations

from typing import Any

from architect_nb.agent.events import EventSink, RunWarning
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.executor import HookDecision, HookEvent, HookResult, TranscriptSource
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor

__all__ = ["RunHooks"]

log = get_logger(__name__)
_GATE_OUTPUT_CHARS = 2000


class RunHooks:
    """The hooks and gates of one agent loop's runs, on its engine.

    Args:
        engine: Whose hooks run and whose quality gates are checked.
        emit: Where warnings go (the loop's event stream).
        transcript: The run's transcript, for the Claude-style hooks that read it.
    """

    def __init__(self, engine: ExecutionEngine, emit: EventSink, transcript: TranscriptSource) -> None:
        self.engine = engine
        self.emit = emit
        self.transcript = transcript
        self.stop_hook_active = False  # a Stop hook already sent the model back to work in this run

    def notify(self, run_id: str, event: HookEvent, context: dict[str, Any]) -> list[HookResult]:
        """Run the hooks of `event`; their failures become warnings. Returns what they decided."""
        hooks = self.engine.hook_executor
        if hooks is None or not hooks.has_hooks(event):
            return []
        try:
            results = hooks.run_event(event, {"run_id": run_id, **context}, transcript=self.transcript)
        except Exception:
            log.exception("hook_event_failed", hook_event=str(event))
            return []
        for r in results:
            if r.warning:
                self.emit(RunWarning(run_id=run_id, message=r.report() or str(r.warning), category="hook"))
        return results

    def start(self, run_id: str, task: str, agent: str, *, follow_up: bool) -> tuple[str | None, str | None]:
        """session_start hooks, as the run starts. Returns (what they said for the model, why a hook
        refused the task), either None. The settings' problems are reported first."""
        self.stop_hook_active = False
        settings = self.engine.claude_settings
        for problem in settings.unreadable if settings is not None else ():
            self.emit(RunWarning(run_id=run_id, message=f"Claude Code settings: {problem}", category="hook"))
        source = "resume" if follow_up else "startup"  # a follow-up cell continues its thread
        results = self.notify(
            run_id, HookEvent.SESSION_START, {"task": task, "agent": agent, "source": source}
        )
        for r in results:
            if r.decision is HookDecision.BLOCK:  # only Claude Code's UserPromptSubmit hooks can
                return None, f"The hook {r.name} refused the task: {r.reason}"
        said = [f"[Hook {r.name}]\n{r.additional_context}" for r in results if r.additional_context]
        return ("\n\n".join(said) or None), None

    def llm_call_blocked(self, run_id: str, step: int) -> str | None:
        """Why a pre_llm_call hook stopped the run before this step's model call, or None."""
        hooks = self.engine.hook_executor
        if hooks is None or not hooks.has_hooks(HookEvent.PRE_LLM_CALL):
            return None
        context = {"run_id": run_id, "step": step}
        for r in hooks.run_event(HookEvent.PRE_LLM_CALL, context, transcript=self.transcript):
            if r.decision == HookDecision.BLOCK:
                return f"A pre_llm_call hook ({r.name}) stopped the run: {r.reason}"
        return None

    def back_to_work(self, run_id: str, final_text: str) -> str | None:
        """When the model says it is done: what sends it back to work (a failed required quality gate, or
        a Claude Code Stop hook that blocks), as the message for the model, or None to finish."""
        return self._gates_failed(run_id) or self._stop_hook_blocks(run_id, final_text)

    def _gates_failed(self, run_id: str) -> str | None:
        results = self.engine.run_quality_gates()
        for r in results:
            if not r.passed:
                said = f"Quality gate {r.name} failed."
                self.emit(RunWarning(run_id=run_id, message=said, category="quality_gate"))
        failed = [r for r in results if r.required and not r.passed]
        if not failed:
            return None
        redact = default_redactor().redact
        report = "\n\n".join(
            f"Quality gate '{r.name}' failed:\n{redact(r.output)[-_GATE_OUTPUT_CHARS:]}" for r in failed
        )
        return f"{report}\n\nFix these before you finish."

    def _stop_hook_blocks(self, run_id: str, final_text: str) -> str | None:
        """agent_complete hooks; a Claude Code Stop hook that blocks is told `stop_hook_active` the next
        time, as in Claude Code."""
        context = {"final_text": final_text, "stop_hook_active": self.stop_hook_active}
        for r in self.notify(run_id, HookEvent.AGENT_COMPLETE, context):
            if r.decision is HookDecision.BLOCK:
                self.stop_hook_active = True
                self.emit(
                    RunWarning(run_id=run_id, message=f"Stop hook {r.name}: {r.reason}", category="hook")
                )
                return f"[Stop hook {r.name}]\n{r.reason}"
        return None
