"""`CheckpointFiles`: each run's record of changes on disk, so a run can be undone after a kernel restart.

Layout under the state folder (`checkpoints.dir`, by default the user's state folder, e.g.
`~/.local/state/architect-nb/checkpoints`)::

    <dir>/<run_id>/manifest.json    the workspace root, each step's snapshots and the paths it changed, what
                                    was undone; the snapshots themselves are in the workspace's private git
                                    store, <dir>/snapshots/<hash>.git (see shadow_git.py)
    <dir>/<run_id>/index.before     the person's git index as it was before the run (when the workspace is
                                    in a repository), so an undo can give back what a command staged
    <dir>/<run_id>/transcript.json  the run's transcript, redacted, when Claude-style hooks asked for it
    <dir>/<run_id>/pending.json     the call in progress (its snapshot before), removed once it is over: what
                                    a kernel killed during the call leaves for an undo in a new kernel

Folders are private (0700) and files 0600: a snapshot can hold anything the workspace holds. The manifest is
replaced atomically, so a crash leaves the previous one. What was undone is written into it, so a second
undo, from any kernel, says so. Runs older than `checkpoints.keep_days` are deleted when an engine starts.

A manifest is only trusted as far as it agrees with the workspace it is read for: its root must be that
workspace and every path must be a plain relative path inside it, so a stray or edited manifest cannot
restore files elsewhere. `saved_run_root` tells which workspace a run (named by its whole id) was made in.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from architect_nb.config import AppConfig

__all__ = [
    "RUN_ID_PATTERN",
    "CheckpointFiles",
    "checkpoint_files",
    "default_checkpoint_dir",
    "plain_relative",
    "saved_run_root",
]

#: What a run id may look like to name a folder (the engine makes 12 hex digits).
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MANIFEST = "manifest.json"
_TRANSCRIPT = "transcript.json"
_INDEX = "index.before"
_PENDING = "pending.json"  # the call in progress, written before it runs and removed after
_VERSION = 2


def default_checkpoint_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("architect-nb")) / "checkpoints"


def checkpoint_files(config: AppConfig) -> CheckpointFiles | None:
    """The on-disk store `config` asks for, or None when `checkpoints.persist` is off."""
    settings = config.checkpoints
    if not settings.persist:
        return None
    directory = settings.dir.expanduser() if settings.dir else default_checkpoint_dir()
    return CheckpointFiles(directory, config.workspace.root, keep_days=settings.keep_days)


def saved_run_root(directory: Path, run_id: str) -> Path | None:
    """The workspace a saved run was made in, if `directory` holds the run (whole id) and it exists."""
    if not RUN_ID_PATTERN.match(run_id):
        return None
    manifest = CheckpointFiles._read(Path(directory) / run_id)
    root = manifest.get("root") if manifest and manifest.get("version") == _VERSION else None
    if not isinstance(root, str) or not os.path.isabs(root) or not os.path.isdir(root):
        return None
    return Path(root)


class CheckpointFiles:
    """Reads and writes the saved runs of one workspace under `directory`. Thread-safe."""

    def __init__(self, directory: Path, workspace_root: Path, *, keep_days: float = 14.0) -> None:
        self.directory = Path(directory)
        self.root = Path(os.path.realpath(workspace_root))
        self.keep_days = keep_days
        self._lock = threading.Lock()

    @property
    def snapshots(self) -> Path:
        """Where the workspaces' private snapshot stores live."""
        return self.directory / "snapshots"

    # ------------------------------------------------------------------ writing

    def save(self, run_id: str, manifest: dict[str, Any]) -> None:
        """Replace the run's manifest (atomically). Raises OSError; the caller turns it into a warning."""
        folder = self._run_folder(run_id)
        data = {**manifest, "version": _VERSION, "run_id": run_id, "root": str(self.root)}
        with self._lock:
            self._make_folder(folder)
            _write_private(folder / _MANIFEST, json.dumps(data).encode(), atomic=True)

    def save_index(self, run_id: str, data: bytes) -> None:
        """Keep the person's git index as it was before the run."""
        folder = self._run_folder(run_id)
        with self._lock:
            self._make_folder(folder)
            _write_private(folder / _INDEX, data, atomic=True)

    def save_transcript(self, run_id: str, data: bytes) -> Path:
        """Replace the run's transcript file (0600, atomically) and return its path. Raises OSError."""
        folder = self._run_folder(run_id)
        with self._lock:
            self._make_folder(folder)
            _write_private(folder / _TRANSCRIPT, data, atomic=True)
        return folder / _TRANSCRIPT

    def save_pending(self, run_id: str, pending: dict[str, Any]) -> None:
        """Note the call in progress: a small file of its own, written before each call that is snapshotted
        (not atomically: a torn one, from a crash while writing it, is read as none)."""
        folder = self._run_folder(run_id)
        with self._lock:
            self._make_folder(folder)
            _write_private(folder / _PENDING, json.dumps(pending).encode())

    def clear_pending(self, run_id: str) -> None:
        """The call in progress ended (its snapshot after was taken, or the run ended)."""
        with contextlib.suppress(FileNotFoundError):
            (self._run_folder(run_id) / _PENDING).unlink()

    def prune(self, now: float | None = None) -> list[dict[str, Any]]:
        """Delete runs last written more than `keep_days` ago. Returns the manifests of those that had one."""
        cutoff = (time.time() if now is None else now) - self.keep_days * 86400
        removed: list[dict[str, Any]] = []
        with contextlib.suppress(FileNotFoundError):
            for folder in self.directory.iterdir():
                with contextlib.suppress(OSError):
                    if RUN_ID_PATTERN.match(folder.name) and _last_written(folder) < cutoff:
                        manifest = self._read(folder) or {"run_id": folder.name}
                        shutil.rmtree(folder)
                        removed.append(manifest)
        return removed

    # ------------------------------------------------------------------ reading (undo, maybe in a new kernel)

    def load(self, run_id: str) -> dict[str, Any] | None:
        """The run's manifest, or None if this workspace saved no such run. Raises ValueError on a manifest
        that cannot be trusted (another version, paths that are not plain relative paths)."""
        folder = self._run_folder(run_id)
        with self._lock:
            manifest = self._read(folder)
        if manifest is None or manifest.get("root") != str(self.root):
            return None
        manifest["pending"] = _pending(folder)
        if manifest.get("version") != _VERSION:
            raise ValueError(
                f"run {run_id} was saved by another version of architect-nb "
                f"(format {manifest.get('version')}), so it cannot be undone here"
            )
        for step in manifest.get("steps", []):
            for path in step.get("paths", []):
                if not plain_relative(path):
                    raise ValueError(f"the saved record of run {run_id} names a path outside {self.root}")
        return manifest

    def load_index(self, run_id: str) -> bytes | None:
        try:
            return (self._run_folder(run_id) / _INDEX).read_bytes()
        except OSError:
            return None

    def saved_runs(self) -> list[dict[str, Any]]:
        """The manifests of this workspace's saved runs, oldest first: how a person finds a run again in a
        new kernel (`%architect history`), finished or cut off."""
        found = []
        with contextlib.suppress(OSError):
            for folder in self.directory.iterdir():
                if not RUN_ID_PATTERN.match(folder.name):
                    continue
                manifest = self._read(folder)
                if (
                    manifest
                    and manifest.get("root") == str(self.root)
                    and manifest.get("version") == _VERSION
                ):
                    found.append({**manifest, "pending": _pending(folder)})
        return sorted(found, key=lambda m: float(m.get("started_at") or 0.0))

    # ------------------------------------------------------------------ helpers

    def _run_folder(self, run_id: str) -> Path:
        if not RUN_ID_PATTERN.match(run_id):
            raise ValueError(f"run id {run_id!r} is not a plain name (letters, digits, '-' and '_')")
        return self.directory / run_id

    @staticmethod
    def _read(folder: Path) -> dict[str, Any] | None:
        try:
            data = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _make_folder(self, folder: Path) -> None:
        """The state folder and the run's, private (parents made by mkdir get the umask's mode)."""
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            self.directory.chmod(0o700)  # not a folder the user named and made: that one is theirs
        folder.mkdir(mode=0o700, exist_ok=True)


def plain_relative(path: object) -> bool:
    if not isinstance(path, str) or not path or path.startswith("/") or "\0" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _pending(folder: Path) -> dict[str, Any] | None:
    """The call in progress a run's folder names, or None (none, or a file torn by a crash)."""
    try:
        data = json.loads((folder / _PENDING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _last_written(folder: Path) -> float:
    """When the run's manifest or transcript was last written; OSError for a folder holding neither."""
    times = []
    for name in (_MANIFEST, _TRANSCRIPT):
        with contextlib.suppress(FileNotFoundError):
            times.append((folder / name).stat().st_mtime)
    if not times:
        raise FileNotFoundError(folder / _MANIFEST)
    return max(times)


def _write_private(path: Path, data: bytes, *, atomic: bool = False) -> None:
    """Write a 0600 file. Not fsynced: a checkpoint is a safety net, and a run's edits are fsynced anyway."""
    if not atomic:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
