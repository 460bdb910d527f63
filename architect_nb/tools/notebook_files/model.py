"""`.ipynb` files on disk: parse, address cells, write back only what changed, validate, write.

A notebook is kept as the JSON that was read (key order, `source` as a list of lines or as one string,
outputs untouched), and only the cells a tool changes are rebuilt. The new text is the old one with just that
cell's bytes rewritten (`splice`: one cell's source edited, one cell inserted in its neighbour's layout, or
one deleted), so every other byte stays as it was whatever wrote the file, and `git diff` shows only the real
change. Only when that cannot be done is the whole file written in its detected layout (indent, key order,
`ensure_ascii`, final newline; nbformat's own is indent 1, sorted keys, UTF-8 text, a final newline).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.tools.filesystem.edit_file import write_edit
from architect_nb.tools.filesystem.fileio import FileAccessError, TextFile, read_text_file
from architect_nb.tools.notebook_files.splice import splice

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "NBFORMAT_LAYOUT",
    "Layout",
    "Notebook",
    "NotebookError",
    "cell_label",
    "cell_source",
    "checked_notebook",
    "load_notebook",
    "new_cell",
    "save_notebook",
    "set_source",
    "validation_problem",
]

#: Notebooks with outputs are often large; their outputs are never sent to the model whole.
MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024
#: 'index:3', 'index 3', 'cell 3' (as outlines and search results say), '#3' or '3'.
_INDEX_REF = re.compile(r"(?:(?:index|cell)\s*[:=]?\s*|#)?(-?\d+)", re.IGNORECASE)


class NotebookError(ValueError):
    """A notebook cannot be read or changed as asked. The message says what to do next."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How a notebook's JSON is laid out on disk."""

    indent: int | str | None
    sort_keys: bool
    ensure_ascii: bool
    final_newline: bool
    crlf: bool = False

    def dumps(self, data: dict[str, Any]) -> str:
        text = json.dumps(data, indent=self.indent, sort_keys=self.sort_keys, ensure_ascii=self.ensure_ascii)
        text = text + "\n" if self.final_newline else text
        return text.replace("\n", "\r\n") if self.crlf else text  # JSON strings hold no raw newline


#: What `nbformat.write` produces.
NBFORMAT_LAYOUT = Layout(indent=1, sort_keys=True, ensure_ascii=False, final_newline=True)


@dataclass(slots=True)
class Notebook:
    """A parsed notebook file. `data` is the JSON as read; `cells` is `data["cells"]`."""

    shown: str
    file: TextFile
    data: dict[str, Any]

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells: list[dict[str, Any]] = self.data["cells"]
        return cells

    @property
    def version(self) -> tuple[int, int]:
        minor = self.data.get("nbformat_minor", 0)
        return 4, minor if isinstance(minor, int) else 0

    @property
    def has_ids(self) -> bool:
        """Cell ids exist from nbformat 4.5 on; 4.4 notebooks must not have them."""
        return self.version >= (4, 5)

    def find(self, ref: str) -> int:
        """The index of the cell `ref` names: an id, or 'index:N' / 'N' (0-based; negative from the end)."""
        ref = ref.strip()
        by_id = [i for i, cell in enumerate(self.cells) if cell.get("id") == ref]
        if len(by_id) == 1:
            return by_id[0]
        if len(by_id) > 1:
            raise NotebookError(
                f"{len(by_id)} cells of '{self.shown}' have id '{ref}' (cells {', '.join(map(str, by_id))}); "
                "name the cell as 'index:N' instead."
            )
        m = _INDEX_REF.fullmatch(ref)
        n = len(self.cells)
        if m is None:
            ids = [c["id"] for c in self.cells if isinstance(c.get("id"), str)]
            listed = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
            known = f" Its cell ids: {listed}." if ids else " Its cells have no ids (nbformat 4.4)."
            raise NotebookError(
                f"No cell of '{self.shown}' has id '{_short(ref)}'.{known} Use an id from read_notebook, "
                "or 'index:N' (0-based)."
            )
        index = int(m.group(1))
        if not -n <= index < n:
            span = f"0-{n - 1}" if n else "none"
            raise NotebookError(f"Cell index {index} is out of range: '{self.shown}' has {n} cells ({span}).")
        return index % n

    def ids(self) -> set[str]:
        return {c["id"] for c in self.cells if isinstance(c.get("id"), str)}

    # ------------------------------------------------------------------ writing

    def layout(self) -> tuple[Layout, bool]:
        """The layout to write with, and whether it reproduces the file as read byte for byte."""
        text = self.file.text
        found = _detect_layout(text, self.data)
        if found.dumps(self.data) == text:
            return found, True
        return (found if found.indent is not None else NBFORMAT_LAYOUT), False

    def render(self, data: dict[str, Any]) -> tuple[str, str]:
        """`data` as the file's new text, and a note if the file's layout could not be kept exactly."""
        spliced = splice(self.file.text, self.data, data)
        if spliced is not None and _parses_to(spliced, data):
            return spliced, ""
        layout, exact = self.layout()
        note = (
            ""
            if exact
            else " The file was not laid out as nbformat writes it; it was rewritten in a standard layout, "
            "so `git diff` shows formatting changes too."
        )
        return layout.dumps(data), note


