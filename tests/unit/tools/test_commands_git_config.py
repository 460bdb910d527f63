"""A repository whose git config runs programs makes "read-only" git commands ask first."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.tools.commands.git_config_risk import risky_git_config
from architect_nb.tools.commands.run_command import RunCommandTool


@pytest.fixture
def repo(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    return workspace


def set_config(repo: Path, key: str, value: str) -> None:
    subprocess.run(["git", "config", key, value], cwd=repo, check=True)


def test_plain_repository_keeps_git_status_safe(repo: Path) -> None:
    set_config(repo, "submodule.lib.path", "lib")  # an ordinary key named like a risky one
    assert risky_git_config(repo) is None
    assert RunCommandTool(repo).classify_sensitivity("git status") == "safe"


@pytest.mark.parametrize(
    ("key", "value", "found"),
    [
        ("core.fsmonitor", "touch PWNED", "core.fsmonitor"),
        ("diff.external", "sh -c 'touch PWNED'", "diff.external"),
        ("diff.evil.textconv", "sh -c 'touch PWNED; cat'", "diff.evil.textconv"),
        ("core.pager", "sh -c 'touch PWNED'", "core.pager"),
        ("filter.lfs.clean", "touch PWNED", "filter.lfs.clean"),
        ("include.path", "/tmp/elsewhere.cfg", "include"),
    ],
)
def test_program_running_config_makes_git_ask(repo: Path, key: str, value: str, found: str) -> None:
    set_config(repo, key, value)
    assert risky_git_config(repo) == found
    verdict = RunCommandTool(repo).classify("git status && git diff")
    assert verdict.sensitivity == "dangerous" and found in (verdict.reason or "")
    assert RunCommandTool(repo).classify_sensitivity("ls -la") == "safe"  # only git commands are affected


def test_the_engine_asks_and_a_denial_runs_nothing(repo: Path) -> None:
    (repo / "f.txt").write_text("a\n")
    set_config(repo, "core.fsmonitor", "touch PWNED; false")
    config = load_config(overrides={"workspace.root": str(repo)}, environ={})
    confirmer = ScriptedConfirmer(["deny"])
    result = build_engine(config, confirmer=confirmer).execute_tool_call(
        "run_command", {"command": "git status"}
    )
    assert not result.success and len(confirmer.requests) == 1
    assert not (repo / "PWNED").exists()
