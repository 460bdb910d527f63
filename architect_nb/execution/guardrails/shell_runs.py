"""The commands a parsed script runs, as the checks of unnamed reads and writes see them.

Each simple command, and what wrappers run inside it (`env`, `timeout`, `xargs`, `find -exec`, the strings
given to `bash -c` and `eval`), with the folders it may run in: the command's own, and those an earlier
`cd` or `pushd` of the script moved to. Which `cd` comes first is not tracked (subshells and `&&` make it a
question of run time), so a later command is judged from each of them: over-matching is the safe mistake.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from architect_nb.tools.commands.programs.registry import described, model_of
from architect_nb.tools.commands.shell_parse import ParsedScript, SimpleCommand, Word, parse_command
from architect_nb.tools.commands.wrappers import unwrap

__all__ = [
    "Run",
    "braces",
    "expand_glob",
    "piped_from_printer",
    "piped_text",
    "program_of",
    "resolve",
    "runs",
]

_MAX_DEPTH = 4  # `bash -c` strings followed this deep
#: Commands read from one unmodelled program's words (`_may_run`).
_MAX_GUESSED = 8
_MAX_BASES = 8  # folders a script may `cd` into before its later commands are judged "moved elsewhere"
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


@dataclass(frozen=True, slots=True)
class Run:
    """One command bash runs."""

    words: list[Word]
    #: The simple command it is, or that runs it (a wrapper): its redirections and pipes.
    simple: SimpleCommand
    #: The script it is part of (a `bash -c` string is a script of its own).
    script: ParsedScript
    #: The folders it may run in.
    bases: tuple[str, ...]
    #: It runs after a `cd` whose folder is known only at run time: its relative paths cannot be judged.
    moved: bool = False
    #: The wrapper that gives it file names it found itself (`find ... -exec`, `xargs`), with its words.
    fed_by: tuple[str, list[Word]] | None = None
    #: It is the simple command itself, not one a wrapper runs: the redirections are its own.
    outer: bool = True

    @property
    def program(self) -> str | None:
        return program_of(self.words)


def program_of(words: list[Word]) -> str | None:
    return os.path.basename(words[0].value) if words and words[0].value is not None else None


def runs(script: ParsedScript, cwd: str) -> list[Run]:
    """Every command of `script` run from `cwd`, wrappers' inner commands included."""
    out: list[Run] = []
    _collect(script, (cwd,), False, 0, out)
    return out


def _collect(script: ParsedScript, bases: tuple[str, ...], moved: bool, depth: int, out: list[Run]) -> None:
    for simple in script.commands:
        stack = [_Pending(list(simple.words), bases, moved, None, True)]
        while stack:
            todo = stack.pop()
            words = todo.words
            out.append(Run(words, simple, script, todo.bases, todo.moved, todo.fed_by, todo.outer))
            program = program_of(words)
            if program is None:
                continue
            inner = unwrap(program, words[1:], simple.stdin_text)
            if inner is None:
                if not todo.guessed:
                    guessed = reversed(_may_run(program, words))
                    stack += [_Pending(w, todo.bases, todo.moved, todo.fed_by, False, True) for w in guessed]
                continue
            inner_bases, inner_moved = todo.bases, todo.moved or inner.elsewhere
            if inner.chdir is not None:  # `env -C DIR cmd`: the command runs in DIR
                inner_bases, inner_moved = _moved_to([inner.chdir], inner_bases, inner_moved, replace=True)
            # A command given names found at run time (`xargs`, `find -exec`) is fed by this one.
            stack += [
                _Pending(w, inner_bases, inner_moved, (program, words) if found else todo.fed_by, False)
                for w, found in reversed(inner.inner)
            ]
            scripts = list(inner.scripts)
            if inner.reads_stdin and not scripts:
                echoed = piped_text(simple, script)  # `echo 'rm x' | bash`
                scripts += [echoed] if echoed is not None else []
            if depth < _MAX_DEPTH:
                for text in scripts:
                    try:
                        nested = parse_command(text)
                    except UnicodeError:
                        continue
                    _collect(nested, inner_bases, inner_moved, depth + 1, out)
        if described(program_of(simple.words) or "").moves_shell:
            bases, moved = _moved_to(simple.words[1:], bases, moved)


