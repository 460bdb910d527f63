"""The workspace's saved runs, as a person looks for them in a new kernel: after a restart, or after a kernel
died in the middle of a run.

Each run that snapshotted files has a record on disk (`execution.checkpoints.files`) naming its task, when it
started, which process ran it, whether it finished, and the files it changed. `%architect history` lists them
beside this kernel's runs, `%architect threads` names the runs that never finished, and `%architect undo` in
a kernel with no run of its own offers the last of those. An unfinished run whose process is gone was cut off
(its kernel was killed or crashed); one whose process still lives is running in another kernel.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from architect_nb.config import AppConfig
from architect_nb.execution.checkpoints.files import checkpoint_files, plain_relative

__all__ = ["SavedRun", "cut_off_offer", "cut_off_runs", "saved_listing", "saved_runs"]

_SHOWN = 10  # the newest saved runs a listing shows


@dataclass(frozen=True, slots=True)
class SavedRun:
    run_id: str
    task: str
    started_at: float
    finished: bool
    running_elsewhere: bool  # unfinished, and its process still lives
    files: tuple[str, ...]
    undone: bool
    during: str = ""  # the call that was running when an unfinished run stopped ("step 3, run_command")

    @property
    def cut_off(self) -> bool:
        return not self.finished and not self.running_elsewhere and not self.undone

    def state(self) -> str:
        if self.undone:
            return "undone"
        if self.finished:
            return "finished"
        if self.running_elsewhere:
            return "running in another kernel"
        return "cut off (its kernel stopped" + (f" during {self.during})" if self.during else ")")

    def line(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started_at)) if self.started_at else "?"
        task = f"  {self.task[:60]}" if self.task else ""
        return f"{self.run_id}  {when}  {self.state()}  {len(self.files)} file(s){task}"


def saved_runs(config: AppConfig) -> list[SavedRun]:
    """The workspace's saved runs, oldest first ([] when runs are not saved)."""
    files = checkpoint_files(config)
    if files is None:
        return []
    return [run for manifest in files.saved_runs() if (run := _saved_run(manifest)) is not None]


def cut_off_runs(config: AppConfig, *, besides: Collection[str] = ()) -> list[SavedRun]:
    """The saved runs cut off by a kernel that stopped, not undone since, oldest first."""
    return [run for run in saved_runs(config) if run.cut_off and run.run_id not in besides]


def saved_listing(config: AppConfig, *, besides: Collection[str] = ()) -> list[str]:
    """Lines for the newest saved runs not made in this kernel (`besides`), or [] when there are none."""
    runs = [run for run in saved_runs(config) if run.run_id not in besides]
    if not runs:
        return []
    shown = runs[-_SHOWN:]
    head = f"Saved runs of {config.workspace.root} (from other kernels; `%architect undo RUN` undoes one):"
    more = [f"  ... and {len(runs) - len(shown)} older"] if len(runs) > len(shown) else []
    return [head, *more, *(f"  {run.line()}" for run in shown)]


def cut_off_offer(config: AppConfig, *, besides: Collection[str] = ()) -> str | None:
    """What `%architect undo` says in a kernel with no run of its own when a run was cut off: the last one,
    with the files it changed and the command that undoes it. None when no run was cut off."""
    runs = cut_off_runs(config, besides=besides)
    if not runs:
        return None
    run = runs[-1]
    files = ", ".join(run.files[:8]) + (f" and {len(run.files) - 8} more" if len(run.files) > 8 else "")
    changed = f"It changed {files}" if run.files else "No file change of it was recorded"
    changed += "; what the call in progress changed is found when undoing." if run.during else "."
    earlier = (
        f" ({len(runs) - 1} earlier cut-off run(s): `%architect history` lists them.)"
        if len(runs) > 1
        else ""
    )
    return (
        f"No run in this kernel yet. The workspace's last unfinished run: {run.line()}. {changed} "
        f"`%architect undo {run.run_id}` puts its files back.{earlier}"
    )


def _saved_run(manifest: Mapping[str, Any]) -> SavedRun | None:
    run_id = manifest.get("run_id")
    if not isinstance(run_id, str):
        return None
    files: dict[str, None] = {}
    for step in manifest.get("steps") or ():
        if isinstance(step, Mapping):
            for path in [*(step.get("paths") or ()), *(step.get("left_out") or {})]:
                if plain_relative(path):
                    files.setdefault(str(path), None)
    finished = bool(manifest.get("finished", True))
    pending = manifest.get("pending")
    during = f"step {pending.get('step')}, {pending.get('tool')}" if isinstance(pending, Mapping) else ""
    started = manifest.get("started_at")
    return SavedRun(
        run_id=run_id,
        task=str(manifest.get("task") or ""),
        started_at=float(started) if isinstance(started, (int, float)) else 0.0,
        finished=finished,
        running_elsewhere=not finished and _alive(str(manifest.get("process") or "")),
        files=tuple(files),
        undone=manifest.get("undone") is not None,
        during=during,
    )


def _alive(process: str) -> bool:
    """Whether `host:pid` names a live process on this machine (another host's: taken as alive)."""
    host, _, pid = process.rpartition(":")
    if not host or not pid.isdigit():
        return False
    if host != socket.gethostname():
        return True  # a shared state folder on another machine: never call its run cut off
    if int(pid) == os.getpid():
        return False  # this process: a run of an earlier kernel session in it would be in its history
    try:
        os.kill(int(pid), 0)
    except PermissionError:
        return True  # another user's process
    except OSError:  # none by that id (or an id the system refuses)
        return False
    return True
