"""run_command (F13): runs a shell command in the workspace behind four layers.

1. The blocklist refuses destructive commands in every mode (`classify_command(...).blocked`).
2. The classifier tells the engine whether the command is `safe`, `dev` or `dangerous`
   (`RunCommandTool.classify_sensitivity`); with `allowed_only`, `dangerous` commands are refused here.
3. A timeout kills the command's whole process group; output is bounded, keeping its head and tail.
4. The working directory is validated with `validate_path`, so it lies inside the workspace.
5. The OS sandbox (`sandbox`, bubblewrap on Linux) confines what the command can reach: only the workspace is
   writable, no network, credential folders and sensitive files hidden. `sandbox.mode` decides what happens
   when it cannot start: `auto` runs without it, `required` refuses.

The tool refuses blocked commands itself too, so it is safe even when called without the engine.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from architect_nb.config.schema import CommandsConfig, GuardrailsConfig, SandboxConfig
from architect_nb.paths.validators import PathTraversalError
from architect_nb.tools.base import ToolResult
from architect_nb.tools.commands.classifier import (
    CommandVerdict,
    Sensitivity,
    classify_command,
)
from architect_nb.tools.commands.git_config_risk import risky_git_config
from architect_nb.tools.commands.process import ProcessOutcome, run_process
from architect_nb.tools.commands.sandbox import (
    INSTALL_HINT,
    Sandbox,
    SandboxUnavailable,
    prepare_sandbox,
    sandbox_note,
    sandbox_unavailable_reason,
    start_failure,
)
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.workspace import ToolArgs, WorkspaceTool

__all__ = ["CommandVerdict", "RunCommandArgs", "RunCommandTool", "Sensitivity", "classify_command"]

_MENTIONS_GIT = re.compile(r"\bgit\b")

#: bash takes one argument of at most 128 KiB; longer scripts belong in a file.
MAX_RUN_CHARS = 64 * 1024
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Inherited variables that would make bash run code before the command (`bash -c` reads $BASH_ENV).
_DROPPED_ENV = ("BASH_ENV", "ENV")
# Output goes to the model, not a terminal: no colour codes, even when a kernel forces them (ipykernel sets
# FORCE_COLOR=1). The model's own `env` argument can still ask for colour.
_COLOR_FORCING_ENV = ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS")
_NO_COLOR_ENV = {"NO_COLOR": "1", "TERM": "dumb"}
# In the sandbox, scratch space is its own /tmp (private, empty, writable); IPython's and Jupyter's folders
# under HOME are hidden there, so tools that start kernels (nbconvert, papermill, nbmake) use /tmp instead.
_SANDBOX_ENV = {
    "TMPDIR": "/tmp",  # noqa: S108
    "IPYTHONDIR": "/tmp/ipython",  # noqa: S108
    "JUPYTER_RUNTIME_DIR": "/tmp/jupyter-runtime",  # noqa: S108
}


class RunCommandArgs(ToolArgs):
    command: str = Field(description="Shell command (bash), run in the workspace.", max_length=MAX_RUN_CHARS)
    cwd: str | None = Field(None, description="Working directory relative to the workspace root.")
    timeout: int | None = Field(None, ge=1, le=600, description="Seconds before it is killed.")
    env: dict[str, str] | None = Field(None, description="Extra environment variables.")

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for name, text in (value or {}).items():
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
            if "\x00" in text:
                raise ValueError(f"the value of {name} contains a NUL character")
        return value


class RunCommandTool(WorkspaceTool):
    name = "run_command"
    description = (
        "Run a bash command in the workspace (no stdin). Returns exit code and output (long output keeps "
        "head and tail). Read-only commands run without confirmation; destructive ones are blocked."
    )
    args_model = RunCommandArgs
    sensitive = True  # the engine asks `classify_sensitivity` per command instead

    def __init__(
        self,
        workspace_root: Path,
        commands_config: CommandsConfig | None = None,
        *,
        sandbox_config: SandboxConfig | None = None,
        guardrails_config: GuardrailsConfig | None = None,
        read_roots: Sequence[Path] = (),
    ) -> None:
        """`read_roots` (`workspace.read_roots`) are visible, read-only, inside the sandbox; a command's cwd
        stays in the workspace."""
        super().__init__(workspace_root)
        self._read_roots = tuple(read_roots)
        self.commands_config = commands_config or CommandsConfig()
        self.sandbox_config = sandbox_config or SandboxConfig()
        guardrails = guardrails_config or GuardrailsConfig()
        # Guardrails that are switched off hide nothing in the sandbox either.
        active = guardrails.active
        self._sensitive = tuple(guardrails.sensitive_files) if active else ()
        self._protected = tuple(guardrails.protected_files) if active else ()
        for pattern in self.commands_config.blocked_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"commands.blocked_patterns entry {pattern!r} is not a valid regex: {exc}"
                ) from exc

    def classify(self, command: str, env: Mapping[str, str] | None = None) -> CommandVerdict:
        """The full verdict for `command` under this tool's configuration."""
        verdict = classify_command(command, self.commands_config, env=env)
        if verdict.sensitivity == "safe" and _MENTIONS_GIT.search(command):
            risk = risky_git_config(self.workspace_root)
            if risk is not None:
                reason = f"this repository's git config ({risk}) can make git run programs, so git asks first"
                return dataclasses.replace(verdict, sensitivity="dangerous", reason=reason)
        return verdict

    def classify_sensitivity(self, command: str, env: Mapping[str, str] | None = None) -> Sensitivity:
        """'safe', 'dev' or 'dangerous': what the engine's confirmation table needs. Runs nothing."""
        return self.classify(command, env).sensitivity

    def runs_contained(self) -> bool:
        """Whether commands run in the OS sandbox without network and `sandbox.dev_without_asking` is on:
        then confirm-sensitive runs `dev` commands without asking."""
        config = self.sandbox_config
        return (
            config.mode != "off"
            and config.dev_without_asking
            and not config.network
            and sandbox_unavailable_reason(config) is None
        )

    def runs_sandboxed(self) -> bool:
        """Whether commands run in the OS sandbox, which hides the guardrails' sensitive files and keeps their
        protected ones read-only."""
        config = self.sandbox_config
        return config.mode != "off" and sandbox_unavailable_reason(config) is None

    def sandbox_for(self, cwd: Path) -> Sandbox | SandboxUnavailable | None:
        """The sandbox a command in `cwd` runs in; None when it runs without one (`off`, or `auto` where
        bubblewrap does not work); `SandboxUnavailable` when it must not run at all."""
        config = self.sandbox_config
        if config.mode == "off":
            return None
        reason = sandbox_unavailable_reason(config)
        if reason is not None:
            if config.mode == "auto":
                return None
            install = "" if INSTALL_HINT in reason else f" {INSTALL_HINT}."
            return SandboxUnavailable(
                f"The OS sandbox is required (sandbox.mode: required) but cannot start: {reason} The "
                f"command was not run.{install} Ask the user to make it work here, or to set sandbox.mode "
                "to auto."
            )
        return prepare_sandbox(
            self.workspace_root,
            config,
            sensitive_files=self._sensitive,
            protected_files=self._protected,
            read_roots=self._read_roots,
            cwd=cwd,
        )

    def execute(self, **kwargs: Any) -> ToolResult:
        args = RunCommandArgs.model_validate(kwargs)
        verdict = self.classify(args.command, args.env)
        meta: ToolMetadata = {"sensitivity": verdict.sensitivity, "blocked": verdict.blocked}
        if verdict.blocked:
            return ToolResult.fail(
                f"{verdict.reason} This command is refused in every mode; do not retry it, find a safer way.",
                **meta,
            )
        if self.commands_config.allowed_only and verdict.sensitivity == "dangerous":
            return ToolResult.fail(
                f"Command classified as 'dangerous' and allowed_only=True ({verdict.reason}). "
                "Use a read-only or development command instead.",
                **meta,
            )
        if args.env and self.classify(args.command).sensitivity == "safe":
            # The engine may have let it run unconfirmed as 'safe'; with variables it is not.
            return ToolResult.fail(
                "Extra env variables make a read-only command able to run other code, so they are refused "
                "here. Write them in the command instead (`NAME=value cmd`) so it is classified with them.",
                **meta,
            )
        try:
            cwd = self.resolve(args.cwd) if args.cwd else self.workspace_root
        except PathTraversalError as exc:
            return ToolResult.fail(f"{exc} Give cwd relative to the workspace root.", **meta)
        if not cwd.is_dir():
            return ToolResult.fail(f"cwd '{self.rel(cwd)}' is not a directory in the workspace.", **meta)
        sandbox = self.sandbox_for(cwd)
        meta["sandboxed"] = sandbox is not None and not isinstance(sandbox, SandboxUnavailable)
        if isinstance(sandbox, SandboxUnavailable):
            return ToolResult.fail(sandbox.reason, **meta)
        bash = shutil.which("bash") or "/bin/bash"
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV and k not in _COLOR_FORCING_ENV}
        env.update(_NO_COLOR_ENV)
        if sandbox is not None:
            env.update(_SANDBOX_ENV)
        env.update(args.env or {})
        timeout = args.timeout or self.commands_config.default_timeout
        argv = [bash, "-c", args.command]
        try:
            outcome = run_process(
                sandbox.wrap(argv) if sandbox is not None else argv,
                cwd=cwd,
                env=env,
                timeout=timeout,
                max_lines=self.commands_config.max_output_lines,
            )
        except (OSError, ValueError) as exc:
            where = "the sandbox" if sandbox is not None else "the command"
            return ToolResult.fail(f"Could not start {where}: {exc}. The command did not run.", **meta)
        meta.update(
            {
                "exit_code": outcome.exit_code,
                "timed_out": outcome.timed_out,
                "lines_omitted": outcome.lines_omitted,
                "cwd": self.rel(cwd),
            }
        )
        if sandbox is not None and (failed := _sandbox_failure(outcome)) is not None:
            return ToolResult.fail(failed, output=outcome.output, **meta)
        return _result(outcome, timeout, sandbox, meta)