def piped_text(simple: SimpleCommand, script: ParsedScript) -> str | None:
    """What an `echo` or `printf` right before `simple` in a pipe prints, if its words are all known."""
    for other in script.feeding(simple):
        if _echoes(other):
            values = [w.value for w in other.words[1:]]
            return None if None in values else " ".join(v or "" for v in values)
    return None


def piped_from_printer(simple: SimpleCommand, script: ParsedScript) -> bool:
    """Whether an `echo` or `printf` right before `simple` in a pipe feeds it (its text known or not)."""
    return any(_echoes(other) for other in script.feeding(simple))


def _echoes(simple: SimpleCommand) -> bool:
    return described(program_of(simple.words) or "").echoes


@dataclass(slots=True)
class _Pending:
    words: list[Word]
    bases: tuple[str, ...]
    moved: bool
    fed_by: tuple[str, list[Word]] | None
    outer: bool
    guessed: bool = False  # a command an unmodelled program's words may hide (`_may_run`)


def _may_run(program: str, words: list[Word]) -> list[list[Word]]:
    """The commands a program may run that the checks cannot call safe and whose model says nothing of what it
    changes, read from its words: each run of words that starts with a program a model describes (`ionice
    -c3 rm x`, `uv run rm x`, `docker cp a b`). They are judged as if they ran too: over-matching is the safe
    mistake, and no model says how the program runs them."""
    values = [w.value for w in words[1:]]
    starts = [
        at
        for at, value in enumerate(values, start=1)
        if value and not value.startswith("-") and model_of(os.path.basename(value)) is not None
    ]
    model = described(program)
    if not starts or model.writes is not None or model.read_only(values):
        return []  # nothing to guess, or its model says what it changes, or it is read-only
    return [words[at:] for at in starts[:_MAX_GUESSED]]


def _moved_to(
    args: list[Word], bases: tuple[str, ...], moved: bool, *, replace: bool = False
) -> tuple[tuple[str, ...], bool]:
    operands = [w for w in args if not (w.value or "").startswith("-") or w.value == "-"]
    if len(operands) != 1 or operands[0].value in (None, "-"):
        return bases, True  # `cd` (home), `cd -`, `cd "$D"`: known only at run time
    target = operands[0].value or ""
    moved_to = [resolve(target, b) for b in bases]
    more = tuple(dict.fromkeys(moved_to if replace else [*bases, *moved_to]))
    if len(more) > _MAX_BASES:
        return bases, True
    return more, moved


def resolve(value: str, base: str) -> str:
    """The absolute, normalised path a literal word names from `base` (`~` as bash expands it)."""
    if value.startswith("~"):
        value = os.path.expanduser(value)
    return os.path.normpath(os.path.join(base, value))


def braces(pattern: str, limit: int = 64) -> list[str]:
    """Bash's brace expansion (`{a,b}`), enough for globs an agent writes."""
    found: list[str] = []
    todo = [pattern]
    while todo and len(found) < limit:
        text = todo.pop()
        match = _BRACES.search(text)
        if match is None:
            found.append(text)
            continue
        todo += [text[: match.start()] + part + text[match.end() :] for part in match.group(1).split(",")]
    return found


def expand_glob(pattern: str, base: str) -> Iterator[str]:
    """The paths (absolute, resolved) a glob word expands to in `base`, as bash would without `dotglob`."""
    for one in braces(pattern):
        for match in glob.iglob(os.path.expanduser(one) if one.startswith("~") else one, root_dir=base):
            yield os.path.realpath(os.path.join(base, match))
