"""Where the notebook tools read and change a notebook: the document open in a front end, or the file.

A notebook open in JupyterLab or Notebook 7 (with this package's extension, in a front end connected to the
agent's kernel) is read as the person sees it, unsaved typing included, and changed through its document
model: the person sees the change at once, their own undo reverts it, and their next save writes both their
edits and the agent's. Writing the file under an open editor would instead make the next save ask "the file
has changed on disk", and lose one side's work. Anywhere else (VS Code, nbclient, a terminal, the notebook
closed) the file on disk is read and written, as before; an edit is refused when the file changed on disk
since the agent last read it, so nobody's save is overwritten.

One notebook outside the workspace is in reach too: the run's own (the one its `%%architect` cell is in, as
its front end locates it), when its file is elsewhere, as behind a Jupyter Kernel Gateway, where it is on
JupyterLab's side. It is named by the front end's path, and only its open document is read and changed,
never a file (`own_document`); any other path outside the workspace is refused as before (`validate_path`
runs first), and a workspace file at that path wins.

The tools never import IPython: a `DocumentBackend` is handed to them.
`architect_nb.notebook.kernel.live_documents` is the one that talks to front ends over the kernel's comm
channel; with none, every notebook is a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from architect_nb.paths.validators import PathTraversalError, is_inside, validate_path
from architect_nb.provenance.record import Authorship
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
    "OwnNotebook",
    "own_notebook_target",
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

    @property
    def path(self) -> str:
        """The notebook's path as its front end names it (relative to its server's root)."""
        ...

    def read(self, running: str | None = None) -> DocumentState:
        """The document as shown now (with `running`, a cell id: also what was selected when it ran). Raises
        `DocumentError`."""
        ...

    def apply(self, ops: Sequence[CellOp]) -> None:
        """Apply `ops` to the document model, all or none (the front end checks them again first). Raises
        `DocumentError`, or `CellOpError` for an operation the front end refused."""
        ...


@dataclass(frozen=True, slots=True)
class OwnNotebook:
    """The notebook the run is in, open in a front end: its document, its path (as the outline names it),
    the running cell, and its file on the kernel's side when known (None behind a gateway on another
    machine)."""

    document: LiveDocument
    path: str
    running_cell: str | None
    file: Path | None = None


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

    def locate(self, cell_id: str) -> tuple[LiveDocument, Path | None] | None:
        """The open notebook holding the cell `cell_id`, and its file on this side when known; None when no
        front end has it open (undo finds a run's own notebook outside the workspace by its cell)."""
        ...


@dataclass(slots=True)
class Loaded:
    """A notebook as read for a tool: from its open document (`live`, `state`) or from disk."""

    notebook: Notebook
    live: LiveDocument | None = None
    state: DocumentState | None = None
    #: The running `%%architect` cell, when this is the run's own notebook reached only through its front end
    #: (its file is not in the workspace): undo finds the notebook again by that cell.
    own_cell: str | None = None


@dataclass
class NotebookDocuments:
    """What the four notebook tools share: the backend that finds open documents, the run's own notebook
    (`own`, the kernel session's `own_notebook`), and what the agent last read of each notebook file on disk
    (so an edit of a file changed since is refused)."""

    backend: DocumentBackend | None = None
    own: Callable[[], OwnNotebook | str] | None = None
    #: Who writes during the current run: the cells the tools insert or edit record it (`provenance.record`).
    authorship: Authorship = field(default_factory=Authorship)
    _read: dict[Path, str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def load(self, target: Path, shown: str, root: Path, *, for_edit: bool = False) -> Loaded:
        """The notebook at `target` (`shown` relative to the workspace `root`, checked by `validate_path`):
        its open document if a front end claims it, else the file; or the run's own notebook, when it is
        outside the workspace and named by its front end's path (`own_document`). Raises `NotebookError`,
        `FileAccessError` or `DocumentError`."""
        own = self.own_document(target, shown, root)
        if own is not None:
            document, cell = own
            try:
                state = document.read()
            except DocumentError:  # closed, the page reloaded, or no answer: never the disk instead
                raise DocumentError(
                    f"'{shown}' is this run's notebook, whose file is not in the workspace, so the "
                    f"notebook tools reach it only in its front end, and {document.where} no longer has it "
                    "open or did not answer; nothing was changed."
                ) from None
            return self._from_document(document, state, target, shown, for_edit=for_edit, own_cell=cell)
        live = self.backend.open_document(target) if self.backend is not None else None
        if live is None:
            notebook = load_notebook(target, shown, for_edit=for_edit)
            self._check_unchanged(target, notebook, for_edit=for_edit)
            return Loaded(notebook)
        return self._from_document(live, live.read(), target, shown, for_edit=for_edit)

    def own_document(self, target: Path, shown: str, root: Path) -> tuple[LiveDocument, str | None] | None:
        """The run's own notebook's open document (and the running cell), when `shown` is the path its front
        end gives it, its file is not in the workspace, and no workspace file is at `target`; else None."""
        if self.own is None or os.path.lexists(target):
            return None  # no run, or a file of the workspace at that path: it wins, as before
        own = self.own()
        if isinstance(own, str) or own.running_cell is None:
            return None
        if own_notebook_target(own.document.path, own.file, root) != target:
            return None
        return own.document, own.running_cell

    def _from_document(
        self,
        live: LiveDocument,
        state: DocumentState,
        target: Path,
        shown: str,
        *,
        for_edit: bool,
        own_cell: str | None = None,
    ) -> Loaded:
        if for_edit and (state.read_only or (target.is_file() and not target.stat().st_mode & 0o222)):
            raise FileAccessError(
                f"'{shown}' is read-only (open in {live.where}, which cannot save it); it is left unchanged."
            )
        text = json.dumps(state.data, ensure_ascii=False)
        if len(text) > MAX_NOTEBOOK_BYTES:
            raise NotebookError(f"'{shown}' (open in {live.where}) is over the notebook size limit.")
        data = checked_notebook(state.data, shown)
        return Loaded(Notebook(shown=shown, file=TextFile(text=text), data=data), live, state, own_cell)

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


def own_notebook_target(front_path: str, file: Path | None, root: Path) -> Path | None:
    """Where the notebook tools take the run's own notebook when its `file` is not in the workspace `root`
    (unknown or elsewhere): the workspace path equal to its front end's path, if that is a path they accept
    and no workspace file is there (one would win). None when its file is in the workspace (it is named by
    its workspace path then), or it cannot be named so."""
    real_root = Path(os.path.realpath(root))
    if file is not None and is_inside(Path(os.path.realpath(file)), real_root):
        return None
    try:
        target = validate_path(front_path, real_root)
    except PathTraversalError:
        return None
    if os.path.lexists(target) or target.relative_to(real_root).as_posix() != front_path:
        return None
    return target


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
