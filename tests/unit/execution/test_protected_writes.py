"""Protected files hold without the OS sandbox (issue 30): every write form of the corpus is run for real.

Each form of `protected_writes_corpus.WRITES` changes a protected file when bash runs it with the guardrail
off, so the corpus is not trivially safe; through the engine in yolo mode with `sandbox.mode: off`, the
guardrail refuses it and the file is unchanged; and run by run_command inside bubblewrap with the guardrail
off, the sandbox holds the file (skipped, with the install hint, where bubblewrap cannot run). The ordinary
commands of `ORDINARY` are allowed and run, and leave the protected files alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from architect_nb.config.schema import AppConfig, GuardrailsConfig, SandboxConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.tools.commands.run_command import RunCommandTool
from architect_nb.tools.outcome import CallOutcome
from tests.support.protected_writes_corpus import (
    _GIT_ENV,
    ORDINARY,
    PROTECTED,
    WRITES,
    Form,
    build_workspace,
    fresh_copy,
    protected_state,
)
from tests.support.sandbox import require_bwrap

ENV = {**_GIT_ENV, "PATH": os.environ.get("PATH", "")}
#: Every refusal says what to do instead.
ADVICE = (
    "Leave it unchanged",
    "Name the files",
    "with the file tools",
    "List the archive first",
    "Leave the protected",
)

# Slow, left out of `make test-unit`: every write form is run for real by bash, with the guardrail off
# and on, and in bubblewrap.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(Path(os.path.realpath(tmp_path_factory.mktemp("template"))))


def workspace(template: Path, tmp_path: Path, form: Form | None = None) -> Path:
    root = fresh_copy(template, Path(os.path.realpath(tmp_path)) / f"ws{len(list(tmp_path.iterdir()))}")
    if form is not None and form.setup:
        subprocess.run(["bash", "-c", form.setup], cwd=root, check=True, env=ENV)
    return root


def needs(form: Form) -> None:
    missing = [p for p in form.needs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


def bash(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, timeout=60, env=ENV, check=False
    )


def engine_for(root: Path, sandbox: str = "off"):  # type: ignore[no-untyped-def]
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(root)},
            "guardrails": {"protected_files": PROTECTED},
            "sandbox": {"mode": sandbox},
        }
    )
    return build_engine(config, mode="yolo")


def rails(root: Path) -> GuardrailsEngine:
    return GuardrailsEngine(GuardrailsConfig(protected_files=PROTECTED), root)


def test_the_corpus_is_large_and_every_family_is_in_it() -> None:
    assert len(WRITES) >= 60 and len(ORDINARY) >= 40
    commands = "\n".join(f.command for f in WRITES)
    for family in (
        '"',
        "\\",
        "*",
        "[",
        "$F",
        "$(",
        "perl -pi",
        "python3 -c",
        "find",
        "xargs",
        "tar x",
        "unzip",
    ):
        assert family in commands, family
    for family in ("cp -r", "patch", "git checkout", "git stash", "git reset -q --hard", "ln -s"):
        assert family in commands, family


@pytest.mark.parametrize("form", WRITES, ids=str)
def test_a_write_form_changes_the_file_unguarded_and_is_refused_guarded(
    template: Path, tmp_path: Path, form: Form
) -> None:
    needs(form)
    unguarded = workspace(template, tmp_path, form)
    before = protected_state(unguarded)
    run = bash(unguarded, form.command)
    assert protected_state(unguarded) != before, f"the form changes no protected file: {run.stderr}"

    guarded = workspace(template, tmp_path, form)
    before = protected_state(guarded)
    allowed, reason = rails(guarded).check_command(form.command, guarded)
    assert not allowed
    assert "protected file" in reason and any(advice in reason for advice in ADVICE), reason
    result = engine_for(guarded).execute_tool_call("run_command", {"command": form.command})
    assert not result.success and result.outcome is CallOutcome.BLOCKED, (result.error, result.output)
    assert protected_state(guarded) == before


@pytest.mark.parametrize("form", WRITES, ids=str)
def test_bubblewrap_holds_the_file_without_the_guardrail(template: Path, tmp_path: Path, form: Form) -> None:
    needs(form)
    config = SandboxConfig(mode="required")
    require_bwrap(config)
    root = workspace(template, tmp_path, form)
    before = protected_state(root)
    tool = RunCommandTool(
        root, sandbox_config=config, guardrails_config=GuardrailsConfig(protected_files=PROTECTED)
    )
    result = tool.execute(command=form.command)
    assert result.metadata.get("sandboxed"), result.error
    if form.sandbox_gap:
        # What the sandbox does not hold, the guardrail refuses even where commands run sandboxed.
        assert protected_state(root) != before, (
            f"the sandbox now holds it: drop sandbox_gap ({form.sandbox_gap})"
        )
        fresh = workspace(template, tmp_path, form)
        assert not rails(fresh).check_command(form.command, fresh, sandboxed=True)[0]
    else:
        assert protected_state(root) == before, (result.output, result.error)


@pytest.mark.parametrize("command", ORDINARY)
def test_an_ordinary_command_is_allowed_and_leaves_the_protected_files_alone(
    template: Path, tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in _GIT_ENV.items():
        if name.startswith("GIT_"):
            monkeypatch.setenv(name, value)
    root = workspace(template, tmp_path)
    before = protected_state(root)
    allowed, reason = rails(root).check_command(command, root)
    assert allowed, reason
    result = engine_for(root).execute_tool_call("run_command", {"command": command})
    assert result.outcome is not CallOutcome.BLOCKED, result.error
    assert result.success, (result.error, result.output)
    assert protected_state(root) == before
