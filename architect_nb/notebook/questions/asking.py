"""One way to ask the person at the notebook, with one headless policy.

Every question a run asks a person is one call: `Asking.ask(prompt, question)` from the agent's worker
thread (an approval, a kernel-code ask, a `--step` pause), or `await Asking.ask_async(...)` from the cell's
coroutine (the plan's Build offer). The prompt is the question's widgets and the answer a click gives; the
`Question` says what it is and what its safe default is. A question ends in one of four ways (`Ending`):

- **answered**: a click;
- **headless**: `notebook.headless_grace` seconds after it was shown, no front end that can show buttons has
  shown itself (`front_ends`: any comm message since the extension loaded; or this question's own view
  count, which every ipywidgets front end sends as it shows the question; only that count where the pages
  talk to the kernel but render no widgets, `views_only`): it gets its default at once;
- **unanswered**: a front end is there, but nobody answered within `notebook.approval_timeout` (a person who
  walked away): the same default;
- **interrupted**: the cell was interrupted (`cancel`).

A default is never the risky answer: an approval is denied, a step-through pause stops the run, a plan is
not built. It carries a note that names the question and says why, for the cell and the model to read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from architect_nb.execution.confirmation.confirmers import show
from architect_nb.redaction import default_redactor

if TYPE_CHECKING:
    from architect_nb.notebook.questions.front_ends import FrontEndWatch

__all__ = ["Asked", "Asking", "Ending", "OneAnswer", "Prompt", "Question", "ending_now", "views"]

A = TypeVar("A")
Ending = Literal["answered", "headless", "unanswered", "interrupted"]
_TICK = 0.1
_TITLE_CHARS = 120
_UNSET: Any = object()


class Prompt(Protocol[A]):
    """A question's widgets: `box` is shown; a click sets `event` (the buttons' callbacks run on the kernel's
    main thread); `resolve(default)` closes the question unless a click got there first, and returns the
    answer that holds. Each answer is a new object (never None): `ask` tells them apart by identity."""

    box: Any
    event: threading.Event

    def resolve(self, default: A) -> A: ...


class OneAnswer(Generic[A]):
    """The part of a `Prompt` every question shares: the first answer wins, from a click or from `resolve`.
    A prompt's buttons take `_lock`, check `event` and set `answer` then `event`."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.answer: A | None = None
        self._lock = threading.Lock()

    def resolve(self, default: A) -> A:
        """Close the question with `default` unless a click got there first; returns the answer that holds."""
        with self._lock:
            if not self.event.is_set():
                self.answer = default
                self.event.set()
            assert self.answer is not None
            return self.answer


@dataclass(frozen=True, kw_only=True)
class Question(Generic[A]):
    """What is asked, and what happens when nobody can answer.

    Attributes:
        title: The question in a few words, named in the note: "Approve edit_file on shop/cart.py?".
        outcome: What the default did, after "so '<title>' was": "denied", "not built".
        advice: How to do without a person, or what to do next.
        default: The safe answer, given the note that says why it was given.
        interrupted: The answer when the cell is interrupted.
        tick: Called on the asking thread while it waits (every 0.1 s).
        held: While it returns True, the timeout does not run (someone is editing the answer).
    """

    title: str
    outcome: str
    advice: str
    default: Callable[[str], A]
    interrupted: A
    tick: Callable[[], None] | None = None
    held: Callable[[], bool] | None = None


@dataclass(frozen=True, slots=True)
class Asked(Generic[A]):
    """How a question ended: the answer that holds, and the note said when it was a default."""

    answer: A
    ending: Ending
    note: str = ""


def ending_now(
    *, waited: float, present: bool, grace: float, timeout: float, held: bool = False
) -> Ending | None:
    """The policy: how a question unanswered after `waited` seconds ends now, or None to wait on. The timeout
    ends any wait (a timeout shorter than the grace, too); the grace ends a wait no front end can answer."""
    if held:
        return None
    if waited >= timeout:
        return "unanswered"
    if not present and waited >= grace:
        return "headless"
    return None


def views(box: Any) -> int:
    """How many front ends show `box`, as they report it (0 when it does not count its views)."""
    count = getattr(box, "_view_count", None)
    return count if isinstance(count, int) else 0


