"""The records of undo: what one step changed, what a run holds, what an undo reports, and its errors."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from architect_nb.execution.checkpoints.person_repo import RepoState

__all__ = [
    "AlreadyUndoneError",
    "CheckpointError",
    "FileChange",
    "Mark",
    "RunRecord",
    "StepRecord",
    "UndoReport",
]


class CheckpointError(Exception):
    """Saved records that cannot be used (unreadable, from another version, naming paths outside)."""


class AlreadyUndoneError(CheckpointError):
    """The run, step or file was undone already."""


@dataclass(kw_only=True)
class StepRecord:
    """One call that changed files: the snapshots around it and the paths that differ."""

    step: int
    call_id: str
    tool: str
    before: str
    after: str
    paths: list[str]
    index_before: str | None = None  # digests of the person's git index around the call
    index_after: str | None = None
    head_before: str = ""  # the person's HEAD and commit around the call ("ref: ... @ commit")
    head_after: str = ""
    #: A change to a notebook open in a front end (no snapshot saw it): {"path", "where", "cells": [...]}.
    document: dict[str, Any] | None = None
    #: Files the call changed that snapshots leave out (over the size limit or the run's budget), by path:
    #: {"why": ..., "before": [size, mtime_ns, inode] or None, "after": the same, "created": bool}.
    left_out: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file a run changed, for review: `status` is added, deleted or modified."""

    path: str
    status: str
    diff: str


@dataclass(slots=True, kw_only=True)
class UndoReport:
    run_id: str
    scope: str = ""  # "", "from step 3", "shop/cart.py"
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    state: list[str] = field(default_factory=list)  # what was done to the person's variables, in sentences

    @property
    def ok(self) -> bool:
        return not self.errors and not self.conflicts

    def __str__(self) -> str:
        what = f"Undo of run {self.run_id}" + (f" ({self.scope})" if self.scope else "")
        if self.state and not self.restored and not self.removed:  # only the person's variables changed
            text = f"{what}:"
        else:
            parts = [f"{what}: restored {len(self.restored)} file(s)"]
            if self.removed:
                parts.append(f"removed {len(self.removed)} created file(s)")
            text = ", ".join(parts) + "."
        if self.state:
            text += " " + " ".join(self.state)
        if self.conflicts:
            text += f" Left alone, because they changed since the run: {', '.join(self.conflicts)}."
        if self.errors:
            text += " Problems: " + "; ".join(self.errors)
        if self.notes:
            text += " " + " ".join(self.notes)
        return text


@dataclass(slots=True)
class RunRecord:
    """What one run changed, step by step, and what of it was undone since (saved as its manifest)."""

    steps: list[StepRecord] = field(default_factory=list)
    not_covered: set[str] = field(default_factory=set)
    uncovered_calls: list[str] = field(default_factory=list)
    undone: str | None = None  # the report of the whole run's undo
    undone_from: int | None = None  # steps from this one on were rewound
    reverted: set[str] = field(default_factory=set)
    index: bytes | None = None  # the person's git index before the run's first step that changed it
    stored_bytes: int = 0  # new content the run's snapshots kept (its budget is checkpoints.max_run_bytes)
    task: str = ""  # the task's first line, redacted: how a person finds the run again in a new kernel
    started_at: float = 0.0
    process: str = ""  # "<host>:<pid>" running it: unfinished, with that process gone, means cut off
    #: False until the run ends: a saved run still unfinished was cut off (its kernel died during it).
    finished: bool = False
    #: The call snapshotted before and not yet after ({"step", "call_id", "tool", "scope", "before"}): saved
    #: beside the manifest (`CheckpointFiles.save_pending`), so that a kernel killed during the call leaves a
    #: record of where its changes began.
    pending: dict[str, Any] | None = None
    saved: bool = False  # a manifest was written (not saved itself): the run's end must be written too
    cut_off: str = ""  # read back from disk: the call a dead kernel cut off, found by comparing (not saved)
    #: The steps that changed state besides files (the person's variables): {"step", "tool", "names"}. The
    #: snapshots themselves live in the kernel's memory only (`CheckpointStore.record_state`).
    state_steps: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""  # the run's model: what the files' provenance names with the run
    #: Which lines of each text file the run wrote (`provenance.record`), made when the run ends.
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_manifest(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "model": self.model,
            "provenance": self.provenance,
            "started_at": self.started_at,
            "process": self.process,
            "finished": self.finished,
            "state_steps": self.state_steps,
            "steps": [asdict(s) for s in self.steps],
            "not_covered": sorted(self.not_covered),
            "uncovered_calls": self.uncovered_calls,
            "undone": self.undone,
            "undone_from": self.undone_from,
            "reverted": sorted(self.reverted),
            "stored_bytes": self.stored_bytes,
        }

    @classmethod
    def from_manifest(cls, data: dict[str, Any]) -> RunRecord:
        return cls(
            steps=[StepRecord(**s) for s in data.get("steps", [])],
            not_covered=set(data.get("not_covered", [])),
            uncovered_calls=list(data.get("uncovered_calls", [])),
            undone=data.get("undone"),
            undone_from=data.get("undone_from"),
            reverted=set(data.get("reverted", [])),
            stored_bytes=int(data.get("stored_bytes", 0)),
            task=str(data.get("task", "")),
            started_at=float(data.get("started_at", 0.0)),
            process=str(data.get("process", "")),
            finished=bool(data.get("finished", True)),  # saved before runs said: not known to be cut off
            pending=data.get("pending") if isinstance(data.get("pending"), dict) else None,
            state_steps=[d for d in data.get("state_steps", []) if isinstance(d, dict)],
            model=str(data.get("model", "")),
            provenance=dict(data["provenance"]) if isinstance(data.get("provenance"), dict) else {},
        )


@dataclass(slots=True)
class Mark:
    """A snapshot taken before a call, waiting for the one after it."""

    run_id: str
    step: int
    call_id: str
    tool: str
    scope: list[str] | None
    before: str
    repo: RepoState | None
    index: bytes | None
    left_out: dict[str, tuple[int, int, int] | None] = field(default_factory=dict)
