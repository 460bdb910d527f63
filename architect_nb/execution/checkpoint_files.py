"""`CheckpointFiles`: each run's checkpoints kept on disk, so a run can be undone after a kernel restart.

Layout, one folder per run under the state folder (`checkpoints.dir`, by default the user's state folder,
e.g. `~/.local/state/architect-nb/checkpoints`)::

    <dir>/<run_id>/manifest.json   the workspace root, the files (path, blob, mode, folders created), commands
    <dir>/<run_id>/blobs/<n>       what file n held before the run first changed it
    <dir>/<run_id>/transcript.json the run's transcript, redacted, when Claude-style hooks asked for it

Folders are private (0700) and blobs 0600: a snapshot can hold anything the workspace holds. The manifest is
replaced atomically, so a crash leaves the previous one. Undoing a run deletes its blobs and marks the
manifest `undone`, so a second undo, from any kernel, says so. Runs older than `checkpoints.keep_days` are
deleted when an engine starts.

A manifest is only trusted as far as it agrees with the workspace it is read for: its root must be that
workspace and every path must lie inside it, so a stray or edited manifest cannot restore files elsewhere.
`saved_run_root` tells which workspace a run (named by its whole id) was made in.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.config import AppConfig
from architect_nb.execution.validators import is_inside

__all__ = [
    "RUN_ID_PATTERN",
    "CheckpointFiles",
    "SavedRun",
    "checkpoint_files",
    "default_checkpoint_dir",
    "saved_run_root",
]

#: What a run id may look like to name a folder (the engine makes 12 hex digits).
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MANIFEST = "manifest.json"
_TRANSCRIPT = "transcript.json"
_VERSION = 1


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
    root = manifest.get("root") if manifest else None
    if not isinstance(root, str) or not os.path.isabs(root) or not os.path.isdir(root):
        return None
    return Path(root)


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedFile:
    path: Path
    content: bytes | None
    mode: int | None
    created_dirs: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedRun:
    """A run read back from disk: its files in the order they were first changed, or why it cannot be used."""

    run_id: str
    files: tuple[SavedFile, ...] = ()
    commands: int = 0
    undone: str | None = None


class CheckpointFiles:
    """Reads and writes the runs of one workspace under `directory`. Thread-safe."""

    def __init__(self, directory: Path, workspace_root: Path, *, keep_days: float = 14.0) -> None:
        self.directory = Path(directory)
        self.root = Path(os.path.realpath(workspace_root))
        self.keep_days = keep_days
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ writing (the engine, during a run)

    def save(
        self, run_id: str, path: Path, content: bytes | None, mode: int | None, dirs: tuple[Path, ...]
    ) -> None:
        """Add one file's checkpoint to the run. Raises OSError (the caller turns it into a warning)."""
        folder = self._run_folder(run_id)
        with self._lock:
            manifest = self._read(folder) or self._new_manifest(run_id)
            entry: dict[str, Any] = {
                "path": str(path),
                "blob": None,
                "mode": mode,
                "created_dirs": [str(d) for d in dirs],
            }
            if content is not None:
                self._make_folder(folder)
                blobs = folder / "blobs"
                blobs.mkdir(mode=0o700, exist_ok=True)
                name = str(len(manifest["files"]))
                _write_private(blobs / name, content)
                entry["blob"] = name
            manifest["files"].append(entry)
            self._write(folder, manifest)

    def note_command(self, run_id: str) -> None:
        folder = self._run_folder(run_id)
        with self._lock:
            manifest = self._read(folder) or self._new_manifest(run_id)
            manifest["commands"] = int(manifest.get("commands", 0)) + 1
            self._write(folder, manifest)

    def mark_undone(self, run_id: str, report: str) -> None:
        """Record the undo and drop the blobs: nothing is left to restore."""
        folder = self._run_folder(run_id)
        with self._lock:
            manifest = self._read(folder)
            if manifest is None:
                return
            manifest["undone"] = report
            self._write(folder, manifest)
            shutil.rmtree(folder / "blobs", ignore_errors=True)

    def save_transcript(self, run_id: str, data: bytes) -> Path:
        """Replace the run's transcript file (0600, atomically) and return its path. Raises OSError."""
        folder = self._run_folder(run_id)
        with self._lock:
            self._make_folder(folder)
            _write_private(folder / _TRANSCRIPT, data, atomic=True)
        return folder / _TRANSCRIPT

    def prune(self, now: float | None = None) -> int:
        """Delete runs last written more than `keep_days` ago. Returns how many."""
        cutoff = (time.time() if now is None else now) - self.keep_days * 86400
        removed = 0
        with contextlib.suppress(FileNotFoundError):
            for folder in self.directory.iterdir():
                with contextlib.suppress(OSError):
                    if RUN_ID_PATTERN.match(folder.name) and _last_written(folder) < cutoff:
                        shutil.rmtree(folder)
                        removed += 1
        return removed

    # ------------------------------------------------------------------ reading (undo, maybe in a new kernel)

    def undone(self, run_id: str) -> str | None:
        """The report of the run's undo if it was undone (by any kernel), else None."""
        with self._lock:
            manifest = self._read(self._run_folder(run_id))
        return str(manifest["undone"]) if manifest and manifest.get("undone") else None

    def load(self, run_id: str) -> SavedRun | None:
        """The run as saved, or None if this workspace has none. Raises ValueError on a bad manifest."""
        folder = self._run_folder(run_id)
        with self._lock:
            manifest = self._read(folder)
        if manifest is None or manifest.get("root") != str(self.root):
            return None
        if manifest.get("undone"):
            return SavedRun(run_id=run_id, undone=str(manifest["undone"]))
        files = []
        for entry in manifest.get("files", []):
            path = Path(str(entry["path"]))
            dirs = tuple(Path(str(d)) for d in entry.get("created_dirs", []))
            if not all(p.is_absolute() and is_inside(p, self.root) and p != self.root for p in (path, *dirs)):
                raise ValueError(f"the saved checkpoint of run {run_id} names a path outside {self.root}")
            blob = entry.get("blob")
            content = None if blob is None else (folder / "blobs" / _blob_name(blob)).read_bytes()
            mode = entry.get("mode")
            files.append(
                SavedFile(
                    path=path,
                    content=content,
                    mode=int(mode) if mode is not None else None,
                    created_dirs=dirs,
                )
            )
        return SavedRun(run_id=run_id, files=tuple(files), commands=int(manifest.get("commands", 0)))

    # ------------------------------------------------------------------ helpers

    def _run_folder(self, run_id: str) -> Path:
        if not RUN_ID_PATTERN.match(run_id):
            raise ValueError(f"run id {run_id!r} is not a plain name (letters, digits, '-' and '_')")
        return self.directory / run_id

    def _new_manifest(self, run_id: str) -> dict[str, Any]:
        return {"version": _VERSION, "run_id": run_id, "root": str(self.root), "files": [], "commands": 0}

    @staticmethod
    def _read(folder: Path) -> dict[str, Any] | None:
        try:
            data = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("version") == _VERSION else None

    def _make_folder(self, folder: Path) -> None:
        """The state folder and the run's, private (parents made by mkdir get the umask's mode)."""
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            self.directory.chmod(0o700)  # not a folder the user named and made: that one is theirs
        folder.mkdir(mode=0o700, exist_ok=True)

    def _write(self, folder: Path, manifest: dict[str, Any]) -> None:
        self._make_folder(folder)
        _write_private(folder / _MANIFEST, json.dumps(manifest).encode(), atomic=True)


def _last_written(folder: Path) -> float:
    """When the run's manifest or transcript was last written; OSError for a folder holding neither."""
    times = []
    for name in (_MANIFEST, _TRANSCRIPT):
        with contextlib.suppress(FileNotFoundError):
            times.append((folder / name).stat().st_mtime)
    if not times:
        raise FileNotFoundError(folder / _MANIFEST)
    return max(times)


def _blob_name(blob: object) -> str:
    name = str(blob)
    if not name.isdigit():
        raise ValueError(f"bad blob name {name!r} in a saved checkpoint")
    return name


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
