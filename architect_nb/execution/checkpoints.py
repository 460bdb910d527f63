"""`CheckpointStore`: what each file held before a run first changed it, so the run can be undone.

The engine calls `record(run_id, path)` just before a write, edit, patch or delete runs. Only the first
change of a path in a run is kept, so `undo(run_id)` puts every file back as it was before the run: files
are rewritten byte for byte (atomically, keeping their mode), files the run created are removed, and so are
the folders it created for them, when empty. Changes made by `run_command` are not tracked; `summary`
says so whenever the run executed commands.

Snapshots live in memory and, given a `CheckpointFiles`, on disk too, so `undo` also works for a run this
store never saw (a kernel restarted since). A file larger than `max_bytes` is not snapshotted; `record`
says so and undo leaves it alone.

Paths are recorded resolved (symlink-free, as `validate_path` returns them). Undo restores a path only if it
still resolves to itself: a folder swapped for a symlink since the run (by a command, say) would otherwise
carry the restore, or the removal of a created file, outside the workspace.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from architect_nb.execution.checkpoint_files import CheckpointFiles
from architect_nb.tools.filesystem.fileio import atomic_write_bytes

__all__ = ["AlreadyUndoneError", "Checkpoint", "CheckpointError", "CheckpointStore", "UndoReport"]

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class CheckpointError(Exception):
    """Saved checkpoints that cannot be used (unreadable, or naming paths outside the workspace)."""


class AlreadyUndoneError(CheckpointError):
    """The run was undone already; its checkpoints are gone."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """A file's state before the run first changed it: `content` None means it did not exist."""

    path: Path
    content: bytes | None
    mode: int | None = None
    created_dirs: tuple[Path, ...] = ()


@dataclass(slots=True, kw_only=True)
class UndoReport:
    run_id: str
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    commands_untracked: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        parts = [f"Undo of run {self.run_id}: restored {len(self.restored)} file(s)"]
        if self.removed:
            parts.append(f"removed {len(self.removed)} created file(s)")
        text = ", ".join(parts) + "."
        if self.errors:
            text += " Problems: " + "; ".join(self.errors)
        if self.commands_untracked:
            text += " Changes made by run_command were not tracked and were not undone."
        return text


@dataclass(slots=True)
class _Run:
    checkpoints: dict[Path, Checkpoint] = field(default_factory=dict)
    commands: int = 0
    skipped: list[str] = field(default_factory=list)


