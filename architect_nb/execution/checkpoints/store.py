"""`CheckpointStore`: what each step of a run changed in the workspace, so the run can be undone, rewound or
reviewed file by file.

Around every call that can change files (the file tools, run_command, run_python, MCP tools) the engine takes
a snapshot before and after (`before`/`after`): for a file tool, of just its files; for a command, of the
whole workspace. The snapshots live in the workspace's private git store (`shadow_git.py`), never in the
person's repository; a step's record is its two trees and the paths that differ. So undo sees what commands
changed too (`ruff --fix`, `sed -i`, `git mv`, generated files), and knows which step changed which file.

A notebook tool that changed a notebook open in a front end changed its document, not the file: that step
records the change cell by cell instead (`record_document`), and undo puts those cells back in the open
document, or in the file if it was closed since (`document_steps.py`).

`undo(run)` restores every path the run changed, `undo(run, from_step=S)` every path changed at step S or
later (the workspace as it was just before step S), `undo(run, path=P)` one file (a review's Revert). A path
is restored only if it still holds what the run left; a file changed since is a conflict, reported and left
alone. When the workspace is in a git repository, what a command staged is given back too (the index), and a
command that committed or moved a branch is reported, never rewritten (`person_repo.py`). What `.gitignore`
hides, and files over `max_bytes`, are not covered, and the summary says so.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from architect_nb.execution.checkpoints.files import CheckpointFiles, checkpoint_files, plain_relative
from architect_nb.execution.checkpoints.person_repo import PersonRepo, RepoState, find_repo
from architect_nb.execution.checkpoints.records import (
    AlreadyUndoneError,
    CheckpointError,
    FileChange,
    Mark,
    RunRecord,
    StepRecord,
    UndoReport,
)
from architect_nb.execution.checkpoints.restore import plan_paths, restore
from architect_nb.execution.checkpoints.shadow_git import ShadowRepo, SnapshotError, file_stamp, forget_runs
from architect_nb.provenance.record import Author
from architect_nb.tools.state_snapshot import KERNEL_ENTRY, StateChange, StateSnapshot, describe_changes

if TYPE_CHECKING:
    from architect_nb.config.schema import AppConfig
    from architect_nb.tools.notebook_files.backend import DocumentBackend

__all__ = [
    "AlreadyUndoneError",
    "CheckpointError",
    "CheckpointStore",
    "FileChange",
    "StepRecord",
    "UndoReport",
]

DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_MAX_RUN_BYTES = 1024 * 1024 * 1024


class CheckpointStore:
    """The change records of the runs in one workspace. Thread-safe.

    Args:
        workspace: The workspace root. Without one, nothing is recorded (a bare store for reading saved runs
            needs `on_disk`).
        on_disk: Where runs are saved, so undo works after a kernel restart; without it, snapshots go to a
            private temporary folder removed when the process exits.
        max_bytes: Larger files are not snapshotted.
        max_run_bytes: The most new content one run's snapshots keep; files past it are not snapshotted.
        include: Globs of paths `.gitignore` hides that snapshots should cover anyway.
        exclude: Globs of paths snapshots never hold (`guardrails.sensitive_files`: no secret is copied into
            the state folder; the sandbox keeps commands from changing them).
    """

    def __init__(
        self,
        workspace: Path | None = None,
        *,
        on_disk: CheckpointFiles | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_run_bytes: int = DEFAULT_MAX_RUN_BYTES,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> None:
        self.on_disk = on_disk
        root = workspace if workspace is not None else (on_disk.root if on_disk is not None else None)
        self.workspace = Path(os.path.realpath(root)) if root is not None else None
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self._runs: dict[str, RunRecord] = {}
        self._states: dict[str, list[tuple[int, StateSnapshot]]] = {}  # by run: (step, snapshot), in order
        self._state_words: dict[str, list[str]] = {}  # by run: what each step changed, for the review
        self._kept: set[str] = set()  # trees a ref of this store keeps from git's garbage collection
        self._lock = threading.Lock()
        self._shadow: ShadowRepo | None = None
        self._max_bytes = max_bytes
        self.max_run_bytes = max_run_bytes
        self._person: PersonRepo | bool | None = False  # False: not looked up yet

    @classmethod
    def for_config(cls, config: AppConfig) -> CheckpointStore:
        """The store `config` asks for (`checkpoints:`), after removing saved runs older than `keep_days`
        and the snapshots only they needed. Sensitive files, and other programs' files (`others`), are never
        snapshotted."""
        files = checkpoint_files(config)
        if files is not None:
            with contextlib.suppress(OSError):
                forget_runs(files.snapshots, files.prune())
        return cls(
            config.workspace.root,
            on_disk=files,
            max_bytes=config.checkpoints.max_file_bytes,
            max_run_bytes=config.checkpoints.max_run_bytes,
            include=config.checkpoints.include,
            exclude=[*config.guardrails.sensitive_files, *config.checkpoints.others],
        )

    # ------------------------------------------------------------------ during a run

    @property
    def shadow(self) -> ShadowRepo:
        if self._shadow is None:
            if self.workspace is None:
                raise SnapshotError("this store has no workspace")
            store = self.on_disk.snapshots if self.on_disk is not None else _private_snapshot_dir()
            self._shadow = ShadowRepo(
                self.workspace, store, max_file_bytes=self._max_bytes, exclude=self.exclude
            )
        return self._shadow

    def available(self) -> str | None:
        """Why snapshots cannot be taken here (the state folder unwritable, git missing), or None."""
        try:
            self.shadow._prepare()
            probe = self.shadow.git_dir / ".probe"
            probe.write_bytes(b"")
            probe.unlink()
        except (OSError, SnapshotError) as exc:
            return str(exc)
        return None

    def begin_run(self, run_id: str, task: str, model: str = "") -> None:
        """A run starts: its task (the caller redacts it), model and time go into its record, written with its
        first snapshot, so a person can find the run again from another kernel (`saved_runs`)."""
        first = next((line.strip() for line in task.splitlines() if line.strip()), "")
        with self._lock:
            run = self._runs.setdefault(run_id, RunRecord())
            run.task, run.started_at, run.model = first[:200], time.time(), model
            run.process = f"{socket.gethostname()}:{os.getpid()}"

    def end_run(self, run_id: str) -> None:
        """The run ended (however it ended): a saved run is marked finished, so it is not taken for one cut
        off by a dead kernel, and records which lines of each text file it wrote (`file_provenance`)."""
        written = self._files_written(run_id)
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or run.finished:
                return
            run.provenance = written
            run.finished = True
            run.pending = None
            if not run.saved:
                return
            manifest = run.to_manifest()
        self._save(run_id, manifest)
        self._clear_pending(run_id)

    def provenance(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Which lines of each text file the run wrote (`provenance.record`), once the run has ended."""
        run = self._run(run_id)
        return dict(run.provenance) if run is not None else {}

    def _files_written(self, run_id: str) -> dict[str, dict[str, Any]]:
        run = self._runs.get(run_id)
        if run is None or run.finished or not run.model:
            return {}
        firsts, lasts = _spans(self._steps(run_id))
        if not firsts or self.available() is not None:  # a run that changed no file makes no snapshot store
            return {}
        from architect_nb.execution.checkpoints.file_provenance import files_written

        try:
            return files_written(self.shadow, firsts, lasts, Author(run_id, run.model))
        except (OSError, SnapshotError):  # the record is extra: never what ends a run badly
            return {}

    def before(
        self, run_id: str, *, step: int, call_id: str, tool: str, paths: Sequence[Path] | None
    ) -> Mark:
        """Snapshot before a call: of `paths` (a file tool's), or of the whole workspace (None). Raises
        SnapshotError when no snapshot can be taken (the call is then not covered by undo).

        What is there before a call is kept whatever the run's budget (it is what undo restores), up to the
        size limit per file; the budget bounds what the run's calls write."""
        scope = None if paths is None else [rel for p in paths if (rel := self._rel(p)) is not None]
        tree = self.shadow.snapshot(scope, include=self.include)
        person = self.person
        mark = Mark(
            run_id=run_id,
            step=step,
            call_id=call_id,
            tool=tool,
            scope=scope,
            before=tree,
            repo=person.state() if person is not None else None,
            index=person.index_bytes() if person is not None and scope is None else None,
            left_out=self.shadow.left_out_now(scope),
        )
        self._note_pending(mark)
        return mark

    def _note_pending(self, mark: Mark) -> None:
        """Save where the call's changes begin before it runs: a kernel killed during it (SIGKILL, a crash)
        leaves a record an undo in a new kernel can compare the workspace with (`_cut_off_step`). The run's
        manifest is written the first time only (so the run can be found); each call writes a small file of
        its own, never the whole manifest again."""
        on_disk = self.on_disk
        if on_disk is None:
            return
        pending = {
            "step": mark.step,
            "call_id": mark.call_id,
            "tool": mark.tool,
            "scope": mark.scope,
            "before": mark.before,
        }
        with self._lock:
            run = self._runs.setdefault(mark.run_id, RunRecord())
            run.pending = pending
            first = run.to_manifest() if not run.saved else None
        if mark.before not in self._kept:  # a tree a ref already keeps (most calls change nothing) needs none
            with contextlib.suppress(SnapshotError):
                self.shadow.keep({f"refs/runs/{mark.run_id}/{mark.step}p": mark.before})
                self._kept.add(mark.before)
        if first is not None:
            self._save(mark.run_id, first)
        with contextlib.suppress(OSError, ValueError):
            on_disk.save_pending(mark.run_id, pending)

    def _clear_pending(self, run_id: str) -> None:
        if self.on_disk is not None:
            with contextlib.suppress(OSError, ValueError):
                self.on_disk.clear_pending(run_id)

    def after(self, mark: Mark) -> list[str]:
        """Snapshot after the call; records the step if it changed anything. Returns the changed paths, those
        left out of snapshots included (`left_out(run_id)` says which)."""
        with self._lock:
            stored_so_far = self._runs[mark.run_id].stored_bytes if mark.run_id in self._runs else 0
        budget = max(0, self.max_run_bytes - stored_so_far)
        tree = self.shadow.snapshot(mark.scope, include=self.include, budget=budget)
        stored = self.shadow.last_stored
        changed = self.shadow.changed(mark.before, tree)
        left_out = self._left_out_changes(mark, tree)
        person = self.person
        repo_after = person.state() if person is not None else None
        index_changed = bool(mark.repo and repo_after and mark.repo.index_digest != repo_after.index_digest)
        head_moved = bool(mark.repo and repo_after and mark.repo.commit != repo_after.commit)
        nothing = not changed and not left_out and not index_changed and not head_moved
        with self._lock:
            run = self._runs.setdefault(mark.run_id, RunRecord())
            run.stored_bytes += stored
            run.not_covered.update(left_out)
            was_pending, run.pending = run.pending is not None, None
        if was_pending:  # the saved record no longer names the call as in progress
            self._clear_pending(mark.run_id)
        if nothing:
            return []
        with self._lock:
            record = StepRecord(
                step=mark.step,
                call_id=mark.call_id,
                tool=mark.tool,
                before=mark.before,
                after=tree,
                paths=changed,
                index_before=mark.repo.index_digest if mark.repo else None,
                index_after=repo_after.index_digest if repo_after else None,
                head_before=_head(mark.repo),
                head_after=_head(repo_after),
                left_out=left_out,
            )
            run.steps.append(record)
            manifest = run.to_manifest()
        self._keep_trees(mark.run_id, len(manifest["steps"]), mark.before, tree)
        if index_changed and mark.index is not None and run.index is None:
            run.index = mark.index
            if self.on_disk is not None:
                with contextlib.suppress(OSError, ValueError):
                    self.on_disk.save_index(mark.run_id, mark.index)
        self._save(mark.run_id, manifest)
        return [*changed, *left_out]

    def _left_out_changes(self, mark: Mark, tree: str) -> dict[str, dict[str, Any]]:
        """The files left out of snapshots that changed during the call: their state before and after, why
        they are left out, and whether the call created them (they were in no snapshot before it)."""
        now = self.shadow.left_out_now(mark.scope)
        changes: dict[str, dict[str, Any]] = {}
        new = [p for p in now if p not in mark.left_out]
        in_before = self.shadow.entries(mark.before, new) if new else {}
        for path, stamp in now.items():
            known = path in mark.left_out
            if known and mark.left_out[path] == stamp:
                continue
            before = mark.left_out.get(path)
            changes[path] = {
                "why": self.shadow.why_left_out.get(path, "over the snapshot limit"),
                "before": list(before) if before is not None else None,
                "after": list(stamp) if stamp is not None else None,
                "created": not known and path not in in_before,
            }
        return changes

    def record_document(
        self, run_id: str, *, step: int, call_id: str, tool: str, path: Path, change: dict[str, Any]
    ) -> str | None:
        """Record a change a call made to a notebook open in a front end (its cells, as the notebook tools
        describe them). Returns the notebook's path relative to the workspace, or None if it is outside."""
        rel = self._rel(path)
        if rel is None:
            return None
        record = StepRecord(
            step=step, call_id=call_id, tool=tool, before="", after="", paths=[rel], document=change
        )
        with self._lock:
            run = self._runs.setdefault(run_id, RunRecord())
            run.steps.append(record)
            manifest = run.to_manifest()
        self._save(run_id, manifest)
        return rel

    def record_state(
        self, run_id: str, *, step: int, tool: str, state: StateSnapshot, changes: Sequence[StateChange]
    ) -> None:
        """Keep what a call changed besides files (the person's variables), for undo. The snapshot stays in
        this process's memory; the saved record names the step, so an undo after a restart says it is gone."""
        with self._lock:
            run = self._runs.setdefault(run_id, RunRecord())
            self._states.setdefault(run_id, []).append((step, state))
            self._state_words.setdefault(run_id, []).append(
                f"Step {step} ({tool}). {describe_changes(list(changes))}"
            )
            run.state_steps.append({"step": step, "tool": tool, "names": [c["name"] for c in changes]})
            manifest = run.to_manifest()
        self._save(run_id, manifest)

    def not_covered(self, run_id: str, call: str) -> None:
        """A call ran with no snapshot (the store could not be written): undo cannot restore what it did."""
        with self._lock:
            self._runs.setdefault(run_id, RunRecord()).uncovered_calls.append(call)
            manifest = self._runs[run_id].to_manifest()
        self._save(run_id, manifest)

    # ------------------------------------------------------------------ reading a run

    def files(self, run_id: str) -> list[Path]:
        """The files the run changed, in the order it first changed them."""
        assert self.workspace is not None
        seen: dict[str, None] = {}
        for step in self._steps(run_id):
            for path in (*step.paths, *step.left_out):
                seen.setdefault(path, None)
        return [self.workspace / p for p in seen]

    def steps(self, run_id: str) -> list[StepRecord]:
        return list(self._steps(run_id))

    def left_out(self, run_id: str) -> dict[str, str]:
        """The files the run changed that snapshots left out, and why (undo cannot restore their content)."""
        found: dict[str, str] = {}
        for step in self._steps(run_id):
            for path, facts in step.left_out.items():
                found.setdefault(path, str(facts.get("why", "over the snapshot limit")))
        return found

    def summary(self, run_id: str) -> str:
        """One paragraph for the run summary: what undo covers and what it does not."""
        with self._lock:
            run = self._runs.get(run_id) or RunRecord()
            n = len({p for s in run.steps for p in (*s.paths, *s.left_out)})
            uncovered = list(run.uncovered_calls)
        large = self.left_out(run_id)
        text = f"{n} file(s) changed; `%architect undo {run_id}` restores them, whichever tool changed them."
        if large:
            text += " Not covered: " + "; ".join(f"{p} ({why})" for p, why in sorted(large.items())) + "."
        if uncovered:
            text += f" Not covered (no snapshot could be taken): {', '.join(uncovered)}."
        return text

    def coverage_note(self, run_id: str) -> str:
        """What the run's undo does not cover, or '' when it covers everything it changed."""
        with self._lock:
            run = self._runs.get(run_id) or RunRecord()
            uncovered = list(run.uncovered_calls)
        large = sorted(self.left_out(run_id).items())
        parts = []
        if large:
            shown = ", ".join(f"{p} ({why})" for p, why in large[:5])
            parts.append(f"files not snapshotted ({shown}{', ...' if len(large) > 5 else ''})")
        if uncovered:
            parts.append(
                f"what {len(uncovered)} call(s) changed with no snapshot ({', '.join(uncovered[:3])})"
            )
        return ("Undo does not cover " + " and ".join(parts) + ".") if parts else ""

    def review(self, run_id: str) -> list[FileChange]:
        """Every file the run changed, with its diff from before the run to what the run left; a binary file
        described (kind, size, content id), never decoded; a file left out of snapshots said to be."""
        from architect_nb.execution.checkpoints.review import left_out_change, review_change

        steps = self._steps(run_id)
        firsts, lasts = _spans(steps)
        changes = []
        documents = _document_changes(steps)
        if documents:
            from architect_nb.execution.checkpoints.document_steps import review_diff

            for path in dict.fromkeys(p for p, _ in documents):
                if path not in firsts:
                    cells = [c for p, c in documents if p == path]
                    changes.append(FileChange(path=path, status="modified", diff=review_diff(path, cells)))
        for path in firsts:
            changes.append(review_change(self.shadow, path, firsts[path], lasts[path]))
        for path, (first, last) in _left_out_spans(steps).items():
            if path not in firsts:
                changes.append(left_out_change(path, first, last))
        if (kernel := self._state_review(run_id)) is not None:
            changes.append(kernel)  # last, after the files
        return changes

    def _state_review(self, run_id: str) -> FileChange | None:
        """The review's entry for the person's variables (`KERNEL_ENTRY`), beside the files: what each step
        changed, before → after, while this kernel holds the snapshots."""
        run = self._run(run_id)
        if run is None or not run.state_steps:
            return None
        with self._lock:
            said = list(self._state_words.get(run_id, []))
        if not said:
            names = sorted({str(n) for d in run.state_steps for n in d.get("names", [])})
            said = [
                f"Changed: {', '.join(names)} (their snapshots were in a kernel that has restarted since)"
            ]
        return FileChange(path=KERNEL_ENTRY, status="modified", diff="\n".join(said) + "\n")

    def write_before(self, run_id: str, directory: Path) -> list[str]:
        """Write the workspace as it was before run `run_id` into `directory` (which must not exist): a copy
        of it now, with each file the run changed as its first snapshot had it (`materialise.py`). Returns
        notes on what the copy cannot show (cells changed in an open notebook, files over the size limit)."""
        from architect_nb.execution.checkpoints.materialise import write_workspace_before

        steps = self._steps(run_id)
        firsts, lasts = _spans(steps)
        plans = plan_paths(self.shadow, firsts, lasts) if firsts else []
        write_workspace_before(self.shadow, plans, directory)
        notes = []
        if documents := sorted({p for p, _ in _document_changes(steps)}):
            notes.append(
                f"cells the run changed in open notebooks ({', '.join(documents)}) are as the run left them"
            )
        if large := sorted(self.left_out(run_id)):
            notes.append(f"files not snapshotted ({', '.join(large[:5])}) are as they are now")
        return notes

    # ------------------------------------------------------------------ undo, rewind, revert

    def undo(
        self,
        run_id: str,
        *,
        from_step: int | None = None,
        path: str | None = None,
        documents: DocumentBackend | None = None,
    ) -> UndoReport:
        """Restore what the run changed: all of it, the steps from `from_step` on, or one `path`.

        A run not in memory is read from disk. Cells the run changed in an open notebook go back in the
        document `documents` finds open, else in the file. Raises `AlreadyUndoneError` for what was undone
        already (maybe by another kernel), `CheckpointError` for a step or path the run never changed, or
        when open documents cannot be reached from here."""
        run = self._run(run_id, fresh=True)
        scope = f"from step {from_step}" if from_step is not None else (path or "")
        report = UndoReport(run_id=run_id, scope=scope)
        if run is None:
            if from_step is not None or path is not None:
                raise CheckpointError(f"run {run_id} changed no files, so there is nothing to undo")
            return report
        steps = _steps_to_undo(run, run_id, from_step, path)
        if run.cut_off:
            report.notes.append(
                f"The run stopped during {run.cut_off} (its kernel died): that call's changes are the "
                "differences between its snapshot before it and the files now, edits made since included."
            )
        documents_changed = [(p, c) for p, c in _document_changes(steps, only=path) if p not in run.reverted]
        if documents_changed and documents is not None and (why := documents.unavailable()) is not None:
            raise CheckpointError(why)
        if documents_changed:
            self._restore_documents(documents_changed, documents, report)
        if path != KERNEL_ENTRY:
            self._restore_files(run, steps, path, report)
            self._settle_left_out(run, steps, path, report)
        if path is None or path == KERNEL_ENTRY:
            self._restore_states(run, run_id, from_step, report)
        if path is None:
            self._restore_index(run, run_id, steps, report)
            report.notes += _moved_heads(steps)
        elif any(s.index_before != s.index_after for s in steps):
            # The index is given back whole or not at all (it is never edited entry by entry), so a revert of
            # one file leaves what the run staged: said, so that a commit does not take the run's version.
            report.notes.append(
                f"A step that changed {path} also changed what git has staged (git add, git mv); the "
                "staged version may still be the run's: check `git status` (the whole-run undo gives the "
                "index back)."
            )
        if not report.ok:
            # Nothing is marked done, so the same undo can run again once the person has settled the
            # conflicts: what was restored now holds its original and is skipped then.
            report.notes.append("Run the undo again after resolving those; what was restored stays.")
            return report
        self._mark_undone(run, run_id, report, from_step=from_step, path=path)
        return report

    def _settle_left_out(
        self, run: RunRecord, steps: list[StepRecord], path: str | None, report: UndoReport
    ) -> None:
        """Files the run changed that snapshots left out: one the run created, still as it left it, is
        removed; any other is named with why its content cannot come back."""
        assert self.workspace is not None
        for rel, (first, last) in _left_out_spans(steps, only=path).items():
            if rel in run.reverted:
                continue
            target = self.workspace / rel
            now = file_stamp(target)
            if first.get("created") and now is not None and list(now) == last.get("after"):
                try:
                    target.unlink()
                    report.removed.append(rel)
                except OSError as exc:
                    report.errors.append(f"{rel}: {exc.strerror or exc}")
                continue
            if first.get("created") and now is None:
                continue  # gone already: as before the run
            why = first.get("why", "over the snapshot limit")
            report.notes.append(
                f"Not restored: {rel} ({why}); its content before the run was not snapshotted"
                + (", and it changed since the run." if list(now or ()) != (last.get("after") or []) else ".")
            )

    def _restore_documents(
        self,
        changed: list[tuple[str, dict[str, Any]]],
        documents: DocumentBackend | None,
        report: UndoReport,
    ) -> None:
        """Put back the cells the run changed in open notebooks (in the file if the notebook was closed)."""
        from architect_nb.execution.checkpoints.document_steps import revert_documents

        assert self.workspace is not None
        reverted = revert_documents(self.workspace, changed, documents)
        if reverted.errors:  # each notebook changes all at once or not at all, so a retry is safe
            raise CheckpointError(
                "the open notebook's cells could not be put back ("
                + "; ".join(reverted.errors)
                + "); no file was restored, and the undo can be run again"
            )
        report.restored += reverted.restored
        report.conflicts += reverted.conflicts

    def _restore_files(
        self, run: RunRecord, steps: list[StepRecord], path: str | None, report: UndoReport
    ) -> None:
        """Put each file back as it was before the first of `steps` changed it, unless changed since."""
        firsts, lasts = _spans(steps, only=path)
        firsts = {p: t for p, t in firsts.items() if p not in run.reverted}
        if not firsts:
            return
        lasts = {p: lasts[p] for p in firsts}
        kept = self.shadow.folders(next(s.before for s in steps if s.document is None))
        result = restore(self.shadow, plan_paths(self.shadow, firsts, lasts), kept_dirs=kept)
        report.restored += result.restored
        report.removed += result.removed
        report.conflicts += result.conflicts
        report.errors += result.errors

    def _restore_states(self, run: RunRecord, run_id: str, from_step: int | None, report: UndoReport) -> None:
        """Put back what the undone steps changed besides files, the latest first, so each name ends as it
        was before the earliest. Snapshots a restarted kernel lost are said, not guessed."""
        first = from_step if from_step is not None else 0
        last = run.undone_from if run.undone_from is not None else None
        wanted = [
            d
            for d in run.state_steps
            if d.get("step", 0) >= first and (last is None or d.get("step", 0) < last)
        ]
        if not wanted:
            return
        with self._lock:
            kept = [
                (step, state)
                for step, state in self._states.get(run_id, [])
                if step >= first and (last is None or step < last)
            ]
        if not kept:
            steps = ", ".join(f"{d.get('step')} ({', '.join(map(str, d.get('names', [])))})" for d in wanted)
            report.state.append(
                f"Your variables changed at step(s) {steps} cannot be put back: the kernel restarted since "
                "the run, and their snapshots were in its memory."
            )
            return
        for _step, state in reversed(kept):
            report.state += state.restore()

    def _mark_undone(
        self, run: RunRecord, run_id: str, report: UndoReport, *, from_step: int | None, path: str | None
    ) -> None:
        with self._lock:
            if path is not None:
                run.reverted.add(path)
            elif from_step is not None:
                run.undone_from = from_step
            else:
                run.undone = str(report)
            done = [
                (step, state)
                for step, state in self._states.get(run_id, [])
                if path is None or path == KERNEL_ENTRY
                if from_step is None or step >= from_step
            ]
            self._states[run_id] = [pair for pair in self._states.get(run_id, []) if pair not in done]
            manifest = run.to_manifest()
        for _step, state in done:  # restored: never again (a second undo is refused before it gets here)
            state.release()
        self._save(run_id, manifest)

    # ------------------------------------------------------------------ helpers

    @property
    def person(self) -> PersonRepo | None:
        if self._person is False:
            self._person = find_repo(self.workspace) if self.workspace is not None else None
        return self._person if isinstance(self._person, PersonRepo) else None

    def _rel(self, path: Path) -> str | None:
        assert self.workspace is not None
        try:
            return Path(os.path.realpath(path)).relative_to(self.workspace).as_posix()
        except ValueError:
            return None

    def _steps(self, run_id: str) -> list[StepRecord]:
        run = self._run(run_id)
        return list(run.steps) if run is not None else []

    def _run(self, run_id: str, *, fresh: bool = False) -> RunRecord | None:
        """The run's record: in memory, or read from disk. With `fresh`, what another kernel undid since is
        read back from disk too, so two kernels never undo the same change twice."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is not None and fresh and self.on_disk is not None:
            with contextlib.suppress(OSError, ValueError):
                saved = self.on_disk.load(run_id)
                if saved is not None:
                    with self._lock:
                        run.undone = run.undone or saved.get("undone")
                        run.undone_from = run.undone_from or saved.get("undone_from")
                        run.reverted |= set(saved.get("reverted", []))
        if run is not None or self.on_disk is None:
            return run
        try:
            manifest = self.on_disk.load(run_id)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise CheckpointError(f"the saved record of run {run_id} cannot be used: {exc}") from exc
        if manifest is None:
            return None
        try:
            loaded = RunRecord.from_manifest(manifest)
        except (TypeError, KeyError, ValueError) as exc:
            raise CheckpointError(f"the saved record of run {run_id} is damaged: {exc}") from exc
        if loaded.pending is not None and not loaded.finished:
            self._cut_off_step(loaded)
        with self._lock:
            return self._runs.setdefault(run_id, loaded)

    def _cut_off_step(self, run: RunRecord) -> None:
        """The call a dead kernel cut off never took its snapshot after: what it changed is what differs
        between its snapshot before and the workspace now (edits made since the crash included, which the
        undo report says)."""
        pending = run.pending or {}
        tool, step = str(pending.get("tool", "a tool")), pending.get("step")
        scope = pending.get("scope")
        try:
            if not isinstance(step, int) or not (scope is None or isinstance(scope, list)):
                raise ValueError("a damaged record of the call in progress")
            before = str(pending["before"])
            now = self.shadow.snapshot(
                [str(p) for p in scope] if scope is not None else None, include=self.include
            )
            changed = [p for p in self.shadow.changed(before, now) if plain_relative(p)]
        except (SnapshotError, KeyError, ValueError) as exc:
            run.uncovered_calls.append(f"{tool} at step {step}, cut off when the run stopped ({exc})")
            return
        run.cut_off = f"step {step} ({tool})"
        if changed:
            run.steps.append(
                StepRecord(
                    step=step,
                    call_id=str(pending.get("call_id", "")),
                    tool=tool,
                    before=before,
                    after=now,
                    paths=changed,
                )
            )

    def _saved_index(self, run_id: str) -> bytes | None:
        return self.on_disk.load_index(run_id) if self.on_disk is not None else None

    def _save(self, run_id: str, manifest: dict[str, Any]) -> None:
        if self.on_disk is None:
            return
        with contextlib.suppress(OSError, ValueError):  # in memory, undo still works in this kernel
            self.on_disk.save(run_id, manifest)
            with self._lock:
                if (run := self._runs.get(run_id)) is not None:
                    run.saved = True

    def _keep_trees(self, run_id: str, n: int, before: str, after: str) -> None:
        """Refs, so the snapshots a saved run needs are never collected."""
        with contextlib.suppress(SnapshotError):
            self.shadow.keep({f"refs/runs/{run_id}/{n}b": before, f"refs/runs/{run_id}/{n}a": after})
            self._kept.update((before, after))

    def _restore_index(
        self, run: RunRecord, run_id: str, steps: list[StepRecord], report: UndoReport
    ) -> None:
        """Give back the person's git index when a step being undone staged something (git add, git mv)."""
        changed = [s for s in steps if s.index_before != s.index_after]
        person = self.person
        if not changed or person is None:
            return
        first_change = next(s for s in run.steps if s.index_before != s.index_after)
        data = run.index if run.index is not None else self._saved_index(run_id)
        if data is None or first_change is not changed[0]:
            report.notes.append(
                "The git index changed at an earlier step too; only the files were rewound, not the index."
            )
            return
        now = person.index_digest()
        if now == changed[0].index_before:
            return
        if now != changed[-1].index_after:
            report.conflicts.append(".git/index (staged changes since the run)")
            return
        person.restore_index(data)
        report.notes.append("The git index (what was staged) is as it was before the run.")


