"""`ExecutionEngine`: the one pipeline every tool call, local or MCP, goes through. It never raises.

The ten steps, in the design document's order::

    1 lookup      registry.get(name)                      unknown tool → error naming the available ones
    2 validate    Pydantic, then the edit's preview diff   bad arguments → error per field
    3 guardrails  blocklist, files, limits, code rules,    refused → "Guardrail: ..."; no hook runs
                  Claude Code's deny rules
    4 pre-hooks   PRE_TOOL_USE in configured order         BLOCK → refused; rewrites → back to steps 2 and 3
    5 confirm     policy, hooks' and Claude Code's ask     deny → refused with the reason; abort → run stops
                  rules, then the Confirmer (unless dry-run)
    6 dry-run     "[DRY-RUN] would run tool(args)" + diff
    7 execute     snapshot the files (`snapshots`), then tool.execute
    8 post-hooks  POST_TOOL_USE (post_edit among them); their reports are appended to the result
    9 log         one audit record per call, through structlog
    10 return     hook and guardrail warnings appended to the result

The engine is built whole (`build.build_engine` builds one from a config); what belongs to one run (its id,
who is asked, the transcript hooks read) comes with `start_run`, and what belongs to one call (the loop's
step, the model's id for it) comes with `execute_tool_call`.

Every result says how the call ended (`ToolResult.outcome`), decided where it is decided: `INVALID` at steps 1
and 2, `BLOCKED` at 3 and 4, `DENIED`, `NEEDS_PERSON` or `ABORTED` at 5, `DRY_RUN` at 6, and the tool's own
`OK` or `FAILED` at 7.

Abort: when a person answers abort, the call returns a result whose outcome is `ABORTED` and
`engine.aborted` becomes True; every later call is refused the same way until `start_run()`. The agent
loop checks either and stops. Nothing raises and nothing exits.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from architect_nb.config.schema import AppConfig
from architect_nb.config.teaching_policy import PolicyLevel, TeachingPolicy
from architect_nb.execution.audit import AuditLog, AuditRecord
from architect_nb.execution.checkpoints.store import CheckpointStore
from architect_nb.execution.confirmation.confirmers import (
    Approval,
    ConfirmationAnswer,
    ConfirmationRequest,
    Confirmer,
    TerminalConfirmer,
    sensitivity_of,
    show,
)
from architect_nb.execution.confirmation.policy import ConfirmationPolicy, NoTTYError, classify_command_call
from architect_nb.execution.gates.quality_gates import QualityGateResult, run_quality_gates
from architect_nb.execution.guardrails.claude_permissions import ClaudePermissions
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.execution.hooks.claude_settings import ClaudeSettings
from architect_nb.execution.hooks.executor import HookDecision, HookEvent, HookExecutor, TranscriptSource
from architect_nb.execution.snapshots import CallSnapshots
from architect_nb.execution.steps import (
    CallState,
    dry_run_result,
    finish,
    guardrail_refusal,
    hook_context,
    parse_arguments,
)
from architect_nb.log import get_logger
from architect_nb.provenance.record import Author, Authorship
from architect_nb.tools.base import (
    BaseTool,
    CallOutcome,
    ToolRefusedError,
    ToolResult,
    format_validation_error,
)
from architect_nb.tools.commands.command_tool import as_command_tool
from architect_nb.tools.filesystem.diffs import count_changes
from architect_nb.tools.kernel.session import KernelSession
from architect_nb.tools.registry import ToolNotFoundError, ToolRegistry
from architect_nb.tools.workspace import WorkspaceTool

__all__ = ["ExecutionEngine", "RunContext"]


@dataclass(frozen=True, slots=True)
class RunContext:
    """What belongs to one run: its id, who is asked during it, and the transcript its hooks read.

    Attributes:
        run_id: The run's id (in checkpoints, the audit log and every confirmation request).
        confirmer: Who is asked during this run; None asks the engine's own confirmer.
        transcript: The run's transcript for Claude-style hooks; None gives them the audit records.
    """

    run_id: str
    confirmer: Confirmer | None = None
    transcript: TranscriptSource | None = None


class ExecutionEngine:
    """Runs tool calls through validation, guardrails, hooks, confirmation, snapshots and the audit log.

    Args:
        registry: Where tools are looked up.
        config: The application config.
        policy: Which calls need approval (default: confirm-sensitive).
        dry_run: Describe calls (and their diffs) instead of running them.
        hook_executor: Lifecycle hooks; None runs none.
        guardrails: Deterministic rules; None checks none (the command blocklist still applies).
        confirmer: Who is asked, unless a run names its own; default a `TerminalConfirmer` (needs a TTY).
        claude_rules: The workspace's Claude Code permission rules: its deny rules on whole tools and on
            commands refuse calls at step 3 (its path rules are in `guardrails` already), its ask rules add
            reasons to ask at step 5.
        claude_settings: The workspace's Claude Code settings as read (None when `hooks.claude_settings` is
            off), for `%architect status` and the problems a run reports.
        checkpoints: The change records undo reads; default the ones `config` names.
        kernel: The live kernel, for the kernel tools and kernel checks.
        teaching: The course's teaching policy (`config.teaching_policy`): under all but `full` it refuses
            every call that writes, at step 3; `tools` limits the tools in every mode. Runs may tighten it
            (`tighten`), never loosen it.
        authorship: Shared with the notebook tools, which record in the cells they write who wrote which
            lines (`provenance.record`): each run sets itself as the author (`start_run`).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        config: AppConfig,
        *,
        policy: ConfirmationPolicy | None = None,
        dry_run: bool = False,
        hook_executor: HookExecutor | None = None,
        guardrails: GuardrailsEngine | None = None,
        confirmer: Confirmer | None = None,
        claude_rules: ClaudePermissions | None = None,
        claude_settings: ClaudeSettings | None = None,
        checkpoints: CheckpointStore | None = None,
        kernel: KernelSession | None = None,
        teaching: TeachingPolicy | None = None,
        authorship: Authorship | None = None,
    ) -> None:
        self.registry = registry
        self.kernel = kernel
        self.config = config
        self.policy = policy or ConfirmationPolicy()
        self.dry_run = dry_run
        self.hook_executor = hook_executor
        self.guardrails = guardrails
        self.confirmer = confirmer
        self.claude_rules = claude_rules
        self.claude_settings = claude_settings
        self.teaching = teaching if teaching is not None else TeachingPolicy()
        self.authorship = authorship if authorship is not None else Authorship()
        self.checkpoints = checkpoints if checkpoints is not None else CheckpointStore.for_config(config)
        self._snapshots = CallSnapshots(self.checkpoints)
        self.audit = AuditLog()
        self.aborted = False
        self.abort_reason = ""
        self._run = RunContext("")
        self._log = get_logger(__name__)
        self.start_run()

    @property
    def run_id(self) -> str:
        """The current (or last) run's id."""
        return self._run.run_id

    @property
    def _hooked(self) -> bool:
        hooks = self.hook_executor
        return hooks is not None and (
            hooks.has_hooks(HookEvent.PRE_TOOL_USE) or hooks.has_hooks(HookEvent.POST_TOOL_USE)
        )

    # ------------------------------------------------------------------ runs

    def start_run(
        self,
        run_id: str | None = None,
        *,
        confirmer: Confirmer | None = None,
        transcript: TranscriptSource | None = None,
        task: str = "",
        model: str = "",
    ) -> str:
        """Begin a new run: fresh guardrail counters, abort cleared. Returns the run id.

        Args:
            run_id: The run's id; default a new one.
            confirmer: Who is asked during this run (the agent loop's, which also reports each question);
                default the engine's own.
            transcript: The run's transcript for Claude-style hooks; default the run's audit records.
            task: The run's task, redacted: its saved record names it, so the run can be found again.
            model: The run's model, which the cells it writes record with the run's id (`authorship`).
        """
        self._run = RunContext(run_id or uuid.uuid4().hex[:12], confirmer, transcript)
        self.authorship.current = Author(self.run_id, model) if model else None
        self.aborted = False
        self.abort_reason = ""
        if self.guardrails is not None:
            self.guardrails.reset()
        self.checkpoints.begin_run(self.run_id, task, model)
        return self.run_id

    def end_run(self) -> None:
        """The run is over: later calls ask the engine's own confirmer again (the run id stays), and its saved
        record says it finished."""
        self.checkpoints.end_run(self.run_id)
        self._run = RunContext(self.run_id)

    def tighten(self, level: PolicyLevel | None) -> TeachingPolicy:
        """Add a teaching policy level (the notebook's): it can only make the rules stricter."""
        self.teaching = self.teaching.with_level(level)
        return self.teaching

    def abort(self, reason: str = "") -> None:
        """Stop the run from any thread (a Stop button): later calls are refused until `start_run`."""
        self.abort_reason = reason
        self.aborted = True

    def run_summary(self, run_id: str | None = None) -> str:
        """What the run did: calls, failures, and what undo restores and does not cover."""
        rid = run_id or self.run_id
        records = self.audit.records(rid)
        failed = sum(not r.success for r in records)
        return f"Run {rid}: {len(records)} tool call(s), {failed} failed. " + self.checkpoints.summary(rid)

    def _transcript(self) -> Any:
        if self._run.transcript is not None:
            return self._run.transcript()
        return {"run_id": self.run_id, "tool_calls": self.audit.to_transcript(self.run_id)}

    def run_quality_gates(self) -> list[QualityGateResult]:
        """Run the configured quality gates, in order; the agent loop calls this when the agent is done.

        Command gates run in the workspace; kernel checks (`python:`) in the kernel; notebook checks
        (`notebook:`) against the workspace as this run's first snapshots had it."""
        gates = self.config.guardrails.quality_gates
        run_id = self.run_id

        def write_before(folder: Path) -> list[str]:
            return self.checkpoints.write_before(run_id, folder)

        return run_quality_gates(gates, self.config.workspace.root.resolve(), self.kernel, write_before)

    # ------------------------------------------------------------------ the pipeline

    def execute_tool_call(
        self, tool_name: str, args: Any, *, step: int = 0, tool_call_id: str = ""
    ) -> ToolResult:
        """Run one tool call through the pipeline. Never raises; every failure is a `ToolResult`.

        Args:
            tool_name: The tool to call.
            args: Its arguments: a dict, or JSON text of one.
            step: The agent loop's step the call belongs to (its change records say so; rewind goes back
                to a step).
            tool_call_id: The model's id for the call, so a confirmation names the call the model made.
        """
        started = time.perf_counter()
        record = self.audit.new_record(self.run_id, tool_name, args if isinstance(args, dict) else {})
        try:
            result = self._pipeline(tool_name, args, record, step, tool_call_id)
        except Exception as exc:  # the contract: the engine never raises
            self._log.exception("engine_error", tool=str(tool_name))
            record.step("engine", "error", f"{type(exc).__name__}: {exc}")
            result = ToolResult.fail(
                f"The engine hit an unexpected error while handling {show(str(tool_name))} "
                f"({type(exc).__name__}: {exc}); the call may not have completed. Check the state "
                "(for example, read the file) before trying again."
            )
        record.duration = time.perf_counter() - started
        record.success = result.success
        record.error = result.error
        try:
            self.audit.commit(record)
        except Exception:  # logging must never break a call
            self._log.exception("audit_error")
        return result

    def _pipeline(
        self, tool_name: str, raw_args: Any, record: AuditRecord, step: int, tool_call_id: str
    ) -> ToolResult:
        if self.aborted:
            record.step("run", "aborted")
            return self._aborted_result()
        try:  # 1 lookup
            tool = self.registry.get(tool_name)
        except ToolNotFoundError as exc:
            record.step("lookup", "not_found")
            return ToolResult.refused(CallOutcome.INVALID, f"{show(str(exc))} Call one of those instead.")
        record.step("lookup", "found")
        args = parse_arguments(raw_args)
        if args is None:
            record.step("validate", "invalid")
            return ToolResult.refused(
                CallOutcome.INVALID,
                f"Arguments for {tool.name} must be a JSON object of named arguments, not "
                f"{type(raw_args).__name__}. Check the tool's schema and retry.",
            )
        call = CallState(
            tool=tool, args=args, step=step, audit_id=str(record.call_id), tool_call_id=tool_call_id
        )
        # A refusal still carries what was said on the way (hook warnings, a rewrite), via `finish`.
        refused = self._check(call, record, rewritten=False)  # 2 validate + 3 guardrails
        if refused is not None:
            return finish(call, refused)
        refused = self._pre_hooks(call, record)  # 4
        if refused is not None:
            return finish(call, refused)
        if not self.dry_run:  # before the approval, whose undo line says what it cannot restore
            self._snapshots.take_state(call)
        reasons = self._confirm_reasons(call)  # 5
        if reasons and not self.dry_run:
            refused = self._confirm(call, record, reasons)
            if refused is not None:
                self._snapshots.drop_state(call)
                return finish(call, refused)
        else:
            record.step("confirm", "skipped (dry-run)" if reasons else "not_needed")
        if self.dry_run:  # 6
            record.step("dry_run", "described")
            return finish(call, dry_run_result(call, reasons))
        result = self._execute(call, record)  # 7
        self._post_hooks(call, result, record)  # 8
        return finish(call, result)  # 9 (by execute_tool_call) and 10

    def _check(self, call: CallState, record: AuditRecord, *, rewritten: bool) -> ToolResult | None:
        """Steps 2 and 3: validate, preview, then the guardrails. Run again after a hook rewrite."""
        tool = call.tool
        try:
            call.kwargs = tool.validate_args(call.args).model_dump()
        except ValidationError as exc:
            record.step("validate", "invalid")
            text = format_validation_error(tool.name, exc)
            if rewritten:
                text = "A pre_tool_use hook rewrote the arguments into invalid ones. " + text
            return ToolResult.refused(CallOutcome.INVALID, text)
        record.step("validate", "ok")
        # A re-check after a rewrite judges the new arguments afresh.
        call.rule_notes, call.files, call.command, call.preview = [], [], None, None
        try:
            call.code = tool.code_to_run(call.kwargs) if tool.runs_code else None
        except ToolRefusedError as exc:  # refused before anybody is asked to approve it
            record.step("validate", "refused", str(exc))
            return ToolResult.refused(CallOutcome.BLOCKED, str(exc))
        rails = self.guardrails
        if isinstance(tool, WorkspaceTool) and (
            tool.mutates_files or (rails is not None and bool(rails.sensitive)) or self._hooked
        ):  # resolving paths costs syscalls: only when something will look at them
            call.files = tool.target_paths(call.kwargs)
        command = call.kwargs.get("command")
        shell = as_command_tool(tool)
        if shell is not None and isinstance(command, str):
            env = call.kwargs.get("env")
            call.command = classify_command_call(shell, command, env if isinstance(env, dict) else None)
        if tool.mutates_files:
            try:
                call.preview = tool.preview(**call.kwargs)
            except Exception:  # e.g. the file is missing: the tool itself will say so
                call.preview = None
        refusal = self._teaching_refusal(call)
        if refusal is not None:
            record.step("teaching", "block", refusal)
            return ToolResult.refused(CallOutcome.BLOCKED, refusal)
        refusal = guardrail_refusal(call, self.guardrails, yolo=self.policy.mode == "yolo")
        if refusal is None and self.claude_rules is not None:
            refusal = self.claude_rules.refusal(tool, call.kwargs)
        if refusal is not None:
            record.step("guardrails", "block", refusal)
            return ToolResult.refused(CallOutcome.BLOCKED, f"Guardrail: {refusal}")
        record.step("guardrails", "allow")
        return None

    def offers(self, tool: BaseTool) -> bool:
        """Whether the teaching policy lets `tool` run at all (a command: when it only reads)."""
        teaching = self.teaching
        if not teaching.allows_tool(tool.name):
            return False
        return teaching.writes or tool.reads_only or as_command_tool(tool) is not None

    def withheld(self, name: str) -> str | None:
        """Why the teaching policy keeps the registered tool `name` from runs; None when it does not."""
        if not self.registry.has_tool(name):
            return None
        return None if self.offers(self.registry.get(name)) else self.teaching.refusal(name)

    def _teaching_refusal(self, call: CallState) -> str | None:
        """Step 3's teaching rules: a tool the policy leaves out, or a write under a policy without writes (a
        command writes unless the classifier judged it a reading one)."""
        teaching, tool = self.teaching, call.tool
        if not teaching.allows_tool(tool.name):
            return teaching.refusal(tool.name)
        if teaching.writes or tool.reads_only:
            return None
        if call.command is not None:
            if call.command.sensitivity == "safe" and not call.command.blocked:
                return None
            return teaching.refusal(tool.name, f"`{call.command.command[:80]}` may change things")
        return teaching.refusal(tool.name)

    def _pre_hooks(self, call: CallState, record: AuditRecord) -> ToolResult | None:
        hooks = self.hook_executor
        if hooks is None or not hooks.has_hooks(HookEvent.PRE_TOOL_USE):
            record.step("pre_hooks", "none")
            return None
        context = hook_context(call, self.hook_executor, self.run_id)
        results = hooks.run_event(
            HookEvent.PRE_TOOL_USE, context, tool=call.tool, transcript=self._transcript
        )
        updates: dict[str, Any] = {}
        for r in results:
            if r.decision is HookDecision.BLOCK:
                record.step("pre_hooks", "block", f"{r.name}: {r.reason}")
                return ToolResult.refused(
                    CallOutcome.BLOCKED,
                    f"Blocked by hook {show(r.name)}: {show(r.reason).rstrip('.')}. "
                    "Change the call to meet that condition, or try another approach.",
                    hook=r.name,
                )
            if r.updated_input is not None:
                updates.update(r.updated_input)
                call.notes.append(
                    f"[Hook {r.name} changed the arguments: {', '.join(sorted(r.updated_input))}]"
                )
            if r.ask:
                call.ask.append(
                    f"hook {r.name} asked for confirmation" + (f": {r.reason}" if r.reason else "")
                )
            report = r.report()
            if report:
                call.notes.append(report)
        if not updates:
            record.step("pre_hooks", "allow")
            return None
        record.step("pre_hooks", "modify", ", ".join(sorted(updates)))
        call.args = {**call.kwargs, **updates}
        return self._check(call, record, rewritten=True)

    def _confirm_reasons(self, call: CallState) -> list[str]:
        reasons = list(call.ask)
        if self.claude_rules is not None and (asked := self.claude_rules.ask_reason(call.tool, call.kwargs)):
            reasons.append(asked)
        if self.policy.should_confirm(call.tool, call.command):
            kind = f"command classified '{call.command.sensitivity}'" if call.command else call.tool.name
            reasons.insert(0, f"mode {self.policy.mode} asks before {kind}")
        if (why := self._snapshots.cannot_cover(call)) is not None and self.policy.mode != "yolo":
            reasons.append(f"undo cannot cover this call ({why})")
        return reasons

    def _confirm(self, call: CallState, record: AuditRecord, reasons: list[str]) -> ToolResult | None:
        tool = call.tool
        request = ConfirmationRequest(
            tool_name=tool.name,
            args=call.kwargs,
            sensitivity=sensitivity_of(tool.sensitive, call.command),
            preview=call.preview,
            code=call.code,
            command=call.command,
            reasons=tuple(reasons),
            warnings=tuple(call.rule_notes + call.notes),
            undo=self._snapshots.undo_limits(call),
            run_id=self.run_id,
            call_id=call.tool_call_id or call.audit_id,
        )
        confirmer = self._run.confirmer or self.confirmer or TerminalConfirmer()
        try:
            answer = ConfirmationAnswer.parse(confirmer.confirm(request))
        except NoTTYError as exc:
            record.step("confirm", "no_tty")
            return ToolResult.refused(CallOutcome.NEEDS_PERSON, f"{tool.name} was not run: {exc}")
        except Exception as exc:
            record.step("confirm", "error", f"{type(exc).__name__}: {exc}")
            return ToolResult.refused(
                CallOutcome.NEEDS_PERSON,
                f"Asking for confirmation failed ({type(exc).__name__}: {exc}), so {tool.name} was not run. "
                "Try again later or ask the user.",
            )
        if answer.decision is Approval.APPROVE:
            record.step("confirm", "approve")
            return None
        if answer.decision is Approval.DENY:
            record.step("confirm", "deny", answer.reason)
            if answer.by_default:  # nobody answered: a default, never told as the person's word
                why = show(answer.reason).rstrip(". ") or "nobody answered"
                return ToolResult.refused(
                    CallOutcome.DENIED,
                    f"{tool.name} was not run, since nobody approved it: {why}. Do not repeat the same call; "
                    "do without it, or finish and say what you would have done.",
                )
            why = f" They said: {show(answer.reason)}." if answer.reason else ""
            return ToolResult.refused(
                CallOutcome.DENIED,
                f"The user declined to run {tool.name}.{why} Do not repeat the same call; adjust your "
                "approach or ask the user what they want.",
            )
        record.step("confirm", "abort", answer.reason)
        self.abort(answer.reason)
        return self._aborted_result()

    def _aborted_result(self) -> ToolResult:
        why = f" ({show(self.abort_reason)})" if self.abort_reason else ""
        return ToolResult.refused(
            CallOutcome.ABORTED,
            f"The user aborted the run{why}. Stop now: call no more tools and give a short summary of what "
            "was done.",
        )

    def _execute(self, call: CallState, record: AuditRecord) -> ToolResult:
        tool = call.tool
        result = self._snapshots.around(call, self.run_id, lambda: tool.execute(**call.kwargs))
        record.step("execute", "ok" if result.success else "failed")
        rails = self.guardrails
        if call.command is not None and rails is not None:
            rails.record_command()
        if rails is None:
            return result
        if tool.mutates_files:
            if result.success:
                diff = result.metadata.get("diff") or call.preview
                added, removed = count_changes(diff) if isinstance(diff, str) else (0, 0)
                for path in call.files[:1]:
                    rails.record_edit(path, added, removed)
        elif rails.sensitive and result.output and not (call.files and all(p.is_file() for p in call.files)):
            # Output that may come from many files (a search, a command) loses the lines of sensitive ones,
            # on failure too, since that output reaches the model as well. A call that named its files
            # already had them checked.
            result.output, withheld = rails.filter_output(result.output)
            if withheld:
                record.step("guardrails", "filtered", f"{withheld} line(s)")
        return result

    def _post_hooks(self, call: CallState, result: ToolResult, record: AuditRecord) -> None:
        hooks = self.hook_executor
        if hooks is None or not result.success or not hooks.has_hooks(HookEvent.POST_TOOL_USE):
            return
        context = hook_context(call, self.hook_executor, self.run_id)
        context["tool_output"] = result.output
        results = hooks.run_event(
            HookEvent.POST_TOOL_USE, context, tool=call.tool, transcript=self._transcript
        )
        result.hook_results = [r.to_dict(HookEvent.POST_TOOL_USE.value) for r in results]
        for r in results:
            report = r.report()
            if report:
                call.notes.append(report)
        failed = [r.name for r in results if r.warning]
        record.step("post_hooks", "warnings" if failed else "ok", ", ".join(failed))

    def __repr__(self) -> str:
        return (
            f"<ExecutionEngine tools={self.registry.count()} mode={self.policy.mode!r} "
            f"dry_run={self.dry_run} run={self.run_id}>"
        )
