"""One tool call's state as it moves through the engine, and the pipeline steps that need no engine state.

`guardrail_refusal` is step 3 (it runs again after a hook rewrites the arguments); `dry_run_result` is step 6;
`finish` is step 10, which appends the warnings and hook reports gathered on the way to the result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.execution.confirmation.confirmers import show
from architect_nb.execution.confirmation.policy import CommandCheck
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.execution.hooks.executor import HookExecutor
from architect_nb.redaction import default_redactor
from architect_nb.tools.base import BaseTool, CallOutcome, ToolResult
from architect_nb.tools.filesystem.diffs import count_changes
from architect_nb.tools.state_snapshot import StateSnapshot

__all__ = [
    "CallState",
    "dry_run_result",
    "finish",
    "guardrail_refusal",
    "hook_context",
    "parse_arguments",
    "written_text",
]

# Arguments that carry text a call writes, for code rules when no preview diff is available.
_TEXT_ARGS = ("content", "new_str", "patch", "new_source")


@dataclass(slots=True, kw_only=True)
class CallState:
    """What the pipeline knows about one call.

    Attributes:
        tool: The tool being called.
        step: The agent loop's step the call belongs to (0 outside a loop): undo rewinds to a step.
        audit_id: The call's id in the audit log, and in the change records.
        tool_call_id: The model's id for the call, when a model made it.
        args: The arguments as received (or as rewritten by a hook), before validation.
        kwargs: The validated arguments, as passed to `tool.execute`.
        files: The resolved files the call touches (when something needs to know).
        preview: For edits, the unified diff the call would make.
        code: For tools that run code in the kernel, the code it would run (`BaseTool.code_to_run`).
        command: For commands, how the command was classified.
        ask: Why hooks asked for a person's confirmation.
        rule_notes: Code-rule warnings from the latest guardrail check.
        notes: Hook reports and other warnings, appended to the result.
        state: What the call may change besides files, as it was before (`BaseTool.snapshot_state`).
    """

    tool: BaseTool
    args: dict[str, Any]
    step: int = 0
    audit_id: str = ""
    tool_call_id: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    preview: str | None = None
    code: str | None = None
    command: CommandCheck | None = None
    ask: list[str] = field(default_factory=list)
    rule_notes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    state: StateSnapshot | None = None


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """The call's arguments as a dict (JSON text is decoded, None is no arguments); None if unusable."""
    if raw is None:
        return {}
    if isinstance(raw, str):  # some models send the arguments as a JSON string
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return None
    if isinstance(raw, dict) and all(isinstance(k, str) for k in raw):
        return raw
    return None


def guardrail_refusal(call: CallState, rails: GuardrailsEngine | None, *, yolo: bool = False) -> str | None:
    """Step 3: why the call is refused, or None. Code-rule warnings go to `call.rule_notes`; what the
    guardrails cannot decide goes to `call.ask`, or (`yolo`, where nobody is asked) refuses the call."""
    if call.command is not None and call.command.blocked:
        why = (call.command.reason or "it matches the blocklist").rstrip(".")
        return f"the command is blocked in every mode ({why}). Do not retry it; find a safer way."
    if rails is None:
        return None
    tool = call.tool
    code = call.code
    if tool.runs_code and isinstance(code, str):
        allowed, reason = rails.check_code(code)
        if not allowed:
            return reason
        for hit in rails.check_code_rules(code):
            if hit.severity == "block":
                return f"the code breaks a rule: {hit.message} (pattern '{hit.pattern}'). Rewrite it."
            call.rule_notes.append(f"[Guardrail warning: {hit.message}]")
    for path in call.files:
        allowed, reason = rails.check_file_access(path, tool.name, write=tool.mutates_files)
        if not allowed:
            return reason
    if call.command is not None:
        cwd = call.kwargs.get("cwd")
        base = rails.workspace_root / cwd if isinstance(cwd, str) else None
        judged = rails.judge_command(call.command.command, base, sandboxed=call.command.sandboxed)
        if not judged.allowed:
            return judged.reason
        if judged.ask is not None:
            if yolo:
                return (
                    f"{judged.ask} In yolo mode nobody is asked, so it is not run. Name the files it "
                    "changes, or change them with the file tools."
                )
            call.ask.append(f"the guardrails cannot tell what it changes: {judged.ask}")
    if tool.mutates_files:
        added, removed = count_changes(call.preview) if call.preview else (0, 0)
        for path in call.files[:1]:
            allowed, reason = rails.check_edit_limits(path, added, removed)
            if not allowed:
                return reason
        text = written_text(call)
        for hit in rails.check_code_rules(text) if text else ():
            if hit.severity == "block":
                return f"the new code breaks a rule: {hit.message} (pattern '{hit.pattern}'). Rewrite it."
            call.rule_notes.append(f"[Guardrail warning: {hit.message}]")
    return None


def written_text(call: CallState) -> str:
    """The text a call adds: the '+' lines of its preview, or else its text arguments."""
    if call.preview:
        return "\n".join(
            line[1:]
            for line in call.preview.splitlines()
            if line.startswith("+") and not line.startswith("+++ ")
        )
    return "\n".join(v for k in _TEXT_ARGS if isinstance(v := call.kwargs.get(k), str))


def hook_context(call: CallState, hooks: HookExecutor | None, run_id: str) -> dict[str, Any]:
    """What PRE_TOOL_USE and POST_TOOL_USE hooks receive (files relative to the workspace)."""
    root = hooks.workspace_root if hooks is not None else None
    files = []
    for path in call.files:
        try:
            files.append(path.relative_to(root).as_posix() if root else str(path))
        except ValueError:
            files.append(str(path))
    return {"tool_name": call.tool.name, "tool_input": call.kwargs, "files": files, "run_id": run_id}


def dry_run_result(call: CallState, reasons: list[str]) -> ToolResult:
    """Step 6: `[DRY-RUN] would run tool(args)`, whether it would ask first, and the diff for edits."""
    shown = ", ".join(f"{show(str(k))}={show(_short_repr(v))}" for k, v in call.kwargs.items())
    text = f"[DRY-RUN] would run {call.tool.name}({shown})"
    if reasons:
        text += "\n(would ask for confirmation first: " + "; ".join(show(r) for r in reasons) + ")"
    if call.preview:
        text += "\n" + call.preview.rstrip("\n")
    if call.preview is None:
        return ToolResult(success=True, output=text, outcome=CallOutcome.DRY_RUN)
    return ToolResult(success=True, output=text, outcome=CallOutcome.DRY_RUN, metadata={"diff": call.preview})


def finish(call: CallState, result: ToolResult) -> ToolResult:
    """Step 10: append the warnings and hook reports to what the model sees (and to `result.notes`)."""
    notes = call.rule_notes + call.notes
    if notes:
        result.output = "\n\n".join([result.output, *notes]) if result.output else "\n\n".join(notes)
        result.notes = notes
    return result


def _short_repr(value: Any, limit: int = 200) -> str:
    text = default_redactor().redact(repr(value))  # before the cut, so no fragment of a secret is left
    return text if len(text) <= limit else text[:limit] + f"... [{len(text)} chars]"
