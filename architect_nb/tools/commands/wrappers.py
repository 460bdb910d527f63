"""Wrappers: programs that run another command (`env`, `timeout`, `xargs`, `find -exec`, `bash -c`, ...).

`unwrap` reads a wrapper's own options and says what to judge next: the inner command, shell code to parse,
and the level the wrapper itself imposes. Which programs are wrappers is their models' word: `wraps` (the
command after the options) or `unwraps`, one of the readers here (`env`, `xargs`, `find_exec`, `shell`,
`eval_`, `busybox`). It only returns data; `classifier` and the guardrails do the judging.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from architect_nb.tools.commands.programs.model import Unwrapped, Wrapping, frozen
from architect_nb.tools.commands.programs.options import program_options
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.rules import BENIGN_VARIABLES, DANGEROUS, secret_in
from architect_nb.tools.commands.shell_parse import Word

__all__ = ["Unwrapped", "busybox", "env", "eval_", "find_exec", "script", "shell", "unwrap", "xargs"]

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _skip(
    args: Sequence[Word],
    flags: frozenset[str],
    with_value: frozenset[str],
    long_with_value: frozenset[str] = frozenset(),
) -> tuple[int, str | None]:
    """Skip a wrapper's options. Returns the index of the first operand and, if stuck, why."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return i, "has options only known at run time"
        if value == "--":
            return i + 1, None
        if not value.startswith("-") or value == "-":
            return i, None
        if value in flags or (value.split("=", 1)[0] in long_with_value and "=" in value):
            i += 1
        elif value in with_value or value in long_with_value:
            i += 2
        elif len(value) > 2 and value[:2] in with_value and not value.startswith("--"):
            i += 1  # -n10, -sKILL
        else:
            return i, f"has an option it does not know ({value})"
    return i, None


_NICE_NUMBER = re.compile(r"^-\d+$")


def unwrap(base: str, args: Sequence[Word], stdin_text: str | None) -> Unwrapped | None:
    """What `base args...` runs, if its model says it runs something (`wraps`, `unwraps`); None otherwise."""
    model = described(base)
    if model.wraps is not None:
        return _wrapped(base, model.wraps, args)
    return model.unwraps(base, args, stdin_text) if model.unwraps is not None else None


def _wrapped(base: str, wrapping: Wrapping, args: Sequence[Word]) -> Unwrapped:
    """A wrapper that runs the command after its own options (`timeout 5`, `nice -n 5`, `sudo -u x`)."""
    if base == "nice" and args and args[0].value is not None and _NICE_NUMBER.match(args[0].value):
        args = args[1:]
    if base == "command" and any(w.value in ("-v", "-V") for w in args[:2]):
        return Unwrapped()  # `command -v x` only looks a name up
    start, stuck = _skip(args, wrapping.flags, wrapping.with_value, wrapping.long_with_value)
    out = Unwrapped()
    if stuck:
        out.floor = (DANGEROUS, f"{base} {stuck}")
        start += 1
    elif wrapping.floor is not None:
        out.floor = (DANGEROUS, wrapping.floor)
    inner = list(args[start + wrapping.operands :])
    if inner:
        out.inner.append((inner, False))
    return out


