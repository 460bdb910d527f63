"""Plan, approve, build: a plan run ends with **Build this plan** and **Edit plan**: approve, then build.

When a `--agent plan` run finishes with a plan, the cell stays busy showing it with the two buttons. The offer
is a question like any other (`asking.py`): the cell's pump lets the clicks in, `notebook.approval_timeout`
ends an unanswered offer (an edit stops the clock), and with no front end that can show buttons (a headless
run) the offer ends after `notebook.headless_grace`; either way the plan is not built, and the cell says so.
**Edit plan** opens the plan in a text box; **Build this plan** starts a build run in the same cell and the
same thread. `%architect build [RUN]` does the same for the last plan run (or RUN). The build run's task is
the approved plan, so it is pinned in the context (the task of a run is never compressed away), and the
plan's steps are its todo list from the start (`TODO_MARK`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from architect_nb.notebook.magics import UsageError
from architect_nb.notebook.questions.asking import OneAnswer
from architect_nb.tools.todo import MAX_ITEM_CHARS, MAX_ITEMS, PLAN_MARK, TODO_MARK

if TYPE_CHECKING:
    from architect_nb.config.schema import NotebookConfig
    from architect_nb.notebook.questions.asking import Question

__all__ = [
    "BUILD_LABELS",
    "PlanChoice",
    "PlanOffer",
    "build_task",
    "offer_build",
    "plan_items",
    "plan_of",
    "plan_question",
    "plan_to_build",
]

BUILD_LABELS = ("Build this plan", "Edit plan")
_NUMBERED = re.compile(r"^\s{0,3}(?:\d{1,3}[.)]|#{2,4}\s*(?:Step\s*)?\d{1,3}[.:)]?)\s+(.+)$")
_BULLET = re.compile(r"^\s{0,1}[-*+]\s+(.+)$")


def plan_items(plan: str) -> list[str]:
    """The plan's steps as unchecked todo lines: its numbered items, else its top-level bullets."""
    lines = plan.splitlines()
    for pattern in (_NUMBERED, _BULLET):
        found = [m.group(1) for line in lines if (m := pattern.match(line))]
        if found:
            items = [" ".join(text.replace("**", "").split())[:MAX_ITEM_CHARS] for text in found]
            return [f"[ ] {text}" for text in items[:MAX_ITEMS] if text]
    return []


def build_task(plan: str) -> str:
    """The build run's task: the approved plan, and its steps as the todo list the run starts from."""
    items = plan_items(plan)
    task = (
        "The user approved the plan below. Build it now, step by step"
        + (", keeping the todo list up to date as you go." if items else ".")
        + f"{PLAN_MARK}{plan.strip()}"
    )
    return task + (f"{TODO_MARK}" + "\n".join(items) if items else "")


def plan_of(payload: Mapping[str, Any]) -> str | None:
    """The plan a run's transcript ends with: a plan agent's final answer, when it completed."""
    events = payload.get("events") or []
    started: Mapping[str, Any] = next((e for e in events if e.get("kind") == "run_started"), {})
    finished: Mapping[str, Any] = next((e for e in reversed(events) if e.get("kind") == "run_finished"), {})
    if started.get("agent") != "plan" or finished.get("stop_reason") != "completed":
        return None
    text = str(finished.get("final_text") or "").strip()
    return text or None


@dataclass(frozen=True, slots=True)
class PlanChoice:
    """The answer to the offer: the plan to build (as shown or as edited), or None: not built."""

    plan: str | None


