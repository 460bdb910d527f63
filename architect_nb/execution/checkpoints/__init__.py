"""Undo: what each step of a run changed, kept so the run can be undone, rewound or reviewed file by file.

- `store`: `CheckpointStore`, the entry point: the engine's `before`/`after` around each call, and undo,
  rewind, revert and review.
- `files`: `CheckpointFiles`, each run's records on disk (so undo works after a kernel restart), and
  `checkpoint_files(config)`, where they live.
- `shadow_git`: `ShadowRepo`, snapshots in a private git object store; `shadow_objects`: a file tool's
  snapshot written in-process, without starting git.
- `restore`: putting files back as a snapshot had them, with conflicts reported.
- `person_repo`: the person's own git repository, read from its files (its index is given back whole).
- `document_steps`: changes made to notebooks open in a front end, recorded cell by cell, and their undo.
- `records`: what one step changed, what a run holds, what an undo reports, and its errors.
- `review`: one file's change for review: a diff, or a binary file described, never decoded.
- `materialise`: the workspace as it was before a run, written to a folder (the notebook check's before).
- `file_provenance`: which lines of each text file a run wrote, recorded when it ends.

Depends on `architect_nb.config`, `architect_nb.paths`, the file and notebook I/O of
`architect_nb.tools.filesystem` and `architect_nb.tools.notebook_files`, and the tools' undo seam for state
besides files (`architect_nb.tools.state_snapshot`, kept in memory); `architect_nb.provenance` for the record
of who wrote which lines; on no other execution family.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.checkpoints.files import CheckpointFiles, checkpoint_files
    from architect_nb.execution.checkpoints.shadow_git import SnapshotError
    from architect_nb.execution.checkpoints.store import (
        AlreadyUndoneError,
        CheckpointError,
        CheckpointStore,
        FileChange,
        StepRecord,
        UndoReport,
    )

__all__ = [
    "AlreadyUndoneError",
    "CheckpointError",
    "CheckpointFiles",
    "CheckpointStore",
    "FileChange",
    "SnapshotError",
    "StepRecord",
    "UndoReport",
    "checkpoint_files",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "AlreadyUndoneError": ".store",
        "CheckpointError": ".store",
        "CheckpointFiles": ".files",
        "CheckpointStore": ".store",
        "FileChange": ".store",
        "SnapshotError": ".shadow_git",
        "StepRecord": ".store",
        "UndoReport": ".store",
        "checkpoint_files": ".files",
    },
)
