"""`OpenNotebooks`: notebooks held open in memory as a front end holds them, for the Python API and tests.

It answers what JupyterLab's extension answers (`labextension/src/liveedits.ts`): a notebook is open or not,
read as shown (unsaved edits included, with the cell being typed in and the cells running), and changed by
cell operations with the same checks. `answer` speaks the document channel's JSON, so a test can play a
front end to a real kernel with it; as a `DocumentBackend` it hands the notebook tools the same documents
without a kernel. `save` writes a document to its file, as the person's save does.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.tools.notebook_files.backend import DocumentError, DocumentState
from architect_nb.tools.notebook_files.cellops import CellOp, CellOpError, apply_ops, check_ops

__all__ = ["OpenDocument", "OpenNotebooks", "ops_from_json"]


@dataclass
class OpenDocument:
    """One open notebook: its JSON as shown, and what the person is doing in it."""

    path: Path
    data: dict[str, Any]
    token: str
    editing: str | None = None
    busy: set[str] = field(default_factory=set)
    read_only: bool = False
    dirty: bool = False
    #: Code cells edited since they ran, as JupyterLab tracks them; None: the front end does not say.
    edited: set[str] | None = None
    #: The cell selected when each cell was run (by the running cell's id), as the extension records it.
    selected: dict[str, str] = field(default_factory=dict)
    #: Each apply's operations, for tests that count them (one front end applies, never two).
    applied: list[list[CellOp]] = field(default_factory=list)

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells: list[dict[str, Any]] = self.data["cells"]
        return cells

    def source(self, cell_id: str) -> str:
        cell = next(c for c in self.cells if c.get("id") == cell_id)
        source = cell.get("source", "")
        return source if isinstance(source, str) else "".join(source)

    def type_into(self, cell_id: str, text: str) -> None:
        """The person types `text` at the start of a cell (unsaved)."""
        cell = next(c for c in self.cells if c.get("id") == cell_id)
        cell["source"] = text + self.source(cell_id)
        self.dirty = True


class _Live:
    def __init__(self, owner: OpenNotebooks, doc: OpenDocument) -> None:
        self._owner = owner
        self._doc = doc
        self._path = str(doc.path)  # as claimed: a rename since is the front end's to report

    @property
    def where(self) -> str:
        return self._owner.where

    @property
    def path(self) -> str:
        return self._path

    def read(self, running: str | None = None) -> DocumentState:
        request = {"type": "read", "doc": self._doc.token, "path": self._path, "running": running}
        return _state(self._owner.answer(request))

    def apply(self, ops: Sequence[CellOp]) -> None:
        body = {"type": "apply", "doc": self._doc.token, "path": self._path}
        answer = self._owner.answer({**body, "ops": [op.to_json() for op in ops]})
        if answer.get("ok") is not True:
            code = str(answer.get("code", ""))
            if code in ("closed", "renamed", "readonly", ""):
                raise DocumentError(str(answer.get("error")))
            raise CellOpError(code, str(answer.get("error")))


class OpenNotebooks:
    """Notebooks open in a front end that lives in this process. Thread-safe.

    Args:
        where: How the front end is named in messages.
        shared: Whether its documents share their edits with other front ends (real-time collaboration).
    """

    def __init__(self, where: str = "JupyterLab", *, shared: bool = False) -> None:
        self.where = where
        self.shared = shared
        self.docs: dict[str, OpenDocument] = {}  # by token
        self._lock = threading.Lock()
        self._serial = 0

    # ------------------------------------------------------------------ the person's side

    def open(self, path: Path, *, key: str = "") -> OpenDocument:
        """Open the notebook file at `path`; the channel names it `key` (server-relative), else `path`."""
        data = json.loads(path.read_text(encoding="utf-8"))
        for n, cell in enumerate(data["cells"]):  # as JupyterLab does: every cell gets an id
            cell.setdefault("id", f"cell-{n}")
        data["nbformat_minor"] = max(5, int(data.get("nbformat_minor", 5)))
        with self._lock:
            self._serial += 1
            doc = OpenDocument(path=Path(key) if key else path, data=data, token=f"doc-{self._serial}")
            self.docs[doc.token] = doc
        return doc

    def close(self, doc: OpenDocument) -> None:
        with self._lock:
            self.docs.pop(doc.token, None)

    def save(self, doc: OpenDocument, file: Path) -> None:
        """The person saves: the document as shown is written to its file."""
        file.write_text(json.dumps(doc.data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        doc.dirty = False

    # ------------------------------------------------------------------ the channel's side

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request of the document channel (`claim`, `locate`, `running`, `read`, `apply`), as
        the extension does."""
        kind = request.get("type")
        path = str(request.get("path", ""))
        with self._lock:
            if kind == "locate":
                # Its documents are all on the kernel that asks; the cell at different paths is ambiguous.
                docs = self._holding(request.get("cell"))
                if len({d.path for d in docs}) > 1:
                    return {"type": "located", "docs": [], "ambiguous": True}
                return {
                    "type": "located",
                    "docs": [{"doc": d.token, "path": str(d.path), "shared": self.shared} for d in docs],
                }
            if kind == "running":
                source = str(request.get("source", "")).rstrip()
                found = [
                    {"doc": d.token, "path": str(d.path), "cell": c["id"]}
                    for d in self.docs.values()
                    for c in d.cells
                    if source and c.get("id") in d.busy and d.source(c["id"]).rstrip() == source
                ]
                return {"type": "running", "docs": found}
            if kind == "claim":
                docs = [d for d in self.docs.values() if str(d.path) == path]
                return {
                    "type": "claimed",
                    "docs": [{"doc": d.token, "shared": self.shared, "where": self.where} for d in docs],
                }
            doc = self.docs.get(str(request.get("doc")))
            if doc is None:
                return {"ok": False, "code": "closed", "error": f"'{path}' was closed in {self.where}."}
            if str(doc.path) != path:
                return {
                    "ok": False,
                    "code": "renamed",
                    "error": f"'{path}' was renamed to '{doc.path}' in {self.where}; nothing changed.",
                }
            if kind == "read":
                answer = {
                    "ok": True,
                    "notebook": copy.deepcopy(doc.data),
                    "editing": doc.editing,
                    "busy": sorted(doc.busy),
                    "read_only": doc.read_only,
                }
                if doc.edited is not None:
                    answer["dirty"] = sorted(doc.edited)
                if isinstance(request.get("running"), str):
                    answer["selected"] = doc.selected.get(str(request["running"]))
                return answer
            if kind != "apply":
                return {"ok": False, "error": f"Unknown request {kind!r}."}
            if doc.read_only:
                return {"ok": False, "code": "readonly", "error": f"'{path}' is read-only; nothing changed."}
            try:
                ops = ops_from_json(request.get("ops"))
                busy = doc.busy | {str(p) for p in request.get("protect") or []}
                check_ops(doc.cells, ops, editing=doc.editing, busy=busy)
                doc.data["cells"] = apply_ops(doc.cells, ops)
            except CellOpError as exc:
                return {"ok": False, "code": exc.code, "error": str(exc)}
            doc.applied.append(ops)
            doc.dirty = True
            if doc.edited is not None:  # a cell given the outputs of its source is no longer edited
                doc.edited -= {op.cell_id for op in ops if op.op == "outputs"}
            return {"ok": True}

    # ------------------------------------------------------------------ as a DocumentBackend, in-process

    def open_document(self, path: Path) -> _Live | None:
        with self._lock:
            docs = [d for d in self.docs.values() if d.path == path]
        return _Live(self, docs[0]) if docs else None

    def unavailable(self) -> str | None:
        return None

    def locate(self, cell_id: str) -> tuple[_Live, Path | None] | None:
        """The open notebook holding cell `cell_id`, and its file (the path it was opened under); None when
        notebooks at different paths hold it (copies of one template), as the channel's `locate`."""
        with self._lock:
            docs = self._holding(cell_id)
        if not docs or len({d.path for d in docs}) > 1:
            return None
        return _Live(self, docs[0]), docs[0].path

    def _holding(self, cell_id: Any) -> list[OpenDocument]:
        return [d for d in self.docs.values() if any(c.get("id") == cell_id for c in d.cells)]


