"""A changed notebook written by splicing: only the bytes of the changed cell are rewritten.

The file's text is scanned with the JSON decoder itself (`raw_decode`), which says where the "cells" array and
each cell begin and end. An edit rewrites one cell's "source" value (any other change, that cell); an insert
writes the new cell between two others in its neighbour's layout (whitespace, separators, key order, how its
source is split); a delete takes out one cell and one separator. Strings are written as the file writes them:
non-ASCII text raw unless the file escapes it, `\\u` escapes in upper case if the file's are. Every other byte
stays as it was, whatever wrote the file: compact one-line JSON, short arrays on one line, hand-made
whitespace. The caller checks that the result parses to exactly the intended notebook.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["splice"]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
_LOWER_U = re.compile(r"(\\\\)|\\u([0-9a-f]{4})")
_DECODER = json.JSONDecoder()
_NEARBY = 20  # cells looked at for a layout to copy


@dataclass(frozen=True, slots=True)
class _Member:
    key: str
    start: int  # of the key
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class _Span:
    """A JSON container in the text: where it starts and ends, and its items' (start, end)."""

    start: int
    end: int
    items: list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class _Strings:
    """How the file writes strings: non-ASCII escaped or raw, and `\\u` escapes in upper or lower case."""

    ascii_only: bool
    upper: bool

    def dump(self, value: str) -> str:
        text = json.dumps(value, ensure_ascii=self.ascii_only)
        if self.upper and "\\u" in text:
            text = _LOWER_U.sub(lambda m: m.group(1) or "\\u" + m.group(2).upper(), text)
        return text


@dataclass(frozen=True, slots=True)
class _ListStyle:
    """The whitespace of a list of strings: after '[', between items (with the comma), before ']'."""

    open: str
    sep: str
    close: str

    def render(self, items: list[str], strings: _Strings) -> str:
        if not items:
            return "[]"
        return "[" + self.open + self.sep.join(strings.dump(item) for item in items) + self.close + "]"


def splice(text: str, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """`text`, which parses to `old`, changed into `new` by rewriting only what differs: one cell's source (or
    that cell), one cell inserted or one deleted. None when the change is none of these, or the text cannot be
    followed; the caller then writes the whole file."""
    try:
        return _splice(text, old, new)
    except (ValueError, IndexError, KeyError, TypeError, RecursionError):
        return None


def _splice(text: str, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    if {k: v for k, v in old.items() if k != "cells"} != {k: v for k, v in new.items() if k != "cells"}:
        return None
    before, after = old["cells"], new["cells"]
    array = _cells_array(text)
    if array is None or len(array.items) != len(before):
        return None
    strings = _strings(text)
    k = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a is not b and a != b), None)
    if len(after) == len(before):
        if k is None or before[k + 1 :] != after[k + 1 :]:
            return None
        return _edit(text, array, k, before[k], after[k], strings)
    if len(after) == len(before) + 1:
        k = len(before) if k is None else k
        if before[k:] != after[k + 1 :]:
            return None
        return _insert(text, array, k, after[k], before, strings)
    if len(after) == len(before) - 1:
        k = len(after) if k is None else k
        if before[k + 1 :] != after[k:]:
            return None
        return _delete(text, array, k)
    return None


# ------------------------------------------------------------------------------------------------ changes


def _edit(
    text: str, array: _Span, k: int, old: dict[str, Any], new: dict[str, Any], strings: _Strings
) -> str | None:
    start, end = array.items[k]
    members = _members(text, start)
    source = [m for m in members if m.key == "source"]
    others_same = {key: v for key, v in old.items() if key != "source"} == {
        key: v for key, v in new.items() if key != "source"
    }
    if (
        source
        and others_same
        and list(old) == list(new)
        and type(old.get("source")) is type(new.get("source"))
    ):
        m = source[-1]
        value = new["source"]
        if isinstance(value, str):
            rendered = strings.dump(value)
        else:
            style = _source_style(text, array, k, members, m, len(value))
            rendered = style.render(value, strings)
        return text[: m.value_start] + rendered + text[m.value_end :]
    cell = _render_cell(text, array, new, k, strings, template=k)
    return None if cell is None else text[:start] + cell + text[end:]


