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
from architect_nb.tools.base import ToolResult

__all__ = ["CallSnapshots"]


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
        finally:
            if mark is not None:
                try:
                    changed = self.checkpoints.after(mark)
                except SnapshotError as exc:
                    call.notes.append(f"[Undo warning: the snapshot after the call failed ({exc})]")
        if mark is not None:
            result.metadata["changed_files"] = changed
        document = result.metadata.pop("document_change", None)  # an open notebook's cells: no file changed
        if document is not None and call.files and result.success:
            rel = self.checkpoints.record_document(
                run_id, step=call.step, call_id=call.audit_id, tool=name, path=call.files[0], change=document
            )
            if rel is not None:
                result.metadata["changed_files"] = sorted({*result.metadata.get("changed_files", ()), rel})
        return result
