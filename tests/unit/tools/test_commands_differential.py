"""Differential test of the parser against bash itself.

Random command strings built from tricky shell fragments are classified; every one judged `safe` is then run
by the real bash with tracing on and a PATH holding only do-nothing stand-ins, so nothing real executes except
bash builtins. Every command bash actually ran must be one the classifier considers read-only: if bash runs
anything else, the grammar and bash disagree about where commands are.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from architect_nb.tools.commands.programs.registry import models
from architect_nb.tools.commands.run_command import classify_command

# Slow, left out of `make test-unit`: bash really runs what the classifier judged safe.
pytestmark = pytest.mark.slow

BASH = shutil.which("bash")
#: What a `safe` command may run: the safe programs, plus wrappers whose inner command was judged too.
SHELLS = {m.name for m in models().values() if m.is_shell}
ALLOWED = {m.name for m in models().values() if m.kind == "safe"} | SHELLS
ALLOWED |= {"env", "nice", "nohup", "timeout", "stdbuf", "xargs", "command", "time"}
ALLOWED |= {"for", "case", "select"}  # bash traces the head of these compound commands

FRAGMENTS = [
    "ls",
    "cat",
    "echo",
    "git status",
    "grep -rn x",
    "rm",
    "sudo",
    "id",
    "pwd",
    "wc -l",
    "x=1",
    "$x",
    "$HOME",
    "'",
    '"',
    "\\",
    "`",
    "$(",
    ")",
    "(",
    "{",
    "}",
    "<(",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "\n",
    "#",
    "<<",
    "<<<",
    "EOF",
    "'EOF'",
    ">",
    "2>&1",
    "/dev/null",
    "*",
    "?",
    "[",
    "]",
    "!",
    "-exec",
    "find .",
    "bash -c",
    "sh -c",
    "env",
    "xargs",
    "timeout 1",
    "nice",
    "nohup",
    "stdbuf -oL",
    "command",
    "-i",
    "-u",
    "--",
    "-0",
    "-I{}",
    "{}",
    "-n1",
    "X=1",
    "$'\\x72m'",
    "{a,b}",
    "$((1))",
    "${x}",
    "\\\n",
    "\t",
    "<>",
    ">|",
    "&>",
    ";;",
    "case x in",
    "esac",
    "if",
    "then",
    "fi",
    "do",
    "done",
    "while",
    "function",
    "coproc",
    "time",
    "[[",
    "]]",
    "$[1]",
    '$"x"',
    "~",
    "=",
    ":",
    "\r",
    "\x0b",
    "\x0c",
    "$@",
    "$1",
    "$?",
    "$_",
    "%",
    "^",
    ",",
    " ",
    " ",
    " ",
]

commands = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12).map(" ".join)


#: Real wrappers, so that the inner commands they start are seen too (through the stand-ins' log).
REAL_WRAPPERS = ("env", "xargs", "timeout", "nice", "nohup", "stdbuf")


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    log = folder / "ran.log"
    for name in [*ALLOWED, "rm", "sudo", "id", "touch", "curl", "python", "x", "a", "b"]:
        if name in SHELLS or "/" in name or name == "[" or name in REAL_WRAPPERS:
            continue
        stub = folder / name
        stub.write_text(f'#!/bin/sh\necho "${{0##*/}}" >> {shlex.quote(str(log))}\n')
        stub.chmod(0o755)
    assert BASH is not None
    for shell in ("bash", "sh"):
        (folder / shell).symlink_to(BASH)
    for wrapper in REAL_WRAPPERS:
        real = shutil.which(wrapper)
        if real:
            (folder / wrapper).symlink_to(real)
    return folder


def traced_programs(command: str, stand_ins: Path, cwd: Path) -> list[str]:
    """What bash ran for `command`: its xtrace (written to a file of our own) plus the stand-ins' log."""
    trace = cwd.parent / f"{cwd.name}.trace"
    log = stand_ins / "ran.log"
    log.write_text("")
    with trace.open("wb") as sink:
        env = {
            "PATH": str(stand_ins),
            "SHELLOPTS": "xtrace",
            "BASH_XTRACEFD": str(sink.fileno()),
            "HOME": str(cwd),
        }
        with subprocess.Popen(
            [str(BASH), "-c", command],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(sink.fileno(),),
            start_new_session=True,
        ) as proc:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:  # `while ls; do ...; done` loops forever
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    programs = log.read_text().split()
    for line in trace.read_bytes().decode("utf-8", "replace").splitlines():
        if not line.startswith("+"):
            continue  # a traced command spanning lines
        text = line.lstrip("+").removeprefix(" ")
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        if words:
            programs.append(words[0])
    return programs


#: Most random strings are not judged safe: of 1,500, 45 to 100 were in trial runs, and bash ran something
#: for 36 to 94 of them. Fewer than this many means the comparison did not happen: the test fails.
MIN_RUN_BY_BASH = 20


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_bash_runs_only_what_the_classifier_saw(stand_ins: Path, tmp_path: Path) -> None:
    """Every random string judged `safe` is run by bash; each program bash ran must be one the classifier
    allowed. The strings for which bash ran something are counted, and too few fail the test."""
    run_by_bash: list[str] = []

    @settings(max_examples=1500, database=None, deadline=None)
    @given(command=commands)
    def compare(command: str) -> None:
        if classify_command(command).sensitivity == "safe":  # only safe commands are run for real
            ran = traced_programs(command, stand_ins, tmp_path)
            if ran:
                run_by_bash.append(command)
            unexpected = [p for p in ran if p not in ALLOWED]
            assert not unexpected, f"{command!r} was judged safe but bash ran {unexpected}"

    compare()
    assert len(run_by_bash) >= MIN_RUN_BY_BASH, f"bash ran only {len(run_by_bash)} safe commands"


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(
    "command",
    [
        "ls && echo ok | wc -l",
        "echo $(pwd) `pwd` && diff README.md README.md",
        "cat <<EOF\n$(pwd)\nEOF",
        "if [ -f x ]; then cat x; else ls; fi",
        "for f in a b; do echo $f; done",
        "bash -c 'ls; git status'",
        "ls \\\n -la",
    ],
)
def test_tracing_sees_what_safe_commands_run(command: str, stand_ins: Path, tmp_path: Path) -> None:
    assert classify_command(command).sensitivity == "safe"
    ran = traced_programs(command, stand_ins, tmp_path)
    assert ran and set(ran) <= ALLOWED, ran


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_the_trace_would_catch_a_divergence(stand_ins: Path, tmp_path: Path) -> None:
    assert "rm" in traced_programs("ls; rm -f nothing", stand_ins, tmp_path)
    assert "rm" in traced_programs("env X=1 nice timeout 5 rm x", stand_ins, tmp_path)
