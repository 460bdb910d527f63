"""The live view of a run: two display outputs created by the starting cell, updated from the worker thread.

Only `update_display_data` messages leave the worker; front ends route them by display id, so everything
lands in the cell that started the run even while other cells or comm messages are being handled. Nothing
here calls bare `print` or `display` from the worker.

The first output is the run so far as HTML (a header with status, step, tokens and cost, then the same HTML
as the static output, so live and saved look alike). The second is empty until an approval prompt, the only
widget of a run, takes its place. `finish` puts the static output into the first and empties the second.
The log being plain display data, not a widget, keeps a headless run (nbclient, papermill) from saving any
widget state in the notebook unless a prompt was actually shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from IPython.display import display as _display

from architect_nb.agent.events import AgentEvent, CostUpdate, RunFinished, StepStarted, TextDelta, Transcript
from architect_nb.notebook.render import events_html, status_badge
from architect_nb.redaction import default_redactor

_show: Callable[..., Any] = _display  # IPython has no annotations

__all__ = ["LiveView"]

_REDRAW_EVERY = 0.1  # seconds between redraws for streamed text (each redraw resends the run's HTML)
_EMPTY: dict[str, Any] = {}  # an output with no data: front ends draw nothing for it


class LiveView:
    """Shown once by the starting cell; `finish` swaps in the static output."""

    def __init__(self, *, approval_timeout: float = 300.0) -> None:
        self._lock = threading.RLock()
        self._events = Transcript()
        self._approval_timeout = approval_timeout
        self._status = "starting"
        self._step = 0
        self._tokens = 0
        self._usd = 0.0
        self._drawn = 0.0
        self._closed = False
        self._prompts: list[Any] = []
        self.handle = _show(self._bundle(), raw=True, display_id=True)
        self.prompt_handle = _show(_EMPTY, raw=True, display_id=True)

    # ------------------------------------------------------------------ worker side

    def add(self, widget: Any) -> None:
        """Show a widget (an approval prompt) under the log. Thread-safe."""
        with self._lock:
            if self._closed:
                return
            self._redraw()
            self._prompts.append(widget)
            self._update(self.prompt_handle, _PromptBundle(widget, self._approval_timeout))

    def remove(self, widget: Any) -> None:
        """Take a settled prompt away (its decision is in the log now) and close its widgets."""
        with self._lock:
            self._prompts = [w for w in self._prompts if w is not widget]
            if not self._closed:
                shown = _PromptBundle(self._prompts[-1], self._approval_timeout) if self._prompts else None
                self._update(self.prompt_handle, shown)
        _close(widget)

    def on_event(self, event: AgentEvent) -> None:
        """The loop's event sink (worker thread)."""
        with self._lock:
            if self._closed:
                return
            self._events(event)
            if isinstance(event, StepStarted):
                self._step = event.step
            elif isinstance(event, CostUpdate):
                self._tokens, self._usd = event.total_tokens, event.total_cost_usd
            self._status = event.status if isinstance(event, RunFinished) else "running"
            if isinstance(event, TextDelta) and time.monotonic() - self._drawn < _REDRAW_EVERY:
                return  # the next event or redraw shows it
            self._redraw()

    def _redraw(self) -> None:
        self._update(self.handle, self._bundle())
        self._drawn = time.monotonic()

    def _bundle(self) -> dict[str, Any]:
        payload = default_redactor().redact_data(self._events.to_list())
        header = (
            f"<div style='color:#57606a'>architect {status_badge(self._status)} step {self._step} · "
            f"{self._tokens} tokens · ${self._usd:.4f}</div>"
        )
        return {
            "text/html": f'<div class="architect-nb-live" style="font-size:13px;line-height:1.4">'
            f"{header}{events_html(payload)}</div>",
            "text/plain": f"architect: a run is in progress (step {self._step}, {self._tokens} tokens, "
            f"${self._usd:.4f}).",
        }

    @staticmethod
    def _update(handle: Any, content: Any) -> None:
        if handle is None:
            return
        if content is None or isinstance(content, dict):
            handle.update(content or _EMPTY, raw=True)
        else:
            handle.update(content)

    # ------------------------------------------------------------------ cell side

    def finish(self, output: Any) -> None:
        """Replace the live log by `output` (a static bundle) in place; take away and close any prompt."""
        with self._lock:
            self._closed = True
            prompts, self._prompts = self._prompts, []
            self._update(self.handle, output)
            self._update(self.prompt_handle, None)
        for widget in prompts:
            _close(widget)


class _PromptBundle:
    """A prompt widget's bundle, with a readable `text/plain` for front ends that cannot show widgets."""

    def __init__(self, widget: Any, timeout: float) -> None:
        self.widget = widget
        self.timeout = timeout

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = dict(self.widget._repr_mimebundle_(**kwargs))
        data["text/plain"] = (
            "architect: a call waits for approval. The buttons need a front end with ipywidgets; "
            f"an unanswered approval is denied after {self.timeout:g} s."
        )
        return data


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
