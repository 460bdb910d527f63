"""`AcpSession`: one ACP session, which is one architect-nb thread, and the runs its prompts start.

Each prompt runs the same `AgentLoop` on the same `ExecutionEngine` as a `%%architect` cell (built by
`create_loop` from the workspace's `.architect.yaml`, with its hooks, guardrails, sandbox and Claude Code
settings), in a worker thread, with `AcpConfirmer` asking the editor. The thread is saved after every run,
so `session/load` continues it after the agent (or the editor) restarts.

When the prompt attaches a notebook (Jupyter AI attaches the one open), the run connects to that notebook's
running kernel (`notebook_kernel`), and list_variables, inspect_variable and run_python run there; the model
is told which notebook's kernel it has, or why it has none.

A cancel stops the loop at its next safe point, denies the pending question, interrupts the kernel tool
running in the notebook's kernel and kills the running commands' process groups; the prompt answers
`cancelled` as soon as the worker is done, and at most `CANCEL_GRACE` seconds later even if it is not (a
model call that will not return), as the notebook does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import StopReason

from architect_nb.acp.kernel_tools import bridged_kernel_tools
from architect_nb.acp.notebook_kernel import NotebookKernel, connect_notebook_kernel
from architect_nb.acp.outbox import Outbox
from architect_nb.acp.permissions import AcpConfirmer
from architect_nb.acp.updates import event_updates
from architect_nb.agent.conversation.thread import Thread, undo_note
from architect_nb.agent.conversation.thread_store import thread_store
from architect_nb.agent.events import AgentEvent
from architect_nb.agent.loop import AgentLoop
from architect_nb.agent.run_result import RunResult
from architect_nb.config import AppConfig
from architect_nb.config.schema import ConfirmMode
from architect_nb.config.teaching_policy import TeachingOffError
from architect_nb.execution.checkpoints.records import CheckpointError
from architect_nb.execution.checkpoints.store import CheckpointStore
from architect_nb.log import get_logger
from architect_nb.tools.base import BaseTool
from architect_nb.tools.commands.process import kill_running_processes

__all__ = ["CANCEL_GRACE", "NO_KERNEL_NOTE", "AcpSession", "SessionOptions"]

log = get_logger(__name__)

CANCEL_GRACE = 0.7  # seconds a cancelled worker gets before the prompt answers without it
NO_KERNEL_NOTE = (
    "[Note: this chat is not connected to a notebook kernel, so the kernel tools (run_python, "
    "list_variables, inspect_variable and the others) are not available. If the user asks for something "
    "that needs the kernel, say so: they can run architect-nb from a %%architect cell in the notebook.]"
)


def connected_note(notebook: str) -> str:
    """What the model is told when the run has the kernel of `notebook` (its path in the Jupyter server)."""
    return (
        f"[Note: this chat is connected to the running kernel of the notebook {notebook}, the one the user "
        "has open: list_variables, inspect_variable and run_python work on its variables. propose_cell and "
        "run_cell are not available here.]"
    )


def unconnected_note(notebook: str, why: str) -> str:
    """What the model is told when the prompt attached `notebook` but its kernel could not be connected."""
    return (
        f"[Note: the user attached the notebook {notebook}, but {why}, so the kernel tools (run_python, "
        "list_variables, inspect_variable) are not available. If the user asks for something that needs "
        "the kernel, say so and why.]"
    )


@dataclass
class SessionOptions:
    """What the agent's command line chose for every session: the model, agent and confirmation mode."""

    model: str | None = None
    agent: str = "build"
    mode: ConfirmMode | None = None
    overrides: dict[str, Any] = field(default_factory=dict)


