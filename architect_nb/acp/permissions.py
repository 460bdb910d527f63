"""`AcpConfirmer`: the engine's approvals as ACP permission requests (`session/request_permission`).

The question shows what the cell's approval shows: the call's arguments, a command's classification and why
it was asked, hook and guardrail warnings, the code that would run, and the diff an edit would make (as ACP
diff content, which editors render as a diff). The options are Approve (allow once), Approve all like this
(allow always: the same tool, and for commands the same program and class, for the rest of the session;
never offered for code that runs in a kernel) and Deny (reject once).

ACP's answer carries no words, so a denial's reason, when a client has one, goes in the answer's `_meta` as
`{"reason": "..."}` (on the outcome or on the response); the model is told it, as in the notebook. A
cancelled question (the editor cancelled the prompt) is a denial, and `cancel()` ends a wait at once.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from acp import text_block, tool_content
from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from architect_nb.acp.outbox import Outbox
from architect_nb.acp.updates import diff_contents, shown_input, tool_kind, tool_title
from architect_nb.execution.confirmation.confirmers import (
    ConfirmationAnswer,
    ConfirmationRequest,
    like_key,
    show,
)
from architect_nb.redaction import default_redactor

__all__ = ["APPROVE", "APPROVE_ALL", "DENY", "AcpConfirmer", "answer_of", "permission_options"]

APPROVE, APPROVE_ALL, DENY = "approve", "approve_all", "deny"
_TICK = 0.05
RequestPermission = Callable[[ToolCallUpdate, list[PermissionOption]], Any]


def permission_options(request: ConfirmationRequest) -> list[PermissionOption]:
    options = [PermissionOption(option_id=APPROVE, name="Approve", kind="allow_once")]
    if request.code is None:  # code for the kernel is asked about every time, as in the cell
        options.append(
            PermissionOption(option_id=APPROVE_ALL, name="Approve all like this", kind="allow_always")
        )
    options.append(PermissionOption(option_id=DENY, name="Deny", kind="reject_once"))
    return options


def question_text(request: ConfirmationRequest) -> str:
    """The question as text, without the diff (sent as diff content): redacted, hidden characters shown."""
    redact = default_redactor().redact
    parts = [f"Run {show(request.tool_name)}? ({request.sensitivity})", redact(request.shown_args())]
    if request.command is not None:
        why = f": {show(redact(request.command.reason))}" if request.command.reason else ""
        sandbox = ", in the OS sandbox" if request.command.sandboxed else ""
        parts.append(f"Command classified {request.command.sensitivity}{sandbox}{why}")
    parts += [f"Why asked: {show(redact(r))}" for r in request.reasons]
    parts += [f"Warning: {show(redact(w))}" for w in request.warnings]
    if request.undo:
        parts.append(f"Undo: {show(redact(request.undo))}")
    if request.code:
        parts.append("The code that would run in your kernel:\n```python\n" + redact(request.code) + "\n```")
    return "\n".join(p for p in parts if p)


def permission_tool_call(request: ConfirmationRequest, workspace: str) -> ToolCallUpdate:
    content: list[Any] = [tool_content(text_block(question_text(request)))]
    if request.preview:
        content += diff_contents(default_redactor().redact(request.preview), workspace)
    return ToolCallUpdate(
        tool_call_id=request.call_id,
        title=tool_title(request.tool_name, dict(request.args)),
        kind=tool_kind(request.tool_name),
        status="pending",
        content=content,
        raw_input=shown_input(request.tool_name, dict(request.args)),
    )


def answer_of(response: RequestPermissionResponse) -> tuple[ConfirmationAnswer, bool]:
    """The engine's answer to the editor's response, and whether it approves all like this."""
    outcome = response.outcome
    if outcome.outcome == "cancelled":
        return ConfirmationAnswer.unanswered("the prompt was cancelled"), False
    meta = {**(response.field_meta or {}), **(getattr(outcome, "field_meta", None) or {})}
    reason = meta.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    option = getattr(outcome, "option_id", "")
    if option == APPROVE:
        return ConfirmationAnswer.approve(), False
    if option == APPROVE_ALL:
        return ConfirmationAnswer.approve(), True
    if option == DENY:
        return ConfirmationAnswer.deny(reason), False
    return ConfirmationAnswer.unanswered(
        f"the editor answered with an unknown option {show(str(option))!r}"
    ), False


class AcpConfirmer:
    """Asks the editor through `outbox`; runs on the agent's worker thread and blocks until an answer."""

    def __init__(self, outbox: Outbox, request_permission: RequestPermission, workspace: str) -> None:
        self._outbox = outbox
        self._request_permission = request_permission
        self._workspace = workspace
        self._approved_like: set[str] = set()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()  # one question at a time, as on one screen

    def cancel(self) -> None:
        """End any wait now: the pending question, and every later one this run, is denied."""
        self._cancelled.set()

    def reset(self) -> None:
        """A new prompt: questions are asked again (approvals of all like this stay for the session)."""
        self._cancelled.clear()

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        key = like_key(request)
        with self._lock:
            if self._cancelled.is_set():
                return ConfirmationAnswer.unanswered("the prompt was cancelled")
            if key in self._approved_like and request.code is None:
                return ConfirmationAnswer.approve()  # the run's log shows it, as every decision
            tool_call = permission_tool_call(request, self._workspace)
            options = permission_options(request)
            future = self._outbox.ask(lambda: self._request_permission(tool_call, options))
            while True:
                if self._cancelled.is_set():
                    future.cancel()
                    return ConfirmationAnswer.unanswered("the prompt was cancelled")
                try:
                    response = future.result(timeout=_TICK)
                    break
                except concurrent.futures.TimeoutError:
                    continue
                except Exception as exc:  # the editor failed to answer: never an approval
                    return ConfirmationAnswer.unanswered(
                        f"the editor could not be asked ({type(exc).__name__})"
                    )
            answer, approve_all = answer_of(response)
            if approve_all and request.code is None:
                self._approved_like.add(key)
            return answer