class CheckpointStore:
    """Per-run snapshots of files before their first change. Thread-safe."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, on_disk: CheckpointFiles | None = None) -> None:
        self.max_bytes = max_bytes
        self.on_disk = on_disk
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    def record(self, run_id: str, path: Path) -> str:
        """Snapshot `path` (absolute, resolved) unless this run already did. Returns a warning or ''."""
        with self._lock:
            run = self._runs.setdefault(run_id, _Run())
            if path in run.checkpoints:
                return ""
        checkpoint, warning = _snapshot(path, self.max_bytes)
        with self._lock:
            if checkpoint is None:
                run.skipped.append(str(path))
                return warning
            if path in run.checkpoints:
                return ""
            run.checkpoints[path] = checkpoint
        if self.on_disk is not None:
            c = checkpoint
            try:
                self.on_disk.save(run_id, path, c.content, c.mode, c.created_dirs)
            except (OSError, ValueError) as exc:
                warning = f"{path} was checkpointed in memory only ({exc}); undo works in this kernel only."
        return warning

    def note_command(self, run_id: str) -> None:
        """Remember that the run executed a command, whose changes undo cannot see."""
        with self._lock:
            self._runs.setdefault(run_id, _Run()).commands += 1
        if self.on_disk is not None:
            with contextlib.suppress(OSError, ValueError):  # the summary still says so
                self.on_disk.note_command(run_id)

    def runs(self) -> list[str]:
        with self._lock:
            return list(self._runs)

    def files(self, run_id: str) -> list[Path]:
        """The files the run changed, in the order it first changed them."""
        with self._lock:
            run = self._runs.get(run_id)
            return list(run.checkpoints) if run else []

    def get(self, run_id: str, path: Path) -> Checkpoint | None:
        with self._lock:
            run = self._runs.get(run_id)
            return run.checkpoints.get(path) if run else None

    def summary(self, run_id: str) -> str:
        """One paragraph for the run summary."""
        with self._lock:
            run = self._runs.get(run_id) or _Run()
            n, commands, skipped = len(run.checkpoints), run.commands, list(run.skipped)
        text = f"{n} file(s) checkpointed; `engine.checkpoints.undo({run_id!r})` restores them."
        if skipped:
            text += f" Not checkpointed (too large or unreadable): {', '.join(skipped)}."
        if commands:
            text += (
                f" The run executed {commands} command(s); files they changed are not tracked and "
                "undo cannot restore them."
            )
        return text

    def undo(self, run_id: str) -> UndoReport:
        """Restore every file the run changed, newest first, and forget the run's checkpoints.

        A run not in memory is read from disk, if there is a `CheckpointFiles`. Raises `AlreadyUndoneError`
        for a run whose saved checkpoints say it was undone (maybe by another kernel).
        """
        if self.on_disk is not None:
            with contextlib.suppress(ValueError):  # a run id that cannot name a folder was never saved
                if (done := self.on_disk.undone(run_id)) is not None:
                    # Another kernel undid it: restoring again would overwrite whatever came since.
                    with self._lock:
                        self._runs.pop(run_id, None)
                    raise AlreadyUndoneError(f"run {run_id} was already undone ({done})")
        with self._lock:
            run = self._runs.pop(run_id, None)
        if run is None and self.on_disk is not None:
            run = self._load(run_id)
        report = UndoReport(run_id=run_id, commands_untracked=bool(run and run.commands))
        if run is None:
            return report
        for checkpoint in reversed(list(run.checkpoints.values())):
            try:
                _restore(checkpoint, report)
            except OSError as exc:
                report.errors.append(f"{checkpoint.path}: {exc.strerror or exc}")
        if self.on_disk is not None:
            with contextlib.suppress(OSError, ValueError):
                self.on_disk.mark_undone(run_id, str(report))
        return report

    def _load(self, run_id: str) -> _Run | None:
        assert self.on_disk is not None
        try:
            saved = self.on_disk.load(run_id)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"the saved checkpoints of run {run_id} cannot be used: {exc}") from exc
        if saved is None:
            return None
        if saved.undone is not None:
            raise AlreadyUndoneError(f"run {run_id} was already undone ({saved.undone})")
        run = _Run(commands=saved.commands)
        for f in saved.files:
            run.checkpoints[f.path] = Checkpoint(
                path=f.path, content=f.content, mode=f.mode, created_dirs=f.created_dirs
            )
        return run

    def discard(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)


def _snapshot(path: Path, max_bytes: int) -> tuple[Checkpoint | None, str]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return Checkpoint(path=path, content=None, created_dirs=_missing_parents(path)), ""
    except OSError as exc:
        return None, f"{path} could not be checkpointed ({exc.strerror}); undo will not restore it."
    if not stat.S_ISREG(st.st_mode):
        return None, f"{path} is not a regular file; undo will not restore it."
    if st.st_size > max_bytes:
        return None, f"{path} is larger than {max_bytes} bytes and was not checkpointed; undo will skip it."
    try:
        content = path.read_bytes()
    except OSError as exc:
        return None, f"{path} could not be read for its checkpoint ({exc.strerror}); undo will skip it."
    return Checkpoint(path=path, content=content, mode=stat.S_IMODE(st.st_mode)), ""


def _missing_parents(path: Path) -> tuple[Path, ...]:
    missing = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    return tuple(missing)


def _moved(path: Path) -> bool:
    """True when `path` no longer resolves to itself: one of its folders (or itself) became a symlink."""
    try:
        return os.path.realpath(path) != os.fspath(path)
    except (OSError, ValueError):
        return True


def _restore(checkpoint: Checkpoint, report: UndoReport) -> None:
    path = checkpoint.path
    if _moved(path):
        report.errors.append(
            f"{path}: not restored, because it is now reached through a symbolic link (changed since the run)"
        )
        return
    if checkpoint.content is None:
        if os.path.lexists(path) and not path.is_dir():
            path.unlink()
            report.removed.append(str(path))
        for folder in checkpoint.created_dirs:  # deepest first
            if _moved(folder):
                break
            with contextlib.suppress(OSError):
                folder.rmdir()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, checkpoint.content)
    if checkpoint.mode is not None:
        os.chmod(path, checkpoint.mode)
    report.restored.append(str(path))
