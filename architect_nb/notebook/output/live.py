"""The live view of a run: one display output created by the starting cell, updated from the worker thread.

Only `update_display_data` messages leave the worker; front ends route them by display id, so everything
lands in the cell that started the run even while other cells or comm messages are being handled. Nothing
here calls bare `print` or `display` from the worker.

The output shows the run so far as HTML: a header with status, step, tokens and cost, then the same HTML as
the static output, so live and saved look alike. A long run shows its last `LIVE_STEPS` steps and a line
counting the earlier ones (the static output, put in place when the run ends, shows every step): each redraw
then costs the same at step 400 as at step 4, in the kernel and in the front end, and the HTML of a step
that is over is made (and redacted) once. Redraws come at most every 0.1 s (longer for a long log): events
that come sooner are shown together by the next one. Only while a call waits for approval does it become a
widget: the log (an HTML widget) with the prompt under it. When the prompt is settled the output is HTML
again and those widgets are emptied and closed; `finish` puts the static output in place. So a finished cell
holds no widget, and a headless run (nbclient, papermill) saves no widget state unless a prompt was shown.

Under jupyter-server-documents, which runs cells on the server and appends display updates, each redraw
clears the cell's output and displays the view anew (`server_keeps_outputs`, which the front end tells).
"""

from __future__ import annotations

import contextvars
import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display as _display

from architect_nb.agent.events import (
    AgentEvent,
    ConfirmationAnswered,
    ConfirmationAsked,
    CostUpdate,
    ModelReply,
    ModelRequest,
    RunFinished,
    StepStarted,
    ToolCallRequested,
    Transcript,
)
from architect_nb.notebook.output.event_view import Todo, TodoTracker, meter_text
from architect_nb.notebook.output.render import events_html, status_badge, todo_html, tokens_text
from architect_nb.redaction import default_redactor

_show: Callable[..., Any] = _display  # IPython has no annotations

__all__ = ["LIVE_STEPS", "LiveView"]

#: Steps shown in full while a run goes on; earlier ones are counted in one line.
LIVE_STEPS = 10

_REDRAW_EVERY = 0.1  # seconds between redraws (each resends the run's HTML); what comes between waits for one
_REDRAW_BYTES = 100_000  # ... and longer for a longer log: about 1 MB/s of redraws at most
#: Drawn without waiting: what is about to run (a tool call, a question) and the end. Nothing is left to a
#: later redraw while a call runs, since run_python captures every display of the kernel meanwhile.
_DRAWN_AT_ONCE = (ToolCallRequested, ConfirmationAsked, ConfirmationAnswered, RunFinished)


