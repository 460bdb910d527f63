"""What a repository says about its work tree, for the git model of the check of protected files: which
files changed between two commits, which are tracked, and whether a file differs from HEAD.

Only questions that read commits and the index are asked, never the work tree through git: git runs no
filter, fsmonitor, hook or external diff for them (and those are switched off anyway), so a repository's
own configuration cannot make the check run a program.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence

__all__ = ["GitRepo"]

_TIMEOUT = 10
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=")


class GitRepo:
    """The repository whose work tree holds `top`."""

    def __init__(self, top: str) -> None:
        self.top = top

    @classmethod
    def around(cls, folder: str) -> GitRepo | None:
        """The repository `folder` is in (the nearest parent with a `.git`), or None."""
        here = os.path.realpath(folder)
        while True:
            if os.path.lexists(os.path.join(here, ".git")):
                return cls(here)
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent

    def _git(self, *args: str) -> bytes | None:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            run = subprocess.run(
                ["git", *_SAFE, "--no-pager", "-C", self.top, *args],
                capture_output=True,
                timeout=_TIMEOUT,
                env=env,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return run.stdout if run.returncode == 0 else None

    def is_commit(self, rev: str) -> bool:
        return self._git("rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}") is not None

    def changed(self, before: str, after: str, *, merge_base: bool = False) -> list[str] | None:
        """Files (relative to `top`) that differ between two commits; None if git cannot tell."""
        if merge_base:
            base = self._git("merge-base", "--end-of-options", before, after)
            if base is None:
                return None
            before = base.decode().strip()
        out = self._git(
            "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--end-of-options", before, after, "--",
        )  # fmt: skip
        return None if out is None else _names(out)

    def files_in(self, commit: str) -> list[str] | None:
        """The files of a commit's tree (relative to `top`); None if there is no such commit."""
        out = self._git("ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options", commit)
        return None if out is None else _names(out)

    def tracked(self, paths: Sequence[str]) -> tuple[dict[str, str], set[str]] | None:
        """For `paths` (relative to `top`): their blobs in HEAD, and those in the index."""
        if not paths:
            return {}, set()
        head = self._git("--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *paths)
        index = self._git("--literal-pathspecs", "ls-files", "-z", "--full-name", "--", *paths)
        if index is None:
            return None
        blobs: dict[str, str] = {}
        for entry in (head or b"").split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            fields = meta.split()
            if len(fields) == 3:
                blobs[os.fsdecode(name)] = fields[2].decode()
        return blobs, set(_names(index))

    @staticmethod
    def differs(path: str, blob: str) -> bool:
        """Whether the file at `path` holds something else than the blob `blob` (no filters applied)."""
        try:
            if os.path.islink(path):
                data = os.fsencode(os.readlink(path))
            else:
                with open(path, "rb") as handle:
                    data = handle.read()
        except OSError:
            return True
        digest = hashlib.sha256() if len(blob) == 64 else hashlib.sha1()  # noqa: S324 (git's object names)
        digest.update(b"blob %d\0" % len(data) + data)
        return digest.hexdigest() != blob


def _names(out: bytes) -> list[str]:
    return [os.fsdecode(n) for n in out.split(b"\0") if n]
