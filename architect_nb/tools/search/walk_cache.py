"""The last few recursive walks, reused while the folders they listed have not changed.

An agent searches the same workspace many times in a run, and on a large tree the walk in Python costs as
much as the search itself (24,000 files: about a quarter of a second). A walk's answer depends only on the
names in the folders it listed, their kinds, and the ignore files it read: adding, removing or renaming an
entry changes its folder's modification time, and an ignore file edited in place changes its own. So a
finished walk is kept with the modification times (in nanoseconds) of every folder it listed, of the folders
between the workspace root and its start, and of the ignore files it read; the next walk of the same start
stats those (a few milliseconds for 2,000 folders) and reuses the answer when every one is unchanged.

A folder or file modified within `_RACY_SECONDS` of the walk is not trusted (as git treats "racily clean"
files): a change in the same clock tick as the walk would leave its time unchanged, so such a walk is not
kept. Reused answers go through the same checks afterwards as fresh ones: the search tools read every file
with O_NOFOLLOW and skip anything that is no longer a regular file.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from architect_nb.tools.tree.walk import IgnoreRules, Kind, scan

__all__ = ["cached_files", "cached_scan", "clear_walk_cache", "walk_and_keep"]

_KEEP = 4  # walks kept (the workspace root, and a few folders searched often)
_RACY_SECONDS = 2.0
#: A path's (st_mtime_ns, st_size, st_ino), or None when it does not exist.
Stamp = tuple[int, int, int] | None


@dataclass(slots=True)
class _Walk:
    entries: list[tuple[str, str, Kind]]
    stamps: tuple[tuple[str, Stamp], ...]
    files: list[tuple[str, str]] | None = None  # (path, relative path) of the regular files, made once


_walks: OrderedDict[tuple[str, str], _Walk] = OrderedDict()
_lock = threading.Lock()


def clear_walk_cache() -> None:
    with _lock:
        _walks.clear()


def cached_files(root: Path, start: Path) -> list[tuple[str, str]] | None:
    """The regular files (path, relative path) of a kept walk of `start` that is still valid, else None."""
    kept = _valid(root, start)
    if kept is None:
        return None
    if kept.files is None:
        kept.files = [(path, rel) for path, rel, kind in kept.entries if kind == "file"]
    return kept.files


def _valid(root: Path, start: Path) -> _Walk | None:
    key = (str(root), str(start))
    with _lock:
        kept = _walks.get(key)
    if kept is None or not all(_stamp(path) == stamp for path, stamp in kept.stamps):
        return None
    with _lock:
        if key in _walks:
            _walks.move_to_end(key)
    return kept


def cached_scan(root: Path, start: Path) -> Iterator[tuple[str, str, Kind]]:
    """`walk.scan(root, start, recursive=True)`, answered from a kept walk when nothing it saw has changed."""
    kept = _valid(root, start)
    if kept is not None:
        yield from kept.entries
        return
    yield from walk_and_keep(root, start)


def walk_and_keep(root: Path, start: Path) -> Iterator[tuple[str, str, Kind]]:
    """A fresh recursive walk of `start`, kept for the next caller once it has run to its end."""
    key = (str(root), str(start))
    started = time.time()
    listed: list[str] = []
    rules = IgnoreRules(root)
    entries: list[tuple[str, str, Kind]] = []
    for entry in scan(root, start, recursive=True, ignore=rules, listed=listed):
        entries.append(entry)
        yield entry
    # Only a walk that ran to its end is kept (a caller out of time stops early and never gets here).
    watched = [*listed, *_folders_between(root, start), os.path.join(root, ".git", "info", "exclude")]
    watched += [os.path.join(root, rel, ".gitignore") for rel in rules.read_ignore_folders()]
    stamps = tuple((path, _stamp(path)) for path in dict.fromkeys(watched))
    racy = (started - _RACY_SECONDS) * 1e9
    if any(stamp is not None and stamp[0] >= racy for _path, stamp in stamps):
        return
    with _lock:
        _walks[key] = _Walk(entries, stamps)
        _walks.move_to_end(key)
        while len(_walks) > _KEEP:
            _walks.popitem(last=False)


def _folders_between(root: Path, start: Path) -> list[str]:
    """The folders from `root` down to `start`'s parent: their ignore files apply to the walk."""
    folders = [str(root)]
    if start != root:
        folder = root
        for part in start.relative_to(root).parts[:-1]:
            folder = folder / part
            folders.append(str(folder))
    return folders


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