class AcpSession:
    """One thread and its runs, driven from the connection's event loop."""

    def __init__(
        self,
        config: AppConfig,
        thread: Thread,
        options: SessionOptions,
        outbox: Outbox,
        confirmer: AcpConfirmer,
    ) -> None:
        self.config = config
        self.thread = thread
        self.options = options
        self.outbox = outbox
        self.confirmer = confirmer
        self.workspace = str(config.workspace.root)
        self._loop: AgentLoop | None = None
        self._worker: concurrent.futures.Future[RunResult] | None = None
        self._cancelled = asyncio.Event()  # set by `cancel`, on the connection's event loop
        self.notebook: Path | None = None  # the notebook the prompts attached last (Jupyter AI's open one)
        self._kernel: NotebookKernel | None = None  # its kernel, connected for the run in progress
        self._stores: dict[str, CheckpointStore] = {}  # run id -> its engine's store (the kernel's undo)
        self._told: str | None = None  # the kernel note the model was given last

    @property
    def busy(self) -> bool:
        return self._worker is not None and not self._worker.done()

    # ------------------------------------------------------------------ prompts

    async def run(self, task: str, notebook: Path | None = None) -> StopReason:
        """Run the agent on `task`, with the kernel of `notebook` (or of the one attached before) when it
        can be connected; returns ACP's stop reason (`end_turn`, `cancelled`, ...)."""
        if self.busy:  # a cancelled run that has not stopped yet: wait for it, briefly
            await asyncio.wait([asyncio.wrap_future(self._worker)], timeout=5)  # type: ignore[arg-type]
            if self.busy:
                self.outbox.post(_message("The previous run is still stopping; try again in a moment."))
                await self.outbox.flush()
                return "end_turn"
        from architect_nb.agent.factory import create_loop  # LiteLLM comes with it: only when a prompt runs

        self._cancelled = asyncio.Event()
        self.confirmer.reset()
        run_key = uuid.uuid4().hex
        tools = await self._kernel_tools(notebook, run_key)
        try:
            loop = create_loop(
                self.config,
                agent=self.options.agent,
                model=self.options.model,
                mode=self.options.mode,
                confirmer=self.confirmer,
                on_event=self._on_event,
                tools=tools,
            )
        except TeachingOffError as exc:  # the course's policy: said in the chat, no run
            self._close_kernel(run_key)
            self.outbox.post(_message(str(exc)))
            await self.outbox.flush()
            return "end_turn"
        except BaseException:
            self._close_kernel(run_key)
            raise
        self._loop = loop
        worker: concurrent.futures.Future[RunResult] = concurrent.futures.Future()
        self._worker = worker
        context = contextvars.copy_context()
        threading.Thread(
            target=context.run,
            args=(self._work, loop, task, worker, run_key),
            name="architect-acp-run",
            daemon=True,
        ).start()
        done = asyncio.wrap_future(worker)
        cancelled: asyncio.Future[Any] = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait([done, cancelled], return_when=asyncio.FIRST_COMPLETED)
            if not done.done():  # cancelled: the worker gets a moment to stop and say how it ended
                await asyncio.wait([done], timeout=CANCEL_GRACE)
        finally:
            cancelled.cancel()
        await self.outbox.flush()
        if self._cancelled.is_set():
            return "cancelled"
        try:
            result = done.result()
        except Exception as exc:  # told in the chat, never lost in a thread
            log.exception("acp_run_failed")
            self.outbox.post(_message(f"\n\nThe run failed: {type(exc).__name__}: {exc}"))
            await self.outbox.flush()
            return "end_turn"
        return _stop_reason(result.stop_reason)

    def _work(
        self, loop: AgentLoop, task: str, worker: concurrent.futures.Future[RunResult], run_key: str
    ) -> None:
        if not worker.set_running_or_notify_cancel():
            return
        try:
            result = loop.run(task, thread=self.thread)
        except BaseException as exc:
            self._settle(loop, run_key)
            worker.set_exception(exc)
        else:
            self._settle(loop, run_key)  # saved before the prompt answers: a load right after finds it all
            worker.set_result(result)

    def _settle(self, loop: AgentLoop, run_key: str) -> None:
        # Its store holds what the run changed in the notebook kernel's variables: `/undo` needs it, not
        # only the records on disk.
        self._stores[loop.run_id] = loop.engine.checkpoints
        warning = self.save()
        if warning is not None:
            self.outbox.post(_message(f"\n\n{warning}"))
        loop.close()
        self._close_kernel(run_key)

    def _close_kernel(self, run_key: str) -> None:
        kernel, self._kernel = self._kernel, None
        if kernel is not None:
            kernel.forget(run_key)
            kernel.close()

    async def _kernel_tools(self, notebook: Path | None, run_key: str) -> list[BaseTool]:
        """The kernel tools on the attached notebook's kernel, connected for this run; the model is told
        when what it has changes (a kernel, another one, or none and why)."""
        if notebook is not None:
            self.notebook = notebook
        if self.notebook is None or not self.config.kernel.tools:
            return []
        found = await asyncio.to_thread(connect_notebook_kernel, self.notebook)
        if isinstance(found, str):
            note = unconnected_note(self.notebook.name, found)
            tools: list[BaseTool] = []
        else:
            self._kernel = found
            note = connected_note(found.notebook)
            tools = bridged_kernel_tools(found, run_key, self.workspace, float(self.config.kernel.timeout))
        if note != self._told:
            self.thread.notes = [n for n in self.thread.notes if n != NO_KERNEL_NOTE] + [note]
            self._told = note
        return tools

    def _on_event(self, event: AgentEvent) -> None:
        for update in event_updates(event, self.workspace):
            self.outbox.post(update)

    def cancel(self) -> None:
        """`session/cancel` (on the connection's loop): stop the run now; the prompt answers `cancelled`."""
        if not self.busy:
            return
        if self._loop is not None:
            self._loop.cancel("interrupted")
        self.confirmer.cancel()
        if self._kernel is not None:  # only while a kernel tool of this run is running there
            threading.Thread(target=self._kernel.interrupt_own, name="architect-kernel-interrupt").start()
        kill_running_processes()
        self._cancelled.set()

    # ------------------------------------------------------------------ threads

    def save(self) -> str | None:
        """Save what the thread gained. Returns a warning when it could not be saved."""
        store = thread_store(self.config)
        if store is None:
            return None
        try:
            store.save(self.thread)
        except OSError as exc:
            log.warning("acp_thread_not_saved", thread=self.thread.id, error=str(exc))
            return f"The conversation could not be saved ({exc}); it lasts until the agent stops."
        return None

    # ------------------------------------------------------------------ slash commands

    async def undo(self, argument: str) -> None:
        """`/undo [RUN]`: put back what the session's last run (or run RUN of this thread) changed."""
        runs = [run.run_id for run in self.thread.runs]
        wanted = argument.strip()
        if not runs:
            self.outbox.post(_message("There is no run in this conversation to undo yet."))
            await self.outbox.flush()
            return
        matches = [run for run in runs if run.startswith(wanted)] if wanted else runs[-1:]
        if len(matches) != 1:
            known = ", ".join(runs[-5:])
            self.outbox.post(
                _message(f"No single run of this conversation starts with {wanted!r}; its runs: {known}.")
            )
            await self.outbox.flush()
            return
        text = await asyncio.to_thread(self._undo, matches[0])
        self.outbox.post(_message(text))
        await self.outbox.flush()

    def _undo(self, run_id: str) -> str:
        try:
            store = self._stores.get(run_id) or CheckpointStore.for_config(self.config)
            report = store.undo(run_id)
        except CheckpointError as exc:
            return f"Nothing was undone: {exc}"
        self.thread.notes.append(undo_note(report))
        warning = self.save()
        return str(report) + (f" {warning}" if warning else "")


def _message(text: str) -> Any:
    from acp import update_agent_message_text

    return update_agent_message_text(text)


def _stop_reason(stop: str) -> StopReason:
    """An architect-nb stop reason as ACP's (whose `end_turn` covers a run that ended and said why)."""
    reasons: dict[str, StopReason] = {
        "interrupted": "cancelled",
        "max_steps": "max_turn_requests",
        "refused": "refusal",
    }
    return reasons.get(stop, "end_turn")