def _steps_to_undo(run: RunRecord, run_id: str, from_step: int | None, path: str | None) -> list[StepRecord]:
    """The steps an undo puts back: all, those from `from_step` on, or those that changed `path`, less what
    was rewound already. Raises when that was undone already or the run never changed it."""
    if run.undone is not None:
        raise AlreadyUndoneError(f"run {run_id} was already undone ({run.undone})")
    steps = run.steps
    if from_step is not None:
        if run.undone_from is not None and from_step >= run.undone_from:
            raise AlreadyUndoneError(f"run {run_id} was already rewound to before step {run.undone_from}")
        known = sorted({s.step for s in steps} | {int(d.get("step", 0)) for d in run.state_steps})
        if not any(step >= from_step for step in known):
            raise CheckpointError(
                f"no step of run {run_id} from step {from_step} on changed files or variables "
                f"(steps that did: {', '.join(map(str, known)) or 'none'})"
            )
        steps = [s for s in steps if s.step >= from_step]
    if run.undone_from is not None:
        steps = [s for s in steps if s.step < run.undone_from]
    if path == KERNEL_ENTRY:
        if path in run.reverted:
            raise AlreadyUndoneError("the run's changes to your variables were already reverted")
        if not run.state_steps:
            raise CheckpointError(f"run {run_id} changed none of your variables")
        return []
    if path is not None:
        if path in run.reverted:
            raise AlreadyUndoneError(f"{path} was already reverted")
        steps = [s for s in steps if path in s.paths or path in s.left_out]
        if not steps:
            raise CheckpointError(f"run {run_id} did not change {path}")
    return steps