def _insert(
    text: str, array: _Span, k: int, cell: dict[str, Any], cells: list[dict[str, Any]], strings: _Strings
) -> str | None:
    n = len(array.items)
    if n == 0:
        return None  # no neighbour to take a layout from
    template = _neighbour(cells, k, str(cell.get("cell_type")))
    block = _render_cell(text, array, cell, k, strings, template=template)
    if block is None:
        return None
    if n >= 2:
        sep = _usual([text[a[1] : b[0]] for a, b in itertools.pairwise(array.items)])
    else:
        sep = "," + text[array.start + 1 : array.items[0][0]]
    if k < n:
        at = array.items[k][0]
        return text[:at] + block + sep + text[at:]
    at = array.items[-1][1]
    return text[:at] + sep + block + text[at:]


def _delete(text: str, array: _Span, k: int) -> str:
    items = array.items
    if len(items) == 1:
        return text[: array.start] + "[]" + text[array.end :]
    if k < len(items) - 1:
        return text[: items[k][0]] + text[items[k + 1][0] :]
    return text[: items[k - 1][1]] + text[items[k][1] :]


def _usual(texts: list[str]) -> str:
    """The most common of `texts` (the first of those as common): one hand-made oddity is not copied."""
    return Counter(texts).most_common(1)[0][0]


def _neighbour(cells: list[dict[str, Any]], k: int, cell_type: str) -> int:
    """The cell whose layout a new cell at `k` takes: the nearest of its type, else the one before it."""
    order = sorted(range(len(cells)), key=lambda i: (abs(i - (k - 0.5)), i))
    same = [i for i in order if cells[i].get("cell_type") == cell_type]
    return same[0] if same else order[0]


# ------------------------------------------------------------------------------------------------ rendering


def _render_cell(
    text: str, array: _Span, cell: dict[str, Any], k: int, strings: _Strings, template: int
) -> str | None:
    """`cell` written in the layout of cell `template`: its whitespace, separators and key order."""
    start, _ = array.items[template]
    members = _members(text, start)
    if len(members) < 2:
        return None
    key_sep = _usual([text[m.key_end : m.value_start] for m in members])
    sep = _usual([text[a.value_end : b.start] for a, b in itertools.pairwise(members)])
    opening = text[start + 1 : members[0].start]
    closing = text[members[-1].value_end : _skip(text, members[-1].value_end)]
    template_keys = [m.key for m in members]
    if template_keys == sorted(template_keys):
        keys = sorted(cell)
    else:
        keys = [key for key in template_keys if key in cell]
        keys += sorted(key for key in cell if key not in template_keys)
    source_member = next((m for m in members if m.key == "source"), None)
    parts = []
    for key in keys:
        value = cell[key]
        if key == "source" and isinstance(value, list):
            style = _source_style(text, array, template, members, source_member, len(value))
            rendered = style.render(value, strings)
        elif isinstance(value, str):
            rendered = strings.dump(value)
        elif value in ({}, []) or not isinstance(value, (dict, list)):
            rendered = json.dumps(value)
        else:
            return None  # a nested value new cells never have: let the whole file be written
        parts.append(strings.dump(key) + key_sep + rendered)
    return "{" + opening + sep.join(parts) + closing + "}"


def _source_style(
    text: str, array: _Span, k: int, members: list[_Member], member: _Member | None, count: int
) -> _ListStyle:
    """How cell `k` should write a source list of `count` lines: as its own list is written if that shows it,
    else as the nearest cell with a longer list writes it, else one indent deeper than its keys."""
    own = _list_style(text, member.value_start) if member is not None else None
    if own is not None and (own.sep or count <= 1):
        return own
    for i in sorted(range(len(array.items)), key=lambda i: abs(i - k))[:_NEARBY]:
        other = _source_of(text, array.items[i][0])
        if other is not None and other.sep:
            return other
    if own is not None:
        return _ListStyle(
            own.open, "," + (own.open if "\n" in own.open else _inline_sep(text, members)), own.close
        )
    return _derived_style(text, array.items[k][0], members)


