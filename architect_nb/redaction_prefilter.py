"""Where in a long text a secret may be: one multi-pattern pass, so redaction's cost does not grow with the
number of secrets.

Each secret gives a few short anchors: the first characters of each of its encoded forms, and the last
characters of its raw value (for a value broken at a line end near its start); each key shape gives its
prefix. One Aho-Corasick pass (`ahocorasick_rs`, SIMD-accelerated) finds them; the redactor then searches only
a window around each hit, exactly as it would search the whole text. A hit that hides another anchor by
overlapping it still opens a window that covers the hidden one, so leftmost (non-overlapping) matching,
the fast kind, loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["ANCHOR_LEN", "Prefilter", "anchors"]

ANCHOR_LEN = 6  # the shortest secret; longer anchors would be no rarer in ordinary text


class Prefilter:
    """Finds the windows of a text that may hold one of the anchors; `reach` is how far from an anchor
    the secret it belongs to may extend."""

    def __init__(self, anchors: Iterable[str], reach: int) -> None:
        import ahocorasick_rs  # a native module; imported when the first secret is known

        self.reach = reach
        patterns = sorted({a for a in anchors if a})
        self._automaton: Any = (
            ahocorasick_rs.AhoCorasick(patterns, matchkind=ahocorasick_rs.MatchKind.LeftmostFirst)
            if patterns
            else None
        )

    def windows(self, text: str) -> list[tuple[int, int]]:
        """Disjoint `(start, end)` windows of `text` to search, in order; empty when no anchor is in it."""
        if self._automaton is None:
            return []
        windows: list[tuple[int, int]] = []
        reach, size = self.reach, len(text)
        for _pattern, start, end in self._automaton.find_matches_as_indexes(text):
            low, high = max(0, start - reach), min(size, end + reach)
            if windows and low <= windows[-1][1]:
                windows[-1] = (windows[-1][0], high)
            else:
                windows.append((low, high))
        return windows


def anchors(value: str, forms: Iterable[str]) -> set[str]:
    """A secret's anchors: the head of each form, and the tail of the raw value."""
    return {form[:ANCHOR_LEN] for form in forms} | {value[-ANCHOR_LEN:]}
