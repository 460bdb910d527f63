"""Commands that change a protected file: by naming it (`> pyproject.toml`, `rm setup.cfg`, `sed -i ...`),
and, where commands run without the OS sandbox, without naming it plainly.

The named check always applies: a redirection, or an operand a program writes, removes, moves or changes the
mode of (`tools.commands.programs.writes`), that is a protected file or a folder holding one. Words are judged
as bash will see them, after quote and escape removal (`shell_parse`). Without the sandbox, which would make
protected files read-only, the unnamed forms are refused too: a glob, a variable or `$(...)` in a place the
command writes, a link to a protected file, inline code that mentions one (`python -c`, `node -e`, a
here-doc), what `find -delete`, `find -exec` or `xargs` reach, an archive whose members land on one (the
archive is listed first), a recursive copy or move whose source holds a file that lands on one, a patch
that names one, and git commands that rewrite tracked protected files (the repository is asked which files
each one touches). The refusal says what to do instead.

Running project code (`pytest`, `make`, `python script.py`) is not judged here: its words cannot tell what
it writes. Without the sandbox, the confirmation modes ask before it runs.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass

from architect_nb.execution.guardrails.mentions import code_names
from architect_nb.execution.guardrails.shell_runs import (
    Run,
    expand_glob,
    piped_from_printer,
    piped_text,
    resolve,
)
from architect_nb.execution.guardrails.writes.copy_landings import copy
from architect_nb.execution.guardrails.writes.git_rewrites import git_checkout, git_tree, pathspecs
from architect_nb.execution.guardrails.writes.write_sources import extract, patch
from architect_nb.execution.guardrails.writes.write_targets import Targets
from architect_nb.execution.guardrails.writes.write_verdicts import ProtectedFiles, Refusal, Verdicts
from architect_nb.tools.commands.programs.effects import (
    Change,
    Code,
    Copy,
    Effect,
    Extract,
    FoundByFind,
    FromInput,
    GitCheckout,
    GitTree,
    PatchFrom,
    Pathspecs,
    Stdin,
    Unknown,
    Within,
)
from architect_nb.tools.commands.programs.options import literal
from architect_nb.tools.commands.programs.python_code import read_python
from architect_nb.tools.commands.programs.writes import effects
from architect_nb.tools.commands.shell_parse import ParsedScript, SimpleCommand, Word

__all__ = ["ProtectedFiles", "WriteJudgement", "protected_write"]

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
#: Parse problems after which the words may not be what bash runs.
_UNREADABLE = (
    "does not parse as shell",
    "has text the shell grammar skipped",
    "has text the shell grammar misread",
)
_GLOB = frozenset("*?[")
_NOT_A_FOLDER_NAME = frozenset({".", "..", "./", "/", "~", ""})
_READ_IT = "Change the file with the file tools, or ask the user; to read it, use read_file or cat."


@dataclass(frozen=True, slots=True)
class WriteJudgement:
    """Why the commands would change a protected file (`refusal`), or why the check cannot tell (`doubt`:
    asked about in the confirmation modes, refused in yolo); both None if they would not."""

    refusal: str | None = None
    doubt: str | None = None


def protected_write(
    scripts: Sequence[ParsedScript], runs: Sequence[Run], guard: ProtectedFiles
) -> WriteJudgement:
    """Whether the commands `runs` (of `scripts`) would change a protected file."""
    if guard.unnamed and guard.globs:
        for script in scripts:
            problem = next((p for p in script.problems if p in _UNREADABLE), None)
            if problem is not None:
                return WriteJudgement(
                    f"The command {problem}, so what it changes cannot be checked for protected files. "
                    "Write it as plain shell. (With the OS sandbox on, protected files are read-only to "
                    "commands.)"
                )
    judge = _Judge(guard)
    for run in runs:
        try:
            judge.run(run)
        except Refusal as refusal:
            return WriteJudgement(str(refusal))
    doubts = judge.verdicts.doubts
    return WriteJudgement(doubt=doubts[0]) if doubts else WriteJudgement()


class _Judge:
    def __init__(self, guard: ProtectedFiles) -> None:
        self.verdicts = Verdicts(guard)
        self.targets = Targets(self.verdicts)

    def run(self, run: Run) -> None:
        program = run.program
        self.verdicts.program = program or "it"
        if run.outer:
            for redirect in run.simple.redirects:
                if redirect.op in _WRITE_REDIRECTS and redirect.target is not None:
                    if redirect.op == ">&" and (redirect.target.value or "x").isdigit():
                        continue  # `2>&1`
                    self.effect(Change(redirect.target, "writes"), run, run.bases)
        if program is not None:
            fed = run.fed_by is not None and run.fed_by[0] == "xargs"
            for effect in effects(program, run.words[1:], _stdin(run.simple, run.script), fed):
                self.effect(effect, run, run.bases)

    def effect(self, effect: Effect, run: Run, bases: tuple[str, ...]) -> None:
        targets, verdicts = self.targets, self.verdicts
        if isinstance(effect, Change):
            where = targets.folders(effect.within, run, bases)
            for target in targets.candidates(effect.word, run, where, effect.verb):
                named = target.named and not effect.implied
                verdicts.hit(target.path, effect.verb, named=named, tree=effect.tree, via=target.via)
        elif isinstance(effect, Copy):
            copy(targets, effect, run, bases)
        elif isinstance(effect, FromInput):
            self.from_input(effect, run, bases)
        elif isinstance(effect, FoundByFind):
            targets.found(run.words, bases, effect.verb, folders=effect.tree)
        elif isinstance(effect, Code):
            self.code(effect, run, bases)
        elif isinstance(effect, Extract):
            extract(targets, effect, run, bases)
        elif isinstance(effect, PatchFrom):
            patch(targets, effect, run, bases)
        elif isinstance(effect, Pathspecs):
            pathspecs(targets, effect.words, effect.verb, run, bases)
        elif isinstance(effect, GitCheckout):
            git_checkout(targets, effect, run, bases)
        elif isinstance(effect, GitTree):
            git_tree(targets, effect, run, bases)
        elif isinstance(effect, Within):
            for folder in targets.folders(effect.directory, run, bases):
                for inner in effect.effects:
                    self.effect(inner, run, (folder,))
        elif isinstance(effect, Unknown):
            verdicts.unknown(f"{effect.reason}.")

    def argv(self, code: Code, run: Run, bases: tuple[str, ...]) -> str:
        """Judge the words given after inline code; the code's text left to judge by its mentions."""
        reading = read_python(code.text) if code.program == "python" else None
        if reading is not None and reading.hidden:
            self.verdicts.unknown(
                "the python code declares an encoding other than UTF-8: what runs is not the text checked."
            )
        for index, word in enumerate(code.argv, start=1):
            if reading is None or reading.argv_whole:
                use: str | None = "unknown"
            else:
                use = reading.argv.get(index)
            if use == "write":  # written, removed, moved or chmod-ed: `python_code` does not say which
                self.effect(Change(word, "changes"), run, bases)
            elif use == "unknown" and (given := self.given(word, bases)) is not None:
                self.verdicts.doubt(
                    f"The {code.program} code is given '{word.text[:60]}', {given}, and what the code does "
                    "with it cannot be read."
                )
        return reading.unproven if reading is not None else code.text

    def given(self, word: Word, bases: tuple[str, ...]) -> str | None:
        """How a word given to inline code may stand for a protected file; None if it cannot."""
        if word.value is None:
            return "known only when the command runs"
        for base in bases:
            for path in expand_glob(word.value, base) if word.globbed else [resolve(word.value, base)]:
                why = self.verdicts.why(path, tree=True)
                if why is not None:
                    return f"{why[0]} the protected '{self.verdicts.shown(why[1])}'"
        return None

    def from_input(self, effect: FromInput, run: Run, bases: tuple[str, ...]) -> None:
        """xargs: the names come from the command before it in the pipe, judged by what that one lists."""
        feeding = run.script.feeding(run.simple)
        for other in feeding:
            self.targets.listed(other, bases, effect.verb, folders=effect.tree)
        if not feeding:
            self.verdicts.unknown(f"xargs gives {run.program} names it reads from its input.")

    def code(self, code: Code, run: Run, bases: tuple[str, ...]) -> None:
        """Inline code is judged by the names it mentions: a protected file or a folder holding one, a pattern
        that matches one (`glob('*.toml')`), or the ending of one's name (`endswith('.toml')`). Python code is
        read with `ast` first (`python_code`): names it only opens for reading are not mentions, and the words
        after it are judged by what it does with them (`sys.argv[1]` written is a write of that word)."""
        text = self.argv(code, run, bases)
        if not self.verdicts.unnamed:
            return
        advice = _READ_IT
        files = self.verdicts.files()
        spelled = [p.rsplit("/", 1)[-1] for p in self.verdicts.guard.globs.patterns if not _GLOB & set(p)]
        said = f"{code.program} code mentions"
        for name in dict.fromkeys(code_names(text)):
            lowered = name.lower().removeprefix("./")
            if _GLOB & set(name):
                hit = next((f for f in files.files if _glob_names(lowered, f, self.verdicts.shown(f))), None)
                if hit is not None:
                    self.verdicts.refuse(f"{said} the pattern '{name}', which matches", hit, advice=advice)
                spelled_hit = next((n for n in spelled if fnmatch.fnmatch(n, lowered)), None)
                if spelled_hit is not None:
                    self.verdicts.refuse(
                        f"{said} the pattern '{name}', which matches '{spelled_hit}'", "", advice=advice
                    )
                continue
            if lowered.startswith(".") and "/" not in lowered and len(lowered) >= 3:
                ending = next((f for f in files.files if _ends_name(f, lowered)), None)
                if ending is not None:
                    self.verdicts.refuse(f"{said} '{name}', the ending of", ending, advice=advice)
            for base in bases:
                reason = self.verdicts.why(resolve(name, base), tree=name not in _NOT_A_FOLDER_NAME)
                if reason is not None:
                    self.verdicts.refuse(f"{said} '{name}', {reason[0]}", reason[1], reason[2], advice)


def _stdin(simple: SimpleCommand, script: ParsedScript) -> Stdin:
    file = text = None
    for redirect in simple.redirects:
        if redirect.fd not in (None, "0"):
            continue
        if redirect.op == "<":
            file, text = redirect.target, None
        elif redirect.op in ("<<", "<<<", "<<-"):
            file, text = None, redirect.target
    piped = None
    if piped_from_printer(simple, script):
        echoed = piped_text(simple, script)
        piped = literal(echoed) if echoed is not None else Word(text="echo ...", value=None, skeleton="")
    return Stdin(file=file, text=text, piped=piped)


def _ends_name(path: str, ending: str) -> bool:
    name = os.path.basename(path).lower()
    return name.endswith(ending) and name != ending


def _glob_names(pattern: str, path: str, rel: str) -> bool:
    return fnmatch.fnmatch(os.path.basename(path).lower(), pattern) or fnmatch.fnmatch(rel.lower(), pattern)
