"""The files a search looks at: the walk's skip rules, then the caller's file pattern, within a time bound."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from architect_nb.tools.search.globs import compile_glob
from architect_nb.tools.search.walk import Kind, scan
from architect_nb.tools.search.walk_cache import cached_files, walk_and_keep

__all__ = ["collect_files"]

_CHECK_EVERY = 512


def collect_files(
    root: Path, start: Path, file_pattern: str, *, recursive: bool, deadline: float
) -> tuple[list[tuple[str, str]], bool]:
    """(absolute path, workspace-relative path) of the regular files to search, and whether time ran out.

    `start` is a resolved folder or file inside `root`. A file is searched whatever the pattern and skip rules
    say, since the caller named it. Symlinks are never searched: the file they point to is, where the walk
    reaches it. `file_pattern` is a glob on names, or on paths below `start` when it holds a '/'.
    """
    if start.is_file():
        return [(str(start), start.relative_to(root).as_posix())], False
    pattern = file_pattern.removeprefix("./")
    regex = None if pattern in ("*", "**") else compile_glob(file_pattern)
    by_path = "/" in pattern
    recursive = recursive or by_path  # as list_files: a path pattern implies depth
    skip = 0 if start == root else len(start.relative_to(root).as_posix()) + 1
    entries: Iterable[tuple[str, str, Kind]]
    if not recursive:
        entries = scan(root, start, recursive=False)
    elif (kept := cached_files(root, start)) is None:
        entries = walk_and_keep(root, start)  # the kept walk, if any, was checked and is stale
    elif regex is None:
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
        files.append((path, rel))
    return files, False
