"""Reading a program's command line as GNU getopt does: options anywhere before `--`, short clusters
(`-rn`, `-C2`), `--name=value`, and which options take a value. The per-program models (what a program
reads, lists or writes) all read arguments through it, with the one table of which options take a value
that the program models hold (`spec_of`), so a reader and a writer never disagree about where `cp`'s operands
are.

Options are read from parsed shell words: a word known only at run time (`"$D"`) stays a word, so a model can
tell "writes to a folder named by a variable" from "writes to build/".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from architect_nb.tools.commands.programs.model import Spec
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.shell_words import Word

__all__ = [
    "Options",
    "Spec",
    "literal",
    "number",
    "options",
    "paths",
    "program_options",
    "spec_of",
    "word_options",
]

T = TypeVar("T")


@dataclass(slots=True)
class Options(Generic[T]):
    flags: set[str] = field(default_factory=set)  # "-r", "--hidden", ...
    values: list[tuple[str, T]] = field(default_factory=list)  # ("--exclude", "*.log"), ...
    operands: list[T] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def of(self, *names: str) -> list[T]:
        return [v for n, v in self.values if n in names]

    def last(self, *names: str) -> T | None:
        """The value of the last of these options given (the one a program keeps)."""
        found = self.of(*names)
        return found[-1] if found else None


def number(word: Word | None) -> int | None:
    """The value of a word that is a whole number (`-p1`, `--strip-components 2`)."""
    return int(word.value) if word is not None and word.value is not None and word.value.isdigit() else None


def literal(text: str) -> Word:
    """A word whose value is `text` (a part of another word, or a name a model computed)."""
    return Word(text=text, value=text, skeleton=text)


def _part(word: Word, value: str) -> Word:
    return Word(text=value, value=value, skeleton=value, globbed=word.globbed)


def word_options(args: Sequence[Word], spec: Spec) -> Options[Word]:
    """Options anywhere before `--` (GNU style), short clusters (`-rn`, `-C2`), `--name=value`.

    A word known only at run time is an operand, unless its literal start makes it an option that takes a
    value (`--target-directory="$D"`): then it is that option's value, still unknown."""
    out: Options[Word] = Options()
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        text = word.value
        if text is None:
            known = word.skeleton
            if known.startswith("--") and "=" in known:
                out.values.append((known.partition("=")[0], word))
            elif known.startswith("-") and len(known) > 1 and known[1] in spec.short:
                out.values.append((known[:2], word))
            else:
                out.operands.append(word)
            continue
        if text == "--":
            out.operands += args[i:]
            break
        if text.startswith("--"):
            name, eq, attached = text.partition("=")
            if eq:
                out.values.append((name, _part(word, attached)))
            elif name in spec.long and i < len(args):
                out.values.append((name, args[i]))
                i += 1
            else:
                out.flags.add(name)
        elif text.startswith("-") and len(text) > 1:
            for at, letter in enumerate(text[1:], start=1):
                if letter in spec.attached:
                    out.values.append((f"-{letter}", _part(word, text[at + 1 :])))
                    break
                if letter in spec.short:
                    rest = text[at + 1 :]
                    if not rest and i < len(args):
                        out.values.append((f"-{letter}", args[i]))
                        i += 1
                    else:
                        out.values.append((f"-{letter}", _part(word, rest)))
                    break
                out.flags.add(f"-{letter}")
        else:
            out.operands.append(word)
    return out


def spec_of(program: str) -> Spec:
    """How `program`'s options take values, from its model (none: every option is a flag)."""
    return described(program).options


def program_options(program: str, args: Sequence[Word]) -> Options[Word]:
    """`word_options` with the program's own spec (none: every option is a flag)."""
    return word_options(args, spec_of(program))


def options(args: Sequence[str], spec: Spec) -> Options[str]:
    """`word_options` for arguments already known as text."""
    parsed = word_options([literal(a) for a in args], spec)
    return Options(
        flags=parsed.flags,
        values=[(n, w.value or "") for n, w in parsed.values],
        operands=[w.value or "" for w in parsed.operands],
    )


def paths(operands: Sequence[str], cwd: str, default: str | None = ".") -> list[str]:
    names = list(operands) or ([default] if default else [])
    return [os.path.realpath(os.path.join(cwd, n)) for n in names if os.path.exists(os.path.join(cwd, n))]
