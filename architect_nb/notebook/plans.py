"""Plan, approve, build: a plan run ends with **Build this plan** and **Edit plan**: approve, then build.

When a `--agent plan` run finishes with a plan, the cell stays busy showing it with the two buttons (the same
widgets and the same wait as an approval: the cell's pump lets the clicks in, `notebook.approval_timeout`
ends an unanswered offer, never by building). **Edit plan** opens the plan in a text box; **Build this plan**
starts a build run in the same cell and the same thread. `%architect build [RUN]` does the same for the last
plan run (or RUN). The build run's task is the approved plan, so it is pinned in the context (the task of a
run is never compressed away), and the plan's steps are its todo list from the start (`TODO_MARK`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import re
import threading
from collections.abc import Mapping
from typing import Any

from architect_nb.notebook.magics import UsageError
from architect_nb.tools.todo import MAX_ITEM_CHARS, MAX_ITEMS, PLAN_MARK, TODO_MARK

__all__ = ["BUILD_LABELS", "PlanOffer", "build_line", "build_task", "plan_items", "plan_of"]

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


class PlanOffer:
    """The plan with **Build this plan** and **Edit plan**. `future` resolves with ("build", plan) on a
    click, or ("timeout", plan) when nobody answered within `timeout` seconds (an edit stops the clock)."""

    def __init__(self, plan: str, timeout: float) -> None:
        import ipywidgets as widgets

        self.plan = plan
        self.future: concurrent.futures.Future[tuple[str, str]] = concurrent.futures.Future()
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
        self._timer = threading.Timer(timeout, lambda: self._resolve("timeout"))
        self._timer.daemon = True

    def start(self) -> concurrent.futures.Future[tuple[str, str]]:
        self._timer.start()
        return self.future

    def click(self, what: str, text: str | None = None) -> None:
        """'edit' opens the text box; 'build' builds the plan as shown (or as edited). The buttons' twin."""
        if what == "edit":
            self._timer.cancel()  # someone is at the keyboard: no timeout while they edit
            self.editor.layout.display = None
            self.shown.layout.display = "none"
            self.edit.disabled = True
            return
        if text is not None:
            self.editor.value = text
        self._resolve("build")

    def _resolve(self, how: str) -> None:
        self._timer.cancel()
        plan = str(self.editor.value).strip() or self.plan
        if not self.future.done():
            self.future.set_result((how, plan))

    def close(self) -> None:
        """Close the widgets with their layout and style models (the live view's `_close`)."""
        from architect_nb.notebook.live import _close

        self._timer.cancel()
        _close(self.box)


def _display(widget: Any) -> Any:
    from IPython.display import display

    return display(widget, display_id=True)  # type: ignore[no-untyped-call]


def _plan_html(plan: str) -> str:
    from architect_nb.redaction import default_redactor

    text = html.escape(default_redactor().redact(plan))
    return (
        "<div><b>The plan</b> <span style='color:#57606a'>· build it in this thread, or edit it first"
        "</span></div>"
        f"<div style='white-space:pre-wrap;margin:4px 0'>{text}</div>"
    )


async def offer_build(plan: str, thread_name: str, timeout: float, options: str = "") -> None:
    """Show the plan with its buttons in the running cell and wait; on Build, run the build in this cell.
    `options`: the plan cell's own --model and --mode, which the build keeps."""
    from IPython import get_ipython

    from architect_nb.notebook.pump import pump_until
    from architect_nb.notebook.render import MessageOutput

    offer = PlanOffer(plan, timeout)
    handle = _display(offer.box)
    try:
        await pump_until(asyncio.wrap_future(offer.start()), get_ipython())
        how, approved = offer.future.result()
    finally:
        offer.close()
    if how != "build":
        note = (
            f"Not built: nobody answered within {timeout:g} s. `%architect build` builds this plan in thread "
            f"'{thread_name}'."
        )
        if handle is not None:
            handle.update(MessageOutput(note, level="info"))
        return
    if handle is not None:
        handle.update(MessageOutput(f"Plan approved: building it in thread '{thread_name}'.", level="info"))
    await _build(approved, thread_name, options)


async def _build(plan: str, thread_name: str, options: str = "") -> None:
    from architect_nb.notebook.runner import run_cell

    await run_cell(f"--agent build --thread {thread_name} {options}".strip(), build_task(plan))


async def build_line(line: str) -> Any:
    """`%architect build [RUN]`: build the last plan run's plan (or RUN's) in its thread, in this cell."""
    from architect_nb.notebook.render import MessageOutput
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
    await _build(plan, thread.name)
    return None
