"""The one way a run asks a person (`asking`) and the watch on front ends it reads (`front_ends`), without a
kernel: the policy's table, then `Asking` with a prompt double and a watch fed by hand."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from architect_nb.notebook.questions.asking import Asked, Asking, OneAnswer, Question, ending_now, views
from architect_nb.notebook.questions.front_ends import FrontEndWatch, current_watch, install, uninstall


@pytest.mark.parametrize(
    ("waited", "present", "held", "expected"),
    [
        (0.0, False, False, None),  # just shown: a front end may still show itself
        (2.9, False, False, None),
        (3.0, False, False, "headless"),  # the grace is over and nobody is there
        (3.0, True, False, None),  # somebody is there: the timeout counts, not the grace
        (59.9, True, False, None),
        (60.0, True, False, "unanswered"),
        (60.0, False, False, "unanswered"),  # the timeout ends any wait
        (600.0, True, True, None),  # held (someone edits the answer): no timeout
    ],
)
def test_the_policy(waited: float, present: bool, held: bool, expected: str | None) -> None:
    assert ending_now(waited=waited, present=present, grace=3.0, timeout=60.0, held=held) == expected


def test_a_timeout_shorter_than_the_grace_ends_the_wait_first() -> None:
    assert ending_now(waited=1.0, present=False, grace=5.0, timeout=1.0) == "unanswered"


class _Prompt(OneAnswer[str]):
    """The shape of a question's widgets: a box that may count its views, and the first answer that wins."""

    def __init__(self) -> None:
        super().__init__()
        self.box = SimpleNamespace(_view_count=None)

    def click(self, answer: str) -> None:
        with self._lock:
            if not self.event.is_set():
                self.answer = answer
                self.event.set()


class _Interrupted(str):
    """A distinct object for the interrupted answer (answers are told apart by identity)."""


INTERRUPTED = _Interrupted("interrupted")


def _question(**kw: Any) -> Question[str]:
    base: dict[str, Any] = {
        "title": "Approve edit_file on x.py?",
        "outcome": "denied",
        "advice": "To run unattended use --mode yolo.",
        "default": lambda note: f"deny: {note}",
        "interrupted": INTERRUPTED,
    }
    return Question(**{**base, **kw})


def _asking(watch: FrontEndWatch | None = None, *, timeout: float = 60, grace: float = 0.3) -> Asking:
    shown: list[Any] = []
    return Asking(shown.append, None, timeout=timeout, grace=grace, front_ends=watch)


def _ask_in_thread(
    asking: Asking, prompt: _Prompt, question: Question[str]
) -> tuple[threading.Thread, list[Any]]:
    out: list[Asked[str]] = []
    thread = threading.Thread(target=lambda: out.append(asking.ask(prompt, question)))
    thread.start()
    deadline = time.monotonic() + 5
    while asking.pending is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread, out


def test_headless_a_question_gets_its_default_after_the_grace_naming_the_question_and_why() -> None:
    started = time.monotonic()
    asked = _asking(FrontEndWatch()).ask(_Prompt(), _question())
    assert 0.3 <= time.monotonic() - started < 1.5
    assert asked.ending == "headless"
    assert asked.answer == f"deny: {asked.note}"
    assert asked.note.startswith("No front end that can show buttons is connected (a headless run: nbclient")
    assert "so 'Approve edit_file on x.py?' was denied. To run unattended use --mode yolo." in asked.note
    assert "0.3 s, notebook.headless_grace" in asked.note


def test_a_front_end_seen_on_a_comm_keeps_the_question_waiting_until_the_timeout() -> None:
    watch = FrontEndWatch()
    watch.hear("comm_open jupyter.widget.control")
    started = time.monotonic()
    asked = _asking(watch, timeout=0.8, grace=0.1).ask(_Prompt(), _question())
    assert time.monotonic() - started >= 0.8
    assert asked.ending == "unanswered"
    assert asked.note.startswith("Nobody answered 'Approve edit_file on x.py?' within 0.8 s")
    assert "notebook.approval_timeout" in asked.note


def test_a_front_end_showing_the_question_counts_as_there() -> None:
    """The question's box counts its views; a front end that shows it sends the count (a comm message)."""
    asking, prompt = _asking(None, timeout=60, grace=0.2), _Prompt()
    thread, out = _ask_in_thread(asking, prompt, _question())
    assert prompt.box._view_count == 0, "the question does not count its views"
    prompt.box._view_count = 1  # as ipywidgets sets it when JupyterLab reports the view
    time.sleep(0.5)  # past the grace
    assert not out, "a question a front end shows was answered by the headless default"
    prompt.click("approve")
    thread.join(2)
    assert out == [Asked("approve", "answered")]
    assert views(prompt.box) == 1 and views(SimpleNamespace()) == 0


