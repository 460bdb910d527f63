"""The file a patch is applied to, as lines: whole, split into content and ending, and loosely normalised."""

from __future__ import annotations

import re

from architect_nb.tools.filesystem.fileio import TextFile
from architect_nb.tools.filesystem.textmatch import loose, split_ending, split_lines

__all__ = ["FileLines", "heading_agrees"]

_HEADING = re.compile(r"[A-Za-z_$]")  # git's default function context: a line starting like an identifier


def heading_agrees(line: str, heading: str) -> bool:
    """Whether `heading` (a hunk header's text after '@@') is `line` as git writes it (cut to 80 bytes,
    trailing whitespace dropped), or its start as `diff -p` writes it (cut to 40 characters)."""
    have, want = _key(line), _key(heading)
    return have == want or (len(want) >= 40 and have.startswith(want))


def _key(text: str) -> bytes:
    return text.encode("utf-8", "replace")[:80].rstrip()


class FileLines:
    """`lines` keep their endings; `contents` and `endings` split them; `view(True)` is the loose form."""

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
        self._headings: list[int] | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def view(self, is_loose: bool) -> list[str]:
        if is_loose not in self._views:
            self._views[is_loose] = [loose(c) for c in self.contents]
        return self._views[is_loose]

    def heading_before(self, p: int) -> str:
        """The heading git's diff gives a hunk starting at line `p`: the nearest line above it that starts
        with a letter, '_' or '$' ('' if none)."""
        if self._headings is None:
            last, nearest = -1, []
            for i, content in enumerate(self.contents):
                nearest.append(last)
                if _HEADING.match(content):
                    last = i
            nearest.append(last)
            self._headings = nearest
        k = self._headings[min(p, len(self._headings) - 1)]
        return self.contents[k] if k >= 0 else ""

    def matches_at(self, p: int, block: list[str], is_loose: bool) -> bool:
        view = self.view(is_loose)
        return p >= 0 and p + len(block) <= len(view) and view[p : p + len(block)] == block

    def find_all(self, block: list[str], is_loose: bool) -> list[int]:
        """Every start where `block` matches, in order, found through its longest (most telling) line."""
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
