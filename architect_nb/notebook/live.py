"""The live view of a run: widgets created by the starting cell, updated from the worker thread.

Only widget state changes and `update_display_data` leave the worker; front ends route those by comm id and
display id, so everything lands in the cell that started the run even while other cells or comm messages are
being handled. Nothing here calls bare `print` or `display` from the worker.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import display as _display

from architect_nb.agent.events import (
    AgentEvent,
    CostUpdate,
    RunFinished,
    RunStarted,
    StepStarted,
    TextDelta,
    ToolCallRequested,
    ToolResultEvent,
    Warning,
)
from architect_nb.notebook.render import status_badge, summary_html, tool_card_html
from architect_nb.redaction import default_redactor

_show: Callable[..., Any] = _display  # IPython has no annotations

__all__ = ["LiveView"]

_TEXT_EVERY = 0.1  # seconds between streamed-text updates (each is one comm message)


class LiveView:
    """A `VBox` shown once by the starting cell, with a display id; `finish` swaps in the static output."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._redact = default_redactor().redact_data
        self.header = widgets.HTML("<span style='color:#57606a'>architect: starting…</span>")
        self.log = widgets.VBox([])
        self.box = widgets.VBox([self.header, self.log])
        self._cards: dict[str, tuple[widgets.HTML, dict[str, Any]]] = {}
        self._text: widgets.HTML | None = None
        self._text_buffer = ""
        self._text_flushed = 0.0
        self._step = 0
        self._tokens = 0
        self._cost = 0.0
        self._closed = False
        self.handle = _show(self.box, display_id=True)

    # ------------------------------------------------------------------ worker side

    def add(self, widget: Any) -> None:
        """Append a widget (an approval prompt, a note) to the log. Thread-safe."""
        with self._lock:
            if self._closed:
                return
            self._flush_text()
            self.log.children = (*self.log.children, widget)

    def on_event(self, event: AgentEvent) -> None:
        """The loop's event sink (worker thread)."""
        with self._lock:
            if self._closed:
                return
            if isinstance(event, TextDelta):
                self._on_text(event)
                return
            self._flush_text()
            if isinstance(event, RunStarted):
                self._set_header("running")
            elif isinstance(event, StepStarted):
                self._step = event.step
                self._text = None
                self._set_header("running")
            elif isinstance(event, ToolCallRequested):
                data = {"tool": event.tool, "arguments": self._redact(dict(event.arguments))}
                card = widgets.HTML(tool_card_html(**data))
                self._cards[event.call_id] = (card, data)
                self._text = None
                self.log.children = (*self.log.children, card)
            elif isinstance(event, ToolResultEvent):
                self._on_result(event)
            elif isinstance(event, CostUpdate):
                self._tokens, self._cost = event.total_tokens, event.total_cost_usd
                self._set_header("running")
            elif isinstance(event, Warning):
                note = html.escape(self._redact(event.message))
                self.log.children = (
                    *self.log.children,
                    widgets.HTML(f"<div style='color:#9a6700'>⚠ {note}</div>"),
                )
            elif isinstance(event, RunFinished):
                self._set_header(event.status)
                summary = widgets.HTML(summary_html(self._redact(event.to_dict())))
                self.log.children = (*self.log.children, summary)

    def _on_text(self, event: TextDelta) -> None:
        if self._text is None:
            self._text_buffer = ""
            self._text = widgets.HTML("")
            self.log.children = (*self.log.children, self._text)
        self._text_buffer += event.text
        if time.monotonic() - self._text_flushed >= _TEXT_EVERY:
            self._flush_text()

    def _flush_text(self) -> None:
        if self._text is not None and self._text_buffer:
            shown = html.escape(self._redact(self._text_buffer))
            self._text.value = f"<div style='white-space:pre-wrap'>{shown}</div>"
            self._text_flushed = time.monotonic()

    def _on_result(self, event: ToolResultEvent) -> None:
        entry = self._cards.get(event.call_id)
        if entry is None:
            return
        card, data = entry
        data.update(
            status=event.status,
            duration_s=event.duration_s,
            output=self._redact(event.output),
            error=self._redact(event.error),
            diff=self._redact(event.diff),
            hooks=self._redact(list(event.hooks)),
        )
        card.value = tool_card_html(**data)

    def _set_header(self, status: str) -> None:
        self.header.value = (
            f"<span style='color:#57606a'>architect {status_badge(status)} step {self._step} · "
            f"{self._tokens} tokens · ${self._cost:.4f}</span>"
        )

    # ------------------------------------------------------------------ cell side

    def finish(self, output: Any) -> None:
        """Replace the live widgets by `output` (a static bundle) in place, and close every widget."""
        with self._lock:
            self._closed = True
            if self.handle is not None:
                self.handle.update(output)
            for widget in _walk(self.box):
                widget.close()


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out.extend(_walk(child))
    return out
