"""The paths a command's words stand for, as bash will expand them, for the check of protected files.

A literal word is named plainly; a glob stands for what it expands to on disk now; `{}` under `find -exec`
for what find reaches; a loop variable for the loop's words; `$HOME`, `$PWD` and `$(pwd)` for what they hold;
`$(find ...)` and `xargs` fed by a file lister for what the lister reaches. Any other word known only when
the command runs is refused where the sandbox does not hold (the sentence says so), and passed over where it
does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from architect_nb.execution.guardrails.shell_runs import Run, expand_glob, program_of, resolve
from architect_nb.execution.guardrails.writes.write_verdicts import Verdicts
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.programs.walks import find_walk, lister
from architect_nb.tools.commands.shell_parse import SimpleCommand, Word

__all__ = ["Target", "Targets"]

#: Variables whose value the check knows as well as the shell: the environment's, and those that are a number.
_FROM_ENVIRONMENT = frozenset({"HOME", "TMPDIR", "USER", "LOGNAME"})
_NUMBERS = frozenset(
    {"$", "!", "?", "#", "RANDOM", "SECONDS", "EPOCHSECONDS", "LINENO", "PPID", "UID", "EUID"}
)


@dataclass(frozen=True, slots=True)
class Target:
    """A path a word stands for: whether the command names it plainly, and how it names it otherwise."""

    path: str
    named: bool
    via: str = ""


class Targets:
    """Words to paths, for one command; refusals go through `verdicts`."""

    def __init__(self, verdicts: Verdicts) -> None:
        self.verdicts = verdicts

    def candidates(self, word: Word, run: Run, bases: tuple[str, ...], verb: str) -> list[Target]:
        """The paths a word stands for, each with whether the command names it plainly. A word known only
        when the command runs is refused (the unnamed check) or passed over (the sandbox holds)."""
        value = word.value
        if value is None:
            value = self._known_value(word, bases)
        if value is not None and not word.globbed:
            if run.moved and not value.startswith(("/", "~")):
                self.verdicts.unknown(f"'{value}' is relative to a folder a cd chose at run time.")
                return []
            return [Target(resolve(value, b), True) for b in bases]
        if value is not None:
            via = f"the glob '{word.text}' expands to it"
            found = [Target(p, False, via) for b in bases for p in expand_glob(value, b)]
            return found or [Target(resolve(value, b), True) for b in bases]
        if run.fed_by is not None and run.fed_by[0] == "find" and "{}" in word.text:
            return [
                Target(p, False, "find reaches it") for b in bases for p in self._reached(run.fed_by[1], b)
            ]
        looped = self._loop_values(word, run, bases)
        if looped is not None:
            return looped
        if word.substituted and word.inner_programs:
            for other in run.script.commands:
                if program_of(other.words) in word.inner_programs:
                    self.listed(other, bases, verb, folders=True)
            if all(described(os.path.basename(p)).lists is not None for p in word.inner_programs):
                return []  # what each prints is judged by its model's walk (`listed`)
        self.verdicts.unknown(f"{run.program} {verb} '{word.text[:80]}', known only when it runs.")
        return []

    def _known_value(self, word: Word, bases: tuple[str, ...]) -> str | None:
        """`$HOME/x`, `$PWD/x`, `/tmp/x-$$`, `"$(pwd)/x"`: values the check can know as well as the shell."""
        template = word.template
        if (
            template is not None
            and word.variables
            and set(word.variables) <= _FROM_ENVIRONMENT | _NUMBERS | {"PWD"}
        ):
            for name in word.variables:
                known = bases[0] if name == "PWD" else "0" if name in _NUMBERS else os.environ.get(name, "")
                template = template.replace(f"${{{name}}}", known)
            return template if len(bases) == 1 or "PWD" not in word.variables else None
        if (
            word.substituted
            and word.inner_programs == ("pwd",)
            and word.text.lstrip('"').startswith("$(pwd)")
        ):
            return bases[0] + word.skeleton if len(bases) == 1 else None
        return None

    def _loop_values(self, word: Word, run: Run, bases: tuple[str, ...]) -> list[Target] | None:
        names = set(word.variables)
        if not names or not names <= run.script.loop_variables or word.template is None or word.substituted:
            return None
        found: list[Target] = []
        for loose in run.script.loose_words:
            if loose.value is None:
                self.verdicts.unknown(f"the loop runs over '{loose.text}', known only when it runs.")
                continue
            for base in bases:
                values = list(expand_glob(loose.value, base)) if loose.globbed else [loose.value]
                for one in values or [loose.value]:
                    text = word.template
                    for name in names:
                        text = text.replace(f"${{{name}}}", one)
                    found.append(Target(resolve(text, base), False, f"the loop over '{loose.text}' gives it"))
        return found

    def _reached(self, find_words: Sequence[Word], base: str) -> Iterator[str]:
        values = [w.value for w in find_words[1:]]
        if None in values:
            self.verdicts.unknown("find gets arguments known only when it runs.")
        yield from find_walk([v or "" for v in values], base).reached(self.verdicts.files(), folders=True)

    def folders(self, word: Word | None, run: Run, bases: tuple[str, ...]) -> tuple[str, ...]:
        if word is None:
            return bases
        return tuple(dict.fromkeys(t.path for t in self.candidates(word, run, bases, "works in")))

    def listed(self, other: SimpleCommand, bases: tuple[str, ...], verb: str, *, folders: bool) -> None:
        """The names `other` prints are changed: judged by what it lists, if it is a modelled lister."""
        program = program_of(other.words)
        if program is None or any(w.value is None for w in other.words[1:]):
            self.verdicts.unknown(
                f"the names come from '{other.words[0].text if other.words else ''}' at run time."
            )
        for base in bases:
            values = [m for w in other.words[1:] for m in _expanded(w, base)]
            walk = lister(program or "", values, base)
            if walk is None:
                self.verdicts.unknown(
                    f"the names come from {program}, whose output cannot be known beforehand."
                )
                return
            hit = walk.reaches(self.verdicts.files(), folders=folders)
            if hit is not None:
                self.verdicts.refuse(f"{verb} what {program} lists, including", hit)

    def found(self, find_words: Sequence[Word], bases: tuple[str, ...], verb: str, *, folders: bool) -> None:
        values = [w.value for w in find_words[1:]]
        if None in values:
            self.verdicts.unknown("find gets arguments known only when it runs.")
        for base in bases:
            walk = find_walk([v or "" for v in values], base)
            hit = walk.reaches(self.verdicts.files(), folders=folders)
            if hit is not None:
                self.verdicts.refuse(f"find {verb} what it reaches, including", hit)


def _expanded(word: Word, base: str) -> list[str]:
    """A lister's argument as the shell gives it: a glob expanded (relative to `base`), else its value."""
    value = word.value or ""
    if not word.globbed:
        return [value]
    return [os.path.relpath(m, base) for m in expand_glob(value, base)] or [value]
