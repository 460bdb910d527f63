"""What the OS sandbox costs per command: run_command with bubblewrap against the same tool without it.

Scenarios, each through `RunCommandTool.execute` (the classifier, the sandbox's preparation and the process):
  1. `true`, 50 runs each way                 - the start-up cost per command (median)
  2. `true` with guardrails patterns           - plus the workspace scan for sensitive and protected files
  3. the sample project's `python -m pytest -q` - a real test run, 9 runs each way (median)

Goal (issue 18): under 15 ms added per command (scenario 1). Run: `.venv/bin/python benchmarks/sandbox.py`.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from architect_nb.config.schema import CommandsConfig, GuardrailsConfig, SandboxConfig
from architect_nb.tools.commands.run_command import RunCommandTool
from architect_nb.tools.commands.sandbox import sandbox_unavailable_reason

GOAL_MS = 15.0
SAMPLE_PROJECT = Path(__file__).resolve().parent.parent / "notebooks" / "sample_project"


def tool(root: Path, mode: str, guardrails: GuardrailsConfig | None = None) -> RunCommandTool:
    return RunCommandTool(
        root,
        CommandsConfig(default_timeout=120),
        sandbox_config=SandboxConfig(mode=mode),  # type: ignore[arg-type]
        guardrails_config=guardrails,
    )


def medians_ms(plain: RunCommandTool, boxed: RunCommandTool, command: str, runs: int) -> tuple[float, float]:
    """Median time of `command` through each tool. Runs alternate, so a busy machine slows both alike."""
    for runner in (plain, boxed):
        runner.execute(command=command)  # warm: the probe, the classifier's cache, the page cache
    times: dict[int, list[float]] = {id(plain): [], id(boxed): []}
    for _ in range(runs):
        for runner in (plain, boxed):
            started = time.perf_counter()
            result = runner.execute(command=command)
            times[id(runner)].append(time.perf_counter() - started)
            if not result.success:
                sys.exit(f"{command!r} failed: {result.error}\n{result.output}")
    return statistics.median(times[id(plain)]) * 1000, statistics.median(times[id(boxed)]) * 1000


def compare(
    label: str, root: Path, command: str, runs: int, guardrails: GuardrailsConfig | None = None
) -> float:
    plain, boxed = medians_ms(
        tool(root, "off", guardrails), tool(root, "required", guardrails), command, runs
    )
    print(
        f"{label:<44} without {plain:8.1f} ms   sandboxed {boxed:8.1f} ms   "
        f"added {boxed - plain:+7.1f} ms   ratio {boxed / plain:5.2f}x   ({runs} runs each)"
    )
    return boxed - plain


def main() -> None:
    reason = sandbox_unavailable_reason(SandboxConfig())
    if reason is not None:
        sys.exit(f"The sandbox does not work here: {reason}")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "sample_project"
        shutil.copytree(SAMPLE_PROJECT, project)
        (project / ".env").write_text("TOKEN=x\n")
        patterns = GuardrailsConfig(sensitive_files=[".env", "*.pem", "secrets/"], protected_files=["data/*"])
        added = compare("1. true", project, "true", 50)
        compare("2. true, with sensitive/protected patterns", project, "true", 50, patterns)
        compare(
            "3. sample project: python -m pytest -q", project, "python -m pytest -q -p no:cacheprovider", 9
        )
    verdict = "meets" if added < GOAL_MS else "MISSES"
    print(f"start-up cost per command: {added:.1f} ms added ({verdict} the goal of < {GOAL_MS:.0f} ms)")


if __name__ == "__main__":
    main()
