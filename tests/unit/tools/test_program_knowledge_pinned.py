"""Every verdict the command checks give today, pinned: the classifier's, and the guardrails' for protected
and sensitive files, over the corpora and a grid of each known program with the argument shapes the checks
look at (issue 50).

The program knowledge is being gathered into one registry; this is the net under that move. A change of any
verdict or reason fails here, with the commands it changed. A change made on purpose is written back with
`ARCHITECT_UPDATE_PINNED=1 make pytest PYTEST_ARGS=tests/unit/tools/test_program_knowledge_pinned.py`, and the
diff of `data/program_verdicts.json` is then part of the commit that changes behaviour.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.tools.commands.run_command import classify_command
from tests.support.command_corpus import BENIGN, BLOCKED, DEV, RISKY
from tests.support.protected_writes_corpus import ORDINARY, PROTECTED, WRITES, build_workspace

PINNED = Path(__file__).parent / "data" / "program_verdicts.json"
SENSITIVE = [".env", "secrets/"]
#: The argument shapes the checks tell apart: none, help, plain reads, a protected target, an option that
#: takes a value, an output option, in place, outside the workspace, globs, inline code, a sensitive file.
SHAPES = (
    "{p}",
    "{p} --help",
    "{p} README.md",
    "{p} -r src",
    "{p} pyproject.toml",
    "{p} README.md pyproject.toml",
    "{p} -o pyproject.toml README.md",
    "{p} --output=setup.cfg README.md",
    "{p} -i pyproject.toml",
    "{p} -f ../p x",
    "{p} ../outside",
    "{p} *.toml",
    "{p} -rf .github",
    "{p} -e 'print(1)' pyproject.toml",
    '{p} -c \'open("pyproject.toml", "w")\'',
    "{p} .env",
    "{p} -C .github x",
    "{p} -- setup.cfg",
    "cat README.md | {p} -",
    "ls | {p} rm",
)


def _commands(programs: list[str]) -> list[str]:
    corpora = [*BLOCKED, *(c for c, _ in RISKY), *DEV, *BENIGN, *(f.command for f in WRITES), *ORDINARY]
    grid = [shape.format(p=p) for p in programs for shape in SHAPES]
    return list(dict.fromkeys(corpora + grid))


def _verdicts(root: Path, commands: list[str]) -> dict[str, list[object]]:
    protected = GuardrailsEngine(GuardrailsConfig(protected_files=PROTECTED, sensitive_files=SENSITIVE), root)
    out: dict[str, list[object]] = {}
    for command in commands:
        verdict = classify_command(command)
        row: list[object] = [verdict.sensitivity, verdict.blocked, verdict.reason]
        for sandboxed in (False, True):
            judged = protected.judge_command(command, sandboxed=sandboxed)
            row += [judged.allowed, _placeless(judged.reason, root)]
            if judged.ask is not None:  # asked about, not refused: shown only where there is one
                row.append(["ask", _placeless(judged.ask, root)])
        out[command] = row
    return out


def _write(programs: list[str], verdicts: dict[str, list[object]]) -> None:
    """One line per command, so a change of behaviour reads as a diff of the lines it changed."""
    lines = [f"{json.dumps(c)}: {json.dumps(v)}" for c, v in verdicts.items()]
    body = ",\n".join(lines)
    PINNED.write_text(f'{{"programs": {json.dumps(programs)},\n"verdicts": {{\n{body}\n}}}}\n')


def _placeless(reason: str, root: Path) -> str:
    """The reason without where the test's workspace is: its path, and how deep it is (`../../..`)."""
    reason = reason.replace(str(root), "<workspace>").replace(str(root.parent), "<parent>")
    return re.sub(r"(?:\.\./)+\.\.(?=')", "<up>", reason)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("pinned"))) / "ws"
    root.mkdir()
    build_workspace(root)
    (root / ".env").write_text("API_KEY=not-a-real-key\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "token.txt").write_text("token\n")
    return root


def test_every_verdict_is_the_pinned_one(workspace: Path) -> None:
    pinned = json.loads(PINNED.read_text())
    commands = _commands(pinned["programs"])
    now = _verdicts(workspace, commands)
    if os.environ.get("ARCHITECT_UPDATE_PINNED"):
        _write(pinned["programs"], now)
    changed = {c: (pinned["verdicts"].get(c), v) for c, v in now.items() if pinned["verdicts"].get(c) != v}
    assert not changed, "\n".join(f"{c!r}\n  was {was}\n  now {is_}" for c, (was, is_) in changed.items())
    assert len(now) > 4000  # the grid is there: 237 programs, 20 shapes, and the corpora
