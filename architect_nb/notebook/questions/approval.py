"""The widget confirmer: Approve / Deny / Abort run / Approve all like this, answered while the cell is busy.

`WidgetConfirmer.confirm` runs on the agent's worker thread. It asks each approval (a kernel-code ask too)
through the run's `Asking`, the one way a run asks a person (`asking.py`): the `ApprovalPrompt` is shown in
the cell's live view, and the wait ends at a click, an interrupt, the headless grace or the timeout. Button
callbacks run on the kernel's main thread (the cell's pump lets them in) and only record the answer. An
approval nobody can answer (nbclient, papermill, a front end without widgets) or nobody does is denied,
never approved, and the denial says which call and why.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from architect_nb.execution.confirmation.confirmers import (
    ConfirmationAnswer,
    ConfirmationRequest,
    like_key,
    show,
    show_block,
)
from architect_nb.notebook.output.render import code_html, diff_html, status_badge
from architect_nb.notebook.questions.asking import OneAnswer, Question
from architect_nb.redaction import default_redactor

if TYPE_CHECKING:
    from architect_nb.notebook.questions.asking import Asking

__all__ = [
    "BUTTON_LABELS",
    "UNATTENDED",
    "ApprovalPrompt",
    "WidgetConfirmer",
    "approval_question",
    "like_key",
]

BUTTON_LABELS = ("Approve", "Deny", "Abort run", "Approve all like this")
#: How to run without anyone to approve: said whenever an approval got its default.
UNATTENDED = (
    "To run unattended, use --mode yolo, --dry-run, or allow rules in .architect.yaml "
    "(commands.safe_commands lists commands that never ask)."
)
_SUBJECT_CHARS = 80


def approval_question(request: ConfirmationRequest) -> Question[ConfirmationAnswer]:
    """An approval as a question: its title names the call; nobody answering denies it, never approves."""
    if request.code is not None:
        subject = " (code in your kernel)"
    elif isinstance(path := request.args.get("path"), str) and path:
        subject = f" on {path}"
    elif isinstance(command := request.args.get("command"), str) and command:
        subject = f": {command}"
    else:
        subject = ""
    if len(subject) > _SUBJECT_CHARS:
        subject = subject[: _SUBJECT_CHARS - 1] + "…"
    return Question(
        title=f"Approve {request.tool_name}{subject}?",
        outcome="denied (an unanswered approval is never approved)",
        advice=UNATTENDED,
        default=ConfirmationAnswer.unanswered,
        interrupted=ConfirmationAnswer.unanswered("the run was interrupted"),
    )


def _question_html(request: ConfirmationRequest) -> str:
    redact = default_redactor().redact
    e = html.escape
    parts = [
        f"<div><b>Run {e(show(redact(request.tool_name)))}?</b> {status_badge(request.sensitivity)}</div>"
    ]
    args = redact(request.shown_args())
    if args:
        parts.append(f'<pre style="margin:2px 0;white-space:pre-wrap;font-size:12px">{e(args)}</pre>')
    if request.command is not None:
        verdict = f"classified {request.command.sensitivity}"
        why = f": {show(request.command.reason)}" if request.command.reason else ""
        parts.append(f"<div>Command {e(verdict + why)}</div>")
    parts += [f'<div style="color:#57606a">why asked: {e(show(redact(r)))}</div>' for r in request.reasons]
    parts += [f'<div style="color:#9a6700">⚠ {e(show(redact(w)))}</div>' for w in request.warnings]
    if request.undo:
        parts.append(f'<div style="color:#57606a">undo: {e(show(redact(request.undo)))}</div>')
    if request.code is not None:
        parts.append(
            "<div>The code that would run in your kernel (hidden characters shown as escapes):</div>"
            + code_html(show_block(redact(request.code)))
        )
    if request.preview:
        parts.append(
            "<div>The diff that would be applied:</div>" + diff_html(redact(request.preview), scroll=True)
        )
    return "".join(parts)


class ApprovalPrompt(OneAnswer[ConfirmationAnswer]):
    """One question: the request shown safely, four buttons and a reason box.

    `click(decision, reason)` is the Python twin of the buttons (tests and keyboard-free use).
    """

    def __init__(self, request: ConfirmationRequest) -> None:
        super().__init__()
        self.request = request
        self.approve_all = False
        self.clicked_at: float | None = None
        # Layout and style models are shared where the look allows: fewer comm models to open, close and (in
        # a client that records widget state, like nbclient) save. `button_style` is the Button's own trait.
        # No shrinking and a wrapping row: a narrow cell wraps the buttons instead of cutting their labels.
        layout = widgets.Layout(width="auto", flex="0 0 auto", flex_flow="row wrap")
        style = widgets.ButtonStyle()
        self.question = widgets.HTML(_question_html(request), layout=layout)
        self.reason = widgets.Text(
            placeholder="Reason (optional; sent to the model with Deny)", layout=widgets.Layout(width="320px")
        )
        self.buttons = [
            widgets.Button(description=label, button_style=kind, tooltip=label, style=style, layout=layout)
            for label, kind in zip(BUTTON_LABELS, ("success", "danger", "warning", ""), strict=True)
        ]
        self.buttons[3].tooltip = "Approve this call and every call like it for the rest of this run"
        if request.code is not None:  # code in the person's kernel is approved one call at a time
            self.buttons[3].layout = widgets.Layout(display="none")
        for button, decision in zip(self.buttons, ("approve", "deny", "abort", "approve_all"), strict=True):
            button.on_click(self._callback(decision))
        self.controls = widgets.HBox([*self.buttons, self.reason], layout=layout)
        self.box = widgets.VBox(
            [self.question, self.controls],
            layout=widgets.Layout(border="1px solid #d4a72c", padding="4px 8px", margin="4px 0"),
        )

    def _callback(self, decision: str) -> Callable[[Any], None]:
        def on_click(_button: Any) -> None:
            self.click(decision)

        return on_click

    def click(self, decision: str, reason: str | None = None) -> None:
        """Answer: 'approve', 'deny', 'abort' or 'approve_all'. Deny sends the reason box's text, if any."""
        with self._lock:
            if self.event.is_set():
                return
            text = (self.reason.value if reason is None else reason).strip()
            if decision == "approve":
                self.answer = ConfirmationAnswer.approve()
            elif decision == "approve_all":
                self.answer, self.approve_all = ConfirmationAnswer.approve(), True
            elif decision == "deny":
                self.answer = ConfirmationAnswer.deny(text)
            elif decision == "abort":
                self.answer = ConfirmationAnswer.abort(text or "the user pressed Abort run")
            else:
                raise ValueError(f"Unknown decision {decision!r}; use approve, deny, abort or approve_all.")
            self.clicked_at = time.perf_counter()
            self.event.set()


class WidgetConfirmer:
    """Asks each approval through the run's `Asking`; remembers "Approve all like this" for the run.

    Args:
        asking: The run's one way to ask the person (it shows the prompt, waits, and applies the headless
            policy and the timeout).
    """

    def __init__(self, asking: Asking) -> None:
        self.asking = asking
        self.prompts: list[ApprovalPrompt] = []
        self._approved_like: set[str] = set()

    @property
    def pending(self) -> ApprovalPrompt | None:
        """The approval waiting for an answer now, if any."""
        pending = self.asking.pending
        return pending if isinstance(pending, ApprovalPrompt) else None

    def cancel(self) -> None:
        """End any wait now (the cell was interrupted): the pending question is denied."""
        self.asking.cancel()

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        key = like_key(request)
        if key in self._approved_like and not self.asking.cancelled.is_set():
            return ConfirmationAnswer.approve()  # the log shows it, as every decision
        prompt = ApprovalPrompt(request)
        self.prompts.append(prompt)
        asked = self.asking.ask(prompt, approval_question(request))
        if asked.ending == "answered" and prompt.approve_all and request.code is None:
            self._approved_like.add(key)
        return asked.answer
