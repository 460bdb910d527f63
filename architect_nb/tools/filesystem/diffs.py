"""Unified diffs of text changes, as the model, the approval screen and the transcript show them."""

from __future__ import annotations

import difflib

from architect_nb.tools.filesystem.textmatch import split_lines

__all__ = ["count_changes", "unified_diff"]

_NO_EOL = "\\ No newline at end of file"


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A `git diff`-style unified diff from `old` to `new` for `path`; empty if they are equal."""
    if old == new:
        return ""
    old_lines = split_lines(old)  # on "\n" only: a form feed or U+2028 inside a line is not a line break
    new_lines = split_lines(new)
    lines = []
    for line in difflib.unified_diff(old_lines, new_lines, f"a/{path}", f"b/{path}", n=context):
        if line.endswith(("\r\n", "\n")):
            lines.append(line.rstrip("\r\n") + "\n")
        else:
            lines.append(line + "\n" + _NO_EOL + "\n")
    return "".join(lines)


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
