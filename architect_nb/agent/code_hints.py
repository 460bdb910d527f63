"""Code blocks cut from the model's answers under a `hints` teaching policy, as they stream.

Text outside fenced blocks passes through as it arrives. A fenced block (``` or ~~~) is held until it closes:
at most `limit` lines of code, it is shown; longer, a one-line note takes its place. A block the answer never
closes is judged at the end. Only fenced blocks are cut: indented code is rare in model answers.
"""

from __future__ import annotations

import re

__all__ = ["CodeBlockCutter", "cut_code_blocks"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def cut_code_blocks(text: str, limit: int) -> str:
    """`text` with its fenced code blocks longer than `limit` lines replaced by a note."""
    cutter = CodeBlockCutter(limit)
    return cutter.feed(text) + cutter.finish()


class CodeBlockCutter:
    """Feed streamed text in pieces; each call returns what may be shown now."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cut = 0  # blocks cut so far
        self._pending = ""  # the start of a line not yet shown: it may open a fence
        self._mid_line = False  # the line's start was shown: the rest of it passes through
        self._block: list[str] | None = None  # the open block's lines, its fence first
        self._fence = ""

    def feed(self, text: str) -> str:
        return "".join(self._take(piece) for piece in text.splitlines(keepends=True))

    def finish(self) -> str:
        """The end of the answer: what was held back, an unclosed block judged as it is."""
        rest, self._pending, self._mid_line = self._pending, "", False
        if self._block is None:
            return rest
        if rest:
            self._block.append(rest)
            if self._closes(rest):
                return self._close(closed=True)
        return self._close(closed=False)

    def _take(self, piece: str) -> str:
        """One piece holding at most one line end, at its end."""
        if self._mid_line:
            self._mid_line = not piece.endswith("\n")
            return piece
        self._pending += piece
        if not self._pending.endswith("\n"):
            if self._block is None and not _may_open(self._pending):
                shown, self._pending, self._mid_line = self._pending, "", True
                return shown
            return ""
        line, self._pending = self._pending, ""
        return self._line(line)

    def _line(self, line: str) -> str:
        if self._block is None:
            opened = _FENCE.match(line)
            if opened is None:
                return line
            self._block, self._fence = [line], opened.group(1)
            return ""
        self._block.append(line)
        return self._close(closed=True) if self._closes(line) else ""

    def _closes(self, line: str) -> bool:
        char, length = self._fence[0], len(self._fence)
        return re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{length},}}[ \t]*\n?", line) is not None

    def _close(self, *, closed: bool) -> str:
        block, self._block = self._block or [], None
        code_lines = len(block) - (2 if closed else 1)
        if code_lines <= self.limit:
            shown = "".join(block)
            return shown if shown.endswith("\n") or not closed else shown + "\n"
        self.cut += 1
        return (
            f"[A code block of {code_lines} lines was cut: the course's teaching policy 'hints' shows at "
            f"most {self.limit}.]\n"
        )


def _may_open(start: str) -> bool:
    """Whether a line beginning so could still open a fence (so it is held until its end)."""
    stripped = start.lstrip(" ")
    if len(start) - len(stripped) > 3:
        return False
    if not stripped:
        return True
    char = stripped[0]
    if char not in "`~":
        return False
    run = len(stripped) - len(stripped.lstrip(char))
    return run == len(stripped) or run >= 3  # still only fence characters, or a fence with its language
