"""Running a Python regex over files, line by line in effect, with context: the engine of `search_code`.

This module imports only the standard library, because it also runs as a worker process started with
`python -I -S scan.py`. The worker can be killed when a search overruns its time, which a thread running a
catastrophically backtracking regex cannot. Its protocol: pickled requests on stdin, pickled message batches
on stdout (see `serve`).

A match is reported on the line where it starts and on every further line it spans; the next search starts
on the line after it, so each line is reported once. Files are decoded as UTF-8 (or UTF-16 with a BOM), with
undecodable bytes replaced. Binary files (a NUL byte in the first 8 KB, git's rule) are skipped, and so is
anything that is not a regular file with a single name: symlinks, FIFOs and hard links.

A Jupyter notebook (`.ipynb`) is searched as its cells' sources, not as JSON (`notebook_lines`), and its
matches carry labels such as `cell 3, line 2`; cell outputs are searched only when the request asks.
"""

from __future__ import annotations

import codecs
import json
import os
import pickle
import re
import stat
import sys
import time
from collections.abc import Iterator
from typing import Any

BINARY_SNIFF_BYTES = 8192
#: Longest line shown; longer lines (minified files) are cut around the match.
MAX_LINE_CHARS = 240

#: One shown line: (1-based line number, is it a match line, text).
Line = tuple[int, bool, str]
#: A scan event: ("hits", file index, matching lines, shown lines[, {line number: label} for a notebook])
#: or ("big", file index, size in bytes).
Event = tuple[Any, ...]

#: Files searched as notebooks, by cell.
NOTEBOOK_SUFFIX = ".ipynb"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_OUTPUT_MIMES = ("text/plain", "text/markdown", "application/json")

#: open() flags that refuse symlinks and never block on a FIFO.
NOFOLLOW_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def looks_binary(head: bytes) -> bool:
    """Git's rule, as `architect_nb.tools.filesystem.fileio.looks_binary` (a test keeps the two equal)."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def decode(data: bytes) -> str:
    """Text of a file for searching: BOM-aware, undecodable bytes replaced, never raising."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "replace")
    if data.startswith(codecs.BOM_UTF16_LE):
        return data[2:].decode("utf-16-le", "replace")
    if data.startswith(codecs.BOM_UTF16_BE):
        return data[2:].decode("utf-16-be", "replace")
    return data.decode("utf-8", "replace")


