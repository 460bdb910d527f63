"""The notebook context an `%%architect` run starts with: the outline of its notebook, with what is stale and
what the task's references name, redacted like everything the model is sent."""

from __future__ import annotations

from architect_nb.notebook.context.outline import OutlineParts, render_outline
from architect_nb.notebook.context.references import resolve_references
from architect_nb.notebook.context.staleness import stale_marks
from architect_nb.notebook.context.view import NotebookView
from architect_nb.redaction import default_redactor

__all__ = ["context_note"]


def context_note(view: NotebookView, task: str, budget_tokens: int) -> str:
    """The context for a run of `task` in the notebook `view`, within about `budget_tokens`."""
    parts = OutlineParts(stale_marks(view), resolve_references(task, view), budget_tokens)
    return default_redactor().redact(render_outline(view, parts))