def _spans(steps: Sequence[StepRecord], only: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """For each path: the tree before its first change and after its last, in these steps."""
    firsts: dict[str, str] = {}
    lasts: dict[str, str] = {}
    for step in steps:
        if step.document is not None:
            continue
        for path in step.paths:
            if only is not None and path != only:
                continue
            firsts.setdefault(path, step.before)
            lasts[path] = step.after
    return firsts, lasts


def _left_out_spans(
    steps: Sequence[StepRecord], only: str | None = None
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """For each file left out of snapshots: its record at the first step that changed it and at the last."""
    spans: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for step in steps:
        for path, facts in step.left_out.items():
            if only is not None and path != only:
                continue
            first = spans[path][0] if path in spans else facts
            spans[path] = (first, facts)
    return spans


def _document_changes(
    steps: Sequence[StepRecord], only: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The cell changes of the steps that changed open notebooks, as (path, cell record), in order."""
    out = []
    for step in steps:
        if step.document is None or (only is not None and only not in step.paths):
            continue
        cells = step.document.get("cells")
        if isinstance(cells, list):
            out += [(step.paths[0], cell) for cell in cells if isinstance(cell, dict)]
    return out


def _head(state: RepoState | None) -> str:
    return f"{state.head} @ {state.commit}" if state is not None else ""


def _moved_heads(steps: Sequence[StepRecord]) -> list[str]:
    moved = [s for s in steps if s.head_before != s.head_after]
    if not moved:
        return []
    first, last = moved[0].head_before, moved[-1].head_after
    return [
        f"A command of the run committed or moved a branch ({first} → {last}); undo does not rewrite git "
        "history, so that stays as it is (git reset or git switch undo it, if you want)."
    ]


_private_dir: str | None = None


def _private_snapshot_dir() -> Path:
    """A snapshot store for a process that saves nothing (checkpoints.persist off), removed at exit."""
    global _private_dir  # noqa: PLW0603 - one per process
    if _private_dir is None:
        _private_dir = tempfile.mkdtemp(prefix="architect-snapshots-")
        atexit.register(shutil.rmtree, _private_dir, True)
    return Path(_private_dir)
