"""Applying parsed hunks to a file's text: all of them or none, byte for byte.

Each hunk is placed where its context and removed lines match exactly, nearest to the line its header names
(GNU patch's offset search), and, failing that, where they match once trailing whitespace and line endings
are ignored. Lines the patch keeps or adds take the file's line endings, so a CRLF file stays CRLF under an LF
patch; a patch whose body carries its own CRs (a faithful diff of a CRLF file) is followed exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from architect_nb.tools.filesystem.fileio import TextFile
from architect_nb.tools.filesystem.textmatch import closest_window, loose, numbered, split_ending, split_lines
from architect_nb.tools.patch.parse import Hunk, PatchLine

__all__ = ["Applied", "HunkError", "apply_hunks"]

_SHOWN_LINES = 15


class HunkError(ValueError):
    """A hunk cannot be placed. The message names it and shows what it expected next to what is there.

    `ambiguous` is set when the hunk fits several places and none is clearly meant: then no other applier
    (GNU patch's nearest-offset rule) may have a go either.
    """

    def __init__(self, message: str, *, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous


@dataclass(frozen=True, slots=True, kw_only=True)
class Applied:
    text: str
    notes: tuple[str, ...]


class _Lines:
    """The file as lines: whole, split into content and ending, and (lazily) loosely normalised."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        if "\r" in text:
            pairs = [split_ending(line) for line in self.lines]
            self.contents = [content for content, _ in pairs]
            self.endings = [ending for _, ending in pairs]
        else:  # the common case, without a call per line
            self.contents = text.split("\n")
            if self.contents[-1]:
                self.endings = ["\n"] * (len(self.contents) - 1) + [""]
            else:
                self.contents.pop()
                self.endings = ["\n"] * len(self.contents)
        self.newline = TextFile(text=text).newline
        self._views: dict[bool, list[str]] = {False: self.contents}

    def view(self, is_loose: bool) -> list[str]:
        if is_loose not in self._views:
            self._views[is_loose] = [loose(c) for c in self.contents]
        return self._views[is_loose]

    def matches_at(self, p: int, block: list[str], is_loose: bool) -> bool:
        view = self.view(is_loose)
        return p >= 0 and p + len(block) <= len(view) and view[p : p + len(block)] == block

    def find_all(self, block: list[str], is_loose: bool) -> list[int]:
        """Every start where `block` matches, found through its longest (most telling) line."""
        view = self.view(is_loose)
        anchor = max(range(len(block)), key=lambda k: len(block[k]))
        found: list[int] = []
        i = anchor
        while True:
            try:
                i = view.index(block[anchor], i)
            except ValueError:
                return found
            if self.matches_at(i - anchor, block, is_loose):
                found.append(i - anchor)
            i += 1


def apply_hunks(text: str, hunks: list[Hunk], shown: str = "the file") -> Applied:
    """Apply every hunk to `text` and return the new text. Raises `HunkError`; then nothing is applied."""
    f = _Lines(text)
    cr_aware = any(line.cr for hunk in hunks for line in hunk.lines)
    out: list[str] = []
    open_ends: list[int] = []  # indexes in `out` of lines without an ending (only the last one may keep it)
    notes: list[str] = []
    pos = 0  # first line of the file not yet copied to `out`
    delta = 0  # how far the previous hunk landed from where its header said
    for hunk in hunks:
        expected = _expected(hunk, delta)
        p, is_loose = _place(f, hunk, pos, expected=expected, total=len(hunks), shown=shown)
        if hunk.recounted and hunk.declared is not None:
            notes.append(
                f"hunk {hunk.number}: header counts -{hunk.declared[0]} +{hunk.declared[1]} did not match "
                f"its body (-{hunk.counts[0]} +{hunk.counts[1]}); recounted."
            )
        if expected is not None and p != expected:
            notes.append(f"hunk {hunk.number} applied at line {p + 1} (offset {p - expected:+d} lines).")
            delta += p - expected
        if is_loose:
            notes.append(f"hunk {hunk.number} matched only after ignoring trailing whitespace/line endings.")
        out.extend(f.lines[pos:p])
        if p > pos and not f.endings[p - 1]:
            open_ends.append(len(out) - 1)
        pos = _emit(f, hunk, p, out, open_ends, cr_aware)
    out.extend(f.lines[pos:])
    for i in open_ends:  # a line without its end (the old last line) when others now follow it
        if i < len(out) - 1:
            out[i] += f.newline
    return Applied(text="".join(out), notes=tuple(notes))


def _expected(hunk: Hunk, delta: int) -> int | None:
    if hunk.old_start is None:
        return None
    start = hunk.old_start if not hunk.old else hunk.old_start - 1
    return max(0, start + delta)


def _emit(f: _Lines, hunk: Hunk, p: int, out: list[str], open_ends: list[int], cr_aware: bool) -> int:
    q = p
    last_eol = ""
    for k, line in enumerate(hunk.lines):
        if line.kind == " ":
            out.append(f.lines[q])
            if not f.endings[q]:
                open_ends.append(len(out) - 1)
            last_eol = f.endings[q] or last_eol
            q += 1
        elif line.kind == "-":
            last_eol = f.endings[q] or last_eol
            q += 1
        else:
            ending = _ending(f, hunk.lines, k, q=q, last_eol=last_eol, cr_aware=cr_aware)
            if not ending:
                open_ends.append(len(out))
            out.append(line.text + ending)
    return q


def _ending(f: _Lines, lines: list[PatchLine], k: int, *, q: int, last_eol: str, cr_aware: bool) -> str:
    """The ending of added line `k`: the patch's own if it carries CRs, else its neighbours' in the file."""
    line = lines[k]
    if line.no_eol:
        return ""
    if cr_aware:
        return "\r\n" if line.cr else "\n"
    if last_eol:
        return last_eol
    ahead = q
    for later in lines[k + 1 :]:
        if later.kind != "+":
            if ahead < len(f.endings) and f.endings[ahead]:
                return f.endings[ahead]
            ahead += 1
    return f.newline


def _place(
    f: _Lines, hunk: Hunk, pos: int, *, expected: int | None, total: int, shown: str
) -> tuple[int, bool]:
    """Where the hunk's old lines start in the file, and whether they matched only loosely."""
    old = [line.text for line in hunk.old]
    if not old:
        return _place_insertion(f, hunk, pos, expected, total), False
    if expected is not None and expected >= pos and f.matches_at(expected, old, False):
        return expected, False
    earlier: list[int] = []
    for is_loose in (False, True):
        block = [loose(t) for t in old] if is_loose else old
        found = f.find_all(block, is_loose)
        usable = [p for p in found if p >= pos]
        earlier += [p for p in found if p < pos]
        if not usable:
            continue
        if expected is None:
            if len(usable) > 1:
                where = ", ".join(str(p + 1) for p in usable[:10])
                raise HunkError(
                    f"Hunk {hunk.number} of {total} ({hunk.header}) has no line numbers and its lines occur "
                    f"{len(usable)} times in '{shown}' (lines {where}). Add more context lines or give "
                    "'@@ -start,count +start,count @@' headers. No hunk was applied; the file is unchanged.",
                    ambiguous=True,
                )
            return usable[0], is_loose
        return _nearest(usable, expected, hunk, total, shown), is_loose
    if earlier:
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) matches '{shown}' only at line {earlier[0] + 1}, "
            "before the end of the previous hunk. Hunks must be in file order and must not overlap. "
            "No hunk was applied; the file is unchanged.",
            ambiguous=True,
        )
    raise HunkError(_mismatch(f, hunk, expected, total, shown))


