"""Where the notebook tools read and change a notebook: the document open in a front end, or the file.

A notebook open in JupyterLab or Notebook 7 (with this package's extension, in a front end connected to the
agent's kernel) is read as the person sees it, unsaved typing included, and changed through its document
model: the person sees the change at once, their own undo reverts it, and their next save writes both their
edits and the agent's. Writing the file under an open editor would instead make the next save ask "the file
has changed on disk", and lose one side's work. Anywhere else (VS Code, nbclient, a terminal, the notebook
closed) the file on disk is read and written, as before; an edit is refused when the file changed on disk
since the agent last read it, so nobody's save is overwritten.

The tools never import IPython: a `DocumentBackend` is handed to them. `architect_nb.notebook.live_documents`
is the one that talks to front ends over the kernel's comm channel; with none, every notebook is a file.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from architect_nb.tools.filesystem.fileio import FileAccessError, TextFile, read_text_file
from architect_nb.tools.notebook_files.cellops import CellOp
from architect_nb.tools.notebook_files.model import (
    MAX_NOTEBOOK_BYTES,
    Notebook,
    NotebookError,
    checked_notebook,
    load_notebook,
)

__all__ = [
    "DocumentBackend",
    "DocumentError",
    "DocumentState",
    "LiveDocument",
    "Loaded",
    "NotebookDocuments",
]


class DocumentError(Exception):
    """The open document could not be read or changed (closed, renamed, no answer). The message says what
    happened to the document and the file (nothing, unless it says so) and what to do next."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentState:
    """An open notebook as its front end shows it now.

    Attributes:
        data: The notebook's JSON (nbformat 4, every cell with an id), unsaved edits included.
        editing: The cell the person is typing in (edit mode, focused), never changed under their cursor.
        busy: Cells running or queued to run, and the running `%%architect` cell: never changed.
        read_only: The front end cannot save the notebook (the file is not writable).
        dirty: Code cells edited since they ran, as the front end tracks it (None: it does not say).
        selected: The cell the person had selected when the running cell was run, if asked and known.
    """

    data: dict[str, Any]
    editing: str | None = None
    busy: frozenset[str] = frozenset()
    read_only: bool = False
    dirty: frozenset[str] | None = None
    selected: str | None = None


class LiveDocument(Protocol):
    """A notebook open in a front end that claimed it."""

    @property
    def where(self) -> str:
        """The front end, for messages: 'JupyterLab' or 'Jupyter Notebook'."""
        ...

    def read(self, running: str | None = None) -> DocumentState:
        """The document as shown now (with `running`, a cell id: also what was selected when it ran). Raises
        `DocumentError`."""
        ...

    def apply(self, ops: Sequence[CellOp]) -> None:
        """Apply `ops` to the document model, all or none (the front end checks them again first). Raises
        `DocumentError`, or `CellOpError` for an operation the front end refused."""
        ...


class DocumentBackend(Protocol):
    """Finds the open document of a notebook file."""

    def open_document(self, path: Path) -> LiveDocument | None:
        """The document open for `path` (resolved, inside the workspace) in a front end that claims it, or
        None when no front end does (the file is then read and written on disk). Raises `DocumentError`
        when front ends cannot be asked, or claim it in ways that cannot be served."""
        ...

    def unavailable(self) -> str | None:
        """Why front ends cannot be asked from the calling thread while some may have a notebook open (the
        caller must not fall back to the file then), or None."""
        ...


@dataclass(slots=True)
class Loaded:
    """A notebook as read for a tool: from its open document (`live`, `state`) or from disk."""

    notebook: Notebook
    live: LiveDocument | None = None
    state: DocumentState | None = None


@dataclass
class NotebookDocuments:
    """What the four notebook tools share: the backend that finds open documents, and what the agent last
    read of each notebook file on disk (so an edit of a file changed since is refused)."""

    backend: DocumentBackend | None = None
    _read: dict[Path, str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def load(self, target: Path, shown: str, *, for_edit: bool = False) -> Loaded:
        """The notebook at `target` (inside the workspace): its open document if a front end claims it, else
        the file. Raises `NotebookError`, `FileAccessError` or `DocumentError`."""
        live = self.backend.open_document(target) if self.backend is not None else None
        if live is None:
            notebook = load_notebook(target, shown, for_edit=for_edit)
            self._check_unchanged(target, notebook, for_edit=for_edit)
            return Loaded(notebook)
        state = live.read()
        if for_edit and (state.read_only or (target.is_file() and not target.stat().st_mode & 0o222)):
            raise FileAccessError(
                f"'{shown}' is read-only (open in {live.where}, which cannot save it); it is left unchanged."
            )
        text = json.dumps(state.data, ensure_ascii=False)
        if len(text) > MAX_NOTEBOOK_BYTES:
            raise NotebookError(f"'{shown}' (open in {live.where}) is over the notebook size limit.")
        data = checked_notebook(state.data, shown)
        return Loaded(Notebook(shown=shown, file=TextFile(text=text), data=data), live, state)

    def remember(self, target: Path, shown: str) -> None:
        """The file as it is now is what the agent knows (after its own write)."""
        try:
            text = read_text_file(target, shown, MAX_NOTEBOOK_BYTES).text
        except FileAccessError:
            return
        with self._lock:
            self._read[target] = _digest(text)

    def _check_unchanged(self, target: Path, notebook: Notebook, *, for_edit: bool) -> None:
        digest = _digest(notebook.file.text)
        with self._lock:
            known = self._read.get(target)
            if not for_edit:
                self._read[target] = digest
                return
        if known is not None and known != digest:
            raise NotebookError(
                f"'{notebook.shown}' changed on disk since you last read it (someone saved it); it was left "
                "as it is. Call read_notebook to re-read it, then retry the edit."
            )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
