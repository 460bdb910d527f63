"""Commands that read a sensitive file without naming it: globs, recursive searches, `find -exec`, `xargs` or
`$(...)` fed by a file lister, and archives or recursive copies of a folder that holds one.

`GuardrailsEngine.check_command` refuses a command that names a sensitive file; these shapes read one all the
same (`grep -r KEY .`, `cat config/*`, `find . -exec cat {} +`, `tar c . | tar xO`). Where run_command uses
the OS sandbox, sensitive files are hidden from the command and this check is skipped; elsewhere it catches
the common shapes, lexically, judging them against the sensitive files on disk now. A program that finds
the file by itself (a script walking the tree) is not caught here: that is the sandbox's work, and the
redaction of the file's values is the last line.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from architect_nb.execution.guardrails.program_walks import NAMES_ONLY, Walk, lister, reader
from architect_nb.tools.commands.shell_parse import SimpleCommand, Word, parse_script
from architect_nb.tools.commands.wrappers import unwrap

__all__ = ["SensitiveFiles", "unnamed_read"]

_MAX_DEPTH = 4  # `bash -c` strings followed this deep
_MAX_EXPANDED = 10_000  # files listed inside sensitive folders; more are judged by the folder
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
_UNRESTRICTED = re.compile(r"-u+|--unrestricted")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


@dataclass(frozen=True, slots=True)
class SensitiveFiles:
    """The sensitive files on disk now (absolute, resolved paths), those in sensitive folders included."""

    workspace: str
    files: tuple[str, ...]
    #: Whether a path (relative to the workspace) is sensitive by its name: the named check's business.
    named: Callable[[str], bool] = lambda _rel: False

    def holds(self, path: str) -> bool:
        return path in self.files

    def under(self, root: str) -> Iterator[str]:
        prefix = root.rstrip("/") + "/"
        return (f for f in self.files if f == root or f.startswith(prefix))

    def shown(self, path: str) -> str:
        return os.path.relpath(path, self.workspace)

    @classmethod
    def of(
        cls, workspace: str, files: Sequence[str], folders: Sequence[str], named: Callable[[str], bool]
    ) -> SensitiveFiles:
        found = list(files)
        for folder in folders:
            for parent, _dirs, names in os.walk(folder):
                found += (os.path.join(parent, n) for n in names)
                if len(found) > _MAX_EXPANDED:
                    break
        return cls(workspace, tuple(found), named)


def unnamed_read(command: str, cwd: str, sensitive: Callable[[], SensitiveFiles]) -> str | None:
    """Why `command`, run in `cwd`, would read a sensitive file it does not name; None if it would not.
    `sensitive` is called only when the command has one of the shapes, so most commands cost a parse."""
    script = parse_script(command.encode("utf-8", "surrogateescape"))
    everything = script.commands
    known: list[SensitiveFiles] = []

    def once() -> SensitiveFiles:
        if not known:
            known.append(sensitive())
        return known[0]

    for words, simple in _effective(everything, 0):
        if not words or words[0].value is None:
            continue
        program = os.path.basename(words[0].value)
        reason = _judge(program, words, simple, everything, cwd, once)
        if reason is not None:
            return reason
    if any(_program(c.words) not in NAMES_ONLY for c in everything):
        for word in script.loose_words:  # `for f in .e*; do cat $f; done`
            hit = _glob_reaches(word.value or word.skeleton, cwd, once()) if word.globbed else None
            if hit is not None:
                return _refusal(f"the loop's glob '{word.text}' matches", hit, once(), _NAME_THEM)
    return None


def _program(words: Sequence[Word]) -> str | None:
    return os.path.basename(words[0].value) if words and words[0].value is not None else None


def _effective(commands: Sequence[SimpleCommand], depth: int) -> Iterator[tuple[list[Word], SimpleCommand]]:
    """Each command, and what wrappers (`env`, `xargs`, `find -exec`, `bash -c`) run inside it."""
    for simple in commands:
        stack = [list(simple.words)]
        while stack:
            words = stack.pop()
            yield words, simple
            if not words or words[0].value is None:
                continue
            inner = unwrap(os.path.basename(words[0].value), words[1:], simple.stdin_text)
            if inner is None:
                continue
            stack += [w for w, _ in inner.inner]
            if depth < _MAX_DEPTH:
                for text in inner.scripts:
                    yield from _effective(
                        parse_script(text.encode("utf-8", "surrogateescape")).commands, depth + 1
                    )


def _judge(
    program: str,
    words: list[Word],
    simple: SimpleCommand,
    everything: Sequence[SimpleCommand],
    cwd: str,
    sensitive: Callable[[], SensitiveFiles],
) -> str | None:
    args = [w.value for w in words[1:] if w.value is not None]
    if program not in NAMES_ONLY:
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
    if program != "xargs" and program not in NAMES_ONLY:
        listers = {p for w in words[1:] if w.substituted for p in w.inner_programs}
        for other in everything:
            hit = _lister_hit(other, cwd, sensitive, only=listers)
            if hit is not None:
                return _refusal(f"{program} reads the files that $(...) lists, including", hit, sensitive())
    if program == "xargs" and _xargs_reads(words):
        for pipeline, stage in simple.pipes:
            for other in everything:
                if (pipeline, stage - 1) in other.pipes:
                    hit = _lister_hit(other, cwd, sensitive)
                    if hit is not None:
                        return _refusal("xargs reads the files listed before it, including", hit, sensitive())
    return None


def _refusal(what: str, hit: str, sensitive: SensitiveFiles, advice: str = "") -> str:
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
    return any(os.path.basename(p) not in NAMES_ONLY for p in programs)


def _lister_hit(
    simple: SimpleCommand, cwd: str, sensitive: Callable[[], SensitiveFiles], only: set[str] | None = None
) -> str | None:
    words = simple.words
    if not words or words[0].value is None:
        return None
    program = os.path.basename(words[0].value)
    if only is not None and program not in only:
        return None
    walk = lister(program, [w.value for w in words[1:] if w.value is not None], cwd)
    return walk.reaches(sensitive()) if walk is not None else None


# ------------------------------------------------------------------ globs and links


def _rel(value: str, cwd: str, sensitive: SensitiveFiles) -> str:
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


def _glob_reaches(pattern: str, cwd: str, sensitive: SensitiveFiles) -> str | None:
    for one in _braces(pattern):
        for match in glob.iglob(one, root_dir=cwd):
            path = os.path.realpath(os.path.join(cwd, match))
            if sensitive.holds(path):
                return path
    return None


def _braces(pattern: str, limit: int = 64) -> list[str]:
    """Bash's brace expansion (`{a,b}`), enough for globs an agent writes."""
    out: list[str] = []
    todo = [pattern]
    while todo and len(out) < limit:
        text = todo.pop()
        match = _BRACES.search(text)
        if match is None:
            out.append(text)
            continue
        todo += [text[: match.start()] + part + text[match.end() :] for part in match.group(1).split(",")]
    return out
