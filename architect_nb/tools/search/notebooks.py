"""grep on notebooks: a literal searched in each cell's source lines (and output text when asked), never in
the JSON, so escaped quotes still match and matches are reported as `path [cell 3, line 2]: text`."""

from __future__ import annotations

from architect_nb.tools.search.code import MAX_FILE_BYTES
from architect_nb.tools.search.grep import Needle
from architect_nb.tools.search.scan import Line, clip, decode, notebook_lines, read_regular

__all__ = ["NotebookHits", "grep_notebook"]

#: (matching lines, the lines to show, each shown line's label)
NotebookHits = tuple[int, list[Line], dict[int, str]]


def grep_notebook(path: str, needle: Needle, outputs: bool) -> NotebookHits | None:
    """The lines of the notebook at `path` that hold `needle`; None if it is not a readable notebook."""
    data = read_regular(path, MAX_FILE_BYTES, skip_binary=True)
    if not isinstance(data, bytes):
        return None
    cells = notebook_lines(decode(data), outputs)
    if cells is None:
        return None
    lines: list[Line] = []
    labels: dict[int, str] = {}
    for number, (label, text) in enumerate(cells, start=1):
        raw = text.encode("utf-8", "replace")
        hit = needle.find(raw, 0)
        if hit >= 0:
            lines.append((number, True, clip(text, len(raw[:hit].decode("utf-8", "replace")))))
            labels[number] = label
    return len(lines), lines, labels
