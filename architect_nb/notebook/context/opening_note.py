"""The notebook context an `%%architect` run starts with: the outline of its notebook, with what is stale and
what the task's references name, redacted like everything the model is sent.

An outline is one paragraph of the message a run begins with (it holds no blank line), so in a thread the
outlines of earlier runs can be told apart and shortened once a newer one is there (`forget_outlines`): a
follow-up pays for one outline, not one per run.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from architect_nb.notebook.context.outline import OutlineParts, render_outline
from architect_nb.notebook.context.references import resolve_references
from architect_nb.notebook.context.staleness import stale_marks
from architect_nb.notebook.context.view import NotebookView
from architect_nb.redaction import default_redactor

__all__ = ["EARLIER_OUTLINE", "context_note", "forget_outlines"]

EARLIER_OUTLINE = "[The notebook's outline as an earlier run saw it, left out: a newer one follows.]"
_STARTS = (
    "The notebook this %%architect cell runs in:",
    "No notebook could be read for this %%architect cell",
)


def context_note(view: NotebookView, task: str, budget_tokens: int) -> str:
    """The context for a run of `task` in the notebook `view`, within about `budget_tokens`."""
    parts = OutlineParts(stale_marks(view), resolve_references(task, view), budget_tokens)
    return default_redactor().redact(render_outline(view, parts))


def forget_outlines(messages: MutableSequence[dict[str, Any]]) -> int:
    """Replace the outlines in a thread's user messages by one line; returns how many were replaced."""
    replaced = 0
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        paragraphs = content.split("\n\n")
        kept = [EARLIER_OUTLINE if p.startswith(_STARTS) else p for p in paragraphs]
        if kept != paragraphs:
            message["content"] = "\n\n".join(kept)
            replaced += 1
    return replaced