def _sandbox_failure(outcome: ProcessOutcome) -> str | None:
    """bubblewrap could not start the sandbox, or was killed: never a silent unsandboxed run."""
    problem = start_failure(outcome.exit_code, outcome.output)
    if problem is not None:
        return (
            f"The OS sandbox could not start ({problem}); the command did not run. Tell the user: the "
            "sandbox works again once that is fixed, or they can set sandbox.mode to off."
        )
    if outcome.exit_code is not None and outcome.exit_code < 0 and not outcome.output_limited:
        return (
            f"The sandbox was stopped by signal {-outcome.exit_code} before the command finished; the "
            "command and everything it started were killed. Run it again if it was interrupted by mistake."
        )
    return None


def _result(outcome: ProcessOutcome, timeout: int, sandbox: Sandbox | None, meta: ToolMetadata) -> ToolResult:
    output = outcome.output
    if outcome.timed_out:
        return ToolResult.fail(
            f"Timed out after {timeout} s; the command and everything it started were killed. "
            "Raise timeout (max 600) or run something shorter.",
            output=output,
            **meta,
        )
    if outcome.output_limited:
        return ToolResult.fail(
            f"Stopped after {outcome.total_bytes} bytes of output. Limit what the command prints "
            "(e.g. `| head`).",
            output=output,
            **meta,
        )
    if outcome.exit_code != 0:
        note = f" {sandbox_note(output, sandbox)}" if sandbox is not None else ""
        return ToolResult.fail(f"Command exited with code {outcome.exit_code}.{note}", output=output, **meta)
    text = f"exit code: {outcome.exit_code}\n{output}" if output else f"exit code: {outcome.exit_code}"
    return ToolResult.ok(text, **meta)
