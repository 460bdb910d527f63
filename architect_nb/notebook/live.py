"""The live view of a run: widgets created by the starting cell, updated from the worker thread.

Only widget state changes and `update_display_data` leave the worker; front ends route those by comm id and
display id, so everything lands in the cell that started the run even while other cells or comm messages are
being handled. Nothing here calls bare `print` or `display` from the worker.

The view is three widgets: a header (status, step, tokens, cost), one HTML log redrawn from the events (the
same HTML as the static output, so live and saved look alike), and a box for pending approval prompts.
Few widgets keep the kernel's traffic and any saved widget state small; `finish` empties them before closing
them, so a front end that records widget state (nbclient) keeps almost nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import display as _display

from architect_nb.agent.events import AgentEvent, CostUpdate, RunFinished, StepStarted, TextDelta, Transcript
from architect_nb.notebook.render import events_html, status_badge
from architect_nb.redaction import default_redactor

_show: Callable[..., Any] = _display  # IPython has no annotations

__all__ = ["LiveView"]

_REDRAW_EVERY = 0.1  # seconds between redraws for streamed text (each redraw is one comm message)


class LiveView:
    """Shown once by the starting cell, with a display id; `finish` swaps in the static output."""

    def __init__(self, *, approval_timeout: float = 300.0) -> None:
        self._lock = threading.RLock()
        self._events = Transcript()
        self.header = widgets.HTML(self._header_html("starting", 0, 0, 0.0))
        self.log = widgets.HTML("")
        self.prompts = widgets.VBox([])
        self.box = widgets.VBox([self.header, self.log, self.prompts])
        self._drawn = 0.0
        self._dirty = False
        self._step = 0
        self._closed = False
        fallback = (
            "architect: a run is in progress. Its approval buttons need a front end with ipywidgets; "
            f"an unanswered approval is denied after {approval_timeout:g} s."
        )
        self.handle = _show(_WithFallback(self.box, fallback), display_id=True)

    # ------------------------------------------------------------------ worker side

    def add(self, widget: Any) -> None:
        """Show a widget (an approval prompt) under the log. Thread-safe."""
        with self._lock:
            if not self._closed:
                self._redraw()
                self.prompts.children = (*self.prompts.children, widget)

    def remove(self, widget: Any) -> None:
        """Take a settled prompt away (its decision is in the log now) and close its widgets."""
        with self._lock:
            self.prompts.children = tuple(w for w in self.prompts.children if w is not widget)
            for w in _walk(widget):
                w.close()

    def on_event(self, event: AgentEvent) -> None:
        """The loop's event sink (worker thread)."""
        with self._lock:
            if self._closed:
                return
            self._events(event)
            if isinstance(event, StepStarted):
                self._step = event.step
            if isinstance(event, CostUpdate | RunFinished | StepStarted):
                status = event.status if isinstance(event, RunFinished) else "running"
                cost = self._events.events
                tokens = next((e.total_tokens for e in reversed(cost) if isinstance(e, CostUpdate)), 0)
                usd = next((e.total_cost_usd for e in reversed(cost) if isinstance(e, CostUpdate)), 0.0)
                self.header.value = self._header_html(status, self._step, tokens, usd)
            if isinstance(event, TextDelta) and time.monotonic() - self._drawn < _REDRAW_EVERY:
                self._dirty = True
                return
            self._redraw()

    def _redraw(self) -> None:
        payload = default_redactor().redact_data(self._events.to_list())
        self.log.value = events_html(payload)
        self._drawn = time.monotonic()
        self._dirty = False

    @staticmethod
    def _header_html(status: str, step: int, tokens: int, usd: float) -> str:
        return (
            f"<span style='color:#57606a'>architect {status_badge(status)} step {step} · "
            f"{tokens} tokens · ${usd:.4f}</span>"
        )

    # ------------------------------------------------------------------ cell side

    def finish(self, output: Any) -> None:
        """Replace the live widgets by `output` (a static bundle) in place; empty and close every widget."""
        with self._lock:
            self._closed = True
            if self.handle is not None:
                self.handle.update(output)
            self.header.value = self.log.value = ""
            for widget in _walk(self.box):
                widget.close()


class _WithFallback:
    """A widget's bundle with a readable `text/plain` for front ends that cannot show widgets."""

    def __init__(self, widget: Any, text: str) -> None:
        self.widget = widget
        self.text = text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = dict(self.widget._repr_mimebundle_(**kwargs))
        data["text/plain"] = self.text
        return data


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out.extend(_walk(child))
    return out
