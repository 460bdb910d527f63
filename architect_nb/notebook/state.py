"""The per-kernel session: defaults (`.architect.yaml`, then `%architect config`), run history and undo.

`Session.handle(command)` runs one `%architect` subcommand and returns what the cell shows.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from architect_nb.config import AppConfig, ConfigError, load_config
from architect_nb.config.schema import ConfirmMode
from architect_nb.execution.checkpoint_files import CheckpointFiles, checkpoint_files, saved_run_root
from architect_nb.execution.checkpoints import CheckpointError, CheckpointStore, UndoReport
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.notebook.magics import CellArgs, LineCommand, UsageError
from architect_nb.notebook.render import MessageOutput, RunOutput
from architect_nb.redaction import default_redactor

__all__ = ["RunRecord", "Session", "get_session", "reset_session"]


@dataclass(kw_only=True)
class RunRecord:
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


class Session:
    """Defaults and history for the `%%architect` cells of one kernel."""

    def __init__(self) -> None:
        self.overrides: dict[str, Any] = {}
        self.mode: ConfirmMode | None = None
        self.history: list[RunRecord] = []

    # ------------------------------------------------------------------ config

    def config(self, args: CellArgs | None = None) -> AppConfig:
        """The effective configuration: the config file, then `%architect config`, then the cell's options."""
        args = args or CellArgs()
        overrides = dict(self.overrides)
        if args.workspace is not None:
            overrides["workspace.root"] = str(args.workspace.expanduser().resolve())
        start = Path(overrides.get("workspace.root") or Path.cwd())
        return load_config(args.config, overrides, search_from=start)

    def mode_for(self, args: CellArgs) -> ConfirmMode | None:
        return args.mode or self.mode

    def record(self, record: RunRecord) -> None:
        self.history.append(record)

    def find(self, run: str | None, *, exact: bool = False) -> RunRecord:
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

    def undo(self, run: str | None = None) -> UndoReport:
        """Undo the last run of this kernel, or the run with id `run`, made by this kernel or saved on disk.

        The id must be whole: undo is destructive, and a button in a notebook from elsewhere must not reach
        one of your runs with a short prefix.
        """
        try:
            record = self.find(run, exact=True)
        except UsageError:
            if run is None:
                raise
            return self._undo_saved(run)
        if record.undone is not None:
            raise UsageError(f"%architect undo: run {record.run_id} was already undone ({record.undone}).")
        if record.engine is None:
            raise UsageError(f"%architect undo: run {record.run_id} kept no checkpoints.")
        try:
            report = record.engine.checkpoints.undo(record.run_id)
        except CheckpointError as exc:
            raise UsageError(f"%architect undo: {exc}.") from None
        record.undone = report
        return report

    def _undo_saved(self, run: str) -> UndoReport:
        """A run this kernel did not make (it restarted since): its checkpoints saved on disk, in the
        workspace the run was made in (a cell's --workspace is not known here; the run's manifest knows)."""
        config = self.config()
        saved = checkpoint_files(config)
        root = saved_run_root(saved.directory, run) if saved is not None else None
        if saved is None or root is None:
            raise UsageError(
                f"%architect undo: no run {run!r} in this kernel or among the saved runs; "
                "give the whole id, as `%architect history` or the run's output shows it."
            )
        try:
            return CheckpointStore(on_disk=CheckpointFiles(saved.directory, root)).undo(run)
        except CheckpointError as exc:
            raise UsageError(f"%architect undo: {exc}.") from None

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
        if name == "undo":
            report = self.undo(args[0] if args else None)
            return MessageOutput(str(report), level="info" if report.ok else "error")
        record = self.find(args[0] if args else None)
        return default_redactor().redact_data(json.loads(json.dumps(record.payload, default=str)))

    def _status(self) -> MessageOutput:
        config = self.config()
        from architect_nb.execution.engine import build_engine

        engine = build_engine(config, mode=self.mode or "confirm-sensitive")
        servers = ", ".join(s.name for s in config.mcp.servers) or "none"
        lines = [
            f"model: {config.llm.model}",
            f"mode: {self.mode or 'the agent default (confirm-sensitive for build)'}",
            f"workspace: {config.workspace.root}",
            f"tools: {', '.join(engine.registry.names())}",
            f"MCP servers: {servers}",
            f"sandbox: {_sandbox_line(config)}",
            f"approval timeout: {config.notebook.approval_timeout:g} s",
            f"runs in this kernel: {len(self.history)}",
        ]
        return MessageOutput("\n".join(lines), level="info")

    def _tools(self) -> MessageOutput:
        from architect_nb.execution.engine import build_engine

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
        return MessageOutput(f"Set for this kernel's runs: {shown}.", level="info")

    def _history(self) -> MessageOutput:
        if not self.history:
            return MessageOutput("No runs in this kernel yet.", level="info")
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
        return MessageOutput("\n".join(lines), level="info")

    def output(self, run: str | None = None) -> RunOutput:
        return RunOutput.from_payload(self.find(run).payload)


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
