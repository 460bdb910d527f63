"""Literal text that every match of a Python regex must contain, so `rg` can pick the files worth a `re` pass.

`required_needles` reads the parsed pattern (`re._parser`, the standard library's own parser) and returns a
set of strings such that any file holding a match holds at least one of them. It returns None when it finds
none, or when the private parser is missing; callers then scan every file: slower, just as correct.

Case-insensitive literals are sent to `rg` as explicit character classes that list every character Python's
`re.IGNORECASE` treats as equal (`i` also matches `İ` and `ı`, `k` matches the Kelvin sign), so the prefilter
never drops a file that `re` would match.
"""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["CASE_FOLD_POOL", "Needles", "required_needles"]

_c: Any
_parser: Any
try:  # private, but stable since 3.11; without it the search is only slower
    _c = importlib.import_module("re._constants")
    _parser = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover
    _c = _parser = None

#: ASCII letters plus the non-ASCII characters `re.IGNORECASE` matches to one of them (a test checks this).
CASE_FOLD_POOL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u0130\u0131\u017f\u212a"
# Characters that cannot be found as raw bytes by rg in a file Python decodes (replacement char, BOM,
# surrogates), or that rg cannot take in an argument (NUL) or in a one-line literal (line ends).
_BREAKS = frozenset("\x00\n\r\ufeff\ufffd")
_MAX_ALTERNATIVES = 16
# Characters frequent in source code make weak needles; the rest count double.
_WEIGHTS = dict.fromkeys(" etaoinsrhldcu()._,:=\"'", 1.0) | dict.fromkeys("fmpgywbvk", 1.5)


@dataclass(frozen=True, slots=True)
class Needles:
    """Strings one of which every match contains; `ignore_case` if they are compared case-insensitively."""

    strings: tuple[str, ...]
    ignore_case: bool

    @property
    def score(self) -> float:
        """Higher is rarer: the weakest alternative's length, with uncommon characters counting more."""
        return min(sum(_WEIGHTS.get(ch, 2.0) for ch in s) for s in self.strings) - 0.1 * len(self.strings)

    def rg_args(self) -> list[str]:
        """Pattern arguments for `rg` that match at least wherever Python would."""
        if not self.ignore_case:
            return ["-F", *(arg for s in self.strings for arg in ("-e", s))]
        return [arg for s in self.strings for arg in ("-e", "".join(_rg_class(ch) for ch in s))]


@functools.cache
def _rg_class(ch: str) -> str:
    regex = re.compile(re.escape(ch), re.IGNORECASE)
    same = [c for c in dict.fromkeys(ch + CASE_FOLD_POOL) if regex.fullmatch(c)]
    escaped = "".join(f"\\x{{{ord(c):X}}}" for c in same)
    return escaped if len(same) == 1 else f"[{escaped}]"


def required_needles(pattern: str, flags: int = 0) -> Needles | None:
    """The best set of literals that every match of `pattern` contains, or None."""
    if _parser is None:
        return None
    try:
        parsed = _parser.parse(pattern, flags)
        return _sequence(list(parsed.data), bool(parsed.state.flags & re.IGNORECASE))
    except Exception:  # any surprise from a private parser means: no prefilter
        return None


def _best(a: Needles | None, b: Needles | None) -> Needles | None:
    if a is None:
        return b
    if b is None:
        return a
    return b if b.score > a.score else a


def _runs(chars: list[str], ignore_case: bool) -> list[Needles]:
    # Split a run of literal characters where rg could not look for it, and, ignoring case, at non-ASCII
    # characters: the fold classes are only known for ASCII.
    runs, current = [], ""
    for ch in chars:
        unusable = ch in _BREAKS or "\ud800" <= ch <= "\udfff" or (ignore_case and not ch.isascii())
        if unusable:
            runs.append(current)
            current = ""
        else:
            current += ch
    runs.append(current)
    return [Needles((run,), ignore_case) for run in runs if run]


def _sequence(items: list[tuple[Any, Any]], ignore_case: bool) -> Needles | None:
    best: Needles | None = None
    chars: list[str] = []
    repeats = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
    for op, av in items:
        if op is _c.LITERAL:
            chars.append(chr(av))
            continue
        for run in _runs(chars, ignore_case):
            best = _best(best, run)
        chars = []
        if op is _c.SUBPATTERN:
            _group, add, remove, sub = av
            scoped = (ignore_case or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            best = _best(best, _sequence(list(sub.data), scoped))
        elif op in repeats and av[0] >= 1:
            best = _best(best, _sequence(list(av[2].data), ignore_case))
        elif op is getattr(_c, "ATOMIC_GROUP", None):
            best = _best(best, _sequence(list(av.data), ignore_case))
        elif op is _c.ASSERT:  # a lookaround's text is in the file too
            best = _best(best, _sequence(list(av[1].data), ignore_case))
        elif op is _c.BRANCH:
            options = [_sequence(list(alt.data), ignore_case) for alt in av[1]]
            if all(options):
                strings = tuple(dict.fromkeys(s for opt in options if opt for s in opt.strings))
                if len(strings) <= _MAX_ALTERNATIVES:
                    best = _best(best, Needles(strings, any(opt.ignore_case for opt in options if opt)))
    for run in _runs(chars, ignore_case):
        best = _best(best, run)
    return best
