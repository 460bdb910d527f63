"""Shell-style globs as the model writes them: `*.py`, `src/**/*.ts`, `test_*.{py,ipynb}`, `README*`.

A pattern without `/` matches a file's name; a pattern with `/` matches its path relative to the search root.
`**` spans folders, `*` and `?` stay within one, `[...]` is a class and `{a,b}` an alternation.
"""

from __future__ import annotations

import functools
import re

__all__ = ["GlobError", "compile_glob", "glob_matches"]

_MAX_PATTERN = 1000


class GlobError(ValueError):
    """A glob cannot be compiled; the message names the problem."""


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile `pattern` to a regex matching a whole relative path (or name, if the pattern has no '/')."""
    if not pattern:
        raise GlobError("The glob is empty; use '*' to match every file.")
    if len(pattern) > _MAX_PATTERN:
        raise GlobError(f"The glob is {len(pattern)} characters long; the limit is {_MAX_PATTERN}.")
    if "\x00" in pattern:
        raise GlobError("The glob contains a NUL byte.")
    body = _translate(pattern.removeprefix("./"))
    try:
        return re.compile(rf"(?s:{body})\Z")
    except re.error as exc:
        raise GlobError(f"The glob {pattern!r} is malformed: {exc}.") from None


def glob_matches(pattern: str, rel_path: str) -> bool:
    """True if `rel_path` (with '/' separators) matches `pattern` as described in the module docstring."""
    regex = compile_glob(pattern)
    target = rel_path if "/" in pattern.removeprefix("./") else rel_path.rsplit("/", 1)[-1]
    return regex.match(target) is not None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                inner = pattern[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if depth:
        raise GlobError(f"The glob {pattern!r} has an unclosed '{{'.")
    return "".join(out)
