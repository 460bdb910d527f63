"""The person's own git repository around a workspace, read from its files and never through git.

Undo restores the working tree; it must also give back the index when a command of the run staged something
(`git add`, `git mv`), and say so, without rewriting it, when a command committed or moved a branch. Running
git on the person's repository could run programs its config names (fsmonitor, filters), so this module reads
`.git/HEAD`, the refs and the index file directly, and writes only the index, only on undo.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from architect_nb.tools.filesystem.fileio import atomic_write_bytes

__all__ = ["PersonRepo", "RepoState", "find_repo"]


@dataclass(frozen=True, slots=True)
class RepoState:
    """HEAD (`ref: refs/heads/main` and the commit it names) and the index file's digest."""

    head: str
    commit: str
    index_digest: str | None


class PersonRepo:
    """The git directory of the repository a workspace is in."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        common = _read_text(git_dir / "commondir").strip()  # a linked worktree keeps its refs there
        self.common_dir = Path(os.path.realpath(git_dir / common)) if common else git_dir

    def state(self) -> RepoState:
        head = _read_text(self.git_dir / "HEAD").strip()
        commit = self._resolve(head)
        return RepoState(head=head, commit=commit, index_digest=self.index_digest())

    def index_bytes(self) -> bytes | None:
        try:
            return (self.git_dir / "index").read_bytes()
        except OSError:
            return None

    def index_digest(self) -> str | None:
        data = self.index_bytes()
        return hashlib.sha256(data).hexdigest() if data is not None else None

    def restore_index(self, data: bytes | None) -> None:
        index = self.git_dir / "index"
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                index.unlink()
            return
        atomic_write_bytes(index, data)

    def _resolve(self, head: str) -> str:
        if not head.startswith("ref: "):
            return head
        ref = head[5:].strip()
        if ".." in ref.split("/"):
            return ""
        loose = _read_text(self.common_dir / ref).strip()
        if loose:
            return loose
        for line in _read_text(self.common_dir / "packed-refs").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1].strip() == ref:
                return parts[0]
        return ""


def find_repo(workspace: Path) -> PersonRepo | None:
    """The repository holding `workspace` (its `.git` folder, or the folder a `.git` file points to)."""
    folder = Path(os.path.realpath(workspace))
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return PersonRepo(dot_git)
        if dot_git.is_file():
            text = _read_text(dot_git).strip()
            if text.startswith("gitdir: "):
                target = Path(text[8:].strip())
                target = target if target.is_absolute() else (candidate / target)
                if target.is_dir():
                    return PersonRepo(Path(os.path.realpath(target)))
            return None
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