def ops_from_json(raw: Any) -> list[CellOp]:
    """The channel's JSON operations as `CellOp`s; malformed ones raise `CellOpError('bad', ...)`."""
    if not isinstance(raw, list) or not raw:
        raise CellOpError("bad", "The request held no valid list of cell operations.")
    ops = []
    for item in raw:
        if not isinstance(item, dict):
            raise CellOpError("bad", "A cell operation was not an object.")
        if item.get("op") == "insert" and isinstance(item.get("cell"), dict):
            ops.append(CellOp.insert(dict(item["cell"]), item.get("after")))
        elif item.get("op") == "edit" and isinstance(item.get("id"), str):
            architect = item.get("architect")  # the cell's new provenance record (`provenance.record`)
            kept = dict(architect) if isinstance(architect, dict) else None
            source, expect = str(item.get("source", "")), str(item.get("expect", ""))
            ops.append(CellOp.edit(item["id"], source, expect, kept))
        elif item.get("op") == "delete" and isinstance(item.get("id"), str):
            ops.append(CellOp.delete(item["id"], str(item.get("expect", ""))))
        elif item.get("op") == "outputs" and isinstance(item.get("id"), str):
            raw_outputs = item.get("outputs")
            outputs: list[Any] = raw_outputs if isinstance(raw_outputs, list) else []
            count = item.get("execution_count")
            ops.append(
                CellOp.set_outputs(
                    item["id"],
                    [dict(o) for o in outputs if isinstance(o, dict)],
                    count if isinstance(count, int) else None,
                    str(item.get("expect", "")),
                )
            )
        else:
            raise CellOpError("bad", f"Unknown cell operation {str(item.get('op'))[:40]!r}.")
    return ops


def _state(answer: dict[str, Any]) -> DocumentState:
    if answer.get("ok") is not True:
        raise DocumentError(str(answer.get("error")))
    dirty = answer.get("dirty")
    return DocumentState(
        data=answer["notebook"],
        editing=answer.get("editing"),
        busy=frozenset(answer.get("busy") or ()),
        read_only=bool(answer.get("read_only")),
        dirty=frozenset(dirty) if isinstance(dirty, list) else None,
        selected=answer.get("selected"),
    )
