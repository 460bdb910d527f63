"""`ShadowRepo`: snapshots of a workspace in a private git object store, never the person's own repository.

Each workspace gets a bare repository in the state folder (`<checkpoints.dir>/snapshots/<hash>.git`) and its
own index there, so git's stat cache makes a snapshot of an unchanged tree cheap. A snapshot is a tree id:
`git add -A` (or, for one tool's files, `git update-index` of just those paths) then `git write-tree`. A file
tool's files are mostly snapshotted with no git process at all (`shadow_objects`), to the same tree ids.
Git runs with a hardened environment: no system or global config, no hooks, no fsmonitor, and an
`info/attributes` that turns off every conversion (line endings, filters), so blobs are the bytes on disk.
The workspace's `.gitignore` files apply (data and build outputs are not snapshotted), plus
`info/exclude`, which this class writes: files over the size limit, and nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from architect_nb.execution.checkpoints.shadow_objects import FastTrees, NeedsGitError
from architect_nb.tools.filesystem.file_kinds import BlobFacts
from architect_nb.tools.filesystem.fileio import describe_size

__all__ = ["EMPTY_TREE", "Entry", "ShadowRepo", "SnapshotError", "file_stamp", "forget_runs"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: A ref name written as a file (`refs/runs/<run id>/<step>b`): nothing git would read differently.
_PLAIN_REF = re.compile(r"refs/runs/[A-Za-z0-9_-]{1,64}/[0-9]{1,9}[abp]")  # before, after, pending
_NO_CONVERSIONS = "* -text -eol -filter -ident -diff -merge -working-tree-encoding\n"
_HARDENING = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false", "-c", "core.symlinks=true", "-c", "core.quotePath=false",
    "-c", "core.untrackedCache=true", "-c", "gc.auto=0", "-c", "advice.addIgnoredFile=false",
    "-c", "core.bigFileThreshold=1m", "-c", "core.compression=0", "-c", "core.looseCompression=1",
)  # fmt: skip
# Files over 1 MB (bigFileThreshold) go straight into a pack, stored as they are (core.compression=0): data
# files are mostly compressed already, and zlib, even at its fastest, made a snapshot of 100 MB of them take
# 3.6 s instead of 1.2 s for no saving (benchmarks/data_files.py). Smaller files stay compressed, fast.


class SnapshotError(RuntimeError):
    """A snapshot could not be taken or read (git missing, the state folder unwritable, a broken store)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One file in a snapshot: its git mode ('100644', '100755', '120000' for a link) and blob id."""

    mode: str
    blob: str


class ShadowRepo:
    """The snapshots of one workspace. Thread-safe (one git command at a time per workspace).

    Args:
        workspace: The workspace root (resolved).
        state_dir: Where the private repositories live.
        max_file_bytes: Larger files are left out of snapshots (and reported as not covered).
    """

    def __init__(
        self,
        workspace: Path,
        state_dir: Path,
        *,
        max_file_bytes: int = 10 * 1024 * 1024,
        exclude: Sequence[str] = (),
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        key = hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]
        self.git_dir = Path(state_dir) / f"{key}.git"
        self.max_file_bytes = max_file_bytes
        self.exclude = tuple(exclude)
        self.too_large: set[str] = set()
        #: Why each file of `too_large` is left out ("200.0 MB, over the 100.0 MB limit per file").
        self.why_left_out: dict[str, str] = {}
        self.last_stored = 0  # bytes of new content the last snapshot may have kept (for the run's budget)
        self._lock = threading.Lock()
        self._ready = False
        self._last: tuple[str, str, list[str]] | None = None  # (tree before, tree after, paths that differ)
        self._index_read: tuple[int, ...] | bool | None = False  # the index as the last write-tree left it
        self._index_tree: str | None = None  # the tree that write-tree made of it
        self._dirty: set[str] = set()  # paths snapshotted in-process since, which the index does not hold yet
        self._fast: FastTrees | None = None

    # ------------------------------------------------------------------ snapshots

    def snapshot(
        self, paths: Sequence[str] | None = None, *, include: Sequence[str] = (), budget: int | None = None
    ) -> str:
        """The workspace's state now, as a tree id. With `paths` (relative), only those are refreshed. Files
        over the size limit, or past `budget` bytes of new content, are left out before git reads them, so
        they cost nothing in the store; `last_stored` is the new content this snapshot may have kept."""
        with self._lock:
            self._prepare()
            if paths and self._last is not None and not self.too_large.intersection(paths):
                with contextlib.suppress(NeedsGitError, OSError):  # else git does, and says what failed
                    self.last_stored = self._leave_out_large(paths, budget, scoped=True)
                    return self._snapshot_in_process(self._last[1], paths)
            stored = 0
            if paths is None:
                listed = self._git("ls-files", "-z", "-o", "-m", "--exclude-standard").split("\0")
                if include:
                    forced = ["ls-files", "-z", "-o", "-i", "--exclude-standard", "--", *include]
                    listed += self._git(*forced, check=False).split("\0")
                stored = self._leave_out_large([p for p in listed if p], budget)
                self._git("add", "-A", "--ignore-errors", "--", ".")
                if include:
                    self._git("add", "-f", "--ignore-errors", "--", *include, check=False)
            elif paths or self._dirty:
                stored = self._leave_out_large(paths, budget)
                kept = [p for p in paths if p not in self.too_large]
                listed_paths = "\0".join(dict.fromkeys([*kept, *sorted(self._dirty)])) + "\0"
                self._git("update-index", "--add", "--remove", "-z", "--stdin", stdin=listed_paths)
            previous = self._last[1] if self._last is not None else EMPTY_TREE
            if self._last is not None and self._index_tree == previous and self._index_read == self._stamp():
                # git rewrites the index only when an entry changed (and writes none while it is empty):
                # untouched, it still holds the last tree.
                self._last = (previous, previous, [])
                self.last_stored = stored
                return previous
            tree = self._git("write-tree").strip()
            differ: list[str] = []
            if tree != previous:  # most snapshots find nothing new: the tree ids say so without a diff
                # What changed since the last snapshot: the only files that can be newly too large, and (when
                # the last snapshot was this call's "before") the call's changes, so `changed` needs no other
                # git run.
                out = self._git("diff-tree", "-r", "-z", "--name-only", "--no-renames", previous, tree)
                differ = [p for p in out.split("\0") if p]
                if self._drop_large(differ):
                    tree = self._git("write-tree").strip()
            self._last = (previous, tree, differ)
            self._index_read = self._stamp()  # after write-tree, which may store its cache in the index
            self._index_tree = tree
            self._dirty.clear()
            self.last_stored = stored
            return tree

    def _snapshot_in_process(self, previous: str, paths: Sequence[str]) -> str:
        """A file tool's snapshot with no git process (see `shadow_objects`); NeedsGitError when git must."""
        if self._fast is None:
            self._fast = FastTrees(self.git_dir, self.workspace, self._env(), _HARDENING)
            weakref.finalize(self, self._fast.close)
        tree, differ = self._fast.update(previous, paths, self.max_file_bytes)
        self._dirty.update(differ)
        self._last = (previous, tree, differ)
        return tree

    def keep(self, refs: dict[str, str]) -> None:
        """Point each ref (`refs/runs/<run>/<n>b`) at its tree, so git never collects what a saved run needs.
        Refs are files: written in place, with `git update-ref` only for a name that is not plain."""
        if not all(_PLAIN_REF.fullmatch(name) for name in refs):
            lines = "".join(f"update {name} {oid}\n" for name, oid in refs.items())
            self._git("update-ref", "--stdin", stdin=lines)
            return
        for name, oid in refs.items():
            target = self.git_dir / name
            tmp = ""
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix="tmp-ref-", dir=self.git_dir)  # not among the refs
                with os.fdopen(fd, "w") as f:
                    f.write(oid + "\n")
                os.replace(tmp, target)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise SnapshotError(
                    f"the snapshot store {self.git_dir} could not be written ({exc})"
                ) from None

    def _stamp(self) -> tuple[int, ...] | None:
        """The index file's identity and times (None: there is none). git writes a new file and renames it
        over the old one, so any rewrite changes them."""
        try:
            st = os.stat(self.git_dir / "index")
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def entries(self, tree: str, paths: Iterable[str] | None = None) -> dict[str, Entry]:
        """The files of `tree` (all, or those of `paths`), by path."""
        args = ["ls-tree", "-r", "-z", "--full-tree", tree]
        if paths is not None:
            wanted = list(paths)
            if not wanted:
                return {}
            args += ["--", *wanted]
        found: dict[str, Entry] = {}
        for record in self._git(*args).split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, blob = meta.split(" ")
            if kind == "blob":
                found[path] = Entry(mode, blob)
        return found

    def changed(self, before: str, after: str) -> list[str]:
        """Paths that differ between two trees (added, removed, changed, mode changed)."""
        if before == after:
            return []
        last = self._last
        if last is not None and last[0] == before and last[1] == after:
            return [p for p in last[2] if p not in self.too_large]
        out = self._git("diff-tree", "-r", "-z", "--name-only", "--no-renames", before, after)
        return [p for p in out.split("\0") if p and p not in self.too_large]

    def folders(self, tree: str) -> set[str]:
        """The folders of `tree` (every parent of one of its files)."""
        out = self._git("ls-tree", "-r", "-d", "-z", "--name-only", "--full-tree", tree)
        return {p for p in out.split("\0") if p}

    def read(self, blob: str) -> bytes:
        with self._lock:
            return self._run(["cat-file", "blob", blob]).stdout

    def hash_paths(self, paths: Sequence[str]) -> dict[str, Entry | None]:
        """What each path holds on disk now, as a snapshot would record it (None: absent, or a folder)."""
        result: dict[str, Entry | None] = {}
        root = os.fspath(self.workspace)
        for path in paths:
            full = self.workspace / path
            parent = os.path.realpath(full.parent)
            if parent != root and not parent.startswith(root + os.sep):
                result[path] = None  # reached through a link out of the workspace: never read there
                continue
            try:
                st = os.lstat(full)
            except OSError:
                result[path] = None
                continue
            if os.path.islink(full):
                link = os.readlink(full).encode()
                result[path] = Entry("120000", _blob_id(link))
            elif os.path.isfile(full):
                mode = "100755" if st.st_mode & 0o100 else "100644"  # git reads the owner's bit only
                try:
                    result[path] = Entry(mode, _file_blob_id(full))
                except OSError:
                    result[path] = None
            else:
                result[path] = None
        return result

    # ------------------------------------------------------------------ git

    def _prepare(self) -> None:
        if self._ready and self.git_dir.is_dir():
            return
        try:
            self._make_store()
        except OSError as exc:
            raise SnapshotError(f"the snapshot store {self.git_dir} could not be written ({exc})") from None
        self._ready = True

    def _make_store(self) -> None:
        if not self.git_dir.is_dir():
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            try:
                env = {k: v for k, v in self._env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
                subprocess.run(
                    ["git", "init", "-q", "--bare", str(self.git_dir)],
                    env=env,
                    check=True,
                    capture_output=True,
                )
            except (OSError, subprocess.CalledProcessError) as exc:
                raise SnapshotError(f"the snapshot store {self.git_dir} could not be made ({exc})") from None
            os.chmod(self.git_dir, 0o700)  # a snapshot holds whatever the workspace holds
        # The untracked cache keeps each folder's listing until its mtime changes, so `git add -A` reads only
        # the folders that changed (`benchmarks/snapshots.py`). Set once per process, for older stores too.
        self._git("config", "core.untrackedCache", "true")
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(_NO_CONVERSIONS)
        self._write_exclude()

    def _leave_out_large(self, paths: Iterable[str], budget: int | None, *, scoped: bool = False) -> int:
        """Leave out, before git stores them, files over the limit and files past `budget` bytes of new
        content: listed in info/exclude and taken out of the index. Returns the bytes left in. `scoped` (an
        in-process snapshot) raises NeedsGitError instead, so git's path does the leaving out."""
        large: dict[str, str] = {}
        stored = 0
        for path in paths:
            if path in self.too_large:
                continue
            try:
                st = os.lstat(self.workspace / path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_size > self.max_file_bytes:
                limit = describe_size(self.max_file_bytes)
                large[path] = f"{describe_size(st.st_size)}, over the {limit} limit per file"
            elif budget is not None and stored + st.st_size > budget:
                large[path] = f"{describe_size(st.st_size)}, past the run's snapshot budget"
            else:
                stored += st.st_size
        if large and scoped:
            raise NeedsGitError(next(iter(large)))
        if large:
            self.too_large.update(large)
            self.why_left_out.update(large)
            self._write_exclude()
            listed = "\0".join(large) + "\0"
            self._git("update-index", "--force-remove", "-z", "--stdin", stdin=listed)
        return stored

    def left_out_now(self, paths: Iterable[str] | None = None) -> dict[str, tuple[int, int, int] | None]:
        """What each file left out of snapshots (all, or those of `paths`) is on disk now: its size, change
        time and inode, or None when it is absent. Undo cannot restore them, but can tell they changed."""
        wanted = self.too_large if paths is None else self.too_large.intersection(paths)
        stamps: dict[str, tuple[int, int, int] | None] = {}
        for path in sorted(wanted):
            stamps[path] = file_stamp(self.workspace / path)
        return stamps

    def blob_facts(self, blobs: Iterable[str], head_bytes: int = 8192) -> dict[str, BlobFacts]:
        """Each blob's size, short id and first `head_bytes` bytes, without reading a large one whole."""
        wanted = [b for b in dict.fromkeys(blobs) if b]
        if not wanted:
            return {}
        with self._lock:
            out = self._run(["cat-file", "--batch-check"], stdin="\n".join(wanted) + "\n").stdout.decode()
        facts: dict[str, BlobFacts] = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 3 or parts[1] != "blob":
                continue
            blob, size = parts[0], int(parts[2])
            facts[blob] = BlobFacts(size=size, short_id=blob[:10], head=self._head(blob, head_bytes))
        return facts

    def _head(self, blob: str, size: int) -> bytes:
        """The first `size` bytes of a blob (git prints it whole; the reader stops early)."""
        try:
            proc = subprocess.Popen(
                ["git", *_HARDENING, "cat-file", "blob", blob],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self.workspace,
                env=self._env(),
            )
        except OSError as exc:
            raise SnapshotError(f"git could not run ({exc})") from None
        assert proc.stdout is not None
        try:
            return proc.stdout.read(size)
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()

    def _drop_large(self, paths: Sequence[str]) -> bool:
        """After the fact: files that grew over the limit between the listing and `git add` leave the
        snapshot as `_leave_out_large` leaves them. True if any did."""
        known = len(self.too_large)
        self._leave_out_large(paths, None)
        return len(self.too_large) > known

    def _write_exclude(self) -> None:
        """info/exclude: the configured patterns (at any depth, as the guardrails match them) and the files
        found too large."""
        lines = [f"{p}\n**/{p}\n" for p in self.exclude if p.strip() and not p.startswith("/")]
        lines += ["/" + _escape(p) + "\n" for p in sorted(self.too_large)]
        (self.git_dir / "info" / "exclude").write_text("".join(lines))

    def _env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.git_dir.parent),
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
        }
        return env

    def _git(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        return self._run(list(args), stdin=stdin, check=check).stdout.decode("utf-8", "surrogateescape")

    def _run(
        self, args: list[str], *, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                ["git", *_HARDENING, *args],
                input=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
                cwd=self.workspace,
                env=self._env(),
                capture_output=True,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SnapshotError(f"git could not run ({exc})") from None
        if check and proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotError(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
        return proc


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """A file's size, change time and inode (None: absent): how a file left out of snapshots is told apart."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _file_blob_id(path: Path) -> str:
    """A file's git blob id, hashed here: `git hash-object` with `core.bigFileThreshold` also compresses
    every large file it hashes, and throws the result away (4.4 s per 100 MB against 0.2 s here)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        digest = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
        read = 0
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            read += len(chunk)
    if read != size:  # it changed while read: hash what it holds now, whole
        return _blob_id(path.read_bytes())
    return digest.hexdigest()


def _blob_id(data: bytes) -> str:
    header = f"blob {len(data)}\0".encode()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def _escape(path: str) -> str:
    """A path as a gitignore line that matches only itself."""
    out = []
    for ch in path:
        if ch in "*?[]\\!# ":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def forget_runs(state_dir: Path, manifests: Iterable[dict[str, object]]) -> None:
    """Drop the snapshots only pruned runs needed: their refs, then git's unreferenced objects (older than an
    hour, so a run in progress in another kernel keeps its own)."""
    by_root: dict[str, list[str]] = {}
    for manifest in manifests:
        root, run_id = manifest.get("root"), manifest.get("run_id")
        if isinstance(root, str) and isinstance(run_id, str):
            by_root.setdefault(root, []).append(run_id)
    for root, run_ids in by_root.items():
        repo = ShadowRepo(Path(root), state_dir)
        if not repo.git_dir.is_dir():
            continue
        try:
            refs = repo._git("for-each-ref", "--format=%(refname)", *(f"refs/runs/{r}/" for r in run_ids))
            lines = "".join(f"delete {ref}\n" for ref in refs.split())
            if lines:
                repo._git("update-ref", "--stdin", stdin=lines)
            repo._git("gc", "--quiet", "--prune=1.hour.ago", check=False)
        except SnapshotError:
            continue
