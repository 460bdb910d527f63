"""The workspace paths the OS sandbox masks (`guardrails.sensitive_files`) or makes read-only
(`guardrails.protected_files`).

`WorkspaceScanner.scan()` walks the workspace at the start of each command. Symbolic links are judged by their
own name and masked at their target; links to folders are not followed; other names (hard links) of a
masked file are masked too. A folder that matches, or in which any new name would match (`secrets/*`), is
covered whole. Files created while a command runs are not masked until the next command.

Each folder's findings are kept until the folder changes: adding, removing or renaming an entry changes its
modification time, and nothing else changes which names match. So a scan of an unchanged tree costs one
`stat` per folder, not a listing and a pattern match per file (a workspace with a virtualenv in it holds
tens of thousands of files). File times tick coarsely (a few milliseconds), so a folder changed in the last
second is listed again every time, as git does with its "racily clean" entries.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from architect_nb.paths.globs import PathGlobs

__all__ = ["MAX_MASKS", "MAX_SCANNED", "ScanLimitError", "WorkspaceMasks", "WorkspaceScanner"]

#: A workspace with more entries than this is not walked at each command; the sandbox refuses instead.
MAX_SCANNED = 300_000
#: More masks than this make bubblewrap slow; folder patterns (`secrets/`) cover many files with one mount.
MAX_MASKS = 2_000

_SENSITIVE, _PROTECTED, _FOLDER, _LINK = 1, 2, 4, 8
#: A folder changed less than this long before it was listed may change again within the same clock tick.
_SETTLED_NS = 1_000_000_000


class ScanLimitError(Exception):
    """The workspace is too large to scan, or too many files match; the message says what to change."""


@dataclass(slots=True, kw_only=True)
class WorkspaceMasks:
    """Absolute, resolved paths: sensitive files and folders (masked) and protected ones (read-only)."""

    masked_files: list[str] = field(default_factory=list)
    masked_folders: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)

    def count(self) -> int:
        return len(self.masked_files) + len(self.masked_folders) + len(self.read_only)


@dataclass(frozen=True, slots=True)
class _Listing:
    """What one folder holds that matters: matching entries and subfolders, as (name, flags)."""

    mtime_ns: int
    inode: int
    settled: bool  # changed long enough before it was listed to be trusted while its time stays the same
    size: int  # all its entries, for MAX_SCANNED
    entries: tuple[tuple[str, int], ...]


class WorkspaceScanner:
    """Finds one workspace's sensitive and protected paths, remembering each folder until it changes."""

    def __init__(self, root: Path, sensitive: PathGlobs, protected: PathGlobs) -> None:
        self.root = os.path.realpath(root)
        self.sensitive = sensitive
        self.protected = protected
        self._listings: dict[str, _Listing] = {}
        self._lock = threading.Lock()

    def scan(self) -> WorkspaceMasks:
        """The paths to mask and to make read-only now. Raises `ScanLimitError`."""
        masks = WorkspaceMasks()
        if not self.sensitive and not self.protected:
            return masks
        with self._lock:
            seen: dict[str, _Listing] = {}
            self._walk(masks, seen)
            self._listings = seen  # folders that are gone are forgotten
        _add_hard_links(self.root, masks)
        return masks

    def _walk(self, masks: WorkspaceMasks, seen: dict[str, _Listing]) -> None:
        scanned = 0
        stack: list[tuple[str, str, bool]] = [("", self.root, False)]  # (relative, absolute, read-only)
        while stack:
            rel_folder, folder, read_only = stack.pop()
            listing = self._listing(rel_folder, folder)
            if listing is None:
                continue  # unreadable here, so unreadable to the command too
            seen[folder] = listing
            scanned += listing.size
            if scanned > MAX_SCANNED:
                raise ScanLimitError(
                    f"the workspace holds more than {MAX_SCANNED:,} files, too many to check for sensitive "
                    "and protected files before every command; choose a smaller workspace folder"
                )
            for name, flags in listing.entries:
                path = f"{folder}/{name}"
                if flags & _SENSITIVE:
                    _add(masks.masked_files, masks.masked_folders, path, bool(flags & _LINK))
                    continue
                entry_read_only = read_only
                if not read_only and flags & _PROTECTED:
                    _add(masks.read_only, masks.read_only, path, bool(flags & _LINK))
                    entry_read_only = True
                if flags & _FOLDER and (self.sensitive or not entry_read_only):
                    stack.append((f"{rel_folder}/{name}" if rel_folder else name, path, entry_read_only))
            if masks.count() > MAX_MASKS:
                raise ScanLimitError(
                    f"more than {MAX_MASKS:,} files match guardrails.sensitive_files or protected_files; use "
                    "folder patterns (such as `secrets/` or `data/raw/*`) so that one mount covers a folder"
                )

    def _listing(self, rel_folder: str, folder: str) -> _Listing | None:
        try:
            st = os.stat(folder)
        except OSError:
            return None
        cached = self._listings.get(folder)
        if (
            cached is not None
            and cached.settled
            and (cached.mtime_ns, cached.inode) == (st.st_mtime_ns, st.st_ino)
        ):
            return cached
        listed_at = time.time_ns()
        try:
            with os.scandir(folder) as it:
                found = list(it)
        except OSError:
            return None
        entries = []
        for entry in found:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            flags = _LINK if entry.is_symlink() else 0
            if not flags and entry.is_dir(follow_symlinks=False):
                flags |= _FOLDER
            if self._matches(self.sensitive, rel, entry.name, flags):
                flags |= _SENSITIVE
            if self._matches(self.protected, rel, entry.name, flags):
                flags |= _PROTECTED
            if flags & (_SENSITIVE | _PROTECTED | _FOLDER):
                entries.append((entry.name, flags))
        return _Listing(
            mtime_ns=st.st_mtime_ns,
            inode=st.st_ino,
            settled=listed_at - st.st_mtime_ns > _SETTLED_NS,
            size=len(found),
            entries=tuple(entries),
        )

    @staticmethod
    def _matches(globs: PathGlobs, rel: str, name: str, flags: int) -> bool:
        return bool(globs) and (globs.matches_entry(rel, name) or bool(flags & _FOLDER and globs.covers(rel)))


