"""What apply_patch says when a hunk cannot be placed: which hunk, why, where it could go, and what to do."""

from __future__ import annotations

from architect_nb.tools.filesystem.textmatch import closest_window, loose, numbered
from architect_nb.tools.patch.filelines import FileLines
from architect_nb.tools.patch.parse import Hunk

__all__ = ["HunkError", "bare", "listed", "mismatch", "order", "rivals"]

_SHOWN_LINES = 15
_LISTED = 10


class HunkError(ValueError):
    """A hunk cannot be placed. The message names it and says what to do.

    `ambiguous` is set when the hunk fits several places, or only out of order: then no other applier (GNU
    patch's nearest-offset rule) may have a go either.
    """

    def __init__(self, message: str, *, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous


def listed(starts: list[int]) -> str:
    """'line 3' or 'lines 3, 17 and 40' (1-based), at most ten of them."""
    shown = [str(s + 1) for s in starts[:_LISTED]]
    more = f" and {len(starts) - _LISTED} more" if len(starts) > _LISTED else ""
    if len(shown) == 1:
        return f"line {shown[0]}{more}"
    return f"lines {', '.join(shown[:-1])}{',' if more else ''} {'and ' if not more else ''}{shown[-1]}{more}"


def rivals(hunk: Hunk, header: int | None, places: list[int], total: int, shown: str) -> str:
    """The hunk fits `places` about as well as each other."""
    others = " (nor do the other hunks' places)" if total > 1 else ""
    return (
        f"Hunk {hunk.number} of {total} ({hunk.header}) fits '{shown}' at {listed(places)}, and its header, "
        f"which names line {(header or 0) + 1}, does not tell which is meant{others}. Fix the header's "
        "line numbers so they name the right place, or add context lines found there only. "
        "No hunk was applied; the file is unchanged."
    )


def bare(hunk: Hunk, fits: list[int], total: int, shown: str) -> str:
    """A hunk without line numbers whose lines fit several places."""
    return (
        f"Hunk {hunk.number} of {total} ({hunk.header}) has no line numbers and its lines occur "
        f"{len(fits)} times in '{shown}' ({listed(fits)}). Add more context lines or give "
        "'@@ -start,count +start,count @@' headers. No hunk was applied; the file is unchanged."
    )


def order(hunk: Hunk, places: list[int], total: int, shown: str) -> str:
    """The hunk fits only before the end of the previous one."""
    return (
        f"Hunk {hunk.number} of {total} ({hunk.header}) matches '{shown}' only at {listed(places)}, before "
        "the end of the previous hunk. Hunks must be in file order and must not overlap. "
        "No hunk was applied; the file is unchanged."
    )


def mismatch(f: FileLines, hunk: Hunk, expected: int | None, total: int, shown: str) -> str:
    """The hunk's lines are nowhere in the file: what it expects next to what is there."""
    old = hunk.old
    near = f" near line {expected + 1}" if expected is not None else ""
    parts = [
        f"Hunk {hunk.number} of {total} ({hunk.header}) does not apply to '{shown}': its context and removed "
        f"lines were not found{near}. No hunk was applied; the file is unchanged.",
        "The hunk expects:",
    ]
    first = (hunk.old_start or 1) if hunk.old_start is not None else 1
    parts.append(numbered([f"{line.kind}{line.text}" for line in old[:_SHOWN_LINES]], first))
    start, ratio = closest_window(f.lines, [line.text for line in old], hint=expected)
    if ratio >= 0.3:
        shown_lines = f.lines[start : start + min(len(old), _SHOWN_LINES)]
        parts.append(f"The file has, at lines {start + 1}-{start + len(shown_lines)}:")
        parts.append(numbered([" " + line for line in shown_lines], start + 1))
        for k, line in enumerate(old[: len(shown_lines)]):
            have = f.contents[start + k]
            if have != line.text:
                parts.append(
                    f"First difference, line {start + k + 1}: expected {line.text!r}, found {have!r}."
                )
                break
    new = [line.text for line in hunk.new]
    if new and (f.find_all(new, False) or f.find_all([loose(t) for t in new], True)):
        parts.append("Its new lines are already in the file: the patch may have been applied already.")
    parts.append("Re-read the file and make the patch from its current text, or use edit_file.")
    return "\n".join(parts)
