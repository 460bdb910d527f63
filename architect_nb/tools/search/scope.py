"""What a search never sees, beyond the walk's skip rules: sensitive files and architect-nb's state folders.

`guardrails.sensitive_files` (globs) and the state folders (where checkpoints keep snapshots of the workspace,
its secrets too) are cut from every search, by both walks. A path is hidden when one of its folders, or the
path itself, matches a glob as a path (relative to the workspace) or by its name, ignoring case: what
`PathGlobs.match` says of the path, and also of a folder lying deeper (`a/.env/x` for `.env`), since a walk
never enters a hidden folder. That is also what `rg` does with the same globs as negative `--iglob` rules
(`rg_globs`), so the two walks see the same files.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from architect_nb.paths.globs import PathGlobs

__all__ = ["SearchScope"]

#: Sensitive globs made only of these translate exactly into rg globs; any other makes rg walk not used.
_PLAIN_GLOB = re.compile(r"[A-Za-z0-9._\-+=@%~,/ *?]+")
_GLOB_SPECIAL = frozenset("*?[]{}\\!#")
#: A glob with more wildcards than this would need too many rg globs (2 per wildcard).
_MAX_WILDCARDS = 4


class SearchScope:
    """Sensitive globs and the state folders (absolute paths), judged for one workspace root."""

    def __init__(self, root: Path, sensitive_files: Sequence[str] = (), hidden_folders: Iterable[str] = ()):
        self.root = root
        self.sensitive = PathGlobs(sensitive_files)
        prefix = str(root).rstrip(os.sep) + os.sep
        rels = []
        for folder in hidden_folders:
            real = os.path.realpath(os.path.expanduser(folder))
            if real == str(root):
                rels.append("")  # the workspace is the state folder: nothing in it may be searched
            elif real.startswith(prefix):
                rels.append(real[len(prefix) :].replace(os.sep, "/"))
        #: The state folders inside the workspace, relative to it.
        self.hidden_rels = tuple(dict.fromkeys(rels))
        self._folders: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.sensitive) or bool(self.hidden_rels)

    def hides(self, rel: str) -> bool:
        """Whether the workspace path `rel` (a file or folder) is hidden from searches."""
        if not self:
            return False
        folder, _, name = rel.rpartition("/")
        return self._folder_hidden(folder) or self._entry_hidden(rel, name)

    def _entry_hidden(self, rel: str, name: str) -> bool:
        if any(rel == h or not h for h in self.hidden_rels):
            return True
        return bool(self.sensitive) and self.sensitive.matches_entry(rel, name)

    def _folder_hidden(self, folder: str) -> bool:
        if not folder:
            return False
        known = self._folders.get(folder)
        if known is None:
            parent, _, name = folder.rpartition("/")
            known = self._folder_hidden(parent) or self._entry_hidden(folder, name)
            if len(self._folders) < 100_000:
                self._folders[folder] = known
        return known

    def rg_globs(self) -> list[str] | None:
        """rg arguments excluding exactly what `hides` hides, or None if some glob cannot be said in rg's."""
        args: list[str] = []
        for rel in self.hidden_rels:
            if not rel or any(ch in _GLOB_SPECIAL for ch in rel) or rel != rel.strip():
                return None
            args += ["-g", f"!/{rel}"]
        for pattern in self.sensitive.patterns:
            globs = _rg_forms(pattern)
            if globs is None:
                return None
            args += [arg for glob in globs for arg in ("--iglob", f"!{glob}")]
        return args


def _rg_forms(pattern: str) -> list[str] | None:
    """rg globs matching, together, what the fnmatch `pattern` matches as a path, a folder or a name.

    fnmatch's `*` and `?` also match '/', rg's do not: each wildcard is written both ways, within a name
    (`*`, `?`) and across folders (`*/**/*`, `/`). A glob without '/' matches a name at any depth (a
    folder's name hides what it holds); one with '/' matches a path from the workspace root.
    """
    if not pattern.isascii() or not _PLAIN_GLOB.fullmatch(pattern) or pattern != pattern.strip():
        return None
    if pattern.startswith("/") or "//" in pattern:
        return None
    pattern = re.sub(r"\*+", "*", pattern)
    pieces = re.split(r"([*?])", pattern)
    wildcards = [i for i, piece in enumerate(pieces) if piece in ("*", "?")]
    if len(wildcards) > _MAX_WILDCARDS:
        return None
    globs = []
    for spans in itertools.product((False, True), repeat=len(wildcards)):
        parts = list(pieces)
        for i, span in zip(wildcards, spans, strict=True):
            if span:
                parts[i] = "*/**/*" if parts[i] == "*" else "/"
        glob = "".join(parts)
        if glob.startswith("/") or glob.endswith("/") or "//" in glob:
            continue  # a '?' standing for a '/' at an end, or next to one: no workspace path has that
        globs.append("/" + glob if "/" in glob else glob)
    return list(dict.fromkeys(globs))
