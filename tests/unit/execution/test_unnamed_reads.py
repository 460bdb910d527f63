"""Commands that read a sensitive file without naming it are refused where the OS sandbox does not run.

Each shape is checked against reality: every command the check refuses really prints a secret when run
with bash, and every command it allows really does not. So the check is neither blind nor a blanket ban.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from architect_nb.config.schema import AppConfig, GuardrailsConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.guardrails.rails import GuardrailsEngine

ENV_SECRET = "sk-live-ENVVALUE-31f7c2a9"
CREDS_SECRET = "creds-TOKEN-8d2e61b0"
FOLDER_SECRET = "folder-SECRET-5a5a9c"
SECRETS = (ENV_SECRET, CREDS_SECRET, FOLDER_SECRET)
SENSITIVE = [".env", "creds.json", "secrets/"]
# The ripgrep wheel puts rg beside the interpreter.
PATH = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "README.md").write_text("# demo\n")
    (root / ".env").write_text(f"API_KEY={ENV_SECRET}\n")
    (root / "config").mkdir()
    (root / "config" / "creds.json").write_text(f'{{"token": "{CREDS_SECRET}"}}\n')
    (root / "config" / "settings.toml").write_text("debug = true\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "prod.txt").write_text(FOLDER_SECRET + "\n")
    os.link(root / ".env", root / "env-copy.txt")  # another name for .env
    (root / "latest").symlink_to("config/creds.json")
    return Path(os.path.realpath(root))


def rails(root: Path) -> GuardrailsEngine:
    return GuardrailsEngine(GuardrailsConfig(sensitive_files=SENSITIVE), root)


def leaks(root: Path, command: str) -> bool:
    run = subprocess.run(
        ["/bin/bash", "-c", command],
        cwd=root,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=30,
        check=False,
        env={**os.environ, "PATH": PATH},
    )
    return any(secret in run.stdout + run.stderr for secret in SECRETS)


REFUSED = [
    "grep -r -h -a sk-live .",
    "grep -rn token config",
    "grep -R -e SECRET -- .",
    "timeout 5 grep --recursive -h a .",
    "ionice -c3 grep -r -h -a sk-live .",  # behind a program no model describes
    "rg --hidden -N sk-live",
    "rg -uu -N ENVVALUE",
    "rg -N token",  # creds.json is not hidden, and nothing ignores it
    "rg -N SECRET .",
    "cat config/*",
    "cat .e*",
    "head -n 5 s?crets/*",
    "cat {README.md,.e?v}",
    "for f in .[a-z]*; do cat $f; done",
    "find . -type f -exec cat {} +",
    "find . -name '*.env' -exec cat {} \\;",
    "find . -type f | xargs cat",
    "find config -type f -print0 | xargs -0 grep -h token",
    "ls -a | xargs cat 2>/dev/null",
    "rg -l -u --hidden API | xargs cat",
    "cat $(find config -type f)",
    "tar cf - . | tar xOf -",
    "bash -c 'grep -r -h sk-live .'",
    "cat env-copy.txt",
    "cat latest",
    "cp -r config copied; cat copied/*",
    "find . ! -name '*.py' -type f -exec cat {} +",
    "diff -rN config src",  # -N: a file missing on one side is shown whole
    "python3 -m tarfile -c out.tar config && tar xOf out.tar",
    "echo .e* | xargs cat",
    "cat $(printf '%s ' config/*)",
]

ALLOWED = [
    "grep -rn def src",
    "grep -r -h -a --exclude=.env --exclude=creds.json --exclude-dir=secrets --exclude=env-copy.txt "
    "--exclude=latest sk- .",
    "rg -N def src",
    "rg -N -g '!creds.json' -g '!secrets' -g '!latest' -g '!env-copy.txt' token",
    "rg -N --files",
    "cat src/*.py",
    "ls -a",
    "echo .e*",
    "find . -name '*.py' -exec grep -H def {} +",
    "find . -type f ! -name .env ! -name creds.json ! -path './secrets/*' ! -name env-copy.txt "
    "-exec cat {} +",
    "find . -type f | wc -l",
    "find src -type f | xargs cat",
    "tar cf - src | tar xOf -",
    "cat README.md",
    "diff -r src src",
    "echo src/*.py | xargs cat",
]


@pytest.mark.parametrize("command", REFUSED)
def test_a_command_that_reads_a_sensitive_file_unnamed_is_refused(project: Path, command: str) -> None:
    assert shutil.which("rg", path=PATH) is not None
    allowed, reason = rails(project).check_command(command, project)
    assert not allowed, command
    assert "sensitive file" in reason and "OS sandbox" in reason, reason
    assert leaks(project, command), f"the check refused {command!r}, which reads no secret"


@pytest.mark.parametrize("command", ALLOWED)
def test_a_command_that_reaches_no_sensitive_file_is_allowed(project: Path, command: str) -> None:
    allowed, reason = rails(project).check_command(command, project)
    assert allowed, (command, reason)
    assert not leaks(project, command), f"the check allowed {command!r}, which prints a secret"


def test_the_refusal_names_the_file_and_the_shape(project: Path) -> None:
    _, reason = rails(project).check_command("grep -r -h a .", project)
    assert "grep reads every file under '.'" in reason and "'.env'" in reason
    _, reason = rails(project).check_command("cat config/*", project)
    assert "the glob 'config/*' matches 'config/creds.json'" in reason
    _, reason = rails(project).check_command("cat latest", project)
    assert "'latest' is another name (a link) of 'config/creds.json'" in reason


def test_in_the_sandbox_the_check_steps_aside(project: Path) -> None:
    for command in REFUSED:
        allowed, reason = rails(project).check_command(command, project, sandboxed=True)
        if "cat env-copy" in command or "latest" in command:
            continue
        assert allowed, (command, reason)
    # A command that names the file is refused everywhere.
    assert not rails(project).check_command("cat .env", project, sandboxed=True)[0]


def test_without_sensitive_patterns_nothing_is_scanned(project: Path) -> None:
    engine = GuardrailsEngine(GuardrailsConfig(), project)
    assert engine.check_command("grep -r -h sk-live .", project) == (True, "")
    assert engine._scanner is None


def test_a_folder_created_between_commands_is_seen(project: Path) -> None:
    engine = rails(project)
    assert engine.check_command("grep -r -h a src", project)[0]
    (project / "src" / ".env").write_text(f"X={ENV_SECRET}\n")
    assert not engine.check_command("grep -r -h a src", project)[0]


@pytest.mark.parametrize(
    ("command", "reads_a_secret"),
    [
        ("grep -r", True),  # reads every file under '.', .env among them
        ("grep -r -e", True),
        ("find . -exec", False),
        ("cat $(", False),
        ("tar c", False),
        ("xargs", False),
        ("rg -g", False),
        ("cat {a,{b,c}", False),
        ("cat " + "{a,b}" * 40, False),
        ("grep -r x " + " ".join(f"d{i}" for i in range(2000)), False),
        ("cat \x00 .e*", True),  # the glob matches .env
        ("echo $'\\x2e'env*", False),  # echo reads no file
    ],
)
def test_malformed_and_huge_commands_get_an_answer(project: Path, command: str, reads_a_secret: bool) -> None:
    """An answer, never an exception: a refusal says why, and a command that reads a secret is refused."""
    allowed, reason = rails(project).check_command(command, project)
    assert allowed is (reason == ""), (allowed, reason)
    if reads_a_secret:
        assert not allowed and "sensitive file" in reason, reason


def test_the_engine_refuses_when_commands_run_unsandboxed(project: Path) -> None:
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(project)},
            "guardrails": {"sensitive_files": SENSITIVE},
            "sandbox": {"mode": "off"},
        }
    )
    engine = build_engine(config, mode="yolo", confirmer=ScriptedConfirmer(default="y"))
    result = engine.execute_tool_call("run_command", {"command": "grep -r -h -a sk-live ."})
    assert not result.success
    assert "without naming it" in (result.error or "")
    assert ENV_SECRET not in (result.output or "") + (result.error or "")


def test_fd_running_a_reader_on_what_it_finds_reads_it(project: Path) -> None:
    """`fd -x CMD` / `-X CMD` runs CMD on every file fd lists (fd need not be installed: judged, not run)."""
    for command in ("fd -H -t f . -X cat", "fd -H . -x head -n 1", "fdfind -H --exec cat"):
        allowed, reason = rails(project).check_command(command, project)
        assert not allowed and "fd" in reason and "sensitive file" in reason, (command, reason)
    for command in ("fd -H -x ls", "fd -H -t f . -X wc -l", "fd -H . src -x cat"):
        assert rails(project).check_command(command, project) == (True, ""), command
