"""The hook protocol: the events, what a hook decided, and how its exit code and output are read.

* Exit 0 allows. Stdout may hold a JSON object: `additionalContext`, `updatedInput`, or Claude Code's
  `hookSpecificOutput.{permissionDecision, permissionDecisionReason, updatedInput, additionalContext}` and a
  top-level `decision: "block"` with `reason`. `permissionDecision: "deny"` blocks; `"ask"` makes the engine
  ask a person even in yolo mode; `"allow"` does *not* skip the engine's confirmation (a script cannot
  approve on the user's behalf). Plain-text stdout is ignored; stdout that starts with `{` but is not valid
  JSON is a warning.
* Exit 2 blocks (pre-hooks only); the reason is on stderr. After the fact (post-hooks, notifications) exit 2
  is reported like any other failure.
* Any other exit code, a timeout or bad JSON is a *warning*: it is shown in the result and never blocks.

Running hooks (matching, the process, the environment, async hooks) is `execution.hooks.executor`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from architect_nb.redaction import default_redactor

__all__ = ["HookDecision", "HookEvent", "HookResult", "interpret_output"]


class HookEvent(enum.StrEnum):
    """The ten lifecycle events; the value is the configuration key."""

    PRE_TOOL_USE = "pre_tool_use"
    POST_TOOL_USE = "post_tool_use"
    PRE_LLM_CALL = "pre_llm_call"
    POST_LLM_CALL = "post_llm_call"
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    ON_ERROR = "on_error"
    BUDGET_WARNING = "budget_warning"
    CONTEXT_COMPRESS = "context_compress"
    AGENT_COMPLETE = "agent_complete"

    @property
    def can_block(self) -> bool:
        return self in (HookEvent.PRE_TOOL_USE, HookEvent.PRE_LLM_CALL)


class HookDecision(enum.StrEnum):
    ALLOW = "allow"
    BLOCK = "block"
    MODIFY = "modify"


@dataclass(slots=True, kw_only=True)
class HookResult:
    """What one hook run decided and said.

    Attributes:
        name: The hook's name (its command when unnamed).
        decision: ALLOW, BLOCK or MODIFY (MODIFY carries `updated_input`).
        reason: Why it blocked or asked (from stderr or the JSON).
        updated_input: Argument changes to apply, merged over the current arguments.
        additional_context: Text for the model.
        ask: The hook asked for a person's confirmation (Claude Code's `permissionDecision: "ask"`).
        warning: Set when the hook failed (exit code, timeout, bad JSON); shown in the result, never a block.
        exit_code: The exit status (None when it timed out or could not start).
        output: Its stdout and stderr, trimmed, for failure reports.
        duration: Seconds it took.
    """

    name: str
    decision: HookDecision = HookDecision.ALLOW
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: str = ""
    ask: bool = False
    warning: str = ""
    exit_code: int | None = 0
    output: str = ""
    duration: float = 0.0

    def to_dict(self, event: str = "") -> dict[str, Any]:
        """A JSON-ready summary for the notebook and the transcript (`passed` is false when it failed)."""
        return {
            "name": self.name,
            "event": event,
            "decision": str(self.decision),
            "passed": not self.warning,
            "exit_code": self.exit_code,
            "warning": self.warning,
            "output": self.output,
            "duration_s": round(self.duration, 4),
        }

    def report(self) -> str:
        """The block appended to the tool result the model sees, or '' when there is nothing to say."""
        if self.warning:
            body = f"\n{self.output}" if self.output else ""
            return f"[Hook {self.name}: {self.warning}]{body}"
        if self.additional_context:
            return f"[Hook {self.name}]\n{self.additional_context}"
        return ""


def _interpret(
    name: str,
    event: HookEvent,
    *,
    code: int | None,
    out: str,
    err: str,
    duration: float,
    background: bool,
    can_block: bool | None = None,
    stdout_is_context: bool = False,
) -> HookResult:
    """What a finished hook decided, from its exit code and output (`background`: it ran async).

    `can_block` overrides the event's own rule (Claude Code's Stop and UserPromptSubmit hooks can block
    events that ours cannot); `stdout_is_context` makes plain text on stdout context for the model.
    """
    result = HookResult(name=name, exit_code=code, duration=duration)
    can_block = (event.can_block if can_block is None else can_block) and not background
    if code == 2 and can_block:
        result.decision = HookDecision.BLOCK
        result.reason = err.strip() or out.strip() or f"hook {name} exited with code 2"
        return result
    if code != 0:
        result.warning = f"FAILED (exit {code})"
        result.output = trim((out + ("\n" if out and err else "") + err).strip())
        return result
    text = out.strip()
    if not text.startswith("{"):
        if stdout_is_context:
            result.additional_context = trim(text)
        return result  # otherwise plain text on success is not addressed to us
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError:
        result.warning = "printed invalid JSON on stdout; its output was ignored"
        result.output = trim(text)
        return result
    _apply_json(result, data, can_block)
    return result


def interpret_output(
    name: str,
    event: HookEvent,
    *,
    code: int | None,
    out: str,
    err: str,
    duration: float,
    background: bool,
    can_block: bool | None = None,
    stdout_is_context: bool = False,
) -> HookResult:
    """What a finished hook decided, from its exit code and output (`background`: it ran async). What it says
    (reason, context, output) is redacted: it goes to the model, the run's record and the logs. Only
    `updatedInput` is kept as it is, since it becomes the call's arguments."""
    result = _interpret(
        name,
        event,
        code=code,
        out=out,
        err=err,
        duration=duration,
        background=background,
        can_block=can_block,
        stdout_is_context=stdout_is_context,
    )
    redactor = default_redactor()
    result.reason = redactor.redact(result.reason)
    result.additional_context = redactor.redact(result.additional_context)
    result.output = redactor.redact(result.output)
    return result


def _apply_json(result: HookResult, data: Mapping[str, Any], can_block: bool) -> None:
    """Map the native and Claude Code JSON fields onto `result`."""
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    context = [c for c in (data.get("additionalContext"), specific.get("additionalContext")) if c]
    result.additional_context = "\n".join(str(c) for c in context)
    updated = specific.get("updatedInput", data.get("updatedInput"))
    permission = specific.get("permissionDecision")
    reason = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
    blocked = permission == "deny" or data.get("decision") == "block"
    if blocked and can_block:
        result.decision = HookDecision.BLOCK
        result.reason = reason or f"hook {result.name} refused the call"
        return
    if blocked and reason:  # after the fact, a "block" is feedback for the model (as in Claude Code)
        result.additional_context = "\n".join(filter(None, [result.additional_context, reason]))
    if permission == "ask" and can_block:
        result.ask = True
        result.reason = reason
    if updated is not None and can_block:
        if isinstance(updated, Mapping):
            result.decision = HookDecision.MODIFY
            result.updated_input = dict(updated)
        else:
            result.warning = "returned an updatedInput that is not a JSON object; it was ignored"


def trim(text: str, limit: int = 4000) -> str:
    """`text` with its middle cut when long; secrets are redacted first, so no cut leaves part of one."""
    text = default_redactor().redact(text)
    if len(text) <= limit:
        return text
    return text[: limit // 2] + f"\n[... {len(text) - limit} characters cut ...]\n" + text[-limit // 2 :]