class LiveView:
    """Shown once by the starting cell; `finish` swaps in the static output."""

    def __init__(
        self, *, headless_grace: float = 5.0, server_keeps_outputs: Callable[[], bool] = lambda: False
    ) -> None:
        self._lock = threading.RLock()
        self._events = Transcript()
        self._todo = TodoTracker()  # the checklist, kept above the steps
        self._step_starts: list[int] = []  # where each step begins in the merged events
        self._done_html: dict[int, str] = {}  # the HTML of steps that are over, by index, made once
        self._headless_grace = headless_grace
        self._status = "starting"
        self._step = 0
        self._tokens = 0
        self._cached = 0
        self._thinking = 0
        self._usd = 0.0
        self._meter = ""  # the context meter of the last request
        self._drawn = 0.0
        self._later: threading.Timer | None = None  # the redraw due for events that came too soon after one
        self._html_size = 0
        self._closed = False
        self._prompts: list[Any] = []
        self._asking: Any = None  # the widget shown while a prompt waits: VBox([log, prompt])
        self._shell_models: tuple[Any, Any] | None = None  # one layout and style for every such VBox and log
        # The kernel's own display publisher, kept: run_python and kernel checks swap in a capturing one while
        # they run, and a redraw then must still reach the cell, not the code's captured output.
        shell = get_ipython()
        self._publisher: Any = getattr(shell, "display_pub", None)
        self._formatter: Any = getattr(shell, "display_formatter", None)
        self._server_keeps_outputs = server_keeps_outputs
        self.handle = _show(self._bundle(), raw=True, display_id=True)

    # ------------------------------------------------------------------ worker side

    def add(self, widget: Any) -> None:
        """Show a widget (an approval prompt) under the log. Thread-safe."""
        with self._lock:
            if self._closed:
                return
            self._prompts.append(widget)
            self._show_prompt()

    def remove(self, widget: Any) -> None:
        """Take a settled prompt away (its decision is in the log now) and close its widgets."""
        with self._lock:
            self._prompts = [w for w in self._prompts if w is not widget]
            if not self._closed:
                self._show_prompt()
        _close(widget)

    def on_event(self, event: AgentEvent) -> None:
        """The loop's event sink (worker thread)."""
        with self._lock:
            if self._closed:
                return
            if isinstance(event, ModelReply):
                return  # its usage comes as a CostUpdate; the whole reply is for the inspector
            if isinstance(event, ModelRequest):  # the header's meter; the request is for the inspector
                self._meter = meter_text(event.meter)
                if event.meter.get("compressed"):
                    self._meter += f" · {event.meter['compressed']}"
                return
            self._events(event)
            if event.kind in ("run_started", "tool_call", "tool_result"):
                self._todo.feed(event.to_dict())
            if isinstance(event, StepStarted):
                self._step = event.step
                self._step_starts.append(self._events.size - 1)
            elif isinstance(event, CostUpdate):
                self._tokens, self._usd = event.total_tokens, event.total_cost_usd
                self._cached = event.total_cached_tokens
                self._thinking = event.total_reasoning_tokens
            self._status = event.status if isinstance(event, RunFinished) else "running"
            every = _REDRAW_EVERY * max(1.0, self._html_size / _REDRAW_BYTES)
            wait = self._drawn + every - time.monotonic()
            if wait > 0 and not isinstance(event, _DRAWN_AT_ONCE):
                self._redraw_later(wait)  # a quick run's steps come faster than anyone reads them
                return
            self._redraw()

    def _redraw_later(self, wait: float) -> None:
        if self._later is not None:
            return
        # The timer's thread sends in the worker's context, whose parent header ties the update to the cell.
        context = contextvars.copy_context()
        timer = threading.Timer(wait, lambda: context.run(self._redraw_due, timer))
        timer.daemon = True
        self._later = timer
        timer.start()

    def _redraw_due(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._later is timer and not self._closed:  # not drawn (or closed) since it was set
                self._redraw()

    def _redraw(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
        if self._asking is not None:
            self._asking.children[0].value = self._bundle()["text/html"]
        else:
            self._update(self._bundle())
        self._drawn = time.monotonic()

    def _show_prompt(self) -> None:
        """Show the newest pending prompt under the log, or the plain log again when none is left."""
        previous, self._asking = self._asking, None
        if self._prompts:
            drawn = self._bundle()["text/html"]
            if self._shell_models is None:
                log = widgets.HTML(drawn)
                self._shell_models = (log.layout, log.style)
            else:
                log = widgets.HTML(drawn, layout=self._shell_models[0], style=self._shell_models[1])
            self._asking = widgets.VBox([log, self._prompts[-1]], layout=self._shell_models[0])
            self._update(_PromptBundle(self._asking, self._headless_grace))
        else:
            self._update(self._bundle())
        self._drawn = time.monotonic()
        if previous is not None:
            _close_shell(previous)

    def _log_html(self) -> str:
        """The run's first events (its header), a line for the steps not shown, and the last steps."""
        starts = self._step_starts
        if not starts:
            return _html(self._events.to_list(), streaming=True)
        if -1 not in self._done_html:
            self._done_html[-1] = _html(self._events.since(0, starts[0]))
        shown = range(max(0, len(starts) - LIVE_STEPS), len(starts))
        parts = [self._done_html[-1]]
        if shown.start:
            parts.append(
                f"<div style='color:#57606a;margin:4px 0'>… {shown.start} earlier step(s), shown when the "
                "run ends</div>"
            )
        for index in shown:
            if index + 1 < len(starts):  # over: its events no longer change
                if index not in self._done_html:
                    self._done_html[index] = _html(self._events.since(starts[index], starts[index + 1]))
                parts.append(self._done_html[index])
            else:
                parts.append(_html(self._events.since(starts[index]), streaming=True))
        for index in [i for i in self._done_html if 0 <= i < shown.start]:
            del self._done_html[index]
        return "".join(parts)

    def _bundle(self) -> dict[str, Any]:
        log = self._log_html()
        self._html_size = len(log)
        header = (
            f"<div style='color:#57606a'>architect {status_badge(self._status)} step {self._step} · "
            f"{tokens_text(self._tokens, self._cached, self._thinking)} · ${self._usd:.4f}</div>"
        )
        todo = self._todo.view()
        checklist = todo_html(_redacted(todo)) if todo is not None else ""
        if checklist and self._step_starts:  # under the run's header, above its steps
            first = self._done_html.get(-1, "")
            log = first + checklist + log[len(first) :] if log.startswith(first) else checklist + log
        elif checklist:
            log += checklist
        if self._meter:
            meter = html.escape(self._meter)
            header += f"<div class='architect-nb-meter' style='color:#57606a;font-size:12px'>{meter}</div>"
        return {
            "text/html": f'<div class="architect-nb-live" style="font-size:13px;line-height:1.4">'
            f"{header}{log}</div>",
            "text/plain": f"architect: a run is in progress (step {self._step}, "
            f"{tokens_text(self._tokens, self._cached, self._thinking)}, "
            f"${self._usd:.4f}).",
        }

    def _update(self, content: Any) -> None:
        if self.handle is None:
            return
        if self._publisher is not None and self._formatter is not None and self._server_keeps_outputs():
            self._replace(content)
        elif isinstance(content, dict) and self._publisher is not None:
            transient = {"display_id": self.handle.display_id}
            self._publisher.publish(data=content, metadata={}, transient=transient, update=True)
        elif isinstance(content, dict):
            self.handle.update(content, raw=True)
        else:
            self.handle.update(content)

    def _replace(self, content: Any) -> None:
        """Where the server writes the cell's outputs (jupyter-server-documents), it appends a display update
        as a new output, so a long run would leave hundreds. There the view is redrawn as a new display
        after a `clear_output(wait=True)`, which the server applies just before it: the cell keeps one
        output. The update's parent header is still the cell's (the worker runs in its context)."""
        data, metadata = (content, {}) if isinstance(content, dict) else self._formatter.format(content)
        self._publisher.clear_output(wait=True)
        transient = {"display_id": self.handle.display_id}
        self._publisher.publish(data=data, metadata=metadata, transient=transient)

    # ------------------------------------------------------------------ cell side

    def finish(self, output: Any) -> None:
        """Replace the live view by `output` (a static bundle) in place; close any prompt still shown."""
        with self._lock:
            self._closed = True
            if self._later is not None:
                self._later.cancel()
            prompts, self._prompts = self._prompts, []
            asking, self._asking = self._asking, None
            self._update(output)
        if asking is not None:
            _close_shell(asking)
        for widget in prompts:
            _close(widget)
        for model in self._shell_models or ():
            model.close()


def _html(events: list[dict[str, Any]], *, streaming: bool = False) -> str:
    """Redacted HTML of `events`. `streaming`: they end with what is arriving now, so the text (or thinking)
    still streaming keeps its last `holdback` characters back until the next redraw: a secret arriving a few
    characters at a time is never shown before it can be recognised."""
    redactor = default_redactor()
    if streaming and events and events[-1]["kind"] in ("text_delta", "thinking_delta"):
        text = events[-1]["text"]
        held = text[: -redactor.holdback] if len(text) > redactor.holdback else ""
        events = [*events[:-1], {**events[-1], "text": redactor.redact_cut(held, cut_end=True)}]
    return events_html(redactor.redact_data(events))


def _redacted(todo: Todo) -> Todo:
    redact = default_redactor().redact
    return Todo(title=todo.title, items=tuple((status, redact(text)) for status, text in todo.items))


class _PromptBundle:
    """A prompt widget's bundle, with a readable `text/plain` for front ends that cannot show widgets."""

    def __init__(self, widget: Any, grace: float) -> None:
        self.widget = widget
        self.grace = grace

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = dict(self.widget._repr_mimebundle_(**kwargs))
        data["text/plain"] = (
            "architect: a question waits for an answer. Its buttons need a front end with ipywidgets; "
            f"without one, it gets its safe default after {self.grace:g} s (an approval is denied)."
        )
        return data


def _close_shell(asking: Any) -> None:
    """Close the log widget and the box around a prompt, not their shared layout and style (`finish` does),
    nor the prompt (`remove` does). The log's text is emptied first, as in `_close`."""
    log = asking.children[0]
    log.value = ""
    asking.children = ()
    log.close()
    asking.close()


def _close(widget: Any) -> None:
    """Close a widget tree with its layout and style models (ipywidgets leaves those open, and the kernel
    would keep them for its lifetime). Text is emptied first: a client that records widget state (nbclient)
    keeps the last value it saw, and a prompt can hold a diff."""
    for w in _walk(widget):
        if isinstance(getattr(w, "value", None), str) and w.value:
            w.value = ""
        w.close()


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in (
        *getattr(widget, "children", ()),
        getattr(widget, "layout", None),
        getattr(widget, "style", None),
    ):
        if child is not None and child not in out:
            out.extend(_walk(child))
    return out
