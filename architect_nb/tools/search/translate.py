"""A looser twin of a Python regex for `rg -U`, to rule files out when the regex has no required literal.

`rg_superset(pattern, flags)` returns a regex in rg's syntax that matches at least wherever Python's `re`
would match in the decoded file (and maybe elsewhere): the files it rules out cannot hold a match. Exact parts
are kept exact (literals, plain character classes, `\\d`, repetitions, alternation); everything whose meaning
differs between the engines is widened: a case-folded or negated class, `\\w` and `\\s` become "any
character", anchors and lookarounds are dropped. "Any character" is 1 to 4 arbitrary bytes, because Python
sees one U+FFFD where a file has undecodable bytes that rg's `.` would refuse. Backreferences and
conditionals give up (None), and so does anything unexpected from the private parser.
"""

from __future__ import annotations

import re
from typing import Any

from architect_nb.tools.search.literals import _c, _parser, _rg_class

__all__ = ["rg_superset"]

_ANY = r"(?s-u:[\x00-\xFF]{1,4})"
_ANY_BUT_NEWLINE = r"(?-u:[^\n]{1,4})"
_MAX_COUNT = 32
_MAX_WIDE_COUNT = 16
# "Any character" as one byte, for repetitions of it.
_BYTES = {_ANY: r"(?s-u:[\x00-\xFF])", _ANY_BUT_NEWLINE: r"(?-u:[^\n])"}


class _NoTwinError(Exception):
    pass


def rg_superset(pattern: str, flags: int = 0) -> str | None:
    """An rg regex (for `rg -U`) matching wherever `re.compile(pattern, flags)` matches, or None."""
    if _parser is None:
        return None
    try:
        parsed = _parser.parse(pattern, flags)
        state = parsed.state.flags
        regex = _sequence(list(parsed.data), bool(state & re.IGNORECASE), bool(state & re.DOTALL))
    except _NoTwinError:
        return None
    except Exception:  # any surprise from a private parser means: no prefilter
        return None
    # Exact parts are written \x{...} or \d; without any, the twin matches nearly anything: no use.
    return regex if "\\x{" in regex or "\\d" in regex else None


def _char(code: int, ignore_case: bool) -> str:
    ch = chr(code)
    if not _exact(code, code):
        return _ANY  # U+FFFD may stand for undecodable bytes; a surrogate never occurs in decoded text
    if ignore_case:
        return _rg_class(ch) if ch.isascii() else _ANY
    return f"\\x{{{code:X}}}"


def _exact(low: int, high: int) -> bool:
    """True if no code point in low..high is U+FFFD or a surrogate, which decoded text shows differently."""
    return not (low <= 0xFFFD <= high or (low <= 0xDFFF and high >= 0xD800))


def _set(items: list[tuple[Any, Any]], ignore_case: bool) -> str:
    if ignore_case:
        return _ANY
    parts = []
    for op, av in items:
        if op is _c.LITERAL and _exact(av, av):
            parts.append(f"\\x{{{av:X}}}")
        elif op is _c.RANGE and _exact(*av):
            parts.append(f"\\x{{{av[0]:X}}}-\\x{{{av[1]:X}}}")
        elif op is _c.CATEGORY and av is _c.CATEGORY_DIGIT:
            parts.append(r"\d")  # Unicode Nd in both engines
        else:
            return _ANY  # negation, case folding, \w, \s...: widen to any character
    return "[" + "".join(parts) + "]"


def _sequence(items: list[tuple[Any, Any]], ignore_case: bool, dotall: bool) -> str:
    out = []
    repeats = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
    for op, av in items:
        if op is _c.LITERAL:
            out.append(_char(av, ignore_case) if av != 10 else r"\n")
        elif op is _c.NOT_LITERAL:
            out.append(_ANY)
        elif op is _c.ANY:
            out.append(_ANY if dotall else _ANY_BUT_NEWLINE)
        elif op is _c.IN:
            out.append(_set(list(av), ignore_case))
        elif op in repeats:
            low, high, sub = av
            body = _sequence(list(sub.data), ignore_case, dotall)
            # Large counts make rg slow (its automata grow with them); fewer repetitions match more.
            cap = _MAX_WIDE_COUNT if body in _BYTES else _MAX_COUNT
            bound = "" if high is _c.MAXREPEAT or high > cap else str(high)
            if body in _BYTES:  # n characters are n to 4n bytes: one byte class, not n nested {1,4}
                out.append(f"{_BYTES[body]}{{{min(low, cap)},{bound and 4 * high}}}")
            else:
                out.append(f"(?:{body}){{{min(low, cap)},{bound}}}")
        elif op is _c.BRANCH:
            alternatives = [_sequence(list(alt.data), ignore_case, dotall) for alt in av[1]]
            out.append("(?:" + "|".join(alternatives) + ")")
        elif op is _c.SUBPATTERN:
            _group, add, remove, sub = av
            scoped_case = (ignore_case or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            scoped_dot = (dotall or bool(add & re.DOTALL)) and not remove & re.DOTALL
            out.append(f"(?:{_sequence(list(sub.data), scoped_case, scoped_dot)})")
        elif op is getattr(_c, "ATOMIC_GROUP", None):
            out.append(f"(?:{_sequence(list(av.data), ignore_case, dotall)})")
        elif op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue  # anchors, \b and lookarounds only narrow a match
        else:  # backreferences, conditionals, anything new
            raise _NoTwinError
    return "".join(out)
