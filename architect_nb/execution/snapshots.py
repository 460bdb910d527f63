"""Step 7's bookkeeping for undo: which calls are snapshotted, of what, and the records their changes leave.

A file tool is snapshotted around its own files; a command, code run in the kernel and a tool whose effects
are unknown (an MCP tool) around the whole workspace; a read-only tool not at all. A notebook tool that
changed a notebook open in a front end changed no file: its cells are recorded instead. A snapshot that
cannot be taken never stops the call; the call's result says undo will not cover it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from architect_nb.execution.checkpoints.shadow_git import SnapshotError
from architect_nb.execution.checkpoints.store import CheckpointStore
from architect_nb.execution.steps import CallState
from architect_nb.log import get_logger
from architect_nb.tools.base import ToolResult
from architect_nb.tools.filesystem.fileio import describe_size
from architect_nb.tools.state_snapshot import describe_changes

__all__ = ["CallSnapshots"]

log = get_logger(__name__)


class CallSnapshots:
    """Snapshots around the calls of one engine, into its `CheckpointStore`."""

    def __init__(self, checkpoints: CheckpointStore) -> None:
        self.checkpoints = checkpoints
        self._uncovered: str | bool | None = False  # why snapshots cannot be taken (False: not checked)

    @staticmethod
    def scope(call: CallState) -> tuple[bool, list[Path] | None]:
        """Whether to snapshot around the call, and what: its files (a file tool), or everything (None)."""
        tool = call.tool
        if tool.mutates_files:
            return True, call.files
        if call.command is not None or tool.runs_code or tool.unknown_effects:
            return True, None
        return False, None

    def cannot_cover(self, call: CallState) -> str | None:
        """Why undo could not cover the call (snapshots cannot be taken here), or None."""
        if not self.scope(call)[0]:
            return None
        if self._uncovered is False:
            self._uncovered = self.checkpoints.available()
        return self._uncovered if isinstance(self._uncovered, str) else None

    def undo_limits(self, call: CallState) -> str:
        """What undo could not restore of the call, said before it runs: its files', and its state's (the
        person's variables that code may change)."""
        state = call.state.limits() if call.state is not None else ""
        return "; ".join(part for part in (self._file_limits(call), state) if part)

    def _file_limits(self, call: CallState) -> str:
        """A file tool's file over the size limit, or, for code and commands, the limits any file they change
        must be within."""
        store = self.checkpoints
        changes, scope = self.scope(call)
        limit = describe_size(store.shadow.max_file_bytes)
        if not changes:
            return ""
        if scope is None:
            return (
                f"undo restores files up to {limit} each and {describe_size(store.max_run_bytes)} in all "
                "per run; larger files this changes cannot be restored"
            )
        large = []
        for path in scope:
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > store.shadow.max_file_bytes:
                large.append(f"{path.name} ({describe_size(size)})")
        if not large:
            return ""
        return f"undo cannot restore {', '.join(large)}: over the {limit} snapshot limit per file"

    def take_state(self, call: CallState) -> None:
        """Keep what the call may change besides files, before it is approved and runs. A snapshot that fails
        never stops the call; its result then says undo will not cover that state."""
        try:
            call.state = call.tool.snapshot_state(call.kwargs)
        except Exception as exc:  # a tool's bug must not stop the call, and the person must hear of it
            log.exception("state_snapshot_failed", tool=call.tool.name)
            call.notes.append(f"[Undo warning: what this changes in your variables cannot be undone ({exc})]")

    @staticmethod
    def drop_state(call: CallState) -> None:
        if call.state is not None:
            call.state.release()
            call.state = None

    def _settle_state(self, call: CallState, run_id: str, result: ToolResult) -> None:
        """After the call: what it changed goes into its result (the model and the step's card read it) and,
        for undo, into the run's record; a snapshot of nothing that changed is dropped."""
        state, call.state = call.state, None
        if state is None:
            return
        try:
            changed = state.changes()
        except Exception as exc:
            log.exception("state_changes_failed", tool=call.tool.name)
            changed = []
            call.notes.append(f"[Undo warning: what this changed in your variables is not known ({exc})]")
        if not changed:
            state.release()
            return
        result.changed_state = changed
        summary = describe_changes(changed)
        result.output = f"{result.output}\n{summary}" if result.output else summary
        self.checkpoints.record_state(
            run_id, step=call.step, tool=call.tool.name, state=state, changes=changed
        )

    def around(self, call: CallState, run_id: str, execute: Callable[[], ToolResult]) -> ToolResult:
        """Run `execute` between the snapshots the call needs; the result names the files it changed."""
        changes, scope = self.scope(call)
        name = call.tool.name
        mark = None
        if changes:
            try:
                mark = self.checkpoints.before(
                    run_id, step=call.step, call_id=call.audit_id, tool=name, paths=scope
                )
            except SnapshotError as exc:
                self.checkpoints.not_covered(run_id, f"{name} at step {call.step}")
                call.notes.append(
                    f"[Undo warning: no snapshot could be taken ({exc}); undo will not cover it]"
                )
        changed: list[str] = []
        try:
            result = execute()
            self._settle_state(call, run_id, result)
        finally:
            self.drop_state(call)  # the call raised: what it changed is not known, so it is not undone
            if mark is not None:
                try:
                    changed = self.checkpoints.after(mark)
                except SnapshotError as exc:
                    call.notes.append(f"[Undo warning: the snapshot after the call failed ({exc})]")
        if mark is not None:
            result.changed_files = changed
            if notes := self._left_out_notes(mark.run_id, changed):
                result.output = "\n".join([result.output, *notes]) if result.output else "\n".join(notes)
        document = result.metadata.pop("document_change", None)  # an open notebook's cells: no file changed
        if document is not None and call.files and result.success:
            rel = self.checkpoints.record_document(
                run_id, step=call.step, call_id=call.audit_id, tool=name, path=call.files[0], change=document
            )
            if rel is not None:
                result.changed_files = sorted({*result.changed_files, rel})
        return result

    def _left_out_notes(self, run_id: str, changed: list[str]) -> list[str]:
        """A line for each file the call changed that snapshots left out, so the step and the model know."""
        shadow = self.checkpoints.shadow
        steps = self.checkpoints.steps(run_id)
        facts = steps[-1].left_out if steps else {}
        notes = []
        for path in changed:
            if path not in shadow.too_large:
                continue
            why = shadow.why_left_out.get(path, "over the snapshot limit")
            if facts.get(path, {}).get("created"):
                notes.append(f"[{path} ({why}) is not snapshotted: undo can only delete it.]")
            else:
                notes.append(f"[Undo cannot restore {path} ({why}): it is not snapshotted.]")
        return notes
