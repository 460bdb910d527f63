"""Where in a long text a secret may be: one multi-pattern pass, so redaction's cost does not grow with the
number of secrets or of their encoded forms.

Each secret gives two or three short anchors: its longest run of letters and digits, which appears unchanged
in every encoded form, and the first and last characters of its raw value (for a value broken at a line
end); each key shape gives its prefix. Fewer than 64 patterns in all keep the SIMD search (Teddy) in use.
One Aho-Corasick pass (`ahocorasick_rs`) over the whole text finds them, leftmost
and non-overlapping, the fast kind. Around each hit a window is opened as wide as a secret can reach; a hit
that hides another anchor by overlapping it still opens a window that covers the hidden one. A second,
overlapping pass over each (small) window then says exactly whose anchors are in it, so the redactor
searches there only for those secrets' forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ANCHOR_LEN", "Prefilter", "Window", "anchors"]

ANCHOR_LEN = 6  # the shortest secret; longer anchors would be no rarer in ordinary text

#: (start, end, owners): a stretch of text and the owners (secret numbers, or -1 for key shapes) whose
#: anchors are in it.
Window = tuple[int, int, frozenset[int]]


class Prefilter:
    """Finds the windows of a text that may hold a secret; `owners` maps each anchor to whose it is, and
    `reach` is how far from an anchor the secret it belongs to may extend."""

    def __init__(self, owners: Mapping[str, Iterable[int]], reach: int) -> None:
        import ahocorasick_rs  # a native module; imported when the first redactor is built

        self.reach = reach
        self._patterns = sorted(a for a in owners if a)
        self._owners = [frozenset(owners[a]) for a in self._patterns]
        self._fast: Any = None
        self._every: Any = None
        if self._patterns:
            kind = ahocorasick_rs.MatchKind
            self._fast = ahocorasick_rs.AhoCorasick(self._patterns, matchkind=kind.LeftmostFirst)
            self._every = ahocorasick_rs.AhoCorasick(self._patterns, matchkind=kind.Standard)

    def windows(self, text: str) -> list[Window]:
        """Disjoint windows of `text` to search, in order; empty when no anchor is in it."""
        if self._fast is None:
            return []
        try:
            found = self._fast.find_matches_as_indexes(text)
        except UnicodeEncodeError:
            # Lone surrogates (bytes decoded with surrogateescape) cannot cross into Rust as UTF-8. No anchor
            # holds one, so each becomes U+FFFD: one character for one, and every index stays the same.
            text = _SURROGATES.sub("\ufffd", text)
            found = self._fast.find_matches_as_indexes(text)
        spans: list[tuple[int, int]] = []
        reach, size = self.reach, len(text)
        for _pattern, start, end in found:
            low, high = max(0, start - reach), min(size, end + reach)
            if spans and low <= spans[-1][1]:
                spans[-1] = (spans[-1][0], high)
            else:
                spans.append((low, high))
        return [(low, high, self._whose(text[low:high])) for low, high in spans]

    def _whose(self, piece: str) -> frozenset[int]:
        found: set[int] = set()
        for pattern, _start, _end in self._every.find_matches_as_indexes(piece, overlapping=True):
            found |= self._owners[pattern]
        return frozenset(found)


def anchors(value: str, forms: Iterable[str]) -> set[str]:
    """A secret's anchors: its longest run of ASCII letters and digits, which every encoding leaves as it is
    (or, when it has no run of 4, the head of each form); and the head and tail of the raw value, of which
    one survives a line end breaking it."""
    found = {value[:ANCHOR_LEN], value[-ANCHOR_LEN:]}
    run = max(_PLAIN.findall(value), key=len, default="")
    if run == value:
        return found
    if len(run) >= _MIN_RUN:
        return found | {run[: ANCHOR_LEN + 2]}
    return found | {form[:_MIN_RUN] for form in forms}  # short heads: the encodings agree on more of them


_PLAIN = re.compile(r"[A-Za-z0-9]+")
_SURROGATES = re.compile("[\ud800-\udfff]")
_MIN_RUN = 4