class PlanOffer(OneAnswer[PlanChoice]):
    """The plan with **Build this plan** and **Edit plan**, asked through `asking` (a `Prompt` of
    `PlanChoice`). `click` is the buttons' Python twin."""

    def __init__(self, plan: str) -> None:
        import ipywidgets as widgets

        super().__init__()
        self.plan = plan
        self.editing = False  # someone opened the editor: the timeout no longer runs
        layout = widgets.Layout(width="auto", flex="0 0 auto")
        self.shown = widgets.HTML(_plan_html(plan))
        self.editor = widgets.Textarea(
            value=plan, layout=widgets.Layout(width="100%", height="14em", display="none")
        )
        self.build = widgets.Button(description=BUILD_LABELS[0], button_style="success", layout=layout)
        self.edit = widgets.Button(description=BUILD_LABELS[1], layout=layout)
        self.build.on_click(lambda _button: self.click("build"))
        self.edit.on_click(lambda _button: self.click("edit"))
        self.box = widgets.VBox(
            [self.shown, self.editor, widgets.HBox([self.build, self.edit])],
            layout=widgets.Layout(border="1px solid #2da44e", padding="4px 8px", margin="4px 0"),
        )

    def click(self, what: str, text: str | None = None) -> None:
        """'edit' opens the text box; 'build' builds the plan as shown (or as edited)."""
        if what == "edit":
            self.editing = True
            self.editor.layout.display = None
            self.shown.layout.display = "none"
            self.edit.disabled = True
            return
        if text is not None:
            self.editor.value = text
        self.resolve(PlanChoice(str(self.editor.value).strip() or self.plan))

    def close(self) -> None:
        """Close the widgets with their layout and style models (the live view's `_close`)."""
        from architect_nb.notebook.output.live import _close

        _close(self.box)


def plan_question(offer: PlanOffer, thread_name: str) -> Question[PlanChoice]:
    """The offer as a question: nobody answering builds nothing."""
    from architect_nb.notebook.questions.asking import Question

    return Question(
        title="Build this plan?",
        outcome="not built",
        advice=f"`%architect build` builds this plan in thread '{thread_name}'.",
        default=lambda _note: PlanChoice(None),
        interrupted=PlanChoice(None),
        held=lambda: offer.editing,
    )


def _display(bundle: dict[str, str]) -> Any:
    from IPython.display import display

    return display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]


def _plan_html(plan: str) -> str:
    from architect_nb.redaction import default_redactor

    text = html.escape(default_redactor().redact(plan))
    return (
        "<div><b>The plan</b> <span style='color:#57606a'>· build it in this thread, or edit it first"
        "</span></div>"
        f"<div style='white-space:pre-wrap;margin:4px 0'>{text}</div>"
    )


async def offer_build(plan: str, thread_name: str, notebook: NotebookConfig) -> str | None:
    """Show the plan with its buttons in the running cell and wait: the plan to build (as approved, maybe
    edited), or None. The runner builds it in this cell (so this module never imports the runner)."""
    from architect_nb.notebook.output.render import MessageOutput
    from architect_nb.notebook.questions.asking import Asking
    from architect_nb.notebook.questions.front_ends import current_watch

    offer = PlanOffer(plan)
    # The plan as text first; the question's buttons replace it when it is asked (counting their views).
    handle = _display({"text/html": _plan_html(plan), "text/plain": plan})
    asking = Asking(
        lambda box: handle.update(box) if handle is not None else None,
        timeout=notebook.approval_timeout,
        grace=notebook.headless_grace,
        front_ends=current_watch(),
    )
    try:
        asked = await asking.ask_async(offer, plan_question(offer, thread_name))
    finally:
        offer.close()
    if asked.answer.plan is None:
        if handle is not None:
            handle.update(MessageOutput(asked.note or "Not built.", level="info"))
        return None
    if handle is not None:
        handle.update(MessageOutput(f"Plan approved: building it in thread '{thread_name}'.", level="info"))
    return asked.answer.plan


def plan_to_build(line: str) -> tuple[str, str] | Any:
    """`%architect build [RUN]`'s plan and thread: the last plan run's (or RUN's), or the message saying why
    there is none."""
    from architect_nb.notebook.output.render import MessageOutput
    from architect_nb.notebook.state import get_session

    words = line.split()[1:]
    session = get_session()
    try:
        if len(words) > 1:
            raise UsageError("%architect build: give at most one run id (default: the last plan run).")
        records = [session.find(words[0])] if words else list(reversed(session.history))
        found = next(((r, p) for r in records if (p := plan_of(r.payload)) is not None), None)
        if found is None:
            what = (
                f"run {words[0]} is not a plan run that completed" if words else "no plan run in this kernel"
            )
            raise UsageError(f"%architect build: {what}; run a `%%architect --agent plan` cell first.")
    except UsageError as exc:
        return MessageOutput(str(exc))
    record, plan = found
    thread = next(
        (t for t in session.threads.threads.values() if any(r.run_id == record.run_id for r in t.runs)), None
    )
    if thread is None:
        return MessageOutput(f"%architect build: the thread of run {record.run_id} is not in this kernel.")
    return plan, thread.name
