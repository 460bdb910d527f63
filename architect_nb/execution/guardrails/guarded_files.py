"""`GuardedFiles`: the sensitive or protected files on disk now, which the checks of unnamed reads and
writes judge a command against (what a glob, a recursive walk or a folder copy would reach).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["MAX_EXPANDED", "GuardedFiles"]

#: Files listed inside guarded folders; more are judged by the folder.
MAX_EXPANDED = 10_000


@dataclass(frozen=True, slots=True)
class GuardedFiles:
    """The guarded files on disk now (absolute, resolved paths), those in guarded folders included."""

    workspace: str
    files: tuple[str, ...]
    #: Whether a path (relative to the workspace) is guarded by its name: the named check's business.
    named: Callable[[str], bool] = lambda _rel: False
    _inodes: dict[str, set[tuple[int, int]]] = field(default_factory=dict, compare=False)

    def holds(self, path: str) -> bool:
        return path in self.files

    def under(self, root: str) -> Iterator[str]:
        prefix = root.rstrip("/") + "/"
        return (f for f in self.files if f == root or f.startswith(prefix))

    def shown(self, path: str) -> str:
        return os.path.relpath(path, self.workspace)

    def same_file(self, path: str) -> str | None:
        """The guarded file that `path` is another hard link of, if it is one."""
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            return None
        if info.st_nlink < 2:
            return None
        if not self._inodes:
            self._inodes["all"] = set()
            for guarded in self.files:
                try:
                    st = os.lstat(guarded)
                except OSError:
                    continue
                self._inodes["all"].add((st.st_dev, st.st_ino))
        if (info.st_dev, info.st_ino) not in self._inodes["all"]:
            return None
        return next((f for f in self.files if _same(f, info)), path)

    @classmethod
    def of(
        cls, workspace: str, files: Sequence[str], folders: Sequence[str], named: Callable[[str], bool]
    ) -> GuardedFiles:
        found = list(files)
        for folder in folders:
            for parent, _dirs, names in os.walk(folder):
                found += (os.path.join(parent, n) for n in names)
                if len(found) > MAX_EXPANDED:
                    break
        return cls(workspace, tuple(found), named)


def _same(path: str, info: os.stat_result) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (info.st_dev, info.st_ino)
