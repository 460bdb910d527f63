"""`PathGlobs`: the guardrails' file patterns, matched as the guardrails and the OS sandbox both need them.

A path relative to the workspace matches when the path itself, one of its parent folders or its file name
matches a glob, ignoring case: over-matching a protected or sensitive path is the safe mistake.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

__all__ = ["PathGlobs"]

# Names no real file has: when both match inside a folder, any file created there would match too.
_PROBES = ("\x01architect-probe", ".\x01architect-probe.x")


class PathGlobs:
    """A list of globs matched, case-insensitively, against a relative path, its parents and its name."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = [p.strip().lower().removeprefix("./").rstrip("/") for p in patterns if p.strip()]
        self._regexes = [(re.compile(fnmatch.translate(p)), p) for p in self.patterns]
        # One regex for all patterns, for walks that test many names (`matches_entry`).
        self._any = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self.patterns) or "(?!)")

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def inside(self, rel: str) -> str | None:
        """A folder pattern lying below the folder `rel` (so removing or moving `rel` would touch it)."""
        rel = rel.lower().removeprefix("./").rstrip("/")
        prefix = "" if rel in ("", ".") else rel + "/"
        for pattern in self.patterns:
            if "/" in pattern and pattern.startswith(prefix) and not pattern.startswith("../"):
                return pattern
        return None

    def match(self, rel: str) -> str | None:
        """The first pattern matching `rel`, one of its parent folders or its name; None if none does."""
        parts = rel.lower().removeprefix("./").split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if len(parts) > 1:
            candidates.append(parts[-1])
        for regex, pattern in self._regexes:
            for candidate in candidates:
                if regex.match(candidate):
                    return pattern
        return None

    def matches_entry(self, rel: str, name: str) -> bool:
        """`match` for a walk that never enters a matching folder: only the path and the name are left to
        test, since every parent folder was tested on the way down."""
        return bool(self._any.match(rel.lower()) or self._any.match(name.lower()))

    def covers(self, rel_folder: str) -> bool:
        """Whether any name created in the folder `rel_folder` would match (`secrets/*`), for a walk."""
        prefix = f"{rel_folder}/" if rel_folder not in ("", ".") else ""
        return all(self.matches_entry(prefix + probe, probe) for probe in _PROBES)