def _source_of(text: str, cell_start: int) -> _ListStyle | None:
    member = next((m for m in reversed(_members(text, cell_start)) if m.key == "source"), None)
    return None if member is None else _list_style(text, member.value_start)


def _list_style(text: str, start: int) -> _ListStyle | None:
    """The whitespace of the list at `start` (no `sep` if it has fewer than two items); None if empty or not a
    list."""
    if text[start] != "[":
        return None
    span = _array(text, start)
    if not span.items:
        return None
    opening = text[start + 1 : span.items[0][0]]
    closing = text[span.items[-1][1] : span.end - 1]
    sep = text[span.items[0][1] : span.items[1][0]] if len(span.items) > 1 else ""
    return _ListStyle(opening, sep, closing)


def _inline_sep(text: str, members: list[_Member]) -> str:
    """The file's separator on one line: ', ' or ',' as its objects have it, else ', '."""
    if len(members) > 1:
        between = text[members[0].value_end : members[1].start]
        if "\n" not in between:
            return between.lstrip(",")
    return " "


def _derived_style(text: str, cell_start: int, members: list[_Member]) -> _ListStyle:
    """A multi-line list one indent deeper than the cell's keys (or a one-line list in a one-line cell)."""
    opening = text[cell_start + 1 : members[0].start]
    if "\n" not in opening:
        return _ListStyle("", "," + _inline_sep(text, members), "")
    newline = "\r\n" if "\r\n" in opening else "\n"
    key_indent = opening.rsplit("\n", 1)[1]
    line_start = text.rfind("\n", 0, cell_start) + 1
    cell_indent = text[line_start:cell_start]
    unit = key_indent[len(cell_indent) :] if key_indent.startswith(cell_indent) else " "
    item_indent = key_indent + (unit or " ")
    return _ListStyle(newline + item_indent, "," + newline + item_indent, newline + key_indent)


# ------------------------------------------------------------------------------------------------ scanning


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _cells_array(text: str) -> _Span | None:
    """The top-level "cells" array (the last one, as json.loads takes the last of repeated keys)."""
    pos = _skip(text, 0)
    if text[pos] != "{":
        return None
    found = None
    pos = _skip(text, pos + 1)
    while text[pos] != "}":
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] != ":":
            return None
        pos = _skip(text, pos + 1)
        if key == "cells" and text[pos] == "[":
            found = _array(text, pos)
            pos = found.end
        else:
            _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return found


def _array(text: str, start: int) -> _Span:
    items: list[tuple[int, int]] = []
    pos = _skip(text, start + 1)
    while text[pos] != "]":
        _, end = _DECODER.raw_decode(text, pos)
        items.append((pos, end))
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif text[pos] != "]":
            raise ValueError("not a JSON array")
    return _Span(start, pos + 1, items)


def _members(text: str, start: int) -> list[_Member]:
    """The members of the object at `start`, with where each key and value is."""
    if text[start] != "{":
        raise ValueError("not a JSON object")
    members = []
    pos = _skip(text, start + 1)
    while text[pos] != "}":
        key, key_end = _DECODER.raw_decode(text, pos)
        colon = _skip(text, key_end)
        if text[colon] != ":" or not isinstance(key, str):
            raise ValueError("not a JSON object")
        value_start = _skip(text, colon + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, pos, key_end, value_start, value_end))
        pos = _skip(text, value_end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif text[pos] != "}":
            raise ValueError("not a JSON object")
    return members


def _strings(text: str) -> _Strings:
    escapes = [m.group(1) for m in _ESCAPE.finditer(text) if m.group(1)]
    non_ascii = [e for e in escapes if int(e, 16) >= 0x80]
    ascii_only = text.isascii() and bool(non_ascii)
    letters = "".join(c for e in escapes for c in e if c.isalpha())
    upper = bool(letters) and letters.isupper()
    return _Strings(ascii_only=ascii_only, upper=upper)