def script(base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    """`script -c CMD` runs CMD in a shell (and records it in a file); without -c, an interactive shell."""
    out = Unwrapped(floor=(DANGEROUS, "script runs a shell and writes what it shows to a file"))
    for given in program_options(base, args).of("-c", "--command"):
        if given.value is None:
            out.blocked = f"script -c runs shell code only known at run time ({given.text[:60]})"
        else:
            out.scripts.append(given.value)
    return out


def busybox(_base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    """`busybox PROGRAM ...` runs PROGRAM."""
    return Unwrapped(inner=[(list(args), False)]) if args else Unwrapped()


def env(_base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    out = Unwrapped()
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None:
            out.floor = (DANGEROUS, "env has arguments only known at run time")
            i += 1
            break
        if value in ("-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug"):
            i += 1
        elif value in ("-u", "--unset", "-C", "--chdir"):
            if value in ("-C", "--chdir") and i + 1 < len(args) and out.chdir is None:
                out.chdir = args[i + 1]
            i += 2
        elif value.startswith(("--unset=", "--chdir=")) or re.match(r"^-[uC].", value):
            if value.startswith(("--chdir=", "-C")) and out.chdir is None:
                folder = value.partition("=")[2] if value.startswith("--") else value[2:]
                out.chdir = Word(text=value, value=folder, skeleton=folder)
            i += 1
        elif value in ("-S", "--split-string") or value.startswith(("--split-string=", "-S")):
            script = value.split("=", 1)[1] if "=" in value and value.startswith("--") else value[2:]
            if value in ("-S", "--split-string") and i + 1 < len(args):
                script = args[i + 1].value or ""
                i += 1
            out.scripts.append(script)
            out.floor = (DANGEROUS, "env -S splits a string into a command")
            if any(_computed(w) for w in args[i : i + 2]):
                out.blocked = "env -S runs a command only known at run time"
            i += 1
            break
        elif value == "--":
            i += 1
            break
        elif _ASSIGNMENT.match(value):
            out.floor = (DANGEROUS, f"env sets {value.split('=', 1)[0]} for the command")
            i += 1
        elif value.startswith("-"):
            out.floor = (DANGEROUS, f"env has an option it does not know ({value})")
            i += 1
        else:
            break
    inner = list(args[i:])
    if inner:
        out.inner.append((inner, False))
    elif not out.scripts:
        out.floor = (DANGEROUS, "env without a command prints environment variables, which may hold secrets")
    return out


def xargs(_base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    flags = frozen(
        "-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit", "-p", "--interactive"
    )
    with_value = frozen("-n", "-L", "-P", "-s", "-d", "-E", "-a")
    long_with_value = frozen(
        "--max-args", "--max-lines", "--max-procs", "--max-chars", "--delimiter", "--arg-file"
    )
    out = Unwrapped()
    token: str | None = None
    i = 0
    while i < len(args):
        value = args[i].value
        following = args[i + 1].value if i + 1 < len(args) else None
        if value is None:
            out.floor = (DANGEROUS, "xargs has options only known at run time")
            i += 1
            break
        if value == "--":
            i += 1
            break
        if not value.startswith("-") or value == "-":
            break
        step = 1
        if value in flags:
            pass
        elif value == "-I":
            token, step = following or "{}", 2
        elif value.startswith("-I"):
            token = value[2:]
        elif value.startswith("-i") or value.startswith("--replace"):
            token = value.split("=", 1)[1] if "=" in value else (value[2:] or "{}")
        elif value in with_value or value in long_with_value:
            step = 2
            if value in ("-a", "--arg-file") and secret_in(following or ".env"):
                out.floor = (DANGEROUS, "xargs reads a file that may hold secrets")
        elif value[:2] in with_value or value.split("=", 1)[0] in long_with_value:
            if value.startswith(("-a", "--arg-file")) and secret_in(
                value.split("=", 1)[-1].removeprefix("-a")
            ):
                out.floor = (DANGEROUS, "xargs reads a file that may hold secrets")
        else:
            out.floor = (DANGEROUS, f"xargs has an option it does not know ({value})")
            i += 1
            break
        i += step
    inner = list(args[i:]) or [Word(text="echo", value="echo", skeleton="echo")]
    if token:
        inner = [
            replace(w, value=None, substituted=True) if w.value and token in w.value else w for w in inner
        ]
    out.inner.append((inner, True))
    return out


def find_exec(_base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    out = Unwrapped(classify_self=True)
    i = 0
    while i < len(args):
        if args[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            out.elsewhere |= args[i].value in ("-execdir", "-okdir")
            j = i + 1
            while j < len(args) and args[j].value not in (";", "+"):
                j += 1
            inner = [
                replace(w, value=None, substituted=True) if w.value == "{}" else w for w in args[i + 1 : j]
            ]
            if inner:
                out.inner.append((inner, True))
            i = j
        i += 1
    return out


def shell(base: str, args: Sequence[Word], stdin_text: str | None) -> Unwrapped:
    out = Unwrapped()
    has_c = False
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            break
        if value in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if (
            value in ("--rcfile", "--init-file")
            or value == "-i"
            or (value.startswith("-") and "i" in value[1:] and not value.startswith("--"))
        ):
            out.floor = (DANGEROUS, f"{base} {value} reads startup files")
        if value == "--":
            i += 1
            break
        if not value.startswith(("-", "+")) or value in ("-", "+"):
            break
        if not value.startswith("--") and "c" in value[1:]:
            has_c = True
        i += 1
    operand = args[i] if i < len(args) else None
    if has_c:
        if operand is None:
            out.blocked = f"{base} -c takes its script from its input"
        elif operand.value is None:
            if _computed(operand) or operand.template is None:
                out.blocked = f"{base} -c runs shell code only known at run time ({operand.text[:60]})"
                out.scripts.append(operand.skeleton)
            else:  # benign variables only (`"ls $HOME"`): judge the code with them in place
                out.scripts.append(operand.template)
        else:
            out.scripts.append(operand.value)
        return out
    if operand is not None:
        out.floor = (DANGEROUS, f"{base} runs a script file ({operand.text})")
        out.reads_stdin = operand.value == "-"
        out.script = None if out.reads_stdin else operand
        return out
    out.reads_stdin = True
    out.floor = (DANGEROUS, f"{base} reads commands from its standard input")
    if stdin_text:
        out.scripts.append(stdin_text)
    return out


def _computed(word: Word) -> bool:
    """Shell code in `word` is computed at run time: substitutions, or variables other than benign ones."""
    return word.substituted or any(v not in BENIGN_VARIABLES for v in word.variables)


def eval_(_base: str, args: Sequence[Word], _stdin_text: str | None) -> Unwrapped:
    out = Unwrapped(floor=(DANGEROUS, "eval runs a string as shell code"))
    if any(_computed(w) for w in args):
        out.blocked = "eval runs shell code only known at run time"
    out.scripts.append(" ".join(w.template if w.template is not None else w.skeleton for w in args))
    return out
