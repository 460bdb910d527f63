"""Unified diffs of text changes, as the model, the approval screen and the transcript show them.

`unified_diff` finds the changes with difflib; `format_unified` writes them in the same form when the caller
already knows them (apply_patch does: its hunks say which lines changed), which costs nothing on a large file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from architect_nb.tools.filesystem.textmatch import split_lines

__all__ = ["Opcode", "count_changes", "format_unified", "unified_diff"]

#: difflib's form of a change: (tag, old start, old end, new start, new end); tag equal/replace/delete/insert.
Opcode = tuple[str, int, int, int, int]

_NO_EOL = "\\ No newline at end of file"


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A `git diff`-style unified diff from `old` to `new` for `path`; empty if they are equal."""
    if old == new:
        return ""
    old_lines = split_lines(old)  # on "\n" only: a form feed or U+2028 inside a line is not a line break
    new_lines = split_lines(new)
    opcodes = difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes()
    return format_unified(old_lines, new_lines, opcodes, path, context)


def format_unified(
    old_lines: Sequence[str], new_lines: Sequence[str], opcodes: Sequence[Opcode], path: str, context: int = 3
) -> str:
    """The unified diff (as `difflib.unified_diff` writes it) of lines whose changes `opcodes` give."""
    out: list[str] = []
    for group in _grouped(list(opcodes), context):
        if not out:
            out += [f"--- a/{path}\n", f"+++ b/{path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [_line(" ", line) for line in old_lines[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += [_line("-", line) for line in old_lines[i1:i2]]
            if tag in ("replace", "insert"):
                out += [_line("+", line) for line in new_lines[j1:j2]]
    return "".join(out)


def _line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line.rstrip("\r\n") + "\n"
    return f"{mark}{line}\n{_NO_EOL}\n"


def _range(start: int, stop: int) -> str:
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    return f"{beginning - 1 if not length else beginning},{length}"


def _grouped(codes: list[Opcode], n: int) -> Iterator[list[Opcode]]:
    """difflib's `get_grouped_opcodes`: the changes with `n` lines of context, split where far apart."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n + n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = [(tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)]
        else:
            group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def count_changes(diff: str) -> tuple[int, int]:
    """Lines added and removed in a unified diff (a removed `-- x` line is not a header)."""
    added = removed = 0
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk:
            continue
        elif line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        elif line.startswith(("diff ", "--- ")):
            in_hunk = False
    return added, removed
