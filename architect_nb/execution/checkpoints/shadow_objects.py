"""Snapshots of a file tool's few files without starting git: blobs and trees written in-process.

A file tool's call changes one or two known files, and a git process costs milliseconds, several times the
call itself. So the snapshot of such files is made here: each file's blob is written as a git loose object,
and the new tree is the previous one with those entries replaced, its trees along the changed paths
rewritten. The result is byte for byte the tree `git update-index` + `git write-tree` would give (the tests
compare both), so undo, review and later git snapshots read it as any other. Trees this class did not write
are read through one long-lived `git cat-file --batch`.

The shadow repository's index is not touched: the paths written here are remembered as `dirty`, and the next
snapshot made by git refreshes them first.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from hashlib import sha1
from pathlib import Path

__all__ = ["TREE_MODE", "FastTrees", "NeedsGitError"]

TREE_MODE = b"40000"
#: A tree entry: its mode as git writes it in a tree (b"100644", b"40000", ...) and its binary object id.
_Item = tuple[bytes, bytes]
#: The cached trees' entries, at most this many in all (a tree id never changes what it names).
_CACHE_LIMIT = 200_000


class NeedsGitError(Exception):
    """This snapshot needs git (a folder, a file over the size limit, a path git would refuse, no git)."""


class FastTrees:
    """Writes blobs and trees into the bare repository `git_dir`. One per `ShadowRepo`, under its lock."""

    def __init__(
        self, git_dir: Path, workspace: Path, env: Mapping[str, str], git_args: Sequence[str]
    ) -> None:
        self.git_dir = git_dir
        self.workspace = workspace
        self._env = dict(env)
        self._git_args = list(git_args)
        self._trees: dict[bytes, dict[bytes, _Item]] = {}
        self._cached = 0
        self._reader: subprocess.Popen[bytes] | None = None

    def update(self, tree: str, paths: Sequence[str], max_file_bytes: int) -> tuple[str, list[str]]:
        """`tree` with each of `paths` as it is on disk now: the new tree id and the paths that differ."""
        paths = list(dict.fromkeys(paths))
        changes: dict[tuple[bytes, ...], _Item | None] = {}
        for path in paths:
            parts = tuple(os.fsencode(path).split(b"/"))
            if any(p in (b"", b".", b"..", b".git") for p in parts):
                raise NeedsGitError(path)
            changes[parts] = self._entry(path, max_file_bytes)
        base = bytes.fromhex(tree)
        differ = [
            path
            for path, (parts, new) in zip(paths, changes.items(), strict=True)
            if self._lookup(base, parts) != new
        ]
        if not differ:
            return tree, []
        new_tree = self._replace(base, changes)
        return (new_tree or bytes.fromhex(_EMPTY)).hex(), differ

    def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            with contextlib.suppress(OSError):
                assert reader.stdin is not None
                reader.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                reader.wait(timeout=2)
            if reader.poll() is None:
                reader.kill()
                reader.wait()
            if reader.stdout is not None:
                reader.stdout.close()

    # ------------------------------------------------------------------ entries and trees

    def _entry(self, path: str, max_file_bytes: int) -> _Item | None:
        """The tree entry for what `path` holds now; None when it is absent."""
        full = os.path.join(self.workspace, path)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise NeedsGitError(path) from exc
        if stat.S_ISLNK(st.st_mode):
            return b"120000", self._write(b"blob", os.fsencode(os.readlink(full)))
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_file_bytes:
            raise NeedsGitError(path)
        try:
            with open(full, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise NeedsGitError(path) from exc
        # git records only the owner's execute bit, as 755 or 644.
        return (b"100755" if st.st_mode & stat.S_IXUSR else b"100644"), self._write(b"blob", data)

    def _lookup(self, tree: bytes, parts: tuple[bytes, ...]) -> _Item | None:
        item: _Item | None = (TREE_MODE, tree)
        for part in parts:
            if item is None or item[0] != TREE_MODE:
                return None
            item = self._read_tree(item[1]).get(part)
        if item is not None and item[0] == TREE_MODE:
            raise NeedsGitError(
                "/".join(os.fsdecode(p) for p in parts)
            )  # a folder is replaced: git lists its files
        return item

    def _replace(self, tree: bytes | None, changes: Mapping[tuple[bytes, ...], _Item | None]) -> bytes | None:
        """`tree` (None: empty) with `changes` made; None when nothing is left (git keeps no empty tree)."""
        entries = dict(self._read_tree(tree)) if tree is not None else {}
        below: dict[bytes, dict[tuple[bytes, ...], _Item | None]] = {}
        for parts, item in changes.items():
            if len(parts) == 1:
                if item is None:
                    entries.pop(parts[0], None)
                else:
                    entries[parts[0]] = item
            else:
                below.setdefault(parts[0], {})[parts[1:]] = item
        for name, sub in below.items():
            current = entries.get(name)
            if current is not None and current[0] != TREE_MODE:
                if all(item is None for item in sub.values()):
                    continue  # removing files below a file: there are none
                raise NeedsGitError(os.fsdecode(name))  # a file becomes a folder: as git lists it
            child = self._replace(current[1] if current is not None else None, sub)
            if child is None:
                entries.pop(name, None)
            else:
                entries[name] = (TREE_MODE, child)
        if not entries:
            return None
        # git sorts a tree's entries by name, a folder's name as if it ended in '/'.
        ordered = sorted(entries.items(), key=lambda kv: kv[0] + b"/" if kv[1][0] == TREE_MODE else kv[0])
        body = b"".join(mode + b" " + name + b"\0" + oid for name, (mode, oid) in ordered)
        oid = self._write(b"tree", body)
        self._remember(oid, entries)
        return oid

    def _read_tree(self, oid: bytes) -> dict[bytes, _Item]:
        cached = self._trees.get(oid)
        if cached is not None:
            return cached
        if oid.hex() == _EMPTY:
            return {}
        body = self._cat(oid, b"tree")
        entries: dict[bytes, _Item] = {}
        at = 0
        while at < len(body):
            space = body.index(b" ", at)
            nul = body.index(b"\0", space)
            entries[body[space + 1 : nul]] = (body[at:space], body[nul + 1 : nul + 21])
            at = nul + 21
        self._remember(oid, entries)
        return entries

    def _remember(self, oid: bytes, entries: dict[bytes, _Item]) -> None:
        if self._cached + len(entries) > _CACHE_LIMIT:
            self._trees.clear()
            self._cached = 0
        self._trees[oid] = entries
        self._cached += len(entries)

    # ------------------------------------------------------------------ the object store

    def _write(self, kind: bytes, data: bytes) -> bytes:
        """Store a loose object (as git would: zlib, read-only, renamed into place) and return its id."""
        raw = kind + b" " + str(len(data)).encode() + b"\0" + data
        oid = sha1(raw, usedforsecurity=False).digest()
        hexid = oid.hex()
        folder = self.git_dir / "objects" / hexid[:2]
        target = folder / hexid[2:]
        if (
            target.exists()
        ):  # (one only in a pack, after a prune's `git gc`, is written loose again: harmless)
            return oid
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(zlib.compress(raw, 1))
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return oid

    def _cat(self, oid: bytes, kind: bytes) -> bytes:
        """One object's content, from `git cat-file --batch` (started once, restarted if it died)."""
        for attempt in range(2):
            reader = self._reader
            if reader is None or reader.poll() is not None:
                reader = self._reader = self._start_reader()
            assert reader.stdin is not None and reader.stdout is not None
            try:
                reader.stdin.write(oid.hex().encode() + b"\n")
                reader.stdin.flush()
                header = reader.stdout.readline().split()
                if len(header) == 2 and header[1] == b"missing":
                    raise NeedsGitError(f"object {oid.hex()} is missing")
                if len(header) != 3 or header[1] != kind:
                    raise NeedsGitError(f"object {oid.hex()} is not a {kind.decode()}")
                size = int(header[2])
                body = reader.stdout.read(size + 1)[:size]
                if len(body) != size:
                    raise OSError("short read")
                return body
            except (OSError, ValueError):
                self.close()
                if attempt:
                    raise NeedsGitError("git cat-file stopped") from None
        raise NeedsGitError("git cat-file stopped")

    def _start_reader(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                ["git", *self._git_args, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self.workspace,
                env=self._env,
            )
        except OSError as exc:
            raise NeedsGitError(f"git could not run ({exc})") from None


_EMPTY = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
