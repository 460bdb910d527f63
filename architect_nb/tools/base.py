"""`BaseTool`, the interface of every tool (local or MCP), and `ToolResult`, what every tool returns.

A tool never raises: `BaseTool.__init_subclass__` wraps each subclass's `execute` so that bad arguments and
unexpected errors come back as a failed `ToolResult` whose message tells the model what to do next.
"""

from __future__ import annotations

import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Unpack

from pydantic import BaseModel, ValidationError

from architect_nb.log import get_logger
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.outcome import CallOutcome
from architect_nb.tools.state_snapshot import StateChange, StateSnapshot

__all__ = ["BaseTool", "CallOutcome", "ToolRefusedError", "ToolResult", "format_validation_error"]


class ToolRefusedError(Exception):
    """Raised by `BaseTool.code_to_run` for a call the tool will refuse anyway (the engine reports it then,
    before asking anybody to approve it). The message says why and what to do instead."""


@dataclass(slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call.

    Attributes:
        success: Whether the tool did what it was asked.
        output: What the tool produced (file text, matches, a diff, command output).
        error: On failure, a sentence saying what went wrong and what to do next.
        metadata: Structured extras for the engine and the notebook (a diff, counts, truncation flags), each
            key typed in `ToolMetadata`. Never sent to the model.
        outcome: How the call ended (`CallOutcome`): `OK` or `FAILED` from the tool itself, anything else
            from the layer that refused or skipped it (`refused`).
        changed_files: Set by the engine around any tool, never by the tool: the workspace paths the call
            changed, as its snapshots saw them.
        changed_state: Set by the engine: the person's variables the call changed (`state_snapshot`).
        hook_results: Set by the engine: the PostToolUse hooks' results (`HookResult.to_dict`).
        notes: Set by the engine: the warnings and hook reports it appended to `output`.
    """

    success: bool
    output: str = ""
    error: str | None = None
    metadata: ToolMetadata = field(default_factory=lambda: ToolMetadata())  # noqa: PLW0108 - a TypedDict is no factory to mypy
    outcome: CallOutcome = CallOutcome.OK
    changed_files: list[str] = field(default_factory=list)
    changed_state: list[StateChange] = field(default_factory=list)
    hook_results: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.success and self.outcome is CallOutcome.OK:
            self.outcome = CallOutcome.FAILED
        elif self.success and self.outcome is not CallOutcome.DRY_RUN:
            self.outcome = CallOutcome.OK

    @classmethod
    def ok(cls, output: str, **metadata: Unpack[ToolMetadata]) -> ToolResult:
        return cls(success=True, output=output, metadata=metadata)

    @classmethod
    def fail(cls, error: str, output: str = "", **metadata: Unpack[ToolMetadata]) -> ToolResult:
        return cls(success=False, output=output, error=error, metadata=metadata)

    @classmethod
    def refused(cls, outcome: CallOutcome, error: str, **metadata: Unpack[ToolMetadata]) -> ToolResult:
        """A call that did not run (or ran no tool), and why: the layer that decided says how it ended."""
        return cls(success=False, error=error, metadata=metadata, outcome=outcome)

    def to_model_text(self) -> str:
        """The text the model receives as the tool message."""
        if self.success:
            return self.output
        return f"Error: {self.error}" + (f"\n{self.output}" if self.output else "")


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Turn a Pydantic error into one line per bad field, short enough to send back to the model."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return f"Invalid arguments for {tool_name}: " + "; ".join(parts) + ". Check the tool's schema and retry."


def _guarded(execute: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
    @functools.wraps(execute)
    def execute_never_raising(self: BaseTool, *positional: Any, **kwargs: Any) -> ToolResult:
        if positional:
            return ToolResult.fail(
                f"Invalid arguments for {self.name}: pass arguments by name, as in the schema."
            )
        try:
            result = execute(self, **kwargs)
        except ValidationError as exc:
            return ToolResult.fail(format_validation_error(self.name, exc))
        except TypeError as exc:
            return ToolResult.fail(
                f"Invalid arguments for {self.name}: {exc}. Check the tool's schema and retry."
            )
        except Exception as exc:  # the contract: a tool never raises
            get_logger(__name__).exception("tool_crashed", tool=self.name)
            return ToolResult.fail(
                f"{self.name} failed unexpectedly ({type(exc).__name__}: {exc}). "
                "This is a bug in the tool; try another approach."
            )
        if not isinstance(result, ToolResult):
            return ToolResult.fail(f"{self.name} returned {type(result).__name__} instead of a ToolResult.")
        return result

    execute_never_raising.__architect_guarded__ = True  # type: ignore[attr-defined]
    return execute_never_raising


class BaseTool(ABC):
    """A tool the agent can call.

    Subclasses set `name`, `description`, `args_model` and `sensitive`, and implement `execute(**kwargs)`.
    The Pydantic `args_model` is the single source of the arguments: it validates them and it is
    the JSON schema the model sees, so give every field a short `description`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    sensitive: ClassVar[bool] = False
    #: True for tools that change files through their `path` argument; the engine checkpoints those files.
    mutates_files: ClassVar[bool] = False
    #: True for tools that run their `code` argument in the person's kernel: the guardrails check the code,
    #: the approval shows it highlighted, and "approve all like this" never covers it.
    runs_code: ClassVar[bool] = False
    #: True for tools whose effects on the workspace cannot be known beforehand (MCP tools): the engine
    #: snapshots the whole workspace around them, as around a command.
    unknown_effects: ClassVar[bool] = False
    #: True for tools that only read (files, searches, variables) or keep the agent's own notes: all that a
    #: teaching policy that forbids writing leaves (`config.teaching_policy`).
    reads_only: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own_execute = cls.__dict__.get("execute")
        if own_execute is not None and not getattr(own_execute, "__architect_guarded__", False):
            cls.execute = _guarded(own_execute)  # type: ignore[method-assign]

    @abstractmethod
    def execute(self, **kwargs: Any) -> ToolResult:
        """Run the tool. Never raises; failures are a `ToolResult` with `success=False`."""

    def preview(self, **kwargs: Any) -> str | None:
        """The unified diff this call would make, computed without changing anything; None if not applicable.

        The engine shows it when asking for confirmation and in dry-run. May raise on bad arguments.
        """
        return None

    def code_to_run(self, kwargs: dict[str, Any]) -> str | None:
        """For a `runs_code` tool, the code the call would run (its `code` argument unless the tool says
        otherwise): the guardrails check it and the approval shows it. None when it cannot be told; raises
        `ToolRefusedError` for a call the tool would refuse."""
        code = kwargs.get("code")
        return code if isinstance(code, str) else None

    def snapshot_state(self, kwargs: dict[str, Any]) -> StateSnapshot | None:
        """What the call may change besides the workspace's files (the person's variables), kept before it
        runs so undo can put it back (`state_snapshot`); None for a tool that changes no such state."""
        return None

    def validate_args(self, args: dict[str, Any]) -> BaseModel:
        """Validate `args` against `args_model`. Raises Pydantic's `ValidationError` on bad input."""
        return self.args_model.model_validate(args)

    def get_schema(self) -> dict[str, Any]:
        """The tool in OpenAI's function-calling format, as LiteLLM expects it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(parameters_schema(self.args_model)),
            },
        }

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} sensitive={self.sensitive}>"


@functools.cache
def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema of an args model, without the titles Pydantic adds (the model pays for every token)."""
    schema = model.model_json_schema()
    return _strip_titles(schema)  # type: ignore[no-any-return]


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            # Titles repeat the field names; additionalProperties=false is enforced by validation anyway.
            if (key == "title" and isinstance(value, str)) or (
                key == "additionalProperties" and value is False
            ):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: _strip_titles(prop) for name, prop in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node
