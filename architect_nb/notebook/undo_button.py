"""The "Undo this run" button shown under a finished run that changed files.

It is a live widget only while it can be used: it is closed once used (or `%architect undo` undid the run)
and when the next run starts, so closed buttons are hidden by the front end rather than saved. Its callback
only touches its own widgets (updates routed by comm id), never `print`/`display`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, ClassVar

import ipywidgets as widgets
from IPython.display import display as _display

from architect_nb.notebook.state import Session

_show: Callable[..., Any] = _display  # IPython has no annotations

__all__ = ["UndoButton"]


class UndoButton:
    live: ClassVar[dict[str, UndoButton]] = {}

    def __init__(self, session: Session, run_id: str) -> None:
        self.session = session
        self.run_id = run_id
        self.button = widgets.Button(description="Undo this run", icon="undo", tooltip=f"Undo run {run_id}")
        self.note = widgets.HTML("")
        self.box = widgets.HBox([self.button, self.note])
        self.button.on_click(self._on_click)

    @classmethod
    def show(cls, session: Session, run_id: str) -> UndoButton:
        button = cls(session, run_id)
        cls.live[run_id] = button
        if button.undone not in session.undo_hooks:
            session.undo_hooks.append(cls.undone)
        _show(button.box)
        return button

    def _on_click(self, _button: Any) -> None:
        self.click()

    def click(self) -> str:
        """The button's Python twin: undo the run and show the report in place of the button."""
        try:
            text = str(self.session.undo(self.run_id))
        except Exception as exc:
            text = f"Undo failed: {exc}"
        self.button.disabled = True
        self.note.value = f"<span>{html.escape(text)}</span>"
        return text

    @classmethod
    def undone(cls, run_id: str) -> None:
        button = cls.live.get(run_id)
        if button is not None:
            button.button.disabled = True
            button.button.description = "Undone"

    @classmethod
    def retire_all(cls, session: Session) -> None:
        for button in list(cls.live.values()):
            for widget in (button.button, button.note, button.box):
                widget.close()
        cls.live.clear()