class Asking:
    """Shows each question of a run; waits for a click, the headless grace, the timeout or an interrupt.

    Args:
        show: Puts a prompt's box where the person sees it (called on the asking thread).
        hide: Takes it away once answered (the answer shows in the run's log), if given.
        timeout: `notebook.approval_timeout`: seconds a question waits while a front end is there.
        grace: `notebook.headless_grace`: seconds a question waits for a front end to show itself.
        front_ends: The kernel's watch on front ends (`front_ends.current_watch()`); None without a kernel.
        views_only: True while a front end's comms prove nothing, so only the question's own view count
            does: under jupyter-server-documents, whose pages talk to the kernel but do not render widgets.
    """

    def __init__(
        self,
        show: Callable[[Any], None],
        hide: Callable[[Any], None] | None = None,
        *,
        timeout: float,
        grace: float,
        front_ends: FrontEndWatch | None,
        views_only: Callable[[], bool] = lambda: False,
    ) -> None:
        self._show = show
        self._hide = hide
        self.timeout = timeout
        self.grace = grace
        self.front_ends = front_ends
        self.views_only = views_only
        self.cancelled = threading.Event()
        self.pending: Any = None  # the prompt waiting now
        self._interrupted: Any = None  # and its answer on interrupt

    def cancel(self) -> None:
        """End any wait now (the cell was interrupted): the pending question gets its interrupted answer, and
        later ones are not asked."""
        self.cancelled.set()
        pending, interrupted = self.pending, self._interrupted
        if pending is not None:
            pending.resolve(interrupted)

    def present(self, box: Any) -> bool:
        """Whether a front end that shows buttons has shown itself: by a comm message, or by showing `box`."""
        seen = self.front_ends is not None and self.front_ends.seen and not self.views_only()
        return seen or views(box) > 0

    def ask(self, prompt: Prompt[A], question: Question[A]) -> Asked[A]:
        """Show the prompt and wait (blocking: the agent's worker thread, while the cell's pump runs)."""
        if self.cancelled.is_set():
            return Asked(question.interrupted, "interrupted")
        if getattr(prompt.box, "_view_count", 0) is None:
            prompt.box._view_count = 0  # a front end that shows it says so: the count comes back as a comm
        self.pending, self._interrupted = prompt, question.interrupted
        default: A = _UNSET
        ending: Ending | None = None
        note = ""
        try:
            self._show(prompt.box)
            started = time.monotonic()
            while not prompt.event.wait(_TICK):
                if question.tick is not None:
                    question.tick()
                if self.cancelled.is_set():
                    prompt.resolve(question.interrupted)
                    break
                ending = ending_now(
                    waited=time.monotonic() - started,
                    present=self.present(prompt.box),
                    grace=self.grace,
                    timeout=self.timeout,
                    held=question.held is not None and question.held(),
                )
                if ending is not None:
                    note = self.note(question, ending)
                    default = question.default(note)
                    prompt.resolve(default)
            answer = prompt.resolve(question.interrupted)  # set by now: the answer that holds
        finally:
            self.pending = self._interrupted = None
        if self._hide is not None:
            self._hide(prompt.box)
        if answer is default and ending is not None:
            return Asked(answer, ending, note)
        if answer is question.interrupted:
            return Asked(answer, "interrupted")
        return Asked(answer, "answered")

    async def ask_async(self, prompt: Prompt[A], question: Question[A]) -> Asked[A]:
        """Ask from the cell's coroutine: `ask` runs on a helper thread while the cell's pump lets the clicks
        in. An interrupt cancels the question and is raised here."""
        from IPython import get_ipython

        from architect_nb.notebook.pump import pump_until

        future: concurrent.futures.Future[Asked[A]] = concurrent.futures.Future()

        def work() -> None:
            try:
                future.set_result(self.ask(prompt, question))
            except BaseException as exc:  # raised in the cell, never lost in a thread
                future.set_exception(exc)

        # Under the cell's context: what the thread shows goes to this cell (ipykernel 7.0 needs it).
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(work,), name="architect-ask", daemon=True).start()
        try:
            await pump_until(asyncio.wrap_future(future), get_ipython())
        except BaseException:
            self.cancel()
            raise
        return future.result()

    def note(self, question: Question[Any], ending: Ending) -> str:
        """What the cell (and the model) is told when a question gets its default."""
        title = show(default_redactor().redact(question.title))
        if len(title) > _TITLE_CHARS:
            title = title[: _TITLE_CHARS - 1] + "…"
        if ending == "headless" and self.views_only():
            why = (
                f"The front end did not show the buttons within {self.grace:g} s (notebook.headless_grace): "
                "under jupyter-server-documents its pages do not render widgets "
                "(jupyter-server-documents#297); there use --mode yolo, or jupyter-collaboration"
            )
            return f"{why}. So '{title}' was {question.outcome}. {question.advice}"
        if ending == "headless":
            why = (
                "No front end that can show buttons is connected (a headless run: nbclient, papermill, "
                f"nbconvert; none showed itself within {self.grace:g} s, notebook.headless_grace)"
            )
            return f"{why}, so '{title}' was {question.outcome}. {question.advice}"
        return (
            f"Nobody answered '{title}' within {self.timeout:g} s (notebook.approval_timeout), so it was "
            f"{question.outcome}. {question.advice}"
        )
