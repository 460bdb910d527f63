"""The coroutine a `%%architect` cell awaits: parse, build the loop, run it in a worker, render the result.

The agent runs synchronously in one worker thread started under `contextvars.copy_context()` (ipykernel 7.0
needs the cell's context vars in threads that touch widgets). The cell awaits it through `pump_until`, so the
cell stays busy (Run All keeps its order) while button clicks are handled. An interrupt arrives as
`CancelledError` (or `KeyboardInterrupt`): the run is cancelled, a pending question denied, running commands'
process groups killed, requests stashed by jupyter-ui-poll aborted, the worker given up to 0.7 s to stop, the
output finalised as interrupted, and `RunInterruptedError` raised so Jupyter aborts the queued cells.

Before the task, the worker reads the notebook the cell runs in (`context`): its outline goes to the model
as a note the run begins with (`Thread.notes`), unless `--no-notebook` or `notebook.context: false`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from architect_nb.agent.config import UnknownAgentError
from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.events import RunFinished, StopReason
from architect_nb.agent.loop import AgentLoop, RunResult
from architect_nb.config import AppConfig, ConfigError
from architect_nb.config.teaching_policy import TeachingOffError
from architect_nb.log import get_logger
from architect_nb.notebook.magics import CellArgs, UsageError, parse_cell_line
from architect_nb.notebook.output.render import MessageOutput, RunOutput
from architect_nb.notebook.output.saved_record import for_notebook, save_whole
from architect_nb.notebook.questions.plans import build_task, offer_build, plan_of, plan_to_build
from architect_nb.notebook.state import KernelRun, Session, get_session
from architect_nb.redaction import default_redactor
from architect_nb.tools.commands.process import kill_running_processes

__all__ = ["CellRun", "RunInterruptedError", "build", "build_line", "run_cell"]

log = get_logger(__name__)

_STOP_GRACE = 0.7  # then the cell ends anyway (a model call that sends nothing); the worker is left to stop


class RunInterruptedError(Exception):
    """The cell's run was interrupted. An error like any other, so Jupyter aborts the queued cells.

    It renders as one line (`_render_traceback_`): IPython formatting the asyncio frames of the original
    `CancelledError` took a few hundred milliseconds of the one-second interrupt budget.
    """

    def __init__(self) -> None:
        super().__init__("The run was interrupted; queued cells were not run.")

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class CellRun:
    """One run in one cell: the loop, its worker thread and its live view, in the cell's thread."""

    def __init__(
        self,
        loop: AgentLoop,
        confirmer: Any,
        live: Any,
        task: str,
        thread: Thread,
        config: AppConfig,
        prelude: Callable[[CellRun], str | None] | None = None,
        stepper: Any = None,
    ) -> None:
        self.loop = loop
        self.prelude = prelude  # run in the worker first: the notebook context, told before the task
        self.notebook: Any = None  # the NotebookView the prelude read, if it did
        self.confirmer = confirmer
        self.stepper = stepper  # the --step prompts, if any
        self.live = live
        self.task = task
        self.thread = thread
        self.config = config
        self.future: concurrent.futures.Future[RunResult] = concurrent.futures.Future()
        self.started_at = time.time()

    def start(self) -> concurrent.futures.Future[RunResult]:
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(self._work,), name="architect-run", daemon=True)
        thread.start()
        return self.future

    def _work(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        note = None
        try:
            note = self._note()
            self.future.set_result(self.loop.run(self.task, thread=self.thread))
        except BaseException as exc:  # reported in the cell, never lost in a thread
            self.future.set_exception(exc)
        finally:
            if note is not None and note in self.thread.notes:  # the run never began: not for the next one
                self.thread.notes.remove(note)

    def _note(self) -> str | None:
        if self.prelude is None:
            return None
        try:
            note = self.prelude(self)
        except TeachingOffError:  # the notebook's teaching policy: the run does not begin
            raise
        except Exception:  # the run goes on without the notebook's outline
            log.exception("notebook_context_failed")
            return None
        if note:
            self.thread.notes.append(note)
        return note or None

    def interrupt(self) -> None:
        """Stop now, from the cell's thread: cancel the loop, deny the question, kill commands."""
        self.loop.cancel("interrupted")
        self.confirmer.cancel()
        if self.stepper is not None:
            self.stepper.cancel()
        kill_running_processes()

    def wait_stopped(self, grace: float = _STOP_GRACE) -> None:
        deadline = time.monotonic() + grace
        while not self.future.done() and time.monotonic() < deadline:
            kill_running_processes()  # a command started just as the interrupt came
            with contextlib.suppress(Exception):  # only waiting here; the result is read later
                self.future.result(timeout=0.05)

    def payload(self) -> dict[str, Any]:
        """The transcript so far. A run that ended without its summary gets one: `internal_error` with the
        exception's type and text when its worker raised, `interrupted` when it did not stop in time."""
        transcript = self.loop.transcript
        if transcript.finished is None:
            error = self.future.exception() if self.future.done() and not self.future.cancelled() else None
            if error is not None:
                stop: StopReason = "internal_error"
                message = f"Internal error: {type(error).__name__}: {error}"
            else:
                stop = "interrupted"
                message = "The run was interrupted (it did not stop in time; its worker was left behind)."
            transcript(
                RunFinished(
                    run_id=self.loop.run_id,
                    status="failed",
                    stop_reason=stop,
                    message=message,
                    steps=0,
                    final_text="",
                    files_changed=(),
                    total_tokens=self.loop.costs.total_tokens,
                    total_cost_usd=self.loop.costs.cost_usd,
                    duration_s=round(time.time() - self.started_at, 3),
                )
            )
        return transcript.to_payload()


def _prepare(
    session: Session, line: str, body: str, namespace: dict[str, Any]
) -> tuple[CellArgs, str, AppConfig, Thread]:
    from architect_nb.notebook.context.context_vars import task_with_context

    args = parse_cell_line(_expand(line, namespace))
    task = body.strip("\n")
    config = session.config(args)
    thread = session.threads.select(args, config)
    if not task.strip() and not (args.fork is not None and args.fork[1] is not None):
        raise UsageError(
            "%%architect: the cell is empty; write the task in plain words below the %%architect line "
            "(only a --fork RUN:STEP cell may be empty: the model then carries on from that step)."
        )
    if not task.strip() and not (thread.messages and thread.messages[-1].get("role") == "tool"):
        raise UsageError(
            "%%architect: that step ended the run, so there is nothing to carry on; write a task below the "
            "%%architect line."
        )
    task = task_with_context(task, args.context, namespace) if task.strip() else ""
    return args, task, config, thread


def _expand(line: str, namespace: dict[str, Any]) -> str:
    """`$name` and `{expression}` in the options line, as IPython expands them for its own magics."""
    if "$" not in line and "{" not in line:
        return line
    from IPython.utils.text import DollarFormatter

    try:
        return DollarFormatter().vformat(line, args=[], kwargs=namespace)
    except Exception:  # as IPython does: a line that does not expand is used as written
        return line


def _notebook_logging(config: AppConfig) -> Any:
    """Logs go to a file only: a kernel sends whatever reaches its stderr to the running cell, which would
    put debug output (and what it quotes) into the notebook. Without `logging.file`, the state folder's."""
    if config.logging.file is not None:
        return config.logging
    from architect_nb.execution.checkpoints.files import default_checkpoint_dir

    return config.logging.model_copy(update={"file": default_checkpoint_dir().parent / "architect-nb.log"})


async def run_cell(line: str, body: str) -> None:
    """Run the agent on `body` with the options in `line`; the cell shows the run, live then static."""
    from IPython import get_ipython
    from IPython.display import display as _display

    display: Callable[..., Any] = _display

    from architect_nb.agent.factory import create_loop
    from architect_nb.log import configure_logging
    from architect_nb.notebook.pump import abort_stashed_requests, pump_until

    shell = get_ipython()
    session = get_session()
    default_redactor().refresh()
    try:
        args, task, config, thread = _prepare(session, line, body, shell.user_ns if shell is not None else {})
    except (UsageError, ConfigError) as exc:
        display(MessageOutput(str(exc)))
        return
    configure_logging(_notebook_logging(config), console=False)
    from architect_nb.notebook.kernel.kernel_session import IPythonKernel, MainThreadCalls
    from architect_nb.notebook.kernel.live_documents import for_run, running_cell_id
    from architect_nb.notebook.output.live import LiveView
    from architect_nb.notebook.questions.approval import WidgetConfirmer
    from architect_nb.notebook.questions.asking import Asking
    from architect_nb.notebook.questions.front_ends import current_watch

    live = LiveView(headless_grace=config.notebook.headless_grace, server_keeps_outputs=_server_keeps_outputs)
    asking = Asking(
        live.add,
        live.remove,
        timeout=config.notebook.approval_timeout,
        grace=config.notebook.headless_grace,
        front_ends=current_watch(),
        views_only=_server_keeps_outputs,
    )
    confirmer = WidgetConfirmer(asking)
    stepper = None
    if args.step:
        from architect_nb.notebook.questions.stepping import WidgetStepper

        stepper = WidgetStepper(asking)
    calls = MainThreadCalls()
    cell_id = running_cell_id(shell)
    kernel = IPythonKernel(shell, calls, cell_id) if shell is not None else None
    raw_cell = _raw_cell(shell, line, body)
    prelude = (
        _notebook_prelude(shell, config, kernel, cell_id, raw_cell, body, _wants_context(args, config, body))
        if shell is not None
        else None
    )
    try:
        loop = create_loop(
            config,
            agent=args.agent,
            model=args.model,
            mode=session.mode_for(args),
            dry_run=args.dry_run,
            confirmer=confirmer,
            on_event=live.on_event,
            max_steps=args.max_steps,
            budget_usd=args.budget_usd,
            kernel=kernel,
            stepper=stepper,
        )
    except (UnknownAgentError, ConfigError, ValueError) as exc:
        live.finish(MessageOutput(str(exc)))
        return
    except TeachingOffError as exc:
        live.finish(MessageOutput(str(exc), level="warning"))
        return
    if stepper is not None:
        stepper.transcript = loop.transcript
    run = CellRun(loop, confirmer, live, task, thread, config, prelude, stepper)
    try:
        with for_run(shell, config.notebook.frontend_timeout):
            future = asyncio.wrap_future(run.start())
            await pump_until(future, shell, calls)
    except (asyncio.CancelledError, KeyboardInterrupt):
        run.interrupt()
        calls.close()
        abort_stashed_requests(shell)
        run.wait_stopped()
        _finish(session, run, display)
        raise RunInterruptedError() from None
    finally:
        calls.close()
        if kernel is not None:
            kernel.finish(raw_cell)
    off = run.future.exception() if run.future.done() and not run.future.cancelled() else None
    if isinstance(off, TeachingOffError):  # the notebook's policy: no run began
        live.finish(MessageOutput(str(off), level="warning"))
        return
    _finish(session, run, display)
    _offer_reload(session, run, shell, display)
    if args.agent == "plan" and (plan := plan_of(session.history[-1].payload)) is not None:
        kept = [f"--model {shlex.quote(args.model)}"] if args.model else []
        kept += [f"--mode {args.mode}"] if args.mode else []
        approved = await offer_build(plan, run.thread.name, config.notebook)
        if approved is not None:
            await build(approved, run.thread.name, " ".join(kept))


async def build(plan: str, thread_name: str, options: str = "") -> None:
    """Build `plan` in its thread, in this cell (`options`: the plan cell's own --model and --mode)."""
    await run_cell(f"--agent build --thread {thread_name} {options}".strip(), build_task(plan))


async def build_line(line: str) -> Any:
    """`%architect build [RUN]`: build the last plan run's plan (or RUN's) in its thread, in this cell."""
    found = plan_to_build(line)
    if not isinstance(found, tuple):
        return found  # why there is nothing to build
    plan, thread_name = found
    await build(plan, thread_name)
    return None


def _offer_reload(session: Session, run: CellRun, shell: Any, display: Any) -> None:
    """Modules the run changed that this kernel had imported: named, with the offer to reload them."""
    finished = run.loop.transcript.finished
    if finished is None or not finished.files_changed:
        return
    from architect_nb.notebook.reload import ReloadOffer, autoreload_covers, stale_modules

    modules = stale_modules(finished.files_changed, run.config.workspace.root, run.notebook)
    if not modules:
        return
    session.stale_modules.update({m.name: m.path for m in modules})
    display(ReloadOffer(tuple(modules), autoreload_covers(shell, modules)))


def _wants_context(args: CellArgs, config: AppConfig, task: str) -> bool:
    """An outline before the task, unless turned off; a fork that carries on from a step has no task, and its
    conversation must go on from that step's tool results."""
    return config.notebook.context and not args.no_notebook and bool(task.strip())


def _raw_cell(shell: Any, line: str, body: str) -> str:
    """The running cell as the person typed it: IPython's history has it, raw, last."""
    history = getattr(shell, "history_manager", None)
    raw = getattr(history, "input_hist_raw", None)
    if isinstance(raw, list) and len(raw) > 1 and str(raw[-1]).lstrip().startswith("%%architect"):
        return str(raw[-1])
    return f"%%architect {line}".rstrip() + "\n" + body


def _notebook_prelude(
    shell: Any,
    config: AppConfig,
    kernel: Any,
    cell_id: str | None,
    raw_cell: str,
    task: str,
    wants_context: bool,
) -> Callable[[CellRun], str | None]:
    """The facts now (main thread); the notebook read later, in the worker: its teaching policy always, its
    outline when the run wants it."""
    from architect_nb.config.teaching_policy import notebook_level
    from architect_nb.notebook.context import context_note, find_notebook, gather_facts
    from architect_nb.notebook.context.opening_note import forget_outlines
    from architect_nb.notebook.kernel.live_documents import current_channel
    from architect_nb.tools.kernel.session import OwnNotebook

    facts = gather_facts(shell, cell_id, raw_cell)

    def prelude(run: CellRun) -> str | None:
        nonlocal facts
        channel = current_channel()
        if facts.cell_id is None and channel is not None and channel.outputs_kept_by_server():
            # The server ran the cell (jupyter-server-documents) and sent no cell id: the front ends know it.
            facts = replace(facts, cell_id=channel.running_cell(raw_cell))
            if kernel is not None:
                kernel.cell_id = facts.cell_id
        found = find_notebook(facts, config.workspace.root, channel)
        where = f"the notebook {found.view.path}'s metadata" if found.view.path else "the notebook's metadata"
        run.loop.tighten(notebook_level(found.metadata, where))  # raises TeachingOffError for `off`
        if not wants_context:
            return None
        run.notebook = found.view
        if kernel is not None and found.live is not None:
            path = found.view.path or str(found.file or "the notebook")
            own = OwnNotebook(document=found.live, path=path, running_cell=facts.cell_id, file=found.file)
            kernel.bind_notebook(own)
        forget_outlines(run.thread.messages)  # the earlier runs' outlines: this one supersedes them
        return context_note(found.view, task, config.notebook.context_tokens)

    return prelude


def _server_keeps_outputs() -> bool:
    from architect_nb.notebook.kernel.live_documents import current_channel

    channel = current_channel()
    return channel is not None and channel.outputs_kept_by_server()


def _finish(session: Session, run: CellRun, display: Any) -> None:
    """End the cell: the run is recorded first, so `%architect undo` and `review` find it whatever happens
    next; then its record is rendered, saved and shown. A failure there is one message with the run's id
    and the undo command (the traceback goes to the log), never a bare traceback in the cell."""
    error: BaseException | None = None
    if run.future.done() and not run.future.cancelled():
        error = run.future.exception()
    finished = run.loop.transcript.finished
    record = KernelRun(
        run_id=run.loop.run_id,
        task=default_redactor().redact(run.task),
        status=finished.status if finished else "failed",
        stop_reason=finished.stop_reason if finished else "interrupted",
        files_changed=list(finished.files_changed) if finished else [],
        cost_usd=run.loop.costs.cost_usd,
        started_at=run.started_at,
        payload={},
        engine=run.loop.engine,
    )
    session.record(record)
    try:
        _end_thread(session, run, display)
        whole = RunOutput.from_payload(run.payload()).payload  # redacted
        record.payload = dict(whole)
        where = save_whole(run.loop.engine, whole)
        run.live.finish(RunOutput(for_notebook(whole, where)))
    except Exception as exc:
        log.exception("run_end_failed", run_id=record.run_id)
        run.live.finish(MessageOutput(end_failed_message(record.run_id, exc), level="error"))
        return
    if error is not None and (finished is None or finished.stop_reason != "internal_error"):
        display(MessageOutput(f"The run stopped on an internal error: {type(error).__name__}: {error}"))


def end_failed_message(run_id: str, exc: BaseException) -> str:
    """What the cell says when the end of a run failed: the run is kept, and how to review and undo it."""
    return (
        f"Run {run_id} ended, but showing its record failed ({type(exc).__name__}; the details are in the "
        f"log). What it changed is recorded: `%architect review {run_id}` lists the files and "
        f"`%architect undo {run_id}` puts them back."
    )


def _end_thread(session: Session, run: CellRun, display: Any) -> None:
    """Close the run in its thread (if the worker could not) and save the thread."""
    last = run.thread.last_run
    if last is None or last.run_id != run.loop.run_id:
        return
    if last.status == "running":  # the worker did not stop in time; the thread keeps what it said
        run.thread.end_run(
            status="failed", tokens=run.loop.costs.total_tokens, cost_usd=run.loop.costs.cost_usd
        )
    if (warning := session.threads.remember(run.thread, run.config)) is not None:
        display(MessageOutput(warning, level="warning"))
