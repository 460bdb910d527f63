"""`%%architect --step`: the run pauses before each model call and each tool call, with buttons in the cell.

`WidgetStepper.decide` runs on the agent's worker thread and asks each pause through the run's `Asking`, as
approvals are asked (`asking.py`): a `StepPrompt` in the live view, waiting for a click, an interrupt, the
headless grace or the timeout. The buttons' callbacks run on the kernel's main thread (the cell's pump lets
them in) and only record the answer. "Show request" asks the worker to draw the inspector for this step: it
is made when opened, from the run's transcript, and redacted. A pause nobody can answer (a headless run) or
nobody does stops the run, never continues it: a step-through run never goes on unreviewed. The stop says
which pause and why.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from architect_nb.agent.conversation.inspector import rebuild
from architect_nb.agent.events import Transcript
from architect_nb.agent.stepping import ModelPause, Pause, StepAction, StepDecision, parse_arguments
from architect_nb.notebook.output.inspector_view import inspector_html
from architect_nb.notebook.questions.asking import OneAnswer, Question
from architect_nb.redaction import default_redactor

if TYPE_CHECKING:
    from architect_nb.notebook.questions.asking import Asking

__all__ = ["STEP_LABELS", "StepPrompt", "WidgetStepper", "pause_question"]

STEP_LABELS: dict[StepAction, str] = {
    "continue": "Continue",
    "edit_arguments": "Edit arguments",
    "edit_result": "Edit result",
    "skip": "Skip",
    "fork": "Fork here",
    "stop": "Stop",
}
_STYLES = {"continue": "success", "stop": "danger", "fork": "info"}


def pause_question(pause: Pause, tick: Callable[[], None] | None = None) -> Question[StepDecision]:
    """A pause as a question: nobody answering stops the run (it never goes on unreviewed)."""
    what = "call the model" if isinstance(pause, ModelPause) else f"run {pause.tool}"
    return Question(
        title=f"Step {pause.step}: {what}?",
        outcome="answered with Stop (a step-through run never goes on unreviewed)",
        advice="Run --step cells where a person can click (JupyterLab, Notebook 7), or run without --step.",
        default=StepDecision.stop,
        interrupted=StepDecision.stop(),
        tick=tick,
    )


def _question(pause: Pause) -> str:
    e = html.escape
    redact = default_redactor().redact
    if isinstance(pause, ModelPause):
        text = (
            f"<b>Step {pause.step}: the model is about to be called</b> with {len(pause.messages)} messages."
        )
        if pause.results:
            text += " It will read these tool results first; Edit result changes what it reads."
    else:
        args = redact(json.dumps(pause.arguments, indent=1, ensure_ascii=False))
        text = (
            f"<b>Step {pause.step}: about to run {e(redact(pause.tool))}</b> with these arguments:"
            f'<pre style="margin:2px 0;white-space:pre-wrap;font-size:12px">{e(args)}</pre>'
        )
    if pause.problem:
        text += f'<div style="color:#cf222e">{e(redact(pause.problem))}</div>'
    return f"<div>{text}</div>"


def _editable(pause: Pause) -> str:
    """What the edit box starts with: the arguments, the one result, or several results as JSON."""
    redact = default_redactor().redact
    if isinstance(pause, ModelPause):
        if len(pause.results) == 1:
            return redact(next(iter(pause.results.values())))
        return redact(json.dumps(pause.results, indent=1, ensure_ascii=False))
    return redact(json.dumps(pause.arguments, indent=1, ensure_ascii=False))


class StepPrompt(OneAnswer[StepDecision]):
    """One pause: what comes next, its buttons, a box to edit arguments or results, and the inspector.

    `click(action, text)` is the Python twin of the buttons (`text` is the edit box's content)."""

    def __init__(self, pause: Pause) -> None:
        super().__init__()
        self.pause = pause
        self.wants_inspector = threading.Event()
        layout = widgets.Layout(width="auto", flex="0 0 auto", flex_flow="row wrap")
        self.question = widgets.HTML(_question(pause), layout=layout)
        self.problem = widgets.HTML("")
        edits = [a for a in pause.actions if a in ("edit_arguments", "edit_result")]
        self.editor = widgets.Textarea(
            value=_editable(pause) if edits else "",
            layout=widgets.Layout(width="100%", height="120px", display="" if edits else "none"),
        )
        self.buttons = {
            action: widgets.Button(
                description=STEP_LABELS[action], button_style=_STYLES.get(action, ""), layout=layout
            )
            for action in pause.actions
        }
        for action, button in self.buttons.items():
            button.on_click(self._callback(action))
        self.show = widgets.ToggleButton(description="Show request", value=False, layout=layout)
        self.show.observe(self._toggled, names="value")
        self.inspector = widgets.HTML("")
        self.controls = widgets.HBox([*self.buttons.values(), self.show], layout=layout)
        self.box = widgets.VBox(
            [self.question, self.editor, self.problem, self.controls, self.inspector],
            layout=widgets.Layout(border="1px solid #0969da", padding="4px 8px", margin="4px 0"),
        )
        self.box.add_class("architect-nb-step")

    def _callback(self, action: StepAction) -> Callable[[Any], None]:
        def on_click(_button: Any) -> None:
            self.click(action)

        return on_click

    def _toggled(self, change: dict[str, Any]) -> None:
        if change.get("new"):
            self.wants_inspector.set()  # the worker draws it: it owns the run's transcript
        else:
            self.inspector.value = ""

    def click(self, action: StepAction, text: str | None = None) -> None:
        """Answer with `action`; an edit reads `text` (default: the edit box). A malformed edit is refused
        in the prompt, which stays open."""
        with self._lock:
            if self.event.is_set():
                return
            if action not in self.pause.actions:
                raise ValueError(
                    f"{action!r} is not offered here; choose one of {', '.join(self.pause.actions)}"
                )
            text = self.editor.value if text is None else text
            decision: StepDecision
            if action == "edit_arguments":
                arguments, problem = parse_arguments(text)
                if arguments is None:
                    self.problem.value = f'<div style="color:#cf222e">{html.escape(problem or "")}</div>'
                    return
                decision = StepDecision.edit_arguments(arguments)
            elif action == "edit_result":
                assert isinstance(self.pause, ModelPause)
                results = self._results(text)
                if results is None:
                    return
                decision = StepDecision.edit_result(results)
            else:
                decision = StepDecision(action)
            self.answer = decision
            self.event.set()

    def _results(self, text: str) -> dict[str, str] | None:
        assert isinstance(self.pause, ModelPause)
        ids = list(self.pause.results)
        if len(ids) == 1:
            return {ids[0]: text}
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            said = "With several results, edit the JSON object of call id → text."
            self.problem.value = f'<div style="color:#cf222e">{said}</div>'
            return None
        return {k: v for k, v in value.items() if k in ids}


class WidgetStepper:
    """Asks each pause through the run's `Asking`, and draws the inspector when a pause's is opened.

    Args:
        asking: The run's one way to ask the person.
        transcript: The run's transcript, for the inspector (set once the loop exists).
    """

    def __init__(self, asking: Asking, *, transcript: Transcript | None = None) -> None:
        self.asking = asking
        self.transcript = transcript
        self.prompts: list[StepPrompt] = []
        self._sent = 0  # messages in the previous model call, to mark the new ones

    @property
    def pending(self) -> StepPrompt | None:
        """The pause waiting for an answer now, if any."""
        pending = self.asking.pending
        return pending if isinstance(pending, StepPrompt) else None

    def cancel(self) -> None:
        self.asking.cancel()

    def decide(self, pause: Pause) -> StepDecision:
        prompt = StepPrompt(pause)
        self.prompts.append(prompt)

        def draw_inspector() -> None:
            if prompt.wants_inspector.is_set():
                prompt.wants_inspector.clear()
                prompt.inspector.value = self._inspector(pause)

        decision = self.asking.ask(prompt, pause_question(pause, draw_inspector)).answer
        if isinstance(pause, ModelPause) and decision.action in ("continue", "edit_result"):
            self._sent = len(pause.messages)
        return decision

    def _inspector(self, pause: Pause) -> str:
        """The request this pause is about, redacted: the one about to be sent, or the one whose reply asked
        for this call (with that reply)."""
        if isinstance(pause, ModelPause):
            data: dict[str, Any] | None = {
                "step": pause.step,
                "messages": list(pause.messages),
                "tools": list(pause.tools),
                "new": list(range(min(self._sent, len(pause.messages)), len(pause.messages))),
                "reply": None,
            }
        else:
            data = rebuild(self.transcript.to_list(), pause.step) if self.transcript is not None else None
        if data is None:
            return "<div><i>This step's request is not recorded.</i></div>"
        return inspector_html(default_redactor().redact_data(data))
