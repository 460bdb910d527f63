"""The kernel tools: list_variables, inspect_variable, run_python and propose_cell.

They work on a `KernelSession`, so they are registered only when the engine runs inside a kernel (or the
Python API passes a namespace). list_variables and inspect_variable read and never ask; run_python runs code
in the person's process, so it always asks in confirm-sensitive mode; propose_cell runs nothing.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.kernel.describe import PathError, describe, resolve_path, short_size, type_name
from architect_nb.tools.kernel.execute import CodeOutcome, forbidden_call, run_code
from architect_nb.tools.kernel.kernel_undo import kernel_snapshot
from architect_nb.tools.kernel.namespace import person_variables
from architect_nb.tools.kernel.session import KernelSession
from architect_nb.tools.metadata import ToolMetadata
from architect_nb.tools.state_snapshot import StateSnapshot
from architect_nb.tools.workspace import ToolArgs

__all__ = [
    "InspectVariableArgs",
    "InspectVariableTool",
    "ListVariablesArgs",
    "ListVariablesTool",
    "ProposeCellArgs",
    "ProposeCellTool",
    "RunPythonArgs",
    "RunPythonTool",
    "fresh_workspace_modules",
]

MAX_VARIABLES = 150
MAX_CODE = 100_000
_DESCRIBE_SECONDS = 10.0


class ListVariablesArgs(ToolArgs):
    pass


# Lengths are checked in `execute`, not in the schema: every schema keyword costs tokens on every turn.
class InspectVariableArgs(ToolArgs):
    name: str = Field(description="Variable or path, e.g. cfg.a or d['k'] (no calls).")
    rows: int = Field(5, description="Head rows, 1-50.")


class RunPythonArgs(ToolArgs):
    code: str = Field(description="Python code.")


class ProposeCellArgs(ToolArgs):
    code: str = Field(description="The cell's code.")


def _too_long(text: str, limit: int, what: str) -> ToolResult | None:
    if len(text) <= limit:
        return None
    return ToolResult.fail(f"The {what} is {len(text):,} characters, over the {limit:,} allowed; send less.")


class _KernelTool(BaseTool):
    def __init__(self, session: KernelSession, workspace_root: Path | None = None) -> None:
        self.session = session
        self.workspace_root = workspace_root


class ListVariablesTool(_KernelTool):
    name = "list_variables"
    reads_only = True
    description = "List the user's notebook variables: name, type, size."
    args_model = ListVariablesArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        ListVariablesArgs.model_validate(kwargs)
        return self.session.call(self._list)

    def _list(self) -> ToolResult:
        namespace = self.session.namespace
        names = list(person_variables(namespace, self.session.hidden))
        lines = [f"{n}: {type_name(namespace[n])}, {short_size(namespace[n])}" for n in names[:MAX_VARIABLES]]
        if len(names) > MAX_VARIABLES:
            lines.append(f"... and {len(names) - MAX_VARIABLES} more")
        own = sorted(self.session.scratch.own())
        if own:
            lines.append(f"(your run_python names this run: {', '.join(own[:40])})")
        if not lines:
            return ToolResult.ok("The notebook has no variables of its own yet.", count=0)
        return ToolResult.ok("\n".join(lines), count=len(names))


class InspectVariableTool(_KernelTool):
    name = "inspect_variable"
    reads_only = True
    description = "Describe a variable: DataFrame dtypes/head/nulls/stats, array stats, function source."
    args_model = InspectVariableArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        args = InspectVariableArgs.model_validate(kwargs)
        if (refusal := _too_long(args.name, 500, "variable path")) is not None:
            return refusal
        if not 1 <= args.rows <= 50:
            return ToolResult.fail(f"rows must be from 1 to 50, not {args.rows}.")
        return self.session.call(lambda: self._inspect(args))

    def _inspect(self, args: InspectVariableArgs) -> ToolResult:
        def lookup(name: str) -> Any:
            scratch = self.session.scratch
            return scratch[name] if name in scratch else self.session.namespace[name]

        described: list[str] = []
        problems: list[str] = []

        def work() -> None:
            try:
                described.append(describe(resolve_path(args.name, lookup), rows=args.rows))
            except PathError as exc:
                problems.append(str(exc))

        # A property, __getitem__ or __repr__ is the object's own code: bounded like run_python's.
        outcome = run_code("_describe()", {"_describe": work}, timeout=_DESCRIBE_SECONDS)
        if outcome.timed_out or outcome.interrupted:
            return ToolResult.fail(
                f"Describing {args.name} took longer than {_DESCRIBE_SECONDS:g} s and was stopped "
                "(a slow __repr__ or property); inspect a part of it instead."
            )
        if problems:
            return ToolResult.fail(f"{problems[0]}.")
        if not described:
            return ToolResult.fail(f"{args.name} could not be described: {outcome.error or 'no description'}")
        return ToolResult.ok(described[0])


class RunPythonTool(_KernelTool):
    name = "run_python"
    description = (
        "Run Python in the user's kernel with their variables; your assignments stay in a scratch namespace. "
        "Returns output, value, errors, plots."
    )
    args_model = RunPythonArgs
    sensitive = True
    runs_code = True

    def __init__(
        self,
        session: KernelSession,
        workspace_root: Path | None = None,
        *,
        timeout: float = 60.0,
        write_namespace: bool = False,
        undo_budget: int | None = None,
    ) -> None:
        """`undo_budget`: bytes for the copies of the person's variables undo restores (None: the default,
        tied to free memory; `kernel.undo_budget_mb`)."""
        super().__init__(session, workspace_root)
        self.timeout = timeout
        self.write_namespace = write_namespace
        self.undo_budget = undo_budget

    def snapshot_state(self, kwargs: dict[str, Any]) -> StateSnapshot | None:
        """The person's variables the code may change, kept for undo (`kernel_undo`)."""
        code = kwargs.get("code")
        if not isinstance(code, str) or len(code) > MAX_CODE or forbidden_call(code) is not None:
            return None  # refused before it runs: it changes nothing
        return kernel_snapshot(
            self.session, code, into_namespace=self.write_namespace, budget_bytes=self.undo_budget
        )

    def execute(self, **kwargs: Any) -> ToolResult:
        args = RunPythonArgs.model_validate(kwargs)
        if (refusal := _too_long(args.code, MAX_CODE, "code")) is not None:
            return refusal
        killer = forbidden_call(args.code)
        if killer is not None:
            return ToolResult.fail(
                f"The code calls {killer}(), which would end the kernel and the user's work; it was not run. "
                "Raise an exception or return instead."
            )
        namespace = self.session.namespace if self.write_namespace else self.session.scratch
        seconds = self.timeout

        def work() -> CodeOutcome:
            with fresh_workspace_modules(self.workspace_root):
                return run_code(
                    args.code,
                    namespace,
                    timeout=seconds,
                    displays=self.session.displays,
                    format_value=self.session.format_value,
                )

        return _result(self.session.call(work), seconds)


