"""Inline code given a protected file's name (issue 50), through the engine, without the OS sandbox.

Python code is read with `ast` (`programs.python_code`): a name it only reads is not refused, a word after the
code that it writes (`sys.argv[1]`) is a write of that file. What cannot be read (another interpreter's code,
Python that does something unknown with the word) is asked about in the confirmation modes and refused in
yolo, where nobody is asked. With the sandbox on, protected files are read-only and nothing is asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from architect_nb.config.schema import AppConfig, GuardrailsConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ConfirmationRequest, ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.guardrails.rails import CommandJudgement, GuardrailsEngine
from architect_nb.tools.base import ToolResult
from architect_nb.tools.outcome import CallOutcome

PYPROJECT = '[project]\nname = "demo"\n'
#: Code that does something with the word after it the check cannot read: a shell command built from it.
UNREADABLE = [
    "node -e \"require('fs').appendFileSync(process.argv[1], '# x')\" pyproject.toml",
    'perl -e \'open(my $f, ">>", $ARGV[0]); print $f "# x"\' pyproject.toml',
    "python3 -c \"import os, sys; os.system('echo x >> ' + sys.argv[1])\" pyproject.toml",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "notes.txt").write_text("a\n")
    return root


def engine(root: Path, mode: str, confirmer: ScriptedConfirmer, sandbox: str = "off") -> ExecutionEngine:
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(root)},
            "guardrails": {"protected_files": ["pyproject.toml"]},
            "sandbox": {"mode": sandbox},
        }
    )
    return build_engine(config, mode=mode, confirmer=confirmer)  # type: ignore[arg-type]


def run(
    root: Path, command: str, mode: str, answer: str = "n", sandbox: str = "off"
) -> tuple[ToolResult, list[ConfirmationRequest]]:
    confirmer = ScriptedConfirmer(default=answer)
    result = engine(root, mode, confirmer, sandbox).execute_tool_call("run_command", {"command": command})
    return result, confirmer.requests


@pytest.mark.parametrize("command", UNREADABLE)
def test_yolo_refuses_what_it_cannot_read_and_nobody_is_asked(project: Path, command: str) -> None:
    result, asked = run(project, command, "yolo", answer="y")
    assert result.outcome is CallOutcome.BLOCKED, result
    error = result.error or ""
    assert "is given 'pyproject.toml'" in error and "nobody is asked" in error, error
    assert asked == []
    assert (project / "pyproject.toml").read_text() == PYPROJECT


@pytest.mark.parametrize("command", UNREADABLE)
def test_confirm_modes_ask_with_the_reason_and_a_denial_leaves_the_file(project: Path, command: str) -> None:
    result, asked = run(project, command, "confirm-sensitive", answer="n")
    assert len(asked) == 1
    assert any("cannot tell what it changes" in r and "pyproject.toml" in r for r in asked[0].reasons)
    assert not result.success
    assert (project / "pyproject.toml").read_text() == PYPROJECT


def test_an_approved_call_runs(project: Path) -> None:
    result, asked = run(project, UNREADABLE[2], "confirm-sensitive", answer="y")
    assert len(asked) == 1 and result.success
    assert (project / "pyproject.toml").read_text() == PYPROJECT + "x\n"


def test_python_that_writes_the_word_it_is_given_is_refused_in_every_mode(project: Path) -> None:
    command = "python3 -c \"import sys; open(sys.argv[1], 'a').write('# x')\" pyproject.toml"
    for mode in ("yolo", "confirm-all"):
        result, asked = run(project, command, mode, answer="y")
        assert result.outcome is CallOutcome.BLOCKED and asked == [], result
        assert "changes 'pyproject.toml'" in (result.error or "")
    assert (project / "pyproject.toml").read_text() == PYPROJECT


@pytest.mark.parametrize(
    ("command", "printed"),
    [
        (
            'python3 -c "import tomllib; '
            "print(tomllib.load(open('pyproject.toml', 'rb'))['project']['name'])\"",
            "demo",
        ),
        (
            'python3 -c "import sys; print(open(sys.argv[1]).read())" pyproject.toml',
            '[project]\nname = "demo"',
        ),
        (
            "python3 -c \"from pathlib import Path; print(len(Path('pyproject.toml').read_text()))\"",
            str(len(PYPROJECT)),
        ),
    ],
)
def test_python_that_only_reads_runs_in_yolo(project: Path, command: str, printed: str) -> None:
    result, asked = run(project, command, "yolo")
    assert result.success and asked == [], result
    assert printed in (result.output or ""), result.output


def test_code_that_declares_another_encoding_is_refused_without_the_sandbox(project: Path) -> None:
    # Read from a pipe, `+AAo-` is a line break under utf-7: the comment hides a line that runs.
    hidden = "# coding: utf-7\n# +AAo-open('pyproject.toml', 'a').write('# x')\nprint(1)\n"
    result, _ = run(project, f"python3 - <<'EOF'\n{hidden}EOF", "yolo")
    assert result.outcome is CallOutcome.BLOCKED, result
    assert "encoding other than UTF-8" in (result.error or "")
    assert (project / "pyproject.toml").read_text() == PYPROJECT


def test_refusing_another_encoding_costs_no_working_script(project: Path) -> None:
    """Python reading a script from its input either decodes the comment into code, as a file's declaration is
    honoured, or (3.11) refuses the script ("encoding problem"): it never runs it as the check read it."""
    hidden = "# coding: utf-7\n# +AAo-open('pyproject.toml', 'a').write('# x')\nprint(1)\n"
    ran = subprocess.run(
        [sys.executable, "-"], input=hidden.encode(), cwd=project, capture_output=True, check=False
    )
    hidden_line_ran = (project / "pyproject.toml").read_text() != PYPROJECT
    assert hidden_line_ran or (ran.returncode != 0 and b"encoding problem" in ran.stderr), ran


@pytest.mark.parametrize("command", UNREADABLE)
def test_with_the_sandbox_on_nothing_is_asked(project: Path, command: str) -> None:
    """The sandbox makes protected files read-only to commands: what the code does with them is its job."""
    rails = GuardrailsEngine(GuardrailsConfig(protected_files=["pyproject.toml"]), project)
    assert rails.judge_command(command, sandboxed=True) == CommandJudgement()
    assert rails.judge_command(command, sandboxed=False).ask is not None
