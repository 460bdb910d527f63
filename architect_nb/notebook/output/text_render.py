"""The plain text of a run's output: its `text/plain`, for terminals, CI logs and front ends without HTML.

It lays out the words of `event_view`, which also feed the HTML, one line per thing said; the lines that
belong to a tool call or to the summary's review list are indented under it.
"""

from __future__ import annotations

from architect_nb.notebook.output.event_view import (
    TODO_MARKS,
    CallView,
    Decision,
    Header,
    ModelCall,
    RunView,
    Said,
    Summary,
    Thought,
    Todo,
    View,
    WarningView,
    Words,
)

__all__ = ["run_text", "view_lines"]

_UNDER = "  "  # what belongs to the line above it


def run_text(view: RunView) -> str:
    """A run's whole text: its events, then how to undo and review it."""
    lines = [line for part in view.parts for line in view_lines(part)]
    return "\n".join(lines + ([_text(view.footer)] if view.footer else []))


def view_lines(view: View) -> list[str]:
    """The lines of one view."""
    if isinstance(view, Header):
        extra = [line for line in (view.thread, view.instructions) if line]
        return [view.title, *extra, f"{view.task_label}: {view.task}"]
    if isinstance(view, Todo):
        return [view.title, *(f"{_UNDER}{TODO_MARKS.get(status, '☐')} {text}" for status, text in view.items)]
    if isinstance(view, Thought):
        return [view.title]
    if isinstance(view, Said):
        return [view.text.strip()]
    if isinstance(view, CallView):
        head = f"- {view.tool}: {view.status}" + (f" {view.took}" if view.took else "")
        head += f" ({view.sandbox})" if view.sandbox else ""
        return [head] + [
            _UNDER + _text(words) for words in (view.changed, view.variables, view.rewind) if words
        ]
    if isinstance(view, Decision):
        return [f"{_UNDER}{view.tool}: {view.decision}" + (f": {view.reason}" if view.reason else "")]
    if isinstance(view, WarningView):
        return [f"{view.mark} {view.message}"]
    if isinstance(view, ModelCall):  # the HTML's: the text stays a summary
        return []
    return _summary_lines(view)


def _summary_lines(summary: Summary) -> list[str]:
    lines = [f"{summary.status}: {summary.message} {summary.stop}"]
    lines += [_text(summary.files)] if summary.files else []
    lines += [summary.todo] if summary.todo else []
    lines.append(summary.cost)
    lines += [summary.note] if summary.note else []
    if summary.changes:
        lines.append(f"{summary.review_title} · {_text(summary.revert_all)}")
        lines += [f"{_UNDER}{c.status} {c.path} · {_text(c.revert)}" for c in summary.changes]
        lines += [_UNDER + _text(summary.more_files)] if summary.more_files else []
    return lines


def _text(words: Words) -> str:
    return "".join(words)