def test_a_click_answers_at_once_and_a_late_click_changes_nothing() -> None:
    asking, prompt = _asking(FrontEndWatch(), grace=5), _Prompt()
    thread, out = _ask_in_thread(asking, prompt, _question())
    clicked = time.perf_counter()
    prompt.click("approve")
    thread.join(2)
    assert out == [Asked("approve", "answered")] and time.perf_counter() - clicked < 0.2
    late = _Prompt()
    asked = _asking(None, grace=0.1).ask(late, _question())
    late.click("approve")
    assert asked.ending == "headless" and late.answer == asked.answer


def test_an_interrupt_ends_the_wait_at_once_and_nothing_more_is_asked() -> None:
    asking, prompt = _asking(FrontEndWatch(), grace=30), _Prompt()
    thread, out = _ask_in_thread(asking, prompt, _question())
    started = time.perf_counter()
    asking.cancel()
    thread.join(2)
    assert out == [Asked(INTERRUPTED, "interrupted")] and out[0].answer is INTERRUPTED
    assert time.perf_counter() - started < 0.2
    assert asking.ask(_Prompt(), _question()).ending == "interrupted"


def test_held_stops_the_clock_and_tick_runs_while_waiting() -> None:
    watch = FrontEndWatch()
    watch.hear("comm_msg")
    ticks: list[float] = []
    asking, prompt = _asking(watch, timeout=0.2), _Prompt()
    thread, out = _ask_in_thread(
        asking, prompt, _question(held=lambda: True, tick=lambda: ticks.append(time.monotonic()))
    )
    time.sleep(0.5)
    assert not out and len(ticks) >= 2
    prompt.click("build")
    thread.join(2)
    assert out[0].ending == "answered"


def test_the_title_is_redacted_and_shown_safely_in_the_note() -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 8
    asked = _asking(None, grace=0.1).ask(
        _Prompt(), _question(title=f"Approve run_command (echo {secret}\u202e)?")
    )
    assert secret not in asked.note and "\u202e" not in asked.note and "\\u202e" in asked.note


class _Kernel:
    def __init__(self) -> None:
        self.handled: list[tuple[str, dict[str, Any]]] = []
        kinds = ("comm_open", "comm_msg", "comm_close", "execute_request")
        self.shell_handlers: dict[str, Any] = {kind: self._handler(kind) for kind in kinds}

    def _handler(self, kind: str) -> Any:
        def handle(stream: Any, ident: Any, msg: dict[str, Any]) -> str:
            self.handled.append((kind, msg))
            return kind

        return handle


def test_the_watch_notes_comm_messages_and_hands_each_on_unchanged() -> None:
    kernel = _Kernel()
    shell = SimpleNamespace(kernel=kernel)
    originals = dict(kernel.shell_handlers)
    watch = install(shell)
    assert watch is not None and current_watch() is watch and not watch.seen
    assert install(shell) is watch, "installed twice"
    control = {"content": {"comm_id": "c1", "target_name": "jupyter.widget.control", "data": {}}}
    update = {"content": {"comm_id": "w1", "data": {"method": "update", "state": {"_view_count": 1}}}}
    assert kernel.shell_handlers["comm_open"]("stream", ["ident"], control) == "comm_open"
    assert kernel.shell_handlers["comm_msg"]("stream", ["ident"], update) == "comm_msg"
    kernel.shell_handlers["comm_msg"]("stream", ["ident"], {"no content": True})  # odd, still handled
    assert kernel.handled == [
        ("comm_open", control),
        ("comm_msg", update),
        ("comm_msg", {"no content": True}),
    ]
    assert watch.seen and set(watch.heard) == {"comm_open jupyter.widget.control", "comm_msg"}
    assert kernel.shell_handlers["execute_request"] is originals["execute_request"]
    uninstall(shell)
    assert kernel.shell_handlers == originals and current_watch() is None
    assert install(SimpleNamespace()) is None, "no kernel (a terminal IPython): nothing to watch"


def test_where_pages_render_no_widgets_only_the_questions_own_views_count() -> None:
    """Under jupyter-server-documents the pages open comms but show no widget: a question waits out the grace,
    not the timeout, unless a front end shows it."""
    watch = FrontEndWatch()
    watch.hear("comm_open architect-nb-documents")
    shown: list[Any] = []
    asking = Asking(shown.append, None, timeout=60, grace=0.3, front_ends=watch, views_only=lambda: True)
    started = time.monotonic()
    asked = asking.ask(_Prompt(), _question())
    assert 0.3 <= time.monotonic() - started < 1.5
    assert asked.ending == "headless"
    assert asked.note.startswith(
        "The front end did not show the buttons within 0.3 s (notebook.headless_grace)"
    )
    assert "jupyter-server-documents" in asked.note and "was denied" in asked.note

    thread, out = _ask_in_thread(asking, prompt := _Prompt(), _question())
    prompt.box._view_count = 1  # a page that does render it says so
    time.sleep(0.5)
    assert not out
    prompt.click("approve")
    thread.join(2)
    assert out == [Asked("approve", "answered")]
