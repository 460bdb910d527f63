"""`StateSnapshot`: what a call may change besides the workspace's files, kept before it runs so undo can put
it back.

Files are snapshotted by the engine for every tool alike (`execution.snapshots`). Some tools change state no
file holds: code run in the person's kernel changes their variables. Such a tool says so by returning a
`StateSnapshot` from `BaseTool.snapshot_state`; the engine takes it before the approval (whose undo line then
says what it cannot restore), asks it what changed after the call (the step's card and the model's result
both list it), and hands it to the run's checkpoint store, whose undo, rewind and revert restore it. Nothing
else in the engine, the loop or the notebook knows what kind of state it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypedDict

__all__ = ["KERNEL_ENTRY", "StateChange", "StateSnapshot", "change_words", "describe_changes"]

#: The review's entry for the kernel's variables, beside the files (`%architect revert RUN /kernel`): a
#: path that no workspace file can have, since a file's path is relative.
KERNEL_ENTRY = "/kernel"


class StateChange(TypedDict):
    """One name a call changed: `kind` is added, rebound, mutated or deleted; `before` and `after` are short
    descriptions; `restorable` is False when undo cannot put it back, and `why` says why."""

    name: str
    kind: str
    before: str
    after: str
    restorable: bool
    why: str


class StateSnapshot(Protocol):
    """State a call may change, as it was before the call."""

    def limits(self) -> str:
        """What undo will not restore of it, said before the call runs ('' when it covers everything)."""
        ...

    def changes(self) -> list[StateChange]:
        """After the call: what it changed ([] when nothing)."""
        ...

    def restore(self) -> list[str]:
        """Put the state back as it was before the call; the sentences the undo report shows."""
        ...

    def release(self) -> None:
        """Drop what the snapshot holds (its copies): it will never be restored."""
        ...


def change_words(change: Mapping[str, Any]) -> str:
    """A change's object described: what was added, what was deleted, or before → after."""
    before, after = str(change.get("before", "")), str(change.get("after", ""))
    return {"added": after, "deleted": before}.get(str(change.get("kind", "")), f"{before} → {after}")


def describe_changes(changes: list[StateChange]) -> str:
    """One line per changed name, as the model and the review read them: "df: mutated, DataFrame
    3×2 → DataFrame 3×1"."""
    lines = []
    for change in changes:
        line = f"  {change['name']}: {change['kind']}, {change_words(change)}"
        if not change["restorable"]:
            line += f" (undo cannot restore it: {change['why']})"
        lines.append(line)
    return "Your variables changed:\n" + "\n".join(lines)
