"""What read_notebook shows: the kernel and language, then each cell's index, id, type and numbered source,
with its outputs summarized (type and size), or as text when asked (an error's whole traceback). Never
base64 data: images go to the model as images (`outputs.output_images`). `cells` limits it to a range."""

from __future__ import annotations

import json
import re
from typing import Any

from architect_nb.tools.filesystem.fileio import describe_size
from architect_nb.tools.filesystem.textmatch import numbered, split_lines
from architect_nb.tools.notebook_files.model import Notebook, cell_label, cell_source
from architect_nb.tools.notebook_files.outputs import error_text
from architect_nb.tools.search.scan import joined_text, notebook_output_text  # one reading, search's too

__all__ = ["outline"]

_EXCERPT_LINES = 20
_EXCERPT_CHARS = 2000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def outline(
    notebook: Notebook, include_outputs: bool, max_chars: int, cells: range | None = None
) -> tuple[str, int]:
    """The outline text and how many cells it shows in full (it stops at a cell boundary past `max_chars`);
    with `cells`, only those."""
    every = notebook.cells
    wanted = range(len(every)) if cells is None else range(cells.start, min(cells.stop, len(every)))
    parts = [_header(notebook)]
    size = len(parts[0])
    shown = 0
    for index in wanted:
        block = _cell_block(index, every[index], include_outputs)
        if size + len(block) > max_chars and shown > 0:
            parts.append(
                f"[... cells {index}-{wanted.stop - 1} not shown: the outline is over "
                f"{describe_size(max_chars)}. Read them as '{notebook.shown}#{index}-{wanted.stop - 1}'; "
                "grep and search_code find lines in them as [cell N, line M]; edit them by 'index:N'.]"
            )
            return "\n".join(parts), shown
        parts.append(block)
        size += len(block) + 1
        shown += 1
    if cells is not None and not shown:
        parts.append(f"[No cell in {cells.start}-{cells.stop - 1}: the notebook has {len(every)} cells.]")
    return "\n".join(parts), shown


def _header(notebook: Notebook) -> str:
    meta = _mapping(notebook.data.get("metadata"))
    spec, info = _mapping(meta.get("kernelspec")), _mapping(meta.get("language_info"))
    kernel = str(spec.get("name") or "unknown")[:80]
    if spec.get("display_name") and spec.get("display_name") != kernel:
        kernel += f" ({str(spec['display_name'])[:80]})"
    language = str(info.get("name") or spec.get("language") or "unknown")[:80]
    if info.get("version"):
        language += f" {str(info['version'])[:40]}"
    major, minor = notebook.version
    n = len(notebook.cells)
    return (
        f"{notebook.shown}: nbformat {major}.{minor}, kernel {kernel}, language {language}; "
        f"{n} cell{'' if n == 1 else 's'}, numbered from 0."
    )


def _cell_block(index: int, cell: dict[str, Any], include_outputs: bool) -> str:
    head = f"[{cell_label(index, cell)}"
    count = cell.get("execution_count")
    if isinstance(count, int):
        head += f", In [{count}]"
    head += "]"
    source = cell_source(cell)
    lines = [head, numbered(split_lines(source), 1) if source else "  (empty)"]
    outputs = cell.get("outputs")
    if isinstance(outputs, list) and outputs:
        if include_outputs:
            for n, output in enumerate(outputs):
                lines.append(_output_block(n, output))
        else:
            lines.append("  outputs: " + "; ".join(_output_summary(o) for o in outputs))
    attachments = cell.get("attachments")
    if isinstance(attachments, dict) and attachments:
        lines.append("  attachments: " + ", ".join(str(name)[:80] for name in list(attachments)[:10]))
    return "\n".join(lines)


def _output_summary(output: Any) -> str:
    if not isinstance(output, dict):
        return "malformed output"
    kind = str(output.get("output_type", "?"))
    if kind == "stream":
        text = joined_text(output.get("text"))
        lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
        return f"stream {output.get('name', '')} ({lines} line{'' if lines == 1 else 's'}, {_size(text)})"
    if kind == "error":
        return f"error {output.get('ename', '')}: {_one_line(str(output.get('evalue', '')))}"
    data = output.get("data")
    if isinstance(data, dict):
        sizes = ", ".join(f"{str(mime)[:80]} ({_size(value)})" for mime, value in data.items())
        return f"{kind} {sizes}"
    return kind


def _output_block(n: int, output: Any) -> str:
    head = f"  [output {n}] {_output_summary(output)}"
    if isinstance(output, dict) and output.get("output_type") == "error":
        trace = error_text(output).rstrip("\n")
        return f"{head}:\n" + "\n".join(f"    | {line}" for line in trace.split("\n"))
    text = notebook_output_text(output)
    if not text or (isinstance(output, dict) and output.get("output_type") == "error" and not text.strip()):
        return head
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    shown = lines[:_EXCERPT_LINES]
    body = "\n".join(f"    | {line[:200]}" for line in shown)
    if len(body) > _EXCERPT_CHARS:
        body = body[:_EXCERPT_CHARS] + " …"
    if len(lines) > len(shown):
        body += f"\n    | [... {len(lines) - len(shown)} more lines]"
    return f"{head}:\n{body}"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _size(value: Any) -> str:
    """The stored size of an output's text or data (base64 for images, as it sits in the file)."""
    text = value if isinstance(value, (str, list)) else json.dumps(value, ensure_ascii=False, default=str)
    return describe_size(len(joined_text(text).encode("utf-8", "replace")))


def _one_line(text: str) -> str:
    text = _ANSI.sub("", text).strip().split("\n", 1)[0]
    return text[:120] + ("…" if len(text) > 120 else "")