def load_notebook(target: Path, shown: str, *, for_edit: bool = False) -> Notebook:
    """Read and check a notebook file (nbformat 4). Raises `NotebookError` or `FileAccessError`."""
    if for_edit and target.is_file() and not target.stat().st_mode & 0o222:
        raise FileAccessError(f"'{shown}' is read-only; it is left unchanged.")
    file = read_text_file(target, shown, MAX_NOTEBOOK_BYTES)
    try:
        data = json.loads(file.text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"'{shown}' is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}), so it is not a "
            "notebook; read it with read_file."
        ) from None
    except (RecursionError, ValueError):
        raise NotebookError(f"'{shown}' cannot be parsed as a notebook; read it with read_file.") from None
    return Notebook(shown=shown, file=file, data=checked_notebook(data, shown))


def checked_notebook(data: Any, shown: str) -> dict[str, Any]:
    """`data` if it is an nbformat 4 notebook whose cells the tools can read; else `NotebookError`."""
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError(
            f"'{shown}' is not a Jupyter notebook (no list of cells); use read_file and edit_file."
        )
    if data.get("nbformat") != 4:
        raise NotebookError(
            f"'{shown}' is in nbformat {_short(str(data.get('nbformat')))}; only nbformat 4 is supported. "
            "Convert it with `jupyter nbconvert --to notebook`."
        )
    for i, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"Cell {i} of '{shown}' is malformed (no cell_type); fix it with edit_file.")
        source = cell.get("source", "")
        if not isinstance(source, str) and not (
            isinstance(source, list) and all(isinstance(part, str) for part in source)
        ):
            raise NotebookError(f"Cell {i} of '{shown}' has a malformed source; fix it with edit_file.")
    return data


def save_notebook(target: Path, notebook: Notebook, data: dict[str, Any]) -> str:
    """Validate `data` and write it over `notebook`'s file atomically. Returns a note about the layout.

    Raises `NotebookError` if the result is not a valid notebook; the file is then left untouched.
    """
    problem = validation_problem(data)
    if problem is not None:
        was = validation_problem(notebook.data)
        before = (
            f" The notebook was already invalid ({was}); fix that with edit_file first."
            if was is not None
            else ""
        )
        raise NotebookError(
            f"The change would leave '{notebook.shown}' an invalid notebook ({problem}); it is unchanged."
            + before
        )
    text, note = notebook.render(data)
    write_edit(target, notebook.shown, notebook.file, text)
    return note


def validation_problem(data: dict[str, Any]) -> str | None:
    """nbformat's verdict on `data`: None if valid, else a one-line reason."""
    import nbformat  # a second or so to import with its schema; only edits need it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about ids it would add; we only ask
            nbformat.validate(copy.deepcopy(data))
    except nbformat.ValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "absolute_path", []) or [])
        message = str(getattr(exc, "message", exc)).splitlines()[0]
        return _short(f"{message}" + (f" at {where}" if where else ""), 300)
    except Exception as exc:  # the validator choking on odd data is a refusal too
        return _short(f"{type(exc).__name__}: {exc}", 300)
    return None


# ---------------------------------------------------------------------- cells


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def set_source(cell: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of `cell` with `text` as its source, stored as the cell stored it (lines, as nbformat does)."""
    changed = dict(cell)
    changed["source"] = text if isinstance(cell.get("source"), str) else text.splitlines(True)
    return changed


def new_cell(
    notebook: Notebook, cell_type: str, source: str, seed: str, position: int = -1
) -> dict[str, Any]:
    """A new cell as nbformat would make it; with a fresh id from nbformat 4.5 on, derived from `seed` so
    that a preview and the write give the same id. Its source is one string if the cells around `position`
    store theirs so, as some tools do; else a list of lines, as nbformat does."""
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    if notebook.has_ids:
        cell["id"] = _fresh_id(notebook.ids(), seed)
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = source if _neighbours_use_strings(notebook.cells, position) else source.splitlines(True)
    return cell


def _neighbours_use_strings(cells: list[dict[str, Any]], position: int) -> bool:
    near = [cells[i] for i in (position - 1, position) if 0 <= i < len(cells)]
    return bool(near) and all(isinstance(cell.get("source"), str) for cell in near)


def cell_label(index: int, cell: dict[str, Any]) -> str:
    """'cell 3 id=ab12 code': how diffs and summaries name a cell."""
    cell_id = cell.get("id")
    shown_id = f" id={_short(cell_id, 64)}" if isinstance(cell_id, str) else ""
    return f"cell {index}{shown_id} {_short(str(cell.get('cell_type')), 20)}"


def _fresh_id(taken: set[str], seed: str) -> str:
    n = 0
    while True:
        digest = hashlib.sha256(f"{seed}\x00{n}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if digest not in taken:
            return digest
        n += 1


def _parses_to(text: str, data: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(text) == data)
    except (ValueError, RecursionError):
        return False


def _detect_layout(text: str, data: dict[str, Any]) -> Layout:
    indent: int | str | None = None
    second = text.split("\n", 2)[1].rstrip("\r") if text.count("\n") >= 2 else None
    if second is not None:
        stripped = second.lstrip(" \t")
        lead = second[: len(second) - len(stripped)]
        indent = (len(lead) if set(lead) == {" "} else lead) if lead else 0
    return Layout(
        indent=indent,
        sort_keys=_keys_sorted(data),
        ensure_ascii=text.isascii(),
        final_newline=text.endswith("\n"),
        crlf="\r\n" in text,
    )


def _keys_sorted(node: Any) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys = list(item)
            if keys != sorted(keys):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
