"""The threads of one kernel: which conversation a `%%architect` cell continues, and `%architect threads`.

A cell continues the kernel's current thread for its workspace (each workspace has its own, so switching
workspaces never mixes two projects' conversations) unless it says otherwise: `--new` starts a fresh one,
`--thread NAME` continues (or starts) a named one, and `--fork RUN[:STEP]` starts a new thread from the
conversation as it was after a run (or one step of it); `@NAME/N` in place of a run id means the N-th run
of thread NAME (`@NAME`, its last), a reference that stays the same each time a notebook runs.

A name this kernel has not used yet is looked up among the threads saved on disk for the workspace (the
newest one by that name), so a thread outlives a restart; a fresh kernel's first cell starts a fresh
thread, so Run All after a restart replays rather than continues.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from architect_nb.agent.conversation.thread import Thread, ThreadError, ThreadRun, undo_note
from architect_nb.agent.conversation.thread_store import ThreadStore, thread_store
from architect_nb.config import AppConfig
from architect_nb.execution.checkpoints.store import UndoReport
from architect_nb.notebook.magics import CellArgs, UsageError

__all__ = ["KernelThreads", "undo_note"]

DEFAULT_NAME = "main"


@dataclass
class KernelThreads:
    """The threads used in this kernel, by name, and the current one of each workspace."""

    threads: dict[str, Thread] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)  # workspace -> thread name

    def select(self, args: CellArgs, config: AppConfig) -> Thread:
        """The thread the cell runs in. Raises `UsageError` (one line, saying what to do) when it cannot."""
        workspace = str(config.workspace.root)
        store = thread_store(config)
        try:
            if args.fork is not None:
                return self._fork(args, workspace, store)
            if args.new:
                return Thread(name=self._free_name(DEFAULT_NAME), workspace=workspace)
            if args.thread is not None:
                return self._named(args.thread, workspace, store)
        except ThreadError as exc:
            raise UsageError(f"%%architect: {exc}.") from None
        current = self.threads.get(self.current.get(workspace, ""))
        return current or Thread(name=self._free_name(DEFAULT_NAME), workspace=workspace)

    def remember(self, thread: Thread, config: AppConfig) -> str | None:
        """Make `thread` the current one and save what it gained. Returns a warning if saving failed."""
        self.threads[thread.name] = thread
        self.current[thread.workspace] = thread.name
        return _save(thread, thread_store(config))

    def note_undo(self, report: UndoReport, config: AppConfig) -> str | None:
        """Tell the thread holding the undone run, at its next run, which files went back."""
        for thread in self.threads.values():
            if any(run.run_id == report.run_id for run in thread.runs):
                thread.notes.append(undo_note(report))
                return _save(thread, thread_store(config))
        store = thread_store(config)
        if store is None:
            return None
        try:
            found = store.find_run(report.run_id)
            if found is None:
                return None
            thread = store.load(found[0].id)
        except ThreadError as exc:
            return f"The thread of run {report.run_id} could not be told about the undo: {exc}."
        thread.notes.append(undo_note(report))
        return _save(thread, store)

    def listing(self, config: AppConfig) -> str:
        """`%architect threads`: this kernel's threads, then the workspace's saved threads it has not used."""
        rows = []
        workspace = str(config.workspace.root)
        for name, thread in self.threads.items():
            if thread.workspace != workspace:
                continue
            mark = "*" if name == self.current.get(workspace) else " "
            rows.append(_row(mark, thread.name, thread.id, thread.runs, thread.turns, thread.last_task))
        store = thread_store(config)
        loaded = {thread.id for thread in self.threads.values()}
        problems = []
        for item in store.saved() if store is not None else ():
            if isinstance(item, ThreadError):
                problems.append(f"  (not loaded: {item})")
            elif item.workspace == workspace and item.id not in loaded:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.updated_at))
                task = next((run.task for run in reversed(item.runs) if run.task), "")
                rows.append(_row(" ", item.name, item.id, item.runs, item.turns, task, f"saved {when}"))
        if not rows:
            return "No threads yet: the first %%architect cell starts one."
        head = "  name              id            runs  turns   tokens      cost  last task"
        legend = f"(* the current thread of {workspace}; --thread NAME continues one)"
        return "\n".join([head, *rows, *problems, legend])

    # ------------------------------------------------------------------ helpers

    def _named(self, name: str, workspace: str, store: ThreadStore | None, *, create: bool = True) -> Thread:
        thread = self.threads.get(name)
        if thread is None and store is not None:
            thread = store.find_name(name, workspace)
        if thread is None and not create:
            raise ThreadError(f"no thread '{name}' in this kernel or saved for {workspace}")
        if thread is None:
            return Thread(name=name, workspace=workspace)
        if thread.workspace != workspace:
            raise ThreadError(
                f"thread '{name}' belongs to the workspace {thread.workspace}, not {workspace}; "
                f"use --workspace {thread.workspace} to continue it, or another thread name here"
            )
        return thread

    def _fork(self, args: CellArgs, workspace: str, store: ThreadStore | None) -> Thread:
        assert args.fork is not None
        run, step = args.fork
        if run.startswith("@"):
            name, _, number = run[1:].partition("/")
            source = self._named(name, workspace, store, create=False)
            index = int(number) if number else len(source.runs)
            if not 1 <= index <= len(source.runs):
                raise ThreadError(f"thread '{name}' has {len(source.runs)} run(s); there is no run {index}")
            run_id = source.runs[index - 1].run_id
        else:
            source, run_id = self._thread_of_run(run, store)
        if args.thread is not None and args.thread in self.threads:
            raise ThreadError(
                f"this kernel has a thread '{args.thread}' already; name the fork differently, or "
                "leave --thread out"
            )
        name = args.thread or self._free_name(f"{source.name}-fork")
        thread = source.fork(run_id, step, name=name)
        if thread.workspace != workspace:
            raise ThreadError(
                f"run {run_id} was made in the workspace {thread.workspace}, not {workspace}; "
                f"add --workspace {thread.workspace} to fork it"
            )
        return thread

    def _thread_of_run(self, run: str, store: ThreadStore | None) -> tuple[Thread, str]:
        matches: dict[str, Thread] = {}
        whole: dict[str, int] = {}
        for thread in self.threads.values():  # a fork holds copies of runs, maybe cut: take the whole one
            for r in thread.runs:
                if r.run_id.startswith(run) and len(r.step_ends) >= whole.get(r.run_id, -1):
                    matches[r.run_id], whole[r.run_id] = thread, len(r.step_ends)
        if run in matches:
            return matches[run], run
        if len(matches) > 1:
            raise ThreadError(f"more than one run starts with {run!r}; give more of its id")
        if matches:
            run_id, thread = next(iter(matches.items()))
            return thread, run_id
        found = store.find_run(run) if store is not None else None
        if found is None:
            raise ThreadError(
                f"no run {run!r} in this kernel's threads or the saved ones; "
                "`%architect history` and `%architect threads` list them"
            )
        return store.load(found[0].id), found[1]  # type: ignore[union-attr]  # found implies a store

    def _free_name(self, base: str) -> str:
        if base not in self.threads:
            return base
        n = 2
        while f"{base}-{n}" in self.threads:
            n += 1
        return f"{base}-{n}"


def _save(thread: Thread, store: ThreadStore | None) -> str | None:
    if store is None:
        return None
    try:
        store.save(thread)
    except OSError as exc:
        return f"The thread '{thread.name}' could not be saved ({exc}); it lasts until the kernel stops."
    return None


def _row(
    mark: str, name: str, thread_id: str, runs: Sequence[ThreadRun], turns: int, task: str, extra: str = ""
) -> str:
    tokens = sum(run.tokens for run in runs)
    cost = sum(run.cost_usd for run in runs)
    first_line = task.strip().splitlines()[0][:50] if task.strip() else ""
    suffix = f"  ({extra})" if extra else ""
    return (
        f"{mark} {name[:16]:<16}  {thread_id}  {len(runs):>4}  {turns:>5}  {tokens:>7,}  ${cost:>7.4f}  "
        f"{first_line}{suffix}"
    )