def _nearest(usable: list[int], expected: int, hunk: Hunk, total: int, shown: str) -> int:
    """The match nearest to where the header says, unless another is about as near: then it is refused."""
    ranked = sorted(usable, key=lambda p: (abs(p - expected), p))
    if len(ranked) > 1 and abs(ranked[1] - expected) < 3 * abs(ranked[0] - expected):
        where = " and ".join(str(p + 1) for p in sorted(ranked[:2]))
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) fits '{shown}' at lines {where}, and its "
            f"header (line {expected + 1}) is too far from both to tell which is meant. Fix the header's "
            "line numbers or add context lines. No hunk was applied; the file is unchanged.",
            ambiguous=True,
        )
    return ranked[0]


def _place_insertion(f: _Lines, hunk: Hunk, pos: int, expected: int | None, total: int) -> int:
    if expected is None:
        if not f.lines:
            return 0
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) has neither line numbers nor context lines, so "
            "there is nothing to place it by. Add a few unchanged lines around the change. "
            "No hunk was applied; the file is unchanged."
        )
    if not pos <= expected <= len(f.lines):
        raise HunkError(
            f"Hunk {hunk.number} of {total} ({hunk.header}) inserts after line {expected}, but "
            + (
                f"the file has only {len(f.lines)} lines."
                if expected > len(f.lines)
                else "that is inside the previous hunk."
            )
            + " Add context lines so it can be placed. No hunk was applied; the file is unchanged."
        )
    return expected


def _mismatch(f: _Lines, hunk: Hunk, expected: int | None, total: int, shown: str) -> str:
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