class ProposeCellTool(_KernelTool):
    name = "propose_cell"
    description = "Add a code cell below for the user to run; runs nothing."
    args_model = ProposeCellArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        args = ProposeCellArgs.model_validate(kwargs)
        if (refusal := _too_long(args.code, MAX_CODE, "code")) is not None:
            return refusal
        if not args.code.strip():
            return ToolResult.fail("The cell is empty; send the code the user should run.")
        placed = self.session.propose_cell(args.code)
        where = (
            "It will appear as a new cell below the %%architect cell when the run ends."
            if placed
            else "This front end cannot add cells; the code is shown in the run's output."
        )
        return ToolResult.ok(f"Proposed a cell for the user to review and run. {where}", code=args.code)


# ---------------------------------------------------------------------- helpers


@contextlib.contextmanager
def fresh_workspace_modules(root: Path | None) -> Iterator[None]:
    """Import the workspace's modules afresh inside the block, then put the kernel's own back.

    The agent's edits are on disk, but a module the person imported earlier is cached in `sys.modules`:
    without this, run_python and a kernel check would test the old code. The workspace is importable too.
    """
    if root is None:
        yield
        return
    prefix = str(root.resolve()) + "/"
    stashed = {
        name: module
        for name, module in sys.modules.copy().items()  # in one step: another thread may be importing
        if str(getattr(module, "__file__", None) or "").startswith(prefix)
    }
    for name in stashed:
        del sys.modules[name]
    before = set(sys.modules)
    added_path = str(root) not in sys.path
    if added_path:
        sys.path.insert(0, str(root))
    try:
        yield
    finally:
        if added_path:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(root))
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(prefix):
                del sys.modules[name]
        sys.modules.update(stashed)


def _result(outcome: CodeOutcome, seconds: float) -> ToolResult:
    parts: list[str] = []
    if outcome.stdout:
        parts.append(f"[stdout]\n{outcome.stdout.rstrip()}")
    if outcome.stderr:
        parts.append(f"[stderr]\n{outcome.stderr.rstrip()}")
    images = []
    for n, bundle in enumerate(outcome.displays, start=1):
        parts.append(f"[display {n}] {_plain(bundle)}")
        if "image/png" in bundle:
            images.append({"mime": "image/png", "data": str(bundle["image/png"]), "alt": _plain(bundle)})
    if outcome.value is not None:
        parts.append(f"[value]\n{_plain(outcome.value)}")
    if outcome.cleanup:
        parts.append("[note] " + "; ".join(outcome.cleanup))
    output = "\n".join(parts)
    meta: ToolMetadata = {"images": images} if images else {}
    if outcome.timed_out:
        return ToolResult.fail(
            f"The code was stopped after {seconds:g} s (the time bound, kernel.timeout). Do the work in "
            "smaller parts; the kernel is fine, and names assigned before the stop are kept.",
            output,
            **meta,
        )
    if outcome.interrupted:
        meta["interrupted"] = True
        return ToolResult.fail("The user interrupted the code (the kernel's stop button).", output, **meta)
    if outcome.exited:
        return ToolResult.fail(
            f"The code called sys.exit({outcome.exit_code!r}); it stopped there, and the kernel runs on.",
            output,
            **meta,
        )
    if outcome.error is not None:
        return ToolResult.fail(f"The code raised an exception:\n{outcome.error}", output, **meta)
    return ToolResult.ok(output or "(no output)", **meta)


def _plain(bundle: Mapping[str, Any]) -> str:
    text = bundle.get("text/plain")
    if isinstance(text, list):
        text = "".join(str(t) for t in text)
    if text is None:
        kinds = ", ".join(sorted(bundle)) or "nothing"
        return f"(rich output: {kinds})"
    text = str(text)
    return text if len(text) <= 8000 else text[:8000] + f"\n[... {len(text) - 8000} characters cut]"
