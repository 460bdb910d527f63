"""`KernelSnapshot`: what code run in the person's kernel (run_python, run_cell) may do to their variables,
kept before it runs so undo can put them back (`tools.state_snapshot`).

Before the approval, the code's syntax tree says which of the person's names it can bind, delete or mutate
(`name_effects`), and those objects are copied within the undo budget (`namespace_snapshot`): the approval
then says what undo will not restore (an object over the budget, one that cannot be copied, names the code
hides behind `exec()` or `globals()`). After the code, the names it added, rebound, mutated or deleted are
described before → after, for the step's card and the model alike. Undo puts the original objects back
(restoring lists, dicts, sets and arrays in place, so other references see them restored), binds a saved
copy where a type offers no way to restore in place (a DataFrame: other references keep the change, and the
report says so), removes the names the code created, and restores the RNG states of `random` and numpy.

With `kernel.write_namespace` off, run_python's own assignments go to a scratch namespace and never reach
the person's: only the objects it mutates are theirs to restore. The snapshots live in the kernel's memory:
a restarted kernel has none, and its undo says so.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, MutableMapping
from types import ModuleType
from typing import Any

from architect_nb.tools.kernel.name_effects import NameEffects, name_effects
from architect_nb.tools.kernel.namespace_snapshot import (
    NamespaceSnapshot,
    changes,
    default_budget_bytes,
    restore,
    take_snapshot,
)
from architect_nb.tools.kernel.session import KernelSession
from architect_nb.tools.state_snapshot import StateChange

__all__ = ["KernelSnapshot", "kernel_snapshot"]


def kernel_snapshot(
    session: KernelSession, code: str, *, into_namespace: bool, budget_bytes: int | None
) -> KernelSnapshot | None:
    """The person's names `code` may change, kept as they are now; None when it can change none (or does
    not parse, so it will not run)."""
    effects = name_effects(code)
    if effects.error is not None:
        return None
    namespace = session.namespace
    own = set(session.scratch.own()) if not into_namespace else set()
    # The agent's scratch assignments and mutations of its own objects are not the person's to restore.
    wanted = effects.touched if into_namespace else {n for n in effects.mutated if n in namespace}
    names = sorted(n for n in wanted if n not in own)
    if not names and not effects.hidden:
        return None
    budget = budget_bytes if budget_bytes is not None else default_budget_bytes()
    hidden = session.hidden
    rebinds = effects.bound | effects.deleted

    def take() -> NamespaceSnapshot:
        # `np.log(x)` or `plt.title(...)` calls a module's function: the module is no variable of the
        # person's to restore (library state is a documented limit), unless the code rebinds its name.
        kept = [n for n in names if n in rebinds or not isinstance(namespace.get(n), ModuleType)]
        return take_snapshot(namespace, kept, budget_bytes=budget, hidden=hidden)

    taken = KernelSnapshot(session, namespace, effects, session.call(take))
    _kept.make_room(taken, budget)
    return taken


class _Kept:
    """The snapshots this kernel holds, oldest first. The budget bounds them all together, not each alone: a
    new snapshot that needs the room drops the oldest ones (their steps' variables can no longer be undone,
    and undo says so), so a long session of changes never holds more than the budget in copies."""

    def __init__(self) -> None:
        self._held: list[KernelSnapshot] = []
        self._lock = threading.Lock()

    def make_room(self, newest: KernelSnapshot, budget: int) -> None:
        with self._lock:
            self._held = [s for s in self._held if not s.snapshot.released]
            total = newest.snapshot.kept_bytes + sum(s.snapshot.kept_bytes for s in self._held)
            while self._held and total > budget:
                oldest = self._held.pop(0)
                total -= oldest.snapshot.kept_bytes
                oldest.evict()
            self._held.append(newest)


_kept = _Kept()


class KernelSnapshot:
    """The person's variables a call's code may change, as they were before it (a `StateSnapshot`)."""

    def __init__(
        self,
        session: KernelSession,
        namespace: MutableMapping[str, Any],
        effects: NameEffects,
        snapshot: NamespaceSnapshot,
    ) -> None:
        self.session = session
        self.namespace = namespace
        self.effects = effects
        self.snapshot = snapshot
        self.evicted = False  # dropped to make room for newer snapshots within the budget

    def limits(self) -> str:
        """What undo will not restore of the person's variables: hidden names, uncopyable or large objects."""
        parts = []
        if self.effects.hidden:
            covered = _names(n for n in self.snapshot.names if n not in self.snapshot.unrestorable) or "none"
            parts.append(
                f"this code may change variables it does not name ({', '.join(self.effects.hidden)}); "
                f"undo covers only {covered}"
            )
        if self.snapshot.unrestorable:
            parts.append(f"your variables: {self.snapshot.coverage()}")
        return "; ".join(parts)

    def changes(self) -> list[StateChange]:
        found = self.session.call(lambda: changes(self.namespace, self.snapshot))
        return [
            StateChange(
                name=c.name,
                kind=c.kind,
                before=c.before,
                after=c.after,
                restorable=c.restorable,
                why=c.why,
            )
            for c in found
        ]

    def restore(self) -> list[str]:
        """Put the variables back; the undo report's sentences. Runs where undo runs (the kernel's own thread,
        or the thread an awaited undo line uses while the cell waits), after the run's cell has ended."""
        if self.evicted:
            return [
                "Your variables changed at this step could not be put back: their copies were dropped to "
                "make room for later ones within the undo budget (kernel.undo_budget_mb)."
            ]
        if self.snapshot.released:
            return ["Your variables could not be put back: their snapshot was dropped."]
        report = restore(self.namespace, self.snapshot)
        said = []
        if report.restored:
            said.append(f"Your variables restored: {_names(report.restored)}.")
        if report.removed:
            said.append(f"Removed the variables the run created: {_names(report.removed)}.")
        if report.rebound_only:
            who = _names(report.rebound_only)
            said.append(
                f"{who} now hold{'s' if len(report.rebound_only) == 1 else ''} the saved copy: other "
                "references to the changed object still see the change."
            )
        if report.not_restored:
            said.append(f"Not restored: {'; '.join(report.not_restored)}.")
        said += report.notes
        return said or ["Your variables were as before; nothing to put back."]

    def evict(self) -> None:
        self.evicted = True
        self.snapshot.release()

    def release(self) -> None:
        self.snapshot.release()


def _names(names: Iterable[str]) -> str:
    listed = list(names)
    return ", ".join(listed[:12]) + (f" and {len(listed) - 12} more" if len(listed) > 12 else "")
