"""The files a search looks at: the walk's skip rules, the search scope, then the caller's file pattern,
within a time bound."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from architect_nb.tools.search.scope import SearchScope
from architect_nb.tools.search.walk_cache import cached_files, walk_and_keep
from architect_nb.tools.tree.globs import compile_glob
from architect_nb.tools.tree.walk import Kind, scan

__all__ = ["collect_files", "file_filter", "rg_name_glob", "start_hidden"]

_CHECK_EVERY = 512
#: File patterns that mean to rg (as a file type's glob) what they mean to `compile_glob`: names, no
#: classes or escapes.
_RG_SAFE_GLOB = re.compile(r"[^/\[\]\\!#:]+")


def start_hidden(root: Path, start: Path, scope: SearchScope | None) -> bool:
    """Whether the folder or file a search starts from lies in the scope's hidden part."""
    return bool(scope) and start != root and scope.hides(start.relative_to(root).as_posix())  # type: ignore[union-attr]


def file_filter(root: Path, start: Path, file_pattern: str) -> Callable[[str], bool] | None:
    """A test of workspace-relative paths for `file_pattern` (names, or paths below `start` with a '/'), or
    None when it accepts every file."""
    pattern = file_pattern.removeprefix("./")
    if pattern in ("*", "**"):
        return None
    regex = compile_glob(file_pattern)
    if "/" in pattern:
        skip = 0 if start == root else len(start.relative_to(root).as_posix()) + 1
        return lambda rel: regex.match(rel[skip:]) is not None
    return lambda rel: regex.match(rel[rel.rfind("/") + 1 :]) is not None


def rg_name_glob(file_pattern: str) -> list[str]:
    """rg arguments that let it skip the files `file_pattern` rejects (more files is fine: the pattern is
    checked again on rg's answer); none when the pattern is not plainly a name glob.

    A file type, not `-g`: a `-g` glob that matches would override the ignore files.
    """
    pattern = file_pattern.removeprefix("./")
    if pattern in ("*", "**") or not _RG_SAFE_GLOB.fullmatch(pattern) or pattern != pattern.strip():
        return []
    return ["--type-add", f"architect:{pattern}", "-t", "architect"]


def collect_files(
    root: Path,
    start: Path,
    file_pattern: str,
    *,
    recursive: bool,
    deadline: float,
    scope: SearchScope | None = None,
) -> tuple[list[tuple[str, str]], bool]:
    """(absolute path, workspace-relative path) of the regular files to search, and whether time ran out.

    `start` is a resolved folder or file inside `root`. A file is searched whatever the pattern and skip rules
    say, since the caller named it, unless the scope hides it. Symlinks are never searched: the file they
    point to is, where the walk reaches it. `file_pattern` is a glob on names, or on paths below `start` when
    it holds a '/'. What `scope` hides is left out.
    """
    if start_hidden(root, start, scope):
        return [], False
    if start.is_file():
        return [(str(start), start.relative_to(root).as_posix())], False
    pattern = file_pattern.removeprefix("./")
    regex = None if pattern in ("*", "**") else compile_glob(file_pattern)
    by_path = "/" in pattern
    recursive = recursive or by_path  # as list_files: a path pattern implies depth
    skip = 0 if start == root else len(start.relative_to(root).as_posix()) + 1
    hidden = scope.hides if scope else None
    entries: Iterable[tuple[str, str, Kind]]
    if not recursive:
        entries = scan(root, start, recursive=False)
    elif (kept := cached_files(root, start)) is None:
        entries = walk_and_keep(root, start)  # the kept walk, if any, was checked and is stale
    elif regex is None and hidden is None:
        return list(kept), False  # every file of a walk that nothing has changed since
    else:
        entries = ((path, rel, "file") for path, rel in kept)
    files: list[tuple[str, str]] = []
    for count, (path, rel, kind) in enumerate(entries):
        if count % _CHECK_EVERY == 0 and time.monotonic() > deadline:
            return files, True
        if kind != "file":
            continue
        if regex is not None:
            target = rel[skip:] if by_path else rel[rel.rfind("/") + 1 :]
            if regex.match(target) is None:
                continue
        if hidden is not None and hidden(rel):
            continue
        files.append((path, rel))
    return files, False
