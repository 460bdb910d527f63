"""The execution engine's own overhead per tool call, measured with a tool that does nothing.

Scenarios (yolo mode, so nobody is asked):
  1. no hooks, no guardrails         - the bare pipeline: lookup, validation, policy, audit record
  2. guardrails on, read-only call   - plus sensitive-file checks on the path and output filtering
  3. guardrails on, mutating call    - plus preview diff, protected files, edit limits, code rules, and the
                                       undo snapshots before and after (a git process each: milliseconds)
  4. one pre-hook (`true`)           - for scale: a hook is a process, so it costs milliseconds
  5. one Claude-style pre-hook       - the same `true` from `.claude/settings.json`: plus Claude Code's input
                                       (names mapped, the run's transcript written for `transcript_path`; it
                                       grows with the run, so a fresh run starts every 100 calls)

Goal (issue 6): median overhead of scenario 1 <= 50 us. Run: `.venv/bin/python benchmarks/engine.py`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from architect_nb.config.schema import AppConfig, GuardrailsConfig, HookConfig, HooksConfig
from architect_nb.execution.confirmation.policy import ConfirmationPolicy
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.execution.hooks.claude_settings import CLAUDE_EVENTS, ClaudeHook
from architect_nb.execution.hooks.executor import HookExecutor
from architect_nb.tools.base import ToolResult
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.workspace import ToolArgs, WorkspaceTool

GOAL_US = 50.0


class NoopArgs(ToolArgs):
    path: str = Field("src/app.py", description="A path; never opened.")
    content: str = Field("x = 1\n", description="Ignored.")


class NoopTool(WorkspaceTool):
    name = "noop"
    description = "Does nothing."
    args_model = NoopArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        return ToolResult.ok("ok")


class NoopWriteTool(NoopTool):
    name = "noop_write"
    sensitive = True
    mutates_files = True

    def preview(self, **kwargs: Any) -> str | None:
        return "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x = 0\n+x = 1\n"


def build(
    root: Path,
    *,
    guardrails: bool,
    hooks: list[HookConfig] | None = None,
    claude: list[ClaudeHook] | None = None,
) -> ExecutionEngine:
    registry = ToolRegistry()
    registry.register(NoopTool(root))
    registry.register(NoopWriteTool(root))
    state = (
        root.parent / f"{root.name}-state"
    )  # the transcripts of scenario 5 go here, not to your state folder
    config = AppConfig.model_validate({"workspace": {"root": str(root)}, "checkpoints": {"dir": str(state)}})
    rails = None
    if guardrails:
        rails = GuardrailsEngine(
            GuardrailsConfig(
                protected_files=["data/raw/*", ".git/*", "*.lock"],
                sensitive_files=[".env", "*.pem", "id_rsa"],
                blocked_commands=["git push"],
                max_files_modified=10**9,
                max_lines_changed=10**12,
                code_rules=[{"pattern": r"eval\(", "message": "no eval", "severity": "block"}],  # type: ignore[list-item]
            ),
            root,
        )
    return ExecutionEngine(
        registry,
        config,
        policy=ConfirmationPolicy("yolo"),
        hook_executor=HookExecutor(HooksConfig(pre_tool_use=hooks or []), root, claude_hooks=claude or ()),
        guardrails=rails,
    )


def in_runs(engine: ExecutionEngine, tool: str, args: dict[str, Any], every: int) -> Callable[[], object]:
    """Calls of `tool` that start a fresh run every `every` calls, so a run stays the size of a real one."""
    calls = 0

    def call() -> object:
        nonlocal calls
        calls += 1
        if calls % every == 0:
            engine.start_run()
        return engine.execute_tool_call(tool, args)

    return call


def measure(fn: Callable[[], object], n: int) -> list[float]:
    for _ in range(min(n, 500)):  # warm-up
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        fn()
        times.append((clock() - t0) / 1000)
    return times


def row(label: str, times: list[float], baseline: float) -> float:
    times.sort()
    median = statistics.median(times)
    p90 = times[int(len(times) * 0.9)]
    p99 = times[int(len(times) * 0.99)]
    print(f"{label:<44} {median:>9.1f} {p90:>9.1f} {p99:>9.1f} {median - baseline:>12.1f}   (n={len(times)})")
    return median - baseline


def main() -> int:
    n = 20_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("x = 0\n")  # what the mutating call's snapshots cover
        args = {"path": "src/app.py", "content": "x = 1\n"}
        tool = NoopTool(root)
        plain = build(root, guardrails=False)
        guarded = build(root, guardrails=True)
        hooked = build(root, guardrails=False, hooks=[HookConfig(name="true", command="true")])
        print(f"Python {sys.version.split()[0]}, {n} calls per row, times in microseconds")
        print(f"{'scenario':<44} {'median':>9} {'p90':>9} {'p99':>9} {'overhead':>12}")
        base = statistics.median(measure(lambda: tool.execute(**args), n))
        row("direct tool.execute (baseline)", measure(lambda: tool.execute(**args), n), base)
        overhead = row(
            "1 engine: no hooks, no guardrails",
            measure(lambda: plain.execute_tool_call("noop", args), n),
            base,
        )
        row(
            "2 engine: guardrails on, read-only call",
            measure(lambda: guarded.execute_tool_call("noop", args), n),
            base,
        )
        # A fresh run every 100 calls keeps the audit log and checkpoint store the size of a real run.
        row(
            "3 engine: guardrails on, mutating call",
            measure(in_runs(guarded, "noop_write", args, 100), 500),
            base,
        )
        row(
            "4 engine: one pre-hook (`true`)",
            measure(lambda: hooked.execute_tool_call("noop", args), 200),
            base,
        )
        claude = build(
            root, guardrails=False, claude=[ClaudeHook(CLAUDE_EVENTS["PreToolUse"], "*", "true", 10, "bench")]
        )
        # Its transcript grows with the run: a fresh run every 100 calls, as a long real run would have.
        row(
            "5 engine: one Claude-style pre-hook (`true`)",
            measure(in_runs(claude, "noop", args, 100), 200),
            base,
        )
    verdict = "meets" if overhead <= GOAL_US else "MISSES"
    print(f"\nScenario 1 median overhead {overhead:.1f} us {verdict} the goal of <= {GOAL_US:.0f} us.")
    return 0 if overhead <= GOAL_US else 1


if __name__ == "__main__":
    sys.exit(main())