def clip(text: str, col: int = 0, limit: int = MAX_LINE_CHARS) -> str:
    """`text` without its line end, cut to about `limit` characters around column `col` if longer."""
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return text
    start = max(0, min(col - limit // 4, len(text) - limit))
    piece = text[start : start + limit]
    return ("…" if start else "") + piece + "…" + f" [line of {len(text):,} chars cut]"


def read_regular(path: str, max_bytes: int, skip_binary: bool = False) -> bytes | int | None:
    """The bytes of a regular, singly-linked file; its size if over `max_bytes`; None if unusable.

    With `skip_binary`, a binary file (see `looks_binary`) is unusable too, and only its head is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return None
        if st.st_size > max_bytes:
            return st.st_size
        chunks = [os.read(fd, BINARY_SNIFF_BYTES)]
        if skip_binary and looks_binary(chunks[0]):
            return None
        while chunk := os.read(fd, max(st.st_size + 1 - BINARY_SNIFF_BYTES, 65536)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def joined_text(value: Any) -> str:
    """A notebook's multiline string (a str, or a list of str as nbformat may store it) as one str."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def notebook_output_text(output: Any) -> str:
    """The readable text of one notebook output: a stream, an error's traceback (without colour codes), or a
    result's text/plain (or markdown, or JSON). Images and HTML have none."""
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        return joined_text(output.get("text"))
    if kind == "error":
        trace = output.get("traceback")
        if isinstance(trace, list) and trace:
            return _ANSI.sub("", "\n".join(str(t) for t in trace))
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    data = output.get("data")
    if isinstance(data, dict):
        for mime in _OUTPUT_MIMES:
            if mime in data:
                value = data[mime]
                return joined_text(value) if isinstance(value, (str, list)) else json.dumps(value)
    return ""


def notebook_lines(text: str, outputs: bool = False) -> list[tuple[str, str]] | None:
    """Each line of a notebook's cell sources as (label, text), labels like `cell 3, line 2` (cells from 0,
    lines from 1); with `outputs`, output text too (`cell 3, output 0, line 1`). None if not a notebook."""
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    found: list[tuple[str, str]] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        parts = [(f"cell {i}", joined_text(cell.get("source")))]
        if outputs and isinstance(cell.get("outputs"), list):
            parts += [
                (f"cell {i}, output {k}", notebook_output_text(o)) for k, o in enumerate(cell["outputs"])
            ]
        for where, body in parts:
            lines = body.split("\n")
            if len(lines) > 1 and lines[-1] == "":
                lines.pop()
            found.extend((f"{where}, line {n}", line) for n, line in enumerate(lines, start=1) if body)
    return found


def match_lines(regex: re.Pattern[str], text: str) -> dict[int, int]:
    """0-based numbers of the lines holding a match, each mapped to the column of its first match."""
    found: dict[int, int] = {}
    n = len(text)
    pos = line = counted = 0
    while pos <= n:
        m = regex.search(text, pos)
        if m is None:
            break
        start = m.start()
        if start == n and text.endswith("\n"):
            break  # the empty "line" after the final newline is not a line
        line += text.count("\n", counted, start)
        last = max(start, m.end() - 1)
        end_line = line + text.count("\n", start, last)
        found.setdefault(line, start - text.rfind("\n", 0, start) - 1)
        for extra in range(line + 1, end_line + 1):
            found.setdefault(extra, 0)
        newline = text.find("\n", last)
        if newline == -1:
            break
        line, counted, pos = end_line, newline, newline + 1
    return found


def shown_lines(text: str, found: dict[int, int], context: int, budget: int) -> list[Line]:
    """The first `budget` match lines of `found` with `context` lines around them, in order."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    shown = sorted(found)[:budget]
    cut_at = len(lines)
    if len(found) > budget:
        cut_at = min(line for line in found if line > shown[-1])  # context stops before a match not shown
    wanted: dict[int, bool] = {}
    for line in shown:
        for near in range(max(0, line - context), min(cut_at, line + context + 1)):
            wanted[near] = wanted.get(near, False) or near in found
    return [
        (n + 1, is_match, clip(lines[n], found.get(n, 0) if is_match else 0))
        for n, is_match in sorted(wanted.items())
    ]


def scan(request: dict[str, Any]) -> Iterator[tuple[int, Event | None]]:
    """Search the request's files in order; yield (position in the file list, event or None) per file.

    The request holds `pattern`, `flags`, `files` (a list of (index, absolute path)), `context`, `max_lines`
    (how many match lines to detail, over all files) and `max_bytes` (larger files are reported, not read).
    """
    regex = re.compile(request["pattern"], request["flags"])
    budget: int = request["max_lines"]
    for position, (index, path) in enumerate(request["files"]):
        data = read_regular(path, request["max_bytes"], skip_binary=True)
        if isinstance(data, int):
            yield position, ("big", index, data)
            continue
        if not data:
            yield position, None
            continue
        text = decode(data)
        cells = (
            notebook_lines(text, request.get("outputs", False)) if path.endswith(NOTEBOOK_SUFFIX) else None
        )
        if cells is not None:
            text = "".join(line + "\n" for _, line in cells)
        found = match_lines(regex, text)
        if not found:
            yield position, None
            continue
        lines = shown_lines(text, found, request["context"], budget) if budget > 0 else []
        budget -= sum(1 for _, is_match, _ in lines if is_match)
        if cells is None:
            yield position, ("hits", index, len(found), lines)
        else:  # the lines are numbered in the cells' joined text; the labels say where each one is
            yield position, ("hits", index, len(found), lines, {n: cells[n - 1][0] for n, _, _ in lines})


def serve() -> None:
    """Worker loop: for each pickled request, stream ("batch", events, files done) then ("done", files)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = pickle.load(stdin)  # noqa: S301 - sent by the parent process only
        except (EOFError, OSError):
            return
        try:
            events: list[Event] = []
            done = 0
            flushed = time.monotonic()
            for position, event in scan(request):
                done = position + 1
                if event is not None:
                    events.append(event)
                if time.monotonic() - flushed > 0.05:
                    pickle.dump(("batch", events, done), stdout, pickle.HIGHEST_PROTOCOL)
                    stdout.flush()
                    events, flushed = [], time.monotonic()
            pickle.dump(("batch", events, done), stdout, pickle.HIGHEST_PROTOCOL)
            pickle.dump(("done", done), stdout, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # reported to the parent, which turns it into a tool error
            pickle.dump(("error", f"{type(exc).__name__}: {exc}"), stdout, pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    serve()
