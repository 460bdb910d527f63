"""The per-kernel session: defaults (`.architect.yaml`, then `%architect config`), run history, threads, undo.

`Session.handle(command)` runs one `%architect` subcommand and returns what the cell shows.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from architect_nb.config import AppConfig, ConfigError, load_config
from architect_nb.config.schema import ConfirmMode
from architect_nb.execution.checkpoints.files import CheckpointFiles, checkpoint_files, saved_run_root
from architect_nb.execution.checkpoints.store import CheckpointError, CheckpointStore, UndoReport
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.guardrails.claude_permissions import claude_status
from architect_nb.log import get_logger
from architect_nb.notebook.magics import CellArgs, CheckArgs, LineCommand, UsageError, parse_check
from architect_nb.notebook.output.render import MessageOutput, RunOutput
from architect_nb.notebook.saved_runs import cut_off_offer, cut_off_runs, saved_listing
from architect_nb.notebook.threads import KernelThreads
from architect_nb.redaction import default_redactor

__all__ = ["KernelRun", "Session", "get_session", "reset_session"]

log = get_logger(__name__)


@dataclass(kw_only=True)
class KernelRun:
    """One run of this kernel, kept for `history`, `undo` and `transcript`."""

    run_id: str
    task: str
    status: str
    stop_reason: str
    files_changed: list[str]
    cost_usd: float
    started_at: float
    payload: dict[str, Any]
    engine: ExecutionEngine | None = field(default=None, repr=False)
    undone: UndoReport | None = None


_SESSION = "%architect config"  # the overrides' name in messages: the teaching policy's kernel level


class Session:
    """Defaults and history for the `%%architect` cells of one kernel."""

    def __init__(self) -> None:
        self.overrides: dict[str, Any] = {}
        self.mode: ConfirmMode | None = None
        self.history: list[KernelRun] = []
        self.threads = KernelThreads()
        #: Modules runs changed on disk that the kernel had imported, not reloaded since: name -> path.
        self.stale_modules: dict[str, str] = {}

    # ------------------------------------------------------------------ config

    def config(self, args: CellArgs | None = None) -> AppConfig:
        """The effective configuration: the config file, then `%architect config`, then the cell's options."""
        args = args or CellArgs()
        overrides = dict(self.overrides)
        if args.workspace is not None:
            overrides["workspace.root"] = str(args.workspace.expanduser().resolve())
        if args.think is not None:  # the cell's --think replaces the config's thinking settings
            budget = isinstance(args.think, int)
            overrides["llm.thinking"] = args.think if budget else None
            overrides["llm.reasoning_effort"] = None if budget else args.think
        start = Path(overrides.get("workspace.root") or Path.cwd())
        if args.read_roots:  # added to the configured ones
            configured = load_config(
                args.config, overrides, search_from=start, overrides_label=_SESSION
            ).workspace.read_roots
            added = [str(p.expanduser().resolve()) for p in args.read_roots]
            overrides["workspace.read_roots"] = [*map(str, configured), *added]
        return load_config(args.config, overrides, search_from=start, overrides_label=_SESSION)

    def mode_for(self, args: CellArgs) -> ConfirmMode | None:
        return args.mode or self.mode

    def record(self, record: KernelRun) -> None:
        self.history.append(record)

    def find(self, run: str | None, *, exact: bool = False) -> KernelRun:
        """The last run, or the one whose id is (or, unless `exact`, starts with) `run`."""
        if not self.history:
            raise UsageError("%architect: no run in this kernel yet; run a %%architect cell first.")
        if run is None:
            return self.history[-1]
        matches = [r for r in self.history if r.run_id == run or (not exact and r.run_id.startswith(run))]
        if len(matches) != 1:
            known = ", ".join(r.run_id for r in self.history[-5:])
            what = "no run" if not matches else "more than one run"
            raise UsageError(f"%architect: {what} matches {run!r}; recent runs: {known}.")
        return matches[0]

    def undo(self, run: str | None = None, *, step: int | None = None, path: str | None = None) -> UndoReport:
        """Undo the last run of this kernel, or the run with id `run` (made here or saved on disk): all of it,
        the steps from `step` on (a rewind), or one `path` (a review's Revert).

        The id must be whole: undo is destructive, and a button in a notebook from elsewhere must not reach
        one of your runs with a short prefix.
        """
        from architect_nb.notebook.kernel.live_documents import current_channel

        what = "revert" if path is not None else "undo"
        store, run_id, record = self._store_for(run, what)
        try:  # cells changed in a notebook open in a front end go back there (`live_documents`)
            report = store.undo(run_id, from_step=step, path=path, documents=current_channel())
        except CheckpointError as exc:
            raise UsageError(f"%architect {what}: {exc}.") from None
        if record is not None and step is None and path is None and report.ok:
            record.undone = report
        self._tell_thread(report)
        return report

    def inspect(self, point: str) -> Any:
        """What the model was sent and said at `RUN:STEP` (a run of this kernel), from its transcript."""
        from architect_nb.agent.conversation.inspector import rebuild
        from architect_nb.notebook.output.inspector_view import InspectorOutput

        run, step = _inspect_point(point)
        record = self.find(run)
        data = rebuild(record.payload.get("events") or [], step)
        if data is None:
            return MessageOutput(
                f"Run {record.run_id} has no model request at step {step} (it had "
                f"{sum(1 for e in record.payload.get('events') or [] if e.get('kind') == 'model_request')}).",
                level="error",
            )
        return InspectorOutput({"run_id": record.run_id, **data})

    def review(self, run: str | None = None) -> MessageOutput:
        """`%architect review`: every file the run changed, with its diff."""
        store, run_id, _record = self._store_for(run, "review")
        try:
            changes = store.review(run_id)
        except CheckpointError as exc:
            raise UsageError(f"%architect review: {exc}.") from None
        if not changes:
            return MessageOutput(f"Run {run_id} changed no files.", level="info")
        blocks = [f"{c.path} ({c.status})\n{c.diff.rstrip()}" for c in changes]
        hint = f"%architect revert {run_id} PATH puts one file back; %architect undo {run_id} all of them."
        return MessageOutput("\n\n".join([*blocks, hint]), level="info")

    def check(self, args: CheckArgs) -> Any:
        """`%architect check`: the notebook run on the workspace as it was before the run (the last one, or
        `--against`) and as it is now, in two fresh kernels, and its outputs compared."""
        import tempfile

        from architect_nb.checks import compare_notebook_runs

        store, run_id, _record = self._store_for(args.against, "check")
        root = store.workspace
        assert root is not None
        notebook = Path(args.notebook).expanduser()
        absolute = notebook if notebook.is_absolute() else (root / notebook)
        try:
            relative = absolute.resolve().relative_to(root)
        except ValueError:
            raise UsageError(
                f"%architect check: {args.notebook} is not inside the workspace {root}."
            ) from None
        with tempfile.TemporaryDirectory(prefix="architect-before-") as folder:
            before = Path(folder) / root.name
            try:
                notes = store.write_before(run_id, before)
            except (CheckpointError, OSError) as exc:
                raise UsageError(f"%architect check: the workspace before run {run_id}: {exc}.") from None
            result = compare_notebook_runs(
                relative, before=before, after=root, compare=args.compare, stability=args.stability
            )
        result.notes += [*notes, f"before: the workspace as it was before run {run_id}"]
        return result

    def _store_for(self, run: str | None, what: str) -> tuple[CheckpointStore, str, KernelRun | None]:
        """The store that knows run `run` (this kernel's engine, or the saved runs), its id and record."""
        try:
            record = self.find(run, exact=True)
        except UsageError:
            if run is None:
                raise
            return self._saved_store(run, what), run, None
        if record.engine is None:
            raise UsageError(f"%architect {what}: run {record.run_id} kept no record of its changes.")
        return record.engine.checkpoints, record.run_id, record

    def _tell_thread(self, report: UndoReport) -> None:
        """The next run of the undone run's thread hears which files went back (see `undo_note`)."""
        if report.errors:
            return
        warning = self.threads.note_undo(report, self.config())
        if warning is not None:  # the files are back; only the note to the model may be lost
            log.warning("undo_note_not_saved", run_id=report.run_id, reason=warning)

    def _saved_store(self, run: str, what: str) -> CheckpointStore:
        """A run this kernel did not make (it restarted since): its record saved on disk, in the workspace the
        run was made in (a cell's --workspace is not known here; the run's manifest knows)."""
        config = self.config()
        saved = checkpoint_files(config)
        root = saved_run_root(saved.directory, run) if saved is not None else None
        if saved is None or root is None:
            raise UsageError(
                f"%architect {what}: no run {run!r} in this kernel or among the saved runs; "
                "give the whole id, as `%architect history` or the run's output shows it."
            )
        return CheckpointStore(root, on_disk=CheckpointFiles(saved.directory, root))

    # ------------------------------------------------------------------ the line magic

    def handle(self, command: LineCommand) -> Any:
        """Run one `%architect` subcommand; the return value is what the cell shows."""
        name, args = command.name, command.args
        if name == "status":
            return self._status()
        if name == "tools":
            return self._tools()
        if name == "config":
            return self._config(args)
        if name == "model":
            return self._config((f"llm.model={args[0]}",))
        if name == "mode":
            self.mode = args[0]  # type: ignore[assignment]  # parse_line checked it
            return MessageOutput(f"Mode for this kernel's runs: {args[0]}.", level="info")
        if name == "history":
            return self._history()
        if name == "threads":
            return MessageOutput(self._threads(), level="info")
        if name == "undo":
            if not args and not self.history and (offer := cut_off_offer(self.config())) is not None:
                return MessageOutput(offer, level="info")  # undo is destructive: offered, not done
            run, step = _run_and_step(args[0]) if args else (None, None)
            report = self.undo(run, step=step)
            return MessageOutput(str(report), level="info" if report.ok else "error")
        if name == "revert":
            report = self.undo(args[0], path=_path_argument(args[1]))
            return MessageOutput(str(report), level="info" if report.ok else "error")
        if name == "review":
            return self.review(args[0] if args else None)
        if name == "reload":
            return self._reload(args)
        if name == "check":
            return self.check(parse_check(args))
        if name == "fix":
            return self._fix()
        if name == "skills":
            return self._skills()
        if name == "build":  # the extension awaits a `%architect build` line (runner.build_line)
            return MessageOutput(
                "%architect build starts a run: write it as a line of its own in a cell, with the extension "
                "loaded (%load_ext architect_nb)."
            )
        if name == "inspect":
            return self.inspect(args[0])
        record = self.find(args[0] if args else None)
        return default_redactor().redact_data(json.loads(json.dumps(record.payload, default=str)))

    def _skills(self) -> MessageOutput:
        """The skills the model is told of, and those left out with why."""
        from architect_nb.agent.conversation.skills import find_skills

        skills, problems = find_skills(self.config().workspace.root)
        lines = [f"{s.name} ({s.where}): {s.description}" for s in skills] or [
            "No skills: put one in .claude/skills/NAME/SKILL.md (or .architect/skills/, or "
            "~/.claude/skills/), with front matter giving its name and description."
        ]
        return MessageOutput("\n".join([*lines, *problems]), level="warning" if problems else "info")

    def _status(self) -> MessageOutput:
        config = self.config()
        from architect_nb.execution.build import build_engine

        engine = build_engine(config, mode=self.mode or "confirm-sensitive")
        servers = ", ".join(s.name for s in config.mcp.servers) or "none"
        current_thread = self.threads.current.get(str(config.workspace.root))
        lines = [
            f"model: {config.llm.model}",
            f"mode: {self.mode or 'the agent default (confirm-sensitive for build)'}",
            f"workspace: {config.workspace.root}",
            f"read roots (read-only): {', '.join(map(str, config.workspace.read_roots)) or 'none'}",
            _tools_line(engine),
            f"MCP servers: {servers}",
            *claude_status(config.workspace.root, config.hooks.claude_settings),
            f"sandbox: {_sandbox_line(config)}",
            f"teaching policy: {engine.teaching.describe()} (a notebook's own, in its metadata, joins when a "
            "cell runs)",
            f"approval timeout: {config.notebook.approval_timeout:g} s",
            f"front end that shows buttons: {_front_end_line(config.notebook.headless_grace)}",
            f"runs in this kernel: {len(self.history)}",
            f"current thread: {current_thread or 'none (the next cell starts one)'}",
        ]
        return MessageOutput("\n".join(lines), level="info")

    def _tools(self) -> MessageOutput:
        from architect_nb.execution.build import build_engine

        engine = build_engine(self.config(), mode=self.mode or "confirm-sensitive")
        blocks = []
        for schema in engine.registry.get_schemas(None):
            fn = schema["function"]
            params = json.dumps(fn.get("parameters", {}).get("properties", {}), indent=None)
            blocks.append(
                f"{fn['name']}: {fn.get('description', '').splitlines()[0]}\n  parameters: {params}"
            )
        return MessageOutput("\n".join(blocks), level="info")

    def _config(self, pairs: tuple[str, ...]) -> MessageOutput:
        if not pairs:
            data = self.config().model_dump(mode="json")
            text = yaml.safe_dump(default_redactor().redact_data(data), sort_keys=False)
            return MessageOutput(text.rstrip(), level="info")
        updates = {}
        for pair in pairs:
            key, _, raw = pair.partition("=")
            updates[key.strip()] = yaml.safe_load(raw) if raw.strip() else raw
        previous = dict(self.overrides)
        self.overrides.update(updates)
        try:
            self.config()
        except ConfigError:
            self.overrides = previous
            raise
        shown = ", ".join(f"{k}={v}" for k, v in updates.items())
        said = f"Set for this kernel's runs: {shown}."
        if any(key.startswith("teaching") for key in updates):
            from architect_nb.config.teaching_policy import policy_for

            policy = policy_for(self.config())
            said += f" The teaching policy that holds: {policy.describe()}."
        return MessageOutput(said, level="info")

    def _threads(self) -> str:
        """This kernel's threads and the workspace's saved ones, then the runs a stopped kernel cut off."""
        config = self.config()
        cut = cut_off_runs(config, besides={r.run_id for r in self.history})
        notes = [
            f"Cut off when its kernel stopped: {run.line()} (`%architect undo {run.run_id}`)" for run in cut
        ]
        return "\n".join([self.threads.listing(config), *notes[-5:]])

    def _history(self) -> MessageOutput:
        """This kernel's runs, then the workspace's saved runs from other kernels (finished or cut off)."""
        saved = saved_listing(self.config(), besides={r.run_id for r in self.history})
        if not self.history:
            return MessageOutput("\n".join(["No runs in this kernel yet.", *saved]), level="info")
        lines = []
        for r in self.history:
            when = time.strftime("%H:%M:%S", time.localtime(r.started_at))
            task = r.task.strip().splitlines()[0][:60] if r.task.strip() else ""
            undone = " (undone)" if r.undone is not None else ""
            files = len(r.files_changed)
            lines.append(
                f"{r.run_id}  {when}  {r.status:<8} {r.stop_reason:<12} {files} file(s)  "
                f"${r.cost_usd:.4f}  {task}{undone}"
            )
        return MessageOutput("\n".join([*lines, *saved]), level="info")

    def _reload(self, names: tuple[str, ...]) -> MessageOutput:
        """`%architect reload [MODULE ...]`: the modules runs changed (or those named), loaded afresh."""
        import sys

        from IPython import get_ipython

        from architect_nb.notebook.reload import reload_modules

        wanted = list(names) or list(self.stale_modules)
        if not wanted:
            return MessageOutput(
                "Nothing to reload: no module a run changed is imported in this kernel.", level="info"
            )
        unknown = [name for name in wanted if name not in sys.modules]
        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
        reloaded, rebound, problems = reload_modules([n for n in wanted if n not in unknown], namespace)
        for name in reloaded:
            self.stale_modules.pop(name, None)
        lines = []
        if reloaded:
            lines.append(f"Reloaded {', '.join(reloaded)}: your next cells use the new code.")
        if rebound:
            lines.append(
                f"Your names taken from them now point at the new code: {', '.join(sorted(rebound))}."
            )
        lines.extend(f"Could not reload {problem}" for problem in problems)
        lines.extend(f"{name} is not imported in this kernel." for name in unknown)
        return MessageOutput("\n".join(lines), level="info" if reloaded and not problems else "error")

    def _fix(self) -> MessageOutput:
        """`%architect fix`: an `%%architect` cell below, asking to fix the kernel's last error."""
        from IPython import get_ipython

        from architect_nb.notebook.fix_error import fix_task

        shell = get_ipython()
        task = fix_task(shell)
        if task is None:
            return MessageOutput(
                "No cell has failed in this kernel yet, so there is nothing to fix.", level="info"
            )
        if shell is None:
            return MessageOutput(f"%%architect\n{task}", level="info")
        shell.set_next_input(f"%%architect\n{task}", replace=False)
        return MessageOutput(
            "An %%architect cell asking to fix it is below: edit the task if you like, then run it.",
            level="info",
        )

    def output(self, run: str | None = None) -> RunOutput:
        return RunOutput.from_payload(self.find(run).payload)


