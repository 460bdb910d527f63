"""What a recursive reader, a file lister or an archiver reaches (`Walk`): its roots, and the rules that leave
files out, judged exactly as each program does (a wrong "excluded" would let a read pass). The models that
say which program walks how are in `walks`."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["FilesOnDisk", "Walk", "glob_hits"]


class FilesOnDisk(Protocol):
    """The guarded files on disk now (absolute, resolved paths)."""

    def under(self, root: str) -> Iterator[str]: ...


@dataclass(slots=True)
class Walk:
    """What a recursive reader or lister reaches: roots, and the rules that leave files out."""

    roots: list[str]
    hidden: bool = True  # reads hidden files and folders (`.env`, `.secrets/`)
    recursive: bool = True
    names: list[str] | None = None  # find -name / -path patterns: only matching files (None: all)
    includes: list[str] | None = None  # only files matching one of these (grep --include, rg -g GLOB)
    # What leaves a file out, judged exactly as the program does (a wrong "excluded" would let a read pass):
    skip_names: list[str] = field(default_factory=list)  # on the file's name (grep --exclude, find ! -name)
    skip_folders: list[str] = field(default_factory=list)  # on a folder's name on the way (--exclude-dir)
    skip_parts: list[str] = field(default_factory=list)  # on the file's or a folder's name (rg -g '!x')
    skip_paths: list[str] = field(default_factory=list)  # on the path from the root (find ! -path)

    def reaches(self, guarded: FilesOnDisk, *, folders: bool = False) -> str | None:
        """The first guarded file the walk reaches. `folders`: a folder the walk keeps counts whole (what
        `find -name build -exec rm -r {} +` removes), not only the files it keeps."""
        return next(self.reached(guarded, folders=folders), None)

    def reached(self, guarded: FilesOnDisk, *, folders: bool = False) -> Iterator[str]:
        for root in self.roots:
            for path in guarded.under(root):
                rel = os.path.relpath(path, root) if path != root else os.path.basename(path)
                if self._keeps(rel) or (folders and any(self._keeps(f) for f in _folders(rel))):
                    yield path

    def _keeps(self, rel: str) -> bool:
        parts = rel.split("/")
        name, folders = parts[-1], parts[:-1]
        if not self.hidden and any(p.startswith(".") and p not in (".", "..") for p in parts):
            return False
        if not self.recursive and folders:
            return False
        if (
            any(fnmatch.fnmatchcase(name, g) for g in self.skip_names)
            or any(fnmatch.fnmatchcase(f, g) for g in self.skip_folders for f in folders)
            or any(fnmatch.fnmatchcase(p, g) for g in self.skip_parts for p in parts)
            or any(fnmatch.fnmatchcase(rel, g.removeprefix("./")) for g in self.skip_paths)
        ):
            return False
        if self.includes is not None and not any(glob_hits(g, name, rel) for g in self.includes):
            return False
        return self.names is None or any(glob_hits(g, name, rel) for g in self.names)


def _folders(rel: str) -> Iterator[str]:
    """`a/b/c` -> `a`, `a/b`: the folders on the way to a file."""
    parts = rel.split("/")
    return ("/".join(parts[:i]) for i in range(1, len(parts)))


def glob_hits(pattern: str, name: str, rel: str) -> bool:
    """Over-matching, ignoring case: for patterns that choose what is read."""
    pattern = pattern.lower().removeprefix("./")
    return fnmatch.fnmatch(name.lower(), pattern) or fnmatch.fnmatch(rel.lower(), pattern.lstrip("/"))