def _add(files: list[str], folders: list[str], path: str, is_link: bool) -> None:
    """Record `path` (a link at its target, when that exists) as a file or a folder."""
    target = os.path.realpath(path) if is_link else path
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return  # a dangling link: nothing to read through it
    (folders if stat.S_ISDIR(mode) else files).append(target)


def _add_hard_links(root: str, masks: WorkspaceMasks) -> None:
    """Other names (hard links) of a masked file are masked too, and those of a read-only file read-only: the
    sandbox masks and protects paths, not inodes, so another name would still reach the same file."""
    masked = _linked_inodes(masks.masked_files)
    read_only = _linked_inodes(_files_under(masks.read_only))
    if not masked and not read_only:
        return
    known = set(masks.masked_files) | set(masks.read_only)
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            inode = (st.st_dev, st.st_ino)
            if path in known or (inode not in masked and inode not in read_only):
                continue
            (masks.masked_files if inode in masked else masks.read_only).append(path)
            known.add(path)


def _linked_inodes(paths: list[str]) -> set[tuple[int, int]]:
    """The (device, inode) of each of `paths` that has other names."""
    linked: set[tuple[int, int]] = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            linked.add((st.st_dev, st.st_ino))
    return linked


def _files_under(paths: list[str]) -> list[str]:
    """`paths`, with the files inside those that are folders (a protected folder's files are protected), at
    most MAX_SCANNED of them: a command's start must stay quick."""
    files: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        for folder, _, names in os.walk(path):
            files += [os.path.join(folder, name) for name in names]
            if len(files) > MAX_SCANNED:
                return files
    return files