def _inspect_point(text: str) -> tuple[str, int]:
    run, _, step = text.partition(":")
    if not run or not step.isdigit() or int(step) < 1:
        raise UsageError(f"%architect inspect: {text!r} is not RUN:STEP (a step number from 1).")
    return run, int(step)


def _run_and_step(text: str) -> tuple[str, int | None]:
    """`RUN` or `RUN:STEP` (rewind to just before that step)."""
    run, sep, step = text.partition(":")
    if not sep:
        return run, None
    if not step.isdigit() or int(step) < 1:
        raise UsageError(f"%architect undo: {text!r} is not RUN or RUN:STEP (a step number from 1).")
    return run, int(step)


def _path_argument(text: str) -> str:
    """A path as typed, or as `b64:...` (URL-safe base64 of UTF-8), which the labextension sends so that no
    file name is ever spliced into kernel code."""
    if not text.startswith("b64:"):
        return text
    try:
        return base64.urlsafe_b64decode(text[4:] + "=" * (-len(text[4:]) % 4)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"%architect revert: {text[:40]!r} is not a path in base64.") from None


_session: Session | None = None


def get_session() -> Session:
    global _session  # noqa: PLW0603 - one session per kernel process
    if _session is None:
        _session = Session()
    return _session


def reset_session() -> None:
    global _session  # noqa: PLW0603
    _session = None


def _sandbox_line(config: AppConfig) -> str:
    if not config.commands.enabled:
        return "not used (commands.enabled is false)"
    from architect_nb.tools.commands.sandbox import sandbox_summary

    return sandbox_summary(config.sandbox)


def _front_end_line(grace: float) -> str:
    """Whether one has shown itself to this kernel (the headless policy of `asking` reads the same watch)."""
    from architect_nb.notebook.questions.front_ends import current_watch

    watch = current_watch()
    if watch is not None and watch.seen:
        return "seen (questions wait for a click)"
    return f"none seen yet (a question nobody can see gets its safe default after {grace:g} s)"


def _tools_line(engine: Any) -> str:
    """The tools runs are offered, and those the teaching policy withholds."""
    tools = sorted(engine.registry.list_all(), key=lambda tool: tool.name)
    offered = [tool.name for tool in tools if engine.offers(tool)]
    withheld = [tool.name for tool in tools if not engine.offers(tool)]
    line = f"tools: {', '.join(offered) or 'none'}"
    return line + (f" (withheld by the teaching policy: {', '.join(withheld)})" if withheld else "")
