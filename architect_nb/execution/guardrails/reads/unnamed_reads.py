"""Commands that read a sensitive file without naming it: globs, recursive searches, `find -exec`, `xargs` or
`$(...)` fed by a file lister, and archives or recursive copies of a folder that holds one.

`GuardrailsEngine.check_command` refuses a command that names a sensitive file; these shapes read one all the
same (`grep -r KEY .`, `cat config/*`, `find . -exec cat {} +`, `tar c . | tar xO`). Where run_command uses
the OS sandbox, sensitive files are hidden from the command and this check is skipped; elsewhere it catches
the common shapes, judging the parsed command (`shell_runs`) against the sensitive files on disk now with
the per-program models of `tools.commands.programs.walks`. A program that finds the file by itself (a
script walking the tree) is not caught here: that is the sandbox's work, and the redaction of the file's
values is the last line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence

from architect_nb.execution.guardrails.guarded_files import GuardedFiles
from architect_nb.execution.guardrails.shell_runs import Run, expand_glob, program_of
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.programs.walks import Walk, lister, names_only, reader
from architect_nb.tools.commands.shell_parse import ParsedScript, SimpleCommand, Word
from architect_nb.tools.commands.wrappers import unwrap

__all__ = ["unnamed_read"]

_PATTERN_OPTIONS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-g",
        "--glob",
        "--iglob",
        "--exclude",
        "--exclude-dir",
    }
)
_NAME_THEM = "Name the files you need instead."


def unnamed_read(
    script: ParsedScript, runs: Sequence[Run], sensitive: Callable[[], GuardedFiles]
) -> str | None:
    """Why `script` (its commands as `runs`) would read a sensitive file it does not name; None if it would
    not. `sensitive` is called only when the command has one of the shapes, so most commands cost nothing."""
    known: list[GuardedFiles] = []

    def once() -> GuardedFiles:
        if not known:
            known.append(sensitive())
        return known[0]

    scripts: dict[int, tuple[ParsedScript, tuple[str, ...]]] = {
        id(script): (script, runs[0].bases if runs else ())
    }
    for run in runs:
        scripts.setdefault(id(run.script), (run.script, run.bases))
        program = run.program
        if program is None:
            continue
        for base in run.bases:
            reason = _judge(program, run.words, run.simple, run.script, base, once)
            if reason is not None:
                return reason
    for each, bases in scripts.values():
        if all(names_only(program_of(c.words)) for c in each.commands):
            continue
        for word in each.loose_words:  # `for f in .e*; do cat $f; done`
            for base in bases if word.globbed else ():
                hit = _glob_reaches(word.value or word.skeleton, base, once())
                if hit is not None:
                    return _refusal(f"the loop's glob '{word.text}' matches", hit, once(), _NAME_THEM)
    return None


def _judge(
    program: str,
    words: list[Word],
    simple: SimpleCommand,
    script: ParsedScript,
    cwd: str,
    sensitive: Callable[[], GuardedFiles],
) -> str | None:
    args = [w.value for w in words[1:] if w.value is not None]
    if not names_only(program):
        for before, value in zip(["", *args], args, strict=False):
            if before in _PATTERN_OPTIONS:
                continue  # `find ! -name x`, `grep --exclude x`: a pattern, not a file read
            path = _linked(value, cwd)
            if (
                path is not None
                and sensitive().holds(path)
                and not sensitive().named(_rel(value, cwd, sensitive()))
            ):
                return _refusal(f"'{value}' is another name (a link) of", path, sensitive(), _NAME_THEM)
        targets = [w for w in words[1:] if w.globbed] + [
            r.target for r in simple.redirects if r.target is not None and r.target.globbed
        ]
        for word in targets:
            hit = _glob_reaches(word.value or word.skeleton, cwd, sensitive())
            if hit is not None:
                return _refusal(
                    f"the glob '{word.text}' matches", hit, sensitive(), "Name the files you need."
                )
    walk = reader(program, args, cwd)
    if walk is not None:
        hit = walk.reaches(sensitive())
        if hit is not None:
            return _refusal(
                f"{program} reads every file under {_roots(walk, cwd)}, including", hit, sensitive()
            )
    if program != "xargs" and not names_only(program):
        listers = {p for w in words[1:] if w.substituted for p in w.inner_programs}
        for other in script.commands:
            hit = _lister_hit(other, cwd, sensitive, only=listers)
            if hit is not None:
                return _refusal(f"{program} reads the files that $(...) lists, including", hit, sensitive())
    if program == "xargs" and _xargs_reads(words):
        for other in script.feeding(simple):
            hit = _lister_hit(other, cwd, sensitive)
            if hit is not None:
                return _refusal("xargs reads the files listed before it, including", hit, sensitive())
    return None


def _refusal(what: str, hit: str, sensitive: GuardedFiles, advice: str = "") -> str:
    advice = advice or (
        "Search with the search tool, which skips sensitive files, or leave them out "
        "(grep --exclude=NAME, rg -g '!NAME', find ... ! -name NAME)."
    )
    return (
        f"The command would read a sensitive file without naming it: {what} '{sensitive.shown(hit)}'. "
        f"{advice} (With the OS sandbox on, commands run with sensitive files hidden.)"
    )


def _roots(walk: Walk, cwd: str) -> str:
    return ", ".join(f"'{os.path.relpath(r, cwd)}'" for r in walk.roots[:3])


def _xargs_reads(words: list[Word]) -> bool:
    inner = unwrap("xargs", words[1:], None)
    programs = [w[0].value for w, _ in inner.inner if w and w[0].value] if inner else []
    return not all(names_only(os.path.basename(p)) for p in programs)


def _lister_hit(
    simple: SimpleCommand, cwd: str, sensitive: Callable[[], GuardedFiles], only: set[str] | None = None
) -> str | None:
    words = simple.words
    if not words or words[0].value is None:
        return None
    program = os.path.basename(words[0].value)
    if only is not None and program not in only:
        return None
    if described(program).echoes:  # `echo .e* | xargs cat`: the names its glob expands to
        globs = (w.value or w.skeleton for w in words[1:] if w.globbed)
        return next((h for g in globs if (h := _glob_reaches(g, cwd, sensitive())) is not None), None)
    walk = lister(program, [w.value for w in words[1:] if w.value is not None], cwd)
    return walk.reaches(sensitive()) if walk is not None else None


# ------------------------------------------------------------------ globs and links


def _rel(value: str, cwd: str, sensitive: GuardedFiles) -> str:
    return sensitive.shown(os.path.normpath(os.path.join(cwd, value)))


def _linked(value: str, cwd: str) -> str | None:
    """The file `value` names, if that name is a symbolic link or one of several hard links to it."""
    path = os.path.normpath(os.path.join(cwd, value))
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    real = os.path.realpath(path)
    if real != path or (stat.S_ISREG(info.st_mode) and info.st_nlink > 1):
        return real if real != path else path
    return None


def _glob_reaches(pattern: str, cwd: str, sensitive: GuardedFiles) -> str | None:
    return next((path for path in expand_glob(pattern, cwd) if sensitive.holds(path)), None)
